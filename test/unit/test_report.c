// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The incident report over a small capture written here: the page holds
 * the scripts and the data; the top lists and series are the aggregator's
 * sums; the slowest op comes with its chain in start order; malformed
 * lines are counted; a job named "</script>" cannot end the data element;
 * a script that could is refused, as a missing capture is.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sink/report.h"

#define REC(type, ts, rest) "{\"type\":\"" type "\",\"ts\":\"2026-12-01T10:00:" ts "Z\"," rest "}\n"

/* Two jobs; op 2 is the slowest, with two requests (the later one listed first). */
static const char capture[] = REC("rpc", "10.000900000",
				  "\"op\":\"read\",\"proto\":\"fuse\",\"mount\":\"/m\","
				  "\"req_id\":7,\"parent_op_id\":1,\"latency_ns\":900000")
	REC("access", "10.001000000",
	    "\"op\":\"read\",\"op_id\":1,\"job_id\":\"a\","
	    "\"process\":\"cat\",\"username\":\"u\",\"bytes\":4096,"
	    "\"latency_ns\":1000000,\"rpc_count\":1,\"rpc_wait_ns\":900000") "not json\n"
									     "{\"type\":\"stats\",\"final\":true}\n" REC(
										     "rpc",
										     "11.004000000",
										     "\"op\":\"write\",\"proto\":\"fuse\",\"mount\":\"/m\","
										     "\"req_id\":9,\"parent_op_id\":2,\"latency_ns\":3000000")
										     REC("rpc",
											 "11.001000000",
											 "\"op\":\"getattr\",\"proto\":\"fuse\",\"mount\":\"/m\","
											 "\"req_id\":8,\"parent_op_id\":2,\"latency_ns\":1000000")
											     REC("access",
												 "11.005000000",
												 "\"op\":\"write\",\"op_id\":2,\"job_id\":\"</script><b>\","
												 "\"process\":\"dd\",\"username\":\"u\",\"bytes\":100,"
												 "\"latency_ns\":5000000")
												     REC("access",
													 "13.500000000",
													 "\"op\":\"read\",\"op_id\":3,\"job_id\":\"a\","
													 "\"process\":\"cat\",\"username\":\"u\",\"bytes\":0,"
													 "\"latency_ns\":2000000,\"errno\":5,\"errno_class\":\"io\"");

static const char page[] = "<html><!--@LES_SCRIPTS@--><script type=\"application/json\" "
			   "id=\"les-data\"><!--@LES_DATA@--></script></html>";

static char dir[] = "/tmp/les-report-test.XXXXXX";

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	put("vega.min.js", "var vega = {};\n//# sourceMappingURL=vega.min.js.map\n");
	put("vega-lite.min.js", "var vegaLite = {};\n");
	put("vega-embed.min.js", "var vegaEmbed = function () {};\n");
	put("capture.jsonl", capture);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/les-report-test.XXXXXX");
}

static int make(const char *input, struct les_report_stats *st, char *err, size_t errlen)
{
	char in[256], out[256];
	struct les_report_config cfg = {
		.input_path = in,
		.output_path = out,
		.js_dir = dir,
		.window_ns = 2000000000ULL,
		.slowest = 10,
		.series_max = 10,
		.page = page,
		.page_len = sizeof(page) - 1,
	};

	snprintf(in, sizeof(in), "%s/%s", dir, input);
	snprintf(out, sizeof(out), "%s/report.html", dir);
	return les_report_run(&cfg, st, err, errlen);
}

/* The page as text, and its data parsed. */
static json_t *load(char **text)
{
	char path[256];
	const char *start, *end;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/report.html", dir);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	*text = calloc(1, (size_t)n + 1);
	ck_assert_int_eq(fread(*text, 1, (size_t)n, f), n);
	fclose(f);
	start = strstr(*text, "id=\"les-data\">");
	ck_assert_ptr_nonnull(start);
	start += strlen("id=\"les-data\">");
	end = strstr(start, "</script>");
	ck_assert_ptr_nonnull(end);
	return json_loadb(start, (size_t)(end - start), 0, NULL);
}

static json_t *row_of(json_t *rows, const char *key)
{
	size_t i;
	json_t *r;

	json_array_foreach(rows, i,
			   r) if (strcmp(json_string_value(json_object_get(r, "key")) ?: "", key) ==
				  0) return r;
	return NULL;
}

static long long num(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

START_TEST(test_page_holds_scripts_and_data)
{
	struct les_report_stats st;
	char err[512], *text;
	json_t *d;

	ck_assert_int_eq(make("capture.jsonl", &st, err, sizeof(err)), 0);
	d = load(&text);
	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(strstr(text, "var vegaEmbed = function"));
	ck_assert_ptr_null(strstr(text, "sourceMappingURL"));
	/* The job named "</script><b>" is in the data, its '<' escaped. */
	ck_assert_ptr_null(strstr(text, "</script><b>"));
	ck_assert_uint_eq(st.records, 6);
	ck_assert_uint_eq(st.malformed, 1);
	ck_assert_uint_eq(st.lines, 8);
	ck_assert_int_eq(num(json_object_get(d, "meta"), "malformed"), 1);
	json_decref(d);
	free(text);
}
END_TEST

START_TEST(test_tops_are_the_windows_sums)
{
	struct les_report_stats st;
	char err[512], *text;
	json_t *d, *jobs, *a, *b;

	ck_assert_int_eq(make("capture.jsonl", &st, err, sizeof(err)), 0);
	d = load(&text);
	jobs = json_object_get(json_object_get(json_object_get(d, "top"), "job"), "rows");
	a = row_of(jobs, "a");
	b = row_of(jobs, "</script><b>");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(num(a, "ops"), 2);
	ck_assert_int_eq(num(a, "bytes"), 4096);
	ck_assert_int_eq(num(a, "errors"), 1);
	ck_assert_int_eq(num(a, "latency_ns"), 3000000);
	ck_assert_int_eq(num(a, "rpc_wait_ns"), 900000);
	ck_assert_int_eq(num(b, "ops"), 1);
	ck_assert_int_eq(num(b, "bytes"), 100);
	/* Busiest first. */
	ck_assert_ptr_eq(json_array_get(jobs, 0), a);
	/* Windows of 2 s: 10.0 and 11.0 in [10, 12), 13.5 in [12, 14). */
	ck_assert_uint_eq(st.window_ns, 2000000000ULL);
	ck_assert_int_eq(json_array_size(json_object_get(d, "series")), 3);
	json_decref(d);
	free(text);
}
END_TEST

START_TEST(test_slowest_with_chain_in_start_order)
{
	struct les_report_stats st;
	char err[512], *text;
	json_t *d, *slow, *chain;

	ck_assert_int_eq(make("capture.jsonl", &st, err, sizeof(err)), 0);
	d = load(&text);
	slow = json_object_get(d, "slow");
	ck_assert_int_eq(json_array_size(slow), 3);
	ck_assert_int_eq(num(json_array_get(slow, 0), "op_id"), 2);
	ck_assert_int_eq(num(json_array_get(slow, 1), "op_id"), 3);
	chain = json_object_get(json_array_get(slow, 0), "chain");
	ck_assert_int_eq(json_array_size(chain), 2);
	/* getattr started at 11.000 (0 µs), write at 11.001 (1000 µs). */
	ck_assert_int_eq(num(json_array_get(chain, 0), "req_id"), 8);
	ck_assert_int_eq(num(json_array_get(chain, 1), "req_id"), 9);
	ck_assert_double_eq_tol(
		json_real_value(json_object_get(json_array_get(chain, 1), "start_us")), 1000.0,
		0.05);
	/* Every request is a wait of target "fuse /m". */
	ck_assert_int_eq(json_array_size(json_object_get(d, "waits")), 1);
	ck_assert_int_eq(num(json_array_get(json_object_get(d, "waits"), 0), "n"), 3);
	json_decref(d);
	free(text);
}
END_TEST

START_TEST(test_refusals)
{
	struct les_report_stats st;
	char err[512];

	ck_assert_int_eq(make("nothing.jsonl", &st, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "nothing.jsonl"));
	put("vega-lite.min.js", "var s = '</SCRIPT>';\n");
	ck_assert_int_eq(make("capture.jsonl", &st, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "cannot be inlined"));
}
END_TEST

START_TEST(test_auto_window)
{
	ck_assert_uint_eq(les_report_auto_window(0), 1000000000ULL);
	ck_assert_uint_eq(les_report_auto_window(100000000000ULL), 1000000000ULL);
	ck_assert_uint_eq(les_report_auto_window(150000000000ULL), 2000000000ULL);
	ck_assert_uint_eq(les_report_auto_window(3600000000000ULL), 60000000000ULL);
	ck_assert_uint_eq(les_report_auto_window(UINT64_MAX), 3600000000000ULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("report");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_page_holds_scripts_and_data);
	tcase_add_test(tc, test_tops_are_the_windows_sums);
	tcase_add_test(tc, test_slowest_with_chain_in_start_order);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_auto_window);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
