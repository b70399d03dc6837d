/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kafka sink: every output line (records, stats, windows) is produced to
 * one topic with librdkafka, the way kcat produces: asynchronously, with
 * the producer polled on every turn of the main loop so that delivery
 * reports are counted as they come.
 *
 * The consumer must never wait for Kafka. librdkafka's local queue,
 * bounded by --kafka-queue-size, absorbs broker outages; when it is full
 * the line is dropped and counted (dropped_kafka), never retried in a
 * loop. The idempotent producer (on by default) retries what it has
 * queued without duplicates, so an outage shorter than message.timeout.ms
 * that fits in the queue loses nothing.
 *
 * Message value: the JSON line without its '\n'. Headers: type, host and
 * fs_type (the latter only when known). Key: see enum les_kafka_key.
 *
 * Every function accepts a NULL sink and then does nothing, so main can
 * call them whether Kafka is configured or not.
 */
#ifndef LES_SINK_KAFKA_H
#define LES_SINK_KAFKA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "model/event.h"
#include "util/json.h"

/*
 * 0 in a binary configured with -DLES_WITH_KAFKA=OFF: the options refuse
 * every Kafka setting, and src/sink/not_built.c stands in for this module.
 */
#ifdef LES_WITHOUT_KAFKA
#define LES_HAVE_KAFKA 0
#else
#define LES_HAVE_KAFKA 1
#include <librdkafka/rdkafka.h>

/* Distinct error codes counted one by one; rarer ones are added to "other". */
#define LES_KAFKA_ERR_SLOTS 8

struct les_kafka_err_count {
	rd_kafka_resp_err_t err;
	uint64_t n;
};
#endif

/* What a Kafka message is keyed by (--kafka-key), so that its partition is chosen. */
enum les_kafka_key {
	LES_KAFKA_KEY_JOB_ID = 0, /* the job id; the host when there is none */
	LES_KAFKA_KEY_UID,
	LES_KAFKA_KEY_HOST,
	LES_KAFKA_KEY_NONE,
};

#define LES_KAFKA_MAX_PROPS 64 /* -X prop=value options */

/* The producer's settings: --kafka-*, -X and -v, as the command line gives them. */
struct les_kafka_config {
	const char *brokers; /* NULL (or no topic): no Kafka output */
	const char *topic;
	enum les_kafka_key key;
	const char *props[LES_KAFKA_MAX_PROPS]; /* "prop=value", as given */
	size_t n_props;
	uint64_t queue_bytes;	   /* local queue bound */
	uint64_t flush_timeout_ns; /* at exit */
	int verbose;		   /* 2 and up: librdkafka's own log too */
};

struct les_kafka_counters {
	uint64_t produced; /* accepted into librdkafka's queue */
	uint64_t delivered; /* acknowledged by the broker */
	uint64_t failed; /* refused by produce or failed in delivery */
	uint64_t dropped; /* local queue full: dropped_kafka */
	uint64_t pending; /* produced, no delivery report yet */
	uint64_t errors; /* client errors librdkafka reported: a broker down, refused, ... */
};

struct les_sink_kafka;

/*
 * Create the producer from the --kafka-* and -X options; *out stays NULL
 * when no Kafka output is asked for. On failure err holds one line and
 * the return is -EINVAL for a configuration mistake (a usage error) or
 * another negative errno.
 */
/*
 * Check every property (ours and -X) as librdkafka would take it, without
 * making a producer (no thread, nothing sent): for before the probes load
 * and the output file opens. 0 when Kafka is off; -EINVAL with err.
 */
int les_sink_kafka_check(const struct les_kafka_config *cfg, char *err, size_t err_size);
int les_sink_kafka_open(struct les_sink_kafka **out, const struct les_kafka_config *cfg,
			char *err, size_t err_size);

/* les_event_fn for les_consumer_add_line_sink: produce one line. Never blocks. */
int les_sink_kafka_line(void *ctx, const struct les_event *ev);

/* Serve delivery reports and errors without waiting; call once per loop turn. */
void les_sink_kafka_poll(struct les_sink_kafka *k);

/*
 * Wait up to timeout_ns for everything queued to be delivered. Returns the
 * number of records still waiting. Starts the shutdown budget: a later
 * les_sink_kafka_close spends only what is left of it (or one second).
 */
uint64_t les_sink_kafka_flush(struct les_sink_kafka *k, uint64_t timeout_ns);

/* Append the "kafka" member to a stats record being written. */
void les_sink_kafka_stats(void *ctx, struct jw *w);

void les_sink_kafka_counters(const struct les_sink_kafka *k, struct les_kafka_counters *out);

/*
 * Final flush (what remains of the flush budget), one line on stderr when
 * something was not delivered (always with -v), then destroy. Returns the
 * number of records not delivered: failed, dropped or still queued.
 */
uint64_t les_sink_kafka_close(struct les_sink_kafka *k);

#if LES_HAVE_KAFKA
/* The librdkafka handle, for tests that drive the mock cluster. */
rd_kafka_t *les_sink_kafka_handle(struct les_sink_kafka *k);
#endif

#define LES_KAFKA_KEY_BUF 16 /* holds a decimal uid */

/*
 * The message key for ev under mode: a string of ev's, or the uid written
 * into buf; NULL for no key. Lines that are not per-op records (stats,
 * windows) have no uid and are keyed by host under mode uid.
 */
const char *les_kafka_key(enum les_kafka_key mode, const struct les_event *ev,
			  char buf[LES_KAFKA_KEY_BUF], size_t *len);

/* -X list: librdkafka's configuration properties. */
void les_kafka_properties_show(FILE *out);

#endif /* LES_SINK_KAFKA_H */
