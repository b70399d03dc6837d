/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one rule of which waits count: what part of a thread's waiting an
 * rpc record's time is. Waits nest (a lock enqueue holds its request's
 * queue_wait and its grant wait), so a sum over records counts a
 * nanosecond twice unless it takes one level. Every sink that counts wait
 * time asks here, and says which level it takes:
 * - the aggregate windows take each record's own level, the outermost: a
 *   nested wait's time is in its parent's group already;
 * - Prometheus' rpc_wait families take the innermost, disjoint pieces (a
 *   queue_wait, a grant wait, a FUSE or sunrpc request), never a whole
 *   that holds them, nor a PtlRPC request record (no thread waits for an
 *   asynchronous one; a synchronous one's time is its queue_wait's).
 */
#ifndef LES_WAITS_H
#define LES_WAITS_H

#include <stdbool.h>
#include "model/event.h"

enum les_wait_part {
	LES_WAIT_NONE = 0, /* not an rpc record */
	LES_WAIT_PIECE,	   /* a thread's own wait, inside no other */
	LES_WAIT_INNER,	   /* a piece inside another wait (a lock enqueue's) */
	LES_WAIT_NESTED,   /* inside another wait, and no piece of its own */
	LES_WAIT_WHOLE,	   /* a lock enqueue, a PtlRPC request: its pieces hold its time */
	LES_WAIT_PART_MAX,
};

/* What part of a thread's waiting ev's time is. */
enum les_wait_part les_wait_part(const struct les_event *ev);

/* The outermost level: no wait inside another (the aggregate windows). */
bool les_wait_is_outer(enum les_wait_part part);

/* The innermost, disjoint pieces (Prometheus' rpc_wait families). */
bool les_wait_is_piece(enum les_wait_part part);

#endif /* LES_WAITS_H */
