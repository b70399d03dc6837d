// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The join of client and server PtlRPC records is on only where server
 * probes attached (les_consumer_config.join): a client-only node allocates
 * no table, offers it nothing, and its stats say the join is off, never a
 * row of zeros that reads as "nothing joined".
 */
#include <check.h>
#include <jansson.h>
#include <string.h>
#include "lustre_bench.h"
#include "probe/rpcprobes.h"

struct gate {
	struct les_consumer_config opts;
	struct les_observed observed;
	struct les_sink_file out;
	struct les_consumer c;
	int joined_lines;
};

static int no_event(void *ctx, const struct les_event *ev)
{
	(void)ctx;
	(void)ev;
	return 0;
}

static int count_join(void *ctx, const struct les_event *ev)
{
	struct gate *g = ctx;

	if (ev->type && strcmp(ev->type, "rpc_join") == 0)
		g->joined_lines++;
	return 0;
}

static void gate_open(struct gate *g, bool join)
{
	memset(g, 0, sizeof(*g));
	g->opts.join = join;
	les_test_lustre_consumer(&g->c, &g->opts, &g->observed, &g->out, no_event, g);
	ck_assert_int_eq(les_consumer_add_line_sink(&g->c, count_join, g), 0);
}

/* One request seen from both sides, on 0@lo, xid 7. */
static void feed_pair(struct gate *g)
{
	static const struct les_lnet_nid lo = {.size = 0, .type = 9};
	struct les_rec_rpc c;
	struct les_rec_srv s;

	memset(&c, 0, sizeof(c));
	c.kind = LES_REC_RPC;
	c.proto = LES_PROTO_PTLRPC;
	c.rpc_op = LES_RPC_OP_REQUEST;
	c.flags = LES_RPC_F_XID | LES_RPC_F_NID;
	c.xid = 7;
	c.nid = lo;
	c.dev = LES_TEST_LUSTRE_DEV;
	c.ts_ns = 10000;
	c.latency_ns = 9000;
	c.task = (struct les_task){.pid = 42, .tid = 42, .comm = "dd"};
	memset(&s, 0, sizeof(s));
	s.kind = LES_REC_SRV;
	s.flags = LES_SRV_F_PEER | LES_SRV_F_REPLY;
	s.xid = 7;
	s.self = lo;
	s.peer = lo;
	s.start_ns = 2000;
	s.reply_ns = 4000;
	s.ts_ns = 4500;
	ck_assert_int_eq(les_consumer_on_record(&g->c, &c, sizeof(c)), 0);
	ck_assert_int_eq(les_consumer_on_record(&g->c, &s, sizeof(s)), 0);
}

static json_t *final_join(struct gate *g)
{
	struct les_kernel_stats ks;
	json_error_t jerr;
	json_t *st, *join;

	memset(&ks, 0, sizeof(ks));
	les_consumer_emit_stats(&g->c, &ks, true);
	st = json_loadb(g->c.line, g->c.jw.len, 0, &jerr);
	ck_assert_msg(st, "stats record: %s", jerr.text);
	join = json_incref(json_object_get(st, "join"));
	json_decref(st);
	ck_assert_msg(json_is_object(join), "no join object in the stats");
	return join;
}

static void gate_close(struct gate *g)
{
	les_consumer_release(&g->c);
	les_sink_file_close(&g->out);
	les_observed_free(&g->observed);
}

START_TEST(test_client_only_no_table)
{
	struct gate g;
	json_t *join;

	gate_open(&g, false);
	ck_assert_ptr_null(g.c.join.slots);
	ck_assert_uint_eq(g.c.join.cap, 0);
	feed_pair(&g);
	ck_assert_int_eq(g.joined_lines, 0);
	ck_assert_ptr_null(g.c.join.slots);
	join = final_join(&g);
	ck_assert_str_eq(json_string_value(json_object_get(join, "off")),
			 "no server probe attached");
	ck_assert_ptr_null(json_object_get(join, "joined"));
	json_decref(join);
	gate_close(&g);
}
END_TEST

START_TEST(test_server_node_joins)
{
	struct gate g;
	json_t *join;

	gate_open(&g, true);
	ck_assert_ptr_nonnull(g.c.join.slots);
	feed_pair(&g);
	ck_assert_int_eq(g.joined_lines, 1);
	join = final_join(&g);
	ck_assert_ptr_null(json_object_get(join, "off"));
	ck_assert_int_eq(json_integer_value(json_object_get(join, "joined")), 1);
	json_decref(join);
	gate_close(&g);
}
END_TEST

/* What the tracer counts as a server link: the server rows' programs, no other. */
START_TEST(test_server_programs)
{
	ck_assert(les_rpc_prog_is_server("srv_tgt_handle_kr"));
	ck_assert(les_rpc_prog_is_server("srv_request_get_fx"));
	ck_assert(les_rpc_prog_is_server("srv_send_reply_fe"));
	ck_assert(!les_rpc_prog_is_server("ptl_queue_wait_kp"));
	ck_assert(!les_rpc_prog_is_server("sunrpc_end_btf"));
	ck_assert(!les_rpc_prog_is_server("fuse_queue_kp"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("join_gate");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_client_only_no_table);
	tcase_add_test(tc, test_server_node_joins);
	tcase_add_test(tc, test_server_programs);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
