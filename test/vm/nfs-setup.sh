# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# nfs-setup.sh: an NFS server and client over loopback in the stock-kernel
# guest, for tests to source:
#
#   . "$LES_SRC/test/vm/nfs-setup.sh"
#   nfs_server_start /tmp/x/export || fail   # nfsd exporting a fresh tmpfs
#   nfs_mount 3 /tmp/x/export /tmp/x/v3      # NFSv3, no lock manager
#   nfs_mount 4.2 / /tmp/x/v4                # NFSv4.2 (the export is the v4 root)
#   nfs_teardown /tmp/x/v3 /tmp/x/v4
#
# The export has fsid=0, so it is also the NFSv4 pseudo-root; nfsd gets a
# 10 s grace period instead of 90 (a v4 OPEN waits the grace period out).
# NFS_MOUNT_OPTS adds client mount options (e.g. noac: every stat asks the
# server).

# nfs_server_start EXPORT_DIR: modules, nfsd filesystem, rpcbind, mountd, nfsd.
nfs_server_start()
{
	local dir=$1 mod

	for mod in sunrpc nfsd nfs nfsv3 nfsv4; do
		modprobe -d "${LES_VM_MODDIR:-/}" "$mod" || modprobe "$mod" || return 1
	done
	for prog in rpcbind rpc.mountd rpc.nfsd exportfs mount.nfs; do
		command -v "$prog" >/dev/null ||
			{ echo "$prog missing: scripts/install-deps (nfs-kernel-server)"; return 1; }
	done
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return 1
	echo 10 >/proc/fs/nfsd/nfsv4gracetime
	echo 10 >/proc/fs/nfsd/nfsv4leasetime
	mkdir -p "$dir" /run/rpcbind /var/lib/nfs/v4recovery
	mount -t tmpfs tmpfs "$dir" || return 1
	echo "$dir 127.0.0.1(rw,sync,no_subtree_check,no_root_squash,insecure,fsid=0)" \
		>/etc/exports
	rpcbind -w && rpc.mountd && exportfs -ra && rpc.nfsd 4
}

# nfs_mount VERSION SERVER_PATH MOUNTPOINT
nfs_mount()
{
	local vers=$1 path=$2 mnt=$3 opts="vers=$1"

	[ "$vers" = 3 ] && opts="$opts,nolock"
	[ -n "${NFS_MOUNT_OPTS:-}" ] && opts="$opts,$NFS_MOUNT_OPTS"
	mkdir -p "$mnt" && mount -t nfs -o "$opts" "127.0.0.1:$path" "$mnt"
}

# nfs_teardown MOUNTPOINT...: unmount the clients, stop the server.
nfs_teardown()
{
	local m

	for m in "$@"; do
		umount -f -l "$m" 2>/dev/null
	done
	rpc.nfsd 0 2>/dev/null
	exportfs -ua 2>/dev/null
}
