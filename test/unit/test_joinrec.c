// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Saved rpc and srv lines back into the join's records, and the join of two captures. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "decode/joinrec.h"
#include "format/format.h"
#include "sink/join_replay.h"

/* A client's request and the server's record of it, as the one-node run wrote them. */
static const char client_line[] =
	"{\"type\":\"rpc\",\"ts\":\"2026-12-06T10:18:32.336584253Z\",\"host\":\"c1\",\"fs_type\":null,"
	"\"fs\":null,\"mount\":null,\"op\":\"request\",\"proto\":\"ptlrpc\",\"opcode\":13,"
	"\"lustre_jobid\":\"osp-pre-0-0.0\",\"req_id\":4097,\"pid\":433,\"comm\":\"osp-pre-0-0\","
	"\"latency_ns\":7643401,\"xid\":1883821482993024,\"target\":\"lustre-OST0000\","
	"\"nid\":\"192.168.77.1@tcp\",\"replied\":true,\"queued_ns\":1246112,"
	"\"service_ns\":6397289,\"resends\":0}\n";
static const char server_line[] =
	"{\"type\":\"srv\",\"ts\":\"2026-12-06T10:18:32.336000000Z\",\"host\":\"s1\",\"fs_type\":null,"
	"\"fs\":null,\"mount\":null,\"proto\":\"ptlrpc\",\"service\":\"ost_create\","
	"\"target\":\"lustre-OST0000\",\"opcode\":13,\"opcode_name\":\"ost_statfs\","
	"\"xid\":1883821482993024,\"client_nid\":\"192.168.77.2@tcp\","
	"\"server_nid\":\"192.168.77.1@tcp\",\"lustre_jobid\":\"osp-pre-0-0.0\",\"resent\":false,"
	"\"replay\":false,\"msg_flags\":0,\"thread\":\"ll_ost00_001\",\"tid\":301,\"status\":0,"
	"\"transno\":0,\"replied\":true,\"queue_ns\":762329,\"incoming_ns\":560488,"
	"\"nrs_ns\":201841,\"handle_ns\":1215627,\"reply_ns\":1127535,\"total_ns\":1977956}\n";

START_TEST(test_nid_round_trip)
{
	static const char *const nids[] = {"0@lo", "192.168.77.2@tcp", "10.1.2.3@o2ib1",
					   "fd00::1@tcp", "12@gni3"};
	static const char *const bad[] = {"x@tcp", "1.2.3.4", "1@nonet", "1.2.3.4@tcp99999",
					  "",	   "@tcp"};
	struct les_lnet_nid nid;
	char buf[LES_LNET_NID_STR_MAX];

	for (size_t i = 0; i < sizeof(nids) / sizeof(nids[0]); i++) {
		ck_assert_msg(les_lnet_nid_parse(nids[i], &nid), "%s", nids[i]);
		ck_assert_uint_gt(les_lnet_nid_str(&nid, buf, sizeof(buf)), 0);
		ck_assert_str_eq(buf, nids[i]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!les_lnet_nid_parse(bad[i], &nid), "%s", bad[i]);
	ck_assert(!les_lnet_nid_parse(NULL, &nid));
}
END_TEST

/* The server's steps come back as the durations its line carries. */
START_TEST(test_server_steps_read_back)
{
	struct les_rec_rpc c;
	struct les_rec_srv s;
	struct les_srv_times t;

	ck_assert_int_eq(les_joinrec_parse(server_line, &c, &s), LES_JOINREC_SERVER);
	les_srv_times(&s, 0, &t);
	ck_assert_uint_eq(t.queue_ns, 762329);
	ck_assert(t.has_nrs);
	ck_assert_uint_eq(t.incoming_ns, 560488);
	ck_assert_uint_eq(t.nrs_ns, 201841);
	ck_assert_uint_eq(t.handle_ns, 1215627);
	ck_assert(t.has_reply);
	ck_assert_uint_eq(t.reply_ns, 1127535);
	ck_assert_uint_eq(t.total_ns, 1977956);
	ck_assert_str_eq(s.service, "ost_create");
	ck_assert_str_eq(s.target, "lustre-OST0000");
	ck_assert_uint_eq(
		s.flags & (LES_SRV_F_PEER | LES_SRV_F_TARGET | LES_SRV_F_JOBID | LES_SRV_F_OPCODE),
		LES_SRV_F_PEER | LES_SRV_F_TARGET | LES_SRV_F_JOBID | LES_SRV_F_OPCODE);
}
END_TEST

/* A client request and its server record meet on the consumer's key, with its split. */
START_TEST(test_sides_meet_on_the_consumers_key)
{
	struct les_rec_rpc c;
	struct les_rec_srv s;
	struct les_rpcjoin_key kc, ks;
	struct les_srv_times t;

	ck_assert_int_eq(les_joinrec_parse(client_line, &c, &s), LES_JOINREC_CLIENT);
	ck_assert_int_eq(les_joinrec_parse(server_line, &c, &s), LES_JOINREC_SERVER);
	ck_assert(les_rpcjoin_client_key(&c, &kc));
	ck_assert(les_rpcjoin_server_key(&s, &ks));
	ck_assert_mem_eq(&kc, &ks, sizeof(kc));
	ck_assert_uint_eq(c.backlog_ns, 1246112);
	ck_assert_uint_eq(c.rtt_ns, 6397289);
	les_srv_times(&s, 0, &t);
	ck_assert_int_eq(les_rpcjoin_network_ns(&c, &t), 6397289 - 1127535);
	ck_assert(!(c.flags & LES_RPC_F_LNET));
}
END_TEST

/* The PUT's LNet wait, where the client linked one, is its own layer, out of the network. */
START_TEST(test_lnet_wait_read_back)
{
	char line[sizeof(client_line) + 32];
	char *end;
	struct les_rec_rpc c;
	struct les_rec_srv s;
	struct les_srv_times t;

	snprintf(line, sizeof(line), "%s", client_line);
	end = strstr(line, "\"resends\":0}");
	ck_assert_ptr_nonnull(end);
	strcpy(end, "\"resends\":0,\"lnet_wait_ns\":1000}\n");
	ck_assert_int_eq(les_joinrec_parse(line, &c, &s), LES_JOINREC_CLIENT);
	ck_assert(c.flags & LES_RPC_F_LNET);
	ck_assert_uint_eq(c.lnet_wait_ns, 1000);
	ck_assert_int_eq(les_joinrec_parse(server_line, &c, &s), LES_JOINREC_SERVER);
	les_srv_times(&s, 0, &t);
	ck_assert_int_eq(les_joinrec_parse(line, &c, &s), LES_JOINREC_CLIENT);
	ck_assert_int_eq(les_rpcjoin_network_ns(&c, &t), 6397289 - 1127535 - 1000);
}
END_TEST

START_TEST(test_lines_of_no_side)
{
	struct les_rec_rpc c;
	struct les_rec_srv s;

	ck_assert_int_eq(les_joinrec_parse("{\"type\":\"access\",\"op\":\"read\"}", &c, &s),
			 LES_JOINREC_OTHER);
	ck_assert_int_eq(les_joinrec_parse("{\"type\":\"rpc\",\"proto\":\"ptlrpc\","
					   "\"op\":\"queue_wait\",\"ts\":\"2026-12-06T10:18:32Z\"}",
					   &c, &s),
			 LES_JOINREC_OTHER);
	ck_assert_int_eq(les_joinrec_parse("{\"type\":\"srv\",\"proto\":\"sunrpc\"}", &c, &s),
			 LES_JOINREC_SKIPPED);
	ck_assert_int_eq(les_joinrec_parse("{\"type\":\"srv\",\"proto\":\"ptlrpc\"}", &c, &s),
			 LES_JOINREC_BAD);
	ck_assert_int_eq(les_joinrec_parse("not json", &c, &s), LES_JOINREC_BAD);
}
END_TEST

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/les-joinrec.XXXXXX");
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* Two captures: one pair, one request of each side alone, lines of no side. */
START_TEST(test_replay_of_two_captures)
{
	char client[4096], server[4096], *out = NULL, *paths[2];
	struct les_join_replay_stats st;
	struct les_join_replay_config cfg = {.host = "h", .n_inputs = 2};
	size_t out_len = 0;
	char err[256];
	char *nl;

	snprintf(client, sizeof(client), "%s%s", client_line, client_line);
	/* the second client request: another xid */
	nl = strstr(client + strlen(client_line), "1883821482993024");
	memcpy(nl, "1883821482993025", 16);
	snprintf(server, sizeof(server), "%s%s{\"type\":\"srv\",\"proto\":\"sunrpc\"}\nnot json\n",
		 server_line, server_line);
	nl = strstr(server + strlen(server_line), "1883821482993024");
	memcpy(nl, "1883821482993026", 16);
	paths[0] = write_tmp(client);
	paths[1] = write_tmp(server);
	cfg.inputs = (const char *const *)paths;
	cfg.out = open_memstream(&out, &out_len);
	ck_assert_int_eq(les_join_replay_run(&cfg, &st, err, sizeof(err)), 0);
	fclose(cfg.out);
	ck_assert_uint_eq(st.counts.joined, 1);
	ck_assert_uint_eq(st.counts.unjoined[LES_JOIN_CLIENT], 1);
	ck_assert_uint_eq(st.counts.unjoined[LES_JOIN_SERVER], 1);
	ck_assert_uint_eq(st.skipped, 1);
	ck_assert_uint_eq(st.bad, 1);
	ck_assert_uint_eq(st.lines, 6);
	ck_assert_ptr_nonnull(strstr(out, "\"type\":\"rpc_join\""));
	ck_assert_ptr_nonnull(strstr(out, "\"network_ns\":5269754,"));
	ck_assert_ptr_nonnull(strstr(out,
				     "\"server_queue_ns\":762329,\"server_incoming_ns\":560488,"
				     "\"server_nrs_ns\":201841,\"server_handle_ns\":1215627,"
				     "\"server_reply_ns\":1127535,\"server_total_ns\":1977956"));
	ck_assert_ptr_nonnull(strstr(out, "\"client_nid\":\"192.168.77.2@tcp\""));
	ck_assert_ptr_nonnull(
		strstr(out, "{\"type\":\"join_counts\",\"lines\":6,\"bad\":1,"
			    "\"skipped\":1,\"cut\":0,\"joined\":1,"
			    "\"client\":{\"unjoined\":1,\"no_key\":0,\"duplicate\":0},"
			    "\"server\":{\"unjoined\":1,\"no_key\":0,\"duplicate\":0}}\n"));
	free(out);
	out = NULL;
	unlink(paths[1]);
	free(paths[1]);
	/* A file that is not there is an error with its name. */
	paths[1] = "/nonexistent/capture";
	cfg.out = open_memstream(&out, &out_len);
	ck_assert_int_eq(les_join_replay_run(&cfg, &st, err, sizeof(err)), -1);
	fclose(cfg.out);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/capture"));
	unlink(paths[0]);
	free(paths[0]);
	free(out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("joinrec");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_nid_round_trip);
	tcase_add_test(tc, test_server_steps_read_back);
	tcase_add_test(tc, test_sides_meet_on_the_consumers_key);
	tcase_add_test(tc, test_lnet_wait_read_back);
	tcase_add_test(tc, test_lines_of_no_side);
	tcase_add_test(tc, test_replay_of_two_captures);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
