/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * RPC plane, Lustre PtlRPC and LDLM. Lustre has no tracepoints and is
 * usually built without BTF, so these are kprobes on PtlRPC's own
 * functions (fentry twins where a module does have BTF; both call the same
 * handlers). The key of a request is its struct ptlrpc_request pointer.
 *
 * Attribution. A request works for the task that created it, not for the
 * thread that happens to send or free it: ptlrpcd threads send most bulk
 * I/O on behalf of writers that returned long ago. So the submitter (task,
 * cgroup, the access op in flight on it and that op's mount) is captured
 * once, at creation: the return of ptlrpc_request_alloc or
 * ptlrpc_request_alloc_pool, which run in the caller. Where a build inlines
 * those, the first of ptlrpcd_add_req and ptlrpc_queue_wait entry (both
 * run in the submitter) stands in; a request first seen at its send has
 * no known submitter and the sender stands in (LES_RPC_F_NO_BTF_TASK).
 * Whoever sends or frees it when that is another thread is the worker.
 *
 * The cause. A bulk request that a kernel thread builds (writeback by a
 * flusher or ptlrpcd, read-ahead) works for the process that dirtied or
 * asked for the pages, not for the thread: osc_brw_prep_request's first
 * page leads to its file (page->mapping->host, vmlinux BTF), and the
 * file's last reader or writer, remembered by the access plane
 * (file_cause), becomes the request's task (LES_RPC_F_CAUSE); the thread
 * that sends it is the worker. Lustre charges its job ID by the same rule
 * (lli_jobinfo). Where the file is not known, the task stays the thread
 * (LES_RPC_F_KTHREAD) and userspace charges the job ID Lustre sent.
 *
 * Records:
 *   queue_wait  ptlrpc_queue_wait entry -> return on one thread: the
 *               caller's synchronous wait, charged to its access op
 *               (rpc_wait_ns, rpc_count);
 *   request     one per reply that Lustre accounts: at
 *               ptlrpc_lprocfs_rpc_sent, where Lustre adds the request to
 *               its per-opcode counters (osc.*.stats, mdc.*.stats) with its
 *               own send-to-reply time, which becomes latency_ns. Bulk
 *               requests (OST_READ, OST_WRITE) wait for
 *               ptlrpc_lprocfs_brw, which gives the bytes moved. A request
 *               sent and released without a reply Lustre accounted
 *               (sptlrpc_cli_free_reqbuf, called by __ptlrpc_free_req for
 *               every request) is a request record of its own
 *               (LES_RPC_F_NO_REPLY) with its errno; one never sent makes
 *               none. Lustre counts neither.
 *   lock_wait   ldlm_cli_enqueue and ldlm_completion_ast entry -> return;
 *   rpc_event   resend, restart, expire, notconn of a request.
 * In flight: a request between its first send and its reply (userspace
 * counts those entries of ptlrpc_reqs per mount).
 *
 * The message: ptlrpc_request_pack / ptlrpc_request_bufs_pack are called
 * with the opcode as a plain argument, in the submitter, and call
 * lustre_msg_set_opc(msg, opcode) on the new message: the pair gives the
 * opcode and the request's message without any structure offset. Where
 * module BTF has struct ptlrpc_request, rq_reqmsg is read by CO-RE as well
 * (and a hand-supplied ptlrpc_reqmsg_off stands in for tests). The message
 * has the wire layout: its magic and the body's pb_type (0 until
 * ptl_send_rpc sets it) are checked before pb_opc is believed, and the
 * body's pb_jobid, which Lustre fills when the request is queued (with the
 * writer's job for bulk writeback that ptlrpcd sends later), is read at
 * the reply. Otherwise a field is absent, never guessed.
 */
#ifndef LES_RPC_PTLRPC_BPF_H
#define LES_RPC_PTLRPC_BPF_H

#include "rpc_common.bpf.h"

/* Wire constants, lustre/include/uapi/linux/lustre/lustre_idl.h. */
#define PTL_MSG_MAGIC_V2	0x0BD00BD3
#define PTL_RPC_MSG_REQUEST	4711
#define PTL_RPC_MSG_ERR		4712
#define PTL_RPC_MSG_REPLY	4713
#define PTL_MSG_HDR_SIZE	32 /* struct lustre_msg_v2 up to lm_buflens[] */
#define PTL_MAX_BUFCOUNT	32
#define PTL_MAX_ERRNO		4095
#define PTL_BODY_JOBID_OFF	152 /* pb_jobid in struct ptlrpc_body_v3 (wiretest.c) */
#define PTL_BODY_V3_SIZE	184
#define PTL_OST_READ		3
#define PTL_OST_WRITE		4
/* struct brw_page: u64 bp_off, then the page (see compat.h); where no BTF says */
#define PTL_BRW_PAGE_PG_OFF	8
#define PTL_PAGE_MAPPING_FLAGS	3 /* PAGE_MAPPING_ANON | PAGE_MAPPING_MOVABLE */

/*
 * Set by userspace when ptlrpc_lprocfs_brw is probed: bulk requests then
 * wait for their bytes before their record goes out.
 */
const volatile bool ptlrpc_brw_probed = false;

/*
 * Set by userspace when the LNet rows run (lnet_msg_commit and the LND's
 * send): a request's PUT is then found by its sending thread
 * (ptlrpc_sending) and its LNet waits added to the request.
 */
const volatile bool lnet_link_requests = false;

/*
 * Set by userspace when ptl_send_rpc is probed: each transmission is
 * counted there, so a request released without any was never sent
 * (refused before it, its import not ready): the record says so.
 */
const volatile bool ptlrpc_sends_probed = false;

/*
 * Offset of rq_reqmsg in struct ptlrpc_request when there is no BTF for it,
 * -1 when unknown. Set by userspace (LES_PTLRPC_REQMSG_OFFSET); no offset
 * table is built in, because the layout depends on Lustre's version and on
 * its build options.
 */
const volatile __s32 ptlrpc_reqmsg_off = -1;


/* Value types in les_maps.h. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384); /* resized by userspace */
	__type(key, __u64); /* struct ptlrpc_request * */
	__type(value, struct ptlrpc_req);
} ptlrpc_reqs SEC(".maps");

/*
 * tid -> the request ptl_send_rpc is sending on it: the next PUT the thread
 * commits is that request's (ptl_send_buf, inside the call), and takes it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64); /* struct ptlrpc_request * */
} ptlrpc_sending SEC(".maps");

/*
 * obd_import -> the mount its last request made inside an access op came
 * from, or the mount of the file whose bulk request a kernel thread built
 * on it. A client's imports (one per MDT and OST) serve one mount;
 * requests made outside any op (writeback that a kworker or ptlrpcd
 * builds, pings) get their mount from here. Imports that neither ever
 * used (a server's own, the MGC's, an OST no file was read or written on
 * since the tool started) stay unknown.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64); /* struct obd_import * */
	__type(value, __u32);
} ptlrpc_import_dev SEC(".maps");

/* tid -> the import ptlrpc_request_alloc{,_pool} was called with (kprobe entry). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} ptlrpc_alloc_import SEC(".maps");

/* tid -> the request being packed on it, between pack and lustre_msg_set_opc. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct ptlrpc_packing);
} ptlrpc_packing SEC(".maps");

/* tid -> the file a kernel thread is building a bulk request of, until its pack. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct ptlrpc_brw_file);
} ptlrpc_brw_file SEC(".maps");

/*
 * tid -> the message lustre_msg_get_status was last called with on it.
 * after_reply reads the reply's status so (its -EINPROGRESS check) right
 * before ptlrpc_lprocfs_rpc_sent, on the same thread.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} ptlrpc_status_msg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384); /* resized by userspace */
	__type(key, struct ptlrpc_wait_key);
	__type(value, struct ptlrpc_wait);
} ptlrpc_waits SEC(".maps");

static __always_inline bool ptl_bad_ptr(__u64 p)
{
	return !p || p >= (__u64)-PTL_MAX_ERRNO;
}

/* Where rq_reqmsg is, or -1. */
static __always_inline __s64 ptl_reqmsg_offset(void)
{
	if (bpf_core_field_exists(struct ptlrpc_request___les, rq_reqmsg))
		return bpf_core_field_offset(struct ptlrpc_request___les, rq_reqmsg);
	return ptlrpc_reqmsg_off;
}

/* The request's message: seen at packing, else through rq_reqmsg; 0 if unknown. */
static __always_inline __u64 ptl_msg_of(const struct ptlrpc_req *v, __u64 req)
{
	__s64 off = ptl_reqmsg_offset();
	__u64 msg = 0;

	if (v && v->msg)
		return v->msg;
	if (off < 0 || off > 4096)
		return 0;
	if (bpf_probe_read_kernel(&msg, sizeof(msg), (void *)(req + off)) || ptl_bad_ptr(msg))
		return 0;
	return msg;
}

/*
 * Where the ptlrpc_body of a packed request message is, and its length,
 * or 0. The message is lustre_msg_v2: a 32-byte header (lm_bufcount at 0,
 * lm_magic at 8, lm_buflens[] at 32) padded to 8 bytes, then buffer 0, the
 * ptlrpc_body (pb_type at 8, pb_opc at 16, pb_jobid at 152 in v3).
 */
static __always_inline __u64 ptl_body(__u64 msg, __u32 *body_len)
{
	__u32 hdr[9] = {};

	if (!msg || bpf_probe_read_kernel(hdr, sizeof(hdr), (void *)msg))
		return 0;
	if (hdr[2] != PTL_MSG_MAGIC_V2 || hdr[0] == 0 || hdr[0] > PTL_MAX_BUFCOUNT)
		return 0;
	*body_len = hdr[8];
	return msg + ((PTL_MSG_HDR_SIZE + 4 * (__u64)hdr[0] + 7) & ~7ULL);
}

/* pb_opc of a request message, or 0. pb_type is 0 until ptl_send_rpc sets it. */
static __always_inline __u32 ptl_read_opcode(__u64 msg)
{
	__u32 body[5] = {}, len = 0;
	__u64 b = ptl_body(msg, &len);

	if (!b || len < sizeof(body) || bpf_probe_read_kernel(body, sizeof(body), (void *)b))
		return 0;
	if (body[2] != PTL_RPC_MSG_REQUEST && body[2] != 0)
		return 0;
	return body[4];
}

static __always_inline void ptl_learn_opcode(struct ptlrpc_req *v, __u64 req)
{
	__u32 opc;

	if (v->flags & LES_RPC_F_OPCODE)
		return;
	opc = ptl_read_opcode(ptl_msg_of(v, req));
	if (opc && opc <= 0xffff) {
		v->opcode = opc;
		v->flags |= LES_RPC_F_OPCODE;
	}
}

/* pb_jobid as the request carries it, when the body is v3 and it is set. */
static __always_inline void ptl_learn_jobid(struct ptlrpc_req *v, __u64 req)
{
	__u32 len = 0;
	__u64 b = ptl_body(ptl_msg_of(v, req), &len);

	if (!b || len < PTL_BODY_V3_SIZE)
		return;
	if (bpf_probe_read_kernel(v->jobid, LES_JOBID_LEN, (void *)(b + PTL_BODY_JOBID_OFF)))
		return;
	v->jobid[LES_JOBID_LEN - 1] = 0;
	if (v->jobid[0])
		v->flags |= LES_RPC_F_JOBID;
}

/* The access op in flight on the current thread, or NULL. */
static __always_inline struct op_frame *ptl_current_frame(void)
{
	return current_frame(thread_ops_get((__u32)bpf_get_current_pid_tgid()));
}

/*
 * The observed mount of the file whose bulk request this kernel thread is
 * building (osc_brw_prep_request told it), or 0.
 */
static __always_inline __u32 ptl_brw_file_dev(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ptlrpc_brw_file *f = bpf_map_lookup_elem(&ptlrpc_brw_file, &tid);

	return f && dev_observed(f->dev) ? f->dev : 0;
}

/*
 * Remember req with the current thread as its submitter. created: req was
 * just allocated, so an entry under its address is left from a request
 * whose free was missed and is replaced; otherwise the first sighting wins.
 * flags: LES_RPC_F_NO_BTF_TASK when the current thread only stands in.
 */
static __always_inline struct ptlrpc_req *ptl_remember(__u64 req, bool created, __u32 flags,
						      __u64 imp)
{
	struct ptlrpc_req v = {}, *old;
	struct op_frame *frame;
	__u32 *imp_dev;

	if (ptl_bad_ptr(req))
		return NULL;
	old = bpf_map_lookup_elem(&ptlrpc_reqs, &req);
	if (old && !created)
		return old;
	frame = ptl_current_frame();
	imp_dev = imp ? bpf_map_lookup_elem(&ptlrpc_import_dev, &imp) : NULL;
	/* A syscall op whose mount its entry could not tell ran on the import's. */
	if (frame && !frame->dev && imp_dev && dev_observed(*imp_dev))
		frame->dev = *imp_dev;
	if (frame && frame->dev) {
		v.parent_op_id = frame->op_id;
		v.dev = frame->dev;
		if (imp && (!imp_dev || *imp_dev != v.dev))
			bpf_map_update_elem(&ptlrpc_import_dev, &imp, &v.dev, BPF_ANY);
	} else if (created && imp && (v.dev = ptl_brw_file_dev()) != 0) {
		/*
		 * A kernel thread's bulk request of a file: the file's mount is
		 * the import's, learnt before any access op used the import
		 * (an OSC that only writeback has used), for its pings too.
		 */
		if (!imp_dev || *imp_dev != v.dev)
			bpf_map_update_elem(&ptlrpc_import_dev, &imp, &v.dev, BPF_ANY);
	} else if (imp_dev && dev_observed(*imp_dev)) {
		v.dev = *imp_dev;
	} else if (!rpc_unattributed[LES_PROTO_PTLRPC]) {
		return NULL;
	}
	v.created_ns = bpf_ktime_get_ns();
	v.req_id = next_op_id();
	v.cgroup_id = bpf_get_current_cgroup_id();
	v.flags = flags | (current_is_kthread() ? LES_RPC_F_KTHREAD : 0);
	fill_current_task(&v.task);
	count_probe(LES_PROBE_PTLRPC_CREATE);
	if (bpf_map_update_elem(&ptlrpc_reqs, &req, &v, BPF_ANY)) {
		count(LES_CNT_INFLIGHT_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&ptlrpc_reqs, &req);
}

/* ptlrpc_request_alloc{,_pool}(imp, ...) returned req. */
static __always_inline int ptl_created(__u64 req, __u64 imp)
{
	ptl_remember(req, true, 0, ptl_bad_ptr(imp) ? 0 : imp);
	return 0;
}

/* kprobe entry of the allocators: the import, for their kretprobe. */
static __always_inline int ptl_alloc_enter(__u64 imp)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_update_elem(&ptlrpc_alloc_import, &tid, &imp, BPF_ANY);
	return 0;
}

static __always_inline int ptl_alloc_return(__u64 req)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *imp = bpf_map_lookup_elem(&ptlrpc_alloc_import, &tid);
	__u64 import = imp ? *imp : 0;

	if (imp)
		bpf_map_delete_elem(&ptlrpc_alloc_import, &tid);
	return ptl_created(req, import);
}

/*
 * ptlrpc_request_alloc_pack(imp, format, version, opcode) returned req.
 * Where ptlrpc_request_alloc is inlined into it (pings on every build
 * seen), the pack inside took the import (ptl_pack) and the entry is
 * gone; otherwise the request is created here.
 */
static __always_inline int ptl_alloc_pack_return(__u64 req)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *imp = bpf_map_lookup_elem(&ptlrpc_alloc_import, &tid);
	__u64 import;

	if (!imp)
		return 0;
	import = *imp;
	bpf_map_delete_elem(&ptlrpc_alloc_import, &tid);
	return ptl_created(req, import);
}

/* lustre_msg_get_status(msg) entry: the message, for the reply's record. */
static __always_inline int ptl_status_read(__u64 msg)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (!ptl_bad_ptr(msg))
		bpf_map_update_elem(&ptlrpc_status_msg, &tid, &msg, BPF_ANY);
	return 0;
}

/* ptlrpcd_add_req: queued for ptlrpcd by its submitter. */
static __always_inline int ptl_queued(__u64 req)
{
	struct ptlrpc_req *v = ptl_remember(req, false, 0, 0);

	if (v)
		ptl_learn_opcode(v, req);
	return 0;
}

/* The import's device name (its target) into name, where module BTF has it. */
static __always_inline void ptl_import_target(struct obd_import___les *imp, char *name,
					      __u32 *flags)
{
	struct obd_device___les *obd;

	if (!bpf_core_field_exists(imp->imp_obd) ||
	    !bpf_core_field_exists(struct obd_device___les, obd_name))
		return;
	obd = BPF_CORE_READ(imp, imp_obd);
	if (obd && bpf_probe_read_kernel_str(name, LES_RPC_NAME_LEN, obd->obd_name) > 0)
		*flags |= LES_RPC_F_TARGET;
}

/*
 * The server's NID: the import's connection's peer at the first send
 * (a failover moves later sends elsewhere), where module BTF has it.
 */
static __always_inline void ptl_learn_nid(struct ptlrpc_req *v, struct obd_import___les *imp)
{
	struct ptlrpc_connection___les *conn;

	if (!bpf_core_field_exists(imp->imp_connection) ||
	    !bpf_core_field_exists(struct ptlrpc_connection___les, c_peer) ||
	    !bpf_core_field_exists(struct lnet_nid___les, nid_type) ||
	    !bpf_core_field_exists(struct lnet_nid___les, nid_addr))
		return;
	conn = BPF_CORE_READ(imp, imp_connection);
	if (!conn || bpf_probe_read_kernel(&v->nid, sizeof(v->nid), &conn->c_peer.nid))
		return;
	v->flags |= LES_RPC_F_NID;
}

/* rq_xid, the import's target and its server's NID, where module BTF has them. */
static __always_inline void ptl_learn_ids(struct ptlrpc_req *v, __u64 req)
{
	struct ptlrpc_request___les *r = (void *)req;
	struct obd_import___les *imp;

	if (bpf_core_field_exists(r->rq_xid)) {
		v->xid = BPF_CORE_READ(r, rq_xid);
		v->flags |= LES_RPC_F_XID;
	}
	/* Read once, at the first send: the import does not change. */
	if ((v->flags & LES_RPC_F_TARGET) || !bpf_core_field_exists(r->rq_import))
		return;
	imp = BPF_CORE_READ(r, rq_import);
	if (!imp)
		return;
	ptl_import_target(imp, v->target, &v->flags);
	ptl_learn_nid(v, imp);
}

/*
 * ptlrpc_send_new_req, ptl_send_rpc: the first one starts the request.
 * transmission: ptl_send_rpc, called once per time the request goes on
 * the wire (its first send, a resend after a timeout, a reconnect or
 * -EINPROGRESS), so its calls after the first are the request's resends.
 */
static __always_inline int ptl_event(__u64 req, __u16 event);

static __always_inline int ptl_send(__u64 req, bool transmission)
{
	struct ptlrpc_req *v = ptl_remember(req, false, LES_RPC_F_NO_BTF_TASK, 0);

	count_probe(LES_PROBE_PTLRPC_SEND);
	if (!v)
		return 0;
	if (transmission)
		v->sends++;
	if (transmission && lnet_link_requests) {
		__u32 tid = (__u32)bpf_get_current_pid_tgid();

		bpf_map_update_elem(&ptlrpc_sending, &tid, &req, BPF_ANY);
	}
	/*
	 * A transmission after the first is a resend event: after a timeout
	 * or -EINPROGRESS nothing else says so; after a reconnect
	 * ptlrpc_resend_req said it already.
	 */
	if (transmission && v->sends > 1) {
		if (v->resend_marked)
			v->resend_marked = 0;
		else
			ptl_event(req, LES_EV_RESEND);
	}
	if (v->sent_ns)
		return 0;
	v->sent_ns = bpf_ktime_get_ns();
	ptl_learn_opcode(v, req);
	/* Its import now: __ptlrpc_free_req drops rq_import before the release. */
	ptl_learn_ids(v, req);
	rpc_set_worker(v->task.tid, &v->flags, &v->worker_pid, v->worker_comm);
	return 0;
}

/* The request record of v, for its submitter. */
static __always_inline void ptl_emit(struct ptlrpc_req *v, __u64 now)
{
	struct les_rec_rpc *rec;

	if (v->service_ns < min_latency_ns || task_rec_filtered_out(&v->task)) {
		count(LES_CNT_FILTERED);
		return;
	}
	rec = reserve(sizeof(*rec));
	if (!rec)
		return;
	rpc_rec_init(rec, LES_PROTO_PTLRPC, LES_RPC_OP_REQUEST, now, v->service_ns);
	rec->opcode = v->opcode;
	rec->bytes = v->bytes;
	rec->parent_op_id = v->parent_op_id;
	rec->req_id = v->req_id;
	rec->cgroup_id = v->cgroup_id;
	rec->dev = v->dev;
	rec->worker_pid = v->worker_pid;
	rec->flags = v->flags;
	if (ptlrpc_sends_probed)
		rec->flags |= LES_RPC_F_SENDS | (v->sends ? 0 : LES_RPC_F_UNSENT);
	rec->task = v->task;
	rec->resends = v->sends > 1 ? v->sends - 1 : 0;
	rec->err = v->err;
	rec->xid = v->xid;
	rec->lnet_wait_ns = v->lnet_wait_ns;
	if (v->flags & LES_RPC_F_TARGET)
		__builtin_memcpy(rec->name, v->target, LES_RPC_NAME_LEN);
	if (v->flags & LES_RPC_F_NID)
		rec->nid = v->nid;
	if (v->flags & LES_RPC_F_SELF_NID)
		rec->self_nid = v->self_nid;
	if (v->sent_ns) {
		rec->backlog_ns = v->sent_ns > v->created_ns ? v->sent_ns - v->created_ns : 0;
		rec->rtt_ns = v->replied_ns > v->sent_ns ? v->replied_ns - v->sent_ns
							 : v->service_ns; /* no reply: until released */
	}
	__builtin_memcpy(rec->worker_comm, v->worker_comm, LES_COMM_LEN);
	if (v->flags & LES_RPC_F_JOBID)
		__builtin_memcpy(rec->jobid, v->jobid, LES_JOBID_LEN);
	submit(rec);
}

static __always_inline bool ptl_is_bulk(const struct ptlrpc_req *v)
{
	return (v->flags & LES_RPC_F_OPCODE) &&
	       (v->opcode == PTL_OST_READ || v->opcode == PTL_OST_WRITE);
}

/*
 * The status of the reply whose message after_reply just read it from on
 * this thread (pb_status, a negative errno), checked to be a reply: as
 * ptlrpc_check_status, an error message with no errno is -EINVAL.
 */
static __always_inline void ptl_learn_status(struct ptlrpc_req *v)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *msg = bpf_map_lookup_elem(&ptlrpc_status_msg, &tid);
	__u32 body[6] = {}, len = 0;
	__s32 status;
	__u64 b;

	if (!msg)
		return;
	b = ptl_body(*msg, &len);
	bpf_map_delete_elem(&ptlrpc_status_msg, &tid);
	if (!b || len < sizeof(body) || bpf_probe_read_kernel(body, sizeof(body), (void *)b))
		return;
	if (body[2] != PTL_RPC_MSG_REPLY && body[2] != PTL_RPC_MSG_ERR)
		return;
	status = (__s32)body[5];
	if (body[2] == PTL_RPC_MSG_ERR && status >= 0)
		status = -22; /* EINVAL */
	v->err = status < 0 && status >= -PTL_MAX_ERRNO ? -status : 0;
	v->flags |= LES_RPC_F_STATUS;
	count_probe(LES_PROBE_PTLRPC_STATUS);
}

/*
 * ptlrpc_lprocfs_rpc_sent(req, service_us): Lustre got the reply and adds
 * the request to its per-opcode counters with service_us, the time from
 * its last send to the reply. The record goes out now, or for a bulk
 * request once ptlrpc_lprocfs_brw has told the bytes.
 */
static __always_inline int ptl_replied(__u64 req, __u64 service_us)
{
	struct ptlrpc_req *v;
	__u64 now;

	count_probe(LES_PROBE_PTLRPC_REPLY);
	v = bpf_map_lookup_elem(&ptlrpc_reqs, &req);
	if (!v)
		return 0;
	now = bpf_ktime_get_ns();
	v->service_ns = service_us * 1000;
	if (!v->sent_ns)
		v->sent_ns = now - v->service_ns; /* its send was not seen */
	v->replied_ns = now;
	ptl_learn_opcode(v, req);
	ptl_learn_jobid(v, req);
	ptl_learn_status(v);
	ptl_learn_ids(v, req);
	rpc_set_worker(v->task.tid, &v->flags, &v->worker_pid, v->worker_comm);
	if (ptlrpc_brw_probed && ptl_is_bulk(v))
		return 0;
	ptl_emit(v, now);
	bpf_map_delete_elem(&ptlrpc_reqs, &req);
	return 0;
}

/* ptlrpc_lprocfs_brw(req, bytes): a bulk request's bytes; its record if replied. */
static __always_inline int ptl_brw(__u64 req, __u64 bytes)
{
	struct ptlrpc_req *v;

	count_probe(LES_PROBE_PTLRPC_BRW);
	v = bpf_map_lookup_elem(&ptlrpc_reqs, &req);
	if (!v)
		return 0;
	v->bytes = bytes;
	if (!v->replied_ns)
		return 0; /* no reply: Lustre counted no request either */
	ptl_emit(v, bpf_ktime_get_ns());
	bpf_map_delete_elem(&ptlrpc_reqs, &req);
	return 0;
}

/*
 * The errno of a request released without a reply: its rq_status where
 * module BTF has it, else what its events said (an expiry is -ETIMEDOUT,
 * a "not connected" reply -ENOTCONN), else -EIO.
 */
static __always_inline __s32 ptl_unreplied_errno(const struct ptlrpc_req *v, __u64 req)
{
	struct ptlrpc_request___les *r = (void *)req;
	int status = 0;

	if (bpf_core_field_exists(r->rq_status))
		status = BPF_CORE_READ(r, rq_status);
	if (status < 0 && status >= -PTL_MAX_ERRNO)
		return -status;
	if (v->events & (1U << LES_EV_EXPIRE))
		return 110; /* ETIMEDOUT */
	if (v->events & (1U << LES_EV_NOTCONN))
		return 107; /* ENOTCONN */
	return 5; /* EIO */
}

/*
 * The request is released: sptlrpc_cli_free_reqbuf, which
 * __ptlrpc_free_req calls for every request it frees (itself inlined on
 * every build seen), or __ptlrpc_free_req where a build has it. A reply
 * still waiting for its bytes goes out without them; a request sent and
 * never replied goes out now with LES_RPC_F_NO_REPLY, its time on the
 * wire until Lustre gave up and its errno; one never sent leaves no
 * record (Lustre counts none either). Nothing waits for the sweep.
 */
static __always_inline int ptl_free(__u64 req)
{
	struct ptlrpc_req *v;
	__u64 now;

	count_probe(LES_PROBE_PTLRPC_FREE);
	v = bpf_map_lookup_elem(&ptlrpc_reqs, &req);
	if (!v)
		return 0;
	now = bpf_ktime_get_ns();
	if (!v->replied_ns && v->sent_ns) {
		ptl_learn_opcode(v, req);
		ptl_learn_jobid(v, req);
		ptl_learn_ids(v, req);
		v->err = ptl_unreplied_errno(v, req);
		v->service_ns = now > v->sent_ns ? now - v->sent_ns : 0;
		v->flags |= LES_RPC_F_NO_REPLY;
	}
	if (v->replied_ns || v->sent_ns)
		ptl_emit(v, now);
	bpf_map_delete_elem(&ptlrpc_reqs, &req);
	return 0;
}

/* Where struct brw_page keeps its page: module BTF, else the layout of 2.12 to 2.17. */
static __always_inline __u64 ptl_brw_page_offset(void)
{
	if (bpf_core_field_exists(struct brw_page___folio, bp_folio))
		return bpf_core_field_offset(struct brw_page___folio, bp_folio);
	if (bpf_core_field_exists(struct brw_page___pg, pg))
		return bpf_core_field_offset(struct brw_page___pg, pg);
	return PTL_BRW_PAGE_PG_OFF;
}

/*
 * osc_brw_prep_request(cmd, cli, oa, page_count, pga, ...) entry: in a
 * kernel thread, the file of the request's first page, for its pack. The
 * pages of one bulk request are of one OST object, so of one file; read
 * before Lustre swaps them for encrypted bounce pages.
 */
static __always_inline int ptl_brw_prep(__u32 page_count, __u64 pga)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ptlrpc_brw_file f = {};
	struct address_space *mapping;
	__u64 bp = 0, pg = 0, inode;

	if (!page_count || ptl_bad_ptr(pga) || !current_is_kthread())
		return 0;
	count_probe(LES_PROBE_PTLRPC_BRW_PREP);
	if (bpf_probe_read_kernel(&bp, sizeof(bp), (void *)pga) || ptl_bad_ptr(bp))
		return 0;
	if (bpf_probe_read_kernel(&pg, sizeof(pg), (void *)(bp + ptl_brw_page_offset())) ||
	    ptl_bad_ptr(pg))
		return 0;
	mapping = BPF_CORE_READ((struct page *)pg, mapping);
	/* Anonymous or movable: a user buffer of direct I/O, not a file's cache. */
	if (!mapping || ((__u64)mapping & PTL_PAGE_MAPPING_FLAGS))
		return 0;
	inode = (__u64)BPF_CORE_READ(mapping, host);
	if (!inode)
		return 0;
	/* Not f.inode inside BPF_CORE_READ: CO-RE would relocate f's own field. */
	f.inode = inode;
	f.ino = BPF_CORE_READ((struct inode *)inode, i_ino);
	f.dev = BPF_CORE_READ((struct inode *)inode, i_sb, s_dev);
	bpf_map_update_elem(&ptlrpc_brw_file, &tid, &f, BPF_ANY);
	return 0;
}

/*
 * A bulk request packed on this thread: charge it to the file's cause when
 * osc_brw_prep_request told the file and the access plane saw who last
 * read or wrote it. The entry goes at the pack, or at the prep's return
 * when the call failed before it (ptl_brw_prep_kr).
 */
static __always_inline void ptl_charge_cause(struct ptlrpc_req *v, __u32 tid)
{
	struct ptlrpc_brw_file *f = bpf_map_lookup_elem(&ptlrpc_brw_file, &tid);
	struct file_cause *c;
	__u64 inode, ino;

	if (!f)
		return;
	inode = f->inode;
	ino = f->ino;
	bpf_map_delete_elem(&ptlrpc_brw_file, &tid);
	c = bpf_map_lookup_elem(&file_cause, &inode);
	if (!c || c->ino != ino || !(v->flags & LES_RPC_F_KTHREAD) || v->task.tid != tid)
		return;
	v->task = c->task;
	v->cgroup_id = c->cgroup_id;
	v->flags = (v->flags & ~LES_RPC_F_KTHREAD) | LES_RPC_F_CAUSE;
	count_probe(LES_PROBE_PTLRPC_CAUSE);
}

/*
 * ptlrpc_request_pack / ptlrpc_request_bufs_pack entry, in the submitter:
 * the opcode is an argument; the message comes with lustre_msg_set_opc.
 */
static __always_inline int ptl_pack(__u64 req, __u32 opcode)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ptlrpc_packing p = { .req = req, .opcode = opcode };
	__u64 *imp = bpf_map_lookup_elem(&ptlrpc_alloc_import, &tid);
	struct ptlrpc_req *v;
	__u64 import;

	count_probe(LES_PROBE_PTLRPC_PACK);
	if (imp) {
		/*
		 * Packed inside an allocator whose own return is not seen
		 * (ptlrpc_request_alloc inlined into ptlrpc_request_alloc_pack):
		 * the request is new, on the allocator's import.
		 */
		import = *imp;
		bpf_map_delete_elem(&ptlrpc_alloc_import, &tid);
		v = ptl_remember(req, true, 0, ptl_bad_ptr(import) ? 0 : import);
	} else {
		v = ptl_remember(req, false, 0, 0);
	}
	if (!v)
		return 0;
	if (opcode && opcode <= 0xffff) {
		v->opcode = opcode;
		v->flags |= LES_RPC_F_OPCODE;
	}
	if (ptl_is_bulk(v))
		ptl_charge_cause(v, tid);
	bpf_map_update_elem(&ptlrpc_packing, &tid, &p, BPF_ANY);
	return 0;
}

/*
 * lustre_msg_set_opc(msg, opcode): the message of the request this thread
 * is packing, when the opcode matches (servers set reply opcodes too).
 */
static __always_inline int ptl_set_opc(__u64 msg, __u32 opcode)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ptlrpc_packing *p = bpf_map_lookup_elem(&ptlrpc_packing, &tid);
	struct ptlrpc_req *v;

	if (!p)
		return 0;
	if (p->opcode == opcode && !ptl_bad_ptr(msg)) {
		v = bpf_map_lookup_elem(&ptlrpc_reqs, &p->req);
		if (v)
			v->msg = msg;
	}
	bpf_map_delete_elem(&ptlrpc_packing, &tid);
	return 0;
}

static __always_inline void ptl_wait_begin(__u32 what, __u64 req, const struct ptlrpc_req *v,
					   __u32 flags)
{
	struct ptlrpc_wait_key key = { .tid = (__u32)bpf_get_current_pid_tgid(), .what = what };
	struct op_frame *frame = ptl_current_frame();
	struct ptlrpc_wait_key enqueue = {.tid = key.tid, .what = LES_RPC_OP_LOCK_ENQUEUE};
	struct ptlrpc_wait w = {.start_ns = bpf_ktime_get_ns(), .req = req, .flags = flags};
	struct ptlrpc_wait *outer;

	/*
	 * ldlm_cli_enqueue waits for its request (queue_wait) and then for the
	 * grant (ldlm_completion_ast) on the same thread: those two are
	 * nested in its lock_wait, and say so, so that no sum counts them twice.
	 */
	if (what != LES_RPC_OP_LOCK_ENQUEUE &&
	    (outer = bpf_map_lookup_elem(&ptlrpc_waits, &enqueue)) != NULL)
		w.parent_wait_id = outer->wait_id;
	if (v) {
		w.req_id = v->req_id;
		w.opcode = v->opcode;
		w.flags |= v->flags & LES_RPC_F_OPCODE;
	}
	if (frame) {
		w.parent_op_id = frame->op_id;
		w.dev = frame->dev ? frame->dev : (v ? v->dev : 0);
	} else if (v && v->dev) {
		w.dev = v->dev; /* outside any op (a path walk's revalidation): its import's mount */
	} else if (!rpc_unattributed[LES_PROTO_PTLRPC]) {
		return;
	}
	w.wait_id = next_op_id();
	if (bpf_map_update_elem(&ptlrpc_waits, &key, &w, BPF_ANY))
		count(LES_CNT_INFLIGHT_FULL);
}

/* Charge a synchronous wait to the access op it happened in. */
static __always_inline void ptl_charge_frame(__u64 parent_op_id, __u64 latency)
{
	struct op_frame *frame;

	if (!parent_op_id)
		return;
	frame = ptl_current_frame();
	if (!frame || frame->op_id != parent_op_id)
		return;
	frame->rpc_wait_ns += latency;
	frame->rpc_count += 1;
}

/*
 * The end of a wait on the current thread: a queue_wait or lock_wait
 * record for the current task, rc its int return value.
 */
static __always_inline void ptl_wait_end(__u32 what, __u16 proto, __u64 rc, __u32 probe)
{
	struct ptlrpc_wait_key key = { .tid = (__u32)bpf_get_current_pid_tgid(), .what = what };
	struct les_rec_rpc *rec;
	struct ptlrpc_wait *w;
	__u64 now, latency;
	__s32 irc = (__s32)rc;

	count_probe(probe);
	w = bpf_map_lookup_elem(&ptlrpc_waits, &key);
	if (!w)
		return;
	now = bpf_ktime_get_ns();
	latency = now - w->start_ns;
	if (what == LES_RPC_OP_QUEUE_WAIT)
		ptl_charge_frame(w->parent_op_id, latency);
	if (latency < min_latency_ns || task_filtered_out(bpf_get_current_pid_tgid() >> 32)) {
		count(LES_CNT_FILTERED);
		goto out;
	}
	rec = reserve(sizeof(*rec));
	if (!rec)
		goto out;
	rpc_rec_init(rec, proto, what, now, latency);
	rec->parent_op_id = w->parent_op_id;
	rec->dev = w->dev;
	rec->cgroup_id = bpf_get_current_cgroup_id();
	rec->err = irc < 0 && irc >= -PTL_MAX_ERRNO ? -irc : 0;
	rec->req_id = w->req_id;
	rec->opcode = w->opcode;
	rec->flags = w->flags;
	rec->wait_id = w->wait_id;
	rec->parent_wait_id = w->parent_wait_id;
	fill_current_task(&rec->task);
	submit(rec);
out:
	bpf_map_delete_elem(&ptlrpc_waits, &key);
}

/* ptlrpc_queue_wait entry: the caller queues req and waits for it. */
static __always_inline int ptl_queue_wait_enter(__u64 req)
{
	struct ptlrpc_req *v = ptl_remember(req, false, 0, 0);

	if (v)
		ptl_learn_opcode(v, req);
	ptl_wait_begin(LES_RPC_OP_QUEUE_WAIT, req, v, 0);
	return 0;
}

/* An event in a request's life, reported for its submitter. */
static __always_inline int ptl_event(__u64 req, __u16 event)
{
	struct les_rec_rpc_event *rec;
	struct op_frame *frame;
	struct ptlrpc_req *v;

	count_probe(LES_PROBE_PTLRPC_EVENT);
	v = bpf_map_lookup_elem(&ptlrpc_reqs, &req);
	if (!v && !rpc_unattributed[LES_PROTO_PTLRPC])
		return 0;
	if (v) {
		ptl_learn_opcode(v, req);
		v->events |= 1U << event;
	}
	if (v ? task_rec_filtered_out(&v->task)
	      : task_filtered_out(bpf_get_current_pid_tgid() >> 32)) {
		count(LES_CNT_FILTERED);
		return 0;
	}
	rec = reserve(sizeof(*rec));
	if (!rec)
		return 0;
	rec->kind = LES_REC_RPC_EVENT;
	rec->proto = LES_PROTO_PTLRPC;
	rec->event = event;
	rec->ts_ns = bpf_ktime_get_ns();
	rec->worker_pid = 0;
	__builtin_memset(rec->worker_comm, 0, LES_COMM_LEN);
	__builtin_memset(rec->name, 0, LES_RPC_NAME_LEN);
	if (v) {
		rec->parent_op_id = v->parent_op_id;
		rec->req_id = v->req_id;
		rec->cgroup_id = v->cgroup_id;
		rec->dev = v->dev;
		rec->opcode = v->opcode;
		rec->flags =
			v->flags & (LES_RPC_F_OPCODE | LES_RPC_F_NO_BTF_TASK | LES_RPC_F_TARGET);
		if (v->flags & LES_RPC_F_TARGET)
			__builtin_memcpy(rec->name, v->target, LES_RPC_NAME_LEN);
		rec->task = v->task;
		rpc_set_worker(v->task.tid, &rec->flags, &rec->worker_pid, rec->worker_comm);
	} else {
		frame = ptl_current_frame();
		rec->parent_op_id = frame ? frame->op_id : 0;
		rec->req_id = 0;
		rec->cgroup_id = bpf_get_current_cgroup_id();
		rec->dev = frame ? frame->dev : 0;
		rec->opcode = 0;
		rec->flags = LES_RPC_F_NO_BTF_TASK;
		fill_current_task(&rec->task);
	}
	submit(rec);
	return 0;
}

/*
 * ptlrpc_invalidate_import_thread(imp): the thread Lustre starts only for
 * an import a server evicted (ptlrpc_import_recovery_state_machine in
 * LUSTRE_IMP_EVICTED), before it fails the import's requests in progress
 * and reconnects. An event of the import, not of a request: its mount is
 * the import's (none for the MGC's), its task the invalidating thread.
 */
static __always_inline int ptl_evicted(__u64 imp)
{
	struct les_rec_rpc_event *rec;
	__u32 *imp_dev;

	count_probe(LES_PROBE_PTLRPC_EVENT);
	imp_dev = bpf_map_lookup_elem(&ptlrpc_import_dev, &imp);
	if ((!imp_dev || !dev_observed(*imp_dev)) && !rpc_unattributed[LES_PROTO_PTLRPC])
		return 0;
	if (task_filtered_out(bpf_get_current_pid_tgid() >> 32)) {
		count(LES_CNT_FILTERED);
		return 0;
	}
	rec = reserve(sizeof(*rec));
	if (!rec)
		return 0;
	__builtin_memset(rec, 0, sizeof(*rec));
	rec->kind = LES_REC_RPC_EVENT;
	rec->proto = LES_PROTO_PTLRPC;
	rec->event = LES_EV_EVICT;
	rec->ts_ns = bpf_ktime_get_ns();
	rec->cgroup_id = bpf_get_current_cgroup_id();
	rec->dev = imp_dev ? *imp_dev : 0;
	rec->flags = LES_RPC_F_NO_BTF_TASK;
	ptl_import_target((void *)imp, rec->name, &rec->flags);
	fill_current_task(&rec->task);
	submit(rec);
	return 0;
}

/*
 * class_new_import(obd)'s return: an import born at an address. Whatever
 * ptlrpc_import_dev held for that address was an import since freed (a
 * second mount's, unmounted), and a new import there (an OST's LWP to the
 * MDT, made again when the OST restarts) must not inherit its mount.
 */
static __always_inline int ptl_import_new(__u64 imp)
{
	if (!ptl_bad_ptr(imp))
		bpf_map_delete_elem(&ptlrpc_import_dev, &imp);
	return 0;
}

/* --- kprobe/kretprobe ---------------------------------------------------- */

/*
 * Program names: ptl_<what>_{kp,kr,fe,fx}. Userspace (src/probe/rpcprobes.c)
 * keeps one family per function and disables the other before load.
 */

SEC("kprobe/ptlrpc_request_alloc")
int BPF_KPROBE(ptl_alloc_kp, void *imp)
{
	return ptl_alloc_enter((__u64)imp);
}

SEC("kretprobe/ptlrpc_request_alloc")
int BPF_KRETPROBE(ptl_alloc_kr, void *ret)
{
	return ptl_alloc_return((__u64)ret);
}

SEC("kprobe/ptlrpc_request_alloc_pool")
int BPF_KPROBE(ptl_alloc_pool_kp, void *imp)
{
	return ptl_alloc_enter((__u64)imp);
}

SEC("kretprobe/ptlrpc_request_alloc_pool")
int BPF_KRETPROBE(ptl_alloc_pool_kr, void *ret)
{
	return ptl_alloc_return((__u64)ret);
}

SEC("kprobe/ptlrpc_request_alloc_pack")
int BPF_KPROBE(ptl_alloc_pack_kp, void *imp)
{
	return ptl_alloc_enter((__u64)imp);
}

SEC("kretprobe/ptlrpc_request_alloc_pack")
int BPF_KRETPROBE(ptl_alloc_pack_kr, void *ret)
{
	return ptl_alloc_pack_return((__u64)ret);
}

SEC("kprobe/lustre_msg_get_status")
int BPF_KPROBE(ptl_msg_status_kp, void *msg)
{
	return ptl_status_read((__u64)msg);
}

SEC("kprobe/ptlrpcd_add_req")
int BPF_KPROBE(ptl_add_req_kp, void *req)
{
	return ptl_queued((__u64)req);
}

SEC("kprobe/ptlrpc_queue_wait")
int BPF_KPROBE(ptl_queue_wait_kp, void *req)
{
	return ptl_queue_wait_enter((__u64)req);
}

SEC("kretprobe/ptlrpc_queue_wait")
int BPF_KRETPROBE(ptl_queue_wait_kr, long rc)
{
	ptl_wait_end(LES_RPC_OP_QUEUE_WAIT, LES_PROTO_PTLRPC, rc, LES_PROBE_PTLRPC_WAIT);
	return 0;
}

SEC("kprobe/ptlrpc_send_new_req")
int BPF_KPROBE(ptl_send_new_req_kp, void *req)
{
	return ptl_send((__u64)req, false);
}

SEC("kprobe/ptl_send_rpc")
int BPF_KPROBE(ptl_send_rpc_kp, void *req)
{
	return ptl_send((__u64)req, true);
}

SEC("kprobe/sptlrpc_cli_free_reqbuf")
int BPF_KPROBE(ptl_free_reqbuf_kp, void *req)
{
	return ptl_free((__u64)req);
}

SEC("kprobe/__ptlrpc_free_req")
int BPF_KPROBE(ptl_free_req_kp, void *req)
{
	return ptl_free((__u64)req);
}

/* 7 arguments: more than the trampolines of kernels before 6.6 take, so a kprobe. */
SEC("kprobe/osc_brw_prep_request")
int BPF_KPROBE(ptl_brw_prep_kp, int cmd, void *cli, void *oa, __u32 page_count, void *pga)
{
	return ptl_brw_prep(page_count, (__u64)pga);
}

/*
 * Its return: the file is the request's only while it is built. A call
 * that failed before its pack (an import evicted) would otherwise leave
 * the file to the thread's next request of any kind (a kworker's connect
 * of another import, charged to the file's mount).
 */
SEC("kretprobe/osc_brw_prep_request")
int BPF_KRETPROBE(ptl_brw_prep_kr, long rc)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&ptlrpc_brw_file, &tid);
	return 0;
}

SEC("kprobe/ptlrpc_request_pack")
int BPF_KPROBE(ptl_pack_kp, void *req, __u32 version, int opcode)
{
	return ptl_pack((__u64)req, (__u32)opcode);
}

SEC("kprobe/ptlrpc_request_bufs_pack")
int BPF_KPROBE(ptl_bufs_pack_kp, void *req, __u32 version, int opcode)
{
	return ptl_pack((__u64)req, (__u32)opcode);
}

SEC("kprobe/lustre_msg_set_opc")
int BPF_KPROBE(ptl_set_opc_kp, void *msg, __u32 opcode)
{
	return ptl_set_opc((__u64)msg, opcode);
}

SEC("kprobe/ptlrpc_lprocfs_rpc_sent")
int BPF_KPROBE(ptl_rpc_sent_kp, void *req, long amount)
{
	return ptl_replied((__u64)req, amount > 0 ? (__u64)amount : 0);
}

SEC("kprobe/ptlrpc_lprocfs_brw")
int BPF_KPROBE(ptl_brw_kp, void *req, int bytes)
{
	return ptl_brw((__u64)req, bytes > 0 ? (__u64)bytes : 0);
}

/* ptlrpc_resend_req: a reconnect marks the request for a resend. */
static __always_inline int ptl_resend_marked(__u64 req)
{
	struct ptlrpc_req *v = bpf_map_lookup_elem(&ptlrpc_reqs, &req);

	if (v)
		v->resend_marked = 1;
	return ptl_event(req, LES_EV_RESEND);
}

SEC("kprobe/ptlrpc_resend_req")
int BPF_KPROBE(ptl_resend_kp, void *req)
{
	return ptl_resend_marked((__u64)req);
}

SEC("kprobe/ptlrpc_restart_req")
int BPF_KPROBE(ptl_restart_kp, void *req)
{
	return ptl_event((__u64)req, LES_EV_RESTART);
}

SEC("kprobe/ptlrpc_expire_one_request")
int BPF_KPROBE(ptl_expire_kp, void *req)
{
	return ptl_event((__u64)req, LES_EV_EXPIRE);
}

SEC("kprobe/ptlrpc_request_handle_notconn")
int BPF_KPROBE(ptl_notconn_kp, void *req)
{
	return ptl_event((__u64)req, LES_EV_NOTCONN);
}

SEC("kprobe/ptlrpc_invalidate_import_thread")
int BPF_KPROBE(ptl_evicted_kp, void *imp)
{
	return ptl_evicted((__u64)imp);
}

SEC("kretprobe/class_new_import")
int BPF_KRETPROBE(ptl_import_new_kr, void *imp)
{
	return ptl_import_new((__u64)imp);
}

/*
 * Flags of the enqueue's reply that say the server queued the lock behind a
 * conflicting one (LDLM_FL_BLOCK_GRANTED, _CONV, _WAIT: bits 1-3), or the
 * caller's LDLM_FL_WAIT_NOREPROC (bit 35) for a lock still pending. Wire
 * flags (lustre_dlm_flags.h), the same in 2.15 and master.
 */
#define PTL_LDLM_FL_BLOCKED_MASK  0xeULL
#define PTL_LDLM_FL_WAIT_NOREPROC (1ULL << 35)

/*
 * ldlm_completion_ast(lock, flags, data): the wait for the grant. A blocked
 * lock waits here until the holders of the conflicting locks cancel them
 * (their blocking ASTs) and the server sends the completion AST.
 */
static __always_inline int ptl_completion_begin(__u64 flags)
{
	bool blocked = (flags & PTL_LDLM_FL_BLOCKED_MASK) || flags == PTL_LDLM_FL_WAIT_NOREPROC;

	ptl_wait_begin(LES_RPC_OP_LOCK_COMPLETION, 0, NULL, blocked ? LES_RPC_F_LOCK_BLOCKED : 0);
	return 0;
}

SEC("kprobe/ldlm_cli_enqueue")
int BPF_KPROBE(ptl_enqueue_kp)
{
	ptl_wait_begin(LES_RPC_OP_LOCK_ENQUEUE, 0, NULL, 0);
	return 0;
}

SEC("kretprobe/ldlm_cli_enqueue")
int BPF_KRETPROBE(ptl_enqueue_kr, long rc)
{
	ptl_wait_end(LES_RPC_OP_LOCK_ENQUEUE, LES_PROTO_LDLM, rc, LES_PROBE_LDLM_WAIT);
	return 0;
}

SEC("kprobe/ldlm_completion_ast")
int BPF_KPROBE(ptl_completion_kp, void *lock, __u64 flags)
{
	return ptl_completion_begin(flags);
}

SEC("kretprobe/ldlm_completion_ast")
int BPF_KRETPROBE(ptl_completion_kr, long rc)
{
	ptl_wait_end(LES_RPC_OP_LOCK_COMPLETION, LES_PROTO_LDLM, rc, LES_PROBE_LDLM_WAIT);
	return 0;
}

/*
 * --- fentry/fexit twins, for Lustre modules built with BTF -------------
 *
 * Arguments through fn_ctx_arg (access_fn.bpf.h): plain numbers whatever
 * the module's prototypes say. fexit finds the return value after the
 * arguments. ldlm_cli_enqueue has 11 arguments and osc_brw_prep_request 7,
 * more than the trampolines of many kernels take: they are always kprobes.
 */

SEC("fexit/ptlrpc_request_alloc")
int ptl_alloc_fx(__u64 *ctx)
{
	return ptl_created(fn_ctx_arg(ctx, 2), fn_ctx_arg(ctx, 0));
}

SEC("fexit/ptlrpc_request_alloc_pool")
int ptl_alloc_pool_fx(__u64 *ctx)
{
	return ptl_created(fn_ctx_arg(ctx, 3), fn_ctx_arg(ctx, 0));
}

SEC("fentry/ptlrpc_request_alloc_pack")
int ptl_alloc_pack_fe(__u64 *ctx)
{
	return ptl_alloc_enter(fn_ctx_arg(ctx, 0));
}

SEC("fexit/ptlrpc_request_alloc_pack")
int ptl_alloc_pack_fx(__u64 *ctx)
{
	return ptl_alloc_pack_return(fn_ctx_arg(ctx, 4));
}

SEC("fentry/lustre_msg_get_status")
int ptl_msg_status_fe(__u64 *ctx)
{
	return ptl_status_read(fn_ctx_arg(ctx, 0));
}

SEC("fentry/ptlrpcd_add_req")
int ptl_add_req_fe(__u64 *ctx)
{
	return ptl_queued(fn_ctx_arg(ctx, 0));
}

SEC("fentry/ptlrpc_queue_wait")
int ptl_queue_wait_fe(__u64 *ctx)
{
	return ptl_queue_wait_enter(fn_ctx_arg(ctx, 0));
}

SEC("fexit/ptlrpc_queue_wait")
int ptl_queue_wait_fx(__u64 *ctx)
{
	ptl_wait_end(LES_RPC_OP_QUEUE_WAIT, LES_PROTO_PTLRPC, fn_ctx_arg(ctx, 1),
		     LES_PROBE_PTLRPC_WAIT);
	return 0;
}

SEC("fentry/ptlrpc_send_new_req")
int ptl_send_new_req_fe(__u64 *ctx)
{
	return ptl_send(fn_ctx_arg(ctx, 0), false);
}

SEC("fentry/ptl_send_rpc")
int ptl_send_rpc_fe(__u64 *ctx)
{
	return ptl_send(fn_ctx_arg(ctx, 0), true);
}

SEC("fentry/sptlrpc_cli_free_reqbuf")
int ptl_free_reqbuf_fe(__u64 *ctx)
{
	return ptl_free(fn_ctx_arg(ctx, 0));
}

SEC("fentry/__ptlrpc_free_req")
int ptl_free_req_fe(__u64 *ctx)
{
	return ptl_free(fn_ctx_arg(ctx, 0));
}

SEC("fentry/ptlrpc_request_pack")
int ptl_pack_fe(__u64 *ctx)
{
	return ptl_pack(fn_ctx_arg(ctx, 0), (__u32)fn_ctx_arg(ctx, 2));
}

SEC("fentry/ptlrpc_request_bufs_pack")
int ptl_bufs_pack_fe(__u64 *ctx)
{
	return ptl_pack(fn_ctx_arg(ctx, 0), (__u32)fn_ctx_arg(ctx, 2));
}

SEC("fentry/lustre_msg_set_opc")
int ptl_set_opc_fe(__u64 *ctx)
{
	return ptl_set_opc(fn_ctx_arg(ctx, 0), (__u32)fn_ctx_arg(ctx, 1));
}

SEC("fentry/ptlrpc_lprocfs_rpc_sent")
int ptl_rpc_sent_fe(__u64 *ctx)
{
	__s64 amount = (__s64)fn_ctx_arg(ctx, 1);

	return ptl_replied(fn_ctx_arg(ctx, 0), amount > 0 ? (__u64)amount : 0);
}

SEC("fentry/ptlrpc_lprocfs_brw")
int ptl_brw_fe(__u64 *ctx)
{
	__s32 bytes = (__s32)fn_ctx_arg(ctx, 1);

	return ptl_brw(fn_ctx_arg(ctx, 0), bytes > 0 ? (__u64)bytes : 0);
}

SEC("fentry/ptlrpc_resend_req")
int ptl_resend_fe(__u64 *ctx)
{
	return ptl_resend_marked(fn_ctx_arg(ctx, 0));
}

SEC("fentry/ptlrpc_restart_req")
int ptl_restart_fe(__u64 *ctx)
{
	return ptl_event(fn_ctx_arg(ctx, 0), LES_EV_RESTART);
}

SEC("fentry/ptlrpc_expire_one_request")
int ptl_expire_fe(__u64 *ctx)
{
	return ptl_event(fn_ctx_arg(ctx, 0), LES_EV_EXPIRE);
}

SEC("fentry/ptlrpc_request_handle_notconn")
int ptl_notconn_fe(__u64 *ctx)
{
	return ptl_event(fn_ctx_arg(ctx, 0), LES_EV_NOTCONN);
}

SEC("fentry/ptlrpc_invalidate_import_thread")
int ptl_evicted_fe(__u64 *ctx)
{
	return ptl_evicted(fn_ctx_arg(ctx, 0));
}

SEC("fexit/class_new_import")
int ptl_import_new_fx(__u64 *ctx)
{
	return ptl_import_new(fn_ctx_arg(ctx, 1));
}

SEC("fentry/ldlm_completion_ast")
int ptl_completion_fe(__u64 *ctx)
{
	return ptl_completion_begin(fn_ctx_arg(ctx, 1));
}

SEC("fexit/ldlm_completion_ast")
int ptl_completion_fx(__u64 *ctx)
{
	ptl_wait_end(LES_RPC_OP_LOCK_COMPLETION, LES_PROTO_LDLM, fn_ctx_arg(ctx, 3),
		     LES_PROBE_LDLM_WAIT);
	return 0;
}

#endif /* LES_RPC_PTLRPC_BPF_H */
