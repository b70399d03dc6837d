/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The set of observed mounts: chosen from the mount table by --mount or by
 * auto-detection, each with its record fields pre-encoded as JSON so the
 * per-record path copies them instead of escaping them again.
 */
#ifndef LES_OBSERVED_H
#define LES_OBSERVED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "les_record.h"
#include "model/mounts.h"

#define LES_MOUNT_JSON_MAX 1536

struct les_observed_mount {
	uint32_t dev; /* kernel dev_t of the superblock */
	enum les_fs_family family;
	char *mount_point;
	char *fs_type;
	char *fs_name;
	/* "fs_type":"…","fs":"…","mount":"…" */
	char json[LES_MOUNT_JSON_MAX];
	size_t json_len;
};

struct les_observed {
	struct les_observed_mount m[LES_MAX_MOUNTS];
	size_t n;
	/* Mounts of this selection left out, with the reason. */
	uint32_t skipped_limit;	   /* past LES_MAX_MOUNTS */
	uint32_t skipped_too_long; /* fs_type, fs and mount over LES_MOUNT_JSON_MAX as JSON */
	/*
	 * Mounts on the device of an observed one: their records name it. A
	 * bind mount shares the superblock; every Lustre mount of one
	 * filesystem on a node gets one s_dev (ll_fill_super sets it from the
	 * MDC's UUID, for NFS export clustering), so nothing a record carries
	 * tells them apart. The first of them, for the note.
	 */
	uint32_t shared_dev;
	char shared_first[256];
};

/*
 * Choose the mounts to observe: each of paths (which must be, or be inside,
 * a Lustre, NFS or FUSE mount), or with n_paths == 0 every such mount.
 * A mount too long to describe in a record, or past LES_MAX_MOUNTS when
 * auto-detecting, is left out and counted in skipped_*: anyone may make a
 * FUSE mount, and one must not stop the tool or hide the others.
 * Returns 0, or a negative errno with a one-line reason in err:
 * -EINVAL for a path that is not on a supported filesystem, -ENOENT when
 * there is nothing to observe.
 */
int les_observed_select(struct les_observed *obs, const struct les_mount_table *t,
			const char *const *paths, size_t n_paths, char *err, size_t errlen);
/*
 * As les_observed_select for paths already in their real form (from
 * les_observed_real_paths): matched against the table as text, so that
 * choosing again while the probes run makes the tool itself walk no
 * observed filesystem (a hung one would hang it; its own lookups would
 * be counted as filtered records).
 */
int les_observed_select_real(struct les_observed *obs, const struct les_mount_table *t,
			     const char *const *real_paths, size_t n_paths, char *err,
			     size_t errlen);
/* realpath(3) of each path, in a NULL-terminated array; NULL if one fails (errno). */
char **les_observed_real_paths(const char *const *paths, size_t n_paths);
void les_observed_free_paths(char **paths);
void les_observed_free(struct les_observed *obs);

const struct les_observed_mount *les_observed_find(const struct les_observed *obs, uint32_t dev);

/*
 * One line on f when obs leaves mounts out and prev (the selection before,
 * NULL at start-up) did not leave out as many: a warning, not one per check.
 * Likewise a note when more mounts share an observed one's device.
 */
void les_observed_warn_skipped(const struct les_observed *obs, const struct les_observed *prev,
			       FILE *f);

struct jw;
/* "mounts":{"observed":…,"skipped_limit":…,"skipped_too_long":…} for the stats record. */
void les_observed_stats_json(const struct les_observed *obs, struct jw *w);

#endif /* LES_OBSERVED_H */
