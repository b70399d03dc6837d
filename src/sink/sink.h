/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * File sink: JSON Lines to stdout, a file, or a gzip file. Lines are
 * buffered and written in large chunks; a failed write drops the buffered
 * lines, counts them and keeps the tool running (a full disk must not stop
 * the stream to other sinks); a closed pipe ends the run quietly.
 */
#ifndef LES_SINK_H
#define LES_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct les_sink_file {
	const char *path; /* NULL: stdout */
	int fd;
	void *gz; /* gzFile when writing gzip */
	char *buf;
	size_t len, cap;
	size_t buffered_lines;
	size_t buffered_records; /* of buffered_lines, per-op records */
	uint64_t written; /* lines handed to the kernel (or zlib) */
	uint64_t dropped; /* lines lost to write errors */
	uint64_t records_written; /* of written, per-op records */
	uint64_t records_dropped; /* of dropped, per-op records: dropped_output */
	uint64_t write_errors; /* failed flushes (a full disk: one per flush) */
	int last_errno; /* errno of the last failed write, 0 if none */
	bool pipe_closed; /* reader went away (EPIPE) */
	bool owns_fd;
	bool opened; /* the path was opened once already */
};

int les_sink_file_open(struct les_sink_file *s, const char *path);
/* Append one line (with its '\n'). Returns -EPIPE once the reader is gone. */
int les_sink_file_write(struct les_sink_file *s, const char *line, size_t n);
/* The same for a per-op record line: counted apart for the stats identity. */
int les_sink_file_write_record(struct les_sink_file *s, const char *line, size_t n);
int les_sink_file_flush(struct les_sink_file *s);
/* Reopen the same path (logrotate); no-op for stdout. */
int les_sink_file_reopen(struct les_sink_file *s);
void les_sink_file_close(struct les_sink_file *s);

#endif /* LES_SINK_H */
