// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The RPC plane's probes of Lustre PtlRPC/LDLM, sunrpc and (where its
 * tracepoints are missing) FUSE, and how each is reached, chosen from the
 * kernel's facts (kfacts.h) alone.
 *
 * PtlRPC and LDLM functions: fentry/fexit when the function is in BTF (a
 * Lustre built with BTF) and this kernel permits tracing programs, else a
 * kprobe/kretprobe when it is in kallsyms; --attach kprobe keeps kprobes.
 * sunrpc: tp_btf on its tracepoints, which need the sunrpc module loaded
 * (with its BTF) when the tool starts.
 *
 * osc_brw_prep_request (the osc module) gives the file of a bulk request a
 * kernel thread builds, so that the request is charged to the file's last
 * reader or writer; where it is inlined or a clone, the request keeps its
 * builder and the job ID Lustre sent.
 *
 * PtlRPC opcodes come from ptlrpc_request_pack's argument and the request's
 * message from lustre_msg_set_opc inside it: no structure offset needed.
 * For requests whose packing was not seen, rq_reqmsg's offset in struct
 * ptlrpc_request comes from the module's BTF when it has one (CO-RE), else
 * from LES_PTLRPC_REQMSG_OFFSET (bytes; for tests, and for a site that read
 * it from its own build with pahole or crash). Without any of these the
 * records carry no opcode: absent, never wrong. No per-version offset table
 * is built in: one could not be checked against every build's options.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/btf.h>
#include "probe/kfacts.h"
#include "model/ops.h"
#include "probe/rpcprobes.h"

/* One row per line: clang-format would break the stringified names apart. */
/* clang-format off */
#define PTL(fn, r, kp, kr, fe, fx) { #fn, LES_PROTO_PTLRPC, r, { kp, kr }, { fe, fx }, NULL, { 0 }, true }
#define LDLM(fn, r, kp, kr, fe, fx) { #fn, LES_PROTO_LDLM, r, { kp, kr }, { fe, fx }, NULL, { 0 }, true }
#define SUNRPC(tp, r, prog) { "sunrpc:" #tp, LES_PROTO_SUNRPC, r, { 0 }, { 0 }, prog }
#define SVC(tp, r, prog) { "sunrpc:" #tp, LES_PROTO_SUNRPC, r, { 0 }, { 0 }, prog, { 0 }, false, false, true }
#define NFSD(tp, r, prog) { "nfsd:" #tp, LES_PROTO_SUNRPC, r, { 0 }, { 0 }, prog, { 0 }, false, false, true }
#define FUSE(fn, r, kp, fe, nb) { #fn, LES_PROTO_FUSE, r, { kp, NULL }, { fe, NULL }, NULL, { nb } }
#define SRV(fn, r, kp, kr, fe, fx) { #fn, LES_PROTO_PTLRPC, r, { kp, kr }, { fe, fx }, NULL, { 0 }, true, true }
#define SRV_STEP(fn, r, kp, kr, fe, fx) { #fn, LES_PROTO_PTLRPC, r, { kp, kr }, { fe, fx }, NULL, { 0 }, true, true, .server_step = true }
#define LNET(fn, r, kp, kr, fe, fx) { #fn, LES_PROTO_LNET, r, { kp, kr }, { fe, fx }, NULL, { 0 }, true, .lnet = true }
/* clang-format on */

/* Sources: lustre-release lustre/ptlrpc (client.c, niobuf.c, recover.c, ptlrpcd.c),
 * lustre/ldlm/ldlm_request.c; Linux include/trace/events/sunrpc.h. */
static const struct les_rpc_fn rpc_table[] = {
	PTL(ptlrpc_request_alloc, "submitter (request created), its import's mount", "ptl_alloc_kp",
	    "ptl_alloc_kr", NULL, "ptl_alloc_fx"),
	PTL(ptlrpc_request_alloc_pool, "submitter (request from a pool), its import's mount",
	    "ptl_alloc_pool_kp", "ptl_alloc_pool_kr", NULL, "ptl_alloc_pool_fx"),
	PTL(ptlrpc_request_alloc_pack,
	    "submitter where ptlrpc_request_alloc is inlined into it (pings), its import's mount",
	    "ptl_alloc_pack_kp", "ptl_alloc_pack_kr", "ptl_alloc_pack_fe", "ptl_alloc_pack_fx"),
	PTL(lustre_msg_get_status, "errno: the reply's status, read by after_reply",
	    "ptl_msg_status_kp", NULL, "ptl_msg_status_fe", NULL),
	PTL(ptlrpcd_add_req, "submitter (queued for ptlrpcd), opcode", "ptl_add_req_kp", NULL,
	    "ptl_add_req_fe", NULL),
	PTL(ptlrpc_queue_wait, "queue_wait records, submitter, opcode", "ptl_queue_wait_kp",
	    "ptl_queue_wait_kr", "ptl_queue_wait_fe", "ptl_queue_wait_fx"),
	PTL(ptlrpc_send_new_req, "request start (first send), worker", "ptl_send_new_req_kp", NULL,
	    "ptl_send_new_req_fe", NULL),
	PTL(ptl_send_rpc, "request start where ptlrpc_send_new_req is inlined", "ptl_send_rpc_kp",
	    NULL, "ptl_send_rpc_fe", NULL),
	/* 7 arguments: more than many kernels' trampolines take, so a kprobe. */
	PTL(osc_brw_prep_request, "the file of a kernel thread's bulk request, for its cause",
	    "ptl_brw_prep_kp", "ptl_brw_prep_kr", NULL, NULL),
	PTL(ptlrpc_request_pack, "opcode (an argument) and the request's message", "ptl_pack_kp",
	    NULL, "ptl_pack_fe", NULL),
	PTL(ptlrpc_request_bufs_pack, "opcode where ptlrpc_request_pack is inlined",
	    "ptl_bufs_pack_kp", NULL, "ptl_bufs_pack_fe", NULL),
	PTL(lustre_msg_set_opc, "the message being packed (opcode, job ID)", "ptl_set_opc_kp", NULL,
	    "ptl_set_opc_fe", NULL),
	PTL(ptlrpc_lprocfs_rpc_sent, "request records: reply, Lustre's service time",
	    "ptl_rpc_sent_kp", NULL, "ptl_rpc_sent_fe", NULL),
	PTL(ptlrpc_lprocfs_brw, "bytes of bulk requests (ost_read, ost_write)", "ptl_brw_kp", NULL,
	    "ptl_brw_fe", NULL),
	PTL(sptlrpc_cli_free_reqbuf, "release of every request: those never replied end here",
	    "ptl_free_reqbuf_kp", NULL, "ptl_free_reqbuf_fe", NULL),
	PTL(__ptlrpc_free_req, "release where a build does not inline it", "ptl_free_req_kp", NULL,
	    "ptl_free_req_fe", NULL),
	PTL(ptlrpc_resend_req, "resend events", "ptl_resend_kp", NULL, "ptl_resend_fe", NULL),
	PTL(ptlrpc_restart_req, "restart events", "ptl_restart_kp", NULL, "ptl_restart_fe", NULL),
	PTL(ptlrpc_expire_one_request, "expire events", "ptl_expire_kp", NULL, "ptl_expire_fe",
	    NULL),
	PTL(ptlrpc_request_handle_notconn, "notconn events", "ptl_notconn_kp", NULL,
	    "ptl_notconn_fe", NULL),
	/* Static, but a thread's function: never inlined. */
	PTL(ptlrpc_invalidate_import_thread, "evict events (an import a server evicted)",
	    "ptl_evicted_kp", NULL, "ptl_evicted_fe", NULL),
	/* obdclass, exported. */
	PTL(class_new_import, "a new import: its address's old mount forgotten", NULL,
	    "ptl_import_new_kr", NULL, "ptl_import_new_fx"),
	/* 11 arguments: more than many kernels' trampolines take, so a kprobe. */
	LDLM(ldlm_cli_enqueue, "lock_wait records (enqueue)", "ptl_enqueue_kp", "ptl_enqueue_kr",
	     NULL, NULL),
	LDLM(ldlm_completion_ast, "lock_wait records (waiting for the grant)", "ptl_completion_kp",
	     "ptl_completion_kr", "ptl_completion_fe", "ptl_completion_fx"),
	/*
	 * fs/fuse/dev.c, where the fuse tracepoints (6.12) are missing: static
	 * but called from several places (queue_request_and_unlock, fuse_copy_args)
	 * or exported (fuse_request_end), so kept out of line.
	 */
	FUSE(queue_request_and_unlock, "request sent: queued for the daemon, requester, opcode",
	     "fuse_queue_kp", "fuse_queue_fe", "fuse_queue_nobtf_kp"),
	FUSE(fuse_request_end, "request end: the daemon's reply, its errno and bytes",
	     "fuse_req_end_kp", "fuse_req_end_fe", "fuse_req_end_nobtf_kp"),
	FUSE(fuse_copy_args, "the daemon reads the request: time queued vs in the daemon",
	     "fuse_copy_args_kp", "fuse_copy_args_fe", "fuse_copy_args_nobtf_kp"),
	/*
	 * The server side (rpc_ptlrpc_srv.bpf.h): calls that stay calls where
	 * ptlrpc_server_handle_request is inlined. The handlers are
	 * so_req_handler targets (function pointers), never inlined.
	 */
	SRV(ptlrpc_nrs_req_add, "server: a request enters the NRS policy queue", "srv_nrs_add_kp",
	    NULL, "srv_nrs_add_fe", NULL),
	/* Static, but out of line, and its caller's only dequeue point. */
	SRV(ptlrpc_server_request_get, "server: a service thread takes a request (handling starts)",
	    NULL, "srv_request_get_kr", NULL, "srv_request_get_fx"),
	SRV(tgt_request_handle, "server records: the targets' services (mdt, ost_io, mgs, ...)",
	    "srv_tgt_handle_kp", "srv_tgt_handle_kr", "srv_tgt_handle_fe", "srv_tgt_handle_fx"),
	SRV(ldlm_callback_handler, "server records: LDLM callbacks (ldlm_cbd)", "srv_ldlm_cb_kp",
	    "srv_ldlm_cb_kr", "srv_ldlm_cb_fe", "srv_ldlm_cb_fx"),
	SRV(ldlm_cancel_handler, "server records: LDLM cancels (ldlm_canceld)",
	    "srv_ldlm_cancel_kp", "srv_ldlm_cancel_kr", "srv_ldlm_cancel_fe", "srv_ldlm_cancel_fx"),
	SRV(ptlrpc_send_reply, "server: the reply sent (not an early reply)", "srv_send_reply_kp",
	    NULL, "srv_send_reply_fe", NULL),
	/*
	 * Inside the handling, optional: the bulk transfer (ldlm_lib.c, global,
	 * exported) and ldiskfs's block I/O time as brw_stats files it
	 * (osd_io.c, global; absent on an MDS-only node or a ZFS OSD).
	 */
	SRV_STEP(target_bulk_io, "server: a request's bulk transfer (bulk_ns)", "srv_bulk_kp",
		 "srv_bulk_kr", "srv_bulk_fe", "srv_bulk_fx"),
	SRV_STEP(osd_fini_iobuf, "server: an OSD block I/O's time (io_ns)", "srv_iobuf_kp", NULL,
		 "srv_iobuf_fe", NULL),
	/*
	 * LNet under PtlRPC (rpc_lnet.bpf.h): lnet_ni_send has a symbol but is
	 * inlined at its callers, so the LND's send (a function pointer) stands
	 * for it. The gate is static but kept out of line by its two callers.
	 */
	LNET(lnet_msg_commit, "lnet: a message committed for sending (its start)", "lnet_commit_kp",
	     NULL, "lnet_commit_fe", NULL),
	LNET(lnet_post_send_locked, "lnet: the credit gate (peer and NI tx credits, delay rules)",
	     "lnet_post_kp", "lnet_post_kr", "lnet_post_fe", "lnet_post_fx"),
	LNET(ksocknal_send, "lnet: handed to the LND (socklnd): a wait ends", "lnet_lnd_send_kp",
	     NULL, "lnet_lnd_send_fe", NULL),
	LNET(lnet_finalize, "lnet records: a sent message finalized", "lnet_finalize_kp", NULL,
	     "lnet_finalize_fe", NULL),
	SUNRPC(rpc_task_begin, "submitter of each RPC task", "sunrpc_begin_btf"),
	SUNRPC(rpc_task_end, "in flight until here", "sunrpc_end_btf"),
	SUNRPC(rpc_stats_latency, "rpc records: backlog, rtt, execute", "sunrpc_stats_btf"),
	SUNRPC(xprt_retransmit, "retransmit events", "sunrpc_retransmit_btf"),
	/* The server side (rpc_nfsd.bpf.h): nfsd, and the client's callback services. */
	SVC(svc_xprt_enqueue, "server: a transport has work (bounds its requests' arrival)",
	    "sunrpc_svc_xprt_enqueue_btf"),
	SVC(svc_process, "server: a request's procedure is dispatched", "sunrpc_svc_process_btf"),
	SVC(svc_stats_latency, "server: the reply goes to the transport (reply_ns)",
	    "sunrpc_svc_replying_btf"),
	SVC(svc_send, "server records: the reply sent (xid, client, times)", "sunrpc_svc_send_btf"),
	NFSD(nfsd_read_start, "server: nfsd starts reading the file (offset, count)",
	     "sunrpc_nfsd_read_start_btf"),
	NFSD(nfsd_read_done, "server: nfsd has read it (io_ns)", "sunrpc_nfsd_read_done_btf"),
	NFSD(nfsd_write_start, "server: nfsd starts writing the file (offset, count)",
	     "sunrpc_nfsd_write_start_btf"),
	NFSD(nfsd_write_done, "server: nfsd has written it (io_ns)", "sunrpc_nfsd_write_done_btf"),
};

#define RPC_TABLE_ROWS (sizeof(rpc_table) / sizeof(rpc_table[0]))

_Static_assert(RPC_TABLE_ROWS <= LES_RPC_FN_MAX, "LES_RPC_FN_MAX too small for the table");

/* Where the row's function is, or why it is not probed when kallsyms lacks it. */
static bool locate(struct les_rpc_probe *pr, const struct les_kfacts *f)
{
	const struct les_kf_sym *s = les_kfacts_sym(f, pr->f->name);
	const struct les_kf_sym *clone;

	if (s) {
		pr->present = true;
		snprintf(pr->where, sizeof(pr->where), "%s", s->module);
		return true;
	}
	clone = les_kfacts_clone(f, pr->f->name);
	if (clone)
		snprintf(pr->reason, sizeof(pr->reason),
			 "only the compiler's clone %s in kallsyms: its arguments may differ",
			 clone->name);
	else if (pr->f->proto == LES_PROTO_FUSE)
		snprintf(pr->reason, sizeof(pr->reason), "not in kallsyms (%s)",
			 les_kfacts_module_loaded(f, "fuse") ||
					 les_kfacts_sym(f, "fuse_request_end")
				 ? "inlined or renamed by this kernel's build"
				 : "fuse not loaded");
	else
		snprintf(pr->reason, sizeof(pr->reason), "not in kallsyms (%s)",
			 les_kfacts_module_loaded(f, "ptlrpc")
				 ? "inlined or renamed by this Lustre build"
				 : "Lustre not loaded");
	return false;
}

static void choose_fn(struct les_rpc_probe *pr, const struct les_kfacts *f,
		      enum les_attach_mode mode, bool fentry_ok, const char *fentry_reason)
{
	bool twin = pr->f->fentry[0] || pr->f->fentry[1];
	/* fentry needs the function in the BTF of where it lives. */
	bool has_btf = les_kfacts_proto(f, pr->f->name, pr->where) != NULL;

	if (mode != LES_ATTACH_MODE_KPROBE && twin && fentry_ok && has_btf) {
		pr->method = LES_ATTACH_FENTRY;
		return;
	}
	if (f->kprobes) {
		pr->method = LES_ATTACH_KPROBE;
		return;
	}
	snprintf(pr->reason, sizeof(pr->reason), "kprobes not configured; fentry: %s",
		 !twin	      ? "not offered for this function"
		 : !fentry_ok ? fentry_reason
			      : "no BTF for it");
}

/* A tracepoint row's module: its name's category ("sunrpc:rpc_task_begin", "nfsd:..."). */
static void tp_module(const struct les_rpc_fn *fn, char *dst, size_t size)
{
	size_t n = (size_t)(strchr(fn->name, ':') - fn->name);

	snprintf(dst, size, "%.*s", (int)(n < size ? n : size - 1), fn->name);
}

static void choose_tp(struct les_rpc_probe *pr, const struct les_kfacts *f)
{
	const char *event = strchr(pr->f->name, ':') + 1;
	char typedef_name[96], module[sizeof(pr->where)];

	tp_module(pr->f, module, sizeof(module));
	snprintf(typedef_name, sizeof(typedef_name), "btf_trace_%s", event);
	snprintf(pr->where, sizeof(pr->where), "%s", module);
	pr->present = les_kfacts_has_tracepoint(f, module, event);
	/*
	 * sunrpc's server tracepoints are in every NFS client's sunrpc too; an
	 * NFS client alone (its callback service aside) answers no request, and
	 * its consumer then keeps no join table.
	 */
	if (pr->f->svc && !les_kfacts_module_loaded(f, "nfsd")) {
		snprintf(pr->reason, sizeof(pr->reason),
			 "nfsd not loaded when the tool started (no NFS server)");
		return;
	}
	if (les_kfacts_has_type(f, typedef_name, BTF_KIND_TYPEDEF, module) ||
	    les_kfacts_has_type(f, typedef_name, BTF_KIND_TYPEDEF, "vmlinux")) {
		pr->method = LES_ATTACH_TRACEPOINT;
		return;
	}
	if (!les_kfacts_module_loaded(f, module))
		snprintf(pr->reason, sizeof(pr->reason), "%s not loaded when the tool started (%s)",
			 module, strcmp(module, "nfsd") ? "no NFS client" : "no NFS server");
	else if (!pr->present)
		snprintf(pr->reason, sizeof(pr->reason), "no such tracepoint in this kernel");
	else
		snprintf(pr->reason, sizeof(pr->reason), "no BTF for %s (tp_btf needs it)", module);
}

/* The struct a FUSE row reads by CO-RE, in the BTF of where the function is. */
static const char *fuse_row_type(const struct les_rpc_fn *fn)
{
	return strcmp(fn->name, "fuse_copy_args") == 0 ? "fuse_copy_state" : "fuse_req";
}

static bool fuse_row_is_split(const struct les_rpc_fn *fn)
{
	return strcmp(fn->name, "fuse_copy_args") == 0;
}

/*
 * FUSE rows read their structs by CO-RE where BTF has them (fentry or
 * kprobe), else by the no-BTF kprobes (compat.h: a head unchanged since 5.4,
 * checked by each request's unique ID). The daemon's read needs requests
 * keyed by their struct fuse_req (tp_btf, or the send/end pair).
 */
static void choose_fuse(struct les_rpc_probe *pr, const struct les_kfacts *f,
			const struct les_rpc_fuse *fuse, enum les_attach_mode mode, bool fentry_ok,
			const char *fentry_reason)
{
	bool btf = les_kfacts_has_type(f, "fuse_req", BTF_KIND_STRUCT, pr->where) &&
		   les_kfacts_has_type(f, fuse_row_type(pr->f), BTF_KIND_STRUCT, pr->where);

	if (fuse_row_is_split(pr->f) && fuse->tracepoints && !fuse->keyed_by_req) {
		snprintf(pr->reason, sizeof(pr->reason),
			 "the plain tracepoints key requests by unique ID, not by struct fuse_req");
		return;
	}
	if (btf) {
		choose_fn(pr, f, mode, fentry_ok, fentry_reason);
		return;
	}
	if (!f->kprobes) {
		snprintf(pr->reason, sizeof(pr->reason),
			 "no BTF for struct fuse_req in %s, and no kprobes for its no-BTF reads",
			 pr->where);
		return;
	}
	pr->nobtf = true;
	pr->method = LES_ATTACH_KPROBE;
}

static const struct les_rpc_probe *rpc_row(const struct les_rpc_plan *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->probe[i].f->name, name) == 0)
			return &p->probe[i];
	return NULL;
}

/* Send and end stand back for the tracepoints, wherever the functions are. */
static bool fuse_tracepoints_serve(struct les_rpc_probe *pr, const struct les_rpc_fuse *fuse)
{
	if (pr->f->proto != LES_PROTO_FUSE || fuse_row_is_split(pr->f) || !fuse->tracepoints)
		return false;
	snprintf(pr->reason, sizeof(pr->reason),
		 "the fuse:fuse_request_send/end tracepoints serve instead");
	return true;
}

/*
 * Send and end only together, in one flavour (BTF or not); the daemon's
 * read only with requests to mark.
 */
static void fuse_rows_pair(struct les_rpc_plan *p, bool tracepoints)
{
	const struct les_rpc_probe *send = rpc_row(p, "queue_request_and_unlock");
	const struct les_rpc_probe *end = rpc_row(p, "fuse_request_end");
	bool pair = send->method != LES_ATTACH_NONE && end->method != LES_ATTACH_NONE &&
		    send->nobtf == end->nobtf;

	for (size_t i = 0; i < p->n; i++) {
		struct les_rpc_probe *pr = &p->probe[i];
		bool keep;

		if (pr->f->proto != LES_PROTO_FUSE || pr->method == LES_ATTACH_NONE)
			continue;
		if (fuse_row_is_split(pr->f))
			keep = tracepoints || (pair && pr->nobtf == send->nobtf);
		else
			keep = pair;
		if (keep)
			continue;
		pr->method = LES_ATTACH_NONE;
		pr->nobtf = false;
		snprintf(pr->reason, sizeof(pr->reason), "%s",
			 fuse_row_is_split(pr->f)
				 ? "no request send and end to split"
				 : "queue_request_and_unlock and fuse_request_end go together");
	}
}

/* The steps inside the handling, each with the struct it reads by CO-RE, and where. */
static const struct {
	const char *fn, *type, *module;
} server_steps[] = {
	{"target_bulk_io", "ptlrpc_bulk_desc", "ptlrpc"},
	{"osd_fini_iobuf", "osd_iobuf", "osd_ldiskfs"},
};

#define SERVER_STEPS (sizeof(server_steps) / sizeof(server_steps[0]))

/* A step inside the handling without its struct's BTF is left out. */
static void server_step_rows(struct les_rpc_plan *p, const struct les_kfacts *f)
{
	const __typeof__(server_steps[0]) *steps = server_steps;

	for (size_t i = 0; i < SERVER_STEPS; i++) {
		struct les_rpc_probe *pr = (struct les_rpc_probe *)rpc_row(p, steps[i].fn);

		if (!pr || pr->method == LES_ATTACH_NONE ||
		    les_kfacts_has_type(f, steps[i].type, BTF_KIND_STRUCT, pr->where))
			continue;
		char where[sizeof(pr->where)];

		snprintf(where, sizeof(where), "%s", pr->where);
		pr->method = LES_ATTACH_NONE;
		snprintf(pr->reason, sizeof(pr->reason), "no BTF for struct %s in %s",
			 steps[i].type, where);
	}
}

/*
 * The server rows read struct ptlrpc_request by CO-RE: without its BTF in
 * the module they are left out, and they go together: a handler's record
 * needs the dequeue that starts it.
 */
static void server_rows(struct les_rpc_plan *p, const struct les_kfacts *f)
{
	const struct les_rpc_probe *get = rpc_row(p, "ptlrpc_server_request_get");
	bool btf = get->present &&
		   les_kfacts_has_type(f, "ptlrpc_request", BTF_KIND_STRUCT, get->where);
	bool handler = false;
	const char *why = NULL;

	for (size_t i = 0; i < p->n; i++)
		if (p->probe[i].f->server && !p->probe[i].f->server_step &&
		    p->probe[i].f->kprobe[1] && p->probe[i].method != LES_ATTACH_NONE &&
		    &p->probe[i] != get)
			handler = true;
	if (!get->present)
		why = "no server records: ptlrpc_server_request_get not in kallsyms";
	else if (!btf)
		why = "no server records: no BTF for struct ptlrpc_request in the module";
	else if (get->method == LES_ATTACH_NONE || !handler)
		why = "no server records: no dequeue or no handler to attach";
	for (size_t i = 0; why && i < p->n; i++) {
		struct les_rpc_probe *pr = &p->probe[i];

		if (!pr->f->server || (pr->method == LES_ATTACH_NONE && pr->reason[0]))
			continue;
		pr->method = LES_ATTACH_NONE;
		snprintf(pr->reason, sizeof(pr->reason), "%s", why);
	}
	server_step_rows(p, f);
}

/*
 * The LNet rows read struct lnet_msg by CO-RE: without its BTF in the lnet
 * module they are left out, and they go together: a record needs its
 * message's commit or gate and its finalize. The LND's send is optional.
 */
static void lnet_rows(struct les_rpc_plan *p, const struct les_kfacts *f)
{
	const struct les_rpc_probe *fin = rpc_row(p, "lnet_finalize");
	const struct les_rpc_probe *gate = rpc_row(p, "lnet_post_send_locked");
	const char *why = NULL;

	if (!fin->present || !gate->present)
		why = "no lnet records: lnet_finalize or lnet_post_send_locked not in kallsyms";
	else if (!les_kfacts_has_type(f, "lnet_msg", BTF_KIND_STRUCT, fin->where))
		why = "no lnet records: no BTF for struct lnet_msg in the module";
	else if (fin->method == LES_ATTACH_NONE || gate->method == LES_ATTACH_NONE)
		why = "no lnet records: no gate or no finalize to attach";
	for (size_t i = 0; why && i < p->n; i++) {
		struct les_rpc_probe *pr = &p->probe[i];

		if (!pr->f->lnet || (pr->method == LES_ATTACH_NONE && pr->reason[0]))
			continue;
		pr->method = LES_ATTACH_NONE;
		snprintf(pr->reason, sizeof(pr->reason), "%s", why);
	}
}

/* The module PtlRPC lives in: where ptlrpc_queue_wait is. */
static const char *ptlrpc_module(const struct les_rpc_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->probe[i].f->name, "ptlrpc_queue_wait") == 0)
			return p->probe[i].where;
	return "";
}

enum les_attach_method les_rpc_plan_method(const struct les_rpc_plan *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->probe[i].f->name, name) == 0)
			return p->probe[i].method;
	return LES_ATTACH_NONE;
}

/*
 * rq_reqmsg's offset, for requests whose packing was not seen: module BTF
 * (CO-RE, offset stays -1), else LES_PTLRPC_REQMSG_OFFSET (reqmsg_env).
 */
static void plan_reqmsg(struct les_rpc_plan *p, const struct les_kfacts *f, const char *reqmsg_env)
{
	char *end;
	long v;

	if (les_kfacts_has_type(f, "ptlrpc_request", BTF_KIND_STRUCT, ptlrpc_module(p))) {
		snprintf(p->reqmsg_source, sizeof(p->reqmsg_source),
			 "struct ptlrpc_request from module BTF (CO-RE)");
		return;
	}
	if (reqmsg_env && *reqmsg_env) {
		errno = 0;
		v = strtol(reqmsg_env, &end, 0);
		if (!errno && !*end && v >= 0 && v <= 4096) {
			p->reqmsg_off = (int)v;
			snprintf(p->reqmsg_source, sizeof(p->reqmsg_source),
				 "rq_reqmsg at offset %ld (%s)", v, LES_PTLRPC_REQMSG_ENV);
			return;
		}
		snprintf(p->reqmsg_source, sizeof(p->reqmsg_source),
			 "none: %s='%s' is not an offset from 0 to 4096", LES_PTLRPC_REQMSG_ENV,
			 reqmsg_env);
		return;
	}
	snprintf(p->reqmsg_source, sizeof(p->reqmsg_source),
		 "none: no BTF for struct ptlrpc_request and no %s; opcodes are left out",
		 LES_PTLRPC_REQMSG_ENV);
}

static void plan_opcode(struct les_rpc_plan *p, const struct les_kfacts *f, const char *reqmsg_env)
{
	p->reqmsg_off = -1;
	plan_reqmsg(p, f, reqmsg_env);
	if (les_rpc_plan_method(p, "lustre_msg_set_opc") != LES_ATTACH_NONE &&
	    (les_rpc_plan_method(p, "ptlrpc_request_pack") != LES_ATTACH_NONE ||
	     les_rpc_plan_method(p, "ptlrpc_request_bufs_pack") != LES_ATTACH_NONE))
		snprintf(p->opcode_source, sizeof(p->opcode_source),
			 "ptlrpc_request_pack's argument, message from lustre_msg_set_opc; "
			 "else %s",
			 p->reqmsg_source);
	else
		snprintf(p->opcode_source, sizeof(p->opcode_source), "%s", p->reqmsg_source);
}

void les_rpc_plan_wants(struct les_kf_wants *w)
{
	char typedef_name[LES_KF_NAME_LEN];

	les_kf_want_module(w, "ptlrpc");
	les_kf_want_module(w, "sunrpc");
	les_kf_want_module(w, "nfsd");
	les_kf_want_type(w, "ptlrpc_request", BTF_KIND_STRUCT);
	les_kf_want_type(w, "lnet_msg", BTF_KIND_STRUCT);
	les_kf_want_module(w, "lnet");
	for (size_t i = 0; i < SERVER_STEPS; i++) {
		les_kf_want_module(w, server_steps[i].module);
		les_kf_want_type(w, server_steps[i].type, BTF_KIND_STRUCT);
	}
	les_kf_want_type(w, "fuse_req", BTF_KIND_STRUCT);
	les_kf_want_type(w, "fuse_copy_state", BTF_KIND_STRUCT);
	for (size_t i = 0; i < RPC_TABLE_ROWS; i++) {
		const char *event;

		if (!rpc_table[i].tp_btf) {
			les_kf_want_func(w, rpc_table[i].name);
			continue;
		}
		les_kf_want_tracepoint(w, rpc_table[i].name);
		event = strchr(rpc_table[i].name, ':') + 1;
		/* tp_btf needs the tracepoint's btf_trace_ typedef in BTF. */
		snprintf(typedef_name, sizeof(typedef_name), "btf_trace_%s", event);
		les_kf_want_type(w, typedef_name, BTF_KIND_TYPEDEF);
	}
}

void les_rpc_plan_make(struct les_rpc_plan *p, const struct les_kfacts *f,
		       enum les_attach_mode mode, bool fentry_ok, const char *fentry_reason,
		       const char *reqmsg_env, const struct les_rpc_fuse *fuse)
{
	memset(p, 0, sizeof(*p));
	p->n = RPC_TABLE_ROWS;
	for (size_t i = 0; i < p->n; i++) {
		struct les_rpc_probe *pr = &p->probe[i];

		pr->f = &rpc_table[i];
		if (pr->f->tp_btf)
			choose_tp(pr, f);
		else if (fuse_tracepoints_serve(pr, fuse) || !locate(pr, f))
			continue;
		else if (pr->f->proto == LES_PROTO_FUSE)
			choose_fuse(pr, f, fuse, mode, fentry_ok, fentry_reason);
		else
			choose_fn(pr, f, mode, fentry_ok, fentry_reason);
	}
	fuse_rows_pair(p, fuse->tracepoints);
	server_rows(p, f);
	lnet_rows(p, f);
	plan_opcode(p, f, reqmsg_env);
}

static bool name_is(const char *prog, const char *name)
{
	return name && strcmp(prog, name) == 0;
}

const char *les_rpc_kprobe_twin(const char *prog_name)
{
	for (size_t i = 0; i < RPC_TABLE_ROWS; i++) {
		const struct les_rpc_fn *f = &rpc_table[i];

		for (int end = 0; end < 2 && f->kprobe_twin; end++)
			if (name_is(prog_name, f->fentry[end]))
				return f->kprobe[end];
	}
	return NULL;
}

bool les_rpc_plan_owns(const struct les_rpc_plan *p, const char *prog_name, bool *want)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct les_rpc_probe *pr = &p->probe[i];
		const struct les_rpc_fn *f = pr->f;

		if (name_is(prog_name, f->kprobe[0]) || name_is(prog_name, f->kprobe[1])) {
			*want = pr->method == LES_ATTACH_KPROBE && !pr->nobtf;
			return true;
		}
		if (name_is(prog_name, f->kprobe_nobtf[0]) ||
		    name_is(prog_name, f->kprobe_nobtf[1])) {
			*want = pr->method == LES_ATTACH_KPROBE && pr->nobtf;
			return true;
		}
		if (name_is(prog_name, f->fentry[0]) || name_is(prog_name, f->fentry[1])) {
			*want = pr->method == LES_ATTACH_FENTRY;
			return true;
		}
		if (name_is(prog_name, f->tp_btf)) {
			*want = pr->method == LES_ATTACH_TRACEPOINT;
			return true;
		}
	}
	return false;
}

bool les_rpc_prog_is_server(const char *prog_name)
{
	for (size_t i = 0; i < RPC_TABLE_ROWS; i++) {
		const struct les_rpc_fn *f = &rpc_table[i];

		if (f->server &&
		    (name_is(prog_name, f->kprobe[0]) || name_is(prog_name, f->kprobe[1]) ||
		     name_is(prog_name, f->fentry[0]) || name_is(prog_name, f->fentry[1])))
			return true;
		if (f->svc && name_is(prog_name, f->tp_btf))
			return true;
	}
	return false;
}

size_t les_rpc_plan_count(const struct les_rpc_plan *p, enum les_rpc_proto proto)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++)
		if (p->probe[i].f->proto == proto && p->probe[i].method != LES_ATTACH_NONE)
			n++;
	return n;
}

static const char *method_name(const struct les_rpc_probe *pr)
{
	return pr->method == LES_ATTACH_TRACEPOINT ? "tp_btf" : les_attach_method_name(pr->method);
}

void les_rpc_plan_json(const struct les_rpc_plan *p, struct jw *w)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct les_rpc_probe *pr = &p->probe[i];

		jw_obj_begin(w);
		jw_kv_cstr(w, "plane", "rpc");
		jw_kv_cstr(w, "proto", les_rpc_proto_name(pr->f->proto));
		jw_kv_cstr(w, "probe", pr->f->name);
		jw_kv_cstr(w, "module", pr->where[0] ? pr->where : NULL);
		jw_kv_cstr(w, "role", pr->f->role);
		jw_kv_cstr(w, "method", method_name(pr));
		jw_kv_cstr(w, "reason", pr->reason[0] ? pr->reason : NULL);
		if (pr->f->proto == LES_PROTO_PTLRPC)
			jw_kv_cstr(w, "opcode", p->opcode_source);
		if (pr->f->proto == LES_PROTO_FUSE && pr->method != LES_ATTACH_NONE)
			jw_kv_cstr(w, "fields",
				   pr->nobtf
					   ? "fixed offsets, each request checked by its unique ID"
					   : "BTF (CO-RE)");
		jw_obj_end(w);
	}
}

void les_rpc_plan_text(const struct les_rpc_plan *p, FILE *out)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct les_rpc_probe *pr = &p->probe[i];

		fprintf(out, "%-7s %-6s %-10s %-26s %-12s %s\n", "rpc",
			les_rpc_proto_name(pr->f->proto), "-", pr->f->name, method_name(pr),
			pr->reason[0] ? pr->reason : pr->f->role);
	}
	fprintf(out, "%-7s %-6s %-10s %-26s %-12s %s\n", "rpc", "ptlrpc", "-", "(opcode)", "-",
		p->opcode_source);
}
