#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# OTLP traces in a real Jaeger (v1.75.0, scripts/jaeger-test-collector:
# built once from the Go module proxy and cached under LES_CACHE).
#
# 1. The tree. les-testfs answers every read 40 ms late and fails every 4th
#    with EIO; the tool runs with --min-latency 20ms --otlp. Through Jaeger's
#    query API (jq the independent client) each access record of the capture
#    must be one trace, found by the id the docs derive from its op_id; the
#    op's span lasts its latency_ns, its FUSE request is a child span of it
#    lasting the request's latency_ns, a failed op and its request have the
#    error status, and the attributes are the record's fields.
# 2. An outage. A fresh Jaeger, a small queue (--otlp-queue-size 1), four
#    readers; Jaeger is stopped for 10 s and started again while they read.
#    Every span the final stats record kept is then either in Jaeger
#    (counted by distinct span id) or counted as dropped: exactly. The
#    outage is told on stderr once, and its recovery once.
#
# 3. A real-Lustre capture replayed (--otlp --input, --otlp-sample 1): the
#    fixture test/data/lustre-2.17-capture.jsonl.gz (records of the real-
#    Lustre guest test), and the guest test's fresh capture when the build
#    tree has one (lustre-real-capture-*.jsonl.gz, saved by run-in-vm). Each
#    into a fresh Jaeger: every access record is a trace, every rpc record
#    of an op in the capture a span (the others counted rpc_unlinked or
#    rpc_no_op), each op's span lasts its latency; each request or wait is a
#    span of its op's trace, named PROTO.OP, lasting its own latency, with
#    its xid, opcode and target, under the parent the records give (the
#    lock enqueue a wait ran inside, the queue_wait that waited for a
#    request, else the op); the capture's enqueues with nested requests
#    are parents in Jaeger.
#
# Environment (set by CTest): LES_BUILD (build tree), LES_SRC (source tree).

. "$(dirname "$0")/lib.sh"
les_init 73_otlp_jaeger curl python3

JAEGER=$LES_SRC/scripts/jaeger-test-collector
JDIR=$(mktemp -d "/tmp/les-jaeger.XXXXXX")
LOAD_PIDS=()

trap les_collector_cleanup EXIT

# jaeger_start DIR: sets OTLP_PORT and QUERY_PORT.
jaeger_start() {
	local ports

	ports=$("$JAEGER" start --dir "$1" 2>"$WORK/jaeger.err") ||
		les_fail "jaeger-test-collector start: $(cat "$WORK/jaeger.err")"
	read -r OTLP_PORT QUERY_PORT <<<"$ports"
}

# traces OUT [START_S END_S]: every trace of the tool's service, as Jaeger's
# query API gives them; of the last hour, or from START_S to END_S (epoch s).
traces() {
	local now_s
	now_s=$(date +%s)
	local from=${2:-$((now_s - 3600))} to=${3:-$((now_s + 60))}

	curl -sf "http://127.0.0.1:$QUERY_PORT/api/traces?service=lustre-ebpf-stream&limit=1000000&start=$((from * 1000000))&end=$((to * 1000000))" \
		>"$1" || les_fail "Jaeger's query API did not answer"
}

# --- 1. the trace of each slow op ----------------------------------------------------

build_start=$SECONDS
jaeger_start "$JDIR/a"
les_pass "Jaeger v1.75.0 up in $((SECONDS - build_start)) s (OTLP :$OTLP_PORT, query :$QUERY_PORT)"

M=$WORK/mnt
les_testfs "$M" --direct-io --latency-ms=40 --latency-ops=read --inject=read:EIO:4
head -c 4096 /dev/urandom >"$M/data"

les_start "$WORK/cap.jsonl" --mount "$M" --min-latency 20ms --otlp "http://127.0.0.1:$OTLP_PORT"
# Eight reads of 512 bytes, each one FUSE request: 2 of them fail (every 4th).
SLURM_JOB_ID=4711 python3 - "$M/data" >"$WORK/reads.out" <<'EOF'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(8):
    try:
        os.pread(fd, 512, i * 512)
        print("ok")
    except OSError as e:
        print(e.errno)
EOF
sleep 2
les_stop
les_eq "the tool exits 0" 0 "$LES_STATUS"
les_eq "reads that failed with EIO" 2 "$(grep -c '^5$' "$WORK/reads.out")"

# The slow ops (on a loaded machine an open may be slow too: it is then one
# more trace), and the requests of those ops.
jq -c 'select(.type=="access")' "$WORK/cap.jsonl" >"$WORK/ops.jsonl"
jq -c -n --slurpfile ops "$WORK/ops.jsonl" '[$ops[].op_id] as $ids | inputs
	| select(.type == "rpc" and (.parent_op_id as $p | any($ids[]; . == $p)))' \
	"$WORK/cap.jsonl" >"$WORK/reqs.jsonl"
n_ops=$(wc -l <"$WORK/ops.jsonl")
n_spans=$((n_ops + $(wc -l <"$WORK/reqs.jsonl")))
les_eq "slow reads recorded: the 8 reads" 8 "$(jq -c 'select(.op=="read")' "$WORK/ops.jsonl" | wc -l)"
les_eq "final stats: every span exported" "$n_spans $n_spans 0" \
	"$(tail -n 1 "$WORK/cap.jsonl" | jq -r '"\(.otlp.spans) \(.otlp.exported) \(.otlp.dropped_otlp)"')"

traces "$WORK/jaeger.json"
les_eq "one trace per slow op" "$n_ops" "$(jq '.data | length' "$WORK/jaeger.json")"

# Each trace by the id docs/otlp.md derives: the run's salt, then the op_id.
salt=$(jq -r '.data[0].traceID[0:16]' "$WORK/jaeger.json")
les_eq "every trace id is the salt and an op_id" \
	"$(jq -r '.op_id' "$WORK/ops.jsonl" | xargs printf "$salt%016x\n" | sort)" \
	"$(jq -r '.data[].traceID' "$WORK/jaeger.json" | sort)"

# The spans of the capture's records, flattened: one line per span.
jq -c '.data[] | .processes as $p | .spans[] | {
	trace: .traceID, span: .spanID, name: .operationName, dur: .duration,
	parent: ([.references[]? | select(.refType=="CHILD_OF") | .spanID] | first),
	service: $p[.processID].serviceName,
	host: ([$p[.processID].tags[] | select(.key=="host.name") | .value] | first),
	tags: (reduce .tags[] as $t ({}; .[$t.key] = $t.value))}' \
	"$WORK/jaeger.json" >"$WORK/spans.jsonl"
les_eq "spans in Jaeger: each op and its requests" "$n_spans" "$(wc -l <"$WORK/spans.jsonl")"

# jq reads both files: the records ($ops, $reqs) and the spans ($spans).
check() {
	jq -n -r --slurpfile ops "$WORK/ops.jsonl" --slurpfile reqs "$WORK/reqs.jsonl" \
		--slurpfile spans "$WORK/spans.jsonl" --arg salt "$salt" "$1"
}
HEX='def hex16: [recurse(if . >= 16 then (. / 16 | floor) else empty end) | . % 16]
	| reverse | map("0123456789abcdef"[.:.+1]) | join("") | ("0" * (16 - length)) + .;
def opspan: "01" + (hex16 | .[2:]);
def reqspan: "02" + (hex16 | .[2:]);'

les_eq "each op's span lasts its latency_ns (us, truncated)" "" "$(check "$HEX"'
	$ops[] as $o | ($o.op_id | opspan) as $id
	| [$spans[] | select(.span == $id)] as $s
	| if ($s | length) != 1 then "op \($o.op_id): \($s | length) spans"
	  elif $s[0].dur != ($o.latency_ns / 1000 | floor) then
	    "op \($o.op_id): duration \($s[0].dur) us, latency \($o.latency_ns) ns"
	  elif $s[0].parent != null then "op \($o.op_id): has a parent"
	  elif $s[0].trace != $salt + ($o.op_id | hex16) then "op \($o.op_id): trace \($s[0].trace)"
	  else empty end')"

les_eq "each request is a child span of its op, lasting its own latency_ns" "" "$(check "$HEX"'
	$reqs[] as $r | ($r.req_id | reqspan) as $id
	| [$spans[] | select(.span == $id)] as $s
	| if ($s | length) != 1 then "req \($r.req_id): \($s | length) spans"
	  elif $s[0].parent != ($r.parent_op_id | opspan) then "req \($r.req_id): parent \($s[0].parent)"
	  elif $s[0].trace != $salt + ($r.parent_op_id | hex16) then "req \($r.req_id): wrong trace"
	  elif $s[0].dur != ($r.latency_ns / 1000 | floor) then
	    "req \($r.req_id): duration \($s[0].dur) us, latency \($r.latency_ns) ns"
	  elif $s[0].name != "fuse." + $r.op then "req \($r.req_id): named \($s[0].name)"
	  else empty end')"

les_eq "the error status on exactly the failed ops and requests" \
	"$(check '[$ops[], $reqs[] | select(.errno != 0)] | length')" \
	"$(check '[$spans[] | select(.tags.error == true and .tags["otel.status_code"] == "ERROR"
		and .tags["lustre_ebpf_stream.errno"] == 5 and .tags["error.type"] == "io")] | length')"
les_eq "failed ops in Jaeger: the two EIO reads" 2 \
	"$(check '[$spans[] | select(.name == "read" and .tags.error == true)] | length')"

les_eq "the op spans' attributes are the records' fields" "" "$(check "$HEX"'
	$ops[] as $o | ($o.op_id | opspan) as $id | ($spans[] | select(.span == $id)) as $s
	| [ ["name", $s.name, $o.op],
	    ["service.name", $s.service, "lustre-ebpf-stream"],
	    ["host.name", $s.host, $o.host],
	    ["process.pid", $s.tags["process.pid"], $o.pid],
	    ["thread.id", $s.tags["thread.id"], $o.tid],
	    ["process.executable.name", $s.tags["process.executable.name"], $o.comm],
	    ["user.id", $s.tags["user.id"], $o.uid],
	    ["user.name", $s.tags["user.name"], $o.username],
	    ["job_id", $s.tags["lustre_ebpf_stream.job_id"], $o.job_id],
	    ["mount", $s.tags["lustre_ebpf_stream.mount"], $o.mount],
	    ["fs_type", $s.tags["lustre_ebpf_stream.fs_type"], $o.fs_type],
	    ["bytes", $s.tags["lustre_ebpf_stream.bytes"], $o.bytes],
	    ["errno", $s.tags["lustre_ebpf_stream.errno"], $o.errno],
	    ["latency_ns", $s.tags["lustre_ebpf_stream.latency_ns"], $o.latency_ns] ][]
	| select(.[1] != .[2]) | "op \($o.op_id): \(.[0]) \(.[1]) != \(.[2])"')"
les_eq "the job of the workload, in every read's span" 8 \
	"$(check '[$spans[] | select(.name == "read" and .tags["lustre_ebpf_stream.job_id"] == "4711")] | length')"

"$JAEGER" stop --dir "$JDIR/a"

# --- 2. a collector outage: every span delivered or counted ---------------------------------

jaeger_start "$JDIR/b"
M2=$WORK/mnt2
les_testfs "$M2" --direct-io --latency-ms=5 --latency-ops=read
head -c 4096 /dev/urandom >"$M2/data"
PROM_PORT=$((20000 + $$ % 20000))
les_start "$WORK/out.jsonl" --mount "$M2" --min-latency 2ms --stats-interval 2s \
	--otlp "http://127.0.0.1:$OTLP_PORT" --otlp-queue-size 1 --otlp-flush-timeout 30s \
	--prometheus "127.0.0.1:$PROM_PORT"
metric() {
	curl -s "http://127.0.0.1:$PROM_PORT/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}
for r in 1 2 3 4; do
	python3 - "$M2/data" "$WORK/stop-load" <<'EOF' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
end = time.time() + 120
while not os.path.exists(sys.argv[2]) and time.time() < end:
    os.pread(fd, 512, 0)
EOF
	LOAD_PIDS+=($!)
done
sleep 4
"$JAEGER" stop --dir "$JDIR/b"
les_pass "Jaeger stopped 4 s into the workload"
sleep 10
les_ge "during the outage: spans pending in /metrics" 1 \
	"$(metric lustre_ebpf_stream_otlp_spans_pending)"
les_ge "during the outage: export errors in /metrics" 1 \
	"$(metric lustre_ebpf_stream_otlp_errors_total)"
jaeger_start "$JDIR/b"
les_pass "Jaeger back on the same ports"
sleep 4
touch "$WORK/stop-load"
for p in "${LOAD_PIDS[@]}"; do
	wait "$p"
done
LOAD_PIDS=()
sleep 2
les_stop
les_eq "the tool exits 0" 0 "$LES_STATUS"

final=$(tail -n 1 "$WORK/out.jsonl")
[ "$(jq -r .final <<<"$final")" = true ] || les_fail "the last line is not the final stats"
kept=$(jq -r .otlp.spans <<<"$final")
exported=$(jq -r .otlp.exported <<<"$final")
dropped=$(jq -r .otlp.dropped_otlp <<<"$final")
les_eq "final stats: nothing pending" 0 "$(jq -r .otlp.pending <<<"$final")"
les_ge "spans dropped on the full queue during the outage" 1 \
	"$(jq -r .otlp.dropped_by.queue_full <<<"$final")"
les_ge "spans exported" 1 "$exported"
les_eq "kept = exported + dropped" "$kept" "$((exported + dropped))"
# Every access record is a span, and every rpc record of an op too, but those
# whose op never came (filtered in the kernel: counted rpc_unlinked).
les_eq "kept = access records + their rpc records" "$kept" \
	"$(($(jq -s '[.[] | select(.type=="access" or (.type=="rpc" and .parent_op_id != null))]
		| length' "$WORK/out.jsonl") - $(jq -r .otlp.rpc_unlinked <<<"$final")))"

traces "$WORK/jaeger2.json"
les_eq "spans in Jaeger (distinct ids) = exported" "$exported" \
	"$(jq '[.data[].spans[] | .traceID + "/" + .spanID] | unique | length' "$WORK/jaeger2.json")"
les_ge "the outage left out traces Jaeger never saw" 1 \
	"$(($(jq -s '[.[] | select(.type=="access")] | length' "$WORK/out.jsonl") - $(jq '.data | length' "$WORK/jaeger2.json")))"

n=$(grep -c 'otlp: collector .* not reachable' "$WORK/out.jsonl.err")
les_eq "the outage told on stderr once" 1 "$n"
les_eq "the recovery told on stderr once" 1 "$(grep -c 'otlp: collector .* back after' "$WORK/out.jsonl.err")"

"$JAEGER" stop --dir "$JDIR/b"

# --- 2b. the collector down at exit: the last flush backs off ------------------------------
# Jaeger b is stopped: nothing listens on its port. The flush at exit keeps
# the backoff (halved to the time left), so a refusing collector sees a few
# tries in --otlp-flush-timeout, not a connection attempt per poll.
les_start "$WORK/down.jsonl" --mount "$M2" --min-latency 2ms --stats-interval 0 \
	--otlp "http://127.0.0.1:$OTLP_PORT" --otlp-flush-timeout 2s
for i in 1 2 3 4 5; do
	dd if="$M2/data" of=/dev/null bs=512 count=1 status=none
done
les_stop
les_eq "collector down at exit: the tool exits 0" 0 "$LES_STATUS"
final=$(tail -n 1 "$WORK/down.jsonl")
les_ge "collector down at exit: spans kept" 5 "$(jq -r .otlp.spans <<<"$final")"
les_eq "collector down at exit: every kept span dropped at exit" \
	"$(jq -r .otlp.spans <<<"$final")" "$(jq -r .otlp.dropped_by.exit <<<"$final")"
les_true "collector down at exit: at most 40 tries in the 2 s flush ($(jq -r .otlp.retries <<<"$final") retries)" \
	test "$(jq -r .otlp.retries <<<"$final")" -le 40

# --- 3. a real-Lustre capture replayed: the trees of Lustre ops ------------------------------

# replay_check NAME CAPTURE: CAPTURE (gzip) replayed into a fresh Jaeger, its trees checked.
replay_check() {
	local name=$1 cap=$2 d=$WORK/$1 from to

	mkdir -p "$d"
	zcat "$cap" | jq -c 'select(.type == "access")' >"$d/ops.jsonl"
	# Every rpc and rpc_event record, marked by whether its op comes after it
	# in the capture: an op's record ends its tree, so a request the op
	# started that completes after the op returned (a statfs a mkdir sends
	# by ptlrpcd) is unlinked, as one whose op is not in the capture.
	zcat "$cap" | jq -c -n '[inputs] | to_entries
		| (map(select(.value.type == "access")
			| {key: (.value.op_id | tostring), value: .key}) | from_entries) as $at
		| .[] | select(.value.type == "rpc" or .value.type == "rpc_event")
		| .value + {linked: (.value.parent_op_id != null
			and ($at[.value.parent_op_id | tostring] // -1) > .key)}' \
		>"$d/rpcs.jsonl"
	jq -c 'select(.type == "rpc" and .linked)' "$d/rpcs.jsonl" >"$d/reqs.jsonl"
	les_ge "$name: access records" 1 "$(wc -l <"$d/ops.jsonl")"
	les_ge "$name: PtlRPC request records of an op" 1 \
		"$(jq -c 'select(.proto == "ptlrpc" and .xid != null)' "$d/reqs.jsonl" | wc -l)"

	jaeger_start "$JDIR/$name"
	"$LES_BUILD/lustre-ebpf-stream" --otlp "http://127.0.0.1:$OTLP_PORT" --otlp-sample 1 \
		--input "$cap" >"$d/stats.json" 2>"$d/replay.err"
	les_eq "$name: the replay exits 0" 0 "$?"
	les_eq "$name: one line on stderr" 1 "$(wc -l <"$d/replay.err")"
	local st
	st=$(cat "$d/stats.json")
	les_eq "$name: the replay read every record" \
		"$(zcat "$cap" | jq -c 'select(.type == "access" or .type == "rpc" or .type == "rpc_event")' | wc -l) 0" \
		"$(jq -r '"\(.replay.records) \(.replay.malformed)"' <<<"$st")"
	les_eq "$name: ops = access records, none sampled out" "$(wc -l <"$d/ops.jsonl") 0" \
		"$(jq -r '"\(.otlp.ops) \(.otlp.ops_sampled_out)"' <<<"$st")"
	les_eq "$name: spans kept = access records + the rpc records of their ops" \
		"$(($(wc -l <"$d/ops.jsonl") + $(wc -l <"$d/reqs.jsonl")))" "$(jq -r .otlp.spans <<<"$st")"
	les_eq "$name: rpc records of an op not after them in the capture counted unlinked, of none no_op" \
		"$(jq -s '[.[] | select(.linked | not) | select(.parent_op_id != null)] | length' "$d/rpcs.jsonl") $(jq -s '[.[] | select(.type == "rpc" and .parent_op_id == null)] | length' "$d/rpcs.jsonl")" \
		"$(jq -r '"\(.otlp.rpc_unlinked) \(.otlp.rpc_no_op)"' <<<"$st")"
	les_eq "$name: every span exported" "$(jq -r .otlp.spans <<<"$st") 0 0" \
		"$(jq -r '"\(.otlp.exported) \(.otlp.dropped_otlp) \(.otlp.pending)"' <<<"$st")"

	from=$(($(zcat "$cap" | jq -r 'select(.ts) | .ts' | sort | head -n 1 | xargs -I{} date -d {} +%s) - 600))
	to=$(($(zcat "$cap" | jq -r 'select(.ts) | .ts' | sort | tail -n 1 | xargs -I{} date -d {} +%s) + 600))
	traces "$d/jaeger.json" "$from" "$to"
	les_eq "$name: one trace per access record" "$(wc -l <"$d/ops.jsonl")" \
		"$(jq '.data | length' "$d/jaeger.json")"
	jq -c '.data[] | .spans[] | {
		trace: .traceID, span: .spanID, name: .operationName, dur: .duration,
		parent: ([.references[]? | select(.refType=="CHILD_OF") | .spanID] | first),
		tags: (reduce .tags[] as $t ({}; .[$t.key] = $t.value))}' \
		"$d/jaeger.json" >"$d/spans.jsonl"
	les_eq "$name: spans in Jaeger = exported" "$(jq -r .otlp.exported <<<"$st")" \
		"$(wc -l <"$d/spans.jsonl")"
	salt=$(jq -r '.data[0].traceID[0:16]' "$d/jaeger.json")
	rcheck() {
		jq -n -r --slurpfile ops "$d/ops.jsonl" --slurpfile reqs "$d/reqs.jsonl" \
			--slurpfile spans "$d/spans.jsonl" --arg salt "$salt" "$HEX"'
			def waitspan: "03" + (hex16 | .[2:]);
			# A request by its opcode name, a lock wait by the function it timed.
			def opname: if .op == "request" and .opcode_name != null then .opcode_name
				elif .op == "lock_wait" then
				  {ldlm_cli_enqueue: "lock_enqueue", ldlm_completion_ast: "lock_completion"}[.function]
				else .op end;
			($spans | map({key: .span, value: .}) | from_entries) as $by
			| ($reqs | group_by(.parent_op_id)
			   | map({key: (.[0].parent_op_id | tostring), value: .}) | from_entries) as $kin
			| def span_of: if .wait_id != null then (.wait_id | waitspan) else (.req_id | reqspan) end;
			  def parent_of: . as $r | ($kin[$r.parent_op_id | tostring]) as $k
			    | ([$k[] | select(.wait_id != null and $r.parent_wait_id != null
				and .wait_id == $r.parent_wait_id)] | first) as $w
			    | ([$k[] | select(.wait_id != null and $r.wait_id == null and $r.req_id != null
				and .req_id == $r.req_id)] | first) as $q
			    | if $w != null then ($w.wait_id | waitspan)
			      elif $q != null then ($q.wait_id | waitspan)
			      else ($r.parent_op_id | opspan) end;
			'"$1"
	}
	les_eq "$name: each op's span lasts its latency_ns, in the trace of its op_id" "" "$(rcheck '
		$ops[] as $o | $by[$o.op_id | opspan] as $s
		| if $s == null then "op \($o.op_id): no span"
		  elif $s.dur != ($o.latency_ns / 1000 | floor) then "op \($o.op_id): \($s.dur) us, \($o.latency_ns) ns"
		  elif $s.trace != $salt + ($o.op_id | hex16) then "op \($o.op_id): trace \($s.trace)"
		  elif $s.name != $o.op then "op \($o.op_id): named \($s.name)"
		  else empty end')"
	les_eq "$name: each request and wait: its op's trace, its parent, PROTO.OP, its own latency, xid, opcode, target" "" "$(rcheck '
		$reqs[] as $r | ($r | span_of) as $id | $by[$id] as $s
		| if $s == null then "rpc \($id): no span"
		  elif $s.trace != $salt + ($r.parent_op_id | hex16) then "rpc \($id): trace \($s.trace)"
		  elif $s.parent != ($r | parent_of) then "rpc \($id): parent \($s.parent), not \($r | parent_of)"
		  elif $s.name != $r.proto + "." + ($r | opname) then "rpc \($id): named \($s.name)"
		  elif $s.dur != ($r.latency_ns / 1000 | floor) then "rpc \($id): \($s.dur) us, \($r.latency_ns) ns"
		  elif $s.tags["lustre_ebpf_stream.xid"] != $r.xid then "rpc \($id): xid \($s.tags["lustre_ebpf_stream.xid"])"
		  elif $s.tags["lustre_ebpf_stream.opcode"] != $r.opcode then "rpc \($id): opcode"
		  elif $s.tags["lustre_ebpf_stream.target"] != $r.target then "rpc \($id): target \($s.tags["lustre_ebpf_stream.target"])"
		  else empty end')"
	# What the capture holds, seen in Jaeger: PtlRPC requests, by opcode name.
	les_ge "$name: PtlRPC request spans with an xid and a target" 1 "$(rcheck '
		[$spans[] | select(.name | startswith("ptlrpc.")) | select(.tags["lustre_ebpf_stream.xid"] != null
			and .tags["lustre_ebpf_stream.target"] != null)] | length')"
	les_pass "$name: PtlRPC spans by name: $(rcheck '[$spans[] | select(.name | startswith("ptlrpc.")) | .name]
		| group_by(.) | map("\(.[0]) \(length)") | join(", ")')"
	# Lock enqueues that hold nested requests: a parent in Jaeger wherever the capture has one.
	local nested
	nested=$(rcheck '[$reqs[] | select(.parent_wait_id != null) | .parent_wait_id] | unique | length')
	les_pass "$name: waits inside another wait (lock enqueues with nested requests): $nested"
	les_eq "$name: each wait holding nested records is their parent span in Jaeger" "" "$(rcheck '
		[$reqs[] | select(.wait_id != null) | .wait_id as $w
		 | select(any($reqs[]; .parent_wait_id == $w))] | unique_by(.wait_id)[] as $e
		| ($e.wait_id | waitspan) as $id
		| [$spans[] | select(.parent == $id)] as $kids
		| if ($kids | length) == 0 then "wait \($e.wait_id) (\($e.op)): no child span" else empty end')"
	"$JAEGER" stop --dir "$JDIR/$name"
}

replay_check fixture "$LES_SRC/test/data/lustre-2.17-capture.jsonl.gz"
for f in "$LES_BUILD"/lustre-real-capture-*.jsonl.gz; do
	[ -e "$f" ] || { les_pass "no fresh guest capture in the build tree (lustre.t_tool_* not run): the fixture only"; break; }
	replay_check "$(basename "$f" .jsonl.gz)" "$f"
done

les_done
