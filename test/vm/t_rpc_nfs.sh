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
#
# An injected server delay (docs/nfs.md, "An injected server delay"): a
# second export on a slow disk (nfs_slow_export: dm-delay holding each
# write 300 ms, under ext4, exported sync). dd writes three 4 KiB blocks
# to it with O_DIRECT, three FILE_SYNC WRITEs that nfsd writes and syncs
# inside its write: each one's rpc_join line must have the delay in
# server_io_ns and nothing like it in any other layer. The oracles: the
# mount's WRITE rtt in mountstats, and the dm device's own write time.
# Planted faults, LES_NFS_DELAY_PLANT: "plain" (nfs-setup.sh), a disk
# without the delay target, must fail the delay checks; "network", the
# same delay on the loopback wire too (netem) while dd writes, must fail
# the check that no other layer holds it.
set -u

# shellcheck source=test/vm/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
# shellcheck source=test/vm/nfs-setup.sh
. "$here/nfs-setup.sh"
guest_init t_rpc_nfs
mnt=$work/v3
slow=$work/slow-v3
slow_export=$work/slow
# The injected delay of each write on the slow export's disk, and how much
# less a measured one may be (dm-delay holds a bio at least the delay,
# rounded up to jiffies: the slack is the clocks', not the target's).
delay_ms=300
slack_ms=10
nblocks=3

cleanup()
{
	tracer_kill
	nfs_teardown "$mnt" "$slow"
	nfs_slow_teardown "$slow_export"
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
slow_setup()
{
	NFS_SLOW_BLOCKS=$nblocks nfs_slow_export "$slow_export" "$delay_ms" &&
		nfs_mount 3 "$slow_export" "$slow" && dmsetup table 2>&1
}
check "a slow export: loop -> dm-delay ($delay_ms ms a write) -> ext4, exported sync, mounted NFSv3" \
	slow_setup || die "cannot set up the slow export (see above)"

list_probes()
{
	"$tool" --list-probes=json >"$work/probes.json" || return 1
	jq -c '.probes[] | select(.proto == "sunrpc")' "$work/probes.json"
	[ "$(jq '[.probes[] | select(.proto == "sunrpc" and .method == "tp_btf")] | length' \
		"$work/probes.json")" = 12 ]
}
check "--list-probes: the 12 sunrpc and nfsd tracepoints by tp_btf (client and server)" list_probes

# nfsd's per-procedure counts of NFSv3 (proc3: the count of procedures, then one per procedure).
nfsd_proc3()
{
	awk '$1 == "proc3" { for (i = 3; i <= NF; i++) print i - 3, $i }' /proc/net/rpc/nfsd
}

# The client's per-op counts on both mounts, summed (mountstats: "OP: ops
# trans ...").
client_ops()
{
	awk -v m="$mnt" -v s="$slow" '$1 == "device" { on = ($5 == m || $5 == s) }
		on && $1 ~ /^[A-Z_]+:$/ && NF > 2 { n[tolower(substr($1, 1, length($1) - 1))] += $2 }
		END { for (op in n) print op, n[op] }' /proc/self/mountstats
}

# The slow mount's WRITE line in mountstats: ops, then the queue, rtt and
# execute totals in ms ("WRITE: ops trans timeouts sent recv queue rtt
# execute errors").
slow_writes()
{
	awk -v m="$slow" '$1 == "device" { on = ($5 == m) } on && $1 == "WRITE:" {
		print $2, $7, $8, $9 }' /proc/self/mountstats
}

# The slow disk's own count of writes and their time in ms (the block
# layer's stat of the device under the export, by its numbers: without
# udev /dev/mapper's node is no link to the kernel's name; fields 5 and 8).
slow_disk()
{
	local maj min

	read -r maj min <<<"$(stat -L -c '%t %T' "$nfs_slow_dev")"
	awk '{ print $5, $8 }' "/sys/dev/block/$((16#$maj)):$((16#$min))/stat"
}

tracer_start 360 "" "$work/err" \
	"$tool" -v --mount "$mnt" --mount "$slow" --stats-interval 1s -o "$work/out.jsonl" ||
	die "tool did not start"
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
slow_writes >"$work/slow.before"
slow_disk >"$work/disk.before"
[ "${LES_NFS_DELAY_PLANT:-}" = network ] && tc qdisc add dev lo root netem delay "${delay_ms}ms"
t0=$(cut -d' ' -f1 /proc/uptime)
dd if=/dev/zero of="$slow/f" bs=4k count=$nblocks oflag=direct conv=notrunc status=none &
slow_pid=$!
wait $slow_pid
say "the $nblocks writes to the slow export took $(awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" \
	'BEGIN { printf "%.2f", b - a }') s"
[ "${LES_NFS_DELAY_PLANT:-}" = network ] && tc qdisc del dev lo root
slow_writes >"$work/slow.after"
slow_disk >"$work/disk.after"
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
	q --arg m "$mnt" --arg s "$slow" -e '
		[.[] | select(.type == "rpc" and .proto == "sunrpc")] as $r
		| ($r | map(.op) | group_by(.) | map({(.[0]): length}) | add | tostring | debug)
		| [$r[] | select((
			(.program == "nfs" or .program == "nfs_acl") and .version == 3
			and (.mount == $m or .mount == $s
				or (.mount == null and .parent_op_id == null))
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
check "sunrpc records: nfs/nfs_acl v3 on the mounts, with backlog_ns, rtt_ns, execute_ns, xid" \
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

# async PID OP: RPCs completed by a kworker, still PID's and linked to its ops
# (those of the first mount: the slow one has its own checks below).
async_linked()
{
	q --argjson p "$1" --arg op "$2" --arg s "$slow" -e '
		[.[] | select(.type == "access" and .pid == $p)] as $acc
		| [.[] | select(.type == "rpc" and .proto == "sunrpc" and .op == $op
			and .mount != $s)] as $r
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
		| .rpc_task_begin > 0 and .rpc_stats_latency > 0 and .rpc_task_end > 0
		and .svc_xprt_enqueue > 0 and .svc_send > 0'
}
check "probe hits of rpc_task_begin, rpc_task_end, rpc_stats_latency; the server's svc_xprt_enqueue, svc_send" probe_hits

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
check "client rpc records per NFSv3 op = the client's counts (/proc/self/mountstats, both mounts)" \
	client_counts

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

# The injected WRITEs' joins: dd's WRITE records on the slow mount, by
# their xid (req_id).
slow_joins()
{
	q --argjson p "$slow_pid" --arg m "$slow" '
		[.[] | select(.type == "rpc" and .proto == "sunrpc" and .op == "write"
			and .pid == $p and .mount == $m) | .req_id] as $ids
		| [.[] | select(.type == "rpc_join" and .proto == "sunrpc" and .pid == $p
			and (.req_id as $x | $ids | index($x) != null))]
		| {ids: ($ids | length), joins: .}'
}

# Each injected WRITE: the delay in nfsd's file I/O (server_io_ns at least
# the delay, less the slack), inside the handling, and every other layer
# (client backlog, network, server queue, handling outside the I/O) below
# half the delay: the delay in its own layer and not in the others.
delay_in_io()
{
	slow_joins | jq -e --argjson n "$nblocks" --argjson d "$((delay_ms * 1000000))" \
		--argjson sl "$((slack_ms * 1000000))" '
		(.joins[] | {xid: .req_id, op: .opcode_name, client_queued_ns, network_ns,
			server_queue_ns, server_handle_ns, server_io_ns, client_service_ns}
			| tostring | debug | empty),
		(. as $o | $o.ids == $n and ($o.joins | length) == $n
		and all($o.joins[]; .opcode_name == "write"
			and .server_io_ns >= $d - $sl
			and .server_handle_ns >= .server_io_ns
			and .client_queued_ns < $d / 2 and .network_ns < $d / 2
			and .server_queue_ns < $d / 2
			and .server_handle_ns - .server_io_ns < $d / 2))'
}
check "injected delay: each of the $nblocks slow WRITEs has server_io_ns >= $delay_ms ms - $slack_ms, inside handling; backlog, network, server queue, handling outside I/O < $((delay_ms / 2)) ms" \
	delay_in_io

# The oracles, apart from the tool. The client's own per-op totals of the
# slow mount (mountstats: WRITE ops and rtt, the same rtt the tracepoint
# hands the tool, summed in ns and shown in ms) and the disk's own write
# count and time (the block layer's stat of the dm device: dm accounts a
# write from its arrival to its completion, the delay included). They can
# tell that the slow mount's WRITEs took the delay on the wire and that
# the disk held its writes that long; they cannot tell which server layer
# the time was spent in, nor tie a disk write to a WRITE: that is the
# tool's join.
delay_oracles()
{
	local ops=0 rtt=0 disk_w=0 disk_ms=0

	# (No process substitution: the guest has no /dev/fd.)
	read -r ops _ rtt _ <<<"$(paste -d' ' "$work/slow.before" "$work/slow.after" |
		awk '{ print $5 - $1, $6 - $2, $7 - $3, $8 - $4 }')"
	read -r disk_w disk_ms <<<"$(paste -d' ' "$work/disk.before" "$work/disk.after" |
		awk '{ print $3 - $1, $4 - $2 }')"
	echo "mountstats WRITE: $ops ops, rtt $rtt ms; disk: $disk_w writes, $disk_ms ms"
	slow_joins | jq -e --argjson n "$nblocks" --argjson ops "${ops:-0}" \
		--argjson rtt "${rtt:-0}" --argjson w "${disk_w:-0}" --argjson dms "${disk_ms:-0}" \
		--argjson d "$delay_ms" --argjson sl "$slack_ms" '
		(([.joins[].client_service_ns] | add // 0) / 1e6) as $tool_rtt
		| ({tool_rtt_ms: $tool_rtt} | tostring | debug)
		| $ops == $n and $rtt >= $n * ($d - $sl)
		and ($tool_rtt - $rtt) >= -1 and ($tool_rtt - $rtt) <= 1
		and $w >= $n and $dms >= $w * ($d - $sl)'
}
check "oracles: mountstats' slow WRITEs ($nblocks, rtt total >= $nblocks x $delay_ms ms - slack, = the joins' client_service_ns within 1 ms); the dm disk's writes each >= $delay_ms ms - slack" \
	delay_oracles

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
