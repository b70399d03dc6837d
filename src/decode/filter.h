/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Record filters: --op, --intent and --comm become constants of the BPF
 * programs (so a filtered op costs a compare, no ring buffer space);
 * --job is checked in userspace, after enrichment has found the job.
 *
 * --op and --intent name access ops. An access record passes when its op is
 * listed (--op) and its op's intent is listed (--intent). A request (rpc
 * record) passes when the access op it serves passes: each FUSE opcode
 * stands for one access op (READDIRPLUS for readdir, RELEASE and FLUSH for
 * close, ...); requests that serve no access op (init, forget, interrupt,
 * destroy, ...) are left out whenever --op or --intent is given.
 */
#ifndef LES_FILTER_H
#define LES_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LES_FUSE_OPCODE_BITS 128 /* opcodes with a bit in the BPF bitmap */

/* "read,write" -> *mask |= 1 << op. -EINVAL with the bad name in err. */
int les_filter_parse_ops(const char *list, uint32_t *mask, char *err, size_t errlen);
/* "data_read,sync" -> *mask |= 1 << intent. */
int les_filter_parse_intents(const char *list, uint32_t *mask, char *err, size_t errlen);

/* Access ops that pass --op (ops_mask) and --intent (intents_mask); 0 = no filter. */
uint32_t les_filter_access_ops(uint32_t ops_mask, uint32_t intents_mask);

/* The access op a FUSE opcode serves, or -1 when it serves none. */
int les_filter_fuse_op(unsigned int opcode);

/*
 * FUSE opcodes that pass, as a bitmap of LES_FUSE_OPCODE_BITS bits, and
 * whether opcodes above it pass (*high).
 */
void les_filter_fuse_opcodes(uint32_t access_ops, uint64_t bits[2], bool *high);

/* --comm NAME as the kernel stores comm: at most 15 bytes, NUL-padded to 16. */
int les_filter_comm(const char *name, uint64_t out[2]);

/* --job ID: does a record with job_id (NULL: none) pass? */
bool les_filter_job_passes(const char *want, const char *job_id);

#endif /* LES_FILTER_H */
