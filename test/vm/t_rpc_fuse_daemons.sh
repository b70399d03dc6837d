#!/bin/bash
# t_rpc_fuse_daemons.sh: the FUSE request plane on FUSE daemons users run,
# in the stock-kernel guest, by the method this kernel offers (test/vm/expect
# fuse_rpc_fn: function probes on 5.10 and 6.1, the tracepoints on 6.12):
#
# - sshfs (libfuse, over ssh to an sshd on 127.0.0.1);
# - GlusterFS (its own FUSE bridge, not libfuse): a one-brick volume (ext4
#   on a loop file: the brick needs xattrs) on a dummy interface (glusterd
#   refuses loopback bricks), mounted with glusterfs.
# Neither prints a count of the FUSE requests it read (sshfs -d logs SFTP
# messages), so the records are checked against the workload: the bytes
# written (and on sshfs read back) are the bytes of the FUSE_WRITE (and
# FUSE_READ) requests, the mkdir and unlink requests are linked to their
# ops, every request's time splits into queue and daemon, nothing is lost.
# Exact counts per opcode against a daemon's own count: t_access_fuse.sh.
#
#   test/vm/run-in-vm test/vm/t_rpc_fuse_daemons.sh     (LES_BUILD: the build dir)
set -u

# shellcheck source=test/vm/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
guest_init t_rpc_fuse_daemons

cleanup()
{
	tracer_kill
	fusermount3 -u "$work/ssh" 2>/dev/null
	umount -l "$work/gl" 2>/dev/null
	[ -s "$work/sshd.pid" ] && kill "$(cat "$work/sshd.pid")" 2>/dev/null
	pkill -f "$work/brick" 2>/dev/null
	pkill glusterd 2>/dev/null
	umount -l "$work/brick" 2>/dev/null
	guest_remove_work
}
trap cleanup EXIT

guest_require_tool
for b in sshfs sshd ssh-keygen glusterd gluster glusterfs; do
	command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] ||
		die "no $b (scripts/install-deps installs sshfs, openssh-server, glusterfs-server)"
done
modprobe -d "$LES_VM_MODDIR" fuse || die "cannot load fuse"
ip link set lo up || die "no loopback"

# The request plane's method here, and whether the daemon's read is timed.
method=$(case $(kernel_expect fuse_rpc_fn) in tp) echo tracepoints ;; *) echo "function probes" ;; esac)
split=$(kernel_expect fuse_split)
# The matrix's column: what --attach auto takes for them.
cell_method=$(case $(kernel_expect fuse_rpc_fn) in tp) echo tracepoint ;; btf) echo fentry ;; *) echo kprobe ;; esac)

# Records of one daemon's mount, traced around a workload.
trace()
{
	local name=$1 mnt=$2 wl=$3

	tracer_start 180 "$work/$name.jsonl" "$work/$name.err" "$tool" -v --mount "$mnt" ||
		return 1
	"$wl"
	sleep 1
	tracer_stop
	tool_status=$? # a check of its own, after the trace
	return 0
}

# Every request read in the daemon's share of the time, and linked right.
split_right()
{
	[ "$split" = yes ] || return 0
	jq -e -s '[.[] | select(.type == "rpc" and .proto == "fuse")]
		| length > 0 and all(.queued_ns != null and .queued_ns + .daemon_ns == .latency_ns)' \
		"$1" >/dev/null
}

# 1 MiB moved by each FUSE opcode given (16: WRITE, 15: READ) on mount $1.
bytes_right()
{
	local name=$1 opc

	shift
	for opc in "$@"; do
		jq -e -s --argjson o "$opc" '[.[] | select(.type == "rpc" and .opcode == $o) | .bytes]
			| add == 1048576' "$work/$name.jsonl" >/dev/null && continue
		echo "opcode $opc: bytes are not 1048576:"
		jq -c 'select(.type == "rpc") | [.opcode, .bytes, .comm]' "$work/$name.jsonl" | sort |
			uniq -c | head -n 20
		return 1
	done
}

links_right()
{
	jq -e -s '([.[] | select(.type == "access")] | INDEX(.op_id | tostring)) as $acc
		| [.[] | select(.type == "rpc" and .parent_op_id != null)]
		| length > 0 and all($acc[.parent_op_id | tostring] != null)
		and ([.[] | select(.op == "mkdir" or .op == "unlink")]
			| length >= 2 and all(.op as $o | $acc[.parent_op_id | tostring].op == $o))' \
		"$1" >/dev/null
}

nothing_lost()
{
	jq -e -s '[.[] | select(.type == "stats" and .final)][0]
		| .dropped_kernel == 0 and .dropped_userspace == 0
		and .kernel.fuse_unverified == 0 and .kernel.fuse_unplaced == 0
		and .programs_refused == []' "$1" >/dev/null
}

# ---- sshfs ------------------------------------------------------------------

sshfs_up()
{
	mkdir -p /run/sshd "$work/export" "$work/ssh" || return 1
	ssh-keygen -q -t ed25519 -N '' -f "$work/hostkey" &&
		ssh-keygen -q -t ed25519 -N '' -f "$work/userkey" || return 1
	cp "$work/userkey.pub" "$work/authorized_keys"
	/usr/sbin/sshd -f /dev/null -o Port=2222 -o ListenAddress=127.0.0.1 \
		-o HostKey="$work/hostkey" -o AuthorizedKeysFile="$work/authorized_keys" \
		-o PermitRootLogin=prohibit-password -o StrictModes=no -o UsePAM=no \
		-o "Subsystem=sftp internal-sftp" \
		-o PidFile="$work/sshd.pid" || return 1
	sshfs -o port=2222,IdentityFile="$work/userkey",StrictHostKeyChecking=no \
		-o UserKnownHostsFile=/dev/null,BatchMode=yes \
		root@127.0.0.1:"$work/export" "$work/ssh" 2>"$work/sshfs.log" || {
		tail -n 5 "$work/sshfs.log"
		return 1
	}
}

# Each command bounded (fuse_step, test/vm/guest-lib.sh): an unanswered
# request ends the test with the stacks of the daemon and of who waits.
sshfs_workload()
{
	local m=$work/ssh

	fuse_daemon_pid=$(pgrep -n -f "sshfs .*$m")
	fuse_mnt=$m
	fuse_step dd if=/dev/urandom of="$m/a" bs=64k count=16 conv=fsync 2>/dev/null
	fuse_step cat "$m/a" >/dev/null
	fuse_step mkdir "$m/d"
	fuse_step stat "$m/a" >/dev/null
	fuse_step mv "$m/a" "$m/d/b"
	fuse_step rm "$m/d/b"
	fuse_step rmdir "$m/d"
}

say "kernel $(uname -r): FUSE requests by $method, daemon split: $split"
if check "sshfs mounted over ssh to 127.0.0.1" sshfs_up &&
	check "sshfs: the tool traces the workload" trace ssh "$work/ssh" sshfs_workload; then
	check "sshfs: the 1 MiB written and read back = the bytes of its FUSE_WRITE and FUSE_READ requests" \
		bytes_right ssh 16 15
	check "sshfs: requests linked to their ops (mkdir, unlink by name)" links_right "$work/ssh.jsonl"
	check "sshfs: queued_ns + daemon_ns = latency_ns" split_right "$work/ssh.jsonl"
	check "sshfs: nothing dropped, unverified or refused" nothing_lost "$work/ssh.jsonl"
	check "sshfs: the tool exits 0" tracer_exited_ok "$tool_status" "$work/ssh.err"
fi
cell_by_checks sshfs rpc "$cell_method"
failed_before=$failed

# ---- GlusterFS ----------------------------------------------------------------

gluster_up()
{
	local host=10.77.0.1

	modprobe -d "$LES_VM_MODDIR" dummy && ip link add gl0 type dummy && ip addr add "$host/24" dev gl0 &&
		ip link set gl0 up || return 1
	grep -q "gluster-host" /etc/hosts || echo "$host gluster-host" >>/etc/hosts
	mkdir -p "$work/brick" "$work/gl" /var/lib/glusterd /var/log/glusterfs || return 1
	# The brick needs extended attributes that tmpfs lacks: ext4 on a loop file.
	modprobe -d "$LES_VM_MODDIR" loop || return 1
	truncate -s 128M "$work/brick.img" && mkfs.ext4 -q -F "$work/brick.img" &&
		mount -o loop "$work/brick.img" "$work/brick" || return 1
	glusterd -p "$work/glusterd.pid" || return 1
	for _ in $(seq 60); do
		gluster --mode=script pool list >/dev/null 2>&1 && break
		sleep 1
	done
	if ! gluster --mode=script volume create gv0 "gluster-host:$work/brick" force ||
		! gluster --mode=script volume start gv0; then
		tail -n 15 /var/log/glusterfs/glusterd.log /var/log/glusterfs/bricks/*.log
		return 1
	fi
	glusterfs --volfile-server=gluster-host --volfile-id=gv0 "$work/gl" || return 1
	for _ in $(seq 100); do
		mountpoint -q "$work/gl" && stat "$work/gl" >/dev/null 2>&1 && return 0
		sleep 0.3
	done
	return 1
}

gluster_workload()
{
	local m=$work/gl

	fuse_daemon_pid=$(pgrep -n -f "glusterfs .*$m")
	fuse_mnt=$m
	fuse_step dd if=/dev/urandom of="$m/a" bs=64k count=16 conv=fsync 2>/dev/null
	fuse_step mkdir "$m/d"
	fuse_step stat "$m/a" >/dev/null
	fuse_step rm "$m/a"
	fuse_step rmdir "$m/d"
}

if check "GlusterFS: one-brick volume started and mounted" gluster_up &&
	check "GlusterFS: the tool traces the workload" trace gl "$work/gl" gluster_workload; then
	check "GlusterFS: the 1 MiB written = the bytes of its FUSE_WRITE requests" bytes_right gl 16
	check "GlusterFS: requests linked to their ops (mkdir, unlink by name)" links_right "$work/gl.jsonl"
	check "GlusterFS: queued_ns + daemon_ns = latency_ns" split_right "$work/gl.jsonl"
	check "GlusterFS: nothing dropped, unverified or refused" nothing_lost "$work/gl.jsonl"
	check "GlusterFS: the tool exits 0" tracer_exited_ok "$tool_status" "$work/gl.err"
fi
cell glusterfs rpc "$cell_method" "$([ "$failed" -eq "$failed_before" ] && echo verified || echo FAIL)"
say "daemon's share of the request time: $(jq -s -r '[.[] | select(.type == "rpc" and
	.daemon_ns != null)] | "\(length) requests, daemon \([.[].daemon_ns] | add // 0) ns, queued \([.[].queued_ns] | add // 0) ns"' \
	"$work/gl.jsonl" 2>/dev/null)"
guest_done
