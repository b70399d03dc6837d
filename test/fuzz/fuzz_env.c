// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The environ parser: any byte block (NUL separators, no trailing NUL, no
 * '=', huge values) must leave only allowlisted, NUL-terminated values.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "enrich/envtags.h"

static struct les_env_allow allow;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const job[] = {"SITE_JOB"};
	static const char *const tags[] = {"PROJECT", "SLURM_JOB_ACCOUNT", "A"};
	char err[128];

	(void)argc;
	(void)argv;
	return les_env_allow_init(&allow, job, 1, tags, 3, err, sizeof(err));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct les_env_tags tags;
	char job[64];

	les_env_extract(&allow, (const char *)data, size, &tags);
	assert(tags.n <= LES_ENV_TAGS_MAX);
	for (unsigned int i = 0; i < tags.n; i++) {
		const struct les_env_value *v = &tags.v[i];

		assert(v->name_idx < allow.n);
		assert(v->len < LES_ENV_VALUE_MAX);
		assert(v->value[v->len] == '\0');
		assert(les_env_value_name(&allow, v) != NULL);
	}
	if (les_env_job_id(&allow, &tags, job, sizeof(job), NULL) == 0)
		assert(strlen(job) < sizeof(job));
	else
		assert(job[0] == '\0');
	return 0;
}
