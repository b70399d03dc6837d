// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The command line parser on any argv (the input split at NUL bytes): it
 * returns 0, 1 or a usage status, prints at most, and never exits.
 * Run with -close_fd_mask=3: --help and usage errors print.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cli/options.h"

#define MAX_ARGS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 2];
	char *copy = malloc(size + 1);
	struct les_options o;
	int argc = 1, ret;
	size_t start = 0;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[0] = "lustre-ebpf-stream";
	for (size_t i = 0; i <= size && argc <= MAX_ARGS; i++) {
		if (copy[i] != '\0')
			continue;
		argv[argc++] = copy + start;
		start = i + 1;
	}
	argv[argc] = NULL;
	les_options_defaults(&o);
	ret = les_options_parse(&o, argc, argv);
	assert(ret == 0 || ret == 1 || ret == LES_EXIT_USAGE || ret == LES_EXIT_RUNTIME);
	if (ret == 0) {
		assert(o.n_mounts <= LES_MAX_MOUNTS);
		assert(o.ringbuf_bytes >= 4096 && !(o.ringbuf_bytes & (o.ringbuf_bytes - 1)));
	}
	les_options_release();
	free(copy);
	return 0;
}
