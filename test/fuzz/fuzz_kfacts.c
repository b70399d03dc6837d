// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel facts reader (--kernel-facts FILE): any content either reads
 * or is refused with a message naming its line; facts that read are
 * planned from and dumped without fault, and the dump reads back.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe/kfacts.h"
#include "probe/probes.h"

static struct les_kfacts facts, again;
static struct les_probe_plan plan;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct les_plan_options po = { .mode = LES_ATTACH_MODE_AUTO };
	FILE *in = fmemopen((void *)data, size, "r");
	char err[256] = "", *text = NULL;
	size_t len = 0;
	FILE *out;
	int ret;

	if (!in)
		return 0;
	ret = les_kfacts_read(&facts, in, err, sizeof(err));
	fclose(in);
	assert(ret == 0 || (ret == -EINVAL && err[0]));
	if (ret)
		return 0;
	les_probe_plan_make(&plan, &facts, &po);
	out = open_memstream(&text, &len);
	if (!out)
		return 0;
	les_kfacts_write(&facts, out);
	fclose(out);
	in = fmemopen(text, len, "r");
	assert(in && les_kfacts_read(&again, in, err, sizeof(err)) == 0);
	fclose(in);
	free(text);
	return 0;
}
