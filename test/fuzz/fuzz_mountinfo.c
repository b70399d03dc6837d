// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The mountinfo line parser: any line parses or is refused, never more. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "model/mounts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	struct les_mount m;

	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	if (les_mount_parse_line(line, &m) == 0) {
		assert(m.mount_point && m.fs_type && m.source && m.root);
		(void)les_fs_family_of(m.fs_type);
		les_mount_free(&m);
	}
	free(line);
	return 0;
}
