/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * RPC plane, FUSE: every request of an observed FUSE connection, correlated
 * send -> end by (connection, request). The connection is the mount's
 * superblock dev. The request is the struct fuse_req's address where the
 * tracepoint gives it (tp_btf), else its unique ID: on 6.12 (Debian's
 * 6.12.117, where the tracepoints first appear) fuse_request_send fires
 * before the input queue assigns in.h.unique, so every send reads 0 there;
 * on 6.18 the ID is set first. The end runs in the FUSE daemon's context,
 * so everything about the requester is captured at send.
 */
#ifndef LES_RPC_FUSE_BPF_H
#define LES_RPC_FUSE_BPF_H

#include "rpc_common.bpf.h"

#define FUSE_READ_OPCODE	15
#define FUSE_WRITE_OPCODE	16
#define FUSE_READDIR_OPCODE	28
#define FUSE_READDIRPLUS_OPCODE 44
#define FUSE_IN_HEADER_SIZE	40
#define FUSE_WRITE_IN_SIZE	40
#define FUSE_OUT_HEADER_SIZE	16

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384); /* resized by userspace */
	__type(key, struct fuse_inflight_key);
	__type(value, struct fuse_inflight);
} fuse_inflight SEC(".maps");

/* What the kernel recorded of the requester in the request header. */
struct fuse_requester {
	__u32 tid; /* 0: unknown (plain tracepoint, or a request without creds) */
	__u32 uid;
	__u32 gid;
};

/*
 * Attribute the request to the thread that asked for it. Background
 * requests (writeback, async reads, release) can be sent from another
 * thread than the requester: that thread becomes the worker.
 */
static __always_inline void fuse_attribute(struct fuse_inflight *v, const struct fuse_requester *rq,
					   __u32 dev)
{
	struct thread_ops *ops;
	struct op_frame *frame;

	fill_current_task(&v->task);
	if (!rq->tid)
		v->flags |= LES_RPC_F_NO_BTF_TASK;
	if (rq->tid && rq->tid != v->task.tid) {
		v->flags |= LES_RPC_F_ASYNC;
		v->worker_pid = v->task.tid;
		__builtin_memcpy(v->worker_comm, v->task.comm, LES_COMM_LEN);
		__builtin_memset(v->task.comm, 0, LES_COMM_LEN);
		v->task.tid = rq->tid;
		v->task.pid = rq->tid; /* corrected below when the thread is known */
		v->task.uid = rq->uid;
		v->task.gid = rq->gid;
	}
	ops = thread_ops_get(v->task.tid);
	if (!ops)
		return;
	if (v->flags & LES_RPC_F_ASYNC) {
		v->task.pid = ops->tgid;
		__builtin_memcpy(v->task.comm, ops->comm, LES_COMM_LEN);
	}
	frame = current_frame(ops);
	if (!frame)
		return;
	v->parent_op_id = frame->op_id;
	/* A syscall op whose mount its entry could not tell ran on this one. */
	if (!frame->dev)
		frame->dev = dev;
}

static __always_inline int fuse_send(__u32 dev, __u64 req, __u32 opcode, __u32 len,
				     const struct fuse_requester *rq)
{
	struct fuse_inflight_key key = { .dev = dev, .req = req };
	struct fuse_inflight v = {};

	count_probe(LES_PROBE_FUSE_SEND);
	if (!dev_observed(dev))
		return 0;
	v.start_ns = bpf_ktime_get_ns();
	v.opcode = opcode;
	v.cgroup_id = bpf_get_current_cgroup_id();
	fuse_attribute(&v, rq, dev);
	if (task_rec_filtered_out(&v.task)) {
		count(LES_CNT_FILTERED);
		return 0;
	}
	if (opcode == FUSE_WRITE_OPCODE && len > FUSE_IN_HEADER_SIZE + FUSE_WRITE_IN_SIZE)
		v.bytes_sent = len - FUSE_IN_HEADER_SIZE - FUSE_WRITE_IN_SIZE;
	if (bpf_map_update_elem(&fuse_inflight, &key, &v, BPF_ANY))
		count(LES_CNT_INFLIGHT_FULL);
	return 0;
}

/* Charge the request's wait to the access op it ran inside. */
static __always_inline void fuse_charge_parent(const struct fuse_inflight *v, __u64 latency)
{
	struct op_frame *frame;

	if (!v->parent_op_id)
		return;
	frame = current_frame(thread_ops_get(v->task.tid));
	if (!frame || frame->op_id != v->parent_op_id)
		return; /* the op already finished: an async request */
	__sync_fetch_and_add(&frame->rpc_wait_ns, latency);
	__sync_fetch_and_add(&frame->rpc_count, 1);
}

static __always_inline __u64 fuse_reply_bytes(const struct fuse_inflight *v, __u32 out_len,
					      __s32 error)
{
	if (v->opcode == FUSE_WRITE_OPCODE)
		return v->bytes_sent;
	if (error || out_len <= FUSE_OUT_HEADER_SIZE)
		return 0;
	switch (v->opcode) {
	case FUSE_READ_OPCODE:
	case FUSE_READDIR_OPCODE:
	case FUSE_READDIRPLUS_OPCODE:
		return out_len - FUSE_OUT_HEADER_SIZE;
	}
	return 0;
}

/* req: the key fuse_send used; unique: the request's ID, set by now. */
static __always_inline int fuse_end(__u32 dev, __u64 req, __u64 unique, __u32 out_len,
				    __s32 error)
{
	struct fuse_inflight_key key = { .dev = dev, .req = req };
	struct les_rec_rpc *rec;
	struct fuse_inflight *v;
	__u64 now, latency;

	count_probe(LES_PROBE_FUSE_END);
	v = bpf_map_lookup_elem(&fuse_inflight, &key);
	if (!v) {
		if (dev_observed(dev))
			count(LES_CNT_END_NO_SEND);
		return 0;
	}
	now = bpf_ktime_get_ns();
	latency = now - v->start_ns;
	fuse_charge_parent(v, latency);
	if (fuse_filtered_out(v->opcode, latency)) {
		count(LES_CNT_FILTERED);
		goto out;
	}
	rec = reserve(sizeof(*rec));
	if (!rec)
		goto out;
	rpc_rec_init(rec, LES_PROTO_FUSE, LES_RPC_OP_NONE, now, latency);
	rec->opcode = v->opcode;
	rec->bytes = fuse_reply_bytes(v, out_len, error);
	rec->parent_op_id = v->parent_op_id;
	rec->req_id = unique;
	rec->cgroup_id = v->cgroup_id;
	rec->dev = dev;
	rec->err = error < 0 ? -error : error;
	rec->worker_pid = v->worker_pid;
	rec->flags = v->flags | LES_RPC_F_OPCODE;
	rec->task = v->task;
	__builtin_memcpy(rec->worker_comm, v->worker_comm, LES_COMM_LEN);
	submit(rec);
out:
	bpf_map_delete_elem(&fuse_inflight, &key);
	return 0;
}

/* tp_btf: struct fuse_req gives the requester's tid and credentials. */
SEC("tp_btf/fuse_request_send")
int BPF_PROG(fuse_send_btf, struct fuse_req___les *req)
{
	struct fuse_requester rq;

	if (!req) /* 6.12 and later type it trusted_ptr_or_null */
		return 0;
	rq = (struct fuse_requester){
		.tid = BPF_CORE_READ(req, in.h.pid),
		.uid = BPF_CORE_READ(req, in.h.uid),
		.gid = BPF_CORE_READ(req, in.h.gid),
	};

	return fuse_send(BPF_CORE_READ(req, fm, fc, dev), (__u64)req, BPF_CORE_READ(req, in.h.opcode),
			 BPF_CORE_READ(req, in.h.len), &rq);
}

SEC("tp_btf/fuse_request_end")
int BPF_PROG(fuse_end_btf, struct fuse_req___les *req)
{
	if (!req)
		return 0;
	return fuse_end(BPF_CORE_READ(req, fm, fc, dev), (__u64)req, BPF_CORE_READ(req, in.h.unique),
			BPF_CORE_READ(req, out.h.len), BPF_CORE_READ(req, out.h.error));
}

/*
 * Plain tracepoints: no requester fields, the sender stands in, and only the
 * unique ID to pair by (a kernel that sends with ID 0 leaves every end
 * without its send, counted as end_without_send).
 */
SEC("tp/fuse/fuse_request_send")
int fuse_send_tp(struct fuse_send_tp_ctx *ctx)
{
	struct fuse_requester rq = {};

	return fuse_send(ctx->connection, ctx->unique, ctx->opcode, ctx->len, &rq);
}

SEC("tp/fuse/fuse_request_end")
int fuse_end_tp(struct fuse_end_tp_ctx *ctx)
{
	return fuse_end(ctx->connection, ctx->unique, ctx->unique, ctx->len, ctx->error);
}

#endif /* LES_RPC_FUSE_BPF_H */
