// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Decode -> enrich -> format -> sinks, one record at a time. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "util/clock.h"
#include "pipeline/consumer.h"
#include "decode/filter.h"
#include "model/kinds.h"
#include "model/ops.h"
#include "sink/sink.h"

/*
 * The join's table: requests whose other side has not come yet. On one
 * node the two records of a request come within milliseconds of each
 * other; a record waiting 30 s has none.
 */
#define LES_JOIN_SLOTS	    4096
#define LES_JOIN_MAX_AGE_NS (30ULL * 1000000000ULL)

/*
 * The join's table (~1.2 MB), only where server records can come: a
 * client-only node allocates nothing and offers nothing. Without it
 * nothing joins, and the stats say why.
 */
static void join_init(struct les_consumer *c)
{
	if (!c->cfg->join) {
		c->join_off = "no server probe attached";
		return;
	}
	if (les_rpcjoin_init(&c->join, LES_JOIN_SLOTS, LES_JOIN_MAX_AGE_NS)) {
		c->join.cap = 0;
		c->join_off = "no memory for the join's table";
	}
}

void les_consumer_init(struct les_consumer *c, const struct les_consumer_config *cfg,
		       const struct les_observed *observed, const char *host)
{
	memset(c, 0, sizeof(*c));
	c->cfg = cfg;
	c->observed = observed;
	les_fmt_ctx_init(&c->fmt, host, cfg->file_id);
	jw_init(&c->jw, c->line, sizeof(c->line));
	c->start_mono_ns = les_mono_ns();
	c->records_to_lines = true;
	snprintf(c->host, sizeof(c->host), "%s", host);
	join_init(c);
}

void les_consumer_set_output(struct les_consumer *c, les_output_fn fn, void *ctx)
{
	c->out.fn = fn;
	c->out.ctx = ctx;
}

static struct les_consumer_tap *taps_of(struct les_consumer_taps *t)
{
	return t->heap ? t->heap : t->in_place;
}

static const struct les_consumer_tap *taps_of_const(const struct les_consumer_taps *t)
{
	return t->heap ? t->heap : t->in_place;
}

/* Room for one more: the heap takes over from in_place when it is full. */
static int taps_grow(struct les_consumer_taps *t)
{
	size_t cap = t->cap ? t->cap * 2 : 2 * LES_CONSUMER_TAPS_IN_PLACE;
	struct les_consumer_tap *v;

	if (t->n < LES_CONSUMER_TAPS_IN_PLACE || t->n < t->cap)
		return 0;
	v = realloc(t->heap, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (!t->heap)
		memcpy(v, t->in_place, sizeof(t->in_place));
	t->heap = v;
	t->cap = cap;
	return 0;
}

static int add_tap(struct les_consumer *c, const struct les_consumer_tap *tap)
{
	struct les_consumer_taps *t = &c->taps;
	int err = taps_grow(t);

	if (err)
		return err;
	taps_of(t)[t->n++] = *tap;
	return 0;
}

void les_consumer_release(struct les_consumer *c)
{
	les_rpcjoin_free(&c->join);
	free(c->taps.heap);
	memset(&c->taps, 0, sizeof(c->taps));
}

/* The output's counts; false, and all 0, when no stats hook gives them. */
static bool output_counts(const struct les_consumer *c, struct les_output_counts *oc)
{
	const struct les_consumer_tap *taps = taps_of_const(&c->taps);
	bool any = false;

	memset(oc, 0, sizeof(*oc));
	for (size_t i = 0; i < c->taps.n; i++) {
		const struct les_stats_hook *h = &taps[i].stats;
		struct les_output_counts one;

		if (!h->counts)
			continue;
		h->counts(h->ctx, &one);
		oc->records_written += one.records_written;
		oc->records_buffered += one.records_buffered;
		oc->records_dropped += one.records_dropped;
		oc->lines_dropped += one.lines_dropped;
		oc->write_errors += one.write_errors;
		any = true;
	}
	return any;
}

void les_consumer_output_counts(const struct les_consumer *c, struct les_output_counts *oc)
{
	output_counts(c, oc);
}

void les_consumer_sink_counters(const struct les_consumer *c, struct les_sink_counters *sc)
{
	const struct les_consumer_tap *taps = taps_of_const(&c->taps);

	for (size_t i = 0; i < c->taps.n; i++)
		if (taps[i].stats.counters)
			taps[i].stats.counters(taps[i].stats.ctx, sc);
}

/* Per-op records the output lost (a full disk, a closed pipe). */
static uint64_t output_dropped(const struct les_consumer *c)
{
	struct les_output_counts oc;

	output_counts(c, &oc);
	return oc.records_dropped;
}

uint64_t les_consumer_dropped(const struct les_consumer *c)
{
	return c->decode_errors + c->format_errors + c->dropped_stopped + output_dropped(c);
}

uint64_t les_consumer_records_read(const struct les_consumer *c)
{
	uint64_t read = c->dropped_stopped + c->decode_errors;

	for (unsigned int kind = 0; kind < LES_REC_KIND_MAX; kind++)
		if (les_rec_kind_is_op(kind))
			read += c->by_kind[kind];
	return read;
}

uint64_t les_consumer_emitted(const struct les_consumer *c)
{
	/* Written, or still buffered (none once flushed, as before a stats record). */
	struct les_output_counts oc;

	if (output_counts(c, &oc) && c->records_to_lines)
		return oc.records_written + oc.records_buffered;
	return c->emitted;
}

void les_consumer_set_enricher(struct les_consumer *c, struct les_enricher *e)
{
	c->enricher = e;
}

int les_consumer_add_event_sink(struct les_consumer *c, les_event_fn fn, void *ctx)
{
	return add_tap(c, &(const struct les_consumer_tap){ .event = fn, .ctx = ctx });
}

int les_consumer_add_line_sink(struct les_consumer *c, les_event_fn fn, void *ctx)
{
	return add_tap(c, &(const struct les_consumer_tap){ .line = fn, .ctx = ctx });
}

int les_consumer_add_join_sink(struct les_consumer *c, les_event_fn fn, void *ctx)
{
	return add_tap(c, &(const struct les_consumer_tap){.join = fn, .ctx = ctx});
}

int les_consumer_add_stats_hook(struct les_consumer *c, const struct les_stats_hook *h)
{
	return add_tap(c, &(const struct les_consumer_tap){ .stats = *h });
}

static int output_line(struct les_consumer *c, const struct les_event *ev, bool record)
{
	int err = 0;

	if (c->out.fn)
		err = c->out.fn(c->out.ctx, ev, record);
	if (err == -EPIPE) {
		c->stop = true;
		return err;
	}
	for (size_t i = 0; i < c->taps.n; i++) {
		const struct les_consumer_tap *tap = &taps_of(&c->taps)[i];

		err = tap->line ? tap->line(tap->ctx, ev) : 0;
		if (err)
			return err;
	}
	return 0;
}

int les_consumer_output(struct les_consumer *c, const struct les_event *ev)
{
	return output_line(c, ev, false);
}

/*
 * Hand a finished record to the event sinks and, as a line, to the line sinks.
 * Without per-op lines (--aggregate alone) the record was not formatted at
 * all: no event sink reads the line, and formatting is most of the cost.
 */
static int emit_record(struct les_consumer *c)
{
	struct les_event *ev = &c->ev;
	int err = 0;

	if (!les_filter_job_passes(c->cfg->filter_job, ev->job_id)) {
		c->filtered_userspace++;
		return 0;
	}
	if (c->jw.overflow) {
		c->format_errors++;
		return 0;
	}
	ev->line = c->line;
	ev->line_len = c->jw.len;
	/*
	 * Every sink gets the record, whatever one before it said (an event
	 * sink's error is about its own output, e.g. a window line to a closed
	 * pipe): the output then accounts for it, written or dropped.
	 */
	for (size_t i = 0; i < c->taps.n; i++) {
		const struct les_consumer_tap *tap = &taps_of(&c->taps)[i];
		int e = tap->event ? tap->event(tap->ctx, ev) : 0;

		err = err ?: e;
	}
	if (c->records_to_lines) {
		int e = output_line(c, ev, true);

		/* Emitted once the output took the line, not before. */
		if (!e)
			c->emitted++;
		err = err ?: e;
	} else {
		c->emitted++; /* no line: the event sinks had it */
	}
	if (err)
		return err;
	if (c->cfg->count && c->emitted >= c->cfg->count) {
		c->stop = true;
		return -ECANCELED;
	}
	return 0;
}

/* A per-op record (not a process notice): part of the stats identity. */
static bool is_op_record(const void *data)
{
	uint32_t kind;

	memcpy(&kind, data, sizeof(kind));
	return les_rec_kind_is_op(kind);
}

static const struct les_observed_mount *mount_of(struct les_consumer *c, uint32_t dev)
{
	const struct les_observed_mount *m = les_observed_find(c->observed, dev);

	if (!m && c->observed_next)
		m = les_observed_find(c->observed_next, dev);
	if (!m)
		c->unobserved++;
	return m;
}

/*
 * Where and who: the mount's names, the task's ids and comm (copied into
 * comm_buf, LES_COMM_LEN + 1) and, when enriching, the task's enrichment.
 */
static void fill_where_who(struct les_consumer *c, struct les_event *ev,
			   const struct les_observed_mount *m, uint64_t ts,
			   const struct les_task *t, unsigned int flags, char *comm_buf)
{
	if (m) {
		ev->fs_type = m->fs_type;
		ev->fs = m->fs_name;
		ev->mount = m->mount_point;
	}
	ev->pid = t->pid;
	ev->tid = t->tid;
	ev->uid = t->uid;
	ev->gid = t->gid;
	memcpy(comm_buf, t->comm, LES_COMM_LEN);
	comm_buf[LES_COMM_LEN] = '\0';
	ev->comm = comm_buf;
	ev->process = comm_buf;
	if (c->enricher) {
		const struct les_enriched *en = les_enrich_task(c->enricher, t, flags, ts);

		c->enriched = en;
		ev->process = en->process;
		ev->username = en->username;
		ev->actor_type = en->actor_type;
		ev->actor_by_name = en->actor_by_name;
		ev->job_id = en->job_id;
		ev->job_source = en->job_id ? en->job_source : NULL;
	}
}

/*
 * Fill the event fields every record kind shares. Returns the record's
 * mount, looked up once for the event and the line.
 */
static const struct les_observed_mount *event_common(struct les_consumer *c, uint32_t kind,
						     uint64_t ts, uint32_t dev,
						     const struct les_task *t, unsigned int flags)
{
	struct les_event *ev = &c->ev;
	const struct les_observed_mount *m = mount_of(c, dev);

	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->type = les_rec_kind_name(kind);
	ev->ts_epoch_ns = les_fmt_epoch_ns(&c->fmt, ts);
	ev->host = c->host;
	fill_where_who(c, ev, m, ts, t, flags, c->comm);
	return m;
}

void les_consumer_describe(struct les_consumer *c, struct les_event *ev, uint64_t now_ns,
			   uint32_t dev, const struct les_task *t, unsigned int flags)
{
	memset(ev, 0, sizeof(*ev));
	ev->host = c->host;
	fill_where_who(c, ev, les_observed_find(c->observed, dev), now_ns, t, flags,
		       c->describe_comm);
}

/* The thread that did the work for the submitter, when it is another one. */
static void event_worker(struct les_consumer *c, uint32_t flags, const char *comm)
{
	if (!(flags & LES_RPC_F_ASYNC))
		return;
	memcpy(c->worker_comm, comm, LES_COMM_LEN);
	c->worker_comm[LES_COMM_LEN] = '\0';
	c->ev.worker_comm = c->worker_comm;
}

static const struct les_enriched *enriched(struct les_consumer *c)
{
	return c->enricher ? c->enriched : NULL;
}

/*
 * A decoded per-op record, c->ev filled: its line by its kind's formatter
 * (the kinds list, model/kinds.h), unless no line is made, then the sinks.
 */
static int format_emit(struct les_consumer *c, const struct les_observed_mount *m, const void *rec,
		       const char *wire_job)
{
	les_rec_format_fn *format = les_format_of(c->ev.kind);

	if (c->records_to_lines && format)
		format(&c->jw, &c->fmt, m, rec, enriched(c), wire_job);
	return emit_record(c);
}

static int on_access(struct les_consumer *c, const void *rec)
{
	const struct les_rec_access *r = rec;
	struct les_event *ev = &c->ev;
	const struct les_observed_mount *m =
		event_common(c, LES_REC_ACCESS, r->ts_ns, r->dev, &r->task, 0);

	ev->op = les_op_name(r->op);
	ev->access_op = r->op;
	ev->access_intent = les_intent_name(les_op_intent(r->op));
	ev->op_id = r->op_id;
	ev->latency_ns = r->latency_ns;
	ev->bytes = r->bytes;
	ev->err = r->err;
	ev->errno_class = les_errno_class_name(les_errno_class(r->err));
	ev->rpc_count = r->rpc_count;
	ev->rpc_wait_ns = r->rpc_wait_ns;
	return format_emit(c, m, r, NULL);
}

/*
 * A kernel thread's PtlRPC request that carries Lustre's job ID is charged
 * to that job (les_enrich_wire_job): in the event every sink counts by
 * and in the line. Job IDs are enrichment: without it, nothing changes.
 */
static const char *charge_wire_job(struct les_consumer *c, const struct les_rec_rpc *r)
{
	const char *job = c->enricher ? les_enrich_wire_job(r, c->wire_job) : NULL;

	if (job) {
		c->ev.job_id = job;
		c->ev.job_source = les_job_source_name(LES_JOB_LUSTRE);
	}
	return job;
}

/* The opcode, where the line has one (put_opcode, format.c). */
static void event_opcode(struct les_event *ev, unsigned int proto, unsigned int opcode,
			 uint32_t flags)
{
	ev->has_opcode = proto == LES_PROTO_FUSE || (flags & LES_RPC_F_OPCODE);
	ev->opcode = ev->has_opcode ? opcode : 0;
}

static void event_target(struct les_event *ev, const char *name, uint32_t flags)
{
	if (!(flags & LES_RPC_F_TARGET))
		return;
	ev->target = name;
	ev->target_len = les_ptlrpc_target_len(name, LES_RPC_NAME_LEN);
}

/* A PtlRPC request's xid, target and peer, each where its flag is (put_ptlrpc_ids). */
static void event_ptlrpc_ids(struct les_consumer *c, const struct les_rec_rpc *r)
{
	struct les_event *ev = &c->ev;

	ev->has_xid = r->flags & LES_RPC_F_XID;
	ev->xid = ev->has_xid ? r->xid : 0;
	event_target(ev, r->name, r->flags);
	if ((r->flags & LES_RPC_F_NID) && les_lnet_nid_str(&r->nid, c->nid, sizeof(c->nid)))
		ev->nid = c->nid;
}

/* What links an rpc record to others: its request, its wait and the wait around it. */
static void event_rpc_ids(struct les_consumer *c, const struct les_rec_rpc *r)
{
	struct les_event *ev = &c->ev;

	ev->req_id = r->req_id;
	event_opcode(ev, r->proto, r->opcode, r->flags);
	if (les_rpc_op_is_wait(r->rpc_op)) {
		ev->wait_id = r->wait_id;
		ev->parent_wait_id = r->parent_wait_id;
	}
	if (r->proto == LES_PROTO_PTLRPC && r->rpc_op == LES_RPC_OP_REQUEST)
		event_ptlrpc_ids(c, r);
}

/*
 * The line of a request both sides of which met (model/rpcjoin.h): not a
 * record of the ring, so an output line like a stats line, for the output
 * and the line sinks, outside the records' accounting.
 */
/* A fixed-size, NUL-padded name of a record, as a C string (NULL without its flag). */
static const char *rec_name(char *dst, size_t size, const char *src, bool valid)
{
	if (!valid)
		return NULL;
	memcpy(dst, src, size - 1);
	dst[size - 1] = '\0';
	return dst;
}

/* The joined pair's keys and layers, to every join sink (windows). */
static int deliver_join(struct les_consumer *c)
{
	const struct les_rec_srv *s = &c->join.server;
	struct les_join_view *v = &c->join_view;
	struct les_srv_times t;
	int err = 0;

	les_srv_times(s, c->fmt.mono_to_epoch_ns, &t);
	v->job = rec_name(c->join_job, sizeof(c->join_job), s->jobid, s->flags & LES_SRV_F_JOBID);
	v->target = rec_name(c->join_target, sizeof(c->join_target), s->target,
			     s->flags & LES_SRV_F_TARGET);
	v->client_nid = (s->flags & LES_SRV_F_PEER) &&
					les_lnet_nid_str(&s->peer, c->join_nid, sizeof(c->join_nid))
				? c->join_nid
				: NULL;
	les_rpcjoin_layers(&c->join.client, &t, v->ns);
	memset(&c->ev, 0, sizeof(c->ev));
	c->ev.type = "rpc_join";
	c->ev.kind = LES_REC_KIND_MAX;
	c->ev.host = c->host;
	c->ev.join = v;
	c->ev.ts_epoch_ns = les_fmt_epoch_ns(
		&c->fmt, c->join.client.ts_ns > s->ts_ns ? c->join.client.ts_ns : s->ts_ns);
	for (size_t i = 0; i < c->taps.n; i++) {
		const struct les_consumer_tap *tap = &taps_of(&c->taps)[i];
		int e = tap->join ? tap->join(tap->ctx, &c->ev) : 0;

		err = err ?: e;
	}
	return err;
}

static int emit_join(struct les_consumer *c)
{
	int err = deliver_join(c);

	if (err || !c->records_to_lines)
		return err;
	jw_reset(&c->jw);
	les_format_rpc_join(&c->jw, &c->fmt, &c->join.client, &c->join.server);
	if (c->jw.overflow) {
		c->format_errors++;
		return 0;
	}
	memset(&c->ev, 0, sizeof(c->ev));
	c->ev.type = "rpc_join";
	c->ev.host = c->host;
	c->ev.line = c->line;
	c->ev.line_len = c->jw.len;
	return les_consumer_output(c, &c->ev);
}

static int join_client(struct les_consumer *c, const struct les_rec_rpc *r)
{
	bool request = r->proto == LES_PROTO_SUNRPC ||
		       (r->proto == LES_PROTO_PTLRPC && r->rpc_op == LES_RPC_OP_REQUEST);

	if (!c->join.cap || !request)
		return 0;
	return les_rpcjoin_offer_client(&c->join, r, les_mono_ns()) ? emit_join(c) : 0;
}

static int on_rpc(struct les_consumer *c, const void *rec)
{
	const struct les_rec_rpc *r = rec;
	struct les_event *ev = &c->ev;
	const struct les_observed_mount *m =
		event_common(c, LES_REC_RPC, r->ts_ns, r->dev, &r->task,
			     r->flags & LES_RPC_F_ASYNC ? LES_ACTOR_F_FS_WORK : 0);
	const char *job;

	ev->op = les_format_rpc_op(r);
	ev->proto = les_rpc_proto_name(r->proto);
	ev->proto_id = r->proto;
	ev->rpc_op = r->rpc_op;
	ev->nested_wait = r->parent_wait_id != 0;
	ev->parent_op_id = r->parent_op_id;
	ev->latency_ns = r->latency_ns;
	ev->bytes = r->bytes;
	ev->err = r->err;
	ev->errno_class = les_errno_class_name(les_errno_class(r->err));
	if (r->proto == LES_PROTO_SUNRPC) {
		ev->backlog_ns = r->backlog_ns;
		ev->rtt_ns = r->rtt_ns;
	}
	event_rpc_ids(c, r);
	event_worker(c, r->flags, r->worker_comm);
	job = charge_wire_job(c, r);
	return format_emit(c, m, r, job) ?: join_client(c, r);
}

/* The server record's op: the PtlRPC opcode's name, the sunrpc procedure's. */
static const char *srv_op_name(struct les_consumer *c, const struct les_rec_srv *r)
{
	if (r->proto == LES_PROTO_SUNRPC && r->procname[0]) {
		memcpy(c->srv_op, r->procname, LES_RPC_NAME_LEN);
		c->srv_op[LES_RPC_NAME_LEN] = '\0';
		return c->srv_op;
	}
	if (r->proto == LES_PROTO_PTLRPC && (r->flags & LES_SRV_F_OPCODE))
		return les_ptlrpc_opcode_name(r->opcode);
	return NULL;
}

static int on_srv(struct les_consumer *c, const void *rec)
{
	const struct les_rec_srv *r = rec;
	struct les_event *ev = &c->ev;
	struct les_srv_times t;
	int err;

	memset(ev, 0, sizeof(*ev));
	ev->kind = LES_REC_SRV;
	ev->type = les_rec_kind_name(LES_REC_SRV);
	ev->ts_epoch_ns = les_fmt_epoch_ns(&c->fmt, r->ts_ns);
	ev->host = c->host;
	ev->proto = les_rpc_proto_name(r->proto);
	ev->proto_id = r->proto;
	ev->has_opcode = r->flags & LES_SRV_F_OPCODE;
	ev->opcode = ev->has_opcode ? r->opcode : 0;
	ev->op = srv_op_name(c, r);
	ev->op = ev->op ? ev->op : "unknown";
	ev->has_xid = true;
	ev->xid = r->xid;
	les_srv_times(r, c->fmt.mono_to_epoch_ns, &t);
	ev->latency_ns = t.total_ns;
	ev->err = r->status < 0 ? -r->status : 0;
	ev->errno_class = les_errno_class_name(les_errno_class(ev->err));
	ev->tid = r->tid;
	memcpy(c->comm, r->comm, LES_COMM_LEN);
	c->comm[LES_COMM_LEN] = '\0';
	ev->comm = c->comm;
	ev->process = c->comm;
	if ((r->flags & LES_SRV_F_PEER) && les_lnet_nid_str(&r->peer, c->nid, sizeof(c->nid)))
		ev->nid = c->nid;
	err = format_emit(c, NULL, r, NULL);
	if (err || !c->join.cap)
		return err;
	return les_rpcjoin_offer_server(&c->join, r, les_mono_ns()) ? emit_join(c) : 0;
}

/* An LNet message this node sent: no mount, no process; its thread only. */
static int on_lnet(struct les_consumer *c, const void *rec)
{
	const struct les_rec_lnet *r = rec;
	struct les_event *ev = &c->ev;

	memset(ev, 0, sizeof(*ev));
	ev->kind = LES_REC_LNET;
	ev->type = les_rec_kind_name(LES_REC_LNET);
	ev->ts_epoch_ns = les_fmt_epoch_ns(&c->fmt, r->ts_ns);
	ev->host = c->host;
	ev->proto = les_rpc_proto_name(LES_PROTO_LNET);
	ev->proto_id = LES_PROTO_LNET;
	ev->op = "lnet";
	ev->latency_ns = r->ts_ns >= r->commit_ns ? r->ts_ns - r->commit_ns : 0;
	ev->err = r->status < 0 ? -r->status : 0;
	ev->errno_class = les_errno_class_name(les_errno_class(ev->err));
	ev->tid = r->tid;
	if ((r->flags & LES_LNET_F_NIDS) && les_lnet_nid_str(&r->peer, c->nid, sizeof(c->nid)))
		ev->nid = c->nid;
	return format_emit(c, NULL, r, NULL);
}

static int on_rpc_event(struct les_consumer *c, const void *rec)
{
	const struct les_rec_rpc_event *r = rec;
	struct les_event *ev = &c->ev;
	const struct les_observed_mount *m =
		event_common(c, LES_REC_RPC_EVENT, r->ts_ns, r->dev, &r->task,
			     r->flags & LES_RPC_F_ASYNC ? LES_ACTOR_F_FS_WORK : 0);

	ev->event = les_rpc_event_name(r->event);
	ev->event_id = r->event;
	ev->op = ev->event;
	ev->proto = les_rpc_proto_name(r->proto);
	ev->proto_id = r->proto;
	ev->parent_op_id = r->parent_op_id;
	ev->req_id = r->req_id;
	event_opcode(ev, r->proto, r->opcode, r->flags);
	if (r->proto == LES_PROTO_PTLRPC)
		event_target(ev, r->name, r->flags);
	event_worker(c, r->flags, r->worker_comm);
	return format_emit(c, m, r, NULL);
}

static int on_exec(struct les_consumer *c, const void *rec)
{
	if (c->enricher)
		les_enrich_exec(c->enricher, rec);
	return 0;
}

static int on_fork(struct les_consumer *c, const void *rec)
{
	if (c->enricher)
		les_enrich_fork(c->enricher, rec);
	return 0;
}

/*
 * What the consumer does with each kind the ring carries: the decoder
 * column of the kinds list (model/kinds.h), after the size check.
 */
typedef int (*record_fn)(struct les_consumer *c, const void *rec);
#define DECODER_ROW(kind, name, size, shape, formatter, decoder) [kind] = decoder,
static const record_fn handlers[LES_REC_KIND_MAX] = { LES_REC_KINDS(DECODER_ROW) };

static int on_record(struct les_consumer *c, void *data, size_t size)
{
	uint32_t kind;

	if (c->stop) {
		/* libbpf has consumed this record whatever we return: count it. */
		if (size >= sizeof(kind) && is_op_record(data))
			c->dropped_stopped++;
		return -ECANCELED;
	}
	if (size < sizeof(kind)) {
		c->decode_errors++;
		return 0;
	}
	memcpy(&kind, data, sizeof(kind));
	if (!les_rec_kind_size_ok(kind, size)) {
		c->decode_errors++;
		return 0;
	}
	c->by_kind[kind]++;
	jw_reset(&c->jw);
	return handlers[kind] ? handlers[kind](c, data) : 0;
}

/*
 * In the final drain every record must be read, so a sink's error (--count
 * reached, a closed pipe) sets stop and the rest are counted, not left in
 * the ring: libbpf stops the drain at the first callback that fails.
 */
int les_consumer_on_record(void *ctx, void *data, size_t size)
{
	struct les_consumer *c = ctx;
	int err = on_record(c, data, size);

	return c->draining ? 0 : err;
}

static void put_kind_counts(struct jw *w, const struct les_consumer *c)
{
	jw_key(w, "records");
	jw_obj_begin(w);
	for (unsigned int k = 1; k < LES_REC_KIND_MAX; k++)
		jw_kv_u64(w, les_rec_kind_name(k), c->by_kind[k]);
	jw_obj_end(w);
}

static void put_kernel_counters(struct jw *w, const struct les_kernel_stats *ks)
{
	jw_key(w, "kernel");
	jw_obj_begin(w);
	for (unsigned int i = 0; i < LES_CNT_MAX; i++)
		jw_kv_u64(w, les_counter_name(i), ks->counters[i]);
	jw_obj_end(w);
	jw_key(w, "probe_hits");
	jw_obj_begin(w);
	for (unsigned int p = 0; p < LES_PROBE_MAX; p++)
		jw_kv_u64(w, les_probe_name(p), ks->counters[LES_CNT_PROBE_BASE + p]);
	jw_obj_end(w);
}

/*
 * Requests in flight now: "inflight":{"total":N,"by_proto":{"fuse":N,...},
 * "by_mount":[{"proto":…,"mount":…,"fs":…,"requests":N},...]}, by_mount
 * listing only nonzero groups (mount null: the mount is not known).
 */
static void put_inflight(struct jw *w, struct les_consumer *c, const struct les_kernel_stats *ks)
{
	static const unsigned int protos[] = {LES_PROTO_FUSE, LES_PROTO_SUNRPC, LES_PROTO_PTLRPC};
	uint64_t total = 0;

	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		total += ks->inflight_by_proto[protos[i]];
	jw_key(w, "inflight");
	jw_obj_begin(w);
	jw_kv_u64(w, "total", total);
	jw_key(w, "by_proto");
	jw_obj_begin(w);
	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		jw_kv_u64(w, les_rpc_proto_name(protos[i]), ks->inflight_by_proto[protos[i]]);
	jw_obj_end(w);
	jw_key(w, "by_mount");
	jw_arr_begin(w);
	for (size_t i = 0; i < ks->n_inflight && i < LES_INFLIGHT_GROUPS; i++) {
		const struct les_inflight_group *g = &ks->inflight[i];
		const struct les_observed_mount *m =
			g->dev ? les_observed_find(c->observed, g->dev) : NULL;

		jw_obj_begin(w);
		jw_kv_cstr(w, "proto", les_rpc_proto_name(g->proto));
		jw_kv_cstr(w, "mount", m ? m->mount_point : NULL);
		jw_kv_cstr(w, "fs", m ? m->fs_name : NULL);
		jw_kv_u64(w, "requests", g->requests);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
}

/*
 * "join": the client-server join of PtlRPC requests (model/rpcjoin.h):
 * joined, and by side the records that waited in vain, that had no key,
 * that repeated a key, and that wait now; or {"off": why} without a table.
 */
static void put_join(struct jw *w, struct les_consumer *c, bool final)
{
	static const char *const side[LES_JOIN_SIDES] = {"client", "server"};
	const struct les_rpcjoin_counts *n = &c->join.counts;

	jw_key(w, "join");
	if (!c->join.cap) {
		jw_obj_begin(w);
		jw_kv_cstr(w, "off", c->join_off);
		jw_obj_end(w);
		return;
	}
	/* At the end nothing more can come: what waits is unjoined. */
	les_rpcjoin_expire(&c->join, les_mono_ns(), final);
	jw_obj_begin(w);
	jw_kv_u64(w, "joined", n->joined);
	for (unsigned int i = 0; i < LES_JOIN_SIDES; i++) {
		jw_key(w, side[i]);
		jw_obj_begin(w);
		jw_kv_u64(w, "unjoined", n->unjoined[i]);
		jw_kv_u64(w, "no_key", n->no_key[i]);
		jw_kv_u64(w, "duplicate", n->duplicate[i]);
		jw_kv_u64(w, "pending", les_rpcjoin_pending(&c->join, i));
		jw_obj_end(w);
	}
	jw_obj_end(w);
}

/* The bounded tables' levels and overflows: "enrich" and "mounts". */
static void put_tables(struct jw *w, struct les_consumer *c)
{
	struct les_enrich_stats es;

	if (c->enricher) {
		les_enrich_get_stats(c->enricher, &es);
		les_enrich_stats_json(&es, w);
	}
	if (c->observed)
		les_observed_stats_json(c->observed, w);
}

int les_consumer_emit_stats(struct les_consumer *c, const struct les_kernel_stats *ks, bool final)
{
	struct jw *w = &c->jw;
	uint64_t now = les_mono_ns();
	struct les_output_counts oc;

	output_counts(c, &oc);
	les_fmt_ctx_sync_clock(&c->fmt);
	jw_reset(w);
	jw_obj_begin(w);
	jw_kv_cstr(w, "type", "stats");
	jw_kv_time(w, "ts", les_fmt_epoch_ns(&c->fmt, now));
	jw_raw_members(w, c->fmt.host_json, c->fmt.host_json_len);
	/* Which program and record schema wrote the stream. */
	jw_kv_cstr(w, "version", LES_VERSION);
	jw_kv_u64(w, "schema_version", LES_SCHEMA_VERSION);
	jw_kv_bool(w, "final", final);
	jw_kv_double(w, "elapsed_s", (double)(now - c->start_mono_ns) / 1e9, 3);
	/* The identity: see les_consumer_emit_stats in consumer.h. */
	jw_kv_u64(w, "emitted", les_consumer_emitted(c));
	jw_kv_u64(w, "produced_kernel",
		  ks->counters[LES_CNT_PRODUCED] + ks->counters[LES_CNT_FILTERED]);
	jw_kv_u64(w, "dropped_kernel", ks->counters[LES_CNT_RB_DROPPED]);
	jw_kv_u64(w, "dropped_userspace", les_consumer_dropped(c));
	jw_kv_u64(w, "dropped_decode", c->decode_errors);
	jw_kv_u64(w, "dropped_format", c->format_errors);
	jw_kv_u64(w, "dropped_stopped", c->dropped_stopped);
	jw_kv_u64(w, "dropped_output", oc.records_dropped);
	jw_kv_u64(w, "dropped_output_lines", oc.lines_dropped);
	jw_kv_u64(w, "output_errors", oc.write_errors);
	jw_kv_u64(w, "filtered_kernel", ks->counters[LES_CNT_FILTERED]);
	jw_kv_u64(w, "filtered_userspace", c->filtered_userspace);
	jw_kv_u64(w, "kretprobe_missed", ks->kretprobe_missed);
	jw_kv_u64(w, "stale_swept", ks->stale_swept);
	jw_kv_u64(w, "unobserved", c->unobserved);
	jw_kv_u64(w, "threads_swept", ks->threads_swept);
	put_inflight(w, c, ks);
	put_join(w, c, final);
	put_kind_counts(w, c);
	put_kernel_counters(w, ks);
	les_refusals_json(w, ks->refused);
	put_tables(w, c);
	for (size_t i = 0; i < c->taps.n; i++) {
		const struct les_stats_hook *h = &taps_of(&c->taps)[i].stats;

		if (h->members)
			h->members(h->ctx, w);
	}
	jw_obj_end(w);
	jw_newline(w);
	if (w->overflow) {
		c->format_errors++;
		return 0;
	}
	memset(&c->ev, 0, sizeof(c->ev));
	c->ev.type = "stats";
	c->ev.host = c->host;
	c->ev.line = c->line;
	c->ev.line_len = w->len;
	return les_consumer_output(c, &c->ev);
}

int les_consumer_emit_notice(struct les_consumer *c, const char *what,
			     const struct les_observed_mount *m)
{
	struct jw *w = &c->jw;

	les_fmt_ctx_sync_clock(&c->fmt);
	jw_reset(w);
	jw_obj_begin(w);
	jw_kv_cstr(w, "type", "notice");
	jw_kv_time(w, "ts", les_fmt_epoch_ns(&c->fmt, les_mono_ns()));
	jw_raw_members(w, c->fmt.host_json, c->fmt.host_json_len);
	jw_kv_cstr(w, "notice", what);
	jw_raw_members(w, m->json, m->json_len);
	jw_obj_end(w);
	jw_newline(w);
	if (w->overflow)
		return 0; /* cannot happen: the members are bounded; not a record */
	memset(&c->ev, 0, sizeof(c->ev));
	c->ev.type = "notice";
	c->ev.host = c->host;
	c->ev.fs_type = m->fs_type;
	c->ev.fs = m->fs_name;
	c->ev.mount = m->mount_point;
	c->ev.line = c->line;
	c->ev.line_len = w->len;
	return les_consumer_output(c, &c->ev);
}
