// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Lustre jobid_name formats: expansion and option checking. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "enrich/jobid.h"

static const struct les_jobid_ctx task = {
	.job_id = "4242",
	.comm = "dd",
	.comm_len = 16,
	.hostname = "node042.cluster.example.org",
	.uid = 1000,
	.gid = 100,
	.pid = 31337,
};

static const struct les_jobid_ctx no_job = {
	.job_id = "",
	.comm = "cat",
	.comm_len = 16,
	.hostname = "node7",
	.uid = 0,
	.gid = 0,
	.pid = 1,
};

static const struct {
	const char *fmt;
	const struct les_jobid_ctx *ctx;
	const char *want;
} format_cases[] = {
	{"%j", &task, "4242"},
	{LES_JOBID_DEFAULT_FMT, &task, "4242"},
	{"%e", &task, "dd"},
	{"%u", &task, "1000"},
	{"%g", &task, "100"},
	{"%p", &task, "31337"},
	{"%h", &task, "node042.cluster.example.org"},
	{"%H", &task, "node042"},
	{"%e.%u", &task, "dd.1000"}, /* Lustre's procname_uid */
	{"%j.%H", &task, "4242.node042"},
	{"job-%j@%H", &task, "job-4242@node042"},
	{"100%%", &task, "100%"},
	{"%%j", &task, "%j"},
	{"plain", &task, "plain"},
	/* Whitespace in the format is skipped, as in Lustre. */
	{"%e %u", &task, "dd1000"},
	{" %j\t", &task, "4242"},
	/* No job: %j expands to nothing. */
	{"%j", &no_job, ""},
	{"%e.%j", &no_job, "cat."},
	{"%H", &no_job, "node7"},
	{"%u:%g", &no_job, "0:0"},
	/* Unchecked formats: unknown codes dropped, lone '%' ends it. */
	{"a%xb", &task, "ab"},
	{"ab%", &task, "ab"},
	{"%", &task, ""},
	{"", &task, ""},
};

START_TEST(format)
{
	char out[64];
	size_t n;

	memset(out, 'Q', sizeof(out));
	n = les_jobid_format(format_cases[_i].fmt, format_cases[_i].ctx, out, sizeof(out));
	ck_assert_str_eq(out, format_cases[_i].want);
	ck_assert_uint_eq(n, strlen(format_cases[_i].want));
}
END_TEST

START_TEST(format_cut_to_lustre_size)
{
	struct les_jobid_ctx c = task;
	char out[64];
	size_t n;

	c.job_id = "0123456789012345678901234567890123456789";
	n = les_jobid_format("%j", &c, out, sizeof(out));
	ck_assert_uint_eq(n, LES_JOBID_SIZE - 1);
	ck_assert_str_eq(out, "0123456789012345678901234567890");

	/* The cut may fall inside a field or a literal. */
	n = les_jobid_format("%h.%h", &task, out, sizeof(out));
	ck_assert_uint_eq(n, 31);
	ck_assert_str_eq(out, "node042.cluster.example.org.nod");

	/* A smaller caller buffer cuts further. */
	n = les_jobid_format("%e.%u", &task, out, 4);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(out, "dd.");
	ck_assert_uint_eq(les_jobid_format("%j", &task, out, 0), 0);
}
END_TEST

START_TEST(format_comm_bounds)
{
	/* comm[16] exactly full, no NUL: comm_len bounds it. */
	const char comm[16] = {'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h',
			       'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p'};
	struct les_jobid_ctx c = task;
	char out[64];

	c.comm = comm;
	c.comm_len = sizeof(comm);
	les_jobid_format("%e", &c, out, sizeof(out));
	ck_assert_str_eq(out, "abcdefghijklmnop");
	c.comm = NULL;
	c.job_id = NULL;
	c.hostname = NULL;
	les_jobid_format("[%e%j%h%H]", &c, out, sizeof(out));
	ck_assert_str_eq(out, "[]");
	ck_assert_uint_eq(les_jobid_format(NULL, &c, out, sizeof(out)), 0);
}
END_TEST

static const struct {
	const char *fmt;
	int rc;
	const char *msg;
} check_cases[] = {
	{"%j", 0, NULL},
	{"%e.%u", 0, NULL},
	{"%j.%e.%u.%g.%h.%H.%p.%%", 0, NULL},
	{"literal", 0, NULL},
	{"", -EINVAL, "empty"},
	{"%", -EINVAL, "lone '%'"},
	{"%j%", -EINVAL, "lone '%'"},
	{"%x", -EINVAL, "unknown code '%x'"},
	{"%J", -EINVAL, "unknown code '%J'"},
	{"%e.%u.%q", -EINVAL, "unknown code '%q'"},
	{"0123456789012345678901234567890", 0, NULL}, /* 31: fits */
	{"01234567890123456789012345678901", -EINVAL, "longer than"},
};

START_TEST(fmt_check)
{
	char err[256] = "";
	int rc = les_jobid_fmt_check(check_cases[_i].fmt, err, sizeof(err));

	ck_assert_int_eq(rc, check_cases[_i].rc);
	if (rc) {
		ck_assert_msg(strstr(err, check_cases[_i].msg), "message '%s'", err);
		ck_assert_ptr_nonnull(strstr(err, "--jobid-name"));
	}
}
END_TEST

START_TEST(fmt_check_null)
{
	char err[64];

	ck_assert_int_eq(les_jobid_fmt_check(NULL, err, sizeof(err)), -EINVAL);
}
END_TEST

/* Any byte string: output bounded and NUL-terminated. */
START_TEST(format_random)
{
	char fmt[48], out[LES_JOBID_SIZE + 8];

	srand(99);
	for (int round = 0; round < 20000; round++) {
		size_t len = (size_t)rand() % (sizeof(fmt) - 1);
		size_t n;

		for (size_t i = 0; i < len; i++)
			fmt[i] = "%jeughHpx% \xff"[rand() % 12];
		fmt[len] = '\0';
		memset(out, 'Q', sizeof(out));
		n = les_jobid_format(fmt, &task, out, sizeof(out));
		ck_assert_uint_lt(n, LES_JOBID_SIZE);
		ck_assert_uint_eq(strlen(out), n);
		ck_assert_int_eq(out[LES_JOBID_SIZE], 'Q'); /* never past Lustre's size */
	}
}
END_TEST

#define N(a) (int)(sizeof(a) / sizeof((a)[0]))

static Suite *jobid_suite(void)
{
	Suite *s = suite_create("jobid");
	TCase *tc;

	tc = tcase_create("format");
	tcase_add_loop_test(tc, format, 0, N(format_cases));
	tcase_add_test(tc, format_cut_to_lustre_size);
	tcase_add_test(tc, format_comm_bounds);
	tcase_add_test(tc, format_random);
	suite_add_tcase(s, tc);

	tc = tcase_create("check");
	tcase_add_loop_test(tc, fmt_check, 0, N(check_cases));
	tcase_add_test(tc, fmt_check_null);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(jobid_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
