#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The metrics endpoint under a slow client, the signals, the names on the
# terminal (docs/reliability.md, "The metrics endpoint" and "Signals and
# terminals"):
#   - slowloris from 127.0.0.2 (64 connections, each half a request, held
#     15 s at most): a scrape from 127.0.0.1 is answered within 3 s, and
#     the server closes every slow connection within its idle timeout;
#   - the second SIGINT kills (status 130) a run stalled in its exit (a
#     Kafka flush towards a port where no broker listens);
#   - SIGTERM during start-up (libbpf loading and attaching): the one
#     cleanup path runs (status 0, a final stats record) and no les<PID>_
#     event stays in tracefs kprobe_events (where the kernel has them),
#     and those of a run killed by SIGKILL go at the next start;
#   - an escape sequence in the job ID and in comm comes out escaped in
#     --top --batch (live and replayed), in the summary and in an error line.

. "$(dirname "$0")/lib.sh"
les_init 69_endpoint_signals curl python3

M=$WORK/mnt
les_testfs "$M"
ESC=$'\x1b'

# --- slowloris ---------------------------------------------------------------------
les_start "$WORK/p.jsonl" --mount "$M" --prometheus 127.0.0.1:0 --stats-interval 0
PORT=$(sed -n 's/.*metrics on port \([0-9]*\) at .*/\1/p' "$WORK/p.jsonl.err")
[ -n "$PORT" ] || les_fail "no metrics port in: $(cat "$WORK/p.jsonl.err")"
dd if=/dev/zero of="$M/f" bs=4k count=4 status=none
cat >"$WORK/slowloris.py" <<'PY'
import select, socket, sys, time
port, n, hold = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
socks = []
for _ in range(n):
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
    socks.append(s)
print("open", len(socks), flush=True)
t0, open_ = time.time(), set(socks)
while open_ and time.time() - t0 < hold:
    ready, _, _ = select.select(list(open_), [], [], 0.2)
    for s in ready:
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        if not data:
            open_.discard(s)
print("closed", n - len(open_), "in %.1f" % (time.time() - t0), flush=True)
PY
python3 "$WORK/slowloris.py" "$PORT" 64 15 >"$WORK/slowloris.out" 2>&1 &
SL=$!
for _ in $(seq 1 50); do
	grep -q '^open 64' "$WORK/slowloris.out" && break
	sleep 0.1
done
les_true "64 half requests open from 127.0.0.2" grep -q '^open 64' "$WORK/slowloris.out"
t0=$(date +%s.%N)
curl -sf --max-time 3 "http://127.0.0.1:$PORT/metrics" >"$WORK/metrics" ||
	les_fail "a scrape beside the slow client failed (curl $?)"
t1=$(date +%s.%N)
les_true "the scrape beside the slow client has the records" \
	grep -q '^lustre_ebpf_stream_client_access_operations_total{' "$WORK/metrics"
les_pass "scrape answered in $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") s beside 64 half requests"
wait "$SL"
# 56 refused at once (8 per address), the other 8 closed after 10 s idle.
les_true "the server closed every slow connection within 15 s ($(tail -n 1 "$WORK/slowloris.out"))" \
	grep -q '^closed 64 ' "$WORK/slowloris.out"
les_stop
les_eq "exit status after the slow client" 0 "$LES_STATUS"
les_eq "stats record: no scrape cut" 0 \
	"$(les_jq "$WORK/p.jsonl" 'map(select(.type == "stats" and .final))[0].prometheus.scrapes_cut')"
les_eq "stats record: no series left out" 0 \
	"$(les_jq "$WORK/p.jsonl" 'map(select(.type == "stats" and .final))[0].prometheus.series_unrendered')"

# --- the second SIGINT kills --------------------------------------------------------
# No broker on port 9: the exit waits 30 s for the lines to be delivered.
"$LES_BIN" -o /dev/null -v --mount "$M" --stats-interval 0 --kafka-brokers 127.0.0.1:9 \
	--kafka-topic t --kafka-flush-timeout 30s 2>"$WORK/k.err" &
KP=$!
_les_pids+=("$KP")
for _ in $(seq 1 300); do
	grep -q "probes attached" "$WORK/k.err" && break
	sleep 0.1
done
dd if=/dev/zero of="$M/g" bs=4k count=4 status=none
sleep 0.5
kill -INT "$KP"
sleep 1
kill -0 "$KP" 2>/dev/null || les_fail "the run did not stall in its Kafka flush: $(cat "$WORK/k.err")"
les_pass "after one SIGINT, the run waits in its Kafka flush"
kill -INT "$KP"
for _ in $(seq 1 30); do
	kill -0 "$KP" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$KP" 2>/dev/null && les_fail "a second SIGINT did not kill within 3 s"
wait "$KP"
les_eq "the second SIGINT kills: status 128+SIGINT" 130 "$?"

# --- SIGTERM during start-up -----------------------------------------------------------
KE=
for f in /sys/kernel/tracing/kprobe_events /sys/kernel/debug/tracing/kprobe_events; do
	[ -e "$f" ] && KE=$f && break
done
for delay in 0 0.2 0.5; do
	# -vv: libbpf's messages say the start-up has reached the BPF object.
	"$LES_BIN" -o "$WORK/s$delay.jsonl" -vv --mount "$M" --stats-interval 0 2>"$WORK/s.err" &
	SP=$!
	for _ in $(seq 1 300); do
		grep -q '^lustre-ebpf-stream: libbpf: ' "$WORK/s.err" && break
		sleep 0.01
	done
	sleep "$delay"
	grep -q "probes attached" "$WORK/s.err" && attached=" (already attached)" || attached=""
	kill -TERM "$SP"
	wait "$SP"
	st=$?
	[ "$st" = 0 ] || les_fail "SIGTERM ${delay}s into loading$attached: status $st: $(tail -n 3 "$WORK/s.err")"
	les_eq "SIGTERM ${delay}s into loading$attached: status 0, a final stats record" 1 \
		"$(les_jq "$WORK/s$delay.jsonl" 'map(select(.type == "stats" and .final)) | length')"
	if [ -n "$KE" ]; then
		les_eq "no les${SP}_ event left in $KE" 0 "$(grep -c "les${SP}_" "$KE")"
	fi
done
# A run killed (SIGKILL: no cleanup) leaves its return probes; the next start removes them.
if [ -n "$KE" ]; then
	les_start "$WORK/k1.jsonl" --mount "$M" --stats-interval 0
	K1=$LES_PID
	left=$(grep -c "les${K1}_" "$KE")
	kill -KILL "$K1"
	wait "$K1" 2>/dev/null
	if [ "$left" -gt 0 ]; then
		les_start "$WORK/k2.jsonl" --mount "$M" --stats-interval 0
		les_true "the next start says it removed them" \
			grep -q "removed $left return probe" "$WORK/k2.jsonl.err"
		les_eq "no les${K1}_ event left after the next start" 0 "$(grep -c "les${K1}_" "$KE")"
		les_stop
		les_eq "the next start: exit status" 0 "$LES_STATUS"
	else
		echo "# this run made no tracefs return probes: the reaping check is skipped"
	fi
else
	echo "# no kprobe_events on this kernel: the tracefs checks are skipped"
fi

# --- names on the terminal ---------------------------------------------------------------
mkdir -p "$WORK/bin"
cp "$(command -v dd)" "$WORK/bin/e${ESC}[2Jx"
JOB="9${ESC}]0;t"$'\x07'
workload() {
	for _ in 1 2 3 4 5 6; do
		SLURM_JOB_ID=$JOB "$WORK/bin/e${ESC}[2Jx" if=/dev/zero of="$M/h" bs=4k count=8 \
			status=none
		sleep 0.5
	done
}
"$LES_BIN" --top --batch 3 --interval 1s --mount "$M" >"$WORK/top.out" 2>"$WORK/top.err" &
TP=$!
_les_pids+=("$TP")
sleep 1
workload
wait "$TP"
les_eq "--top --batch: exit 0" 0 "$?"
les_true "--top --batch: the job ID escaped" grep -qF '9\x1b]0;t\x07' "$WORK/top.out"
les_eq "--top --batch: no escape byte" 0 "$(grep -c "$ESC" "$WORK/top.out")"

"$LES_BIN" -o /dev/null --summary --duration 4s --mount "$M" 2>"$WORK/sum.err" &
SMP=$!
_les_pids+=("$SMP")
sleep 1
workload
wait "$SMP"
les_eq "summary: exit 0" 0 "$?"
les_true "summary: the job ID escaped" grep -qF '  9\x1b]0;t\x07' "$WORK/sum.err"
les_true "summary: comm escaped" grep -qF '  e\x1b[2Jx' "$WORK/sum.err"
les_eq "summary: no escape byte" 0 "$(grep -c "$ESC" "$WORK/sum.err")"

# An error line that names a path: the one stderr line escapes it too.
"$LES_BIN" -o /dev/null --mount "$WORK/no${ESC}[2Jmount" 2>"$WORK/fail.err"
les_eq "--mount of a path that is not there: exit 2" 2 "$?"
les_true "the error line: the path escaped" grep -qF 'no\x1b[2Jmount' "$WORK/fail.err"
les_eq "the error line: no escape byte" 0 "$(grep -c "$ESC" "$WORK/fail.err")"

# A capture replayed (--top --input) carries what the records carried.
for t in 0.1 2.1; do
	printf '{"type":"access","ts":"2026-01-01T00:00:0%sZ","op":"write","latency_ns":1000,"bytes":1,"job_id":"9\\u001b]0;t\\u0007"}\n' "$t"
done >"$WORK/cap.jsonl"
"$LES_BIN" --top --input "$WORK/cap.jsonl" --interval 1s --batch 10 --speed 100 >"$WORK/replay.out"
les_eq "--top --input: exit 0" 0 "$?"
les_true "--top --input: the job ID escaped" grep -qF '9\x1b]0;t\x07' "$WORK/replay.out"
les_eq "--top --input: no escape byte" 0 "$(grep -c "$ESC" "$WORK/replay.out")"

les_done
