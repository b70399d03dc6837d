// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Saved rpc and srv lines back into the join's records (see joinrec.h). */
#include <arpa/inet.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include "decode/capture.h"
#include "decode/joinrec.h"
#include "format/format.h"

/* The numeric address before '@' of a non-IP network ("0" of "0@lo"). */
static bool nid_number(const char *s, size_t len, struct les_lnet_nid *nid)
{
	char buf[16], *end;
	unsigned long v;

	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = 0;
	v = strtoul(buf, &end, 10);
	if (*end || v > UINT32_MAX)
		return false;
	nid->size = 0;
	nid->addr_be[0] = htonl((uint32_t)v);
	return true;
}

static bool nid_ip(const char *s, size_t len, struct les_lnet_nid *nid)
{
	char buf[INET6_ADDRSTRLEN];

	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = 0;
	if (inet_pton(AF_INET, buf, nid->addr_be) == 1) {
		nid->size = 0;
		return true;
	}
	if (inet_pton(AF_INET6, buf, nid->addr_be) == 1) {
		nid->size = 12; /* 16 bytes of address */
		return true;
	}
	return false;
}

bool les_lnet_nid_parse(const char *s, struct les_lnet_nid *nid)
{
	const char *at = s ? strrchr(s, '@') : NULL;
	const char *net, *digits;
	unsigned long num = 0;
	bool is_ip = false;
	int type;

	memset(nid, 0, sizeof(*nid));
	if (!at)
		return false;
	/* The network: its type's name, then its number unless 0 ("tcp", "o2ib1"): trailing digits. */
	net = at + 1;
	for (digits = net + strlen(net); digits > net && digits[-1] >= '0' && digits[-1] <= '9';
	     digits--)
		;
	type = les_lnet_lnd_type(net, (size_t)(digits - net), &is_ip);
	if (type < 0)
		return false;
	if (*digits) {
		char *end;

		num = strtoul(digits, &end, 10);
		if (*end || num > UINT16_MAX)
			return false;
	}
	nid->type = (uint8_t)type;
	nid->num_be = htons((uint16_t)num);
	return is_ip ? nid_ip(s, (size_t)(at - s), nid) : nid_number(s, (size_t)(at - s), nid);
}

static uint64_t u64_of(json_t *o, const char *key, bool *valid)
{
	json_t *v = json_object_get(o, key);
	bool ok = json_is_integer(v) && json_integer_value(v) >= 0;

	if (valid)
		*valid = ok;
	return ok ? (uint64_t)json_integer_value(v) : 0;
}

/* Copy a string member into a fixed field; false when absent (null). */
static bool copy_str(json_t *o, const char *key, char *dst, size_t size)
{
	const char *v = json_string_value(json_object_get(o, key));

	if (!v)
		return false;
	strncpy(dst, v, size - 1);
	dst[size - 1] = 0;
	return true;
}

/* A client's PtlRPC request: the fields its key and the rpc_join line read. */
static void read_client(json_t *doc, uint64_t ts, struct les_rec_rpc *c)
{
	bool ok;

	c->kind = LES_REC_RPC;
	c->proto = LES_PROTO_PTLRPC;
	c->rpc_op = LES_RPC_OP_REQUEST;
	c->ts_ns = ts;
	c->req_id = u64_of(doc, "req_id", NULL);
	c->backlog_ns = u64_of(doc, "queued_ns", NULL);
	c->rtt_ns = u64_of(doc, "service_ns", NULL);
	c->resends = (uint32_t)u64_of(doc, "resends", NULL);
	c->task.pid = (uint32_t)u64_of(doc, "pid", NULL);
	copy_str(doc, "comm", c->task.comm, sizeof(c->task.comm));
	c->xid = u64_of(doc, "xid", &ok);
	if (ok)
		c->flags |= LES_RPC_F_XID;
	/* Its PUTs' LNet wait, null where no lnet record was linked to it. */
	c->lnet_wait_ns = u64_of(doc, "lnet_wait_ns", &ok);
	if (ok)
		c->flags |= LES_RPC_F_LNET;
	if (les_lnet_nid_parse(json_string_value(json_object_get(doc, "nid")), &c->nid))
		c->flags |= LES_RPC_F_NID;
}

/* The server's names and ids: service, target, opcode, NIDs, job. */
static void read_server_ids(json_t *doc, struct les_rec_srv *s)
{
	bool ok;

	copy_str(doc, "service", s->service, sizeof(s->service));
	copy_str(doc, "thread", s->comm, sizeof(s->comm));
	if (copy_str(doc, "target", s->target, sizeof(s->target)))
		s->flags |= LES_SRV_F_TARGET;
	if (copy_str(doc, "lustre_jobid", s->jobid, sizeof(s->jobid)))
		s->flags |= LES_SRV_F_JOBID;
	s->opcode = (uint16_t)u64_of(doc, "opcode", &ok);
	if (ok)
		s->flags |= LES_SRV_F_OPCODE;
	s->xid = u64_of(doc, "xid", NULL);
	s->transno = u64_of(doc, "transno", NULL);
	s->msg_flags = (uint32_t)u64_of(doc, "msg_flags", NULL);
	s->tid = (uint32_t)u64_of(doc, "tid", NULL);
	s->status = (int32_t)json_integer_value(json_object_get(doc, "status"));
	/* rq_peer and rq_self are read together (LES_SRV_F_PEER). */
	if (les_lnet_nid_parse(json_string_value(json_object_get(doc, "client_nid")), &s->peer) &&
	    les_lnet_nid_parse(json_string_value(json_object_get(doc, "server_nid")), &s->self))
		s->flags |= LES_SRV_F_PEER;
}

/* Inside the handling: the bulk transfer and the OSD's block I/O, null where not traced. */
static void read_server_io(json_t *doc, struct les_rec_srv *s)
{
	bool ok;

	s->bulk_ns = u64_of(doc, "bulk_ns", &ok);
	if (ok)
		s->flags |= LES_SRV_F_BULK;
	s->io_ns = u64_of(doc, "io_ns", &ok);
	if (ok) {
		s->io_count = (uint32_t)u64_of(doc, "io_count", NULL);
		s->flags |= LES_SRV_F_IO;
	}
}

/*
 * The server's steps, back from its durations on the line's clock:
 * handling ends at ts, a thread took it handle_ns before, it arrived
 * queue_ns before that; NRS enqueue and the reply from arrival.
 */
static void read_server_steps(json_t *doc, uint64_t ts, struct les_rec_srv *s)
{
	uint64_t queue = u64_of(doc, "queue_ns", NULL), handle = u64_of(doc, "handle_ns", NULL);
	uint64_t incoming, reply;
	bool has_nrs, has_reply;

	incoming = u64_of(doc, "incoming_ns", &has_nrs);
	reply = u64_of(doc, "reply_ns", &has_reply);
	s->ts_ns = ts;
	s->start_ns = ts - handle;
	s->handler_ns = s->start_ns;
	s->arrival_real_ns = s->start_ns - queue;
	if (has_nrs) {
		s->nrs_ns = s->arrival_real_ns + incoming;
		s->flags |= LES_SRV_F_NRS;
	}
	if (has_reply && json_is_true(json_object_get(doc, "replied"))) {
		s->reply_ns = s->arrival_real_ns + reply;
		s->flags |= LES_SRV_F_REPLY;
	}
	read_server_io(doc, s);
}

static void read_server(json_t *doc, uint64_t ts, struct les_rec_srv *s)
{
	s->kind = LES_REC_SRV;
	s->proto = LES_PROTO_PTLRPC;
	read_server_ids(doc, s);
	read_server_steps(doc, ts, s);
}

static enum les_joinrec_kind classify(json_t *doc)
{
	const char *type = json_string_value(json_object_get(doc, "type"));
	const char *proto = json_string_value(json_object_get(doc, "proto"));
	const char *op = json_string_value(json_object_get(doc, "op"));

	if (!type || !proto)
		return LES_JOINREC_OTHER;
	if (!strcmp(proto, "sunrpc"))
		return strcmp(type, "srv") && strcmp(type, "rpc") ? LES_JOINREC_OTHER
								  : LES_JOINREC_SKIPPED;
	if (strcmp(proto, "ptlrpc"))
		return LES_JOINREC_OTHER;
	if (!strcmp(type, "srv"))
		return LES_JOINREC_SERVER;
	/* The client's other PtlRPC records (queue_wait, lock waits) are no request. */
	if (!strcmp(type, "rpc") && op && !strcmp(op, "request"))
		return LES_JOINREC_CLIENT;
	return LES_JOINREC_OTHER;
}

enum les_joinrec_kind les_joinrec_parse(const char *line, struct les_rec_rpc *c,
					struct les_rec_srv *s)
{
	json_t *doc = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
	enum les_joinrec_kind kind = LES_JOINREC_BAD;
	uint64_t ts;

	if (!json_is_object(doc))
		goto out;
	kind = classify(doc);
	if (kind == LES_JOINREC_OTHER || kind == LES_JOINREC_SKIPPED)
		goto out;
	ts = les_capture_parse_ts(json_string_value(json_object_get(doc, "ts")));
	if (!ts) {
		kind = LES_JOINREC_BAD;
		goto out;
	}
	if (kind == LES_JOINREC_CLIENT) {
		memset(c, 0, sizeof(*c));
		read_client(doc, ts, c);
	} else {
		memset(s, 0, sizeof(*s));
		read_server(doc, ts, s);
	}
out:
	json_decref(doc);
	return kind;
}
