// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * OTLP traces without a transport (sink/otlp_trace.c): a Lustre op's tree
 * of waits and requests, the sampling rule, the bounded table of records
 * waiting for their op, and the JSON a batch holds, read back by jansson.
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sink/otlp.h"

#define SALT 0x18ee95ebca3d0c15ULL
#define T0   1796538144000000000ULL

static char buf[1 << 20];

static struct les_event access_ev(uint64_t op_id, uint64_t latency, int err)
{
	return (struct les_event){
		.kind = LES_REC_ACCESS,
		.type = "access",
		.ts_epoch_ns = T0 + latency,
		.host = "node1",
		.fs_type = "lustre",
		.fs = "lustre",
		.mount = "/mnt/lustre",
		.op = "read",
		.access_intent = "data_read",
		.op_id = op_id,
		.latency_ns = latency,
		.bytes = 4096,
		.err = err,
		.pid = 42,
		.tid = 43,
		.uid = 1000,
		.comm = "dd",
		.username = "alice",
		.job_id = "101",
	};
}

/* An rpc record ending at end (ns after T0), lasting lat. */
static struct les_event rpc_ev(uint64_t op_id, const char *proto, const char *op, uint64_t end,
			       uint64_t lat)
{
	return (struct les_event){
		.kind = LES_REC_RPC,
		.type = "rpc",
		.ts_epoch_ns = T0 + end,
		.op = op,
		.proto = proto,
		.parent_op_id = op_id,
		.latency_ns = lat,
		.pid = 42,
		.tid = 43,
	};
}

/* The batch of the traces written into w, closed and parsed. */
static json_t *close_batch(struct jw *w)
{
	json_error_t jerr;
	json_t *doc;

	w->cap = sizeof(buf);
	les_otlp_batch_end(w);
	ck_assert(!w->overflow);
	doc = json_loadb(buf, w->len, 0, &jerr);
	ck_assert_msg(doc, "batch is not JSON: %s", jerr.text);
	return doc;
}

static json_t *spans_of(json_t *doc)
{
	return json_object_get(
		json_array_get(
			json_object_get(json_array_get(json_object_get(doc, "resourceSpans"), 0),
					"scopeSpans"),
			0),
		"spans");
}

static json_t *span_named(json_t *spans, const char *name)
{
	size_t i;
	json_t *s;

	json_array_foreach(spans, i, s) if (!strcmp(json_string_value(json_object_get(s, "name")),
						    name)) return s;
	ck_abort_msg("no span %s", name);
	return NULL;
}

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static char *id16(unsigned int role, uint64_t id, char out[17])
{
	snprintf(out, 17, "%016llx", (unsigned long long)les_otlp_span_id(role, id));
	return out;
}

/*
 * ldlm_cli_enqueue's shape: a lock enqueue wait holding its request's
 * queue_wait and the grant wait, the request itself, and a resend event
 * of the request, as the records say them (op "request" and "lock_wait",
 * the rpc_op and opcode telling them apart). Each span's parent is the
 * wait that held it; a request is named by its opcode, a lock wait by
 * its rpc_op.
 */
START_TEST(test_lustre_tree)
{
	struct les_otlp_config cfg = {.sample = 1000000};
	struct les_otlp_traces *t = les_otlp_traces_new(&cfg, SALT);
	struct les_event enq = rpc_ev(0x5000, "ldlm", "lock_wait", 9000, 8000);
	struct les_event qw = rpc_ev(0x5000, "ptlrpc", "queue_wait", 5000, 3000);
	struct les_event req = rpc_ev(0x5000, "ptlrpc", "request", 4900, 2800);
	struct les_event cp = rpc_ev(0x5000, "ldlm", "lock_wait", 8900, 3500);
	struct les_event ev = {.kind = LES_REC_RPC_EVENT,
			       .type = "rpc_event",
			       .event = "resend",
			       .proto = "ptlrpc",
			       .ts_epoch_ns = T0 + 4000,
			       .parent_op_id = 0x5000,
			       .req_id = 0x777};
	struct les_event op = access_ev(0x5000, 10000, 0);
	unsigned int spans, over;
	char id[17], tid[33];
	struct jw w;
	json_t *doc, *all, *s;
	char *dump;

	enq.rpc_op = LES_RPC_OP_LOCK_ENQUEUE, cp.rpc_op = LES_RPC_OP_LOCK_COMPLETION;
	qw.rpc_op = LES_RPC_OP_QUEUE_WAIT, req.rpc_op = LES_RPC_OP_REQUEST;
	req.opcode = 101, req.has_opcode = true; /* LDLM_ENQUEUE */
	enq.wait_id = 0x10;
	qw.wait_id = 0x11, qw.parent_wait_id = 0x10, qw.req_id = 0x777;
	req.req_id = 0x777, req.xid = 99, req.has_xid = true, req.target = "lustre-MDT0000";
	req.target_len = strlen(req.target), req.nid = "0@lo";
	cp.wait_id = 0x12, cp.parent_wait_id = 0x10;
	jw_init(&w, buf, sizeof(buf) - LES_OTLP_BATCH_END_LEN);
	les_otlp_batch_begin(&w, "node1");
	/* The waits end before the op, so their records come first. */
	ck_assert_int_eq(les_otlp_traces_add(t, &req, &w, &spans, &over), 0);
	ck_assert_int_eq(les_otlp_traces_add(t, &ev, &w, &spans, &over), 0);
	ck_assert_int_eq(les_otlp_traces_add(t, &qw, &w, &spans, &over), 0);
	ck_assert_int_eq(les_otlp_traces_add(t, &cp, &w, &spans, &over), 0);
	ck_assert_int_eq(les_otlp_traces_add(t, &enq, &w, &spans, &over), 0);
	/* Sampled 1 in 10^6, but resent: kept. */
	ck_assert_int_eq(les_otlp_traces_add(t, &op, &w, &spans, &over), 5);
	ck_assert_uint_eq(spans, 5);
	doc = close_batch(&w);
	all = spans_of(doc);
	ck_assert_uint_eq(json_array_size(all), 5);

	les_otlp_trace_id(SALT, 0x5000, tid);
	ck_assert_str_eq(tid, "18ee95ebca3d0c150000000000005000");
	s = span_named(all, "read");
	ck_assert_str_eq(str(s, "traceId"), tid);
	ck_assert_str_eq(str(s, "spanId"), id16(LES_OTLP_ROLE_OP, 0x5000, id));
	ck_assert_ptr_null(json_object_get(s, "parentSpanId"));
	ck_assert_str_eq(str(s, "startTimeUnixNano"), "1796538144000000000");
	ck_assert_str_eq(str(s, "endTimeUnixNano"), "1796538144000010000");
	s = span_named(all, "ldlm.lock_enqueue");
	ck_assert_str_eq(str(s, "spanId"), id16(LES_OTLP_ROLE_WAIT, 0x10, id));
	ck_assert_str_eq(str(s, "parentSpanId"), id16(LES_OTLP_ROLE_OP, 0x5000, id));
	s = span_named(all, "ptlrpc.queue_wait");
	ck_assert_str_eq(str(s, "parentSpanId"), id16(LES_OTLP_ROLE_WAIT, 0x10, id));
	s = span_named(all, "ldlm.lock_completion");
	ck_assert_str_eq(str(s, "parentSpanId"), id16(LES_OTLP_ROLE_WAIT, 0x10, id));
	s = span_named(all, "ptlrpc.ldlm_enqueue");
	ck_assert_str_eq(str(s, "spanId"), id16(LES_OTLP_ROLE_REQUEST, 0x777, id));
	ck_assert_str_eq(str(s, "parentSpanId"), id16(LES_OTLP_ROLE_WAIT, 0x11, id));
	ck_assert_int_eq(json_integer_value(json_object_get(s, "kind")), 3);
	ck_assert_str_eq(str(s, "startTimeUnixNano"), "1796538144000002100");
	ck_assert_str_eq(str(json_array_get(json_object_get(s, "events"), 0), "name"), "resend");
	dump = json_dumps(s, 0);
	ck_assert(strstr(dump, "\"network.peer.address\""));
	/* The record's op stays an attribute. */
	ck_assert(strstr(dump, "{\"key\": \"lustre_ebpf_stream.rpc_op\", \"value\": {\"stringValue\": \"request\"}}"));
	free(dump);
	json_decref(doc);
	les_otlp_traces_free(t);
}
END_TEST

/* 1 in N by the op id mixed (op ids end in the CPU); failed ops and --min-latency: all. */
START_TEST(test_sampling)
{
	struct les_otlp_config cfg = {.sample = 10};
	unsigned int kept = 0, n = 100000;

	for (uint64_t seq = 1; seq <= n; seq++)
		kept += les_otlp_keep(&cfg, (seq << 12) | (seq & 1), false);
	ck_assert_msg(kept > n / 10 * 9 / 10 && kept < n / 10 * 11 / 10, "kept %u of %u", kept, n);
	ck_assert(les_otlp_keep(&cfg, 12345 << 12, true));
	cfg.min_latency = true;
	for (uint64_t seq = 1; seq <= 1000; seq++)
		ck_assert(les_otlp_keep(&cfg, seq << 12, false));
	cfg = (struct les_otlp_config){.sample = 1};
	ck_assert(les_otlp_keep(&cfg, 77 << 12, false));
}
END_TEST

/* A record whose op never comes is counted once: when it expires, or is pushed out. */
START_TEST(test_unlinked)
{
	struct les_otlp_config cfg = {.sample = 1};
	struct les_otlp_traces *t = les_otlp_traces_new(&cfg, SALT);
	struct les_otlp_counters c = {0};
	unsigned int spans, over;
	struct jw w;

	jw_init(&w, buf, sizeof(buf));
	for (uint64_t i = 1; i <= LES_OTLP_PENDING_MAX + 5; i++) {
		struct les_event r = rpc_ev(i << 12, "fuse", "read", i, 1);

		les_otlp_traces_add(t, &r, &w, &spans, &over);
	}
	les_otlp_traces_counters(t, &c);
	ck_assert_uint_eq(c.rpc_unlinked, 5);
	les_otlp_traces_expire(t, T0 + LES_OTLP_PENDING_TTL_NS);
	les_otlp_traces_counters(t, &c);
	ck_assert_uint_eq(c.rpc_unlinked, 5);
	les_otlp_traces_expire(t, UINT64_MAX);
	les_otlp_traces_counters(t, &c);
	ck_assert_uint_eq(c.rpc_unlinked, LES_OTLP_PENDING_MAX + 5);
	les_otlp_traces_free(t);
}
END_TEST

/*
 * A replayed capture (records_clock): an rpc record waits for its op by the
 * records' time, however old they are; live, the wall clock expires it. The
 * tick's expiry runs before the op's record (no batch is open, nothing sent).
 */
static uint64_t unlinked_after_tick(bool records_clock)
{
	struct les_otlp_config cfg = {
		.url = "http://127.0.0.1:9", .sample = 1, .queue_bytes = 1 << 20,
		.records_clock = records_clock};
	uint64_t day = 86400ULL * 1000000000ULL;
	struct les_event r = rpc_ev(0x7000, "fuse", "read", 4000, 1000);
	struct les_event op = access_ev(0x7000, 10000, 0);
	struct les_otlp_counters c;
	struct les_otlp *o;
	char err[128];

	r.ts_epoch_ns -= 30 * day, r.req_id = 5;
	op.ts_epoch_ns -= 30 * day;
	ck_assert_int_eq(les_otlp_open(&o, &cfg, err, sizeof(err)), 0);
	les_otlp_event(o, &r);
	les_otlp_tick(o, 10ULL * 1000000000ULL);
	les_otlp_event(o, &op);
	les_otlp_counters(o, &c);
	ck_assert_uint_eq(c.spans, 2 - c.rpc_unlinked);
	les_otlp_close(o);
	return c.rpc_unlinked;
}

START_TEST(test_records_clock)
{
	ck_assert_uint_eq(unlinked_after_tick(true), 0);
	ck_assert_uint_eq(unlinked_after_tick(false), 1);
}
END_TEST

/* Past LES_OTLP_CHILDREN_MAX children are counted, not sent; a full buffer is left as it was. */
START_TEST(test_caps)
{
	struct les_otlp_config cfg = {.sample = 1};
	struct les_otlp_traces *t = les_otlp_traces_new(&cfg, SALT);
	struct les_otlp_counters c = {0};
	struct les_event op = access_ev(0x9000, 50000, 0);
	unsigned int spans, over;
	char small[1024];
	struct jw w;
	size_t len;

	jw_init(&w, buf, sizeof(buf));
	for (uint64_t i = 1; i <= LES_OTLP_CHILDREN_MAX + 6; i++) {
		struct les_event r = rpc_ev(0x9000, "fuse", "read", i, 1);

		r.req_id = i;
		les_otlp_traces_add(t, &r, &w, &spans, &over);
	}
	ck_assert_int_eq(les_otlp_traces_add(t, &op, &w, &spans, &over), LES_OTLP_CHILDREN_MAX + 1);
	ck_assert_uint_eq(spans, LES_OTLP_CHILDREN_MAX + 7);
	ck_assert_uint_eq(over, 6);
	les_otlp_traces_counters(t, &c);
	ck_assert_uint_eq(c.dropped_too_big, 6);

	op.op_id = 0xa000;
	jw_init(&w, small, sizeof(small));
	les_otlp_batch_begin(&w, "node1");
	ck_assert(!w.overflow);
	len = w.len;
	ck_assert_int_eq(les_otlp_traces_add(t, &op, &w, &spans, &over), -ENOSPC);
	ck_assert_uint_eq(spans, 1);
	ck_assert_uint_eq(w.len, len);
	ck_assert(!w.overflow);
	les_otlp_traces_free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("otlp_trace");
	TCase *tc = tcase_create("otlp_trace");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_lustre_tree);
	tcase_add_test(tc, test_sampling);
	tcase_add_test(tc, test_unlinked);
	tcase_add_test(tc, test_caps);
	tcase_add_test(tc, test_records_clock);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
