#!/bin/bash
# End-to-end test of scripts/kafka-test-broker, the real Apache Kafka broker
# the Kafka sink's tests run against: start it, round-trip 1000 lines through
# it with kcat, restart it on the same directory and check that clients find
# it at the same address with the messages still there.
#
# Environment (set by CTest): LES_BUILD (build tree), LES_SRC (source tree).
set -u

LES_SRC=${LES_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
LES_BUILD=${LES_BUILD:-$LES_SRC/build}
BROKER=$LES_SRC/scripts/kafka-test-broker
NLINES=1000
TOPIC=les-e2e-broker-$$

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

# A failure after which the remaining checks cannot mean anything.
fatal()
{
	fail "$*"
	finish
}

finish()
{
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ] || exit 1
	exit 0
}

for tool in kcat java mvn; do
	command -v "$tool" >/dev/null ||
		fatal "$tool not installed (run scripts/install-deps)"
done

mkdir -p "$LES_BUILD" || fatal "cannot create $LES_BUILD"
WORK=$(mktemp -d "$LES_BUILD/kafka-e2e.XXXXXX") || fatal "mktemp failed"
DIR=$WORK/broker

cleanup()
{
	"$BROKER" stop --dir "$DIR" >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

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

# Prints every message of $TOPIC, one per line, in offset order.
consume()
{
	timeout 60 kcat -b "$1" -t "$TOPIC" -C -o beginning -e -q
}

# --- first start ----------------------------------------------------------

addr1=$("$BROKER" start --dir "$DIR" 2>"$WORK/start1.err")
rc=$?
if [ "$rc" -eq 0 ] && [[ $addr1 =~ ^127\.0\.0\.1:[0-9]+$ ]]; then
	pass "start prints the bootstrap address ($addr1)"
else
	cat "$WORK/start1.err"
	fatal "start: exit $rc, stdout '$addr1'"
fi

status=$("$BROKER" status --dir "$DIR")
if [ $? -eq 0 ] && [ "$status" = "$addr1" ]; then
	pass "status reports $status while running"
else
	fail "status: expected '$addr1', got '$status'"
fi

# --- round trip -----------------------------------------------------------

make_lines >"$WORK/sent"
[ "$(wc -l <"$WORK/sent")" -eq "$NLINES" ] || fatal "could not make $NLINES lines"

if timeout 60 kcat -b "$addr1" -t "$TOPIC" -P -l "$WORK/sent" 2>"$WORK/produce.err"; then
	pass "kcat -P produced $NLINES lines"
else
	cat "$WORK/produce.err"
	fail "kcat -P failed"
fi

consume "$addr1" >"$WORK/got1"
if cmp -s "$WORK/sent" "$WORK/got1"; then
	pass "kcat -C read back the $NLINES lines byte for byte"
else
	fail "consumed $(wc -l <"$WORK/got1") lines that differ from the $NLINES sent"
fi

# --- restart on the same directory ---------------------------------------

if "$BROKER" stop --dir "$DIR"; then
	pass "stop exits 0"
else
	fail "stop failed"
fi

if "$BROKER" status --dir "$DIR" >/dev/null; then
	fail "status says running after stop"
else
	pass "status exits non-zero after stop"
fi

port=${addr1##*:}
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
	fail "port $port still accepts connections after stop"
else
	pass "port $port is closed after stop"
fi

if "$BROKER" stop --dir "$DIR"; then
	pass "stop of a stopped broker exits 0"
else
	fail "second stop failed"
fi

addr2=$("$BROKER" start --dir "$DIR" 2>"$WORK/start2.err")
rc=$?
if [ "$rc" -ne 0 ]; then
	cat "$WORK/start2.err"
	fatal "restart: exit $rc"
fi
if [ "$addr2" = "$addr1" ]; then
	pass "restart keeps the address $addr2"
else
	fail "restart moved the broker from $addr1 to $addr2"
fi

consume "$addr2" >"$WORK/got2"
if cmp -s "$WORK/sent" "$WORK/got2"; then
	pass "the $NLINES messages survived the restart"
else
	fail "after restart $(wc -l <"$WORK/got2") lines, differing from the $NLINES sent"
fi

# --- final stop -----------------------------------------------------------

if "$BROKER" stop --dir "$DIR" && ! "$BROKER" status --dir "$DIR" >/dev/null; then
	pass "final stop"
else
	fail "final stop left the broker running"
fi

finish
