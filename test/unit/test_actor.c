// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Actor classes: default table, --actor-rule overrides and parsing, globs. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "enrich/actor.h"

#define JOB LES_ACTOR_F_JOB
#define KT  LES_ACTOR_F_KTHREAD
#define FS  LES_ACTOR_F_FS_WORK

static const struct {
	const char *comm;
	unsigned int flags;
	enum les_actor_type want;
} default_cases[] = {
	/* client_worker */
	{"ptlrpcd_00_01", KT, LES_ACTOR_CLIENT_WORKER},
	{"ptlrpcd_rcv", KT, LES_ACTOR_CLIENT_WORKER},
	{"ptlrpcd_00_01", 0, LES_ACTOR_CLIENT_WORKER},
	{"ldlm_bl_01", KT, LES_ACTOR_CLIENT_WORKER},
	{"ldlm_cb_00", 0, LES_ACTOR_CLIENT_WORKER},
	{"ll_ping", KT, LES_ACTOR_CLIENT_WORKER},
	{"ll_sa_12345", KT, LES_ACTOR_CLIENT_WORKER},
	{"ll_ping", 0, LES_ACTOR_USER}, /* a user program named ll_* */
	{"socknal_sd00_00", KT, LES_ACTOR_CLIENT_WORKER},
	{"kiblnd_sd_00_00", KT, LES_ACTOR_CLIENT_WORKER},
	{"rpciod", KT, LES_ACTOR_CLIENT_WORKER},
	{"nfsiod", KT, LES_ACTOR_CLIENT_WORKER},
	{"xprtiod", KT, LES_ACTOR_CLIENT_WORKER},
	{"nfsv4.1-svc", KT, LES_ACTOR_CLIENT_WORKER},
	{"kworker/u8:2", KT | FS, LES_ACTOR_CLIENT_WORKER},
	{"kworker/u8:2", KT, LES_ACTOR_SYSTEM_DAEMON}, /* not doing fs work */
	{"kworker/3:1H", FS, LES_ACTOR_USER},	       /* claims fs work, not a kernel thread */
	/* a client worker stays one even if somehow tagged with a job */
	{"ptlrpcd_01_00", KT | JOB, LES_ACTOR_CLIENT_WORKER},
	/* batch_job */
	{"python", JOB, LES_ACTOR_BATCH_JOB},
	{"cat", JOB, LES_ACTOR_BATCH_JOB},
	{"sshd", JOB, LES_ACTOR_BATCH_JOB}, /* inside a job, a job */
	{"slurmstepd", 0, LES_ACTOR_BATCH_JOB},
	{"slurmd", 0, LES_ACTOR_BATCH_JOB},
	{"pbs_mom", 0, LES_ACTOR_BATCH_JOB},
	{"sge_execd", 0, LES_ACTOR_BATCH_JOB},
	{"sge_shepherd", 0, LES_ACTOR_BATCH_JOB},
	{"sbatchd", 0, LES_ACTOR_BATCH_JOB},
	{"res", 0, LES_ACTOR_BATCH_JOB},
	{"flux-broker-0", 0, LES_ACTOR_BATCH_JOB},
	/* system_daemon */
	{"systemd", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"systemd-journal", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"sshd", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"sshd-session", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"cron", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"crond", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"rsyslogd", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"dbus-daemon", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"sssd_nss", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"sssd", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"nscd", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"node_exporter", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"lustre_exporter", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"chronyd", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"munged", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"rpc.gssd", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"ksoftirqd/3", KT, LES_ACTOR_SYSTEM_DAEMON}, /* other kernel threads */
	/* user */
	{"python", 0, LES_ACTOR_USER},
	{"dd", 0, LES_ACTOR_USER},
	{"exporters", 0, LES_ACTOR_USER}, /* ends in "exporters", not "exporter" */
	{"systemctl", 0, LES_ACTOR_USER},
	{"resize", 0, LES_ACTOR_USER}, /* "res" is exact */
	{"", 0, LES_ACTOR_USER},
};

START_TEST(default_table)
{
	const char *comm = default_cases[_i].comm;
	enum les_actor_type got =
		les_actor_classify(NULL, comm, strlen(comm), default_cases[_i].flags);

	ck_assert_msg(got == default_cases[_i].want, "%s/%#x: %s, want %s", comm,
		      default_cases[_i].flags, les_actor_name(got),
		      les_actor_name(default_cases[_i].want));
}
END_TEST

START_TEST(comm_bounds)
{
	/* comm[16] with junk after the NUL; and a len shorter than the string. */
	const char comm[16] = "sshd\0ptlrpcd_00";

	ck_assert_int_eq(les_actor_classify(NULL, comm, sizeof(comm), 0), LES_ACTOR_SYSTEM_DAEMON);
	ck_assert_int_eq(les_actor_classify(NULL, "slurmdXXX", 6, 0), LES_ACTOR_BATCH_JOB);
	ck_assert_int_eq(les_actor_classify(NULL, NULL, 10, 0), LES_ACTOR_USER);
	ck_assert_int_eq(les_actor_classify(NULL, NULL, 10, JOB), LES_ACTOR_BATCH_JOB);
}
END_TEST

/* ---- --actor-rule ----------------------------------------------------------- */

static struct les_actor_rules rules;

static void setup_rules(void)
{
	static const char *const specs[] = {
		"system_daemon=backup-*",
		"client_worker=my_fuse_d",
		"user=python*",
		"batch_job=mpirun",
		"user=sshd",
	};
	char err[256];

	memset(&rules, 0, sizeof(rules));
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		ck_assert_int_eq(les_actor_rules_add(&rules, specs[i], err, sizeof(err)), 0);
}

static const struct {
	const char *comm;
	unsigned int flags;
	enum les_actor_type want;
} override_cases[] = {
	{"backup-agent", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"backup-agent", JOB, LES_ACTOR_SYSTEM_DAEMON}, /* user rules come first */
	{"my_fuse_d", 0, LES_ACTOR_CLIENT_WORKER},
	{"python3", JOB, LES_ACTOR_USER},
	{"mpirun", 0, LES_ACTOR_BATCH_JOB},
	{"sshd", 0, LES_ACTOR_USER}, /* overrides the default daemon */
	/* no user rule: defaults apply */
	{"cron", 0, LES_ACTOR_SYSTEM_DAEMON},
	{"dd", JOB, LES_ACTOR_BATCH_JOB},
	{"ptlrpcd_00_00", KT, LES_ACTOR_CLIENT_WORKER},
};

START_TEST(override_rules)
{
	const char *comm = override_cases[_i].comm;
	enum les_actor_type got =
		les_actor_classify(&rules, comm, strlen(comm), override_cases[_i].flags);

	ck_assert_msg(got == override_cases[_i].want, "%s: %s, want %s", comm, les_actor_name(got),
		      les_actor_name(override_cases[_i].want));
}
END_TEST

START_TEST(rule_order_first_wins)
{
	struct les_actor_rules r = {0};
	char err[128];

	ck_assert_int_eq(les_actor_rules_add(&r, "user=foo*", err, sizeof(err)), 0);
	ck_assert_int_eq(les_actor_rules_add(&r, "system_daemon=foobar", err, sizeof(err)), 0);
	ck_assert_int_eq(les_actor_classify(&r, "foobar", 6, 0), LES_ACTOR_USER);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_str_eq(r.r[1].glob, "foobar");
}
END_TEST

static const struct {
	const char *spec;
	int rc;
	const char *msg; /* part of the error message */
} bad_specs[] = {
	{"", -EINVAL, "CLASS=GLOB"},
	{"user", -EINVAL, "CLASS=GLOB"},
	{"=foo", -EINVAL, "CLASS is one of"},
	{"daemon=foo", -EINVAL, "CLASS is one of"},
	{"User=foo", -EINVAL, "CLASS is one of"},
	{"user =foo", -EINVAL, "CLASS is one of"},
	{"user=", -EINVAL, "empty GLOB"},
	{"user=[abc", -EINVAL, "without ']'"},
	{"user=a[!", -EINVAL, "without ']'"},
	{"user=foo\\", -EINVAL, "ends with"},
	{"user=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", -EINVAL,
	 "longer than"},
	/* Valid edge cases. */
	{"user=a=b", 0, NULL},
	{"user=[]]", 0, NULL},
	{"user=\\[", 0, NULL},
	{"client_worker=*", 0, NULL},
};

START_TEST(rule_parse)
{
	struct les_actor_rules r = {0};
	char err[256] = "";
	int rc = les_actor_rules_add(&r, bad_specs[_i].spec, err, sizeof(err));

	ck_assert_int_eq(rc, bad_specs[_i].rc);
	if (rc) {
		ck_assert_uint_eq(r.n, 0);
		ck_assert_msg(strstr(err, bad_specs[_i].msg), "message '%s'", err);
		ck_assert_ptr_nonnull(strstr(err, "--actor-rule"));
	} else {
		ck_assert_uint_eq(r.n, 1);
	}
}
END_TEST

START_TEST(rule_null_spec_and_full)
{
	struct les_actor_rules r = {0};
	char err[256] = "";
	int rc = 0;

	ck_assert_int_eq(les_actor_rules_add(&r, NULL, err, sizeof(err)), -EINVAL);
	for (int i = 0; i <= LES_ACTOR_RULES_MAX && !rc; i++)
		rc = les_actor_rules_add(&r, "user=x", err, sizeof(err));
	ck_assert_int_eq(rc, -E2BIG);
	ck_assert_uint_eq(r.n, LES_ACTOR_RULES_MAX);
}
END_TEST

/* ---- glob matching ------------------------------------------------------------ */

static const struct {
	const char *glob;
	const char *str;
	bool match;
} glob_cases[] = {
	{"*", "", true},
	{"*", "anything/at all", true},
	{"", "", true},
	{"", "a", false},
	{"abc", "abc", true},
	{"abc", "abcd", false},
	{"a?c", "abc", true},
	{"a?c", "ac", false},
	{"a*c", "ac", true},
	{"a*c", "abbbbc", true},
	{"a*c", "abbbbcd", false},
	{"*exporter", "node_exporter", true},
	{"*exporter", "exporter", true},
	{"*exporter", "exporters", false},
	{"k*/*", "kworker/3", true}, /* '*' crosses '/' */
	{"*a*b*c*", "xxaxxbxxcxx", true},
	{"*a*b*c*", "xxaxxcxxbxx", false},
	{"[abc]x", "bx", true},
	{"[abc]x", "dx", false},
	{"[a-c]", "b", true},
	{"[a-c]", "d", false},
	{"[!a-c]", "d", true},
	{"[^a-c]", "a", false},
	{"[]]", "]", true},
	{"[!]]", "]", false},
	{"[a-]", "-", true},
	{"\\*", "*", true},
	{"\\*", "x", false},
	{"[abc", "[abc", true}, /* unclosed bracket is literal, like fnmatch */
	{"nfsv4.*-svc", "nfsv4.1-svc", true},
	{"*\xff", "a\xff", true},
	{"**a", "a", true},
	{"a**", "a", true},
};

START_TEST(glob_match)
{
	const char *s = glob_cases[_i].str;

	ck_assert_msg(les_glob_match(glob_cases[_i].glob, s, strlen(s)) == glob_cases[_i].match,
		      "'%s' vs '%s'", glob_cases[_i].glob, s);
}
END_TEST

START_TEST(glob_pathological)
{
	char s[4096];

	/* Many stars against a long near-miss: must finish quickly. */
	memset(s, 'a', sizeof(s));
	ck_assert(!les_glob_match("*a*a*a*a*a*a*a*a*b", s, sizeof(s)));
	ck_assert(les_glob_match("*a*a*a*a*a*a*a*a*", s, sizeof(s)));
}
END_TEST

START_TEST(names)
{
	ck_assert_str_eq(les_actor_name(LES_ACTOR_USER), "user");
	ck_assert_str_eq(les_actor_name(LES_ACTOR_BATCH_JOB), "batch_job");
	ck_assert_str_eq(les_actor_name(LES_ACTOR_SYSTEM_DAEMON), "system_daemon");
	ck_assert_str_eq(les_actor_name(LES_ACTOR_CLIENT_WORKER), "client_worker");
	ck_assert_str_eq(les_actor_name(LES_ACTOR_MAX), "unknown");
	ck_assert_int_eq(les_actor_from_name("batch_job", 9), LES_ACTOR_BATCH_JOB);
	ck_assert_int_eq(les_actor_from_name("batch_jo", 8), -EINVAL);
}
END_TEST

#define N(a) (int)(sizeof(a) / sizeof((a)[0]))

static Suite *actor_suite(void)
{
	Suite *s = suite_create("actor");
	TCase *tc;

	tc = tcase_create("defaults");
	tcase_add_loop_test(tc, default_table, 0, N(default_cases));
	tcase_add_test(tc, comm_bounds);
	tcase_add_test(tc, names);
	suite_add_tcase(s, tc);

	tc = tcase_create("overrides");
	tcase_add_checked_fixture(tc, setup_rules, NULL);
	tcase_add_loop_test(tc, override_rules, 0, N(override_cases));
	tcase_add_test(tc, rule_order_first_wins);
	suite_add_tcase(s, tc);

	tc = tcase_create("rule_parse");
	tcase_add_loop_test(tc, rule_parse, 0, N(bad_specs));
	tcase_add_test(tc, rule_null_spec_and_full);
	suite_add_tcase(s, tc);

	tc = tcase_create("glob");
	tcase_add_loop_test(tc, glob_match, 0, N(glob_cases));
	tcase_add_test(tc, glob_pathological);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(actor_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
