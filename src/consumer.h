/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The consumer: decode each ring-buffer record, enrich it, format it and
 * hand the line to the sinks. Also the stats record.
 */
#ifndef LES_CONSUMER_H
#define LES_CONSUMER_H

#include <stdbool.h>
#include <stdint.h>
#include "format.h"
#include "json.h"
#include "observed.h"
#include "options.h"
#include "sink.h"

#define LES_LINE_MAX 16384

/* Kernel-side numbers for the stats record, read by the tracer. */
struct les_kernel_stats {
	uint64_t counters[LES_CNT_SLOTS];
	uint64_t stale_swept; /* in-flight requests swept by age */
	uint64_t threads_swept; /* per-thread op stacks swept by age */
	uint64_t inflight_fuse; /* requests in flight now */
};

struct les_consumer {
	const struct les_options *opts;
	const struct les_observed *observed;
	struct les_sink_file *file;
	struct les_fmt_ctx fmt;
	struct jw jw;
	char line[LES_LINE_MAX];
	uint64_t start_mono_ns;
	uint64_t by_kind[LES_REC_KIND_MAX]; /* records decoded, by kind */
	uint64_t emitted; /* record lines handed to the sinks */
	uint64_t decode_errors; /* malformed records: wrong size, unknown kind */
	uint64_t format_errors; /* lines that did not fit the line buffer */
	uint64_t unobserved; /* records of a dev no longer observed */
	bool stop; /* --count reached or the output closed */
};

void les_consumer_init(struct les_consumer *c, const struct les_options *opts,
		       const struct les_observed *observed, struct les_sink_file *file,
		       const char *host);

/* ring_buffer_sample_fn: 0 to go on, negative to stop the poll. */
int les_consumer_on_record(void *ctx, void *data, size_t size);

/* Records lost in userspace so far (decode, format, sinks). */
uint64_t les_consumer_dropped(const struct les_consumer *c);

int les_consumer_emit_stats(struct les_consumer *c, const struct les_kernel_stats *ks,
			    bool final);

#endif /* LES_CONSUMER_H */
