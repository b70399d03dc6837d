#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# --prometheus on the real kernel and the test filesystem: a workload of
# known counts (writes by a process whose name needs escaping, an injected
# EIO), then
#   - curl the endpoint: promtool check metrics is clean, the write counter
#     equals the number of write ops, bytes and errors match;
#   - a second instance with --uid-labels=false --histogram-process-labels
#     --series-ttl 3s: the labels follow the flags, the series expire;
#   - a real Prometheus server scraping the first instance every second
#     answers sum(lustre_ebpf_stream_client_access_operations_total{op="write"})
#     (a FUSE mount: our families; the exporter's are Lustre only).

. "$(dirname "$0")/lib.sh"
les_init 41_prometheus curl promtool prometheus setpriv python3

M=$WORK/mnt
NW=7
K=4096
les_testfs "$M" --direct-io
chmod 1777 "$M"
# Every write on this one waits 4 s in the daemon: a request held in flight.
S=$WORK/slow
les_testfs "$S" --direct-io --latency-ms=4000 --latency-ops=write
chmod 1777 "$S"
NOBODY=$(id -u nobody)
PROM_PID=

stop_prometheus() {
	[ -n "$PROM_PID" ] && kill "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null
	PROM_PID=
}
trap 'stop_prometheus; _les_cleanup' EXIT

port_of() { # OUT: the port the instance writing OUT serves metrics on
	sed -n 's/.*metrics on port \([0-9]*\) at .*/\1/p' "$1.err"
}

free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

les_start "$WORK/p1.jsonl" --mount "$M" --mount "$S" --uid "$NOBODY" --stats-interval 0 \
	--prometheus 127.0.0.1:0
P1=$LES_PID
PORT1=$(port_of "$WORK/p1.jsonl")
[ -n "$PORT1" ] || les_fail "no 'metrics on port' line: $(cat "$WORK/p1.jsonl.err")"
les_start "$WORK/p2.jsonl" --mount "$M" --uid "$NOBODY" --stats-interval 0 \
	--web.listen-address 127.0.0.1:0 --web.telemetry-path /m --uid-labels=false \
	--histogram-process-labels --series-ttl 3s
P2=$LES_PID
PORT2=$(port_of "$WORK/p2.jsonl")
les_pass "two instances serve metrics on ports $PORT1 and $PORT2"

# The workload: NW writes by a program named w"x\y, one open that fails.
mkdir -p "$WORK/bin"
cp "$(command -v dd)" "$WORK/bin/w\"x\\y"
cat >"$WORK/workload.sh" <<EOF
set -e
cd "$M"
"$WORK/bin/w\"x\\\\y" if=/dev/zero of=data bs=$K count=$NW status=none
touch fail-eio-1
if cat fail-eio-1 2>/dev/null; then exit 1; fi
EOF
env SLURM_JOB_ID=201 setpriv --reuid=nobody --regid=nogroup --clear-groups \
	bash "$WORK/workload.sh" || les_fail "workload failed"

scrape() { # PORT PATH OUT
	curl -sf "http://127.0.0.1:$1$2" -o "$3" || les_fail "curl 127.0.0.1:$1$2 failed"
}
# Instance 2 at once, well inside its TTL; instance 1 once its
# self-metrics (refreshed once a second) include the workload.
sleep 0.2
scrape "$PORT2" /m "$WORK/m2.txt"
sleep 1.2
# sample FILE FAMILY LABEL-REGEX: the sum of the family's samples whose labels match.
# The regex goes through the environment: awk -v would eat its backslashes.
sample() {
	FAM=$2 RE=$3 awk '
		$1 !~ /^#/ { name = $1; sub(/\{.*/, "", name) }
		$1 !~ /^#/ && name == ENVIRON["FAM"] && $0 ~ ENVIRON["RE"] { sum += $NF; n++ }
		END { print n ? sum : "none" }' "$1"
}

scrape "$PORT1" /metrics "$WORK/m1.txt"
les_true "promtool check metrics: clean" sh -c "promtool check metrics <'$WORK/m1.txt' 2>&1 | tee '$WORK/promtool.out'; [ ! -s '$WORK/promtool.out' ]"
les_eq "access_operations_total{op=\"write\"} == $NW" $NW \
	"$(sample "$WORK/m1.txt" lustre_ebpf_stream_client_access_operations_total 'op="write"')"
les_eq "the write series carries the job and the escaped process" $NW \
	"$(sample "$WORK/m1.txt" lustre_ebpf_stream_client_access_operations_total 'op="write".*process="w\\"x\\\\y".*slurm_job_id="201"')"
les_eq "data_bytes_total{op=\"write\"}" $((NW * K)) \
	"$(sample "$WORK/m1.txt" lustre_ebpf_stream_client_data_bytes_total 'op="write"')"
les_eq "operation_errors_total{op=\"open\",errno_class=\"io\"}" 1 \
	"$(sample "$WORK/m1.txt" lustre_ebpf_stream_client_operation_errors_total 'op="open".*errno_class="io"')"
les_eq "write duration histogram: _count == $NW" $NW \
	"$(sample "$WORK/m1.txt" lustre_ebpf_stream_client_access_duration_seconds_count 'op="write"')"
les_eq "write duration histogram: +Inf bucket == $NW" $NW \
	"$(sample "$WORK/m1.txt" lustre_ebpf_stream_client_access_duration_seconds_bucket 'op="write".*le="\+Inf"')"
les_eq "histograms omit process by default" none \
	"$(sample "$WORK/m1.txt" lustre_ebpf_stream_client_access_duration_seconds_count 'process=')"
les_eq "FUSE write requests: rpc_wait_operations_total" $NW \
	"$(sample "$WORK/m1.txt" lustre_ebpf_stream_client_rpc_wait_operations_total 'op="write"')"
les_eq "fs_type label on the series" $NW \
	"$(sample "$WORK/m1.txt" lustre_ebpf_stream_client_access_operations_total 'fs_type="fuse[^"]*".*op="write"')"
les_true "self-metrics are served" grep -q '^lustre_ebpf_stream_records_total{kind="access"} [1-9]' "$WORK/m1.txt"
les_true "in-flight gauge is declared" grep -q '^# TYPE lustre_ebpf_stream_client_inflight_requests gauge' "$WORK/m1.txt"

# Against lustre-ebpf-exporter as it is (test/fixtures/exporter-e743798.txt):
# each of its families is declared with its type and holds no FUSE series
# (Lustre only, as there); ours (lustre_ebpf_stream_client_*) carry the
# same labels in the same order, with fs_type first, and the same buckets.
FIX=$LES_SRC/test/fixtures/exporter-e743798.txt
want_le=$(awk '$1 == "buckets" { for (i = 2; i <= NF; i++) print $i; print "+Inf" }' "$FIX")
les_eq "no FUSE series in the exporter's lustre_client_* families" 0 \
	"$(grep -c '^lustre_client_[a-z_]*{' "$WORK/m1.txt")"
# Families of ours this scrape has no sample of, each with the reason; every
# other one must have a sample here, so that its labels and buckets are
# compared, not only its # TYPE line.
declare -A NO_SAMPLE=(
	[lustre_ebpf_stream_client_rpc_errors_total]="FUSE requests have no events (timeouts, evictions...): test/unit/test_prom.c has them"
	[lustre_ebpf_stream_client_inflight_requests]="nothing in flight at this scrape: the write held below is its sample"
)
while read -r kw name type labels; do
	[ "$kw" = family ] || continue
	grep -qx "# TYPE $name $type" "$WORK/m1.txt" || les_fail "exporter family $name ($type) not served"
	ours=lustre_ebpf_stream_client_${name#lustre_client_}
	case $name in
	*_ptlrpc_requests_*) continue ;; # Lustre only: test/vm/lustre-real/counters.py
	esac
	grep -qx "# TYPE $ours $type" "$WORK/m1.txt" || les_fail "family $ours ($type) not served"
	sfx=; [ "$type" = histogram ] && sfx=_count
	if ! line=$(grep -m1 "^$ours$sfx{" "$WORK/m1.txt"); then
		[ -n "${NO_SAMPLE[$ours]:-}" ] ||
			les_fail "$ours: declared, but no sample, where the workload makes one"
		les_pass "$ours: declared; no sample here: ${NO_SAMPLE[$ours]}"
		continue
	fi
	got=$(sed 's/^[^{]*{//; s/}.*//' <<<"$line" | grep -o '[a-z_]*="' | tr -d '="' | paste -sd,)
	les_eq "$ours: the exporter's labels (with --slurm-jobid), fs_type first" \
		"fs_type,$labels" "$got"
	if [ "$type" = histogram ]; then
		first=$(sed 's/{.*//; s/_count$//' <<<"$line")
		key=$(sed 's/^[^{]*{//; s/}.*//' <<<"$line")
		les_eq "$ours: buckets as the exporter's" "$want_le" \
			"$(grep -F "${first}_bucket{$key,le=" "$WORK/m1.txt" | sed 's/.*le="\([^"]*\)".*/\1/')"
	fi
done <"$FIX"
while read -r kw name; do
	[ "$kw" = missing ] || continue
	les_true "$name: not served, as docs/aggregation.md says" bash -c "! grep -q '^# TYPE $name ' '$WORK/m1.txt'"
done <"$FIX"
les_eq "unknown path: 404" 404 \
	"$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT1/nope")"
# /healthz: a line of JSON from the consumer's last update (once a second).
sleep 1.2
les_eq "/healthz: 200 with the pipeline alive" 200 \
	"$(curl -s -o "$WORK/health.json" -w '%{http_code}' "http://127.0.0.1:$PORT1/healthz")"
jq -c . "$WORK/health.json"
les_eq "/healthz: status ok, updated within 2 s, no drops, mounts observed" true \
	"$(jq '.status == "ok" and .last_update_s < 2 and .drops_per_s == 0 and .dropped == 0
		and .emitted > 0 and .observed_mounts >= 1' "$WORK/health.json")"

les_true "instance 2: promtool check metrics" promtool check metrics <"$WORK/m2.txt"
les_eq "--uid-labels=false: no uid or username label" 0 "$(grep -c 'uid=\|username=' "$WORK/m2.txt")"
les_eq "--histogram-process-labels: process on the histogram" $NW \
	"$(sample "$WORK/m2.txt" lustre_ebpf_stream_client_access_duration_seconds_count 'op="write".*process=')"
sleep 3.5 # past the 3 s TTL and the once-a-second sweep
scrape "$PORT2" /m "$WORK/m2b.txt"
les_eq "--series-ttl 3s: the write series expired" none \
	"$(sample "$WORK/m2b.txt" lustre_ebpf_stream_client_access_operations_total 'op="write"')"
les_true "--series-ttl 3s: expiries counted" grep -q '^lustre_ebpf_stream_prometheus_series_expired_total [1-9]' "$WORK/m2b.txt"
LES_PID=$P2
les_stop
les_eq "instance 2 exit status" 0 "$LES_STATUS"

# --- a real Prometheus server scraping instance 1 ----------------------------

PPORT=$(free_port)
cat >"$WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: lustre-ebpf-stream
    static_configs:
      - targets: ['127.0.0.1:$PORT1']
EOF
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" >"$WORK/prometheus.log" 2>&1 &
PROM_PID=$!
for i in $(seq 1 100); do
	curl -sf "http://127.0.0.1:$PPORT/-/ready" >/dev/null && break
	kill -0 "$PROM_PID" 2>/dev/null || les_fail "prometheus exited: $(tail -5 "$WORK/prometheus.log")"
	sleep 0.2
done
les_pass "prometheus server ready on port $PPORT"
value=
for i in $(seq 1 60); do
	value=$(curl -sf -G "http://127.0.0.1:$PPORT/api/v1/query" \
		--data-urlencode 'query=sum(lustre_ebpf_stream_client_access_operations_total{op="write"})' |
		jq -r '.data.result[0].value[1] // empty')
	[ -n "$value" ] && break
	sleep 0.5
done
les_eq "PromQL sum(lustre_ebpf_stream_client_access_operations_total{op=\"write\"})" $NW "$value"
les_eq "PromQL: the target is up" 1 \
	"$(curl -sf -G "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode 'query=up' |
		jq -r '.data.result[0].value[1]')"
stop_prometheus

# A write held 4 s by the daemon: in flight, with its submitter's labels.
cp "$(command -v dd)" "$WORK/bin/held"
env SLURM_JOB_ID=301 setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$WORK/bin/held" if=/dev/zero of="$S/x" bs=$K count=1 status=none &
HELD=$!
HELD_LABELS="fs=\"les-testfs\",mount=\"$S\",uid=\"$NOBODY\",username=\"nobody\",process=\"held\",actor_type=\"batch_job\",slurm_job_id=\"301\"}"
inflight=none
for _ in $(seq 1 30); do
	sleep 0.2
	scrape "$PORT1" /metrics "$WORK/m3.txt"
	inflight=$(grep -F "$HELD_LABELS" "$WORK/m3.txt" | grep '^lustre_ebpf_stream_client_inflight_requests{fs_type="fuse' | awk '{ print $NF }')
	[ "$inflight" = 1 ] && break
done
les_eq "in-flight gauge: the held write, by its submitter's labels" 1 "$inflight"
wait "$HELD" || les_fail "the held write failed"
sleep 1.2 # the next once-a-second read of the kernel's maps
scrape "$PORT1" /metrics "$WORK/m4.txt"
les_eq "in-flight gauge: 0 once the write is answered" 0 \
	"$(grep -F "$HELD_LABELS" "$WORK/m4.txt" | grep '^lustre_ebpf_stream_client_inflight_requests{' | awk '{ print $NF }')"
les_eq "the held write then counts as a write request" 1 \
	"$(sample "$WORK/m4.txt" lustre_ebpf_stream_client_rpc_wait_operations_total "mount=\"${S//\//\\/}\".*op=\"write\"")"

ver=$("$LES_BIN" --version | head -n 1 | cut -d' ' -f2)
scrape "$PORT1" /metrics "$WORK/bi.txt"
les_eq "build_info: version, schema version, libbpf" 1 \
	"$(grep -cE "^lustre_ebpf_stream_build_info\{version=\"$ver\",schema_version=\"1\",libbpf=\"[0-9]+\.[0-9]+\"\} 1$" "$WORK/bi.txt")"

# A port in use: one line, ours, and exit 1.
"$LES_BIN" --mount "$M" --prometheus "127.0.0.1:$PORT1" --duration 1s >/dev/null 2>"$WORK/inuse.err"
les_eq "port in use: exit 1" 1 "$?"
les_eq "port in use: one line on stderr, naming the address" \
	"lustre-ebpf-stream: cannot listen on 127.0.0.1:$PORT1: Address already in use" \
	"$(cat "$WORK/inuse.err")"

LES_PID=$P1
les_stop
les_eq "instance 1 exit status" 0 "$LES_STATUS"
les_eq "final stats report the endpoint's series" true \
	"$(les_jq "$WORK/p1.jsonl" '[.[] | select(.type=="stats" and .final)][0].prometheus.series > 0')"
les_done
