/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * OTLP export (--otlp URL, --otlp-signals): traces and window metrics.
 *
 * Traces: each access op a span, the RPC-plane
 * records that ran inside it (requests, waits) its child spans, their
 * events (resends, expiries) span events; posted as OTLP/HTTP JSON to
 * URL/v1/traces by libcurl's multi interface, from the run loop's tick,
 * so that the consumer never waits for the collector.
 *
 * Metrics: the --aggregate windows, each closed window one
 * ExportMetricsServiceRequest to URL/v1/metrics (otlp_metric.c encodes a
 * window's groups: delta sums and explicit-bucket histograms).
 *
 * Three parts:
 * - otlp_metric.c: a window group's data points as OTLP/JSON, no transport.
 * - otlp_trace.c: the traces themselves, without any transport. The rpc
 *   records an op's span needs arrive before the op's own record (they end
 *   first): they wait in a bounded table, in arrival order, keyed by
 *   parent_op_id; the op's record takes them out, the sampling rule decides
 *   whether the trace is kept, and a kept trace is encoded whole into a
 *   batch buffer.
 * - otlp.c: the bounded queue of batch buffers, the HTTP requests, retry
 *   with backoff, the outage report on stderr, the accounting.
 *
 * Every buffer is allocated when the sink opens: the record path writes
 * into them and allocates nothing. Every span is counted: kept, left out
 * by sampling, exported, or dropped with its reason (docs/otlp.md).
 */
#ifndef LES_OTLP_H
#define LES_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/event.h"
#include "util/json.h"
#include "sink/aggregate.h"

/* 0 in a binary configured with -DLES_WITH_OTLP=OFF (no libcurl): sink/not_built.c stands in. */
#ifdef LES_WITHOUT_OTLP
#define LES_HAVE_OTLP 0
#else
#define LES_HAVE_OTLP 1
#endif

/* The --otlp* options, as the command line gives them. */
struct les_otlp_config {
	const char *url;	   /* the collector's base URL; NULL: no export */
	uint32_t sample;	   /* keep 1 op in this many (1: all); see les_otlp_keep */
	bool min_latency;	   /* --min-latency is set: every op that arrives is slow, kept */
	uint64_t queue_bytes;	   /* the batch buffers together */
	uint64_t flush_timeout_ns; /* at exit */
	/*
	 * --input: the records' own time is the clock rpc records expire by
	 * (the newest ts seen), not the wall clock, which is far past a saved
	 * capture's.
	 */
	bool records_clock;
	bool verbose;
	bool traces;			       /* --otlp-signals: spans to URL/v1/traces; neither set: traces */
	bool metrics;			       /* --otlp-signals: the windows to URL/v1/metrics */
	struct les_aggregate_config aggregate; /* the windows of the metrics (--aggregate) */
};

/* What --otlp-signals takes: "traces", "metrics", or both, comma-separated. 0 or -EINVAL. */
int les_otlp_signals_parse(const char *csv, bool *traces, bool *metrics);

/* The metrics stream's counters: data points where the traces count spans (docs/otlp.md). */
struct les_otlp_metric_counters {
	uint64_t windows;	     /* windows closed with at least one group */
	uint64_t points;	     /* data points made: queued for export */
	uint64_t exported;	     /* acknowledged by the collector */
	uint64_t dropped_queue_full; /* no batch buffer was free */
	uint64_t dropped_rejected;   /* the collector refused the batch (not retryable) */
	uint64_t dropped_exit;	     /* still queued when the flush timeout ran out */
	uint64_t dropped_too_big;    /* a group larger than a batch buffer's room */
	uint64_t pending;	     /* neither exported nor dropped yet */
	uint64_t batches;
	uint64_t retries;
	uint64_t errors;
};

/* What the stats record and /metrics show (docs/otlp.md). */
struct les_otlp_counters {
	uint64_t ops;		  /* access records seen */
	uint64_t ops_sampled_out; /* left out by --otlp-sample, with their spans */
	uint64_t spans_sampled_out;
	uint64_t spans;		     /* kept: queued for export */
	uint64_t exported;	     /* acknowledged by the collector */
	uint64_t dropped_queue_full; /* kept, but no batch buffer was free */
	uint64_t dropped_rejected;   /* the collector refused the batch (not retryable) */
	uint64_t dropped_exit;	     /* still queued when the flush timeout ran out */
	uint64_t dropped_too_big;    /* a trace larger than a batch buffer */
	uint64_t pending;	     /* kept, neither exported nor dropped yet */
	uint64_t rpc_no_op;	     /* rpc records of no access op: not traced */
	uint64_t rpc_unlinked;	     /* rpc records whose op never came (filtered, table full) */
	uint64_t batches;	     /* batches acknowledged */
	uint64_t retries;	     /* requests sent again */
	uint64_t errors;	     /* requests that failed: transport or HTTP status */
	struct les_otlp_metric_counters metrics;
};

/* The dropped spans, whatever the reason. */
uint64_t les_otlp_dropped(const struct les_otlp_counters *c);
/* The dropped data points, whatever the reason. */
uint64_t les_otlp_metrics_dropped(const struct les_otlp_metric_counters *c);

struct les_otlp;

/*
 * Check the URL (http:// or https://, a host) without sending anything:
 * 0 when OTLP is off or the URL is good, -EINVAL with one line in err.
 */
int les_otlp_check(const struct les_otlp_config *cfg, char *err, size_t errlen);

/* Build the sink; *out stays NULL when no URL is set. 0, or a negative errno with err. */
int les_otlp_open(struct les_otlp **out, const struct les_otlp_config *cfg, char *err,
		  size_t errlen);

/* les_event_fn: every record; an access record closes its trace. Never blocks. */
int les_otlp_event(void *ctx, const struct les_event *ev);

/* Every pass of the run loop: batches due go out, answers are read, old rpc records expire. */
void les_otlp_tick(struct les_otlp *o, uint64_t now_ns);

/* Every batch buffer holds a batch not yet acknowledged: a trace now would be dropped. */
bool les_otlp_queue_full(const struct les_otlp *o);

/*
 * At the end, before the final stats record: send what is queued, waiting
 * up to the flush timeout; what is left is counted dropped_exit.
 */
void les_otlp_flush(struct les_otlp *o);

/* The "otlp" member of a stats record. */
void les_otlp_stats_json(void *ctx, struct jw *w);

void les_otlp_counters(const struct les_otlp *o, struct les_otlp_counters *out);

/* One line on stderr per signal that dropped (always with -v); then free. Returns the dropped. */
uint64_t les_otlp_close(struct les_otlp *o);

/* --- otlp_trace.c: traces without a transport (unit-tested alone) ------------------------ */

#define LES_OTLP_PENDING_MAX  16384 /* rpc records waiting for their op */
#define LES_OTLP_CHILDREN_MAX 64    /* children of one span; more are counted, not sent */
/* An rpc record waits this long for its op; an op that runs longer loses it (rpc_unlinked). */
#define LES_OTLP_PENDING_TTL_NS (120ULL * 1000000000ULL)

struct les_otlp_traces;

struct les_otlp_traces *les_otlp_traces_new(const struct les_otlp_config *cfg, uint64_t salt);
void les_otlp_traces_free(struct les_otlp_traces *t);

/*
 * Take ev in. An rpc or rpc_event record waits for its op; an access
 * record makes its trace: when it is kept, it is written into w (a batch's
 * spans array) and the return is the number of spans written; on overflow
 * w is left as it was and the return is -ENOSPC; 0 when ev closed no kept
 * trace. *spans is set to the trace's span count, *over to those past
 * LES_OTLP_CHILDREN_MAX (never written, counted dropped_too_big).
 */
int les_otlp_traces_add(struct les_otlp_traces *t, const struct les_event *ev, struct jw *w,
			unsigned int *spans, unsigned int *over);

/* Whether an op is kept, by the rule docs/otlp.md states. */
bool les_otlp_keep(const struct les_otlp_config *cfg, uint64_t op_id, bool failed);

/* Expire rpc records older than the TTL (epoch ns); they count as rpc_unlinked. */
void les_otlp_traces_expire(struct les_otlp_traces *t, uint64_t now_epoch_ns);

/* The trace part's counters into c (ops, sampled out, no_op, unlinked, too many children). */
void les_otlp_traces_counters(const struct les_otlp_traces *t, struct les_otlp_counters *c);

/* The ids (docs/otlp.md): what a test computes to find a record's span. */
void les_otlp_trace_id(uint64_t salt, uint64_t op_id, char hex[33]);
uint64_t les_otlp_span_id(unsigned int role, uint64_t id);

/* The role byte of a span id. */
enum les_otlp_role {
	LES_OTLP_ROLE_OP = 1,	   /* an access op: op_id */
	LES_OTLP_ROLE_REQUEST = 2, /* a request: req_id */
	LES_OTLP_ROLE_WAIT = 3,	   /* a thread's wait: wait_id */
	LES_OTLP_ROLE_OTHER = 4,   /* an rpc record with neither: its place in the trace */
};

/*
 * What opens a batch of either signal: {"<resource>":[{resource, "<scope>":
 * [{"scope":{...}, "<items>":[ (each key a JW_LIT: text and length).
 */
void les_otlp_envelope_begin(struct jw *w, const char *host, const char *resource,
			     size_t resource_n, const char *scope, size_t scope_n,
			     const char *items, size_t items_n);

/* The resource and scope that open every batch, and what closes one. */
void les_otlp_batch_begin(struct jw *w, const char *host);
void les_otlp_batch_end(struct jw *w);
#define LES_OTLP_BATCH_END_LEN 8 /* "]}]}]}" and slack */

/* --- otlp_metric.c: a window's metrics without a transport (unit-tested alone) ------------- */

/*
 * A group of a closed window as OTLP metrics into w (a batch's metrics
 * array): delta sums over [window start, window end) and the latency as
 * an explicit-bucket histogram (model/families.h's buckets, in seconds).
 * Returns the data points written; on overflow w is left as it was and
 * the return is -ENOSPC. *points is the group's data points either way.
 */
int les_otlp_metrics_add(struct jw *w, const struct les_window *win,
			 const struct les_window_group *g, unsigned int *points);

/* The resource and scope that open a metrics batch; les_otlp_batch_end closes it. */
void les_otlp_metrics_begin(struct jw *w, const char *host);

/* OTLP/JSON pieces both signals write (otlp_trace.c): 64-bit integers as strings, attributes. */
void les_otlp_u64_str(struct jw *w, uint64_t v);
void les_otlp_attr_cstr(struct jw *w, const char *key, const char *s); /* NULL: left out */
void les_otlp_attr_int(struct jw *w, const char *key, uint64_t v);
void les_otlp_attr_bool(struct jw *w, const char *key, bool v);

/* The resource attributes of both signals: service.name, service.version, host.name. */
void les_otlp_resource(struct jw *w, const char *host);

#endif /* LES_OTLP_H */
