// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Job, pod and container identity from a cgroup path. See cgroup.h. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "enrich/cgroup.h"

#define CONTAINER_HEX_MIN 12
#define CONTAINER_HEX_MAX 64

/* A path component: n bytes at p, not NUL-terminated. */
struct comp {
	const char *p;
	size_t n;
};

/* What the previous components announced about the next one. */
enum pbs_state {
	PBS_IDLE = 0,
	PBS_WANT_JOBDIR, /* after "pbs*.service": "jobid" or "jobs" */
	PBS_WANT_ID,	 /* after ".../jobid", "/pbs", "/torque": the job id */
};

/* Where the walk is in Slurm's own layout (see slurm_comp). */
enum slurm_state {
	SLURM_IDLE = 0,
	SLURM_WANT_UID, /* after a v1 "slurm*" root: "uid_<digits>" */
	SLURM_WANT_JOB, /* after "system.slice/[X_]slurmstepd.scope" or ".../uid_N": "job_N" */
};

struct walk {
	enum slurm_state slurm;
	bool after_system_slice; /* previous component was "system.slice" */
	bool user_delegated;	 /* below user@UID.service: the user may create cgroups */
	bool kube_area;		 /* below a kubepods cgroup */
	bool after_pod_dir;	 /* previous component was pod<uid> (cgroupfs driver) */
	bool after_docker_dir;	 /* previous component was "docker" */
	enum pbs_state pbs;
	struct comp pbs_slice; /* "<prefix>" of a "<prefix>.slice" PBS parent, n = 0 if none */
};

static bool comp_is(struct comp c, const char *s)
{
	size_t n = strlen(s);

	return c.n == n && memcmp(c.p, s, n) == 0;
}

static bool starts_with(struct comp c, const char *s)
{
	size_t n = strlen(s);

	return c.n >= n && memcmp(c.p, s, n) == 0;
}

static bool ends_with(struct comp c, const char *s)
{
	size_t n = strlen(s);

	return c.n >= n && memcmp(c.p + c.n - n, s, n) == 0;
}

/* Offset of the last occurrence of s in c, or -1. */
static long find_last(struct comp c, const char *s)
{
	size_t n = strlen(s);

	if (c.n < n)
		return -1;
	for (size_t i = c.n - n + 1; i-- > 0;) {
		if (memcmp(c.p + i, s, n) == 0)
			return (long)i;
	}
	return -1;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_alnum(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool all_of(const char *p, size_t n, bool (*pred)(char))
{
	for (size_t i = 0; i < n; i++) {
		if (!pred(p[i]))
			return false;
	}
	return n > 0;
}

static void copy_str(char *dst, size_t cap, const char *src, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* ---- Slurm ---------------------------------------------------------------- */

/* "<prefix><digits>", at most 20 digits (more than any 64-bit id). */
static bool prefixed_number(struct comp c, const char *prefix)
{
	size_t n = strlen(prefix);

	return starts_with(c, prefix) && c.n - n <= 20 && all_of(c.p + n, c.n - n, is_digit);
}

/*
 * Slurm's layout, anchored: job_N is the child of the stepd scope (v2:
 * system.slice/slurmstepd.scope, or X_slurmstepd.scope with several
 * slurmd) or the grandchild of the v1 root (slurm or slurm_X, then uid_N),
 * never anywhere below. And nothing under user@UID.service counts: systemd
 * delegates that subtree to the user, who can create a
 * "system.slice/slurmstepd.scope/job_1" there and claim any job.
 */
static void slurm_comp(struct walk *w, struct comp c, struct les_cgroup_info *out)
{
	enum slurm_state prev = w->slurm;
	bool after_system_slice = w->after_system_slice;

	w->slurm = SLURM_IDLE;
	w->after_system_slice = comp_is(c, "system.slice");
	if (starts_with(c, "user@") && ends_with(c, ".service"))
		w->user_delegated = true;
	if (w->user_delegated || out->sched != LES_SCHED_NONE)
		return;
	if (prev == SLURM_WANT_JOB) {
		if (prefixed_number(c, "job_")) {
			copy_str(out->job_id, sizeof(out->job_id), c.p + 4, c.n - 4);
			out->sched = LES_SCHED_SLURM;
		}
	} else if (prev == SLURM_WANT_UID) {
		if (prefixed_number(c, "uid_"))
			w->slurm = SLURM_WANT_JOB;
	} else if (after_system_slice && ends_with(c, "slurmstepd.scope")) {
		w->slurm = SLURM_WANT_JOB;
	} else if (starts_with(c, "slurm")) {
		w->slurm = SLURM_WANT_UID;
	}
}

/* ---- PBS ------------------------------------------------------------------- */

static bool is_pbs_id_char(char c)
{
	return is_alnum(c) || c == '.' || c == '-' || c == '_' || c == '[' || c == ']';
}

static bool valid_pbs_id(const char *p, size_t n)
{
	return n > 0 && n < LES_CGROUP_JOB_ID_MAX && is_digit(p[0]) && all_of(p, n, is_pbs_id_char);
}

static void set_pbs_job(struct les_cgroup_info *out, const char *p, size_t n)
{
	if (out->sched != LES_SCHED_NONE || !valid_pbs_id(p, n))
		return;
	copy_str(out->job_id, sizeof(out->job_id), p, n);
	out->sched = LES_SCHED_PBS;
}

static int hex_val(char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Undo systemd unit name escaping (\xNN) into buf; returns length or -1. */
static long systemd_unescape(const char *p, size_t n, char *buf, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char ch = p[i];

		if (ch == '\\') {
			int hi, lo;

			if (i + 3 >= n || p[i + 1] != 'x')
				return -1;
			hi = hex_val(p[i + 2]);
			lo = hex_val(p[i + 3]);
			if (hi < 0 || lo < 0)
				return -1;
			ch = (char)(hi << 4 | lo);
			i += 3;
		}
		if (o + 1 >= cap)
			return -1;
		buf[o++] = ch;
	}
	return (long)o;
}

/* "<prefix>-<escaped id>.slice" below "<prefix>.slice". */
static void pbs_slice_job(struct comp pre, struct comp c, struct les_cgroup_info *out)
{
	char id[LES_CGROUP_JOB_ID_MAX];
	long n;

	if (c.n <= pre.n + 1 + strlen(".slice") || memcmp(c.p, pre.p, pre.n) != 0 ||
	    c.p[pre.n] != '-' || !ends_with(c, ".slice"))
		return;
	n = systemd_unescape(c.p + pre.n + 1, c.n - pre.n - 1 - strlen(".slice"), id, sizeof(id));
	if (n > 0)
		set_pbs_job(out, id, (size_t)n);
}

static void pbs_comp(struct walk *w, struct comp c, struct les_cgroup_info *out)
{
	enum pbs_state prev = w->pbs;
	struct comp slice = w->pbs_slice;

	w->pbs = PBS_IDLE;
	w->pbs_slice.n = 0;

	if (prev == PBS_WANT_ID) {
		set_pbs_job(out, c.p, c.n);
		return;
	}
	if (prev == PBS_WANT_JOBDIR && (comp_is(c, "jobid") || comp_is(c, "jobs"))) {
		w->pbs = PBS_WANT_ID;
		return;
	}
	if (slice.n) {
		pbs_slice_job(slice, c, out);
		return;
	}
	if (starts_with(c, "pbs") && ends_with(c, ".service")) {
		w->pbs = PBS_WANT_JOBDIR;
	} else if (starts_with(c, "pbs") && ends_with(c, ".slice")) {
		w->pbs_slice.p = c.p;
		w->pbs_slice.n = c.n - strlen(".slice");
	} else if (comp_is(c, "pbs") || comp_is(c, "pbspro") || comp_is(c, "torque")) {
		w->pbs = PBS_WANT_ID;
	}
}

/* ---- Kubernetes ------------------------------------------------------------ */

static bool is_uuid_shape(const char *u, size_t n)
{
	if (n == 32)
		return all_of(u, n, is_hex);
	if (n != 36)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool dash_pos = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash_pos ? u[i] != '-' : !is_hex(u[i]))
			return false;
	}
	return true;
}

/* Pod uid of n bytes at p; systemd slice names carry '-' as '_'. */
static void set_pod(struct les_cgroup_info *out, const char *p, size_t n)
{
	char uid[LES_CGROUP_POD_UID_MAX];

	if (n >= sizeof(uid))
		return;
	for (size_t i = 0; i < n; i++)
		uid[i] = p[i] == '_' ? '-' : p[i];
	uid[n] = '\0';
	if (is_uuid_shape(uid, n))
		memcpy(out->pod_uid, uid, n + 1);
}

static void kube_comp(struct walk *w, struct comp c, struct les_cgroup_info *out)
{
	bool was_pod_dir = w->after_pod_dir;
	long at;

	w->after_pod_dir = false;
	if (find_last(c, "kubepods") >= 0) {
		w->kube_area = true;
		at = find_last(c, "-pod");
		if (at >= 0 && ends_with(c, ".slice") && (size_t)at + 4 <= c.n - strlen(".slice"))
			set_pod(out, c.p + at + 4, c.n - (size_t)at - 4 - strlen(".slice"));
		return;
	}
	if (w->kube_area && starts_with(c, "pod") && !ends_with(c, ".slice")) {
		set_pod(out, c.p + 3, c.n - 3);
		w->after_pod_dir = true;
		return;
	}
	if (was_pod_dir && c.n == CONTAINER_HEX_MAX && all_of(c.p, c.n, is_hex)) {
		copy_str(out->container_id, sizeof(out->container_id), c.p, c.n);
		out->runtime = LES_CRT_UNKNOWN;
	}
}

/* ---- containers ------------------------------------------------------------ */

/* clang-format off */
static const struct {
	const char *prefix;
	const char *suffix;
	enum les_container_runtime rt;
} scope_forms[] = {
	{ "docker-", ".scope", LES_CRT_DOCKER },
	{ "cri-containerd-", ".scope", LES_CRT_CONTAINERD },
	{ "crio-", ".scope", LES_CRT_CRIO },
	{ "libpod-", ".scope", LES_CRT_PODMAN },
	{ "libpod-", "", LES_CRT_PODMAN }, /* cgroupfs driver: no .scope */
};
/* clang-format on */

static void set_container(struct les_cgroup_info *out, const char *p, size_t n,
			  enum les_container_runtime rt)
{
	copy_str(out->container_id, sizeof(out->container_id), p, n);
	out->runtime = (uint8_t)rt;
}

static void container_comp(struct walk *w, struct comp c, struct les_cgroup_info *out)
{
	bool was_docker_dir = w->after_docker_dir;

	w->after_docker_dir = comp_is(c, "docker");
	if (was_docker_dir && c.n == CONTAINER_HEX_MAX && all_of(c.p, c.n, is_hex)) {
		set_container(out, c.p, c.n, LES_CRT_DOCKER);
		return;
	}
	for (size_t i = 0; i < sizeof(scope_forms) / sizeof(scope_forms[0]); i++) {
		size_t pre = strlen(scope_forms[i].prefix);
		size_t suf = strlen(scope_forms[i].suffix);
		size_t hex;

		if (c.n <= pre + suf || !starts_with(c, scope_forms[i].prefix) ||
		    !ends_with(c, scope_forms[i].suffix))
			continue;
		hex = c.n - pre - suf;
		if (hex < CONTAINER_HEX_MIN || hex > CONTAINER_HEX_MAX ||
		    !all_of(c.p + pre, hex, is_hex))
			continue;
		set_container(out, c.p + pre, hex, scope_forms[i].rt);
		return;
	}
}

/* ---- the walk -------------------------------------------------------------- */

int les_cgroup_parse(const char *path, size_t len, struct les_cgroup_info *out)
{
	struct walk w = {0};
	size_t pos = 0;

	memset(out, 0, sizeof(*out));
	if (!path)
		return 0;

	while (pos < len) {
		const char *slash = memchr(path + pos, '/', len - pos);
		struct comp c = {path + pos, slash ? (size_t)(slash - path) - pos : len - pos};

		pos += c.n + 1;
		if (!c.n)
			continue;
		slurm_comp(&w, c, out);
		pbs_comp(&w, c, out);
		kube_comp(&w, c, out);
		container_comp(&w, c, out);
	}
	return out->sched != LES_SCHED_NONE || out->pod_uid[0] || out->runtime != LES_CRT_NONE;
}

/* Split "HIER:CONTROLLERS:PATH"; false if the line has no two colons. */
static bool split_line(const char *line, size_t n, bool *is_v2, const char **path, size_t *path_len)
{
	const char *c1 = memchr(line, ':', n);
	const char *c2;

	if (!c1)
		return false;
	c2 = memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - line));
	if (!c2)
		return false;
	*is_v2 = c1 - line == 1 && line[0] == '0' && c2 == c1 + 1;
	*path = c2 + 1;
	*path_len = n - (size_t)(c2 + 1 - line);
	return true;
}

int les_cgroup_pick_line(const char *content, size_t len, const char **path, size_t *path_len)
{
	struct comp v2 = {0}, v1_hit = {0}, first = {0};
	struct les_cgroup_info scratch;
	bool v2_hit = false;
	size_t pos = 0;

	while (content && pos < len && !v2_hit) {
		const char *line = content + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		struct comp p;
		bool is_v2;

		pos += n + 1;
		if (!split_line(line, n, &is_v2, &p.p, &p.n))
			continue;
		if (!first.p)
			first = p;
		if (is_v2 && !v2.p) {
			v2 = p;
			v2_hit = les_cgroup_parse(p.p, p.n, &scratch);
		} else if (!is_v2 && !v1_hit.p && les_cgroup_parse(p.p, p.n, &scratch)) {
			v1_hit = p;
		}
	}

	if (v2_hit || (v2.p && !v1_hit.p))
		first = v2;
	else if (v1_hit.p)
		first = v1_hit;
	if (!first.p)
		return -ENOENT;
	*path = first.p;
	*path_len = first.n;
	return 0;
}

int les_cgroup_parse_proc(const char *content, size_t len, struct les_cgroup_info *out)
{
	const char *path;
	size_t path_len;

	if (les_cgroup_pick_line(content, len, &path, &path_len)) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	return les_cgroup_parse(path, path_len, out);
}

const char *les_sched_name(unsigned int sched)
{
	switch (sched) {
	case LES_SCHED_SLURM:
		return "slurm";
	case LES_SCHED_PBS:
		return "pbs";
	default:
		return NULL;
	}
}

const char *les_container_runtime_name(unsigned int rt)
{
	static const char *const names[LES_CRT_MAX] = {
		[LES_CRT_DOCKER] = "docker",
		[LES_CRT_CONTAINERD] = "containerd",
		[LES_CRT_CRIO] = "crio",
		[LES_CRT_PODMAN] = "podman",
	};

	return rt < LES_CRT_MAX ? names[rt] : NULL;
}
