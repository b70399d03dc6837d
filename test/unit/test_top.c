// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The top view's sums, rows, sort, keys, filter and overflow row. */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include "model/ops.h"
#include "les_record.h"
#include "sink/top.h"
#include "model/rpcjoin.h"

static struct les_event access_ev(const char *job, const char *user, const char *process,
				  const char *op, uint64_t latency_ns, uint64_t bytes, int err)
{
	struct les_event ev = {
		.kind = LES_REC_ACCESS, .type = "access", .mount = "/mnt/l", .op = op, .access_op = (unsigned int)les_op_from_name(op),
		.latency_ns = latency_ns, .bytes = bytes, .err = err, .username = user,
		.process = process, .comm = process, .job_id = job, .uid = 1000,
	};

	return ev;
}

/* The frame line of row name, or NULL. */
static const char *row(const char *frame, const char *name, char *line, size_t len)
{
	for (const char *p = frame; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n < len && strncmp(p, name, strlen(name)) == 0 && p[strlen(name)] == ' ') {
			memcpy(line, p, n);
			line[n] = '\0';
			return line;
		}
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

START_TEST(test_rows_by_job_and_process)
{
	struct les_top *t = les_top_new();
	static char frame[16384];
	char line[256];
	struct les_event ev;

	ck_assert_ptr_nonnull(t);
	for (int i = 0; i < 10; i++) {
		ev = access_ev("42", "alice", "dd", "write", 1000000, 4096, 0);
		les_top_event(t, &ev);
	}
	for (int i = 0; i < 4; i++) {
		ev = access_ev("43", "bob", "ls", "getattr", 2000, 0, i == 0 ? 5 : 0);
		les_top_event(t, &ev);
	}
	/* Two sunrpc requests: the header gives their mean backlog and rtt. */
	for (int i = 1; i <= 2; i++) {
		struct les_event rpc = { .kind = LES_REC_RPC, .type = "rpc", .proto = "sunrpc", .proto_id = LES_PROTO_SUNRPC,
					 .op = "read", .backlog_ns = 1000 * i, .rtt_ns = 2000000 * i };

		les_top_event(t, &rpc);
	}
	les_top_close_interval(t, 2.0, 0, NULL);
	les_top_render(t, LES_TOP_JOB, LES_TOP_SORT_OPS, 80, 0, frame, sizeof(frame));
	ck_assert_msg(strstr(frame, "requests/s 1.0 ") != NULL, "%s", frame);
	ck_assert_msg(strstr(frame, "sunrpc: 2 requests, mean backlog 2us, mean rtt 3.0ms") != NULL,
		      "%s", frame);
	/* 10 writes of 4 KiB in 2 s: 5 data ops/s, 0.02 MB/s written, 1 ms. */
	ck_assert_ptr_nonnull(row(frame, "42", line, sizeof(line)));
	ck_assert_msg(strstr(line, "   0.0    5.0    0.00    0.02  1.0ms  1.0ms") != NULL, "%s", line);
	ck_assert_msg(strstr(line, "write") != NULL, "%s", line);
	/* 4 getattrs, one failed: 2 meta ops/s, 0.5 errors/s. */
	ck_assert_ptr_nonnull(row(frame, "43", line, sizeof(line)));
	ck_assert_msg(strstr(line, "   2.0    0.0") != NULL && strstr(line, "  0.5 getattr"), "%s",
		      line);
	/* Sorted by ops: job 42 (10) above 43 (4). */
	ck_assert(strstr(frame, "\n43 ") && strstr(frame, "\n42 ") < strstr(frame, "\n43 "));
	les_top_render(t, LES_TOP_PROCESS, LES_TOP_SORT_ERR, 80, 0, frame, sizeof(frame));
	ck_assert(strstr(frame, "\ndd ") && strstr(frame, "\nls ") < strstr(frame, "\ndd "));
	les_top_render(t, LES_TOP_USER, LES_TOP_SORT_OPS, 80, 0, frame, sizeof(frame));
	ck_assert_ptr_nonnull(row(frame, "alice", line, sizeof(line)));
	/* A new interval starts empty. */
	les_top_close_interval(t, 1.0, 0, NULL);
	les_top_render(t, LES_TOP_JOB, LES_TOP_SORT_OPS, 80, 0, frame, sizeof(frame));
	ck_assert_ptr_null(row(frame, "42", line, sizeof(line)));
	les_top_free(t);
}
END_TEST

/* An interval of extra more jobs than the table holds, one read each, rendered by job. */
static void full_interval(struct les_top *t, int extra, char *frame, size_t len)
{
	struct les_event ev;
	char name[32];

	for (int i = 0; i < LES_TOP_GROUPS + extra; i++) {
		snprintf(name, sizeof(name), "job%d", i);
		ev = access_ev(name, "alice", "dd", "read", 1000, 10, 0);
		les_top_event(t, &ev);
	}
	les_top_close_interval(t, 1.0, 0, NULL);
	les_top_render(t, LES_TOP_JOB, LES_TOP_SORT_OPS, 80, 0, frame, len);
}

/*
 * The layer view: per job and target, requests/s and each layer's mean;
 * 'l' toggles it. 2 requests of dd.0 to OST0 in 2 s: 1.0/s, means of
 * the two.
 */
START_TEST(test_layer_view)
{
	struct les_top *t = les_top_new();
	struct les_top_view v = {0};
	struct les_join_view j = {.job = "dd.0", .target = "lustre-OST0000", .client_nid = "0@lo"};
	struct les_event ev = {.type = "rpc_join", .kind = LES_REC_KIND_MAX, .join = &j};
	char frame[4096], line[256];
	const int64_t a[LES_JOIN_LAYER_MAX] = {
		[LES_JOIN_CLIENT_QUEUED] = 100000, [LES_JOIN_CLIENT_SERVICE] = 9000000,
		[LES_JOIN_CLIENT_LNET] = 400000,
		[LES_JOIN_NETWORK] = 1000000,	   [LES_JOIN_SRV_INCOMING] = 20000,
		[LES_JOIN_SRV_NRS] = 3000000,	   [LES_JOIN_SRV_HANDLE] = 5000000,
		[LES_JOIN_SRV_BULK] = 1500000,	   [LES_JOIN_SRV_IO] = 2500000,
	};

	ck_assert_ptr_nonnull(t);
	ck_assert(les_top_key(&v, 'l'));
	ck_assert(v.layers);
	memcpy(j.ns, a, sizeof(a));
	les_top_join(t, &ev);
	j.ns[LES_JOIN_SRV_NRS] = 1000000;    /* NRS mean: 2 ms */
	j.ns[LES_JOIN_SRV_HANDLE] = 7000000; /* handling mean: 6 ms */
	les_top_join(t, &ev);
	j.job = "cp.1";
	les_top_join(t, &ev);
	les_top_close_interval(t, 2.0, 0, NULL);
	les_top_render_layers(t, 200, 0, frame, sizeof(frame));
	ck_assert_msg(row(frame, "dd.0 lustre-OST0000", line, sizeof(line)), "%s", frame);
	ck_assert_str_eq(line, "dd.0 lustre-OST0000               1.0    100us    400us    1.0ms"
			       "     20us    2.0ms    6.0ms    1.5ms    2.5ms    9.0ms");
	ck_assert_msg(row(frame, "cp.1 lustre-OST0000", line, sizeof(line)), "%s", frame);
	/* Most requests first. */
	ck_assert(strstr(frame, "dd.0 ") < strstr(frame, "cp.1 "));
	ck_assert(les_top_key(&v, 'l'));
	ck_assert(!v.layers);
	les_top_close_interval(t, 1.0, 0, NULL);
	les_top_render_layers(t, 200, 0, frame, sizeof(frame));
	ck_assert_ptr_nonnull(strstr(frame, "no joined request"));
	les_top_free(t);
}
END_TEST

START_TEST(test_filter_keys_and_overflow)
{
	struct les_top *t = les_top_new();
	struct les_top_view v = { 0 };
	static char frame[256 * 1024];
	char line[256];
	struct les_event ev;

	les_top_set_filter(t, "42");
	ev = access_ev("42", "alice", "dd", "read", 1000, 10, 0);
	les_top_event(t, &ev);
	ev = access_ev("43", "bob", "dd", "read", 1000, 10, 0);
	les_top_event(t, &ev);
	les_top_close_interval(t, 1.0, 0, NULL);
	les_top_render(t, LES_TOP_JOB, LES_TOP_SORT_OPS, 80, 0, frame, sizeof(frame));
	ck_assert_ptr_nonnull(row(frame, "42", line, sizeof(line)));
	ck_assert_ptr_null(row(frame, "43", line, sizeof(line)));
	les_top_set_filter(t, "");

	ck_assert(les_top_key(&v, 'p') && v.group == LES_TOP_PROCESS);
	ck_assert(les_top_key(&v, '9') && v.sort == LES_TOP_SORT_P99);
	ck_assert(les_top_key(&v, 'f') && v.ask_filter);
	ck_assert(!les_top_key(&v, 'Z'));
	ck_assert(les_top_key(&v, 'q') && v.quit);

	/* More jobs than the table holds: the rest sum into "(other)". */
	full_interval(t, 10, frame, sizeof(frame));
	ck_assert_ptr_nonnull(row(frame, "(other)", line, sizeof(line)));
	ck_assert_msg(strstr(line, "  10.0 ") != NULL, "%s", line);
	/*
	 * The overflow row is a sum of its interval like the others: one
	 * interval later with the table full again by 3, it shows 3 ops/s
	 * (not 10 + 3), and an interval without overflow has no such row.
	 */
	full_interval(t, 3, frame, sizeof(frame));
	ck_assert_ptr_nonnull(row(frame, "(other)", line, sizeof(line)));
	ck_assert_msg(strstr(line, "   3.0 ") != NULL, "%s", line);
	ev = access_ev("42", "alice", "dd", "read", 1000, 10, 0);
	les_top_event(t, &ev);
	les_top_close_interval(t, 1.0, 0, NULL);
	les_top_render(t, LES_TOP_JOB, LES_TOP_SORT_OPS, 80, 0, frame, sizeof(frame));
	ck_assert_ptr_null(row(frame, "(other)", line, sizeof(line)));
	/* Back to the full frame for the height test below. */
	full_interval(t, 10, frame, sizeof(frame));
	/* A height limit cuts rows, never the header. */
	les_top_render(t, LES_TOP_JOB, LES_TOP_SORT_OPS, 80, 6, frame, sizeof(frame));
	int lines = 0;
	for (const char *p = frame; *p; p++)
		lines += *p == '\n';
	ck_assert_int_eq(lines, 6);
	les_top_free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("top");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_rows_by_job_and_process);
	tcase_add_test(tc, test_filter_keys_and_overflow);
	tcase_add_test(tc, test_layer_view);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
