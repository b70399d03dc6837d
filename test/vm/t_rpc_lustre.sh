#!/bin/bash
# t_rpc_lustre.sh: the RPC plane on the Lustre stand-in (test/vm/lustre) in
# the stock-kernel guest, where PtlRPC and LDLM are reached by kprobes as
# on a real client without module BTF.
#
#   test/vm/run-in-vm test/vm/t_rpc_lustre.sh      (LES_BUILD: the build dir)
#
# With injected latency, resends, expiries, not-connected replies,
# restarts, lock waits and asynchronous writes completed by ptlrpcd_00_00,
# the tool's records must say exactly what was injected, for the process
# and the access op that caused it: queue_wait >= the latency with its
# parent access op charged (rpc_wait_ns), a resend event per transmission
# after a request's first (3 marked by ptlrpc_resend_req for the
# workload's pid, one after each expire/notconn/restart), one
# expire/notconn/restart event each, lock_wait >= the lock
# delay, async OST_WRITEs attributed to dd and its write (worker
# ptlrpcd_00_00) with its bytes and the job ID the module put on the wire,
# one request record per reply the module accounted
# (ptlrpc_lprocfs_rpc_sent, as real Lustre's per-opcode counters), the
# in-flight gauge up during the slow write and 0 at the end, also after a
# process was killed mid-request. Opcodes come from ptlrpc_request_pack's
# argument, with no structure offset; with the pack probes left out
# (LES_FORCE_OFF) they come from the published rq_reqmsg offset
# (LES_PTLRPC_REQMSG_OFFSET) and are absent without it. Also runs
# test/e2e/25_rpc_verifier.sh: the fentry twins must load on this kernel.
#
# Runs on the stand-in, where each fault is exact and cheap to inject.
# Real Lustre's resends, timeouts and evictions, made with fail_loc and a
# server restart, are proven in test/vm/lustre-real/.
set -u

# shellcheck source=test/vm/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
guest_init t_rpc_lustre
mod=$lustre_mod
mnt=$work/mnt

cleanup()
{
	tracer_kill
	mountpoint -q "$mnt" && umount "$mnt"
	[ -d "/sys/module/$mod" ] && rmmod "$mod"
	guest_remove_work
}
trap cleanup EXIT

# start_tracer NAME [VAR=VALUE...]: the tool on the mount, output in $work/NAME.jsonl.
start_tracer()
{
	local name=$1
	shift

	tracer_start 300 "" "$work/$name.err" \
		env "$@" "$tool" -v --mount "$mnt" --stats-interval 1s -o "$work/$name.jsonl"
}

# q NAME JQ-ARGS... FILTER: jq over the run's records as one array.
q()
{
	local name=$1
	shift
	jq -s "$@" "$work/$name.jsonl"
}

# ---- setup -----------------------------------------------------------------

guest_require_tool
ko=$(find_module) || die "no stand-in module"
insmod "$ko" || die "insmod $ko failed"
mkdir -p "$mnt" && mount -t lustre -o flock 10.0.0.1@tcp:/standin "$mnt" || die "mount failed"
# Files made before tracing: their extent locks are cached from here on,
# so the traced calls below send exactly the RPCs the checks expect.
mkdir "$mnt/d" && echo hello >"$mnt/d/f" && echo x >"$mnt/d/async" && : >"$mnt/d/lock" ||
	die "cannot create the files"
reqmsg_off=$(param request_layout | tr ' ' '\n' | sed -n 's/^rq_reqmsg=//p')
[ -n "$reqmsg_off" ] || die "no rq_reqmsg in request_layout"
say "stand-in rq_reqmsg offset: $reqmsg_off"

# ---- probe plan ------------------------------------------------------------

list_probes()
{
	"$tool" --list-probes=json >"$work/probes.json" || return 1
	jq -c '.probes[] | select(.plane == "rpc" and .proto != null)' "$work/probes.json"
	for f in ptlrpc_request_alloc ptlrpcd_add_req ptlrpc_queue_wait ptlrpc_send_new_req \
		ptl_send_rpc __ptlrpc_free_req ptlrpc_resend_req ptlrpc_restart_req \
		ptlrpc_expire_one_request ptlrpc_request_handle_notconn ldlm_cli_enqueue \
		ldlm_completion_ast; do
		jq -e --arg f "$f" '.probes[] | select(.plane == "rpc" and .probe == $f) |
			.method == "kprobe" and .module == "les_lustre_standin"' \
			"$work/probes.json" >/dev/null || { echo "$f: not planned as a kprobe"; return 1; }
	done
	# Not in the stand-in: reported with a reason, never silently.
	jq -e '.probes[] | select(.probe == "ptlrpc_request_alloc_pool") |
		.method == "none" and (.reason | test("kallsyms"))' "$work/probes.json"
}
check "--list-probes: PtlRPC/LDLM probes by kprobe on the stand-in (no BTF)" list_probes

# ---- run 1: injections, opcodes from the published offset -----------------

start_tracer run1 || die "tool did not start"
run1_pid=$tracer_pid
freed0=$(param requests_freed)
replied0=$(param requests_replied)
resends0=$(param resends)
retrans0=$(param retransmissions)

set_param rpc_latency_ms 50
set_param resend_count 3
stat -c %s "$mnt/d/f" "$mnt/d/f" "$mnt/d/f" "$mnt/d/f" "$mnt/d/f" >/dev/null &
stat_pid=$!
wait $stat_pid
set_param rpc_latency_ms 0

set_param expire_count 1
set_param notconn_count 1
set_param restart_count 1
stat "$mnt/d/f" "$mnt/d/f" >/dev/null &
fault_pid=$!
wait $fault_pid

set_param lock_wait_ms 100
cat "$mnt/d/lock" >/dev/null &
cat_pid=$!
wait $cat_pid
set_param lock_wait_ms 0

# The OST_WRITE goes to ptlrpcd_00_00 and takes 2.5 s there; dd has long
# returned. Stats records (every second) see it in flight meanwhile.
set_param async_writes 1
set_param rpc_latency_ms 2500
dd if=/dev/zero of="$mnt/d/async" bs=4k count=1 conv=notrunc status=none &
dd_pid=$!
wait $dd_pid
sleep 3
set_param rpc_latency_ms 0
dd if=/dev/zero of="$mnt/d/async" bs=4k count=1 seek=1 conv=notrunc,fsync status=none
set_param async_writes 0

# 32 callers blocked in ptlrpc_queue_wait at once: more than the kernel's
# default return instances of a perf kretprobe (max(10, 2 x CPUs)); the
# tool's tracefs kretprobes have 1024.
kretprobe_events=$(grep -c "^r1024:kprobes/les${run1_pid}_" /sys/kernel/tracing/kprobe_events)
set_param rpc_latency_ms 400
many_pids=()
for _ in $(seq 32); do
	stat "$mnt/d/f" >/dev/null &
	many_pids+=($!)
done
wait "${many_pids[@]}"
set_param rpc_latency_ms 0

# Killed while its request is in flight: the request still ends (and is
# counted out of flight) when the module frees it.
set_param rpc_latency_ms 1000
stat "$mnt/d/f" >/dev/null &
kill_pid=$!
sleep 0.3
kill -9 $kill_pid
wait $kill_pid 2>/dev/null
set_param rpc_latency_ms 0
sleep 1.5

freed1=$(param requests_freed)
replied1=$(param requests_replied)
resends1=$(param resends)
retrans1=$(param retransmissions)
tracer_stop
run1_status=$?
say "module: $((freed1 - freed0)) requests freed, $((replied1 - replied0)) replied, $((resends1 - resends0)) resends, $((retrans1 - retrans0)) transmissions after a first while traced"

check "tool ran without errors" grep -q "probes attached" "$work/run1.err"
check "run 1: the tool exits 0" tracer_exited_ok "$run1_status" "$work/run1.err"
check "return probes made in tracefs with 1024 instances ($kretprobe_events)" \
	test "$kretprobe_events" -ge 3
check "and removed when the tool stopped" \
	bash -c "! grep -q 'les${run1_pid}_' /sys/kernel/tracing/kprobe_events"

many_waits()
{
	q run1 --argjson pids "$(printf '%s\n' "${many_pids[@]}" | jq -s .)" -e '
		[.[] | select(.type == "rpc" and .op == "queue_wait" and .latency_ns >= 400000000)
			| select(.pid as $p | $pids | index($p) != null)] as $qw
		| ([.[] | select(.type == "stats" and .final)][0].kretprobe_missed) as $missed
		| ({queue_waits: ($qw | length), kretprobe_missed: $missed} | tostring | debug)
		| ($qw | length) == 32 and $missed == 0'
}
check "32 callers blocked at once: 32 queue_wait records, no return missed" many_waits
check "every line is valid JSON" jq -e . "$work/run1.jsonl"
check "every line is valid against docs/record.schema.json" schema_valid "$work/run1.jsonl"

queue_wait_latency()
{
	q run1 --argjson p "$stat_pid" -e '
		[.[] | select(.type == "rpc" and .op == "queue_wait" and .pid == $p)] as $qw
		| ($qw | map(.latency_ns / 1e6 | floor) | tostring | ("queue_wait ms: " + .) | debug)
		| ($qw | length) >= 5 and all($qw[]; .latency_ns >= 50000000 and .proto == "ptlrpc")'
}
check "rpc_latency_ms=50: >= 5 queue_wait records of stat, each >= 50 ms" queue_wait_latency

queue_wait_parents()
{
	q run1 --argjson p "$stat_pid" -e '
		[.[] | select(.type == "access")] as $acc
		| [.[] | select(.type == "rpc" and .op == "queue_wait" and .pid == $p)] as $qw
		| ($qw | length) > 0 and all($qw[]; .parent_op_id as $id
			| any($acc[]; .op_id == $id and .pid == $p and .op == "getattr"
				and .rpc_wait_ns >= 50000000 and .rpc_count >= 1))'
}
check "each queue_wait links to stat's getattr access record with rpc_wait_ns >= 50 ms" \
	queue_wait_parents

queue_wait_opcode()
{
	q run1 --argjson p "$stat_pid" -e '
		[.[] | select(.type == "rpc" and .op == "queue_wait" and .pid == $p)]
		| length > 0 and all(.[]; .opcode == 33 and .opcode_name == "mds_getattr")'
}
check "queue_wait opcode mds_getattr (33) from ptlrpc_request_pack, no offset" queue_wait_opcode

# A resend event is every transmission after a request's first: the 3
# that ptlrpc_resend_req marked (stat's) and the one after each expire,
# not-connected reply and restart (the second stat's).
resends_exact()
{
	q run1 --argjson p "$stat_pid" --argjson f "$fault_pid" --argjson n "$((retrans1 - retrans0))" -e '
		[.[] | select(.type == "access")] as $acc
		| [.[] | select(.type == "rpc_event" and .event == "resend")] as $ev
		| ({resend_events: ($ev | length), transmissions_after_first: $n,
			by_stat: ([$ev[] | select(.pid == $p)] | length),
			by_fault_stat: ([$ev[] | select(.pid == $f)] | length)} | tostring | debug)
		| ($ev | length) == $n
		and ([$ev[] | select(.pid == $p)] | length) == 3
		and ([$ev[] | select(.pid == $f)] | length) == 3
		and all($ev[]; .proto == "ptlrpc"
			and (.pid as $q | .parent_op_id as $id | any($acc[]; .op_id == $id and .pid == $q)))' &&
		[ $((resends1 - resends0)) = 3 ] && [ $((retrans1 - retrans0)) = 6 ]
}
check "resend events = transmissions after a first (module: 6): stat's 3 resends, 1 per expire/notconn/restart" resends_exact

faults_exact()
{
	local ev

	for ev in expire notconn restart; do
		q run1 --argjson p "$fault_pid" --arg e "$ev" -e '
			[.[] | select(.type == "rpc_event" and .event == $e)]
			| length == 1 and .[0].pid == $p and .[0].parent_op_id != null' ||
			{ echo "$ev"; return 1; }
	done
}
check "expire/notconn/restart_count=1: exactly one event each, for that stat" faults_exact

lock_waits()
{
	q run1 --argjson p "$cat_pid" -e '
		[.[] | select(.type == "access" and .pid == $p)] as $acc
		| [$acc[] | select(.op == "read") | .op_id] as $reads
		| [.[] | select(.type == "rpc" and .op == "lock_wait" and .pid == $p)] as $lw
		| ($lw | map({function, ms: (.latency_ns / 1e6 | floor), blocked}) | tostring | debug)
		| [$lw[] | select(.latency_ns >= 100000000)] as $slow
		| any($slow[]; .function == "ldlm_completion_ast" and .proto == "ldlm" and .blocked)
		and all($lw[] | select(.function == "ldlm_completion_ast"); .blocked == (.latency_ns >= 100000000))
		and any($slow[]; .function == "ldlm_cli_enqueue")
		and all($slow[]; .parent_op_id as $id | $reads | index($id) != null)
		and all($lw[]; .parent_op_id as $id | any($acc[]; .op_id == $id))'
}
# The open's intent enqueue grants nothing and waits for nothing; the read's
# extent lock is the one blocked.
check "lock_wait_ms=100: lock_wait records of cat >= 100 ms, linked to its read, the grant wait blocked (and only it)" lock_waits

async_write()
{
	q run1 --argjson p "$dd_pid" -e '
		[.[] | select(.type == "access" and .pid == $p and .op == "write")] as $w
		| [.[] | select(.type == "rpc" and .op == "request" and .opcode_name == "ost_write"
			and .pid == $p)] as $r
		| ({write_ms: ($w | map(.latency_ns / 1e6 | floor)),
		    request: ($r | map({comm, worker_comm, ms: (.latency_ns / 1e6 | floor)}))}
		   | tostring | debug)
		| ($w | length) == 1 and ($r | length) == 1
		and $r[0].comm == "dd" and $r[0].worker_comm == "ptlrpcd_00_00"
		and $r[0].parent_op_id == $w[0].op_id and $r[0].bytes == 4096
		and $r[0].lustre_jobid == "dd.0"
		and $r[0].latency_ns >= 2500000000 and $w[0].latency_ns < 2500000000'
}
check "async_writes: OST_WRITE sent by ptlrpcd_00_00 is dd's and its write's, 4096 bytes, job dd.0" \
	async_write

requests_match_module()
{
	local n

	n=$(q run1 -r '[.[] | select(.type == "rpc" and .op == "request")] | length')
	echo "request records: $n, module replied: $((replied1 - replied0)), freed: $((freed1 - freed0))"
	[ "$n" = $((replied1 - replied0)) ] && [ "$n" -gt 0 ]
}
check "one request record per reply the module accounted" requests_match_module

request_jobids()
{
	q run1 -e '[.[] | select(.type == "rpc" and .op == "request" and .comm == "stat")]
		| length > 0 and all(.[]; .lustre_jobid == "stat.0")'
}
check "request records carry the job ID on the wire (stat.0)" request_jobids

queue_wait_joins_request()
{
	q run1 -e '
		[.[] | select(.type == "rpc" and .op == "request") | .req_id] as $ids
		| [.[] | select(.type == "rpc" and .op == "queue_wait")]
		| length > 0 and all(.[]; .req_id as $r | $ids | index($r) != null)'
}
check "every queue_wait's req_id is that of a request record" queue_wait_joins_request

inflight_seen()
{
	q run1 --arg m "$mnt" -e '
		[.[] | select(.type == "stats") | .inflight] as $s
		| ($s | map(.by_proto.ptlrpc) | tostring | ("ptlrpc in flight per stats: " + .) | debug)
		| any($s[]; .by_proto.ptlrpc >= 1
			and any(.by_mount[]; .proto == "ptlrpc" and .mount == $m and .requests >= 1))'
}
check "stats: the slow write in flight on the mount" inflight_seen

inflight_zero()
{
	q run1 -e '
		[.[] | select(.type == "stats" and .final)] | length == 1
		and .[0].inflight.total == 0 and .[0].inflight.by_proto.ptlrpc == 0
		and (.[0].inflight.by_mount | length) == 0'
}
check "final stats: nothing in flight" inflight_zero

killed_mid_request()
{
	q run1 --argjson p "$kill_pid" -e '
		[.[] | select(.type == "rpc" and .op == "request" and .pid == $p)]
		| length >= 1 and all(.[]; .latency_ns >= 1000000000)'
}
check "a process killed mid-request: its request still ends and is recorded" killed_mid_request

# ---- runs 2 and 3: without the pack probes, the offset or nothing ---------

no_pack=LES_FORCE_OFF=ptl_pack_kp,ptl_bufs_pack_kp,ptl_set_opc_kp
start_tracer run2 "$no_pack" LES_PTLRPC_REQMSG_OFFSET="$reqmsg_off" || die "tool did not start (run 2)"
stat "$mnt/d/f" >/dev/null &
stat_off_pid=$!
wait $stat_off_pid
sleep 1
tracer_stop
check "run 2: the tool exits 0" tracer_exited_ok "$?" "$work/run2.err"

offset_opcode()
{
	q run2 --argjson p "$stat_off_pid" -e '
		[.[] | select(.type == "rpc" and .op == "queue_wait" and .pid == $p)]
		| length > 0 and all(.[]; .opcode == 33 and .opcode_name == "mds_getattr")'
}
check "without the pack probes: opcode through the published offset" offset_opcode

start_tracer run3 "$no_pack" || die "tool did not start (run 3)"
stat "$mnt/d/f" >/dev/null &
stat2_pid=$!
wait $stat2_pid
sleep 1
tracer_stop
check "run 3: the tool exits 0" tracer_exited_ok "$?" "$work/run3.err"

no_opcode()
{
	q run3 --argjson p "$stat2_pid" -e '
		[.[] | select(.type == "rpc" and (.proto == "ptlrpc" or .proto == "ldlm"))] as $r
		| ($r | map(select(.pid == $p and .op == "queue_wait")) | length) >= 1
		and all($r[]; has("opcode") | not) and all($r[]; has("opcode_name") | not)'
}
check "without pack probes, BTF or an offset the opcode is absent, never guessed" no_opcode

# ---- the fentry twins and kprobes through this kernel's verifier ----------

# fuse is loaded for its BTF: the FUSE function programs read struct fuse_req by CO-RE.
verifier()
{
	modprobe -d "$LES_VM_MODDIR" fuse || return 1
	LES_RPC_VERIFIER_REQUIRE=fentry LES_BUILD=$build LES_SRC=$src bash "$src/test/e2e/25_rpc_verifier.sh"
}
check "25_rpc_verifier.sh in the guest: kprobes and fentry twins load" verifier
cell_by_checks lustre-standin rpc kprobe

guest_done
