// SPDX-License-Identifier: GPL-2.0
/*
 * The stand-in's LDLM client: an enqueue is one LDLM_ENQUEUE request
 * through ptlrpc_queue_wait; when the "server" answers that the lock is
 * blocked (lock_wait_ms > 0), the completion AST waits for the grant, in
 * the enqueuing task, as ldlm_cli_enqueue -> ldlm_cli_enqueue_fini ->
 * l_completion_ast does in Lustre. There is no lock table: callers cache
 * the granted mode themselves.
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "standin.h"

static unsigned int lock_wait_ms;
module_param(lock_wait_ms, uint, 0644);
MODULE_PARM_DESC(lock_wait_ms, "every granted lock is blocked this long before its grant");

static atomic_t les_lock_waits;
static atomic_t les_enqueues;

static int les_param_get_count(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(kp->arg));
}

static const struct kernel_param_ops les_count_ops = {
	.get = les_param_get_count,
};
module_param_cb(lock_enqueues, &les_count_ops, &les_enqueues, 0444);
module_param_cb(lock_waits, &les_count_ops, &les_lock_waits, 0444);

static atomic64_t les_lock_cookie = ATOMIC64_INIT(0x5ca1ab1e0000ULL);

LES_PROBED int ldlm_completion_ast(struct ldlm_lock *lock, __u64 flags, void *data)
{
	if (!(flags & LDLM_FL_BLOCKED_MASK)) {
		/* Granted in the enqueue reply: nothing to wait for. */
		lock->l_granted_mode = lock->l_req_mode;
		return 0;
	}
	/* The completion callback "arrives" after the injected wait. */
	atomic_inc(&les_lock_waits);
	if (lock->l_grant_delay_ms)
		les_sleep_ms(lock->l_grant_delay_ms);
	lock->l_granted_mode = lock->l_req_mode;
	return 0;
}

/*
 * The real signature (lustre/ldlm/ldlm_request.c). Differences: lvb and
 * policy are not sent anywhere; async must be 0; einfo->ei_cb_cp NULL
 * stands for an intent-only enqueue (open), whose lock is not granted, so
 * no completion wait follows. A request passed in *reqp is used and left
 * to the caller, as in Lustre.
 */
LES_PROBED int ldlm_cli_enqueue(struct obd_export *exp, struct ptlrpc_request **reqp,
				struct ldlm_enqueue_info *einfo, const struct ldlm_res_id *res_id,
				union ldlm_policy_data const *policy, __u64 *flags, void *lvb,
				__u32 lvb_len, enum lvb_type lvb_type, struct lustre_handle *lockh,
				int async)
{
	ldlm_completion_callback completion = einfo->ei_cb_cp;
	struct ptlrpc_request *req = reqp ? *reqp : NULL;
	struct ldlm_lock *lock;
	__u64 reply_flags = 0;
	int rc;

	if (async)
		return -EOPNOTSUPP;
	lock = kzalloc(sizeof(*lock), GFP_NOFS);
	if (!lock)
		return -ENOMEM;
	lock->l_handle.cookie = atomic64_inc_return(&les_lock_cookie);
	lock->l_type = einfo->ei_type;
	lock->l_req_mode = einfo->ei_mode;
	lock->l_res_id = *res_id;
	lock->l_pid = current->pid;
	lock->l_grant_delay_ms = READ_ONCE(lock_wait_ms);

	if (!req) {
		req = les_request_new(exp->exp_imp, LUSTRE_DLM_VERSION, LDLM_ENQUEUE, 0);
		if (IS_ERR(req)) {
			rc = PTR_ERR(req);
			goto out_lock;
		}
	}
	atomic_inc(&les_enqueues);
	rc = ptlrpc_queue_wait(req);
	if (rc)
		goto out_req;

	if (completion && lock->l_grant_delay_ms)
		reply_flags |= LDLM_FL_BLOCK_GRANTED;
	if (completion)
		rc = completion(lock, reply_flags, NULL);
	if (flags)
		*flags = reply_flags;
	if (lockh)
		lockh->cookie = lock->l_handle.cookie;
out_req:
	if (!reqp || !*reqp)
		ptlrpc_req_put(req);
out_lock:
	kfree(lock);
	return rc;
}

/* Enqueue a lock for INODE on EXP and wait until it is granted. */
int les_take_lock(struct inode *inode, struct obd_export *exp, enum ldlm_type type,
		  enum ldlm_mode mode, __u64 bits)
{
	struct ldlm_enqueue_info einfo = {
		.ei_type = type,
		.ei_mode = mode,
		.ei_cb_cp = bits ? (void *)ldlm_completion_ast : NULL,
		.ei_inodebits = bits,
	};
	struct ldlm_res_id res_id = {
		.name = {inode->i_ino, (unsigned long)inode->i_sb},
	};
	union ldlm_policy_data policy = {};
	struct lustre_handle lockh = {};
	__u64 flags = 0;

	if (type == LDLM_EXTENT) {
		einfo.ei_cb_cp = (void *)ldlm_completion_ast;
		policy.l_extent.end = ~0ULL;
	} else {
		policy.l_inodebits.bits = bits;
		flags = LDLM_FL_HAS_INTENT;
	}
	return ldlm_cli_enqueue(exp, NULL, &einfo, &res_id, &policy, &flags, NULL, 0, LVB_T_NONE,
				&lockh, 0);
}
