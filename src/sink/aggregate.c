// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Windowed aggregation, the accumulator: records -> groups (open
 * addressing over a fixed pool) -> the window's groups as data
 * (struct les_window_group) when the window closes, to a les_window_fn:
 * the JSON window writer (window_json.c), or any other output of them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sink/aggregate.h"
#include "sink/window_json.h"
#include "util/histogram.h"
#include "util/json.h"
#include "model/kinds.h"
#include "model/ops.h"
#include "model/waits.h"

#define AGG_KEY_MAX	    4096 /* longest serialized group key */
#define AGG_ARENA_PER_GROUP 256	 /* key bytes budgeted per group */

/*
 * Record kinds aggregate apart even when every grouped field matches: a
 * group's kind is a per-op kind of model/kinds.h, or AGG_KIND_JOIN for
 * joined requests (keyed by job on the wire, target and client NID).
 */
#define AGG_KIND_JOIN LES_REC_KIND_MAX
#define AGG_KINDS     (LES_REC_KIND_MAX + 1)
#define AGG_JOIN_KEYS 3 /* job, target, client_nid */

/* Serialized key: kind byte, then per grouped field a tag and its value. */
enum key_tag {
	KEY_NULL = 1,
	KEY_STR, /* bytes, then NUL */
	KEY_UID, /* 4 bytes, host order */
};

static const char *const field_names[LES_GF_MAX] = {
	[LES_GF_FS_TYPE] = "fs_type",
	[LES_GF_FS] = "fs",
	[LES_GF_MOUNT] = "mount",
	[LES_GF_OP] = "op",
	[LES_GF_ACCESS_INTENT] = "access_intent",
	[LES_GF_UID] = "uid",
	[LES_GF_USERNAME] = "username",
	[LES_GF_PROCESS] = "process",
	[LES_GF_ACTOR_TYPE] = "actor_type",
	[LES_GF_JOB_ID] = "job_id",
	[LES_GF_TYPE] = "type",
	[LES_GF_COMM] = "comm",
	[LES_GF_PROTO] = "proto",
	[LES_GF_EVENT] = "event",
	[LES_GF_HOST] = "host",
};

struct agg_group {
	uint64_t hash;
	uint32_t key_off, key_len; /* in the arena */
	uint32_t slot;		   /* table slot, cleared when the window closes */
	uint8_t kind;		   /* enum les_rec_kind */
	uint64_t count;
	uint64_t bytes;
	uint64_t rpc_wait_ns;
	uint64_t rpc_count;
	uint64_t reads;	       /* access reads, to know when cache_served applies */
	uint64_t cache_served; /* successful reads that sent no request */
	uint64_t errors[LES_ERRC_MAX];
	uint64_t events[LES_EV_MAX];
	int64_t layer_ns[LES_JOIN_LAYER_MAX]; /* a join group's sums */
	struct les_hist latency;
	uint64_t le_buckets[LES_FAMILY_BUCKETS + 1]; /* the metrics outputs' buckets, +Inf last */
};

struct les_aggregate {
	struct les_aggregate_config cfg;
	les_window_fn emit; /* where a closing window's groups go */
	void *emit_ctx;
	struct les_window_json *json; /* made by les_aggregate_new: the writer emit is */

	struct agg_group *groups; /* pool, max_groups entries */
	uint32_t n_groups;
	uint32_t *slots; /* 0 empty, else group index + 1 */
	uint32_t slot_mask;
	char *arena;
	size_t arena_len, arena_cap;
	struct agg_group other[AGG_KINDS]; /* overflow groups by kind, used when count > 0 */

	bool window_open;
	uint64_t window_start;
	uint64_t next_min_start; /* end of the last closed window */

	struct les_aggregate_stats st;
	char key[AGG_KEY_MAX];
};

const char *les_group_field_name(enum les_group_field f)
{
	return (unsigned int)f < LES_GF_MAX ? field_names[f] : NULL;
}

static int field_by_name(const char *s, size_t n)
{
	for (int f = 0; f < LES_GF_MAX; f++)
		if (strlen(field_names[f]) == n && memcmp(field_names[f], s, n) == 0)
			return f;
	return -1;
}

int les_group_by_parse(const char *csv, uint32_t *mask, char *err, size_t errlen)
{
	uint32_t m = 0;
	const char *p = csv;

	if (!csv || !*csv) {
		snprintf(err, errlen, "empty --group-by");
		return -EINVAL;
	}
	for (;;) {
		size_t n = strcspn(p, ",");
		int f = field_by_name(p, n);

		if (f < 0) {
			snprintf(err, errlen,
				 "unknown --group-by field '%.*s' (fields: fs_type, fs, mount, op, "
				 "access_intent, uid, username, process, actor_type, job_id, type, "
				 "comm, proto, event, host)",
				 (int)n, p);
			return -EINVAL;
		}
		m |= 1u << f;
		if (!p[n])
			break;
		p += n + 1;
	}
	*mask = m;
	return 0;
}

uint64_t les_window_start(uint64_t epoch_ns, uint64_t window_ns)
{
	return window_ns ? epoch_ns - epoch_ns % window_ns : epoch_ns;
}

static uint32_t table_size(uint32_t max_groups)
{
	uint32_t n = 16;

	/* At most half full, so a probe always finds an empty slot quickly. */
	while (n < 2 * (uint64_t)max_groups)
		n <<= 1;
	return n;
}

struct les_aggregate *les_aggregate_new_groups(const struct les_aggregate_config *cfg,
					       les_window_fn fn, void *fn_ctx)
{
	struct les_aggregate *a;
	uint32_t nslots;

	if (!cfg->window_ns || !cfg->max_groups || cfg->max_groups > (1u << 24))
		return NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->cfg = *cfg;
	a->emit = fn;
	a->emit_ctx = fn_ctx;
	nslots = table_size(cfg->max_groups);
	a->slot_mask = nslots - 1;
	a->arena_cap = (size_t)cfg->max_groups * AGG_ARENA_PER_GROUP;
	if (a->arena_cap < AGG_KEY_MAX)
		a->arena_cap = AGG_KEY_MAX;
	/* calloc'd pages stay untouched until a group uses them. */
	a->groups = calloc(cfg->max_groups, sizeof(*a->groups));
	a->slots = calloc(nslots, sizeof(*a->slots));
	a->arena = malloc(a->arena_cap);
	if (!a->groups || !a->slots || !a->arena) {
		les_aggregate_free(a);
		return NULL;
	}
	return a;
}

struct les_aggregate *les_aggregate_new(const struct les_aggregate_config *cfg,
					les_window_out_fn out, void *out_ctx)
{
	struct les_window_json *json = les_window_json_new(out, out_ctx);
	struct les_aggregate *a =
		json ? les_aggregate_new_groups(cfg, les_window_json_group, json) : NULL;

	if (!a) {
		les_window_json_free(json);
		return NULL;
	}
	a->json = json;
	return a;
}

void les_aggregate_free(struct les_aggregate *a)
{
	if (!a)
		return;
	les_window_json_free(a->json);
	free(a->groups);
	free(a->slots);
	free(a->arena);
	free(a);
}

static const char *field_str(const struct les_event *ev, enum les_group_field f)
{
	switch (f) {
	case LES_GF_FS_TYPE:
		return ev->fs_type;
	case LES_GF_FS:
		return ev->fs;
	case LES_GF_MOUNT:
		return ev->mount;
	case LES_GF_OP:
		/* RPC events group by the key minus op: their op is the event. */
		return les_rec_kind_shape(ev->kind) == LES_SHAPE_EVENT ? NULL : ev->op;
	case LES_GF_ACCESS_INTENT:
		return ev->access_intent;
	case LES_GF_USERNAME:
		return ev->username;
	case LES_GF_PROCESS:
		return ev->process;
	case LES_GF_ACTOR_TYPE:
		return ev->actor_type;
	case LES_GF_JOB_ID:
		return ev->job_id;
	case LES_GF_COMM:
		return ev->comm;
	case LES_GF_PROTO:
		return ev->proto;
	case LES_GF_EVENT:
		return ev->event;
	case LES_GF_HOST:
		return ev->host;
	default:
		return NULL;
	}
}

/* Serialize the grouped fields of ev into a->key; -1 when too long. */
static int make_key(struct les_aggregate *a, const struct les_event *ev, unsigned int kind)
{
	char *k = a->key;
	size_t len = 0;

	k[len++] = (char)kind;
	for (int f = 0; f < LES_GF_MAX; f++) {
		const char *s;
		size_t n;

		if (!(a->cfg.group_by & (1u << f)) || f == LES_GF_TYPE)
			continue;
		if (f == LES_GF_UID) {
			if (len + 1 + sizeof(ev->uid) > AGG_KEY_MAX)
				return -1;
			k[len++] = KEY_UID;
			memcpy(k + len, &ev->uid, sizeof(ev->uid));
			len += sizeof(ev->uid);
			continue;
		}
		s = field_str(ev, f);
		if (!s) {
			if (len + 1 > AGG_KEY_MAX)
				return -1;
			k[len++] = KEY_NULL;
			continue;
		}
		n = strlen(s);
		if (len + 2 + n > AGG_KEY_MAX)
			return -1;
		k[len++] = KEY_STR;
		memcpy(k + len, s, n);
		len += n;
		k[len++] = '\0';
	}
	return (int)len;
}

uint64_t les_key_hash(const void *key, size_t n, uint64_t seed)
{
	const unsigned char *p = key;
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ULL), w;

	/* splitmix64-style mixing of each 8-byte word, then of the tail. */
	for (; n >= sizeof(w); p += sizeof(w), n -= sizeof(w)) {
		memcpy(&w, p, sizeof(w));
		h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 31;
	}
	w = 0;
	memcpy(&w, p, n);
	h = (h ^ w) * 0x94d049bb133111ebULL;
	return h ^ (h >> 29);
}

static struct agg_group *overflow_group(struct les_aggregate *a, unsigned int kind)
{
	a->st.overflow_records++;
	a->other[kind].kind = (uint8_t)kind;
	return &a->other[kind];
}

static struct agg_group *new_group(struct les_aggregate *a, uint32_t slot, uint64_t hash,
				   size_t key_len, unsigned int kind)
{
	struct agg_group *g = &a->groups[a->n_groups];

	memset(g, 0, sizeof(*g));
	g->hash = hash;
	g->key_off = (uint32_t)a->arena_len;
	g->key_len = (uint32_t)key_len;
	g->slot = slot;
	g->kind = (uint8_t)kind;
	memcpy(a->arena + a->arena_len, a->key, key_len);
	a->arena_len += key_len;
	a->slots[slot] = ++a->n_groups;
	return g;
}

/* The group of the key in a->key (len bytes; negative: too long). */
static struct agg_group *find_key(struct les_aggregate *a, int len, unsigned int kind)
{
	uint64_t hash;
	uint32_t slot;

	if (len < 0)
		return overflow_group(a, kind);
	hash = les_key_hash(a->key, (size_t)len, 0);
	for (slot = (uint32_t)hash & a->slot_mask; a->slots[slot];
	     slot = (slot + 1) & a->slot_mask) {
		struct agg_group *g = &a->groups[a->slots[slot] - 1];

		if (g->hash == hash && g->key_len == (uint32_t)len &&
		    memcmp(a->arena + g->key_off, a->key, (size_t)len) == 0)
			return g;
	}
	if (a->n_groups >= a->cfg.max_groups || a->arena_len + (size_t)len > a->arena_cap)
		return overflow_group(a, kind);
	return new_group(a, slot, hash, (size_t)len, kind);
}

static struct agg_group *find_group(struct les_aggregate *a, const struct les_event *ev,
				    unsigned int kind)
{
	return find_key(a, make_key(a, ev, kind), kind);
}

/* A joined request's key: AGG_KIND_JOIN, then job, target and client NID as make_key's. */
static int make_join_key(struct les_aggregate *a, const struct les_join_view *v)
{
	const char *keys[AGG_JOIN_KEYS] = {v->job, v->target, v->client_nid};
	char *k = a->key;
	size_t len = 0;

	k[len++] = (char)AGG_KIND_JOIN;
	for (int i = 0; i < AGG_JOIN_KEYS; i++) {
		size_t n = keys[i] ? strlen(keys[i]) : 0;

		if (len + 2 + n > AGG_KEY_MAX)
			return -1;
		if (!keys[i]) {
			k[len++] = KEY_NULL;
			continue;
		}
		k[len++] = KEY_STR;
		memcpy(k + len, keys[i], n);
		len += n;
		k[len++] = '\0';
	}
	return (int)len;
}

static void group_add(struct agg_group *g, const struct les_event *ev)
{
	g->count++;
	g->bytes += ev->bytes;
	if (ev->err)
		g->errors[les_errno_class(ev->err)]++;
	switch (les_rec_kind_shape(g->kind)) {
	case LES_SHAPE_EVENT:
		if (ev->event_id < LES_EV_MAX)
			g->events[ev->event_id]++;
		return;
	case LES_SHAPE_ACCESS:
		g->rpc_wait_ns += ev->rpc_wait_ns;
		g->rpc_count += ev->rpc_count;
		if (ev->access_op == LES_OP_READ) {
			g->reads++;
			if (!ev->err && !ev->rpc_count)
				g->cache_served++;
		}
		break;
	default:
		break;
	}
	les_hist_add(&g->latency, ev->latency_ns);
	g->le_buckets[les_family_bucket(ev->latency_ns)]++;
}

static void join_add(struct agg_group *g, const struct les_join_view *v)
{
	int64_t service = v->ns[LES_JOIN_CLIENT_SERVICE];

	g->count++;
	for (int l = 0; l < LES_JOIN_LAYER_MAX; l++)
		g->layer_ns[l] += v->ns[l];
	les_hist_add(&g->latency, service > 0 ? (uint64_t)service : 0);
	g->le_buckets[les_family_bucket(service > 0 ? (uint64_t)service : 0)]++;
}

/* --- window lines ------------------------------------------------------ */

/* The grouped fields, decoded from the group's key; all NULL for "other". */
static void decode_fields(const struct les_aggregate *a, const struct agg_group *g, bool other,
			  struct les_window_group *v)
{
	const char *k = other ? NULL : a->arena + g->key_off + 1;

	for (int f = 0; f < LES_GF_MAX && k; f++) {
		if (!(a->cfg.group_by & (1u << f)) || f == LES_GF_TYPE)
			continue;
		if (f == LES_GF_UID) {
			memcpy(&v->uid, k + 1, sizeof(v->uid));
			k += 1 + sizeof(v->uid);
			continue;
		}
		if (*k == KEY_STR)
			v->field[f] = k + 1;
		k += *k == KEY_STR ? 2 + strlen(k + 1) : 1;
	}
}

/* A join group's keys, decoded from its key; all NULL for "other". */
static void decode_join(const struct les_aggregate *a, const struct agg_group *g, bool other,
			struct les_join_view *jv)
{
	const char *k = other ? NULL : a->arena + g->key_off + 1;
	const char **keys[AGG_JOIN_KEYS] = {&jv->job, &jv->target, &jv->client_nid};

	for (int i = 0; i < AGG_JOIN_KEYS; i++) {
		*keys[i] = k && *k == KEY_STR ? k + 1 : NULL;
		if (k)
			k += *k == KEY_STR ? 2 + strlen(k + 1) : 1;
	}
	memcpy(jv->ns, g->layer_ns, sizeof(jv->ns));
}

/* A group as data, for the window's outputs. */
static int emit_group(struct les_aggregate *a, const struct les_window *win,
		      const struct agg_group *g, bool other)
{
	struct les_join_view jv;
	struct les_window_group v = {
		.kind = g->kind,
		.other = other,
		.count = g->count,
		.bytes = g->bytes,
		.rpc_wait_ns = g->rpc_wait_ns,
		.rpc_count = g->rpc_count,
		.reads = g->reads,
		.cache_served = g->cache_served,
		.errors = g->errors,
		.events = g->events,
		.latency = &g->latency,
		.le_buckets = g->le_buckets,
	};

	if (g->kind == AGG_KIND_JOIN) {
		decode_join(a, g, other, &jv);
		v.join = &jv;
	} else {
		decode_fields(a, g, other, &v);
	}
	return a->emit ? a->emit(a->emit_ctx, win, &v) : 0;
}

/* Output every group of the open window, then empty the table for the next. */
static int close_window(struct les_aggregate *a, bool partial)
{
	struct les_window win = {
		.start_ns = a->window_start,
		.end_ns = a->window_start + a->cfg.window_ns,
		.partial = partial,
		.host = a->cfg.host,
		.group_by = a->cfg.group_by,
	};
	int err = 0;

	if (!a->window_open)
		return 0;
	for (uint32_t i = 0; i < a->n_groups && !err; i++)
		err = emit_group(a, &win, &a->groups[i], false);
	for (unsigned int kind = 0; kind < AGG_KINDS && !err; kind++)
		if (a->other[kind].count)
			err = emit_group(a, &win, &a->other[kind], true);
	if (a->n_groups > a->st.max_groups_seen)
		a->st.max_groups_seen = a->n_groups;
	a->st.windows++;
	for (uint32_t i = 0; i < a->n_groups; i++)
		a->slots[a->groups[i].slot] = 0;
	a->n_groups = 0;
	a->arena_len = 0;
	memset(a->other, 0, sizeof(a->other));
	a->window_open = false;
	a->next_min_start = a->window_start + a->cfg.window_ns;
	return err;
}

/* The window of a record completed at ts: the open one, or a new one after closing it. */
static int window_for(struct les_aggregate *a, uint64_t ts)
{
	uint64_t start = les_window_start(ts, a->cfg.window_ns);
	int err = 0;

	/*
	 * Late records (completed before the open window, or in one already
	 * closed) count in the open window, or the next one: windows are
	 * never reopened, so each is output once.
	 */
	if (start < a->next_min_start || (a->window_open && start < a->window_start)) {
		a->st.late_records++;
		start = a->window_open ? a->window_start : a->next_min_start;
	}
	if (a->window_open && start > a->window_start)
		err = close_window(a, false);
	if (!a->window_open) {
		a->window_open = true;
		a->window_start = start;
	}
	return err;
}

int les_aggregate_add(void *ctx, const struct les_event *ev)
{
	struct les_aggregate *a = ctx;
	int err;

	/* Only per-op records make groups; anything else is counted, never filed. */
	if (!les_rec_kind_is_op(ev->kind)) {
		a->st.unknown_kind++;
		return 0;
	}
	/* A wait inside a lock enqueue: its time is in the enqueue's group already. */
	if (!les_wait_is_outer(les_wait_part(ev)))
		return 0;
	err = window_for(a, ev->ts_epoch_ns);
	a->st.records++;
	group_add(find_group(a, ev, ev->kind), ev);
	return err;
}

int les_aggregate_add_join(void *ctx, const struct les_event *ev)
{
	struct les_aggregate *a = ctx;
	int err;

	if (!ev->join) {
		a->st.unknown_kind++;
		return 0;
	}
	err = window_for(a, ev->ts_epoch_ns);
	a->st.joined++;
	join_add(find_key(a, make_join_key(a, ev->join), AGG_KIND_JOIN), ev->join);
	return err;
}

int les_aggregate_tick(struct les_aggregate *a, uint64_t now_epoch_ns)
{
	if (!a || !a->window_open)
		return 0;
	if (now_epoch_ns < a->window_start + a->cfg.window_ns + LES_AGG_GRACE_NS)
		return 0;
	return close_window(a, false);
}

int les_aggregate_flush(struct les_aggregate *a, uint64_t now_epoch_ns)
{
	if (!a || !a->window_open)
		return 0;
	return close_window(a, now_epoch_ns < a->window_start + a->cfg.window_ns);
}

void les_aggregate_get_stats(const struct les_aggregate *a, struct les_aggregate_stats *st)
{
	*st = a->st;
	if (a->json)
		les_window_json_counts(a->json, &st->groups, &st->format_errors);
	if (a->n_groups > st->max_groups_seen)
		st->max_groups_seen = a->n_groups;
}

/* --- the stats hook --------------------------------------------------------- */

void les_aggregate_stats_json(void *ctx, struct jw *w)
{
	struct les_aggregate_stats st;

	les_aggregate_get_stats(ctx, &st);
	jw_key(w, "aggregate");
	jw_obj_begin(w);
	jw_kv_u64(w, "records", st.records);
	jw_kv_u64(w, "windows", st.windows);
	jw_kv_u64(w, "window_lines", st.groups);
	jw_kv_u64(w, "max_groups_seen", st.max_groups_seen);
	jw_kv_u64(w, "overflow_records", st.overflow_records);
	jw_kv_u64(w, "late_records", st.late_records);
	jw_kv_u64(w, "dropped_format", st.format_errors);
	/* A kind the consumer never hands on: shown only when it happened. */
	if (st.unknown_kind)
		jw_kv_u64(w, "unknown_kind", st.unknown_kind);
	/* Joined requests, where the join is on (shown only when some came). */
	if (st.joined)
		jw_kv_u64(w, "joined", st.joined);
	jw_obj_end(w);
}
