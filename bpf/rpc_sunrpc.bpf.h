/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * RPC plane, NFS over sunrpc: one record per RPC from the sunrpc
 * tracepoints (tp_btf: they hand over the struct rpc_task, whose fields
 * come from the sunrpc module's BTF by CO-RE).
 *
 *   rpc_task_begin     in the task that calls rpc_execute(): the
 *                      submitter. Remembered by rpc_task pointer with the
 *                      access op in flight on it.
 *   rpc_task_end       the task's work is done: no longer in flight.
 *   rpc_stats_latency  right after, with backlog, rtt and execute times:
 *                      the record. For an async RPC this runs in rpciod (a
 *                      kworker), so the submitter comes from the begin and
 *                      the current thread is the worker.
 *   xprt_retransmit    a retransmission: an rpc_event.
 *
 * The mount: sunrpc does not know the superblock. It is the mount of the
 * submitter's access op when there is one; each such RPC teaches the map
 * sunrpc_clnt_dev that its rpc_clnt serves that mount, and RPCs on that
 * client with no access op (writeback from a flusher, async reads) get
 * the last mount learnt for it. The NFS client shares one rpc_clnt among
 * mounts of the same server in some cases (NFSv4 lease and state ops), so
 * this is a heuristic; with nothing learnt the mount is unknown (null).
 *
 * A task that NFS restarts after rpc_stats_latency (rpc_restart_call) runs
 * again without a new begin: its second record has no submitter entry and
 * the current thread stands in (LES_RPC_F_NO_BTF_TASK).
 */
#ifndef LES_RPC_SUNRPC_BPF_H
#define LES_RPC_SUNRPC_BPF_H

#include <bpf/bpf_endian.h>
#include "rpc_common.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384); /* resized by userspace */
	__type(key, __u64); /* struct rpc_task * */
	__type(value, struct sunrpc_task);
} sunrpc_tasks SEC(".maps");

/* rpc_clnt -> the mount its last attributed RPC came from. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64); /* struct rpc_clnt * */
	__type(value, __u32);
} sunrpc_clnt_dev SEC(".maps");

static __always_inline __u32 sunrpc_dev_of_clnt(__u64 clnt)
{
	__u32 *dev = bpf_map_lookup_elem(&sunrpc_clnt_dev, &clnt);

	return dev ? *dev : 0;
}

static __always_inline int sunrpc_begin(struct rpc_task___les *task)
{
	__u64 key = (__u64)task, clnt = (__u64)BPF_CORE_READ(task, tk_client);
	struct sunrpc_task v = {};
	struct op_frame *frame;

	count_probe(LES_PROBE_SUNRPC_BEGIN);
	frame = current_frame(thread_ops_get((__u32)bpf_get_current_pid_tgid()));
	if (frame && frame->dev) {
		v.parent_op_id = frame->op_id;
		v.dev = frame->dev;
		if (clnt)
			bpf_map_update_elem(&sunrpc_clnt_dev, &clnt, &v.dev, BPF_ANY);
	} else {
		v.dev = clnt ? sunrpc_dev_of_clnt(clnt) : 0;
		/* A syscall op whose mount its entry could not tell ran on this one. */
		if (frame && v.dev && dev_observed(v.dev)) {
			frame->dev = v.dev;
			v.parent_op_id = frame->op_id;
		}
	}
	if (v.dev ? !dev_observed(v.dev) : !rpc_unattributed[LES_PROTO_SUNRPC])
		return 0;
	v.start_ns = bpf_ktime_get_ns();
	v.cgroup_id = bpf_get_current_cgroup_id();
	v.inflight = 1;
	fill_current_task(&v.task);
	if (bpf_map_update_elem(&sunrpc_tasks, &key, &v, BPF_ANY))
		count(LES_CNT_INFLIGHT_FULL);
	return 0;
}

static __always_inline int sunrpc_end(struct rpc_task___les *task)
{
	__u64 key = (__u64)task;
	struct sunrpc_task *v;

	count_probe(LES_PROBE_SUNRPC_END);
	v = bpf_map_lookup_elem(&sunrpc_tasks, &key);
	if (!v)
		return 0;
	v->inflight = 0;
	/* Without a request slot there will be no stats record: done now. */
	if (!BPF_CORE_READ(task, tk_rqstp))
		bpf_map_delete_elem(&sunrpc_tasks, &key);
	return 0;
}

/* The procedure name, lower case like the tool's other op names. */
static __always_inline void sunrpc_proc_name(char *dst, struct rpc_task___les *task)
{
	rpc_read_name_lower(dst, BPF_CORE_READ(task, tk_msg.rpc_proc, p_name));
}

/* Charge the RPC to the submitter's access op if that op is still running. */
static __always_inline void sunrpc_charge_parent(const struct sunrpc_task *v, __u64 execute)
{
	struct op_frame *frame;

	if (!v->parent_op_id)
		return;
	frame = current_frame(thread_ops_get(v->task.tid));
	if (!frame || frame->op_id != v->parent_op_id)
		return;
	__sync_fetch_and_add(&frame->rpc_wait_ns, execute);
	__sync_fetch_and_add(&frame->rpc_count, 1);
}

static __always_inline __u64 ktime_ns(__s64 t)
{
	return t > 0 ? (__u64)t : 0;
}

/* Who an RPC record or event belongs to. */
struct rpc_who {
	__u64 parent_op_id;
	__u64 cgroup_id;
	__u32 dev;
	__u32 flags;
	__u32 worker_pid;
	struct les_task task;
	char worker_comm[LES_COMM_LEN];
};

/*
 * The begin's submitter, else the current thread standing in; false when
 * the RPC is of no observed mount.
 */
static __always_inline bool sunrpc_attribute(struct rpc_who *who, const struct sunrpc_task *v,
					     __u64 clnt)
{
	if (v) {
		who->parent_op_id = v->parent_op_id;
		who->cgroup_id = v->cgroup_id;
		who->dev = v->dev;
		who->task = v->task;
		rpc_set_worker(v->task.tid, &who->flags, &who->worker_pid, who->worker_comm);
		return true;
	}
	who->dev = clnt ? sunrpc_dev_of_clnt(clnt) : 0;
	if (who->dev ? !dev_observed(who->dev) : !rpc_unattributed[LES_PROTO_SUNRPC])
		return false;
	who->flags = LES_RPC_F_NO_BTF_TASK;
	who->cgroup_id = bpf_get_current_cgroup_id();
	fill_current_task(&who->task);
	return true;
}

/*
 * The client's end of the request's transport, as the server sees it as
 * its peer (rq_addr): the join's key with the xid. Only socket transports
 * (TCP, UDP) wrap their rpc_xprt in a struct sock_xprt; RDMA and AF_LOCAL
 * have no such socket, and the record says so (no LES_RPC_F_LOCAL).
 */
static __always_inline void sunrpc_local_addr(struct les_rec_rpc *rec, struct rpc_task___les *task)
{
	struct rpc_xprt___les *xprt = BPF_CORE_READ(task, tk_rqstp, rq_xprt);
	int ident = xprt ? BPF_CORE_READ(xprt, xprt_class, ident) : 0;
	struct sock *sk;
	__u16 family;

	if (ident != 6 /* XPRT_TRANSPORT_TCP */ && ident != 17 /* XPRT_TRANSPORT_UDP */)
		return;
	sk = BPF_CORE_READ((struct sock_xprt___les *)xprt, inet);
	if (!sk)
		return;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	rec->local.port = BPF_CORE_READ(sk, __sk_common.skc_num);
	if (family == 2 /* AF_INET */)
		rec->local.addr_be[0] = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
	else if (family != 10 /* AF_INET6 */ ||
		 bpf_probe_read_kernel(rec->local.addr_be, sizeof(rec->local.addr_be),
				       &sk->__sk_common.skc_v6_rcv_saddr))
		return;
	rec->local.family = family;
	rec->flags |= LES_RPC_F_LOCAL;
}

static __always_inline int sunrpc_stats(struct rpc_task___les *task, __s64 backlog, __s64 rtt,
					__s64 execute)
{
	__u64 key = (__u64)task, clnt = (__u64)BPF_CORE_READ(task, tk_client);
	struct rpc_who who = {};
	struct les_rec_rpc *rec;
	struct sunrpc_task *v;
	__s32 status;

	count_probe(LES_PROBE_SUNRPC_STATS);
	v = bpf_map_lookup_elem(&sunrpc_tasks, &key);
	if (v)
		sunrpc_charge_parent(v, ktime_ns(execute));
	if (!sunrpc_attribute(&who, v, clnt))
		goto out;
	if (ktime_ns(execute) < min_latency_ns || task_rec_filtered_out(&who.task)) {
		count(LES_CNT_FILTERED);
		goto out;
	}
	rec = reserve(sizeof(*rec));
	if (!rec)
		goto out;
	rpc_rec_init(rec, LES_PROTO_SUNRPC, LES_RPC_OP_NONE, bpf_ktime_get_ns(), ktime_ns(execute));
	rec->parent_op_id = who.parent_op_id;
	rec->cgroup_id = who.cgroup_id;
	rec->dev = who.dev;
	rec->flags = who.flags | LES_RPC_F_OPCODE;
	rec->worker_pid = who.worker_pid;
	rec->task = who.task;
	__builtin_memcpy(rec->worker_comm, who.worker_comm, LES_COMM_LEN);
	rec->opcode = (__u16)BPF_CORE_READ(task, tk_msg.rpc_proc, p_proc);
	rec->req_id = bpf_ntohl(BPF_CORE_READ(task, tk_rqstp, rq_xid));
	rec->backlog_ns = ktime_ns(backlog);
	rec->rtt_ns = ktime_ns(rtt);
	rec->execute_ns = ktime_ns(execute);
	status = BPF_CORE_READ(task, tk_status);
	rec->err = status < 0 ? -status : 0;
	if (clnt) {
		rec->prog = BPF_CORE_READ((struct rpc_clnt___les *)clnt, cl_prog);
		rec->vers = (__u16)BPF_CORE_READ((struct rpc_clnt___les *)clnt, cl_vers);
	}
	sunrpc_proc_name(rec->name, task);
	sunrpc_local_addr(rec, task);
	submit(rec);
out:
	if (v)
		bpf_map_delete_elem(&sunrpc_tasks, &key);
	return 0;
}

static __always_inline int sunrpc_retransmit(struct rpc_rqst___les *rqst)
{
	struct rpc_task___les *task = BPF_CORE_READ(rqst, rq_task);
	__u64 key = (__u64)task, clnt = (__u64)BPF_CORE_READ(task, tk_client);
	struct les_rec_rpc_event *rec;
	struct rpc_who who = {};
	struct sunrpc_task *v;

	count_probe(LES_PROBE_SUNRPC_RETRANSMIT);
	v = bpf_map_lookup_elem(&sunrpc_tasks, &key);
	if (!sunrpc_attribute(&who, v, clnt))
		return 0;
	if (task_rec_filtered_out(&who.task)) {
		count(LES_CNT_FILTERED);
		return 0;
	}
	rec = reserve(sizeof(*rec));
	if (!rec)
		return 0;
	rec->kind = LES_REC_RPC_EVENT;
	rec->proto = LES_PROTO_SUNRPC;
	rec->event = LES_EV_RETRANSMIT;
	rec->ts_ns = bpf_ktime_get_ns();
	rec->parent_op_id = who.parent_op_id;
	rec->req_id = bpf_ntohl(BPF_CORE_READ(rqst, rq_xid));
	rec->cgroup_id = who.cgroup_id;
	rec->dev = who.dev;
	rec->opcode = BPF_CORE_READ(task, tk_msg.rpc_proc, p_proc);
	rec->flags = who.flags | LES_RPC_F_OPCODE;
	rec->worker_pid = who.worker_pid;
	rec->task = who.task;
	__builtin_memcpy(rec->worker_comm, who.worker_comm, LES_COMM_LEN);
	sunrpc_proc_name(rec->name, task);
	submit(rec);
	return 0;
}

SEC("tp_btf/rpc_task_begin")
int BPF_PROG(sunrpc_begin_btf, struct rpc_task___les *task)
{
	/* 6.12 types the argument trusted_ptr_or_null: test it first. */
	return task ? sunrpc_begin(task) : 0;
}

SEC("tp_btf/rpc_task_end")
int BPF_PROG(sunrpc_end_btf, struct rpc_task___les *task)
{
	return task ? sunrpc_end(task) : 0;
}

SEC("tp_btf/rpc_stats_latency")
int BPF_PROG(sunrpc_stats_btf, struct rpc_task___les *task, __s64 backlog, __s64 rtt,
	     __s64 execute)
{
	return task ? sunrpc_stats(task, backlog, rtt, execute) : 0;
}

SEC("tp_btf/xprt_retransmit")
int BPF_PROG(sunrpc_retransmit_btf, struct rpc_rqst___les *rqst)
{
	return rqst ? sunrpc_retransmit(rqst) : 0;
}

#endif /* LES_RPC_SUNRPC_BPF_H */
