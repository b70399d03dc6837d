#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The Kafka sink rides out a broker outage: the tool streams a ~45 s
# workload on les-testfs to a real broker (scripts/kafka-test-broker) and
# to a file; in the middle the broker is stopped for 20 s and started again
# on the same directory, and the workload goes on for a while after.
# Afterwards kcat must find exactly the file's lines in the topic, byte for
# byte and in order, none twice (idempotent producer), and the tool must
# exit 0.
#
# Environment (set by CTest): LES_BUILD (build tree), LES_SRC (source tree).

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kafka_lib.sh"
les_kafka_init 31_kafka_outage curl

OUTAGE_AT_S=8 # when the broker is stopped, into the workload
OUTAGE_S=20 # how long it stays down (its restart takes a few seconds more)
AFTER_S=5 # how long the workload goes on once the broker is back
M=$WORK/mnt
LOAD_PID=

# The workload loop ignores SIGINT (a background job): end it first.
trap '[ -n "$LOAD_PID" ] && kill "$LOAD_PID" 2>/dev/null; _les_kafka_cleanup' EXIT

les_kafka_start
B=$KAFKA_ADDR
les_pass "test broker at $B"

les_testfs "$M"

# Stats every 5 s so that the queue is seen filling during the outage; a
# flush budget long enough for the queue to drain after the restart.
PROM_PORT=$((20000 + $$ % 20000))
les_start "$WORK/cap.jsonl" --mount "$M" --kafka-brokers "$B" --kafka-topic t \
	--stats-interval 5s --kafka-flush-timeout 60s --prometheus "127.0.0.1:$PROM_PORT"
metric() {
	curl -s "http://127.0.0.1:$PROM_PORT/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}

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
les_kafka_stop
down_at=$SECONDS
les_pass "broker stopped $OUTAGE_AT_S s into the workload"
sleep $OUTAGE_S
les_ge "during the outage: lines pending in /metrics" 10 \
	"$(metric lustre_ebpf_stream_kafka_lines_pending)"
les_ge "during the outage: client errors in /metrics" 1 \
	"$(metric lustre_ebpf_stream_kafka_errors_total)"
les_kafka_start
down_s=$((SECONDS - down_at))
les_eq "broker back at the same address after ${down_s} s down" "$B" "$KAFKA_ADDR"

sleep $AFTER_S
touch "$WORK/stop-load"
wait "$LOAD_PID"
LOAD_PID=
sleep 1
les_stop
les_eq "the tool exits 0: every line delivered" 0 "$LES_STATUS"

lines=$(wc -l <"$WORK/cap.jsonl")
les_kafka_consume "$B" t >"$WORK/got"
les_eq "messages in topic == lines in the file" "$lines" "$(wc -l <"$WORK/got")"
for type in access rpc; do
	n=$(jq -c "select(.type==\"$type\")" "$WORK/cap.jsonl" | wc -l)
	les_ge "$type lines in the file" 1 "$n"
	les_eq "$type messages == $type lines" "$n" \
		"$(jq -c "select(.type==\"$type\")" "$WORK/got" | wc -l)"
done
cmp -s "$WORK/cap.jsonl" "$WORK/got" ||
	les_fail "messages differ from the lines: $(diff "$WORK/cap.jsonl" "$WORK/got" | head -n 4)"
les_pass "every message equals its line, in order"
les_eq "no message twice (idempotent producer)" 0 "$(sort "$WORK/got" | uniq -d | wc -l)"

queued=$(jq -s '[.[] | select(.type=="stats" and .final==false) | .kafka.queue] | max' \
	"$WORK/cap.jsonl")
[ "$queued" != null ] && [ "$queued" -gt 50 ] ||
	les_fail "no stats record saw the queue grow during the outage (max queue: $queued)"
les_pass "stats during the outage show the lines held in the queue (up to $queued)"
les_eq "final stats: failed, dropped_kafka, queue" "0 0 0" \
	"$(tail -n 1 "$WORK/cap.jsonl" |
		jq -r '"\(.kafka.failed) \(.kafka.dropped_kafka) \(.kafka.queue)"')"

les_ge "the stats count the client's errors (kafka.errors)" 1 \
	"$(tail -n 1 "$WORK/cap.jsonl" | jq -r .kafka.errors)"

# With -v each distinct broker error is told, but once per interval, not per retry.
errs=$(grep -c '^lustre-ebpf-stream: kafka: .*(_' "$WORK/cap.jsonl.err")
[ "$errs" -ge 1 ] && [ "$errs" -le 20 ] ||
	les_fail "$errs kafka error lines on stderr: $(head -n 5 "$WORK/cap.jsonl.err")"
les_pass "the outage was reported on stderr in $errs lines, not spammed"

les_done
