#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What the Kafka sink cannot deliver is counted exactly and changes the
# exit status. Against a real broker (scripts/kafka-test-broker):
#  1. a queue too small for an outage: the broker is down while the tool
#     traces a workload, lines beyond the queue are dropped; once the
#     broker is back the queued ones are delivered, and
#     delivered (counted by kcat) + dropped_kafka == lines in the file;
#  2. shutdown with the broker down: the flush gives up after
#     --kafka-flush-timeout and reports every line as still queued.
# Both runs must exit 1.
#
# Environment (set by CTest): LES_BUILD (build tree), LES_SRC (source tree).
set -u

LES_SRC=${LES_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
LES_BUILD=${LES_BUILD:-$LES_SRC/build}
TOOL=$LES_BUILD/lustre-ebpf-stream
TESTFS=$LES_BUILD/les-testfs
BROKER=$LES_SRC/scripts/kafka-test-broker
QUEUE_MESSAGES=50

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

WORK=$(mktemp -d "$LES_BUILD/kafka-drops.XXXXXX") || fatal "mktemp failed"
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

stop_tool()
{
	kill -INT "$TOOL_PID"
	wait "$TOOL_PID"
	TOOL_RC=$?
	TOOL_PID=
}

B=$("$BROKER" start --dir "$WORK/broker" 2>"$WORK/broker.err") ||
	fatal "kafka-test-broker start failed: $(cat "$WORK/broker.err")"
pass "test broker at $B"
"$BROKER" stop --dir "$WORK/broker" || fatal "broker stop failed"

mkdir -p "$M"
"$TESTFS" "$M" 2>"$WORK/testfs.err" || fatal "les-testfs: $(cat "$WORK/testfs.err")"
mountpoint -q "$M" || fatal "les-testfs did not mount $M"

# --- 1: a queue too small for the outage ----------------------------------------

start_tool small --kafka-brokers "$B" --kafka-topic t -o "$WORK/cap.jsonl" \
	--kafka-queue-size 1 -X queue.buffering.max.messages=$QUEUE_MESSAGES \
	--kafka-flush-timeout 60s
dd if=/dev/zero of="$M/f" bs=4k count=200 status=none || fatal "dd failed"
sleep 0.5
"$BROKER" start --dir "$WORK/broker" >/dev/null 2>"$WORK/broker.err" ||
	fatal "broker restart failed: $(cat "$WORK/broker.err")"
stop_tool small
check_eq "exit status 1: lines were dropped" 1 "$TOOL_RC"

lines=$(wc -l <"$WORK/cap.jsonl")
final=$(tail -n 1 "$WORK/cap.jsonl")
dropped=$(jq -r .kafka.dropped_kafka <<<"$final")
delivered=$(jq -r .kafka.delivered <<<"$final")
timeout 60 kcat -b "$B" -t t -C -o beginning -e -q >"$WORK/got"
got=$(wc -l <"$WORK/got")
if [ "$dropped" -ge $((lines - QUEUE_MESSAGES - 2)) ]; then
	pass "dropped_kafka $dropped of $lines lines (queue of $QUEUE_MESSAGES)"
else
	fail "dropped_kafka $dropped, expected about $lines - $QUEUE_MESSAGES"
fi
check_eq "messages in topic + dropped_kafka == lines" "$lines" $((got + dropped))
# The final stats line itself is delivered after it was written.
check_eq "final stats: delivered + dropped_kafka == lines before it" $((lines - 1)) \
	$((delivered + dropped))
check_eq "final stats: failed" 0 "$(jq -r .kafka.failed <<<"$final")"
check_eq "every message is one of the lines, none twice" 0 \
	"$(sort "$WORK/got" | uniq -d | cat - <(sort "$WORK/got" | comm -23 - <(sort "$WORK/cap.jsonl")) |
		wc -l)"
if grep -q "kafka: $dropped of $lines lines not delivered (0 failed, $dropped dropped on a full queue, 0 still queued at exit)" \
	"$WORK/small.err"; then
	pass "stderr reports the $dropped dropped lines in one line"
else
	fail "no exact report on stderr: $(grep 'kafka:' "$WORK/small.err")"
fi

# --- 2: shutdown with the broker down ----------------------------------------------

"$BROKER" stop --dir "$WORK/broker" || fatal "broker stop failed"
start_tool down --kafka-brokers "$B" --kafka-topic t2 -o "$WORK/cap2.jsonl" \
	--kafka-flush-timeout 2s
dd if=/dev/zero of="$M/g" bs=4k count=20 status=none || fatal "dd failed"
sleep 0.5
t0=$SECONDS
stop_tool down
took=$((SECONDS - t0))
check_eq "exit status 1 when the broker never came back" 1 "$TOOL_RC"
if [ "$took" -le 8 ]; then
	pass "exit within the 2 s flush timeout (+ teardown): ${took} s"
else
	fail "exit took $took s with --kafka-flush-timeout 2s"
fi
lines2=$(wc -l <"$WORK/cap2.jsonl")
check_eq "final stats: the lines before it still queued" $((lines2 - 1)) \
	"$(tail -n 1 "$WORK/cap2.jsonl" | jq -r '.kafka.produced - .kafka.delivered')"
if grep -q "kafka: $lines2 of $lines2 lines not delivered (0 failed, 0 dropped on a full queue, $lines2 still queued at exit)" \
	"$WORK/down.err"; then
	pass "stderr reports all $lines2 lines as still queued at exit"
else
	fail "no exact report on stderr: $(grep 'kafka:' "$WORK/down.err")"
fi

finish
