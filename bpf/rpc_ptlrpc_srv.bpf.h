/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * RPC plane, the PtlRPC server side: one record (struct les_rec_srv) per
 * request a service handled, on an MDS, an OSS, an MGS, and for a client's
 * own LDLM callback service. The key of a request is its server-side
 * struct ptlrpc_request pointer, from its NRS enqueue to its handler's
 * return.
 *
 * ptlrpc_server_handle_request and ptlrpc_server_handle_req_in, where the
 * steps are, are inlined into ptlrpc_main on the builds seen (2.17.57 for
 * Debian's 6.12). So the steps are taken where a call stays a call:
 *   ptlrpc_nrs_req_add(svcpt, req, hp)   the request leaves the incoming
 *                                        queue for the NRS policy's (global,
 *                                        called from another file);
 *   ptlrpc_server_request_get(svcpt, force) returns the request a service
 *                                        thread takes (static, but out of
 *                                        line and its only caller inlined:
 *                                        its return is the one dequeue point);
 *   the service's so_req_handler(req)    tgt_request_handle for the targets'
 *                                        services, ldlm_callback_handler and
 *                                        ldlm_cancel_handler for LDLM's:
 *                                        function-pointer targets, so never
 *                                        inlined; its return makes the record;
 *   ptlrpc_send_reply(req, flags)        the reply goes out (an early reply
 *                                        is sent on a copy of the request,
 *                                        with PTLRPC_REPLY_EARLY: not it).
 * Lustre's own rpctrace line "Handled RPC ... Request processed in Xus (Yus
 * total)" times X from just before the dequeue's return to the handler's
 * return and Y from rq_arrival_time: the record's start_ns and arrival.
 *
 * Every field is read by CO-RE from module BTF (struct ptlrpc_request is
 * not a wire format); the message's body (opcode, pb_flags, pb_jobid) by
 * its wire layout. Without module BTF the planner plans none of these.
 */
#ifndef LES_RPC_PTLRPC_SRV_BPF_H
#define LES_RPC_PTLRPC_SRV_BPF_H

#include "rpc_ptlrpc.bpf.h"

/*
 * Within the handling, where the planner attached them: the bulk transfer
 * (target_bulk_io, global in the ptlrpc module) and the OSD's block I/O
 * (osd_fini_iobuf, global in osd_ldiskfs). Each flags the record's field
 * valid, so that 0 says "none" and null says "not traced".
 */
const volatile bool srv_bulk_planned = false;
const volatile bool srv_io_planned = false;

#define PTL_REPLY_EARLY	   0x02 /* PTLRPC_REPLY_EARLY, lustre_net.h */
#define PTL_BODY_FLAGS_OFF 56	/* pb_flags in struct ptlrpc_body (wiretest.c) */

/*
 * Requests queued or in handling. One dropped before its handler ran (its
 * deadline passed in the queue) stays until the tracer's sweep removes it
 * (stale_swept); LRU as well, so that a full table drops its oldest.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384); /* resized by userspace */
	__type(key, __u64);	    /* struct ptlrpc_request * */
	__type(value, struct ptlrpc_srv);
} ptlrpc_srv SEC(".maps");

/* tid -> the request its handler runs on, for the kretprobe. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} ptlrpc_srv_thread SEC(".maps");

static __always_inline struct ptlrpc_srv *srv_state(__u64 req)
{
	struct ptlrpc_srv zero = {}, *v;

	if (ptl_bad_ptr(req))
		return NULL;
	v = bpf_map_lookup_elem(&ptlrpc_srv, &req);
	if (v)
		return v;
	zero.seen_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&ptlrpc_srv, &req, &zero, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&ptlrpc_srv, &req)) {
		count(LES_CNT_SRV_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&ptlrpc_srv, &req);
}

/* ptlrpc_nrs_req_add(svcpt, req, hp): out of the incoming queue, into NRS. */
static __always_inline int srv_nrs_add(__u64 req)
{
	struct ptlrpc_srv *v;

	count_probe(LES_PROBE_SRV_NRS_ADD);
	v = srv_state(req);
	if (v) {
		/* A request's address reused: a new request, its old state is stale. */
		v->start_ns = 0;
		v->handler_ns = 0;
		v->reply_ns = 0;
		v->bulk_start_ns = 0;
		v->bulk_ns = 0;
		v->io_ns = 0;
		v->io_count = 0;
		v->nrs_ns = bpf_ktime_get_ns();
		v->seen_ns = v->nrs_ns;
	}
	return 0;
}

/* ptlrpc_server_request_get returned req: a service thread takes it. */
static __always_inline int srv_dequeue(__u64 req)
{
	struct ptlrpc_srv *v;

	if (ptl_bad_ptr(req))
		return 0;
	count_probe(LES_PROBE_SRV_DEQUEUE);
	v = srv_state(req);
	if (v)
		v->start_ns = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int srv_handler_enter(__u64 req)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ptlrpc_srv *v;

	if (ptl_bad_ptr(req))
		return 0;
	bpf_map_update_elem(&ptlrpc_srv_thread, &tid, &req, BPF_ANY);
	v = bpf_map_lookup_elem(&ptlrpc_srv, &req);
	if (v)
		v->handler_ns = bpf_ktime_get_ns();
	return 0;
}

/* ptlrpc_send_reply(req, flags): the first reply that is not an early one. */
static __always_inline int srv_reply(__u64 req, __s32 flags)
{
	struct ptlrpc_srv *v;

	count_probe(LES_PROBE_SRV_REPLY);
	if (flags & PTL_REPLY_EARLY)
		return 0;
	v = bpf_map_lookup_elem(&ptlrpc_srv, &req);
	if (v && !v->reply_ns)
		v->reply_ns = bpf_ktime_get_ns();
	return 0;
}

/* The request message's body: opcode, pb_flags and pb_jobid, each with its flag. */
static __always_inline void srv_read_body(struct les_rec_srv *rec, __u64 msg)
{
	__u32 len = 0, opc = ptl_read_opcode(msg);
	__u64 b = ptl_body(msg, &len);

	if (opc && opc <= 0xffff) {
		rec->opcode = opc;
		rec->flags |= LES_SRV_F_OPCODE;
	}
	if (b && len >= PTL_BODY_FLAGS_OFF + 4 &&
	    !bpf_probe_read_kernel(&rec->msg_flags, sizeof(rec->msg_flags),
				   (void *)(b + PTL_BODY_FLAGS_OFF)))
		rec->flags |= LES_SRV_F_FLAGS;
	if (!b || len < PTL_BODY_V3_SIZE ||
	    bpf_probe_read_kernel(rec->jobid, LES_JOBID_LEN, (void *)(b + PTL_BODY_JOBID_OFF)))
		return;
	rec->jobid[LES_JOBID_LEN - 1] = 0;
	if (rec->jobid[0])
		rec->flags |= LES_SRV_F_JOBID;
}

/* Its service's name, its export's device, its peer's and our NID. */
static __always_inline void srv_read_names(struct les_rec_srv *rec, struct ptlrpc_request___les *r)
{
	struct obd_device___les *obd;
	const char *name;

	name = BPF_CORE_READ(r, rq_srv.sr_rqbd, rqbd_svcpt, scp_service, srv_name);
	if (name)
		bpf_probe_read_kernel_str(rec->service, LES_RPC_NAME_LEN, name);
	if (bpf_core_field_exists(struct obd_export___les, exp_obd)) {
		obd = BPF_CORE_READ(r, rq_export, exp_obd);
		if (obd &&
		    bpf_probe_read_kernel_str(rec->target, LES_RPC_NAME_LEN, obd->obd_name) > 0)
			rec->flags |= LES_SRV_F_TARGET;
	}
	/* Since 2.15 a struct lnet_nid; before, a 64-bit lnet_nid_t: left unread. */
	if (bpf_core_field_exists(struct lnet_nid___les, nid_type) &&
	    bpf_core_field_exists(r->rq_self) &&
	    !bpf_probe_read_kernel(&rec->peer, sizeof(rec->peer), &r->rq_peer.nid) &&
	    !bpf_probe_read_kernel(&rec->self, sizeof(rec->self), &r->rq_self))
		rec->flags |= LES_SRV_F_PEER;
}

static __always_inline void srv_rec_init(struct les_rec_srv *rec, const struct ptlrpc_srv *v,
					 __u64 now)
{
	rec->kind = LES_REC_SRV;
	rec->opcode = 0;
	rec->flags = (v->nrs_ns ? LES_SRV_F_NRS : 0) | (v->reply_ns ? LES_SRV_F_REPLY : 0) |
		     (srv_bulk_planned ? LES_SRV_F_BULK : 0) | (srv_io_planned ? LES_SRV_F_IO : 0);
	rec->ts_ns = now;
	rec->nrs_ns = v->nrs_ns;
	rec->start_ns = v->start_ns;
	rec->handler_ns = v->handler_ns ? v->handler_ns : v->start_ns;
	rec->reply_ns = v->reply_ns;
	rec->msg_flags = 0;
	rec->tid = (__u32)bpf_get_current_pid_tgid();
	rec->io_count = v->io_count;
	rec->bulk_ns = v->bulk_ns;
	rec->proto = LES_PROTO_PTLRPC;
	rec->vers = 0;
	rec->prog = 0;
	rec->io_ns = v->io_ns;
	rec->offset = 0;
	rec->count = 0;
	__builtin_memset(&rec->peer, 0, sizeof(rec->peer));
	__builtin_memset(&rec->self, 0, sizeof(rec->self));
	__builtin_memset(&rec->client, 0, sizeof(rec->client));
	__builtin_memset(rec->service, 0, LES_RPC_NAME_LEN);
	__builtin_memset(rec->target, 0, LES_RPC_NAME_LEN);
	__builtin_memset(rec->jobid, 0, LES_JOBID_LEN);
	__builtin_memset(rec->procname, 0, LES_RPC_NAME_LEN);
	bpf_get_current_comm(rec->comm, LES_COMM_LEN);
}

/*
 * The request's message: rq_reqmsg is a macro for rq_pill.rc_reqmsg (the
 * request's capsule) in the builds seen; a field of that name, elsewhere.
 */
static __always_inline __u64 srv_reqmsg(struct ptlrpc_request___les *r)
{
	if (bpf_core_field_exists(r->rq_pill))
		return (__u64)BPF_CORE_READ(r, rq_pill.rc_reqmsg);
	if (bpf_core_field_exists(r->rq_reqmsg))
		return (__u64)BPF_CORE_READ(r, rq_reqmsg);
	return 0;
}

/* The handler returned: the request's record. */
static __always_inline int srv_handled(__u64 req)
{
	struct ptlrpc_request___les *r = (void *)req;
	struct ptlrpc_srv *v;
	struct les_rec_srv *rec;
	__u64 now = bpf_ktime_get_ns();

	count_probe(LES_PROBE_SRV_HANDLE);
	/*
	 * Without module BTF the planner leaves the server rows off; this
	 * check lets the program load anyway (the verifier tests load every
	 * program on kernels without Lustre): the reads below are then dead
	 * code, which the verifier drops, relocations that failed and all.
	 */
	if (!bpf_core_field_exists(r->rq_xid) || !bpf_core_field_exists(r->rq_srv))
		return 0;
	v = ptl_bad_ptr(req) ? NULL : bpf_map_lookup_elem(&ptlrpc_srv, &req);
	if (!v || !v->start_ns) {
		count(LES_CNT_SRV_UNTRACKED);
		return 0;
	}
	rec = reserve(sizeof(*rec));
	if (!rec) {
		bpf_map_delete_elem(&ptlrpc_srv, &req);
		return 0;
	}
	srv_rec_init(rec, v, now);
	rec->xid = BPF_CORE_READ(r, rq_xid);
	rec->transno = BPF_CORE_READ(r, rq_transno);
	rec->status = BPF_CORE_READ(r, rq_status);
	rec->arrival_real_ns = BPF_CORE_READ(r, rq_srv.sr_arrival_time.tv_sec) * 1000000000ULL +
			       BPF_CORE_READ(r, rq_srv.sr_arrival_time.tv_nsec);
	srv_read_body(rec, srv_reqmsg(r));
	srv_read_names(rec, r);
	submit(rec);
	bpf_map_delete_elem(&ptlrpc_srv, &req);
	return 0;
}

static __always_inline int srv_handler_exit(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *req = bpf_map_lookup_elem(&ptlrpc_srv_thread, &tid);
	__u64 r;

	if (!req) {
		count(LES_CNT_SRV_UNTRACKED);
		return 0;
	}
	r = *req;
	bpf_map_delete_elem(&ptlrpc_srv_thread, &tid);
	return srv_handled(r);
}

/* The request a service thread is handling, for the steps inside it. */
static __always_inline struct ptlrpc_srv *srv_of_thread(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *req = bpf_map_lookup_elem(&ptlrpc_srv_thread, &tid);

	return req ? bpf_map_lookup_elem(&ptlrpc_srv, req) : NULL;
}

/* target_bulk_io(exp, desc): the bulk transfer of desc->bd_req begins. */
static __always_inline int srv_bulk_begin(__u64 desc)
{
	struct ptlrpc_bulk_desc___les *d = (void *)desc;
	struct ptlrpc_srv *v;
	__u64 req;

	count_probe(LES_PROBE_SRV_BULK);
	if (!bpf_core_field_exists(d->bd_req) || ptl_bad_ptr(desc))
		return 0;
	req = (__u64)BPF_CORE_READ(d, bd_req);
	v = ptl_bad_ptr(req) ? NULL : bpf_map_lookup_elem(&ptlrpc_srv, &req);
	if (v)
		v->bulk_start_ns = bpf_ktime_get_ns();
	return 0;
}

/* target_bulk_io returned on the handling thread: the transfer's time. */
static __always_inline int srv_bulk_end(struct ptlrpc_srv *v)
{
	if (v && v->bulk_start_ns) {
		v->bulk_ns += bpf_ktime_get_ns() - v->bulk_start_ns;
		v->bulk_start_ns = 0;
	}
	return 0;
}

/*
 * osd_fini_iobuf(d, iobuf): an I/O's time is filed into brw_stats when
 * dr_elapsed_valid is set (and cleared right after); the same value here.
 * It runs on the service thread: a read waits in osd_do_bio, a write in
 * osd_trans_stop, both inside the handler.
 */
static __always_inline int srv_iobuf(__u64 iobuf)
{
	struct osd_iobuf___les *io = (void *)iobuf;
	struct ptlrpc_srv *v;
	__s64 elapsed;

	count_probe(LES_PROBE_SRV_IO);
	if (!bpf_core_field_exists(io->dr_elapsed) || ptl_bad_ptr(iobuf) ||
	    !BPF_CORE_READ_BITFIELD_PROBED(io, dr_elapsed_valid))
		return 0;
	v = srv_of_thread();
	elapsed = BPF_CORE_READ(io, dr_elapsed);
	if (v && elapsed > 0) {
		v->io_ns += (__u64)elapsed;
		v->io_count++;
	}
	return 0;
}

SEC("kprobe/target_bulk_io")
int BPF_KPROBE(srv_bulk_kp, void *exp, void *desc)
{
	return srv_bulk_begin((__u64)desc);
}

SEC("kretprobe/target_bulk_io")
int BPF_KRETPROBE(srv_bulk_kr, long rc)
{
	return srv_bulk_end(srv_of_thread());
}

SEC("kprobe/osd_fini_iobuf")
int BPF_KPROBE(srv_iobuf_kp, void *d, void *iobuf)
{
	return srv_iobuf((__u64)iobuf);
}

SEC("fentry/target_bulk_io")
int srv_bulk_fe(__u64 *ctx)
{
	return srv_bulk_begin(fn_ctx_arg(ctx, 1));
}

SEC("fexit/target_bulk_io")
int srv_bulk_fx(__u64 *ctx)
{
	return srv_bulk_end(srv_of_thread());
}

SEC("fentry/osd_fini_iobuf")
int srv_iobuf_fe(__u64 *ctx)
{
	return srv_iobuf(fn_ctx_arg(ctx, 1));
}

SEC("kprobe/ptlrpc_nrs_req_add")
int BPF_KPROBE(srv_nrs_add_kp, void *svcpt, void *req)
{
	return srv_nrs_add((__u64)req);
}

SEC("kretprobe/ptlrpc_server_request_get")
int BPF_KRETPROBE(srv_request_get_kr, void *req)
{
	return srv_dequeue((__u64)req);
}

SEC("kprobe/ptlrpc_send_reply")
int BPF_KPROBE(srv_send_reply_kp, void *req, int flags)
{
	return srv_reply((__u64)req, flags);
}

/* The handlers: one pair of programs each, attached by the planner's rows. */
#define SRV_HANDLER_KPROBES(fn, kp, kr)               \
	SEC("kprobe/" #fn)                            \
	int BPF_KPROBE(kp, void *req)                 \
	{                                             \
		return srv_handler_enter((__u64)req); \
	}                                             \
	SEC("kretprobe/" #fn)                         \
	int BPF_KRETPROBE(kr, long rc)                \
	{                                             \
		return srv_handler_exit();            \
	}

SRV_HANDLER_KPROBES(tgt_request_handle, srv_tgt_handle_kp, srv_tgt_handle_kr)
SRV_HANDLER_KPROBES(ldlm_callback_handler, srv_ldlm_cb_kp, srv_ldlm_cb_kr)
SRV_HANDLER_KPROBES(ldlm_cancel_handler, srv_ldlm_cancel_kp, srv_ldlm_cancel_kr)

SEC("fentry/ptlrpc_nrs_req_add")
int srv_nrs_add_fe(__u64 *ctx)
{
	return srv_nrs_add(fn_ctx_arg(ctx, 1));
}

SEC("fexit/ptlrpc_server_request_get")
int srv_request_get_fx(__u64 *ctx)
{
	return srv_dequeue(fn_ctx_arg(ctx, 2));
}

SEC("fentry/ptlrpc_send_reply")
int srv_send_reply_fe(__u64 *ctx)
{
	return srv_reply(fn_ctx_arg(ctx, 0), (__s32)fn_ctx_arg(ctx, 1));
}

/* fexit has the argument: no thread map. */
#define SRV_HANDLER_FENTRY(fn, fe, fx)                         \
	SEC("fentry/" #fn)                                     \
	int fe(__u64 *ctx)                                     \
	{                                                      \
		return srv_handler_enter(fn_ctx_arg(ctx, 0));  \
	}                                                      \
	SEC("fexit/" #fn)                                      \
	int fx(__u64 *ctx)                                     \
	{                                                      \
		__u32 tid = (__u32)bpf_get_current_pid_tgid(); \
		bpf_map_delete_elem(&ptlrpc_srv_thread, &tid); \
		return srv_handled(fn_ctx_arg(ctx, 0));        \
	}

SRV_HANDLER_FENTRY(tgt_request_handle, srv_tgt_handle_fe, srv_tgt_handle_fx)
SRV_HANDLER_FENTRY(ldlm_callback_handler, srv_ldlm_cb_fe, srv_ldlm_cb_fx)
SRV_HANDLER_FENTRY(ldlm_cancel_handler, srv_ldlm_cancel_fe, srv_ldlm_cancel_fx)

#endif /* LES_RPC_PTLRPC_SRV_BPF_H */
