// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * OTLP metrics without a transport (sink/otlp_metric.c): a window's group
 * as delta sums and an explicit-bucket histogram, the bytes of the JSON
 * read back by jansson; the aggregator's buckets against the Prometheus
 * families' bounds; --otlp-signals.
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include "model/kinds.h"
#include "sink/otlp.h"

#define T0 1796538140000000000ULL /* a multiple of 10 s */
#define W  (10ULL * 1000000000ULL)

static char buf[1 << 20];

static struct les_event read_ev(uint64_t latency, int err)
{
	return (struct les_event){
		.kind = LES_REC_ACCESS,
		.type = "access",
		.ts_epoch_ns = T0 + 1000,
		.host = "node1",
		.fs_type = "lustre",
		.fs = "lustre",
		.mount = "/mnt/lustre",
		.op = "read",
		.access_op = LES_OP_READ,
		.latency_ns = latency,
		.bytes = 4096,
		.err = err,
		.uid = 1000,
		.username = "alice",
		.comm = "dd",
		.process = "dd",
		.job_id = "101",
	};
}

struct captured {
	struct jw w;
	int points;
	unsigned int groups;
};

/* les_window_fn: the groups into one batch, as the OTLP sink does. */
static int capture(void *ctx, const struct les_window *win, const struct les_window_group *g)
{
	struct captured *c = ctx;
	unsigned int points;
	int n = les_otlp_metrics_add(&c->w, win, g, &points);

	ck_assert_int_eq(n, (int)points);
	c->points += n;
	c->groups++;
	return 0;
}

static json_t *find_metric(json_t *metrics, const char *name)
{
	size_t i;
	json_t *m;

	json_array_foreach(metrics, i, m)
		if (!strcmp(json_string_value(json_object_get(m, "name")), name))
			return m;
	return NULL;
}

static const char *attr(json_t *point, const char *key)
{
	size_t i;
	json_t *a;

	json_array_foreach(json_object_get(point, "attributes"), i, a)
		if (!strcmp(json_string_value(json_object_get(a, "key")), key)) {
			json_t *v = json_object_get(a, "value");
			json_t *s = json_object_get(v, "stringValue");

			if (!s)
				s = json_object_get(v, "intValue");
			return json_string_value(s);
		}
	return NULL;
}

START_TEST(test_window_points)
{
	struct les_aggregate_config cfg = {
		.window_ns = W,
		.group_by = LES_GROUP_BY_DEFAULT,
		.max_groups = 100,
		.host = "node1",
	};
	/* 10 us (on the first bound: in it), 10.001 us, 3 ms, 11 s (+Inf), one failed with EIO. */
	uint64_t lat[] = {10000, 10001, 3000000, 11000000000ULL};
	struct captured c = {0};
	struct les_aggregate *a;
	json_error_t jerr;
	json_t *doc, *metrics, *m, *p, *b;

	jw_init(&c.w, buf, sizeof(buf) - LES_OTLP_BATCH_END_LEN);
	les_otlp_metrics_begin(&c.w, "node1");
	a = les_aggregate_new_groups(&cfg, capture, &c);
	ck_assert_ptr_nonnull(a);
	for (unsigned int i = 0; i < 4; i++) {
		struct les_event ev = read_ev(lat[i], i == 2 ? 5 : 0);

		les_aggregate_add(a, &ev);
	}
	les_aggregate_flush(a, T0 + W);
	les_aggregate_free(a);
	c.w.cap = sizeof(buf);
	les_otlp_batch_end(&c.w);
	ck_assert(!c.w.overflow);
	ck_assert_uint_eq(c.groups, 1);
	/* operations, bytes, errors (io), duration */
	ck_assert_int_eq(c.points, 4);
	buf[c.w.len] = '\0';
	doc = json_loads(buf, 0, &jerr);
	ck_assert_msg(doc, "not JSON: %s", jerr.text);
	m = json_array_get(json_object_get(doc, "resourceMetrics"), 0);
	m = json_array_get(json_object_get(m, "scopeMetrics"), 0);
	metrics = json_object_get(m, "metrics");
	ck_assert_uint_eq(json_array_size(metrics), 4);

	m = find_metric(metrics, "lustre_ebpf_stream.access.operations");
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(m, "sum"),
							    "aggregationTemporality")),
			 1);
	ck_assert(json_is_true(json_object_get(json_object_get(m, "sum"), "isMonotonic")));
	p = json_array_get(json_object_get(json_object_get(m, "sum"), "dataPoints"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(p, "asInt")), "4");
	ck_assert_str_eq(json_string_value(json_object_get(p, "startTimeUnixNano")),
			 "1796538140000000000");
	ck_assert_str_eq(json_string_value(json_object_get(p, "timeUnixNano")),
			 "1796538150000000000");
	ck_assert_str_eq(attr(p, "lustre_ebpf_stream.op"), "read");
	ck_assert_str_eq(attr(p, "user.id"), "1000");
	ck_assert_str_eq(attr(p, "user.name"), "alice");
	ck_assert_str_eq(attr(p, "lustre_ebpf_stream.job_id"), "101");
	ck_assert_ptr_null(attr(p, "lustre_ebpf_stream.access_intent")); /* null: left out */

	m = find_metric(metrics, "lustre_ebpf_stream.access.bytes");
	p = json_array_get(json_object_get(json_object_get(m, "sum"), "dataPoints"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(p, "asInt")), "16384");
	ck_assert_str_eq(json_string_value(json_object_get(m, "unit")), "By");

	m = find_metric(metrics, "lustre_ebpf_stream.access.errors");
	p = json_array_get(json_object_get(json_object_get(m, "sum"), "dataPoints"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(p, "asInt")), "1");
	ck_assert_str_eq(attr(p, "error.type"), "io");

	m = find_metric(metrics, "lustre_ebpf_stream.access.duration");
	ck_assert_str_eq(json_string_value(json_object_get(m, "unit")), "s");
	p = json_array_get(json_object_get(json_object_get(m, "histogram"), "dataPoints"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(p, "count")), "4");
	/* 11.003020001 s exactly: the decimal of the nanoseconds. */
	ck_assert(json_real_value(json_object_get(p, "sum")) == 11.003020001);
	ck_assert(json_real_value(json_object_get(p, "min")) == 0.00001);
	b = json_object_get(p, "explicitBounds");
	ck_assert_uint_eq(json_array_size(b), LES_FAMILY_BUCKETS);
	for (unsigned int i = 0; i < LES_FAMILY_BUCKETS; i++)
		ck_assert(json_real_value(json_array_get(b, i)) ==
			  (double)les_family_bucket_ns[i] / 1e9);
	b = json_object_get(p, "bucketCounts");
	ck_assert_uint_eq(json_array_size(b), LES_FAMILY_BUCKETS + 1);
	/* le 10us: 1 (10 us itself); le 50us: 1 (10.001 us); le 10ms: 1; +Inf: 1. */
	for (unsigned int i = 0; i <= LES_FAMILY_BUCKETS; i++)
		ck_assert_str_eq(json_string_value(json_array_get(b, i)),
				 i == 0 || i == 1 || i == 5 || i == LES_FAMILY_BUCKETS ? "1" : "0");
	json_decref(doc);
}
END_TEST

/* A group that does not fit: w left as it was, the points told. */
START_TEST(test_overflow)
{
	struct les_window win = {
		.start_ns = T0,
		.end_ns = T0 + W,
		.group_by = LES_GROUP_BY_DEFAULT,
	};
	uint64_t errors[LES_ERRC_MAX] = {0}, events[LES_EV_MAX] = {0};
	uint64_t le[LES_FAMILY_BUCKETS + 1] = {0};
	struct les_hist h = {0};
	struct les_window_group g = {.kind = LES_REC_ACCESS, .count = 1, .errors = errors,
				     .events = events, .latency = &h, .le_buckets = le};
	unsigned int points;
	struct jw w;

	jw_init(&w, buf, 100);
	ck_assert_int_eq(les_otlp_metrics_add(&w, &win, &g, &points), -ENOSPC);
	ck_assert_uint_eq(points, 3);
	ck_assert_uint_eq(w.len, 0);
}
END_TEST

START_TEST(test_signals)
{
	bool t, m;

	ck_assert_int_eq(les_otlp_signals_parse("traces", &t, &m), 0);
	ck_assert(t && !m);
	ck_assert_int_eq(les_otlp_signals_parse("metrics", &t, &m), 0);
	ck_assert(!t && m);
	ck_assert_int_eq(les_otlp_signals_parse("metrics,traces", &t, &m), 0);
	ck_assert(t && m);
	ck_assert_int_eq(les_otlp_signals_parse("logs", &t, &m), -EINVAL);
	ck_assert_int_eq(les_otlp_signals_parse("traces,", &t, &m), -EINVAL);
	ck_assert_int_eq(les_otlp_signals_parse("", &t, &m), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("otlp_metric");
	TCase *tc = tcase_create("otlp_metric");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_window_points);
	tcase_add_test(tc, test_overflow);
	tcase_add_test(tc, test_signals);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
