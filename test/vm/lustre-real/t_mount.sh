#!/bin/bash
# t_mount.sh: the real-Lustre harness's smoke test, run inside the 6.12 guest:
#   LES_VM_KVER=6.12.117+deb12-amd64 LES_VM_MEM=4096 \
#       test/vm/run-in-vm test/vm/lustre-real/t_mount.sh
# (CTest lustre.t_mount; test/vm/lustre-real/build must have run on the host.)
# Brings up MGS+MDT, OST and the client, writes and reads a file with dd,
# checks Lustre's own counters (llite write_bytes = the bytes written, an
# ost_write on the OSC, MDC counters), module BTF, and unmounts.
set -u

lr_dir=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=test/vm/guest-lib.sh
. "$lr_dir/../guest-lib.sh"
# shellcheck source=test/vm/lustre-real/guest-lustre.sh
. "$lr_dir/guest-lustre.sh"
guest_init t_mount
trap guest_remove_work EXIT
[ "${LES_VM:-}" = 1 ] || die "not in the guest: run test/vm/run-in-vm $0"

t_begin=$(cut -d' ' -f1 /proc/uptime)
bytes=$((16 * 1024 * 1024))

file_size_is()
{
	[ "$(stat -c %s "$1")" = "$2" ] || { stat "$1"; return 1; }
}

# stat_is PARAM NAME sum|count VALUE
stat_is()
{
	local got

	got=$(lustre_real_stat "$1" "$2" "$3")
	echo "$1 $2 $3: ${got:-none} (want $4)"
	[ "$got" = "$4" ] || { lctl get_param "$1"; return 1; }
}

# stat_positive PARAM NAME: the counter is there and counted something.
stat_positive()
{
	local got

	got=$(lustre_real_stat "$1" "$2")
	echo "$1 $2: ${got:-none}"
	[ -n "$got" ] && [ "$got" -gt 0 ] || { lctl get_param "$1"; return 1; }
}

# Built against Debian's 6.12 headers (with vmlinux), the modules carry BTF.
has_module_btf()
{
	local m

	for m in lustre ptlrpc obdclass mdc osc lnet libcfs; do
		[ -e "/sys/kernel/btf/$m" ] || { echo "no /sys/kernel/btf/$m"; return 1; }
	done
}

lustre_is_mounted()
{
	grep " $LR_MNT lustre " /proc/mounts && lfs df "$LR_MNT"
}

no_lustre_mounts()
{
	! grep ' lustre ' /proc/mounts
}

lustre_real_start || { guest_done; die "Lustre did not come up"; }
check "client mounted at $LR_MNT" lustre_is_mounted
check "module BTF present" has_module_btf
check "LNet NID is $LR_NID" sh -c "lctl list_nids | grep -x '$LR_NID'"

lustre_real_clear_stats
check "dd writes 16 MiB (fsync)" dd if=/dev/zero of="$LR_MNT/f" bs=1M count=16 conv=fsync
check "file size $bytes" file_size_is "$LR_MNT/f" "$bytes"
# Drop the client's cache so that the read goes to the OST.
echo 3 >/proc/sys/vm/drop_caches
check "dd reads it back" sh -c "dd if='$LR_MNT/f' of=/dev/null bs=1M 2>&1 | grep -q '^$bytes bytes'"
check "llite write_bytes sum = $bytes" stat_is 'llite.*.stats' write_bytes sum "$bytes"
check "llite write_bytes samples = 16" stat_is 'llite.*.stats' write_bytes count 16
check "osc ost_write counted" stat_positive 'osc.*.stats' ost_write
check "osc ost_read counted" stat_positive 'osc.*.stats' ost_read
check "mdc mds_close counted" stat_positive 'mdc.*.stats' mds_close
check "mdc req_waittime counted" stat_positive 'mdc.*.stats' req_waittime
check "rm" rm "$LR_MNT/f"

check "lustre_real_stop unmounts" lustre_real_stop
check "no Lustre mounts left" no_lustre_mounts
say "stage times (s): $LR_TIMES"
say "whole test in the guest: $(awk -v a="$t_begin" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }') s (guest uptime $(cut -d' ' -f1 /proc/uptime) s)"
guest_done
