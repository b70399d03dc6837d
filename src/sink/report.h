/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The incident report: a saved capture (JSON Lines, gzip or not) as one
 * self-contained HTML file, its charts Vega-Lite specs rendered in the
 * browser by the Vega scripts inlined into the page. See docs/report.md.
 *
 * Two passes over the capture. The first finds its time span (and so the
 * window width, unless one is given) and the slowest access ops. The
 * second hands every record to the aggregator of --aggregate
 * (sink/aggregate.c), once per dimension (job_id, username, process, op),
 * and reads its window lines back: the report's per-window and total
 * numbers are those --aggregate writes for the same records and window,
 * by construction. The same pass sums the request waits by target (the
 * pieces of model/waits.h, as Prometheus' rpc_wait families take them)
 * and keeps the rpc and rpc_event records of the slowest ops (their
 * parent_op_id), the ops' request chains.
 */
#ifndef LES_REPORT_H
#define LES_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Time series charted beyond the jobs' (--by). */
#define LES_REPORT_BY_USER    (1u << 0)
#define LES_REPORT_BY_PROCESS (1u << 1)

#define LES_REPORT_SLOWEST_DEFAULT 10
#define LES_REPORT_SLOWEST_MAX	   100
#define LES_REPORT_CHAIN_MAX	   200 /* records of one op's chain; more are counted */

struct les_report_config {
	const char *input_path;	 /* the capture, gzip or not */
	const char *output_path; /* the HTML file */
	const char *js_dir;	 /* vega.min.js, vega-lite.min.js, vega-embed.min.js */
	uint64_t window_ns;	 /* 0: the capture's span over about 100 windows */
	uint32_t by;		 /* LES_REPORT_BY_* */
	uint32_t slowest;	 /* slow ops listed with their chains */
	uint32_t series_max;	 /* keys per time-series chart; the rest are "(other)" */
	const char *page;	 /* the page template (report_page.html), page_len bytes */
	size_t page_len;
};

/* What the report read and skipped; the end line on stderr and the page say it. */
struct les_report_stats {
	uint64_t lines;	    /* read, skipped ones included (one pass) */
	uint64_t records;   /* access, rpc and rpc_event records */
	uint64_t malformed; /* not a JSON object, or a record without a valid "ts" */
	uint64_t too_long;  /* over 256 KiB, newline included: skipped whole */
	bool truncated;	    /* a gzip stream that ended early: read up to its cut */
	uint64_t first_ns, last_ns;
	uint64_t window_ns;
	uint64_t windows; /* from the first record's window to the last's */
	size_t bytes_written;
};

/*
 * Make the report. 0, or -1 with one line's worth in err: the capture or
 * a script cannot be read, the gzip stream is corrupt, the page cannot be
 * written. Lines that are not records are skipped and counted, never an
 * error: a capture cut by a crash ends in half a line.
 */
int les_report_run(const struct les_report_config *cfg, struct les_report_stats *st, char *err,
		   size_t errlen);

/* The window width chosen for a span: the smallest of 1 s, 2 s, 5 s, ... giving <= 100. */
uint64_t les_report_auto_window(uint64_t span_ns);

#endif /* LES_REPORT_H */
