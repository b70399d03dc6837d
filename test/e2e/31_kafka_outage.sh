#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The Kafka sink rides out a broker outage: the tool streams a ~45 s
# workload on les-testfs to a real broker (scripts/kafka-test-broker) and
# to a file; in the middle the broker is stopped for 20 s and started again
# on the same directory, and the workload goes on for a while after. Afterwards kcat must find exactly the file's lines
# in the topic, byte for byte and in order, none twice (idempotent
# producer), and the tool must exit 0.
#
# Environment (set by CTest): LES_BUILD (build tree), LES_SRC (source tree).
set -u

LES_SRC=${LES_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
LES_BUILD=${LES_BUILD:-$LES_SRC/build}
TOOL=$LES_BUILD/lustre-ebpf-stream
TESTFS=$LES_BUILD/les-testfs
BROKER=$LES_SRC/scripts/kafka-test-broker
OUTAGE_AT_S=8 # when the broker is stopped, into the workload
OUTAGE_S=20 # how long it stays down (its restart takes a few seconds more)
AFTER_S=5 # how long the workload goes on once the broker is back

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
for tool in kcat java mvn jq fusermount3 mountpoint; do
	command -v "$tool" >/dev/null || fatal "$tool not installed (scripts/install-deps)"
done

WORK=$(mktemp -d "$LES_BUILD/kafka-outage.XXXXXX") || fatal "mktemp failed"
M=$WORK/mnt
TOOL_PID=
LOAD_PID=

cleanup()
{
	[ -n "$LOAD_PID" ] && kill "$LOAD_PID" 2>/dev/null
	[ -n "$TOOL_PID" ] && kill -INT "$TOOL_PID" 2>/dev/null && wait "$TOOL_PID"
	mountpoint -q "$M" && fusermount3 -u -z "$M"
	"$BROKER" stop --dir "$WORK/broker" >/dev/null 2>&1
	[ -n "${LES_KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

B=$("$BROKER" start --dir "$WORK/broker" 2>"$WORK/broker.err") ||
	fatal "kafka-test-broker start failed: $(cat "$WORK/broker.err")"
pass "test broker at $B"

mkdir -p "$M"
"$TESTFS" "$M" 2>"$WORK/testfs.err" || fatal "les-testfs: $(cat "$WORK/testfs.err")"
mountpoint -q "$M" || fatal "les-testfs did not mount $M"

# Stats every 5 s so that the queue is seen filling during the outage; a
# flush budget long enough for the queue to drain after the restart.
"$TOOL" --mount "$M" -v --kafka-brokers "$B" --kafka-topic t -o "$WORK/cap.jsonl" \
	--stats-interval 5s --kafka-flush-timeout 60s 2>"$WORK/tool.err" &
TOOL_PID=$!
for i in $(seq 150); do
	grep -q "probes attached" "$WORK/tool.err" && break
	kill -0 "$TOOL_PID" 2>/dev/null || fatal "tool exited: $(cat "$WORK/tool.err")"
	sleep 0.1
done
grep -q "probes attached" "$WORK/tool.err" || fatal "no 'probes attached' within 15 s"

# Small writes, ten a second, until told to stop (at most 120 s).
(
	end=$((SECONDS + 120))
	i=0
	while [ ! -e "$WORK/stop-load" ] && [ "$SECONDS" -lt "$end" ]; do
		echo "$i" >"$M/w$((i % 16))"
		i=$((i + 1))
		sleep 0.1
	done
) &
LOAD_PID=$!

sleep $OUTAGE_AT_S
"$BROKER" stop --dir "$WORK/broker" || fatal "broker stop failed"
down_at=$SECONDS
pass "broker stopped $OUTAGE_AT_S s into the workload"
sleep $OUTAGE_S
"$BROKER" start --dir "$WORK/broker" >"$WORK/restart.out" 2>"$WORK/broker.err" ||
	fatal "broker restart failed: $(cat "$WORK/broker.err")"
down_s=$((SECONDS - down_at))
check_eq "broker back at the same address after ${down_s} s down" "$B" "$(cat "$WORK/restart.out")"

sleep $AFTER_S
touch "$WORK/stop-load"
wait "$LOAD_PID"
LOAD_PID=
sleep 1
kill -INT "$TOOL_PID"
wait "$TOOL_PID"
rc=$?
TOOL_PID=
check_eq "the tool exits 0: every line delivered" 0 "$rc"

lines=$(wc -l <"$WORK/cap.jsonl")
timeout 60 kcat -b "$B" -t t -C -o beginning -e -q >"$WORK/got"
check_eq "messages in topic == lines in the file" "$lines" "$(wc -l <"$WORK/got")"
for type in access rpc; do
	n=$(jq -c "select(.type==\"$type\")" "$WORK/cap.jsonl" | wc -l)
	[ "$n" -gt 0 ] || fail "no $type lines in the file"
	check_eq "$type messages == $type lines" "$n" \
		"$(jq -c "select(.type==\"$type\")" "$WORK/got" | wc -l)"
done
if cmp -s "$WORK/cap.jsonl" "$WORK/got"; then
	pass "every message equals its line, in order"
else
	fail "messages differ from the lines: $(diff "$WORK/cap.jsonl" "$WORK/got" | head -n 4)"
fi
check_eq "no message twice (idempotent producer)" 0 "$(sort "$WORK/got" | uniq -d | wc -l)"

queued=$(jq -s '[.[] | select(.type=="stats" and .final==false) | .kafka.queue] | max' \
	"$WORK/cap.jsonl")
if [ "$queued" != null ] && [ "$queued" -gt 50 ]; then
	pass "stats during the outage show the lines held in the queue (up to $queued)"
else
	fail "no stats record saw the queue grow during the outage (max queue: $queued)"
fi
check_eq "final stats: failed, dropped_kafka, queue" "0 0 0" \
	"$(tail -n 1 "$WORK/cap.jsonl" |
		jq -r '"\(.kafka.failed) \(.kafka.dropped_kafka) \(.kafka.queue)"')"

# With -v each distinct broker error is told, but once per interval, not per retry.
errs=$(grep -c '^lustre-ebpf-stream: kafka: .*(_' "$WORK/tool.err")
if [ "$errs" -ge 1 ] && [ "$errs" -le 20 ]; then
	pass "the outage was reported on stderr in $errs lines, not spammed"
else
	fail "$errs kafka error lines on stderr: $(head -n 5 "$WORK/tool.err")"
fi

finish
