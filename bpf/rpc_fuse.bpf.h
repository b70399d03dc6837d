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
 *
 * Kernels without the tracepoints (before 6.12) are reached by function
 * probes (fentry, or kprobe) on fs/fuse/dev.c, read through the fuse
 * module's BTF (5.11 and later):
 *   send   queue_request_and_unlock(fiq, req): every request put on the
 *          input queue, sync or background, with its unique ID already set
 *          (__fuse_request_send and flush_bg_queue assign it first);
 *   end    fuse_request_end(req): replied, aborted or failed.
 * Where BTF reaches struct fuse_copy_state, fuse_copy_args(cs, ...) copying
 * to the daemon (cs->write) marks the daemon's read of cs->req, which splits
 * the request's time into its wait in the queue and the daemon's answer.
 * Forgets and interrupts have queues of their own and are no requests here,
 * as for the tracepoints.
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

/* Bytes a WRITE request carries, from its in.h.len. */
static __always_inline __u64 fuse_write_payload(__u32 opcode, __u32 len)
{
	if (opcode != FUSE_WRITE_OPCODE || len <= FUSE_IN_HEADER_SIZE + FUSE_WRITE_IN_SIZE)
		return 0;
	return len - FUSE_IN_HEADER_SIZE - FUSE_WRITE_IN_SIZE;
}

/*
 * key_dev: the dev part of the table's key (0 on the no-BTF path, whose end
 * cannot read the mount); unique: 0 where not known yet.
 */
static __always_inline int fuse_send(__u32 key_dev, __u32 dev, __u64 req, __u64 unique,
				     __u32 opcode, __u32 len, const struct fuse_requester *rq)
{
	struct fuse_inflight_key key = {.dev = key_dev, .req = req};
	struct fuse_inflight v = {};

	count_probe(LES_PROBE_FUSE_SEND);
	if (!dev_observed(dev))
		return 0;
	v.start_ns = bpf_ktime_get_ns();
	v.opcode = opcode;
	v.dev = dev;
	v.unique = unique;
	v.cgroup_id = bpf_get_current_cgroup_id();
	fuse_attribute(&v, rq, dev);
	if (task_rec_filtered_out(&v.task)) {
		count(LES_CNT_FILTERED);
		return 0;
	}
	v.bytes_sent = fuse_write_payload(opcode, len);
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

/* The daemon's share: queued -> read, read -> end. */
static __always_inline void fuse_split(struct les_rec_rpc *rec, const struct fuse_inflight *v,
				       __u64 now)
{
	if (!v->read_ns || v->read_ns < v->start_ns || v->read_ns > now)
		return;
	rec->backlog_ns = v->read_ns - v->start_ns;
	rec->rtt_ns = now - v->read_ns;
	rec->flags |= LES_RPC_F_DAEMON_READ;
}

/*
 * req: the key fuse_send used; unique: the request's ID, set by now;
 * in_len: in.h.len where the send could not read it yet (0: use the send's).
 */
static __always_inline int fuse_end(__u32 dev, __u64 req, __u64 unique, __u32 out_len, __s32 error,
				    __u32 in_len)
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
	if (!v->bytes_sent)
		v->bytes_sent = fuse_write_payload(v->opcode, in_len);
	rec->opcode = v->opcode;
	rec->bytes = fuse_reply_bytes(v, out_len, error);
	rec->parent_op_id = v->parent_op_id;
	rec->req_id = unique;
	rec->cgroup_id = v->cgroup_id;
	rec->dev = v->dev;
	rec->err = error < 0 ? -error : error;
	rec->worker_pid = v->worker_pid;
	rec->flags = v->flags | LES_RPC_F_OPCODE;
	fuse_split(rec, v, now);
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
	__u32 dev;

	if (!req) /* 6.12 and later type it trusted_ptr_or_null */
		return 0;
	rq = (struct fuse_requester){
		.tid = BPF_CORE_READ(req, in.h.pid),
		.uid = BPF_CORE_READ(req, in.h.uid),
		.gid = BPF_CORE_READ(req, in.h.gid),
	};

	dev = BPF_CORE_READ(req, fm, fc, dev);
	return fuse_send(dev, dev, (__u64)req, 0, BPF_CORE_READ(req, in.h.opcode),
			 BPF_CORE_READ(req, in.h.len), &rq);
}

SEC("tp_btf/fuse_request_end")
int BPF_PROG(fuse_end_btf, struct fuse_req___les *req)
{
	if (!req)
		return 0;
	return fuse_end(BPF_CORE_READ(req, fm, fc, dev), (__u64)req,
			BPF_CORE_READ(req, in.h.unique), BPF_CORE_READ(req, out.h.len),
			BPF_CORE_READ(req, out.h.error), 0);
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

	return fuse_send(ctx->connection, ctx->connection, ctx->unique, ctx->unique, ctx->opcode,
			 ctx->len, &rq);
}

SEC("tp/fuse/fuse_request_end")
int fuse_end_tp(struct fuse_end_tp_ctx *ctx)
{
	return fuse_end(ctx->connection, ctx->unique, ctx->unique, ctx->len, ctx->error, 0);
}

/* --- function probes: kernels without the tracepoints ---------------------- */

static __always_inline struct fuse_requester fuse_req_requester(struct fuse_req___les *req)
{
	return (struct fuse_requester){
		.tid = BPF_CORE_READ(req, in.h.pid),
		.uid = BPF_CORE_READ(req, in.h.uid),
		.gid = BPF_CORE_READ(req, in.h.gid),
	};
}

/* in.h.len is set inside queue_request_and_unlock: WRITE bytes are taken at the end. */
static __always_inline int fuse_queue_fn(struct fuse_req___les *req)
{
	struct fuse_requester rq;
	__u32 dev;

	if (!req)
		return 0;
	rq = fuse_req_requester(req);
	dev = BPF_CORE_READ(req, fm, fc, dev);
	return fuse_send(dev, dev, (__u64)req, BPF_CORE_READ(req, in.h.unique),
			 BPF_CORE_READ(req, in.h.opcode), 0, &rq);
}

static __always_inline int fuse_end_fn(struct fuse_req___les *req)
{
	if (!req)
		return 0;
	return fuse_end(BPF_CORE_READ(req, fm, fc, dev), (__u64)req,
			BPF_CORE_READ(req, in.h.unique), BPF_CORE_READ(req, out.h.len),
			BPF_CORE_READ(req, out.h.error), BPF_CORE_READ(req, in.h.len));
}

/* The daemon reads a request: its copy to the daemon begins. Only the first counts. */
static __always_inline int fuse_read_fn(struct fuse_copy_state___les *cs)
{
	struct fuse_inflight_key key = {};
	struct fuse_req___les *req;
	struct fuse_inflight *v;

	count_probe(LES_PROBE_FUSE_READ);
	if (!cs || !BPF_CORE_READ_BITFIELD_PROBED(cs, write))
		return 0; /* copying the daemon's reply in */
	req = BPF_CORE_READ(cs, req);
	if (!req)
		return 0;
	key.dev = BPF_CORE_READ(req, fm, fc, dev);
	key.req = (__u64)req;
	v = bpf_map_lookup_elem(&fuse_inflight, &key);
	if (v && !v->read_ns)
		v->read_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("kprobe/queue_request_and_unlock")
int BPF_KPROBE(fuse_queue_kp, void *fiq, struct fuse_req___les *req)
{
	return fuse_queue_fn(req);
}

SEC("fentry/queue_request_and_unlock")
int fuse_queue_fe(__u64 *ctx)
{
	return fuse_queue_fn((struct fuse_req___les *)fn_ctx_arg(ctx, 1));
}

SEC("kprobe/fuse_request_end")
int BPF_KPROBE(fuse_req_end_kp, struct fuse_req___les *req)
{
	return fuse_end_fn(req);
}

SEC("fentry/fuse_request_end")
int fuse_req_end_fe(__u64 *ctx)
{
	return fuse_end_fn((struct fuse_req___les *)fn_ctx_arg(ctx, 0));
}

SEC("kprobe/fuse_copy_args")
int BPF_KPROBE(fuse_copy_args_kp, struct fuse_copy_state___les *cs)
{
	return fuse_read_fn(cs);
}

SEC("fentry/fuse_copy_args")
int fuse_copy_args_fe(__u64 *ctx)
{
	return fuse_read_fn((struct fuse_copy_state___les *)fn_ctx_arg(ctx, 0));
}

/* --- function probes without BTF (see FUSE_REQ_IN_H_OFF in compat.h) ------- */

static __always_inline int fuse_read_headers(__u64 req, struct fuse_in_header_uapi *in,
					     struct fuse_out_header_uapi *out)
{
	if (bpf_probe_read_kernel(in, sizeof(*in), (void *)(req + FUSE_REQ_IN_H_OFF)))
		return -1;
	if (out && bpf_probe_read_kernel(out, sizeof(*out), (void *)(req + FUSE_REQ_OUT_H_OFF)))
		return -1;
	return 0;
}

/*
 * The request's mount without BTF: req->fm, then fm->sb->s_dev. fm follows
 * waitq (a vmlinux type: its size by CO-RE) and, where CONFIG_VIRTIO_FS, a
 * pointer; in struct fuse_mount, sb follows fc, and a refcount on 5.10. A
 * candidate is believed only when the superblock points back at that
 * fuse_mount (s_fs_info, as fuse's fill_super sets it). The layout is the
 * kernel's, so the candidate that held is tried first for the next request.
 */
static __u32 fuse_nobtf_cand;

static __always_inline __u32 fuse_nobtf_dev(__u64 req)
{
	__u64 fm_off = FUSE_REQ_OUT_H_OFF + sizeof(struct fuse_out_header_uapi) +
		       bpf_core_type_size(struct wait_queue_head);
	struct super_block *sb;
	void *fm;

	for (__u32 k = 0; k < 4; k++) {
		__u32 i = (fuse_nobtf_cand + k) & 3;

		if (bpf_probe_read_kernel(&fm, sizeof(fm), (void *)(req + fm_off + (i >> 1) * 8)) ||
		    !fm)
			continue;
		if (bpf_probe_read_kernel(&sb, sizeof(sb), fm + 8 + (i & 1) * 8) || !sb)
			continue;
		if (BPF_CORE_READ(sb, s_fs_info) == fm) {
			fuse_nobtf_cand = i;
			return BPF_CORE_READ(sb, s_dev);
		}
	}
	return 0;
}

/*
 * What is read at send is believed only at the end, when the request's
 * unique ID is found again there and in the daemon's reply header.
 */
SEC("kprobe/queue_request_and_unlock")
int BPF_KPROBE(fuse_queue_nobtf_kp, void *fiq, void *req)
{
	struct fuse_requester rq;
	struct fuse_in_header_uapi in;
	__u32 dev;

	if (!req || fuse_read_headers((__u64)req, &in, NULL))
		return 0;
	dev = fuse_nobtf_dev((__u64)req);
	if (!dev || !dev_observed(dev) || !in.unique) {
		count_probe(LES_PROBE_FUSE_SEND);
		if (!dev)
			count(LES_CNT_FUSE_UNPLACED);
		return 0;
	}
	rq = (struct fuse_requester){.tid = in.pid, .uid = in.uid, .gid = in.gid};
	return fuse_send(0, dev, (__u64)req, in.unique, in.opcode, 0, &rq);
}

SEC("kprobe/fuse_request_end")
int BPF_KPROBE(fuse_req_end_nobtf_kp, void *req)
{
	struct fuse_inflight_key key = {.req = (__u64)req};
	struct fuse_out_header_uapi out;
	struct fuse_in_header_uapi in;
	struct fuse_inflight *v;

	if (!req)
		return 0;
	v = bpf_map_lookup_elem(&fuse_inflight, &key);
	if (!v) {
		count_probe(LES_PROBE_FUSE_END);
		return 0;
	}
	/*
	 * The check of the fixed offsets: the ID read at send, read again in
	 * in.h, and in out.h where fuse_dev_do_write copied the daemon's reply
	 * header. A request ended unreplied (aborted, interrupted) fails it.
	 */
	if (fuse_read_headers((__u64)req, &in, &out) || in.unique != v->unique ||
	    out.unique != v->unique) {
		count_probe(LES_PROBE_FUSE_END);
		count(LES_CNT_FUSE_UNVERIFIED);
		bpf_map_delete_elem(&fuse_inflight, &key);
		return 0;
	}
	return fuse_end(0, (__u64)req, in.unique, out.len, out.error, in.len);
}

SEC("kprobe/fuse_copy_args")
int BPF_KPROBE(fuse_copy_args_nobtf_kp, void *cs)
{
	struct fuse_inflight_key key = {};
	struct fuse_inflight *v;
	int to_daemon = 0;

	count_probe(LES_PROBE_FUSE_READ);
	if (!cs || bpf_probe_read_kernel(&to_daemon, sizeof(to_daemon), cs) || !to_daemon ||
	    bpf_probe_read_kernel(&key.req, sizeof(key.req), cs + FUSE_CS_REQ_OFF))
		return 0;
	v = bpf_map_lookup_elem(&fuse_inflight, &key);
	if (v && !v->read_ns)
		v->read_ns = bpf_ktime_get_ns();
	return 0;
}

#endif /* LES_RPC_FUSE_BPF_H */
