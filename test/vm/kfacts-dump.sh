#!/bin/bash
# kfacts-dump.sh: record a guest kernel's facts for the planners' unit tests
# (test/fixtures/kfacts/). Run on the host as
#
#   LES_VM_KVER=6.1.0-57-amd64 test/vm/run-in-vm test/vm/kfacts-dump.sh standin
#   LES_VM_KVER=5.10.0-32-amd64 test/vm/run-in-vm test/vm/kfacts-dump.sh
#   LES_VM_KVER=6.12.117+deb12-amd64 LES_VM_MEM=4096 \
#       test/vm/run-in-vm test/vm/kfacts-dump.sh lustre-real
#
# with LES_BUILD and LES_SRC set, and cut the facts out of the console
# between the LES-KFACTS-BEGIN and LES-KFACTS-END lines (tr -d '\r'). The
# guest loads fuse, nfs (v3 and v4) and sunrpc, and the Lustre it is asked
# for: the stand-in module (test/vm/lustre, no module BTF) or the real
# Lustre client modules with BTF (test/vm/lustre-real, built on the host).
# Not a test: CTest takes only t_*.sh.
set -u

# shellcheck source=test/vm/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
guest_init kfacts-dump

load_nfs_fuse()
{
	local m

	for m in fuse sunrpc nfs nfsv3 nfsv4; do
		modprobe -d "$LES_VM_MODDIR" "$m" || return 1
	done
}

load_standin()
{
	insmod "$(find_module)"
}

# The client side only: LNet, then lustre (modprobe brings ptlrpc, mdc, ...).
load_lustre_real()
{
	# shellcheck source=test/vm/lustre-real/guest-lustre.sh
	. "$here/lustre-real/guest-lustre.sh"
	LR_MODE=btf
	LR_INST=$(_lr_install_dir) || return 1
	_lr_overlay_modules && _lr_network && modprobe lnet && modprobe lustre
}

load_nfs_fuse || die "cannot load fuse and nfs"
case ${1:-} in
standin) load_standin || die "cannot load the Lustre stand-in" ;;
lustre-real) load_lustre_real || die "cannot load the real Lustre client" ;;
"") ;;
*) die "usage: kfacts-dump.sh [standin|lustre-real]" ;;
esac
echo LES-KFACTS-BEGIN
"$LES_BUILD/lustre-ebpf-stream" --dump-kernel-facts
status=$?
echo LES-KFACTS-END
exit $status
