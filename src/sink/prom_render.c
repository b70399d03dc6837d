// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Prometheus endpoint: the text exposition of a snapshot of the store,
 * formatted unlocked while the consumer goes on updating the store.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "model/kinds.h"
#include "sink/prom_store.h"

/* The bounds as "le" labels (see prom_store.h). */
static const char *const bucket_le[N_BUCKETS] = {
	"1e-05", "5e-05", "0.00025", "0.001", "0.0025", "0.01",
	"0.025", "0.1",	  "0.25",    "1",     "2.5",	"10",
};

/* --- rendering ------------------------------------------------------------ */

struct out {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void out_reserve(struct out *o, size_t more)
{
	size_t cap = o->cap ? o->cap : 65536;
	char *b;

	if (o->oom || o->len + more < o->cap)
		return;
	while (cap <= o->len + more)
		cap *= 2;
	b = realloc(o->buf, cap);
	if (!b) {
		o->oom = true;
		return;
	}
	o->buf = b;
	o->cap = cap;
}

static void out_str(struct out *o, const char *s, size_t n)
{
	out_reserve(o, n + 1);
	if (o->oom)
		return;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

__attribute__((format(printf, 2, 3))) static void out_fmt(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	out_reserve(o, 256);
	if (o->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= o->cap - o->len) {
		out_reserve(o, (size_t)n + 1);
		if (o->oom)
			return;
		va_start(ap, fmt);
		vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
	}
	o->len += (size_t)n;
}

static void family_header(struct out *o, const char *name, const char *type, const char *help)
{
	out_fmt(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{key[,extra]} value */
static void sample(struct out *o, const char *name, const struct snap_series *s, const char *extra,
		   uint64_t value)
{
	out_str(o, name, strlen(name));
	out_str(o, "{", 1);
	out_str(o, s->key, s->key_len);
	if (extra) {
		out_str(o, ",", 1);
		out_str(o, extra, strlen(extra));
	}
	out_fmt(o, "} %" PRIu64 "\n", value);
}

/* Walks the snapshot: every series of one kind and set, oldest first. */
struct series_iter {
	size_t i;
	enum les_family_set fset;
};

static const struct snap_series *series_next(const struct snapshot *sn, struct series_iter *it,
					     enum les_series_kind kind)
{
	while (it->i < sn->n) {
		const struct snap_series *s = &sn->series[it->i++];

		if (s->kind == kind && s->fset == it->fset)
			return s;
	}
	return NULL;
}

static bool has_kind(const struct snapshot *sn, enum les_series_kind kind)
{
	for (size_t i = 0; i < sn->n; i++)
		if (sn->series[i].kind == kind)
			return true;
	return false;
}

/* A family's name: the set's prefix, then what it counts. */
struct family_name {
	char s[80];
};

static struct family_name fname(enum les_family_set fset, const char *what)
{
	struct family_name n;

	snprintf(n.s, sizeof(n.s), "%s%s", les_family_prefix(fset), what);
	return n;
}

static void render_access_counters(const struct snapshot *sn, struct out *o,
				   enum les_family_set fset)
{
	struct family_name ops = fname(fset, "access_operations_total");
	struct family_name bytes = fname(fset, "data_bytes_total");
	struct family_name errs = fname(fset, "operation_errors_total");
	const struct snap_series *s;
	char extra[64];

	family_header(o, ops.s, "counter",
		      "File operations completed on the client, by user, process, job and op.");
	for (struct series_iter it = {.fset = fset}; (s = series_next(sn, &it, LES_SK_ACCESS));)
		sample(o, ops.s, s, NULL, s->v.access.ops);
	family_header(o, bytes.s, "counter", "Bytes read and written by file operations.");
	for (struct series_iter it = {.fset = fset}; (s = series_next(sn, &it, LES_SK_ACCESS));)
		if (s->data_op)
			sample(o, bytes.s, s, NULL, s->v.access.bytes);
	family_header(o, errs.s, "counter", "File operations that failed, by errno class.");
	for (struct series_iter it = {.fset = fset}; (s = series_next(sn, &it, LES_SK_ACCESS));)
		for (unsigned int c = LES_ERRC_NONE + 1; c < LES_ERRC_MAX; c++) {
			if (!s->v.access.errors[c])
				continue;
			snprintf(extra, sizeof(extra), "errno_class=\"%s\"",
				 les_errno_class_name(c));
			sample(o, errs.s, s, extra, s->v.access.errors[c]);
		}
}

static void render_histograms(const struct snapshot *sn, struct out *o, enum les_series_kind kind,
			      enum les_family_set fset, const char *what, const char *help)
{
	struct family_name name = fname(fset, what);
	const struct snap_series *s;
	char extra[32];

	family_header(o, name.s, "histogram", help);
	for (struct series_iter it = {.fset = fset}; (s = series_next(sn, &it, kind));) {
		uint64_t cum = 0;

		for (unsigned int b = 0; b < N_BUCKETS; b++) {
			cum += s->v.hist.buckets[b];
			snprintf(extra, sizeof(extra), "le=\"%s\"", bucket_le[b]);
			out_fmt(o, "%s_bucket", name.s);
			sample(o, "", s, extra, cum);
		}
		out_fmt(o, "%s_bucket", name.s);
		sample(o, "", s, "le=\"+Inf\"", s->v.hist.count);
		/* Seconds, exactly: the nanosecond sum split at the decimal point. */
		out_fmt(o, "%s_sum{%.*s} %" PRIu64 ".%09" PRIu64 "\n", name.s, (int)s->key_len,
			s->key, s->v.hist.sum_ns / 1000000000u, s->v.hist.sum_ns % 1000000000u);
		out_fmt(o, "%s_count", name.s);
		sample(o, "", s, NULL, s->v.hist.count);
	}
}

static const char *const rpc_wait_help[LES_FSET_MAX] = {
	[LES_FSET_EXPORTER] =
		"Waits in ptlrpc_queue_wait ended (a thread waiting for its request).",
	[LES_FSET_OURS] = "Waits for client requests ended: FUSE and sunrpc requests, Lustre lock "
			  "waits (lock_wait), by op.",
};

static const char *const rpc_errors_help[LES_FSET_MAX] = {
	[LES_FSET_EXPORTER] = "PtlRPC request events: resend, restart, expire, notconn.",
	[LES_FSET_OURS] = "Request events: sunrpc retransmit, Lustre evict.",
};

static void render_rpc(const struct snapshot *sn, struct out *o, enum les_family_set fset)
{
	struct family_name ops = fname(fset, "rpc_wait_operations_total");
	struct family_name errs = fname(fset, "rpc_errors_total");
	const struct snap_series *s;
	char extra[64];

	family_header(o, ops.s, "counter", rpc_wait_help[fset]);
	for (struct series_iter it = {.fset = fset}; (s = series_next(sn, &it, LES_SK_RPC));)
		sample(o, ops.s, s, NULL, s->v.rpc_ops);
	render_histograms(sn, o, LES_SK_RPC_HIST, fset, "rpc_wait_duration_seconds",
			  "Time threads waited for their requests' replies, in seconds.");
	family_header(o, errs.s, "counter", rpc_errors_help[fset]);
	for (struct series_iter it = {.fset = fset}; (s = series_next(sn, &it, LES_SK_RPC_EVENT));)
		for (unsigned int e = 0; e < LES_EV_MAX; e++) {
			if (!s->v.events[e])
				continue;
			snprintf(extra, sizeof(extra), "event=\"%s\"", les_rpc_event_name(e));
			sample(o, errs.s, s, extra, s->v.events[e]);
		}
}

/* Requests in flight by submitter, and PtlRPC's started and completed. */
static void render_requests(const struct snapshot *sn, struct out *o, enum les_family_set fset)
{
	struct family_name inflight = fname(fset, "inflight_requests");
	const struct snap_series *s;

	family_header(o, inflight.s, "gauge",
		      fset == LES_FSET_EXPORTER
			      ? "PtlRPC requests in flight now, by submitter."
			      : "FUSE and sunrpc requests in flight now, by submitter.");
	for (struct series_iter it = {.fset = fset}; (s = series_next(sn, &it, LES_SK_INFLIGHT));)
		sample(o, inflight.s, s, NULL,
		       s->v.inflight.gen == sn->inflight_gen ? s->v.inflight.count : 0);
	if (fset == LES_FSET_OURS) {
		render_histograms(sn, o, LES_SK_REQ_HIST, fset, "ptlrpc_request_duration_seconds",
				  "PtlRPC requests from first send to reply, in seconds, by "
				  "submitter: writeback and other asynchronous requests too.");
		return;
	}
	family_header(o, "lustre_client_ptlrpc_requests_started_total", "counter",
		      "PtlRPC requests sent: completed plus in flight.");
	for (struct series_iter it = {.fset = fset}; (s = series_next(sn, &it, LES_SK_PTLRPC));)
		sample(o, "lustre_client_ptlrpc_requests_started_total", s, NULL,
		       s->v.ptlrpc.started);
	family_header(o, "lustre_client_ptlrpc_requests_completed_total", "counter",
		      "PtlRPC requests completed (replied, or freed after their send).");
	for (struct series_iter it = {.fset = fset}; (s = series_next(sn, &it, LES_SK_PTLRPC));)
		sample(o, "lustre_client_ptlrpc_requests_completed_total", s, NULL,
		       s->v.ptlrpc.completed);
}

/* The Kafka sink's lines by outcome, as the stats record's "kafka" counts them. */
static void render_kafka(struct out *o, const struct les_kafka_counters *kc)
{
	family_header(o, "lustre_ebpf_stream_kafka_lines_total", "counter",
		      "Output lines given to Kafka, by outcome: produced (queued), delivered "
		      "(acknowledged), failed, dropped (the local queue full).");
	out_fmt(o,
		"lustre_ebpf_stream_kafka_lines_total{outcome=\"produced\"} %" PRIu64 "\n"
		"lustre_ebpf_stream_kafka_lines_total{outcome=\"delivered\"} %" PRIu64 "\n"
		"lustre_ebpf_stream_kafka_lines_total{outcome=\"failed\"} %" PRIu64 "\n"
		"lustre_ebpf_stream_kafka_lines_total{outcome=\"dropped\"} %" PRIu64 "\n",
		kc->produced, kc->delivered, kc->failed, kc->dropped);
	family_header(o, "lustre_ebpf_stream_kafka_lines_pending", "gauge",
		      "Lines produced and not yet acknowledged (held through a broker outage).");
	out_fmt(o, "lustre_ebpf_stream_kafka_lines_pending %" PRIu64 "\n", kc->pending);
	family_header(o, "lustre_ebpf_stream_kafka_errors_total", "counter",
		      "Errors the Kafka client reported: a broker down or refusing, and the like.");
	out_fmt(o, "lustre_ebpf_stream_kafka_errors_total %" PRIu64 "\n", kc->errors);
}

/* The OTLP metrics' data points by outcome, as the stats record's "otlp"."metrics" counts them. */
static void render_otlp_metrics(struct out *o, const struct les_otlp_metric_counters *m)
{
	family_header(o, "lustre_ebpf_stream_otlp_points_total", "counter",
		      "Data points of the windows' OTLP metrics, by outcome: kept, exported "
		      "(acknowledged by the collector), and dropped by reason.");
	out_fmt(o,
		"lustre_ebpf_stream_otlp_points_total{outcome=\"kept\"} %" PRIu64 "\n"
		"lustre_ebpf_stream_otlp_points_total{outcome=\"exported\"} %" PRIu64 "\n"
		"lustre_ebpf_stream_otlp_points_total{outcome=\"dropped\",reason=\"queue_full\"} %" PRIu64 "\n"
		"lustre_ebpf_stream_otlp_points_total{outcome=\"dropped\",reason=\"rejected\"} %" PRIu64 "\n"
		"lustre_ebpf_stream_otlp_points_total{outcome=\"dropped\",reason=\"exit\"} %" PRIu64 "\n"
		"lustre_ebpf_stream_otlp_points_total{outcome=\"dropped\",reason=\"too_big\"} %" PRIu64 "\n",
		m->points, m->exported, m->dropped_queue_full, m->dropped_rejected, m->dropped_exit,
		m->dropped_too_big);
	family_header(o, "lustre_ebpf_stream_otlp_points_pending", "gauge",
		      "Data points made and not yet exported (held through a collector outage).");
	out_fmt(o, "lustre_ebpf_stream_otlp_points_pending %" PRIu64 "\n", m->pending);
}

/* The OTLP sink's spans by outcome, as the stats record's "otlp" counts them. */
static void render_otlp(struct out *o, const struct les_otlp_counters *oc)
{
	family_header(o, "lustre_ebpf_stream_otlp_spans_total", "counter",
		      "Spans of the traces kept for OTLP export, by outcome: kept, exported "
		      "(acknowledged by the collector), and dropped by reason.");
	out_fmt(o,
		"lustre_ebpf_stream_otlp_spans_total{outcome=\"kept\"} %" PRIu64 "\n"
		"lustre_ebpf_stream_otlp_spans_total{outcome=\"exported\"} %" PRIu64 "\n"
		"lustre_ebpf_stream_otlp_spans_total{outcome=\"dropped\",reason=\"queue_full\"} %" PRIu64 "\n"
		"lustre_ebpf_stream_otlp_spans_total{outcome=\"dropped\",reason=\"rejected\"} %" PRIu64 "\n"
		"lustre_ebpf_stream_otlp_spans_total{outcome=\"dropped\",reason=\"exit\"} %" PRIu64 "\n"
		"lustre_ebpf_stream_otlp_spans_total{outcome=\"dropped\",reason=\"too_big\"} %" PRIu64 "\n",
		oc->spans, oc->exported, oc->dropped_queue_full, oc->dropped_rejected,
		oc->dropped_exit, oc->dropped_too_big);
	family_header(o, "lustre_ebpf_stream_otlp_spans_pending", "gauge",
		      "Spans kept and not yet exported (held through a collector outage).");
	out_fmt(o, "lustre_ebpf_stream_otlp_spans_pending %" PRIu64 "\n", oc->pending);
	family_header(o, "lustre_ebpf_stream_otlp_spans_sampled_out_total", "counter",
		      "Spans of the ops --otlp-sample left out.");
	out_fmt(o, "lustre_ebpf_stream_otlp_spans_sampled_out_total %" PRIu64 "\n",
		oc->spans_sampled_out);
	family_header(o, "lustre_ebpf_stream_otlp_errors_total", "counter",
		      "Export requests that failed, traces and metrics: the collector not "
		      "reachable, or an HTTP error.");
	out_fmt(o, "lustre_ebpf_stream_otlp_errors_total %" PRIu64 "\n",
		oc->errors + oc->metrics.errors);
	render_otlp_metrics(o, &oc->metrics);
}

/*
 * The bounded tables: lustre_ebpf_stream_enrich_* (one family per member
 * of the stats record's "enrich", _total for counts) and the mounts.
 */
static void render_tables(struct out *o, const struct self_stats *st)
{
	char name[96];

	for (size_t i = 0; st->c.have_enrich && i < les_enrich_n_stat_fields; i++) {
		const struct les_stat_field *f = &les_enrich_stat_fields[i];

		snprintf(name, sizeof(name), "lustre_ebpf_stream_enrich_%s%s", f->name,
			 f->gauge ? "" : "_total");
		family_header(o, name, f->gauge ? "gauge" : "counter", f->help);
		out_fmt(o, "%s %" PRIu64 "\n", name, les_stat_value(&st->c.enrich, f));
	}
	family_header(o, "lustre_ebpf_stream_observed_mounts", "gauge", "Mounts observed now.");
	out_fmt(o, "lustre_ebpf_stream_observed_mounts %u\n", st->c.mounts_observed);
	family_header(o, "lustre_ebpf_stream_mounts_skipped", "gauge",
		      "Lustre, NFS and FUSE mounts left out now: past the limit of mounts, or too "
		      "long to describe.");
	out_fmt(o,
		"lustre_ebpf_stream_mounts_skipped{reason=\"limit\"} %u\n"
		"lustre_ebpf_stream_mounts_skipped{reason=\"too_long\"} %u\n",
		st->c.mounts_skipped_limit, st->c.mounts_skipped_too_long);
	if (st->have_kafka)
		render_kafka(o, &st->kafka);
	if (st->have_otlp)
		render_otlp(o, &st->otlp);
}

/*
 * The exporters' convention: a constant 1 whose labels say what is running,
 * so that a dashboard can group nodes by version and `count by (version)`
 * shows a rollout's progress.
 */
static void render_build_info(struct out *o)
{
	family_header(o, "lustre_ebpf_stream_build_info", "gauge",
		      "A constant 1, labeled with the version, the records' schema version and "
		      "the libbpf it runs with.");
	out_fmt(o,
		"lustre_ebpf_stream_build_info{version=\"%s\",schema_version=\"%d\","
		"libbpf=\"%u.%u\"} 1\n",
		LES_VERSION, LES_SCHEMA_VERSION, libbpf_major_version(), libbpf_minor_version());
}

static void render_self(const struct snapshot *sn, struct out *o)
{
	const struct self_stats *st = &sn->self;

	render_build_info(o);

	if (st->valid) {
		family_header(o, "lustre_ebpf_stream_inflight_unlabeled", "gauge",
			      "Requests in flight left out of lustre_client_inflight_requests "
			      "(more than the tracer lists at once).");
		out_fmt(o, "lustre_ebpf_stream_inflight_unlabeled %" PRIu64 "\n",
			sn->inflight_unlabeled);
		family_header(o, "lustre_ebpf_stream_records_total", "counter",
			      "Records decoded from the ring buffer, by kind.");
		for (unsigned int k = 1; k < LES_REC_KIND_MAX; k++)
			out_fmt(o, "lustre_ebpf_stream_records_total{kind=\"%s\"} %" PRIu64 "\n",
				les_rec_kind_name(k), st->c.by_kind[k]);
		family_header(o, "lustre_ebpf_stream_records_emitted_total", "counter",
			      "Records handed to the output stages.");
		out_fmt(o, "lustre_ebpf_stream_records_emitted_total %" PRIu64 "\n", st->c.emitted);
		family_header(o, "lustre_ebpf_stream_records_dropped_total", "counter",
			      "Records lost, by the stage that lost them.");
		out_fmt(o,
			"lustre_ebpf_stream_records_dropped_total{stage=\"kernel_ringbuf\"} %" PRIu64
			"\n"
			"lustre_ebpf_stream_records_dropped_total{stage=\"decode\"} %" PRIu64 "\n"
			"lustre_ebpf_stream_records_dropped_total{stage=\"format\"} %" PRIu64 "\n"
			"lustre_ebpf_stream_records_dropped_total{stage=\"output\"} %" PRIu64 "\n",
			st->dropped_kernel, st->c.dropped_decode, st->c.dropped_format,
			st->c.dropped_output);
		render_tables(o, st);
	}
	family_header(o, "lustre_ebpf_stream_prometheus_series", "gauge",
		      "Series held by the Prometheus endpoint.");
	out_fmt(o, "lustre_ebpf_stream_prometheus_series %zu\n", sn->n_series);
	family_header(o, "lustre_ebpf_stream_prometheus_series_expired_total", "counter",
		      "Series removed after --series-ttl without updates.");
	out_fmt(o, "lustre_ebpf_stream_prometheus_series_expired_total %" PRIu64 "\n", sn->expired);
	family_header(o, "lustre_ebpf_stream_prometheus_updates_dropped_total", "counter",
		      "Record updates lost to the series limit or an oversized label set.");
	out_fmt(o, "lustre_ebpf_stream_prometheus_updates_dropped_total %" PRIu64 "\n",
		sn->dropped);
	family_header(o, "lustre_ebpf_stream_prometheus_series_unrendered", "gauge",
		      "Series left out of this scrape: the body would pass its cap "
		      "(the newest are left out).");
	out_fmt(o, "lustre_ebpf_stream_prometheus_series_unrendered %zu\n", sn->unrendered);
	family_header(o, "lustre_ebpf_stream_prometheus_scrapes_cut_total", "counter",
		      "Scrapes that left series out for the body cap.");
	out_fmt(o, "lustre_ebpf_stream_prometheus_scrapes_cut_total %" PRIu64 "\n",
		sn->scrapes_cut);
}

char *les_prom_render(struct les_prom *p, size_t *len)
{
	struct snapshot sn;
	struct out o = {0};

	if (prom_snapshot_take(p, &sn))
		return NULL;
	/* Unlocked from here: the consumer updates the store meanwhile. */
	out_reserve(&o, sn.body_max);
	for (unsigned int f = 0; f < LES_FSET_MAX; f++) {
		render_access_counters(&sn, &o, f);
		render_histograms(&sn, &o, LES_SK_ACCESS_HIST, f, "access_duration_seconds",
				  "Latency of file operations, in seconds.");
		render_rpc(&sn, &o, f);
		render_requests(&sn, &o, f);
	}
	/* Only where the join is on: a client-only node's scrape is as before. */
	if (has_kind(&sn, LES_SK_JOIN_HIST))
		render_histograms(
			&sn, &o, LES_SK_JOIN_HIST, LES_FSET_OURS, "request_layer_duration_seconds",
			"Joined PtlRPC requests (client and server traced on this node): the "
			"time of each layer, by the job on the wire, target and client NID.");
	render_self(&sn, &o);
	prom_snapshot_free(&sn);
	if (o.oom || !o.buf) {
		free(o.buf);
		return NULL;
	}
	*len = o.len;
	return o.buf;
}
