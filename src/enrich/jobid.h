/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --jobid-name FORMAT: the job id as a Lustre client would send it, so
 * records join with the servers' job_stats. Lustre's jobid_name codes:
 *
 *   %j  job id (from the environment or the cgroup)
 *   %e  executable name (comm)
 *   %u  uid
 *   %g  gid
 *   %h  hostname
 *   %H  short hostname (up to the first '.')
 *   %p  pid
 *   %%  a literal '%' (not in Lustre, which drops it)
 *
 * Like Lustre's jobid_interpret_string(): other bytes are copied, except
 * whitespace, which is skipped; an unknown code expands to nothing; a
 * lone '%' at the end ends the expansion; %j with no job expands to
 * nothing, so "%j" gives "" (the record's job_id is then null) and
 * "%e.%j" gives "cat.". Expanded values are copied as they are (a comm
 * with a space keeps it). The result is cut to LES_JOBID_SIZE - 1 bytes,
 * Lustre's LUSTRE_JOBID_SIZE.
 *
 * Option parsing is stricter than Lustre: les_jobid_fmt_check() rejects
 * unknown codes and a trailing '%', which Lustre would silently drop, and
 * formats Lustre would not accept (LUSTRE_JOBID_SIZE bytes or longer).
 */
#ifndef LES_JOBID_H
#define LES_JOBID_H

#include <stddef.h>
#include <stdint.h>

#define LES_JOBID_SIZE	      32 /* Lustre's LUSTRE_JOBID_SIZE, NUL included */
#define LES_JOBID_DEFAULT_FMT "%j"

/* The task the job id is for. NULL strings expand to nothing. */
struct les_jobid_ctx {
	const char *job_id;
	const char *comm; /* read up to comm_len bytes or a NUL */
	size_t comm_len;
	const char *hostname;
	uint32_t uid;
	uint32_t gid;
	uint32_t pid;
};

/* 0 if fmt is a valid --jobid-name, else -EINVAL with a message in err. */
int les_jobid_fmt_check(const char *fmt, char *err, size_t errlen);

/*
 * Expand fmt into out (cap bytes, NUL-terminated, cut to
 * min(cap, LES_JOBID_SIZE) - 1). Returns the length written; 0 means no
 * job id. Safe on any fmt, checked or not.
 */
size_t les_jobid_format(const char *fmt, const struct les_jobid_ctx *c, char *out, size_t cap);

#endif /* LES_JOBID_H */
