#!/bin/bash
# stress_fuse_write.sh: rounds of t_access_fuse.sh's first workload command
# (a 100-block dd onto les-testfs, each block a synchronous FUSE_WRITE) to
# tell how often a write is left unanswered, and under what: les-testfs
# with its own session loop (--count-requests) or fuse_main's, with the
# tool attached by kprobe or without it. Not a CTest test (no t_ prefix):
#
#   LES_VM_KVER=5.10.0-32-amd64 LES_BUILD=build \
#       test/vm/run-in-vm test/vm/stress_fuse_write.sh [SECS [VARIANT...]]
#
# SECS: time per variant (60); VARIANT: counted+tool counted plain+tool
# plain (all four by default), or counted+attach, plain+attach (the tool
# started before each round and stopped after it). A round is SIGUSR1 to the daemon (its stats
# file, as t_access_fuse's daemon_counts), the dd, a read back and rm,
# each bounded by LES_STRESS_STEP_SECS (15 s); LES_STRESS_WRITERS dd's at
# once (1). A round that does not end is
# a hang: the daemon's count of FUSE_WRITE requests read and of writes
# handled, the kernel's count of requests waiting and the stacks are
# printed, the connection aborted and the filesystem mounted again.
# Ends with "variant rounds hangs" lines.
set -u

# shellcheck source=test/vm/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
guest_init stress_fuse_write
secs=${1:-60}
shift $(($# > 0 ? 1 : 0))
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(counted+tool counted plain+tool plain)
mnt=$work/mnt
fuse_mnt=$mnt
step_secs=${LES_STRESS_STEP_SECS:-15}
daemon=

cleanup()
{
	tracer_kill
	fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
	guest_remove_work
}
trap cleanup EXIT

guest_require_tool
modprobe -d "$LES_VM_MODDIR" fuse || die "cannot load fuse"
mountpoint -q /sys/fs/fuse/connections || mount -t fusectl fusectl /sys/fs/fuse/connections
mkdir -p "$mnt"

# mount_fs counted|plain: les-testfs as t_access_fuse mounts it.
mount_fs()
{
	local extra=()

	[ "$1" = counted ] && extra=(--count-requests)
	"$build/les-testfs" "$mnt" "${extra[@]}" --stats-file="$work/ops" --latency-ops=mkdir \
		--latency-ms=200 || return 1
	daemon=$(pgrep -f -n "les-testfs $mnt")
}

unmount_fs()
{
	fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"
	for _ in $(seq 50); do
		kill -0 "$daemon" 2>/dev/null || break
		sleep 0.1
	done
}

# bounded COMMAND...: 0 when it ended within step_secs; else 124, the
# command left running (to be looked at).
bounded()
{
	local pid timer who

	"$@" &
	pid=$!
	sleep "$step_secs" &
	timer=$!
	wait -n -p who "$pid" "$timer"
	if [ "$who" = "$pid" ]; then
		kill "$timer" 2>/dev/null
		wait "$timer" 2>/dev/null
		return 0
	fi
	stuck=$pid
	return 124
}

stats_now()
{
	rm -f "$work/ops"
	kill -USR1 "$daemon" || return 1
	for _ in $(seq 50); do
		[ -e "$work/ops" ] && return 0
		sleep 0.1
	done
	return 1
}

# writers: the round's writes, LES_STRESS_WRITERS of them at once (1):
# more requests in flight than the daemon has threads when many.
writers()
{
	local i pids=()

	for i in $(seq "${LES_STRESS_WRITERS:-1}"); do
		dd if=/dev/zero of="$mnt/f$i" bs=4k count=100 2>/dev/null &
		pids+=($!)
	done
	wait "${pids[@]}"
}

round()
{
	stats_now
	bounded writers || return 1
	bounded dd if="$mnt/f1" of=/dev/null bs=4k count=100 2>/dev/null || return 1
	bounded rm -f "$mnt"/f* || return 1
}

# What was stuck: the daemon's own counts (FUSE_WRITE = opcode 16 read from
# /dev/fuse; "write": calls that reached the filesystem), the kernel's.
report_hang()
{
	say "HANG in round $1 of $2: $(tr '\0' ' ' <"/proc/$stuck/cmdline" 2>/dev/null)"
	fuse_waiting
	if stats_now; then
		grep -E '^(write|opcode_16) ' "$work/ops" | tr '\n' ' '
		echo
	else
		echo "the daemon wrote no stats"
	fi
	for p in "$stuck" $(pgrep -P "$stuck"); do
		task_stacks "$p"
	done
	task_stacks "$daemon"
	dmesg | tail -n 5
	fuse_poke "$stuck"
}

abort_all()
{
	local d

	kill -KILL $(pgrep -P "$stuck") "$stuck" 2>/dev/null
	for d in /sys/fs/fuse/connections/*/abort; do
		echo 1 >"$d"
	done
	umount -l "$mnt" 2>/dev/null
	kill -KILL "$daemon" 2>/dev/null
	sleep 0.5
}

declare -A rounds hangs
for v in "${variants[@]}"; do
	rounds[$v]=0
	hangs[$v]=0
	mount_fs "${v%%+*}" || die "cannot mount les-testfs ($v)"
	if [ "${v#*+}" = tool ]; then
		tracer_start 180 /dev/null "$work/tool.err" "$tool" -v --attach kprobe --mount "$mnt" ||
			die "the tool did not attach"
	fi
	end=$(($(cut -d. -f1 /proc/uptime) + secs))
	while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; do
		rounds[$v]=$((rounds[$v] + 1))
		if [ "${v#*+}" = attach ]; then
			# The tool attached just before the round, as in t_access_fuse.
			tracer_start 180 /dev/null "$work/tool.err" "$tool" -v --attach kprobe \
				--mount "$mnt" || die "the tool did not attach"
			round
			st=$?
			tracer_stop
			[ $st = 0 ] && continue
		else
			round && continue
		fi
		hangs[$v]=$((hangs[$v] + 1))
		report_hang "${rounds[$v]}" "$v"
		[ -n "$tracer_pid" ] && tracer_kill
		abort_all
		mount_fs "${v%%+*}" || die "cannot mount les-testfs again ($v)"
		if [ "${v#*+}" = tool ]; then
			tracer_start 180 /dev/null "$work/tool.err" "$tool" -v --attach kprobe \
				--mount "$mnt" || die "the tool did not attach again"
		fi
	done
	if [ -n "$tracer_pid" ]; then
		tracer_stop
		grep -E "probes attached|lost|dropped" "$work/tool.err" | head -n 3
	fi
	unmount_fs
	say "$v: ${rounds[$v]} rounds, ${hangs[$v]} hangs"
done
echo "variant rounds hangs (kernel $(uname -r))"
for v in "${variants[@]}"; do
	echo "$v ${rounds[$v]} ${hangs[$v]}"
done
