/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Mounts that come and go while the tool runs. /proc/self/mountinfo
 * reports a change of the mount namespace as POLLPRI|POLLERR; on one, the
 * observed set is chosen again (tolerantly: a --mount path that is no
 * longer a supported mount is left out until one appears there again),
 * pushed to BPF, and each mount that went away or appeared gets a notice
 * line.
 */
#ifndef LES_MOUNTWATCH_H
#define LES_MOUNTWATCH_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>
#include <stddef.h>
#include "model/observed.h"

struct les_mountwatch {
	const char *path; /* the mountinfo watched */
	int fd; /* a /proc mountinfo, polled for POLLPRI; -1 otherwise */
	bool plain; /* another file: compared by inode, size and mtime */
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

/*
 * Watch path (NULL: /proc/self/mountinfo). A /proc/PID/mountinfo reports
 * changes by POLLPRI; any other file is seen to change when it is
 * rewritten or replaced.
 */
int les_mountwatch_open(struct les_mountwatch *w, const char *path);
/* True once after each change of the mount table; never blocks. */
bool les_mountwatch_changed(struct les_mountwatch *w);
void les_mountwatch_close(struct les_mountwatch *w);

/*
 * Choose the observed mounts again: the mounts holding paths, in their
 * real form (les_observed_real_paths), matched as text (skipping
 * those no longer on Lustre, NFS or FUSE), or with n_paths == 0 every such
 * mount. An empty result is not an error; mounts left out are counted in
 * obs->skipped_* as by les_observed_select. 0 or -ENOMEM.
 */
int les_observed_reselect(struct les_observed *obs, const struct les_mount_table *t,
			  const char *const *paths, size_t n_paths);

/* The same mount in both sets: same superblock, same mount point. */
bool les_observed_has(const struct les_observed *obs, const struct les_observed_mount *m);

#endif /* LES_MOUNTWATCH_H */
