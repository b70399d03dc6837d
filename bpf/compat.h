/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one shim for kernel differences. Every kernel structure the programs
 * read is declared here as a local "___les" flavor with
 * preserve_access_index, so CO-RE relocates each field against the running
 * kernel's (or module's) BTF whatever vmlinux.h the build used, and a
 * structure that lives in a module (fuse, nfs, lustre) need not be in the
 * build machine's vmlinux.h at all.
 */
#ifndef LES_COMPAT_H
#define LES_COMPAT_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/*
 * include/linux/fs.h: a file that ->atomic_open (or the VFS for ->create)
 * created carries FMODE_CREATED in f_mode; the flag has had this value
 * since it was added in 4.19. A #define, so not in BTF.
 */
#define LES_FMODE_CREATED (1U << 20)

/*
 * The current task. bpf_get_current_task_btf() (5.11) gives a BTF pointer
 * whose fields are plain loads the verifier guards; 5.10 has only
 * bpf_get_current_task(), whose fields need probe reads (BPF_CORE_READ).
 * Programs that have both flavours pass btf as a constant, so the other
 * helper is compiled out of each.
 */
#define les_current_task(btf)                                                                      \
	((btf) ? bpf_get_current_task_btf() : (struct task_struct *)bpf_get_current_task())

/*
 * How the syscall programs read the kernel, one flavour per program, passed
 * as a constant so each is compiled to its own reads:
 * - LES_FLAVOUR_NOBTF (5.10): the task by bpf_get_current_task(), every
 *   field by a probe read;
 * - LES_FLAVOUR_BTF (5.11, bpf_get_current_task_btf): the task's fields are
 *   plain loads the verifier guards;
 * - LES_FLAVOUR_CAST (6.2, the bpf_rdonly_cast kfunc): a file pointer read
 *   out of the fd array, a number to the verifier, is made a BTF pointer
 *   too, so the fd's superblock dev is plain loads instead of three probe
 *   reads, the largest part of what an unobserved file's syscall pays.
 */
enum les_flavour {
	LES_FLAVOUR_NOBTF = 0,
	LES_FLAVOUR_BTF = 1,
	LES_FLAVOUR_CAST = 2,
};

/*
 * The uid and gid of the current task, as bpf_get_current_uid_gid() gives
 * them: that helper maps the cred's kuid into the initial user namespace,
 * where the mapping is the identity, so with a BTF task the cred's own
 * values are the same numbers for two loads instead of a helper call.
 */
#define les_current_uid_gid(btf)                                                                   \
	((btf) ? ({                                                                                \
		const struct cred *c_ = bpf_get_current_task_btf()->cred;                          \
		((__u64)c_->gid.val << 32) | c_->uid.val;                                          \
	})                                                                                         \
	       : bpf_get_current_uid_gid())

/*
 * Weak: a kernel without it still loads every program that does not call
 * it (libbpf leaves an unresolved weak kfunc to the verifier of the
 * programs that use it); userspace loads the CAST flavour only where the
 * kernel's BTF has the function (src/probe/kfacts.c). Declared as the
 * kernel declares it, so a vmlinux.h that carries kfuncs (bpftool's, from
 * a 6.x kernel) declares the same.
 */
extern void *bpf_rdonly_cast(const void *obj__ign, __u32 btf_id__k) __ksym __weak;

/* fs/fuse/fuse_i.h; fuse_req.in/out wrap the headers since 4.x. */
struct fuse_in_header___les {
	__u32 len;
	__u32 opcode;
	__u64 unique;
	__u64 nodeid;
	__u32 uid;
	__u32 gid;
	__u32 pid;
} __attribute__((preserve_access_index));

struct fuse_out_header___les {
	__u32 len;
	__s32 error;
	__u64 unique;
} __attribute__((preserve_access_index));

struct fuse_conn___les {
	__u32 dev;
} __attribute__((preserve_access_index));

struct fuse_mount___les {
	struct fuse_conn___les *fc;
} __attribute__((preserve_access_index));

struct fuse_req___les {
	struct {
		struct fuse_in_header___les h;
	} in;
	struct {
		struct fuse_out_header___les h;
	} out;
	struct fuse_mount___les *fm;
} __attribute__((preserve_access_index));

/*
 * Where the fuse module has no BTF (5.10 and older, or a kernel built
 * without module BTF), struct fuse_req cannot be read by CO-RE. Its head has
 * been the same since 5.4 ("fuse: convert to fuse_args", when args moved out
 * of the request) up to 6.18 on 64-bit kernels: list and intr_entry (two
 * list_heads), args (a pointer), count (refcount_t, padded), flags
 * (unsigned long), then in.h (UAPI struct fuse_in_header) and out.h (UAPI
 * struct fuse_out_header). The no-BTF probes read those two headers there,
 * and believe them only for a request whose unique ID, read at its send, is
 * found again at its end both in in.h and in out.h (where the kernel copied
 * the daemon's reply header): two words 40 bytes apart that agree. The
 * head of fuse_copy_state (int write; struct fuse_req *req) is as old as
 * /dev/fuse and is believed only for a request being traced.
 */
#define FUSE_REQ_IN_H_OFF  56
#define FUSE_REQ_OUT_H_OFF 96
#define FUSE_CS_REQ_OFF	   8

/* The two headers as the UAPI fixes them (linux/fuse.h): no CO-RE. */
struct fuse_in_header_uapi {
	__u32 len;
	__u32 opcode;
	__u64 unique;
	__u64 nodeid;
	__u32 uid;
	__u32 gid;
	__u32 pid;
	__u32 padding;
};

struct fuse_out_header_uapi {
	__u32 len;
	__s32 error;
	__u64 unique;
};

/*
 * fs/fuse/dev.c's copy state: which request is being copied, and the
 * direction (write: to the daemon, i.e. the daemon reads the request).
 * write was an int before 6.13 and is a one-bit field since ("fuse: convert
 * fuse_copy_state flags to bit fields"), so it is read as a bitfield.
 */
struct fuse_copy_state___les {
	int write;
	struct fuse_req___les *req;
} __attribute__((preserve_access_index));

/*
 * Records of the fuse:fuse_request_send/end tracepoints (added in 6.12), as
 * their format files in tracefs give them; used only where tp_btf cannot
 * reach struct fuse_req.
 */
struct fuse_send_tp_ctx {
	__u64 common;
	__u32 connection;
	__u32 _pad;
	__u64 unique;
	__u32 opcode;
	__u32 len;
};

struct fuse_end_tp_ctx {
	__u64 common;
	__u32 connection;
	__u32 _pad;
	__u64 unique;
	__u32 len;
	__s32 error;
};

/*
 * A kprobe's argument register, loaded from its context by one instruction
 * clang cannot merge with another: a switch over the argument index
 * otherwise becomes one load at a computed offset (or from a computed
 * address), which the verifier refuses for a context pointer. The offset is
 * that of the architecture's pt_regs, an ABI, as libbpf's PT_REGS macros
 * name it.
 */
#define les_ctx_reg(ctx, reg)                                                                      \
	({                                                                                         \
		__u64 v_;                                                                          \
		asm volatile("%0 = *(u64 *)(%1 + %2)"                                              \
			     : "=r"(v_)                                                            \
			     : "r"(ctx),                                                           \
			       "i"(__builtin_offsetof(typeof(*__PT_REGS_CAST((struct pt_regs *)0)), \
						      reg)));                                      \
		v_;                                                                                \
	})

/* The syscall number of a task's user registers at sys_exit. */
#if defined(__TARGET_ARCH_x86)
#define SYSCALL_NR(regs) BPF_CORE_READ((regs), orig_ax)
/* The same from registers that are a BTF pointer (LES_FLAVOUR_CAST): a load. */
#define SYSCALL_NR_BTF(regs) ((regs)->orig_ax)
#elif defined(__TARGET_ARCH_arm64)
/*
 * In arm64's own pt_regs (its vmlinux.h), as orig_ax is in x86's; libbpf's
 * pt_regs___arm64 flavour has only orig_x0.
 */
#define SYSCALL_NR(regs) BPF_CORE_READ((regs), syscallno)
#define SYSCALL_NR_BTF(regs) ((regs)->syscallno)
#else
#error "SYSCALL_NR: add this architecture"
#endif

/* net/sunrpc (include/linux/sunrpc/sched.h, clnt.h, xprt.h). */
struct rpc_procinfo___les {
	__u32 p_proc;
	const char *p_name;
} __attribute__((preserve_access_index));

struct rpc_message___les {
	const struct rpc_procinfo___les *rpc_proc;
} __attribute__((preserve_access_index));

struct rpc_clnt___les {
	__u32 cl_prog;
	__u32 cl_vers;
} __attribute__((preserve_access_index));

struct rpc_task___les;

/* xprt_class's ident: XPRT_TRANSPORT_TCP (6) and _UDP (17) are sock_xprts. */
struct xprt_class___les {
	int ident;
} __attribute__((preserve_access_index));

struct rpc_xprt___les {
	const struct xprt_class___les *xprt_class;
} __attribute__((preserve_access_index));

/* include/linux/sunrpc/xprtsock.h: the socket transport around a rpc_xprt. */
struct sock_xprt___les {
	struct sock *inet;
} __attribute__((preserve_access_index));

struct rpc_rqst___les {
	__u32 rq_xid; /* __be32 */
	struct rpc_task___les *rq_task;
	struct rpc_xprt___les *rq_xprt;
} __attribute__((preserve_access_index));

/*
 * The server side (include/linux/sunrpc/svc.h): one request a service
 * thread handles. rq_qtime: when a thread was woken for its transport;
 * rq_stime: when the request had been read off it.
 */
struct svc_procedure___les {
	const char *pc_name;
} __attribute__((preserve_access_index));

struct svc_rqst___les {
	struct __kernel_sockaddr_storage rq_addr;
	__u32 rq_xid; /* __be32 */
	__u32 rq_prog;
	__u32 rq_vers;
	__u32 rq_proc;
	const struct svc_procedure___les *rq_procinfo;
	__s64 rq_qtime; /* ktime_t */
	__s64 rq_stime;
	void *rq_xprt; /* struct svc_xprt *: the transport the request came on */
} __attribute__((preserve_access_index));

struct rpc_task___les {
	int tk_status;
	struct rpc_message___les tk_msg;
	struct rpc_clnt___les *tk_client;
	struct rpc_rqst___les *tk_rqstp;
} __attribute__((preserve_access_index));

/*
 * Lustre's ptlrpc (lustre/include/lustre_net.h, lustre_import.h, obd.h):
 * the request message, its xid and its import's device name. Read only
 * where module BTF has them (CO-RE); a build without BTF has none of them.
 */
struct obd_device___les {
	char obd_name[128]; /* MAX_OBD_NAME */
} __attribute__((preserve_access_index));

/*
 * The import's peer: struct ptlrpc_connection's c_peer is a struct
 * lnet_processid holding a struct lnet_nid since Lustre 2.15 (large NIDs,
 * LU-10391); before it, a struct lnet_process_id with a 64-bit lnet_nid_t,
 * which has no nid_type field here, so the NID is left unread.
 */
struct lnet_nid___les {
	__u8 nid_size;
	__u8 nid_type;
	__u16 nid_num;
	__u32 nid_addr[4];
} __attribute__((packed, preserve_access_index));

struct lnet_processid___les {
	struct lnet_nid___les nid;
} __attribute__((preserve_access_index));

struct ptlrpc_connection___les {
	struct lnet_processid___les c_peer;
} __attribute__((preserve_access_index));

struct obd_import___les {
	struct obd_device___les *imp_obd;
	struct ptlrpc_connection___les *imp_connection;
} __attribute__((preserve_access_index));

/*
 * The server's side of a request (lustre_net.h): its request buffer leads
 * to its service (rqbd_svcpt->scp_service->srv_name); its arrival is
 * Lustre's CLOCK_REALTIME stamp. rq_srv sits in an anonymous union with the
 * client's rq_cli, which CO-RE looks through.
 */
struct ptlrpc_service___les {
	char *srv_name;
} __attribute__((preserve_access_index));

struct ptlrpc_service_part___les {
	struct ptlrpc_service___les *scp_service;
} __attribute__((preserve_access_index));

struct ptlrpc_request_buffer_desc___les {
	struct ptlrpc_service_part___les *rqbd_svcpt;
} __attribute__((preserve_access_index));

struct ptlrpc_srv_req___les {
	struct ptlrpc_request_buffer_desc___les *sr_rqbd;
	struct timespec64 sr_arrival_time;
} __attribute__((preserve_access_index));

/* Where the request's message is since the capsule took it (rq_reqmsg is a macro for it). */
struct req_capsule___les {
	void *rc_reqmsg;
} __attribute__((preserve_access_index));

struct obd_export___les {
	struct obd_device___les *exp_obd;
} __attribute__((preserve_access_index));

struct ptlrpc_request___les {
	int rq_status;
	void *rq_reqmsg;
	__u64 rq_xid;
	__u64 rq_transno;
	struct obd_import___les *rq_import;
	struct obd_export___les *rq_export;
	struct lnet_nid___les rq_self;
	struct lnet_processid___les rq_peer;
	struct ptlrpc_srv_req___les rq_srv;
	struct req_capsule___les rq_pill;
} __attribute__((preserve_access_index));

/*
 * The server's bulk transfer (lustre_net.h): target_bulk_io(exp, desc)
 * moves the request's pages over LNet and waits for the transfer's end;
 * bd_req is the request it belongs to.
 */
struct ptlrpc_bulk_desc___les {
	struct ptlrpc_request___les *bd_req;
} __attribute__((preserve_access_index));

/*
 * ldiskfs's OSD block I/O (osd_internal.h, osd-ldiskfs): osd_do_bio
 * stamps dr_start_time, the last bio's completion sets dr_elapsed and
 * dr_elapsed_valid, and osd_fini_iobuf files dr_elapsed into brw_stats'
 * "I/O time" histogram. dr_elapsed_valid is a bit-field.
 */
struct osd_iobuf___les {
	unsigned int dr_elapsed_valid : 1;
	ktime_t dr_elapsed;
} __attribute__((preserve_access_index));

/*
 * LNet's message (lib-types.h, lnet-idl.h), since 2.15's large NIDs: the
 * credit bits the gate sets, the NI and next hop it goes by, its header's
 * match bits. Read by CO-RE from the lnet module's BTF only.
 */
struct lnet_ack___les {
	__u64 match_bits;
} __attribute__((preserve_access_index));

struct lnet_put___les {
	__u64 match_bits;
	__u32 ptl_index;
} __attribute__((preserve_access_index));

struct lnet_get___les {
	__u64 match_bits;
	__u32 ptl_index;
} __attribute__((preserve_access_index));

union lnet_cmd_hdr___les {
	struct lnet_ack___les ack;
	struct lnet_put___les put;
	struct lnet_get___les get;
} __attribute__((preserve_access_index));

struct lnet_hdr___les {
	union lnet_cmd_hdr___les msg;
} __attribute__((preserve_access_index));

struct lnet_event___les {
	__u64 match_bits;
} __attribute__((preserve_access_index));

struct lnet_tx_queue___les {
	int tq_credits;
} __attribute__((preserve_access_index));

struct lnet_ni___les {
	struct lnet_nid___les ni_nid;
	struct lnet_tx_queue___les **ni_tx_queues;
	char *ni_interface;
} __attribute__((preserve_access_index));

struct lnet_peer_ni___les {
	int lpni_txcredits;
	struct lnet_nid___les lpni_nid;
} __attribute__((preserve_access_index));

struct lnet_msg___les {
	struct lnet_processid___les msg_target;
	__u32 msg_type;
	unsigned int msg_tx_cpt : 15;
	unsigned int msg_sending : 1;
	unsigned int msg_txcredit : 1;
	unsigned int msg_peertxcredit : 1;
	struct lnet_peer_ni___les *msg_txpeer;
	struct lnet_ni___les *msg_txni;
	unsigned int msg_len;
	struct lnet_event___les msg_ev;
	struct lnet_hdr___les msg_hdr;
} __attribute__((preserve_access_index));

/* Lustre's superblock magic; struct ll_inode_info's offsets come from userspace. */
#define LES_LL_SUPER_MAGIC 0x0BD00BD0 /* LL_SUPER_MAGIC, lustre_user.h */

/*
 * struct brw_page (lustre/include/obd.h): bp_off (u64), then the page: pg
 * up to 2.15, bp_folio since 2.16 (a folio's mapping is where a page's is).
 */
struct brw_page___pg {
	struct page *pg;
} __attribute__((preserve_access_index));

struct brw_page___folio {
	struct folio *bp_folio;
} __attribute__((preserve_access_index));

#endif /* LES_COMPAT_H */
