#!/bin/bash
# t_nobtf.sh: the same Lustre from the module tree whose .ko files have no
# .BTF section (as most sites' builds): no /sys/kernel/btf/<module> for any
# Lustre module, the probed functions still in kallsyms, and I/O works.
#   LES_VM_KVER=6.12.117+deb12-amd64 LES_VM_MEM=4096 \
#       test/vm/run-in-vm test/vm/lustre-real/t_nobtf.sh
set -u

lr_dir=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=test/vm/guest-lib.sh
. "$lr_dir/../guest-lib.sh"
# shellcheck source=test/vm/lustre-real/guest-lustre.sh
. "$lr_dir/guest-lustre.sh"
guest_init t_nobtf
trap guest_remove_work EXIT
[ "${LES_VM:-}" = 1 ] || die "not in the guest: run test/vm/run-in-vm $0"

no_lustre_btf()
{
	local m n=0

	for m in lustre ptlrpc obdclass mdc osc lov lmv lnet libcfs ksocklnd ldiskfs osd_ldiskfs mdt ofd; do
		[ -d "/sys/module/$m" ] || { echo "$m not loaded"; return 1; }
		[ ! -e "/sys/kernel/btf/$m" ] || { echo "/sys/kernel/btf/$m exists"; n=$((n + 1)); }
	done
	[ "$n" -eq 0 ]
}

# Kernel BTF itself is still there (fentry on vmlinux functions works).
has_vmlinux_btf()
{
	[ -s /sys/kernel/btf/vmlinux ]
}

in_kallsyms()
{
	local f

	awk '$2 ~ /^[tT]$/ { print $3 }' /proc/kallsyms >"$work/text-symbols"
	for f in "$@"; do
		grep -qxF "$f" "$work/text-symbols" || { echo "$f not in kallsyms"; return 1; }
	done
}

write_bytes_is()
{
	local got

	got=$(lustre_real_stat 'llite.*.stats' write_bytes sum)
	echo "write_bytes sum: ${got:-none}"
	[ "$got" = "$1" ]
}

lustre_real_start --nobtf || { guest_done; die "Lustre did not come up"; }
check "no module BTF for the Lustre modules" no_lustre_btf
check "vmlinux BTF present" has_vmlinux_btf
check "probed functions in kallsyms" in_kallsyms ll_file_write_iter ll_file_read_iter ll_file_open \
	ll_lookup_nd ll_getattr ptlrpc_queue_wait ptl_send_rpc ldlm_cli_enqueue
lustre_real_clear_stats
check "dd writes 4 MiB" dd if=/dev/zero of="$LR_MNT/f" bs=1M count=4 conv=fsync
check "llite write_bytes sum = 4 MiB" write_bytes_is 4194304
check "lustre_real_stop --rmmod" lustre_real_stop --rmmod
check "Lustre modules unloaded" sh -c '! [ -d /sys/module/lustre ] && ! [ -d /sys/module/lnet ]'
say "stage times (s): $LR_TIMES"
guest_done
