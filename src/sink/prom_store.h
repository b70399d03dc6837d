/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Prometheus endpoint's parts, within sink/: the series store
 * (prom_store.c: the consumer's thread writes it, one mutex), the renderer
 * (prom_render.c: a scrape's text from a snapshot of the store) and the
 * HTTP endpoint (prom_http.c: libmicrohttpd's thread serves the scrape and
 * /healthz). Only these three include this header; every other stage
 * takes sink/prom.h.
 */
#ifndef LES_PROM_STORE_H
#define LES_PROM_STORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/families.h"
#include "model/ops.h"
#include "sink/prom.h"
#include "sink/otlp.h"
#include "sink/sink_kafka.h"

struct MHD_Daemon;

/*
 * The histogram buckets: the bounds lustre-ebpf-exporter uses since its
 * commit e743798 ("compact latency histogram buckets", 2026-04-27), so
 * dashboards computing histogram_quantile() over its families keep
 * working: in ns in prom_store.c, as "le" strings (the way Prometheus' Go
 * client formats them) in prom_render.c.
 * test/fixtures/exporter-e743798.txt holds them for the tests.
 */
#define N_BUCKETS LES_FAMILY_BUCKETS /* model/families.h holds the bounds */

union series_values {
	struct {
		uint64_t ops;
		uint64_t bytes;
		uint64_t errors[LES_ERRC_MAX];
	} access;
	struct {
		uint64_t count;
		uint64_t sum_ns;
		uint64_t buckets[N_BUCKETS]; /* per bucket, made cumulative when rendered */
	} hist;
	uint64_t rpc_ops;
	uint64_t events[LES_EV_MAX];
	struct {
		uint64_t count; /* valid when gen is the store's inflight_gen */
		uint64_t gen;
	} inflight;
	struct {
		uint64_t started; /* completed + in flight, never decreasing */
		uint64_t completed;
	} ptlrpc;
};

struct series {
	struct series *next;	      /* hash chain */
	struct series *older, *newer; /* creation order: a capped scrape takes the oldest */
	uint64_t hash;
	uint64_t last_ns; /* last update, CLOCK_MONOTONIC */
	uint8_t kind;
	uint8_t fset; /* enum les_family_set */
	bool data_op; /* access read/write: bytes are data bytes */
	union series_values v;
	uint32_t key_len;
	char key[]; /* rendered labels: fs="...",mount="...",... */
};

/* Copied from the consumer and the kernel once a second by the main loop. */
struct self_stats {
	bool valid;
	uint64_t at_ns; /* CLOCK_MONOTONIC of the update */
	struct les_prom_consumer_stats c;
	uint64_t dropped_kernel;
	bool have_kafka;
	struct les_kafka_counters kafka;
	bool have_otlp;
	struct les_otlp_counters otlp;
};

struct les_prom {
	struct les_prom_config cfg;
	char *path;
	pthread_mutex_t lock; /* everything below, except key */
	struct series **table;
	size_t n_buckets; /* power of 2 */
	size_t n_series;
	struct series *oldest, *newest;
	uint64_t now_ns;
	uint64_t expired;
	uint64_t dropped; /* updates lost: series cap, key too long, no memory */
	struct self_stats self;
	uint64_t inflight_gen;	     /* in-flight counts read so far */
	uint64_t inflight_unlabeled; /* in flight beyond what the tracer listed */
	size_t last_unrendered;	     /* series the last scrape left out (body cap) */
	uint64_t scrapes_cut;	     /* scrapes that left series out */
	struct self_stats prev_self; /* the update before self: /healthz's rates are between them */
	struct MHD_Daemon *httpd;
	uint64_t log_next_ns, log_held; /* microhttpd's messages, held back (HTTP thread) */
	bool starting;			/* in les_prom_start, whose one line says why it failed */
	uint16_t port;
	char key[LES_LABELS_MAX]; /* scratch for the consumer thread */
	uint8_t key_fset;	  /* the family set key was made for */
};

/* --- the snapshot a scrape renders --------------------------------------- */

/* A series as one scrape sees it: its values, copied under the lock. */
struct snap_series {
	const char *key; /* in the snapshot's key arena */
	uint32_t key_len;
	uint8_t kind;
	uint8_t fset;
	bool data_op;
	union series_values v;
};

/*
 * What one scrape renders, copied under the store's lock; the formatting,
 * the slow part (1.2 s for 100 k jobs), runs unlocked, so the consumer
 * waits at most for this copy.
 */
struct snapshot {
	struct snap_series *series;
	size_t n;
	char *keys;
	size_t body_max; /* what the series render to at most */
	struct self_stats self;
	uint64_t inflight_gen, inflight_unlabeled;
	size_t n_series, unrendered;
	uint64_t expired, dropped, scrapes_cut;
};

/* Copy what a scrape renders; -ENOMEM leaves nothing to free. */
int prom_snapshot_take(struct les_prom *p, struct snapshot *sn);
void prom_snapshot_free(struct snapshot *sn);

/* Stop the HTTP thread, if started (prom_http.c). */
void prom_http_stop(struct les_prom *p);

#endif /* LES_PROM_STORE_H */
