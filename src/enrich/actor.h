/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Actor class of a task: user, batch_job, system_daemon, client_worker.
 *
 * Table-driven. The first matching rule wins, in this order:
 *   1. --actor-rule CLASS=GLOB rules, in command-line order;
 *   2. client_worker: the filesystem clients' own kernel threads
 *      (ptlrpcd*, ldlm_*, ll_* (kernel threads only), LNet's socknal_*,
 *      kiblnd_*, lnet_*, rpciod, nfsiod, xprtiod, NFSv4 callback threads),
 *      and kworker* when the record says the worker does filesystem work
 *      (LES_ACTOR_F_FS_WORK);
 *   3. batch_job: any task with a job id (LES_ACTOR_F_JOB), then the
 *      scheduler daemons (slurmstepd, slurmd, pbs_mom, sge_execd,
 *      sge_shepherd, sbatchd, res, flux-broker, ...);
 *   4. system_daemon: known daemons (systemd*, sshd, cron, sssd*, names
 *      ending in "exporter", ...), and any other kernel thread: a kernel
 *      thread is the system's own work, never a user's;
 *   5. user: everything else.
 *
 * GLOBs are fnmatch(3)-style, matched against the raw comm (at most 15
 * bytes, so a long daemon name only matches by its first 15 bytes):
 * '*' any run of bytes ('/' included), '?' one byte, '[...]' a set with
 * ranges and '!' or '^' negation, '\' quotes the next byte.
 * Matching is byte-wise, locale-free and allocation-free.
 */
#ifndef LES_ACTOR_H
#define LES_ACTOR_H

#include <stdbool.h>
#include <stddef.h>

enum les_actor_type {
	LES_ACTOR_USER = 0,
	LES_ACTOR_BATCH_JOB,
	LES_ACTOR_SYSTEM_DAEMON,
	LES_ACTOR_CLIENT_WORKER,
	LES_ACTOR_MAX,
};

/* What the caller knows about the task. */
#define LES_ACTOR_F_JOB	    0x1 /* the task has a job id */
#define LES_ACTOR_F_KTHREAD 0x2 /* kernel thread (PF_KTHREAD) */
#define LES_ACTOR_F_FS_WORK 0x4 /* the record is filesystem work done on someone's behalf */

#define LES_ACTOR_GLOB_MAX  64 /* longest glob + NUL */
#define LES_ACTOR_RULES_MAX 64

struct les_actor_rule {
	unsigned char type; /* enum les_actor_type */
	char glob[LES_ACTOR_GLOB_MAX];
};

/* The --actor-rule rules; zero-initialized = none. */
struct les_actor_rules {
	unsigned int n;
	struct les_actor_rule r[LES_ACTOR_RULES_MAX];
};

/*
 * Parse one --actor-rule CLASS=GLOB and append it. CLASS is one of the
 * names below; GLOB is non-empty, shorter than LES_ACTOR_GLOB_MAX, with
 * balanced brackets and no trailing '\'.
 * Returns 0, or -EINVAL / -E2BIG with a message in err.
 */
int les_actor_rules_add(struct les_actor_rules *r, const char *spec, char *err, size_t errlen);

/*
 * Classify a task by comm (len bytes, or up to a NUL) and LES_ACTOR_F_*
 * flags. rules may be NULL.
 */
enum les_actor_type les_actor_classify(const struct les_actor_rules *rules, const char *comm,
				       size_t len, unsigned int flags);

/* "user", "batch_job", "system_daemon", "client_worker"; "unknown" past the end. */
const char *les_actor_name(unsigned int type);

/* enum value of a name, or -EINVAL. */
int les_actor_from_name(const char *name, size_t len);

/* fnmatch-style match of str (len bytes) against a NUL-terminated glob. */
bool les_glob_match(const char *glob, const char *str, size_t len);

#endif /* LES_ACTOR_H */
