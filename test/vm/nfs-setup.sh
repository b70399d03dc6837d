# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# nfs-setup.sh: an NFS server and client over loopback in the stock-kernel
# guest, for tests to source:
#
#   . "$LES_SRC/test/vm/nfs-setup.sh"
#   nfs_server_start /tmp/x/export || fail   # nfsd exporting a fresh tmpfs
#   nfs_mount 3 /tmp/x/export /tmp/x/v3      # NFSv3, no lock manager
#   nfs_mount 4.2 / /tmp/x/v4                # NFSv4.2 (the export is the v4 root)
#   nfs_slow_export /tmp/x/slow 300          # a second export on a slow disk
#   nfs_teardown /tmp/x/v3 /tmp/x/v4
#   nfs_slow_teardown /tmp/x/slow
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

# nfs_slow_export DIR DELAY_MS: a second export (after nfs_server_start)
# whose storage is slow. A 16 MiB file on the guest's tmpfs, a loop device
# on it, a dm-delay target over that which holds every write DELAY_MS
# (reads go through at once), ext4 on it mounted at DIR, exported sync and
# no_wdelay: nfsd writes a FILE_SYNC WRITE and syncs it inside its write
# (between nfsd_write_start and _done), with no write gathering. ext4 has
# no journal and is mounted nobarrier, and DIR/f (NFS_SLOW_BLOCKS blocks of
# 4 KiB, 3 by default) is written and synced here: a WRITE over f's blocks
# is then one block write, with no allocation, no journal commit and no
# cache flush. Sets nfs_slow_dev, the block device under DIR.
# LES_NFS_DELAY_PLANT=plain is a planted fault: the plain loop device, no
# delay target (a check of the delay must then fail).
nfs_slow_export()
{
	local dir=$1 ms=$2 img=${1%/}.img loop sectors mod

	for mod in loop dm-delay ext4; do
		modprobe -d "${LES_VM_MODDIR:-/}" "$mod" || modprobe "$mod" ||
			{ echo "no module $mod for kernel $(uname -r)"; return 1; }
	done
	command -v dmsetup >/dev/null || { echo "dmsetup missing: scripts/install-deps"; return 1; }
	truncate -s 16M "$img" &&
		mkfs.ext4 -q -F -O ^has_journal -E lazy_itable_init=0 "$img" || return 1
	loop=$(losetup -f --show "$img") || return 1
	nfs_slow_dev=$loop
	if [ "${LES_NFS_DELAY_PLANT:-}" != plain ]; then
		sectors=$(blockdev --getsz "$loop") || return 1
		# No udev in the guest: libdevmapper makes /dev/mapper's node itself.
		DM_DISABLE_UDEV=1 dmsetup create les-nfs-slow \
			--table "0 $sectors delay $loop 0 0 $loop 0 $ms" || return 1
		nfs_slow_dev=/dev/mapper/les-nfs-slow
	fi
	mkdir -p "$dir" && mount -t ext4 -o noatime,nobarrier "$nfs_slow_dev" "$dir" || return 1
	dd if=/dev/zero of="$dir/f" bs=4k count="${NFS_SLOW_BLOCKS:-3}" conv=fsync status=none ||
		return 1
	echo "$dir 127.0.0.1(rw,sync,no_wdelay,no_subtree_check,no_root_squash,insecure)" \
		>>/etc/exports
	exportfs -ra
}

# nfs_slow_teardown DIR: after nfs_teardown, the slow export's stack.
nfs_slow_teardown()
{
	umount "$1" 2>/dev/null
	DM_DISABLE_UDEV=1 dmsetup remove les-nfs-slow 2>/dev/null
	losetup -j "${1%/}.img" -O NAME --noheadings 2>/dev/null | xargs -r losetup -d
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
