// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Observed-mount selection: any mountinfo (before the input's first NUL
 * byte) and any --mount paths ('\n'-separated, after it) through
 * les_observed_select (start-up) and les_observed_reselect (a mount
 * change). Select gives a set or one line of error; every mount of a set
 * is a Lustre, NFS or FUSE one, found by its dev, with record fields that
 * parse as JSON members; reselect never fails but for memory. Mount paths
 * and fsnames come from users (an unprivileged FUSE mount).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_util.h"
#include "decode/mountwatch.h"
#include "model/observed.h"

#define PATHS_MAX 8

static struct les_observed obs;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return fuzz_file_init("les-fuzz-observed");
}

static void check_set(const struct les_observed *o)
{
	assert(o->n <= LES_MAX_MOUNTS);
	for (size_t i = 0; i < o->n; i++) {
		const struct les_observed_mount *m = &o->m[i];
		char buf[LES_MOUNT_JSON_MAX + 2];
		json_t *doc;

		assert(m->family == LES_FS_LUSTRE || m->family == LES_FS_NFS ||
		       m->family == LES_FS_FUSE);
		assert(les_observed_find(o, m->dev) == m);
		assert(m->json_len > 0 && m->json_len < LES_MOUNT_JSON_MAX);
		buf[0] = '{';
		memcpy(buf + 1, m->json, m->json_len);
		buf[m->json_len + 1] = '}';
		doc = json_loadb(buf, m->json_len + 2, 0, NULL);
		assert(doc && json_is_string(json_object_get(doc, "mount")));
		json_decref(doc);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t table_len = nul ? (size_t)(nul - data) : size, n_paths = 0;
	const char *paths[PATHS_MAX];
	struct les_mount_table t = {0};
	char *rest = NULL, *p, err[512] = "";
	int ret;

	if (!fuzz_file_put(data, table_len))
		return 0;
	if (les_mount_table_load(&t, fuzz_path))
		return 0;
	if (nul) {
		rest = strndup((const char *)nul + 1, size - table_len - 1);
		for (p = rest; p && *p && n_paths < PATHS_MAX;)
			paths[n_paths++] = fuzz_next_line(&p);
	}
	ret = les_observed_select(&obs, &t, paths, n_paths, err, sizeof(err));
	if (ret == 0)
		check_set(&obs);
	else
		assert(err[0] && !strchr(err, '\n') &&
		       (ret == -EINVAL || ret == -ENOENT || ret == -E2BIG || ret == -ENAMETOOLONG ||
			ret == -ENOMEM));
	les_observed_free(&obs);
	ret = les_observed_reselect(&obs, &t, paths, n_paths);
	assert(ret == 0 || ret == -ENOMEM);
	if (ret == 0)
		check_set(&obs);
	les_observed_free(&obs);
	les_mount_table_free(&t);
	free(rest);
	return 0;
}
