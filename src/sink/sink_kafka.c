// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Kafka sink: produce each output line with librdkafka and count every outcome. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "util/clock.h"
#include "model/kinds.h"
#include "sink/sink_kafka.h"

#define NS_PER_MS  1000000ULL

/*
 * A librdkafka error that repeats is logged once per interval: with -v every
 * 10 s, without it once a minute, so that a broker outage is seen while it
 * lasts (not only in the exit summary) without filling a journal.
 */
#define ERR_LOG_INTERVAL_NS	  (10 * LES_NS_PER_SEC)
#define ERR_LOG_INTERVAL_QUIET_NS (60 * LES_NS_PER_SEC)
/*
 * A delivered message holds its place in the local queue (and its memory)
 * until its report is served, so a burst of lines polls now and then, not
 * only per loop turn. 32 measured faster than 256 with bench/kafka.
 */
#define POLL_EVERY_PRODUCED 32
/* The final stats line gets at least this long to leave, whatever the budget. */
#define CLOSE_FLUSH_MIN_NS LES_NS_PER_SEC
/*
 * librdkafka bounds its queue in messages as well as in KiB. Lines are
 * longer than this, so the message bound is derived from it to let the
 * byte bound (--kafka-queue-size) be the one that binds.
 */
#define MIN_LINE_BYTES 100

#define PROP_NAME_MAX 256

struct err_log {
	rd_kafka_resp_err_t err;
	uint64_t last_ns; /* 0: slot unused */
	uint64_t suppressed; /* occurrences not logged since */
};

struct les_sink_kafka {
	rd_kafka_t *rk;
	rd_kafka_topic_t *rkt;
	enum les_kafka_key key_mode;
	int verbose;
	struct les_kafka_counters cnt; /* pending is computed, not stored */
	uint64_t delivery_failed; /* the part of cnt.failed that was produced */
	struct les_kafka_err_count failed_by[LES_KAFKA_ERR_SLOTS];
	uint64_t failed_other; /* failures whose code found no slot */
	struct err_log logged[LES_KAFKA_ERR_SLOTS];
	unsigned int since_poll;
	uint64_t flush_timeout_ns;
	uint64_t flush_deadline_ns; /* 0 until the first flush */
};

/* --- configuration ---------------------------------------------------------- */

/*
 * What the tool sets unless -X says otherwise. Idempotence makes the
 * unlimited retries of an outage safe (no duplicates, order kept); 50 ms of
 * linger fills batches at the rates the tool produces; lz4 was measured
 * against zstd with bench/kafka (docs/kafka.md); five minutes of message
 * timeout is the outage the queue is meant to ride out.
 */
static const struct {
	const char *name;
	const char *value;
} producer_defaults[] = {
	{ "client.id", "lustre-ebpf-stream" },
	{ "enable.idempotence", "true" },
	{ "linger.ms", "50" },
	{ "batch.size", "1000000" },
	{ "compression.type", "lz4" },
	{ "message.timeout.ms", "300000" },
};

static int set_prop(rd_kafka_conf_t *conf, const char *name, const char *value, char *err,
		    size_t err_size)
{
	char why[512];
	rd_kafka_conf_res_t res;

	/* topic.NAME as in kcat; bare topic properties go to the same place. */
	if (strncmp(name, "topic.", 6) == 0)
		res = rd_kafka_topic_conf_set(rd_kafka_conf_get_default_topic_conf(conf), name + 6,
					      value, why, sizeof(why));
	else
		res = rd_kafka_conf_set(conf, name, value, why, sizeof(why));
	if (res == RD_KAFKA_CONF_OK)
		return 0;
	snprintf(err, err_size, "invalid Kafka property -X %s=%s: %s", name, value, why);
	return -EINVAL;
}

/* One -X "prop=value" (the parser checked the '='). */
static int set_user_prop(rd_kafka_conf_t *conf, const char *arg, char *err, size_t err_size)
{
	const char *eq = strchr(arg, '=');
	char name[PROP_NAME_MAX];
	size_t n = eq ? (size_t)(eq - arg) : 0;

	if (!n || n >= sizeof(name)) {
		snprintf(err, err_size, "invalid -X '%s': expected PROP=VALUE", arg);
		return -EINVAL;
	}
	memcpy(name, arg, n);
	name[n] = '\0';
	return set_prop(conf, name, eq + 1, err, err_size);
}

static int set_queue_bounds(rd_kafka_conf_t *conf, uint64_t queue_bytes, char *err,
			    size_t err_size)
{
	char kbytes[32], messages[32];
	uint64_t max_messages = queue_bytes / MIN_LINE_BYTES;

	if (max_messages > INT32_MAX)
		max_messages = INT32_MAX;
	snprintf(kbytes, sizeof(kbytes), "%" PRIu64, queue_bytes >> 10);
	snprintf(messages, sizeof(messages), "%" PRIu64, max_messages ? max_messages : 1);
	if (set_prop(conf, "queue.buffering.max.kbytes", kbytes, err, err_size))
		return -EINVAL;
	return set_prop(conf, "queue.buffering.max.messages", messages, err, err_size);
}

/* Ours first, then the user's -X in order, so that the user's win. */
static int configure(rd_kafka_conf_t *conf, const struct les_kafka_config *cfg, char *err,
		     size_t err_size)
{
	size_t i;

	rd_kafka_conf_set_default_topic_conf(conf, rd_kafka_topic_conf_new());
	if (set_prop(conf, "bootstrap.servers", cfg->brokers, err, err_size))
		return -EINVAL;
	for (i = 0; i < sizeof(producer_defaults) / sizeof(producer_defaults[0]); i++)
		if (set_prop(conf, producer_defaults[i].name, producer_defaults[i].value, err,
			     err_size))
			return -EINVAL;
	if (set_queue_bounds(conf, cfg->queue_bytes, err, err_size))
		return -EINVAL;
	for (i = 0; i < cfg->n_props; i++)
		if (set_user_prop(conf, cfg->props[i], err, err_size))
			return -EINVAL;
	return 0;
}

void les_kafka_properties_show(FILE *out)
{
	rd_kafka_conf_properties_show(out);
}

/* --- callbacks (served by rd_kafka_poll and rd_kafka_flush, on our thread) --- */

static void count_failure(struct les_sink_kafka *k, rd_kafka_resp_err_t err)
{
	k->cnt.failed++;
	for (int i = 0; i < LES_KAFKA_ERR_SLOTS; i++) {
		struct les_kafka_err_count *slot = &k->failed_by[i];

		if (slot->n && slot->err != err)
			continue;
		slot->err = err;
		slot->n++;
		return;
	}
	k->failed_other++;
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
	struct les_sink_kafka *k = opaque;

	(void)rk;
	if (msg->err) {
		k->delivery_failed++;
		count_failure(k, msg->err);
	} else {
		k->cnt.delivered++;
	}
}

/*
 * The slot that remembers when err was last logged: its own, a free one, or
 * the one logged longest ago.
 */
static struct err_log *err_log_slot(struct les_sink_kafka *k, rd_kafka_resp_err_t err)
{
	struct err_log *oldest = &k->logged[0];

	for (int i = 0; i < LES_KAFKA_ERR_SLOTS; i++) {
		struct err_log *l = &k->logged[i];

		if (l->last_ns && l->err == err)
			return l;
		if (!l->last_ns || l->last_ns < oldest->last_ns)
			oldest = l;
	}
	if (oldest->last_ns && oldest->err != err)
		memset(oldest, 0, sizeof(*oldest));
	oldest->err = err;
	return oldest;
}

static void on_error(rd_kafka_t *rk, int code, const char *reason, void *opaque)
{
	struct les_sink_kafka *k = opaque;
	rd_kafka_resp_err_t err = (rd_kafka_resp_err_t)code;
	uint64_t now = les_mono_ns();
	struct err_log *l;
	char why[512];

	k->cnt.errors++;
	/* A fatal error ends delivery for good: always worth a line. */
	if (err == RD_KAFKA_RESP_ERR__FATAL) {
		err = rd_kafka_fatal_error(rk, why, sizeof(why));
		fprintf(stderr, "lustre-ebpf-stream: kafka: fatal error, producing stopped: %s (%s)\n",
			why, rd_kafka_err2name(err));
		return;
	}
	l = err_log_slot(k, err);
	if (l->last_ns &&
	    now - l->last_ns < (k->verbose ? ERR_LOG_INTERVAL_NS : ERR_LOG_INTERVAL_QUIET_NS)) {
		l->suppressed++;
		return;
	}
	if (l->suppressed)
		fprintf(stderr, "lustre-ebpf-stream: kafka: %s (%s; %" PRIu64 " more since)\n",
			reason, rd_kafka_err2name(err), l->suppressed);
	else
		fprintf(stderr, "lustre-ebpf-stream: kafka: %s (%s)\n", reason,
			rd_kafka_err2name(err));
	l->last_ns = now;
	l->suppressed = 0;
}

/*
 * librdkafka logs every failed connection attempt; during an outage that is
 * one line per retry. Its errors reach on_error, rate-limited; the log
 * itself is shown only with -vv (where librdkafka's own printer is kept).
 */
static void on_log_quiet(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	(void)rk;
	(void)level;
	(void)fac;
	(void)buf;
}

/* --- life cycle --------------------------------------------------------------- */

int les_sink_kafka_check(const struct les_kafka_config *cfg, char *err, size_t err_size)
{
	rd_kafka_conf_t *conf;
	int ret;

	if (!cfg->brokers || !cfg->topic)
		return 0;
	conf = rd_kafka_conf_new();
	if (!conf) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	ret = configure(conf, cfg, err, err_size);
	rd_kafka_conf_destroy(conf);
	return ret;
}

int les_sink_kafka_open(struct les_sink_kafka **out, const struct les_kafka_config *cfg,
			char *err, size_t err_size)
{
	struct les_sink_kafka *k;
	rd_kafka_conf_t *conf;
	char why[512];
	int ret;

	*out = NULL;
	if (!cfg->brokers || !cfg->topic)
		return 0;
	k = calloc(1, sizeof(*k));
	conf = rd_kafka_conf_new();
	if (!k || !conf) {
		snprintf(err, err_size, "out of memory");
		ret = -ENOMEM;
		goto fail_conf;
	}
	k->key_mode = cfg->key;
	k->verbose = cfg->verbose;
	k->flush_timeout_ns = cfg->flush_timeout_ns;
	ret = configure(conf, cfg, err, err_size);
	if (ret)
		goto fail_conf;
	rd_kafka_conf_set_opaque(conf, k);
	rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	rd_kafka_conf_set_error_cb(conf, on_error);
	if (cfg->verbose < 2)
		rd_kafka_conf_set_log_cb(conf, on_log_quiet);

	/* rd_kafka_new owns conf from here on, but only if it succeeds. */
	k->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, why, sizeof(why));
	if (!k->rk) {
		snprintf(err, err_size, "invalid Kafka configuration: %s", why);
		ret = -EINVAL;
		goto fail_conf;
	}
	k->rkt = rd_kafka_topic_new(k->rk, cfg->topic, NULL);
	if (!k->rkt) {
		snprintf(err, err_size, "invalid Kafka topic '%s': %s", cfg->topic,
			 rd_kafka_err2str(rd_kafka_last_error()));
		rd_kafka_destroy(k->rk);
		free(k);
		return -EINVAL;
	}
	*out = k;
	return 0;

fail_conf:
	if (conf)
		rd_kafka_conf_destroy(conf);
	free(k);
	return ret;
}

rd_kafka_t *les_sink_kafka_handle(struct les_sink_kafka *k)
{
	return k ? k->rk : NULL;
}

/* --- producing ----------------------------------------------------------------- */

const char *les_kafka_key(enum les_kafka_key mode, const struct les_event *ev,
			  char buf[LES_KAFKA_KEY_BUF], size_t *len)
{
	const char *key = NULL;

	switch (mode) {
	case LES_KAFKA_KEY_NONE:
		break;
	case LES_KAFKA_KEY_JOB_ID:
		/* One job's records stay ordered in one partition; the rest by host. */
		key = ev->job_id && *ev->job_id ? ev->job_id : ev->host;
		break;
	case LES_KAFKA_KEY_UID:
		if (les_rec_kind_is_op(ev->kind)) {
			*len = (size_t)snprintf(buf, LES_KAFKA_KEY_BUF, "%" PRIu32, ev->uid);
			return buf;
		}
		key = ev->host;
		break;
	case LES_KAFKA_KEY_HOST:
		key = ev->host;
		break;
	}
	*len = key ? strlen(key) : 0;
	return key;
}

#define STR_(x) #x
#define STR(x) STR_(x)
#define LES_SCHEMA_STR STR(LES_SCHEMA_VERSION)

static rd_kafka_headers_t *make_headers(const struct les_event *ev)
{
	rd_kafka_headers_t *h = rd_kafka_headers_new(5);

	/* Which program and record schema wrote the line, for consumers. */
	rd_kafka_header_add(h, "les_version", -1, LES_VERSION, -1);
	rd_kafka_header_add(h, "schema_version", -1, LES_SCHEMA_STR, -1);
	if (ev->type)
		rd_kafka_header_add(h, "type", -1, ev->type, -1);
	if (ev->host)
		rd_kafka_header_add(h, "host", -1, ev->host, -1);
	if (ev->fs_type)
		rd_kafka_header_add(h, "fs_type", -1, ev->fs_type, -1);
	return h;
}

static rd_kafka_resp_err_t produce(struct les_sink_kafka *k, const char *value, size_t len,
				   const char *key, size_t key_len, rd_kafka_headers_t *h)
{
	return rd_kafka_producev(k->rk, RD_KAFKA_V_RKT(k->rkt),
				 RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
				 RD_KAFKA_V_VALUE((void *)value, len),
				 RD_KAFKA_V_KEY(key, key_len), RD_KAFKA_V_HEADERS(h),
				 RD_KAFKA_V_END);
}

int les_sink_kafka_line(void *ctx, const struct les_event *ev)
{
	struct les_sink_kafka *k = ctx;
	char key_buf[LES_KAFKA_KEY_BUF];
	size_t key_len, len = ev->line_len;
	const char *key;
	rd_kafka_headers_t *h;
	rd_kafka_resp_err_t err;

	if (!k)
		return 0;
	if (len && ev->line[len - 1] == '\n')
		len--;
	key = les_kafka_key(k->key_mode, ev, key_buf, &key_len);
	h = make_headers(ev);
	err = produce(k, ev->line, len, key, key_len, h);
	if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
		/* Reports not yet served may be all that fills it: one look, no loop. */
		rd_kafka_poll(k->rk, 0);
		err = produce(k, ev->line, len, key, key_len, h);
	}
	if (err) {
		rd_kafka_headers_destroy(h); /* still ours when producev fails */
		if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
			k->cnt.dropped++;
		else
			count_failure(k, err);
		return 0; /* Kafka's trouble never stops the other sinks */
	}
	k->cnt.produced++;
	if (++k->since_poll >= POLL_EVERY_PRODUCED)
		les_sink_kafka_poll(k);
	return 0;
}

void les_sink_kafka_poll(struct les_sink_kafka *k)
{
	if (!k)
		return;
	k->since_poll = 0;
	rd_kafka_poll(k->rk, 0);
}

void les_sink_kafka_counters(const struct les_sink_kafka *k, struct les_kafka_counters *out)
{
	memset(out, 0, sizeof(*out));
	if (!k)
		return;
	*out = k->cnt;
	out->pending = k->cnt.produced - k->cnt.delivered - k->delivery_failed;
}

void les_sink_kafka_stats(void *ctx, struct jw *w)
{
	struct les_sink_kafka *k = ctx;

	if (!k)
		return;
	jw_key(w, "kafka");
	jw_obj_begin(w);
	jw_kv_u64(w, "queue", (uint64_t)rd_kafka_outq_len(k->rk));
	jw_kv_u64(w, "produced", k->cnt.produced);
	jw_kv_u64(w, "delivered", k->cnt.delivered);
	jw_kv_u64(w, "failed", k->cnt.failed);
	jw_kv_u64(w, "dropped_kafka", k->cnt.dropped);
	jw_kv_u64(w, "errors", k->cnt.errors);
	jw_key(w, "failed_by_error");
	jw_obj_begin(w);
	for (int i = 0; i < LES_KAFKA_ERR_SLOTS && k->failed_by[i].n; i++)
		jw_kv_u64(w, rd_kafka_err2name(k->failed_by[i].err), k->failed_by[i].n);
	if (k->failed_other)
		jw_kv_u64(w, "other", k->failed_other);
	jw_obj_end(w);
	jw_obj_end(w);
}

/* rd_kafka_flush until deadline (monotonic ns); serves the reports too. */
static void flush_until(struct les_sink_kafka *k, uint64_t deadline)
{
	uint64_t now = les_mono_ns();
	uint64_t left_ms = deadline > now ? (deadline - now + NS_PER_MS - 1) / NS_PER_MS : 0;

	rd_kafka_flush(k->rk, left_ms > INT32_MAX ? INT32_MAX : (int)left_ms);
	rd_kafka_poll(k->rk, 0);
}

uint64_t les_sink_kafka_flush(struct les_sink_kafka *k, uint64_t timeout_ns)
{
	struct les_kafka_counters c;

	if (!k)
		return 0;
	if (!k->flush_deadline_ns)
		k->flush_deadline_ns = les_mono_ns() + timeout_ns;
	flush_until(k, k->flush_deadline_ns);
	les_sink_kafka_counters(k, &c);
	return c.pending;
}

static void report(const struct les_sink_kafka *k, const struct les_kafka_counters *c,
		   uint64_t lost)
{
	uint64_t offered = c->produced + c->dropped + (c->failed - k->delivery_failed);

	if (lost)
		fprintf(stderr,
			"lustre-ebpf-stream: kafka: %" PRIu64 " of %" PRIu64
			" lines not delivered (%" PRIu64 " failed, %" PRIu64
			" dropped on a full queue, %" PRIu64 " still queued at exit)\n",
			lost, offered, c->failed, c->dropped, c->pending);
	else if (k->verbose)
		fprintf(stderr, "lustre-ebpf-stream: kafka: all %" PRIu64 " lines delivered\n",
			offered);
}

uint64_t les_sink_kafka_close(struct les_sink_kafka *k)
{
	struct les_kafka_counters c;
	uint64_t now, deadline, lost;

	if (!k)
		return 0;
	now = les_mono_ns();
	deadline = k->flush_deadline_ns ? k->flush_deadline_ns : now + k->flush_timeout_ns;
	if (deadline < now + CLOSE_FLUSH_MIN_NS)
		deadline = now + CLOSE_FLUSH_MIN_NS;
	flush_until(k, deadline);
	les_sink_kafka_counters(k, &c);
	lost = c.failed + c.dropped + c.pending;
	report(k, &c, lost);
	/* What is still queued is given up now rather than retried by destroy. */
	rd_kafka_purge(k->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
	rd_kafka_topic_destroy(k->rkt);
	rd_kafka_destroy(k->rk);
	free(k);
	return lost;
}
