#!/bin/bash
# guest-server.sh: the server half of two guests (test/vm/lustre-real/two-guests.sh
# starts it; not a CTest test): inside the 6.12 guest, Lustre master's
# MGS+MDT and OST (ldiskfs on loop files in the guest's tmpfs), LNet on the
# virtio NIC eth0 that run-in-vm adds (LES_VM_QEMU_ARGS, a qemu socket
# netdev to the client guest). No client is mounted here. Then it serves
# until the host says the client guest has finished, prints the servers'
# job_stats and checks that the client's job shows in them, and unmounts.
#
# Reuses guest-lustre.sh's helpers (overlay of the modules, userland, LNet
# interface, waiting for the MDT's OSP, stage times, lustre_real_stop).
#
# Environment (from two-guests.sh; only LES_* variables reach the guest):
#   LES_LR_INSTALL  the server build (test/vm/lustre-real/build --print-dir)
#   LES_LR_IP       this guest's address on eth0 (192.168.77.1), prefix
#                   LES_LR_PREFIX (24)
#   LES_LR_SYNC     a host directory, seen here under /run/les-vm/host:
#                   this guest cannot write it; the host creates
#                   server-ready in it when this guest prints
#                   LR-SERVER-READY, and client-done when the client guest
#                   has ended
#   LES_LR_SERVE_S  the longest time to serve (default 1200 s)
#   LES_LR_JOBID    the job ID the client's workload ran as (501): checked
#                   in mdt.*.job_stats and obdfilter.*.job_stats; - for none
#   LES_LR_SERVER_TRACE  1: the tool runs here while serving, and its srv
#                   and rpc lines (the MDT is a client of the OST) and final
#                   stats are kept for the host as
#                   lustre-two-guest-server.jsonl.gz (a capture of the
#                   server side, test/data/capture-two-guests)
#
# While serving it answers the client's requests (client-tool.sh), which the
# host passes on as req.N files in LES_LR_SYNC: "jobstats" prints the
# servers' job_stats, "clear-jobstats" clears them, each answer between
# LR-REPLY-BEGIN N and LR-REPLY-END N on the console for the host to hand
# back (two-guests.sh), its last line "LR-STATUS <the command's exit status>".
set -u

lr_dir=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=test/vm/guest-lib.sh
. "$lr_dir/../guest-lib.sh"
# shellcheck source=test/vm/lustre-real/guest-lustre.sh
. "$lr_dir/guest-lustre.sh"
guest_init lr-server
trap guest_remove_work EXIT
[ "${LES_VM:-}" = 1 ] || die "not in the guest: run test/vm/lustre-real/two-guests.sh"

LR_IF=eth0
LR_IP=${LES_LR_IP:-192.168.77.1}
LR_NID=$LR_IP@tcp
export LES_LR_PREFIX=${LES_LR_PREFIX:-24}
sync_dir=/run/les-vm/host${LES_LR_SYNC:-/nonexistent}
jobid=${LES_LR_JOBID:-501}


# As lustre_real_start, without the client mount.
servers_start()
{
	local t0 t m
	local mdt_kb=$((${LES_LR_MDT_MB:-256} * 1024)) ost_kb=$((${LES_LR_OST_MB:-1024} * 1024))

	LR_MODE=btf
	LR_TIMES=
	t0=$(_lr_uptime)
	LR_INST=$(_lr_install_dir) || return 1
	_lr_say "install tree $LR_INST ($LR_MODE), NID $LR_NID"
	_lr_overlay_modules || { _lr_fail "overlay on /lib/modules"; return 1; }
	_lr_install_userland || { _lr_fail "copying the userland"; return 1; }
	modprobe loop || { _lr_fail "modprobe loop"; return 1; }
	_lr_stage setup "$t0"

	t=$(_lr_uptime)
	_lr_nic_up || { _lr_fail "NIC $LR_IF"; return 1; }
	_lr_network || { _lr_fail "interface $LR_IF $LR_IP"; return 1; }
	modprobe lnet || { _lr_fail "modprobe lnet"; return 1; }
	lctl network up >/dev/null || { _lr_fail "lctl network up ($LR_NID)"; return 1; }
	lctl list_nids | grep -qx "$LR_NID" ||
		{ _lr_fail "LNet has not $LR_NID: $(lctl list_nids | tr '\n' ' ')"; return 1; }
	_lr_stage lnet "$t"

	t=$(_lr_uptime)
	for m in ldiskfs osd_ldiskfs mgs mdt ofd; do
		modprobe "$m" || { _lr_fail "modprobe $m"; return 1; }
	done
	_lr_stage modprobe "$t"

	t=$(_lr_uptime)
	mkdir -p $LR_SCRATCH /mnt/lustre-mdt0 /mnt/lustre-ost0
	mkfs.lustre --fsname=$LR_FSNAME --mgs --mdt --index=0 --reformat \
		--device-size=$mdt_kb $LR_SCRATCH/mdt0.img >$LR_SCRATCH/mkfs-mdt.log 2>&1 ||
		{ cat $LR_SCRATCH/mkfs-mdt.log; _lr_fail "mkfs.lustre MGS+MDT"; return 1; }
	mkfs.lustre --fsname=$LR_FSNAME --ost --index=0 --mgsnode="$LR_NID" --reformat \
		--device-size=$ost_kb $LR_SCRATCH/ost0.img >$LR_SCRATCH/mkfs-ost.log 2>&1 ||
		{ cat $LR_SCRATCH/mkfs-ost.log; _lr_fail "mkfs.lustre OST"; return 1; }
	_lr_stage mkfs "$t"

	t=$(_lr_uptime)
	mount -t lustre -o loop $LR_SCRATCH/mdt0.img /mnt/lustre-mdt0 || { _lr_fail "mount MGS+MDT"; return 1; }
	mount -t lustre -o loop $LR_SCRATCH/ost0.img /mnt/lustre-ost0 || { _lr_fail "mount OST"; return 1; }
	_lr_wait_osp || { _lr_fail "the MDT did not connect to the OST within 60 s"; return 1; }
	_lr_stage servers "$t"
	_lr_stage total "$t0"
}

# The console, for answers printed from inside check (its output is a file).
exec 9>&1
served=0

# The client's requests that the host has passed on, in order.
answer_requests()
{
	local n what

	while [ -e "$sync_dir/req.$((served + 1))" ]; do
		n=$((served + 1))
		what=$(cat "$sync_dir/req.$n")
		{
			echo "LR-REPLY-BEGIN $n"
			case $what in
			jobstats) lctl get_param 'mdt.*.job_stats' 'obdfilter.*.job_stats' ;;
			clear-jobstats)
				lctl set_param -n 'mdt.*.job_stats=clear' 'obdfilter.*.job_stats=clear'
				;;
			*)
				echo "unknown request $what"
				false
				;;
			esac
			# The command's exit status, the answer's last line: an
			# answer alone says nothing of whether lctl did its work.
			echo "LR-STATUS $?"
			echo "LR-REPLY-END $n"
		} >&9 2>&1
		served=$n
	done
}

# serve: until the host's client-done (or LES_LR_SERVE_S).
serve()
{
	local deadline=$((SECONDS + ${LES_LR_SERVE_S:-1200}))

	while [ ! -e "$sync_dir/client-done" ]; do
		[ $SECONDS -lt $deadline ] || { say "no client-done after ${LES_LR_SERVE_S:-1200} s"; return 1; }
		answer_requests
		sleep 0.5
	done
}

# has_job PARAM: the job shows in `lctl get_param PARAM` (job_stats YAML).
has_job()
{
	lctl get_param -n "$1" | grep -E "job_id:[[:space:]]+\"?$jobid\"?[[:space:]]*$"
}

check "virtio NIC, MGS+MDT and OST up on $LR_NID" servers_start ||
	{ grep -a '^lustre-real: ' "$work/check.out"; guest_done; exit 1; }
say "stage times (s): $LR_TIMES"
# The server side's records, while the client works (LES_LR_SERVER_TRACE=1).
server_trace_start()
{
	tracer_start 300 "" "$work/tool.err" "$tool" -v --stats-interval 5s \
		-o "$work/server.jsonl" || { cat "$work/tool.err"; return 1; }
	grep -E "probes attached" "$work/tool.err"
}

server_trace_keep()
{
	tracer_stop || return 1
	jq -M -c 'select(.type == "srv" or .type == "rpc" or (.type == "stats" and .final))' "$work/server.jsonl" |
		gzip -9 >"$work/server.jsonl.gz" || return 1
	say "server capture: $(zcat "$work/server.jsonl.gz" | grep -c '"type":"srv"') srv lines"
	# To the console (fd 9): check keeps its function's output in a file.
	guest_keep_file "$work/server.jsonl.gz" lustre-two-guest-server.jsonl.gz >&9
}

if [ "${LES_LR_SERVER_TRACE:-0}" = 1 ]; then
	check "the tool traces the servers" server_trace_start
fi
echo "LR-SERVER-READY $LR_NID:/$LR_FSNAME"
t_ready=$(_lr_uptime)
check "host said: client guest done" serve
[ "${LES_LR_SERVER_TRACE:-0}" = 1 ] && check "the server capture kept" server_trace_keep
say "served $(awk -v a="$t_ready" -v b="$(_lr_uptime)" 'BEGIN { printf "%.1f", b - a }') s"
say "client exports: $(lctl list_param 'mdt.*.exports.*' 2>/dev/null | sed 's/.*exports\.//' | tr '\n' ' ')"
echo "--- lctl get_param mdt.*.job_stats obdfilter.*.job_stats"
lctl get_param 'mdt.*.job_stats' 'obdfilter.*.job_stats'
echo "---"
# LES_LR_JOBID=-: the client's script runs no job of its own (client-lnet.sh).
if [ "$jobid" = - ]; then
	say "job_stats: the client ran no job (LES_LR_JOBID=-), not checked"
else
	check "mdt job_stats show job $jobid" has_job 'mdt.*.job_stats'
	check "obdfilter job_stats show job $jobid" has_job 'obdfilter.*.job_stats'
fi
check "servers unmount" lustre_real_stop
guest_done
