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
set -u

LES_SRC=${LES_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
LES_BUILD=${LES_BUILD:-$LES_SRC/build}
TOOL=$LES_BUILD/lustre-ebpf-stream
TESTFS=$LES_BUILD/les-testfs
BROKER=$LES_SRC/scripts/kafka-test-broker
NWRITES=200

passed=0
failed=0

pass()
{
	echo "PASS: $*"
	passed=$((passed + 1))
}

fail()
{
	echo "FAIL: $*"
	failed=$((failed + 1))
}

finish()
{
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ] || exit 1
	exit 0
}

fatal()
{
	fail "$*"
	finish
}

# check DESCRIPTION EXPECTED ACTUAL
check_eq()
{
	if [ "$2" = "$3" ]; then
		pass "$1 ($3)"
	else
		fail "$1: expected '$2', got '$3'"
	fi
}

[ "$(id -u)" -eq 0 ] || fatal "must run as root (BPF, FUSE mounts)"
for f in "$TOOL" "$TESTFS"; do
	[ -x "$f" ] || fatal "$f not built"
done
for tool in kcat java mvn jq fusermount3 mountpoint setpriv; do
	command -v "$tool" >/dev/null || fatal "$tool not installed (scripts/install-deps)"
done

WORK=$(mktemp -d "$LES_BUILD/kafka-stream.XXXXXX") || fatal "mktemp failed"
chmod 755 "$WORK"
M=$WORK/mnt
TOOL_PID=

cleanup()
{
	[ -n "$TOOL_PID" ] && kill -INT "$TOOL_PID" 2>/dev/null && wait "$TOOL_PID"
	mountpoint -q "$M" && fusermount3 -u -z "$M"
	"$BROKER" stop --dir "$WORK/broker" >/dev/null 2>&1
	[ -n "${LES_KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# --- options: no kernel, no broker needed ------------------------------------

"$TOOL" --kafka-topic t >/dev/null 2>"$WORK/err"
check_eq "--kafka-topic without --kafka-brokers is a usage error" 2 $?
"$TOOL" --kafka-brokers 127.0.0.1:1 >/dev/null 2>"$WORK/err"
check_eq "--kafka-brokers without --kafka-topic is a usage error" 2 $?
"$TOOL" --kafka-key nope >/dev/null 2>"$WORK/err"
check_eq "--kafka-key nope is a usage error" 2 $?
"$TOOL" -X list >"$WORK/props" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^bootstrap.servers' "$WORK/props" &&
	grep -q '^enable.idempotence' "$WORK/props"; then
	pass "-X list prints librdkafka's properties and exits 0"
else
	fail "-X list: exit $rc, $(head -c 200 "$WORK/props")"
fi

# --- broker and filesystem ---------------------------------------------------

B=$("$BROKER" start --dir "$WORK/broker" 2>"$WORK/broker.err") ||
	fatal "kafka-test-broker start failed: $(cat "$WORK/broker.err")"
pass "test broker at $B"

mkdir -p "$M"
"$TESTFS" "$M" 2>"$WORK/testfs.err" || fatal "les-testfs: $(cat "$WORK/testfs.err")"
mountpoint -q "$M" || fatal "les-testfs did not mount $M"
chmod 777 "$M"

"$TOOL" --mount "$M" --kafka-brokers "$B" --kafka-topic t -X no.such.prop=1 \
	>/dev/null 2>"$WORK/err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && grep -q no.such.prop "$WORK/err"; then
	pass "a bad -X property: one line on stderr, exit 2"
else
	fail "bad -X: exit $rc, stderr: $(cat "$WORK/err")"
fi

# start_tool NAME ARGS...: runs the tool in the background until "probes attached".
start_tool()
{
	local name=$1 i
	shift
	"$TOOL" --mount "$M" -v "$@" 2>"$WORK/$name.err" &
	TOOL_PID=$!
	for i in $(seq 150); do
		grep -q "probes attached" "$WORK/$name.err" && return 0
		kill -0 "$TOOL_PID" 2>/dev/null || fatal "$name: tool exited: $(cat "$WORK/$name.err")"
		sleep 0.1
	done
	fatal "$name: no 'probes attached' within 15 s"
}

# stop_tool NAME: SIGINT, then the exit status in $TOOL_RC.
stop_tool()
{
	kill -INT "$TOOL_PID"
	wait "$TOOL_PID"
	TOOL_RC=$?
	TOOL_PID=
}

# consume TOPIC FORMAT: every message of TOPIC in offset order.
consume()
{
	timeout 60 kcat -b "$B" -t "$1" -C -o beginning -e -q -f "$2"
}

# --- run 1: default key, tee to a file ----------------------------------------

start_tool run1 --kafka-brokers "$B" --kafka-topic t -o "$WORK/cap.jsonl"
dd if=/dev/zero of="$M/f" bs=4k count=$NWRITES status=none || fatal "dd failed"
sleep 0.5
stop_tool run1
check_eq "run 1 exits 0 when every line was delivered" 0 "$TOOL_RC"

writes=$(jq -r 'select(.type=="access" and .op=="write") | .op' "$WORK/cap.jsonl" | wc -l)
check_eq "the file has the $NWRITES write records" $NWRITES "$writes"
lines=$(wc -l <"$WORK/cap.jsonl")

consume t '%s\n' >"$WORK/got"
check_eq "messages in topic t == lines in the file" "$lines" "$(wc -l <"$WORK/got")"
if cmp -s "$WORK/cap.jsonl" "$WORK/got"; then
	pass "every message equals its line, byte for byte, in order"
else
	fail "messages differ from the lines: $(diff "$WORK/cap.jsonl" "$WORK/got" | head -n 4)"
fi
for type in access rpc stats; do
	check_eq "$type lines and messages agree" \
		"$(jq -c "select(.type==\"$type\")" "$WORK/cap.jsonl" | wc -l)" \
		"$(jq -c "select(.type==\"$type\")" "$WORK/got" | wc -l)"
done

# Headers and keys as kcat shows them, against what each line says.
consume t '%k|%h\n' >"$WORK/meta"
jq -r '"\(.host)|type=\(.type),host=\(.host)" +
	(if .fs_type then ",fs_type=\(.fs_type)" else "" end)' "$WORK/cap.jsonl" >"$WORK/meta.want"
if cmp -s "$WORK/meta.want" "$WORK/meta"; then
	pass "headers type, host, fs_type (none on stats) and key == host (no job id)"
else
	fail "headers/keys differ: $(diff "$WORK/meta.want" "$WORK/meta" | head -n 4)"
fi

final=$(tail -n 1 "$WORK/cap.jsonl")
check_eq "the last line is the final stats record" true "$(jq -r .final <<<"$final")"
check_eq "final stats: kafka delivered == every line before it" $((lines - 1)) \
	"$(jq -r .kafka.delivered <<<"$final")"
check_eq "final stats: kafka failed, dropped_kafka, queue" "0 0 0" \
	"$(jq -r '"\(.kafka.failed) \(.kafka.dropped_kafka) \(.kafka.queue)"' <<<"$final")"
if grep -q "kafka: all $lines lines delivered" "$WORK/run1.err"; then
	pass "stderr says all $lines lines were delivered"
else
	fail "no delivery summary on stderr: $(grep kafka "$WORK/run1.err")"
fi

# --- run 2: keyed by uid, Kafka only --------------------------------------------

start_tool run2 --kafka-brokers "$B" --kafka-topic t2 --kafka-key uid -o /dev/null
setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
	dd if=/dev/zero of="$M/g" bs=4k count=20 status=none || fatal "dd as nobody failed"
sleep 0.5
stop_tool run2
check_eq "run 2 (-o /dev/null) exits 0" 0 "$TOOL_RC"

consume t2 '%k|%s\n' >"$WORK/keyed"
nobody=$(id -u nobody)
cut -d'|' -f1 "$WORK/keyed" >"$WORK/keys"
cut -d'|' -f2- "$WORK/keyed" |
	jq -r 'if (.type == "access" or .type == "rpc" or .type == "rpc_event") then .uid
		else .host end' >"$WORK/keys.want"
if [ -s "$WORK/keys" ] && cmp -s "$WORK/keys.want" "$WORK/keys"; then
	pass "--kafka-key uid: key == uid of each record, host on stats"
else
	fail "--kafka-key uid: $(diff "$WORK/keys.want" "$WORK/keys" | head -n 4)"
fi
check_eq "nobody's writes are keyed by uid $nobody" 20 \
	"$(grep -c "^$nobody|{\"type\":\"access\".*\"op\":\"write\"" "$WORK/keyed")"

finish
