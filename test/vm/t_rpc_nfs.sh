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
#
# The server side and the join (docs/nfs.md): nfsd's srv records, counted
# per procedure, equal nfsd's own counts (/proc/net/rpc/nfsd, proc3) over
# the run; the client's records equal the client's per-op counts
# (/proc/self/mountstats); every client request is joined to its server
# record on (client address and port, xid), none left unjoined on either
# side; the server's arrival to reply lies inside the client's rtt, and
# the reads and writes carry nfsd's file I/O time.
set -u

# shellcheck source=test/vm/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
# shellcheck source=test/vm/nfs-setup.sh
. "$here/nfs-setup.sh"
guest_init t_rpc_nfs
mnt=$work/v3

cleanup()
{
	tracer_kill
	nfs_teardown "$mnt"
	guest_remove_work
}
trap cleanup EXIT

q()
{
	jq -s "$@" "$work/out.jsonl"
}

guest_require_tool
nfs_server_start "$work/export" || die "cannot start the NFS server"
NFS_MOUNT_OPTS=noac nfs_mount 3 "$work/export" "$mnt" || die "cannot mount NFSv3"

list_probes()
{
	"$tool" --list-probes=json >"$work/probes.json" || return 1
	jq -c '.probes[] | select(.proto == "sunrpc")' "$work/probes.json"
	[ "$(jq '[.probes[] | select(.proto == "sunrpc" and .method == "tp_btf")] | length' \
		"$work/probes.json")" = 11 ]
}
check "--list-probes: the 11 sunrpc and nfsd tracepoints by tp_btf (client and server)" list_probes

# nfsd's per-procedure counts of NFSv3 (proc3: the count of procedures, then one per procedure).
nfsd_proc3()
{
	awk '$1 == "proc3" { for (i = 3; i <= NF; i++) print i - 3, $i }' /proc/net/rpc/nfsd
}

# The client's per-op counts on the mount (mountstats: "OP: ops trans ...").
client_ops()
{
	awk -v m="$mnt" '$1 == "device" { on = ($5 == m) } on && $1 ~ /^[A-Z_]+:$/ && NF > 2 {
		print tolower(substr($1, 1, length($1) - 1)), $2 }' /proc/self/mountstats
}

tracer_start 360 "" "$work/err" \
	"$tool" -v --mount "$mnt" --stats-interval 1s -o "$work/out.jsonl" || die "tool did not start"
nfsd_proc3 >"$work/nfsd.before"
client_ops >"$work/client.before"

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
nfsd_proc3 >"$work/nfsd.after"
client_ops >"$work/client.after"
tracer_stop
tool_status=$?

check "the tool exits 0" tracer_exited_ok "$tool_status" "$work/err"
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

# DELTA BEFORE AFTER: "key count" lines, after less before, the keys that moved.
delta()
{
	awk 'NR == FNR { b[$1] = $2; next } $2 - b[$1] > 0 { print $1, $2 - b[$1] }' "$1" "$2"
}

# nfsd's own counts against its srv records, procedure by procedure (NFSv3).
server_counts()
{
	delta "$work/nfsd.before" "$work/nfsd.after" | sort >"$work/nfsd.delta"
	q -r '.[] | select(.type == "srv" and .proto == "sunrpc" and .program == 100003
		and .version == 3) | .opcode' | sort -n | uniq -c | awk '{ print $2, $1 }' |
		sort >"$work/srv.counts"
	echo "nfsd: $(tr '\n' ' ' <"$work/nfsd.delta")"
	echo "srv:  $(tr '\n' ' ' <"$work/srv.counts")"
	[ -s "$work/nfsd.delta" ] && cmp -s "$work/nfsd.delta" "$work/srv.counts"
}
check "srv records per NFSv3 procedure = nfsd's counts (/proc/net/rpc/nfsd proc3)" server_counts

# The client's counts (mountstats) against its rpc records, op by op (nfs v3).
client_counts()
{
	delta "$work/client.before" "$work/client.after" | sort >"$work/client.delta"
	q -r '.[] | select(.type == "rpc" and .proto == "sunrpc" and .program == "nfs"
		and .version == 3) | .op' | sort | uniq -c | awk '{ print $2, $1 }' |
		sort >"$work/rpc.counts"
	echo "mountstats: $(tr '\n' ' ' <"$work/client.delta")"
	echo "rpc:        $(tr '\n' ' ' <"$work/rpc.counts")"
	[ -s "$work/client.delta" ] && cmp -s "$work/client.delta" "$work/rpc.counts"
}
check "client rpc records per NFSv3 op = the client's counts (/proc/self/mountstats)" client_counts

# Every client request joined to its server record, and nothing left over.
all_joined()
{
	q -e '[.[] | select(.type == "rpc" and .proto == "sunrpc")] as $c
		| [.[] | select(.type == "srv" and .proto == "sunrpc")] as $s
		| [.[] | select(.type == "rpc_join" and .proto == "sunrpc")] as $j
		| ([.[] | select(.type == "stats" and .final)][0].join) as $n
		| ({client: ($c | length), server: ($s | length), joined: ($j | length),
			stats: $n} | tostring | debug)
		| ($c | length) > 0 and ($j | length) == ($c | length)
		and ($j | length) == ($s | length)
		and all($c[]; .local_addr != null)
		and ([$c[] | {k: "\(.local_addr) \(.req_id)"}] | unique | length) == ($c | length)
		and $n.client.unjoined == 0 and $n.server.unjoined == 0
		and $n.client.pending == 0 and $n.server.pending == 0
		and $n.client.no_key == 0 and $n.server.no_key == 0'
}
check "every client sunrpc request joined to its server record on (client address:port, xid)" \
	all_joined

# The server's arrival -> reply lies inside the client's rtt; reads and writes timed in nfsd.
server_inside_client()
{
	q -e '[.[] | select(.type == "rpc_join" and .proto == "sunrpc")] as $j
		| [$j[] | select((.network_ns >= 0 and .server_reply_ns != null
			and .server_reply_ns <= .client_service_ns
			and .server_queue_ns + .server_handle_ns == .server_total_ns) | not)] as $bad
		| ($bad | tostring | ("bad: " + .) | debug)
		| ([$j[] | {op: .opcode_name, network_ns, server_queue_ns, server_handle_ns,
			server_io_ns, client_service_ns}] | .[0:6] | tostring | debug)
		| ($bad | length) == 0
		and any($j[]; .opcode_name == "read" and .server_io_ns > 0)
		and any($j[]; .opcode_name == "write" and .server_io_ns > 0)'
}
check "joined: server arrival->reply inside the client's rtt (network_ns >= 0); READ and WRITE with nfsd's I/O time" \
	server_inside_client

# fuse is loaded for its BTF: the FUSE function programs read struct fuse_req by CO-RE.
verifier()
{
	modprobe -d "$LES_VM_MODDIR" fuse || return 1
	LES_RPC_VERIFIER_REQUIRE=sunrpc,fentry LES_BUILD=$build LES_SRC=$src \
		bash "$src/test/e2e/25_rpc_verifier.sh"
}
check "25_rpc_verifier.sh with sunrpc loaded: tp_btf programs load" verifier

cell_by_checks nfs rpc tp_btf
guest_done
