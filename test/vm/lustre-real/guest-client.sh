#!/bin/bash
# guest-client.sh: the client half of two guests (test/vm/lustre-real/two-guests.sh
# runs it, or another client script that sources it; not a CTest test):
# inside a Debian guest (6.1, 5.10), the Lustre client that
# test/vm/lustre-real/build-client made for that kernel mounts the servers
# of the 6.12 guest (guest-server.sh) over the virtio NIC eth0 that
# run-in-vm adds (LES_VM_QEMU_ARGS, a qemu socket netdev).
#
# Run: mounts, sets jobid_var=SLURM_JOB_ID, runs a small workload as job
# LES_LR_JOBID (501): dd 4 MiB write + fsync, read back after dropping the
# caches, ls, stat, mkdir, rm, rmdir; shows and checks
# `lctl get_param llite.*.stats mdc.*.stats osc.*.stats`; unmounts.
# Sourced (by another client script), it only defines
#   lustre_client_start   NIC, modules, userland, LNet, wait for the
#                         servers, mount at $LR_MNT
#   lustre_client_stop    unmount
# and guest-lustre.sh's lustre_real_* helpers.
#
# Environment (from two-guests.sh; only LES_* variables reach the guest):
#   LES_LR_CLIENT_INSTALL  the client build (build-client --print-dir)
#   LES_LR_UTILS_INSTALL   the build whose lctl, lfs and mount.lustre are
#                          used when the client build has none (modules
#                          only): the server build (master)
#   LES_LR_CLIENT_NOBTF    1: load the copies of the modules without .BTF
#   LES_LR_CLIENT_USERLAND server: use LES_LR_UTILS_INSTALL's userland even
#                          when the client build has its own
#   LES_LR_IP              this guest's address on eth0 (192.168.77.2),
#                          prefix LES_LR_PREFIX (24)
#   LES_LR_SERVER_NID      the MGS's NID (192.168.77.1@tcp)
#   LES_LR_SYNC            a host directory (seen under /run/les-vm/host):
#                          server-ready appears in it when the servers are
#                          up, server-failed when the server guest ended
#   LES_LR_WAIT_S          the longest wait for the servers (default 900)
#   LES_LR_JOBID           the workload's SLURM_JOB_ID (default 501)
set -u

lr_dir=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=test/vm/guest-lib.sh
. "$lr_dir/../guest-lib.sh"
# shellcheck source=test/vm/lustre-real/guest-lustre.sh
. "$lr_dir/guest-lustre.sh"

LR_IF=eth0
LR_IP=${LES_LR_IP:-192.168.77.2}
LR_NID=$LR_IP@tcp
LR_SERVER_NID=${LES_LR_SERVER_NID:-192.168.77.1@tcp}
export LES_LR_PREFIX=${LES_LR_PREFIX:-24}
LR_USERLAND= # the build whose userland was installed
lr_sync_dir=/run/les-vm/host${LES_LR_SYNC:-/nonexistent}

# Until the host has seen the server guest's LR-SERVER-READY.
_lr_wait_servers()
{
	local deadline=$((SECONDS + ${LES_LR_WAIT_S:-900}))

	while [ ! -e "$lr_sync_dir/server-ready" ]; do
		[ ! -e "$lr_sync_dir/server-failed" ] || { _lr_say "the server guest failed"; return 1; }
		[ $SECONDS -lt $deadline ] || { _lr_say "servers not ready after ${LES_LR_WAIT_S:-900} s"; return 1; }
		sleep 1
	done
}

lustre_client_start()
{
	local t0 t utils

	LR_MODE=btf
	[ "${LES_LR_CLIENT_NOBTF:-0}" = 1 ] && LR_MODE=nobtf
	LR_TIMES=
	[ "${LES_VM:-}" = 1 ] || { _lr_say "not in the guest (test/vm/run-in-vm)"; return 1; }
	t0=$(_lr_uptime)
	LR_INST=$(_lr_host_path "${LES_LR_CLIENT_INSTALL:-}")
	[ -e "$LR_INST/.complete" ] || { _lr_say "no complete client build at '$LR_INST' (LES_LR_CLIENT_INSTALL)"; return 1; }
	_lr_overlay_modules || { _lr_fail "overlay on /lib/modules"; return 1; }
	# The client's own userland, else the server build's (master).
	utils=$LR_INST
	if [ ! -x "$LR_INST/install/usr/sbin/lctl" ] || [ "${LES_LR_CLIENT_USERLAND:-client}" = server ]; then
		utils=$(_lr_host_path "${LES_LR_UTILS_INSTALL:-}")
		[ -x "$utils/install/usr/sbin/lctl" ] ||
			{ _lr_say "no lctl in the client build and none in '$utils' (LES_LR_UTILS_INSTALL)"; return 1; }
	fi
	LR_USERLAND=$utils
	LR_INST=$utils _lr_install_userland || { _lr_fail "copying the userland of $utils"; return 1; }
	_lr_say "modules from $LR_INST ($LR_MODE), userland from $LR_USERLAND, NID $LR_NID"
	_lr_stage setup "$t0"

	t=$(_lr_uptime)
	_lr_nic_up || { _lr_fail "NIC $LR_IF"; return 1; }
	_lr_network || { _lr_fail "interface $LR_IF $LR_IP"; return 1; }
	modprobe lustre || { _lr_fail "modprobe lustre"; return 1; }
	if ! lctl network up >/dev/null; then
		# master's lctl with 2.15.8's modules (a modules-only client
		# build): its netlink request fails, but LNet comes up from the
		# module options (lustre-real.conf) when mount needs it.
		[ "$LR_USERLAND" != "$LR_INST" ] || { _lr_fail "lctl network up ($LR_NID)"; return 1; }
		_lr_say "lctl network up failed (lctl of another Lustre version); going on"
	fi
	lctl list_nids 2>/dev/null | grep -qx "$LR_NID" ||
		{ _lr_fail "LNet has not $LR_NID: $(lctl list_nids 2>&1 | tr '\n' ' ')"; return 1; }
	_lr_check_btf || { _lr_fail "module BTF"; return 1; }
	_lr_stage modprobe "$t"

	t=$(_lr_uptime)
	_lr_wait_servers || return 1
	_lr_stage wait-servers "$t"

	t=$(_lr_uptime)
	mkdir -p "$LR_MNT"
	mount -t lustre "$LR_SERVER_NID:/$LR_FSNAME" "$LR_MNT" || { _lr_fail "mount $LR_SERVER_NID:/$LR_FSNAME"; return 1; }
	_lr_stage mount "$t"
	_lr_stage total "$t0"
}

lustre_client_stop()
{
	# shellcheck disable=SC2119 # no --rmmod
	lustre_real_stop
}

# ---- the default run -------------------------------------------------------------

lr_client_main()
{
	local t_begin bytes=$((4 * 1024 * 1024)) jobid=${LES_LR_JOBID:-501} m=$LR_MNT

	guest_init lr-client
	trap guest_remove_work EXIT
	t_begin=$(_lr_uptime)

	check "client up and mounted $LR_SERVER_NID:/$LR_FSNAME" lustre_client_start ||
		{ grep -a '^lustre-real: ' "$work/check.out"; guest_done; return 1; }
	say "stage times (s): $LR_TIMES"
	say "modules: Lustre $(lctl get_param -n version 2>&1 | head -n 1); lctl: $(lctl --version 2>&1 | head -n 1)"
	say "NIDs: $(lctl list_nids | tr '\n' ' ')"
	lfs df "$m"
	check "lctl set_param jobid_var=SLURM_JOB_ID" lustre_real_jobid SLURM_JOB_ID
	check "lctl set_param llite/mdc/osc stats=clear" lustre_real_clear_stats

	export SLURM_JOB_ID=$jobid
	check "dd writes 4 MiB (fsync) as job $jobid" dd if=/dev/zero of="$m/f" bs=1M count=4 conv=fsync
	echo 3 >/proc/sys/vm/drop_caches
	check "dd reads it back" sh -c "dd if='$m/f' of=/dev/null bs=1M 2>&1 | grep '^$bytes bytes'"
	check "ls -l" ls -l "$m"
	check "stat: size $bytes" sh -c "stat -c '%n %s' '$m/f' | grep -x '$m/f $bytes'"
	check "mkdir" mkdir "$m/d"
	check "rm" rm "$m/f"
	check "rmdir" rmdir "$m/d"
	unset SLURM_JOB_ID

	echo "--- lctl get_param llite.*.stats mdc.*.stats osc.*.stats"
	lctl get_param 'llite.*.stats' 'mdc.*.stats' 'osc.*.stats'
	echo "---"
	check "llite write_bytes sum = $bytes" _lr_client_sum_is 'llite.*.stats' write_bytes "$bytes"
	check "llite read_bytes sum = $bytes" _lr_client_sum_is 'llite.*.stats' read_bytes "$bytes"
	check "osc ost_write counted" _lr_client_positive 'osc.*.stats' ost_write
	check "osc ost_read counted" _lr_client_positive 'osc.*.stats' ost_read
	check "mdc mds_close counted" _lr_client_positive 'mdc.*.stats' mds_close
	check "mdc req_waittime counted" _lr_client_positive 'mdc.*.stats' req_waittime
	check "llite mkdir counted" _lr_client_positive 'llite.*.stats' mkdir
	check "llite unlink counted" _lr_client_positive 'llite.*.stats' unlink

	check "unmount" lustre_client_stop
	say "whole client run in the guest: $(awk -v a="$t_begin" -v b="$(_lr_uptime)" 'BEGIN { printf "%.1f", b - a }') s (guest uptime $(_lr_uptime) s)"
	guest_done
}

# _lr_client_sum_is PARAM NAME VALUE: the counter's sum is VALUE.
_lr_client_sum_is()
{
	local got

	got=$(lustre_real_stat "$1" "$2" sum)
	echo "$1 $2 sum: ${got:-none} (want $3)"
	[ "$got" = "$3" ]
}

# _lr_client_positive PARAM NAME: the counter is there and counted something.
_lr_client_positive()
{
	local got

	got=$(lustre_real_stat "$1" "$2")
	echo "$1 $2: ${got:-none}"
	[ -n "$got" ] && [ "$got" -gt 0 ]
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	lr_client_main "$@"
fi
