// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Command-line durations: a bare number is seconds, except --min-latency. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cli/options.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define NS_PER_S 1000000000ull

/* Each case is parsed in its own forked test (check's default), so getopt's
 * state starts fresh. */
static int parse(struct les_options *o, const char *opt, const char *val)
{
	char *argv[] = { "lustre-ebpf-stream", (char *)opt, (char *)val, NULL };

	les_options_defaults(o);
	return les_options_parse(o, 3, argv);
}

enum field { DURATION, STATS_INTERVAL, AGGREGATE, MIN_LATENCY };

static uint64_t field_of(const struct les_options *o, enum field f)
{
	switch (f) {
	case DURATION:
		return o->duration_ns;
	case STATS_INTERVAL:
		return o->stats_interval_ns;
	case AGGREGATE:
		return o->aggregate_ns;
	case MIN_LATENCY:
		return o->min_latency_ns;
	}
	return 0;
}

static const struct {
	const char *opt;
	const char *val;
	enum field field;
	int status;
	uint64_t ns;
} cases[] = {
	/* as the exporter and timeout(1) read them */
	{ "--duration", "60", DURATION, 0, 60 * NS_PER_S },
	{ "--duration", "1.5", DURATION, 0, 1500000000ull },
	{ "--duration", "60s", DURATION, 0, 60 * NS_PER_S },
	{ "--duration", "2m", DURATION, 0, 120 * NS_PER_S },
	{ "--stats-interval", "5", STATS_INTERVAL, 0, 5 * NS_PER_S },
	{ "--aggregate", "10", AGGREGATE, 0, 10 * NS_PER_S },
	/* bcc reads a bare number there as milliseconds: refused, not guessed */
	{ "--min-latency", "10", MIN_LATENCY, 2, 0 },
	{ "--min-latency", "10ms", MIN_LATENCY, 0, 10000000ull },
	{ "--min-latency", "0", MIN_LATENCY, 0, 0 },
	{ "--duration", "abc", DURATION, 2, 0 },
	{ "--duration", "60x", DURATION, 2, 0 },
	{ "--duration", "0", DURATION, 2, 0 },
};

START_TEST(duration_units)
{
	struct les_options o;
	int status = parse(&o, cases[_i].opt, cases[_i].val);

	ck_assert_msg(status == cases[_i].status, "%s %s: status %d, want %d", cases[_i].opt,
		      cases[_i].val, status, cases[_i].status);
	if (!status)
		ck_assert_uint_eq(field_of(&o, cases[_i].field), cases[_i].ns);
}
END_TEST

/* The Lustre exporter's command lines: its flags with its meaning. */
static int parse_argv(struct les_options *o, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	les_options_defaults(o);
	return les_options_parse(o, argc, argv);
}

START_TEST(exporter_once)
{
	struct les_options o;
	char *once[] = { "x", "--once", NULL };
	char *once_drain[] = { "x", "--once", "--drain-interval", "2", NULL };
	char *once_shorter[] = { "x", "--once", "--duration", "1", NULL };
	char *drain_alone[] = { "x", "--drain-interval=3", NULL };

	ck_assert_int_eq(parse_argv(&o, once), 0);
	ck_assert_uint_eq(o.duration_ns, 5 * NS_PER_S);
	ck_assert_int_eq(parse_argv(&o, once_drain), 0);
	ck_assert_uint_eq(o.duration_ns, 2 * NS_PER_S);
	ck_assert_int_eq(parse_argv(&o, once_shorter), 0);
	ck_assert_uint_eq(o.duration_ns, 1 * NS_PER_S);
	ck_assert_int_eq(parse_argv(&o, drain_alone), 0);
	ck_assert_uint_eq(o.duration_ns, 0);
}
END_TEST

START_TEST(exporter_slurm_flags)
{
	struct les_options o;
	char *all[] = { "x", "--slurm-jobid", "--slurm-jobid-ttl", "30",
			"--slurm-jobid-negative-ttl", "5", "--slurm-jobid-verify-ttl=0",
			"--slurm-jobid-cache-size", "8192", "--legacy-symbol-allow-missing",
			"--uid-labels=false", "--histogram-process-labels", NULL };
	char *off[] = { "x", "--slurm-jobid=false", NULL };
	char *ttl0[] = { "x", "--slurm-jobid-ttl", "0", NULL };
	char *drain0[] = { "x", "--drain-interval", "0", NULL };

	ck_assert_int_eq(parse_argv(&o, all), 0);
	ck_assert_uint_eq(o.enrich.proc_cache_size, 8192);
	ck_assert(!o.prom_uid_labels);
	ck_assert(o.prom_slurm_label);
	ck_assert_int_eq(parse_argv(&o, off), 0);
	ck_assert(!o.prom_slurm_label);
	ck_assert_int_eq(parse_argv(&o, ttl0), 2);
	ck_assert_int_eq(parse_argv(&o, drain0), 2);
}
END_TEST

/* An option that tunes an output not asked for would do nothing: refused. */
static const char *const needs_output[][3] = {
	{ "--kafka-key", "host", NULL },
	{ "--kafka-queue-size", "1000", NULL },
	{ "--kafka-flush-timeout", "3s", NULL },
	{ "--series-ttl", "60s", NULL },
	{ "--kafka-key", "host", "--kafka-brokers" },
	{ "--series-ttl", "60s", "--prometheus" },
};

START_TEST(options_needing_an_output)
{
	const char *const *c = needs_output[_i];
	char *argv[] = { "x", (char *)c[0], (char *)c[1], NULL, NULL, NULL, NULL, NULL };
	struct les_options o;
	int argc = 3;

	if (c[2] && strcmp(c[2], "--kafka-brokers") == 0) {
		argv[argc++] = "--kafka-brokers";
		argv[argc++] = "127.0.0.1:9";
		argv[argc++] = "--kafka-topic=t";
	} else if (c[2]) {
		argv[argc++] = (char *)c[2];
		argv[argc++] = "127.0.0.1:0";
	}
	les_options_defaults(&o);
	ck_assert_int_eq(les_options_parse(&o, argc, argv), c[2] ? 0 : 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("durations");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, duration_units, 0, N(cases));
	tcase_add_test(tc, exporter_once);
	tcase_add_test(tc, exporter_slurm_flags);
	tcase_add_loop_test(tc, options_needing_an_output, 0, N(needs_output));
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
