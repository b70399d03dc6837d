/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The record ABI: the wire format between the BPF programs and the
 * userspace consumer. Every record in the ring buffer starts with a
 * __u32 kind tag. Fixed-width types only, largest fields first after the
 * tag, no kernel headers: this file is included by BPF C (after vmlinux.h)
 * and by userspace C (after <linux/types.h>).
 *
 * The BPF object and the consumer are built together from this file, so
 * there is no version to negotiate; the consumer checks each record's size
 * against its kind, which catches a ring of another build.
 */
#ifndef LES_RECORD_H
#define LES_RECORD_H

#ifndef __VMLINUX_H__ /* BPF C gets the types from vmlinux.h */
#include <linux/types.h>
#endif

/*
 * The version of the output lines' schema (docs/record.schema.json): stats
 * records and Kafka headers carry it. A field removed or changed in meaning
 * raises it; a field added does not.
 */
#define LES_SCHEMA_VERSION 1

#define LES_COMM_LEN	   16
#define LES_MAX_MOUNTS	   16 /* observed mounts tracked in BPF */
#define LES_MOUNT_PATH_MAX 128 /* longest mount point matched by path in BPF */
#define LES_MAX_DEPTH	   4 /* nested access ops tracked per thread */
#define LES_ENV_MAX	   4096 /* environment bytes copied at exec */
#define LES_RPC_NAME_LEN   32 /* sunrpc procedure name, NUL-padded */
#define LES_JOBID_LEN	   32 /* Lustre's job ID on the wire (pb_jobid), NUL-padded */

/* What the record is; first field of every record. */
enum les_rec_kind {
	LES_REC_NONE = 0,
	LES_REC_ACCESS = 1, /* struct les_rec_access */
	LES_REC_RPC = 2, /* struct les_rec_rpc */
	LES_REC_RPC_EVENT = 3, /* struct les_rec_rpc_event */
	LES_REC_PROC_EXEC = 4, /* struct les_rec_proc */
	LES_REC_PROC_EXIT = 5, /* reserved */
	LES_REC_PROC_FORK = 6, /* struct les_rec_fork */
	LES_REC_SRV = 7, /* struct les_rec_srv: a request a PtlRPC service handled */
	LES_REC_LNET = 8, /* struct les_rec_lnet: an LNet message this node sent */
	LES_REC_KIND_MAX,
};

/* User-facing operations of the access plane. Names in src/model/ops.c. */
enum les_access_op {
	LES_OP_LOOKUP = 0,
	LES_OP_OPEN,
	LES_OP_CLOSE,
	LES_OP_GETATTR,
	LES_OP_GETXATTR,
	LES_OP_LISTXATTR,
	LES_OP_GET_ACL,
	LES_OP_READLINK,
	LES_OP_READDIR,
	LES_OP_STATFS,
	LES_OP_CREATE,
	LES_OP_MKDIR,
	LES_OP_MKNOD,
	LES_OP_UNLINK,
	LES_OP_RMDIR,
	LES_OP_RENAME,
	LES_OP_LINK,
	LES_OP_SYMLINK,
	LES_OP_SETATTR,
	LES_OP_SETXATTR,
	LES_OP_READ,
	LES_OP_WRITE,
	LES_OP_FSYNC,
	LES_OP_MAX,
};

/* How a probe reached the kernel. */
enum les_attach_method {
	LES_ATTACH_NONE = 0,
	LES_ATTACH_FENTRY,
	LES_ATTACH_KPROBE,
	LES_ATTACH_SYSCALL,
	LES_ATTACH_TRACEPOINT,
	LES_ATTACH_MAX,
};

/* Which request layer an RPC record comes from. */
enum les_rpc_proto {
	LES_PROTO_NONE = 0,
	LES_PROTO_FUSE,
	LES_PROTO_SUNRPC,
	LES_PROTO_PTLRPC,
	LES_PROTO_LDLM,
	LES_PROTO_LNET, /* LNet messages under PtlRPC (rpc_lnet.bpf.h) */
	LES_PROTO_MAX,
};

/*
 * What an RPC record times, besides the protocol's own request (FUSE
 * request, sunrpc task: LES_RPC_OP_NONE, named by opcode or procedure).
 */
enum les_rpc_op {
	LES_RPC_OP_NONE = 0,
	LES_RPC_OP_REQUEST, /* PtlRPC request: first send to its reply */
	LES_RPC_OP_QUEUE_WAIT, /* ptlrpc_queue_wait: the caller's synchronous wait */
	LES_RPC_OP_LOCK_ENQUEUE, /* ldlm_cli_enqueue: enqueue RPC and grant wait */
	LES_RPC_OP_LOCK_COMPLETION, /* ldlm_completion_ast: the wait for the grant */
	LES_RPC_OP_MAX,
};

/* RPC events of struct les_rec_rpc_event. */
enum les_rpc_event {
	LES_EV_RESEND = 0,
	LES_EV_RESTART,
	LES_EV_EXPIRE,
	LES_EV_NOTCONN,
	LES_EV_RETRANSMIT,
	LES_EV_EVICT, /* PtlRPC: a server evicted the client's import (no request) */
	LES_EV_MAX,
};

/*
 * Counters kept by BPF in a per-CPU array (map "counters"), summed by
 * userspace. Per-probe hit counts follow at LES_CNT_PROBE_BASE + probe id.
 */
enum les_counter {
	LES_CNT_PRODUCED = 0,	/* records the programs tried to emit */
	LES_CNT_RB_DROPPED,	/* bpf_ringbuf_reserve failed */
	LES_CNT_INFLIGHT_FULL,	/* in-flight table full: request not tracked */
	LES_CNT_END_NO_SEND,	/* request end with no matching send */
	LES_CNT_EXIT_NO_ENTRY,	/* op exit with no matching entry */
	LES_CNT_DEPTH_OVERFLOW, /* nesting deeper than LES_MAX_DEPTH */
	LES_CNT_ENTRY_REPLACED, /* entry left by an op that never exited */
	LES_CNT_FILTERED,	/* ops dropped in BPF by a filter */
	LES_CNT_THREADS_FULL,	/* per-thread op table full: op not tracked */
	LES_CNT_NOTICE_DROPPED, /* process notices lost: ring buffer full */
	LES_CNT_PATH_UNRESOLVED, /* syscall fallback: path op that could be on an observed mount, undecidable */
	/* FUSE without BTF: a request whose header failed the check against its unique ID */
	LES_CNT_FUSE_UNVERIFIED,
	/* FUSE without BTF: a request whose mount could not be read (no candidate held) */
	LES_CNT_FUSE_UNPLACED,
	/* PtlRPC server: a handler ran on a request whose dequeue was not seen (no record) */
	LES_CNT_SRV_UNTRACKED,
	/* PtlRPC server: the table of requests queued or in handling was full */
	LES_CNT_SRV_FULL,
	/* LNet: a message's state found no room: its record is lost */
	LES_CNT_LNET_FULL,
	LES_CNT_MAX,
};

/* Probe ids for hit counting; names in src/model/ops.c (les_probe_name). */
enum les_probe_id {
	LES_PROBE_FUSE_SEND = 0,
	LES_PROBE_FUSE_END,
	LES_PROBE_SYS_ENTER, /* syscall entries on observed mounts */
	LES_PROBE_SYS_EXIT,
	LES_PROBE_SCHED_EXEC,
	LES_PROBE_SCHED_FORK,
	LES_PROBE_PTLRPC_CREATE, /* request created or first queued */
	LES_PROBE_PTLRPC_SEND,
	LES_PROBE_PTLRPC_FREE,
	LES_PROBE_PTLRPC_PACK,	   /* request packed: opcode and message */
	LES_PROBE_PTLRPC_REPLY,	   /* reply accounted (ptlrpc_lprocfs_rpc_sent) */
	LES_PROBE_PTLRPC_BRW,	   /* bulk bytes accounted (ptlrpc_lprocfs_brw) */
	LES_PROBE_PTLRPC_WAIT,	   /* ptlrpc_queue_wait returns */
	LES_PROBE_PTLRPC_EVENT,	   /* resend, restart, expire, notconn, evict */
	LES_PROBE_LDLM_WAIT,	   /* ldlm_cli_enqueue, ldlm_completion_ast return */
	LES_PROBE_PTLRPC_BRW_PREP, /* a kernel thread builds a bulk request (osc_brw_prep_request) */
	LES_PROBE_PTLRPC_CAUSE,	   /* ... and it is charged to its file's last reader or writer */
	LES_PROBE_PTLRPC_STATUS, /* a reply's status taken from its message (lustre_msg_get_status) */
	LES_PROBE_SUNRPC_BEGIN,
	LES_PROBE_SUNRPC_STATS,
	LES_PROBE_SUNRPC_END,
	LES_PROBE_SUNRPC_RETRANSMIT,
	LES_PROBE_FUSE_READ, /* the daemon reads a request (fuse_copy_args to it) */
	LES_PROBE_SRV_NRS_ADD, /* server: a request enters the NRS policy queue */
	LES_PROBE_SRV_DEQUEUE, /* server: a service thread takes a request to handle */
	LES_PROBE_SRV_HANDLE,  /* server: the service's handler returns (the record) */
	LES_PROBE_SRV_REPLY,   /* server: the reply is sent (early replies are not) */
	LES_PROBE_LNET_COMMIT,	 /* LNet: a message committed for sending (lnet_msg_commit) */
	LES_PROBE_LNET_POST,	 /* LNet: the credit gate (lnet_post_send_locked) */
	LES_PROBE_LNET_WAIT,	 /* ... returned LNET_CREDIT_WAIT: the message waits */
	LES_PROBE_LNET_LND_SEND, /* LNet: handed to the LND (ksocknal_send) */
	LES_PROBE_LNET_FINALIZE, /* LNet: a sent message finalized (the record) */
	LES_PROBE_SVC_PROCESS, /* sunrpc server: a request's procedure is dispatched */
	LES_PROBE_SVC_REPLYING, /* sunrpc server: the reply goes to the transport */
	LES_PROBE_SVC_SEND,    /* sunrpc server: the reply is sent (the record) */
	LES_PROBE_NFSD_IO,     /* nfsd: a read or write of a file starts or ends */
	LES_PROBE_SRV_BULK, /* server: a bulk transfer inside the handling (target_bulk_io) */
	LES_PROBE_SRV_IO,   /* server: an OSD block I/O filed (osd_fini_iobuf) */
	LES_PROBE_SVC_ENQUEUE, /* sunrpc server: a transport has work (svc_xprt_enqueue) */
	LES_PROBE_MAX,
};

#define LES_CNT_PROBE_BASE LES_CNT_MAX
#define LES_CNT_SLOTS	   (LES_CNT_MAX + LES_PROBE_MAX)

/* The task a record is attributed to. 32 bytes. */
struct les_task {
	__u32 pid; /* thread group id */
	__u32 tid;
	__u32 uid;
	__u32 gid;
	char comm[LES_COMM_LEN];
};

/* One user-facing operation (access plane). */
/* A Lustre file identifier (struct lu_fid, a wire format): lfs path2fid's [seq:oid:ver]. */
struct les_lu_fid {
	__u64 seq;
	__u32 oid;
	__u32 ver;
};

struct les_rec_access {
	__u32 kind; /* LES_REC_ACCESS */
	__u16 op; /* enum les_access_op */
	__u8 method; /* enum les_attach_method */
	__u8 flags;  /* LES_ACCESS_F_* */
	__u64 ts_ns; /* completion, CLOCK_MONOTONIC */
	__u64 latency_ns;
	__u64 bytes; /* transferred, from the return value */
	__u64 op_id; /* unique within the run */
	__u64 rpc_wait_ns; /* time in requests sent inside this op */
	__u64 ino;
	__u64 cgroup_id;
	__u32 dev; /* kernel dev_t (major << 20 | minor) of the superblock */
	__u32 rpc_count;
	__s32 err; /* positive errno, 0 on success */
	__u32 _pad;
	struct les_task task;
	struct les_lu_fid fid; /* with LES_ACCESS_F_FID: the Lustre file's (module BTF) */
};

#define LES_ACCESS_F_FID 0x1 /* fid is valid */

/*
 * An LNet NID as Lustre 2.15 and later hold it (struct lnet_nid,
 * lnet-idl.h): size is the address length - 4 (0: IPv4 or a number, 12:
 * IPv6), type the LND (2 tcp, 5 o2ib, 9 lo, ...), num the network number
 * and addr the address, both big-endian.
 */
struct les_lnet_nid {
	__u8 size;
	__u8 type;
	__u16 num_be;
	__u32 addr_be[4];
};

/*
 * A socket address as the other end sees it: family AF_INET (2) or
 * AF_INET6 (10), the port in host order, the address big-endian (IPv4 in
 * addr_be[0]). All zero: unknown.
 */
struct les_sock_addr {
	__u16 family;
	__u16 port;
	__u32 addr_be[4];
};

/* One request of the client's request layer (RPC plane). */
struct les_rec_rpc {
	__u32 kind; /* LES_REC_RPC */
	__u16 proto; /* enum les_rpc_proto */
	__u16 opcode; /* FUSE opcode, PtlRPC opcode, sunrpc procedure; see LES_RPC_F_OPCODE */
	__u64 ts_ns; /* completion, CLOCK_MONOTONIC */
	__u64 latency_ns;
	__u64 bytes; /* payload: sent for writes, returned for reads */
	__u64 parent_op_id; /* access op in flight on the submitter, 0 if none */
	__u64 req_id; /* FUSE unique, sunrpc xid, PtlRPC request id (unique in the run) */
	/*
	 * sunrpc: queued before the first transmission; PtlRPC: created -> first send;
	 * FUSE: queued -> read by the daemon (LES_RPC_F_DAEMON_READ)
	 */
	__u64 backlog_ns;
	/*
	 * sunrpc: last transmission to its reply; PtlRPC: first send -> the reply;
	 * FUSE: read by the daemon -> its end (LES_RPC_F_DAEMON_READ)
	 */
	__u64 rtt_ns;
	__u64 execute_ns; /* sunrpc only: the task's start to its end */
	__u64 cgroup_id;
	__u64 xid; /* PtlRPC: rq_xid of the last transmission, with LES_RPC_F_XID */
	/* queue_wait, lock_wait: the wait's id, and the wait it runs inside (0: none) */
	__u64 wait_id;
	__u64 parent_wait_id;
	__u32 dev; /* connection / superblock dev_t, 0 when unknown */
	__s32 err; /* positive errno, 0 on success */
	__u32 worker_pid; /* thread that did the work, when not the submitter */
	__u32 flags; /* LES_RPC_F_* */
	__u32 resends; /* PtlRPC: transmissions after the first (ptl_send_rpc) */
	__u32 prog; /* sunrpc program number (100003: nfs) */
	__u16 vers; /* sunrpc program version */
	__u16 rpc_op; /* enum les_rpc_op */
	struct les_task task; /* submitter */
	char worker_comm[LES_COMM_LEN];
	/* sunrpc procedure, lower case; PtlRPC: the import's obd_name, with LES_RPC_F_TARGET */
	char name[LES_RPC_NAME_LEN];
	char jobid[LES_JOBID_LEN]; /* PtlRPC: the job ID Lustre sent, with LES_RPC_F_JOBID */
	struct les_lnet_nid nid;   /* PtlRPC: the import's peer, with LES_RPC_F_NID */
	/* sunrpc: the client's end of the transport's socket, with LES_RPC_F_LOCAL */
	struct les_sock_addr local;
	/*
	 * PtlRPC request: how long its request's LNet PUTs (one per
	 * transmission) waited for credits and delay rules, with LES_RPC_F_LNET
	 */
	__u64 lnet_wait_ns;
	/*
	 * PtlRPC request: this node's own NID, the NI its request's PUT left
	 * by (as the LNet plane saw it handed to the LND), with LES_RPC_F_SELF_NID
	 */
	struct les_lnet_nid self_nid;
};

#define LES_RPC_F_ASYNC	      0x1 /* sent by another thread than the submitter */
#define LES_RPC_F_NO_BTF_TASK 0x2 /* submitter unknown: its fields are the sender's */
#define LES_RPC_F_OPCODE      0x4 /* opcode is valid (else absent: not readable here) */
#define LES_RPC_F_JOBID	      0x8 /* jobid holds the job ID of the request on the wire */
#define LES_RPC_F_KTHREAD     0x10 /* task is a kernel thread (PF_KTHREAD) */
/*
 * task is the process whose I/O caused the request (the file's last reader
 * or writer, as Lustre's own lli_jobinfo), not the kernel thread that built it
 */
#define LES_RPC_F_CAUSE	      0x20
#define LES_RPC_F_STATUS      0x40 /* PtlRPC: err is the reply's status (pb_status) */
#define LES_RPC_F_XID	      0x80 /* PtlRPC: xid is valid (module BTF) */
#define LES_RPC_F_TARGET      0x100 /* PtlRPC: name is the import's device (module BTF) */
/* PtlRPC: released without a reply Lustre accounted (timed out, failed, interrupted) */
#define LES_RPC_F_NO_REPLY    0x200
#define LES_RPC_F_NID	      0x400 /* PtlRPC: nid is the import's peer (module BTF) */
/* LDLM: the server answered the enqueue with a lock blocked by a conflicting one */
#define LES_RPC_F_LOCK_BLOCKED 0x800
/* FUSE: the daemon's read was seen: backlog_ns is queued -> read, rtt_ns read -> end */
#define LES_RPC_F_DAEMON_READ 0x1000
/* sunrpc: local is the transport socket's own address (a TCP or UDP transport) */
#define LES_RPC_F_LOCAL	      0x2000
/* PtlRPC: the LNet plane saw its request's PUT sent; lnet_wait_ns is valid */
#define LES_RPC_F_LNET	      0x4000
/* PtlRPC: its transmissions were counted at ptl_send_rpc: resends and LES_RPC_F_UNSENT hold */
#define LES_RPC_F_SENDS	      0x8000
/* PtlRPC: never transmitted (refused before ptl_send_rpc: its import not ready), with LES_RPC_F_SENDS */
#define LES_RPC_F_UNSENT      0x10000
/* PtlRPC: self_nid is the NI its request's PUT left by (the LNet plane saw it sent) */
#define LES_RPC_F_SELF_NID    0x20000

/*
 * One request a server handled: a PtlRPC service (MDS, OSS, MGS, and a
 * client's own LDLM callback service), or a sunrpc service (nfsd, and the
 * NFS client's callback and lockd services), told apart by proto.
 * Times are CLOCK_MONOTONIC except arrival_real_ns, which for PtlRPC is
 * Lustre's own stamp (rq_arrival_time, CLOCK_REALTIME): userspace moves it
 * onto the monotonic clock. Every field is read by CO-RE from module BTF;
 * without it there is no record.
 *
 * sunrpc (bpf/rpc_nfsd.bpf.h): arrival_real_ns is rq_qtime, when a thread
 * was woken for the transport (monotonic, LES_SRV_F_ARRIVAL_MONO), start_ns
 * rq_stime (the request read off the transport), handler_ns svc_process,
 * ts_ns and reply_ns svc_send; service is empty, procname the procedure's
 * name, client the peer's address (rq_addr), status svc_send's result.
 */
struct les_rec_srv {
	__u32 kind; /* LES_REC_SRV */
	__u16 opcode; /* pb_opc of the request message, with LES_SRV_F_OPCODE */
	__u16 flags; /* LES_SRV_F_* */
	__u64 ts_ns; /* the handler returned */
	__u64 arrival_real_ns; /* LNet delivered the request (request_in_callback) */
	__u64 nrs_ns; /* put into the NRS policy queue (ptlrpc_nrs_req_add); 0: not seen */
	__u64 start_ns; /* a service thread took it (ptlrpc_server_request_get) */
	__u64 handler_ns; /* the service's handler was called (so_req_handler) */
	__u64 reply_ns; /* the reply was sent (ptlrpc_send_reply); 0: none */
	__u64 xid; /* rq_xid: the match bits the client sent it with */
	__u64 transno; /* rq_transno: the transaction a modifying request got, 0: none */
	/*
	 * With LES_SRV_F_IO. sunrpc: nfsd's file read or write (nfsd_*_start
	 * -> done); PtlRPC: the OSD's block I/Os inside the handling, each
	 * one's elapsed time as brw_stats' "I/O time" takes it (osd_fini_iobuf).
	 */
	__u64 io_ns;
	__u64 offset; /* sunrpc: that read's or write's offset, with LES_SRV_F_IO */
	__u64 count; /* sunrpc: ... and its byte count */
	__s32 status; /* rq_status: the handler's result, a negative errno or 0 */
	__u32 msg_flags; /* pb_flags: MSG_RESENT 0x2, MSG_REPLAY 0x4, ... */
	__u32 tid; /* the service thread */
	__u32 prog; /* sunrpc: rq_prog (100003: nfs) */
	__u16 proto; /* enum les_rpc_proto: LES_PROTO_PTLRPC or LES_PROTO_SUNRPC */
	__u16 vers; /* sunrpc: rq_vers */
	__u32 io_count; /* PtlRPC: the OSD block I/Os in io_ns, with LES_SRV_F_IO */
	__u64 bulk_ns; /* PtlRPC: its bulk transfers inside the handling (target_bulk_io), with LES_SRV_F_BULK */
	struct les_lnet_nid peer; /* rq_peer: the client's NID as this server's LNet knows it */
	struct les_lnet_nid self; /* rq_self: this server's NID the request came to (the client's import peer) */
	struct les_sock_addr client; /* sunrpc: rq_addr, the client's address, with LES_SRV_F_CLIENT */
	char comm[LES_COMM_LEN]; /* the service thread's name (mdt00_002, ll_ost_io00_000) */
	char service[LES_RPC_NAME_LEN]; /* srv_name: mdt, ost_io, ldlm_canceld, ... */
	char target[LES_RPC_NAME_LEN]; /* the export's obd_name (lustre-OST0000), with LES_SRV_F_TARGET */
	char jobid[LES_JOBID_LEN]; /* pb_jobid, with LES_SRV_F_JOBID */
	char procname[LES_RPC_NAME_LEN]; /* sunrpc: the procedure's name, lower case */
};

#define LES_SRV_F_OPCODE 0x1 /* opcode is valid */
#define LES_SRV_F_TARGET 0x2 /* target is the export's device */
#define LES_SRV_F_JOBID	 0x4 /* jobid holds the request's job ID */
#define LES_SRV_F_FLAGS	 0x8 /* msg_flags were read from the request's body */
#define LES_SRV_F_NRS	 0x10 /* nrs_ns is valid */
#define LES_SRV_F_REPLY	 0x20 /* reply_ns is valid */
#define LES_SRV_F_PEER	 0x40 /* peer is valid (a struct lnet_nid: Lustre 2.15 and later) */
#define LES_SRV_F_ARRIVAL_MONO 0x80 /* arrival_real_ns is on the monotonic clock (sunrpc) */
#define LES_SRV_F_IO	 0x100 /* io_ns valid; sunrpc: offset and count too; PtlRPC: io_count */
#define LES_SRV_F_BULK	 0x400 /* bulk_ns is valid (target_bulk_io probed; 0: no bulk) */
#define LES_SRV_F_CLIENT 0x200 /* client is valid (sunrpc) */

/*
 * One LNet message this node sent (client or server side: a PtlRPC request's
 * PUT, a bulk REPLY or PUT, an ACK), from its commit for sending to its
 * lnet_finalize. The waits are the times it sat on LNet's queues at the
 * credit gate, lnet_post_send_locked: for a peer tx credit (the next hop's
 * lpni_txq), for an NI tx credit (the NI's tq_delayed), and held by an
 * LNet delay rule. Times are CLOCK_MONOTONIC. Every field is read by CO-RE
 * from the lnet module's BTF; without it there is no record.
 */
struct les_rec_lnet {
	__u32 kind; /* LES_REC_LNET */
	__u16 msg_type; /* enum lnet_msg_type: ACK 0, PUT 1, GET 2, REPLY 3, HELLO 4 */
	__u16 flags; /* LES_LNET_F_* */
	__u64 ts_ns; /* lnet_finalize */
	__u64 commit_ns; /* committed for sending (lnet_msg_commit); else its first credit gate */
	__u64 send_ns; /* handed to the LND (ksocknal_send); 0: not seen */
	__u64 peer_wait_ns; /* waited for a peer tx credit */
	__u64 ni_wait_ns; /* waited for an NI tx credit */
	__u64 delay_ns; /* held by an LNet delay rule (lctl net_delay_add) */
	/*
	 * PUT, GET, ACK: the header's match bits; REPLY: the GET's it answers.
	 * A PtlRPC request's PUT carries its xid; a bulk's, the request's mbits.
	 */
	__u64 match_bits;
	__u32 len; /* msg_len: payload bytes */
	__s32 status; /* lnet_finalize's status: 0 or a negative errno */
	__s32 peer_credits; /* lpni_txcredits right after this message took one (< 0: it waited) */
	__s32 ni_credits; /* the NI queue's tq_credits right after this message took one */
	__u32 portal; /* PUT, GET: the portal index */
	__u32 tid; /* the thread that finalized it */
	struct les_lnet_nid ni; /* the NI it went out on (msg_txni->ni_nid) */
	struct les_lnet_nid peer; /* the next hop (msg_txpeer->lpni_nid) */
	struct les_lnet_nid target; /* the final destination (msg_target.nid) */
	char ifname[LES_COMM_LEN]; /* the NI's interface (ni_interface), with LES_LNET_F_IFNAME */
};

#define LES_LNET_F_PEER_CREDIT 0x1 /* peer_credits is valid (the peer gate was seen taken) */
#define LES_LNET_F_NI_CREDIT   0x2 /* ni_credits is valid */
#define LES_LNET_F_COMMIT      0x4 /* commit_ns is lnet_msg_commit's (else the first gate's) */
#define LES_LNET_F_SENT	       0x8 /* send_ns is valid */
#define LES_LNET_F_NIDS	       0x10 /* ni, peer and target are valid */
#define LES_LNET_F_IFNAME      0x20 /* ifname is valid */
#define LES_LNET_F_MATCH       0x40 /* match_bits and portal are valid */
#define LES_LNET_F_ROUTED      0x80 /* sent through a router: peer is not target */

/* pb_flags bits the server record names (lustre_idl.h). */
#define LES_MSG_RESENT 0x0002
#define LES_MSG_REPLAY 0x0004

/* A notable event in a request's life (resend, expiry, ...). */
struct les_rec_rpc_event {
	__u32 kind; /* LES_REC_RPC_EVENT */
	__u16 proto;
	__u16 event; /* enum les_rpc_event */
	__u64 ts_ns;
	__u64 parent_op_id;
	__u64 req_id;
	__u64 cgroup_id;
	__u32 dev;
	__u32 opcode; /* valid with LES_RPC_F_OPCODE */
	__u32 flags; /* LES_RPC_F_* */
	__u32 worker_pid; /* thread the event happened in, when not the submitter */
	struct les_task task; /* submitter */
	char worker_comm[LES_COMM_LEN];
	/* sunrpc procedure, lower case; PtlRPC: the import's obd_name, with LES_RPC_F_TARGET */
	char name[LES_RPC_NAME_LEN];
};

/*
 * Process exec notice: env holds the start of the new program's raw
 * environment block. Userspace keeps only allowlisted variables of it.
 */
struct les_rec_proc {
	__u32 kind; /* LES_REC_PROC_EXEC */
	__u32 env_len; /* bytes valid in env */
	__u64 ts_ns;
	__u64 start_ns; /* task start time: with pid, the process identity */
	__u64 cgroup_id;
	__u32 pid;
	__u32 ppid;
	__u32 uid;
	__u32 flags;
	char comm[LES_COMM_LEN];
	char env[LES_ENV_MAX];
};

#define LES_PROC_F_ENV_TRUNCATED 0x1 /* the environment was longer than env */
#define LES_PROC_F_KTHREAD	 0x2

/* A new process (not a thread): it inherits its parent's attribution. */
struct les_rec_fork {
	__u32 kind; /* LES_REC_PROC_FORK */
	__u32 _pad;
	__u64 ts_ns;
	__u64 start_ns;
	__u32 pid;
	__u32 ppid;
};

/*
 * How the syscall access plane treats one syscall (map "syscalls", indexed
 * by syscall number, filled by userspace from the build's <sys/syscall.h>
 * so the BPF side needs no per-architecture syscall table).
 */
enum les_sys_target {
	LES_SYS_NONE = 0, /* not traced */
	LES_SYS_FD, /* fd_arg is an open file */
	LES_SYS_AT, /* (fd_arg dirfd, path_arg path) */
	LES_SYS_PATH, /* path_arg relative to the cwd */
};

#define LES_SYS_MAX 512 /* syscall numbers below this are traceable */

struct les_syscall_desc {
	__u8 target; /* enum les_sys_target */
	__u8 op; /* enum les_access_op */
	__s8 fd_arg; /* argument index of the fd or dirfd */
	__s8 path_arg; /* argument index of the path, -1 if none */
	__s8 flags_arg; /* argument kept for the exit (open flags), -1 if none */
	__u8 rmdir_flag; /* unlinkat: AT_REMOVEDIR in flags_arg makes it rmdir */
	__s8 stat_arg; /* argument index of the struct stat/statx it fills, -1 if none */
	__u8 stat_kind; /* enum les_stat_kind */
};

/* What a stat-family syscall writes, for reading st_dev at its exit. */
enum les_stat_kind {
	LES_STAT_NONE = 0,
	LES_STAT_STAT, /* struct stat: st_dev first, the new_encode_dev() form */
	LES_STAT_STATX, /* struct statx: stx_dev_major/minor at 136/140 */
};

/* An observed mount's point, for path syscalls (map mount_paths, index = mount slot). */
struct les_mount_path {
	__u32 len; /* bytes of path, without NUL; 0 = unused slot */
	__u32 dev;
	char path[LES_MOUNT_PATH_MAX];
};

/*
 * Function probes of the access plane (bpf/access_fn.bpf.h): a fixed set of
 * program slots, each aimed at one kernel function by userspace
 * (src/probe/fnprobes.c) and described to BPF by one les_fn_desc in .rodata.
 */
#define LES_FN_SLOTS 96

/* What the target argument points to; it leads to the superblock dev. */
enum les_fn_arg_kind {
	LES_FN_ARG_FILE = 0, /* struct file * */
	LES_FN_ARG_KIOCB, /* struct kiocb * */
	LES_FN_ARG_INODE, /* struct inode * */
	LES_FN_ARG_DENTRY, /* struct dentry * */
	LES_FN_ARG_PATH, /* const struct path * */
	LES_FN_ARG_KIND_MAX,
};

/* How the return value is read. */
enum les_fn_ret {
	LES_FN_RET_INT = 0, /* int: negative errno on failure */
	LES_FN_RET_LONG, /* long/ssize_t: negative errno on failure */
	LES_FN_RET_BYTES, /* ssize_t: bytes transferred or negative errno */
	LES_FN_RET_PTR, /* pointer: an error only in the IS_ERR range */
	LES_FN_RET_VOID,
	LES_FN_RET_MAX,
};

#define LES_FN_F_LOOKUP	     0x1 /* ->lookup: a negative dentry result is ENOENT */
#define LES_FN_F_ATOMIC_OPEN 0x2 /* ->atomic_open: op decided at exit */
#define LES_FN_F_CONTEXT     0x4 /* no record: gives requests made inside it their mount */
#define LES_FN_F_CAUSE	     0x8 /* a Lustre read or write: its task is the file's cause */

struct les_fn_desc {
	__u8 op; /* enum les_access_op */
	__u8 kind; /* enum les_fn_arg_kind of argument arg */
	__u8 arg; /* index of the target argument */
	__u8 ret; /* enum les_fn_ret */
	__u8 nargs; /* arguments of the function: fexit finds the return after them */
	__u8 aux_arg; /* LOOKUP: the dentry; ATOMIC_OPEN: the struct file * */
	__u8 flags_arg; /* ATOMIC_OPEN: the open flags */
	__u8 flags; /* LES_FN_F_* */
};

#endif /* LES_RECORD_H */
