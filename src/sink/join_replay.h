/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The join of saved captures (the `join` subcommand): client and server
 * records written on different nodes, or on one, offered to the
 * consumer's join (model/rpcjoin.h) as the consumer offers the ring's
 * records, and each pair written as the consumer writes it, an rpc_join
 * line (les_format_rpc_join). At the end one join_counts line: joined,
 * and by side the records that waited in vain, had no key or were a
 * duplicate, so that nothing is lost silently.
 *
 * Records wait without an age limit (a capture's order is not the ring's
 * and its times are not this clock's); the table's bound still holds, and
 * a record it evicts is counted unjoined. PtlRPC only: a sunrpc line is
 * counted as skipped.
 */
#ifndef LES_JOIN_REPLAY_H
#define LES_JOIN_REPLAY_H
#include <stdint.h>
#include <stdio.h>
#include "model/rpcjoin.h"

struct les_join_replay_config {
	const char *const *inputs; /* JSON Lines files, gzip or not; "-": stdin */
	size_t n_inputs;
	FILE *out;
	const char *host; /* the rpc_join lines' host */
	size_t slots;	  /* the join table's size (0: the default) */
};

struct les_join_replay_stats {
	struct les_rpcjoin_counts counts;
	uint64_t lines;	  /* read, of every type */
	uint64_t bad;	  /* not a JSON object, or a request line without ts */
	uint64_t skipped; /* requests and server records of another protocol */
	uint64_t cut;	  /* rpc_join lines that did not fit the line buffer */
};

/* 0, or -1 with a message in err (a file that cannot be read, a write that failed). */
int les_join_replay_run(const struct les_join_replay_config *cfg, struct les_join_replay_stats *st,
			char *err, size_t errlen);

#endif /* LES_JOIN_REPLAY_H */
