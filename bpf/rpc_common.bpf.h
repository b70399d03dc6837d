/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the request planes (FUSE, sunrpc, PtlRPC) share: the rpc record
 * every one of them fills, and the worker a request was sent by.
 */
#ifndef LES_RPC_COMMON_BPF_H
#define LES_RPC_COMMON_BPF_H

#include "common.bpf.h"

/*
 * Per protocol: keep requests whose mount is unknown (no access op in
 * flight on the submitter). Userspace sets it when a mount of that
 * protocol's filesystem is observed, so that a Lustre client's pings do not
 * show up when only FUSE mounts are watched.
 */
bool rpc_unattributed[LES_PROTO_MAX] = {};

/*
 * Every field of an rpc record, zeroed or set: reserve() does not clear, and
 * a field left out would carry ring garbage to users. Callers set the rest.
 */
static __always_inline void rpc_rec_init(struct les_rec_rpc *rec, __u16 proto, __u16 rpc_op,
					 __u64 now, __u64 latency)
{
	rec->kind = LES_REC_RPC;
	rec->proto = proto;
	rec->opcode = 0;
	rec->ts_ns = now;
	rec->latency_ns = latency;
	rec->bytes = 0;
	rec->parent_op_id = 0;
	rec->req_id = 0;
	rec->backlog_ns = 0;
	rec->rtt_ns = 0;
	rec->execute_ns = 0;
	rec->lnet_wait_ns = 0;
	rec->cgroup_id = 0;
	rec->dev = 0;
	rec->err = 0;
	rec->worker_pid = 0;
	rec->flags = 0;
	rec->prog = 0;
	rec->vers = 0;
	rec->resends = 0;
	rec->xid = 0;
	rec->wait_id = 0;
	rec->parent_wait_id = 0;
	rec->rpc_op = rpc_op;
	__builtin_memset(rec->worker_comm, 0, LES_COMM_LEN);
	__builtin_memset(rec->name, 0, LES_RPC_NAME_LEN);
	__builtin_memset(rec->jobid, 0, LES_JOBID_LEN);
	__builtin_memset(&rec->local, 0, sizeof(rec->local));
	__builtin_memset(&rec->self_nid, 0, sizeof(rec->self_nid));
}

/* Make the current thread the worker of v when it is not the submitter. */
static __always_inline void rpc_set_worker(__u32 submitter_tid, __u32 *flags, __u32 *worker_pid,
					   char *worker_comm)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (tid == submitter_tid || (*flags & LES_RPC_F_ASYNC))
		return;
	*flags |= LES_RPC_F_ASYNC;
	*worker_pid = tid;
	bpf_get_current_comm(worker_comm, LES_COMM_LEN);
}

/*
 * A kernel string (a procedure's name) into dst, lower case like the tool's
 * other op names; empty when unreadable.
 */
static __always_inline void rpc_read_name_lower(char *dst, const char *name)
{
	if (!name || bpf_probe_read_kernel_str(dst, LES_RPC_NAME_LEN, name) < 0) {
		dst[0] = 0;
		return;
	}
#pragma unroll
	for (int i = 0; i < LES_RPC_NAME_LEN; i++) {
		if (dst[i] >= 'A' && dst[i] <= 'Z')
			dst[i] += 'a' - 'A';
	}
}

#endif /* LES_RPC_COMMON_BPF_H */
