// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What /metrics serves, without the HTTP: the input is up to 16 access
 * records, NUL-separated, each the '\n'-separated label values a user can
 * choose (job id, process, mount, user, fs type). They go to a store made
 * for the input (so an input means the same whatever came before), whose
 * render must be exposition text with every label value escaped. The
 * requests to the running endpoint are fuzz_http's.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "exposition.h"

#define MAX_RECORDS 16

static const struct les_prom_config cfg = {
	.path = "/metrics",
	.uid_labels = true,
	.histogram_process = true,
	.max_series = MAX_RECORDS / 2, /* some inputs reach the limit */
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct les_prom *store = les_prom_new(&cfg);
	char *text = malloc(size + 1);
	char *rec = text;

	if (!store || !text)
		goto out;
	memcpy(text, data, size);
	text[size] = '\0';
	for (int i = 0; i < MAX_RECORDS && rec < text + size; i++) {
		char *next = rec + strlen(rec) + 1;

		add_record(store, rec);
		rec = next;
	}
	check_render(store);
out:
	les_prom_free(store);
	free(text);
	return 0;
}
