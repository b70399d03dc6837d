// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A closed window's groups -> one type:"window" JSON line each (window_json.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "sink/window_json.h"
#include "util/histogram.h"
#include "util/json.h"
#include "model/kinds.h"
#include "model/ops.h"

#define WINDOW_LINE_MAX 32768 /* a window line, histogram included */

struct les_window_json {
	les_window_out_fn out;
	void *out_ctx;
	uint64_t lines;
	uint64_t format_errors;
	struct jw jw;
	struct les_event ev;
	char line[WINDOW_LINE_MAX];
};

struct les_window_json *les_window_json_new(les_window_out_fn out, void *out_ctx)
{
	struct les_window_json *wj = calloc(1, sizeof(*wj));

	if (!wj)
		return NULL;
	wj->out = out;
	wj->out_ctx = out_ctx;
	jw_init(&wj->jw, wj->line, sizeof(wj->line));
	return wj;
}

void les_window_json_free(struct les_window_json *wj)
{
	free(wj);
}

void les_window_json_counts(const struct les_window_json *wj, uint64_t *lines,
			    uint64_t *format_errors)
{
	*lines = wj->lines;
	*format_errors = wj->format_errors;
}

/* The grouped fields, in the order of enum les_group_field; all null for "other". */
static void put_fields(struct les_window_json *wj, const struct les_window *win,
		       const struct les_window_group *g)
{
	struct les_event *ev = &wj->ev;
	struct jw *w = &wj->jw;

	for (int f = 0; f < LES_GF_MAX; f++) {
		const char *s = g->other ? NULL : g->field[f];

		if (!(win->group_by & (1u << f)) || f == LES_GF_TYPE)
			continue;
		if (f == LES_GF_UID && !g->other) {
			ev->uid = g->uid;
			jw_kv_u64(w, les_group_field_name(f), g->uid);
			continue;
		}
		if (f == LES_GF_HOST)
			continue; /* written once, from the config */
		if (f == LES_GF_FS_TYPE)
			ev->fs_type = s;
		else if (f == LES_GF_JOB_ID)
			ev->job_id = s;
		jw_kv_cstr(w, les_group_field_name(f), s);
	}
}

static void put_errors(struct jw *w, const struct les_window_group *g)
{
	jw_key(w, "errors");
	jw_obj_begin(w);
	for (unsigned int c = LES_ERRC_NONE + 1; c < LES_ERRC_MAX; c++)
		if (g->errors[c])
			jw_kv_u64(w, les_errno_class_name(c), g->errors[c]);
	jw_obj_end(w);
}

/* Non-empty buckets as [lower_ns, upper_ns, count]; the last bucket's upper is null. */
static void put_histogram(struct jw *w, const struct les_hist *h)
{
	jw_key(w, "latency_hist");
	jw_arr_begin(w);
	for (unsigned int i = 0; i < LES_HIST_BUCKETS; i++) {
		if (!h->buckets[i])
			continue;
		jw_arr_begin(w);
		jw_u64(w, les_hist_lower(i));
		if (i == LES_HIST_BUCKETS - 1)
			jw_null(w);
		else
			jw_u64(w, les_hist_upper(i));
		jw_u64(w, h->buckets[i]);
		jw_arr_end(w);
	}
	jw_arr_end(w);
	jw_kv_u64(w, "min_ns", h->count ? h->min : 0);
	jw_kv_u64(w, "p50_ns", les_hist_percentile(h, 500));
	jw_kv_u64(w, "p90_ns", les_hist_percentile(h, 900));
	jw_kv_u64(w, "p99_ns", les_hist_percentile(h, 990));
	jw_kv_u64(w, "max_ns", h->max);
	jw_kv_u64(w, "sum_latency_ns", h->sum);
}

static void put_events(struct jw *w, const struct les_window_group *g)
{
	jw_key(w, "events");
	jw_obj_begin(w);
	for (unsigned int e = 0; e < LES_EV_MAX; e++)
		jw_kv_u64(w, les_rpc_event_name(e), g->events[e]);
	jw_obj_end(w);
}

/* The sums its kind's shape has. */
static void put_stats(struct jw *w, const struct les_window_group *g)
{
	enum les_rec_shape shape = les_rec_kind_shape(g->kind);

	jw_kv_u64(w, "count", g->count);
	put_errors(w, g);
	jw_kv_u64(w, "bytes", g->bytes);
	if (shape == LES_SHAPE_EVENT) {
		put_events(w, g);
		return;
	}
	put_histogram(w, g->latency);
	if (shape == LES_SHAPE_ACCESS) {
		jw_kv_u64(w, "rpc_wait_ns", g->rpc_wait_ns);
		jw_kv_u64(w, "rpc_count", g->rpc_count);
		if (g->reads)
			jw_kv_u64(w, "cache_served", g->cache_served);
	}
}

/*
 * A group of joined requests: its keys as the rpc_join line names them,
 * the count, client_service_ns's histogram and each layer's sum.
 */
static void put_join(struct les_window_json *wj, const struct les_window_group *g)
{
	const struct les_join_view *v = g->join;
	struct jw *w = &wj->jw;

	jw_kv_cstr(w, "record_type", "rpc_join");
	jw_kv_cstr(w, "lustre_jobid", v->job);
	jw_kv_cstr(w, "target", v->target);
	jw_kv_cstr(w, "client_nid", v->client_nid);
	wj->ev.job_id = v->job;
	if (g->other)
		jw_kv_bool(w, "other", 1);
	jw_kv_u64(w, "count", g->count);
	put_histogram(w, g->latency);
	jw_key(w, "layers");
	jw_obj_begin(w);
	for (int l = 0; l < LES_JOIN_LAYER_MAX; l++)
		jw_kv_i64(w, les_join_layer_name(l), v->ns[l]);
	jw_obj_end(w);
}

int les_window_json_group(void *ctx, const struct les_window *win, const struct les_window_group *g)
{
	struct les_window_json *wj = ctx;
	struct jw *w = &wj->jw;
	struct les_event *ev = &wj->ev;

	memset(ev, 0, sizeof(*ev));
	ev->type = "window";
	ev->host = win->host;
	jw_reset(w);
	jw_obj_begin(w);
	jw_kv_cstr(w, "type", "window");
	jw_kv_time(w, "window_start", win->start_ns);
	jw_kv_time(w, "window_end", win->end_ns);
	jw_kv_cstr(w, "host", win->host);
	if (g->join) {
		put_join(wj, g);
	} else {
		jw_kv_cstr(w, "record_type", les_rec_kind_name(g->kind));
		put_fields(wj, win, g);
		if (g->other)
			jw_kv_bool(w, "other", 1);
		put_stats(w, g);
	}
	if (win->partial)
		jw_kv_bool(w, "partial", 1);
	jw_obj_end(w);
	jw_newline(w);
	if (w->overflow) {
		wj->format_errors++;
		return 0;
	}
	ev->ts_epoch_ns = win->end_ns;
	ev->line = wj->line;
	ev->line_len = w->len;
	wj->lines++;
	return wj->out ? wj->out(wj->out_ctx, ev) : 0;
}
