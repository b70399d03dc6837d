#!/bin/bash
# t_lustre_standin.sh: the Lustre stand-in module (test/vm/lustre) in the
# stock-kernel guest, run by
#   test/vm/run-in-vm test/vm/t_lustre_standin.sh
# It proves what the Lustre probe tests rely on: the module loads without
# BTF, its llite/PtlRPC/LDLM functions are in kallsyms and kprobes on them
# fire and read the documented request fields, a mount of type lustre runs
# a file workload correctly, and the injection knobs do exactly what they
# say (latency, resends, expiries, not-connected, restarts, lock waits,
# asynchronous completion by ptlrpcd_00_00 on behalf of the submitter).
#
# LES_TEST_VERBOSE=1 shows what each passing check saw, too.
# The module comes from $LES_LUSTRE_KO, else from build-module's cache
# (build-module on the host fills it), else it is built in the guest (slow).
set -u

# shellcheck source=test/vm/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
guest_init t_lustre_standin
scratch=$work
mod=$lustre_mod
tracing=/sys/kernel/tracing
group=les_lustre_t
mnt=$scratch/mnt

# Functions a tracer attaches to; all must be in kallsyms.
probed_functions="ll_lookup_nd ll_atomic_open ll_create_nd ll_mknod ll_mkdir
	ll_symlink ll_link ll_unlink ll_rmdir ll_rename ll_getattr ll_setattr
	ll_listxattr ll_get_acl ll_get_link ll_statfs ll_file_open
	ll_file_release ll_file_read_iter ll_file_write_iter ll_file_seek ll_fsync
	ll_dir_open ll_dir_release ll_iterate ll_xattr_get_common
	ll_xattr_set_common ptlrpc_request_alloc ptlrpc_request_pack
	ptlrpc_queue_wait ptlrpc_send_new_req ptl_send_rpc ptlrpc_req_put
	__ptlrpc_free_req ptlrpc_resend_req ptlrpc_restart_req
	ptlrpc_expire_one_request ptlrpc_request_handle_notconn ptlrpcd_add_req
	ldlm_cli_enqueue ldlm_completion_ast"

cleanup()
{
	echo 0 >"$tracing/events/$group/enable" 2>/dev/null
	local events

	# Read first: tracefs takes the removals as they are written.
	events=$(grep -o "^[pr]:$group/[a-z_]*" "$tracing/kprobe_events" 2>/dev/null)
	[ -n "$events" ] && echo "${events//[pr]:/-:}" >>"$tracing/kprobe_events"
	mountpoint -q "$mnt" && umount "$mnt"
	[ -d "/sys/module/$mod" ] && rmmod "$mod"
	rm -rf "$scratch"
}

# Milliseconds since the epoch, without forking.
now_ms()
{
	local t=${EPOCHREALTIME/./}

	echo $((t / 1000))
}

# ---- module ----

load_module()
{
	local ko

	ko=$(find_module) || return 1
	echo "module: $ko"
	insmod "$ko" && [ -d "/sys/module/$mod" ]
}

# Like Lustre on a distribution kernel: no module BTF, so fentry cannot
# attach and a tracer must use kprobes. vmlinux BTF proves the check can
# see BTF at all.
no_module_btf()
{
	[ -r /sys/kernel/btf/vmlinux ] || { echo "no /sys/kernel/btf/vmlinux"; return 1; }
	[ ! -e "/sys/kernel/btf/$mod" ] || { echo "/sys/kernel/btf/$mod exists"; return 1; }
}

symbols_in_kallsyms()
{
	local f missing=""

	grep "\[$mod\]" /proc/kallsyms | awk '{print $3}' >"$scratch/syms"
	for f in $probed_functions; do
		grep -qx "$f" "$scratch/syms" || missing="$missing $f"
	done
	[ -z "$missing" ] || { echo "missing:$missing"; return 1; }
}

# Every published field offset (request_layout) is what standin.h says.
layout_published()
{
	local want="rq_type=0 rq_status=4 rq_xid=8 rq_opc=16 rq_phase=20 rq_send_state=24 rq_submitter_pid=28 rq_reqmsg=32 rq_import=40 rq_sent_ns=48"

	[ "$(param request_layout)" = "$want" ] || { param request_layout; return 1; }
}

# ---- mount and workload ----

mount_standin()
{
	mkdir -p "$mnt" &&
		mount -t lustre -o flock,user_xattr 10.0.0.1@tcp:/standin "$mnt" &&
		awk -v m="$mnt" '$5 == m' /proc/self/mountinfo >"$scratch/mi" &&
		grep -q ' - lustre 10.0.0.1@tcp:/standin ' "$scratch/mi" ||
		{ cat "$scratch/mi"; return 1; }
}

statfs_magic()
{
	[ "$(stat -f -c %t "$mnt")" = bd00bd0 ]
}

write_and_read_back()
{
	dd if=/dev/urandom of="$scratch/src" bs=64k count=16 status=none &&
		mkdir "$mnt/d" &&
		dd if="$scratch/src" of="$mnt/d/f" bs=64k status=none &&
		dd if="$mnt/d/f" of="$scratch/back" bs=16k status=none &&
		cmp "$scratch/src" "$scratch/back" &&
		[ "$(stat -c %s "$mnt/d/f")" = 1048576 ]
}

# Run a step; say which one failed.
step()
{
	"$@" || { echo "step failed: $*"; return 1; }
}

same()
{
	[ "$1" = "$2" ] || { echo "got '$1', want '$2'"; return 1; }
}

namespace_ops()
{
	local d=$mnt/d

	step sh -c "echo hello >$d/small" &&
		step ln -s small "$d/link" &&
		step same "$(readlink "$d/link")" small &&
		step same "$(cat "$d/link")" hello &&
		step ln "$d/small" "$d/hard" &&
		step same "$(stat -c %h "$d/small")" 2 &&
		step mv "$d/hard" "$d/moved" &&
		step mkdir "$d/sub" &&
		step same "$(ls "$d" | tr '\n' ' ')" "f link moved small sub " &&
		step truncate -s 3 "$d/small" &&
		step same "$(cat "$d/small")" hel &&
		step same "$(rmdir "$d" 2>&1)" "rmdir: failed to remove '$d': Directory not empty" &&
		step rm "$d/link" "$d/moved" "$d/small" &&
		step rmdir "$d/sub" &&
		step same "$(ls "$d")" f
}

xattrs()
{
	setfattr -n user.job -v standin "$mnt/d/f" &&
		[ "$(getfattr --only-values -n user.job "$mnt/d/f")" = standin ] &&
		getfattr -d "$mnt/d/f" | grep -q '^user.job="standin"' &&
		setfattr -x user.job "$mnt/d/f" &&
		! getfattr -n user.job "$mnt/d/f" 2>/dev/null
}

umask_applies()
{
	(umask 027 && : >"$mnt/d/masked") &&
		[ "$(stat -c %a "$mnt/d/masked")" = 640 ] && rm "$mnt/d/masked"
}

quiescent()
{
	local sent freed

	sent=$(param requests_sent)
	freed=$(param requests_freed)
	[ "$(param requests_in_flight)" = 0 ] && [ "$sent" = "$freed" ] && [ "$sent" -gt 0 ] ||
		{ echo "sent=$sent freed=$freed in_flight=$(param requests_in_flight)"; return 1; }
}

# ---- kprobes through tracefs: what a tracer sees ----

add_kprobe()
{
	echo "$1" >>"$tracing/kprobe_events"
}

# Opcode both from the stand-in field and from the wire message, as a
# tracer would read it on a real client: rq_reqmsg (+32) -> the body after
# the header (32 bytes + 4 per buffer, padded to 8: 40 for one or two
# buffers) -> pb_opc (+16).
setup_kprobes()
{
	add_kprobe "p:$group/qwait ptlrpc_queue_wait xid=+8(%di):u64 opc=+16(%di):u32 sub=+28(%di):s32 bufs=+0(+32(%di)):u32 wire=+56(+32(%di)):u32" &&
		add_kprobe "r:$group/qwait_ret ptlrpc_queue_wait rc=\$retval:s32" &&
		add_kprobe "p:$group/send ptlrpc_send_new_req xid=+8(%di):u64 opc=+16(%di):u32 sub=+28(%di):s32" &&
		add_kprobe "p:$group/free __ptlrpc_free_req xid=+8(%di):u64 opc=+16(%di):u32 sub=+28(%di):s32" &&
		add_kprobe "p:$group/addreq ptlrpcd_add_req xid=+8(%di):u64 opc=+16(%di):u32 sub=+28(%di):s32" &&
		add_kprobe "p:$group/resend ptlrpc_resend_req xid=+8(%di):u64 sub=+28(%di):s32" &&
		add_kprobe "p:$group/getattr ll_getattr" &&
		add_kprobe "r:$group/write_ret ll_file_write_iter rc=\$retval:s64" &&
		add_kprobe "p:$group/cp ldlm_completion_ast flags=%si:x64" &&
		echo 1 >"$tracing/events/$group/enable"
}

trace_reset()
{
	echo >"$tracing/trace"
}

# Trace lines of EVENT: "<comm>-<pid> <seconds> <fields>".
trace_events()
{
	grep " $1: " "$tracing/trace" |
		sed -E 's/^ *(.+)-([0-9]+) +\[[0-9]+\] [^ ]+ +([0-9.]+): [a-z_]+: \([^)]*\) ?/\1 \2 \3 /'
}

# stat's MDS_GETATTR (33) seen by a kprobe, field and wire agree.
kprobe_reads_opcode()
{
	trace_reset
	stat "$mnt/d/f" >/dev/null || return 1
	trace_events qwait | grep '^stat ' >"$scratch/ev"
	cat "$scratch/ev"
	grep -q ' opc=33 .*bufs=1 wire=33$' "$scratch/ev" &&
		[ "$(trace_events getattr | grep -c '^stat ')" -ge 1 ]
}

# The submitter field holds the pid of the task that made the request.
kprobe_reads_submitter()
{
	trace_events qwait | awk '{ split($0, a, "sub="); split(a[2], b, " ");
		if (b[1] != $2) bad = 1; n++ } END { exit (n == 0 || bad) }'
}

# MDS_REINT (36) has two buffers; the reint record does not move pb_opc.
kprobe_reads_reint_opcode()
{
	trace_reset
	mkdir "$mnt/d/r" && rmdir "$mnt/d/r" || return 1
	trace_events qwait | grep '^mkdir ' >"$scratch/ev"
	cat "$scratch/ev"
	grep -q ' opc=36 .*bufs=2 wire=36$' "$scratch/ev"
}

# ---- injection ----

stat_takes_latency()
{
	local t0 t1

	set_param rpc_latency_ms 50
	t0=$(now_ms)
	stat "$mnt/d/f" >/dev/null
	t1=$(now_ms)
	set_param rpc_latency_ms 0
	echo "stat took $((t1 - t0)) ms"
	[ $((t1 - t0)) -ge 50 ]
}

# queue_wait entry -> return of that stat is >= the injected latency.
queue_wait_takes_latency()
{
	trace_reset
	set_param rpc_latency_ms 50
	stat "$mnt/d/f" >/dev/null
	set_param rpc_latency_ms 0
	# (no process substitution: the guest has no /dev/fd)
	trace_events qwait | grep '^stat ' | awk '{print $3}' >"$scratch/t0"
	trace_events qwait_ret | grep '^stat ' | awk '{print $3}' >"$scratch/t1"
	paste "$scratch/t0" "$scratch/t1" |
		awk '{ d = ($2 - $1) * 1000; print "queue_wait " d " ms"; if (d < 50) bad = 1; n++ }
			END { exit (n == 0 || bad) }'
}

exactly_three_resends()
{
	local before after _

	before=$(param resends)
	trace_reset
	set_param resend_count 3
	for _ in 1 2 3 4 5; do
		stat "$mnt/d/f" >/dev/null || return 1
	done
	after=$(param resends)
	echo "resends: $before -> $after, budget left $(param resend_count)"
	[ $((after - before)) = 3 ] && [ "$(param resend_count)" = 0 ] || return 1
	# Seen by a kprobe, from stat, with stat's pid as the submitter.
	trace_events resend >"$scratch/ev"
	cat "$scratch/ev"
	[ "$(grep -c '^stat ' "$scratch/ev")" = 3 ] &&
		awk '{ split($0, a, "sub="); if (a[2] + 0 != $2) bad = 1 } END { exit bad }' "$scratch/ev"
}

one_fault_each()
{
	local name counter before

	for name in expire notconn restart; do
		counter=${name}s
		before=$(param "$counter")
		set_param "${name}_count" 1
		stat "$mnt/d/f" >/dev/null && stat "$mnt/d/f" >/dev/null || return 1
		echo "$counter: $before -> $(param "$counter")"
		[ $(($(param "$counter") - before)) = 1 ] || return 1
	done
}

lock_wait_on_first_read()
{
	local before t0 t1

	# Created, never written: no extent lock cached, the read enqueues one.
	: >"$mnt/d/lockme2" || return 1
	before=$(param lock_waits)
	set_param lock_wait_ms 100
	trace_reset
	t0=$(now_ms)
	cat "$mnt/d/lockme2" >/dev/null
	t1=$(now_ms)
	set_param lock_wait_ms 0
	rm "$mnt/d/lockme2"
	echo "cat took $((t1 - t0)) ms, lock_waits $before -> $(param lock_waits)"
	[ $((t1 - t0)) -ge 100 ] && [ "$(param lock_waits)" -gt "$before" ] &&
		trace_events cp | grep -q '^cat .*flags=0x2$'
}

# With async_writes, OST_WRITE is queued by dd and sent and freed by
# ptlrpcd_00_00, which still carries dd's pid as the submitter; dd's write
# returns before the request is freed.
async_write_in_ptlrpcd()
{
	local dd_pid free_line write_ret free_ts

	set_param async_writes 1
	set_param rpc_latency_ms 0
	trace_reset
	: >"$mnt/d/async" || return 1
	set_param rpc_latency_ms 300
	dd if=/dev/zero of="$mnt/d/async" bs=4k count=1 status=none
	set_param rpc_latency_ms 0
	# fsync (via a second dd) waits for the async write.
	dd if=/dev/zero of="$mnt/d/async" bs=4k count=1 seek=1 conv=notrunc,fsync status=none
	set_param async_writes 0
	trace_events addreq | grep ' opc=4 ' >"$scratch/add"
	trace_events send | grep ' opc=4 ' >"$scratch/send"
	trace_events free | grep ' opc=4 ' >"$scratch/free"
	cat "$scratch/add" "$scratch/send" "$scratch/free"
	[ "$(wc -l <"$scratch/add")" = 2 ] || { echo "expected 2 queued OST_WRITEs"; return 1; }
	dd_pid=$(head -n 1 "$scratch/add" | awk '$1 == "dd" {print $2}')
	[ -n "$dd_pid" ] || { echo "first OST_WRITE not queued by dd"; return 1; }
	! cat "$scratch/send" "$scratch/free" | grep -v '^ptlrpcd_00_00 ' ||
		{ echo "OST_WRITE sent or freed outside ptlrpcd"; return 1; }
	[ "$(wc -l <"$scratch/free")" = 2 ] || { echo "expected 2 freed OST_WRITEs"; return 1; }
	free_line=$(grep " sub=$dd_pid\$" "$scratch/free" | head -n 1)
	[ -n "$free_line" ] || { echo "no free attributed to dd ($dd_pid)"; return 1; }
	free_ts=$(echo "$free_line" | awk '{print $3}')
	write_ret=$(trace_events write_ret | awk -v p="$dd_pid" '$1 == "dd" && $2 == p {print $3; exit}')
	echo "dd's write returned at $write_ret, its OST_WRITE freed at $free_ts"
	awk -v w="$write_ret" -v f="$free_ts" 'BEGIN { exit !(w != "" && w + 0.2 < f) }'
}

freed_by_ptlrpcd_counted()
{
	[ "$(param requests_freed_by_ptlrpcd)" -ge 2 ]
}

unmount_and_unload()
{
	umount "$mnt" && rmmod "$mod" && [ ! -d "/sys/module/$mod" ]
}

main()
{
	trap cleanup EXIT
	check "running in the guest (LES_VM=1)" test "${LES_VM:-}" = 1
	if [ "$failed" -ne 0 ]; then
		echo "t_lustre_standin: not inside the qemu guest; run: test/vm/run-in-vm $0"
		exit 1
	fi
	check "insmod $mod" load_module
	if [ "$failed" -ne 0 ]; then
		say "cannot continue without the module"
		guest_done
		exit 1
	fi
	check "no module BTF (/sys/kernel/btf/$mod absent)" no_module_btf
	check "llite/PtlRPC/LDLM functions in /proc/kallsyms" symbols_in_kallsyms
	check "request_layout is the documented one" layout_published
	check "mount -t lustre 10.0.0.1@tcp:/standin" mount_standin
	check "statfs reports LL_SUPER_MAGIC" statfs_magic
	check "1 MiB dd write, read back identical, stat size" write_and_read_back
	check "symlink, hard link, rename, mkdir, ls, truncate, rm, rmdir" namespace_ops
	check "user xattrs set, get, list, remove" xattrs
	check "umask applies (SB_POSIXACL without ACLs)" umask_applies
	check "requests all freed, none in flight" quiescent
	check "kprobes on ll_*/ptlrpc_* attach" setup_kprobes
	check "kprobe reads opcode MDS_GETATTR from field and wire" kprobe_reads_opcode
	check "kprobe reads the submitter pid" kprobe_reads_submitter
	check "kprobe reads MDS_REINT from a two-buffer message" kprobe_reads_reint_opcode
	check "rpc_latency_ms=50: stat takes >= 50 ms" stat_takes_latency
	check "rpc_latency_ms=50: queue_wait entry->return >= 50 ms" queue_wait_takes_latency
	check "resend_count=3: exactly 3 resends, by stat's pid" exactly_three_resends
	check "expire/notconn/restart_count=1: one event each" one_fault_each
	check "lock_wait_ms=100: first read waits in ldlm_completion_ast" lock_wait_on_first_read
	check "async_writes: OST_WRITE sent and freed by ptlrpcd_00_00 for dd" async_write_in_ptlrpcd
	check "requests_freed_by_ptlrpcd counts them" freed_by_ptlrpcd_counted
	check "requests all freed after the injections" quiescent
	check "umount and rmmod" unmount_and_unload

	guest_done
}

main
