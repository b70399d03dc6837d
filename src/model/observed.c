// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The set of observed mounts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/json.h"
#include "model/observed.h"

static int encode_mount_json(struct les_observed_mount *om)
{
	struct jw w;

	/* Encode as an object, then keep its members. */
	jw_init(&w, om->json, sizeof(om->json));
	jw_obj_begin(&w);
	jw_kv_cstr(&w, "fs_type", om->fs_type);
	jw_kv_cstr(&w, "fs", om->fs_name);
	jw_kv_cstr(&w, "mount", om->mount_point);
	jw_obj_end(&w);
	om->json_len = jw_members(&w);
	return w.overflow ? -ENAMETOOLONG : 0;
}

static void free_mount(struct les_observed_mount *om)
{
	free(om->mount_point);
	free(om->fs_type);
	free(om->fs_name);
}

/*
 * Observe m: 0 when added (or already observed), -E2BIG when the set is
 * full, -ENAMETOOLONG when too long to describe (left out: counted),
 * -ENOMEM. Only a whole mount is ever added.
 */
static int add_mount(struct les_observed *obs, const struct les_mount *m)
{
	const struct les_observed_mount *same = les_observed_find(obs, m->kdev);
	struct les_observed_mount *om;

	if (same) {
		/* One device, one set of records: bind mounts, Lustre mounted twice. */
		if (strcmp(same->mount_point, m->mount_point) && !obs->shared_dev++)
			snprintf(obs->shared_first, sizeof(obs->shared_first), "%s as %s",
				 m->mount_point, same->mount_point);
		return 0;
	}
	if (obs->n >= LES_MAX_MOUNTS)
		return -E2BIG;
	om = &obs->m[obs->n];
	memset(om, 0, sizeof(*om));
	om->dev = m->kdev;
	om->family = m->family;
	om->mount_point = strdup(m->mount_point);
	om->fs_type = strdup(m->fs_type);
	om->fs_name = strdup(m->fs_name ? m->fs_name : m->source);
	if (!om->mount_point || !om->fs_type || !om->fs_name) {
		free_mount(om);
		return -ENOMEM;
	}
	if (encode_mount_json(om)) {
		free_mount(om);
		obs->skipped_too_long++;
		return -ENAMETOOLONG;
	}
	obs->n++;
	return 0;
}

/*
 * Observe the mount holding path. A user's path is canonicalized first
 * (realpath: a walk of the filesystem); a real one, from les_observed_real_paths,
 * is matched against the table as text, touching no filesystem.
 */
static int add_path(struct les_observed *obs, const struct les_mount_table *t, const char *path,
		    bool is_real, char *err, size_t errlen)
{
	const struct les_mount *m;
	int ret;

	if (is_real) {
		m = les_mount_table_find_path(t, path, NULL);
		if (!m)
			errno = ENOENT;
	} else {
		m = les_mount_table_resolve(t, path, NULL);
	}

	if (!m) {
		snprintf(err, errlen, "--mount %s: %s", path, strerror(errno ? errno : ENOENT));
		return -EINVAL;
	}
	if (m->family == LES_FS_OTHER) {
		snprintf(err, errlen,
			 "--mount %s: %s is a %s mount, not Lustre, NFS or FUSE", path,
			 m->mount_point, m->fs_type);
		return -EINVAL;
	}
	ret = add_mount(obs, m);
	if (ret == -ENAMETOOLONG)
		return 0; /* counted; nothing observed for it */
	if (ret)
		snprintf(err, errlen, "--mount %s: %s", path,
			 ret == -E2BIG ? "too many mounts" : strerror(-ret));
	return ret;
}

/* Every Lustre, NFS and FUSE mount, as far as the set goes. */
static int add_all(struct les_observed *obs, const struct les_mount_table *t, char *err,
		   size_t errlen)
{
	const struct les_mount **found = calloc(t->n ? t->n : 1, sizeof(*found));
	int n, ret = 0;

	if (!found)
		return -ENOMEM;
	n = les_mount_table_network(t, found, t->n);
	for (int i = 0; i < n; i++) {
		ret = add_mount(obs, found[i]);
		if (ret == -E2BIG)
			obs->skipped_limit++;
		if (ret == -ENOMEM) {
			snprintf(err, errlen, "mount %s: %s", found[i]->mount_point,
				 strerror(ENOMEM));
			break;
		}
		ret = 0;
	}
	free(found);
	return ret;
}

static int select_paths(struct les_observed *obs, const struct les_mount_table *t,
			const char *const *paths, size_t n_paths, bool are_real, char *err,
			size_t errlen)
{
	int ret;

	memset(obs, 0, sizeof(*obs));
	for (size_t i = 0; i < n_paths; i++) {
		ret = add_path(obs, t, paths[i], are_real, err, errlen);
		if (ret)
			return ret;
	}
	if (!n_paths && (ret = add_all(obs, t, err, errlen)))
		return ret;
	if (!obs->n && obs->skipped_too_long) {
		snprintf(err, errlen,
			 "nothing to observe: %u mount(s) too long to describe (fs_type, fs and "
			 "mount over %d bytes of JSON)",
			 obs->skipped_too_long, LES_MOUNT_JSON_MAX);
		return -ENOENT;
	}
	if (!obs->n && !n_paths) {
		snprintf(err, errlen, "nothing to observe: no Lustre, NFS or FUSE mount found");
		return -ENOENT;
	}
	return 0;
}

int les_observed_select(struct les_observed *obs, const struct les_mount_table *t,
			const char *const *paths, size_t n_paths, char *err, size_t errlen)
{
	return select_paths(obs, t, paths, n_paths, false, err, errlen);
}

int les_observed_select_real(struct les_observed *obs, const struct les_mount_table *t,
			     const char *const *real_paths, size_t n_paths, char *err,
			     size_t errlen)
{
	return select_paths(obs, t, real_paths, n_paths, true, err, errlen);
}

char **les_observed_real_paths(const char *const *paths, size_t n_paths)
{
	char **real = calloc(n_paths + 1, sizeof(*real));

	for (size_t i = 0; real && i < n_paths; i++) {
		real[i] = realpath(paths[i], NULL);
		if (!real[i]) {
			les_observed_free_paths(real);
			return NULL;
		}
	}
	return real;
}

void les_observed_free_paths(char **paths)
{
	for (size_t i = 0; paths && paths[i]; i++)
		free(paths[i]);
	free(paths);
}

void les_observed_warn_skipped(const struct les_observed *obs, const struct les_observed *prev,
			       FILE *f)
{
	if (obs->shared_dev > (prev ? prev->shared_dev : 0))
		fprintf(f,
			"lustre-ebpf-stream: note: %u mount(s) on the device of an observed one "
			"(bind mounts, or one Lustre filesystem mounted twice): their records name "
			"the observed one (%s)\n",
			obs->shared_dev, obs->shared_first);
	if (obs->skipped_limit <= (prev ? prev->skipped_limit : 0) &&
	    obs->skipped_too_long <= (prev ? prev->skipped_too_long : 0))
		return;
	fprintf(f,
		"lustre-ebpf-stream: warning: %u mount(s) not observed: %u past the limit of %d, "
		"%u too long to describe (over %d bytes of JSON)\n",
		obs->skipped_limit + obs->skipped_too_long, obs->skipped_limit, LES_MAX_MOUNTS,
		obs->skipped_too_long, LES_MOUNT_JSON_MAX);
}

void les_observed_stats_json(const struct les_observed *obs, struct jw *w)
{
	jw_key(w, "mounts");
	jw_obj_begin(w);
	jw_kv_u64(w, "observed", obs->n);
	jw_kv_u64(w, "skipped_limit", obs->skipped_limit);
	jw_kv_u64(w, "skipped_too_long", obs->skipped_too_long);
	jw_obj_end(w);
}

void les_observed_free(struct les_observed *obs)
{
	for (size_t i = 0; i < obs->n; i++)
		free_mount(&obs->m[i]);
	obs->n = 0;
}

const struct les_observed_mount *les_observed_find(const struct les_observed *obs, uint32_t dev)
{
	for (size_t i = 0; i < obs->n; i++)
		if (obs->m[i].dev == dev)
			return &obs->m[i];
	return NULL;
}
