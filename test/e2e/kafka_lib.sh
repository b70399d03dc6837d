# shellcheck shell=bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Kafka helpers of the end-to-end tests, on top of lib.sh: a real broker
# (scripts/kafka-test-broker) in its own scratch directory, stopped at exit,
# and kcat as the independent consumer.
#
# A test sources lib.sh and this file, then calls les_kafka_init NAME
# [TOOL...] instead of les_init.

LES_KAFKA_BROKER=$LES_SRC/scripts/kafka-test-broker
KAFKA_DIR=

# The broker's directory is outside $WORK: lib.sh's cleanup removes $WORK,
# and the broker must be stopped (after the tool) before its files go.
_les_kafka_cleanup() {
	_les_cleanup
	[ -n "$KAFKA_DIR" ] || return 0
	"$LES_KAFKA_BROKER" stop --dir "$KAFKA_DIR/broker" >/dev/null 2>&1
	[ -n "${LES_KEEP:-}" ] || rm -rf "$KAFKA_DIR"
}

# les_kafka_init NAME [TOOL...]: les_init with the broker's and kcat's
# tools checked; sets KAFKA_DIR.
les_kafka_init() {
	local name=$1

	shift
	les_init "$name" kcat java mvn "$@"
	mkdir -p "$LES_BUILD" || les_fail "cannot create $LES_BUILD"
	KAFKA_DIR=$(mktemp -d "$LES_BUILD/kafka-e2e.XXXXXX") || les_fail "mktemp failed"
	trap _les_kafka_cleanup EXIT
	trap 'exit 1' INT TERM
}

# les_kafka_start: start (or restart) the broker; its address in KAFKA_ADDR.
# shellcheck disable=SC2034 # KAFKA_ADDR is for the tests
les_kafka_start() {
	KAFKA_ADDR=$("$LES_KAFKA_BROKER" start --dir "$KAFKA_DIR/broker" \
		2>"$WORK/broker.err") ||
		les_fail "kafka-test-broker start failed: $(cat "$WORK/broker.err")"
}

# les_kafka_stop: stop the broker.
les_kafka_stop() {
	"$LES_KAFKA_BROKER" stop --dir "$KAFKA_DIR/broker" ||
		les_fail "kafka-test-broker stop failed"
}

# les_kafka_consume ADDR TOPIC [FORMAT]: every message of TOPIC, in offset
# order, one per line unless FORMAT (kcat -f) says otherwise.
les_kafka_consume() {
	local fmt=()

	[ $# -ge 3 ] && fmt=(-f "$3")
	timeout 60 kcat -b "$1" -t "$2" -C -o beginning -e -q "${fmt[@]}"
}
