/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The mount table, from /proc/self/mountinfo: which mounts are network
 * filesystem clients, what their records call `fs`, and how the device
 * numbers BPF reads (sb->s_dev) map back to mounts.
 */
#ifndef LES_MOUNTS_H
#define LES_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum les_fs_family {
	LES_FS_OTHER = 0,
	LES_FS_LUSTRE,
	LES_FS_NFS,
	LES_FS_FUSE,
	LES_FS_FAMILY_MAX,
};

struct les_mount {
	unsigned int mount_id, parent_id;
	unsigned int major, minor;
	uint32_t kdev; /* kernel dev_t encoding: major << 20 | minor (what BPF sees in sb->s_dev) */
	char *root; /* root of the mount within the fs, unescaped */
	char *mount_point; /* unescaped */
	char *fs_type; /* e.g. "lustre", "nfs4", "fuse.glusterfs", "fuse" */
	char *source; /* unescaped mount source */
	char *super_opts;
	/*
	 * What records call `fs`: the Lustre fsname ("mgs@tcp:/fsname" ->
	 * "fsname"), otherwise the source (NFS "server:/export", FUSE source).
	 */
	char *fs_name;
	enum les_fs_family family;
};

struct les_mount_table {
	struct les_mount *v;
	size_t n, cap;
};

/* Parse one mountinfo line. 0, -EINVAL or -ENOMEM; on error *out holds no allocation. */
int les_mount_parse_line(const char *line, struct les_mount *out);
void les_mount_free(struct les_mount *m);

/*
 * Load a mountinfo file (NULL: /proc/self/mountinfo) into *t, which need
 * not be initialized (free a previous table first). Lines that do not
 * parse are skipped. 0 or a negative errno.
 */
int les_mount_table_load(struct les_mount_table *t, const char *path);
void les_mount_table_free(struct les_mount_table *t);

/* "lustre" -> LUSTRE, "nfs"/"nfs4" -> NFS, "fuse"/"fuse.*" -> FUSE (fuseblk is a local fs). */
enum les_fs_family les_fs_family_of(const char *fs_type);
const char *les_fs_family_name(enum les_fs_family family);

/* Kernel dev_t encoding (major << 20 | minor) from and to glibc's dev_t. */
uint32_t les_kdev_from_user(dev_t st_dev);
dev_t les_kdev_to_user(uint32_t kdev);

/*
 * The mount of a superblock device. Bind mounts share a device: the last
 * one that shows the whole fs (root "/") is preferred, else the last one.
 */
const struct les_mount *les_mount_table_find_dev(const struct les_mount_table *t, uint32_t kdev);

/*
 * The mount whose mount point is the longest component-wise prefix of the
 * canonical absolute path abs_path ("/mnt/a" does not hold "/mnt/ab"); of
 * mounts on the same point the last (top) one. *exact, if not NULL, tells
 * whether abs_path is the mount point itself. NULL if nothing matches.
 */
const struct les_mount *les_mount_table_find_path(const struct les_mount_table *t,
						  const char *abs_path, bool *exact);

/*
 * As find_path for a user-given path (--mount PATH), canonicalized with
 * realpath(3) first. NULL with errno set if the path cannot be resolved.
 */
const struct les_mount *les_mount_table_resolve(const struct les_mount_table *t,
						const char *user_path, bool *exact);

/*
 * Every Lustre, NFS and FUSE mount that is not hidden by a later mount on
 * the same mount point, in table order, for auto-detection. Stores up to
 * max pointers into out and returns how many were stored.
 */
int les_mount_table_network(const struct les_mount_table *t, const struct les_mount **out,
			    size_t max);

#endif /* LES_MOUNTS_H */
