// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The cgroup path and /proc/PID/cgroup parsers: bounded, terminated fields. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "enrich/cgroup.h"

static void check(const struct les_cgroup_info *cg)
{
	assert(cg->sched < LES_SCHED_MAX);
	assert(cg->runtime < LES_CRT_MAX);
	assert(memchr(cg->job_id, '\0', sizeof(cg->job_id)));
	assert(memchr(cg->container_id, '\0', sizeof(cg->container_id)));
	assert(memchr(cg->pod_uid, '\0', sizeof(cg->pod_uid)));
	assert(cg->sched != LES_SCHED_NONE || cg->job_id[0] == '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy: ASan sees a read past the end. */
	char *buf = malloc(size ? size : 1);
	struct les_cgroup_info cg;
	const char *path;
	size_t path_len;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	les_cgroup_parse(buf, size, &cg);
	check(&cg);
	les_cgroup_parse_proc(buf, size, &cg);
	check(&cg);
	if (les_cgroup_pick_line(buf, size, &path, &path_len) == 0)
		assert(path >= buf && path + path_len <= buf + size);
	free(buf);
	return 0;
}
