#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Kafka sink against a real Apache Kafka broker (scripts/kafka-test-broker),
# with kcat as the independent consumer: a workload with a known number of
# ops on les-testfs is traced with --kafka-brokers/--kafka-topic while the
# same lines go to a file (tee); every line must be in the topic, byte for
# byte and in order, with its headers and its key. Also the option checks
# that need no kernel.
#
# Environment (set by CTest): LES_BUILD (build tree), LES_SRC (source tree).

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kafka_lib.sh"
les_kafka_init 30_kafka_stream setpriv /usr/bin/python3

TOOL=$LES_BIN
NWRITES=200
M=$WORK/mnt

# --- options: no kernel, no broker needed ------------------------------------

"$TOOL" --kafka-topic t >/dev/null 2>"$WORK/err"
les_eq "--kafka-topic without --kafka-brokers is a usage error" 2 $?
"$TOOL" --kafka-brokers 127.0.0.1:1 >/dev/null 2>"$WORK/err"
les_eq "--kafka-brokers without --kafka-topic is a usage error" 2 $?
"$TOOL" --kafka-key nope >/dev/null 2>"$WORK/err"
les_eq "--kafka-key nope is a usage error" 2 $?
"$TOOL" -X list >"$WORK/props" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^bootstrap.servers' "$WORK/props" &&
	grep -q '^enable.idempotence' "$WORK/props" ||
	les_fail "-X list: exit $rc, $(head -c 200 "$WORK/props")"
les_pass "-X list prints librdkafka's properties and exits 0"

# --- a broker that is not there, without -v ------------------------------------
# The trouble is told while the run lasts (rate-limited), not only at exit.
les_testfs "$M"
"$TOOL" --mount "$M" --kafka-brokers 127.0.0.1:1 --kafka-topic t --duration 4s \
	--kafka-flush-timeout 1s -o /dev/null 2>"$WORK/down.err" &
down_pid=$!
( for _ in $(seq 1 20); do stat "$M" >/dev/null 2>&1; sleep 0.1; done )
sleep 2.5
les_true "without -v, a broker that cannot be reached is said on stderr while running" \
	grep -q '^lustre-ebpf-stream: kafka: .*(_' "$WORK/down.err"
wait "$down_pid"
les_eq "... and the lines never delivered make the exit status 1" 1 "$?"
n_down=$(grep -c '^lustre-ebpf-stream: kafka: .*(_' "$WORK/down.err")
les_true "... told once per error, not per retry ($n_down lines)" test "$n_down" -le 3
fusermount3 -u "$M"

# --- broker and filesystem ---------------------------------------------------

les_kafka_start
B=$KAFKA_ADDR
les_pass "test broker at $B"

les_testfs "$M"
chmod 777 "$M"

"$TOOL" --mount "$M" --kafka-brokers "$B" --kafka-topic t -X no.such.prop=1 \
	>/dev/null 2>"$WORK/err"
rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && grep -q no.such.prop "$WORK/err" ||
	les_fail "bad -X: exit $rc, stderr: $(cat "$WORK/err")"
les_pass "a bad -X property: one line on stderr, exit 2"

# --- run 1: default key, tee to a file ----------------------------------------

les_start "$WORK/cap.jsonl" --mount "$M" --kafka-brokers "$B" --kafka-topic t
dd if=/dev/zero of="$M/f" bs=4k count=$NWRITES status=none || les_fail "dd failed"
sleep 0.5
les_stop
les_eq "run 1 exits 0 when every line was delivered" 0 "$LES_STATUS"

writes=$(jq -r 'select(.type=="access" and .op=="write") | .op' "$WORK/cap.jsonl" | wc -l)
les_eq "the file has the $NWRITES write records" $NWRITES "$writes"
lines=$(wc -l <"$WORK/cap.jsonl")

les_kafka_consume "$B" t '%s\n' >"$WORK/got"
les_eq "messages in topic t == lines in the file" "$lines" "$(wc -l <"$WORK/got")"
cmp -s "$WORK/cap.jsonl" "$WORK/got" ||
	les_fail "messages differ from the lines: $(diff "$WORK/cap.jsonl" "$WORK/got" | head -n 4)"
les_pass "every message equals its line, byte for byte, in order"
for type in access rpc stats; do
	les_eq "$type lines and messages agree" \
		"$(jq -c "select(.type==\"$type\")" "$WORK/cap.jsonl" | wc -l)" \
		"$(jq -c "select(.type==\"$type\")" "$WORK/got" | wc -l)"
done

# Headers and keys as kcat shows them, against what each line says.
les_kafka_consume "$B" t '%k|%h\n' >"$WORK/meta"
ver=$("$LES_BIN" --version | cut -d' ' -f2)
jq -r --arg v "$ver" '"\(.host)|les_version=\($v),schema_version=1,type=\(.type),host=\(.host)" +
	(if .fs_type then ",fs_type=\(.fs_type)" else "" end)' "$WORK/cap.jsonl" >"$WORK/meta.want"
cmp -s "$WORK/meta.want" "$WORK/meta" ||
	les_fail "headers/keys differ: $(diff "$WORK/meta.want" "$WORK/meta" | head -n 4)"
les_pass "headers les_version, schema_version, type, host, fs_type (none on stats) and key == host (no job id)"

# The Python example (contrib/kafka/consume.py, librdkafka's binding): the
# same lines, each valid against the published schema, with their keys.
timeout 120 /usr/bin/python3 "$LES_SRC/contrib/kafka/consume.py" --brokers "$B" --topic t \
	--schema "$LES_SRC/docs/record.schema.json" --from-beginning --until-end --with-key \
	--group e2e-$$ >"$WORK/py.tsv" 2>"$WORK/py.err"
les_eq "consume.py: exit 0 (every message valid against the schema)" 0 "$?"
cut -f2- "$WORK/py.tsv" | cmp -s "$WORK/cap.jsonl" - ||
	les_fail "consume.py: lines differ: $(cut -f2- "$WORK/py.tsv" | diff "$WORK/cap.jsonl" - | head -n 4)"
les_pass "consume.py: every message equals its line, in order ($lines)"
les_eq "consume.py: its count on stderr" "consume.py: $lines records, 0 not of the schema" \
	"$(tail -n 1 "$WORK/py.err")"
les_eq "consume.py: each key is the line's host (no job id)" 0 \
	"$(awk -F'\t' '{ k = $1; sub(/^[^\t]*\t/, ""); if (index($0, "\"host\":\"" k "\"") == 0) n++ }
		END { print n + 0 }' "$WORK/py.tsv")"

final=$(tail -n 1 "$WORK/cap.jsonl")
les_eq "the last line is the final stats record" true "$(jq -r .final <<<"$final")"
les_eq "final stats: kafka delivered == every line before it" $((lines - 1)) \
	"$(jq -r .kafka.delivered <<<"$final")"
les_eq "final stats: kafka failed, dropped_kafka, queue" "0 0 0" \
	"$(jq -r '"\(.kafka.failed) \(.kafka.dropped_kafka) \(.kafka.queue)"' <<<"$final")"
grep -q "kafka: all $lines lines delivered" "$WORK/cap.jsonl.err" ||
	les_fail "no delivery summary on stderr: $(grep kafka "$WORK/cap.jsonl.err")"
les_pass "stderr says all $lines lines were delivered"

# --- run 2: keyed by uid, Kafka only --------------------------------------------

# The later -o wins: the lines go to Kafka only, stderr to run2.err.
les_start "$WORK/run2" --mount "$M" --kafka-brokers "$B" --kafka-topic t2 \
	--kafka-key uid -o /dev/null
setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
	dd if=/dev/zero of="$M/g" bs=4k count=20 status=none || les_fail "dd as nobody failed"
sleep 0.5
les_stop
les_eq "run 2 (-o /dev/null) exits 0" 0 "$LES_STATUS"
[ ! -e "$WORK/run2" ] || les_fail "run 2 wrote $WORK/run2 despite -o /dev/null"

les_kafka_consume "$B" t2 '%k|%s\n' >"$WORK/keyed"
nobody=$(id -u nobody)
cut -d'|' -f1 "$WORK/keyed" >"$WORK/keys"
cut -d'|' -f2- "$WORK/keyed" |
	jq -r 'if (.type == "access" or .type == "rpc" or .type == "rpc_event") then .uid
		else .host end' >"$WORK/keys.want"
[ -s "$WORK/keys" ] && cmp -s "$WORK/keys.want" "$WORK/keys" ||
	les_fail "--kafka-key uid: $(diff "$WORK/keys.want" "$WORK/keys" | head -n 4)"
les_pass "--kafka-key uid: key == uid of each record, host on stats"
les_eq "nobody's writes are keyed by uid $nobody" 20 \
	"$(grep -c "^$nobody|{\"type\":\"access\".*\"op\":\"write\"" "$WORK/keyed")"

les_done
