// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The --top --input reader: any capture file (lines of JSON, or not) is
 * replayed to its end, without --batch, so the number of frames is the
 * replay's own bound (a jump in time is one gap frame): a capture whose
 * frames grow with the time it spans is a timeout. Each line also goes to
 * les_replay_parse alone. Run with -close_fd_mask=3 (frames and the
 * end-of-replay line go to stdout and stderr).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_util.h"
#include "les_record.h"
#include "sink/replay.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return fuzz_file_init("les-fuzz-replay");
}

/* Each line alone: a record has a kind the stages know, or it is not one. */
static void parse_lines(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *line, *save = NULL;
	struct les_event ev;

	if (!buf)
		return;
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int rc = les_replay_parse(line, &ev);

		assert(rc >= -1 && rc <= 1);
		if (rc == 1)
			assert(ev.kind == LES_REC_ACCESS || ev.kind == LES_REC_RPC ||
			       ev.kind == LES_REC_RPC_EVENT);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* What --top --input FILE gives the replay: the default pace and interval. */
	struct les_replay_config cfg = {.input_path = fuzz_path, .interval_ns = 1000000000ULL};

	parse_lines(data, size);
	if (!fuzz_file_put(data, size))
		return 0;
	assert(les_replay_run(&cfg) == 0);
	return 0;
}
