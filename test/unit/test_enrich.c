// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Enrichment per record: what is kept per process identity must follow
 * every change of what it was made from (an exec, another comm, a user
 * name resolved or due again), and count misses as the uncached path did.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "enrich.h"

static struct les_task task(uint32_t pid, uint32_t uid, const char *comm)
{
	struct les_task t = {.pid = pid, .tid = pid, .uid = uid, .gid = uid};

	strncpy(t.comm, comm, sizeof(t.comm));
	return t;
}

static void exec_with_env(struct les_enricher *e, uint32_t pid, const char *env, size_t len)
{
	static struct les_rec_proc r;

	memset(&r, 0, sizeof(r));
	r.kind = LES_REC_PROC_EXEC;
	r.pid = pid;
	r.ppid = 1;
	memcpy(r.env, env, len);
	r.env_len = (uint32_t)len;
	strcpy(r.comm, "app");
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
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
