// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The incident report over a capture (see report.h). */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "decode/capture.h"
#include "model/kinds.h"
#include "model/waits.h"
#include "sink/aggregate.h"
#include "sink/report.h"
#include "sink/report_data.h"

#define LINE_MAX_LEN (256 * 1024) /* newline included; longer lines are skipped */
#define LINE_BUF     (LINE_MAX_LEN + 1)
#define WINDOWS_AIM  100 /* windows over the capture's span, when none is given */

/* The capture, read line by line, twice. */
struct reader {
	gzFile in;
	char *line;
	struct les_capture cap;
	struct les_report_stats *st;
	bool counting; /* the first pass counts lines; the second reads the same */
};

/*
 * The next line: 1, or 0 at the end. A line over LINE_MAX_LEN bytes is
 * skipped whole and counted (as --top --input does), not read as pieces.
 */
static int next_line(struct reader *r)
{
	const size_t last = LINE_BUF - 1;

	for (;;) {
		r->line[last] = 1;
		if (!gzgets(r->in, r->line, LINE_BUF))
			return 0;
		if (r->line[last] || r->line[last - 1] == '\n')
			return 1;
		if (r->counting) {
			r->st->too_long++;
			r->st->lines++;
		}
		do {
			r->line[last] = 1;
			if (!gzgets(r->in, r->line, LINE_BUF))
				return 0;
		} while (!r->line[last] && r->line[last - 1] != '\n');
	}
}

/* The next per-op record: 1, or 0 at the end. Other lines are skipped, bad ones counted. */
static int next_record(struct reader *r, struct les_event *ev)
{
	while (next_line(r)) {
		int rc;

		if (r->counting)
			r->st->lines++;
		if (r->line[0] == '\n')
			continue;
		rc = les_capture_parse(&r->cap, r->line, ev);
		if (rc == 0)
			continue;
		if (rc < 0 || !ev->ts_epoch_ns) {
			r->st->malformed += r->counting;
			continue;
		}
		r->st->records += r->counting;
		return 1;
	}
	return 0;
}

/*
 * How the stream ended: 0 at its end, or cut short (a capture of a run
 * that crashed: what was read is reported, noted as truncated); -1 for a
 * corrupt stream or a read error.
 */
static int reader_end(struct reader *r, const char *path, char *err, size_t errlen)
{
	int zerr = Z_OK;
	const char *msg = gzerror(r->in, &zerr);

	if (zerr == Z_OK || zerr == Z_STREAM_END)
		return 0;
	if (zerr == Z_BUF_ERROR) {
		r->st->truncated = true;
		return 0;
	}
	if (zerr == Z_ERRNO)
		return les_report_fail(err, errlen, "%s: %s", path, strerror(errno));
	return les_report_fail(err, errlen, "%s: not a readable gzip stream (%s)", path, msg);
}

/* --- the first pass: span and the slowest ops ---------------------------- */

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void slow_free(struct les_report_slow *s)
{
	free(s->op);
	free(s->job_id);
	free(s->username);
	free(s->process);
	free(s->comm);
	free(s->mount);
	free(s->errno_class);
	for (uint32_t i = 0; i < s->n_chain; i++) {
		free(s->chain[i].type);
		free(s->chain[i].op);
		free(s->chain[i].target);
		free(s->chain[i].errno_class);
	}
	free(s->chain);
	memset(s, 0, sizeof(*s));
}

static void slow_fill(struct les_report_slow *s, const struct les_event *ev)
{
	s->op_id = ev->op_id;
	s->end_ns = ev->ts_epoch_ns;
	s->latency_ns = ev->latency_ns;
	s->bytes = ev->bytes;
	s->rpc_count = ev->rpc_count;
	s->rpc_wait_ns = ev->rpc_wait_ns;
	s->pid = ev->pid;
	s->op = dup_or_null(ev->op);
	s->job_id = dup_or_null(ev->job_id);
	s->username = dup_or_null(ev->username);
	s->process = dup_or_null(ev->process);
	s->comm = dup_or_null(ev->comm);
	s->mount = dup_or_null(ev->mount);
	s->errno_class = dup_or_null(ev->errno_class);
}

/*
 * Keep the n slowest access ops, slowest first: a new one goes in at its
 * rank, the fastest kept falls out. Ops without an op_id have no chain to
 * show and are ranked all the same.
 */
static void slow_offer(struct les_report_data *d, uint32_t n, const struct les_event *ev)
{
	uint32_t at = d->n_slow;

	if (!n || ev->kind != LES_REC_ACCESS)
		return;
	if (d->n_slow == n && ev->latency_ns <= d->slow[n - 1].latency_ns)
		return;
	if (d->n_slow == n)
		slow_free(&d->slow[--d->n_slow]);
	while (at > 0 && d->slow[at - 1].latency_ns < ev->latency_ns)
		at--;
	memmove(&d->slow[at + 1], &d->slow[at], (d->n_slow - at) * sizeof(d->slow[0]));
	memset(&d->slow[at], 0, sizeof(d->slow[0]));
	slow_fill(&d->slow[at], ev);
	d->n_slow++;
}

uint64_t les_report_auto_window(uint64_t span_ns)
{
	static const uint32_t steps_s[] = {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600};
	uint64_t want = span_ns / WINDOWS_AIM;
	size_t i;

	for (i = 0; i < sizeof(steps_s) / sizeof(steps_s[0]) - 1; i++)
		if (steps_s[i] * 1000000000ULL >= want)
			break;
	return steps_s[i] * 1000000000ULL;
}

static void first_pass(struct reader *r, struct les_report_data *d, uint32_t slowest)
{
	struct les_event ev;

	r->counting = true;
	while (next_record(r, &ev)) {
		if (!r->st->first_ns || ev.ts_epoch_ns < r->st->first_ns)
			r->st->first_ns = ev.ts_epoch_ns;
		if (ev.ts_epoch_ns > r->st->last_ns)
			r->st->last_ns = ev.ts_epoch_ns;
		slow_offer(d, slowest, &ev);
	}
}

/* --- the second pass: the aggregator's windows, waits, chains ------------- */

/* The slow op a record belongs to (its parent_op_id), or NULL. */
static struct les_report_slow *slow_of(struct les_report_data *d, const struct les_event *ev)
{
	if (!ev->parent_op_id || (ev->kind != LES_REC_RPC && ev->kind != LES_REC_RPC_EVENT))
		return NULL;
	for (uint32_t i = 0; i < d->n_slow; i++)
		if (d->slow[i].op_id == ev->parent_op_id)
			return &d->slow[i];
	return NULL;
}

static void chain_add(struct les_report_slow *s, const struct les_event *ev)
{
	struct les_report_link *l;

	if (s->n_chain == LES_REPORT_CHAIN_MAX) {
		s->chain_more++;
		return;
	}
	if (!s->chain) {
		s->chain = calloc(LES_REPORT_CHAIN_MAX, sizeof(*s->chain));
		if (!s->chain) {
			s->chain_more++;
			return;
		}
	}
	l = &s->chain[s->n_chain++];
	l->type = dup_or_null(ev->type);
	l->op = dup_or_null(ev->kind == LES_REC_RPC_EVENT ? ev->event : ev->op);
	l->target = ev->target ? strndup(ev->target, ev->target_len) : NULL;
	l->errno_class = dup_or_null(ev->errno_class);
	l->end_ns = ev->ts_epoch_ns;
	l->latency_ns = ev->latency_ns;
	l->bytes = ev->bytes;
	l->req_id = ev->req_id;
	l->wait_id = ev->wait_id;
	l->parent_wait_id = ev->parent_wait_id;
	l->xid = ev->has_xid ? ev->xid : 0;
}

/* Where a request waited: the PtlRPC target, else the protocol and mount. */
static void target_key(const struct les_event *ev, char *buf, size_t size)
{
	if (ev->target)
		snprintf(buf, size, "%.*s", (int)ev->target_len, ev->target);
	else
		snprintf(buf, size, "%s %s", ev->proto ? ev->proto : "?",
			 ev->mount ? ev->mount : "?");
}

/*
 * A request's wait, by target: the innermost pieces (model/waits.h), so
 * that a lock enqueue and the queue_wait inside it are not both counted.
 */
static int waits_add(struct les_report_data *d, const struct les_event *ev)
{
	char key[512];

	if (!les_wait_is_piece(les_wait_part(ev)))
		return 0;
	target_key(ev, key, sizeof(key));
	return les_report_data_wait(d, les_window_start(ev->ts_epoch_ns, d->window_ns), key,
				    ev->latency_ns);
}

/* An aggregator's window line back into the report's rows. */
struct window_sink {
	struct les_report_data *d;
	enum les_report_dim dim;
	int err;
};

static int on_window(void *ctx, const struct les_event *ev)
{
	struct window_sink *ws = ctx;
	json_t *doc = json_loadb(ev->line, ev->line_len, 0, NULL);
	int ret = -1;

	if (doc) {
		ret = les_report_data_window(ws->d, ws->dim, ev->ts_epoch_ns - ws->d->window_ns,
					     doc);
		json_decref(doc);
	}
	if (ret)
		ws->err = -ENOMEM;
	return 0;
}

/* One aggregator per dimension, keyed by that field alone (--group-by FIELD). */
struct aggregators {
	struct les_aggregate *a[LES_REPORT_DIM_MAX];
	struct window_sink sink[LES_REPORT_DIM_MAX];
};

static int aggregators_open(struct aggregators *ag, struct les_report_data *d)
{
	for (int i = 0; i < LES_REPORT_DIM_MAX; i++) {
		struct les_aggregate_config cfg = {
			.window_ns = d->window_ns,
			.group_by = 1u << les_report_dims[i].field,
			.max_groups = LES_AGG_MAX_GROUPS_DEFAULT,
			.host = "report",
		};

		ag->sink[i] = (struct window_sink){.d = d, .dim = (enum les_report_dim)i};
		ag->a[i] = les_aggregate_new(&cfg, on_window, &ag->sink[i]);
		if (!ag->a[i])
			return -ENOMEM;
	}
	return 0;
}

/* The last windows out (not partial: the capture is whole), then freed. */
static int aggregators_close(struct aggregators *ag)
{
	int err = 0;

	for (int i = 0; i < LES_REPORT_DIM_MAX; i++) {
		if (ag->a[i])
			les_aggregate_flush(ag->a[i], UINT64_MAX);
		err = err ?: ag->sink[i].err;
		les_aggregate_free(ag->a[i]);
		ag->a[i] = NULL;
	}
	return err;
}

static int by_start(const void *a, const void *b)
{
	const struct les_report_link *x = a, *y = b;
	uint64_t sx = x->end_ns - x->latency_ns, sy = y->end_ns - y->latency_ns;

	return sx < sy ? -1 : sx > sy;
}

/* A chain in the order its records started: the capture has them by completion. */
static void chains_sort(struct les_report_data *d)
{
	for (uint32_t i = 0; i < d->n_slow; i++)
		if (d->slow[i].n_chain)
			qsort(d->slow[i].chain, d->slow[i].n_chain, sizeof(d->slow[i].chain[0]),
			      by_start);
}

static int second_pass(struct reader *r, struct les_report_data *d)
{
	struct aggregators ag = {0};
	struct les_event ev;
	int err = aggregators_open(&ag, d);

	r->counting = false;
	while (!err && next_record(r, &ev)) {
		struct les_report_slow *s = slow_of(d, &ev);

		for (int i = 0; i < LES_REPORT_DIM_MAX; i++)
			les_aggregate_add(ag.a[i], &ev);
		if (s)
			chain_add(s, &ev);
		err = waits_add(d, &ev);
		for (int i = 0; i < LES_REPORT_DIM_MAX && !err; i++)
			err = ag.sink[i].err;
	}
	chains_sort(d);
	return aggregators_close(&ag) ?: err;
}

/* --- the run ---------------------------------------------------------------- */

static int read_capture(const struct les_report_config *cfg, struct les_report_data *d,
			struct les_report_stats *st, char *err, size_t errlen)
{
	struct reader r = {.st = st};
	int ret = -1;

	r.line = malloc(LINE_BUF);
	r.in = gzopen(cfg->input_path, "rb");
	if (!r.line || !r.in) {
		les_report_fail(err, errlen, "%s: %s", cfg->input_path,
				strerror(errno ? errno : ENOMEM));
		goto out;
	}
	first_pass(&r, d, cfg->slowest);
	if (reader_end(&r, cfg->input_path, err, errlen))
		goto out;
	d->window_ns = cfg->window_ns ?: les_report_auto_window(st->last_ns - st->first_ns);
	st->window_ns = d->window_ns;
	if (gzrewind(r.in)) {
		les_report_fail(err, errlen, "%s: cannot read it again from the start",
				cfg->input_path);
		goto out;
	}
	if (second_pass(&r, d)) {
		les_report_fail(err, errlen, "out of memory");
		goto out;
	}
	ret = 0;
out:
	les_capture_release(&r.cap);
	if (r.in)
		gzclose(r.in);
	free(r.line);
	return ret;
}

/* The windows from the first record's to the last's, empty ones included. */
static uint64_t windows_spanned(const struct les_report_stats *st, uint64_t window_ns)
{
	uint64_t first = les_window_start(st->first_ns, window_ns);
	uint64_t last = les_window_start(st->last_ns, window_ns);

	return st->records ? (last - first) / window_ns + 1 : 0;
}

int les_report_run(const struct les_report_config *cfg, struct les_report_stats *st, char *err,
		   size_t errlen)
{
	struct les_report_data *d = les_report_data_new(cfg);
	int ret;

	memset(st, 0, sizeof(*st));
	if (!d)
		return les_report_fail(err, errlen, "out of memory");
	ret = read_capture(cfg, d, st, err, errlen);
	if (!ret) {
		st->windows = windows_spanned(st, d->window_ns);
		ret = les_report_write(cfg, d, st, err, errlen);
	}
	for (uint32_t i = 0; i < d->n_slow; i++)
		slow_free(&d->slow[i]);
	les_report_data_free(d);
	return ret;
}
