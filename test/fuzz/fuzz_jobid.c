// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --jobid-name FORMAT: the input's first line is the format, the next ones
 * the job id, the comm and the hostname. Checked or not, the expansion is
 * bounded by Lustre's LUSTRE_JOBID_SIZE and terminated; a format the check
 * accepts is shorter than it.
 */
#define _GNU_SOURCE /* memfd_create, in fuzz_util.h */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_util.h"
#include "enrich/jobid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *p = buf, out[64], small[5], err[256] = "";
	struct les_jobid_ctx c = {.uid = 4294967295u, .gid = 0, .pid = 4194304};
	const char *fmt;
	size_t n;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	fmt = fuzz_next_line(&p);
	c.job_id = fuzz_next_line(&p);
	c.comm = fuzz_next_line(&p);
	c.comm_len = c.comm ? 16 : 0;
	if (c.comm && strlen(c.comm) < 16)
		c.comm_len = strlen(c.comm) + 1;
	c.hostname = fuzz_next_line(&p);
	if (les_jobid_fmt_check(fmt, err, sizeof(err)) == 0)
		assert(strlen(fmt) < LES_JOBID_SIZE);
	else
		assert(err[0]);
	n = les_jobid_format(fmt, &c, out, sizeof(out));
	assert(n < LES_JOBID_SIZE && n == strlen(out));
	n = les_jobid_format(fmt, &c, small, sizeof(small));
	assert(n < sizeof(small) && n == strlen(small));
	assert(les_jobid_format(fmt, &c, out, 0) == 0);
	free(buf);
	return 0;
}
