/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The JSON window writer: each group of a closed window (struct
 * les_window_group, from the accumulator in sink/aggregate.h) as one
 * type:"window" line, handed to a line output. See docs/aggregation.md.
 */
#ifndef LES_WINDOW_JSON_H
#define LES_WINDOW_JSON_H

#include <stdint.h>
#include "sink/aggregate.h"

struct les_window_json;

struct les_window_json *les_window_json_new(les_window_out_fn out, void *out_ctx);
void les_window_json_free(struct les_window_json *wj);

/* A les_window_fn: the group's line, to out. */
int les_window_json_group(void *ctx, const struct les_window *win,
			  const struct les_window_group *g);

/* Lines handed to out, and lines that did not fit the line buffer. */
void les_window_json_counts(const struct les_window_json *wj, uint64_t *lines,
			    uint64_t *format_errors);

#endif /* LES_WINDOW_JSON_H */
