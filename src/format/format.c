// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Records to JSON Lines. Field names are part of the tool's interface. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "util/clock.h"
#include "format/format.h"
#include "model/kinds.h"
#include "model/ops.h"
#include "model/rpcjoin.h"

/* The access op, intent and method members of a record. */
static void fill_access_op(struct jw *w, unsigned int op, unsigned int method)
{
	jw_lit_cstr(w, JW_LIT("op"), les_op_name(op));
	jw_lit_cstr(w, JW_LIT("access_intent"), les_intent_name(les_op_intent(op)));
	jw_lit_cstr(w, JW_LIT("method"), les_attach_method_name(method));
}

static void fill_errno(struct jw *w, int err)
{
	jw_lit_i64(w, JW_LIT("errno"), err);
	jw_lit_cstr(w, JW_LIT("errno_class"), les_errno_class_name(les_errno_class(err)));
}

/* Members that are the same for every record with the same op or errno. */
static void encode_constant_members(struct les_fmt_ctx *fc)
{
	struct les_fmt_members *m;
	struct jw w;

	for (unsigned int op = 0; op < LES_OP_MAX; op++) {
		for (unsigned int method = 0; method < LES_ATTACH_MAX; method++) {
			m = &fc->access_op[op][method];
			jw_init(&w, m->json, sizeof(m->json));
			jw_obj_begin(&w);
			fill_access_op(&w, op, method);
			jw_obj_end(&w);
			m->len = (uint8_t)jw_members(&w);
		}
	}
	for (int e = 0; e <= LES_FMT_ERRNO_MAX; e++) {
		m = &fc->errno_members[e];
		jw_init(&w, m->json, sizeof(m->json));
		jw_obj_begin(&w);
		fill_errno(&w, e);
		jw_obj_end(&w);
		m->len = (uint8_t)jw_members(&w);
	}
}

void les_fmt_ctx_init(struct les_fmt_ctx *fc, const char *host, bool file_id)
{
	struct jw w;

	jw_init(&w, fc->host_json, sizeof(fc->host_json));
	jw_obj_begin(&w);
	jw_lit_cstr(&w, JW_LIT("host"), host);
	jw_obj_end(&w);
	/* A fragment spliced into each record. */
	fc->host_json_len = jw_members(&w);
	fc->file_id = file_id;
	encode_constant_members(fc);
	les_fmt_ctx_sync_clock(fc);
}

void les_fmt_ctx_sync_clock(struct les_fmt_ctx *fc)
{
	fc->mono_to_epoch_ns = les_clock_real_minus_mono_ns();
}

uint64_t les_fmt_epoch_ns(const struct les_fmt_ctx *fc, uint64_t mono_ns)
{
	/* Unsigned: a corrupt timestamp wraps instead of overflowing. */
	return mono_ns + (uint64_t)fc->mono_to_epoch_ns;
}

/* A pre-encoded fragment of object members, with its separating comma. */
static void put_fragment(struct jw *w, const char *frag, size_t n)
{
	jw_raw_members(w, frag, n);
}

static void put_common(struct jw *w, const struct les_fmt_ctx *fc, const char *type,
		       uint64_t ts_mono, const struct les_observed_mount *m)
{
	jw_obj_begin(w);
	jw_lit_cstr(w, JW_LIT("type"), type);
	jw_lit_time(w, JW_LIT("ts"), les_fmt_epoch_ns(fc, ts_mono));
	put_fragment(w, fc->host_json, fc->host_json_len);
	if (m) {
		put_fragment(w, m->json, m->json_len);
	} else {
		jw_lit_null(w, JW_LIT("fs_type"));
		jw_lit_null(w, JW_LIT("fs"));
		jw_lit_null(w, JW_LIT("mount"));
	}
}

/*
 * Who the record belongs to: the kernel's task fields and, when enriched,
 * the process, user, actor, job and tags. The members that are the same
 * for every record of the process come encoded from the enricher.
 */
static void put_who(struct jw *w, const struct les_task *t, const struct les_enriched *en,
		    const char *wire_job)
{
	jw_lit_u64(w, JW_LIT("pid"), t->pid);
	jw_lit_u64(w, JW_LIT("tid"), t->tid);
	if (en && en->ident_json_len) {
		jw_raw_members(w, en->ident_json, en->ident_json_len);
	} else {
		jw_lit_u64(w, JW_LIT("uid"), t->uid);
		jw_lit_u64(w, JW_LIT("gid"), t->gid);
		jw_lit_strz(w, JW_LIT("comm"), t->comm, sizeof(t->comm));
		if (!en)
			return;
		jw_lit_cstr(w, JW_LIT("process"), en->process);
		jw_lit_cstr(w, JW_LIT("username"), en->username);
		jw_lit_cstr(w, JW_LIT("actor_type"), en->actor_type);
	}
	if (wire_job) {
		jw_lit_cstr(w, JW_LIT("job_id"), wire_job);
		jw_lit_cstr(w, JW_LIT("job_source"), les_job_source_name(LES_JOB_LUSTRE));
	} else if (en->job_json_len) {
		jw_raw_members(w, en->job_json, en->job_json_len);
	} else {
		jw_raw_members(w, en->attrib->job_json, en->attrib->job_json_len);
	}
	jw_raw_members(w, en->attrib->json, en->attrib->json_len);
}

static void put_errno(struct jw *w, const struct les_fmt_ctx *fc, int err)
{
	/* Records carry the positive errno (0 on success). */
	if (err >= 0 && err <= LES_FMT_ERRNO_MAX && fc->errno_members[err].len)
		jw_raw_members(w, fc->errno_members[err].json, fc->errno_members[err].len);
	else
		fill_errno(w, err);
}

static void put_dev(struct jw *w, uint32_t kdev)
{
	char buf[24];
	size_t n = 0;
	unsigned int parts[2] = {kdev >> 20, kdev & 0xfffff};

	/* "major:minor", as ls -l and /proc/self/mountinfo print it. */
	for (int p = 0; p < 2; p++) {
		char digits[12];
		int d = 0;
		unsigned int v = parts[p];

		do {
			digits[d++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		while (d)
			buf[n++] = digits[--d];
		if (p == 0)
			buf[n++] = ':';
	}
	jw_lit_str(w, JW_LIT("dev"), buf, n);
}

/*
 * A Lustre file's FID as lfs path2fid prints it ("[0x200000401:0x1:0x0]"),
 * null on Lustre where it is unknown (no module BTF), absent elsewhere.
 */
static void put_fid(struct jw *w, const struct les_observed_mount *m,
		    const struct les_rec_access *r)
{
	char fid[64];
	int n;

	if (r->flags & LES_ACCESS_F_FID) {
		n = snprintf(fid, sizeof(fid), "[0x%llx:0x%x:0x%x]", (unsigned long long)r->fid.seq,
			     r->fid.oid, r->fid.ver);
		jw_lit_str(w, JW_LIT("fid"), fid, (size_t)n);
	} else if (m && m->family == LES_FS_LUSTRE) {
		jw_lit_null(w, JW_LIT("fid"));
	}
}

void les_format_access(struct jw *w, const struct les_fmt_ctx *fc,
		       const struct les_observed_mount *m, const struct les_rec_access *r,
		       const struct les_enriched *en)
{
	put_common(w, fc, "access", r->ts_ns, m);
	if (r->op < LES_OP_MAX && r->method < LES_ATTACH_MAX && fc->access_op[r->op][r->method].len)
		jw_raw_members(w, fc->access_op[r->op][r->method].json,
			       fc->access_op[r->op][r->method].len);
	else
		fill_access_op(w, r->op, r->method);
	jw_lit_u64(w, JW_LIT("op_id"), r->op_id);
	put_who(w, &r->task, en, NULL);
	jw_lit_u64(w, JW_LIT("latency_ns"), r->latency_ns);
	jw_lit_u64(w, JW_LIT("bytes"), r->bytes);
	put_errno(w, fc, r->err);
	jw_lit_u64(w, JW_LIT("rpc_count"), r->rpc_count);
	jw_lit_u64(w, JW_LIT("rpc_wait_ns"), r->rpc_wait_ns);
	if (fc->file_id) {
		put_dev(w, r->dev);
		jw_lit_u64(w, JW_LIT("ino"), r->ino);
		put_fid(w, m, r);
	}
	jw_obj_end(w);
	jw_newline(w);
}

/* The sunrpc procedure name of a record, or NULL when it has none. */
static const char *rpc_name(const char *name)
{
	if (!name[0] || !memchr(name, 0, LES_RPC_NAME_LEN))
		return NULL;
	return name;
}

/*
 * The target of a Lustre client device name: "lustre-OST0001" of
 * "lustre-OST0001-osc-ffff8a2b4c5d6000" (an import's obd_name is
 * <fsname>-<target>-<type>-<instance>, and the instance may be cut off
 * at LES_RPC_NAME_LEN); a name of another form (the MGC's) as it is.
 * Returns its length.
 */
size_t les_ptlrpc_target_len(const char *name, size_t max)
{
	static const char *const types[] = { "-osc-", "-mdc-", "-osp-", "-lwp-" };
	size_t len = strnlen(name, max), cut = len;

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		for (size_t at = 0; at + 5 <= len; at++)
			if (!memcmp(name + at, types[i], 5) && at && at < cut)
				cut = at;
	}
	return cut;
}

/* LNet's network type names (lnet/lnet/nidstrings.c), by LND number. */
static const struct {
	unsigned char type;
	bool ip;
	const char *name;
} lnds[] = {
	{2, true, "tcp"},   {5, true, "o2ib"}, {9, false, "lo"},
	{13, false, "gni"}, {14, true, "gip"}, {15, false, "ptlf"},
	{16, false, "kfi"}, {18, true, "efa"}, {19, false, "bxi3f"},
};

static const char *lnet_lnd_name(unsigned int type, bool *is_ip)
{
	for (size_t i = 0; i < sizeof(lnds) / sizeof(lnds[0]); i++)
		if (lnds[i].type == type) {
			*is_ip = lnds[i].ip;
			return lnds[i].name;
		}
	return NULL;
}

int les_lnet_lnd_type(const char *name, size_t len, bool *is_ip)
{
	for (size_t i = 0; i < sizeof(lnds) / sizeof(lnds[0]); i++)
		if (strlen(lnds[i].name) == len && !memcmp(lnds[i].name, name, len)) {
			*is_ip = lnds[i].ip;
			return lnds[i].type;
		}
	return -1;
}

/*
 * An LNet NID as lctl prints it ("192.168.1.10@tcp", "0@lo",
 * "10.1.2.3@o2ib1", "fd00::1@tcp"): the address, dotted or colon form on IP
 * networks and a decimal number on others, then '@', the network type's
 * name and its number unless 0. An unknown type is "<type:num>" after the
 * address in hex words, as Lustre does. Returns the length, 0 when it
 * does not fit or the NID is LNET_NID_ANY.
 */
/* v in decimal at p, without printf (the NIDs of every server record); returns its length. */
static size_t put_dec(char *p, unsigned int v)
{
	char rev[10];
	size_t n = 0, len;

	do {
		rev[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (len = n; n;)
		*p++ = rev[--n];
	return len;
}

/* IPv6 addresses and unknown network types: printf's forms. */
static size_t nid_str_other(const struct les_lnet_nid *nid, const char *lnd, bool is_ip,
			    unsigned int num, char *buf, size_t size)
{
	unsigned int addr_len = nid->size + 4u;
	char addr[INET6_ADDRSTRLEN];
	int n;

	if (lnd && is_ip && addr_len == 16)
		inet_ntop(AF_INET6, nid->addr_be, addr, sizeof(addr));
	else {
		size_t at = 0;

		for (unsigned int i = 0; i < (addr_len + 3) / 4; i++)
			at += (size_t)snprintf(addr + at, sizeof(addr) - at, "%s%x", i ? ":" : "",
					       ntohl(nid->addr_be[i]));
		lnd = NULL;
	}
	if (!lnd)
		n = snprintf(buf, size, "%s@<%u:%u>", addr, nid->type, num);
	else if (num)
		n = snprintf(buf, size, "%s@%s%u", addr, lnd, num);
	else
		n = snprintf(buf, size, "%s@%s", addr, lnd);
	return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

size_t les_lnet_nid_str(const struct les_lnet_nid *nid, char *buf, size_t size)
{
	unsigned int num = ntohs(nid->num_be), addr_len = nid->size + 4u, a;
	bool is_ip = false;
	const char *lnd = lnet_lnd_name(nid->type, &is_ip);
	char text[LES_LNET_NID_STR_MAX];
	size_t at = 0, lnd_len;

	if (nid->type == 0xff || addr_len > sizeof(nid->addr_be))
		return 0; /* LNET_NID_ANY, or no NID */
	if (!lnd || addr_len != 4)
		return nid_str_other(nid, lnd, is_ip, num, buf, size);
	/* A known network with a 4-byte address: dotted quad on IP, else decimal. */
	a = ntohl(nid->addr_be[0]);
	if (is_ip)
		for (int shift = 24; shift >= 0; shift -= 8) {
			at += put_dec(text + at, (a >> shift) & 0xff);
			text[at++] = shift ? '.' : '@';
		}
	else {
		at += put_dec(text + at, a);
		text[at++] = '@';
	}
	lnd_len = strlen(lnd);
	memcpy(text + at, lnd, lnd_len);
	at += lnd_len;
	if (num)
		at += put_dec(text + at, num);
	if (at >= size)
		return 0;
	memcpy(buf, text, at);
	buf[at] = '\0';
	return at;
}

/* A NID under key, null where not valid (or not printable). */
static void put_nid(struct jw *w, const char *key, size_t key_len, const struct les_lnet_nid *nid,
		    bool valid)
{
	char text[LES_LNET_NID_STR_MAX];
	size_t len = valid ? les_lnet_nid_str(nid, text, sizeof(text)) : 0;

	jw_lit_key(w, key, key_len);
	if (len)
		jw_str(w, text, len);
	else
		jw_null(w);
}

/*
 * A PtlRPC request's xid, target and server NID: null where module BTF did
 * not give them; its own NID (client_nid) null where the LNet plane did not
 * see its PUT sent.
 */
static void put_ptlrpc_ids(struct jw *w, const struct les_rec_rpc *r)
{
	if (r->flags & LES_RPC_F_XID)
		jw_lit_u64(w, JW_LIT("xid"), r->xid);
	else
		jw_lit_null(w, JW_LIT("xid"));
	if (r->flags & LES_RPC_F_TARGET)
		jw_lit_str(w, JW_LIT("target"), r->name,
			   les_ptlrpc_target_len(r->name, LES_RPC_NAME_LEN));
	else
		jw_lit_null(w, JW_LIT("target"));
	put_nid(w, JW_LIT("nid"), &r->nid, r->flags & LES_RPC_F_NID);
	put_nid(w, JW_LIT("client_nid"), &r->self_nid, r->flags & LES_RPC_F_SELF_NID);
}

const char *les_format_rpc_op(const struct les_rec_rpc *r)
{
	const char *name;

	switch (r->proto) {
	case LES_PROTO_FUSE:
		return les_fuse_opcode_name(r->opcode);
	case LES_PROTO_SUNRPC:
		name = rpc_name(r->name);
		return name ? name : "unknown";
	default:
		name = les_rpc_op_name(r->rpc_op);
		return name ? name : "unknown";
	}
}

/*
 * The request's opcode when the record has one: FUSE and sunrpc always,
 * PtlRPC only where it could be read reliably (else absent, not 0).
 */
static void put_opcode(struct jw *w, unsigned int proto, unsigned int opcode, unsigned int flags)
{
	const char *name;

	if (proto != LES_PROTO_FUSE && !(flags & LES_RPC_F_OPCODE))
		return;
	jw_lit_u64(w, JW_LIT("opcode"), opcode);
	if (proto != LES_PROTO_PTLRPC)
		return;
	name = les_ptlrpc_opcode_name(opcode);
	if (name)
		jw_lit_cstr(w, JW_LIT("opcode_name"), name);
}

/* A thread's wait (queue_wait, lock_wait): it has an id, and may run inside another. */
bool les_rpc_op_is_wait(unsigned int rpc_op)
{
	return rpc_op == LES_RPC_OP_QUEUE_WAIT || rpc_op == LES_RPC_OP_LOCK_ENQUEUE ||
	       rpc_op == LES_RPC_OP_LOCK_COMPLETION;
}

static void put_req_id(struct jw *w, uint64_t req_id)
{
	if (req_id)
		jw_lit_u64(w, JW_LIT("req_id"), req_id);
	else
		jw_lit_null(w, JW_LIT("req_id"));
}

static void put_worker(struct jw *w, unsigned int flags, uint32_t pid, const char *comm)
{
	if (!(flags & LES_RPC_F_ASYNC))
		return;
	jw_lit_u64(w, JW_LIT("worker_pid"), pid);
	jw_lit_strz(w, JW_LIT("worker_comm"), comm, LES_COMM_LEN);
}

/*
 * Who a request belongs to: the op it ran inside, the submitter (charged to
 * wire_job when not NULL, see les_enrich_wire_job), its worker.
 */
static void put_submitter(struct jw *w, uint64_t parent_op_id, const struct les_task *t,
			  const struct les_enriched *en, const char *wire_job, uint32_t flags,
			  uint32_t worker_pid, const char *worker_comm)
{
	if (parent_op_id)
		jw_lit_u64(w, JW_LIT("parent_op_id"), parent_op_id);
	else
		jw_lit_null(w, JW_LIT("parent_op_id"));
	put_who(w, t, en, wire_job);
	put_worker(w, flags, worker_pid, worker_comm);
}

/* A socket address as "a.b.c.d:port" or "[v6]:port"; null when not valid. */
static void put_sock_addr(struct jw *w, const char *key, size_t key_len,
			  const struct les_sock_addr *a, bool valid)
{
	char host[INET6_ADDRSTRLEN], text[INET6_ADDRSTRLEN + 16];
	int af = a->family == 10 ? AF_INET6 : AF_INET;
	int len;

	jw_lit_key(w, key, key_len);
	if (!valid || (a->family != 2 && a->family != 10) ||
	    !inet_ntop(af, a->addr_be, host, sizeof(host))) {
		jw_null(w);
		return;
	}
	len = snprintf(text, sizeof(text), af == AF_INET6 ? "[%s]:%u" : "%s:%u", host, a->port);
	jw_str(w, text, (size_t)len);
}

/* A FUSE request's time in the input queue and in the daemon; null where the read was not seen. */
static void put_fuse_split(struct jw *w, const struct les_rec_rpc *r)
{
	if (!(r->flags & LES_RPC_F_DAEMON_READ)) {
		jw_lit_null(w, JW_LIT("queued_ns"));
		jw_lit_null(w, JW_LIT("daemon_ns"));
		return;
	}
	jw_lit_u64(w, JW_LIT("queued_ns"), r->backlog_ns);
	jw_lit_u64(w, JW_LIT("daemon_ns"), r->rtt_ns);
}

void les_format_rpc(struct jw *w, const struct les_fmt_ctx *fc, const struct les_observed_mount *m,
		    const struct les_rec_rpc *r, const struct les_enriched *en,
		    const char *wire_job)
{
	put_common(w, fc, "rpc", r->ts_ns, m);
	jw_lit_cstr(w, JW_LIT("op"), les_format_rpc_op(r));
	jw_lit_cstr(w, JW_LIT("proto"), les_rpc_proto_name(r->proto));
	put_opcode(w, r->proto, r->opcode, r->flags);
	if (r->flags & LES_RPC_F_JOBID)
		jw_lit_strz(w, JW_LIT("lustre_jobid"), r->jobid, LES_JOBID_LEN);
	if (les_rpc_op_function(r->rpc_op))
		jw_lit_cstr(w, JW_LIT("function"), les_rpc_op_function(r->rpc_op));
	if (r->proto == LES_PROTO_SUNRPC) {
		jw_lit_cstr(w, JW_LIT("program"), les_sunrpc_prog_name(r->prog));
		jw_lit_u64(w, JW_LIT("version"), r->vers);
	}
	put_req_id(w, r->req_id);
	put_submitter(w, r->parent_op_id, &r->task, en, en ? wire_job : NULL, r->flags,
		      r->worker_pid, r->worker_comm);
	jw_lit_u64(w, JW_LIT("latency_ns"), r->latency_ns);
	jw_lit_u64(w, JW_LIT("bytes"), r->bytes);
	put_errno(w, fc, r->err);
	if (r->proto == LES_PROTO_SUNRPC) {
		jw_lit_u64(w, JW_LIT("backlog_ns"), r->backlog_ns);
		jw_lit_u64(w, JW_LIT("rtt_ns"), r->rtt_ns);
		jw_lit_u64(w, JW_LIT("execute_ns"), r->execute_ns);
		if (r->flags & LES_RPC_F_LOCAL)
			put_sock_addr(w, JW_LIT("local_addr"), &r->local, true);
	}
	if (r->proto == LES_PROTO_FUSE)
		put_fuse_split(w, r);
	if (r->proto == LES_PROTO_PTLRPC && r->rpc_op == LES_RPC_OP_REQUEST) {
		put_ptlrpc_ids(w, r);
		jw_lit_key(w, JW_LIT("replied"));
		jw_bool(w, !(r->flags & LES_RPC_F_NO_REPLY));
		jw_lit_u64(w, JW_LIT("queued_ns"), r->backlog_ns);
		jw_lit_u64(w, JW_LIT("service_ns"), r->rtt_ns);
		jw_lit_u64(w, JW_LIT("resends"), r->resends);
		/* Sent at all: null where transmissions are not counted (ptl_send_rpc not probed). */
		jw_lit_key(w, JW_LIT("sent"));
		if (r->flags & LES_RPC_F_SENDS)
			jw_bool(w, !(r->flags & LES_RPC_F_UNSENT));
		else
			jw_null(w);
		/* Inside service_ns: ptl_send_rpc hands the PUT to LNet, which may hold it. */
		if (r->flags & LES_RPC_F_LNET)
			jw_lit_u64(w, JW_LIT("lnet_wait_ns"), r->lnet_wait_ns);
		else
			jw_lit_null(w, JW_LIT("lnet_wait_ns"));
	}
	if (les_rpc_op_is_wait(r->rpc_op)) {
		jw_lit_u64(w, JW_LIT("wait_id"), r->wait_id);
		if (r->parent_wait_id)
			jw_lit_u64(w, JW_LIT("parent_wait_id"), r->parent_wait_id);
		else
			jw_lit_null(w, JW_LIT("parent_wait_id"));
	}
	if (r->proto == LES_PROTO_LDLM && r->rpc_op == LES_RPC_OP_LOCK_COMPLETION) {
		jw_lit_key(w, JW_LIT("blocked"));
		jw_bool(w, r->flags & LES_RPC_F_LOCK_BLOCKED);
	}
	jw_obj_end(w);
	jw_newline(w);
}

void les_format_rpc_event(struct jw *w, const struct les_fmt_ctx *fc,
			  const struct les_observed_mount *m, const struct les_rec_rpc_event *r,
			  const struct les_enriched *en)
{
	put_common(w, fc, "rpc_event", r->ts_ns, m);
	jw_lit_cstr(w, JW_LIT("event"), les_rpc_event_name(r->event));
	jw_lit_cstr(w, JW_LIT("proto"), les_rpc_proto_name(r->proto));
	put_opcode(w, r->proto, r->opcode, r->flags);
	if (r->proto == LES_PROTO_SUNRPC)
		jw_lit_cstr(w, JW_LIT("procedure"), rpc_name(r->name));
	if (r->proto == LES_PROTO_PTLRPC && (r->flags & LES_RPC_F_TARGET))
		jw_lit_str(w, JW_LIT("target"), r->name,
			   les_ptlrpc_target_len(r->name, LES_RPC_NAME_LEN));
	else if (r->proto == LES_PROTO_PTLRPC)
		jw_lit_null(w, JW_LIT("target"));
	put_req_id(w, r->req_id);
	put_submitter(w, r->parent_op_id, &r->task, en, NULL, r->flags, r->worker_pid,
		      r->worker_comm);
	jw_obj_end(w);
	jw_newline(w);
}

void les_format_access_line(struct jw *w, const struct les_fmt_ctx *fc,
			    const struct les_observed_mount *m, const void *rec,
			    const struct les_enriched *en, const char *wire_job)
{
	(void)wire_job;
	les_format_access(w, fc, m, rec, en);
}

void les_format_rpc_line(struct jw *w, const struct les_fmt_ctx *fc,
			 const struct les_observed_mount *m, const void *rec,
			 const struct les_enriched *en, const char *wire_job)
{
	les_format_rpc(w, fc, m, rec, en, wire_job);
}

void les_format_rpc_event_line(struct jw *w, const struct les_fmt_ctx *fc,
			       const struct les_observed_mount *m, const void *rec,
			       const struct les_enriched *en, const char *wire_job)
{
	(void)wire_job;
	les_format_rpc_event(w, fc, m, rec, en);
}

/* The formatter column of the kinds list (model/kinds.h). */
#define FORMAT_ROW(kind, name, size, shape, formatter, decoder) [kind] = formatter,

static les_rec_format_fn *const formatters[LES_REC_KIND_MAX] = { LES_REC_KINDS(FORMAT_ROW) };

les_rec_format_fn *les_format_of(unsigned int kind)
{
	return kind < LES_REC_KIND_MAX ? formatters[kind] : NULL;
}

/*
 * A server's duration under its srv line's name, or its rpc_join name
 * (NULL: not on a joined line); null where not valid. Both names written
 * out: no key is made per record.
 */
struct srv_step {
	const char *name, *joined;
	uint64_t v;
	bool valid;
};

static void put_srv_steps(struct jw *w, const struct srv_step *steps, size_t n, bool prefixed)
{
	for (size_t i = 0; i < n; i++) {
		if (prefixed && !steps[i].joined)
			continue;
		jw_key(w, prefixed ? steps[i].joined : steps[i].name);
		if (steps[i].valid)
			jw_u64(w, steps[i].v);
		else
			jw_null(w);
	}
}

/* The server's steps (les_srv_times), named with prefix; null where not seen. */
static void put_srv_times(struct jw *w, const struct les_srv_times *t, bool prefixed)
{
	const struct srv_step steps[] = {
		{"queue_ns", "server_queue_ns", t->queue_ns, true},
		{"incoming_ns", "server_incoming_ns", t->incoming_ns, t->has_nrs},
		{"nrs_ns", "server_nrs_ns", t->nrs_ns, t->has_nrs},
		{"handle_ns", "server_handle_ns", t->handle_ns, true},
		{"reply_ns", "server_reply_ns", t->reply_ns, t->has_reply},
		{"total_ns", "server_total_ns", t->total_ns, true},
	};

	put_srv_steps(w, steps, sizeof(steps) / sizeof(steps[0]), prefixed);
}

/* A sunrpc service's request: its program, procedure and client address. */
static void put_svc_ids(struct jw *w, const struct les_rec_srv *r)
{
	const char *prog = les_sunrpc_prog_name(r->prog);

	jw_lit_cstr(w, JW_LIT("service"), prog ? prog : "unknown");
	jw_lit_null(w, JW_LIT("target"));
	jw_lit_u64(w, JW_LIT("opcode"), r->opcode);
	if (r->procname[0])
		jw_lit_strz(w, JW_LIT("opcode_name"), r->procname, LES_RPC_NAME_LEN);
	jw_lit_u64(w, JW_LIT("program"), r->prog);
	jw_lit_u64(w, JW_LIT("version"), r->vers);
	jw_lit_u64(w, JW_LIT("xid"), r->xid);
	jw_lit_null(w, JW_LIT("client_nid"));
	jw_lit_null(w, JW_LIT("server_nid"));
	put_sock_addr(w, JW_LIT("client_addr"), &r->client, r->flags & LES_SRV_F_CLIENT);
	jw_lit_null(w, JW_LIT("lustre_jobid"));
}

static void put_srv_ids(struct jw *w, const struct les_rec_srv *r)
{
	if (r->proto == LES_PROTO_SUNRPC) {
		put_svc_ids(w, r);
		return;
	}
	jw_lit_strz(w, JW_LIT("service"), r->service, LES_RPC_NAME_LEN);
	if (r->flags & LES_SRV_F_TARGET)
		jw_lit_strz(w, JW_LIT("target"), r->target, LES_RPC_NAME_LEN);
	else
		jw_lit_null(w, JW_LIT("target"));
	put_opcode(w, LES_PROTO_PTLRPC, r->opcode,
		   (r->flags & LES_SRV_F_OPCODE) ? LES_RPC_F_OPCODE : 0);
	jw_lit_u64(w, JW_LIT("xid"), r->xid);
	put_nid(w, JW_LIT("client_nid"), &r->peer, r->flags & LES_SRV_F_PEER);
	put_nid(w, JW_LIT("server_nid"), &r->self, r->flags & LES_SRV_F_PEER);
	if (r->flags & LES_SRV_F_JOBID)
		jw_lit_strz(w, JW_LIT("lustre_jobid"), r->jobid, LES_JOBID_LEN);
	else
		jw_lit_null(w, JW_LIT("lustre_jobid"));
}

/*
 * The steps inside the handling, prefixed in a join; null where not traced.
 * PtlRPC: the bulk transfer and the OSD's block I/O (and how many). sunrpc:
 * nfsd's file I/O, its offset and count (not on a join: they are the
 * client's too).
 */
static void put_srv_io(struct jw *w, const struct les_rec_srv *r, bool prefixed)
{
	bool io = r->flags & LES_SRV_F_IO;

	if (r->proto == LES_PROTO_SUNRPC) {
		const struct srv_step steps[] = {
			{"io_ns", "server_io_ns", r->io_ns, io},
			{"offset", NULL, r->offset, io},
			{"count", NULL, r->count, io},
		};

		put_srv_steps(w, steps, sizeof(steps) / sizeof(steps[0]), prefixed);
	} else {
		const struct srv_step steps[] = {
			{"bulk_ns", "server_bulk_ns", r->bulk_ns, r->flags & LES_SRV_F_BULK},
			{"io_ns", "server_io_ns", r->io_ns, io},
			{"io_count", NULL, r->io_count, io},
		};

		put_srv_steps(w, steps, sizeof(steps) / sizeof(steps[0]), prefixed);
	}
}

void les_format_srv(struct jw *w, const struct les_fmt_ctx *fc, const struct les_rec_srv *r)
{
	struct les_srv_times t;

	les_srv_times(r, fc->mono_to_epoch_ns, &t);
	put_common(w, fc, "srv", r->ts_ns, NULL);
	jw_lit_cstr(w, JW_LIT("proto"), les_rpc_proto_name(r->proto));
	put_srv_ids(w, r);
	jw_lit_key(w, JW_LIT("resent"));
	jw_bool(w, r->msg_flags & LES_MSG_RESENT);
	jw_lit_key(w, JW_LIT("replay"));
	jw_bool(w, r->msg_flags & LES_MSG_REPLAY);
	jw_lit_u64(w, JW_LIT("msg_flags"), r->msg_flags);
	jw_lit_strz(w, JW_LIT("thread"), r->comm, LES_COMM_LEN);
	jw_lit_u64(w, JW_LIT("tid"), r->tid);
	jw_lit_i64(w, JW_LIT("status"), r->status);
	jw_lit_u64(w, JW_LIT("transno"), r->transno);
	jw_lit_key(w, JW_LIT("replied"));
	jw_bool(w, r->flags & LES_SRV_F_REPLY);
	put_srv_times(w, &t, false);
	put_srv_io(w, r, false);
	jw_obj_end(w);
	jw_newline(w);
}

void les_format_srv_line(struct jw *w, const struct les_fmt_ctx *fc,
			 const struct les_observed_mount *m, const void *rec,
			 const struct les_enriched *en, const char *wire_job)
{
	(void)m;
	(void)en;
	(void)wire_job;
	les_format_srv(w, fc, rec);
}

/* An LNet message's type (enum lnet_msg_type, lnet-idl.h). */
static const char *lnet_msg_type_name(unsigned int type)
{
	static const char *const names[] = {"ack", "put", "get", "reply", "hello"};

	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "unknown";
}

static void put_u64_or_null(struct jw *w, const char *key, size_t key_len, uint64_t v, bool valid)
{
	jw_lit_key(w, key, key_len);
	if (valid)
		jw_u64(w, v);
	else
		jw_null(w);
}

static void put_i64_or_null(struct jw *w, const char *key, size_t key_len, int64_t v, bool valid)
{
	jw_lit_key(w, key, key_len);
	if (valid)
		jw_i64(w, v);
	else
		jw_null(w);
}

/* An LNet message this node sent ("type":"lnet"). */
void les_format_lnet(struct jw *w, const struct les_fmt_ctx *fc, const struct les_rec_lnet *r)
{
	bool sent = r->flags & LES_LNET_F_SENT, nids = r->flags & LES_LNET_F_NIDS;

	put_common(w, fc, "lnet", r->ts_ns, NULL);
	jw_lit_cstr(w, JW_LIT("proto"), les_rpc_proto_name(LES_PROTO_LNET));
	jw_lit_cstr(w, JW_LIT("msg_type"), lnet_msg_type_name(r->msg_type));
	put_u64_or_null(w, JW_LIT("match_bits"), r->match_bits, r->flags & LES_LNET_F_MATCH);
	put_u64_or_null(w, JW_LIT("portal"), r->portal,
			(r->flags & LES_LNET_F_MATCH) && r->msg_type != 0 && r->msg_type != 3);
	jw_lit_u64(w, JW_LIT("bytes"), r->len);
	jw_lit_i64(w, JW_LIT("status"), r->status);
	put_nid(w, JW_LIT("ni_nid"), &r->ni, nids);
	if (r->flags & LES_LNET_F_IFNAME)
		jw_lit_strz(w, JW_LIT("interface"), r->ifname, LES_COMM_LEN);
	else
		jw_lit_null(w, JW_LIT("interface"));
	put_nid(w, JW_LIT("peer_nid"), &r->peer, nids);
	put_nid(w, JW_LIT("target_nid"), &r->target, nids);
	jw_lit_key(w, JW_LIT("routed"));
	jw_bool(w, r->flags & LES_LNET_F_ROUTED);
	jw_lit_u64(w, JW_LIT("tid"), r->tid);
	jw_lit_u64(w, JW_LIT("peer_credit_wait_ns"), r->peer_wait_ns);
	jw_lit_u64(w, JW_LIT("ni_credit_wait_ns"), r->ni_wait_ns);
	jw_lit_u64(w, JW_LIT("delay_rule_ns"), r->delay_ns);
	put_i64_or_null(w, JW_LIT("peer_credits"), r->peer_credits,
			r->flags & LES_LNET_F_PEER_CREDIT);
	put_i64_or_null(w, JW_LIT("ni_credits"), r->ni_credits, r->flags & LES_LNET_F_NI_CREDIT);
	put_u64_or_null(w, JW_LIT("queued_ns"), r->send_ns - r->commit_ns,
			sent && r->send_ns >= r->commit_ns);
	put_u64_or_null(w, JW_LIT("lnd_ns"), r->ts_ns - r->send_ns, sent && r->ts_ns >= r->send_ns);
	jw_lit_u64(w, JW_LIT("latency_ns"), r->ts_ns >= r->commit_ns ? r->ts_ns - r->commit_ns : 0);
	jw_lit_key(w, JW_LIT("committed"));
	jw_bool(w, r->flags & LES_LNET_F_COMMIT);
	jw_obj_end(w);
	jw_newline(w);
}

void les_format_lnet_line(struct jw *w, const struct les_fmt_ctx *fc,
			  const struct les_observed_mount *m, const void *rec,
			  const struct les_enriched *en, const char *wire_job)
{
	(void)m;
	(void)en;
	(void)wire_job;
	les_format_lnet(w, fc, rec);
}

void les_format_rpc_join(struct jw *w, const struct les_fmt_ctx *fc, const struct les_rec_rpc *c,
			 const struct les_rec_srv *s)
{
	struct les_srv_times t;

	les_srv_times(s, fc->mono_to_epoch_ns, &t);
	put_common(w, fc, "rpc_join", c->ts_ns > s->ts_ns ? c->ts_ns : s->ts_ns, NULL);
	jw_lit_cstr(w, JW_LIT("proto"), les_rpc_proto_name(s->proto));
	put_srv_ids(w, s);
	put_req_id(w, c->req_id);
	jw_lit_u64(w, JW_LIT("pid"), c->task.pid);
	jw_lit_strz(w, JW_LIT("comm"), c->task.comm, LES_COMM_LEN);
	jw_lit_u64(w, JW_LIT("client_queued_ns"), c->backlog_ns);
	jw_lit_u64(w, JW_LIT("client_service_ns"), c->rtt_ns);
	if (c->flags & LES_RPC_F_LNET)
		jw_lit_u64(w, JW_LIT("client_lnet_wait_ns"), c->lnet_wait_ns);
	else
		jw_lit_null(w, JW_LIT("client_lnet_wait_ns"));
	jw_lit_u64(w, JW_LIT("client_resends"), c->resends);
	jw_lit_i64(w, JW_LIT("network_ns"), les_rpcjoin_network_ns(c, &t));
	put_srv_times(w, &t, true);
	put_srv_io(w, s, true);
	jw_lit_i64(w, JW_LIT("server_status"), s->status);
	jw_obj_end(w);
	jw_newline(w);
}
