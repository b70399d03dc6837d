// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Environment block parsing, allowlist retention and job id derivation. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "enrich/envtags.h"

/* A block literal with its exact size (embedded NULs, no trailing NUL). */
#define BLOCK(s) s, sizeof(s) - 1

static struct les_env_allow allow;
static struct les_env_tags tags;

static const char *const job_env[] = {"SITE_JOB", "MY_JOB"};
static const char *const env_tags[] = {"PROJECT", "QUEUE", "SITE_JOB"};

static void setup_allow(void)
{
	char err[256];

	ck_assert_int_eq(les_env_allow_init(&allow, job_env, 2, env_tags, 3, err, sizeof(err)), 0);
}

/* Kept value of a name, or NULL. */
static const struct les_env_value *value_of(const char *name)
{
	int idx = les_env_allow_find(&allow, name, strlen(name));

	return idx < 0 ? NULL : les_env_get(&tags, (unsigned int)idx);
}

static void assert_value(const char *name, const char *want)
{
	const struct les_env_value *v = value_of(name);

	ck_assert_msg(v, "%s not kept", name);
	ck_assert_str_eq(v->value, want);
	ck_assert_uint_eq(v->len, strlen(want));
}

/* True if needle occurs anywhere in the bytes of the struct. */
static bool bytes_contain(const void *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	for (size_t i = 0; i + k <= n; i++) {
		if (memcmp((const char *)hay + i, needle, k) == 0)
			return true;
	}
	return false;
}

/* ---- allowlist construction ------------------------------------------------ */

START_TEST(allow_builtin_and_roles)
{
	int i;

	ck_assert_uint_eq(allow.n, LES_ENV_JOB_VARS + 4); /* SITE_JOB, MY_JOB, PROJECT, QUEUE */
	ck_assert_int_eq(les_env_allow_find(&allow, "SLURM_JOB_ID", 12), LES_ENV_SLURM_JOB_ID);
	ck_assert_int_eq(les_env_allow_find(&allow, "FLUX_JOB_ID", 11), LES_ENV_FLUX_JOB_ID);
	i = les_env_allow_find(&allow, "SITE_JOB", 8);
	ck_assert_int_eq(i, LES_ENV_JOB_VARS);
	ck_assert_uint_eq(allow.e[i].role, LES_ENV_ROLE_SITE | LES_ENV_ROLE_TAG);
	i = les_env_allow_find(&allow, "PROJECT", 7);
	ck_assert_uint_eq(allow.e[i].role, LES_ENV_ROLE_TAG);
	ck_assert_int_eq(les_env_allow_find(&allow, "SLURM", 5), -1);
}
END_TEST

static const struct {
	const char *name;
	int rc;
} bad_names[] = {
	{"", -EINVAL},
	{"1ABC", -EINVAL},
	{"PROJECT=x", -EINVAL},
	{"A B", -EINVAL},
	{"A-B", -EINVAL},
	{"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", -EINVAL},
	{"_OK_1", 0},
};

START_TEST(allow_bad_names)
{
	const char *names[] = {bad_names[_i].name};
	char err[256] = "";
	struct les_env_allow a;

	ck_assert_int_eq(les_env_allow_init(&a, NULL, 0, names, 1, err, sizeof(err)),
			 bad_names[_i].rc);
	if (bad_names[_i].rc)
		ck_assert_msg(strstr(err, "--env-tag"), "message: '%s'", err);
}
END_TEST

START_TEST(allow_too_many)
{
	const char *names[LES_ENV_USER_MAX + 1];
	char buf[LES_ENV_USER_MAX + 1][16];
	char err[256] = "";
	struct les_env_allow a;

	for (int i = 0; i <= LES_ENV_USER_MAX; i++) {
		snprintf(buf[i], sizeof(buf[i]), "TAG_%d", i);
		names[i] = buf[i];
	}
	ck_assert_int_eq(les_env_allow_init(&a, NULL, 0, names, LES_ENV_USER_MAX, err, sizeof(err)),
			 0);
	ck_assert_int_eq(
		les_env_allow_init(&a, NULL, 0, names, LES_ENV_USER_MAX + 1, err, sizeof(err)),
		-E2BIG);
	ck_assert_ptr_nonnull(strstr(err, "more than"));
}
END_TEST

/* ---- block parsing ------------------------------------------------------- */

START_TEST(parse_basic)
{
	les_env_extract(&allow, BLOCK("HOME=/root\0PROJECT=climate\0SLURM_JOB_ID=4242\0"), &tags);
	ck_assert_uint_eq(tags.n, 2);
	assert_value("PROJECT", "climate");
	assert_value("SLURM_JOB_ID", "4242");
	ck_assert_ptr_null(value_of("QUEUE"));
	ck_assert_uint_eq(value_of("PROJECT")->truncated, 0);
}
END_TEST

START_TEST(parse_no_trailing_nul)
{
	les_env_extract(&allow, BLOCK("A=1\0PROJECT=climate"), &tags);
	assert_value("PROJECT", "climate");
	/* The block may have been cut inside this entry. */
	ck_assert_uint_eq(value_of("PROJECT")->truncated, 1);
}
END_TEST

START_TEST(parse_cut_mid_key)
{
	/* Cut inside a key: "PROJ" is not PROJECT. */
	les_env_extract(&allow, BLOCK("QUEUE=short\0PROJ"), &tags);
	ck_assert_uint_eq(tags.n, 1);
	assert_value("QUEUE", "short");
	ck_assert_ptr_null(value_of("PROJECT"));
}
END_TEST

START_TEST(parse_duplicates_first_wins)
{
	les_env_extract(&allow, BLOCK("PROJECT=first\0PROJECT=second\0PROJECT=third\0"), &tags);
	ck_assert_uint_eq(tags.n, 1);
	assert_value("PROJECT", "first");
}
END_TEST

START_TEST(parse_equals_in_value)
{
	les_env_extract(&allow, BLOCK("PROJECT=a=b==c\0QUEUE==\0"), &tags);
	assert_value("PROJECT", "a=b==c");
	assert_value("QUEUE", "=");
}
END_TEST

START_TEST(parse_empty_and_no_equals)
{
	les_env_extract(&allow, BLOCK("PROJECT\0QUEUE=\0\0\0=\0=PROJECT\0"), &tags);
	ck_assert_ptr_null(value_of("PROJECT")); /* "PROJECT" without '=' is not a variable */
	assert_value("QUEUE", "");
	ck_assert_uint_eq(tags.n, 1);
}
END_TEST

START_TEST(parse_binary_junk)
{
	les_env_extract(&allow,
			BLOCK("\xff\xfe\x01=\x02\0PROJECT=\x80\x81\x7f\0\x1b[0m\0SLURM_JOB_ID=7\0"),
			&tags);
	assert_value("PROJECT", "\x80\x81\x7f");
	assert_value("SLURM_JOB_ID", "7");
	ck_assert_uint_eq(tags.n, 2);
}
END_TEST

START_TEST(parse_empty_block)
{
	les_env_extract(&allow, "", 0, &tags);
	ck_assert_uint_eq(tags.n, 0);
	les_env_extract(&allow, NULL, 100, &tags);
	ck_assert_uint_eq(tags.n, 0);
	les_env_extract(&allow, BLOCK("\0\0\0"), &tags);
	ck_assert_uint_eq(tags.n, 0);
}
END_TEST

START_TEST(parse_long_value_truncated)
{
	char block[512];
	int n = snprintf(block, sizeof(block), "PROJECT=");

	memset(block + n, 'x', 300);
	block[n + 300] = '\0';
	les_env_extract(&allow, block, (size_t)n + 301, &tags);
	ck_assert_uint_eq(value_of("PROJECT")->len, LES_ENV_VALUE_MAX - 1);
	ck_assert_uint_eq(value_of("PROJECT")->truncated, 1);
	ck_assert_uint_eq(strlen(value_of("PROJECT")->value), LES_ENV_VALUE_MAX - 1);
}
END_TEST

/* A 1 MiB block of junk variables with the allowlisted ones at the end. */
START_TEST(parse_huge_block)
{
	const size_t size = 1 << 20;
	char *block = malloc(size);
	const char tail[] = "PROJECT=deep\0SLURM_JOB_ID=99";
	size_t pos = 0;

	ck_assert_ptr_nonnull(block);
	while (pos + 64 < size - sizeof(tail)) {
		int n = snprintf(block + pos, 64, "VAR_%zu=%0*zu", pos, 40, pos);

		pos += (size_t)n + 1;
	}
	memcpy(block + pos, tail, sizeof(tail) - 1);
	pos += sizeof(tail) - 1;

	les_env_extract(&allow, block, pos, &tags);
	assert_value("PROJECT", "deep");
	assert_value("SLURM_JOB_ID", "99");
	ck_assert_uint_eq(tags.n, 2);

	/* The same block all NULs, and all '=' — nothing kept, no crash. */
	memset(block, 0, size);
	les_env_extract(&allow, block, size, &tags);
	ck_assert_uint_eq(tags.n, 0);
	memset(block, '=', size);
	les_env_extract(&allow, block, size, &tags);
	ck_assert_uint_eq(tags.n, 0);
	free(block);
}
END_TEST

/* Random bytes with allowlisted keys sprinkled in: no crash, values sane. */
START_TEST(parse_random_bytes)
{
	static const char *const keys[] = {"PROJECT=", "SLURM_JOB_ID=", "QUEUE=", "="};
	char block[2048];

	srand(12345);
	for (int round = 0; round < 2000; round++) {
		size_t len = (size_t)rand() % sizeof(block);

		for (size_t i = 0; i < len; i++)
			block[i] = (char)(rand() % 8 == 0 ? 0 : rand());
		for (int k = 0; k < 4 && len > 20; k++) {
			size_t at = (size_t)rand() % (len - 14);

			memcpy(block + at, keys[rand() % 4], 1);
		}
		les_env_extract(&allow, block, len, &tags);
		ck_assert_uint_le(tags.n, LES_ENV_TAGS_MAX);
		for (unsigned int i = 0; i < tags.n; i++) {
			ck_assert_uint_lt(tags.v[i].name_idx, allow.n);
			ck_assert_uint_lt(tags.v[i].len, LES_ENV_VALUE_MAX);
			ck_assert_uint_eq(strlen(tags.v[i].value), tags.v[i].len);
		}
	}
}
END_TEST

/* ---- security: only allowlisted values are retained ------------------------ */

START_TEST(secret_never_retained)
{
	static const char secret[] = "s3cr3t-t0ken-value-ABCDEF";

	/* Leave junk in the struct first: extract must overwrite all of it. */
	memset(&tags, 'Z', sizeof(tags));
	les_env_extract(&allow,
			BLOCK("SECRET_TOKEN=s3cr3t-t0ken-value-ABCDEF\0PROJECT=climate\0"
			      "SLURM_JOB_ID=4242\0AWS_SECRET=s3cr3t-t0ken-value-ABCDEF\0"
			      "SECRET_TOKEN_2=s3cr3t-t0ken-value-ABCDEF"),
			&tags);
	assert_value("PROJECT", "climate");
	ck_assert(!bytes_contain(&tags, sizeof(tags), secret));
	ck_assert(!bytes_contain(&tags, sizeof(tags), "SECRET"));
	ck_assert(!bytes_contain(&tags, sizeof(tags), "s3cr3t"));
	ck_assert(!bytes_contain(&tags, sizeof(tags), "ZZZZ"));
	/* And a secret that is a prefix-match of an allowlisted name is not kept either. */
	les_env_extract(&allow, BLOCK("PROJECTX=s3cr3t\0XPROJECT=s3cr3t\0PROJECT =s3cr3t\0"),
			&tags);
	ck_assert_uint_eq(tags.n, 0);
	ck_assert(!bytes_contain(&tags, sizeof(tags), "s3cr3t"));
}
END_TEST

START_TEST(tags_only_env_tag_names)
{
	unsigned int n_tags = 0;

	les_env_extract(&allow, BLOCK("SLURM_JOB_ID=1\0PROJECT=p\0MY_JOB=m\0SITE_JOB=s\0"), &tags);
	for (unsigned int i = 0; i < tags.n; i++) {
		const char *name = les_env_value_name(&allow, &tags.v[i]);

		if (les_env_is_tag(&allow, &tags.v[i])) {
			n_tags++;
			ck_assert_msg(!strcmp(name, "PROJECT") || !strcmp(name, "SITE_JOB"),
				      "%s emitted as a tag", name);
		}
	}
	ck_assert_uint_eq(n_tags, 2);
}
END_TEST

/* More allowlisted names present than slots: job variables are kept. */
START_TEST(overflow_keeps_job_vars)
{
	const char *names[LES_ENV_USER_MAX];
	char nbuf[LES_ENV_USER_MAX][16];
	char block[4096], id[64], err[128];
	struct les_env_allow a;
	size_t pos = 0;

	for (int i = 0; i < LES_ENV_USER_MAX; i++) {
		snprintf(nbuf[i], sizeof(nbuf[i]), "TAG_%d", i);
		names[i] = nbuf[i];
	}
	ck_assert_int_eq(les_env_allow_init(&a, NULL, 0, names, LES_ENV_USER_MAX, err, sizeof(err)),
			 0);
	for (int i = 0; i < LES_ENV_USER_MAX; i++)
		pos += (size_t)sprintf(block + pos, "TAG_%d=v%d", i, i) + 1;
	pos += (size_t)sprintf(block + pos, "SLURM_JOB_ID=77") + 1;

	les_env_extract(&a, block, pos, &tags);
	ck_assert_uint_eq(tags.n, LES_ENV_TAGS_MAX);
	ck_assert_uint_eq(tags.dropped, LES_ENV_USER_MAX + 1 - LES_ENV_TAGS_MAX);
	ck_assert_int_eq(les_env_job_id(&a, &tags, id, sizeof(id), NULL), 0);
	ck_assert_str_eq(id, "77");
	/* The lowest-index tags survive. */
	ck_assert_ptr_nonnull(les_env_get(&tags, LES_ENV_JOB_VARS));
	ck_assert_ptr_null(les_env_get(&tags, LES_ENV_JOB_VARS + LES_ENV_USER_MAX - 1));
}
END_TEST

/* ---- job id derivation ---------------------------------------------------- */

static const struct {
	const char *block;
	size_t len;
	int rc;
	const char *id;
} job_cases[] = {
	{BLOCK("SLURM_JOB_ID=4242\0SLURM_JOBID=1\0PBS_JOBID=2.srv\0"), 0, "4242"},
	{BLOCK("SLURM_JOBID=11\0PBS_JOBID=2.srv\0"), 0, "11"},
	{BLOCK("SLURM_JOB_ID=\0SLURM_JOBID=12\0"), 0, "12"}, /* empty = absent */
	{BLOCK("PBS_JOBID=1234.pbs01\0LSB_JOBID=9\0"), 0, "1234.pbs01"},
	{BLOCK("PBS_JOBID=1234[5].pbs01\0"), 0, "1234[5].pbs01"},
	{BLOCK("LSB_JOBID=1234\0LSB_JOBINDEX=7\0"), 0, "1234[7]"},
	{BLOCK("LSB_JOBINDEX=7\0LSB_JOBID=1234\0"), 0, "1234[7]"},
	{BLOCK("LSB_JOBID=1234\0LSB_JOBINDEX=0\0"), 0, "1234"},
	{BLOCK("LSB_JOBID=1234\0LSB_JOBINDEX=000\0"), 0, "1234"},
	{BLOCK("LSB_JOBID=1234\0LSB_JOBINDEX=\0"), 0, "1234"},
	{BLOCK("LSB_JOBID=1234\0LSB_JOBINDEX=x7\0"), 0, "1234"},
	{BLOCK("LSB_JOBID=1234\0"), 0, "1234"},
	{BLOCK("JOB_ID=555\0SGE_TASK_ID=3\0"), 0, "555.3"},
	{BLOCK("JOB_ID=555\0SGE_TASK_ID=undefined\0"), 0, "555"},
	{BLOCK("JOB_ID=555\0"), 0, "555"},
	{BLOCK("FLUX_JOB_ID=f2vXkaD8AV\0JOB_ID=\0"), 0, "f2vXkaD8AV"},
	{BLOCK("SITE_JOB=site-1\0MY_JOB=my-1\0"), 0, "site-1"}, /* --job-env order */
	{BLOCK("MY_JOB=my-1\0SITE_JOB=\0"), 0, "my-1"},
	{BLOCK("FLUX_JOB_ID=f1\0SITE_JOB=site-1\0"), 0, "f1"}, /* built-ins first */
	{BLOCK("PROJECT=p\0QUEUE=q\0"), -ENOENT, ""},	       /* tags are not jobs */
	{BLOCK("SGE_TASK_ID=3\0LSB_JOBINDEX=2\0"), -ENOENT, ""},
	{BLOCK(""), -ENOENT, ""},
};

START_TEST(job_id_priority)
{
	char id[64] = "junk";

	les_env_extract(&allow, job_cases[_i].block, job_cases[_i].len, &tags);
	ck_assert_int_eq(les_env_job_id(&allow, &tags, id, sizeof(id), NULL), job_cases[_i].rc);
	ck_assert_str_eq(id, job_cases[_i].id);
}
END_TEST

/* An id longer than the room for it is not cut into another job's: no id. */
START_TEST(job_id_cut_to_cap)
{
	char id[5];
	bool cut;

	les_env_extract(&allow, BLOCK("LSB_JOBID=123456\0LSB_JOBINDEX=7\0"), &tags);
	ck_assert_int_eq(les_env_job_id(&allow, &tags, id, sizeof(id), &cut), -ENOENT);
	ck_assert_str_eq(id, "");
	ck_assert(cut);
	les_env_extract(&allow, BLOCK("LSB_JOBID=123\0"), &tags);
	ck_assert_int_eq(les_env_job_id(&allow, &tags, id, sizeof(id), &cut), 0);
	ck_assert_str_eq(id, "123");
	ck_assert(!cut);
	ck_assert_int_eq(les_env_job_id(&allow, &tags, id, 0, NULL), -EINVAL);
}
END_TEST

#define DIGITS_150                                                                                  \
	"12345678901234567890123456789012345678901234567890123456789012345678901234567890123456789" \
	"0123456789012345678901234567890123456789012345678901234567890"

/* A value cut by the environment read never becomes the job id. */
static const struct {
	const char *block;
	size_t len;
	int rc;
	const char *id;
	bool cut;
} cut_cases[] = {
	/* the block ends inside the value (no NUL after it): 4242 might be 42421 */
	{BLOCK("HOME=/\0SLURM_JOB_ID=4242"), -ENOENT, "", true},
	/* the whole duplicate Slurm sets is used instead */
	{BLOCK("SLURM_JOBID=4242\0SLURM_JOB_ID=42"), 0, "4242", true},
	/* longer than a kept value */
	{BLOCK("SLURM_JOB_ID=" DIGITS_150 "\0"), -ENOENT, "", true},
	/* a cut array index: not the array's id either */
	{BLOCK("LSB_JOBID=1234\0LSB_JOBINDEX=7"), -ENOENT, "", true},
	{BLOCK("JOB_ID=555\0SGE_TASK_ID=3"), -ENOENT, "", true},
	{BLOCK("SITE_JOB=site-1"), -ENOENT, "", true},
	/* a cut tag is not a job's business */
	{BLOCK("SLURM_JOB_ID=4242\0PROJECT=cli"), 0, "4242", false},
	{BLOCK("SLURM_JOB_ID=4242\0"), 0, "4242", false},
	/* the block cut right after the '=' */
	{BLOCK("PBS_JOBID=7.srv\0SLURM_JOB_ID="), 0, "7.srv", true},
};

START_TEST(job_id_cut_value)
{
	char id[64] = "junk";
	bool cut = !cut_cases[_i].cut;

	les_env_extract(&allow, cut_cases[_i].block, cut_cases[_i].len, &tags);
	ck_assert_int_eq(les_env_job_id(&allow, &tags, id, sizeof(id), &cut), cut_cases[_i].rc);
	ck_assert_str_eq(id, cut_cases[_i].id);
	ck_assert_int_eq(cut, cut_cases[_i].cut);
}
END_TEST

static Suite *envtags_suite(void)
{
	Suite *s = suite_create("envtags");
	TCase *tc;

	tc = tcase_create("allowlist");
	tcase_add_checked_fixture(tc, setup_allow, NULL);
	tcase_add_test(tc, allow_builtin_and_roles);
	tcase_add_loop_test(tc, allow_bad_names, 0, sizeof(bad_names) / sizeof(bad_names[0]));
	tcase_add_test(tc, allow_too_many);
	suite_add_tcase(s, tc);

	tc = tcase_create("parse");
	tcase_add_checked_fixture(tc, setup_allow, NULL);
	tcase_add_test(tc, parse_basic);
	tcase_add_test(tc, parse_no_trailing_nul);
	tcase_add_test(tc, parse_cut_mid_key);
	tcase_add_test(tc, parse_duplicates_first_wins);
	tcase_add_test(tc, parse_equals_in_value);
	tcase_add_test(tc, parse_empty_and_no_equals);
	tcase_add_test(tc, parse_binary_junk);
	tcase_add_test(tc, parse_empty_block);
	tcase_add_test(tc, parse_long_value_truncated);
	tcase_add_test(tc, parse_huge_block);
	tcase_add_test(tc, parse_random_bytes);
	tcase_add_test(tc, overflow_keeps_job_vars);
	suite_add_tcase(s, tc);

	tc = tcase_create("retention");
	tcase_add_checked_fixture(tc, setup_allow, NULL);
	tcase_add_test(tc, secret_never_retained);
	tcase_add_test(tc, tags_only_env_tag_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("job_id");
	tcase_add_checked_fixture(tc, setup_allow, NULL);
	tcase_add_loop_test(tc, job_id_priority, 0, sizeof(job_cases) / sizeof(job_cases[0]));
	tcase_add_test(tc, job_id_cut_to_cap);
	tcase_add_loop_test(tc, job_id_cut_value, 0, sizeof(cut_cases) / sizeof(cut_cases[0]));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(envtags_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
