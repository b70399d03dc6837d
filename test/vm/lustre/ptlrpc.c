// SPDX-License-Identifier: GPL-2.0
/*
 * The stand-in's PtlRPC: request creation, synchronous waits, the ptlrpcd
 * worker that sends and completes requests on its own, and the injected
 * delays and failures. No request leaves the machine: "sending" stamps the
 * request and "the reply" arrives after rpc_latency_ms.
 *
 * Call chains, as in Lustre:
 *   sync:  ptlrpc_request_alloc, ptlrpc_request_pack, ptlrpc_queue_wait
 *          -> ptlrpc_send_new_req -> ptl_send_rpc, all in the caller;
 *          ptlrpc_req_put -> __ptlrpc_free_req in the caller
 *   async: ptlrpc_request_alloc, ptlrpc_request_pack, ptlrpcd_add_req in
 *          the caller, which returns; ptlrpc_send_new_req, ptl_send_rpc,
 *          the interpret callback and __ptlrpc_free_req in ptlrpcd_00_00
 *   fault: after a reply wait, one of ptlrpc_expire_one_request,
 *          ptlrpc_request_handle_notconn, ptlrpc_restart_req or
 *          ptlrpc_resend_req, then ptl_send_rpc again and another wait
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/sysfs.h>

#include "standin.h"

/* The published part of struct ptlrpc_request's layout (see standin.h). */
static_assert(offsetof(struct ptlrpc_request, rq_type) == 0);
static_assert(offsetof(struct ptlrpc_request, rq_status) == 4);
static_assert(offsetof(struct ptlrpc_request, rq_xid) == 8);
static_assert(offsetof(struct ptlrpc_request, rq_opc) == 16);
static_assert(offsetof(struct ptlrpc_request, rq_phase) == 20);
static_assert(offsetof(struct ptlrpc_request, rq_send_state) == 24);
static_assert(offsetof(struct ptlrpc_request, rq_submitter_pid) == 28);
static_assert(offsetof(struct ptlrpc_request, rq_reqmsg) == 32);
static_assert(offsetof(struct ptlrpc_request, rq_import) == 40);
static_assert(offsetof(struct ptlrpc_request, rq_sent_ns) == 48);
static_assert(offsetof(struct ptlrpc_body, pb_opc) == 16);
static_assert(offsetof(struct lustre_msg, lm_buflens) == 32);

/* Size of the record buffer that follows the body (mdt_rec_reint is 136). */
#define LES_REC_SIZE 136

/* ---- Module parameters: injection knobs and counters ---- */

static unsigned int rpc_latency_ms;
module_param(rpc_latency_ms, uint, 0644);
MODULE_PARM_DESC(rpc_latency_ms, "time every transmission waits for its reply");

static bool async_writes;
module_param(async_writes, bool, 0644);
MODULE_PARM_DESC(async_writes, "writes hand their OST_WRITE to ptlrpcd_00_00 and return");

bool les_async_writes(void)
{
	return READ_ONCE(async_writes);
}

/*
 * atomic_t parameters: the budgets are decremented by requests while a
 * test may write them, the counters are bumped from several threads.
 */
static int les_param_set_atomic(const char *val, const struct kernel_param *kp)
{
	int n, rc;

	rc = kstrtoint(val, 0, &n);
	if (rc)
		return rc;
	if (n < 0)
		return -EINVAL;
	atomic_set(kp->arg, n);
	return 0;
}

static int les_param_get_atomic(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(kp->arg));
}

static const struct kernel_param_ops les_budget_ops = {
	.set = les_param_set_atomic,
	.get = les_param_get_atomic,
};

static const struct kernel_param_ops les_counter_ops = {
	.get = les_param_get_atomic,
};

/* Injected faults, in the order a request meets them. */
enum les_fault {
	LES_FAULT_EXPIRE,
	LES_FAULT_NOTCONN,
	LES_FAULT_RESTART,
	LES_FAULT_RESEND,
	LES_FAULT_MAX,
};

/* How many of the next requests get each fault (once per request). */
static atomic_t les_fault_budget[LES_FAULT_MAX];
/* How many times each fault function ran. */
static atomic_t les_fault_done[LES_FAULT_MAX];

module_param_cb(expire_count, &les_budget_ops, &les_fault_budget[LES_FAULT_EXPIRE], 0644);
MODULE_PARM_DESC(expire_count, "the next N requests time out once each");
module_param_cb(notconn_count, &les_budget_ops, &les_fault_budget[LES_FAULT_NOTCONN], 0644);
MODULE_PARM_DESC(notconn_count, "the next N requests get -ENOTCONN once each");
module_param_cb(restart_count, &les_budget_ops, &les_fault_budget[LES_FAULT_RESTART], 0644);
MODULE_PARM_DESC(restart_count, "the next N requests are restarted once each");
module_param_cb(resend_count, &les_budget_ops, &les_fault_budget[LES_FAULT_RESEND], 0644);
MODULE_PARM_DESC(resend_count, "the next N requests are resent once each");

module_param_cb(expires, &les_counter_ops, &les_fault_done[LES_FAULT_EXPIRE], 0444);
module_param_cb(notconns, &les_counter_ops, &les_fault_done[LES_FAULT_NOTCONN], 0444);
module_param_cb(restarts, &les_counter_ops, &les_fault_done[LES_FAULT_RESTART], 0444);
module_param_cb(resends, &les_counter_ops, &les_fault_done[LES_FAULT_RESEND], 0444);

static atomic_t les_sent;	   /* ptlrpc_send_new_req calls */
static atomic_t les_freed;	   /* __ptlrpc_free_req calls */
static atomic_t les_replied;	   /* ptlrpc_lprocfs_rpc_sent calls: replies accounted */
static atomic_t les_brw;	   /* ptlrpc_lprocfs_brw calls */
static atomic_t les_in_flight;	   /* sent, reply not yet in */
static atomic_t les_ptlrpcd_freed; /* freed in ptlrpcd's context */
static atomic_t les_retransmits;   /* ptl_send_rpc calls after a request's first */
module_param_cb(requests_sent, &les_counter_ops, &les_sent, 0444);
module_param_cb(requests_freed, &les_counter_ops, &les_freed, 0444);
module_param_cb(requests_replied, &les_counter_ops, &les_replied, 0444);
module_param_cb(requests_brw, &les_counter_ops, &les_brw, 0444);
module_param_cb(requests_in_flight, &les_counter_ops, &les_in_flight, 0444);
module_param_cb(requests_freed_by_ptlrpcd, &les_counter_ops, &les_ptlrpcd_freed, 0444);
module_param_cb(retransmissions, &les_counter_ops, &les_retransmits, 0444);

/* "name=offset ..." for the fields a tracer may read. */
static int les_param_get_layout(char *buf, const struct kernel_param *kp)
{
#define LES_OFF(f) #f, offsetof(struct ptlrpc_request, f)
	return sysfs_emit(buf,
			  "%s=%zu %s=%zu %s=%zu %s=%zu %s=%zu %s=%zu %s=%zu %s=%zu %s=%zu %s=%zu\n",
			  LES_OFF(rq_type), LES_OFF(rq_status), LES_OFF(rq_xid), LES_OFF(rq_opc),
			  LES_OFF(rq_phase), LES_OFF(rq_send_state), LES_OFF(rq_submitter_pid),
			  LES_OFF(rq_reqmsg), LES_OFF(rq_import), LES_OFF(rq_sent_ns));
#undef LES_OFF
}

static const struct kernel_param_ops les_layout_ops = {
	.get = les_param_get_layout,
};
module_param_cb(request_layout, &les_layout_ops, NULL, 0444);
MODULE_PARM_DESC(request_layout, "offsets in struct ptlrpc_request");

/* ---- Requests ---- */

/* Lustre starts xids from the clock so that a remount does not reuse them. */
static atomic64_t les_last_xid;

static struct task_struct *les_ptlrpcd_task;

/* The header with lm_buflens[], padded to 8 bytes as on the wire. */
static size_t lustre_msg_hdr_size(__u32 bufcount)
{
	return round_up(sizeof(struct lustre_msg) + sizeof(__u32) * bufcount, 8);
}

static void *lustre_msg_buf(struct lustre_msg *msg, int n)
{
	size_t off = lustre_msg_hdr_size(msg->lm_bufcount);
	int i;

	for (i = 0; i < n; i++)
		off += round_up(msg->lm_buflens[i], 8);
	return (char *)msg + off;
}

LES_PROBED struct ptlrpc_request *ptlrpc_request_alloc(struct obd_import *imp,
						       const struct req_format *format)
{
	struct ptlrpc_request *req;

	req = kzalloc(sizeof(*req), GFP_NOFS);
	if (!req)
		return NULL;
	req->rq_type = PTL_RPC_MSG_REQUEST;
	req->rq_phase = RQ_PHASE_NEW;
	req->rq_send_state = LUSTRE_IMP_FULL;
	/* The task that creates the request is the one it works for. */
	req->rq_submitter_pid = current->pid;
	req->rq_import = imp;
	req->rq_format = format;
	refcount_set(&req->rq_refcount, 1);
	spin_lock_init(&req->rq_lock);
	INIT_LIST_HEAD(&req->rq_list);
	return req;
}

/* Real Lustre sets pb_opc here, called on the request's new message while packing. */
LES_PROBED void lustre_msg_set_opc(struct lustre_msg *msg, __u32 opcode)
{
	struct ptlrpc_body *body = lustre_msg_buf(msg, 0);

	body->pb_opc = opcode;
}

/*
 * As Lustre: the body's type stays 0 until ptl_send_rpc, and the opcode
 * goes in through lustre_msg_set_opc.
 */
LES_PROBED int ptlrpc_request_bufs_pack(struct ptlrpc_request *request, __u32 version, int opcode,
					char **bufs, void *ctx)
{
	int bufcount = request->rq_format ? request->rq_format->rf_bufcount : 1;
	struct lustre_msg *msg;
	struct ptlrpc_body *body;
	size_t len;

	len = lustre_msg_hdr_size(bufcount) + round_up(sizeof(*body), 8) +
	      (bufcount - 1) * LES_REC_SIZE;
	msg = kzalloc(len, GFP_NOFS);
	if (!msg)
		return -ENOMEM;
	msg->lm_bufcount = bufcount;
	msg->lm_magic = LUSTRE_MSG_MAGIC_V2;
	msg->lm_buflens[0] = sizeof(*body);
	if (bufcount > 1)
		msg->lm_buflens[1] = LES_REC_SIZE;
	body = lustre_msg_buf(msg, 0);
	body->pb_version = version | PTLRPC_MSG_VERSION;
	request->rq_reqmsg = msg;
	request->rq_reqlen = len;
	request->rq_opc = opcode;
	request->rq_xid = atomic64_inc_return(&les_last_xid);
	lustre_msg_set_opc(msg, opcode);
	return 0;
}

LES_PROBED int ptlrpc_request_pack(struct ptlrpc_request *request, __u32 version, int opcode)
{
	return ptlrpc_request_bufs_pack(request, version, opcode, NULL, NULL);
}

/*
 * The job ID as Lustre's default jobid_name "%e.%u" gives it (the stand-in
 * has no jobid_var), set when the request is queued, in the submitter.
 */
LES_PROBED void lustre_msg_set_jobinfo(struct lustre_msg *msg, const void *ji)
{
	struct ptlrpc_body *body = lustre_msg_buf(msg, 0);

	if (body->pb_jobid[0])
		return;
	body->pb_uid = from_kuid(&init_user_ns, current_uid());
	body->pb_gid = from_kgid(&init_user_ns, current_gid());
	snprintf(body->pb_jobid, sizeof(body->pb_jobid), "%s.%u", current->comm, body->pb_uid);
}

/* Lustre's per-opcode accounting of a reply; amount: microseconds since the send. */
LES_PROBED void ptlrpc_lprocfs_rpc_sent(struct ptlrpc_request *req, long amount)
{
	atomic_inc(&les_replied);
}

/* Lustre's bulk byte accounting (brw_interpret), after the reply. */
LES_PROBED void ptlrpc_lprocfs_brw(struct ptlrpc_request *req, int bytes)
{
	atomic_inc(&les_brw);
}

static const struct req_format les_fmt_body = {"body", 1};
static const struct req_format les_fmt_reint = {"reint", 2};

struct ptlrpc_request *les_request_new(struct obd_import *imp, __u32 version, int opcode,
				       __u32 reint_op)
{
	const struct req_format *fmt = reint_op ? &les_fmt_reint : &les_fmt_body;
	struct ptlrpc_request *req;
	int rc;

	req = ptlrpc_request_alloc(imp, fmt);
	if (!req)
		return ERR_PTR(-ENOMEM);
	rc = ptlrpc_request_pack(req, version, opcode);
	if (rc) {
		ptlrpc_req_put(req);
		return ERR_PTR(rc);
	}
	if (reint_op)
		*(__u32 *)lustre_msg_buf(req->rq_reqmsg, 1) = reint_op;
	return req;
}

LES_PROBED int ptl_send_rpc(struct ptlrpc_request *request, int noreply)
{
	struct ptlrpc_body *body = lustre_msg_buf(request->rq_reqmsg, 0);

	body->pb_type = PTL_RPC_MSG_REQUEST;
	/* Nothing crosses a network: the reply wait starts now. */
	request->rq_sent_ns = ktime_get();
	request->rq_sent = 1;
	return 0;
}

LES_PROBED int ptlrpc_send_new_req(struct ptlrpc_request *req)
{
	struct obd_import *imp = req->rq_import;

	req->rq_phase = RQ_PHASE_RPC;
	req->rq_send_state = imp->imp_state;
	atomic_inc(&imp->imp_inflight);
	atomic_inc(&les_in_flight);
	atomic_inc(&les_sent);
	return ptl_send_rpc(req, 0);
}

LES_PROBED int ptlrpc_expire_one_request(struct ptlrpc_request *req, int async_unlink)
{
	atomic_inc(&les_fault_done[LES_FAULT_EXPIRE]);
	spin_lock(&req->rq_lock);
	req->rq_timedout = 1;
	req->rq_status = -ETIMEDOUT;
	spin_unlock(&req->rq_lock);
	/* 0: keep trying (a recoverable import), as Lustre returns. */
	return 0;
}

LES_PROBED void ptlrpc_request_handle_notconn(struct ptlrpc_request *failed_req)
{
	struct obd_import *imp = failed_req->rq_import;

	atomic_inc(&les_fault_done[LES_FAULT_NOTCONN]);
	failed_req->rq_status = -ENOTCONN;
	/* The import reconnects at once: there is no server to wait for. */
	imp->imp_state = LUSTRE_IMP_CONNECTING;
	atomic_inc(&imp->imp_conn_cnt);
	imp->imp_state = LUSTRE_IMP_FULL;
}

LES_PROBED void ptlrpc_restart_req(struct ptlrpc_request *req)
{
	atomic_inc(&les_fault_done[LES_FAULT_RESTART]);
	req->rq_status = -ERESTARTSYS;
	spin_lock(&req->rq_lock);
	req->rq_restart = 1;
	req->rq_timedout = 0;
	spin_unlock(&req->rq_lock);
}

LES_PROBED void ptlrpc_resend_req(struct ptlrpc_request *req)
{
	atomic_inc(&les_fault_done[LES_FAULT_RESEND]);
	spin_lock(&req->rq_lock);
	req->rq_status = -EAGAIN;
	req->rq_resend = 1;
	req->rq_resend_nr++;
	req->rq_timedout = 0;
	spin_unlock(&req->rq_lock);
}

/* The next fault this request has not had yet and that has budget left. */
static int les_next_fault(unsigned int *had)
{
	int f;

	for (f = 0; f < LES_FAULT_MAX; f++) {
		if (*had & BIT(f))
			continue;
		if (atomic_dec_if_positive(&les_fault_budget[f]) >= 0) {
			*had |= BIT(f);
			return f;
		}
	}
	return -1;
}

static void les_apply_fault(struct ptlrpc_request *req, int fault)
{
	switch (fault) {
	case LES_FAULT_EXPIRE:
		ptlrpc_expire_one_request(req, 0);
		break;
	case LES_FAULT_NOTCONN:
		ptlrpc_request_handle_notconn(req);
		break;
	case LES_FAULT_RESTART:
		ptlrpc_restart_req(req);
		break;
	case LES_FAULT_RESEND:
		ptlrpc_resend_req(req);
		break;
	}
}

/*
 * Wait for the reply to a sent request, in whatever context sent it. Each
 * transmission waits rpc_latency_ms; an injected fault then sends again.
 */
static int les_await_reply(struct ptlrpc_request *req)
{
	unsigned int had = 0;
	unsigned int latency;
	int fault;

	for (;;) {
		latency = READ_ONCE(rpc_latency_ms);
		if (latency)
			les_sleep_ms(latency);
		fault = les_next_fault(&had);
		if (fault < 0)
			break;
		les_apply_fault(req, fault);
		/* Every fault is followed by a transmission, as in Lustre. */
		atomic_inc(&les_retransmits);
		ptl_send_rpc(req, 0);
	}
	ptlrpc_lprocfs_rpc_sent(req, (long)ktime_us_delta(ktime_get(), req->rq_sent_ns));
	if (req->rq_opc == OST_READ || req->rq_opc == OST_WRITE)
		ptlrpc_lprocfs_brw(req, req->rq_bulk_nob);
	spin_lock(&req->rq_lock);
	req->rq_replied = 1;
	req->rq_resend = 0;
	req->rq_restart = 0;
	req->rq_timedout = 0;
	req->rq_status = 0;
	req->rq_phase = RQ_PHASE_INTERPRET;
	spin_unlock(&req->rq_lock);
	atomic_dec(&req->rq_import->imp_inflight);
	atomic_dec(&les_in_flight);
	return 0;
}

LES_PROBED int ptlrpc_queue_wait(struct ptlrpc_request *req)
{
	struct ptlrpc_body *body = lustre_msg_buf(req->rq_reqmsg, 0);
	int rc;

	/* "for distributed debugging", as Lustre does. */
	body->pb_status = current->pid;
	lustre_msg_set_jobinfo(req->rq_reqmsg, NULL);
	rc = ptlrpc_send_new_req(req);
	if (!rc)
		rc = les_await_reply(req);
	req->rq_phase = RQ_PHASE_COMPLETE;
	return rc;
}

LES_PROBED void __ptlrpc_free_req(struct ptlrpc_request *request, int locked)
{
	atomic_inc(&les_freed);
	if (current == les_ptlrpcd_task)
		atomic_inc(&les_ptlrpcd_freed);
	kfree(request->rq_reqmsg);
	kfree(request);
}

LES_PROBED void ptlrpc_req_put(struct ptlrpc_request *request)
{
	if (request && refcount_dec_and_test(&request->rq_refcount))
		__ptlrpc_free_req(request, 0);
}

/* ---- ptlrpcd: one worker, named as Lustre names its first one ---- */

static LIST_HEAD(les_ptlrpcd_queue);
static DEFINE_SPINLOCK(les_ptlrpcd_lock);
static DECLARE_WAIT_QUEUE_HEAD(les_ptlrpcd_waitq);

LES_PROBED void ptlrpcd_add_req(struct ptlrpc_request *req)
{
	lustre_msg_set_jobinfo(req->rq_reqmsg, NULL);
	spin_lock(&les_ptlrpcd_lock);
	list_add_tail(&req->rq_list, &les_ptlrpcd_queue);
	spin_unlock(&les_ptlrpcd_lock);
	wake_up(&les_ptlrpcd_waitq);
}

static struct ptlrpc_request *les_ptlrpcd_next(void)
{
	struct ptlrpc_request *req;

	spin_lock(&les_ptlrpcd_lock);
	req = list_first_entry_or_null(&les_ptlrpcd_queue, struct ptlrpc_request, rq_list);
	if (req)
		list_del_init(&req->rq_list);
	spin_unlock(&les_ptlrpcd_lock);
	return req;
}

static void les_ptlrpcd_run(struct ptlrpc_request *req)
{
	int rc;

	rc = ptlrpc_send_new_req(req);
	if (!rc)
		rc = les_await_reply(req);
	req->rq_phase = RQ_PHASE_COMPLETE;
	if (req->rq_interpret_reply)
		req->rq_interpret_reply(NULL, req, req->rq_cb_data, rc);
	ptlrpc_req_put(req);
}

static bool les_ptlrpcd_has_work(void)
{
	bool busy;

	spin_lock(&les_ptlrpcd_lock);
	busy = !list_empty(&les_ptlrpcd_queue);
	spin_unlock(&les_ptlrpcd_lock);
	return busy;
}

static int ptlrpcd(void *arg)
{
	struct ptlrpc_request *req;

	while (!kthread_should_stop()) {
		wait_event_interruptible(les_ptlrpcd_waitq,
					 les_ptlrpcd_has_work() || kthread_should_stop());
		while ((req = les_ptlrpcd_next()))
			les_ptlrpcd_run(req);
	}
	return 0;
}

int les_ptlrpc_init(void)
{
	atomic64_set(&les_last_xid, ktime_get_real_seconds() << 20);
	les_ptlrpcd_task = kthread_run(ptlrpcd, NULL, "ptlrpcd_%02d_%02d", 0, 0);
	if (IS_ERR(les_ptlrpcd_task))
		return PTR_ERR(les_ptlrpcd_task);
	return 0;
}

/* Called with no filesystem mounted, so the queue is empty. */
void les_ptlrpc_fini(void)
{
	kthread_stop(les_ptlrpcd_task);
}
