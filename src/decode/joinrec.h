/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A saved line back into the record the join reads (model/rpcjoin.h): a
 * PtlRPC client request (`rpc`, op `request`) into a struct les_rec_rpc, a
 * PtlRPC server record (`srv`) into a struct les_rec_srv, so that captures
 * written on two nodes (the client's, the servers') join as the consumer
 * joins both sides on one node, by the same functions.
 *
 * Only what the join and its line read is filled. Times come back on one
 * clock, the line's wall clock (format with mono_to_epoch_ns 0): a
 * server's steps are rebuilt from its durations, arrival = ts - handle -
 * queue, so les_srv_times gives back the durations the line carries.
 */
#ifndef LES_JOINREC_H
#define LES_JOINREC_H
#include <stdbool.h>
#include <stddef.h>
#include "les_record.h"

enum les_joinrec_kind {
	LES_JOINREC_OTHER = 0, /* another type, or a request of another protocol */
	LES_JOINREC_CLIENT,    /* filled *c */
	LES_JOINREC_SERVER,    /* filled *s */
	LES_JOINREC_SKIPPED,   /* a sunrpc request or server record: a join not read back here */
	LES_JOINREC_BAD = -1,  /* not a JSON object, or a PtlRPC line without ts */
};

/* An LNet NID as les_lnet_nid_str writes it ("192.168.77.2@tcp", "0@lo"); false if not one. */
bool les_lnet_nid_parse(const char *s, struct les_lnet_nid *nid);

/* One JSON line: which side it is, with its record zeroed then filled. */
enum les_joinrec_kind les_joinrec_parse(const char *line, struct les_rec_rpc *c,
					struct les_rec_srv *s);

#endif /* LES_JOINREC_H */
