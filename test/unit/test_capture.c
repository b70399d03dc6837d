// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The capture reader against the consumer: a record goes through the
 * consumer, and the event its line reads back as carries the ids the
 * consumer's own event carried (request, waits, xid, opcode, target, nid),
 * with the RPC op and whether the wait is nested.
 */
#include <arpa/inet.h>
#include <check.h>
#include <string.h>
#include "decode/capture.h"
#include "lustre_bench.h"

#define KDEV LES_TEST_LUSTRE_DEV

struct bench {
	struct les_consumer_config opts;
	struct les_observed observed;
	struct les_sink_file out;
	struct les_consumer consumer;
	struct les_event live; /* the consumer's event, its strings copied below */
	char target[64], nid[80], line[8192];
};

static int keep(void *ctx, const struct les_event *ev)
{
	struct bench *b = ctx;

	b->live = *ev;
	snprintf(b->target, sizeof(b->target), "%.*s", (int)ev->target_len,
		 ev->target ? ev->target : "");
	snprintf(b->nid, sizeof(b->nid), "%s", ev->nid ? ev->nid : "");
	snprintf(b->line, sizeof(b->line), "%.*s", (int)ev->line_len, ev->line);
	return 0;
}

static void bench_open(struct bench *b)
{
	memset(b, 0, sizeof(*b));
	les_test_lustre_consumer(&b->consumer, &b->opts, &b->observed, &b->out, keep, b);
}

static void bench_close(struct bench *b)
{
	les_sink_file_close(&b->out);
	les_observed_free(&b->observed);
	les_consumer_release(&b->consumer);
}

/* The line read back: every id as the consumer's event had it. */
static void assert_read_back(struct bench *b)
{
	struct les_capture cap = {0};
	struct les_event ev;

	ck_assert_int_eq(les_capture_parse(&cap, b->line, &ev), 1);
	ck_assert_uint_eq(ev.kind, b->live.kind);
	ck_assert_uint_eq(ev.req_id, b->live.req_id);
	ck_assert_uint_eq(ev.wait_id, b->live.wait_id);
	ck_assert_uint_eq(ev.parent_wait_id, b->live.parent_wait_id);
	ck_assert_uint_eq(ev.parent_op_id, b->live.parent_op_id);
	ck_assert_int_eq(ev.has_xid, b->live.has_xid);
	ck_assert_uint_eq(ev.xid, b->live.xid);
	ck_assert_int_eq(ev.has_opcode, b->live.has_opcode);
	ck_assert_uint_eq(ev.opcode, b->live.opcode);
	ck_assert_uint_eq(ev.rpc_op, b->live.rpc_op);
	ck_assert_int_eq(ev.nested_wait, b->live.nested_wait);
	ck_assert_str_eq(ev.target ? ev.target : "", b->target);
	ck_assert_uint_eq(ev.target_len, strlen(b->target));
	ck_assert_str_eq(ev.nid ? ev.nid : "", b->nid);
	les_capture_release(&cap);
}

static void feed(struct bench *b, const void *rec, size_t size)
{
	ck_assert_int_eq(les_consumer_on_record(&b->consumer, (void *)rec, size), 0);
}

START_TEST(test_ptlrpc_request_ids)
{
	struct les_rec_rpc r = {
		.kind = LES_REC_RPC,
		.proto = LES_PROTO_PTLRPC,
		.rpc_op = LES_RPC_OP_REQUEST,
		.opcode = 4,
		.req_id = 9,
		.xid = 1234567,
		.dev = KDEV,
		.flags = LES_RPC_F_OPCODE | LES_RPC_F_XID | LES_RPC_F_TARGET | LES_RPC_F_NID,
		.name = "fs-OST0000-osc-ffff8881",
		.nid = {.type = 2, .addr_be = {htonl(0x0a00020f)}},
	};
	struct bench b;

	bench_open(&b);
	feed(&b, &r, sizeof(r));
	ck_assert(b.live.has_xid && b.live.has_opcode && b.live.target && b.live.nid);
	ck_assert_str_eq(b.nid, "10.0.2.15@tcp");
	assert_read_back(&b);
	/* Without module BTF: no xid, target or nid, and the line says null. */
	r.flags = LES_RPC_F_OPCODE;
	feed(&b, &r, sizeof(r));
	ck_assert(!b.live.has_xid && !b.live.target && !b.live.nid);
	assert_read_back(&b);
	bench_close(&b);
}
END_TEST

START_TEST(test_nested_lock_wait)
{
	struct les_rec_rpc r = {
		.kind = LES_REC_RPC,
		.proto = LES_PROTO_LDLM,
		.rpc_op = LES_RPC_OP_LOCK_COMPLETION,
		.req_id = 0,
		.wait_id = 31,
		.parent_wait_id = 30,
		.parent_op_id = 7,
		.dev = KDEV,
	};
	struct bench b;

	bench_open(&b);
	feed(&b, &r, sizeof(r));
	ck_assert(b.live.nested_wait);
	assert_read_back(&b);
	r.rpc_op = LES_RPC_OP_LOCK_ENQUEUE;
	r.parent_wait_id = 0;
	feed(&b, &r, sizeof(r));
	ck_assert(!b.live.nested_wait);
	assert_read_back(&b);
	bench_close(&b);
}
END_TEST

START_TEST(test_rpc_event_ids)
{
	struct les_rec_rpc_event r = {
		.kind = LES_REC_RPC_EVENT,
		.proto = LES_PROTO_PTLRPC,
		.event = LES_EV_RESEND,
		.req_id = 12,
		.opcode = 101,
		.dev = KDEV,
		.flags = LES_RPC_F_OPCODE | LES_RPC_F_TARGET,
		.name = "fs-MDT0000-mdc-ffff8881",
	};
	struct bench b;

	bench_open(&b);
	feed(&b, &r, sizeof(r));
	ck_assert(b.live.target && b.live.has_opcode);
	assert_read_back(&b);
	bench_close(&b);
}
END_TEST

/* Lines that are not records: no event, not an error. */
START_TEST(test_other_lines)
{
	struct les_capture cap = {0};
	struct les_event ev;

	ck_assert_int_eq(les_capture_parse(&cap, "{\"type\":\"stats\"}", &ev), 0);
	ck_assert_int_eq(les_capture_parse(&cap, "{\"type\":\"proc_exec\"}", &ev), 0);
	ck_assert_int_eq(les_capture_parse(&cap, "{\"type\":\"window\"}", &ev), 0);
	ck_assert_int_eq(les_capture_parse(&cap, "[1]", &ev), -1);
	ck_assert_int_eq(les_capture_parse(&cap, "not json", &ev), -1);
	les_capture_release(&cap);
}
END_TEST

static Suite *capture_suite(void)
{
	Suite *s = suite_create("capture");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_ptlrpc_request_ids);
	tcase_add_test(tc, test_nested_lock_wait);
	tcase_add_test(tc, test_rpc_event_ids);
	tcase_add_test(tc, test_other_lines);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(capture_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
