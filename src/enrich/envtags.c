// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Allowlisted environment variables: job id and tags. See envtags.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "enrich/envtags.h"

static const char *const job_var_names[LES_ENV_JOB_VARS] = {
	[LES_ENV_SLURM_JOB_ID] = "SLURM_JOB_ID", [LES_ENV_SLURM_JOBID] = "SLURM_JOBID",
	[LES_ENV_PBS_JOBID] = "PBS_JOBID",	 [LES_ENV_LSB_JOBID] = "LSB_JOBID",
	[LES_ENV_LSB_JOBINDEX] = "LSB_JOBINDEX", [LES_ENV_JOB_ID] = "JOB_ID",
	[LES_ENV_SGE_TASK_ID] = "SGE_TASK_ID",	 [LES_ENV_FLUX_JOB_ID] = "FLUX_JOB_ID",
};

static bool is_name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

static int check_name(const char *name, const char *opt, char *err, size_t errlen)
{
	size_t len;

	if (!name || !*name) {
		snprintf(err, errlen, "%s: empty variable name", opt);
		return -EINVAL;
	}
	len = strlen(name);
	if (len >= LES_ENV_NAME_MAX) {
		snprintf(err, errlen, "%s: variable name longer than %d characters", opt,
			 LES_ENV_NAME_MAX - 1);
		return -EINVAL;
	}
	if (!is_name_start(name[0])) {
		snprintf(err, errlen, "%s '%s': a variable name starts with a letter or '_'", opt,
			 name);
		return -EINVAL;
	}
	for (size_t i = 1; i < len; i++) {
		if (!is_name_char(name[i])) {
			snprintf(err, errlen,
				 "%s '%s': a variable name holds only letters, digits and '_'", opt,
				 name);
			return -EINVAL;
		}
	}
	return 0;
}

int les_env_allow_find(const struct les_env_allow *a, const char *name, size_t len)
{
	for (unsigned int i = 0; i < a->n; i++) {
		if (a->e[i].len == len && memcmp(a->e[i].name, name, len) == 0)
			return (int)i;
	}
	return -1;
}

/* Add name with role, or add the role to an existing entry. */
static int allow_add(struct les_env_allow *a, const char *name, uint8_t role, const char *opt,
		     char *err, size_t errlen)
{
	size_t len = strlen(name);
	int idx = les_env_allow_find(a, name, len);

	if (idx >= 0) {
		a->e[idx].role |= role;
		return 0;
	}
	if (a->n >= LES_ENV_ALLOW_MAX) {
		snprintf(err, errlen, "%s '%s': more than %d --job-env and --env-tag names", opt,
			 name, LES_ENV_USER_MAX);
		return -E2BIG;
	}
	memcpy(a->e[a->n].name, name, len + 1);
	a->e[a->n].len = (uint8_t)len;
	a->e[a->n].role = role;
	a->n++;
	return 0;
}

static int allow_add_list(struct les_env_allow *a, const char *const *names, size_t n, uint8_t role,
			  const char *opt, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		int rc = check_name(names[i], opt, err, errlen);

		if (rc)
			return rc;
		rc = allow_add(a, names[i], role, opt, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

int les_env_allow_init(struct les_env_allow *a, const char *const *job_env, size_t n_job_env,
		       const char *const *env_tags, size_t n_tags, char *err, size_t errlen)
{
	int rc;

	memset(a, 0, sizeof(*a));
	for (unsigned int i = 0; i < LES_ENV_JOB_VARS; i++) {
		size_t len = strlen(job_var_names[i]);

		memcpy(a->e[i].name, job_var_names[i], len + 1);
		a->e[i].len = (uint8_t)len;
		a->e[i].role = LES_ENV_ROLE_JOB;
	}
	a->n = LES_ENV_JOB_VARS;

	/* Site job variables first: a lower index is a higher keep priority. */
	rc = allow_add_list(a, job_env, n_job_env, LES_ENV_ROLE_SITE, "--job-env", err, errlen);
	if (rc)
		return rc;
	return allow_add_list(a, env_tags, n_tags, LES_ENV_ROLE_TAG, "--env-tag", err, errlen);
}

/*
 * Make room for a value of allowlist entry idx in a full set: evict the
 * entry with the highest allowlist index if it is above idx.
 */
static struct les_env_value *slot_for(struct les_env_tags *t, unsigned int idx)
{
	unsigned int worst = 0;

	if (t->n < LES_ENV_TAGS_MAX)
		return &t->v[t->n++];

	for (unsigned int i = 1; i < t->n; i++) {
		if (t->v[i].name_idx > t->v[worst].name_idx)
			worst = i;
	}
	if (t->dropped < UINT8_MAX)
		t->dropped++;
	if (t->v[worst].name_idx < idx)
		return NULL;
	memset(&t->v[worst], 0, sizeof(t->v[worst]));
	return &t->v[worst];
}

/*
 * Keep the value of one entry; val_len bytes at val. cut: the block ended
 * inside this entry, so the value may be incomplete.
 */
static void keep_value(struct les_env_tags *t, unsigned int idx, const char *val, size_t val_len,
		       bool cut)
{
	struct les_env_value *v = slot_for(t, idx);

	if (!v)
		return;
	v->name_idx = (uint8_t)idx;
	v->truncated = cut;
	if (val_len > LES_ENV_VALUE_MAX - 1) {
		val_len = LES_ENV_VALUE_MAX - 1;
		v->truncated = 1;
	}
	memcpy(v->value, val, val_len);
	v->value[val_len] = '\0';
	v->len = (uint16_t)val_len;
}

void les_env_extract(const struct les_env_allow *a, const char *block, size_t len,
		     struct les_env_tags *out)
{
	/* One bit per allowlist entry: seen already, later duplicates lose. */
	uint64_t seen = 0;
	size_t pos = 0;

	_Static_assert(LES_ENV_ALLOW_MAX <= 64, "seen bitmap too small");
	memset(out, 0, sizeof(*out));
	if (!block)
		return;

	while (pos < len) {
		const char *entry = block + pos;
		const char *nul = memchr(entry, '\0', len - pos);
		size_t entry_len = nul ? (size_t)(nul - entry) : len - pos;
		const char *eq = memchr(entry, '=', entry_len);
		int idx;

		pos += entry_len + 1;
		if (!eq)
			continue; /* no '=': not a variable */
		idx = les_env_allow_find(a, entry, (size_t)(eq - entry));
		if (idx < 0 || (seen & (1ULL << idx)))
			continue;
		seen |= 1ULL << idx;
		keep_value(out, (unsigned int)idx, eq + 1, entry_len - (size_t)(eq - entry) - 1,
			   !nul);
	}
}

const struct les_env_value *les_env_get(const struct les_env_tags *t, unsigned int idx)
{
	unsigned int n = t->n < LES_ENV_TAGS_MAX ? t->n : LES_ENV_TAGS_MAX;

	for (unsigned int i = 0; i < n; i++) {
		if (t->v[i].name_idx == idx)
			return &t->v[i];
	}
	return NULL;
}

bool les_env_is_tag(const struct les_env_allow *a, const struct les_env_value *v)
{
	return v->name_idx < a->n && (a->e[v->name_idx].role & LES_ENV_ROLE_TAG);
}

const char *les_env_value_name(const struct les_env_allow *a, const struct les_env_value *v)
{
	return v->name_idx < a->n ? a->e[v->name_idx].name : "";
}

/*
 * A job id must be the value the scheduler set, or nothing: a value cut by
 * the environment read (the block ended inside it, or it was longer than
 * LES_ENV_VALUE_MAX - 1) would name another job. Such a value is skipped,
 * as if absent, and *cut tells the caller.
 */
struct job_pick {
	const struct les_env_tags *t;
	bool cut;
};

static bool is_cut(struct job_pick *j, unsigned int idx)
{
	const struct les_env_value *v = les_env_get(j->t, idx);

	if (!v || !v->truncated)
		return false;
	j->cut = true;
	return true;
}

/* Non-empty, whole kept value of entry idx, or NULL. */
static const char *nonempty(struct job_pick *j, unsigned int idx)
{
	const struct les_env_value *v = les_env_get(j->t, idx);

	return v && !is_cut(j, idx) && v->len ? v->value : NULL;
}
static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
	}
	return true;
}

/* LSF array index: a number other than 0 (LSF sets 0 outside arrays). */
static const char *lsf_index(struct job_pick *j)
{
	const char *idx = nonempty(j, LES_ENV_LSB_JOBINDEX);

	if (!idx || !all_digits(idx) || strspn(idx, "0") == strlen(idx))
		return NULL;
	return idx;
}

/* SGE array task: SGE sets "undefined" outside arrays. */
static const char *sge_task(struct job_pick *j)
{
	const char *task = nonempty(j, LES_ENV_SGE_TASK_ID);

	if (!task || strcmp(task, "undefined") == 0)
		return NULL;
	return task;
}

/*
 * Write id, followed by open + sfx + close when sfx is set. An id that does
 * not fit in cap is not written (cut, it would be another job's).
 */
static bool write_id(struct job_pick *j, char *out, size_t cap, const char *id, const char *open,
		     const char *sfx, const char *close)
{
	int n;

	if (sfx)
		n = snprintf(out, cap, "%s%s%s%s", id, open, sfx, close);
	else
		n = snprintf(out, cap, "%s", id);
	if (n >= 0 && (size_t)n < cap)
		return true;
	out[0] = '\0';
	j->cut = true;
	return false;
}

/* The value of entry idx as the job id, if it is there and whole. */
static bool try_plain(struct job_pick *j, char *out, size_t cap, unsigned int idx)
{
	const char *id = nonempty(j, idx);

	return id && write_id(j, out, cap, id, "", NULL, "");
}

/*
 * id + open + suffix + close: a cut suffix (an array index) makes the whole
 * id cut, as the id without it is the array's, not the task's.
 */
static bool try_suffixed(struct job_pick *j, char *out, size_t cap, unsigned int idx,
			 const char *open, unsigned int sfx_idx,
			 const char *(*sfx)(struct job_pick *), const char *close)
{
	const char *id = nonempty(j, idx);

	return id && !is_cut(j, sfx_idx) && write_id(j, out, cap, id, open, sfx(j), close);
}

static int job_id(struct job_pick *j, const struct les_env_allow *a, char *out, size_t cap)
{
	if (try_plain(j, out, cap, LES_ENV_SLURM_JOB_ID) ||
	    try_plain(j, out, cap, LES_ENV_SLURM_JOBID) ||
	    try_plain(j, out, cap, LES_ENV_PBS_JOBID) ||
	    try_suffixed(j, out, cap, LES_ENV_LSB_JOBID, "[", LES_ENV_LSB_JOBINDEX, lsf_index,
			 "]") ||
	    try_suffixed(j, out, cap, LES_ENV_JOB_ID, ".", LES_ENV_SGE_TASK_ID, sge_task, "") ||
	    try_plain(j, out, cap, LES_ENV_FLUX_JOB_ID))
		return 0;
	for (unsigned int i = LES_ENV_JOB_VARS; i < a->n; i++)
		if ((a->e[i].role & LES_ENV_ROLE_SITE) && try_plain(j, out, cap, i))
			return 0;
	return -ENOENT;
}

int les_env_job_id(const struct les_env_allow *a, const struct les_env_tags *t, char *out,
		   size_t cap, bool *cut)
{
	struct job_pick j = {.t = t};
	int rc;

	if (cut)
		*cut = false;
	if (!cap)
		return -EINVAL;
	out[0] = '\0';
	rc = job_id(&j, a, out, cap);
	if (cut)
		*cut = j.cut;
	return rc;
}
