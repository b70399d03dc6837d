// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Prometheus endpoint: the series store. The consumer's thread writes it,
 * the HTTP thread copies a snapshot of it under the same mutex.
 */
#include <inttypes.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/clock.h"
#include "sink/aggregate.h"
#include "model/kinds.h"
#include "model/kstats.h"
#include "model/waits.h"
#include "sink/prom_store.h"

/* Records lost at every stage, as lustre_ebpf_stream_records_dropped_total sums them. */
static uint64_t self_dropped(const struct self_stats *st)
{
	return st->dropped_kernel + st->c.dropped_decode + st->c.dropped_format +
	       st->c.dropped_output;
}

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

static void hist_add(struct series *s, uint64_t ns)
{
	unsigned int b = les_family_bucket(ns); /* N_BUCKETS: only in +Inf */

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

	switch (les_rec_kind_shape(ev->kind)) {
	case LES_SHAPE_ACCESS:
		add_access(p, ev);
		break;
	case LES_SHAPE_REQUEST:
		add_rpc(p, ev);
		break;
	case LES_SHAPE_EVENT:
		add_rpc_event(p, ev);
		break;
	default:
		break;
	}
	return 0;
}

/*
 * A joined request: one observation in each layer's histogram of its
 * (job, target, client NID). A negative network time (the two clocks'
 * rounding) counts as 0.
 */
int les_prom_add_join(void *ctx, const struct les_event *ev)
{
	struct les_prom *p = ctx;

	if (!ev->join)
		return 0;
	for (unsigned int l = 0; l < LES_JOIN_LAYER_MAX; l++) {
		size_t len = les_join_labels_make(p->key, ev->join, l);
		int64_t ns = ev->join->ns[l];
		struct series *s;

		p->key_fset = LES_FSET_OURS;
		pthread_mutex_lock(&p->lock);
		s = touch(p, LES_SK_JOIN_HIST, len);
		if (s)
			hist_add(s, ns > 0 ? (uint64_t)ns : 0);
		pthread_mutex_unlock(&p->lock);
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
	st.have_otlp = p->self.have_otlp;
	st.otlp = p->self.otlp;
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

void les_prom_update_otlp(struct les_prom *p, const struct les_otlp_counters *oc)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->self.have_otlp = true;
	p->self.otlp = *oc;
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
	case LES_SK_JOIN_HIST:
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

int prom_snapshot_take(struct les_prom *p, struct snapshot *sn)
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

void prom_snapshot_free(struct snapshot *sn)
{
	free(sn->series);
	free(sn->keys);
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
	prom_http_stop(p);
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
