// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Mount table changes while running (see mountwatch.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "decode/mountwatch.h"

#define PROC_SUPER_MAGIC 0x9fa0

/* What tells a plain file's new content: its inode, size and mtime. */
static void file_sig(const struct stat *st, struct les_mountwatch *w)
{
	w->ino = st->st_ino;
	w->size = st->st_size;
	w->mtime = st->st_mtim;
}

int les_mountwatch_open(struct les_mountwatch *w, const char *path)
{
	struct statfs sfs;
	struct stat st;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->path = path ? path : "/proc/self/mountinfo";
	w->fd = open(w->path, O_RDONLY | O_CLOEXEC);
	if (w->fd < 0)
		return -errno;
	/* A /proc/PID/mountinfo (a DaemonSet reads the host's) signals changes by POLLPRI. */
	if (fstatfs(w->fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC)
		return 0;
	/* Any other file is compared with what it was, at each check. */
	w->plain = true;
	if (fstat(w->fd, &st) == 0)
		file_sig(&st, w);
	close(w->fd);
	w->fd = -1;
	return 0;
}

static bool plain_file_changed(struct les_mountwatch *w)
{
	struct stat st;

	if (stat(w->path, &st) != 0)
		return false;
	if (st.st_ino == w->ino && st.st_size == w->size &&
	    st.st_mtim.tv_sec == w->mtime.tv_sec && st.st_mtim.tv_nsec == w->mtime.tv_nsec)
		return false;
	file_sig(&st, w);
	return true;
}

bool les_mountwatch_changed(struct les_mountwatch *w)
{
	struct pollfd p = {.fd = w->fd, .events = POLLPRI};

	if (w->plain)
		return plain_file_changed(w);
	if (w->fd < 0)
		return false;
	/* The kernel acknowledges the event when it reports it: no re-read needed. */
	if (poll(&p, 1, 0) <= 0)
		return false;
	return p.revents & (POLLPRI | POLLERR);
}

void les_mountwatch_close(struct les_mountwatch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	w->plain = false;
}

bool les_observed_has(const struct les_observed *obs, const struct les_observed_mount *m)
{
	for (size_t i = 0; i < obs->n; i++)
		if (obs->m[i].dev == m->dev && strcmp(obs->m[i].mount_point, m->mount_point) == 0)
			return true;
	return false;
}

/* Move the mounts of one into obs (it owns their strings from now on). */
static void take_mounts(struct les_observed *obs, struct les_observed *one)
{
	for (size_t i = 0; i < one->n; i++) {
		struct les_observed_mount *m = &one->m[i];

		if (obs->n < LES_MAX_MOUNTS && !les_observed_find(obs, m->dev)) {
			obs->m[obs->n++] = *m;
			continue;
		}
		if (!les_observed_find(obs, m->dev))
			obs->skipped_limit++;
		free(m->mount_point);
		free(m->fs_type);
		free(m->fs_name);
	}
	obs->skipped_too_long += one->skipped_too_long;
	one->n = 0;
}

int les_observed_reselect(struct les_observed *obs, const struct les_mount_table *t,
			  const char *const *paths, size_t n_paths)
{
	struct les_observed *one;
	char err[256];
	int ret;

	memset(obs, 0, sizeof(*obs));
	if (!n_paths) {
		/* Nothing to observe now is not an error while running; the rest is. */
		ret = les_observed_select(obs, t, NULL, 0, err, sizeof(err));
		return ret == -ENOENT ? 0 : ret;
	}
	one = malloc(sizeof(*one));
	if (!one)
		return -ENOMEM;
	for (size_t i = 0; i < n_paths; i++) {
		/* A path no longer on a supported mount is skipped, not fatal. */
		ret = les_observed_select_real(one, t, &paths[i], 1, err, sizeof(err));
		if (ret == -ENOMEM) {
			les_observed_free(one);
			free(one);
			return ret;
		}
		take_mounts(obs, one);
	}
	free(one);
	return 0;
}
