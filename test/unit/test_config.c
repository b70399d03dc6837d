// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Operating the tool: the config file (format, line-numbered errors, the
 * command line overriding it, --print-config reading back), the filters'
 * masks, the summary's tables and the status line.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/config.h"
#include "decode/filter.h"
#include "model/ops.h"
#include "cli/options.h"
#include "sink/summary.h"

static const struct option test_longopts[] = {
	{"mount", required_argument, NULL, 'm'},
	{"file-id", no_argument, NULL, 1001},
	{"list-probes", optional_argument, NULL, 1002},
	{"web.listen-address", required_argument, NULL, 1003},
	{"config", required_argument, NULL, 1004},
	{NULL, 0, NULL, 0},
};
static const struct les_option_table test_table = {test_longopts, "m:vX:"};
static const char *const test_forbidden[] = {"config", NULL};

/* Write text to a fresh temporary file; the caller unlinks it. */
static char *write_temp(const char *text)
{
	static char path[64];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/les-test-config.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* Load text; returns the error and leaves the message in err. */
static int load_text(const char *text, struct les_settings *s, char *err, size_t errlen)
{
	char *path = write_temp(text);
	int ret = les_config_load(path, &test_table, test_forbidden, s, err, errlen);

	unlink(path);
	return ret;
}

START_TEST(test_format)
{
	struct les_settings s = {0};
	char err[256] = "";

	ck_assert_int_eq(load_text("# comment\n"
				   "\n"
				   "   mount = /mnt/a\n"
				   "mount=/mnt/b   # trailing comment\n"
				   "file-id\n"
				   "--list-probes\n"
				   "list-probes = json\r\n"
				   "web.listen-address = :9108\n"
				   "X = acks=all\n"
				   "v\n"
				   "mount = \"/mnt/with # hash \\\"q\\\" \"\n"
				   "mount = a#b\n",
				   &s, err, sizeof(err)),
			 0);
	ck_assert_uint_eq(s.n, 10);
	ck_assert_str_eq(s.v[0].name, "mount");
	ck_assert_str_eq(s.v[0].value, "/mnt/a");
	ck_assert_int_eq(s.v[0].key, 'm');
	ck_assert_uint_eq(s.v[0].line, 3);
	ck_assert_str_eq(s.v[1].value, "/mnt/b");
	ck_assert_ptr_null(s.v[2].value);
	ck_assert_int_eq(s.v[2].key, 1001);
	ck_assert_ptr_null(s.v[3].value); /* optional argument, not given */
	ck_assert_str_eq(s.v[4].value, "json");
	ck_assert_int_eq(s.v[5].key, 1003);
	ck_assert_int_eq(s.v[6].key, 'X');
	ck_assert_str_eq(s.v[6].value, "acks=all");
	ck_assert_int_eq(s.v[7].key, 'v');
	ck_assert_str_eq(s.v[8].value, "/mnt/with # hash \"q\" ");
	ck_assert_str_eq(s.v[9].value, "a#b"); /* '#' inside a word is no comment */
	ck_assert_ptr_nonnull(strstr(s.v[0].file, "les-test-config"));
	les_settings_free(&s);
}
END_TEST

static void expect_error(const char *text, const char *where_what)
{
	struct les_settings s = {0};
	char err[256] = "";

	ck_assert_int_eq(load_text(text, &s, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, where_what), "error '%s' lacks '%s'", err, where_what);
	ck_assert_ptr_nonnull(strstr(err, "les-test-config"));
	les_settings_free(&s);
}

START_TEST(test_errors)
{
	expect_error("mount = /a\n# fine\nbogus = 1\n", ":3: unknown option 'bogus'");
	expect_error("mount\n", ":1: option 'mount' needs a value");
	expect_error("file-id = yes\n", ":1: option 'file-id' takes no value");
	expect_error("\nconfig = /etc/x\n", ":2: option 'config' cannot be set");
	expect_error("mount /mnt/a\n", ":1: expected '=' after 'mount'");
	expect_error("= x\n", ":1: expected an option name");
	expect_error("mount = \"/a\n", ":1: unterminated quoted value");
	expect_error("mount = \"/a\" b\n", ":1: text after the quoted value");
}
END_TEST

/* A NUL byte in a line: refused with its line number, not read as a shorter line. */
START_TEST(test_nul_byte)
{
	static const char text[] = "mount = /a\nmount = /b\0/c\nfile-id\n";
	char path[] = "/tmp/les-test-config.XXXXXX",
	     *argv[] = {"lustre-ebpf-stream", "--config", path};
	struct les_settings s = {0};
	struct les_options o;
	char err[256] = "";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	ck_assert_int_eq(les_config_load(path, &test_table, test_forbidden, &s, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, ":2: NUL byte in line"), "error '%s'", err);
	les_settings_free(&s);
	/* The same file as --config: a usage error, exit 2. */
	les_options_defaults(&o);
	ck_assert_int_eq(les_options_parse(&o, 3, argv), LES_EXIT_USAGE);
	les_options_release();
	unlink(path);
}
END_TEST

/* A line over the limit is refused, one of exactly the limit read. */
START_TEST(test_long_line)
{
	char *text = malloc(LES_CONFIG_LINE_MAX + 16);

	ck_assert_ptr_nonnull(text);
	memcpy(text, "mount = ", 8);
	memset(text + 8, 'x', LES_CONFIG_LINE_MAX - 8);
	strcpy(text + LES_CONFIG_LINE_MAX, "y\n");
	expect_error(text, ":1: line longer than 4096 bytes");
	strcpy(text + LES_CONFIG_LINE_MAX, "\n");
	{
		struct les_settings s = {0};
		char err[256] = "";

		ck_assert_int_eq(load_text(text, &s, err, sizeof(err)), 0);
		ck_assert_uint_eq(strlen(s.v[0].value), LES_CONFIG_LINE_MAX - 8);
		les_settings_free(&s);
	}
	free(text);
}
END_TEST

START_TEST(test_missing_file)
{
	struct les_settings s = {0};
	char err[256];

	ck_assert_int_eq(
		les_config_load("/nonexistent/les.conf", &test_table, NULL, &s, err, sizeof(err)),
		-ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/les.conf"));
	les_settings_free(&s);
}
END_TEST

/* What --print-config writes, read back, gives the same settings. */
START_TEST(test_print_reads_back)
{
	const char *values[] = {"/plain", "two words", " lead", "trail ", "a # b", "q\"uo\\te", ""};
	struct les_settings s = {0}, back = {0};
	char *text = NULL, err[256];
	size_t len = 0;
	FILE *mem;

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		ck_assert_int_eq(les_settings_add(&s, "mount", values[i], 'm', NULL, 0), 0);
	ck_assert_int_eq(les_settings_add(&s, "file-id", NULL, 1001, NULL, 0), 0);
	mem = open_memstream(&text, &len);
	les_settings_print(&s, mem);
	fclose(mem);
	ck_assert_int_eq(load_text(text, &back, err, sizeof(err)), 0);
	ck_assert_uint_eq(back.n, s.n);
	for (size_t i = 0; i < s.n; i++) {
		ck_assert_str_eq(back.v[i].name, s.v[i].name);
		if (s.v[i].value)
			ck_assert_str_eq(back.v[i].value, s.v[i].value);
		else
			ck_assert_ptr_null(back.v[i].value);
	}
	free(text);
	les_settings_free(&s);
	les_settings_free(&back);
}
END_TEST

/* --- the real option table ------------------------------------------------ */

static int parse(struct les_options *o, const char *conf, char **argv_tail, int ntail)
{
	char *argv[32] = {"lustre-ebpf-stream", "--config", NULL};
	char *path = write_temp(conf);
	int argc = 3, ret;

	argv[2] = path;
	for (int i = 0; i < ntail; i++)
		argv[argc++] = argv_tail[i];
	les_options_defaults(o);
	ret = les_options_parse(o, argc, argv);
	unlink(path);
	return ret;
}

START_TEST(test_options_from_file)
{
	struct les_options o;

	ck_assert_int_eq(parse(&o,
			       "mount = /mnt/a\nmount = /mnt/b\nmin-latency = 20ms\nfile-id\n"
			       "uid = 1000\nop = read,write\nintent = data_read\ncomm = dd\n"
			       "job = 4242\nsummary = false\nverbose\nverbose\n",
			       NULL, 0),
			 0);
	ck_assert_uint_eq(o.n_mounts, 2);
	ck_assert_str_eq(o.mounts[0], "/mnt/a");
	ck_assert_str_eq(o.mounts[1], "/mnt/b");
	ck_assert_uint_eq(o.min_latency_ns, 20000000);
	ck_assert(o.file_id);
	ck_assert_int_eq(o.filter_uid, 1000);
	ck_assert_uint_eq(o.filter_ops, (1u << LES_OP_READ) | (1u << LES_OP_WRITE));
	ck_assert_uint_eq(o.filter_intents, 1u << LES_INTENT_DATA_READ);
	ck_assert_str_eq(o.filter_comm, "dd");
	ck_assert_str_eq(o.filter_job, "4242");
	ck_assert_int_eq(o.summary, 0);
	ck_assert_int_eq(o.verbose, 2);
	ck_assert_ptr_nonnull(o.config_path);
	les_options_release();
}
END_TEST

/* Scalars: the command line wins; lists: the command line's replaces the file's. */
START_TEST(test_cmdline_overrides)
{
	char *tail[] = {"--min-latency", "5ms", "-m", "/mnt/c"};
	const struct les_settings *eff;
	struct les_options o;

	ck_assert_int_eq(
		parse(&o, "mount = /mnt/a\nmount = /mnt/b\nmin-latency = 20ms\nfile-id\n", tail, 4),
		0);
	ck_assert_uint_eq(o.min_latency_ns, 5000000);
	ck_assert_uint_eq(o.n_mounts, 1);
	ck_assert_str_eq(o.mounts[0], "/mnt/c");
	ck_assert(o.file_id);
	eff = les_options_settings();
	ck_assert_uint_eq(eff->n, 3);
	ck_assert_str_eq(eff->v[0].name, "file-id");
	ck_assert_str_eq(eff->v[1].name, "min-latency");
	ck_assert_str_eq(eff->v[1].value, "5ms");
	ck_assert_str_eq(eff->v[2].name, "mount"); /* -m prints under its long name */
	les_options_release();
}
END_TEST

START_TEST(test_option_errors)
{
	char *bad_cmdline[] = {"--op", "bogus"};
	struct les_options o;

	ck_assert_int_eq(parse(&o, "bogus = 1\n", NULL, 0), LES_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, "duration = soon\n", NULL, 0), LES_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, "help\n", NULL, 0), LES_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, "print-config\n", NULL, 0), LES_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, "comm = a-name-longer-than-15\n", NULL, 0), LES_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, "", bad_cmdline, 2), LES_EXIT_USAGE);
	les_options_release();
}
END_TEST

/* --- filters ---------------------------------------------------------------- */

START_TEST(test_filter_masks)
{
	uint32_t ops = 0, intents = 0, access;
	uint64_t bits[2], comm[2];
	char err[128];
	bool high;

	ck_assert_int_eq(les_filter_parse_ops("read,write", &ops, err, sizeof(err)), 0);
	ck_assert_int_eq(les_filter_parse_ops("read,,write", &ops, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(les_filter_parse_ops("reed", &ops, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "reed"));
	ck_assert_int_eq(les_filter_parse_intents("data_read", &intents, err, sizeof(err)), 0);
	ck_assert_int_eq(les_filter_parse_intents("reading", &intents, err, sizeof(err)), -EINVAL);

	ck_assert_uint_eq(les_filter_access_ops(0, 0), 0);
	ck_assert_uint_eq(les_filter_access_ops(ops, 0), ops);
	ck_assert_uint_eq(les_filter_access_ops(ops, intents), 1u << LES_OP_READ);
	access = les_filter_access_ops(0, 1u << LES_INTENT_NAMESPACE_MUTATION);
	ck_assert(access & (1u << LES_OP_MKDIR));
	ck_assert(!(access & (1u << LES_OP_READ)));
	/* --op write --intent data_read: nothing passes, and that is still a filter */
	ck_assert_uint_ne(les_filter_access_ops(1u << LES_OP_WRITE, intents), 0);
	ck_assert_uint_eq(
		les_filter_access_ops(1u << LES_OP_WRITE, intents) & ((1u << LES_OP_MAX) - 1), 0);

	les_filter_fuse_opcodes(0, bits, &high);
	ck_assert(high && bits[0] == ~0ULL && bits[1] == ~0ULL);
	les_filter_fuse_opcodes((1u << LES_OP_READDIR) | (1u << LES_OP_CLOSE), bits, &high);
	ck_assert(!high);
	ck_assert(bits[0] & (1ULL << 28));    /* readdir */
	ck_assert(bits[0] & (1ULL << 44));    /* readdirplus */
	ck_assert(bits[0] & (1ULL << 18));    /* release */
	ck_assert(bits[0] & (1ULL << 25));    /* flush */
	ck_assert(!(bits[0] & (1ULL << 16))); /* write */
	ck_assert(!(bits[0] & (1ULL << 26))); /* init serves no op */
	ck_assert_int_eq(les_filter_fuse_op(26), -1);
	ck_assert_int_eq(les_filter_fuse_op(16), LES_OP_WRITE);

	ck_assert_int_eq(les_filter_comm("dd", comm), 0);
	ck_assert_int_eq(memcmp(comm, "dd\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16), 0);
	ck_assert_int_eq(les_filter_comm("123456789012345", comm), 0);
	ck_assert_int_eq(les_filter_comm("1234567890123456", comm), -EINVAL);
	ck_assert_int_eq(les_filter_comm("", comm), -EINVAL);

	ck_assert(les_filter_job_passes(NULL, NULL));
	ck_assert(les_filter_job_passes("42", "42"));
	ck_assert(!les_filter_job_passes("42", "421"));
	ck_assert(!les_filter_job_passes("42", NULL));
}
END_TEST

/* --- summary and status line -------------------------------------------------- */

static void feed(struct les_summary *s, uint32_t kind, const char *op, const char *job,
		 const char *process, uint64_t latency_ns, int times)
{
	struct les_event ev = {.kind = kind,
			       .op = op,
			       .job_id = job,
			       .process = process,
			       .comm = process,
			       .latency_ns = latency_ns};

	for (int i = 0; i < times; i++)
		les_summary_event(s, &ev);
}

/* Offset of needle in hay, -1 when absent. */
static long pos(const char *hay, const char *needle)
{
	const char *p = strstr(hay, needle);

	return p ? p - hay : -1;
}

static char *print_summary(const struct les_summary *s, uint64_t emitted)
{
	struct les_summary_totals t = {
		.elapsed_ns = 2000000000, .emitted = emitted, .dropped = 3, .filtered = 7};
	size_t cap = 1 << 20;
	char *text = calloc(1, cap);
	FILE *mem;

	ck_assert_ptr_nonnull(text);
	mem = fmemopen(text, cap - 1, "w");
	ck_assert_ptr_nonnull(mem);
	les_summary_print(s, &t, mem);
	fclose(mem);
	return text;
}

START_TEST(test_summary)
{
	struct les_summary *s = les_summary_new();
	char *text;
	long by_ops, by_lat, procs;

	ck_assert_ptr_nonnull(s);
	feed(s, LES_REC_ACCESS, "read", "job-many", "reader", 1000, 50);
	feed(s, LES_REC_ACCESS, "write", "job-slow", "writer", 900000000, 2);
	feed(s, LES_REC_ACCESS, "open", NULL, "reader", 1000, 5);
	feed(s, LES_REC_RPC, "write", "job-slow", "writer", 800000000, 2);
	feed(s, LES_REC_RPC_EVENT, "resend", NULL, "writer", 0, 1);
	text = print_summary(s, 60);
	ck_assert_ptr_nonnull(strstr(text, "2.0 s, 60 records (30.0/s), 3 dropped, 7 filtered"));
	ck_assert_ptr_nonnull(strstr(text, "access     (all)                    57"));
	ck_assert_ptr_nonnull(strstr(text, "read                     50"));
	ck_assert_ptr_nonnull(strstr(text, "resend"));
	/* by ops: job-many first; by latency: job-slow first */
	by_ops = pos(text, "top jobs by access ops:");
	by_lat = pos(text, "top jobs by access latency:");
	procs = pos(text, "top processes by access ops:");
	ck_assert(by_ops >= 0 && by_lat > by_ops && procs > by_lat);
	ck_assert_int_lt(pos(text + by_ops, "job-many"), pos(text + by_ops, "job-slow"));
	ck_assert_int_lt(pos(text + by_lat, "job-slow"), pos(text + by_lat, "job-many"));
	ck_assert_int_gt(pos(text + by_lat, "job-many"), 0);
	ck_assert_ptr_nonnull(strstr(text, "(none)"));
	ck_assert_ptr_nonnull(strstr(text, "top processes by access latency:"));
	free(text);
	les_summary_free(s);
}
END_TEST

/* More names than the table holds: the rest is counted, as "(other)". */
START_TEST(test_summary_bounded)
{
	struct les_summary *s = les_summary_new();
	char job[32], *text;
	int n = LES_SUMMARY_NAMES * 2;

	for (int i = 0; i < n; i++) {
		snprintf(job, sizeof(job), "job-%d", i);
		feed(s, LES_REC_ACCESS, "read", job, "p", 10, 1);
	}
	feed(s, LES_REC_ACCESS, "read", "job-0", "p", 10, 1);
	text = print_summary(s, (uint64_t)n + 1);
	/* The folded names outnumber any single job: "(other)" leads by ops. */
	ck_assert_int_lt(pos(text, "(other)"), pos(text, "job-0\n"));
	ck_assert_int_gt(pos(text, "(other)"), pos(text, "top jobs by access ops:"));
	free(text);
	les_summary_free(s);
}
END_TEST

START_TEST(test_status_format)
{
	char buf[160];

	les_status_format(buf, sizeof(buf), 12300000000ULL, 60000000000ULL, 1234, 101.6, 2);
	ck_assert_str_eq(buf, "12.3s elapsed, 47.7s left | 1234 records | 102/s | 2 dropped");
	les_status_format(buf, sizeof(buf), 3723000000000ULL, 0, 0, 0, 0);
	ck_assert_str_eq(buf, "1h02m03s elapsed | 0 records | 0/s | 0 dropped");
	les_status_format(buf, sizeof(buf), 125000000000ULL, 120000000000ULL, 5, 0, 0);
	ck_assert_str_eq(buf, "2m05s elapsed, 0.0s left | 5 records | 0/s | 0 dropped");
}
END_TEST

START_TEST(test_status_erased)
{
	struct les_status st = {0};
	char *text = NULL;
	size_t len = 0;

	st.out = open_memstream(&text, &len);
	les_status_update(&st, 1000000000, 1000000000, 0, 10, 0);
	les_status_update(&st, 2000000000, 2000000000, 0, 30, 0);
	les_status_clear(&st);
	les_status_clear(&st); /* nothing shown: nothing written */
	fclose(st.out);
	ck_assert_str_eq(text, "\r1.0s elapsed | 10 records | 10/s | 0 dropped\033[K"
			       "\r2.0s elapsed | 30 records | 20/s | 0 dropped\033[K"
			       "\r\033[K");
	free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_nul_byte);
	tcase_add_test(tc, test_long_line);
	tcase_add_test(tc, test_print_reads_back);
	tcase_add_test(tc, test_options_from_file);
	tcase_add_test(tc, test_cmdline_overrides);
	tcase_add_test(tc, test_option_errors);
	tcase_add_test(tc, test_filter_masks);
	tcase_add_test(tc, test_summary);
	tcase_add_test(tc, test_summary_bounded);
	tcase_add_test(tc, test_status_format);
	tcase_add_test(tc, test_status_erased);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
