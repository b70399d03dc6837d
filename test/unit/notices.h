/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Process notices as the BPF side sends them, for the unit tests that feed
 * the consumer or the enricher: one builder, so every test's exec record
 * has the same layout rules (env NUL-separated, env_len counting its
 * bytes).
 */
#ifndef LES_TEST_NOTICES_H
#define LES_TEST_NOTICES_H

#include <stdio.h>
#include <string.h>
#include "les_record.h"

/* An exec of pid (child of ppid) with env, len bytes of it, and comm (may be NULL). */
static inline void les_test_exec(struct les_rec_proc *p, uint32_t pid, uint32_t ppid,
				 const char *env, size_t len, const char *comm)
{
	memset(p, 0, sizeof(*p));
	p->kind = LES_REC_PROC_EXEC;
	p->pid = pid;
	p->ppid = ppid;
	if (len > sizeof(p->env))
		len = sizeof(p->env);
	memcpy(p->env, env, len);
	p->env_len = (uint32_t)len;
	if (comm)
		strncpy(p->comm, comm, sizeof(p->comm) - 1);
}

/* The same with SLURM_JOB_ID=job as its whole environment. */
static inline void les_test_exec_job(struct les_rec_proc *p, uint32_t pid, uint32_t ppid,
				     const char *job, const char *comm)
{
	char env[64];
	int n = snprintf(env, sizeof(env), "SLURM_JOB_ID=%s", job);

	les_test_exec(p, pid, ppid, env, (size_t)n + 1, comm);
}

#endif /* LES_TEST_NOTICES_H */
