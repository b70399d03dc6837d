/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Server records of sunrpc services (nfsd, and the NFS client's callback
 * and lockd services): one struct les_rec_srv with proto LES_PROTO_SUNRPC
 * per request a service thread answers, from sunrpc's and nfsd's
 * tracepoints (tp_btf: each hands over the struct svc_rqst, read by CO-RE
 * from the module's BTF).
 *
 *   svc_xprt_enqueue a transport has work (data in): the latest stamp of
 *                    its transport before the request was read bounds the
 *                    request's arrival from below (see nfsd_send).
 *   svc_process      the request's procedure is dispatched: handler_ns.
 *   nfsd_read_start  nfsd reads the file (offset, count) ...
 *   nfsd_read_done   ... and has read it: io_ns.
 *   nfsd_write_start / nfsd_write_done: the same for a write.
 *   svc_stats_latency in svc_send, the reply encoded and about to go to
 *                    the transport: ts_ns and reply_ns, as Lustre's
 *                    ptlrpc_send_reply hands its reply to LNet.
 *   svc_send         after the transport's sendto: the record, with
 *                    everything else read from the svc_rqst itself (xid,
 *                    program, version, procedure, the client's address,
 *                    rq_qtime, rq_stime) and sendto's result as status.
 *
 * Why the reply is stamped before the send: over loopback the client can
 * have the reply, and its rtt end, before sendto returns to a thread that
 * is then preempted; a stamp after the send would put the server's reply
 * after the client's receipt (seen on the 6.12 guest: 13.9 ms against the
 * client's 5.1 ms rtt).
 *
 * The map is keyed by the svc_rqst, one per service thread, which handles
 * one request at a time: an entry is overwritten by the thread's next
 * request, so the map never holds more entries than there are threads and
 * needs no sweep. A request dropped without a reply (svc_drop) makes no
 * record: it has no reply for a client to have waited on.
 */
#ifndef LES_RPC_NFSD_BPF_H
#define LES_RPC_NFSD_BPF_H

#include <bpf/bpf_endian.h>
#include "rpc_common.bpf.h"
#include "rpc_sunrpc.bpf.h" /* ktime_ns */

struct nfsd_srv {
	__u64 xid;	  /* the request these steps are of (be32 as read) */
	__u64 handler_ns; /* svc_process */
	__u64 reply_ns;	  /* svc_stats_latency: the reply goes to the transport */
	__u64 io_start_ns;
	__u64 io_ns;
	__u64 offset;
	__u64 count;
	__u64 last_reply_ns; /* the thread's previous reply: an older rq_qtime is stale */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024); /* service threads */
	__type(key, __u64);	   /* struct svc_rqst * */
	__type(value, struct nfsd_srv);
} nfsd_srv_steps SEC(".maps");

/*
 * A transport's last two enqueues (svc_xprt_enqueue: it has work), so that
 * the one before a request was read off it is there when the request's
 * reply goes out, though the transport may have been enqueued again since.
 */
struct svc_xprt_stamps {
	__u64 last_ns;
	__u64 prev_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024); /* transports */
	__type(key, __u64);	   /* struct svc_xprt * */
	__type(value, struct svc_xprt_stamps);
} svc_xprt_enqueued SEC(".maps");

/* The transport's latest enqueue at or before t, 0: none seen. */
static __always_inline __u64 svc_xprt_enqueued_before(__u64 xprt, __u64 t)
{
	struct svc_xprt_stamps *s = bpf_map_lookup_elem(&svc_xprt_enqueued, &xprt);

	if (!s)
		return 0;
	if (s->last_ns && s->last_ns <= t)
		return s->last_ns;
	return s->prev_ns <= t ? s->prev_ns : 0;
}

/* The thread's entry for this request (xid), fresh if it held another's. */
static __always_inline struct nfsd_srv *nfsd_steps(struct svc_rqst___les *rq, bool create)
{
	__u64 key = (__u64)rq, xid = BPF_CORE_READ(rq, rq_xid);
	struct nfsd_srv *v = bpf_map_lookup_elem(&nfsd_srv_steps, &key), fresh = {};

	if (v && v->xid == xid)
		return v;
	if (!create)
		return NULL;
	fresh.xid = xid;
	fresh.last_reply_ns = v ? v->last_reply_ns : 0;
	if (bpf_map_update_elem(&nfsd_srv_steps, &key, &fresh, BPF_ANY)) {
		count(LES_CNT_SRV_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&nfsd_srv_steps, &key);
}

/* rq_addr: the client's address and port as this server sees them. */
static __always_inline bool nfsd_client_addr(struct les_sock_addr *a, struct svc_rqst___les *rq)
{
	struct sockaddr_in6 sa = {};

	if (bpf_probe_read_kernel(&sa, sizeof(sa), &rq->rq_addr))
		return false;
	a->family = sa.sin6_family;
	a->port = bpf_ntohs(sa.sin6_port);
	if (sa.sin6_family == 2 /* AF_INET */) {
		a->addr_be[0] = ((struct sockaddr_in *)&sa)->sin_addr.s_addr;
		return true;
	}
	if (sa.sin6_family != 10 /* AF_INET6 */)
		return false;
	__builtin_memcpy(a->addr_be, &sa.sin6_addr, sizeof(a->addr_be));
	return true;
}

/* The procedure's name (pc_name), lower case like the client's. */
static __always_inline void nfsd_proc_name(char *dst, struct svc_rqst___les *rq)
{
	rpc_read_name_lower(dst, BPF_CORE_READ(rq, rq_procinfo, pc_name));
}

static __always_inline void nfsd_rec_init(struct les_rec_srv *rec, __u64 now)
{
	__builtin_memset(rec, 0, sizeof(*rec));
	rec->kind = LES_REC_SRV;
	rec->proto = LES_PROTO_SUNRPC;
	rec->ts_ns = now;
	rec->reply_ns = now;
	rec->tid = (__u32)bpf_get_current_pid_tgid();
	bpf_get_current_comm(rec->comm, LES_COMM_LEN);
}

/* The steps this request's entry saw: handler, the file's I/O. */
static __always_inline void nfsd_rec_steps(struct les_rec_srv *rec, const struct nfsd_srv *v)
{
	rec->handler_ns = v->handler_ns;
	if (v->reply_ns) {
		rec->ts_ns = v->reply_ns;
		rec->reply_ns = v->reply_ns;
	}
	if (v->io_ns) {
		rec->io_ns = v->io_ns;
		rec->offset = v->offset;
		rec->count = v->count;
		rec->flags |= LES_SRV_F_IO;
	}
}

static __always_inline int nfsd_send(struct svc_rqst___les *rq, int status)
{
	struct les_rec_srv *rec;
	struct nfsd_srv *v;
	__u64 now = bpf_ktime_get_ns(), qtime, stime, enqueued;

	count_probe(LES_PROBE_SVC_SEND);
	v = nfsd_steps(rq, false);
	rec = reserve(sizeof(*rec));
	if (!rec)
		goto out;
	nfsd_rec_init(rec, now);
	rec->flags = LES_SRV_F_OPCODE | LES_SRV_F_REPLY | LES_SRV_F_ARRIVAL_MONO;
	rec->xid = bpf_ntohl(BPF_CORE_READ(rq, rq_xid));
	rec->prog = BPF_CORE_READ(rq, rq_prog);
	rec->vers = (__u16)BPF_CORE_READ(rq, rq_vers);
	rec->opcode = (__u16)BPF_CORE_READ(rq, rq_proc);
	rec->status = status < 0 ? status : 0;
	stime = ktime_ns(BPF_CORE_READ(rq, rq_stime));
	qtime = ktime_ns(BPF_CORE_READ(rq, rq_qtime));
	rec->start_ns = stime && stime <= now ? stime : now;
	if (v)
		nfsd_rec_steps(rec, v);
	/*
	 * rq_qtime is set when an idle thread is woken for the transport; a
	 * thread that found work without sleeping keeps an old one: then the
	 * queue is unknown and arrival is the start (queue_ns 0). A thread
	 * woken at A whose transport another thread took, and which then
	 * found a request that came at B > A without sleeping again, keeps A
	 * though it replied before A: the transport's enqueue at B bounds the
	 * arrival from below (seen on 6.12: a queue longer than the client's
	 * whole rtt).
	 */
	if (v && qtime <= v->last_reply_ns)
		qtime = 0;
	enqueued = svc_xprt_enqueued_before((__u64)BPF_CORE_READ(rq, rq_xprt), rec->start_ns);
	if (qtime && enqueued > qtime)
		qtime = enqueued;
	rec->arrival_real_ns = qtime && qtime <= rec->start_ns ? qtime : rec->start_ns;
	if (nfsd_client_addr(&rec->client, rq))
		rec->flags |= LES_SRV_F_CLIENT;
	nfsd_proc_name(rec->procname, rq);
	if (!rec->handler_ns)
		rec->handler_ns = rec->start_ns;
	submit(rec);
out:
	v = nfsd_steps(rq, true);
	if (v)
		v->last_reply_ns = now;
	return 0;
}

static __always_inline int nfsd_process(struct svc_rqst___les *rq)
{
	struct nfsd_srv *v;

	count_probe(LES_PROBE_SVC_PROCESS);
	v = nfsd_steps(rq, true);
	if (v)
		v->handler_ns = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int nfsd_replying(struct svc_rqst___les *rq)
{
	struct nfsd_srv *v;

	count_probe(LES_PROBE_SVC_REPLYING);
	v = nfsd_steps(rq, true);
	if (v)
		v->reply_ns = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int nfsd_io_start(struct svc_rqst___les *rq, __u64 offset, __u64 count)
{
	struct nfsd_srv *v;

	count_probe(LES_PROBE_NFSD_IO);
	v = nfsd_steps(rq, true);
	if (!v)
		return 0;
	v->io_start_ns = bpf_ktime_get_ns();
	/* A compound (NFSv4) may do several: their offsets are the first's, counts add up. */
	if (!v->count)
		v->offset = offset;
	v->count += count;
	return 0;
}

static __always_inline int nfsd_io_done(struct svc_rqst___les *rq)
{
	struct nfsd_srv *v = nfsd_steps(rq, false);

	count_probe(LES_PROBE_NFSD_IO);
	if (v && v->io_start_ns) {
		v->io_ns += bpf_ktime_get_ns() - v->io_start_ns;
		v->io_start_ns = 0;
	}
	return 0;
}

/* svc_xprt_enqueue(xprt, ...): the second argument differs (6.1: rqst, 6.12: flags). */
SEC("tp_btf/svc_xprt_enqueue")
int BPF_PROG(sunrpc_svc_xprt_enqueue_btf, void *xprt)
{
	__u64 key = (__u64)xprt;
	struct svc_xprt_stamps *s, fresh = {};

	count_probe(LES_PROBE_SVC_ENQUEUE);
	if (!key)
		return 0;
	s = bpf_map_lookup_elem(&svc_xprt_enqueued, &key);
	if (s) {
		s->prev_ns = s->last_ns;
		s->last_ns = bpf_ktime_get_ns();
		return 0;
	}
	fresh.last_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&svc_xprt_enqueued, &key, &fresh, BPF_ANY);
	return 0;
}

/* 6.12 types tracepoint arguments trusted_ptr_or_null: each is tested first. */
SEC("tp_btf/svc_process")
int BPF_PROG(sunrpc_svc_process_btf, struct svc_rqst___les *rq, const char *name)
{
	return rq ? nfsd_process(rq) : 0;
}

SEC("tp_btf/svc_stats_latency")
int BPF_PROG(sunrpc_svc_replying_btf, struct svc_rqst___les *rq)
{
	return rq ? nfsd_replying(rq) : 0;
}

SEC("tp_btf/svc_send")
int BPF_PROG(sunrpc_svc_send_btf, struct svc_rqst___les *rq, int status)
{
	return rq ? nfsd_send(rq, status) : 0;
}

/* include/trace/events/nfsd.h: (rqstp, fhp, offset, len). */
SEC("tp_btf/nfsd_read_start")
int BPF_PROG(sunrpc_nfsd_read_start_btf, struct svc_rqst___les *rq, void *fh, __s64 offset,
	     __u32 len)
{
	return rq ? nfsd_io_start(rq, (__u64)offset, len) : 0;
}

SEC("tp_btf/nfsd_read_done")
int BPF_PROG(sunrpc_nfsd_read_done_btf, struct svc_rqst___les *rq)
{
	return rq ? nfsd_io_done(rq) : 0;
}

SEC("tp_btf/nfsd_write_start")
int BPF_PROG(sunrpc_nfsd_write_start_btf, struct svc_rqst___les *rq, void *fh, __s64 offset,
	     __u32 len)
{
	return rq ? nfsd_io_start(rq, (__u64)offset, len) : 0;
}

SEC("tp_btf/nfsd_write_done")
int BPF_PROG(sunrpc_nfsd_write_done_btf, struct svc_rqst___les *rq)
{
	return rq ? nfsd_io_done(rq) : 0;
}

#endif /* LES_RPC_NFSD_BPF_H */
