#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# From three nodes' streams to cluster-wide answers (docs/pipeline.md):
# three instances with distinct --hostname, each on its own les-testfs
# mount, produce their per-op records to one Kafka topic (a real broker,
# three partitions) while writing their own --aggregate 2s windows to their
# files; three Slurm jobs and two users are spread across the nodes. Then
# the Flink job of contrib/flink runs in local mode over the topic and its
# per-window results must equal the sum of the three nodes' window lines:
# counts, bytes, errors, latency sums, min and max exactly; p50/p99 equal to
# the percentile of the nodes' summed histograms, and within the histogram's
# documented error (never below, at most 12.5 % above) of the exact
# nearest-rank percentile of the raw records.
#
# The same job over the nodes' window lines alone (--input windows) must give
# the same rows as over the per-op records.
#
# Then two runs with documented outcomes:
#   * the broker stopped in the middle of a workload and restarted: every
#     line is delivered once, and Flink's windows still equal the nodes';
#   * records arriving late (produced with kcat after the others): one
#     within --lateness is counted in its window, one beyond it is dropped;
#     with them, PtlRPC request records carrying a target, for the per-target
#     rows (FUSE requests have no target).
#
# The Flink classpath comes from Maven Central through contrib/flink/run-local
# (cached in /var/cache/lustre-ebpf-stream/flink by the pom's checksum); a
# missing tool or a failed download fails the test.
#
# Environment (set by CTest): LES_BUILD (build tree), LES_SRC (source tree).

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kafka_lib.sh"
les_kafka_init 71_flink setpriv javac /usr/bin/python3

RUN_LOCAL=$LES_SRC/contrib/flink/run-local
WINDOW=2s
LATENESS=5s
GROUP_BY=job_id,username,op,access_intent

# --- the Flink job's classpath and classes (downloaded on the first run) ----

t0=$SECONDS
nice -n 19 "$RUN_LOCAL" --fetch >"$WORK/fetch.log" 2>&1 ||
	les_fail "contrib/flink/run-local --fetch: $(tail -n 20 "$WORK/fetch.log")"
les_pass "Flink classpath and job compiled ($((SECONDS - t0)) s)"

les_kafka_start
B=$KAFKA_ADDR
les_pass "test broker at $B"

# create_topic NAME PARTITIONS: with librdkafka's admin API (the broker's
# default is one partition; several make the watermark a minimum over them).
create_topic() {
	/usr/bin/python3 - "$B" "$1" "$2" <<'EOF' || les_fail "cannot create topic $1"
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
for f in a.create_topics([NewTopic(sys.argv[2], int(sys.argv[3]), 1)]).values():
    f.result(30)
EOF
}

# flink TOPIC OUT [OPTIONS...]: the job in local mode over TOPIC from its
# beginning to the end it has when the job starts; results in OUT/ (files)
# and on topic out-$(basename OUT), both in OUT.jsonl and OUT.kafka.jsonl.
flink() {
	local topic=$1 out=$2 t=$SECONDS
	local out_topic=out-${2##*/}

	shift 2
	nice -n 19 timeout 240 "$RUN_LOCAL" --brokers "$B" --topic "$topic" --from earliest \
		--bounded --group-id "e2e-$topic" --window "$WINDOW" --lateness "$LATENESS" \
		--checkpoint 1s --checkpoint-dir "file://$out.ckpt" --parallelism 2 \
		--out-topic "$out_topic" --out-dir "$out" "$@" \
		>"$out.log" 2>&1 ||
		les_fail "Flink job over $topic failed: $(grep -v '^[[:space:]]*at ' "$out.log" | tail -n 20)"
	FLINK_SECONDS=$((SECONDS - t))
	find "$out" -type f -name 'part-*' ! -name '.*' -exec cat {} + >"$out.jsonl" ||
		les_fail "no result files under $out"
	les_kafka_consume "$B" "$out_topic" '%s\n' >"$out.kafka.jsonl"
}

# nodes PREFIX TOPIC: three instances, node1..3 on mounts m1..m3.
nodes() {
	local i

	for i in 1 2 3; do
		les_start "$WORK/$1$i.jsonl" --mount "$WORK/m$i" --hostname "node$i" \
			--kafka-brokers "$B" --kafka-topic "$2" --stats-interval 0 \
			--aggregate "$WINDOW" --group-by "$GROUP_BY" --records
		eval "PID_$1$i=$LES_PID"
	done
}

# stop_nodes PREFIX: stop them; each must exit 0 with every line delivered
# and no record counted late into another window.
stop_nodes() {
	local i f lines

	for i in 1 2 3; do
		LES_PID=$(eval echo "\$PID_$1$i")
		les_stop
		les_eq "$1$i exits 0" 0 "$LES_STATUS"
		f=$WORK/$1$i.jsonl
		lines=$(wc -l <"$f")
		les_eq "$1$i: every line but the final stats delivered to Kafka" \
			"$((lines - 1)) 0 0" \
			"$(tail -n 1 "$f" | jq -r '"\(.kafka.delivered) \(.kafka.failed) \(.kafka.dropped_kafka)"')"
		les_eq "$1$i: no record late for its window, no drops" "0 0 0" \
			"$(tail -n 1 "$f" | jq -r '"\(.aggregate.late_records) \(.dropped_kernel) \(.dropped_userspace)"')"
	done
}

# as USER JOB COMMAND...: run COMMAND as USER in Slurm job JOB.
as() {
	local user=$1 job=$2

	shift 2
	env SLURM_JOB_ID="$job" setpriv --reuid="$user" --regid=nogroup --clear-groups "$@"
}

# workload ROUNDS: jobs across nodes; one round takes about 0.3 s.
#   job 501 (nobody): writes on node1 and node2, reads on node3 (EIO on
#                     every 5th read there)
#   job 502 (daemon): metadata on node1 and node3
#   job 503 (nobody): metadata and small writes on node2 and node3
workload() {
	local r

	for r in $(seq 1 "$1"); do
		as nobody 501 dd if=/dev/zero of="$WORK/m1/w$r" bs=4k count=8 status=none
		as nobody 501 dd if=/dev/zero of="$WORK/m2/w$r" bs=8k count=3 status=none
		as nobody 501 dd if="$WORK/m3/data" of=/dev/null bs=4k count=4 status=none 2>/dev/null
		as daemon 502 mkdir -p "$WORK/m1/d$r/x"
		as daemon 502 ls -lR "$WORK/m1" >/dev/null
		as daemon 502 stat "$WORK/m3/data" >/dev/null
		as daemon 502 ls -l "$WORK/m3" >/dev/null
		as nobody 503 touch "$WORK/m2/t$r" "$WORK/m3/t$r"
		as nobody 503 sh -c "echo $r >>'$WORK/m2/log'; echo $r >>'$WORK/m3/log'"
		as nobody 503 rm -f "$WORK/m2/t$r"
		sleep 0.2
	done
}

les_testfs "$WORK/m1"
les_testfs "$WORK/m2"
les_testfs "$WORK/m3" --direct-io --inject=read:EIO:5
chmod 1777 "$WORK/m1" "$WORK/m2" "$WORK/m3"
as nobody 501 dd if=/dev/urandom of="$WORK/m3/data" bs=4k count=64 status=none ||
	les_fail "cannot write m3/data"

# compare NODES_PREFIX FLINK_OUT: the Flink results against the nodes'
# window lines and records (python3 below; prints one line per check).
compare() {
	/usr/bin/python3 - "$2" "$WORK/${1}1.jsonl" "$WORK/${1}2.jsonl" "$WORK/${1}3.jsonl" \
		>"$WORK/compare.$1" 2>&1 <<'EOF'
import json, sys
from collections import defaultdict

SUB_BITS, SUB, LOW, HIGH = 3, 8, 7, 36
NB = 2 + (HIGH - LOW) * SUB

def index(ns):
    if ns < (1 << LOW):
        return 0
    if ns >= (1 << HIGH):
        return NB - 1
    octave = ns.bit_length() - 1
    return 1 + (octave - LOW) * SUB + ((ns >> (octave - SUB_BITS)) & (SUB - 1))

def lower(i):
    if i == 0:
        return 0
    if i >= NB - 1:
        return 1 << HIGH
    octave = LOW + (i - 1) // SUB
    return (1 << octave) + (((i - 1) % SUB) << (octave - SUB_BITS))

class Hist:
    def __init__(self):
        self.b, self.n, self.lo, self.hi = defaultdict(int), 0, None, 0
    def add_line(self, w):  # a node's window line
        for lo, up, c in w["latency_hist"]:
            i = index(lo)
            assert lower(i) == lo, ("bucket bounds differ", lo)
            self.b[i] += c
        self.n += w["count"]
        self.lo = w["min_ns"] if self.lo is None else min(self.lo, w["min_ns"])
        self.hi = max(self.hi, w["max_ns"])
    def pct(self, permille):  # the tool's les_hist_percentile
        rank = max(1, (self.n * permille + 999) // 1000)
        seen = 0
        for i in range(NB - 1):
            seen += self.b[i]
            if seen >= rank:
                break
        else:
            i = NB - 1
        v = self.hi if i == NB - 1 else lower(i + 1) - 1
        return max(self.lo, min(self.hi, v))

def exact(vals, permille):  # nearest rank over the raw latencies
    vals = sorted(vals)
    return vals[max(1, (len(vals) * permille + 999) // 1000) - 1]

out, nodes = sys.argv[1], sys.argv[2:]
fails = []
def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else ": " + detail))
    if not ok:
        fails.append(what)

flink = [json.loads(l) for l in open(out + ".jsonl")]
kafka = [json.loads(l) for l in open(out + ".kafka.jsonl")]
canon = lambda rows: sorted(json.dumps(r, sort_keys=True) for r in rows)
check("the result topic holds the same rows as the files (%d)" % len(flink),
      canon(flink) == canon(kafka), "%d vs %d rows" % (len(flink), len(kafka)))

# The nodes' windows and raw records, summed per Flink group.
acc = lambda: {"count": 0, "bytes": 0, "errors": 0, "sum": 0, "hist": Hist(), "lat": [], "hosts": set()}
job_op, job, target = defaultdict(acc), defaultdict(acc), defaultdict(acc)
job_meta = defaultdict(lambda: [0, 0, 0, 0])  # metadata ops, data ops, bytes read, written
hosts, n_records = set(), 0
for path in nodes:
    for line in open(path):
        r = json.loads(line)
        if r["type"] == "window" and r["record_type"] == "access":
            k = (r["window_start"], r["job_id"], r["username"])
            for a in (job_op[k + (r["op"], r["access_intent"])], job[k]):
                a["count"] += r["count"]
                a["bytes"] += r["bytes"]
                a["errors"] += sum(r["errors"].values())
                a["sum"] += r["sum_latency_ns"]
                a["hist"].add_line(r)
                a["hosts"].add(r["host"])
            m = job_meta[k]
            if r["access_intent"] in ("namespace_read", "namespace_mutation"):
                m[0] += r["count"]
            if r["op"] in ("read", "write"):
                m[1] += r["count"]
                m[2 if r["op"] == "read" else 3] += r["bytes"]
        elif r["type"] == "window" and r["record_type"] == "rpc":
            a = target[(r["window_start"], r["job_id"])]
            a["count"] += r["count"]
            a["sum"] += r["sum_latency_ns"]
            a["errors"] += sum(r["errors"].values())
        elif r["type"] == "access":
            n_records += 1
            hosts.add(r["host"])
            # --aggregate windows are epoch-aligned 2 s: the record's window.
            sec = int(r["ts"][17:19]) // 2 * 2
            ws = r["ts"][:17] + "%02d.000000000Z" % sec
            k = (ws, r["job_id"], r["username"])
            job_op[k + (r["op"], r["access_intent"])]["lat"].append(r["latency_ns"])
            job[k]["lat"].append(r["latency_ns"])

check("three hosts in the records", hosts == {"node1", "node2", "node3"}, str(hosts))

def compare_kind(kind, mine, keyf, fields):
    rows = [r for r in flink if r["kind"] == kind]
    got = {keyf(r): r for r in rows}
    check("%s: one row per group (%d rows)" % (kind, len(rows)), len(got) == len(rows))
    check("%s: the same groups as the nodes' windows (%d)" % (kind, len(mine)),
          set(got) == set(mine),
          "only Flink: %s; only nodes: %s" % (sorted(map(str, set(got) - set(mine)))[:3],
                                               sorted(map(str, set(mine) - set(got)))[:3]))
    bad = []
    for k, a in mine.items():
        r = got.get(k)
        if r is None:
            continue
        for name, want in fields(a, k):
            if r[name] != want:
                bad.append("%s %s: Flink %s, nodes %s" % (k, name, r[name], want))
    check("%s: %s equal the nodes' sums in every group" % (kind, ", ".join(n for n, _ in fields(next(iter(mine.values())), next(iter(mine))))),
          not bad, "; ".join(bad[:4]))
    return got

got = compare_kind("job_op", job_op,
    lambda r: (r["window_start"], r["job_id"], r["username"], r["op"], r["access_intent"]),
    lambda a, k: [("count", a["count"]), ("bytes", a["bytes"]), ("errors", a["errors"]),
                  ("sum_latency_ns", a["sum"]), ("min_ns", a["hist"].lo), ("max_ns", a["hist"].hi),
                  ("p50_ns", a["hist"].pct(500)), ("p99_ns", a["hist"].pct(990))])
gotj = compare_kind("job", job,
    lambda r: (r["window_start"], r["job_id"], r["username"]),
    lambda a, k: [("ops", a["count"]), ("metadata_ops", job_meta[k][0]), ("data_ops", job_meta[k][1]),
                  ("bytes_read", job_meta[k][2]), ("bytes_written", job_meta[k][3]),
                  ("errors", a["errors"]), ("hosts", len(a["hosts"])),
                  ("p50_ns", a["hist"].pct(500)), ("p99_ns", a["hist"].pct(990))])
tgt = defaultdict(acc)
for r in flink:
    if r["kind"] == "target":
        t = tgt[(r["window_start"], r["job_id"])]
        t["count"] += r["requests"]; t["sum"] += r["wait_ns"]; t["errors"] += r["errors"]
bad = [k for k in set(tgt) | set(target)
       if (tgt[k]["count"], tgt[k]["sum"], tgt[k]["errors"]) != (target[k]["count"], target[k]["sum"], target[k]["errors"])]
check("target: requests, wait sums and errors per window and job equal the nodes' rpc windows (%d groups)" % len(target),
      not bad and len(target) > 0, str(bad[:3]))
check("target: FUSE requests carry no target (null)", all(r["target"] is None for r in flink if r["kind"] == "target"))

# Quantiles against the raw records: the histogram's documented error.
bad = []
for table, rows in ((job_op, got), (job, gotj)):
    for k, a in table.items():
        if k not in rows or not a["lat"]:
            continue
        for name, pm in (("p50_ns", 500), ("p99_ns", 990)):
            true, v = exact(a["lat"], pm), rows[k][name]
            if not (true <= v <= max(true * 1.125, true + 128)):
                bad.append("%s %s: %d, exact %d" % (k, name, v, true))
check("p50/p99: never below the exact nearest rank, at most 12.5 % above it", not bad, "; ".join(bad[:4]))
check("Flink's ops == the nodes' access records (%d)" % n_records,
      sum(r["ops"] for r in flink if r["kind"] == "job") == n_records)
spread = {r["job_id"] for r in flink if r["kind"] == "job" and r["hosts"] >= 2}
check("jobs seen on two or more nodes in one window: %s" % sorted(spread), {"501", "502", "503"} <= spread)
check("windows: %d" % len({r["window_start"] for r in flink}), len({r["window_start"] for r in flink}) >= 2)
sys.exit(1 if fails else 0)
EOF
	local rc=$?
	sed "s/^/    /" "$WORK/compare.$1"
	[ $rc -eq 0 ] || les_fail "$1: Flink's windows differ from the nodes' (above)"
	les_pass "$1: Flink's cluster-wide windows == the sum of the three nodes' windows ($(grep -c '^ok' "$WORK/compare.$1") checks)"
}

# --- run 1: three nodes, one topic, Flink over it ---------------------------

create_topic les 3
nodes a les
les_pass "three nodes attached"
t0=$SECONDS
workload 12
sleep 0.5
stop_nodes a
les_pass "workload ran $((SECONDS - t0)) s"

flink les "$WORK/f1"
les_pass "Flink job over topic les: $FLINK_SECONDS s in local mode"
compare a "$WORK/f1"

# The same answers from the nodes' window lines alone (--input windows):
# one line per group and window per node instead of one per operation.
flink les "$WORK/f1w" --input windows
les_pass "Flink job over the nodes' window lines: $FLINK_SECONDS s"
jq -cS 'select(.kind == "job" or .kind == "job_op")' "$WORK/f1.jsonl" | sort >"$WORK/f1.rows"
jq -cS . "$WORK/f1w.jsonl" | sort >"$WORK/f1w.rows"
les_ge "window-line results: rows" 10 "$(wc -l <"$WORK/f1w.rows")"
les_true "window-line results == per-op results, row for row (counts, bytes, errors, min, max, p50, p99, hosts)" \
	diff "$WORK/f1.rows" "$WORK/f1w.rows"
jq -cS . "$WORK/f1w.kafka.jsonl" | sort >"$WORK/f1w.kafka.rows"
les_true "window-line results: the Kafka topic holds the same rows" \
	diff "$WORK/f1w.rows" "$WORK/f1w.kafka.rows"
n_rec=$(cat "$WORK"/a[123].jsonl | jq -c 'select(.type == "access")' | wc -l)
n_win=$(cat "$WORK"/a[123].jsonl | jq -c 'select(.type == "window" and .record_type == "access")' | wc -l)
les_pass "lines read: $n_rec access records, or $n_win access window lines"

# --- run 2: the broker restarted in the middle -------------------------------
# The nodes' producers hold their lines through the outage (idempotent,
# docs/kafka.md) and deliver them once when the broker is back; the records
# of the outage reach Kafka late, but every one before Flink reads the
# topic, so its windows still equal the nodes'.

create_topic les2 3
nodes b les2
workload 4
les_kafka_stop
les_pass "broker stopped during the workload"
workload 4
les_kafka_start
les_pass "broker started again at $KAFKA_ADDR"
workload 4
sleep 0.5
stop_nodes b
flink les2 "$WORK/f2" --lateness 60s
les_pass "Flink job over topic les2: $FLINK_SECONDS s"
compare b "$WORK/f2"

# --- run 3: late records, and request records with a target ---------------------
# One partition, so that the order of production is the order Flink sees,
# and watermarks after every record (--watermark-emit on-event), so that
# lateness does not depend on when a periodic watermark happened to be
# emitted. Node a1's records, then two records of their own jobs: one 1 s
# behind the largest ts (inside --lateness 5s: counted in its window), one
# 20 s behind (beyond it: its window has fired, the record is dropped and
# no row has it).

create_topic les3 1
jq -c 'select(.type == "access")' "$WORK/a1.jsonl" >"$WORK/late.in"
max_ts=$(jq -r .ts "$WORK/late.in" | sort | tail -n 1)
shift_ts() { # TS SECONDS: TS moved back by SECONDS, same format
	local s=${1%%.*} frac=${1#*.}
	echo "$(date -u -d "@$(($(date -u -d "${s}Z" +%s) - $2))" +%Y-%m-%dT%H:%M:%S).$frac"
}
ts_ok=$(shift_ts "$max_ts" 1)
ts_late=$(shift_ts "$max_ts" 20)
for pair in "$ts_ok:ok" "$ts_late:dropped"; do
	jq -c --arg ts "${pair%:*}" --arg why "${pair##*:}" \
		'select(.op == "write") | .ts = $ts | .job_id = "late-" + $why' "$WORK/late.in" |
		head -n 1 >>"$WORK/late.in"
done
# And three request records as a Lustre client writes them (PtlRPC, with
# their target and resends; FUSE requests have neither): the target rows.
rpc=$(jq -c 'select(.type == "rpc")' "$WORK/a1.jsonl" | head -n 1)
[ -n "$rpc" ] || les_fail "node1 wrote no rpc record"
for t in "scratch-OST0001 1000000 2" "scratch-OST0001 3000000 0" "scratch-MDT0000 500000 0"; do
	set -- $t
	jq -c --arg ts "$max_ts" --arg tg "$1" --argjson lat "$2" --argjson rs "$3" \
		'.ts = $ts | .proto = "ptlrpc" | .fs = "scratch" | .target = $tg
		 | .latency_ns = $lat | .resends = $rs | .job_id = "ptl"' <<<"$rpc" >>"$WORK/late.in"
done
kcat -b "$B" -t les3 -P -l "$WORK/late.in" || les_fail "kcat -P failed"
flink les3 "$WORK/f3" --parallelism 1 --watermark-emit on-event
les_eq "late records: the one within --lateness is counted (job late-ok)" 1 \
	"$(jq -s '[.[] | select(.kind == "job" and .job_id == "late-ok") | .ops] | add' "$WORK/f3.jsonl")"
les_eq "late records: the one beyond --lateness is dropped (no row of job late-dropped)" 0 \
	"$(jq -s '[.[] | select(.job_id == "late-dropped")] | length' "$WORK/f3.jsonl")"
les_eq "target rows: requests, wait and resends per target and job" \
	"scratch-MDT0000 1 500000 0,scratch-OST0001 2 4000000 2," \
	"$(jq -r 'select(.kind == "target" and .job_id == "ptl") | "\(.target) \(.requests) \(.wait_ns) \(.resends)"' \
		"$WORK/f3.jsonl" | sort | tr '\n' ',')"
les_eq "late records: every other record of node1 is counted" \
	"$(jq -s '[.[] | select(.type == "access")] | length' "$WORK/a1.jsonl")" \
	"$(jq -s '[.[] | select(.kind == "job" and (.job_id // "" | startswith("late-") | not)) | .ops] | add' "$WORK/f3.jsonl")"

les_done
