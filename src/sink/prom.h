/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Prometheus endpoint (--prometheus ADDR): cumulative counters and
 * histograms under lustre-ebpf-exporter's metric families, served in the
 * text exposition format by libmicrohttpd. See docs/aggregation.md.
 *
 * The store is a hash table of series keyed by their rendered label set.
 * The consumer's thread updates it (les_prom_add, one short critical
 * section per record); the HTTP thread copies the series under the same
 * mutex (a snapshot, at most what fits the body cap, the oldest first),
 * then formats and sends the copy unlocked, so neither a big store nor a
 * slow client holds the record path. Series not updated for the TTL are
 * removed by les_prom_tick(), so the series of finished jobs go away.
 */
#ifndef LES_PROM_H
#define LES_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "enrich/enrich.h"
#include "model/event.h"

/*
 * 0 in a binary configured with -DLES_WITH_PROMETHEUS=OFF: the options
 * refuse --prometheus, and src/sink/not_built.c stands in for this module.
 */
#ifdef LES_WITHOUT_PROMETHEUS
#define LES_HAVE_PROMETHEUS 0
#else
#define LES_HAVE_PROMETHEUS 1
#endif

#define LES_PROM_PATH_DEFAULT	"/metrics"
#define LES_PROM_TTL_DEFAULT_NS (600ULL * 1000000000ULL) /* 10m */
#define LES_PROM_MAX_SERIES	200000 /* beyond this, new series are dropped, counted */
#define LES_PROM_HOST_MAX	256
/*
 * A scrape's body is at most this: the series past it (the newest) are
 * left out of that scrape and counted (series_unrendered, scrapes_cut).
 */
#define LES_PROM_MAX_BODY (64u << 20)
/* Connections at once, per client address, and the idle time that closes one. */
#define LES_PROM_CONNECTIONS	      64
#define LES_PROM_PER_IP_CONNECTIONS   8
#define LES_PROM_CONNECTION_TIMEOUT_S 10

struct les_kernel_stats;
struct jw;
struct les_prom_config {
	const char *listen;	/* "[HOST]:PORT"; port 0 picks a free one */
	const char *path;	/* e.g. "/metrics" */
	bool uid_labels;	/* uid and username labels */
	bool histogram_process; /* process label on the histogram families */
	bool slurm_label;	/* slurm_job_id on the exporter's families (--slurm-jobid) */
	uint64_t series_ttl_ns; /* 0: series never expire */
	uint32_t max_series;	/* 0: LES_PROM_MAX_SERIES */
	size_t max_body;	/* 0: LES_PROM_MAX_BODY */
};

struct les_prom;

/*
 * Split "HOST:PORT", ":PORT" or "[V6]:PORT" into host (empty for all
 * addresses) and port. Returns 0 or -EINVAL.
 */
int les_prom_parse_listen(const char *s, char *host, size_t host_cap, uint16_t *port);

struct les_prom *les_prom_new(const struct les_prom_config *cfg);
/* Stops the server (if started) and frees everything. NULL-safe. */
void les_prom_free(struct les_prom *p);

/*
 * Bind and start the HTTP thread. Returns 0, or a negative errno with a
 * message in err. les_prom_port() then gives the bound port.
 */
int les_prom_start(struct les_prom *p, char *err, size_t errlen);
uint16_t les_prom_port(const struct les_prom *p);

/* Event sink (les_event_fn): count one record. */
int les_prom_add(void *ctx, const struct les_event *ev);
/*
 * Join sink (les_consumer_add_join_sink): a joined request into
 * lustre_ebpf_stream_client_request_layer_duration_seconds, one histogram
 * per layer of its (lustre_jobid, target, client_nid).
 */
int les_prom_add_join(void *ctx, const struct les_event *ev);

/*
 * Periodic work from the main loop: remember now (CLOCK_MONOTONIC ns, the
 * series' age clock) and drop the series older than the TTL. NULL-safe.
 */
void les_prom_tick(struct les_prom *p, uint64_t now_ns);

/* The consumer's counters the self-metrics show. */
struct les_prom_consumer_stats {
	uint64_t by_kind[LES_REC_KIND_MAX]; /* records decoded, by kind */
	uint64_t emitted;
	uint64_t dropped_decode;
	uint64_t dropped_format;
	uint64_t dropped_output;
	bool have_enrich;
	struct les_enrich_stats enrich;
	uint32_t mounts_observed, mounts_skipped_limit, mounts_skipped_too_long;
};

/*
 * The where and who fields of ev for a request in flight (dev, t; flags:
 * LES_ACTOR_F_*): les_consumer_describe() in the tool.
 */
typedef void (*les_prom_describe_fn)(void *ctx, struct les_event *ev, uint64_t now_ns,
				     uint32_t dev, const struct les_task *t, unsigned int flags);

/*
 * Self-metrics and the in-flight gauge, from the consumer's (cs) and the
 * kernel's counters; describe labels each request in flight.
 */
void les_prom_update_stats(struct les_prom *p, const struct les_prom_consumer_stats *cs,
			   const struct les_kernel_stats *ks, les_prom_describe_fn describe,
			   void *describe_ctx);

struct les_kafka_counters;
/* The Kafka sink's counters, for lustre_ebpf_stream_kafka_*; not called without Kafka. */
void les_prom_update_kafka(struct les_prom *p, const struct les_kafka_counters *kc);

struct les_otlp_counters;
/* The OTLP sink's counters, for lustre_ebpf_stream_otlp_*; not called without --otlp. */
void les_prom_update_otlp(struct les_prom *p, const struct les_otlp_counters *oc);

/* The consumer is stalled when its once-a-second update is older than this. */
#define LES_PROM_STALL_NS (10 * 1000000000ULL)

/*
 * GET /healthz, cheap (no series rendered): a line of JSON in buf (*len
 * bytes) on whether the pipeline is alive: the consumer's last update, its
 * records and drops per second between its last two updates. Returns the
 * HTTP status: 200 "ok"; 503 "starting" before the first update, "stalled"
 * when the last is older than LES_PROM_STALL_NS.
 */
int les_prom_health(struct les_prom *p, uint64_t now_ns, char *buf, size_t cap, size_t *len);

/* The exposition text; malloc'd, *len bytes, NUL-terminated. NULL on ENOMEM. */
char *les_prom_render(struct les_prom *p, size_t *len);

/*
 * An endpoint of cfg, started (les_prom_new, les_prom_start). Returns 0,
 * or a negative errno with a message in err.
 */
int les_prom_open(struct les_prom **out, const struct les_prom_config *cfg, char *err,
		  size_t errlen);

/* Stats hook (les_stats_fn): the stats record's "prometheus":{...}. */
void les_prom_stats_json(void *ctx, struct jw *w);

/* Live series and series removed by the TTL so far. */
size_t les_prom_series(const struct les_prom *p);
uint64_t les_prom_expired(const struct les_prom *p);

#endif /* LES_PROM_H */
