/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What several harnesses share: the input as a file, the input as lines (needs _GNU_SOURCE). */
#ifndef LES_FUZZ_UTIL_H
#define LES_FUZZ_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A memfd the input is written to, and the path the code under test opens. */
static int fuzz_fd = -1;
static char fuzz_path[64];

/* From LLVMFuzzerInitialize: 0, or 1 (libFuzzer stops) without a memfd. */
static inline int fuzz_file_init(const char *name)
{
	fuzz_fd = memfd_create(name, 0);
	snprintf(fuzz_path, sizeof(fuzz_path), "/proc/self/fd/%d", fuzz_fd);
	return fuzz_fd < 0;
}

/* The file's content becomes the size bytes at data. */
static inline bool fuzz_file_put(const uint8_t *data, size_t size)
{
	return !ftruncate(fuzz_fd, 0) && pwrite(fuzz_fd, data, size, 0) == (ssize_t)size;
}

/* The next '\n'-ended piece of *p (NULL past the end), terminated in place. */
static inline const char *fuzz_next_line(char **p)
{
	char *s = *p, *nl;

	if (!s)
		return NULL;
	nl = strchr(s, '\n');
	*p = nl ? nl + 1 : NULL;
	if (nl)
		*nl = '\0';
	return s;
}

#endif /* LES_FUZZ_UTIL_H */
