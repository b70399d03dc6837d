// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Enrichment per record: what is kept per process identity must follow
 * every change of what it was made from (an exec, another comm, a user
 * name resolved or due again), and count misses as the uncached path did.
 */
#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "enrich/enrich.h"
#include "util/json.h"
#include "notices.h"

static struct les_task task(uint32_t pid, uint32_t uid, const char *comm)
{
	struct les_task t = {.pid = pid, .tid = pid, .uid = uid, .gid = uid};

	strncpy(t.comm, comm, sizeof(t.comm));
	return t;
}

static void exec_with_env(struct les_enricher *e, uint32_t pid, const char *env, size_t len)
{
	static struct les_rec_proc r;

	les_test_exec(&r, pid, 1, env, len, "app");
	les_enrich_exec(e, &r);
}

/* The encoded identity members, parsed back: their field s. */
static const char *ident_field(const struct les_enriched *en, const char *k, json_t **doc)
{
	char buf[LES_IDENT_JSON_MAX + 2];
	json_error_t err;

	ck_assert_uint_gt(en->ident_json_len, 0);
	buf[0] = '{';
	memcpy(buf + 1, en->ident_json, en->ident_json_len);
	buf[en->ident_json_len + 1] = '}';
	*doc = json_loadb(buf, en->ident_json_len + 2, 0, &err);
	ck_assert_msg(*doc, "'%.*s': %s", (int)en->ident_json_len, en->ident_json, err.text);
	return json_string_value(json_object_get(*doc, k));
}

static struct les_enricher *new_enricher(bool user_lookup)
{
	static const char *job_env = "SLURM_JOB_ID";
	struct les_enrich_config cfg = {
		.job_env = {job_env},
		.n_job_env = 1,
		.no_user_lookup = !user_lookup,
		/* No /proc here: pid 4242 may well run on this host. */
		.proc_root = "/nonexistent",
	};
	struct les_enricher *e;
	char err[256];

	ck_assert_int_eq(les_enrich_new(&e, &cfg, "node1", err, sizeof(err)), 0);
	return e;
}

START_TEST(test_exec_changes_attribution)
{
	struct les_enricher *e = new_enricher(false);
	struct les_task t = task(4242, 1000, "app");
	struct les_enrich_stats st;
	const struct les_enriched *en;
	json_t *doc;

	en = les_enrich_task(e, &t, 0, 1000);
	ck_assert_ptr_null(en->job_id);
	en = les_enrich_task(e, &t, 0, 2000);
	ck_assert_ptr_null(en->job_id);
	les_enrich_get_stats(e, &st);
	ck_assert_uint_eq(st.proc_misses, 2); /* every record of an unknown process */

	exec_with_env(e, 4242, "SLURM_JOB_ID=42", sizeof("SLURM_JOB_ID=42"));
	en = les_enrich_task(e, &t, 0, 3000);
	ck_assert_str_eq(en->job_id, "42");
	exec_with_env(e, 4242, "SLURM_JOB_ID=43", sizeof("SLURM_JOB_ID=43"));
	en = les_enrich_task(e, &t, 0, 4000);
	ck_assert_str_eq(en->job_id, "43");
	les_enrich_get_stats(e, &st);
	ck_assert_uint_eq(st.proc_misses, 2);

	/* a thread renamed itself: its own process name, same job */
	t = task(4242, 1000, "worker-7");
	en = les_enrich_task(e, &t, 0, 5000);
	ck_assert_str_eq(ident_field(en, "comm", &doc), "worker-7");
	json_decref(doc);
	ck_assert_str_eq(en->job_id, "43");
	t = task(4242, 1000, "app");
	en = les_enrich_task(e, &t, 0, 6000);
	ck_assert_str_eq(ident_field(en, "comm", &doc), "app");
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "uid")), 1000);
	ck_assert(json_is_null(json_object_get(doc, "username")));
	json_decref(doc);

	/* another uid in the same process (setuid) */
	t = task(4242, 0, "app");
	en = les_enrich_task(e, &t, 0, 7000);
	ident_field(en, "comm", &doc);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "uid")), 0);
	json_decref(doc);
	les_enrich_free(e);
}
END_TEST

/* An exec whose environment was cut inside SLURM_JOB_ID: no job, counted. */
START_TEST(test_cut_env_no_job)
{
	static const char env[] = "HOME=/\0SLURM_JOB_ID=4242";
	struct les_enricher *e = new_enricher(false);
	struct les_task t = task(4243, 1000, "app");
	struct les_enrich_stats st;
	const struct les_enriched *en;

	exec_with_env(e, 4243, env, sizeof(env) - 1);
	en = les_enrich_task(e, &t, 0, 1000);
	ck_assert_ptr_null(en->job_id);
	les_enrich_get_stats(e, &st);
	ck_assert_uint_eq(st.job_env_cut, 1);
	exec_with_env(e, 4243, "SLURM_JOB_ID=4242", sizeof("SLURM_JOB_ID=4242"));
	en = les_enrich_task(e, &t, 0, 2000);
	ck_assert_str_eq(en->job_id, "4242");
	les_enrich_get_stats(e, &st);
	ck_assert_uint_eq(st.job_env_cut, 1);
	les_enrich_free(e);
}
END_TEST

static void put_file(const char *dir, const char *name, const char *data, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* A process of a /proc tree made of real files: stat, status, environ, cgroup. */
static void fake_proc(const char *root, uint32_t pid, const char *env, size_t env_len,
		      const char *cgroup)
{
	char dir[256], stat[256];

	snprintf(dir, sizeof(dir), "%s/%u", root, pid);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(stat, sizeof(stat), "%u (a) b) S 1 %u %u 0 -1 4194560 0 0 0 0\n", pid, pid, pid);
	put_file(dir, "stat", stat, strlen(stat));
	put_file(dir, "status", "Name:\ta) b\nUid:\t1000\t1000\t1000\t1000\n",
		 strlen("Name:\ta) b\nUid:\t1000\t1000\t1000\t1000\n"));
	put_file(dir, "environ", env, env_len);
	put_file(dir, "cgroup", cgroup, strlen(cgroup));
}

/*
 * The start-up scan over a /proc of real files: a job from the cgroup when
 * the environment has none (or a cut one), none from a cgroup the user made
 * in the subtree systemd delegates to it.
 */
START_TEST(test_scan_cgroup_job)
{
	char root[] = "/tmp/les-test-proc.XXXXXX", cmd[64];
	struct les_enricher *e = new_enricher(false);
	struct les_enrich_stats st;
	const struct les_enriched *en;
	struct les_task t;

	ck_assert_ptr_nonnull(mkdtemp(root));
	fake_proc(root, 100, "HOME=/", sizeof("HOME=/"),
		  "0::/system.slice/slurmstepd.scope/job_77/step_0/user/task_0\n");
	fake_proc(root, 101, "HOME=/", sizeof("HOME=/"),
		  "0::/user.slice/user-1000.slice/user@1000.service/app.slice/"
		  "slurmstepd.scope/job_999/step_0\n");
	fake_proc(root, 102, "HOME=/\0SLURM_JOB_ID=5", sizeof("HOME=/\0SLURM_JOB_ID=5") - 1,
		  "0::/system.slice/slurmstepd.scope/job_55/step_0\n");
	les_enrich_scan(e, root);
	les_enrich_get_stats(e, &st);
	ck_assert_uint_eq(st.scanned, 3);
	ck_assert_uint_eq(st.job_env_cut, 1);
	t = task(100, 1000, "a) b");
	en = les_enrich_task(e, &t, 0, 1000);
	ck_assert_ptr_nonnull(en->job_id);
	ck_assert_str_eq(en->job_id, "77");
	ck_assert_str_eq(en->job_source, "cgroup");
	t = task(101, 1000, "a) b");
	en = les_enrich_task(e, &t, 0, 2000);
	ck_assert_ptr_null(en->job_id);
	t = task(102, 1000, "a) b");
	en = les_enrich_task(e, &t, 0, 3000);
	ck_assert_ptr_nonnull(en->job_id);
	ck_assert_str_eq(en->job_id, "55");
	les_enrich_free(e);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A name resolved after the first records replaces their null. */
START_TEST(test_user_name_follows_resolution)
{
	struct les_enricher *e = new_enricher(true);
	struct les_task t = task(77, 0, "app");
	const struct les_enriched *en = NULL;
	struct les_enrich_stats st;
	uint64_t lookups;

	for (int i = 0; i < 4000; i++) {
		en = les_enrich_task(e, &t, 0, mono_now());
		if (en->username)
			break;
		usleep(1000);
	}
	ck_assert_ptr_nonnull(en->username);
	ck_assert_str_eq(en->username, "root");
	les_enrich_get_stats(e, &st);
	lookups = st.nss_lookups;
	ck_assert_uint_ge(lookups, 1);

	/*
	 * A record past the name's expiry takes the full path again (the
	 * lookup itself is due by the clock, not by the record): same name.
	 */
	en = les_enrich_task(e, &t, 0, mono_now() + 601ULL * 1000000000ULL);
	ck_assert_str_eq(en->username, "root");
	les_enrich_get_stats(e, &st);
	ck_assert_uint_eq(st.nss_lookups, lookups);
	les_enrich_free(e);
}
END_TEST

static struct les_enricher *new_enricher_with(struct les_enrich_config *cfg)
{
	static const char *job_env = "SLURM_JOB_ID";
	struct les_enricher *e;
	char err[256];

	cfg->job_env[0] = job_env;
	cfg->n_job_env = 1;
	if (!cfg->proc_root)
		cfg->proc_root = "/nonexistent";
	ck_assert_int_eq(les_enrich_new(&e, cfg, "node1", err, sizeof(err)), 0);
	return e;
}

/* Exec of pid with SLURM_JOB_ID=job (and a tag-less environment). */
static void exec_job(struct les_enricher *e, uint32_t pid, unsigned long job)
{
	char env[64];
	int n = snprintf(env, sizeof(env), "SLURM_JOB_ID=%lu", job);

	exec_with_env(e, pid, env, (size_t)n + 1);
}

static void assert_job(struct les_enricher *e, uint32_t pid, unsigned long job, uint64_t ts)
{
	struct les_task t = task(pid, 1000, "app");
	const struct les_enriched *en = les_enrich_task(e, &t, 0, ts);
	char want[32];

	snprintf(want, sizeof(want), "%lu", job);
	ck_assert_msg(en->job_id && strcmp(en->job_id, want) == 0, "pid %u: job %s, want %s", pid,
		      en->job_id ? en->job_id : "(none)", want);
}

/*
 * A month of job churn: 200,000 jobs, one process each, through the
 * default caches. Attributions are freed with the last process that holds
 * one, so the table never fills and the last jobs still get their ID.
 */
START_TEST(test_job_churn_default_caches)
{
	struct les_enrich_config cfg = {.no_user_lookup = true};
	struct les_enricher *e = new_enricher_with(&cfg);
	struct les_enrich_stats st;

	for (unsigned long j = 1; j <= 200000; j++) {
		exec_job(e, (uint32_t)(100000 + j), j);
		if (j % 1000 == 0 || j > 199990)
			assert_job(e, (uint32_t)(100000 + j), j, j);
	}
	les_enrich_get_stats(e, &st);
	ck_assert_uint_eq(st.attrib_overflow, 0);
	ck_assert_uint_eq(st.attrib_aged, 0); /* the process cache is the only limit */
	ck_assert_uint_le(st.attribs, st.proc_cache_size);
	ck_assert_uint_eq(st.attribs, st.procs_known);
	ck_assert_uint_eq(st.proc_evictions, 200000 - st.proc_cache_size);
	les_enrich_free(e);
}
END_TEST

/*
 * An attribution table smaller than the process cache: past it, the least
 * recent processes give their attribution up (counted as attrib_aged); a
 * new job always gets its ID and the table stays at its size.
 */
START_TEST(test_job_churn_small_attrib_table)
{
	struct les_enrich_config cfg = {
		.no_user_lookup = true, .proc_cache_size = 1000, .attrib_cache_size = 100};
	struct les_enricher *e = new_enricher_with(&cfg);
	struct les_enrich_stats st;
	struct les_task t;

	for (unsigned long j = 1; j <= 200000; j++) {
		exec_job(e, (uint32_t)(100000 + j), j);
		/* Two processes per job now and then: one attribution, two holders. */
		if (j % 7 == 0)
			exec_job(e, (uint32_t)(900000 + j), j);
		if (j % 997 == 0) {
			les_enrich_get_stats(e, &st);
			ck_assert_uint_le(st.attribs, 100);
		}
	}
	for (unsigned long j = 200000 - 90; j <= 200000; j++)
		assert_job(e, (uint32_t)(100000 + j), j, 1);
	les_enrich_get_stats(e, &st);
	ck_assert_uint_eq(st.attrib_overflow, 0);
	ck_assert_uint_le(st.attribs, 100);
	ck_assert_uint_ge(st.attrib_aged, 200000 - 100);
	ck_assert_uint_le(st.procs_known, 2 * 100); /* at most two holders each */
	/* An aged-out process is read from /proc: here there is none, so nothing known. */
	t = task(100001, 1000, "app");
	ck_assert_ptr_null(les_enrich_task(e, &t, 0, 2)->job_id);
	les_enrich_free(e);
}
END_TEST

/* A tag set too long for a record: the process keeps its job without tags. */
START_TEST(test_long_tags_keep_job)
{
	struct les_enrich_config cfg = {.no_user_lookup = true,
					.env_tags = {"TA", "TB", "TC", "TD", "TE"},
					.n_env_tags = 5};
	struct les_enricher *e = new_enricher_with(&cfg);
	static char env[LES_ENV_MAX];
	struct les_enrich_stats st;
	size_t n;

	n = (size_t)sprintf(env, "SLURM_JOB_ID=99") + 1;
	/* Control bytes: 6 bytes each in JSON, 5 x 127 of them beyond the room for tags. */
	for (char c = 'A'; c <= 'E'; c++) {
		n += (size_t)sprintf(env + n, "T%c=", c);
		memset(env + n, 1, 127);
		n += 127;
		env[n++] = '\0';
	}
	exec_with_env(e, 555, env, n);
	assert_job(e, 555, 99, 1);
	les_enrich_get_stats(e, &st);
	ck_assert_uint_eq(st.attrib_overflow, 1);
	les_enrich_free(e);
}
END_TEST

/* A child of this test with SLURM_JOB_ID=job in its environment, asleep. */
static pid_t spawn_job(const char *job)
{
	char var[64];
	char *argv[] = {"sleep", "60", NULL}, *envp[] = {var, NULL};
	pid_t pid;

	snprintf(var, sizeof(var), "SLURM_JOB_ID=%s", job);
	ck_assert_int_eq(posix_spawnp(&pid, "sleep", NULL, NULL, argv, envp), 0);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/*
 * A process evicted from the cache by the exec of many others is read
 * again from its real /proc entry on its next record, job and all; so is
 * one whose exec notice never came.
 */
START_TEST(test_evicted_process_read_from_proc)
{
	struct les_enrich_config cfg = {
		.no_user_lookup = true, .proc_cache_size = 16, .proc_root = "/proc"};
	struct les_enricher *e = new_enricher_with(&cfg);
	pid_t child = spawn_job("777"), other = spawn_job("888");
	struct les_enrich_stats st;

	/* The exec notice of the child: it may not have exec'd sleep yet, so a stand-in. */
	exec_job(e, (uint32_t)child, 777);
	assert_job(e, (uint32_t)child, 777, 1);
	for (uint32_t i = 0; i < 100; i++)
		exec_job(e, 4000000000u + i, i);
	les_enrich_get_stats(e, &st);
	ck_assert_uint_ge(st.proc_evictions, 100 - 16);
	/* Let the children exec sleep: their /proc environ is the one they were given. */
	for (int i = 0; i < 200; i++) {
		char path[64], buf[64];
		int fd;
		ssize_t n = 0;

		snprintf(path, sizeof(path), "/proc/%d/environ", (int)other);
		fd = open(path, O_RDONLY);
		if (fd >= 0) {
			n = read(fd, buf, sizeof(buf));
			close(fd);
		}
		if (n > 0 && memcmp(buf, "SLURM_JOB_ID=888", 16) == 0)
			break;
		usleep(10000);
	}
	assert_job(e, (uint32_t)child, 777, 2);
	assert_job(e, (uint32_t)other, 888, 3); /* never seen at all */
	les_enrich_get_stats(e, &st);
	ck_assert_uint_eq(st.proc_rereads, 2);
	ck_assert_uint_eq(st.proc_misses, 0);
	reap(child);
	reap(other);
	/* Gone from /proc: nothing known, and /proc is not read again at once. */
	exec_job(e, 4100000000u, 1);
	for (uint32_t i = 0; i < 100; i++)
		exec_job(e, 4000000000u + i, i);
	{
		struct les_task t = task((uint32_t)child, 1000, "app");

		ck_assert_ptr_null(les_enrich_task(e, &t, 0, 10)->job_id);
		ck_assert_ptr_null(les_enrich_task(e, &t, 0, 11)->job_id);
	}
	les_enrich_get_stats(e, &st);
	ck_assert_uint_eq(st.proc_rereads, 2);
	ck_assert_uint_eq(st.proc_misses, 2);
	les_enrich_free(e);
}
END_TEST

/* A resolver that answers once the test says so: a pipe written or closed. */
static int resolver_gate[2];

static int gated_lookup(uint32_t uid, char *name, size_t len)
{
	char c;

	if (read(resolver_gate[0], &c, 1) < 0)
		return 0;
	snprintf(name, len, "user%u", uid);
	return 1;
}

/*
 * Three new uids while the resolver hangs and its queue holds one: a
 * lookup finds the queue full (counted) and is queued again by a later
 * record, so its uid is resolved once the resolver answers.
 */
START_TEST(test_full_user_queue_retried)
{
	struct les_enrich_config cfg = {.user_queue_size = 1, .lookup_user = gated_lookup};
	struct les_enricher *e;
	struct les_enrich_stats st;
	const struct les_enriched *en = NULL;
	struct les_task t;
	uint64_t now = mono_now();

	ck_assert_int_eq(pipe(resolver_gate), 0);
	e = new_enricher_with(&cfg);
	for (uint32_t uid = 2001; uid <= 2003; uid++) {
		t = task(uid, uid, "app");
		en = les_enrich_task(e, &t, 0, now);
		ck_assert_ptr_null(en->username);
	}
	les_enrich_get_stats(e, &st);
	ck_assert_uint_ge(st.user_queue_full, 1);
	close(resolver_gate[1]); /* every lookup answers from now on */
	t = task(2003, 2003, "app");
	for (int i = 1; i <= 300 && !(en = les_enrich_task(e, &t, 0, now))->username; i++) {
		usleep(10000);
		now = mono_now() + (uint64_t)i * 2000000000ULL;
	}
	ck_assert_ptr_nonnull(en->username);
	ck_assert_str_eq(en->username, "user2003");
	les_enrich_free(e);
	close(resolver_gate[0]);
}
END_TEST

/*
 * A name service that never answers: the enricher's end waits about a
 * second for the lookup in progress, then goes on without it (the exit of
 * a daemon whose NSS server hung). The blocked lookup is never released.
 */
START_TEST(test_hung_resolver_does_not_hold_exit)
{
	struct les_enrich_config cfg = {.lookup_user = gated_lookup};
	struct les_enricher *e;
	struct les_task t = task(2101, 2101, "app");
	uint64_t t0;

	ck_assert_int_eq(pipe(resolver_gate), 0);
	e = new_enricher_with(&cfg);
	les_enrich_task(e, &t, 0, mono_now());
	usleep(50000); /* the resolver is inside the lookup now */
	t0 = mono_now();
	les_enrich_free(e);
	ck_assert_uint_lt(mono_now() - t0, 3000000000ULL);
	ck_assert_uint_ge(mono_now() - t0, 500000000ULL);
}
END_TEST

/* The stats record's member: every counter by name. */
START_TEST(test_stats_json)
{
	struct les_enrich_config cfg = {.no_user_lookup = true, .attrib_cache_size = 5};
	struct les_enricher *e = new_enricher_with(&cfg);
	struct les_enrich_stats st;
	char buf[2048];
	struct jw w;
	json_t *doc, *m;

	for (unsigned long j = 1; j <= 10; j++)
		exec_job(e, (uint32_t)j, j);
	les_enrich_get_stats(e, &st);
	jw_init(&w, buf, sizeof(buf));
	jw_obj_begin(&w);
	les_enrich_stats_json(&st, &w);
	jw_obj_end(&w);
	ck_assert(!w.overflow);
	doc = json_loadb(buf, w.len, 0, NULL);
	ck_assert_ptr_nonnull(doc);
	m = json_object_get(doc, "enrich");
	ck_assert_int_eq(json_object_size(m), les_enrich_n_stat_fields);
	ck_assert_int_eq(json_integer_value(json_object_get(m, "attribs")), 5);
	ck_assert_int_eq(json_integer_value(json_object_get(m, "attrib_cache_size")), 5);
	ck_assert_int_eq(json_integer_value(json_object_get(m, "attrib_aged")), 5);
	ck_assert_int_eq(json_integer_value(json_object_get(m, "proc_cache_size")), 65536);
	les_enrich_free(e);
	/* By default the attribution table holds one more than the process cache. */
	cfg = (struct les_enrich_config){.no_user_lookup = true, .proc_cache_size = 100};
	e = new_enricher_with(&cfg);
	les_enrich_get_stats(e, &st);
	ck_assert_uint_eq(st.attrib_cache_size, 101);
	json_decref(doc);
	les_enrich_free(e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("enrich");
	TCase *tc = tcase_create("identity");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_exec_changes_attribution);
	tcase_add_test(tc, test_cut_env_no_job);
	tcase_add_test(tc, test_scan_cgroup_job);
	tcase_add_test(tc, test_user_name_follows_resolution);
	tcase_add_test(tc, test_job_churn_default_caches);
	tcase_add_test(tc, test_job_churn_small_attrib_table);
	tcase_add_test(tc, test_long_tags_keep_job);
	tcase_add_test(tc, test_evicted_process_read_from_proc);
	tcase_add_test(tc, test_full_user_queue_retried);
	tcase_add_test(tc, test_hung_resolver_does_not_hold_exit);
	tcase_add_test(tc, test_stats_json);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
