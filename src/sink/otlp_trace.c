// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * OTLP traces without a transport: the rpc records waiting for their op,
 * the sampling rule, and a trace's spans as OTLP/JSON (see otlp.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "model/ops.h"
#include "sink/otlp.h"

#define NAME_LEN   48
#define PROTO_LEN  12
#define TARGET_LEN 48
#define NID_LEN	   64
#define BUCKETS	   4096 /* a power of two */
#define NIL	   (-1)

/* An rpc or rpc_event record, kept until its op's record comes. */
struct child {
	uint64_t op_id;		   /* its parent_op_id; 0: the slot is free */
	uint32_t kind;		   /* LES_REC_RPC or LES_REC_RPC_EVENT */
	uint64_t start_ns, end_ns; /* epoch */
	uint64_t req_id, wait_id, parent_wait_id, xid, bytes, latency_ns;
	int err;
	uint32_t pid, tid, opcode;
	bool has_xid, has_opcode, nested;
	uint32_t rpc_op;     /* enum les_rpc_op */
	char name[NAME_LEN]; /* the span's op (span_op), or the event */
	char proto[PROTO_LEN];
	char target[TARGET_LEN];
	char nid[NID_LEN];
	int32_t prev, next; /* the bucket's chain */
};

struct les_otlp_traces {
	const struct les_otlp_config *cfg;
	uint64_t salt;
	/* A ring in arrival order: the oldest is overwritten (and counted) when it is full. */
	struct child ring[LES_OTLP_PENDING_MAX];
	uint32_t head, used; /* the oldest entry; entries in the ring, freed ones included */
	int32_t bucket[BUCKETS];
	struct les_otlp_counters cnt;
	/* The trace being written: its children, by index into ring. */
	int32_t kids[LES_OTLP_CHILDREN_MAX];
	unsigned int n_kids;
};

/* splitmix64's finalizer: op ids end in the CPU number, so they are mixed before any modulo. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint32_t bucket_of(uint64_t op_id)
{
	return (uint32_t)mix64(op_id) & (BUCKETS - 1);
}

bool les_otlp_keep(const struct les_otlp_config *cfg, uint64_t op_id, bool failed)
{
	if (failed || cfg->min_latency || cfg->sample <= 1)
		return true;
	return mix64(op_id) % cfg->sample == 0;
}

struct les_otlp_traces *les_otlp_traces_new(const struct les_otlp_config *cfg, uint64_t salt)
{
	struct les_otlp_traces *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cfg = cfg;
	t->salt = salt;
	for (int i = 0; i < BUCKETS; i++)
		t->bucket[i] = NIL;
	return t;
}

void les_otlp_traces_free(struct les_otlp_traces *t)
{
	free(t);
}

void les_otlp_traces_counters(const struct les_otlp_traces *t, struct les_otlp_counters *c)
{
	c->ops = t->cnt.ops;
	c->ops_sampled_out = t->cnt.ops_sampled_out;
	c->spans_sampled_out = t->cnt.spans_sampled_out;
	c->rpc_no_op = t->cnt.rpc_no_op;
	c->rpc_unlinked = t->cnt.rpc_unlinked;
	c->dropped_too_big += t->cnt.dropped_too_big;
}

/* --- the table of waiting records ------------------------------------------------------ */

static void unlink_child(struct les_otlp_traces *t, int32_t i)
{
	struct child *c = &t->ring[i];

	if (c->prev != NIL)
		t->ring[c->prev].next = c->next;
	else
		t->bucket[bucket_of(c->op_id)] = c->next;
	if (c->next != NIL)
		t->ring[c->next].prev = c->prev;
	c->op_id = 0;
}

/* The oldest entry leaves the ring; counted when it still waited for its op. */
static void pop_oldest(struct les_otlp_traces *t)
{
	int32_t i = (int32_t)t->head;

	if (t->ring[i].op_id) {
		unlink_child(t, i);
		t->cnt.rpc_unlinked++;
	}
	t->head = (t->head + 1) % LES_OTLP_PENDING_MAX;
	t->used--;
}

void les_otlp_traces_expire(struct les_otlp_traces *t, uint64_t now_epoch_ns)
{
	while (t->used) {
		struct child *c = &t->ring[t->head];

		if (c->op_id && c->end_ns + LES_OTLP_PENDING_TTL_NS > now_epoch_ns)
			break;
		pop_oldest(t);
	}
}

static void copy_str(char *dst, size_t cap, const char *s, size_t n)
{
	if (!s)
		n = 0;
	if (n >= cap)
		n = cap - 1;
	if (n)
		memcpy(dst, s, n);
	dst[n] = '\0';
}

/*
 * The op a PtlRPC record's span is named for, by its rpc_op: the record's
 * "op" is the same for every request ("request") and both lock waits
 * ("lock_wait"), which says nothing in a trace view. NULL: the record's op
 * (a protocol's own request, named by its opcode already: "read").
 */
static const char *const span_op[LES_RPC_OP_MAX] = {
	[LES_RPC_OP_QUEUE_WAIT] = "queue_wait",
	[LES_RPC_OP_LOCK_ENQUEUE] = "lock_enqueue",
	[LES_RPC_OP_LOCK_COMPLETION] = "lock_completion",
};

/* A request is named by its opcode ("ost_write"); "request" when unknown. */
static const char *span_op_of(const struct les_event *ev)
{
	const char *name = NULL;

	if (ev->kind == LES_REC_RPC_EVENT)
		return ev->event;
	if (ev->rpc_op == LES_RPC_OP_REQUEST && ev->has_opcode)
		name = les_ptlrpc_opcode_name(ev->opcode);
	else if (ev->rpc_op < LES_RPC_OP_MAX)
		name = span_op[ev->rpc_op];
	return name ? name : ev->op;
}

static void fill_child(struct child *c, const struct les_event *ev)
{
	const char *name;

	c->op_id = ev->parent_op_id;
	c->kind = ev->kind;
	c->end_ns = ev->ts_epoch_ns;
	c->start_ns = ev->ts_epoch_ns - ev->latency_ns;
	c->latency_ns = ev->latency_ns;
	c->req_id = ev->req_id;
	c->wait_id = ev->wait_id;
	c->parent_wait_id = ev->parent_wait_id;
	c->xid = ev->xid;
	c->has_xid = ev->has_xid;
	c->opcode = ev->opcode;
	c->has_opcode = ev->has_opcode;
	c->nested = ev->nested_wait;
	c->bytes = ev->bytes;
	c->err = ev->err;
	c->pid = ev->pid;
	c->tid = ev->tid;
	c->rpc_op = ev->kind == LES_REC_RPC ? ev->rpc_op : LES_RPC_OP_NONE;
	name = span_op_of(ev);
	copy_str(c->name, sizeof(c->name), name, name ? strlen(name) : 0);
	copy_str(c->proto, sizeof(c->proto), ev->proto, ev->proto ? strlen(ev->proto) : 0);
	copy_str(c->target, sizeof(c->target), ev->target, ev->target_len);
	copy_str(c->nid, sizeof(c->nid), ev->nid, ev->nid ? strlen(ev->nid) : 0);
}

static void add_child(struct les_otlp_traces *t, const struct les_event *ev)
{
	uint32_t b = bucket_of(ev->parent_op_id);
	int32_t i;
	struct child *c;

	if (t->used == LES_OTLP_PENDING_MAX)
		pop_oldest(t);
	i = (int32_t)((t->head + t->used) % LES_OTLP_PENDING_MAX);
	t->used++;
	c = &t->ring[i];
	fill_child(c, ev);
	c->prev = NIL;
	c->next = t->bucket[b];
	if (c->next != NIL)
		t->ring[c->next].prev = i;
	t->bucket[b] = i;
}

/*
 * The op's children out of the table, oldest first (the chain holds the
 * newest first). Past LES_OTLP_CHILDREN_MAX they are counted, not kept.
 */
static void take_children(struct les_otlp_traces *t, uint64_t op_id, unsigned int *over)
{
	int32_t i = t->bucket[bucket_of(op_id)], next;

	t->n_kids = 0;
	*over = 0;
	for (; i != NIL; i = next) {
		next = t->ring[i].next;
		if (t->ring[i].op_id != op_id)
			continue;
		if (t->n_kids < LES_OTLP_CHILDREN_MAX)
			t->kids[t->n_kids++] = i;
		else
			(*over)++;
	}
	for (unsigned int k = 0; k < t->n_kids / 2; k++) {
		int32_t tmp = t->kids[k];

		t->kids[k] = t->kids[t->n_kids - 1 - k];
		t->kids[t->n_kids - 1 - k] = tmp;
	}
}

/* Children leave the table once their trace is written (or left out). */
static void release_children(struct les_otlp_traces *t, uint64_t op_id)
{
	int32_t i = t->bucket[bucket_of(op_id)], next;

	for (; i != NIL; i = next) {
		next = t->ring[i].next;
		if (t->ring[i].op_id == op_id)
			unlink_child(t, i);
	}
}

/* --- ids ----------------------------------------------------------------------------------- */

static void hex64(char *out, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 15; i >= 0; i--, v >>= 4)
		out[i] = digits[v & 15];
}

void les_otlp_trace_id(uint64_t salt, uint64_t op_id, char hex[33])
{
	hex64(hex, salt);
	hex64(hex + 16, op_id);
	hex[32] = '\0';
}

uint64_t les_otlp_span_id(unsigned int role, uint64_t id)
{
	return ((uint64_t)role << 56) | (id & 0x00ffffffffffffffULL);
}

/* A child's own span id: its wait, else its request, else its place. */
static uint64_t child_span_id(const struct child *c, unsigned int k)
{
	if (c->wait_id)
		return les_otlp_span_id(LES_OTLP_ROLE_WAIT, c->wait_id);
	if (c->req_id)
		return les_otlp_span_id(LES_OTLP_ROLE_REQUEST, c->req_id);
	return les_otlp_span_id(LES_OTLP_ROLE_OTHER, k + 1);
}

/*
 * Its parent: the wait it runs inside (parent_wait_id), or the wait that
 * waited for it (a request a queue_wait of the same req_id waited for),
 * when that wait is in the trace; else the op.
 */
static uint64_t child_parent_id(const struct les_otlp_traces *t, const struct child *c,
				uint64_t op_span)
{
	for (unsigned int k = 0; k < t->n_kids; k++) {
		const struct child *o = &t->ring[t->kids[k]];

		if (o == c || o->kind != LES_REC_RPC || !o->wait_id)
			continue;
		if (c->parent_wait_id && o->wait_id == c->parent_wait_id)
			return les_otlp_span_id(LES_OTLP_ROLE_WAIT, o->wait_id);
		if (!c->wait_id && c->req_id && o->req_id == c->req_id)
			return les_otlp_span_id(LES_OTLP_ROLE_WAIT, o->wait_id);
	}
	return op_span;
}

/* --- OTLP/JSON (the protobuf JSON mapping: ids in hex, 64-bit integers as strings) --------- */

void les_otlp_u64_str(struct jw *w, uint64_t v)
{
	char buf[24];
	int n = 0;

	do {
		buf[sizeof(buf) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	jw_str(w, buf + sizeof(buf) - n, (size_t)n);
}

static void put_id(struct jw *w, const char *key_colon, size_t n, uint64_t id)
{
	char hex[16];

	hex64(hex, id);
	jw_lit_str(w, key_colon, n, hex, sizeof(hex));
}

static void attr_str(struct jw *w, const char *key, const char *s, size_t n)
{
	if (!s)
		return;
	jw_obj_begin(w);
	jw_lit_cstr(w, JW_LIT("key"), key);
	jw_lit_key(w, JW_LIT("value"));
	jw_obj_begin(w);
	jw_lit_str(w, JW_LIT("stringValue"), s, n);
	jw_obj_end(w);
	jw_obj_end(w);
}

void les_otlp_attr_cstr(struct jw *w, const char *key, const char *s)
{
	if (s)
		attr_str(w, key, s, strlen(s));
}

void les_otlp_attr_int(struct jw *w, const char *key, uint64_t v)
{
	jw_obj_begin(w);
	jw_lit_cstr(w, JW_LIT("key"), key);
	jw_lit_key(w, JW_LIT("value"));
	jw_obj_begin(w);
	jw_lit_key(w, JW_LIT("intValue"));
	les_otlp_u64_str(w, v);
	jw_obj_end(w);
	jw_obj_end(w);
}

void les_otlp_attr_bool(struct jw *w, const char *key, bool v)
{
	jw_obj_begin(w);
	jw_lit_cstr(w, JW_LIT("key"), key);
	jw_lit_key(w, JW_LIT("value"));
	jw_obj_begin(w);
	jw_lit_key(w, JW_LIT("boolValue"));
	jw_bool(w, v);
	jw_obj_end(w);
	jw_obj_end(w);
}

#define P "lustre_ebpf_stream."

static void attr_errno(struct jw *w, int err)
{
	les_otlp_attr_int(w, P "errno", (uint64_t)err);
	if (err)
		les_otlp_attr_cstr(w, "error.type", les_errno_class_name(les_errno_class(err)));
}

/* status: ERROR (2) with the errno class on failure, else UNSET (left out). */
static void put_status(struct jw *w, int err)
{
	if (!err)
		return;
	jw_lit_key(w, JW_LIT("status"));
	jw_obj_begin(w);
	jw_lit_u64(w, JW_LIT("code"), 2);
	jw_lit_cstr(w, JW_LIT("message"), les_errno_class_name(les_errno_class(err)));
	jw_obj_end(w);
}

static void span_begin(struct jw *w, const char *trace_id, uint64_t span_id, uint64_t parent,
		       unsigned int kind, uint64_t start_ns, uint64_t end_ns)
{
	jw_obj_begin(w);
	jw_lit_str(w, JW_LIT("traceId"), trace_id, 32);
	put_id(w, JW_LIT("spanId"), span_id);
	if (parent)
		put_id(w, JW_LIT("parentSpanId"), parent);
	jw_lit_u64(w, JW_LIT("kind"), kind);
	jw_lit_key(w, JW_LIT("startTimeUnixNano"));
	les_otlp_u64_str(w, start_ns);
	jw_lit_key(w, JW_LIT("endTimeUnixNano"));
	les_otlp_u64_str(w, end_ns);
}

/* Who: OpenTelemetry's names where they exist. */
static void attrs_who(struct jw *w, const struct les_event *ev)
{
	les_otlp_attr_int(w, "process.pid", ev->pid);
	les_otlp_attr_int(w, "thread.id", ev->tid);
	les_otlp_attr_cstr(w, "process.executable.name", ev->comm);
	les_otlp_attr_int(w, "user.id", ev->uid);
	les_otlp_attr_cstr(w, "user.name", ev->username);
	les_otlp_attr_cstr(w, P "process", ev->process);
	les_otlp_attr_cstr(w, P "actor_type", ev->actor_type);
	les_otlp_attr_cstr(w, P "job_id", ev->job_id);
	les_otlp_attr_cstr(w, P "job_source", ev->job_source);
}

static void attrs_op(struct jw *w, const struct les_event *ev)
{
	jw_lit_key(w, JW_LIT("attributes"));
	jw_arr_begin(w);
	attrs_who(w, ev);
	les_otlp_attr_cstr(w, P "op", ev->op);
	les_otlp_attr_cstr(w, P "access_intent", ev->access_intent);
	les_otlp_attr_int(w, P "op_id", ev->op_id);
	les_otlp_attr_cstr(w, P "fs_type", ev->fs_type);
	les_otlp_attr_cstr(w, P "fs", ev->fs);
	les_otlp_attr_cstr(w, P "mount", ev->mount);
	les_otlp_attr_int(w, P "latency_ns", ev->latency_ns);
	les_otlp_attr_int(w, P "bytes", ev->bytes);
	attr_errno(w, ev->err);
	les_otlp_attr_int(w, P "rpc_count", ev->rpc_count);
	les_otlp_attr_int(w, P "rpc_wait_ns", ev->rpc_wait_ns);
	jw_arr_end(w);
}

static void attrs_child(struct jw *w, const struct child *c)
{
	jw_lit_key(w, JW_LIT("attributes"));
	jw_arr_begin(w);
	les_otlp_attr_int(w, "process.pid", c->pid);
	les_otlp_attr_int(w, "thread.id", c->tid);
	les_otlp_attr_cstr(w, P "proto", c->proto);
	/* The record's own op ("request", "lock_wait"), as its line says it. */
	les_otlp_attr_cstr(w, P "rpc_op", c->rpc_op ? les_rpc_op_name(c->rpc_op) : c->name);
	if (c->req_id)
		les_otlp_attr_int(w, P "req_id", c->req_id);
	if (c->wait_id)
		les_otlp_attr_int(w, P "wait_id", c->wait_id);
	if (c->parent_wait_id)
		les_otlp_attr_int(w, P "parent_wait_id", c->parent_wait_id);
	if (c->nested)
		les_otlp_attr_bool(w, P "nested_wait", true);
	if (c->has_xid)
		les_otlp_attr_int(w, P "xid", c->xid);
	if (c->has_opcode)
		les_otlp_attr_int(w, P "opcode", c->opcode);
	if (c->target[0])
		les_otlp_attr_cstr(w, P "target", c->target);
	if (c->nid[0])
		les_otlp_attr_cstr(w, "network.peer.address", c->nid);
	les_otlp_attr_int(w, P "latency_ns", c->latency_ns);
	les_otlp_attr_int(w, P "bytes", c->bytes);
	attr_errno(w, c->err);
	jw_arr_end(w);
}

/* The rpc_event records of req_id (0: those of no request in the trace) as span events. */
static void put_events(struct jw *w, const struct les_otlp_traces *t, uint64_t req_id, bool orphans)
{
	bool open = false;

	for (unsigned int k = 0; k < t->n_kids; k++) {
		const struct child *e = &t->ring[t->kids[k]];
		bool mine = e->req_id == req_id && req_id;

		if (e->kind != LES_REC_RPC_EVENT)
			continue;
		if (orphans) {
			mine = true;
			for (unsigned int j = 0; j < t->n_kids && e->req_id; j++) {
				const struct child *r = &t->ring[t->kids[j]];

				if (r->kind == LES_REC_RPC && !r->wait_id && r->req_id == e->req_id)
					mine = false;
			}
		}
		if (!mine)
			continue;
		if (!open) {
			jw_lit_key(w, JW_LIT("events"));
			jw_arr_begin(w);
			open = true;
		}
		jw_obj_begin(w);
		jw_lit_key(w, JW_LIT("timeUnixNano"));
		les_otlp_u64_str(w, e->end_ns);
		jw_lit_cstr(w, JW_LIT("name"), e->name);
		jw_lit_key(w, JW_LIT("attributes"));
		jw_arr_begin(w);
		les_otlp_attr_cstr(w, P "proto", e->proto);
		if (e->req_id)
			les_otlp_attr_int(w, P "req_id", e->req_id);
		if (e->target[0])
			les_otlp_attr_cstr(w, P "target", e->target);
		jw_arr_end(w);
		jw_obj_end(w);
	}
	if (open)
		jw_arr_end(w);
}

enum { SPAN_KIND_INTERNAL = 1, SPAN_KIND_CLIENT = 3 };

/* One child span: a request is a client call (CLIENT), a thread's wait is INTERNAL. */
static void put_child(struct jw *w, const struct les_otlp_traces *t, const char *trace_id,
		      uint64_t op_span, unsigned int k)
{
	const struct child *c = &t->ring[t->kids[k]];
	char name[PROTO_LEN + NAME_LEN + 1];
	size_t pl = strlen(c->proto), nl = strlen(c->name);

	memcpy(name, c->proto, pl);
	name[pl] = '.';
	memcpy(name + pl + 1, c->name, nl);
	span_begin(w, trace_id, child_span_id(c, k), child_parent_id(t, c, op_span),
		   c->wait_id ? SPAN_KIND_INTERNAL : SPAN_KIND_CLIENT, c->start_ns, c->end_ns);
	jw_lit_str(w, JW_LIT("name"), name, pl + 1 + nl);
	attrs_child(w, c);
	if (!c->wait_id)
		put_events(w, t, c->req_id, false);
	put_status(w, c->err);
	jw_obj_end(w);
}

/* Whether anything in the trace failed or was sent again: such an op is always kept. */
static bool trace_failed(const struct les_otlp_traces *t, const struct les_event *ev)
{
	if (ev->err)
		return true;
	for (unsigned int k = 0; k < t->n_kids; k++) {
		const struct child *c = &t->ring[t->kids[k]];

		if (c->err || c->kind == LES_REC_RPC_EVENT)
			return true;
	}
	return false;
}

static unsigned int spans_of(const struct les_otlp_traces *t)
{
	unsigned int n = 1;

	for (unsigned int k = 0; k < t->n_kids; k++)
		n += t->ring[t->kids[k]].kind == LES_REC_RPC;
	return n;
}

static void put_trace(struct jw *w, const struct les_otlp_traces *t, const struct les_event *ev)
{
	uint64_t op_span = les_otlp_span_id(LES_OTLP_ROLE_OP, ev->op_id);
	char trace_id[33];

	les_otlp_trace_id(t->salt, ev->op_id, trace_id);
	span_begin(w, trace_id, op_span, 0, SPAN_KIND_INTERNAL, ev->ts_epoch_ns - ev->latency_ns,
		   ev->ts_epoch_ns);
	jw_lit_cstr(w, JW_LIT("name"), ev->op);
	attrs_op(w, ev);
	put_events(w, t, 0, true);
	put_status(w, ev->err);
	jw_obj_end(w);
	for (unsigned int k = 0; k < t->n_kids; k++)
		if (t->ring[t->kids[k]].kind == LES_REC_RPC)
			put_child(w, t, trace_id, op_span, k);
}

static int add_access(struct les_otlp_traces *t, const struct les_event *ev, struct jw *w,
		      unsigned int *spans, unsigned int *over_out)
{
	unsigned int over;
	struct jw saved = *w;
	int ret = 0;

	t->cnt.ops++;
	take_children(t, ev->op_id, &over);
	*spans = spans_of(t) + over;
	if (!les_otlp_keep(t->cfg, ev->op_id, trace_failed(t, ev))) {
		t->cnt.ops_sampled_out++;
		t->cnt.spans_sampled_out += *spans;
	} else {
		/* Children past the cap are lost before they reach the queue. */
		t->cnt.dropped_too_big += over;
		*over_out = over;
		put_trace(w, t, ev);
		if (w->overflow) {
			*w = saved;
			ret = -ENOSPC;
		} else {
			ret = (int)(*spans - over);
		}
	}
	release_children(t, ev->op_id);
	return ret;
}

int les_otlp_traces_add(struct les_otlp_traces *t, const struct les_event *ev, struct jw *w,
			unsigned int *spans, unsigned int *over)
{
	*spans = 0;
	*over = 0;
	switch (ev->kind) {
	case LES_REC_ACCESS:
		return add_access(t, ev, w, spans, over);
	case LES_REC_RPC:
	case LES_REC_RPC_EVENT:
		if (!ev->parent_op_id) {
			t->cnt.rpc_no_op += ev->kind == LES_REC_RPC;
			return 0;
		}
		add_child(t, ev);
		return 0;
	default:
		return 0;
	}
}

void les_otlp_resource(struct jw *w, const char *host)
{
	jw_lit_key(w, JW_LIT("resource"));
	jw_obj_begin(w);
	jw_lit_key(w, JW_LIT("attributes"));
	jw_arr_begin(w);
	les_otlp_attr_cstr(w, "service.name", "lustre-ebpf-stream");
	les_otlp_attr_cstr(w, "service.version", LES_VERSION);
	les_otlp_attr_cstr(w, "host.name", host);
	jw_arr_end(w);
	jw_obj_end(w);
}

void les_otlp_envelope_begin(struct jw *w, const char *host, const char *resource,
			     size_t resource_n, const char *scope, size_t scope_n,
			     const char *items, size_t items_n)
{
	jw_obj_begin(w);
	jw_lit_key(w, resource, resource_n);
	jw_arr_begin(w);
	jw_obj_begin(w);
	les_otlp_resource(w, host);
	jw_lit_key(w, scope, scope_n);
	jw_arr_begin(w);
	jw_obj_begin(w);
	jw_lit_key(w, JW_LIT("scope"));
	jw_obj_begin(w);
	jw_lit_cstr(w, JW_LIT("name"), "lustre-ebpf-stream");
	jw_lit_cstr(w, JW_LIT("version"), LES_VERSION);
	jw_obj_end(w);
	jw_lit_key(w, items, items_n);
	jw_arr_begin(w);
}

void les_otlp_batch_begin(struct jw *w, const char *host)
{
	les_otlp_envelope_begin(w, host, JW_LIT("resourceSpans"), JW_LIT("scopeSpans"),
				JW_LIT("spans"));
}

void les_otlp_batch_end(struct jw *w)
{
	jw_arr_end(w); /* spans */
	jw_obj_end(w);
	jw_arr_end(w); /* scopeSpans */
	jw_obj_end(w);
	jw_arr_end(w); /* resourceSpans */
	jw_obj_end(w);
}
