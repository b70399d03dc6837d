/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Value types of the BPF maps that userspace also reads (stats, sweeping
 * of stale entries). Shared by bpf/ and src/ like les_record.h, so the two
 * sides can never disagree on a layout.
 */
#ifndef LES_MAPS_H
#define LES_MAPS_H

#include "les_record.h"

/* One access op in flight on a thread. */
struct op_frame {
	__u64 start_ns;
	__u64 op_id;
	__u64 rpc_wait_ns;
	__u64 ino;
	__u32 dev;
	__u32 rpc_count;
	__u32 op; /* enum les_access_op */
	__s32 key; /* pairs entry with exit: syscall nr or function id */
	__u64 arg; /* entry argument the exit needs (e.g. open flags) */
};

/* Per-thread stack of access ops in flight, for nesting and linkage (map thread_ops). */
struct thread_ops {
	__u64 updated_ns; /* for the userspace sweep of threads that died mid-op */
	__u32 depth;
	__u32 tgid;
	char comm[LES_COMM_LEN]; /* for requests sent on the thread's behalf */
	struct op_frame frame[LES_MAX_DEPTH];
};

/* A FUSE request between send and end (map fuse_inflight). */
struct fuse_inflight_key {
	__u32 dev;
	__u32 _pad;
	__u64 unique;
};

struct fuse_inflight {
	__u64 start_ns;
	__u64 parent_op_id;
	__u64 bytes_sent;
	__u64 cgroup_id;
	__u32 opcode;
	__u32 flags;
	__u32 worker_pid;
	__u32 _pad;
	struct les_task task;
	char worker_comm[LES_COMM_LEN];
};

#endif /* LES_MAPS_H */
