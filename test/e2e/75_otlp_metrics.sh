#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# OTLP metrics (--otlp-signals metrics) in a real OpenTelemetry Collector:
# Jaeger v1.75.0 (the Collector with Jaeger's components, the binary
# e2e.73 uses: scripts/jaeger-test-collector, built once from the Go
# module proxy and cached), started --metrics: its OTLP receiver takes
# /v1/metrics, its debug exporter logs every data point it got, and
# otlp_metrics_read.py reads them back.
#
# 1. The windows. les-testfs answers every read 3 ms late and fails every
#    4th with EIO; reads run for about 3 s under --aggregate 1s, with
#    --prometheus on. Every window line of the run must be in the collector
#    as data points of its window with its group's attributes: operations =
#    count, bytes, errors by class, the duration histogram's count and sum;
#    nothing more. Summed over the windows, the histograms' bucket counts
#    and bounds must equal /metrics' access_duration_seconds buckets, and
#    the operations its access_operations_total, by op.
# 2. An outage. A fresh collector, a small queue (--otlp-queue-size 1: two
#    batches), four readers; the collector is stopped for 8 s and started
#    again while they read. Every data point the final stats record made is
#    then either in the collector (distinct by name, window and attributes)
#    or counted dropped: exactly. The outage told once, its end once.
#
# Environment (set by CTest): LES_BUILD (build tree), LES_SRC (source tree).

. "$(dirname "$0")/lib.sh"
les_init 75_otlp_metrics curl python3

JAEGER=$LES_SRC/scripts/jaeger-test-collector
READ=$LES_SRC/test/e2e/otlp_metrics_read.py
JDIR=$(mktemp -d "/tmp/les-otlpm.XXXXXX")
LOAD_PIDS=()

trap les_collector_cleanup EXIT

# collector_start DIR: sets OTLP_PORT.
collector_start() {
	local ports

	ports=$("$JAEGER" start --metrics --dir "$1" 2>"$WORK/jaeger.err") ||
		les_fail "jaeger-test-collector start --metrics: $(cat "$WORK/jaeger.err")"
	read -r OTLP_PORT _ <<<"$ports"
}

# --- 1. each window in the collector, the run's sum in /metrics ----------------------------

start=$SECONDS
collector_start "$JDIR/a"
les_pass "collector (Jaeger v1.75.0) up in $((SECONDS - start)) s (OTLP :$OTLP_PORT)"

M=$WORK/mnt
les_testfs "$M" --direct-io --latency-ms=3 --latency-ops=read --inject=read:EIO:4
head -c 4096 /dev/urandom >"$M/data"
PROM_PORT=$((20000 + $$ % 20000))
les_start "$WORK/win.jsonl" --mount "$M" --aggregate 1s --stats-interval 0 \
	--otlp "http://127.0.0.1:$OTLP_PORT" --otlp-signals metrics --prometheus "127.0.0.1:$PROM_PORT"
python3 - "$M/data" >"$WORK/reads.out" <<'EOF'
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
end = time.time() + 3.2
while time.time() < end:
    try:
        os.pread(fd, 512, 0)
        print("ok")
    except OSError as e:
        print(e.errno)
    time.sleep(0.03)
EOF
# The last full window closes at the tick past its end; /metrics then has every record.
sleep 1.5
curl -sf "http://127.0.0.1:$PROM_PORT/metrics" >"$WORK/metrics.txt" || les_fail "/metrics did not answer"
les_stop
les_eq "the tool exits 0" 0 "$LES_STATUS"
les_ge "reads that failed with EIO" 1 "$(grep -c '^5$' "$WORK/reads.out")"

final=$(tail -n 1 "$WORK/win.jsonl")
points=$(jq -r .otlp.metrics.points <<<"$final")
les_ge "windows sent" 3 "$(jq -r .otlp.metrics.windows <<<"$final")"
les_eq "final stats: every data point exported, none pending" "$points $points 0 0" \
	"$(jq -r '.otlp.metrics | "\(.exported) \(.points) \(.dropped_otlp) \(.pending)"' <<<"$final")"
les_eq "no span made (--otlp-signals metrics)" 0 "$(jq -r .otlp.spans <<<"$final")"

python3 "$READ" "$JDIR/a/jaeger.log" >"$WORK/points.jsonl"
les_eq "data points in the collector = exported" "$points" "$(wc -l <"$WORK/points.jsonl")"
jq -c 'select(.type == "window")' "$WORK/win.jsonl" >"$WORK/windows.jsonl"
les_ge "window lines" 3 "$(wc -l <"$WORK/windows.jsonl")"

# compare WHAT: python3 over the window lines, the points and /metrics.
compare() {
	python3 - "$WORK/windows.jsonl" "$WORK/points.jsonl" "$WORK/metrics.txt" "$1" <<'EOF'
import datetime, json, re, sys
from collections import defaultdict

P = "lustre_ebpf_stream."
ATTR = {"fs_type": P + "fs_type", "fs": P + "fs", "mount": P + "mount", "op": P + "op",
        "access_intent": P + "access_intent", "uid": "user.id", "username": "user.name",
        "process": P + "process", "actor_type": P + "actor_type", "job_id": P + "job_id"}
wins = [json.loads(l) for l in open(sys.argv[1])]
pts = [json.loads(l) for l in open(sys.argv[2])]
prom = open(sys.argv[3]).read().splitlines()
what = sys.argv[4]

def epoch(ts):
    t = datetime.datetime.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S")
    return int(t.replace(tzinfo=datetime.timezone.utc).timestamp())

def key(name, start, attrs):
    return (name, start, json.dumps(attrs, sort_keys=True))

def secs(ns):  # as the collector prints a double: %f, 6 decimals
    return "%.6f" % (ns / 1e9)

got = {}
for p in pts:
    got[key(p["name"], int(p["start"]), p["attrs"])] = p

if what == "windows":
    want = {}
    for w in wins:
        attrs = {ATTR[f]: w[f] for f in ATTR if w.get(f) is not None}
        if w.get("other"):
            attrs = {P + "other": True}
        s, kind = epoch(w["window_start"]), w["record_type"]
        n = P + kind + "."
        if kind == "rpc_event":
            continue
        want[key(n + "operations", s, attrs)] = ("value", w["count"])
        if kind == "access":
            want[key(n + "bytes", s, attrs)] = ("value", w["bytes"])
        for cls, c in w["errors"].items():
            want[key(n + "errors", s, dict(attrs, **{"error.type": cls}))] = ("value", c)
        want[key(n + "duration", s, attrs)] = ("hist", (w["count"], secs(w["sum_latency_ns"])))
    for k, (t, v) in sorted(want.items()):
        p = got.get(k)
        if p is None:
            print("missing in the collector:", k)
        elif t == "value" and p.get("value") != v:
            print("value %s != %s: %s" % (p.get("value"), v, k))
        elif t == "hist" and (p.get("count"), p.get("sum")) != v:
            print("histogram count/sum %s != %s: %s" % ((p.get("count"), p.get("sum")), v, k))
        elif p["temporality"] != "Delta" or p.get("time", 0) - p["start"] <= 0:
            print("not a delta over its window:", k)
    for k in sorted(set(got) - set(want)):
        print("in the collector, not in a window line:", k)

elif what == "buckets":
    # The collector's histograms summed over the windows, by op: per bucket.
    sums, bounds = defaultdict(lambda: [0] * 13), set()
    for p in pts:
        if p["name"] == P + "access.duration":
            op = p["attrs"].get(P + "op")
            sums[op] = [a + b for a, b in zip(sums[op], p["buckets"])]
            bounds.add(tuple(float(b) for b in p["bounds"]))
    # /metrics: cumulative "le" buckets of every series, summed by op, made per bucket.
    cum, les = defaultdict(lambda: defaultdict(int)), set()
    fam = re.compile(r'^lustre_ebpf_stream_client_access_duration_seconds_bucket\{(.*)\} (\d+)$')
    for line in prom:
        m = fam.match(line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        cum[labels["op"]][labels["le"]] += int(m.group(2))
        les.add(labels["le"])
    order = sorted((l for l in les if l != "+Inf"), key=float) + ["+Inf"]
    if len(bounds) != 1 or list(bounds)[0] != tuple(float(l) for l in order[:-1]):
        print("bounds: collector %s, /metrics %s" % (sorted(bounds), order[:-1]))
    for op in sorted(set(sums) | set(cum)):
        c = [cum[op][l] for l in order]
        per = [c[0]] + [c[i] - c[i - 1] for i in range(1, len(c))]
        if per != sums[op]:
            print("op %s: collector buckets %s, /metrics %s" % (op, sums[op], per))
    if not sums:
        print("no access.duration histogram in the collector")

elif what == "ops":
    ops, prom_ops = defaultdict(int), defaultdict(int)
    for p in pts:
        if p["name"] == P + "access.operations":
            ops[p["attrs"].get(P + "op")] += p["value"]
    fam = re.compile(r'^lustre_ebpf_stream_client_access_operations_total\{(.*)\} (\d+)$')
    for line in prom:
        m = fam.match(line)
        if m:
            prom_ops[dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))["op"]] += int(m.group(2))
    for op in sorted(set(ops) | set(prom_ops)):
        if ops[op] != prom_ops[op]:
            print("op %s: %d in the collector, %d in /metrics" % (op, ops[op], prom_ops[op]))
EOF
}

les_eq "every window line is its window's data points in the collector, and nothing else" "" \
	"$(compare windows)"
les_eq "histograms summed over the windows = /metrics' buckets and bounds, by op" "" \
	"$(compare buckets)"
les_eq "operations summed over the windows = /metrics' access_operations_total, by op" "" \
	"$(compare ops)"
les_ge "read errors in the collector (error.type io)" 1 \
	"$(jq -s '[.[] | select(.name == "lustre_ebpf_stream.access.errors" and .attrs["error.type"] == "io") | .value] | add // 0' "$WORK/points.jsonl")"
les_eq "the resource: the tool and its host" \
	"lustre-ebpf-stream $(jq -r .host <<<"$final")" \
	"$(jq -r '.resource | "\(.["service.name"]) \(.["host.name"])"' "$WORK/points.jsonl" | sort -u)"
"$JAEGER" stop --dir "$JDIR/a"

# --- 2. a collector outage: every data point delivered or counted ----------------------------

collector_start "$JDIR/b"
M2=$WORK/mnt2
les_testfs "$M2" --direct-io --latency-ms=2 --latency-ops=read
head -c 4096 /dev/urandom >"$M2/data"
les_start "$WORK/out.jsonl" --mount "$M2" --aggregate 1s --stats-interval 2s \
	--otlp "http://127.0.0.1:$OTLP_PORT" --otlp-signals metrics --otlp-queue-size 1 \
	--otlp-flush-timeout 20s
for r in 1 2 3 4; do
	python3 - "$M2/data" "$WORK/stop-load" "$r" <<'EOF' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
end = time.time() + 60
while not os.path.exists(sys.argv[2]) and time.time() < end:
    os.pread(fd, 512, 0)
    time.sleep(0.01 * int(sys.argv[3]))
EOF
	LOAD_PIDS+=($!)
done
sleep 3
"$JAEGER" stop --dir "$JDIR/b"
les_pass "collector stopped 3 s into the workload"
sleep 8
collector_start "$JDIR/b"
les_pass "collector back on the same port"
sleep 3
touch "$WORK/stop-load"
for p in "${LOAD_PIDS[@]}"; do
	wait "$p"
done
LOAD_PIDS=()
sleep 1.5
les_stop
les_eq "the tool exits 0" 0 "$LES_STATUS"

final=$(tail -n 1 "$WORK/out.jsonl")
[ "$(jq -r .final <<<"$final")" = true ] || les_fail "the last line is not the final stats"
made=$(jq -r .otlp.metrics.points <<<"$final")
exported=$(jq -r .otlp.metrics.exported <<<"$final")
dropped=$(jq -r .otlp.metrics.dropped_otlp <<<"$final")
les_eq "final stats: nothing pending" 0 "$(jq -r .otlp.metrics.pending <<<"$final")"
les_ge "data points dropped on the full queue during the outage" 1 \
	"$(jq -r .otlp.metrics.dropped_by.queue_full <<<"$final")"
les_ge "data points exported" 1 "$exported"
les_eq "made = exported + dropped" "$made" "$((exported + dropped))"
python3 "$READ" "$JDIR/b/jaeger.log" >"$WORK/points2.jsonl"
les_eq "data points in the collector (distinct by name, window, attributes) = exported" "$exported" \
	"$(jq -c '[.name, .start, .attrs]' "$WORK/points2.jsonl" | sort -u | wc -l)"
les_eq "the outage told on stderr once" 1 \
	"$(grep -c 'otlp: collector .*/v1/metrics not reachable' "$WORK/out.jsonl.err")"
les_eq "the recovery told on stderr once" 1 \
	"$(grep -c 'otlp: collector .*/v1/metrics back after' "$WORK/out.jsonl.err")"
les_eq "the drops told at exit" 1 \
	"$(grep -c "otlp: $dropped of $made data points not exported" "$WORK/out.jsonl.err")"
"$JAEGER" stop --dir "$JDIR/b"
