/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Enrichment: who a record belongs to. Per process (by pid) the job, its
 * source, the allowlisted environment tags and the container, taken at exec
 * from the process's own environment and cgroup, passed on at fork, and
 * scanned once at start-up for processes that already run. Per uid the user
 * name, looked up by a resolver thread (NSS may be LDAP or SSSD and take
 * milliseconds). Per record only cache lookups: no NSS call, no allocation
 * once the caches are warm, and no /proc read but once for a process
 * missing from the cache (evicted, or its exec notice lost), so that it
 * keeps its job. Every table is bounded; see docs/reliability.md.
 */
#ifndef LES_ENRICH_H
#define LES_ENRICH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "enrich/actor.h"
#include "enrich/envtags.h"
#include "les_record.h"
#include "enrich/procname.h"

#define LES_ENRICH_NAMES_MAX 16 /* --job-env, --env-tag, --process-allowlist, --actor-rule */
#define LES_ATTRIB_JSON_MAX  2560

struct les_enrich_config {
	const char *job_env[LES_ENRICH_NAMES_MAX];
	size_t n_job_env;
	const char *env_tags[LES_ENRICH_NAMES_MAX];
	size_t n_env_tags;
	const char *jobid_name; /* Lustre jobid_name format; NULL: "%j" */
	bool strip_suffix;	/* --process-name-strip-suffix */
	const char *process_allowlist[LES_ENRICH_NAMES_MAX]; /* comma lists */
	size_t n_process_allowlist;
	const char *actor_rules[LES_ENRICH_NAMES_MAX];
	size_t n_actor_rules;
	uint32_t proc_cache_size; /* processes remembered (LRU) */
	uint32_t user_cache_size; /* uids remembered (LRU) */
	bool no_user_lookup;	  /* tests: never call NSS */
	/*
	 * Attributions held at once; 0: one more than the process cache
	 * holds, so that only a smaller one (tests) ever fills: each cached
	 * process holds one, and an exec's new one is made before its put.
	 */
	uint32_t attrib_cache_size;
	uint32_t user_queue_size; /* uids waiting for the resolver; 0: the default */
	/* Where a process missing from the cache is read again; NULL: "/proc". */
	const char *proc_root;
	/*
	 * The user name of uid into name (NUL-terminated): 1 found, 0 not.
	 * NULL: getpwuid_r (NSS). Tests give a resolver of their own.
	 */
	int (*lookup_user)(uint32_t uid, char *name, size_t len);
	/*
	 * Now, in ns of CLOCK_MONOTONIC, for the user names' lifetimes.
	 * NULL: the clock itself. Tests give one of their own to step past
	 * a lifetime of minutes.
	 */
	uint64_t (*clock_ns)(void);
};

#define LES_PROC_CACHE_DEFAULT 65536
#define LES_USER_QUEUE_DEFAULT 1024

enum les_job_source {
	LES_JOB_NONE = 0,
	LES_JOB_ENV,
	LES_JOB_CGROUP,
	LES_JOB_INHERITED,
	LES_JOB_LUSTRE, /* Lustre's own job ID of a request (pb_jobid) */
};

/*
 * What a group of processes shares: job, tags, container. Interned, so a
 * thousand processes of one job hold one copy, and freed with the last
 * cached process that holds it. job_json and json hold the record members
 * ("job_id":…,"job_source":… and "tags":{…}[,"container_id":…]).
 */
struct les_attrib {
	struct les_attrib *next; /* intern table chain */
	uint64_t hash;
	uint64_t serial; /* unique in the run, never reused (0: the "nothing known" one) */
	uint32_t refs;	 /* processes in the cache that hold it; freed at 0 */
	uint8_t job_source;
	char job_id[64]; /* "" when none */
	char job_json[160];
	uint16_t job_json_len;
	uint16_t json_len;
	char json[LES_ATTRIB_JSON_MAX]; /* last: interned copies end at json_len */
};

#define LES_IDENT_JSON_MAX 512

/* The enrichment of one record, valid until the next call. */
struct les_enriched {
	/*
	 * The record members from "uid" to "actor_type", encoded once per
	 * process identity: "uid":…,"gid":…,"comm":…,"process":…,
	 * "username":…,"actor_type":…. Length 0 when they did not fit; the
	 * formatter then writes them one by one.
	 */
	char ident_json[LES_IDENT_JSON_MAX];
	size_t ident_json_len;
	const char *process;
	const char *actor_type;
	/* The class by the name alone, a job not counted: lustre_client_*'s */
	const char *actor_by_name;
	const char *username;  /* NULL: no name (or not resolved yet) */
	const char *user_json; /* "username":… */
	size_t user_json_len;
	const struct les_attrib *attrib; /* NULL: process unknown */
	const char *job_id;		 /* NULL when none */
	const char *job_source;		 /* NULL when none */
	char process_buf[LES_COMM_LEN + 8];
	char username_buf[64];
	char job_buf[64]; /* --jobid-name output when not plain %j */
	char job_json[192];
	size_t job_json_len;
};

/* The stats record's "enrich" member and Prometheus' enrich families. */
struct les_enrich_stats {
	uint64_t procs_known; /* processes in the cache now */
	uint64_t proc_cache_size;
	uint64_t proc_misses; /* records of a process neither cached nor in /proc */
	uint64_t proc_evictions;
	uint64_t proc_rereads; /* processes missing from the cache, read again from /proc */
	uint64_t attribs;      /* distinct attributions held now */
	uint64_t attrib_cache_size;
	uint64_t attrib_overflow;  /* tags too long (kept without them) or out of memory */
	uint64_t attrib_aged;	   /* processes dropped from the cache to make room for one */
	uint64_t users_known;	   /* uids in the user cache now */
	uint64_t user_evictions;   /* uids evicted from it (looked up again when back) */
	uint64_t username_pending; /* records emitted before their uid resolved */
	uint64_t nss_lookups;
	uint64_t user_queue_full; /* lookups not queued: queue full, tried again later */
	uint64_t scanned; /* processes found by the start-up scan */
	uint64_t job_env_cut; /* job variables not used: cut by the environment read */
};

/* The members of struct les_enrich_stats by name, in order, for every output. */
struct les_stat_field {
	const char *name;
	size_t offset;
	bool gauge; /* a level now, not a count since the start */
	const char *help;
};

extern const struct les_stat_field les_enrich_stat_fields[];
extern const size_t les_enrich_n_stat_fields;

static inline uint64_t les_stat_value(const void *stats, const struct les_stat_field *f)
{
	return *(const uint64_t *)((const char *)stats + f->offset);
}

struct les_enricher;

/*
 * Validates the configuration (bad --job-env, --env-tag, --jobid-name,
 * --process-allowlist, --actor-rule): -EINVAL with one line in err.
 */
int les_enrich_new(struct les_enricher **out, const struct les_enrich_config *cfg,
		   const char *hostname, char *err, size_t errlen);
void les_enrich_free(struct les_enricher *e);

/* Process notices from BPF. */
void les_enrich_exec(struct les_enricher *e, const struct les_rec_proc *r);
void les_enrich_fork(struct les_enricher *e, const struct les_rec_fork *r);

/* Learn the processes that already run (reads /proc; call once after attach). */
void les_enrich_scan(struct les_enricher *e, const char *proc_root);

/*
 * Per record: the enrichment of the task at ts_ns (CLOCK_MONOTONIC, the
 * record's own time; it says when a user name is due for a new lookup).
 * flags: LES_ACTOR_F_FS_WORK etc. Valid until the next call.
 *
 * Everything in it is the same for every record of one process identity
 * (pid, uid, gid, comm, flags), so it is kept, encoded, per identity and
 * only checked per record: is the process's attribution the same, has a
 * user name been resolved since, has the name's lookup expired.
 */
const struct les_enriched *les_enrich_task(struct les_enricher *e, const struct les_task *t,
					   unsigned int flags, uint64_t ts_ns);

void les_enrich_get_stats(struct les_enricher *e, struct les_enrich_stats *s);

struct jw;
/* "enrich":{…}, the members of s, for the stats record. */
void les_enrich_stats_json(const struct les_enrich_stats *s, struct jw *w);
/*
 * The job a PtlRPC request is charged to by the wire: a request whose task
 * is a kernel thread (LES_RPC_F_KTHREAD: writeback that a flusher or
 * ptlrpcd built, read-ahead) works for whoever caused it, and Lustre sent
 * that one's job ID with it (pb_jobid, LES_RPC_F_JOBID: the file's last
 * reader or writer, lli_jobinfo). Copies it NUL-terminated into buf
 * (LES_JOBID_LEN + 1 bytes) and returns buf; NULL when the rule does not
 * apply (a user's own request, a request with a known cause, no job ID).
 */
const char *les_enrich_wire_job(const struct les_rec_rpc *r, char *buf);

/* The name of a job source, NULL for none. */
const char *les_job_source_name(unsigned int src);

#endif /* LES_ENRICH_H */
