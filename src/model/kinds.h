/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The record kinds: one row per kind of include/les_record.h, read by every
 * stage that needs to know which kinds exist (the consumer's size check,
 * accounting and decoding, the formatter, the sinks that count by kind or
 * by shape, the capture reader). A kind without a row, or a row of size 0,
 * is not a record the ring carries: the consumer counts it as a decode
 * error, and no sink files it under another.
 */
#ifndef LES_KINDS_H
#define LES_KINDS_H

#include <stdbool.h>
#include <stddef.h>
#include "les_record.h"

/*
 * What a record is to the stages after decoding: which members of struct
 * les_event it sets, so how a sink counts it. A sink branches on the shape,
 * never on the kind: a new kind of a known shape is counted by every sink.
 */
enum les_rec_shape {
	LES_SHAPE_NOTICE = 0, /* not a per-op record: a notice the enricher takes */
	LES_SHAPE_ACCESS,     /* a file operation: op, latency, bytes, rpc_count, rpc_wait_ns */
	LES_SHAPE_REQUEST, /* a wait of the RPC plane: op, proto, rpc_op, latency, the wait ids */
	LES_SHAPE_EVENT,   /* an RPC event: event, proto; no latency */
	LES_SHAPE_SERVER,  /* a request a server handled (srv); no sink counts it yet */
	LES_SHAPE_NET,	   /* an LNet message this node sent (lnet); no sink counts it yet */
	LES_SHAPE_MAX,
};

/*
 * The table, once, as a list each layer expands for the columns it needs:
 *   X(kind, name, size, shape, formatter, decoder)
 * kind: its tag; name: the "type" its lines carry, its key in "records";
 * size: its struct's size (a shorter record is corrupt), 0: never in the ring;
 * shape: above; formatter: the format/ function that lays out its line
 * (les_rec_format_fn, format/format.h), NULL for a notice; decoder: the
 * consumer's function that makes its struct les_event (pipeline/consumer.c).
 * model/ reads the first four columns; format/ expands the formatter's and
 * pipeline/ the decoder's, so that no layer includes one above it.
 */
#define LES_REC_KINDS(X)                                                                          \
	X(LES_REC_ACCESS, "access", sizeof(struct les_rec_access), LES_SHAPE_ACCESS,              \
	  les_format_access_line, on_access)                                                      \
	X(LES_REC_RPC, "rpc", sizeof(struct les_rec_rpc), LES_SHAPE_REQUEST, les_format_rpc_line, \
	  on_rpc)                                                                                 \
	X(LES_REC_RPC_EVENT, "rpc_event", sizeof(struct les_rec_rpc_event), LES_SHAPE_EVENT,      \
	  les_format_rpc_event_line, on_rpc_event)                                                \
	X(LES_REC_PROC_EXEC, "proc_exec", sizeof(struct les_rec_proc), LES_SHAPE_NOTICE, NULL,    \
	  on_exec)                                                                                \
	/* Reserved: named in the stats record's counts, never in the ring. */                    \
	X(LES_REC_PROC_EXIT, "proc_exit", 0, LES_SHAPE_NOTICE, NULL, NULL)                        \
	X(LES_REC_PROC_FORK, "proc_fork", sizeof(struct les_rec_fork), LES_SHAPE_NOTICE, NULL,    \
	  on_fork)                                                                                \
	X(LES_REC_SRV, "srv", sizeof(struct les_rec_srv), LES_SHAPE_SERVER, les_format_srv_line,  \
	  on_srv)                                                                                 \
	X(LES_REC_LNET, "lnet", sizeof(struct les_rec_lnet), LES_SHAPE_NET, les_format_lnet_line, \
	  on_lnet)

struct les_rec_kind_info {
	const char *name; /* the "type" its lines carry, its key in "records" */
	size_t size;	  /* its struct's size: a shorter record is corrupt; 0: not in the ring */
	enum les_rec_shape shape;
	/*
	 * A per-op record (any shape but a notice): formatted into a line,
	 * handed to the sinks and part of the stats identity.
	 */
	bool op_record;
};

/* The row of kind; NULL for a kind no row names. */
const struct les_rec_kind_info *les_rec_kind_info(unsigned int kind);

/* "access", "rpc", ..., "proc_fork"; NULL for a kind no row names. */
const char *les_rec_kind_name(unsigned int kind);

/* Whether a record of kind may come from the ring with size bytes. */
bool les_rec_kind_size_ok(unsigned int kind, size_t size);

/* A per-op record's kind (see op_record). */
bool les_rec_kind_is_op(unsigned int kind);

/* The shape of kind; LES_SHAPE_NOTICE for a kind no row names. */
enum les_rec_shape les_rec_kind_shape(unsigned int kind);

/* The per-op kind whose lines carry type name; LES_REC_NONE for any other. */
unsigned int les_rec_op_kind_by_name(const char *name);

#endif /* LES_KINDS_H */
