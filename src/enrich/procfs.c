// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/PID/stat and status fields (see procfs.h). */
#include <stdio.h>
#include <string.h>
#include "enrich/procfs.h"

bool les_procfs_stat(const char *stat, uint32_t *ppid, uint64_t *flags)
{
	/* comm may hold spaces and parentheses: fields start after the last ')'. */
	const char *p = strrchr(stat, ')');
	unsigned long long f;
	unsigned int pp;

	if (!p || sscanf(p + 1, " %*c %u %*d %*d %*d %*d %llu", &pp, &f) != 2)
		return false;
	*ppid = pp;
	*flags = f;
	return true;
}

bool les_procfs_status_uid(const char *status, uint32_t *uid)
{
	const char *p = strncmp(status, "Uid:", 4) ? strstr(status, "\nUid:") : status;
	unsigned int u;

	if (p && *p == '\n')
		p++;
	if (!p || sscanf(p + 4, "%u", &u) != 1)
		return false;
	*uid = u;
	return true;
}
