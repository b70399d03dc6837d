// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Actor class of a task. See actor.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "enrich/actor.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *const actor_names[LES_ACTOR_MAX] = {
	[LES_ACTOR_USER] = "user",
	[LES_ACTOR_BATCH_JOB] = "batch_job",
	[LES_ACTOR_SYSTEM_DAEMON] = "system_daemon",
	[LES_ACTOR_CLIENT_WORKER] = "client_worker",
};

/* A default rule applies when comm matches glob and flags hold all of need. */
struct default_rule {
	const char *glob;
	unsigned char type;
	unsigned char need;
};

/* clang-format off */
#define CW(g, n) { g, LES_ACTOR_CLIENT_WORKER, n }
#define BJ(g, n) { g, LES_ACTOR_BATCH_JOB, n }
#define SD(g, n) { g, LES_ACTOR_SYSTEM_DAEMON, n }
#define KT	 LES_ACTOR_F_KTHREAD
/* clang-format on */

static const struct default_rule default_rules[] = {
	/* Lustre client and LNet threads. */
	CW("ptlrpcd*", 0),
	CW("ldlm_*", 0),
	CW("ll_*", KT),
	CW("mgc_*", KT),
	CW("mdc_*", KT),
	CW("osc_*", KT),
	CW("lov_*", KT),
	CW("lmv_*", KT),
	CW("socknal_*", KT),
	CW("kiblnd_*", KT),
	CW("kgnilnd_*", KT),
	CW("lnet_*", KT),
	/* NFS: sunrpc/NFS workqueue rescuers and NFSv4 callback service. */
	CW("rpciod", 0),
	CW("nfsiod", 0),
	CW("xprtiod", 0),
	CW("nfsv4.*-svc", 0),
	/* A workqueue worker is the client's only when it works for it. */
	CW("kworker*", KT | LES_ACTOR_F_FS_WORK),

	/* Anything in a job belongs to the job, whatever its name. */
	BJ("*", LES_ACTOR_F_JOB),
	/* Scheduler daemons. */
	BJ("slurmstepd", 0),
	BJ("slurmd", 0),
	BJ("pbs_mom", 0),
	BJ("pbs_attach", 0),
	BJ("sge_execd", 0),
	BJ("sge_shepherd", 0),
	BJ("sbatchd", 0),
	BJ("res", 0),
	BJ("flux-broker*", 0),
	BJ("flux-shell*", 0),

	/* System daemons. */
	SD("systemd*", 0),
	SD("(sd-pam)", 0),
	SD("init", 0),
	SD("sshd", 0),
	SD("sshd-*", 0),
	SD("cron", 0),
	SD("crond", 0),
	SD("anacron", 0),
	SD("atd", 0),
	SD("rsyslogd", 0),
	SD("syslog-ng", 0),
	SD("dbus-daemon", 0),
	SD("dbus-broker*", 0),
	SD("sssd*", 0),
	SD("nscd", 0),
	SD("nslcd", 0),
	SD("*exporter", 0),
	SD("chronyd", 0),
	SD("ntpd", 0),
	SD("irqbalance", 0),
	SD("snmpd", 0),
	SD("munged", 0),
	SD("polkitd", 0),
	SD("auditd", 0),
	SD("rpcbind", 0),
	SD("rpc.*", 0),
	SD("gssproxy", 0),
	SD("automount", 0),
	SD("NetworkManager", 0),
	SD("udisksd", 0),
	SD("tuned", 0),
	SD("lldpd", 0),
	SD("collectd", 0),
	SD("telegraf", 0),
	SD("containerd*", 0),
	SD("dockerd", 0),
	SD("kubelet", 0),
	SD("crio", 0),
	SD("conmon", 0),
	SD("nvidia-persiste*", 0),
	SD("nv-hostengine", 0),
	/* Other kernel threads: the system's own work. */
	SD("*", KT),
};

const char *les_actor_name(unsigned int type)
{
	return type < LES_ACTOR_MAX ? actor_names[type] : "unknown";
}

int les_actor_from_name(const char *name, size_t len)
{
	for (unsigned int i = 0; i < LES_ACTOR_MAX; i++) {
		if (strlen(actor_names[i]) == len && memcmp(actor_names[i], name, len) == 0)
			return (int)i;
	}
	return -EINVAL;
}

/*
 * The bracket expression at g ('[' ... ']'): does it hold byte c? *end is
 * set past the ']'. Returns -1 if the bracket is not closed.
 */
static int match_bracket(const char *g, unsigned char c, const char **end)
{
	const char *p = g + 1;
	bool negate = false, hit = false;

	if (*p == '!' || *p == '^') {
		negate = true;
		p++;
	}
	/* A ']' first in the set is a member, not the end. */
	for (bool first = true; first || *p != ']'; first = false) {
		unsigned char lo, hi;

		if (!*p)
			return -1;
		if (*p == '\\' && p[1])
			p++;
		lo = hi = (unsigned char)*p++;
		if (*p == '-' && p[1] && p[1] != ']') {
			p++;
			if (*p == '\\' && p[1])
				p++;
			hi = (unsigned char)*p++;
		}
		if (c >= lo && c <= hi)
			hit = true;
	}
	*end = p + 1;
	return hit != negate;
}

/*
 * Does the glob element at g match byte c? *next is set past the element.
 * An unclosed '[' is an ordinary byte, as fnmatch(3) has it.
 */
static bool match_elem(const char *g, unsigned char c, const char **next)
{
	int rc;

	switch (*g) {
	case '?':
		*next = g + 1;
		return true;
	case '[':
		rc = match_bracket(g, c, next);
		if (rc >= 0)
			return rc;
		break;
	case '\\':
		if (g[1]) {
			*next = g + 2;
			return (unsigned char)g[1] == c;
		}
		break;
	}
	*next = g + 1;
	return (unsigned char)*g == c;
}

bool les_glob_match(const char *glob, const char *str, size_t len)
{
	const char *g = glob, *star_g = NULL;
	size_t s = 0, star_s = 0;

	/*
	 * Greedy with one backtrack point: on a mismatch, let the last '*'
	 * swallow one more byte. Linear in len for each '*'.
	 */
	while (s < len) {
		const char *next;

		if (*g == '*') {
			while (*g == '*')
				g++;
			if (!*g)
				return true;
			star_g = g;
			star_s = s;
			continue;
		}
		if (*g && match_elem(g, (unsigned char)str[s], &next)) {
			g = next;
			s++;
			continue;
		}
		if (!star_g)
			return false;
		g = star_g;
		s = ++star_s;
	}
	while (*g == '*')
		g++;
	return !*g;
}

static int check_glob(const char *glob, size_t n, const char *spec, char *err, size_t errlen)
{
	if (!n) {
		snprintf(err, errlen, "--actor-rule '%s': empty GLOB", spec);
		return -EINVAL;
	}
	if (n >= LES_ACTOR_GLOB_MAX) {
		snprintf(err, errlen, "--actor-rule '%s': GLOB longer than %d characters", spec,
			 LES_ACTOR_GLOB_MAX - 1);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		const char *end;

		if (glob[i] == '\\') {
			if (i + 1 == n) {
				snprintf(err, errlen, "--actor-rule '%s': GLOB ends with '\\'",
					 spec);
				return -EINVAL;
			}
			i++;
		} else if (glob[i] == '[') {
			if (match_bracket(glob + i, 0, &end) < 0) {
				snprintf(err, errlen, "--actor-rule '%s': '[' without ']'", spec);
				return -EINVAL;
			}
			i = (size_t)(end - glob) - 1;
		}
	}
	return 0;
}

int les_actor_rules_add(struct les_actor_rules *r, const char *spec, char *err, size_t errlen)
{
	const char *eq = spec ? strchr(spec, '=') : NULL;
	const char *glob;
	size_t glob_len;
	int type, rc;

	if (!eq) {
		snprintf(err, errlen, "--actor-rule '%s': expected CLASS=GLOB", spec ? spec : "");
		return -EINVAL;
	}
	type = les_actor_from_name(spec, (size_t)(eq - spec));
	if (type < 0) {
		snprintf(err, errlen,
			 "--actor-rule '%s': CLASS is one of user, batch_job, system_daemon, "
			 "client_worker",
			 spec);
		return -EINVAL;
	}
	glob = eq + 1;
	glob_len = strlen(glob);
	rc = check_glob(glob, glob_len, spec, err, errlen);
	if (rc)
		return rc;
	if (r->n >= LES_ACTOR_RULES_MAX) {
		snprintf(err, errlen, "--actor-rule: more than %d rules", LES_ACTOR_RULES_MAX);
		return -E2BIG;
	}
	r->r[r->n].type = (unsigned char)type;
	memcpy(r->r[r->n].glob, glob, glob_len + 1);
	r->n++;
	return 0;
}

enum les_actor_type les_actor_classify(const struct les_actor_rules *rules, const char *comm,
				       size_t len, unsigned int flags)
{
	size_t n = comm ? strnlen(comm, len) : 0;

	if (!comm)
		comm = "";
	for (unsigned int i = 0; rules && i < rules->n && i < LES_ACTOR_RULES_MAX; i++) {
		if (les_glob_match(rules->r[i].glob, comm, n))
			return (enum les_actor_type)rules->r[i].type;
	}
	for (size_t i = 0; i < ARRAY_SIZE(default_rules); i++) {
		const struct default_rule *d = &default_rules[i];

		if ((flags & d->need) == d->need && les_glob_match(d->glob, comm, n))
			return (enum les_actor_type)d->type;
	}
	return LES_ACTOR_USER;
}
