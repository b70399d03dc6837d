// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The config file parser: any file content read through --config, then
 * applied as options. Never more than a usage error; never exits.
 * Run with -close_fd_mask=3.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "options.h"

static int fd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fd = memfd_create("les-fuzz-config", 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return fd < 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[] = {"lustre-ebpf-stream", "--config", path, NULL};
	struct les_options o;
	int ret;

	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	les_options_defaults(&o);
	ret = les_options_parse(&o, 3, argv);
	assert(ret == 0 || ret == 1 || ret == LES_EXIT_USAGE || ret == LES_EXIT_RUNTIME);
	les_options_release();
	return 0;
}
