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
#include "sink/aggregate.h"

struct gate {
	struct les_consumer_config opts;
	struct les_observed observed;
	struct les_sink_file out;
	struct les_consumer c;
	int joined_lines;
	json_t *join_line, *window_line; /* the last rpc_join line, and rpc_join window line */
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

	json_t *j = json_loadb(ev->line, ev->line_len, 0, NULL);
	const char *rt = json_string_value(json_object_get(j, "record_type"));

	ck_assert_ptr_nonnull(j);
	if (ev->type && strcmp(ev->type, "rpc_join") == 0) {
		g->joined_lines++;
		json_decref(g->join_line);
		g->join_line = json_incref(j);
	}
	if (ev->type && strcmp(ev->type, "window") == 0 && rt && strcmp(rt, "rpc_join") == 0) {
		json_decref(g->window_line);
		g->window_line = json_incref(j);
	}
	json_decref(j);
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
	c.flags = LES_RPC_F_XID | LES_RPC_F_NID | LES_RPC_F_LNET;
	c.xid = 7;
	c.lnet_wait_ns = 500; /* its PUT waited for an LNet credit: out of the network */
	c.nid = lo;
	c.dev = LES_TEST_LUSTRE_DEV;
	c.ts_ns = 10000;
	c.latency_ns = 9000;
	c.task = (struct les_task){.pid = 42, .tid = 42, .comm = "dd"};
	memset(&s, 0, sizeof(s));
	s.kind = LES_REC_SRV;
	s.proto = LES_PROTO_PTLRPC;
	c.backlog_ns = 300;
	c.rtt_ns = 9000;
	s.flags = LES_SRV_F_PEER | LES_SRV_F_REPLY | LES_SRV_F_NRS | LES_SRV_F_TARGET |
		  LES_SRV_F_JOBID | LES_SRV_F_BULK | LES_SRV_F_IO;
	/* Inside the handling (1500 -> 4500): a bulk transfer and two block I/Os. */
	s.bulk_ns = 700;
	s.io_ns = 1100;
	s.io_count = 2;
	s.xid = 7;
	s.self = lo;
	s.peer = lo;
	memcpy(s.target, "lustre-OST0000", sizeof("lustre-OST0000"));
	memcpy(s.jobid, "dd.0", sizeof("dd.0"));
	/* arrival 1000 (epoch 1000 + 5000), NRS 1200, start 1500, reply 4000, end 4500 */
	g->c.fmt.mono_to_epoch_ns = 5000;
	s.arrival_real_ns = 6000;
	s.nrs_ns = 1200;
	s.start_ns = 1500;
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
	json_decref(g->join_line);
	json_decref(g->window_line);
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

/*
 * The window's group of the joined request (--aggregate) has, for each
 * layer, the rpc_join line's field of that name: read from the two JSON
 * lines, not from the code that made them.
 */
START_TEST(test_window_layers_are_the_lines)
{
	struct les_aggregate_config agg = {
		.window_ns = 1000000000ull,
		.group_by = LES_GROUP_BY_DEFAULT,
		.max_groups = 16,
	};
	static const char *const fields[] = {
		"client_queued_ns", "client_lnet_wait_ns", "client_service_ns",
		"network_ns",	    "server_incoming_ns",  "server_nrs_ns",
		"server_handle_ns", "server_reply_ns",	   "server_bulk_ns",
		"server_io_ns"};
	struct les_aggregate *a;
	struct gate g;
	json_t *layers;

	gate_open(&g, true);
	a = les_pipeline_attach_aggregate(&g.c, &agg, true);
	ck_assert_ptr_nonnull(a);
	feed_pair(&g);
	les_aggregate_flush(a, UINT64_MAX);
	ck_assert_ptr_nonnull(g.join_line);
	ck_assert_ptr_nonnull(g.window_line);
	ck_assert_int_eq(json_integer_value(json_object_get(g.window_line, "count")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(g.window_line, "target")),
			 "lustre-OST0000");
	ck_assert_str_eq(json_string_value(json_object_get(g.window_line, "lustre_jobid")), "dd.0");
	ck_assert_str_eq(json_string_value(json_object_get(g.window_line, "client_nid")),
			 json_string_value(json_object_get(g.join_line, "client_nid")));
	layers = json_object_get(g.window_line, "layers");
	ck_assert_uint_eq(json_object_size(layers), sizeof(fields) / sizeof(fields[0]));
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		ck_assert_msg(json_integer_value(json_object_get(layers, fields[i])) ==
				      json_integer_value(json_object_get(g.join_line, fields[i])),
			      "%s: window %lld, line %lld", fields[i],
			      json_integer_value(json_object_get(layers, fields[i])),
			      json_integer_value(json_object_get(g.join_line, fields[i])));
	/* Not all zero: the pair has every step. */
	ck_assert_int_eq(json_integer_value(json_object_get(layers, "server_nrs_ns")), 300);
	/* 9000 of service less 3000 of arrival -> reply, less 500 in LNet */
	ck_assert_int_eq(json_integer_value(json_object_get(layers, "network_ns")), 5500);
	ck_assert_int_eq(json_integer_value(json_object_get(layers, "client_lnet_wait_ns")), 500);
	/* Inside the handling, as the server record had them. */
	ck_assert_int_eq(json_integer_value(json_object_get(layers, "server_bulk_ns")), 700);
	ck_assert_int_eq(json_integer_value(json_object_get(layers, "server_io_ns")), 1100);
	les_aggregate_free(a);
	gate_close(&g);
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
	tcase_add_test(tc, test_window_layers_are_the_lines);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
