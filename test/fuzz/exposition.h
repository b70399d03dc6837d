/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the /metrics harnesses share: a record whose label values come from
 * the input, and the check that text is exposition text (HELP/TYPE
 * comments and `name{l="v",...} value` samples with escaped values).
 */
#ifndef LES_FUZZ_EXPOSITION_H
#define LES_FUZZ_EXPOSITION_H

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_util.h"
#include "les_record.h"
#include "model/ops.h"
#include "sink/prom.h"

/* The checker is not what is fuzzed: its comparisons give no coverage to follow. */
#define FUZZ_NO_COVERAGE __attribute__((no_sanitize("coverage"), noinline))

FUZZ_NO_COVERAGE static inline bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && c >= '0' && c <= '9');
}

/* name{k="v",...}: the end of the labels, asserted well formed. */
FUZZ_NO_COVERAGE static inline const char *labels(const char *p, const char *end)
{
	if (p < end && *p == '{') {
		p++;
		while (p < end && *p != '}') {
			assert(name_char(*p, true));
			while (p < end && name_char(*p, false))
				p++;
			assert(p + 1 < end && p[0] == '=' && p[1] == '"');
			for (p += 2; p < end && *p != '"'; p++) {
				assert(*p != '\n');
				if (*p == '\\') {
					assert(p + 1 < end &&
					       (p[1] == '\\' || p[1] == '"' || p[1] == 'n'));
					p++;
				}
			}
			assert(p < end && *p == '"');
			p++;
			if (p < end && *p == ',')
				p++;
		}
		assert(p < end && *p == '}');
		p++;
	}
	return p;
}

/* The exposition text: every line a comment or a sample. */
FUZZ_NO_COVERAGE static inline void check_exposition(const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char *num_end;

		assert(nl); /* every line ends with a newline */
		if (*p == '#') {
			assert(!strncmp(p, "# HELP ", 7) || !strncmp(p, "# TYPE ", 7));
		} else {
			assert(name_char(*p, true));
			while (p < nl && name_char(*p, false))
				p++;
			p = labels(p, nl);
			assert(p < nl && *p == ' ');
			strtod(p + 1, &num_end);
			assert(num_end > p + 1 && num_end <= nl);
		}
		p = nl + 1;
	}
}

/* An access record whose label values are the '\n'-separated lines of labels_part. */
static inline void add_record(struct les_prom *store, char *labels_part)
{
	struct les_event ev = {
		.kind = LES_REC_ACCESS,
		.type = "access",
		.op = "read",
		.access_op = LES_OP_READ,
		.latency_ns = 123456,
		.bytes = 4096,
		.uid = 1000,
		.err = 0,
	};
	char *p = labels_part;

	ev.job_id = fuzz_next_line(&p);
	ev.process = ev.comm = fuzz_next_line(&p);
	ev.mount = fuzz_next_line(&p);
	ev.username = fuzz_next_line(&p);
	ev.fs_type = fuzz_next_line(&p);
	ev.fs = ev.mount;
	les_prom_add(store, &ev);
}

/* The store's render, checked. */
static inline void check_render(struct les_prom *store)
{
	size_t len;
	char *body = les_prom_render(store, &len);

	if (body) {
		assert(strlen(body) == len);
		check_exposition(body, len);
		free(body);
	}
}

#endif /* LES_FUZZ_EXPOSITION_H */
