/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Enrichment: who a record belongs to. Per process (by pid) the job, its
 * source, the allowlisted environment tags and the container, taken at exec
 * from the process's own environment and cgroup, passed on at fork, and
 * scanned once at start-up for processes that already run. Per uid the user
 * name, looked up by a resolver thread (NSS may be LDAP or SSSD and take
 * milliseconds). Per record only cache lookups: no /proc read, no NSS call,
 * no allocation once the caches are warm.
 */
#ifndef LES_ENRICH_H
#define LES_ENRICH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "actor.h"
#include "envtags.h"
#include "les_record.h"
#include "procname.h"

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
};

enum les_job_source {
	LES_JOB_NONE = 0,
	LES_JOB_ENV,
	LES_JOB_CGROUP,
	LES_JOB_INHERITED,
	LES_JOB_LUSTRE, /* Lustre's own job ID of a request (pb_jobid) */
};

/*
 * What a group of processes shares: job, tags, container. Interned, so a
 * thousand processes of one job hold one copy. job_json and json hold the
 * record members ("job_id":…,"job_source":… and "tags":{…}[,"container_id":…]).
 */
struct les_attrib {
	struct les_attrib *next; /* intern table chain */
	uint64_t hash;
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

struct les_enrich_stats {
	uint64_t procs_known; /* processes in the cache now */
	uint64_t proc_misses; /* records of a process never seen */
	uint64_t proc_evictions;
	uint64_t attribs;	   /* distinct attributions interned */
	uint64_t attrib_overflow;  /* attributions not interned: table full */
	uint64_t username_pending; /* records emitted before their uid resolved */
	uint64_t nss_lookups;
	uint64_t scanned; /* processes found by the start-up scan */
};

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
