// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --actor-rule CLASS=GLOB: the input's first line is the rule, the rest
 * comms to classify (and to match against the glob). A refused rule
 * leaves the rules as they were; a kept one classifies into a known class
 * and, for a comm it matches first, into its own class.
 */
#define _GNU_SOURCE /* memfd_create, in fuzz_util.h */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "enrich/actor.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct les_actor_rules rules = {0};
	char *buf = malloc(size + 1), *rest, err[256] = "";
	const char *spec, *comm;
	int rc;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	rest = buf;
	spec = fuzz_next_line(&rest);
	comm = rest ? rest : "";
	rc = les_actor_rules_add(&rules, spec, err, sizeof(err));
	assert(rc == 0 || rc == -22 /* EINVAL */ || rc == -7 /* E2BIG */);
	assert(rc == 0 ? rules.n == 1 : rules.n == 0 && err[0]);
	assert(memchr(err, '\0', sizeof(err)));
	for (unsigned int flags = 0; flags < 8; flags++) {
		/* The comm's bytes as the kernel gives them: up to 15 and a NUL. */
		size_t len = strnlen(comm, 15);
		enum les_actor_type t = les_actor_classify(&rules, comm, len, flags);

		assert(t < LES_ACTOR_MAX);
		assert(strcmp(les_actor_name(t), "unknown"));
		if (rc == 0 && les_glob_match(rules.r[0].glob, comm, len))
			assert(t == rules.r[0].type);
	}
	free(buf);
	return 0;
}
