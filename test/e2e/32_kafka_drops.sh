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

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kafka_lib.sh"
les_kafka_init 32_kafka_drops

QUEUE_MESSAGES=50
M=$WORK/mnt

les_kafka_start
B=$KAFKA_ADDR
les_pass "test broker at $B"
les_kafka_stop

les_testfs "$M"

# --- 1: a queue too small for the outage ----------------------------------------

les_start "$WORK/cap.jsonl" --mount "$M" --kafka-brokers "$B" --kafka-topic t \
	--kafka-queue-size 1 -X queue.buffering.max.messages=$QUEUE_MESSAGES \
	--kafka-flush-timeout 60s
dd if=/dev/zero of="$M/f" bs=4k count=200 status=none || les_fail "dd failed"
sleep 0.5
les_kafka_start
les_stop
les_eq "exit status 1: lines were dropped" 1 "$LES_STATUS"

lines=$(wc -l <"$WORK/cap.jsonl")
final=$(tail -n 1 "$WORK/cap.jsonl")
dropped=$(jq -r .kafka.dropped_kafka <<<"$final")
delivered=$(jq -r .kafka.delivered <<<"$final")
les_kafka_consume "$B" t >"$WORK/got"
got=$(wc -l <"$WORK/got")
[ "$dropped" -ge $((lines - QUEUE_MESSAGES - 2)) ] ||
	les_fail "dropped_kafka $dropped, expected about $lines - $QUEUE_MESSAGES"
les_pass "dropped_kafka $dropped of $lines lines (queue of $QUEUE_MESSAGES)"
les_eq "messages in topic + dropped_kafka == lines" "$lines" $((got + dropped))
# The final stats line itself is delivered after it was written.
les_eq "final stats: delivered + dropped_kafka == lines before it" $((lines - 1)) \
	$((delivered + dropped))
les_eq "final stats: failed" 0 "$(jq -r .kafka.failed <<<"$final")"
les_eq "every message is one of the lines, none twice" 0 \
	"$(sort "$WORK/got" | uniq -d | cat - <(sort "$WORK/got" | comm -23 - <(sort "$WORK/cap.jsonl")) |
		wc -l)"
grep -q "kafka: $dropped of $lines lines not delivered (0 failed, $dropped dropped on a full queue, 0 still queued at exit)" \
	"$WORK/cap.jsonl.err" ||
	les_fail "no exact report on stderr: $(grep 'kafka:' "$WORK/cap.jsonl.err")"
les_pass "stderr reports the $dropped dropped lines in one line"

# --- 2: shutdown with the broker down ----------------------------------------------

les_kafka_stop
les_start "$WORK/cap2.jsonl" --mount "$M" --kafka-brokers "$B" --kafka-topic t2 \
	--kafka-flush-timeout 2s
dd if=/dev/zero of="$M/g" bs=4k count=20 status=none || les_fail "dd failed"
sleep 0.5
t0=$SECONDS
les_stop
took=$((SECONDS - t0))
les_eq "exit status 1 when the broker never came back" 1 "$LES_STATUS"
[ "$took" -le 8 ] || les_fail "exit took $took s with --kafka-flush-timeout 2s"
les_pass "exit within the 2 s flush timeout (+ teardown): ${took} s"
lines2=$(wc -l <"$WORK/cap2.jsonl")
les_eq "final stats: the lines before it still queued" $((lines2 - 1)) \
	"$(tail -n 1 "$WORK/cap2.jsonl" | jq -r '.kafka.produced - .kafka.delivered')"
grep -q "kafka: $lines2 of $lines2 lines not delivered (0 failed, 0 dropped on a full queue, $lines2 still queued at exit)" \
	"$WORK/cap2.jsonl.err" ||
	les_fail "no exact report on stderr: $(grep 'kafka:' "$WORK/cap2.jsonl.err")"
les_pass "stderr reports all $lines2 lines as still queued at exit"

les_done
