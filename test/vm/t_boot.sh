#!/bin/bash
# t_boot.sh: the harness's own test, run inside the guest by
#   test/vm/run-in-vm test/vm/t_boot.sh
# It proves the guest is what the later stock-kernel tests rely on: the stock
# kernel, its modules (fuse, nfs, nfsd) loadable, kernel and module BTF,
# kprobes that fire, BPF kprobe and fentry programs that pass the verifier
# (fentry on a module function included), and writable scratch space.
set -u

# shellcheck source=test/vm/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
guest_init t_boot
scratch=$work
kver=$(uname -r)

in_guest()
{
	[ "${LES_VM:-}" = 1 ] && [ -n "${LES_VM_MODDIR:-}" ]
}

# The kernel fetch-kernel unpacked, not the host's.
is_stock_kernel()
{
	[ "$kver" = "$(basename "$LES_VM_MODDIR")" ] && [[ $kver == *-amd64 ]]
}

load_module()
{
	local name=$1

	modprobe -d "$LES_VM_MODDIR" "$name" && [ -d "/sys/module/$name" ]
}

# Plain modprobe (no -d), as the kernel's own request_module() runs it: works
# only because the guest has this kernel's modules at /lib/modules/<kver>.
# nfsv4 is what nfs itself asks for when a v4 mount comes.
plain_modprobe()
{
	[ ! -d /sys/module/nfsv4 ] || { echo "nfsv4 already loaded"; return 1; }
	modprobe nfsv4 && [ -d /sys/module/nfsv4 ]
}

# The kernel loads rtnl-link-dummy by itself when asked for such a link.
kernel_autoloads_modules()
{
	[ ! -d /sys/module/dummy ] || { echo "dummy already loaded"; return 1; }
	ip link add les_t_boot0 type dummy && [ -d /sys/module/dummy ] &&
		ip link del les_t_boot0
}

scratch_is_private_tmpfs()
{
	[ "$(stat -f -c %T /tmp)" = tmpfs ] && echo data >"$scratch/w" &&
		[ "$(cat "$scratch/w")" = data ]
}

# The project's trees are where the host has them (ctest passes both).
trees_visible()
{
	local dir

	for dir in "${LES_SRC:-}" "${LES_BUILD:-}"; do
		[ -z "$dir" ] || [ -d "$dir" ] || { echo "not visible: $dir"; return 1; }
	done
	[ -z "${LES_SRC:-}" ] || [ -r "$LES_SRC/CMakeLists.txt" ]
}

# A kprobe on a vmlinux function and one on a module function, through
# tracefs: created, enabled, seen firing, removed.
kprobe_fires()
{
	local event=$1 func=$2 trigger=$3 tr=/sys/kernel/tracing

	echo "p:les_t_boot/$event $func" >>"$tr/kprobe_events" || return 1
	[ -d "$tr/events/les_t_boot/$event" ] || return 1
	echo >"$tr/trace"
	echo 1 >"$tr/events/les_t_boot/$event/enable"
	$trigger
	echo 0 >"$tr/events/les_t_boot/$event/enable"
	grep -q "$event:" "$tr/trace" || { echo "no $event hit in the trace"; return 1; }
	echo "-:les_t_boot/$event" >>"$tr/kprobe_events"
	! grep -q "les_t_boot/$event" "$tr/kprobe_events"
}

read_a_file()
{
	cat /etc/hostname >/dev/null
}

# Open /dev/fuse: fuse_dev_open runs.
open_fuse_device()
{
	exec 7</dev/fuse && exec 7<&-
}

# Clang in the guest costs ~7 s of TCG time; worth it once, here.
build_bpf_object()
{
	cat >"$scratch/probe.bpf.c" <<'EOF'
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

__u64 hits;

SEC("kprobe/vfs_read")
int count_kprobe(void *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

SEC("fentry/vfs_read")
int count_fentry(void *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

/* A module function: needs the module's BTF, as the NFS and FUSE probes do. */
#ifdef LES_MODULE_BTF
SEC("fentry/fuse_dev_open")
int count_fentry_module(void *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}
#endif

char LICENSE[] SEC("license") = "GPL";
EOF
	local defs=

	[ "$(kernel_expect module_btf)" = yes ] && defs=-DLES_MODULE_BTF
	clang -g -O2 -target bpf -I/usr/include/x86_64-linux-gnu $defs \
		-c "$scratch/probe.bpf.c" -o "$scratch/probe.bpf.o"
}

# Loading runs the verifier and resolves each fentry target in BTF: what the
# build machine's kernel refuses.
bpf_programs_load()
{
	local pin=/sys/fs/bpf/t_boot prog

	bpftool prog loadall "$scratch/probe.bpf.o" "$pin" || return 1
	local progs="count_kprobe count_fentry"

	[ "$(kernel_expect module_btf)" = yes ] && progs+=" count_fentry_module"
	for prog in $progs; do
		[ -e "$pin/$prog" ] || { echo "$prog not loaded"; return 1; }
	done
	rm -rf "$pin"
}

feature_probe()
{
	bpftool feature probe kernel >"$scratch/features" || return 1
	grep -q 'eBPF program_type kprobe is available' "$scratch/features" &&
		grep -q 'eBPF program_type tracing is available' "$scratch/features" &&
		grep -q 'CONFIG_BPF_JIT is set to y' "$scratch/features"
}

fuse_in_vmlinux_btf()
{
	bpftool btf dump file /sys/kernel/btf/vmlinux | grep -q "STRUCT 'fuse_req'"
}

main()
{
	check "running in the guest (LES_VM=1)" in_guest
	if [ "$failed" -ne 0 ]; then
		echo "t_boot: not inside the qemu guest; run: test/vm/run-in-vm $0"
		exit 1
	fi
	check "stock kernel $kver" is_stock_kernel
	check "modprobe -d \$LES_VM_MODDIR fuse" load_module fuse
	check "modprobe -d \$LES_VM_MODDIR nfs" load_module nfs
	check "modprobe -d \$LES_VM_MODDIR nfsd" load_module nfsd
	check "plain modprobe finds this kernel's modules (nfsv4)" plain_modprobe
	check "the kernel autoloads modules (dummy link)" kernel_autoloads_modules
	check "kernel BTF /sys/kernel/btf/vmlinux" test -r /sys/kernel/btf/vmlinux
	if [ "$(kernel_expect fuse_builtin)" = yes ]; then
		check "FUSE built in: struct fuse_req in vmlinux BTF" fuse_in_vmlinux_btf
	elif [ "$(kernel_expect module_btf)" = yes ]; then
		check "module BTF /sys/kernel/btf/fuse" test -r /sys/kernel/btf/fuse
	fi
	if [ "$(kernel_expect module_btf)" = yes ]; then
		check "module BTF /sys/kernel/btf/nfs" test -r /sys/kernel/btf/nfs
	else
		check "no module BTF, as test/vm/expect says" test ! -e /sys/kernel/btf/nfs
	fi
	check "kprobe on vfs_read fires" kprobe_fires vfs_read vfs_read read_a_file
	check "kprobe on fuse_dev_open fires" \
		kprobe_fires fuse_dev_open fuse_dev_open open_fuse_device
	check "/tmp is a private writable tmpfs" scratch_is_private_tmpfs
	check "LES_SRC and LES_BUILD visible" trees_visible
	check "bpffs mounted" test "$(stat -f -c %T /sys/fs/bpf)" = bpf_fs
	check "bpftool feature probe" feature_probe
	check "clang builds a BPF object" build_bpf_object
	check "kprobe, fentry (and, with module BTF, module fentry) programs load" bpf_programs_load

	rm -rf "$scratch"
	guest_done
}

main
