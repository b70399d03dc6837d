// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/PID/stat and status: any text is parsed or refused, never read past its end. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "enrich/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy (and its NUL): ASan sees a read past the end. */
	char *buf = malloc(size + 1);
	uint32_t ppid = 0xdead, uid = 0xdead;
	uint64_t flags = 0xdead;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	if (!les_procfs_stat(buf, &ppid, &flags))
		assert(ppid == 0xdead && flags == 0xdead); /* untouched when refused */
	else
		assert(strrchr(buf, ')'));
	if (!les_procfs_status_uid(buf, &uid))
		assert(uid == 0xdead);
	else
		assert(strstr(buf, "Uid:"));
	free(buf);
	return 0;
}
