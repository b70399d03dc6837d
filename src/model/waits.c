// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The one rule of which waits count (see waits.h). */
#include "model/kinds.h"
#include "model/waits.h"

/*
 * PtlRPC's queue_wait and LDLM's grant wait are pieces wherever they run;
 * inside a lock enqueue they are its pieces. Any other PtlRPC or LDLM
 * record holds pieces or none: an enqueue, a request record. FUSE and
 * sunrpc requests are pieces unless nested.
 */
static enum les_wait_part ptlrpc_ldlm_part(const struct les_event *ev)
{
	bool piece = ev->proto_id == LES_PROTO_PTLRPC ? ev->rpc_op == LES_RPC_OP_QUEUE_WAIT
						      : ev->rpc_op == LES_RPC_OP_LOCK_COMPLETION;

	if (piece)
		return ev->nested_wait ? LES_WAIT_INNER : LES_WAIT_PIECE;
	return ev->nested_wait ? LES_WAIT_NESTED : LES_WAIT_WHOLE;
}

enum les_wait_part les_wait_part(const struct les_event *ev)
{
	if (les_rec_kind_shape(ev->kind) != LES_SHAPE_REQUEST)
		return LES_WAIT_NONE;
	switch (ev->proto_id) {
	case LES_PROTO_PTLRPC:
	case LES_PROTO_LDLM:
		return ptlrpc_ldlm_part(ev);
	default:
		return ev->nested_wait ? LES_WAIT_NESTED : LES_WAIT_PIECE;
	}
}

bool les_wait_is_outer(enum les_wait_part part)
{
	return part != LES_WAIT_INNER && part != LES_WAIT_NESTED;
}

bool les_wait_is_piece(enum les_wait_part part)
{
	return part == LES_WAIT_PIECE || part == LES_WAIT_INNER;
}
