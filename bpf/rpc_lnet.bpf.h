/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * RPC plane, LNet under PtlRPC: one record (struct les_rec_lnet) per LNet
 * message this node sends, keyed by its struct lnet_msg pointer from its
 * commit to its lnet_finalize. What it says that the request record cannot:
 * how long the message waited for LNet's credits, and where it went.
 *
 * LNet's send path (lnet/lnet/lib-move.c, lib-msg.c):
 *   lnet_msg_commit(msg, cpt)      committed for sending (msg_sending) or
 *                                  receiving: the message's start;
 *   lnet_post_send_locked(msg, do_send)  the credit gate. It takes a peer tx
 *                                  credit (msg_peertxcredit), then an NI tx
 *                                  credit (msg_txcredit); where either count
 *                                  goes below 0 the message is queued (on the
 *                                  peer's lpni_txq, the NI's tq_delayed) and
 *                                  it returns LNET_CREDIT_WAIT; a delay rule
 *                                  may hold it after both. A queued message
 *                                  comes back through the gate when a credit
 *                                  returns (lnet_return_tx_credits_locked
 *                                  calls it with do_send 1), so the wait ends
 *                                  at the gate's next entry, or at the LND's
 *                                  send for a delay rule's message;
 *   the LND's send (ksocknal_send) lnet_ni_send, inlined at its callers, ends
 *                                  in the LND's lnd_send, a function pointer;
 *   lnet_finalize(msg, status)     the LND is done with it: the record.
 * The gate is static; its symbol stays where its two callers are in other
 * functions (2.17.57 on 6.1 and 6.12). Which credit a wait was for is read
 * at the gate's return: with msg_txcredit still 0 it was the peer's; with
 * it taken and the NI queue's count below 0, the NI's; else a delay rule.
 *
 * Every field is read by CO-RE from the lnet module's BTF; without it the
 * planner plans none of these, and the field checks below let the programs
 * load anyway (the verifier tests load every program on the host).
 */
#ifndef LES_RPC_LNET_BPF_H
#define LES_RPC_LNET_BPF_H

#include "rpc_ptlrpc.bpf.h"

#define LNET_CREDIT_WAIT_RC 1 /* LNET_CREDIT_WAIT, lib-types.h */
#define LNET_MSG_ACK	    0
#define LNET_MSG_PUT	    1
#define LNET_MSG_GET	    2
#define LNET_MSG_REPLY	    3

/* Messages being sent; LRU so that a full table drops its oldest (swept too). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384); /* resized by userspace */
	__type(key, __u64);	    /* struct lnet_msg * */
	__type(value, struct lnet_msg_state);
} lnet_msgs SEC(".maps");

/* tid -> the message at the credit gate and its credit bits at the entry. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct lnet_post_frame);
} lnet_post SEC(".maps");

/* The lnet module's BTF has struct lnet_msg as this file reads it. */
static __always_inline bool lnet_btf(void)
{
	return bpf_core_field_exists(struct lnet_msg___les, msg_txni) &&
	       bpf_core_field_exists(struct lnet_msg___les, msg_txpeer) &&
	       bpf_core_field_exists(struct lnet_nid___les, nid_type);
}

static __always_inline struct lnet_msg_state *lnet_state(__u64 msg, bool create)
{
	struct lnet_msg_state zero = {}, *v;

	if (ptl_bad_ptr(msg))
		return NULL;
	v = bpf_map_lookup_elem(&lnet_msgs, &msg);
	if (v || !create)
		return v;
	zero.seen_ns = bpf_ktime_get_ns();
	zero.commit_ns = zero.seen_ns;
	if (bpf_map_update_elem(&lnet_msgs, &msg, &zero, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&lnet_msgs, &msg)) {
		count(LES_CNT_LNET_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&lnet_msgs, &msg);
}

/* A wait under way ends now: its time goes to the credit it was for. */
static __always_inline void lnet_wait_end(struct lnet_msg_state *v, __u64 now)
{
	__u64 d;

	if (!v->wait_start_ns)
		return;
	d = now - v->wait_start_ns;
	if (v->wait_kind == LES_LNET_WAIT_PEER)
		v->peer_wait_ns += d;
	else if (v->wait_kind == LES_LNET_WAIT_NI)
		v->ni_wait_ns += d;
	else
		v->delay_ns += d;
	v->wait_start_ns = 0;
	v->wait_kind = LES_LNET_WAIT_NONE;
}

static __always_inline __u32 lnet_credit_bits(struct lnet_msg___les *m)
{
	return (__u32)BPF_CORE_READ_BITFIELD_PROBED(m, msg_peertxcredit) |
	       (__u32)BPF_CORE_READ_BITFIELD_PROBED(m, msg_txcredit) << 1;
}

/*
 * A PUT committed on a thread inside ptl_send_rpc is its request's: the
 * request is remembered with the message, and the thread's entry taken, so
 * that a later PUT of the thread (a reply it sends) is not the request's.
 */
static __always_inline void lnet_take_request(struct lnet_msg_state *v)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *req = bpf_map_lookup_elem(&ptlrpc_sending, &tid);

	if (!req)
		return;
	v->req = *req;
	bpf_map_delete_elem(&ptlrpc_sending, &tid);
}

/*
 * Handed to the LND, a request's PUT has waited all it will: its waits go
 * to the request (a resend's PUT adds its own), whose record says so, with
 * the NI it left by: the client's own NID, which the server knows it by
 * (its rq_peer), for a key that tells two clients' requests apart.
 */
static __always_inline void lnet_give_request(const struct lnet_msg_state *v,
					      struct lnet_msg___les *m)
{
	struct lnet_ni___les *ni;
	__u64 req = v->req;
	struct ptlrpc_req *r;

	if (!req)
		return;
	r = bpf_map_lookup_elem(&ptlrpc_reqs, &req);
	if (!r)
		return;
	r->lnet_wait_ns += v->peer_wait_ns + v->ni_wait_ns + v->delay_ns;
	r->flags |= LES_RPC_F_LNET;
	ni = BPF_CORE_READ(m, msg_txni);
	if (ni && !bpf_probe_read_kernel(&r->self_nid, sizeof(r->self_nid), &ni->ni_nid))
		r->flags |= LES_RPC_F_SELF_NID;
}

/* lnet_msg_commit(msg, cpt): a message to send starts (a received one is not ours). */
static __always_inline int lnet_commit(__u64 msg)
{
	struct lnet_msg___les *m = (void *)msg;
	struct lnet_msg_state *v;

	if (!lnet_btf() || ptl_bad_ptr(msg) || !BPF_CORE_READ_BITFIELD_PROBED(m, msg_sending))
		return 0;
	count_probe(LES_PROBE_LNET_COMMIT);
	v = lnet_state(msg, true);
	if (!v)
		return 0;
	/* A message's address reused: a new message, its old state is stale. */
	__builtin_memset(v, 0, sizeof(*v));
	v->seen_ns = bpf_ktime_get_ns();
	v->commit_ns = v->seen_ns;
	v->flags = LES_LNET_F_COMMIT;
	if (lnet_link_requests && BPF_CORE_READ(m, msg_type) == LNET_MSG_PUT)
		lnet_take_request(v);
	return 0;
}

static __always_inline int lnet_post_enter(__u64 msg)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct lnet_post_frame fr = {.msg = msg};
	struct lnet_msg_state *v;

	if (!lnet_btf() || ptl_bad_ptr(msg))
		return 0;
	count_probe(LES_PROBE_LNET_POST);
	v = lnet_state(msg, true);
	if (v)
		lnet_wait_end(v, bpf_ktime_get_ns());
	fr.bits = lnet_credit_bits((void *)msg);
	bpf_map_update_elem(&lnet_post, &tid, &fr, BPF_ANY);
	return 0;
}

/* The NI queue's credits: the message's NI, its CPT's queue. */
static __always_inline __s32 lnet_ni_credits(struct lnet_msg___les *m)
{
	struct lnet_tx_queue___les **qs = BPF_CORE_READ(m, msg_txni, ni_tx_queues);
	struct lnet_tx_queue___les *q = NULL;
	__u32 cpt = (__u32)BPF_CORE_READ_BITFIELD_PROBED(m, msg_tx_cpt);

	if (!qs || bpf_probe_read_kernel(&q, sizeof(q), &qs[cpt & 0x7fff]) || !q)
		return 0;
	return BPF_CORE_READ(q, tq_credits);
}

/*
 * The gate returned rc: the credits this call took, with the counts right
 * after, and, on LNET_CREDIT_WAIT, which wait began.
 */
static __always_inline int lnet_post_exit(long rc)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct lnet_post_frame *fr = bpf_map_lookup_elem(&lnet_post, &tid);
	struct lnet_msg___les *m;
	struct lnet_msg_state *v;
	__u32 bits;

	if (!lnet_btf() || !fr)
		return 0;
	m = (void *)fr->msg;
	v = lnet_state(fr->msg, false);
	if (!v)
		goto out;
	bits = lnet_credit_bits(m);
	if ((bits & 1) && !(fr->bits & 1)) {
		v->peer_credits = BPF_CORE_READ(m, msg_txpeer, lpni_txcredits);
		v->flags |= LES_LNET_F_PEER_CREDIT;
	}
	if ((bits & 2) && !(fr->bits & 2)) {
		v->ni_credits = lnet_ni_credits(m);
		v->flags |= LES_LNET_F_NI_CREDIT;
	}
	if (rc != LNET_CREDIT_WAIT_RC)
		goto out;
	count_probe(LES_PROBE_LNET_WAIT);
	v->wait_start_ns = bpf_ktime_get_ns();
	if (!(bits & 2))
		v->wait_kind = LES_LNET_WAIT_PEER;
	else if ((fr->bits & 2) == 0 && v->ni_credits < 0)
		v->wait_kind = LES_LNET_WAIT_NI;
	else
		v->wait_kind = LES_LNET_WAIT_DELAY;
out:
	bpf_map_delete_elem(&lnet_post, &tid);
	return 0;
}

/* The LND's send: the message is on the wire's queue; any wait ended. */
static __always_inline int lnet_lnd_send(__u64 msg)
{
	struct lnet_msg_state *v;
	__u64 now;

	if (!lnet_btf())
		return 0;
	count_probe(LES_PROBE_LNET_LND_SEND);
	v = lnet_state(msg, false);
	if (!v || v->send_ns)
		return 0;
	now = bpf_ktime_get_ns();
	lnet_wait_end(v, now);
	v->send_ns = now;
	v->flags |= LES_LNET_F_SENT;
	lnet_give_request(v, (void *)msg);
	return 0;
}

/* PUT, GET, ACK: the header's match bits; REPLY: the GET's, kept in its event. */
static __always_inline void lnet_read_match(struct les_rec_lnet *rec, struct lnet_msg___les *m)
{
	switch (rec->msg_type) {
	case LNET_MSG_PUT:
		rec->match_bits = BPF_CORE_READ(m, msg_hdr.msg.put.match_bits);
		rec->portal = BPF_CORE_READ(m, msg_hdr.msg.put.ptl_index);
		break;
	case LNET_MSG_GET:
		rec->match_bits = BPF_CORE_READ(m, msg_hdr.msg.get.match_bits);
		rec->portal = BPF_CORE_READ(m, msg_hdr.msg.get.ptl_index);
		break;
	case LNET_MSG_ACK:
		rec->match_bits = BPF_CORE_READ(m, msg_hdr.msg.ack.match_bits);
		break;
	case LNET_MSG_REPLY:
		rec->match_bits = BPF_CORE_READ(m, msg_ev.match_bits);
		break;
	default:
		return;
	}
	rec->flags |= LES_LNET_F_MATCH;
}

/* The NI (its NID, its interface), the next hop and the destination. */
static __always_inline void lnet_read_where(struct les_rec_lnet *rec, struct lnet_msg___les *m)
{
	struct lnet_ni___les *ni = BPF_CORE_READ(m, msg_txni);
	struct lnet_peer_ni___les *lp = BPF_CORE_READ(m, msg_txpeer);
	const char *ifname;

	if (!ni || !lp || bpf_probe_read_kernel(&rec->ni, sizeof(rec->ni), &ni->ni_nid) ||
	    bpf_probe_read_kernel(&rec->peer, sizeof(rec->peer), &lp->lpni_nid) ||
	    bpf_probe_read_kernel(&rec->target, sizeof(rec->target), &m->msg_target.nid))
		return;
	rec->flags |= LES_LNET_F_NIDS;
	/* Sent to a router: the next hop is not the destination. */
	if (rec->peer.type != rec->target.type || rec->peer.num_be != rec->target.num_be ||
	    rec->peer.addr_be[0] != rec->target.addr_be[0])
		rec->flags |= LES_LNET_F_ROUTED;
	if (!bpf_core_field_exists(ni->ni_interface))
		return;
	ifname = BPF_CORE_READ(ni, ni_interface);
	if (ifname && bpf_probe_read_kernel_str(rec->ifname, sizeof(rec->ifname), ifname) > 0)
		rec->flags |= LES_LNET_F_IFNAME;
}

static __always_inline void lnet_rec_init(struct les_rec_lnet *rec, const struct lnet_msg_state *v,
					  __u64 now)
{
	rec->kind = LES_REC_LNET;
	rec->flags = v->flags & (LES_LNET_F_PEER_CREDIT | LES_LNET_F_NI_CREDIT | LES_LNET_F_COMMIT |
				 LES_LNET_F_SENT);
	rec->ts_ns = now;
	rec->commit_ns = v->commit_ns;
	rec->send_ns = v->send_ns;
	rec->peer_wait_ns = v->peer_wait_ns;
	rec->ni_wait_ns = v->ni_wait_ns;
	rec->delay_ns = v->delay_ns;
	rec->match_bits = 0;
	rec->portal = 0;
	rec->peer_credits = v->peer_credits;
	rec->ni_credits = v->ni_credits;
	rec->tid = (__u32)bpf_get_current_pid_tgid();
	__builtin_memset(&rec->ni, 0, sizeof(rec->ni));
	__builtin_memset(&rec->peer, 0, sizeof(rec->peer));
	__builtin_memset(&rec->target, 0, sizeof(rec->target));
	__builtin_memset(rec->ifname, 0, sizeof(rec->ifname));
}

/* lnet_finalize(msg, status): a message we saw committed for sending ends. */
static __always_inline int lnet_final(__u64 msg, __s32 status)
{
	struct lnet_msg___les *m = (void *)msg;
	struct lnet_msg_state *v;
	struct les_rec_lnet *rec;
	__u64 now;

	if (!lnet_btf())
		return 0;
	v = lnet_state(msg, false);
	if (!v)
		return 0; /* a received message, or one sent before the tool started */
	count_probe(LES_PROBE_LNET_FINALIZE);
	now = bpf_ktime_get_ns();
	lnet_wait_end(v, now);
	rec = reserve(sizeof(*rec));
	if (!rec) {
		bpf_map_delete_elem(&lnet_msgs, &msg);
		return 0;
	}
	lnet_rec_init(rec, v, now);
	rec->msg_type = (__u16)BPF_CORE_READ(m, msg_type);
	rec->len = BPF_CORE_READ(m, msg_len);
	rec->status = status;
	lnet_read_match(rec, m);
	lnet_read_where(rec, m);
	submit(rec);
	bpf_map_delete_elem(&lnet_msgs, &msg);
	return 0;
}

SEC("kprobe/lnet_msg_commit")
int BPF_KPROBE(lnet_commit_kp, void *msg)
{
	return lnet_commit((__u64)msg);
}

SEC("kprobe/lnet_post_send_locked")
int BPF_KPROBE(lnet_post_kp, void *msg)
{
	return lnet_post_enter((__u64)msg);
}

SEC("kretprobe/lnet_post_send_locked")
int BPF_KRETPROBE(lnet_post_kr, long rc)
{
	return lnet_post_exit((int)rc);
}

/* ksocknal_send(ni, private, lntmsg) */
SEC("kprobe/ksocknal_send")
int BPF_KPROBE(lnet_lnd_send_kp, void *ni, void *priv, void *msg)
{
	return lnet_lnd_send((__u64)msg);
}

SEC("kprobe/lnet_finalize")
int BPF_KPROBE(lnet_finalize_kp, void *msg, int status)
{
	return lnet_final((__u64)msg, status);
}

SEC("fentry/lnet_msg_commit")
int lnet_commit_fe(__u64 *ctx)
{
	return lnet_commit(fn_ctx_arg(ctx, 0));
}

SEC("fentry/lnet_post_send_locked")
int lnet_post_fe(__u64 *ctx)
{
	return lnet_post_enter(fn_ctx_arg(ctx, 0));
}

SEC("fexit/lnet_post_send_locked")
int lnet_post_fx(__u64 *ctx)
{
	return lnet_post_exit((int)fn_ctx_arg(ctx, 2));
}

SEC("fentry/ksocknal_send")
int lnet_lnd_send_fe(__u64 *ctx)
{
	return lnet_lnd_send(fn_ctx_arg(ctx, 2));
}

SEC("fentry/lnet_finalize")
int lnet_finalize_fe(__u64 *ctx)
{
	return lnet_final(fn_ctx_arg(ctx, 0), (__s32)fn_ctx_arg(ctx, 1));
}

#endif /* LES_RPC_LNET_BPF_H */
