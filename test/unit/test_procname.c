// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Process name normalization (--process-name-strip-suffix) and allowlist. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "enrich/procname.h"

static const struct {
	const char *in;
	const char *want;
} norm_cases[] = {
	/* The exporter's documented cases. */
	{"Bun Pool 1", "Bun Pool"},
	{"Bun Pool 2", "Bun Pool"},
	{"Bun Pool 23", "Bun Pool"},
	{"worker-3", "worker"},
	{"thread_42", "thread"},
	{"handler:7", "handler"},
	{"kworker/107", "kworker"},
	{"client.poll12", "client.poll"},
	{"ray-dashboard-E", "ray-dashboard"},
	{"ray-dashboard-a", "ray-dashboard"},
	{"ray-dashboard-A", "ray-dashboard"},
	{"python3.11", "python3.11"},
	{"python3", "python3"},
	{"go1.21.5", "go1.21.5"},
	/* Kernel thread instance descriptors after '/'. */
	{"kworker/u8:2", "kworker"},
	{"kworker/u8:2-events", "kworker"},
	{"kworker/u17:0-ev", "kworker"}, /* cut at 15 bytes by the kernel */
	{"kworker/3:1H", "kworker"},
	{"kworker/0:1-mm_percpu_wq", "kworker"},
	{"kworker/R-mm_pe", "kworker"},
	{"ksoftirqd/3", "ksoftirqd"},
	{"migration/12", "migration"},
	{"irq/125-nvme0q1", "irq"},
	{"jbd2/sda1-8", "jbd2/sda1"},
	/* Repetition. */
	{"worker-3-1", "worker"},
	{"pool 1 2 3", "pool"},
	{"ptlrpcd_00_01", "ptlrpcd"},
	{"client.poll12-3", "client.poll"},
	{"ray.worker-3", "ray.worker"},
	{"python3.11-x", "python3.11"},
	{"ldlm_bl_01", "ldlm_bl"},
	/* Left alone. */
	{"dd", "dd"},
	{"bash", "bash"},
	{"v2", "v2"},
	{"sshd-session", "sshd-session"},
	{"ray-dashboard-ab", "ray-dashboard-ab"},
	{"ll_sa_abc", "ll_sa_abc"},
	{"a.b", "a.b"},
	{"1.2.3", "1.2.3"},
	{"name.12", "name.12"},
	/* Edge cases: never empties the name. */
	{"", ""},
	{"123", "123"},
	{"0", "0"},
	{"a", "a"},
	{"-1", "-1"},
	{" 1", " 1"},
	{"/1", "/1"},
	{"a-1", "a"},
	{"1-2", "1"},
	/* Trailing separators are not instance tokens. */
	{"worker-", "worker-"},
	{"worker_", "worker_"},
	{"kworker/", "kworker/"},
	{"name--42", "name-"},
	{"x/", "x/"},
};

START_TEST(normalize_cases)
{
	const char *in = norm_cases[_i].in;
	char out[LES_PROCNAME_MAX];
	size_t n;

	memset(out, 'Q', sizeof(out));
	n = les_procname_normalize(in, strlen(in), out, sizeof(out));
	ck_assert_str_eq(out, norm_cases[_i].want);
	ck_assert_uint_eq(n, strlen(norm_cases[_i].want));
}
END_TEST

/* Normalizing twice gives the same name: one normal form. */
START_TEST(normalize_idempotent)
{
	const char *in = norm_cases[_i].in;
	char once[LES_PROCNAME_MAX], twice[LES_PROCNAME_MAX];

	les_procname_normalize(in, strlen(in), once, sizeof(once));
	les_procname_normalize(once, strlen(once), twice, sizeof(twice));
	ck_assert_str_eq(once, twice);
}
END_TEST

START_TEST(normalize_bounds)
{
	/* comm[16] as in the record: stops at the NUL within len. */
	const char comm[16] = "worker-7\0junk-1";
	char out[8];

	ck_assert_uint_eq(les_procname_normalize(comm, sizeof(comm), out, sizeof(out)), 6);
	ck_assert_str_eq(out, "worker");
	/* Not NUL-terminated within len. */
	ck_assert_uint_eq(les_procname_normalize("worker-7XYZ", 8, out, sizeof(out)), 6);
	/* Output cut to cap - 1. */
	ck_assert_uint_eq(les_procname_normalize("longername-1", 12, out, 5), 4);
	ck_assert_str_eq(out, "long");
	/* In place. */
	char buf[16] = "thread_42";

	les_procname_normalize(buf, sizeof(buf), buf, sizeof(buf));
	ck_assert_str_eq(buf, "thread");
	ck_assert_uint_eq(les_procname_normalize("x", 1, out, 0), 0);
	ck_assert_uint_eq(les_procname_normalize(NULL, 5, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(normalize_random_bytes)
{
	char in[32], out[32];

	srand(4242);
	for (int round = 0; round < 50000; round++) {
		size_t len = (size_t)rand() % sizeof(in);
		size_t n;

		for (size_t i = 0; i < len; i++)
			in[i] = "ab1 -_:/.9\xff"[rand() % 11];
		n = les_procname_normalize(in, len, out, sizeof(out));
		ck_assert_uint_le(n, len);
		ck_assert_uint_eq(strlen(out), n);
		ck_assert(memcmp(out, in, n) == 0); /* a prefix of the input */
		ck_assert(len == 0 || n > 0);	    /* never emptied */
	}
}
END_TEST

/* ---- allowlist ------------------------------------------------------------- */

static struct les_procname_filter filter;

static void setup_filter(void)
{
	char err[128];

	les_procname_filter_init(&filter, true);
	ck_assert_int_eq(
		les_procname_allow_add(&filter, "dd,python, rsync ,Bun Pool", err, sizeof(err)), 0);
	ck_assert_int_eq(les_procname_allow_add(&filter, "worker,dd,kworker", err, sizeof(err)), 0);
	les_procname_filter_finish(&filter);
}

static const struct {
	const char *comm;
	const char *want;
} apply_cases[] = {
	{"dd", "dd"},
	{"rsync", "rsync"},
	{"Bun Pool 7", "Bun Pool"},
	{"worker-3", "worker"},
	{"kworker/u8:2", "kworker"},
	{"python", "python"},
	{"python3", "other"}, /* normalization does not touch python3 */
	{"bash", "other"},
	{"", "other"},
	{"d", "other"},
	{"ddd", "other"},
	{"Bun", "other"},
};

START_TEST(apply_with_allowlist)
{
	char buf[LES_PROCNAME_MAX];
	const char *got = les_procname_apply(&filter, apply_cases[_i].comm,
					     strlen(apply_cases[_i].comm), buf, sizeof(buf));

	ck_assert_str_eq(got, apply_cases[_i].want);
}
END_TEST

START_TEST(allowlist_sorted_unique)
{
	ck_assert_uint_eq(filter.n, 6); /* dd given twice */
	for (unsigned int i = 1; i < filter.n; i++)
		ck_assert_int_lt(strcmp(filter.names[i - 1], filter.names[i]), 0);
	ck_assert(les_procname_allowed(&filter, "rsync", 5));
	ck_assert(!les_procname_allowed(&filter, "rsyn", 4));
	ck_assert(!les_procname_allowed(&filter, "rsyncx", 6));
}
END_TEST

START_TEST(apply_no_strip_no_allowlist)
{
	struct les_procname_filter f;
	char buf[LES_PROCNAME_MAX];

	les_procname_filter_init(&f, false);
	les_procname_filter_finish(&f);
	ck_assert_str_eq(les_procname_apply(&f, "worker-3", 8, buf, sizeof(buf)), "worker-3");
	ck_assert_str_eq(les_procname_apply(&f, "Bun Pool 1", 10, buf, sizeof(buf)), "Bun Pool 1");
}
END_TEST

START_TEST(apply_allowlist_without_strip)
{
	struct les_procname_filter f;
	char buf[LES_PROCNAME_MAX], err[128];

	les_procname_filter_init(&f, false);
	ck_assert_int_eq(les_procname_allow_add(&f, "worker", err, sizeof(err)), 0);
	les_procname_filter_finish(&f);
	ck_assert_str_eq(les_procname_apply(&f, "worker-3", 8, buf, sizeof(buf)), "other");
	ck_assert_str_eq(les_procname_apply(&f, "worker", 6, buf, sizeof(buf)), "worker");
}
END_TEST

static const char *const bad_lists[] = {
	"",
	",",
	"dd,",
	",dd",
	"dd,,python",
	"  ,dd",
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
};

START_TEST(allowlist_bad_input)
{
	struct les_procname_filter f;
	char err[128] = "";

	les_procname_filter_init(&f, true);
	ck_assert_int_eq(les_procname_allow_add(&f, bad_lists[_i], err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "--process-allowlist"));
}
END_TEST

START_TEST(allowlist_too_many)
{
	struct les_procname_filter f;
	char err[128] = "", name[16];
	int rc = 0;

	les_procname_filter_init(&f, true);
	for (int i = 0; i <= LES_PROCNAME_ALLOW_MAX && !rc; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		rc = les_procname_allow_add(&f, name, err, sizeof(err));
	}
	ck_assert_int_eq(rc, -E2BIG);
	ck_assert_uint_eq(f.n, LES_PROCNAME_ALLOW_MAX);
}
END_TEST

#define N(a) (int)(sizeof(a) / sizeof((a)[0]))

static Suite *procname_suite(void)
{
	Suite *s = suite_create("procname");
	TCase *tc;

	tc = tcase_create("normalize");
	tcase_add_loop_test(tc, normalize_cases, 0, N(norm_cases));
	tcase_add_loop_test(tc, normalize_idempotent, 0, N(norm_cases));
	tcase_add_test(tc, normalize_bounds);
	tcase_add_test(tc, normalize_random_bytes);
	suite_add_tcase(s, tc);

	tc = tcase_create("allowlist");
	tcase_add_checked_fixture(tc, setup_filter, NULL);
	tcase_add_loop_test(tc, apply_with_allowlist, 0, N(apply_cases));
	tcase_add_test(tc, allowlist_sorted_unique);
	tcase_add_test(tc, apply_no_strip_no_allowlist);
	tcase_add_test(tc, apply_allowlist_without_strip);
	tcase_add_loop_test(tc, allowlist_bad_input, 0, N(bad_lists));
	tcase_add_test(tc, allowlist_too_many);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(procname_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
