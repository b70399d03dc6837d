/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Value types of the BPF maps that userspace also reads (stats, sweeping
 * of stale entries). Shared by bpf/ and src/ like les_record.h, so the two
 * sides can never disagree on a layout.
 */
#ifndef LES_MAPS_H
#define LES_MAPS_H

#include "les_record.h"

/*
 * An observed mount (map observed, key = its superblock dev). fn_ops holds
 * the ops (1 << enum les_access_op) that function probes report on that
 * mount, for the syscall fallback to skip: in the same value, so the
 * fallback's entry asks one lookup for both.
 */
struct les_observed_val {
	__u32 fn_ops;
};

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
	__u64 arg; /* entry argument the exit needs (open flags, stat buffer) */
	__u32 sys_flags; /* LES_FRAME_*: how a syscall frame's mount is known */
	__u32 _pad;
	struct les_lu_fid fid; /* a Lustre file's FID, seq 0 when unknown (--file-id) */
	__u64 target; /* function frames: the call's target argument, which its fexit sees too */
};

/*
 * A syscall frame whose mount the entry could not tell (dev 0): its exit
 * decides from the result (an opened fd, a filled stat buffer), else a
 * request the op made on an observed mount (FUSE, sunrpc, PtlRPC) gives it.
 */
#define LES_FRAME_PENDING   1u
#define LES_FRAME_UNCERTAIN 2u /* a relative path: it may cross into a mount */
#define LES_FRAME_FILTERED  4u /* a filter drops it: counted if it was on an observed mount */
#define LES_FRAME_ABSOLUTE  8u /* an absolute path: sure only in the tool's own view */

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
	__u64 req; /* struct fuse_req * (tp_btf) or the unique ID (plain tp) */
};

struct fuse_inflight {
	__u64 start_ns;
	__u64 parent_op_id;
	__u64 bytes_sent;
	__u64 cgroup_id;
	__u64 read_ns; /* the daemon read it (fuse_copy_args), 0: not yet or not probed */
	__u64 unique;  /* the request's ID at send (no-BTF path: checked again at its end) */
	__u32 opcode;
	__u32 flags;
	__u32 worker_pid;
	__u32 dev; /* the mount's superblock dev */
	struct les_task task;
	char worker_comm[LES_COMM_LEN];
};

/*
 * Who last read or wrote a file through an access op (map file_cause, key:
 * the struct inode *): the process a kernel thread's bulk request of the
 * file's pages works for, as Lustre's own lli_jobinfo says for its job ID.
 */
struct file_cause {
	__u64 ino; /* of the inode when it was remembered: a reused address is not it */
	__u64 cgroup_id;
	struct les_task task;
};

/* The file whose pages a kernel thread is building a bulk request of (map ptlrpc_brw_file). */
struct ptlrpc_brw_file {
	__u64 inode; /* struct inode * */
	__u64 ino;
	__u32 dev; /* the file's mount (i_sb->s_dev) */
	__u32 _pad;
};

/* A PtlRPC request from its creation to its free (map ptlrpc_reqs, key: the pointer). */
struct ptlrpc_req {
	__u64 created_ns;
	__u64 sent_ns; /* first send; 0: not sent (not in flight) */
	__u64 replied_ns; /* reply accounted by Lustre; 0: none yet (in flight while sent) */
	__u64 service_ns; /* Lustre's own send-to-reply time of the last transmission */
	__u64 bytes; /* bulk bytes transferred (OST_READ/OST_WRITE) */
	__u64 msg; /* struct lustre_msg * of the request, 0 until seen packed */
	__u64 parent_op_id;
	__u64 req_id; /* unique in the run: joins queue_wait, request, events */
	__u64 cgroup_id;
	__u32 dev; /* mount of the submitter's access op, 0 if none */
	__u32 opcode; /* valid with LES_RPC_F_OPCODE in flags */
	__u32 flags; /* LES_RPC_F_* */
	__u32 worker_pid;
	__u32 sends; /* transmissions seen at ptl_send_rpc */
	__s32 err; /* positive errno of the reply's status, with LES_RPC_F_STATUS */
	__u64 xid; /* rq_xid at the reply, with LES_RPC_F_XID */
	__u32 events; /* 1 << enum les_rpc_event seen on it */
	__u32 resend_marked; /* ptlrpc_resend_req marked it: its next transmission is that resend */
	struct les_task task; /* submitter */
	char worker_comm[LES_COMM_LEN];
	char jobid[LES_JOBID_LEN]; /* pb_jobid as sent, with LES_RPC_F_JOBID */
	char target[LES_RPC_NAME_LEN]; /* the import's obd_name, with LES_RPC_F_TARGET */
	struct les_lnet_nid nid;       /* the import's peer at the first send, with LES_RPC_F_NID */
	__u64 lnet_wait_ns; /* its request PUTs' LNet waits, with LES_RPC_F_LNET */
	struct les_lnet_nid self_nid; /* the NI its PUT left by, with LES_RPC_F_SELF_NID */
};

/*
 * A request a PtlRPC service has queued or is handling (map ptlrpc_srv,
 * key: its struct ptlrpc_request *): the monotonic times of its steps.
 */
struct ptlrpc_srv {
	__u64 seen_ns; /* first seen (the tracer's sweep goes by it) */
	__u64 nrs_ns; /* ptlrpc_nrs_req_add, 0: not seen */
	__u64 start_ns; /* ptlrpc_server_request_get returned it, 0: not yet */
	__u64 handler_ns; /* the handler's entry */
	__u64 reply_ns; /* ptlrpc_send_reply, 0: none yet */
	__u64 bulk_start_ns; /* in target_bulk_io since, 0: not in it */
	__u64 bulk_ns; /* its bulk transfers so far (target_bulk_io, entry -> return) */
	__u64 io_ns; /* its OSD block I/Os' elapsed times so far (osd_fini_iobuf) */
	__u32 io_count; /* ... and how many */
	__u32 _pad;
};

/*
 * An LNet message being sent (map lnet_msgs, key: its struct lnet_msg *),
 * from its commit to its lnet_finalize: when it began, when each wait at the
 * credit gate began, and the waits so far.
 */
struct lnet_msg_state {
	__u64 seen_ns; /* first seen (the tracer's sweep goes by it) */
	__u64 commit_ns;
	__u64 send_ns; /* handed to the LND, 0: not yet */
	__u64 wait_start_ns; /* a wait at the gate began, 0: not waiting */
	__u64 peer_wait_ns;
	__u64 ni_wait_ns;
	__u64 delay_ns;
	__s32 peer_credits;
	__s32 ni_credits;
	__u32 wait_kind; /* LES_LNET_WAIT_* of the wait under way */
	__u32 flags; /* LES_LNET_F_* known so far (CREDIT, COMMIT, SENT) */
	__u64 req; /* the struct ptlrpc_request * whose request PUT this is, 0: none */
};

enum les_lnet_wait {
	LES_LNET_WAIT_NONE = 0,
	LES_LNET_WAIT_PEER, /* on the peer's lpni_txq */
	LES_LNET_WAIT_NI, /* on the NI's tq_delayed */
	LES_LNET_WAIT_DELAY, /* held by a delay rule */
};

/* The credit gate's entry on a thread (map lnet_post, key: tid): for its return. */
struct lnet_post_frame {
	__u64 msg;
	__u32 bits; /* msg_peertxcredit | msg_txcredit << 1 at the entry */
	__u32 _pad;
};

/* A request being packed on a thread (map ptlrpc_packing, key: tid). */
struct ptlrpc_packing {
	__u64 req;
	__u32 opcode;
	__u32 _pad;
};

/* A wait in progress on a thread (map ptlrpc_waits): queue_wait, lock waits. */
struct ptlrpc_wait_key {
	__u32 tid;
	__u32 what; /* enum les_rpc_op */
};

struct ptlrpc_wait {
	__u64 start_ns;
	__u64 req;
	__u64 parent_op_id;
	__u64 req_id; /* of req, taken at the start: its reply ends its entry first */
	__u64 wait_id;	      /* unique in the run, from the op id sequence */
	__u64 parent_wait_id; /* the lock enqueue this wait runs inside, 0 if none */
	__u32 dev;
	__u32 opcode; /* with LES_RPC_F_OPCODE in flags */
	__u32 flags;
	__u32 _pad;
};

/* An RPC task from rpc_task_begin to its stats (map sunrpc_tasks, key: the pointer). */
struct sunrpc_task {
	__u64 start_ns;
	__u64 parent_op_id;
	__u64 cgroup_id;
	__u32 dev; /* 0: unknown */
	__u32 inflight; /* 1 from begin to end */
	struct les_task task; /* submitter */
};

#endif /* LES_MAPS_H */
