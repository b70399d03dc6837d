#!/bin/bash
# t_rpc_nfs.sh: the RPC plane on NFS in the stock-kernel guest. nfsd
# exports a tmpfs directory over loopback, mounted as NFSv3 with noac (so
# every stat asks the server); the tool traces the sunrpc tracepoints
# (tp_btf) while a workload with known ops runs.
#
#   test/vm/run-in-vm test/vm/t_rpc_nfs.sh      (LES_BUILD: the build dir)
#
# Checks: rpc records of program nfs v3 with backlog_ns, rtt_ns and
# execute_ns; MKDIR, GETATTR, REMOVE linked to the access ops of the
# processes that caused them; WRITE (writeback at fsync) and READ (direct
# I/O), which sunrpc completes in a kworker, still attributed to dd and its
# access op with the kworker as worker_comm, and charged to that op; the
# mount known; nothing in flight at the end. Then test/e2e/25_rpc_verifier.sh
# with sunrpc loaded: the tp_btf programs must load on this kernel.
set -u

build=${LES_BUILD:-build}
src=${LES_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
tool=$build/lustre-ebpf-stream
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d /tmp/t_rpc_nfs.XXXXXX)
mnt=$work/v3
passed=0
failed=0
tracer_pid=

# shellcheck source=test/vm/nfs-setup.sh
. "$here/nfs-setup.sh"

say()
{
	echo "t_rpc_nfs: $*"
}

check()
{
	local what=$1
	shift

	if "$@" >"$work/check.out" 2>&1; then
		passed=$((passed + 1))
		echo "ok   $what"
		[ "${LES_TEST_VERBOSE:-0}" = 1 ] && sed 's/^/     | /' "$work/check.out"
		return 0
	fi
	failed=$((failed + 1))
	echo "FAIL $what"
	sed 's/^/     | /' "$work/check.out" | tail -n 40
	return 1
}

cleanup()
{
	[ -n "$tracer_pid" ] && kill -INT "$tracer_pid" 2>/dev/null && wait "$tracer_pid"
	nfs_teardown "$mnt"
	[ "${LES_KEEP:-0}" = 1 ] || rm -rf "$work" 2>/dev/null
}
trap cleanup EXIT

die()
{
	say "$*"
	exit 1
}

q()
{
	jq -s "$@" "$work/out.jsonl"
}

# Every line of a capture valid against docs/record.schema.json.
schema_valid()
{
	python3 - "$src/docs/record.schema.json" "$1" <<'PYEOF'
import json, sys
import jsonschema

validator = jsonschema.Draft7Validator(json.load(open(sys.argv[1])))
bad = 0
for n, line in enumerate(open(sys.argv[2]), 1):
    for e in validator.iter_errors(json.loads(line)):
        bad += 1
        if bad <= 5:
            print("line %d: %s: %s" % (n, list(e.absolute_path), e.message[:300]))
print("%d lines, %d errors" % (n, bad))
sys.exit(1 if bad else 0)
PYEOF
}

[ "${LES_VM:-}" = 1 ] || die "not in the guest: run test/vm/run-in-vm $0"
[ -x "$tool" ] || die "no $tool (set LES_BUILD)"
command -v jq >/dev/null || die "jq missing"
nfs_server_start "$work/export" || die "cannot start the NFS server"
NFS_MOUNT_OPTS=noac nfs_mount 3 "$work/export" "$mnt" || die "cannot mount NFSv3"

list_probes()
{
	"$tool" --list-probes=json >"$work/probes.json" || return 1
	jq -c '.probes[] | select(.proto == "sunrpc")' "$work/probes.json"
	[ "$(jq '[.probes[] | select(.proto == "sunrpc" and .method == "tp_btf")] | length' \
		"$work/probes.json")" = 4 ]
}
check "--list-probes: the 4 sunrpc tracepoints by tp_btf" list_probes

"$tool" -v --mount "$mnt" --stats-interval 1 -o "$work/out.jsonl" 2>"$work/err" &
tracer_pid=$!
for i in $(seq 1 720); do
	grep -q "probes attached" "$work/err" && break
	kill -0 "$tracer_pid" 2>/dev/null || break
	sleep 0.5
done
grep -q "probes attached" "$work/err" || { cat "$work/err"; die "tool did not start"; }

mkdir "$mnt/d" &
mkdir_pid=$!
wait $mkdir_pid
dd if=/dev/zero of="$mnt/d/f" bs=64k count=4 conv=fsync status=none &
write_pid=$!
wait $write_pid
echo 3 >/proc/sys/vm/drop_caches
dd if="$mnt/d/f" of=/dev/null bs=64k iflag=direct status=none &
read_pid=$!
wait $read_pid
stat "$mnt/d/f" >/dev/null &
stat_pid=$!
wait $stat_pid
rm "$mnt/d/f" &
rm_pid=$!
wait $rm_pid
rmdir "$mnt/d"
sleep 1.5
kill -INT "$tracer_pid"
wait "$tracer_pid"
tracer_pid=

check "every line is valid JSON" jq -e . "$work/out.jsonl"
check "every line is valid against docs/record.schema.json" schema_valid "$work/out.jsonl"

timings()
{
	q --arg m "$mnt" -e '
		[.[] | select(.type == "rpc" and .proto == "sunrpc")] as $r
		| ($r | map(.op) | group_by(.) | map({(.[0]): length}) | add | tostring | debug)
		| [$r[] | select((
			(.program == "nfs" or .program == "nfs_acl") and .version == 3
			and (.mount == $m or (.mount == null and .parent_op_id == null))
			and (.backlog_ns | type) == "number" and (.rtt_ns | type) == "number"
			and (.execute_ns | type) == "number" and .execute_ns > 0
			and .execute_ns >= .rtt_ns and .latency_ns == .execute_ns
			and (.req_id | type) == "number") | not)] as $bad
		| ($bad | map(del(.host, .ts)) | tostring | ("bad: " + .) | debug)
		| ($r | length) > 0 and ($bad | length) == 0
		and any($r[]; .program == "nfs" and .op == "write" and .rtt_ns > 0)'
}
# The mount of an RPC outside any access op (the ACCESS of a path walk) is
# known only once an RPC inside one taught the client's mount: else null.
check "sunrpc records: nfs/nfs_acl v3 on the mount, with backlog_ns, rtt_ns, execute_ns, xid" \
	timings

# linked PID OP ACCESS_OP: every rpc OP of PID links to an ACCESS_OP record of PID.
linked()
{
	q --argjson p "$1" --arg op "$2" --arg aop "$3" -e '
		[.[] | select(.type == "access" and .pid == $p and .op == $aop)] as $acc
		| [.[] | select(.type == "rpc" and .proto == "sunrpc" and .pid == $p and .op == $op)]
			as $r
		| ($r | map({op, parent_op_id, worker_comm}) | tostring | debug)
		| ($r | length) >= 1
		and all($r[]; .parent_op_id as $id | any($acc[]; .op_id == $id
			and .rpc_count >= 1 and .rpc_wait_ns >= 1))'
}
check "MKDIR of mkdir links to its mkdir access op (charged)" linked "$mkdir_pid" mkdir mkdir
check "REMOVE of rm links to its unlink access op (charged)" linked "$rm_pid" remove unlink

getattr_linked()
{
	q --argjson p "$stat_pid" -e '
		[.[] | select(.type == "access" and .pid == $p and .op == "getattr") | .op_id] as $g
		| any(.[]; .type == "rpc" and .op == "getattr" and .pid == $p
			and (.parent_op_id as $id | $g | index($id) != null))'
}
check "GETATTR of stat links to its getattr access op" getattr_linked

# async PID OP: RPCs completed by a kworker, still PID's and linked to its ops.
async_linked()
{
	q --argjson p "$1" --arg op "$2" -e '
		[.[] | select(.type == "access" and .pid == $p)] as $acc
		| [.[] | select(.type == "rpc" and .proto == "sunrpc" and .op == $op)] as $r
		| ($r | map({comm, pid, worker_comm, parent_op_id}) | tostring | debug)
		| ($r | length) >= 1 and all($r[]; .pid == $p
			and (.worker_comm // "" | startswith("kworker"))
			and (.parent_op_id as $id | any($acc[]; .op_id == $id)))
		and ([$acc[] | .rpc_wait_ns] | add) > 0'
}
check "WRITE (writeback at fsync, done in a kworker) is dd's, linked and charged" \
	async_linked "$write_pid" write
check "READ (direct I/O, done in a kworker) is dd's, linked and charged" \
	async_linked "$read_pid" read

inflight_zero()
{
	q -e '[.[] | select(.type == "stats" and .final)] | length == 1
		and .[0].inflight.by_proto.sunrpc == 0 and .[0].inflight.total == 0'
}
check "final stats: no sunrpc request in flight" inflight_zero

probe_hits()
{
	q -e '[.[] | select(.type == "stats" and .final)][0].probe_hits
		| .rpc_task_begin > 0 and .rpc_stats_latency > 0 and .rpc_task_end > 0'
}
check "probe hits of rpc_task_begin, rpc_task_end, rpc_stats_latency" probe_hits

verifier()
{
	LES_RPC_VERIFIER_REQUIRE=sunrpc,fentry LES_BUILD=$build LES_SRC=$src \
		bash "$src/test/e2e/25_rpc_verifier.sh"
}
check "25_rpc_verifier.sh with sunrpc loaded: tp_btf programs load" verifier

say "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
