#!/bin/bash
# End-to-end test of scripts/kafka-test-broker, the real Apache Kafka broker
# the Kafka sink's tests run against: start it, round-trip 1000 lines through
# it with kcat, restart it on the same directory and check that clients find
# it at the same address with the messages still there.
#
# Environment (set by CTest): LES_BUILD (build tree), LES_SRC (source tree).

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kafka_lib.sh"
les_kafka_init 05_kafka_broker

BROKER=$LES_KAFKA_BROKER
DIR=$KAFKA_DIR/broker
NLINES=1000
TOPIC=les-e2e-broker-$$

# Known lines that look like the sink's records, with characters a naive
# pipeline would mangle: quotes, backslashes, JSON escapes, UTF-8 and a
# real tab.
make_lines()
{
	local i

	for i in $(seq 1 "$NLINES"); do
		printf '{"type":"access","seq":%d,"path":"/lustre/job\\\\%d/f\\"%d\\"","note":"caf\xc3\xa9\\t\t%d"}\n' \
			"$i" $((i % 17)) "$i" $((i * 7919))
	done
}

# --- first start ----------------------------------------------------------

les_kafka_start
addr1=$KAFKA_ADDR
[[ $addr1 =~ ^127\.0\.0\.1:[0-9]+$ ]] || les_fail "start: stdout '$addr1'"
les_pass "start prints the bootstrap address ($addr1)"

status=$("$BROKER" status --dir "$DIR") || les_fail "status exits non-zero while running"
les_eq "status reports the address while running" "$addr1" "$status"

# --- round trip -----------------------------------------------------------

make_lines >"$WORK/sent"
[ "$(wc -l <"$WORK/sent")" -eq "$NLINES" ] || les_fail "could not make $NLINES lines"

les_true "kcat -P produced $NLINES lines" \
	timeout 60 kcat -b "$addr1" -t "$TOPIC" -P -l "$WORK/sent"

les_kafka_consume "$addr1" "$TOPIC" >"$WORK/got1"
cmp -s "$WORK/sent" "$WORK/got1" ||
	les_fail "consumed $(wc -l <"$WORK/got1") lines that differ from the $NLINES sent"
les_pass "kcat -C read back the $NLINES lines byte for byte"

# --- restart on the same directory ---------------------------------------

les_true "stop exits 0" "$BROKER" stop --dir "$DIR"

"$BROKER" status --dir "$DIR" >/dev/null && les_fail "status says running after stop"
les_pass "status exits non-zero after stop"

port=${addr1##*:}
(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null &&
	les_fail "port $port still accepts connections after stop"
les_pass "port $port is closed after stop"

les_true "stop of a stopped broker exits 0" "$BROKER" stop --dir "$DIR"

les_kafka_start
les_eq "restart keeps the address" "$addr1" "$KAFKA_ADDR"

les_kafka_consume "$KAFKA_ADDR" "$TOPIC" >"$WORK/got2"
cmp -s "$WORK/sent" "$WORK/got2" ||
	les_fail "after restart $(wc -l <"$WORK/got2") lines, differing from the $NLINES sent"
les_pass "the $NLINES messages survived the restart"

# --- final stop -----------------------------------------------------------

"$BROKER" stop --dir "$DIR" && ! "$BROKER" status --dir "$DIR" >/dev/null ||
	les_fail "final stop left the broker running"
les_pass "final stop"

les_done
