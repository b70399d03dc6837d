// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The client-server join of PtlRPC and sunrpc requests and the server record's steps. */
#include <check.h>
#include <string.h>
#include "model/rpcjoin.h"

static const struct les_lnet_nid lo = {.size = 0, .type = 9}; /* 0@lo */
static const struct les_lnet_nid tcp = {.size = 0, .type = 2, .addr_be = {0x01004d7f}};

static struct les_rec_rpc client(uint64_t xid, const struct les_lnet_nid *nid)
{
	struct les_rec_rpc r;

	memset(&r, 0, sizeof(r));
	r.kind = LES_REC_RPC;
	r.proto = LES_PROTO_PTLRPC;
	r.rpc_op = LES_RPC_OP_REQUEST;
	r.flags = LES_RPC_F_XID | LES_RPC_F_NID;
	r.xid = xid;
	r.nid = *nid;
	r.rtt_ns = 10000;
	return r;
}

static struct les_rec_srv server(uint64_t xid, const struct les_lnet_nid *self)
{
	struct les_rec_srv r;

	memset(&r, 0, sizeof(r));
	r.kind = LES_REC_SRV;
	r.proto = LES_PROTO_PTLRPC;
	r.flags = LES_SRV_F_PEER | LES_SRV_F_NRS | LES_SRV_F_REPLY;
	r.xid = xid;
	r.self = *self;
	r.peer = *self;
	/* arrival 1000 (epoch 1000 + 5000), NRS 1200, start 1500, reply 4000, end 4500 */
	r.arrival_real_ns = 6000;
	r.nrs_ns = 1200;
	r.start_ns = 1500;
	r.reply_ns = 4000;
	r.ts_ns = 4500;
	return r;
}

/* 127.0.0.1 and a client port, as the NFS client's socket and nfsd's rq_addr give them. */
static struct les_sock_addr lo_port(uint16_t port)
{
	struct les_sock_addr a = {.family = 2, .port = port, .addr_be = {0x0100007f}};

	return a;
}

static struct les_rec_rpc nfs_client(uint32_t xid, uint16_t port)
{
	struct les_rec_rpc r;

	memset(&r, 0, sizeof(r));
	r.kind = LES_REC_RPC;
	r.proto = LES_PROTO_SUNRPC;
	r.flags = LES_RPC_F_OPCODE | LES_RPC_F_LOCAL;
	r.req_id = xid;
	r.local = lo_port(port);
	r.rtt_ns = 9000;
	return r;
}

static struct les_rec_srv nfs_server(uint32_t xid, uint16_t port)
{
	struct les_rec_srv r;

	memset(&r, 0, sizeof(r));
	r.kind = LES_REC_SRV;
	r.proto = LES_PROTO_SUNRPC;
	r.flags = LES_SRV_F_CLIENT | LES_SRV_F_REPLY | LES_SRV_F_ARRIVAL_MONO | LES_SRV_F_IO;
	r.xid = xid;
	r.client = lo_port(port);
	/* woken 1000, read off the transport 1400, reply sent 3000; file I/O 800 */
	r.arrival_real_ns = 1000;
	r.start_ns = 1400;
	r.handler_ns = 1500;
	r.reply_ns = 3000;
	r.ts_ns = 3000;
	r.io_ns = 800;
	return r;
}

START_TEST(test_sunrpc_key_is_client_addr_and_xid)
{
	struct les_rpcjoin j;
	struct les_rec_rpc c = nfs_client(0x5a5a0001, 812);
	struct les_rec_srv s = nfs_server(0x5a5a0001, 813);
	struct les_rec_srv p = server(0x5a5a0001, &lo);
	struct les_srv_times t;

	ck_assert_int_eq(les_rpcjoin_init(&j, 64, 1000), 0);
	ck_assert(!les_rpcjoin_offer_client(&j, &c, 1));
	/* Same xid, another port (another transport: nconnect): not this request. */
	ck_assert(!les_rpcjoin_offer_server(&j, &s, 2));
	/* Same xid from a PtlRPC server: another protocol, never joined. */
	ck_assert(!les_rpcjoin_offer_server(&j, &p, 3));
	s.client.port = 812;
	ck_assert(les_rpcjoin_offer_server(&j, &s, 4));
	ck_assert_uint_eq(j.client.req_id, 0x5a5a0001);
	ck_assert_uint_eq(j.server.client.port, 812);
	/* A byte-swapped xid on one side meets nothing. */
	c = nfs_client(0x01005a5a, 812);
	s = nfs_server(0x5a5a0001, 812);
	ck_assert(!les_rpcjoin_offer_client(&j, &c, 5));
	ck_assert(!les_rpcjoin_offer_server(&j, &s, 6));
	/* Without the socket's address (an RDMA transport) there is no key. */
	c.flags &= ~LES_RPC_F_LOCAL;
	ck_assert(!les_rpcjoin_offer_client(&j, &c, 7));
	ck_assert_uint_eq(j.counts.no_key[LES_JOIN_CLIENT], 1);
	ck_assert_uint_eq(j.counts.joined, 1);
	/* The steps: arrival is monotonic already, whatever the offset. */
	les_srv_times(&s, 123456, &t);
	ck_assert_uint_eq(t.queue_ns, 400);
	ck_assert_uint_eq(t.handle_ns, 1600);
	ck_assert_uint_eq(t.reply_ns, 2000);
	ck_assert(t.has_reply && !t.has_nrs);
	c = nfs_client(1, 1);
	ck_assert_int_eq(les_rpcjoin_network_ns(&c, &t), 7000);
	les_rpcjoin_free(&j);
}
END_TEST

START_TEST(test_joins_either_order)
{
	struct les_rpcjoin j;
	struct les_rec_rpc c = client(7, &lo);
	struct les_rec_srv s = server(7, &lo);

	ck_assert_int_eq(les_rpcjoin_init(&j, 64, 1000), 0);
	ck_assert(!les_rpcjoin_offer_client(&j, &c, 1));
	ck_assert_uint_eq(les_rpcjoin_pending(&j, LES_JOIN_CLIENT), 1);
	ck_assert(les_rpcjoin_offer_server(&j, &s, 2));
	ck_assert_uint_eq(j.client.xid, 7);
	ck_assert_uint_eq(j.server.xid, 7);
	ck_assert_uint_eq(les_rpcjoin_pending(&j, LES_JOIN_CLIENT), 0);
	/* The server first: the same. */
	c = client(8, &lo);
	s = server(8, &lo);
	ck_assert(!les_rpcjoin_offer_server(&j, &s, 3));
	ck_assert(les_rpcjoin_offer_client(&j, &c, 4));
	ck_assert_uint_eq(j.counts.joined, 2);
	les_rpcjoin_free(&j);
}
END_TEST

START_TEST(test_key_is_nid_and_xid)
{
	struct les_rpcjoin j;
	struct les_rec_rpc c = client(7, &lo);
	struct les_rec_srv s = server(7, &tcp);
	struct les_rec_rpc nokey = client(9, &lo);

	nokey.flags &= ~LES_RPC_F_XID;
	ck_assert_int_eq(les_rpcjoin_init(&j, 64, 1000), 0);
	ck_assert(!les_rpcjoin_offer_client(&j, &c, 1));
	ck_assert(!les_rpcjoin_offer_server(&j, &s, 1)); /* another server's xid 7 */
	ck_assert(!les_rpcjoin_offer_client(&j, &nokey, 1));
	ck_assert_uint_eq(j.counts.no_key[LES_JOIN_CLIENT], 1);
	ck_assert(!les_rpcjoin_offer_client(&j, &c, 1)); /* the same key again */
	ck_assert_uint_eq(j.counts.duplicate[LES_JOIN_CLIENT], 1);
	/* At the end what waits is unjoined, by side. */
	les_rpcjoin_expire(&j, 2, true);
	ck_assert_uint_eq(j.counts.unjoined[LES_JOIN_CLIENT], 1);
	ck_assert_uint_eq(j.counts.unjoined[LES_JOIN_SERVER], 1);
	ck_assert_uint_eq(j.counts.joined, 0);
	les_rpcjoin_free(&j);
}
END_TEST

/* A full window evicts its oldest, counted; nothing is lost without a count. */
START_TEST(test_full_table_counts_every_record)
{
	struct les_rpcjoin j;
	uint64_t offered = 0;

	ck_assert_int_eq(les_rpcjoin_init(&j, 16, 1000000), 0);
	for (uint64_t x = 1; x <= 500; x++) {
		struct les_rec_rpc c = client(x, &lo);

		les_rpcjoin_offer_client(&j, &c, x);
		offered++;
	}
	ck_assert_uint_eq(j.counts.unjoined[LES_JOIN_CLIENT] +
				  les_rpcjoin_pending(&j, LES_JOIN_CLIENT),
			  offered);
	/* Old ones expire by age, the young stay. */
	les_rpcjoin_expire(&j, 500 + 1000000 - 10, false);
	ck_assert_uint_gt(les_rpcjoin_pending(&j, LES_JOIN_CLIENT), 0);
	ck_assert_uint_eq(j.counts.unjoined[LES_JOIN_CLIENT] +
				  les_rpcjoin_pending(&j, LES_JOIN_CLIENT),
			  offered);
	les_rpcjoin_free(&j);
}
END_TEST

START_TEST(test_server_steps)
{
	struct les_rec_srv s = server(1, &lo);
	struct les_rec_rpc c = client(1, &lo);
	struct les_srv_times t;

	les_srv_times(&s, 5000, &t);
	ck_assert_uint_eq(t.arrival_ns, 1000);
	ck_assert_uint_eq(t.incoming_ns, 200);
	ck_assert_uint_eq(t.nrs_ns, 300);
	ck_assert_uint_eq(t.queue_ns, 500);
	ck_assert_uint_eq(t.handle_ns, 3000);
	ck_assert_uint_eq(t.reply_ns, 3000);
	ck_assert_uint_eq(t.total_ns, 3500);
	ck_assert(t.has_nrs && t.has_reply);
	/* client 10000 ns from send to reply, server 3000 from arrival to reply */
	ck_assert_int_eq(les_rpcjoin_network_ns(&c, &t), 7000);
	/* An arrival after the dequeue (the offset's noise) is the dequeue: no queue. */
	les_srv_times(&s, 4000, &t);
	ck_assert_uint_eq(t.queue_ns, 0);
	ck_assert_uint_eq(t.total_ns, t.handle_ns);
	/* No reply seen: null, and the network is the client's less the total. */
	s.flags &= ~LES_SRV_F_REPLY;
	les_srv_times(&s, 5000, &t);
	ck_assert(!t.has_reply);
	ck_assert_int_eq(les_rpcjoin_network_ns(&c, &t), 6500);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rpcjoin");
	TCase *tc = tcase_create("rpcjoin");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_joins_either_order);
	tcase_add_test(tc, test_key_is_nid_and_xid);
	tcase_add_test(tc, test_full_table_counts_every_record);
	tcase_add_test(tc, test_server_steps);
	tcase_add_test(tc, test_sunrpc_key_is_client_addr_and_xid);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
