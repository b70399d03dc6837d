// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The set of observed mounts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"
#include "observed.h"

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

static bool already_observed(const struct les_observed *obs, uint32_t dev)
{
	return les_observed_find(obs, dev) != NULL;
}

static int add_mount(struct les_observed *obs, const struct les_mount *m)
{
	struct les_observed_mount *om;

	if (already_observed(obs, m->kdev))
		return 0; /* bind mounts of one superblock: one set of records */
	if (obs->n >= LES_MAX_MOUNTS)
		return -E2BIG;
	om = &obs->m[obs->n];
	memset(om, 0, sizeof(*om));
	om->dev = m->kdev;
	om->family = m->family;
	om->mount_point = strdup(m->mount_point);
	om->fs_type = strdup(m->fs_type);
	om->fs_name = strdup(m->fs_name ? m->fs_name : m->source);
	if (!om->mount_point || !om->fs_type || !om->fs_name)
		return -ENOMEM;
	obs->n++;
	return encode_mount_json(om);
}

static int add_path(struct les_observed *obs, const struct les_mount_table *t, const char *path,
		    char *err, size_t errlen)
{
	const struct les_mount *m = les_mount_table_resolve(t, path, NULL);
	int ret;

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
	if (ret)
		snprintf(err, errlen, "--mount %s: %s", path,
			 ret == -E2BIG ? "too many mounts" : strerror(-ret));
	return ret;
}

int les_observed_select(struct les_observed *obs, const struct les_mount_table *t,
			const char *const *paths, size_t n_paths, char *err, size_t errlen)
{
	const struct les_mount *found[256];
	int n, ret;

	memset(obs, 0, sizeof(*obs));
	for (size_t i = 0; i < n_paths; i++) {
		ret = add_path(obs, t, paths[i], err, errlen);
		if (ret)
			return ret;
	}
	if (n_paths)
		return 0;
	n = les_mount_table_network(t, found, sizeof(found) / sizeof(found[0]));
	for (int i = 0; i < n && obs->n < LES_MAX_MOUNTS; i++) {
		ret = add_mount(obs, found[i]);
		if (ret) {
			snprintf(err, errlen, "mount %s: %s", found[i]->mount_point,
				 strerror(-ret));
			return ret;
		}
	}
	if (!obs->n) {
		snprintf(err, errlen, "nothing to observe: no Lustre, NFS or FUSE mount found");
		return -ENOENT;
	}
	return 0;
}

void les_observed_free(struct les_observed *obs)
{
	for (size_t i = 0; i < obs->n; i++) {
		free(obs->m[i].mount_point);
		free(obs->m[i].fs_type);
		free(obs->m[i].fs_name);
	}
	obs->n = 0;
}

const struct les_observed_mount *les_observed_find(const struct les_observed *obs, uint32_t dev)
{
	for (size_t i = 0; i < obs->n; i++)
		if (obs->m[i].dev == dev)
			return &obs->m[i];
	return NULL;
}
