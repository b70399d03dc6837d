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
#include "fuzz_util.h"
#include "cli/options.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return fuzz_file_init("les-fuzz-config");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[] = {"lustre-ebpf-stream", "--config", fuzz_path, NULL};
	struct les_options o;
	int ret;

	if (!fuzz_file_put(data, size))
		return 0;
	les_options_defaults(&o);
	ret = les_options_parse(&o, 3, argv);
	assert(ret == 0 || ret == 1 || ret == LES_EXIT_USAGE || ret == LES_EXIT_RUNTIME);
	les_options_release();
	return 0;
}
