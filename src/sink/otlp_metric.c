// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * OTLP metrics without a transport: a closed window's group as OTLP/JSON
 * data points (see otlp.h, docs/otlp.md for the names).
 *
 * Every point is a delta over its window, [window start, window end): the
 * windows are deltas by construction, and a delta needs no state kept
 * across windows, so a group seen once costs nothing afterwards. Summed
 * over the windows, each equals the cumulative Prometheus family of the
 * same name (a collector's deltatocumulative processor does that sum).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "model/kinds.h"
#include "model/ops.h"
#include "sink/otlp.h"

#define P "lustre_ebpf_stream."

/*
 * The attribute each grouped field becomes: OpenTelemetry's semantic
 * convention names where one exists, the tool's namespace otherwise (the
 * names the spans use for the same fields).
 */
static const char *const field_attr[LES_GF_MAX] = {
	[LES_GF_FS_TYPE] = P "fs_type",
	[LES_GF_FS] = P "fs",
	[LES_GF_MOUNT] = P "mount",
	[LES_GF_OP] = P "op",
	[LES_GF_ACCESS_INTENT] = P "access_intent",
	[LES_GF_UID] = "user.id",
	[LES_GF_USERNAME] = "user.name",
	[LES_GF_PROCESS] = P "process",
	[LES_GF_ACTOR_TYPE] = P "actor_type",
	[LES_GF_JOB_ID] = P "job_id",
	[LES_GF_TYPE] = NULL, /* the metric's name says the record type */
	[LES_GF_COMM] = "process.executable.name",
	[LES_GF_PROTO] = P "proto",
	[LES_GF_EVENT] = P "event",
	[LES_GF_HOST] = "host.name",
};

/* The group's fields, each non-null one an attribute; skip: a field the point sets itself. */
static void group_attrs(struct jw *w, const struct les_window *win,
			const struct les_window_group *g, int skip)
{
	if (g->other) {
		les_otlp_attr_bool(w, P "other", true);
		return;
	}
	for (int f = 0; f < LES_GF_MAX; f++) {
		if (!field_attr[f] || f == skip || !(win->group_by & (1u << f)))
			continue;
		if (f == LES_GF_UID)
			les_otlp_attr_int(w, field_attr[f], g->uid);
		else
			les_otlp_attr_cstr(w, field_attr[f], g->field[f]);
	}
}

/* A point's opening: its attributes (the group's, then extra_key=extra), its window. */
static void point_begin(struct jw *w, const struct les_window *win,
			const struct les_window_group *g, const char *extra_key, const char *extra,
			int skip)
{
	jw_obj_begin(w);
	jw_lit_key(w, JW_LIT("attributes"));
	jw_arr_begin(w);
	group_attrs(w, win, g, skip);
	if (extra_key)
		les_otlp_attr_cstr(w, extra_key, extra);
	jw_arr_end(w);
	jw_lit_key(w, JW_LIT("startTimeUnixNano"));
	les_otlp_u64_str(w, win->start_ns);
	jw_lit_key(w, JW_LIT("timeUnixNano"));
	les_otlp_u64_str(w, win->end_ns);
}

/* "name":"lustre_ebpf_stream.KIND.WHAT" and the unit. */
static void metric_begin(struct jw *w, const struct les_window_group *g, const char *what,
			 const char *unit)
{
	char name[96];

	snprintf(name, sizeof(name), P "%s.%s", les_rec_kind_name(g->kind), what);
	jw_obj_begin(w);
	jw_lit_cstr(w, JW_LIT("name"), name);
	jw_lit_cstr(w, JW_LIT("unit"), unit);
}

/* A monotonic delta sum, its points to come. AGGREGATION_TEMPORALITY_DELTA is 1. */
static void sum_begin(struct jw *w)
{
	jw_lit_key(w, JW_LIT("sum"));
	jw_obj_begin(w);
	jw_lit_u64(w, JW_LIT("aggregationTemporality"), 1);
	jw_lit_key(w, JW_LIT("isMonotonic"));
	jw_bool(w, 1);
	jw_lit_key(w, JW_LIT("dataPoints"));
	jw_arr_begin(w);
}

static void sum_end(struct jw *w)
{
	jw_arr_end(w); /* dataPoints */
	jw_obj_end(w); /* sum */
	jw_obj_end(w); /* the metric */
}

static void put_as_int(struct jw *w, uint64_t v)
{
	jw_lit_key(w, JW_LIT("asInt"));
	les_otlp_u64_str(w, v);
	jw_obj_end(w);
}

/* A sum with one point: the group's value. */
static unsigned int put_sum(struct jw *w, const struct les_window *win,
			    const struct les_window_group *g, const char *what, const char *unit,
			    uint64_t v)
{
	metric_begin(w, g, what, unit);
	sum_begin(w);
	point_begin(w, win, g, NULL, NULL, -1);
	put_as_int(w, v);
	sum_end(w);
	return 1;
}

/* Nanoseconds as seconds, exactly: the decimal digits of the integer, no float between. */
static void put_seconds(struct jw *w, uint64_t ns)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64 ".%09" PRIu64, (uint64_t)(ns / 1000000000u),
			 (uint64_t)(ns % 1000000000u));

	jw_raw(w, buf, (size_t)n);
}

/* A sum with a point per non-zero counter of values[first..n), keyed by key=name(i). */
static unsigned int put_by(struct jw *w, const struct les_window *win,
			   const struct les_window_group *g, const char *what, const char *unit,
			   const uint64_t *values, unsigned int first, unsigned int n,
			   const char *key, const char *(*name)(unsigned int), int skip)
{
	unsigned int points = 0;

	for (unsigned int i = first; i < n; i++)
		points += values[i] != 0;
	if (!points)
		return 0;
	metric_begin(w, g, what, unit);
	sum_begin(w);
	for (unsigned int i = first; i < n; i++) {
		if (!values[i])
			continue;
		point_begin(w, win, g, key, name(i), skip);
		put_as_int(w, values[i]);
	}
	sum_end(w);
	return points;
}

static const char *errc_name(unsigned int c)
{
	return les_errno_class_name((enum les_errno_class)c);
}

/* The latency: the buckets of the Prometheus families, in seconds, as OTLP asks of durations. */
static unsigned int put_duration(struct jw *w, const struct les_window *win,
				 const struct les_window_group *g)
{
	const struct les_hist *h = g->latency;

	metric_begin(w, g, "duration", "s");
	jw_lit_key(w, JW_LIT("histogram"));
	jw_obj_begin(w);
	jw_lit_u64(w, JW_LIT("aggregationTemporality"), 1);
	jw_lit_key(w, JW_LIT("dataPoints"));
	jw_arr_begin(w);
	point_begin(w, win, g, NULL, NULL, -1);
	jw_lit_key(w, JW_LIT("count"));
	les_otlp_u64_str(w, h->count);
	jw_lit_key(w, JW_LIT("sum"));
	put_seconds(w, h->sum);
	jw_lit_key(w, JW_LIT("bucketCounts"));
	jw_arr_begin(w);
	for (unsigned int b = 0; b <= LES_FAMILY_BUCKETS; b++)
		les_otlp_u64_str(w, g->le_buckets[b]);
	jw_arr_end(w);
	jw_lit_key(w, JW_LIT("explicitBounds"));
	jw_arr_begin(w);
	for (unsigned int b = 0; b < LES_FAMILY_BUCKETS; b++)
		put_seconds(w, les_family_bucket_ns[b]);
	jw_arr_end(w);
	if (h->count) {
		jw_lit_key(w, JW_LIT("min"));
		put_seconds(w, h->min);
		jw_lit_key(w, JW_LIT("max"));
		put_seconds(w, h->max);
	}
	jw_obj_end(w); /* the point */
	sum_end(w);    /* dataPoints, histogram, the metric */
	return 1;
}

static unsigned int put_group(struct jw *w, const struct les_window *win,
			      const struct les_window_group *g)
{
	enum les_rec_shape shape = les_rec_kind_shape(g->kind);
	unsigned int points = 0;

	if (shape == LES_SHAPE_EVENT)
		return put_by(w, win, g, "events", "{event}", g->events, 0, LES_EV_MAX, P "event",
			      les_rpc_event_name, LES_GF_EVENT);
	points += put_sum(w, win, g, "operations", "{operation}", g->count);
	if (shape == LES_SHAPE_ACCESS)
		points += put_sum(w, win, g, "bytes", "By", g->bytes);
	points += put_by(w, win, g, "errors", "{operation}", g->errors, LES_ERRC_NONE + 1,
			 LES_ERRC_MAX, "error.type", errc_name, -1);
	points += put_duration(w, win, g);
	return points;
}

int les_otlp_metrics_add(struct jw *w, const struct les_window *win,
			 const struct les_window_group *g, unsigned int *points)
{
	struct jw saved = *w;

	*points = put_group(w, win, g);
	if (w->overflow) {
		*w = saved;
		return -ENOSPC;
	}
	return (int)*points;
}

void les_otlp_metrics_begin(struct jw *w, const char *host)
{
	les_otlp_envelope_begin(w, host, JW_LIT("resourceMetrics"), JW_LIT("scopeMetrics"),
				JW_LIT("metrics"));
}

uint64_t les_otlp_metrics_dropped(const struct les_otlp_metric_counters *c)
{
	return c->dropped_queue_full + c->dropped_rejected + c->dropped_exit + c->dropped_too_big;
}

int les_otlp_signals_parse(const char *csv, bool *traces, bool *metrics)
{
	const char *p = csv, *end;
	size_t n;

	*traces = *metrics = false;
	do {
		end = strchr(p, ',');
		n = end ? (size_t)(end - p) : strlen(p);
		if (n == 6 && !strncmp(p, "traces", n))
			*traces = true;
		else if (n == 7 && !strncmp(p, "metrics", n))
			*metrics = true;
		else
			return -EINVAL;
		p = end + 1;
	} while (end);
	return 0;
}
