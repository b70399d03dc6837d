// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Records to JSON Lines. Field names are part of the tool's interface. */
#include <string.h>
#include <time.h>
#include "format.h"
#include "ops.h"
#include "rpcprobes.h"

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void les_fmt_ctx_init(struct les_fmt_ctx *fc, const char *host, bool file_id)
{
	struct jw w;

	jw_init(&w, fc->host_json, sizeof(fc->host_json));
	jw_obj_begin(&w);
	jw_kv_cstr(&w, "host", host);
	jw_obj_end(&w);
	/* Strip the braces: a fragment for jw_raw inside each record. */
	fc->host_json_len = w.overflow ? 0 : w.len - 2;
	for (size_t i = 0; i < fc->host_json_len; i++)
		fc->host_json[i] = fc->host_json[i + 1];
	fc->file_id = file_id;
	les_fmt_ctx_sync_clock(fc);
}

void les_fmt_ctx_sync_clock(struct les_fmt_ctx *fc)
{
	fc->mono_to_epoch_ns = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
}

uint64_t les_fmt_epoch_ns(const struct les_fmt_ctx *fc, uint64_t mono_ns)
{
	/* Unsigned: a corrupt timestamp wraps instead of overflowing. */
	return mono_ns + (uint64_t)fc->mono_to_epoch_ns;
}

/* A pre-encoded fragment of object members, with its separating comma. */
static void put_fragment(struct jw *w, const char *frag, size_t n)
{
	jw_raw_members(w, frag, n);
}

static void put_common(struct jw *w, const struct les_fmt_ctx *fc, const char *type,
		       uint64_t ts_mono, const struct les_observed_mount *m)
{
	jw_obj_begin(w);
	jw_kv_cstr(w, "type", type);
	jw_kv_time(w, "ts", les_fmt_epoch_ns(fc, ts_mono));
	put_fragment(w, fc->host_json, fc->host_json_len);
	if (m) {
		put_fragment(w, m->json, m->json_len);
	} else {
		jw_kv_null(w, "fs_type");
		jw_kv_null(w, "fs");
		jw_kv_null(w, "mount");
	}
}

static void put_task(struct jw *w, const struct les_task *t)
{
	jw_kv_u64(w, "pid", t->pid);
	jw_kv_u64(w, "tid", t->tid);
	jw_kv_u64(w, "uid", t->uid);
	jw_kv_u64(w, "gid", t->gid);
	jw_kv_strz(w, "comm", t->comm, sizeof(t->comm));
}

/* Who the record belongs to, beyond the kernel's task fields. */
static void put_enrichment(struct jw *w, const struct les_enriched *en)
{
	if (!en)
		return;
	jw_kv_cstr(w, "process", en->process);
	jw_kv_cstr(w, "username", en->username);
	jw_kv_cstr(w, "actor_type", en->actor_type);
	if (en->job_json_len)
		jw_raw_members(w, en->job_json, en->job_json_len);
	else
		jw_raw_members(w, en->attrib->job_json, en->attrib->job_json_len);
	jw_raw_members(w, en->attrib->json, en->attrib->json_len);
}

static void put_errno(struct jw *w, int err)
{
	jw_kv_i64(w, "errno", err);
	jw_kv_cstr(w, "errno_class", les_errno_class_name(les_errno_class(err)));
}

static void put_dev(struct jw *w, uint32_t kdev)
{
	char buf[24];
	size_t n = 0;
	unsigned int parts[2] = { kdev >> 20, kdev & 0xfffff };

	/* "major:minor", as ls -l and /proc/self/mountinfo print it. */
	for (int p = 0; p < 2; p++) {
		char digits[12];
		int d = 0;
		unsigned int v = parts[p];

		do {
			digits[d++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		while (d)
			buf[n++] = digits[--d];
		if (p == 0)
			buf[n++] = ':';
	}
	jw_kv_str(w, "dev", buf, n);
}

void les_format_access(struct jw *w, const struct les_fmt_ctx *fc,
		       const struct les_observed_mount *m, const struct les_rec_access *r,
		       const struct les_enriched *en)
{
	put_common(w, fc, "access", r->ts_ns, m);
	jw_kv_cstr(w, "op", les_op_name(r->op));
	jw_kv_cstr(w, "access_intent", les_intent_name(les_op_intent(r->op)));
	jw_kv_cstr(w, "method", les_attach_method_name(r->method));
	jw_kv_u64(w, "op_id", r->op_id);
	put_task(w, &r->task);
	put_enrichment(w, en);
	jw_kv_u64(w, "latency_ns", r->latency_ns);
	jw_kv_u64(w, "bytes", r->bytes);
	put_errno(w, r->err);
	jw_kv_u64(w, "rpc_count", r->rpc_count);
	jw_kv_u64(w, "rpc_wait_ns", r->rpc_wait_ns);
	if (fc->file_id) {
		put_dev(w, r->dev);
		jw_kv_u64(w, "ino", r->ino);
	}
	jw_obj_end(w);
	jw_newline(w);
}

/* The sunrpc procedure name of a record, or NULL when it has none. */
static const char *rpc_name(const char *name)
{
	if (!name[0] || !memchr(name, 0, LES_RPC_NAME_LEN))
		return NULL;
	return name;
}

const char *les_format_rpc_op(const struct les_rec_rpc *r)
{
	const char *name;

	switch (r->proto) {
	case LES_PROTO_FUSE:
		return les_fuse_opcode_name(r->opcode);
	case LES_PROTO_SUNRPC:
		name = rpc_name(r->name);
		return name ? name : "unknown";
	default:
		name = les_rpc_op_name(r->rpc_op);
		return name ? name : "unknown";
	}
}

/*
 * The request's opcode when the record has one: FUSE and sunrpc always,
 * PtlRPC only where it could be read reliably (else absent, not 0).
 */
static void put_opcode(struct jw *w, unsigned int proto, unsigned int opcode, unsigned int flags)
{
	const char *name;

	if (proto != LES_PROTO_FUSE && !(flags & LES_RPC_F_OPCODE))
		return;
	jw_kv_u64(w, "opcode", opcode);
	if (proto != LES_PROTO_PTLRPC)
		return;
	name = les_ptlrpc_opcode_name(opcode);
	if (name)
		jw_kv_cstr(w, "opcode_name", name);
}

static void put_req_id(struct jw *w, uint64_t req_id)
{
	if (req_id)
		jw_kv_u64(w, "req_id", req_id);
	else
		jw_kv_null(w, "req_id");
}

static void put_worker(struct jw *w, unsigned int flags, uint32_t pid, const char *comm)
{
	if (!(flags & LES_RPC_F_ASYNC))
		return;
	jw_kv_u64(w, "worker_pid", pid);
	jw_kv_strz(w, "worker_comm", comm, LES_COMM_LEN);
}

/* Who a request belongs to: the op it ran inside, the submitter, its worker. */
static void put_submitter(struct jw *w, uint64_t parent_op_id, const struct les_task *t,
			  const struct les_enriched *en, uint32_t flags, uint32_t worker_pid,
			  const char *worker_comm)
{
	if (parent_op_id)
		jw_kv_u64(w, "parent_op_id", parent_op_id);
	else
		jw_kv_null(w, "parent_op_id");
	put_task(w, t);
	put_enrichment(w, en);
	put_worker(w, flags, worker_pid, worker_comm);
}

void les_format_rpc(struct jw *w, const struct les_fmt_ctx *fc,
		    const struct les_observed_mount *m, const struct les_rec_rpc *r,
		    const struct les_enriched *en)
{
	put_common(w, fc, "rpc", r->ts_ns, m);
	jw_kv_cstr(w, "op", les_format_rpc_op(r));
	jw_kv_cstr(w, "proto", les_rpc_proto_name(r->proto));
	put_opcode(w, r->proto, r->opcode, r->flags);
	if (r->flags & LES_RPC_F_JOBID)
		jw_kv_strz(w, "lustre_jobid", r->jobid, LES_JOBID_LEN);
	if (les_rpc_op_function(r->rpc_op))
		jw_kv_cstr(w, "function", les_rpc_op_function(r->rpc_op));
	if (r->proto == LES_PROTO_SUNRPC) {
		jw_kv_cstr(w, "program", les_sunrpc_prog_name(r->prog));
		jw_kv_u64(w, "version", r->vers);
	}
	put_req_id(w, r->req_id);
	put_submitter(w, r->parent_op_id, &r->task, en, r->flags, r->worker_pid, r->worker_comm);
	jw_kv_u64(w, "latency_ns", r->latency_ns);
	jw_kv_u64(w, "bytes", r->bytes);
	put_errno(w, r->err);
	if (r->proto == LES_PROTO_SUNRPC) {
		jw_kv_u64(w, "backlog_ns", r->backlog_ns);
		jw_kv_u64(w, "rtt_ns", r->rtt_ns);
		jw_kv_u64(w, "execute_ns", r->execute_ns);
	}
	jw_obj_end(w);
	jw_newline(w);
}

void les_format_rpc_event(struct jw *w, const struct les_fmt_ctx *fc,
			  const struct les_observed_mount *m, const struct les_rec_rpc_event *r,
			  const struct les_enriched *en)
{
	put_common(w, fc, "rpc_event", r->ts_ns, m);
	jw_kv_cstr(w, "event", les_rpc_event_name(r->event));
	jw_kv_cstr(w, "proto", les_rpc_proto_name(r->proto));
	put_opcode(w, r->proto, r->opcode, r->flags);
	if (r->proto == LES_PROTO_SUNRPC)
		jw_kv_cstr(w, "procedure", rpc_name(r->name));
	put_req_id(w, r->req_id);
	put_submitter(w, r->parent_op_id, &r->task, en, r->flags, r->worker_pid, r->worker_comm);
	jw_obj_end(w);
	jw_newline(w);
}
