// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Enrichment: process attribution caches, user names, actor classes. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "util/clock.h"
#include "enrich/cgroup.h"
#include "enrich/enrich.h"
#include "enrich/jobid.h"
#include "util/json.h"
#include "util/lru.h"
#include "enrich/procfs.h"

#define ATTRIB_BUCKETS	4096
#define ACTOR_CACHE	512
#define USER_TTL_NS	(600ULL * 1000000000ULL)
#define USER_NEG_TTL_NS (60ULL * 1000000000ULL)
#define USER_WAIT_NS	(5 * 1000000L) /* first record of a uid waits this long at most */
#define USER_RETRY_NS	(1000000000ULL) /* a uid still pending is looked at again */
#define PROC_RETRY_NS	(1000000000ULL) /* a pid /proc did not have is read again */
#define ENV_READ_MAX	(256 * 1024)
/* At exit a lookup in progress gets this long: a hung NSS must not hold the exit. */
#define USER_STOP_WAIT_NS (1000000000ULL)
#define LES_PF_KTHREAD	0x00200000
#define IDENT_SLOTS	1024 /* process identities kept encoded; a power of 2 */
#define PROC_F_UNREAD	0x80000000u /* not in /proc when read: nothing known */

struct proc_entry {
	struct les_attrib *attrib; /* holds a reference; NULL with PROC_F_UNREAD */
	uint64_t retry_ns;	   /* PROC_F_UNREAD: when /proc is read again */
	uint32_t ppid;
	uint32_t flags; /* LES_PROC_F_*, PROC_F_UNREAD */
};

enum user_state { USER_EMPTY = 0, USER_PENDING, USER_RESOLVED };

struct user_entry {
	uint8_t state;
	uint8_t has_name;
	uint8_t waited; /* a record already waited for this lookup */
	uint8_t queued; /* PENDING: in the resolver's queue (else it was full) */
	uint64_t expires_ns;
	char name[64];
};

struct actor_slot {
	char comm[LES_COMM_LEN];
	unsigned int flags;
	uint8_t valid;
	uint8_t type;
};

/*
 * One process identity's enrichment, kept with what it was made from so
 * that a record can tell in a few compares whether it still holds.
 */
struct ident_slot {
	bool valid;
	bool proc_unknown; /* each record counts as a proc miss, as on the slow path */
	bool user_pending; /* each record counts as username_pending */
	uint32_t pid, uid, gid, flags;
	char comm[LES_COMM_LEN];
	/*
	 * The attribution's serial, never reused: an attribution freed and
	 * another allocated at its address cannot pass for it.
	 */
	uint64_t attrib_serial;
	uint32_t proc_flags;
	uint64_t user_gen;   /* user names resolved when it was made */
	uint64_t expires_ns; /* the user name's lookup is due again */
	struct les_enriched en;
};

struct les_enricher {
	struct les_enrich_config cfg;
	char hostname[256];
	bool plain_jobid; /* --jobid-name is "%j": job JSON comes from the attribution */
	struct les_env_allow allow;
	struct les_procname_filter procname;
	struct les_actor_rules actor_rules;
	struct actor_slot actor_cache[ACTOR_CACHE];

	struct les_lru procs;
	struct les_attrib *attribs[ATTRIB_BUCKETS];
	uint64_t n_attribs, attrib_cap;
	uint64_t attrib_serial; /* the last one given */
	struct les_attrib none; /* attribution of a process with nothing known */
	char *env_buf;		/* ENV_READ_MAX: a process's environment read from /proc */

	int cgroup_root_fd; /* cgroup2 mount, for cgroup id -> path */
	size_t cgroup_root_len;

	pthread_mutex_t user_lock;
	pthread_cond_t user_cond;
	pthread_cond_t user_done_cond;
	pthread_t user_thread;
	bool user_thread_running, user_stop;
	struct les_lru users;
	int (*lookup_user)(uint32_t uid, char *name, size_t len);
	uint32_t *user_queue;
	unsigned int uq_head, uq_len, uq_cap;
	uint64_t user_gen; /* names resolved so far; atomic, the resolver adds */

	struct ident_slot *idents; /* IDENT_SLOTS, owned by the consumer thread */

	struct les_enrich_stats stats;
};

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ULL;
	}
	return h;
}

const char *les_job_source_name(unsigned int src)
{
	switch (src) {
	case LES_JOB_ENV:
		return "env";
	case LES_JOB_CGROUP:
		return "cgroup";
	case LES_JOB_INHERITED:
		return "inherited";
	case LES_JOB_LUSTRE:
		return "lustre";
	}
	return NULL;
}

const char *les_enrich_wire_job(const struct les_rec_rpc *r, char *buf)
{
	const uint32_t need = LES_RPC_F_KTHREAD | LES_RPC_F_JOBID;

	if (r->proto != LES_PROTO_PTLRPC || (r->flags & need) != need ||
	    (r->flags & LES_RPC_F_CAUSE) || !r->jobid[0])
		return NULL;
	memcpy(buf, r->jobid, LES_JOBID_LEN);
	buf[LES_JOBID_LEN] = '\0';
	return buf;
}

/* --- attributions ----------------------------------------------------- */

/* Render an attribution's JSON members; returns false if they did not fit. */
static bool render_attrib(struct les_enricher *e, struct les_attrib *a,
			  const struct les_env_tags *tags, const struct les_cgroup_info *cg)
{
	struct jw w;

	jw_init(&w, a->job_json, sizeof(a->job_json));
	jw_obj_begin(&w);
	if (a->job_id[0])
		jw_kv_cstr(&w, "job_id", a->job_id);
	else
		jw_kv_null(&w, "job_id");
	jw_kv_cstr(&w, "job_source", les_job_source_name(a->job_source));
	jw_obj_end(&w);
	a->job_json_len = (uint16_t)jw_members(&w);
	if (w.overflow)
		return false;

	jw_init(&w, a->json, sizeof(a->json));
	jw_obj_begin(&w);
	jw_key(&w, "tags");
	jw_obj_begin(&w);
	for (unsigned int i = 0; tags && i < tags->n; i++) {
		const struct les_env_value *v = &tags->v[i];

		if (!les_env_is_tag(&e->allow, v))
			continue;
		jw_kv_str(&w, les_env_value_name(&e->allow, v), v->value, v->len);
	}
	jw_obj_end(&w);
	if (cg && cg->container_id[0])
		jw_kv_cstr(&w, "container_id", cg->container_id);
	if (cg && cg->pod_uid[0])
		jw_kv_cstr(&w, "pod_uid", cg->pod_uid);
	jw_obj_end(&w);
	a->json_len = (uint16_t)jw_members(&w);
	return !w.overflow;
}

/* Drop one reference to a; the last one frees it. NULL and none are no-ops. */
static void attrib_put(struct les_enricher *e, struct les_attrib *a)
{
	struct les_attrib **link;

	if (!a || a == &e->none || --a->refs)
		return;
	for (link = &e->attribs[a->hash % ATTRIB_BUCKETS]; *link != a; link = &(*link)->next)
		;
	*link = a->next;
	free(a);
	e->n_attribs--;
}

static void attrib_get(struct les_enricher *e, struct les_attrib *a)
{
	if (a && a != &e->none)
		a->refs++;
}

/* p takes over the caller's reference to a, and gives up its old one. */
static void proc_set_attrib(struct les_enricher *e, struct proc_entry *p, struct les_attrib *a)
{
	struct les_attrib *old = p->attrib;

	p->attrib = a;
	attrib_put(e, old);
}

/* les_lru_evict_fn of the process cache. */
static void proc_evicted(void *ctx, void *value)
{
	struct proc_entry *p = value;

	attrib_put(ctx, p->attrib);
	p->attrib = NULL;
}

/*
 * The table is full only when as many attributions as its size are held
 * by cached processes (each holds one). The least recent processes then
 * give theirs up, as if evicted: read again from /proc if they still run.
 */
static void attrib_make_room(struct les_enricher *e)
{
	while (e->n_attribs >= e->attrib_cap && les_lru_evict_oldest(&e->procs))
		e->stats.attrib_aged++;
}

/* The interned copy of cand, with a reference for the caller. */
static struct les_attrib *intern(struct les_enricher *e, const struct les_attrib *cand)
{
	uint64_t h = hash_bytes(cand->json, cand->json_len) ^
		     hash_bytes(cand->job_json, cand->job_json_len);
	struct les_attrib **bucket = &e->attribs[h % ATTRIB_BUCKETS], *a;
	size_t size;

	for (a = *bucket; a; a = a->next)
		if (a->hash == h && a->json_len == cand->json_len &&
		    a->job_json_len == cand->job_json_len &&
		    memcmp(a->json, cand->json, cand->json_len) == 0 &&
		    memcmp(a->job_json, cand->job_json, cand->job_json_len) == 0) {
			a->refs++;
			return a;
		}
	attrib_make_room(e);
	/*
	 * Only the used part of json[] is kept: most attributions are a few
	 * dozen bytes of tags, and a node that runs one job per process
	 * keeps tens of thousands of them.
	 */
	size = offsetof(struct les_attrib, json) + cand->json_len;
	if (e->n_attribs >= e->attrib_cap || !(a = malloc(size))) {
		e->stats.attrib_overflow++;
		return &e->none;
	}
	memcpy(a, cand, size);
	a->hash = h;
	a->serial = ++e->attrib_serial;
	a->refs = 1;
	a->next = *bucket;
	*bucket = a;
	e->n_attribs++;
	return a;
}

/*
 * Who a process works for: its own environment first, then its cgroup,
 * then its parent's job when it cleared its environment.
 */
static struct les_attrib *attribute(struct les_enricher *e, const char *env, size_t env_len,
				    const struct les_cgroup_info *cg,
				    const struct les_attrib *parent)
{
	static __thread struct les_env_tags tags;
	static __thread struct les_attrib cand;
	bool cut;
	int rc;

	memset(&cand, 0, sizeof(cand));
	les_env_extract(&e->allow, env, env_len, &tags);
	rc = les_env_job_id(&e->allow, &tags, cand.job_id, sizeof(cand.job_id), &cut);
	e->stats.job_env_cut += cut; /* a cut job variable: not used, see envtags.h */
	if (rc == 0) {
		cand.job_source = LES_JOB_ENV;
	} else if (cg && cg->job_id[0]) {
		snprintf(cand.job_id, sizeof(cand.job_id), "%s", cg->job_id);
		cand.job_source = LES_JOB_CGROUP;
	} else if (parent && parent->job_id[0]) {
		memcpy(cand.job_id, parent->job_id, sizeof(cand.job_id));
		cand.job_source = LES_JOB_INHERITED;
	}
	if (!render_attrib(e, &cand, &tags, cg)) {
		/* Tags too long for a record: the job and container go without them. */
		e->stats.attrib_overflow++;
		if (!render_attrib(e, &cand, NULL, cg))
			return &e->none;
	}
	return intern(e, &cand);
}

/* --- cgroups ------------------------------------------------------------ */

static void open_cgroup_root(struct les_enricher *e)
{
	e->cgroup_root_fd = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	e->cgroup_root_len = strlen("/sys/fs/cgroup");
}

/* The cgroup v2 path of a cgroup id, through a kernfs file handle. */
static bool cgroup_info_of_id(struct les_enricher *e, uint64_t id, struct les_cgroup_info *out)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = {.fh = {.handle_bytes = sizeof(uint64_t), .handle_type = 0xfe /* FILEID_KERNFS */},
	       .id = id};
	char link[64], path[4096];
	ssize_t n;
	int fd;

	memset(out, 0, sizeof(*out));
	if (e->cgroup_root_fd < 0 || !id)
		return false;
	fd = open_by_handle_at(e->cgroup_root_fd, &h.fh, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	close(fd);
	if (n <= (ssize_t)e->cgroup_root_len)
		return false;
	path[n] = '\0';
	return les_cgroup_parse(path + e->cgroup_root_len, (size_t)n - e->cgroup_root_len, out) ==
	       1;
}

/* --- processes ---------------------------------------------------------- */

static struct les_attrib *parent_attrib(struct les_enricher *e, uint32_t ppid)
{
	struct proc_entry *p = les_lru_get(&e->procs, ppid);

	return p ? p->attrib : NULL; /* NULL too for a pid /proc did not have */
}

static void user_prefetch(struct les_enricher *e, uint32_t uid);

void les_enrich_exec(struct les_enricher *e, const struct les_rec_proc *r)
{
	struct les_cgroup_info cg;
	const struct les_attrib *parent = parent_attrib(e, r->ppid);
	struct proc_entry *p;
	size_t env_len = r->env_len < sizeof(r->env) ? r->env_len : sizeof(r->env);
	bool have_cg = cgroup_info_of_id(e, r->cgroup_id, &cg);
	/* Referenced: the put below may evict the parent, and with it the last other holder. */
	struct les_attrib *a = attribute(e, r->env, env_len, have_cg ? &cg : NULL, parent);

	p = les_lru_put(&e->procs, r->pid, NULL);
	proc_set_attrib(e, p, a);
	p->retry_ns = 0;
	p->ppid = r->ppid;
	p->flags = r->flags;
	user_prefetch(e, r->uid);
}

void les_enrich_fork(struct les_enricher *e, const struct les_rec_fork *r)
{
	struct les_attrib *parent = parent_attrib(e, r->ppid);
	struct proc_entry *p;

	if (!parent)
		return; /* nothing known to pass on; the child is read from /proc if it does I/O */
	attrib_get(e, parent); /* before the put, which may evict the parent */
	p = les_lru_put(&e->procs, r->pid, NULL);
	proc_set_attrib(e, p, parent); /* same environment, same attribution */
	p->retry_ns = 0;
	p->ppid = r->ppid;
	p->flags = 0;
}

/* Read a small /proc file whole; returns bytes read or -1. */
static ssize_t read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	if (fd < 0)
		return -1;
	while (n < cap) {
		ssize_t r = read(fd, buf + n, cap - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	return (ssize_t)n;
}

/* ppid, flags and uid of a process from /proc/PID/stat and status. */
static bool read_proc_stat(const char *dir, uint32_t *ppid, uint32_t *flags, uint32_t *uid)
{
	char path[300], buf[4096];
	uint64_t f = 0;
	uint32_t u = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/stat", dir);
	n = read_file(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (!les_procfs_stat(buf, ppid, &f))
		return false;
	snprintf(path, sizeof(path), "%s/status", dir);
	n = read_file(path, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		les_procfs_status_uid(buf, &u);
	}
	*flags = f & LES_PF_KTHREAD ? LES_PROC_F_KTHREAD : 0;
	*uid = u;
	return true;
}

/*
 * Learn process pid from proc_root/pid as an exec notice would tell it:
 * job, tags and container from its environment and cgroup; with inherit,
 * the cached parent's job when its environment has none. NULL when /proc
 * has no such process.
 */
static struct proc_entry *read_proc(struct les_enricher *e, const char *proc_root, uint32_t pid,
				    bool inherit)
{
	char dir[256], path[300], cgbuf[8192];
	struct les_cgroup_info cg;
	bool have_cg = false;
	uint32_t ppid, flags, uid;
	struct proc_entry *p;
	struct les_attrib *a;
	ssize_t env_len, cg_len;

	snprintf(dir, sizeof(dir), "%s/%u", proc_root, pid);
	if (!read_proc_stat(dir, &ppid, &flags, &uid))
		return NULL;
	snprintf(path, sizeof(path), "%s/environ", dir);
	env_len = flags & LES_PROC_F_KTHREAD ? 0 : read_file(path, e->env_buf, ENV_READ_MAX);
	if (env_len < 0)
		env_len = 0;
	snprintf(path, sizeof(path), "%s/cgroup", dir);
	cg_len = read_file(path, cgbuf, sizeof(cgbuf) - 1);
	if (cg_len > 0) {
		cgbuf[cg_len] = '\0';
		have_cg = les_cgroup_parse_proc(cgbuf, (size_t)cg_len, &cg) == 1;
	}
	a = attribute(e, e->env_buf, (size_t)env_len, have_cg ? &cg : NULL,
		      inherit ? parent_attrib(e, ppid) : NULL);
	/* The environment is parsed: nothing but allowlisted values stays. */
	memset(e->env_buf, 0, (size_t)env_len);
	p = les_lru_put(&e->procs, pid, NULL);
	proc_set_attrib(e, p, a);
	p->retry_ns = 0;
	p->ppid = ppid;
	p->flags = flags;
	user_prefetch(e, uid);
	return p;
}

/*
 * A record of a process missing from the cache: evicted (the cache keeps
 * the proc_cache_size most recent ones) or its exec notice lost. It is
 * read once from /proc, so it keeps its job. A pid /proc does not have
 * (the process is gone) is kept as nothing known, read again at most once
 * a PROC_RETRY_NS: a late record of a dead process costs one failed open.
 */
static struct proc_entry *proc_missed(struct les_enricher *e, uint32_t pid, uint64_t ts_ns)
{
	struct proc_entry *p = read_proc(e, e->cfg.proc_root, pid, true);

	if (p) {
		e->stats.proc_rereads++;
		return p;
	}
	p = les_lru_put(&e->procs, pid, NULL);
	proc_set_attrib(e, p, NULL);
	p->flags = PROC_F_UNREAD;
	p->retry_ns = ts_ns + PROC_RETRY_NS;
	return NULL;
}

/* The cached process of a record, read from /proc when missing. */
static struct proc_entry *proc_of(struct les_enricher *e, uint32_t pid, uint64_t ts_ns)
{
	struct proc_entry *p = les_lru_get(&e->procs, pid);

	if (!p || (p->flags & PROC_F_UNREAD && ts_ns >= p->retry_ns))
		return proc_missed(e, pid, ts_ns);
	return p->flags & PROC_F_UNREAD ? NULL : p;
}

void les_enrich_scan(struct les_enricher *e, const char *proc_root)
{
	DIR *dir;
	struct dirent *de;

	dir = opendir(proc_root ? proc_root : "/proc");
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);
		struct proc_entry *p;

		if (!isdigit((unsigned char)de->d_name[0]) || *end || pid > UINT32_MAX)
			continue;
		/* Processes that exec'd meanwhile were learned from their notice. */
		p = les_lru_get(&e->procs, (uint32_t)pid);
		if (p && !(p->flags & PROC_F_UNREAD))
			continue;
		if (read_proc(e, proc_root ? proc_root : "/proc", (uint32_t)pid, false))
			e->stats.scanned++;
	}
	closedir(dir);
}

/* --- user names --------------------------------------------------------- */

/*
 * Called with user_lock held. False when the queue is full: the uid stays
 * pending, not queued, and is queued again by a later record of it.
 */
static bool user_enqueue(struct les_enricher *e, uint32_t uid)
{
	if (e->uq_len >= e->uq_cap) {
		e->stats.user_queue_full++;
		return false;
	}
	e->user_queue[(e->uq_head + e->uq_len++) % e->uq_cap] = uid;
	pthread_cond_signal(&e->user_cond);
	return true;
}

/* Now, for the user names' lifetimes: the configured clock (tests) or the monotonic one. */
static uint64_t user_clock_ns(const struct les_enricher *e)
{
	return e->cfg.clock_ns ? e->cfg.clock_ns() : les_mono_ns();
}

/*
 * The cache entry of uid, with a lookup queued when it is new or its name
 * has expired. Called with user_lock held.
 */
static struct user_entry *user_entry_due(struct les_enricher *e, uint32_t uid)
{
	bool created;
	struct user_entry *u = les_lru_put(&e->users, uid, &created);

	if (created || (u->state == USER_RESOLVED && u->expires_ns < user_clock_ns(e))) {
		u->state = USER_PENDING;
		u->waited = 0;
		u->queued = 0;
	}
	if (u->state == USER_PENDING && !u->queued)
		u->queued = user_enqueue(e, uid);
	return u;
}

static void user_prefetch(struct les_enricher *e, uint32_t uid)
{
	if (e->cfg.no_user_lookup || !e->user_thread_running)
		return;
	pthread_mutex_lock(&e->user_lock);
	user_entry_due(e, uid);
	pthread_mutex_unlock(&e->user_lock);
}

/* The default lookup_user: NSS (files, LDAP, SSSD...). */
static int nss_lookup_user(uint32_t uid, char *name, size_t len)
{
	struct passwd pw, *res = NULL;
	char buf[16384];

	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) || !res)
		return 0;
	snprintf(name, len, "%s", res->pw_name);
	return 1;
}

static void *user_resolver(void *arg)
{
	struct les_enricher *e = arg;

	pthread_mutex_lock(&e->user_lock);
	while (!e->user_stop) {
		struct user_entry *u;
		char name[sizeof(u->name)];
		uint32_t uid;
		int found;

		if (!e->uq_len) {
			pthread_cond_wait(&e->user_cond, &e->user_lock);
			continue;
		}
		uid = e->user_queue[e->uq_head];
		e->uq_head = (e->uq_head + 1) % e->uq_cap;
		e->uq_len--;
		/* NSS may take milliseconds: never under the lock. */
		pthread_mutex_unlock(&e->user_lock);
		found = e->lookup_user(uid, name, sizeof(name));
		pthread_mutex_lock(&e->user_lock);
		e->stats.nss_lookups++;
		u = les_lru_put(&e->users, uid, NULL);
		u->state = USER_RESOLVED;
		u->has_name = found;
		u->expires_ns = user_clock_ns(e) + (found ? USER_TTL_NS : USER_NEG_TTL_NS);
		snprintf(u->name, sizeof(u->name), "%s", found ? name : "");
		__atomic_add_fetch(&e->user_gen, 1, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&e->user_done_cond);
	}
	pthread_mutex_unlock(&e->user_lock);
	return NULL;
}

/*
 * The first record of a new uid waits a few milliseconds for its lookup, so
 * a process that starts and writes at once still gets its name. Only once
 * per lookup: a dead NSS server must not slow every record down.
 * Called with user_lock held; *u may move, so it is looked up again.
 */
static void wait_resolved(struct les_enricher *e, uint32_t uid, struct user_entry **u)
{
	struct timespec deadline;

	(*u)->waited = 1;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_nsec += USER_WAIT_NS;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	while ((*u)->state == USER_PENDING) {
		if (pthread_cond_timedwait(&e->user_done_cond, &e->user_lock, &deadline))
			break;
		*u = les_lru_put(&e->users, uid, NULL);
	}
	*u = les_lru_put(&e->users, uid, NULL);
}

/*
 * Fill the username of out: from the cache, else null and a lookup queued.
 * *expires_ns: when the name must be looked up again; *pending: not known yet.
 */
static void user_lookup(struct les_enricher *e, uint32_t uid, struct les_enriched *out,
			uint64_t *expires_ns, bool *pending)
{
	struct user_entry *u;

	out->username = NULL;
	*expires_ns = UINT64_MAX;
	*pending = false;
	if (e->cfg.no_user_lookup || !e->user_thread_running)
		return;
	pthread_mutex_lock(&e->user_lock);
	u = user_entry_due(e, uid);
	if (u->state == USER_PENDING && !u->waited)
		wait_resolved(e, uid, &u);
	if (u->state == USER_RESOLVED) {
		*expires_ns = u->expires_ns;
		if (u->has_name) {
			memcpy(out->username_buf, u->name, sizeof(out->username_buf));
			out->username = out->username_buf;
		}
	} else {
		e->stats.username_pending++;
		*pending = true;
		/* Looked at again: its lookup may have found the queue full. */
		*expires_ns = user_clock_ns(e) + USER_RETRY_NS;
	}
	pthread_mutex_unlock(&e->user_lock);
}

/* --- per record ----------------------------------------------------------- */

static unsigned int actor_of(struct les_enricher *e, const char *comm, unsigned int flags)
{
	uint64_t h =
		hash_bytes(comm, strnlen(comm, LES_COMM_LEN)) ^ (flags * 0x9e3779b97f4a7c15ULL);
	struct actor_slot *s = &e->actor_cache[h % ACTOR_CACHE];

	if (s->valid && s->flags == flags && strncmp(s->comm, comm, LES_COMM_LEN) == 0)
		return s->type;
	s->type = (uint8_t)les_actor_classify(&e->actor_rules, comm, strnlen(comm, LES_COMM_LEN),
					      flags);
	memcpy(s->comm, comm, LES_COMM_LEN);
	s->flags = flags;
	s->valid = 1;
	return s->type;
}

/* "job_id":…,"job_source":… for a --jobid-name other than plain %j. */
static void render_job(struct les_enricher *e, const struct les_task *t, const struct les_attrib *a,
		       struct les_enriched *out)
{
	struct les_jobid_ctx ctx = {
		.job_id = a->job_id,
		.comm = t->comm,
		.comm_len = LES_COMM_LEN,
		.hostname = e->hostname,
		.uid = t->uid,
		.gid = t->gid,
		.pid = t->pid,
	};
	struct jw w;

	les_jobid_format(e->cfg.jobid_name, &ctx, out->job_buf, sizeof(out->job_buf));
	out->job_id = out->job_buf[0] ? out->job_buf : NULL;
	jw_init(&w, out->job_json, sizeof(out->job_json));
	jw_obj_begin(&w);
	if (out->job_id)
		jw_kv_cstr(&w, "job_id", out->job_buf);
	else
		jw_kv_null(&w, "job_id");
	jw_kv_cstr(&w, "job_source", out->job_id ? les_job_source_name(a->job_source) : NULL);
	jw_obj_end(&w);
	out->job_json_len = jw_members(&w);
}

/* The members from "uid" to "actor_type", encoded once for the identity. */
static void encode_ident(struct les_enriched *en, const struct les_task *t)
{
	struct jw w;

	jw_init(&w, en->ident_json, sizeof(en->ident_json));
	jw_obj_begin(&w);
	jw_kv_u64(&w, "uid", t->uid);
	jw_kv_u64(&w, "gid", t->gid);
	jw_kv_strz(&w, "comm", t->comm, sizeof(t->comm));
	jw_kv_cstr(&w, "process", en->process);
	jw_kv_cstr(&w, "username", en->username);
	jw_kv_cstr(&w, "actor_type", en->actor_type);
	jw_obj_end(&w);
	en->ident_json_len = jw_members(&w);
}

static const struct les_attrib *attrib_of(const struct les_enricher *e, const struct proc_entry *p)
{
	return p && p->attrib ? p->attrib : &e->none;
}

/* Everything about the identity, from the caches: the path before the slots. */
static void enrich_identity(struct les_enricher *e, const struct les_task *t, unsigned int flags,
			    const struct proc_entry *p, struct ident_slot *s)
{
	struct les_enriched *out = &s->en;
	const struct les_attrib *a = attrib_of(e, p);

	out->attrib = a;
	out->job_json_len = 0;
	out->job_id = a->job_id[0] ? a->job_id : NULL;
	out->job_source = les_job_source_name(a->job_source);
	if (!e->plain_jobid)
		render_job(e, t, a, out);
	if (out->job_id)
		flags |= LES_ACTOR_F_JOB;
	if (p && (p->flags & LES_PROC_F_KTHREAD))
		flags |= LES_ACTOR_F_KTHREAD;
	out->actor_type = les_actor_name(actor_of(e, t->comm, flags));
	out->actor_by_name = out->job_id ? les_actor_name(actor_of(e, t->comm,
								   flags & ~LES_ACTOR_F_JOB))
					 : out->actor_type;
	out->process = les_procname_apply(&e->procname, t->comm, strnlen(t->comm, LES_COMM_LEN),
					  out->process_buf, sizeof(out->process_buf));
	user_lookup(e, t->uid, out, &s->expires_ns, &s->user_pending);
	encode_ident(out, t);
}

static uint64_t ident_hash(const struct les_task *t, unsigned int flags)
{
	uint64_t c[2];

	memcpy(c, t->comm, sizeof(c));
	return ((uint64_t)t->pid * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)t->uid << 32) ^ t->gid ^
	       (c[0] * 0xff51afd7ed558ccdULL) ^ (c[1] * 0xc4ceb9fe1a85ec53ULL) ^ flags;
}

/* Whether slot s was made for this identity and nothing it was made from changed. */
static bool ident_holds(struct les_enricher *e, const struct ident_slot *s,
			const struct les_task *t, unsigned int flags, const struct proc_entry *p,
			uint64_t ts_ns)
{
	return s->valid && s->pid == t->pid && s->uid == t->uid && s->gid == t->gid &&
	       s->flags == flags && memcmp(s->comm, t->comm, LES_COMM_LEN) == 0 &&
	       s->attrib_serial == attrib_of(e, p)->serial && s->proc_flags == (p ? p->flags : 0) &&
	       ts_ns < s->expires_ns &&
	       s->user_gen == __atomic_load_n(&e->user_gen, __ATOMIC_ACQUIRE);
}

const struct les_enriched *les_enrich_task(struct les_enricher *e, const struct les_task *t,
					   unsigned int flags, uint64_t ts_ns)
{
	/* Looked up on every record: it keeps a busy process the most recent. */
	struct proc_entry *p = proc_of(e, t->pid, ts_ns);
	uint64_t h = ident_hash(t, flags);
	struct ident_slot *s = &e->idents[(h ^ (h >> 32)) & (IDENT_SLOTS - 1)];

	if (!ident_holds(e, s, t, flags, p, ts_ns)) {
		s->valid = false;
		/* Read before the lookup: a name resolved meanwhile makes it stale. */
		s->user_gen = __atomic_load_n(&e->user_gen, __ATOMIC_ACQUIRE);
		enrich_identity(e, t, flags, p, s);
		s->pid = t->pid;
		s->uid = t->uid;
		s->gid = t->gid;
		s->flags = flags;
		memcpy(s->comm, t->comm, LES_COMM_LEN);
		s->attrib_serial = s->en.attrib->serial;
		s->proc_flags = p ? p->flags : 0;
		s->proc_unknown = !p;
		s->valid = true;
		if (!p)
			e->stats.proc_misses++;
		return &s->en;
	}
	if (s->proc_unknown)
		e->stats.proc_misses++;
	if (s->user_pending)
		e->stats.username_pending++;
	return &s->en;
}

void les_enrich_get_stats(struct les_enricher *e, struct les_enrich_stats *s)
{
	pthread_mutex_lock(&e->user_lock);
	*s = e->stats;
	s->users_known = e->users.n;
	s->user_evictions = e->users.evictions;
	pthread_mutex_unlock(&e->user_lock);
	s->procs_known = e->procs.n;
	s->proc_cache_size = e->procs.cap;
	s->proc_evictions = e->procs.evictions;
	s->attribs = e->n_attribs;
	s->attrib_cache_size = e->attrib_cap;
}

/* clang-format off */
#define STAT_FIELD(m, g, h) { #m, offsetof(struct les_enrich_stats, m), g, h }
const struct les_stat_field les_enrich_stat_fields[] = {
	STAT_FIELD(procs_known, true, "Processes in the process cache."),
	STAT_FIELD(proc_cache_size, true, "Processes the process cache holds at most (--proc-cache-size)."),
	STAT_FIELD(proc_misses, false, "Records of a process neither in the cache nor in /proc."),
	STAT_FIELD(proc_evictions, false, "Processes evicted from the process cache."),
	STAT_FIELD(proc_rereads, false, "Processes missing from the cache, read again from /proc."),
	STAT_FIELD(attribs, true, "Distinct attributions (job, tags, container) held."),
	STAT_FIELD(attrib_cache_size, true, "Attributions held at most."),
	STAT_FIELD(attrib_overflow, false, "Attributions kept without their tags (too long) or lost (out of memory)."),
	STAT_FIELD(attrib_aged, false, "Processes dropped from the cache to make room for an attribution."),
	STAT_FIELD(users_known, true, "Uids in the user name cache."),
	STAT_FIELD(user_evictions, false, "Uids evicted from the user name cache (looked up again when back)."),
	STAT_FIELD(username_pending, false, "Records emitted before their user name was resolved."),
	STAT_FIELD(nss_lookups, false, "User name lookups done."),
	STAT_FIELD(user_queue_full, false, "User name lookups that found the resolver's queue full (tried again later)."),
	STAT_FIELD(scanned, false, "Processes learned by the start-up scan of /proc."),
	STAT_FIELD(job_env_cut, false, "Job variables not used: cut by the bounded environment read."),
};
/* clang-format on */
const size_t les_enrich_n_stat_fields =
	sizeof(les_enrich_stat_fields) / sizeof(les_enrich_stat_fields[0]);

void les_enrich_stats_json(const struct les_enrich_stats *s, struct jw *w)
{
	jw_key(w, "enrich");
	jw_obj_begin(w);
	for (size_t i = 0; i < les_enrich_n_stat_fields; i++)
		jw_kv_u64(w, les_enrich_stat_fields[i].name,
			  les_stat_value(s, &les_enrich_stat_fields[i]));
	jw_obj_end(w);
}

/* --- life cycle --------------------------------------------------------- */

static int configure(struct les_enricher *e, char *err, size_t errlen)
{
	int ret;

	ret = les_env_allow_init(&e->allow, e->cfg.job_env, e->cfg.n_job_env, e->cfg.env_tags,
				 e->cfg.n_env_tags, err, errlen);
	if (ret)
		return ret;
	if (!e->cfg.jobid_name)
		e->cfg.jobid_name = "%j";
	ret = les_jobid_fmt_check(e->cfg.jobid_name, err, errlen);
	if (ret)
		return ret;
	e->plain_jobid = strcmp(e->cfg.jobid_name, "%j") == 0;
	les_procname_filter_init(&e->procname, e->cfg.strip_suffix);
	for (size_t i = 0; i < e->cfg.n_process_allowlist; i++) {
		ret = les_procname_allow_add(&e->procname, e->cfg.process_allowlist[i], err,
					     errlen);
		if (ret)
			return ret;
	}
	les_procname_filter_finish(&e->procname);
	for (size_t i = 0; i < e->cfg.n_actor_rules; i++) {
		ret = les_actor_rules_add(&e->actor_rules, e->cfg.actor_rules[i], err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

int les_enrich_new(struct les_enricher **out, const struct les_enrich_config *cfg,
		   const char *hostname, char *err, size_t errlen)
{
	struct les_enricher *e = calloc(1, sizeof(*e));
	int ret;

	*out = NULL;
	if (!e)
		return -ENOMEM;
	e->cfg = *cfg;
	if (!e->cfg.proc_root)
		e->cfg.proc_root = "/proc";
	e->lookup_user = cfg->lookup_user ?: nss_lookup_user;
	e->attrib_cap = cfg->attrib_cache_size
				?: (uint64_t)(cfg->proc_cache_size ?: LES_PROC_CACHE_DEFAULT) + 1;
	e->uq_cap = cfg->user_queue_size ?: LES_USER_QUEUE_DEFAULT;
	e->cgroup_root_fd = -1;
	snprintf(e->hostname, sizeof(e->hostname), "%s", hostname ? hostname : "");
	pthread_mutex_init(&e->user_lock, NULL);
	pthread_cond_init(&e->user_cond, NULL);
	pthread_cond_init(&e->user_done_cond, NULL);
	ret = configure(e, err, errlen);
	if (!ret && !render_attrib(e, &e->none, NULL, NULL))
		ret = -EINVAL;
	ret = ret
		      ?: les_lru_init(&e->procs, cfg->proc_cache_size ?: LES_PROC_CACHE_DEFAULT,
				      sizeof(struct proc_entry));
	ret = ret
		      ?: les_lru_init(&e->users, cfg->user_cache_size ?: 4096,
				      sizeof(struct user_entry));
	if (!ret && !(e->idents = calloc(IDENT_SLOTS, sizeof(*e->idents))))
		ret = -ENOMEM;
	if (!ret && (!(e->user_queue = calloc(e->uq_cap, sizeof(*e->user_queue))) ||
		     !(e->env_buf = malloc(ENV_READ_MAX))))
		ret = -ENOMEM;
	if (ret) {
		les_enrich_free(e);
		return ret;
	}
	e->procs.on_evict = proc_evicted;
	e->procs.evict_ctx = e;
	open_cgroup_root(e);
	if (!cfg->no_user_lookup && pthread_create(&e->user_thread, NULL, user_resolver, e) == 0)
		e->user_thread_running = true;
	*out = e;
	return 0;
}

/*
 * Stop the resolver; false when it is still inside a lookup after
 * USER_STOP_WAIT_NS (an NSS server that never answers): it would touch the
 * enricher when the lookup returns, so the enricher is then left to the
 * process's exit rather than freed under it.
 */
static bool user_resolver_stopped(struct les_enricher *e)
{
	struct timespec deadline;
	uint64_t ns;

	pthread_mutex_lock(&e->user_lock);
	e->user_stop = true;
	pthread_cond_signal(&e->user_cond);
	pthread_mutex_unlock(&e->user_lock);
	clock_gettime(CLOCK_REALTIME, &deadline);
	ns = (uint64_t)deadline.tv_nsec + USER_STOP_WAIT_NS;
	deadline.tv_sec += (time_t)(ns / 1000000000ULL);
	deadline.tv_nsec = (long)(ns % 1000000000ULL);
	if (pthread_timedjoin_np(e->user_thread, NULL, &deadline) == 0)
		return true;
	fprintf(stderr, "lustre-ebpf-stream: a user name lookup did not return (NSS hung?): "
			"exiting without it\n");
	return false;
}

void les_enrich_free(struct les_enricher *e)
{
	if (!e)
		return;
	if (e->user_thread_running && !user_resolver_stopped(e))
		return;
	for (size_t b = 0; b < ATTRIB_BUCKETS; b++) {
		struct les_attrib *a = e->attribs[b], *next;

		for (; a; a = next) {
			next = a->next;
			free(a);
		}
	}
	if (e->cgroup_root_fd >= 0)
		close(e->cgroup_root_fd);
	les_lru_free(&e->procs);
	les_lru_free(&e->users);
	free(e->idents);
	free(e->user_queue);
	free(e->env_buf);
	pthread_mutex_destroy(&e->user_lock);
	pthread_cond_destroy(&e->user_cond);
	pthread_cond_destroy(&e->user_done_cond);
	free(e);
}
