/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The record kinds: one row per kind of include/les_record.h, read by every
 * stage that needs to know which kinds exist (the consumer's size check and
 * accounting, the sinks that count by kind, the capture reader). A kind
 * without a row, or a row of size 0, is not a record the ring carries: the
 * consumer counts it as a decode error, and no sink files it under another.
 */
#ifndef LES_KINDS_H
#define LES_KINDS_H

#include <stdbool.h>
#include <stddef.h>
#include "les_record.h"

struct les_rec_kind_info {
	const char *name; /* the "type" its lines carry, its key in "records" */
	size_t size;	  /* its struct's size: a shorter record is corrupt; 0: not in the ring */
	/*
	 * A per-op record: formatted into a line, handed to the sinks and part
	 * of the stats identity. Otherwise a notice the enricher takes.
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

/* The per-op kind whose lines carry type name; LES_REC_NONE for any other. */
unsigned int les_rec_op_kind_by_name(const char *name);

#endif /* LES_KINDS_H */
