// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Prometheus endpoint: series store (consumer thread writes, HTTP thread
 * reads, one mutex), text exposition rendering, libmicrohttpd server.
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <microhttpd.h>
#include <bpf/libbpf.h>
#include "util/clock.h"
#include "sink/aggregate.h"
#include "model/kinds.h"
#include "model/kstats.h"
#include "model/families.h"
#include "model/ops.h"
#include "model/waits.h"
#include "sink/prom.h"
#include "sink/sink_kafka.h"

#define N_BUCKETS 12

/*
 * The histogram bucket bounds lustre-ebpf-exporter uses since its commit
 * e743798 ("compact latency histogram buckets", 2026-04-27), so dashboards
 * computing histogram_quantile() over its families keep working. The le
 * strings are written as Prometheus' Go client formats them.
 * test/fixtures/exporter-e743798.txt holds them for the tests.
 */
static const uint64_t bucket_ns[N_BUCKETS] = {
	10000,	  50000,     250000,	1000000,    2500000,	10000000,
	25000000, 100000000, 250000000, 1000000000, 2500000000, 10000000000,
};
static const char *const bucket_le[N_BUCKETS] = {
	"1e-05", "5e-05", "0.00025", "0.001", "0.0025", "0.01",
	"0.025", "0.1",	  "0.25",    "1",     "2.5",	"10",
};

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
};

/* Records lost at every stage, as lustre_ebpf_stream_records_dropped_total sums them. */
static uint64_t self_dropped(const struct self_stats *st)
{
	return st->dropped_kernel + st->c.dropped_decode + st->c.dropped_format +
	       st->c.dropped_output;
}

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

/*
 * The label set of a record (model/families.h) in p->key, its family set
 * in p->key_fset; 0 when it does not fit.
 */
static size_t make_key(struct les_prom *p, const struct les_event *ev, enum les_series_kind kind,
		       bool with_process)
{
	struct les_label_opts opts = {.uid = p->cfg.uid_labels, .slurm = p->cfg.slurm_label};
	enum les_family_set fset;
	size_t len = les_labels_make(p->key, &opts, ev, kind, with_process, &fset);

	p->key_fset = (uint8_t)fset;
	return len;
}

/* --- the store ----------------------------------------------------------- */

/* Double the chains when the table is full; on ENOMEM the chains just get longer. */
static void maybe_grow(struct les_prom *p)
{
	size_t n = p->n_buckets * 2;
	struct series **t;

	if (p->n_series < p->n_buckets)
		return;
	t = calloc(n, sizeof(*t));
	if (!t)
		return;
	for (size_t i = 0; i < p->n_buckets; i++) {
		struct series *s = p->table[i], *next;

		for (; s; s = next) {
			next = s->next;
			s->next = t[s->hash & (n - 1)];
			t[s->hash & (n - 1)] = s;
		}
	}
	free(p->table);
	p->table = t;
	p->n_buckets = n;
}

/* Find or create the series; caller holds the lock. NULL when it cannot exist. */
static struct series *lookup(struct les_prom *p, enum les_series_kind kind, size_t key_len)
{
	uint64_t h = les_key_hash(p->key, key_len, kind * LES_FSET_MAX + p->key_fset);
	struct series **head = &p->table[h & (p->n_buckets - 1)], *s;

	for (s = *head; s; s = s->next)
		if (s->hash == h && s->kind == kind && s->fset == p->key_fset &&
		    s->key_len == key_len && memcmp(s->key, p->key, key_len) == 0)
			return s;
	if (p->n_series >= p->cfg.max_series)
		return NULL;
	s = calloc(1, sizeof(*s) + key_len + 1);
	if (!s)
		return NULL;
	s->hash = h;
	s->kind = (uint8_t)kind;
	s->fset = p->key_fset;
	s->key_len = (uint32_t)key_len;
	memcpy(s->key, p->key, key_len);
	s->next = *head;
	*head = s;
	s->older = p->newest;
	if (p->newest)
		p->newest->newer = s;
	else
		p->oldest = s;
	p->newest = s;
	p->n_series++;
	maybe_grow(p);
	return s;
}

static unsigned int bucket_of(uint64_t ns)
{
	unsigned int i = 0;

	while (i < N_BUCKETS && ns > bucket_ns[i])
		i++;
	return i; /* N_BUCKETS: only in +Inf */
}

static void hist_add(struct series *s, uint64_t ns)
{
	unsigned int b = bucket_of(ns);

	s->v.hist.count++;
	s->v.hist.sum_ns += ns;
	if (b < N_BUCKETS)
		s->v.hist.buckets[b]++;
}

static struct series *touch(struct les_prom *p, enum les_series_kind kind, size_t key_len)
{
	struct series *s = key_len ? lookup(p, kind, key_len) : NULL;

	if (!s) {
		p->dropped++;
		return NULL;
	}
	s->last_ns = p->now_ns;
	return s;
}

/* The duration histogram of a record: keyed without process unless asked for. */
static void add_hist(struct les_prom *p, const struct les_event *ev, enum les_series_kind kind,
		     size_t counter_key_len)
{
	size_t len = counter_key_len;
	struct series *s;

	if (!p->cfg.histogram_process)
		len = make_key(p, ev, kind, false);
	pthread_mutex_lock(&p->lock);
	s = touch(p, kind, len);
	if (s)
		hist_add(s, ev->latency_ns);
	pthread_mutex_unlock(&p->lock);
}

static void add_access(struct les_prom *p, const struct les_event *ev)
{
	size_t len = make_key(p, ev, LES_SK_ACCESS, true);
	struct series *s;

	pthread_mutex_lock(&p->lock);
	s = touch(p, LES_SK_ACCESS, len);
	if (s) {
		s->v.access.ops++;
		s->v.access.bytes += ev->bytes;
		s->data_op = ev->access_op == LES_OP_READ || ev->access_op == LES_OP_WRITE;
		if (ev->err)
			s->v.access.errors[les_errno_class(ev->err)]++;
	}
	pthread_mutex_unlock(&p->lock);
	add_hist(p, ev, LES_SK_ACCESS_HIST, len);
}

/* started is at least completed plus what is in flight, and never goes back. */
static void ptlrpc_started_at_least(struct series *s, uint64_t inflight)
{
	if (s->v.ptlrpc.started < s->v.ptlrpc.completed + inflight)
		s->v.ptlrpc.started = s->v.ptlrpc.completed + inflight;
}

/*
 * A PtlRPC request's record: it completed. started is completed plus what
 * is in flight, so it moves here too, and never backwards.
 */
static void add_ptlrpc_completed(struct les_prom *p, const struct les_event *ev)
{
	size_t len = make_key(p, ev, LES_SK_PTLRPC, true);
	struct series *s;

	pthread_mutex_lock(&p->lock);
	s = touch(p, LES_SK_PTLRPC, len);
	if (s) {
		s->v.ptlrpc.completed++;
		ptlrpc_started_at_least(s, 0);
	}
	pthread_mutex_unlock(&p->lock);
}

/*
 * The rpc_wait families count the time threads waited, each nanosecond
 * once across both sets: the pieces of model/waits.h. A PtlRPC request
 * record goes to the request families instead.
 */
static void add_rpc(struct les_prom *p, const struct les_event *ev)
{
	size_t len;
	struct series *s;

	if (!les_wait_is_piece(les_wait_part(ev))) {
		if (ev->proto_id == LES_PROTO_PTLRPC && ev->rpc_op == LES_RPC_OP_REQUEST) {
			add_ptlrpc_completed(p, ev);
			add_hist(p, ev, LES_SK_REQ_HIST, make_key(p, ev, LES_SK_REQ_HIST, true));
		}
		return;
	}
	len = make_key(p, ev, LES_SK_RPC, true);
	pthread_mutex_lock(&p->lock);
	s = touch(p, LES_SK_RPC, len);
	if (s)
		s->v.rpc_ops++;
	pthread_mutex_unlock(&p->lock);
	add_hist(p, ev, LES_SK_RPC_HIST, len);
}

static void add_rpc_event(struct les_prom *p, const struct les_event *ev)
{
	size_t len = make_key(p, ev, LES_SK_RPC_EVENT, true);
	unsigned int e = ev->event_id;
	struct series *s;

	if (e >= LES_EV_MAX)
		return;
	pthread_mutex_lock(&p->lock);
	s = touch(p, LES_SK_RPC_EVENT, len);
	if (s)
		s->v.events[e]++;
	pthread_mutex_unlock(&p->lock);
}

int les_prom_add(void *ctx, const struct les_event *ev)
{
	struct les_prom *p = ctx;

	switch (ev->kind) {
	case LES_REC_ACCESS:
		add_access(p, ev);
		break;
	case LES_REC_RPC:
		add_rpc(p, ev);
		break;
	case LES_REC_RPC_EVENT:
		add_rpc_event(p, ev);
		break;
	}
	return 0;
}

static void unlink_age(struct les_prom *p, struct series *s)
{
	if (s->older)
		s->older->newer = s->newer;
	else
		p->oldest = s->newer;
	if (s->newer)
		s->newer->older = s->older;
	else
		p->newest = s->older;
}

void les_prom_tick(struct les_prom *p, uint64_t now_ns)
{
	uint64_t ttl;

	if (!p)
		return;
	ttl = p->cfg.series_ttl_ns;
	pthread_mutex_lock(&p->lock);
	p->now_ns = now_ns;
	for (size_t i = 0; ttl && now_ns > ttl && i < p->n_buckets; i++) {
		struct series **link = &p->table[i], *s;

		while ((s = *link)) {
			if (s->last_ns + ttl <= now_ns) {
				*link = s->next;
				unlink_age(p, s);
				free(s);
				p->n_series--;
				p->expired++;
			} else {
				link = &s->next;
			}
		}
	}
	pthread_mutex_unlock(&p->lock);
}

/* The label set of a request in flight, in p->key; 0 when it does not fit. */
static size_t inflight_key(struct les_prom *p, les_prom_describe_fn describe, void *describe_ctx,
			   const struct les_inflight_task *it, uint64_t now_ns)
{
	struct les_event ev;

	describe(describe_ctx, &ev, now_ns, it->dev, &it->task,
		 it->async ? LES_ACTOR_F_FS_WORK : 0);
	if (!ev.fs_type)
		ev.fs_type = les_rpc_proto_fs_type(it->proto);
	ev.proto_id = it->proto;
	return make_key(p, &ev, LES_SK_INFLIGHT, true);
}

/*
 * The in-flight gauge, by submitter, from the requests the tracer listed;
 * a PtlRPC submitter's started counter rises to its completed plus those.
 */
static void update_inflight(struct les_prom *p, const struct les_kernel_stats *ks,
			    les_prom_describe_fn describe, void *describe_ctx)
{
	uint64_t now = les_mono_ns();

	pthread_mutex_lock(&p->lock);
	p->inflight_gen++;
	p->inflight_unlabeled = ks->n_tasks_over;
	for (size_t i = 0; i < ks->n_tasks && i < LES_INFLIGHT_TASKS; i++) {
		size_t len = inflight_key(p, describe, describe_ctx, &ks->tasks[i], now);
		struct series *s = touch(p, LES_SK_INFLIGHT, len), *ptl;

		if (!s)
			continue;
		if (s->v.inflight.gen != p->inflight_gen) {
			s->v.inflight.gen = p->inflight_gen;
			s->v.inflight.count = 0;
		}
		s->v.inflight.count++;
		if (ks->tasks[i].proto != LES_PROTO_PTLRPC)
			continue;
		/* The same labels: only the kind differs. */
		ptl = touch(p, LES_SK_PTLRPC, len);
		if (ptl)
			ptlrpc_started_at_least(ptl, s->v.inflight.count);
	}
	pthread_mutex_unlock(&p->lock);
}

void les_prom_update_stats(struct les_prom *p, const struct les_prom_consumer_stats *cs,
			   const struct les_kernel_stats *ks, les_prom_describe_fn describe,
			   void *describe_ctx)
{
	struct self_stats st = {.valid = true, .at_ns = les_mono_ns()};

	if (!p)
		return;
	st.c = *cs;
	st.dropped_kernel = ks->counters[LES_CNT_RB_DROPPED];
	pthread_mutex_lock(&p->lock);
	st.have_kafka = p->self.have_kafka;
	st.kafka = p->self.kafka;
	p->prev_self = p->self;
	p->self = st;
	pthread_mutex_unlock(&p->lock);
	update_inflight(p, ks, describe, describe_ctx);
}

void les_prom_update_kafka(struct les_prom *p, const struct les_kafka_counters *kc)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->self.have_kafka = true;
	p->self.kafka = *kc;
	pthread_mutex_unlock(&p->lock);
}

int les_prom_health(struct les_prom *p, uint64_t now_ns, char *buf, size_t cap, size_t *len)
{
	double secs, records_per_s = 0, drops_per_s = 0, age_s;
	struct self_stats st, prev;
	int status, n;

	pthread_mutex_lock(&p->lock);
	st = p->self;
	prev = p->prev_self;
	pthread_mutex_unlock(&p->lock);
	if (!st.valid) {
		status = 503;
		n = snprintf(buf, cap, "{\"status\":\"starting\"}\n");
	} else {
		age_s = now_ns > st.at_ns ? (double)(now_ns - st.at_ns) / 1e9 : 0;
		if (prev.valid && st.at_ns > prev.at_ns) {
			secs = (double)(st.at_ns - prev.at_ns) / 1e9;
			records_per_s = (double)(st.c.emitted - prev.c.emitted) / secs;
			drops_per_s = (double)(self_dropped(&st) - self_dropped(&prev)) / secs;
		}
		/* The consumer updates once a second; stalled past LES_PROM_STALL_NS. */
		status = now_ns > st.at_ns + LES_PROM_STALL_NS ? 503 : 200;
		n = snprintf(buf, cap,
			     "{\"status\":\"%s\",\"last_update_s\":%.3f,\"records_per_s\":%.1f,"
			     "\"drops_per_s\":%.1f,\"emitted\":%" PRIu64 ",\"dropped\":%" PRIu64
			     ",\"observed_mounts\":%u}\n",
			     status == 200 ? "ok" : "stalled", age_s, records_per_s, drops_per_s,
			     st.c.emitted, self_dropped(&st), st.c.mounts_observed);
	}
	*len = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
	return status;
}

size_t les_prom_series(const struct les_prom *p)
{
	return p->n_series;
}

uint64_t les_prom_expired(const struct les_prom *p)
{
	return p->expired;
}

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

/*
 * A sample line beyond its label set, at most: the longest name with its
 * suffix (46), "{" and ",", an extra label (snprintf'd into 64), "} ", a
 * value (20 digits, or a _sum's 20.9) and the newline.
 */
#define LINE_MAX_EXTRA 144
/* Room kept in the body cap for the headers and the self-metrics. */
#define BODY_FIXED 16384

/* The sample lines a series renders to (as the render_ functions do). */
static size_t series_lines(const struct series *s)
{
	size_t n = 0;

	switch (s->kind) {
	case LES_SK_ACCESS:
		n = s->data_op ? 2 : 1;
		for (unsigned int c = LES_ERRC_NONE + 1; c < LES_ERRC_MAX; c++)
			n += s->v.access.errors[c] != 0;
		return n;
	case LES_SK_ACCESS_HIST:
	case LES_SK_RPC_HIST:
	case LES_SK_REQ_HIST:
		return N_BUCKETS + 3; /* the buckets, +Inf, _sum, _count */
	case LES_SK_RPC_EVENT:
		for (unsigned int e = 0; e < LES_EV_MAX; e++)
			n += s->v.events[e] != 0;
		return n;
	case LES_SK_PTLRPC:
		return 2;
	default:
		return 1;
	}
}

static size_t series_body_max(const struct series *s)
{
	return series_lines(s) * (s->key_len + LINE_MAX_EXTRA);
}

/*
 * How many of the oldest series fit the body cap, and their keys' bytes.
 * The oldest first and the first that does not fit ends it: a capped
 * scrape shows the same series every time, the newest wait for room.
 */
static size_t snapshot_count(const struct les_prom *p, size_t *key_bytes, size_t *body_max)
{
	size_t budget = p->cfg.max_body > BODY_FIXED ? p->cfg.max_body - BODY_FIXED : 0, n = 0;

	*key_bytes = 0;
	*body_max = BODY_FIXED;
	for (const struct series *s = p->oldest; s; s = s->newer, n++) {
		size_t cost = series_body_max(s);

		if (cost > budget)
			break;
		budget -= cost;
		*body_max += cost;
		*key_bytes += s->key_len;
	}
	return n;
}

static void snapshot_copy(const struct les_prom *p, struct snapshot *sn)
{
	const struct series *s = p->oldest;
	char *key = sn->keys;

	for (size_t i = 0; i < sn->n; i++, s = s->newer) {
		struct snap_series *d = &sn->series[i];

		memcpy(key, s->key, s->key_len);
		d->key = key;
		d->key_len = s->key_len;
		d->kind = s->kind;
		d->fset = s->fset;
		d->data_op = s->data_op;
		d->v = s->v;
		key += s->key_len;
	}
}

/* Copy what a scrape renders; -ENOMEM leaves nothing to free. */
static int snapshot_take(struct les_prom *p, struct snapshot *sn)
{
	size_t key_bytes;

	memset(sn, 0, sizeof(*sn));
	pthread_mutex_lock(&p->lock);
	sn->n = snapshot_count(p, &key_bytes, &sn->body_max);
	sn->series = malloc(sn->n * sizeof(*sn->series) + 1);
	sn->keys = malloc(key_bytes + 1);
	if (!sn->series || !sn->keys) {
		pthread_mutex_unlock(&p->lock);
		free(sn->series);
		free(sn->keys);
		return -ENOMEM;
	}
	snapshot_copy(p, sn);
	sn->unrendered = p->n_series - sn->n;
	p->last_unrendered = sn->unrendered;
	if (sn->unrendered)
		p->scrapes_cut++;
	sn->self = p->self;
	sn->inflight_gen = p->inflight_gen;
	sn->inflight_unlabeled = p->inflight_unlabeled;
	sn->n_series = p->n_series;
	sn->expired = p->expired;
	sn->dropped = p->dropped;
	sn->scrapes_cut = p->scrapes_cut;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

static void snapshot_free(struct snapshot *sn)
{
	free(sn->series);
	free(sn->keys);
}

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

	if (snapshot_take(p, &sn))
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
	render_self(&sn, &o);
	snapshot_free(&sn);
	if (o.oom || !o.buf) {
		free(o.buf);
		return NULL;
	}
	*len = o.len;
	return o.buf;
}

/* --- HTTP ------------------------------------------------------------------ */

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, char *body,
			     size_t len, enum MHD_ResponseMemoryMode mode, const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_ctx)
{
	static char landing[] = "<html><head><title>lustre-ebpf-stream</title></head><body>"
				"<h1>lustre-ebpf-stream</h1><p><a href=\"metrics\">Metrics</a>, "
				"<a href=\"healthz\">health</a></p>"
				"</body></html>\n";
	static char not_found[] = "not found\n";
	static char not_allowed[] = "method not allowed\n";
	static char no_memory[] = "out of memory\n";
	struct les_prom *p = cls;
	char *body;
	size_t len;

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)req_ctx;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, not_allowed,
			     sizeof(not_allowed) - 1, MHD_RESPMEM_PERSISTENT, "text/plain");
	if (strcmp(url, p->path) == 0) {
		body = les_prom_render(p, &len);
		if (!body)
			return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, no_memory,
				     sizeof(no_memory) - 1, MHD_RESPMEM_PERSISTENT, "text/plain");
		return reply(conn, MHD_HTTP_OK, body, len, MHD_RESPMEM_MUST_FREE,
			     "text/plain; version=0.0.4; charset=utf-8");
	}
	if (strcmp(url, "/healthz") == 0) {
		char health[256];
		int status = les_prom_health(p, les_mono_ns(), health, sizeof(health), &len);

		return reply(conn, (unsigned int)status, health, len, MHD_RESPMEM_MUST_COPY,
			     "application/json");
	}
	if (strcmp(url, "/") == 0)
		return reply(conn, MHD_HTTP_OK, landing, sizeof(landing) - 1,
			     MHD_RESPMEM_PERSISTENT, "text/html");
	return reply(conn, MHD_HTTP_NOT_FOUND, not_found, sizeof(not_found) - 1,
		     MHD_RESPMEM_PERSISTENT, "text/plain");
}

int les_prom_parse_listen(const char *s, char *host, size_t host_cap, uint16_t *port)
{
	const char *colon, *h = s, *port_s;
	size_t host_len;
	uint64_t v = 0;

	if (!s || !*s)
		return -EINVAL;
	if (*s == '[') {
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':')
			return -EINVAL;
		h = s + 1;
		host_len = (size_t)(end - h);
		port_s = end + 2;
	} else {
		colon = strrchr(s, ':');
		if (!colon || strchr(s, ':') != colon) /* bare IPv6 needs brackets */
			return -EINVAL;
		host_len = (size_t)(colon - s);
		port_s = colon + 1;
	}
	if (host_len >= host_cap || !*port_s || strlen(port_s) > 5)
		return -EINVAL;
	for (const char *c = port_s; *c; c++) {
		if (*c < '0' || *c > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(*c - '0');
	}
	if (v > 65535)
		return -EINVAL;
	memcpy(host, h, host_len);
	host[host_len] = '\0';
	*port = (uint16_t)v;
	return 0;
}

struct les_prom *les_prom_new(const struct les_prom_config *cfg)
{
	struct les_prom *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->cfg = *cfg;
	if (!p->cfg.max_series)
		p->cfg.max_series = LES_PROM_MAX_SERIES;
	if (!p->cfg.max_body)
		p->cfg.max_body = LES_PROM_MAX_BODY;
	p->path = strdup(cfg->path ? cfg->path : LES_PROM_PATH_DEFAULT);
	p->n_buckets = 1024;
	p->table = calloc(p->n_buckets, sizeof(*p->table));
	if (!p->path || !p->table) {
		free(p->path);
		free(p->table);
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	p->now_ns = les_mono_ns();
	return p;
}

void les_prom_free(struct les_prom *p)
{
	if (!p)
		return;
	if (p->httpd)
		MHD_stop_daemon(p->httpd);
	for (size_t i = 0; i < p->n_buckets; i++) {
		struct series *s = p->table[i], *next;

		for (; s; s = next) {
			next = s->next;
			free(s);
		}
	}
	pthread_mutex_destroy(&p->lock);
	free(p->table);
	free(p->path);
	free(p);
}

#define LOG_INTERVAL_NS (10 * LES_NS_PER_SEC)

/*
 * microhttpd's messages, at most one per LOG_INTERVAL_NS: a client that
 * connects in a loop past the limits makes one per connection.
 */
static void http_log(void *cls, const char *fmt, va_list ap)
{
	struct les_prom *p = cls;
	uint64_t now = les_mono_ns();

	if (p->starting)
		return;
	if (p->log_next_ns && now < p->log_next_ns) {
		p->log_held++;
		return;
	}
	if (p->log_held)
		fprintf(stderr, "lustre-ebpf-stream: microhttpd: %" PRIu64 " messages not shown\n",
			p->log_held);
	fputs("lustre-ebpf-stream: microhttpd: ", stderr);
	vfprintf(stderr, fmt, ap);
	p->log_held = 0;
	p->log_next_ns = now + LOG_INTERVAL_NS;
}

/*
 * The limits per client: a client that opens connections and sends half
 * a request (slowloris) holds at most LES_PROM_PER_IP_CONNECTIONS of the
 * LES_PROM_CONNECTIONS, each for LES_PROM_CONNECTION_TIMEOUT_S without a
 * byte; the scrapers on other addresses keep the rest.
 */
static struct MHD_Daemon *start_on(struct les_prom *p, unsigned int flags, uint16_t port,
				   const struct sockaddr *addr)
{
	flags |= MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
	return MHD_start_daemon(
		flags, port, NULL, NULL, on_request, p, MHD_OPTION_EXTERNAL_LOGGER, http_log, p,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)LES_PROM_CONNECTION_TIMEOUT_S,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)LES_PROM_CONNECTIONS,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)LES_PROM_PER_IP_CONNECTIONS,
		/* Last: without an address, the list ends here. */
		addr ? MHD_OPTION_SOCK_ADDR : MHD_OPTION_END, addr, MHD_OPTION_END);
}

static struct MHD_Daemon *start_daemon(struct les_prom *p, const char *host, uint16_t port,
				       int *gai_err)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res = NULL, *ai;
	struct MHD_Daemon *d = NULL;
	char port_s[8];

	if (!*host) {
		/* All addresses: IPv6 with IPv4 mapped, or IPv4 alone without IPv6. */
		d = start_on(p, MHD_USE_DUAL_STACK, port, NULL);
		return d ? d : start_on(p, 0, port, NULL);
	}
	snprintf(port_s, sizeof(port_s), "%u", (unsigned int)port);
	*gai_err = getaddrinfo(host, port_s, &hints, &res);
	if (*gai_err)
		return NULL;
	for (ai = res; ai && !d; ai = ai->ai_next)
		d = start_on(p, ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0, port, ai->ai_addr);
	freeaddrinfo(res);
	return d;
}

int les_prom_start(struct les_prom *p, char *err, size_t errlen)
{
	char host[LES_PROM_HOST_MAX];
	const union MHD_DaemonInfo *info;
	sigset_t block, old;
	int gai_err = 0;
	uint16_t port;

	if (les_prom_parse_listen(p->cfg.listen, host, sizeof(host), &port)) {
		snprintf(err, errlen, "invalid listen address '%s'", p->cfg.listen);
		return -EINVAL;
	}
	/* The HTTP thread inherits this mask: signals stay with the main thread. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	errno = 0;
	p->starting = true;
	p->httpd = start_daemon(p, host, port, &gai_err);
	p->starting = false;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!p->httpd) {
		if (gai_err)
			snprintf(err, errlen, "cannot resolve '%s': %s", host,
				 gai_strerror(gai_err));
		else
			snprintf(err, errlen, "cannot listen on %s%s%s", p->cfg.listen,
				 errno ? ": " : "", errno ? strerror(errno) : "");
		return -EADDRNOTAVAIL;
	}
	info = MHD_get_daemon_info(p->httpd, MHD_DAEMON_INFO_BIND_PORT);
	p->port = info ? info->port : port;
	return 0;
}

uint16_t les_prom_port(const struct les_prom *p)
{
	return p->port;
}

/* --- the stats hook --------------------------------------------------------- */

void les_prom_stats_json(void *ctx, struct jw *w)
{
	struct les_prom *p = ctx;
	uint64_t series, expired, dropped, unrendered, cut;

	pthread_mutex_lock(&p->lock);
	series = p->n_series;
	expired = p->expired;
	dropped = p->dropped;
	unrendered = p->last_unrendered;
	cut = p->scrapes_cut;
	pthread_mutex_unlock(&p->lock);
	jw_key(w, "prometheus");
	jw_obj_begin(w);
	jw_kv_u64(w, "series", series);
	jw_kv_u64(w, "series_expired", expired);
	jw_kv_u64(w, "updates_dropped", dropped);
	jw_kv_u64(w, "series_unrendered", unrendered);
	jw_kv_u64(w, "scrapes_cut", cut);
	jw_obj_end(w);
}

int les_prom_open(struct les_prom **out, const struct les_prom_config *cfg, char *err,
		  size_t errlen)
{
	struct les_prom *p;
	int ret;

	*out = NULL;
	p = les_prom_new(cfg);
	if (!p) {
		snprintf(err, errlen, "--prometheus: out of memory");
		return -ENOMEM;
	}
	ret = les_prom_start(p, err, errlen);
	if (ret) {
		les_prom_free(p);
		return ret;
	}
	*out = p;
	return 0;
}
