#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# contrib/prometheus/alerts.yml and contrib/grafana/lustre-ebpf-stream.json
# against series the tool really served. Two instances on the test
# filesystem, both scraped once a second while a workload runs in phases:
#   node1  job 101 writes on a fast mount (its baseline), then on a mount
#          whose writes take 1.2 s (its p99 goes up); job 102 writes on the
#          fast mount throughout; at the second phase one write of job 301
#          is held 30 s by a third mount (in flight, nothing completing);
#   node2  a 64 KiB ring read once a second, its output on a full tmpfs and
#          Kafka to a closed port with a 1-line queue: at the second phase
#          two bursts of writes are lost in the kernel, at the output and in
#          Kafka.
# Scrape k becomes minute k of a promtool unit test (promtool's series
# notation, the scraped values as they were, instance labels as Prometheus
# would add them): the rules' windows are minutes, and 50 minutes of rule
# time take 50 seconds of scrapes. promtool check rules, then promtool test
# rules with each alert expected where it must fire (exactly those label
# sets: no other job, mount or node) and nothing where it must not. The
# dashboard: valid JSON, made by its generator, laid out as Grafana needs,
# every query PromQL, every family it names served, every query returning
# series on the scrapes.
#
# LES_ALERTS and LES_DASHBOARD replace the files checked (used to show the
# checks failing on a planted fault).

. "$(dirname "$0")/lib.sh"
les_init 72_alert_rules curl promtool python3

ALERTS=${LES_ALERTS:-$LES_SRC/contrib/prometheus/alerts.yml}
DASH=${LES_DASHBOARD:-$LES_SRC/contrib/grafana/lustre-ebpf-stream.json}
PY=/usr/bin/python3
K=4096
BASELINE_S=22 # scrapes of phase 1: job 101's baseline (over the rule's 10 m offset)
SLOW_S=20     # scrapes of phase 2: job 101 slow (over 5 m window + 10 m "for")
HOLD_MS=30000 # job 301's write held: over 5 m without completions + 5 m "for", with room
LOADS=()
SCRAPER=

stop_all() {
	touch "$WORK/stop1" "$WORK/stop2" "$WORK/stop102"
	[ -n "$SCRAPER" ] && kill "$SCRAPER" 2>/dev/null
	for p in "${LOADS[@]}"; do kill "$p" 2>/dev/null; done
	wait "${LOADS[@]}" 2>/dev/null
}
trap 'stop_all; _les_cleanup' EXIT

les_true "promtool check rules" promtool check rules "$ALERTS"

# --- the tool, the mounts, the workload -------------------------------------------

F=$WORK/fast
S=$WORK/slow
H=$WORK/held
D=$WORK/burst
les_testfs "$F" --direct-io
les_testfs "$S" --direct-io --latency-ms=1200 --latency-ops=write
les_testfs "$H" --direct-io --latency-ms=$HOLD_MS --latency-ops=write
les_testfs "$D"
FULL=$WORK/full
mkdir -p "$FULL"
mount -t tmpfs -o size=64k,mode=0755 les-e2e-alerts-full "$FULL" || les_fail "cannot mount a tmpfs"
les_track_mount "$FULL"
dd if=/dev/zero of="$FULL/filler" bs=1k count=64 status=none 2>/dev/null

port_of() { sed -n 's/.*metrics on port \([0-9]*\) at .*/\1/p' "$1.err"; }
les_start "$WORK/a.jsonl" --mount "$F" --mount "$S" --mount "$H" --stats-interval 0 \
	--prometheus 127.0.0.1:0
NODE1=$LES_PID
PORT_A=$(port_of "$WORK/a.jsonl")
# Port 1: refused at once, so every line but the one queued is dropped. Its
# ring also takes the fork and exec notices of the whole machine: of the
# bursts only a few records get through, as few as 3 seen.
# Its output on the full tmpfs, its stderr not.
"$LES_BIN" -o "$FULL/b.jsonl" -v --mount "$D" --stats-interval 0 --prometheus 127.0.0.1:0 \
	--ringbuf-size 64K --wakeup-bytes 1M --poll-interval 1000 \
	--kafka-brokers 127.0.0.1:1 --kafka-topic t -X queue.buffering.max.messages=1 \
	--kafka-flush-timeout 1s 2>"$WORK/b.jsonl.err" &
NODE2=$!
les_wait_ready $NODE2 "$WORK/b.jsonl.err"
PORT_B=$(port_of "$WORK/b.jsonl")
[ -n "$PORT_A" ] && [ -n "$PORT_B" ] || les_fail "no metrics port: $(cat "$WORK/a.jsonl.err" "$WORK/b.jsonl.err")"
les_pass "node1 serves on port $PORT_A, node2 on $PORT_B"

# Scrape k of node N goes to scrapes/N/k; a scrape either instance fails ends the loop.
mkdir -p "$WORK/scrapes/node1" "$WORK/scrapes/node2"
(
	k=0
	while :; do
		curl -sf "http://127.0.0.1:$PORT_A/metrics" -o "$WORK/scrapes/node1/$k.tmp" &&
			curl -sf "http://127.0.0.1:$PORT_B/metrics" -o "$WORK/scrapes/node2/$k.tmp" || exit 1
		mv "$WORK/scrapes/node1/$k.tmp" "$WORK/scrapes/node1/$k"
		mv "$WORK/scrapes/node2/$k.tmp" "$WORK/scrapes/node2/$k"
		k=$((k + 1))
		sleep 1
	done
) &
SCRAPER=$!
scrapes() { ls "$WORK/scrapes/node1" | grep -cv tmp; } # scrapes taken so far
wait_scrapes() { # N: until N scrapes are taken
	while [ "$(scrapes)" -lt "$1" ]; do
		kill -0 "$SCRAPER" 2>/dev/null || les_fail "a scrape failed"
		sleep 0.2
	done
}

# writers JOB DIR STOPFILE N: N loops of 5-block direct writes as job JOB until STOPFILE.
writers() {
	local i
	for i in $(seq 1 "$4"); do
		env SLURM_JOB_ID="$1" bash -c 'while [ ! -e "$3" ]; do
			dd if=/dev/zero of="$1/w$2" bs='$K' count=5 status=none || exit 1; sleep 0.1; done' \
			_ "$2" "$1-$i" "$3" &
		LOADS+=($!)
	done
}

writers 102 "$F" "$WORK/stop102" 2
# One failed op (EIO at open), for the dashboard's error panels.
touch "$F/fail-eio-1"
env SLURM_JOB_ID=102 cat "$F/fail-eio-1" 2>/dev/null && les_fail "fail-eio-1 did not fail"
writers 101 "$F" "$WORK/stop1" 3
wait_scrapes $BASELINE_S
P2=$(scrapes) # the first scrape of phase 2 is taken after it started
touch "$WORK/stop1"
writers 101 "$S" "$WORK/stop2" 6
env SLURM_JOB_ID=301 dd if=/dev/zero of="$H/held" bs=$K count=1 status=none &
HELD=$!
LOADS+=($HELD)
# Two bursts a poll apart: records of each reach the output and Kafka.
dd if=/dev/zero of="$D/big" bs=512 count=3000 status=none || les_fail "burst dd failed"
sleep 1.2
dd if=/dev/zero of="$D/big2" bs=512 count=3000 status=none || les_fail "burst dd failed"
BURST_END=$(scrapes)
les_pass "phase 2 from scrape $P2: job 101 slow, job 301's write held, node2's burst"
wait_scrapes $((P2 + SLOW_S))
touch "$WORK/stop2"
wait "$HELD" || les_fail "the held write failed"
HELD_END=$(scrapes)
# The last scrape surely before the answer (the gauge is read once a second);
# a machine too loaded to scrape every second or so would leave too few.
STUCK_AT=$((HELD_END - 2))
les_ge "the held write spans the scrapes the stuck alert needs (5 m + 5 m + 2)" \
	$((P2 + 12)) $STUCK_AT
wait_scrapes $((HELD_END + 3)) # the gauge back at 0 in the last ones
END=$(($(scrapes) - 1))
kill "$SCRAPER" 2>/dev/null
wait "$SCRAPER" 2>/dev/null
SCRAPER=
stop_all
LES_PID=$NODE1
les_stop
les_eq "node1 exit status" 0 "$LES_STATUS"
LES_PID=$NODE2
les_stop
les_eq "node2 exit status 1: records and Kafka lines were lost" 1 "$LES_STATUS"
les_pass "$((END + 1)) scrapes; the held write answered before scrape $HELD_END"

# Every family the rules name (not in comments) is declared in a scrape;
# recorded series, with a colon, are the rules' own.
cat "$WORK/scrapes/node1/$END" "$WORK/scrapes/node2/$END" | grep -o '^# TYPE [a-z_]*' |
	awk '{ print $3 }' | sort -u >"$WORK/served"
sed '/^[[:space:]]*#/d' "$ALERTS" | grep -oE '[a-z_:]*lustre_[a-z_]*[a-z]' | grep -v : |
	sed -E 's/_(bucket|sum|count)$//' | sort -u >"$WORK/rules-used"
les_eq "every family the rules name is served" "" "$(comm -23 "$WORK/rules-used" "$WORK/served" | paste -sd' ')"

# --- the scrapes as a promtool unit test ----------------------------------------

# Every family the rules and the dashboard name, each series' value at every
# scrape ("_": not served in that scrape), with the instance and job labels
# of a scrape.
cat >"$WORK/series.py" <<'PYEOF'
import os, re, sys
scrapes, n, named = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
names = set()
for f in named:
    names |= set(re.findall(r"lustre_[a-z_]+", open(f).read()))
line_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
series = {}
for node in sorted(os.listdir(scrapes)):
    for k in range(n):
        for line in open(os.path.join(scrapes, node, str(k))):
            m = line_re.match(line.rstrip("\n"))
            if not m or m.group(1) not in names:
                continue
            labels = m.group(3) or ""
            extra = 'instance="%s:9108",job="lustre-ebpf-stream"' % node
            key = "%s{%s}" % (m.group(1), labels + "," + extra if labels else extra)
            series.setdefault(key, ["_"] * n)[k] = m.group(4)
for key in sorted(series):
    print("      - series: '%s'" % key.replace("'", "''"))
    print("        values: '%s'" % " ".join(series[key]))
PYEOF
$PY "$WORK/series.py" "$WORK/scrapes" $((END + 1)) "$ALERTS" "$DASH" >"$WORK/series.yml" ||
	les_fail "series conversion failed"
les_ge "input series from the scrapes" 100 "$(grep -c '^      - series:' "$WORK/series.yml")"
for fam in lustre_ebpf_stream_client_rpc_wait_duration_seconds_bucket \
	lustre_ebpf_stream_client_inflight_requests lustre_ebpf_stream_records_dropped_total \
	lustre_ebpf_stream_kafka_lines_total; do
	grep -q "series: '$fam{" "$WORK/series.yml" || les_fail "no $fam series in the scrapes"
done
les_pass "the scrapes hold every family the test needs"

# expect_firing ALERT TIME LABELS...: exactly these alerts firing at TIME (minutes).
expect_firing() {
	local name=$1 t=$2 l
	shift 2
	printf '      - expr: ALERTS{alertname="%s",alertstate="firing"}\n        eval_time: %sm\n        exp_samples:\n' "$name" "$t"
	for l in "$@"; do
		printf "          - labels: 'ALERTS{alertname=\"%s\",alertstate=\"firing\",%s}'\n            value: 1\n" "$name" "$l"
	done
}
# expect_none ALERT TIME: no alert of that name, pending or firing.
expect_none() {
	printf '      - alertname: %s\n        eval_time: %sm\n        exp_alerts: []\n' "$1" "$2"
}
J101='fs="les-testfs",severity="warning",slurm_job_id="101"'
STUCK_H="fs=\"les-testfs\",instance=\"node1:9108\",mount=\"$H\",severity=\"critical\""
N2='instance="node2:9108",severity="warning"'
{
	echo "rule_files: ['$ALERTS']"
	echo "evaluation_interval: 1m"
	echo "tests:"
	echo "  - interval: 1m"
	echo "    input_series:"
	cat "$WORK/series.yml"
	echo "    alert_rule_test:"
	# Before phase 2: job 101 has its baseline, nothing is stuck or lost.
	for a in LustreJobRequestWaitP99High LustreClientRequestsStuck \
		LustreEbpfStreamRecordsDropped LustreEbpfStreamKafkaLinesLost; do
		expect_none $a $((P2 - 1))
	done
	# The held write answered; the bursts out of the 10 m window.
	expect_none LustreClientRequestsStuck $END
	expect_none LustreEbpfStreamRecordsDropped $((BURST_END + 11))
	expect_none LustreEbpfStreamKafkaLinesLost $((BURST_END + 11))
	echo "    promql_expr_test:"
	# Job 101 slow since P2 (+1: its first slow wait ends in the next
	# scrape), 5 m window, then 10 m of "for"; job 102 never.
	expect_firing LustreJobRequestWaitP99High $((P2 + 17)) "$J101"
	expect_firing LustreJobRequestWaitP99High $((P2 + SLOW_S - 1)) "$J101"
	# The held mount only: the slow mount has writes in flight all along, completing.
	expect_firing LustreClientRequestsStuck $STUCK_AT "$STUCK_H"
	# node2 only, the stages that lost records.
	expect_firing LustreEbpfStreamRecordsDropped $((P2 + 5)) \
		"$N2,stage=\"kernel_ringbuf\"" "$N2,stage=\"output\""
	expect_firing LustreEbpfStreamKafkaLinesLost $((P2 + 5)) "$N2,outcome=\"dropped\""
} >"$WORK/alerts.test.yml"
les_true "promtool test rules: each alert fires where it must, nowhere else" \
	promtool test rules "$WORK/alerts.test.yml"

# --- the dashboard ------------------------------------------------------------------

les_true "dashboard: valid JSON with panels and a host and a job variable" jq -e \
	'(.panels | length > 30) and ([.templating.list[].name] | index("host") and index("job"))' "$DASH"
# What Grafana needs to lay it out and query: unique ids, panels inside the
# 24-column grid and not overlapping, every panel's targets with their own
# refId, an expr and the data source variable; every variable a query uses defined.
cat >"$WORK/dash.py" <<'PYEOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
ids = [p["id"] for p in d["panels"]]
assert len(ids) == len(set(ids)), "duplicate panel ids"
cells = {}
for p in d["panels"]:
    g = p["gridPos"]
    assert g["x"] >= 0 and g["x"] + g["w"] <= 24, "%s: outside the grid" % p["title"]
    for x in range(g["x"], g["x"] + g["w"]):
        for y in range(g["y"], g["y"] + g["h"]):
            assert (x, y) not in cells, "%s overlaps %s" % (p["title"], cells[(x, y)])
            cells[(x, y)] = p["title"]
    if p["type"] == "row":
        continue
    t = p["targets"]
    assert t, "%s: no query" % p["title"]
    assert len({x["refId"] for x in t}) == len(t), "%s: refIds" % p["title"]
    for x in t:
        assert x["expr"] and x["datasource"]["uid"] == "${datasource}", "%s: expr, datasource" % p["title"]
defined = {v["name"] for v in d["templating"]["list"]} | {"__rate_interval"}
for p in d["panels"]:
    for x in p.get("targets", []):
        for v in re.findall(r"\$(\w+)", x["expr"]):
            assert v in defined, "%s: $%s undefined" % (p["title"], v)
print("ok")
PYEOF
les_true "dashboard: ids, grid, targets, data source, variables" $PY "$WORK/dash.py" "$DASH"
les_true "dashboard: the output of contrib/grafana/make-dashboard.py" \
	cmp "$DASH" <($PY "$LES_SRC/contrib/grafana/make-dashboard.py")
jq -r '.. | objects | select(has("expr")) | .expr' "$DASH" >"$WORK/exprs"
# Every query is PromQL: recording rules with the variables filled in.
les_dashboard_rules "$WORK/exprs" >"$WORK/dashboard-rules.yml"
les_true "dashboard: every query parses (promtool check rules)" promtool check rules "$WORK/dashboard-rules.yml"
# Every family a query names is declared in a scrape of node1 or node2 (the
# Kafka families only where Kafka is configured).
grep -o 'lustre_[a-z_]*' "$WORK/exprs" | sed -E 's/_(bucket|sum|count)$//' | sort -u >"$WORK/used"
les_ge "dashboard: families named" 25 "$(wc -l <"$WORK/used")"
les_eq "dashboard: every family it names is served" "" "$(comm -23 "$WORK/used" "$WORK/served" | paste -sd' ')"

# Every query returns series on the scrapes, with every variable at All, in
# the middle of phase 2: clamp_max(count(QUERY), 1) is 1. Not run: queries
# of Lustre's PtlRPC requests and request events, which a FUSE mount has no
# samples of (they parse, above, and their families are served).
NOT_ON_FUSE='lustre_client_ptlrpc_requests_|_ptlrpc_request_duration_seconds|_rpc_errors_total'
{
	echo "rule_files: []"
	echo "evaluation_interval: 1m"
	echo "tests:"
	echo "  - interval: 1m"
	echo "    input_series:"
	cat "$WORK/series.yml"
	echo "    promql_expr_test:"
	n=0
	while IFS= read -r e; do
		grep -Eq "$NOT_ON_FUSE" <<<"$e" && continue
		n=$((n + 1))
		e=${e//\$__rate_interval/5m}
		e=${e//\$topn/10}
		e=$(sed 's/\$[a-z_]*/.*/g' <<<"$e")
		printf '      - expr: %s\n        eval_time: %dm\n        exp_samples:\n          - labels: "{}"\n            value: 1\n' \
			"$(jq -Rn --arg e "clamp_max(count($e), 1)" '$e')" $((P2 + 12))
	done <"$WORK/exprs"
} >"$WORK/dashboard.test.yml"
les_ge "dashboard: queries run on the scrapes" 40 "$(grep -c '^      - expr:' "$WORK/dashboard.test.yml")"
les_true "dashboard: every query returns series on the scrapes (promtool test rules)" \
	promtool test rules "$WORK/dashboard.test.yml"

les_done
