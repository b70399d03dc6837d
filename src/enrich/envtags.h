/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Allowlisted environment variables: job id and tags.
 *
 * A process' environment is read once (at exec, or from /proc/PID/environ
 * at start-up) as a raw block of NUL-separated KEY=VALUE entries. The block
 * may come straight from BPF: cut at LES_ENV_MAX bytes in the middle of an
 * entry, without a trailing NUL, with binary junk, duplicate keys, entries
 * without '='. les_env_extract() keeps the values of the allowlisted names
 * and nothing else: no other byte of the block is ever copied anywhere, so
 * a secret in the environment cannot leak into a cache, a log or a record.
 *
 * The allowlist is built once from the options:
 *   - the scheduler job variables, always (LES_ENV_JOB_VARS below),
 *   - each --job-env NAME (site job variables, tried after the built-in
 *     ones, in command-line order),
 *   - each --env-tag NAME.
 * Only the --env-tag names go into a record's "tags" object; the job
 * variables feed "job_id" only (a name given both ways does both).
 *
 * Duplicate keys: the first occurrence wins, as getenv() does.
 * Empty values are kept (a tag may be set and empty) but never make a job
 * id: an empty SLURM_JOB_ID is treated as absent.
 * Values are raw bytes (no NUL); they are not validated as UTF-8, so the
 * JSON writer must escape them.
 *
 * Nothing here allocates; les_env_extract() and les_env_job_id() are safe
 * on arbitrary input.
 */
#ifndef LES_ENVTAGS_H
#define LES_ENVTAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LES_ENV_NAME_MAX  64  /* longest allowlisted name + NUL */
#define LES_ENV_VALUE_MAX 128 /* longest kept value + NUL; longer ones are cut */
#define LES_ENV_USER_MAX  24  /* --job-env and --env-tag names together */
#define LES_ENV_ALLOW_MAX (LES_ENV_JOB_VARS + LES_ENV_USER_MAX)
#define LES_ENV_TAGS_MAX  16 /* values kept per process */

/*
 * Built-in scheduler variables, in job id priority order. Their index in
 * the allowlist is fixed: entry i of the allowlist is built-in variable i.
 */
enum les_env_job_var {
	LES_ENV_SLURM_JOB_ID = 0,
	LES_ENV_SLURM_JOBID,
	LES_ENV_PBS_JOBID,
	LES_ENV_LSB_JOBID,
	LES_ENV_LSB_JOBINDEX, /* array index, suffix of LSB_JOBID */
	LES_ENV_JOB_ID,	      /* SGE (and UGE/OGS) */
	LES_ENV_SGE_TASK_ID,  /* array task, suffix of JOB_ID */
	LES_ENV_FLUX_JOB_ID,
	LES_ENV_JOB_VARS,
};

/* What an allowlisted name is for. */
#define LES_ENV_ROLE_JOB  0x1 /* built-in scheduler variable */
#define LES_ENV_ROLE_SITE 0x2 /* --job-env: site job variable */
#define LES_ENV_ROLE_TAG  0x4 /* --env-tag: emitted in "tags" */

struct les_env_allow {
	unsigned int n; /* entries used */
	struct {
		uint8_t len;  /* of name */
		uint8_t role; /* LES_ENV_ROLE_* */
		char name[LES_ENV_NAME_MAX];
	} e[LES_ENV_ALLOW_MAX];
};

/* One kept value. */
struct les_env_value {
	uint8_t name_idx;	       /* index into les_env_allow.e */
	uint8_t truncated;	       /* value was cut: longer than kept, or block cut inside it */
	uint16_t len;		       /* bytes in value, without the NUL */
	char value[LES_ENV_VALUE_MAX]; /* NUL-terminated */
};

/*
 * The allowlisted values of one environment. If more than
 * LES_ENV_TAGS_MAX allowlisted names are present, those with the lowest
 * allowlist index (job variables first) are kept and `dropped` counts the
 * others.
 */
struct les_env_tags {
	uint8_t n;
	uint8_t dropped;
	struct les_env_value v[LES_ENV_TAGS_MAX];
};

/*
 * Build the allowlist from the --job-env and --env-tag names (either list
 * may be NULL with a count of 0). Names must be portable shell names
 * ([A-Za-z_][A-Za-z0-9_]*, shorter than LES_ENV_NAME_MAX). A name given
 * twice, or given both ways, gets one entry with both roles.
 * Returns 0, or -EINVAL / -E2BIG with a message in err.
 */
int les_env_allow_init(struct les_env_allow *a, const char *const *job_env, size_t n_job_env,
		       const char *const *env_tags, size_t n_tags, char *err, size_t errlen);

/* Index of name in the allowlist, or -1. */
int les_env_allow_find(const struct les_env_allow *a, const char *name, size_t len);

/*
 * Keep the allowlisted values of the environment block (len bytes, NUL
 * separators, trailing NUL optional). out is fully overwritten.
 */
void les_env_extract(const struct les_env_allow *a, const char *block, size_t len,
		     struct les_env_tags *out);

/* The kept value of allowlist entry idx, or NULL. */
const struct les_env_value *les_env_get(const struct les_env_tags *t, unsigned int idx);

/* True when value v belongs in the record's "tags" object. */
bool les_env_is_tag(const struct les_env_allow *a, const struct les_env_value *v);

/* The name of value v. */
const char *les_env_value_name(const struct les_env_allow *a, const struct les_env_value *v);

/*
 * Derive the job id, first non-empty of: SLURM_JOB_ID, SLURM_JOBID,
 * PBS_JOBID, LSB_JOBID (as "ID[INDEX]" when LSB_JOBINDEX is a non-zero
 * number), JOB_ID (as "ID.TASK" when SGE_TASK_ID is set, non-empty and not
 * "undefined"), FLUX_JOB_ID, then the --job-env names in order.
 * Writes a NUL-terminated id into out.
 * A value that was cut (the block ended inside it, or it was longer than
 * LES_ENV_VALUE_MAX - 1), an id with a cut array index, or an id longer
 * than cap - 1, is never a job id (it would name another job): it is
 * skipped as if absent, and *cut (may be NULL) is set true.
 * Returns 0 if found, -ENOENT if none (out is then ""), -EINVAL if cap is 0.
 */
int les_env_job_id(const struct les_env_allow *a, const struct les_env_tags *t, char *out,
		   size_t cap, bool *cut);

#endif /* LES_ENVTAGS_H */
