// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Windowed aggregation: histogram buckets and percentiles, window
 * alignment, grouping (nulls, record types, overflow into "other"), window
 * closing, and the window lines as a JSON parser reads them.
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include "model/ops.h"
#include "sink/aggregate.h"
#include "util/histogram.h"

#define NS	  1000000000ULL
#define T0	  (1700000000ULL * NS) /* an even second */
#define MAX_LINES 64

/* --- the window lines an aggregator writes, parsed ------------------------ */

static json_t *lines[MAX_LINES];
static size_t n_lines;

static int capture(void *ctx, const struct les_event *ev)
{
	json_error_t err;
	json_t *j;

	(void)ctx;
	ck_assert_int_eq(ev->line[ev->line_len - 1], '\n');
	ck_assert_str_eq(ev->type, "window");
	j = json_loadb(ev->line, ev->line_len, 0, &err);
	ck_assert_msg(j, "window line is not JSON (%s): %.*s", err.text, (int)ev->line_len,
		      ev->line);
	ck_assert_uint_lt(n_lines, MAX_LINES);
	lines[n_lines++] = j;
	return 0;
}

static void clear_lines(void)
{
	for (size_t i = 0; i < n_lines; i++)
		json_decref(lines[i]);
	n_lines = 0;
}

static struct les_aggregate *make(uint64_t window_ns, uint32_t group_by, uint32_t max_groups)
{
	struct les_aggregate_config cfg = {
		.window_ns = window_ns,
		.group_by = group_by,
		.max_groups = max_groups,
		.host = "node1",
	};
	struct les_aggregate *a = les_aggregate_new(&cfg, capture, NULL);

	ck_assert_ptr_nonnull(a);
	clear_lines();
	return a;
}

static struct les_event access_ev(uint64_t ts, const char *op, const char *job, uint64_t lat)
{
	struct les_event ev = {
		.kind = LES_REC_ACCESS,
		.type = "access",
		.ts_epoch_ns = ts,
		.host = "node1",
		.fs_type = "fuse",
		.fs = "les-testfs",
		.mount = "/mnt/t",
		.op = op,
		.access_op = (unsigned int)les_op_from_name(op),
		.access_intent = strcmp(op, "read") ? "data_write" : "data_read",
		.latency_ns = lat,
		.uid = 1000,
		.comm = "dd",
		.process = "dd",
		.job_id = job,
	};
	return ev;
}

static void add(struct les_aggregate *a, const struct les_event *ev)
{
	ck_assert_int_eq(les_aggregate_add(a, ev), 0);
}

/* The line whose field key has string value (NULL: JSON null) and record_type rt. */
static json_t *find_line(const char *rt, const char *key, const char *value)
{
	for (size_t i = 0; i < n_lines; i++) {
		json_t *v = json_object_get(lines[i], key);

		if (strcmp(json_string_value(json_object_get(lines[i], "record_type")), rt))
			continue;
		if (!v)
			continue;
		if (value ? json_is_string(v) && !strcmp(json_string_value(v), value)
			  : json_is_null(v))
			return lines[i];
	}
	return NULL;
}

static uint64_t num(json_t *line, const char *key)
{
	json_t *v = json_object_get(line, key);

	ck_assert_msg(json_is_integer(v), "%s is not an integer", key);
	return (uint64_t)json_integer_value(v);
}

/* --- histogram ------------------------------------------------------------ */

START_TEST(test_hist_boundaries)
{
	ck_assert_uint_eq(les_hist_index(0), 0);
	ck_assert_uint_eq(les_hist_index(127), 0);
	ck_assert_uint_eq(les_hist_index(128), 1);
	ck_assert_uint_eq(les_hist_lower(1), 128);
	ck_assert_uint_eq(les_hist_upper(1), 144); /* 128 + 128/8 */
	ck_assert_uint_eq(les_hist_index((1ULL << 36) - 1), LES_HIST_BUCKETS - 2);
	ck_assert_uint_eq(les_hist_index(1ULL << 36), LES_HIST_BUCKETS - 1);
	ck_assert_uint_eq(les_hist_index(UINT64_MAX), LES_HIST_BUCKETS - 1);
	ck_assert_uint_eq(les_hist_upper(LES_HIST_BUCKETS - 1), UINT64_MAX);
	for (unsigned int i = 1; i < LES_HIST_BUCKETS - 1; i++) {
		uint64_t lo = les_hist_lower(i), hi = les_hist_upper(i);

		ck_assert_uint_eq(les_hist_index(lo), i);
		ck_assert_uint_eq(les_hist_index(hi - 1), i);
		ck_assert_uint_eq(les_hist_index(hi), i + 1);
		ck_assert_uint_eq(hi, les_hist_lower(i + 1));
		/* The documented resolution: a bucket is at most 1/8 of its lower bound wide. */
		ck_assert_uint_le((hi - lo) * 8, lo);
	}
}
END_TEST

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

START_TEST(test_hist_percentiles)
{
	static const unsigned int pm[] = {1, 500, 900, 990, 999, 1000};
	static uint64_t v[5000];
	struct les_hist h;
	uint64_t seed = 12345;

	/* Known case: 1..100 us; p50 is 50 us, in bucket [49152, 53248). */
	les_hist_reset(&h);
	for (uint64_t i = 1; i <= 100; i++)
		les_hist_add(&h, i * 1000);
	ck_assert_uint_eq(les_hist_percentile(&h, 500), 53247);
	ck_assert_uint_eq(les_hist_percentile(&h, 1000), 100000); /* clamped to max */
	ck_assert_uint_eq(h.min, 1000);
	ck_assert_uint_eq(h.sum, 5050000);

	/* All values equal: every percentile is exact. */
	les_hist_reset(&h);
	for (int i = 0; i < 10; i++)
		les_hist_add(&h, 777777);
	for (size_t i = 0; i < sizeof(pm) / sizeof(pm[0]); i++)
		ck_assert_uint_eq(les_hist_percentile(&h, pm[i]), 777777);

	/* Random log-spread values: never below the true value, at most 1/8 above. */
	les_hist_reset(&h);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		v[i] = 128 + ((seed >> 20) % (1ULL << (8 + (seed >> 59) % 26)));
		les_hist_add(&h, v[i]);
	}
	qsort(v, sizeof(v) / sizeof(v[0]), sizeof(v[0]), cmp_u64);
	for (size_t i = 0; i < sizeof(pm) / sizeof(pm[0]); i++) {
		size_t rank = (sizeof(v) / sizeof(v[0]) * pm[i] + 999) / 1000;
		uint64_t truth = v[rank - 1], got = les_hist_percentile(&h, pm[i]);

		ck_assert_msg(got >= truth && (got - truth) * 8 <= truth,
			      "p%u: got %llu, true %llu", pm[i], (unsigned long long)got,
			      (unsigned long long)truth);
	}
	les_hist_reset(&h);
	ck_assert_uint_eq(les_hist_percentile(&h, 500), 0);
}
END_TEST

/* --- windows -------------------------------------------------------------- */

START_TEST(test_window_alignment)
{
	ck_assert_uint_eq(les_window_start(T0, 2 * NS), T0);
	ck_assert_uint_eq(les_window_start(T0 + 1, 2 * NS), T0);
	ck_assert_uint_eq(les_window_start(T0 + 2 * NS - 1, 2 * NS), T0);
	ck_assert_uint_eq(les_window_start(T0 + 2 * NS, 2 * NS), T0 + 2 * NS);
	ck_assert_uint_eq(les_window_start(T0 + NS + NS / 2, 2 * NS), T0);
	/* 1-minute windows start on the minute: 1700000000 s is 22:13:20. */
	ck_assert_uint_eq(les_window_start(T0, 60 * NS), T0 - 20 * NS);
}
END_TEST

START_TEST(test_window_lines)
{
	struct les_aggregate *a = make(2 * NS, LES_GROUP_BY_DEFAULT, 100);
	struct les_event ev = access_ev(T0 + NS / 2, "read", "42", 1000);
	json_t *l;

	add(a, &ev);
	ev.latency_ns = 3000;
	ev.err = EIO;
	ev.rpc_count = 1;
	ev.rpc_wait_ns = 2500;
	add(a, &ev);
	ev = access_ev(T0 + NS, "read", "42", 2000);
	ev.bytes = 4096;
	ev.rpc_count = 2;
	ev.rpc_wait_ns = 1500;
	add(a, &ev);
	ck_assert_uint_eq(n_lines, 0);
	/* Not yet: inside the grace after the window's end. */
	ck_assert_int_eq(les_aggregate_tick(a, T0 + 2 * NS), 0);
	ck_assert_uint_eq(n_lines, 0);
	ck_assert_int_eq(les_aggregate_tick(a, T0 + 2 * NS + LES_AGG_GRACE_NS), 0);
	ck_assert_uint_eq(n_lines, 1);
	l = lines[0];
	ck_assert_str_eq(json_string_value(json_object_get(l, "window_start")),
			 "2023-11-14T22:13:20.000000000Z");
	ck_assert_str_eq(json_string_value(json_object_get(l, "window_end")),
			 "2023-11-14T22:13:22.000000000Z");
	ck_assert_str_eq(json_string_value(json_object_get(l, "record_type")), "access");
	ck_assert_str_eq(json_string_value(json_object_get(l, "job_id")), "42");
	ck_assert_str_eq(json_string_value(json_object_get(l, "host")), "node1");
	ck_assert(json_is_null(json_object_get(l, "username")));
	ck_assert_uint_eq(num(l, "uid"), 1000);
	ck_assert_uint_eq(num(l, "count"), 3);
	ck_assert_uint_eq(num(l, "bytes"), 4096);
	ck_assert_uint_eq(json_integer_value(json_object_get(json_object_get(l, "errors"), "io")),
			  1);
	ck_assert_uint_eq(json_object_size(json_object_get(l, "errors")), 1);
	ck_assert_uint_eq(num(l, "min_ns"), 1000);
	ck_assert_uint_eq(num(l, "max_ns"), 3000);
	ck_assert_uint_eq(num(l, "sum_latency_ns"), 6000);
	ck_assert_uint_eq(num(l, "p50_ns"), 2047); /* 2000 is in bucket [1920, 2048) */
	ck_assert_uint_eq(num(l, "p99_ns"), 3000);
	ck_assert_uint_eq(num(l, "rpc_count"), 3);
	ck_assert_uint_eq(num(l, "rpc_wait_ns"), 4000);
	ck_assert_uint_eq(num(l, "cache_served"), 1); /* the first read: no request, no error */
	ck_assert_uint_eq(json_array_size(json_object_get(l, "latency_hist")), 3);
	ck_assert_ptr_null(json_object_get(l, "partial"));
	ck_assert_ptr_null(json_object_get(l, "other"));
	les_aggregate_free(a);
	clear_lines();
}
END_TEST

/* A lock enqueue's nested waits are in its window once: its time holds theirs. */
START_TEST(test_nested_waits_once)
{
	struct les_aggregate *a = make(2 * NS, LES_GROUP_BY_DEFAULT, 100);
	struct les_event ev = access_ev(T0 + NS / 2, "lock_wait", "42", 3000);
	json_t *l;

	ev.kind = LES_REC_RPC;
	ev.type = "rpc";
	ev.access_intent = NULL;
	ev.proto = "ldlm";
	ev.proto_id = LES_PROTO_LDLM;
	ev.rpc_op = LES_RPC_OP_LOCK_ENQUEUE;
	add(a, &ev);
	ev.rpc_op = LES_RPC_OP_LOCK_COMPLETION; /* the grant's wait, inside it */
	ev.latency_ns = 2000;
	ev.nested_wait = true;
	add(a, &ev);
	ck_assert_int_eq(les_aggregate_flush(a, T0 + 10 * NS), 0);
	ck_assert_uint_eq(n_lines, 1);
	l = lines[0];
	ck_assert_str_eq(json_string_value(json_object_get(l, "op")), "lock_wait");
	ck_assert_uint_eq(num(l, "count"), 1);
	ck_assert_uint_eq(num(l, "sum_latency_ns"), 3000);
	les_aggregate_free(a);
	clear_lines();
}
END_TEST

START_TEST(test_window_closed_by_next_record_and_flush)
{
	struct les_aggregate *a = make(2 * NS, 1u << LES_GF_OP, 100);
	struct les_event ev = access_ev(T0 + NS, "write", NULL, 10);
	struct les_aggregate_stats st;

	add(a, &ev);
	ev.ts_epoch_ns = T0 + 3 * NS; /* next window: the first one closes */
	add(a, &ev);
	ck_assert_uint_eq(n_lines, 1);
	ev.ts_epoch_ns = T0 + NS; /* late: counts in the open window */
	add(a, &ev);
	ck_assert_int_eq(les_aggregate_flush(a, T0 + 3 * NS + NS / 2), 0);
	ck_assert_uint_eq(n_lines, 2);
	ck_assert_uint_eq(num(lines[1], "count"), 2);
	ck_assert(json_is_true(json_object_get(lines[1], "partial")));
	ck_assert_str_eq(json_string_value(json_object_get(lines[1], "window_start")),
			 "2023-11-14T22:13:22.000000000Z");
	/* Only the grouped field is written. */
	ck_assert_ptr_null(json_object_get(lines[1], "job_id"));
	ck_assert_str_eq(json_string_value(json_object_get(lines[1], "op")), "write");
	/* A record of a closed window never reopens it. */
	ev.ts_epoch_ns = T0;
	add(a, &ev);
	ck_assert_int_eq(les_aggregate_flush(a, T0 + 10 * NS), 0);
	ck_assert_uint_eq(n_lines, 3);
	ck_assert_str_eq(json_string_value(json_object_get(lines[2], "window_start")),
			 "2023-11-14T22:13:24.000000000Z");
	ck_assert_ptr_null(json_object_get(lines[2], "partial"));
	les_aggregate_get_stats(a, &st);
	ck_assert_uint_eq(st.records, 4);
	ck_assert_uint_eq(st.late_records, 2);
	ck_assert_uint_eq(st.windows, 3);
	ck_assert_uint_eq(st.groups, 3);
	les_aggregate_free(a);
	clear_lines();
}
END_TEST

/* --- groups ---------------------------------------------------------------- */

START_TEST(test_group_keys)
{
	uint32_t mask = (1u << LES_GF_JOB_ID) | (1u << LES_GF_OP);
	struct les_aggregate *a = make(2 * NS, mask, 100);
	struct les_event ev = access_ev(T0, "write", NULL, 10);
	struct les_event rpc = ev, rpc_ev = ev;

	add(a, &ev); /* job null */
	ev.job_id = "";
	add(a, &ev); /* job "": a different group */
	add(a, &ev);
	rpc.kind = LES_REC_RPC;
	rpc.type = "rpc";
	rpc.access_intent = NULL;
	rpc.job_id = "";
	add(a, &rpc); /* same fields, other record type */
	rpc_ev.kind = LES_REC_RPC_EVENT;
	rpc_ev.type = "rpc_event";
	rpc_ev.job_id = "";
	rpc_ev.event = "resend";
	rpc_ev.event_id = LES_EV_RESEND;
	rpc_ev.op = "resend";
	add(a, &rpc_ev);
	rpc_ev.event = rpc_ev.op = "expire";
	rpc_ev.event_id = LES_EV_EXPIRE;
	add(a, &rpc_ev); /* RPC events group without op: same group */
	les_aggregate_flush(a, T0 + 5 * NS);
	ck_assert_uint_eq(n_lines, 4);
	ck_assert_uint_eq(num(find_line("access", "job_id", NULL), "count"), 1);
	ck_assert_uint_eq(num(find_line("access", "job_id", ""), "count"), 2);
	ck_assert_uint_eq(num(find_line("rpc", "job_id", ""), "count"), 1);
	ck_assert_ptr_null(json_object_get(find_line("rpc", "job_id", ""), "cache_served"));
	ck_assert_ptr_nonnull(find_line("rpc_event", "op", NULL));
	ck_assert_uint_eq(num(find_line("rpc_event", "job_id", ""), "count"), 2);
	ck_assert_uint_eq(
		json_integer_value(json_object_get(
			json_object_get(find_line("rpc_event", "job_id", ""), "events"), "resend")),
		1);
	les_aggregate_free(a);
	clear_lines();
}
END_TEST

START_TEST(test_overflow_into_other)
{
	static const char *const jobs[] = {"1", "2", "3", "4", "5", "1", "5"};
	struct les_aggregate *a = make(2 * NS, 1u << LES_GF_JOB_ID, 3);
	struct les_aggregate_stats st;
	uint64_t total = 0;
	json_t *other;

	for (int w = 0; w < 2; w++) { /* the table is empty again in the next window */
		for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
			struct les_event ev =
				access_ev(T0 + (uint64_t)w * 2 * NS, "write", jobs[i], 10);

			ev.bytes = 100;
			add(a, &ev);
		}
		les_aggregate_tick(a, T0 + (uint64_t)(w + 1) * 2 * NS + NS);
		ck_assert_uint_eq(n_lines, 4);
		other = find_line("access", "job_id", NULL);
		ck_assert_ptr_nonnull(other);
		ck_assert(json_is_true(json_object_get(other, "other")));
		ck_assert_uint_eq(num(other, "count"), 3); /* jobs 4, 5, 5 */
		ck_assert_uint_eq(num(find_line("access", "job_id", "1"), "count"), 2);
		total = 0;
		for (size_t i = 0; i < n_lines; i++)
			total += num(lines[i], "bytes");
		ck_assert_uint_eq(total, 700);
		clear_lines();
	}
	les_aggregate_get_stats(a, &st);
	ck_assert_uint_eq(st.overflow_records, 6);
	ck_assert_uint_eq(st.max_groups_seen, 3);
	les_aggregate_free(a);
}
END_TEST

/* --- joined requests: per window, by job, target and client NID ---------- */

static struct les_join_view join_view(const char *job, const char *target, const char *nid,
				      int64_t base)
{
	struct les_join_view v = {.job = job, .target = target, .client_nid = nid};

	for (int l = 0; l < LES_JOIN_LAYER_MAX; l++)
		v.ns[l] = base * (l + 1);
	return v;
}

static void add_join(struct les_aggregate *a, uint64_t ts, const struct les_join_view *v)
{
	struct les_event ev = {
		.type = "rpc_join", .kind = LES_REC_KIND_MAX, .ts_epoch_ns = ts, .join = v};

	ck_assert_int_eq(les_aggregate_add_join(a, &ev), 0);
}

static int64_t layer(json_t *line, const char *name)
{
	json_t *v = json_object_get(json_object_get(line, "layers"), name);

	ck_assert_msg(json_is_integer(v), "layers.%s is not an integer", name);
	return json_integer_value(v);
}

/* The line of the join group whose three keys are these (NULL: null). */
static json_t *find_join(const char *job, const char *target, const char *nid)
{
	const char *want[3] = {job, target, nid};
	const char *key[3] = {"lustre_jobid", "target", "client_nid"};

	for (size_t i = 0; i < n_lines; i++) {
		int ok = !strcmp(json_string_value(json_object_get(lines[i], "record_type")),
				 "rpc_join");

		for (int k = 0; k < 3 && ok; k++) {
			json_t *v = json_object_get(lines[i], key[k]);

			ok = want[k] ? json_is_string(v) && !strcmp(json_string_value(v), want[k])
				     : json_is_null(v);
		}
		if (ok)
			return lines[i];
	}
	return NULL;
}

START_TEST(test_join_groups)
{
	struct les_aggregate *a = make(2 * NS, LES_GROUP_BY_DEFAULT, 16);
	struct les_join_view v1 = join_view("dd.0", "lustre-OST0000", "0@lo", 100);
	struct les_join_view v2 = join_view("dd.0", "lustre-OST0000", "0@lo", 1000);
	struct les_join_view v3 = join_view(NULL, "lustre-MDT0000", "0@lo", 7);
	struct les_join_view v4 = join_view("cp.1", "lustre-OST0000", "0@lo", 5);
	struct les_aggregate_stats st;
	json_t *g;

	add_join(a, T0 + 1, &v1);
	add_join(a, T0 + 2, &v2);
	add_join(a, T0 + 3, &v3);
	add_join(a, T0 + 2 * NS + 1, &v4); /* the next window: closes the first */
	ck_assert_uint_eq(n_lines, 2);
	g = find_join("dd.0", "lustre-OST0000", "0@lo");
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(num(g, "count"), 2);
	for (int l = 0; l < LES_JOIN_LAYER_MAX; l++)
		ck_assert_int_eq(layer(g, les_join_layer_name(l)), 1100 * (l + 1));
	ck_assert_uint_eq(num(g, "sum_latency_ns"), 1100 * (LES_JOIN_CLIENT_SERVICE + 1));
	g = find_join(NULL, "lustre-MDT0000", "0@lo");
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(num(g, "count"), 1);
	ck_assert_int_eq(layer(g, "server_nrs_ns"), 7 * (LES_JOIN_SRV_NRS + 1));
	clear_lines();
	les_aggregate_flush(a, T0 + 4 * NS);
	ck_assert_uint_eq(n_lines, 1);
	ck_assert_ptr_nonnull(find_join("cp.1", "lustre-OST0000", "0@lo"));
	les_aggregate_get_stats(a, &st);
	ck_assert_uint_eq(st.joined, 4);
	ck_assert_uint_eq(st.records, 0);
	clear_lines();
	les_aggregate_free(a);
}
END_TEST

START_TEST(test_group_by_parse)
{
	char err[256];
	uint32_t mask = 0;

	ck_assert_int_eq(les_group_by_parse("job_id,op", &mask, err, sizeof(err)), 0);
	ck_assert_uint_eq(mask, (1u << LES_GF_JOB_ID) | (1u << LES_GF_OP));
	ck_assert_int_eq(les_group_by_parse("fs_type,fs,mount,op,access_intent,uid,username,"
					    "process,actor_type,job_id",
					    &mask, err, sizeof(err)),
			 0);
	ck_assert_uint_eq(mask, LES_GROUP_BY_DEFAULT);
	ck_assert_int_eq(les_group_by_parse("host,comm,proto,event,type", &mask, err, sizeof(err)),
			 0);
	ck_assert_int_eq(les_group_by_parse("job_id,pid", &mask, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "'pid'"));
	ck_assert_int_eq(les_group_by_parse("op,", &mask, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(les_group_by_parse("", &mask, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(les_group_by_parse("jobid", &mask, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(test_many_groups_no_growth)
{
	struct les_aggregate *a = make(2 * NS, LES_GROUP_BY_DEFAULT, 1000);
	char job[16];
	struct les_aggregate_stats st;

	/* 1000 distinct keys fit exactly; the table never grows or fails. */
	for (int i = 0; i < 1000; i++) {
		struct les_event ev = access_ev(T0, i % 2 ? "read" : "write", job, 10);

		snprintf(job, sizeof(job), "%d", i);
		add(a, &ev);
		add(a, &ev);
	}
	les_aggregate_get_stats(a, &st);
	ck_assert_uint_eq(st.overflow_records, 0);
	ck_assert_uint_eq(st.max_groups_seen, 1000);
	les_aggregate_free(a);
	clear_lines();
}
END_TEST

static Suite *aggregate_suite(void)
{
	Suite *s = suite_create("aggregate");
	TCase *tc;

	tc = tcase_create("histogram");
	tcase_add_test(tc, test_hist_boundaries);
	tcase_add_test(tc, test_hist_percentiles);
	suite_add_tcase(s, tc);

	tc = tcase_create("windows");
	tcase_add_test(tc, test_window_alignment);
	tcase_add_test(tc, test_window_lines);
	tcase_add_test(tc, test_nested_waits_once);
	tcase_add_test(tc, test_window_closed_by_next_record_and_flush);
	suite_add_tcase(s, tc);

	tc = tcase_create("groups");
	tcase_add_test(tc, test_group_keys);
	tcase_add_test(tc, test_overflow_into_other);
	tcase_add_test(tc, test_group_by_parse);
	tcase_add_test(tc, test_many_groups_no_growth);
	tcase_add_test(tc, test_join_groups);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(aggregate_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
