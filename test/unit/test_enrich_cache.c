// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Enrichment's cache rules (enrich.h, docs/reliability.md): what is kept
 * per pid and per uid, for how long, and what makes it go:
 *   - an exec notice sets a pid's attribution, replacing what was there
 *     (a new process on a reused pid); a fork passes the parent's on, and
 *     a fork of an unknown parent leaves nothing;
 *   - attributions are shared and freed with their last holder;
 *   - the process cache is an LRU of --proc-cache-size: a record makes its
 *     process the most recent;
 *   - a pid /proc does not have is kept as unknown and read again at most
 *     once a second;
 *   - a user name is kept 600 s, a name not found 60 s, then looked up
 *     again (a clock of the test's own steps past them).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "enrich/enrich.h"
#include "notices.h"

#define SEC 1000000000ULL

static struct les_task task(uint32_t pid, const char *comm)
{
	struct les_task t = {.pid = pid, .tid = pid, .uid = 1000, .gid = 1000};

	strncpy(t.comm, comm, sizeof(t.comm));
	return t;
}

static struct les_enricher *enricher(struct les_enrich_config *cfg)
{
	struct les_enricher *e;
	char err[256];

	cfg->job_env[0] = "SLURM_JOB_ID";
	cfg->n_job_env = 1;
	if (!cfg->proc_root)
		cfg->proc_root = "/nonexistent"; /* nothing is read again from /proc */
	ck_assert_int_eq(les_enrich_new(&e, cfg, "node1", err, sizeof(err)), 0);
	return e;
}

static void exec_job(struct les_enricher *e, uint32_t pid, uint32_t ppid, const char *job)
{
	static struct les_rec_proc r;

	les_test_exec_job(&r, pid, ppid, job, NULL);
	les_enrich_exec(e, &r);
}

static void fork_of(struct les_enricher *e, uint32_t pid, uint32_t ppid)
{
	struct les_rec_fork r = {.kind = LES_REC_PROC_FORK, .pid = pid, .ppid = ppid};

	les_enrich_fork(e, &r);
}

/* The job of pid's record at ts, "" when none. */
static const char *job_of(struct les_enricher *e, uint32_t pid, uint64_t ts)
{
	struct les_task t = task(pid, "app");
	const struct les_enriched *en = les_enrich_task(e, &t, 0, ts);

	return en->job_id ? en->job_id : "";
}

static struct les_enrich_stats stats(struct les_enricher *e)
{
	struct les_enrich_stats st;

	les_enrich_get_stats(e, &st);
	return st;
}

/* A fork shares its parent's attribution; the child's own exec replaces it. */
START_TEST(test_fork_shares_exec_replaces)
{
	struct les_enrich_config cfg = {.no_user_lookup = true};
	struct les_enricher *e = enricher(&cfg);

	exec_job(e, 10, 1, "A");
	fork_of(e, 11, 10);
	ck_assert_str_eq(job_of(e, 11, 1), "A");
	ck_assert_uint_eq(stats(e).attribs, 1);
	exec_job(e, 11, 10, "B");
	ck_assert_str_eq(job_of(e, 11, 2), "B");
	ck_assert_str_eq(job_of(e, 10, 3), "A");
	ck_assert_uint_eq(stats(e).attribs, 2);
	ck_assert_uint_eq(stats(e).proc_misses, 0);
	les_enrich_free(e);
}
END_TEST

/* A fork of a parent not cached leaves nothing: the child is a miss. */
START_TEST(test_fork_of_unknown_parent)
{
	struct les_enrich_config cfg = {.no_user_lookup = true};
	struct les_enricher *e = enricher(&cfg);

	fork_of(e, 21, 20);
	ck_assert_uint_eq(stats(e).procs_known, 0);
	ck_assert_str_eq(job_of(e, 21, 1), "");
	ck_assert_uint_eq(stats(e).proc_misses, 1);
	les_enrich_free(e);
}
END_TEST

/*
 * A pid reused by a new process: its exec replaces the entry, the records
 * that follow (same pid, comm and ids: the same identity slot) get the new
 * job, and the old attribution, held by no one now, is freed.
 */
START_TEST(test_pid_reuse)
{
	struct les_enrich_config cfg = {.no_user_lookup = true};
	struct les_enricher *e = enricher(&cfg);

	exec_job(e, 30, 1, "old");
	ck_assert_str_eq(job_of(e, 30, 1), "old");
	exec_job(e, 30, 1, "new");
	ck_assert_str_eq(job_of(e, 30, 2), "new");
	ck_assert_uint_eq(stats(e).attribs, 1);
	ck_assert_uint_eq(stats(e).procs_known, 1);
	les_enrich_free(e);
}
END_TEST

/* Processes of one job hold one attribution, freed with the last of them. */
START_TEST(test_attribution_freed_with_last_holder)
{
	struct les_enrich_config cfg = {.no_user_lookup = true};
	struct les_enricher *e = enricher(&cfg);

	for (uint32_t pid = 40; pid < 43; pid++)
		exec_job(e, pid, 1, "shared");
	ck_assert_uint_eq(stats(e).attribs, 1);
	exec_job(e, 40, 1, "other");
	exec_job(e, 41, 1, "other");
	ck_assert_uint_eq(stats(e).attribs, 2); /* 42 still holds "shared" */
	exec_job(e, 42, 1, "other");
	ck_assert_uint_eq(stats(e).attribs, 1);
	les_enrich_free(e);
}
END_TEST

/*
 * The process cache keeps the --proc-cache-size most recent: a record
 * makes its process recent, so the one evicted is the one not seen.
 */
START_TEST(test_proc_cache_lru)
{
	struct les_enrich_config cfg = {.no_user_lookup = true, .proc_cache_size = 4};
	struct les_enricher *e = enricher(&cfg);

	exec_job(e, 1001, 1, "1");
	exec_job(e, 1002, 1, "2");
	exec_job(e, 1003, 1, "3");
	exec_job(e, 1004, 1, "4");
	ck_assert_str_eq(job_of(e, 1001, 1), "1");
	exec_job(e, 1005, 1, "5");
	ck_assert_uint_eq(stats(e).procs_known, 4);
	ck_assert_uint_eq(stats(e).proc_evictions, 1);
	ck_assert_str_eq(job_of(e, 1001, 2), "1");
	ck_assert_str_eq(job_of(e, 1005, 3), "5");
	/* 1002, the least recent, is gone: nothing in /proc here either. */
	ck_assert_str_eq(job_of(e, 1002, 4), "");
	ck_assert_uint_eq(stats(e).proc_misses, 1);
	les_enrich_free(e);
}
END_TEST

static void write_file(const char *dir, const char *name, const char *text, size_t len)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
}

/* proc_root/pid as /proc shows a process with SLURM_JOB_ID=job. */
static void fake_proc(const char *root, uint32_t pid, const char *job, char *dir, size_t size)
{
	char stat[256], env[64];
	int n;

	snprintf(dir, size, "%s/%u", root, pid);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	n = snprintf(stat, sizeof(stat),
		     "%u (app) S 1 %u %u 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0\n", pid, pid,
		     pid);
	write_file(dir, "stat", stat, (size_t)n);
	write_file(dir, "status", "Name:\tapp\nUid:\t1000\t1000\t1000\t1000\n", 36);
	n = snprintf(env, sizeof(env), "SLURM_JOB_ID=%s", job);
	write_file(dir, "environ", env, (size_t)n + 1);
}

static void remove_fake_proc(const char *dir)
{
	static const char *const files[] = {"stat", "status", "environ"};
	char path[256];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

/*
 * A pid /proc does not have is kept as unknown: /proc is not read again
 * for its records within a second (by the records' time), then it is.
 */
START_TEST(test_unknown_pid_read_again_after_a_second)
{
	char root[] = "/tmp/les-test-proc.XXXXXX", dir[128];
	struct les_enrich_config cfg = {.no_user_lookup = true};
	struct les_enricher *e;

	ck_assert_ptr_nonnull(mkdtemp(root));
	cfg.proc_root = root;
	e = enricher(&cfg);
	ck_assert_str_eq(job_of(e, 500, 10 * SEC), "");
	fake_proc(root, 500, "55", dir, sizeof(dir));
	ck_assert_str_eq(job_of(e, 500, 10 * SEC + SEC / 2), "");
	ck_assert_str_eq(job_of(e, 500, 11 * SEC - 1), "");
	ck_assert_uint_eq(stats(e).proc_rereads, 0);
	ck_assert_uint_eq(stats(e).proc_misses, 3);
	ck_assert_str_eq(job_of(e, 500, 11 * SEC), "55");
	ck_assert_uint_eq(stats(e).proc_rereads, 1);
	/* Known now: no more reads. */
	remove_fake_proc(dir);
	ck_assert_str_eq(job_of(e, 500, 20 * SEC), "55");
	ck_assert_uint_eq(stats(e).proc_rereads, 1);
	ck_assert_uint_eq(stats(e).proc_misses, 3);
	les_enrich_free(e);
	rmdir(root);
}
END_TEST

/* --- user names: a clock and a resolver of the test's own ------------------ */

static uint64_t test_now;

static uint64_t test_clock(void)
{
	return __atomic_load_n(&test_now, __ATOMIC_ACQUIRE);
}

static void clock_step(uint64_t ns)
{
	__atomic_add_fetch(&test_now, ns, __ATOMIC_RELEASE);
}

/* uid 1000 is "alice"; no other uid has a name. */
static int alice_only(uint32_t uid, char *name, size_t len)
{
	if (uid != 1000)
		return 0;
	snprintf(name, len, "alice");
	return 1;
}

static struct les_enricher *user_enricher(void)
{
	struct les_enrich_config cfg = {.lookup_user = alice_only, .clock_ns = test_clock};

	test_now = 1000 * SEC;
	return enricher(&cfg);
}

/* The records of uid until n lookups are done (the resolver is a thread). */
static const struct les_enriched *until_lookups(struct les_enricher *e, uint32_t uid,
						uint64_t n)
{
	struct les_task t = task(77, "app");
	const struct les_enriched *en;

	t.uid = uid;
	for (int i = 0; i < 4000; i++) {
		en = les_enrich_task(e, &t, 0, test_clock());
		if (stats(e).nss_lookups >= n && (uid != 1000 || en->username))
			return en;
		usleep(1000);
	}
	ck_abort_msg("uid %u: %llu lookups, want %llu", uid,
		     (unsigned long long)stats(e).nss_lookups, (unsigned long long)n);
	return NULL;
}

static const struct les_enriched *record_of(struct les_enricher *e, uint32_t uid)
{
	struct les_task t = task(77, "app");

	t.uid = uid;
	return les_enrich_task(e, &t, 0, test_clock());
}

/* A name found is kept 600 s: no lookup before, one after. */
START_TEST(test_user_name_kept_600s)
{
	struct les_enricher *e = user_enricher();

	ck_assert_str_eq(until_lookups(e, 1000, 1)->username, "alice");
	clock_step(599 * SEC);
	ck_assert_str_eq(record_of(e, 1000)->username, "alice");
	usleep(20000);
	ck_assert_uint_eq(stats(e).nss_lookups, 1);
	clock_step(2 * SEC);
	ck_assert_str_eq(until_lookups(e, 1000, 2)->username, "alice");
	ck_assert_uint_eq(stats(e).users_known, 1);
	les_enrich_free(e);
}
END_TEST

/* A name not found is kept 60 s: the uid goes without one, then is asked again. */
START_TEST(test_user_not_found_kept_60s)
{
	struct les_enricher *e = user_enricher();

	ck_assert_ptr_null(until_lookups(e, 2000, 1)->username);
	clock_step(59 * SEC);
	ck_assert_ptr_null(record_of(e, 2000)->username);
	usleep(20000);
	ck_assert_uint_eq(stats(e).nss_lookups, 1);
	clock_step(2 * SEC);
	ck_assert_ptr_null(until_lookups(e, 2000, 2)->username);
	les_enrich_free(e);
}
END_TEST

/* The user cache is an LRU of --user-cache-size: an evicted uid is asked again. */
START_TEST(test_user_cache_bounded)
{
	struct les_enrich_config cfg = {
		.lookup_user = alice_only, .clock_ns = test_clock, .user_cache_size = 2};
	struct les_enricher *e;

	test_now = 1000 * SEC;
	e = enricher(&cfg);
	until_lookups(e, 1000, 1);
	until_lookups(e, 2001, 2);
	until_lookups(e, 2002, 3);
	ck_assert_uint_eq(stats(e).users_known, 2);
	ck_assert_uint_eq(stats(e).user_evictions, 1);
	ck_assert_str_eq(until_lookups(e, 1000, 4)->username, "alice");
	les_enrich_free(e);
}
END_TEST

/*
 * The encoded identity follows the comm: an exec that keeps the pid but
 * changes the name (a shell that execs dd) is another identity.
 */
START_TEST(test_identity_follows_comm)
{
	struct les_enrich_config cfg = {.no_user_lookup = true};
	struct les_enricher *e = enricher(&cfg);
	struct les_task sh = task(60, "sh"), dd = task(60, "dd");

	exec_job(e, 60, 1, "J");
	ck_assert_str_eq(les_enrich_task(e, &sh, 0, 1)->process, "sh");
	ck_assert_str_eq(les_enrich_task(e, &dd, 0, 2)->process, "dd");
	ck_assert_str_eq(les_enrich_task(e, &sh, 0, 3)->process, "sh");
	les_enrich_free(e);
}
END_TEST

static Suite *enrich_cache_suite(void)
{
	Suite *s = suite_create("enrich_cache");
	TCase *tc;

	tc = tcase_create("processes");
	tcase_add_test(tc, test_fork_shares_exec_replaces);
	tcase_add_test(tc, test_fork_of_unknown_parent);
	tcase_add_test(tc, test_pid_reuse);
	tcase_add_test(tc, test_attribution_freed_with_last_holder);
	tcase_add_test(tc, test_proc_cache_lru);
	tcase_add_test(tc, test_unknown_pid_read_again_after_a_second);
	tcase_add_test(tc, test_identity_follows_comm);
	suite_add_tcase(s, tc);

	tc = tcase_create("users");
	tcase_add_test(tc, test_user_name_kept_600s);
	tcase_add_test(tc, test_user_not_found_kept_60s);
	tcase_add_test(tc, test_user_cache_bounded);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(enrich_cache_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
