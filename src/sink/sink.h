/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * File sink: JSON Lines to stdout, a file, or a gzip file. Lines are
 * buffered and written in large chunks; a failed write drops the buffered
 * lines, counts them and keeps the tool running (a full disk must not stop
 * the stream to other sinks); a closed pipe ends the run quietly. A line
 * counts as written once the kernel took its bytes (gzip: compressed to a
 * sync point and written). The file is opened as outfile.h says, at start
 * and on every reopen.
 */
#ifndef LES_SINK_H
#define LES_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/event.h"

struct sink_gz; /* sink.c */

struct les_sink_file {
	const char *path; /* NULL: stdout */
	int fd;
	struct sink_gz *gz; /* the deflate stream when writing gzip */
	char *buf;
	size_t len, cap;
	size_t buffered_lines;
	size_t buffered_records; /* of buffered_lines, per-op records */
	uint64_t written; /* lines the kernel took (gzip: compressed, written) */
	uint64_t dropped; /* lines lost: write errors, a closed pipe, a refused reopen */
	uint64_t records_written; /* of written, per-op records */
	uint64_t records_dropped; /* of dropped, per-op records: dropped_output */
	uint64_t write_errors; /* failed flushes (a full disk: one per flush) and closes */
	int last_errno; /* errno of the last failed write or close, 0 if none */
	bool pipe_closed; /* reader went away (EPIPE) */
	bool owns_fd;
	bool opened; /* the path was opened once already */
	int open_err; /* -errno of the last open or reopen, 0 if it worked */
	char why[256]; /* and why, in words */
};

/* 0, or -errno with the reason in s->why (a refused path: see outfile.h). */
int les_sink_file_open(struct les_sink_file *s, const char *path);
/* Append one line (with its '\n'). Returns -EPIPE once the reader is gone. */
int les_sink_file_write(struct les_sink_file *s, const char *line, size_t n);
/* The same for a per-op record line: counted apart for the stats identity. */
int les_sink_file_write_record(struct les_sink_file *s, const char *line, size_t n);
int les_sink_file_flush(struct les_sink_file *s);
/*
 * Reopen the same path (logrotate), under the same rules; no-op for stdout.
 * On failure (s->why), lines are dropped and counted until the next reopen.
 */
int les_sink_file_reopen(struct les_sink_file *s);
/* Flush, end the gzip member, close: 0, or the error (also counted). */
int les_sink_file_close(struct les_sink_file *s);

/*
 * What an output that the per-op records are accounted against reports
 * for the stats record (emitted, dropped_output, dropped_output_lines,
 * output_errors).
 */
struct les_output_counts {
	uint64_t records_written; /* per-op records written */
	uint64_t records_buffered; /* held, not yet written (none after a flush) */
	uint64_t records_dropped; /* per-op records lost */
	uint64_t lines_dropped; /* lines lost, records or not */
	uint64_t write_errors; /* failed writes and closes */
};

/*
 * The file sink as the consumer's output (ctx: the struct les_sink_file):
 * write ev's line, a per-op record's when record; and its counts.
 */
int les_sink_file_line(void *ctx, const struct les_event *ev, bool record);
void les_sink_file_counts(void *ctx, struct les_output_counts *oc);

#endif /* LES_SINK_H */
