#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The command line: usage errors exit 2 with one line on stderr, runtime
# failures exit 1, --help/--version exit 0, a closed pipe ends quietly,
# --count and --duration stop the run, gzip output, SIGINT flushes.

. "$(dirname "$0")/lib.sh"
les_init 12_cli gzip

# expect STATUS DESCRIPTION ARGS...: exit status and exactly one stderr line.
expect() {
	local want=$1 what=$2 got lines
	shift 2
	"$LES_BIN" "$@" >"$WORK/stdout" 2>"$WORK/stderr"
	got=$?
	[ "$got" = "$want" ] || les_fail "$what: exit $got, expected $want: $(cat "$WORK/stderr")"
	lines=$(wc -l <"$WORK/stderr")
	if [ "$want" != 0 ]; then
		[ "$lines" = 1 ] || les_fail "$what: expected one stderr line, got $lines: $(cat "$WORK/stderr")"
		grep -q '^lustre-ebpf-stream: ' "$WORK/stderr" || les_fail "$what: unprefixed message"
	fi
	les_pass "$what (exit $got)"
}

expect 0 "--help" --help
grep -q -- '--mount' "$WORK/stdout" || les_fail "--help does not list --mount"
les_eq "--help fits 80 columns" "" "$(awk 'length > 80' "$WORK/stdout")"
expect 0 "-V (libbpf-tools' short form of --version)" -V
grep -q '^lustre-ebpf-stream [0-9]' "$WORK/stdout" || les_fail "-V printed: $(cat "$WORK/stdout")"
expect 2 "-p needs a number" -p abc
expect 2 "-u needs a number" -u abc
expect 0 "--version" --version
expect 2 "unknown option" --bogus
expect 2 "missing argument" --duration
expect 2 "bad duration" --duration abc
expect 2 "-X without a Kafka producer does nothing: refused" -X acks=all
grep -q -- "-X sets a Kafka producer property: it needs --kafka-brokers" "$WORK/stderr" ||
	les_fail "-X without --kafka-brokers: $(cat "$WORK/stderr")"
expect 2 "--hostname with a blank" --hostname "node 17"
expect 2 "--hostname empty" --hostname ""
expect 0 "--hostname" --hostname node17 --print-config
expect 2 "an unknown --op" --op frob
grep -q "unknown op 'frob' (valid: lookup, open, .*, fsync)" "$WORK/stderr" ||
	les_fail "--op frob does not list the valid ops: $(cat "$WORK/stderr")"
expect 2 "a bare duration needs a unit" --min-latency 10
grep -q "needs a unit: 10ms or 10s" "$WORK/stderr" || les_fail "--min-latency 10: $(cat "$WORK/stderr")"
# A bare number is seconds elsewhere, as the exporter and timeout(1) read it.
# (test_options checks the nanoseconds each gives.)
expect 0 "a bare --duration is seconds" --duration 60 --print-config
expect 0 "a bare --stats-interval is seconds" --stats-interval 5 --print-config
# Kernel facts: dumped (80 columns), read back to the same plan; a bad file
# is a usage error naming its line.
expect 0 "--dump-kernel-facts" --dump-kernel-facts
cp "$WORK/stdout" "$WORK/k.facts"
grep -qx 'kfacts 1' "$WORK/k.facts" || les_fail "no 'kfacts 1' line: $(head -3 "$WORK/k.facts")"
les_eq "the facts fit 80 columns" "" "$(awk 'length > 80' "$WORK/k.facts")"
expect 0 "--kernel-facts FILE --list-probes" --kernel-facts "$WORK/k.facts" --list-probes=json
les_true "a plan from the dumped facts is this kernel's plan" cmp -s \
	<(jq -S 'del(.load_checked, .programs_refused)' "$WORK/stdout") \
	<("$LES_BIN" --list-probes=json 2>/dev/null | jq -S 'del(.load_checked, .programs_refused)')
printf 'kfacts 1\nfentry maybe\n' >"$WORK/bad.facts"
expect 2 "a malformed facts file" --kernel-facts "$WORK/bad.facts" --list-probes
grep -q "bad.facts: line 2: 'fentry' takes" "$WORK/stderr" || les_fail "$(cat "$WORK/stderr")"
expect 2 "a facts file that is not one" --kernel-facts /etc/hostname --list-probes
expect 2 "a missing facts file" --kernel-facts "$WORK/none.facts" --list-probes
expect 2 "--kernel-facts alone" --kernel-facts "$WORK/k.facts"
# A refused Kafka property: before any probe loads or the output file opens.
echo "kept" >"$WORK/keep.jsonl"
expect 2 "refused -X property" -v -X no.such.property=1 --kafka-brokers 127.0.0.1:9 \
	--kafka-topic t -o "$WORK/keep.jsonl"
grep -q "no.such.property" "$WORK/stderr" || les_fail "-X refusal: $(cat "$WORK/stderr")"
les_eq "the output file is left as it was" kept "$(cat "$WORK/keep.jsonl")"
expect 2 "negative count" --count -1
expect 2 "trailing garbage" --count 10x
expect 2 "ringbuf not a power of 2" --ringbuf-size 3000
expect 2 "bad attach method" --attach nope
expect 2 "stray argument" extra
expect 2 "--mount on a local filesystem" --mount /tmp
expect 2 "--mount that does not exist" --mount /nonexistent/x
printf '22 1 8:1 / / rw - ext4 /dev/sda1 rw\n' >"$WORK/mountinfo"
# No network filesystem yet: it waits for one, running (not exit 1 into a
# restart loop); the mount arriving is 57_mounts_change's and the container's.
expect 0 "nothing to observe yet: waits" --mountinfo "$WORK/mountinfo" --duration 1s
grep -q "no Lustre, NFS or FUSE mount found: waiting for one to be mounted" "$WORK/stderr" ||
	les_fail "no mount: no word of waiting: $(cat "$WORK/stderr")"

M=$WORK/mnt
les_testfs "$M"
expect 0 "--list-probes" --list-probes
expect 0 "--list-probes=json" --list-probes=json
les_true "--list-probes=json is JSON" jq -e '.probes | length > 0' "$WORK/stdout"

# --count stops after N records; the pipe to head closes early.
( sleep 1; for i in $(seq 1 50); do stat "$M" >/dev/null; done ) &
"$LES_BIN" --mount "$M" --count 5 --stats-interval 0 >"$WORK/count.jsonl" 2>"$WORK/count.err"
les_eq "--count 5: exit 0" 0 $?
les_eq "--count 5: five records" 5 "$(jq -s '[.[] | select(.type!="stats")] | length' "$WORK/count.jsonl")"
wait

( sleep 1; for i in $(seq 1 2000); do stat "$M" >/dev/null; done ) &
"$LES_BIN" --mount "$M" --duration 20s 2>"$WORK/pipe.err" | head -n 3 >/dev/null
st=${PIPESTATUS[0]}
les_eq "closed pipe: exit 0" 0 "$st"
les_eq "closed pipe: nothing on stderr" 0 "$(wc -c <"$WORK/pipe.err")"
wait

# gzip output and SIGINT flush.
les_start "$WORK/cap.jsonl.gz" --mount "$M"
for i in $(seq 1 20); do stat "$M" >/dev/null; done
les_stop
les_eq "SIGINT: exit 0" 0 "$LES_STATUS"
les_true "gzip output decompresses" gzip -t "$WORK/cap.jsonl.gz"
les_eq "gzip output ends with the final stats" true \
	"$(gzip -dc "$WORK/cap.jsonl.gz" | tail -n 1 | jq '.type == "stats" and .final')"
les_eq "output file mode 0640" 640 "$(stat -c %a "$WORK/cap.jsonl.gz")"

# --duration ends the run by itself.
start=$(date +%s%N)
"$LES_BIN" --mount "$M" --duration 1s >/dev/null 2>&1
les_eq "--duration 1: exit 0" 0 $?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
[ "$elapsed_ms" -lt 10000 ] || les_fail "--duration 1s took ${elapsed_ms} ms"
les_pass "--duration 1s ended in ${elapsed_ms} ms"

# -vv: libbpf's messages too (a verifier log is many lines in one message)
# carry the prefix on every line.
"$LES_BIN" --mount "$M" --duration 1s -vv -o /dev/null 2>"$WORK/vv.err"
les_eq "-vv: exit 0" 0 $?
les_ge "-vv: libbpf's messages shown" 10 "$(grep -c '^lustre-ebpf-stream: libbpf: ' "$WORK/vv.err")"
les_eq "-vv: every stderr line has the prefix" 0 "$(grep -vc '^lustre-ebpf-stream: ' "$WORK/vv.err")"

les_done
