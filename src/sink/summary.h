/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a one-shot capture shows on the terminal: a status line refreshed
 * about once a second while it runs (elapsed and remaining time, records
 * per second, drops), erased at exit, and a summary at the end (records by
 * type and op, the top jobs and processes by ops and by total latency).
 *
 * The summary is an event sink of the consumer. Its bookkeeping is a few
 * additions per record in fixed tables: a name hash per record, no
 * allocation after les_summary_new; names past the tables' room are
 * counted under "(other)".
 */
#ifndef LES_SUMMARY_H
#define LES_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "model/event.h"

#define LES_SUMMARY_TOP	     5
#define LES_SUMMARY_NAMES    2048 /* jobs, processes remembered per table */
#define LES_SUMMARY_NAME_LEN 64
#define LES_SUMMARY_TYPE_OPS 160 /* (record type, op) pairs counted */

struct les_summary;

/* Run totals the summary's first line reports, from the stats record's numbers. */
struct les_summary_totals {
	uint64_t elapsed_ns;
	uint64_t emitted;
	uint64_t dropped;  /* kernel and userspace */
	uint64_t filtered; /* kernel and userspace */
};

struct les_summary *les_summary_new(void);
void les_summary_free(struct les_summary *s);
/* les_event_fn: count one record. */
int les_summary_event(void *ctx, const struct les_event *ev);
void les_summary_print(const struct les_summary *s, const struct les_summary_totals *t, FILE *out);

/* The live status line on a terminal. */
struct les_status {
	FILE *out;
	bool shown;	  /* a line is on the screen */
	uint64_t last_ns; /* time and records of the previous update */
	uint64_t last_emitted;
};

/*
 * Redraw the line: elapsed_ns since the start, duration_ns the planned run
 * (0: none), emitted records so far, dropped so far.
 */
void les_status_update(struct les_status *st, uint64_t now_ns, uint64_t elapsed_ns,
		       uint64_t duration_ns, uint64_t emitted, uint64_t dropped);
/* Erase the line, so that nothing of it stays on the terminal. */
void les_status_clear(struct les_status *st);
/* Format the line into buf (without the terminal controls); for tests. */
size_t les_status_format(char *buf, size_t len, uint64_t elapsed_ns, uint64_t duration_ns,
			 uint64_t emitted, double rate, uint64_t dropped);

#endif /* LES_SUMMARY_H */
