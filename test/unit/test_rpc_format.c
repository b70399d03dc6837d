// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * RPC-plane records as JSON: what PtlRPC, LDLM, sunrpc and FUSE records
 * and events carry, and above all what they leave out (a PtlRPC opcode
 * that could not be read is absent, not 0).
 */
#include <arpa/inet.h>
#include <check.h>
#include <jansson.h>
#include <string.h>
#include "format/format.h"
#include "model/ops.h"
#include "probe/rpcprobes.h"

static char buf[16384];
static struct les_fmt_ctx fc;

/* Format the record and parse the line back. */
static json_t *format_rpc(const struct les_rec_rpc *r)
{
	struct jw w;
	json_error_t err;
	json_t *j;

	jw_init(&w, buf, sizeof(buf));
	les_format_rpc(&w, &fc, NULL, r, NULL, NULL);
	ck_assert(!w.overflow);
	j = json_loadb(buf, w.len, 0, &err);
	ck_assert_msg(j, "not JSON: %s: %.*s", err.text, (int)w.len, buf);
	return j;
}

static json_t *format_event(const struct les_rec_rpc_event *r)
{
	struct jw w;
	json_error_t err;
	json_t *j;

	jw_init(&w, buf, sizeof(buf));
	les_format_rpc_event(&w, &fc, NULL, r, NULL);
	ck_assert(!w.overflow);
	j = json_loadb(buf, w.len, 0, &err);
	ck_assert_msg(j, "not JSON: %s: %.*s", err.text, (int)w.len, buf);
	return j;
}

static const char *str(json_t *j, const char *key)
{
	return json_string_value(json_object_get(j, key));
}

static json_int_t num(json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);

	ck_assert_msg(json_is_integer(v), "%s is not a number", key);
	return json_integer_value(v);
}

static void rpc_init(struct les_rec_rpc *r, unsigned int proto, unsigned int rpc_op)
{
	memset(r, 0, sizeof(*r));
	r->kind = LES_REC_RPC;
	r->proto = proto;
	r->rpc_op = rpc_op;
	r->ts_ns = 1;
	r->latency_ns = 51000000;
	r->req_id = 77;
	r->parent_op_id = 4097;
	r->task.pid = 42;
	r->task.tid = 42;
	strcpy(r->task.comm, "stat");
}

static void setup(void)
{
	les_fmt_ctx_init(&fc, "node1", false);
}

START_TEST(test_ptlrpc_opcode_absent)
{
	struct les_rec_rpc r;
	json_t *j;

	rpc_init(&r, LES_PROTO_PTLRPC, LES_RPC_OP_QUEUE_WAIT);
	r.opcode = 33; /* whatever is there: not flagged, not believed */
	j = format_rpc(&r);
	ck_assert_str_eq(str(j, "type"), "rpc");
	ck_assert_str_eq(str(j, "op"), "queue_wait");
	ck_assert_str_eq(str(j, "proto"), "ptlrpc");
	ck_assert(!json_object_get(j, "opcode"));
	ck_assert(!json_object_get(j, "opcode_name"));
	ck_assert(!json_object_get(j, "backlog_ns"));
	ck_assert(!json_object_get(j, "worker_comm"));
	ck_assert_int_eq(num(j, "req_id"), 77);
	ck_assert_int_eq(num(j, "parent_op_id"), 4097);
	ck_assert_int_eq(num(j, "latency_ns"), 51000000);
	json_decref(j);
}
END_TEST

START_TEST(test_ptlrpc_opcode_present)
{
	struct les_rec_rpc r;
	json_t *j;

	rpc_init(&r, LES_PROTO_PTLRPC, LES_RPC_OP_REQUEST);
	r.opcode = 4;
	r.flags = LES_RPC_F_OPCODE | LES_RPC_F_ASYNC;
	r.worker_pid = 99;
	strcpy(r.worker_comm, "ptlrpcd_00_00");
	j = format_rpc(&r);
	ck_assert_str_eq(str(j, "op"), "request");
	ck_assert_int_eq(num(j, "opcode"), 4);
	ck_assert_str_eq(str(j, "opcode_name"), "ost_write");
	ck_assert_str_eq(str(j, "worker_comm"), "ptlrpcd_00_00");
	ck_assert_int_eq(num(j, "worker_pid"), 99);
	ck_assert_str_eq(str(j, "comm"), "stat");
	json_decref(j);

	r.opcode = 9999; /* valid but not in the table: number only */
	j = format_rpc(&r);
	ck_assert_int_eq(num(j, "opcode"), 9999);
	ck_assert(!json_object_get(j, "opcode_name"));
	json_decref(j);
}
END_TEST

START_TEST(test_ptlrpc_request_fields)
{
	struct les_rec_rpc r;
	json_t *j;

	rpc_init(&r, LES_PROTO_PTLRPC, LES_RPC_OP_REQUEST);
	r.opcode = 4;
	r.flags = LES_RPC_F_OPCODE | LES_RPC_F_STATUS;
	r.backlog_ns = 1500;
	r.rtt_ns = 52000000;
	r.resends = 2;
	r.err = 110;
	j = format_rpc(&r);
	ck_assert_int_eq(num(j, "queued_ns"), 1500);
	ck_assert_int_eq(num(j, "service_ns"), 52000000);
	ck_assert_int_eq(num(j, "resends"), 2);
	ck_assert_int_eq(num(j, "errno"), 110);
	ck_assert_str_eq(str(j, "errno_class"), "timeout");
	/* Without module BTF: no xid, no target, both null rather than 0 or "". */
	ck_assert(json_is_null(json_object_get(j, "xid")));
	ck_assert(json_is_null(json_object_get(j, "target")));
	ck_assert(json_is_null(json_object_get(j, "nid")));
	ck_assert(json_is_true(json_object_get(j, "replied")));
	ck_assert(!json_object_get(j, "backlog_ns"));
	ck_assert(!json_object_get(j, "wait_id")); /* a request is not a thread's wait */
	json_decref(j);

	r.flags |= LES_RPC_F_NO_REPLY;
	j = format_rpc(&r);
	ck_assert(json_is_false(json_object_get(j, "replied")));
	/* Transmissions not counted (ptl_send_rpc not probed): sent is not known. */
	ck_assert(json_is_null(json_object_get(j, "sent")));
	json_decref(j);
	r.flags |= LES_RPC_F_SENDS | LES_RPC_F_UNSENT; /* refused before ptl_send_rpc */
	j = format_rpc(&r);
	ck_assert(json_is_false(json_object_get(j, "sent")));
	json_decref(j);
	r.flags &= ~(LES_RPC_F_NO_REPLY | LES_RPC_F_UNSENT);
	j = format_rpc(&r);
	ck_assert(json_is_true(json_object_get(j, "sent")));
	json_decref(j);
	r.flags &= ~LES_RPC_F_SENDS;

	r.flags |= LES_RPC_F_XID | LES_RPC_F_TARGET;
	r.xid = 1819446283449088ULL;
	memcpy(r.name, "lustre-OST0001-osc-ffff8a2b4c5d6", LES_RPC_NAME_LEN); /* cut, no NUL */
	j = format_rpc(&r);
	ck_assert_int_eq(num(j, "xid"), 1819446283449088LL);
	ck_assert_str_eq(str(j, "target"), "lustre-OST0001");
	ck_assert(json_is_null(json_object_get(j, "nid")));
	json_decref(j);

	/* The server's NID, as lctl prints it (struct lnet_nid, big-endian). */
	r.flags |= LES_RPC_F_NID;
	r.nid = (struct les_lnet_nid){.type = 2, .addr_be = {htonl(0x0a00020f)}};
	j = format_rpc(&r);
	ck_assert_str_eq(str(j, "nid"), "10.0.2.15@tcp");
	json_decref(j);
	r.nid.type = 0xff; /* LNET_NID_ANY: no NID */
	j = format_rpc(&r);
	ck_assert(json_is_null(json_object_get(j, "nid")));
	/* Its own NID only where the LNet plane saw its PUT sent. */
	ck_assert(json_is_null(json_object_get(j, "client_nid")));
	json_decref(j);
	r.flags |= LES_RPC_F_SELF_NID | LES_RPC_F_LNET;
	r.self_nid = (struct les_lnet_nid){.type = 2, .addr_be = {htonl(0xc0a84d02)}};
	j = format_rpc(&r);
	ck_assert_str_eq(str(j, "client_nid"), "192.168.77.2@tcp");
	json_decref(j);
	r.flags &= ~(LES_RPC_F_SELF_NID | LES_RPC_F_LNET);

	/* queue_wait records have no time split. */
	r.rpc_op = LES_RPC_OP_QUEUE_WAIT;
	j = format_rpc(&r);
	ck_assert(!json_object_get(j, "queued_ns"));
	ck_assert(!json_object_get(j, "xid"));
	ck_assert(json_object_get(j, "wait_id"));
	json_decref(j);
}
END_TEST

START_TEST(test_ptlrpc_target_names)
{
	const char *mgc = "MGC10.0.2.15@tcp";

	ck_assert_uint_eq(les_ptlrpc_target_len("lustre-MDT0000-mdc-ffff8a2b4c5d6000", 32), 14);
	ck_assert_uint_eq(les_ptlrpc_target_len("fs-a-OST000a-osc-ffff8a2b", 32), 12);
	ck_assert_uint_eq(les_ptlrpc_target_len("lustre-OST0000-osc-MDT0000", 32), 14);
	ck_assert_uint_eq(les_ptlrpc_target_len(mgc, 32), strlen(mgc));
	ck_assert_uint_eq(les_ptlrpc_target_len("-osc-x", 32), 6); /* no fsname: as it is */
	ck_assert_uint_eq(les_ptlrpc_target_len("", 32), 0);
}
END_TEST

static const char *nid_str(struct les_lnet_nid nid)
{
	static char buf[LES_LNET_NID_STR_MAX];

	return les_lnet_nid_str(&nid, buf, sizeof(buf)) ? buf : "(none)";
}

START_TEST(test_lnet_nid_names)
{
	struct les_lnet_nid v6 = {.size = 12, .type = 2};
	char small[8];

	ck_assert_str_eq(nid_str((struct les_lnet_nid){.type = 9}), "0@lo");
	ck_assert_str_eq(nid_str((struct les_lnet_nid){
				 .type = 5, .num_be = htons(1), .addr_be = {htonl(0xc0a80a01)}}),
			 "192.168.10.1@o2ib1");
	ck_assert_str_eq(nid_str((struct les_lnet_nid){.type = 16, .addr_be = {htonl(42)}}),
			 "42@kfi");
	/* A type LNet does not name: hex words, then <type:num>. */
	ck_assert_str_eq(nid_str((struct les_lnet_nid){
				 .type = 77, .num_be = htons(3), .addr_be = {htonl(0xabc)}}),
			 "abc@<77:3>");
	inet_pton(AF_INET6, "fd00::1:2", v6.addr_be);
	ck_assert_str_eq(nid_str(v6), "fd00::1:2@tcp");
	v6.size = 13; /* over 16 address bytes: not a NID */
	ck_assert_str_eq(nid_str(v6), "(none)");
	/* Cut: no partial NID. */
	ck_assert_uint_eq(
		les_lnet_nid_str(&(struct les_lnet_nid){.type = 2, .addr_be = {htonl(0x0a00020f)}},
				 small, sizeof(small)),
		0);
}
END_TEST

static json_t *format_lnet(const struct les_rec_lnet *r)
{
	struct jw w;
	json_t *j;

	jw_init(&w, buf, sizeof(buf));
	les_format_lnet(&w, &fc, r);
	ck_assert(!w.overflow);
	j = json_loadb(buf, w.len, 0, NULL);
	ck_assert_msg(j, "not JSON: %.*s", (int)w.len, buf);
	return j;
}

/* An LNet message: its waits, its NIDs, its match bits; null where not seen. */
START_TEST(test_lnet_message)
{
	struct les_lnet_nid cli = {.type = 2, .addr_be = {htonl(0xc0a84d02)}};
	struct les_lnet_nid srv = {.type = 2, .addr_be = {htonl(0xc0a84d01)}};
	struct les_rec_lnet r = {
		.kind = LES_REC_LNET,
		.msg_type = 1,
		.flags = LES_LNET_F_PEER_CREDIT | LES_LNET_F_NI_CREDIT | LES_LNET_F_COMMIT |
			 LES_LNET_F_SENT | LES_LNET_F_NIDS | LES_LNET_F_IFNAME | LES_LNET_F_MATCH,
		.ts_ns = 5000,
		.commit_ns = 1000,
		.send_ns = 4000,
		.peer_wait_ns = 2500,
		.ni_wait_ns = 400,
		.match_bits = 1883810748719104ULL,
		.len = 512,
		.peer_credits = -3,
		.ni_credits = 1,
		.portal = 4,
		.tid = 77,
		.ni = cli,
		.peer = srv,
		.target = srv,
		.ifname = "eth0",
	};
	json_t *j = format_lnet(&r);

	ck_assert_str_eq(str(j, "type"), "lnet");
	ck_assert_str_eq(str(j, "proto"), "lnet");
	ck_assert_str_eq(str(j, "msg_type"), "put");
	ck_assert_int_eq(num(j, "match_bits"), 1883810748719104LL);
	ck_assert_int_eq(num(j, "portal"), 4);
	ck_assert_str_eq(str(j, "ni_nid"), "192.168.77.2@tcp");
	ck_assert_str_eq(str(j, "peer_nid"), "192.168.77.1@tcp");
	ck_assert_str_eq(str(j, "interface"), "eth0");
	ck_assert(json_is_false(json_object_get(j, "routed")));
	ck_assert_int_eq(num(j, "peer_credit_wait_ns"), 2500);
	ck_assert_int_eq(num(j, "ni_credit_wait_ns"), 400);
	ck_assert_int_eq(num(j, "peer_credits"), -3);
	ck_assert_int_eq(num(j, "queued_ns"), 3000);
	ck_assert_int_eq(num(j, "lnd_ns"), 1000);
	ck_assert_int_eq(num(j, "latency_ns"), 4000);
	json_decref(j);

	/* No send seen, no credits seen, no NIDs: null, never a guess. */
	r.flags = LES_LNET_F_COMMIT;
	r.msg_type = 3;
	j = format_lnet(&r);
	ck_assert_str_eq(str(j, "msg_type"), "reply");
	ck_assert(json_is_null(json_object_get(j, "match_bits")));
	ck_assert(json_is_null(json_object_get(j, "queued_ns")));
	ck_assert(json_is_null(json_object_get(j, "peer_credits")));
	ck_assert(json_is_null(json_object_get(j, "ni_nid")));
	ck_assert(json_is_null(json_object_get(j, "interface")));
	json_decref(j);
}
END_TEST

/* An access record's FID, with --file-id: on Lustre only, null when unknown. */
static json_t *format_access(const struct les_rec_access *r, const struct les_observed_mount *m)
{
	struct les_fmt_ctx afc;
	struct jw w;
	json_t *j;

	les_fmt_ctx_init(&afc, "node1", true);
	jw_init(&w, buf, sizeof(buf));
	les_format_access(&w, &afc, m, r, NULL);
	ck_assert(!w.overflow);
	j = json_loadb(buf, w.len, 0, NULL);
	ck_assert(j);
	return j;
}

START_TEST(test_access_fid)
{
	struct les_observed_mount lustre = {.family = LES_FS_LUSTRE}, nfs = {.family = LES_FS_NFS};
	struct les_rec_access r = {.kind = LES_REC_ACCESS, .op = LES_OP_READ, .ino = 7};
	json_t *j;

	j = format_access(&r, &lustre);
	ck_assert(json_is_null(json_object_get(j, "fid"))); /* Lustre without BTF */
	json_decref(j);
	j = format_access(&r, &nfs);
	ck_assert(!json_object_get(j, "fid"));
	json_decref(j);
	r.flags = LES_ACCESS_F_FID;
	r.fid = (struct les_lu_fid){.seq = 0x200000401ULL, .oid = 0x1, .ver = 0};
	j = format_access(&r, &lustre);
	ck_assert_str_eq(str(j, "fid"), "[0x200000401:0x1:0x0]");
	ck_assert_int_eq(num(j, "ino"), 7);
	json_decref(j);
}
END_TEST

START_TEST(test_lock_wait)
{
	struct les_rec_rpc r;
	json_t *j;

	rpc_init(&r, LES_PROTO_LDLM, LES_RPC_OP_LOCK_COMPLETION);
	r.req_id = 0;
	j = format_rpc(&r);
	ck_assert_str_eq(str(j, "op"), "lock_wait");
	ck_assert_str_eq(str(j, "proto"), "ldlm");
	ck_assert_str_eq(str(j, "function"), "ldlm_completion_ast");
	ck_assert(json_is_null(json_object_get(j, "req_id")));
	ck_assert(json_is_null(json_object_get(j, "parent_wait_id")));
	ck_assert(json_is_false(json_object_get(j, "blocked")));
	json_decref(j);
	/* The grant wait inside an enqueue names the enqueue's wait. */
	r.wait_id = 12;
	r.parent_wait_id = 11;
	r.flags = LES_RPC_F_LOCK_BLOCKED;
	j = format_rpc(&r);
	ck_assert_int_eq(num(j, "wait_id"), 12);
	ck_assert_int_eq(num(j, "parent_wait_id"), 11);
	ck_assert(json_is_true(json_object_get(j, "blocked")));
	json_decref(j);
	/* "blocked" is the grant wait's: an enqueue has none. */
	r.rpc_op = LES_RPC_OP_LOCK_ENQUEUE;
	j = format_rpc(&r);
	ck_assert_str_eq(str(j, "function"), "ldlm_cli_enqueue");
	ck_assert(!json_object_get(j, "blocked"));
	json_decref(j);
}
END_TEST

START_TEST(test_sunrpc)
{
	struct les_rec_rpc r;
	json_t *j;

	rpc_init(&r, LES_PROTO_SUNRPC, LES_RPC_OP_NONE);
	r.opcode = 1;
	r.flags = LES_RPC_F_OPCODE;
	r.prog = 100003;
	r.vers = 3;
	r.backlog_ns = 10;
	r.rtt_ns = 20;
	r.execute_ns = 51000000;
	strcpy(r.name, "getattr");
	j = format_rpc(&r);
	ck_assert_str_eq(str(j, "op"), "getattr");
	ck_assert_str_eq(str(j, "proto"), "sunrpc");
	ck_assert_str_eq(str(j, "program"), "nfs");
	ck_assert_int_eq(num(j, "version"), 3);
	ck_assert_int_eq(num(j, "opcode"), 1);
	ck_assert_int_eq(num(j, "backlog_ns"), 10);
	ck_assert_int_eq(num(j, "rtt_ns"), 20);
	ck_assert_int_eq(num(j, "execute_ns"), 51000000);
	ck_assert(!json_object_get(j, "function"));
	json_decref(j);

	/* A name without its NUL is not trusted. */
	memset(r.name, 'A', sizeof(r.name));
	j = format_rpc(&r);
	ck_assert_str_eq(str(j, "op"), "unknown");
	json_decref(j);
	ck_assert_str_eq(les_format_rpc_op(&r), "unknown");
}
END_TEST

START_TEST(test_fuse_unchanged)
{
	struct les_rec_rpc r;
	json_t *j;

	rpc_init(&r, LES_PROTO_FUSE, LES_RPC_OP_NONE);
	r.opcode = 16; /* write, always valid for FUSE even without the flag */
	j = format_rpc(&r);
	ck_assert_str_eq(str(j, "op"), "write");
	ck_assert_int_eq(num(j, "opcode"), 16);
	ck_assert(!json_object_get(j, "opcode_name"));
	ck_assert(!json_object_get(j, "execute_ns"));
	ck_assert(!json_object_get(j, "service_ns"));
	/* The daemon's read not seen: the split is null, not 0. */
	ck_assert(json_is_null(json_object_get(j, "queued_ns")));
	ck_assert(json_is_null(json_object_get(j, "daemon_ns")));
	json_decref(j);

	r.flags |= LES_RPC_F_DAEMON_READ;
	r.backlog_ns = 1200;
	r.rtt_ns = 200000000;
	j = format_rpc(&r);
	ck_assert_int_eq(num(j, "queued_ns"), 1200);
	ck_assert_int_eq(num(j, "daemon_ns"), 200000000);
	ck_assert(!json_object_get(j, "backlog_ns"));
	json_decref(j);
}
END_TEST

START_TEST(test_events)
{
	struct les_rec_rpc_event e;
	json_t *j;

	memset(&e, 0, sizeof(e));
	e.kind = LES_REC_RPC_EVENT;
	e.proto = LES_PROTO_PTLRPC;
	e.event = LES_EV_RESEND;
	e.req_id = 5;
	e.parent_op_id = 6;
	e.task.pid = 42;
	e.flags = LES_RPC_F_ASYNC;
	e.worker_pid = 7;
	strcpy(e.worker_comm, "ptlrpcd_00_00");
	j = format_event(&e);
	ck_assert_str_eq(str(j, "event"), "resend");
	ck_assert(!json_object_get(j, "opcode"));
	ck_assert(!json_object_get(j, "procedure"));
	ck_assert_str_eq(str(j, "worker_comm"), "ptlrpcd_00_00");
	ck_assert_int_eq(num(j, "pid"), 42);
	ck_assert(json_is_null(json_object_get(j, "target")));
	json_decref(j);

	/* An import's eviction: no request, its target where BTF gave it. */
	e.event = LES_EV_EVICT;
	e.req_id = 0;
	e.flags = LES_RPC_F_NO_BTF_TASK | LES_RPC_F_TARGET;
	memcpy(e.name, "lustre-OST0000-osc-ffff8a2b4c5d6", LES_RPC_NAME_LEN);
	j = format_event(&e);
	ck_assert_str_eq(str(j, "event"), "evict");
	ck_assert_str_eq(str(j, "target"), "lustre-OST0000");
	ck_assert(json_is_null(json_object_get(j, "req_id")));
	json_decref(j);
	memset(e.name, 0, sizeof(e.name));

	e.proto = LES_PROTO_SUNRPC;
	e.event = LES_EV_RETRANSMIT;
	e.flags = LES_RPC_F_OPCODE;
	e.opcode = 7;
	strcpy(e.name, "write");
	j = format_event(&e);
	ck_assert_str_eq(str(j, "event"), "retransmit");
	ck_assert_str_eq(str(j, "procedure"), "write");
	ck_assert_int_eq(num(j, "opcode"), 7);
	ck_assert(!json_object_get(j, "worker_comm"));
	json_decref(j);
}
END_TEST

/*
 * errno and errno_class of a record, for errnos the context encoded at
 * start and beyond them: the same members either way, as the record has
 * them (the positive errno).
 */
START_TEST(test_errno_members)
{
	static const int errs[] = { 0, 2, 5, 110, 255, 256, 4095 };
	struct les_rec_rpc r;

	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		const char *want = les_errno_class_name(les_errno_class(errs[i]));
		json_t *j;

		rpc_init(&r, LES_PROTO_FUSE, LES_RPC_OP_NONE);
		r.err = errs[i];
		j = format_rpc(&r);
		ck_assert_int_eq(num(j, "errno"), errs[i]);
		if (want)
			ck_assert_str_eq(str(j, "errno_class"), want);
		else
			ck_assert(json_is_null(json_object_get(j, "errno_class")));
		json_decref(j);
	}
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(les_ptlrpc_opcode_name(3), "ost_read");
	ck_assert_str_eq(les_ptlrpc_opcode_name(36), "mds_reint");
	ck_assert_str_eq(les_ptlrpc_opcode_name(101), "ldlm_enqueue");
	ck_assert_str_eq(les_ptlrpc_opcode_name(400), "obd_ping");
	ck_assert_ptr_null(les_ptlrpc_opcode_name(0));
	ck_assert_ptr_null(les_ptlrpc_opcode_name(14));
	ck_assert_ptr_null(les_ptlrpc_opcode_name(65535));
	ck_assert_ptr_null(les_rpc_op_name(LES_RPC_OP_NONE));
	for (unsigned int op = LES_RPC_OP_NONE + 1; op < LES_RPC_OP_MAX; op++)
		ck_assert_ptr_nonnull(les_rpc_op_name(op));
	ck_assert_str_eq(les_sunrpc_prog_name(100003), "nfs");
	ck_assert_ptr_null(les_sunrpc_prog_name(1));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rpc_format");
	TCase *tc = tcase_create("records");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_ptlrpc_opcode_absent);
	tcase_add_test(tc, test_ptlrpc_opcode_present);
	tcase_add_test(tc, test_ptlrpc_request_fields);
	tcase_add_test(tc, test_ptlrpc_target_names);
	tcase_add_test(tc, test_lnet_nid_names);
	tcase_add_test(tc, test_access_fid);
	tcase_add_test(tc, test_lock_wait);
	tcase_add_test(tc, test_sunrpc);
	tcase_add_test(tc, test_fuse_unchanged);
	tcase_add_test(tc, test_events);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_errno_members);
	tcase_add_test(tc, test_lnet_message);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
