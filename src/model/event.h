/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A decoded and enriched record as the later stages (aggregation, Kafka,
 * Prometheus) see it: every field a JSON line carries, as C values, plus
 * the line itself. Strings point into the consumer's storage and are valid
 * only during the call that receives the event.
 */
#ifndef LES_EVENT_H
#define LES_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "les_record.h"

struct les_join_view; /* model/rpcjoin.h */

struct les_event {
	uint32_t kind; /* a per-op kind of model/kinds.h; what it sets: its shape */
	/* An rpc_join (type "rpc_join"), for the join sinks only: its keys and layers. */
	const struct les_join_view *join;
	const char *type; /* "access", "rpc", "rpc_event" */
	uint64_t ts_epoch_ns; /* completion time */

	/* where */
	const char *host;
	const char *fs_type; /* NULL when the mount is no longer observed */
	const char *fs;
	const char *mount;

	/* what */
	const char *op; /* access op, RPC op ("write", "queue_wait", ...) */
	const char *access_intent; /* access records only, else NULL */
	const char *event; /* rpc_event records only, else NULL */
	const char *proto; /* rpc and rpc_event records: "fuse", "sunrpc", ... */
	/* the same as enums, for the stages that count by them */
	unsigned int access_op; /* access records: enum les_access_op */
	unsigned int proto_id; /* rpc and rpc_event records: enum les_rpc_proto */
	unsigned int rpc_op; /* rpc records: enum les_rpc_op */
	bool nested_wait;    /* rpc records: a wait inside another (its time is the parent's) */
	unsigned int event_id; /* rpc_event records: enum les_rpc_event */
	uint64_t op_id; /* access records */
	uint64_t parent_op_id; /* rpc records, 0 if none */
	uint64_t latency_ns;
	uint64_t bytes;
	int err; /* positive errno, 0 on success */
	const char *errno_class; /* NULL on success */
	uint64_t rpc_count; /* access records: requests sent inside the op */
	uint64_t rpc_wait_ns;
	uint64_t backlog_ns, rtt_ns; /* sunrpc rpc records: queued, and on the wire */

	/*
	 * The request's identity, for the stages that link records (a tree of
	 * spans): each valid only where the line carries it, else 0 or NULL.
	 */
	uint64_t req_id; /* rpc and rpc_event records: FUSE unique, sunrpc xid, PtlRPC id */
	uint64_t wait_id; /* rpc records of a wait (queue_wait, lock_*) */
	uint64_t parent_wait_id; /* the wait it runs inside, 0 if none */
	uint64_t xid; /* PtlRPC request records, with has_xid */
	bool has_xid;
	unsigned int opcode; /* the protocol's opcode or procedure, with has_opcode */
	bool has_opcode;
	const char *target; /* PtlRPC: the import's obd_name, target_len bytes; NULL if unknown */
	size_t target_len;
	const char *nid; /* PtlRPC request records: the import's peer NID as text; NULL if unknown */

	/* who */
	uint32_t pid, tid, uid, gid;
	const char *comm;
	const char *username; /* NULL when the uid has no name */
	const char *process; /* normalized process name */
	const char *actor_type;
	/*
	 * The actor class by the process's name alone, its job not counted
	 * (lustre-ebpf-exporter's meaning; NULL: as actor_type).
	 */
	const char *actor_by_name;
	const char *job_id; /* NULL when none */
	const char *job_source; /* "env", "cgroup", "inherited" or NULL */
	const char *worker_comm; /* rpc records sent by another thread, else NULL */

	/* the record as written to the file sinks, with its '\n' */
	const char *line;
	size_t line_len;
};

#endif /* LES_EVENT_H */
