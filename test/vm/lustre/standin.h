/* SPDX-License-Identifier: GPL-2.0 */
/*
 * les_lustre_standin: a TEST-ONLY stand-in for a Lustre client, for the
 * lustre-ebpf-stream qemu harness. It is not Lustre and talks to no server.
 *
 * What it keeps from Lustre is what a tracer attaches to and reads: the
 * names and the argument lists of llite's VFS entry points for this kernel
 * (6.1), of PtlRPC's request lifecycle and of LDLM's enqueue path, the RPC
 * opcodes and the wire layout of the request message. The sources these
 * come from are named next to each declaration (Lustre 2.16, files under
 * lustre/ in lustre-release).
 */
#ifndef LES_LUSTRE_STANDIN_H
#define LES_LUSTRE_STANDIN_H

#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/version.h>
#include <linux/wait.h>
#include <linux/xattr.h>

/*
 * Every function a probe may attach to: a real symbol in kallsyms, never
 * inlined into its caller, never cloned into a ".constprop"/".isra" copy
 * that callers would call instead of the named function.
 */
#define LES_PROBED noinline __attribute__((__noipa__))

/*
 * The kernel interfaces that changed between the guest kernels (6.1, 6.12),
 * in one place:
 * - 6.3 ("fs: port ->...() to pass mnt_idmap") gives inode and xattr
 *   operations a struct mnt_idmap * where 6.1 has a struct user_namespace *.
 * - 6.2 renamed ->get_acl(inode, type, rcu) to ->get_inode_acl.
 * - 6.6 gave generic_fillattr() the request mask; 6.7 made the inode's
 *   times private (inode_set_mtime_to_ts() and friends).
 * - 6.12 dropped kvrealloc()'s old-size argument.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
typedef struct mnt_idmap les_idmap_t;
#define LES_NOP_IDMAP (&nop_mnt_idmap)
#else
typedef struct user_namespace les_idmap_t;
#define LES_NOP_IDMAP (&init_user_ns)
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define LES_GET_ACL_OP get_inode_acl
#else
#define LES_GET_ACL_OP get_acl
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#define les_fillattr(idmap, mask, inode, stat) generic_fillattr(idmap, mask, inode, stat)
#else
#define les_fillattr(idmap, mask, inode, stat) generic_fillattr(idmap, inode, stat)
#endif

/* mtime and ctime (and atime with all) to now. */
static inline void les_touch_times(struct inode *inode, bool all)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	struct timespec64 now = inode_set_ctime_current(inode);

	inode_set_mtime_to_ts(inode, now);
	if (all)
		inode_set_atime_to_ts(inode, now);
#else
	inode->i_mtime = inode->i_ctime = current_time(inode);
	if (all)
		inode->i_atime = inode->i_mtime;
#endif
}

static inline void les_touch_ctime(struct inode *inode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	inode_set_ctime_current(inode);
#else
	inode->i_ctime = current_time(inode);
#endif
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define les_kvrealloc(p, old, new, gfp) kvrealloc(p, new, gfp)
#else
#define les_kvrealloc(p, old, new, gfp) kvrealloc(p, old, new, gfp)
#endif

/* ---- Wire constants: lustre/include/uapi/linux/lustre/lustre_idl.h ---- */

enum ost_cmd {
	OST_GETATTR = 1,
	OST_SETATTR = 2,
	OST_READ = 3,
	OST_WRITE = 4,
	OST_CONNECT = 8,
	OST_PUNCH = 10,
	OST_STATFS = 13,
	OST_SYNC = 16,
};

enum mds_cmd {
	MDS_GETATTR = 33,
	MDS_GETATTR_NAME = 34,
	MDS_CLOSE = 35,
	MDS_REINT = 36,
	MDS_READPAGE = 37,
	MDS_CONNECT = 38,
	MDS_STATFS = 41,
	MDS_SYNC = 44,
	MDS_GETXATTR = 49,
};

/* First __u32 of an MDS_REINT request's record buffer (mdt_rec_reint). */
enum mds_reint_op {
	REINT_SETATTR = 1,
	REINT_CREATE = 2,
	REINT_LINK = 3,
	REINT_UNLINK = 4,
	REINT_RENAME = 5,
	REINT_OPEN = 6,
	REINT_SETXATTR = 7,
};

enum ldlm_cmd {
	LDLM_ENQUEUE = 101,
	LDLM_CANCEL = 103,
};

enum ldlm_mode {
	LCK_MINMODE = 0,
	LCK_EX = 1,
	LCK_PW = 2,
	LCK_PR = 4,
	LCK_CW = 8,
	LCK_CR = 16,
	LCK_NL = 32,
};

enum ldlm_type {
	LDLM_PLAIN = 10,
	LDLM_EXTENT = 11,
	LDLM_IBITS = 13,
};

/* lustre/include/lustre_dlm_flags.h */
#define LDLM_FL_BLOCK_GRANTED 0x0000000000000002ULL
#define LDLM_FL_BLOCK_CONV    0x0000000000000004ULL
#define LDLM_FL_BLOCK_WAIT    0x0000000000000008ULL
#define LDLM_FL_HAS_INTENT    0x0000000000001000ULL
#define LDLM_FL_BLOCKED_MASK  (LDLM_FL_BLOCK_GRANTED | LDLM_FL_BLOCK_CONV | LDLM_FL_BLOCK_WAIT)

/* MDS inode bits (lustre_idl.h MDS_INODELOCK_*) */
#define MDS_INODELOCK_LOOKUP 0x000001
#define MDS_INODELOCK_UPDATE 0x000002

#define PTL_RPC_MSG_REQUEST 4711
#define LUSTRE_MSG_MAGIC_V2 0x0BD00BD3
#define PTLRPC_MSG_VERSION  0x00000003
#define LUSTRE_OBD_VERSION  0x00010000
#define LUSTRE_MDS_VERSION  0x00020000
#define LUSTRE_OST_VERSION  0x00030000
#define LUSTRE_DLM_VERSION  0x00040000

/* lustre/include/uapi/linux/lustre/lustre_user.h */
#define LL_SUPER_MAGIC 0x0BD00BD0

/* lustre/include/lustre_dlm.h */
enum lvb_type {
	LVB_T_NONE = 0,
	LVB_T_OST = 1,
	LVB_T_LQUOTA = 2,
	LVB_T_LAYOUT = 3,
};

/* lustre/include/lustre_import.h */
enum lustre_imp_state {
	LUSTRE_IMP_CLOSED = 1,
	LUSTRE_IMP_NEW = 2,
	LUSTRE_IMP_DISCON = 3,
	LUSTRE_IMP_CONNECTING = 4,
	LUSTRE_IMP_FULL = 9,
};

/* lustre/include/lustre_net.h */
enum rq_phase {
	RQ_PHASE_NEW = 0xebc0de00,
	RQ_PHASE_RPC = 0xebc0de01,
	RQ_PHASE_BULK = 0xebc0de02,
	RQ_PHASE_INTERPRET = 0xebc0de03,
	RQ_PHASE_COMPLETE = 0xebc0de04,
};

/*
 * The request message exactly as on the wire (lustre_idl.h): a header whose
 * lm_buflens[] is padded to 8 bytes, then the buffers, each padded to 8.
 * Buffer 0 (MSG_PTLRPC_BODY_OFF) is the ptlrpc_body; for MDS_REINT, buffer
 * 1 (REQ_REC_OFF) starts with the reint sub-opcode. A tracer that knows only
 * where rq_reqmsg sits in struct ptlrpc_request can read the opcode from
 * here the same way on a real client.
 */
struct lustre_msg {
	__u32 lm_bufcount;
	__u32 lm_secflvr;
	__u32 lm_magic;
	__u32 lm_repsize;
	__u32 lm_cksum;
	__u32 lm_flags;
	__u32 lm_opc;
	__u32 lm_padding_3;
	__u32 lm_buflens[];
};

struct lustre_handle {
	__u64 cookie;
};

struct ptlrpc_body {
	struct lustre_handle pb_handle;
	__u32 pb_type;
	__u32 pb_version;
	__u32 pb_opc;
	__u32 pb_status; /* request: the submitter's pid, as Lustre sets it */
	__u64 pb_last_xid;
	__u16 pb_tag;
	__u16 pb_padding0;
	__u32 pb_padding1;
	__u64 pb_last_committed;
	__u64 pb_transno;
	__u32 pb_flags;
	__u32 pb_op_flags;
	__u32 pb_conn_cnt;
	__u32 pb_timeout;
	__u32 pb_service_time;
	__u32 pb_limit;
	__u64 pb_slv;
	__u64 pb_pre_versions[4];
	__u64 pb_mbits;
	__u64 pb_padding64_0;
	__u64 pb_padding64_1;
	__u32 pb_uid;
	__u32 pb_gid;
	char pb_jobid[32];
};

/* ---- Client objects (stand-ins: only what this module needs) ---- */

/* A connection to one target, e.g. "standin-MDT0000-mdc-ffff888004a1c000". */
struct obd_import {
	char imp_obd_name[64];
	enum lustre_imp_state imp_state;
	atomic_t imp_inflight;
	atomic_t imp_conn_cnt;
};

/* Real exports reach their import through exp_obd; one pointer here. */
struct obd_export {
	struct obd_import *exp_imp;
};

/* Describes a request's buffers; here only how many there are. */
struct req_format {
	const char *rf_name;
	int rf_bufcount;
};

struct lu_env;
struct ptlrpc_request;

typedef int (*ptlrpc_interpterer_t)(const struct lu_env *env, struct ptlrpc_request *req, void *arg,
				    int rc);

/*
 * The request. Real Lustre's struct ptlrpc_request is large and its layout
 * depends on the Lustre version and build; this one puts what a tracer
 * reads first, at offsets the module pins with static_assert and publishes
 * in the read-only parameter request_layout:
 *
 *   0 rq_type  4 rq_status  8 rq_xid  16 rq_opc  20 rq_phase
 *   24 rq_send_state  28 rq_submitter_pid  32 rq_reqmsg  40 rq_import
 *   48 rq_sent_ns
 *
 * rq_opc and rq_submitter_pid do not exist in Lustre (there the opcode is
 * only in rq_reqmsg's ptlrpc_body, and the submitter is not recorded); they
 * are here so tests can cross-check what a tracer derived otherwise.
 */
struct ptlrpc_request {
	int rq_type;
	int rq_status;
	__u64 rq_xid;
	__u32 rq_opc;
	enum rq_phase rq_phase;
	enum lustre_imp_state rq_send_state;
	pid_t rq_submitter_pid;
	struct lustre_msg *rq_reqmsg;
	struct obd_import *rq_import;
	ktime_t rq_sent_ns;
	/* Fields below are not part of the published layout. */
	unsigned int rq_resend_nr;
	unsigned int rq_resend : 1, rq_restart : 1, rq_timedout : 1, rq_replied : 1, rq_sent : 1;
	int rq_reqlen;
	refcount_t rq_refcount;
	spinlock_t rq_lock;
	struct list_head rq_list; /* on the ptlrpcd queue */
	const struct req_format *rq_format;
	ptlrpc_interpterer_t rq_interpret_reply;
	void *rq_cb_data;
	int rq_bulk_nob; /* bytes of an OST_READ/OST_WRITE (Lustre: rq_bulk->bd_nob) */
};

/* ---- LDLM: lustre/include/lustre_dlm.h, uapi lustre_idl.h ---- */

#define RES_NAME_SIZE 4
struct ldlm_res_id {
	__u64 name[RES_NAME_SIZE];
};

struct ldlm_extent {
	__u64 start;
	__u64 end;
	__u64 gid;
};

struct ldlm_inodebits {
	__u64 bits;
	__u64 try_bits;
	__u64 li_gid;
};

union ldlm_policy_data {
	struct ldlm_extent l_extent;
	struct ldlm_inodebits l_inodebits;
};

struct ldlm_lock;
typedef int (*ldlm_completion_callback)(struct ldlm_lock *lock, __u64 flags, void *data);

struct ldlm_enqueue_info {
	enum ldlm_type ei_type;
	enum ldlm_mode ei_mode;
	void *ei_cb_bl;
	void *ei_cb_local_bl;
	void *ei_cb_cp; /* ldlm_completion_callback, NULL: intent only */
	void *ei_cb_gl;
	void *ei_cb_created;
	void *ei_cbdata;
	void *ei_namespace;
	__u64 ei_inodebits;
};

/* Stand-in: the resource is its id; l_pid is a real field. */
struct ldlm_lock {
	struct lustre_handle l_handle;
	enum ldlm_type l_type;
	enum ldlm_mode l_req_mode;
	enum ldlm_mode l_granted_mode;
	struct ldlm_res_id l_res_id;
	__u64 l_flags;
	pid_t l_pid;
	unsigned int l_grant_delay_ms; /* when the "server" grants it */
};

/* ---- Superblock and inode ---- */

struct ll_sb_info {
	struct obd_import ll_md_imp;
	struct obd_import ll_dt_imp;
	struct obd_export ll_md_exp; /* metadata: MDT through mdc */
	struct obd_export ll_dt_exp; /* data: OST through osc */
	char ll_fsname[16];
	atomic_t ll_async_inflight;
	wait_queue_head_t ll_async_waitq;
};

struct ll_inode_info {
	char *lli_data; /* file contents, i_size bytes used */
	size_t lli_data_cap;
	char *lli_symlink_name;
	struct list_head lli_xattrs; /* struct les_xattr */
	spinlock_t lli_xattr_lock;
	enum ldlm_mode lli_extent_mode; /* cached extent lock, if any */
	atomic_t lli_async_writes;
	wait_queue_head_t lli_async_waitq;
	struct inode lli_vfs_inode;
};

static inline struct ll_inode_info *ll_i2info(struct inode *inode)
{
	return container_of(inode, struct ll_inode_info, lli_vfs_inode);
}

static inline struct ll_sb_info *ll_s2sbi(struct super_block *sb)
{
	return sb->s_fs_info;
}

static inline struct ll_sb_info *ll_i2sbi(struct inode *inode)
{
	return ll_s2sbi(inode->i_sb);
}

/*
 * Sleep until at least ms of CLOCK_MONOTONIC (the clock BPF's
 * bpf_ktime_get_ns reads) have passed: msleep counts jiffies, which under
 * an emulated CPU can come in a little short of that.
 */
static inline void les_sleep_ms(unsigned int ms)
{
	ktime_t end = ktime_add_ms(ktime_get(), ms);

	while (ktime_before(ktime_get(), end))
		usleep_range(500, 1000);
}

/* ---- PtlRPC: lustre/ptlrpc/{client.c,niobuf.c,recover.c,ptlrpcd.c} ---- */

struct ptlrpc_request *ptlrpc_request_alloc(struct obd_import *imp,
					    const struct req_format *format);
int ptlrpc_request_pack(struct ptlrpc_request *request, __u32 version, int opcode);
int ptlrpc_request_bufs_pack(struct ptlrpc_request *request, __u32 version, int opcode,
			     char **bufs, void *ctx);
void lustre_msg_set_opc(struct lustre_msg *msg, __u32 opcode);
void lustre_msg_set_jobinfo(struct lustre_msg *msg, const void *ji);
void ptlrpc_lprocfs_rpc_sent(struct ptlrpc_request *req, long amount);
void ptlrpc_lprocfs_brw(struct ptlrpc_request *req, int bytes);
int ptlrpc_queue_wait(struct ptlrpc_request *req);
int ptlrpc_send_new_req(struct ptlrpc_request *req);
int ptl_send_rpc(struct ptlrpc_request *request, int noreply);
void ptlrpc_req_put(struct ptlrpc_request *request);
void __ptlrpc_free_req(struct ptlrpc_request *request, int locked);
void ptlrpc_resend_req(struct ptlrpc_request *req);
void ptlrpc_restart_req(struct ptlrpc_request *req);
int ptlrpc_expire_one_request(struct ptlrpc_request *req, int async_unlink);
void ptlrpc_request_handle_notconn(struct ptlrpc_request *failed_req);
void ptlrpcd_add_req(struct ptlrpc_request *req);

/* ---- LDLM: lustre/ldlm/ldlm_request.c ---- */

int ldlm_cli_enqueue(struct obd_export *exp, struct ptlrpc_request **reqp,
		     struct ldlm_enqueue_info *einfo, const struct ldlm_res_id *res_id,
		     union ldlm_policy_data const *policy, __u64 *flags, void *lvb, __u32 lvb_len,
		     enum lvb_type lvb_type, struct lustre_handle *lockh, int async);
int ldlm_completion_ast(struct ldlm_lock *lock, __u64 flags, void *data);

/* ---- llite: lustre/llite/{file,namei,dir,xattr,symlink,acl,llite_lib}.c ---- */

struct dentry *ll_lookup_nd(struct inode *parent, struct dentry *dentry, unsigned int flags);
int ll_atomic_open(struct inode *dir, struct dentry *dentry, struct file *file,
		   unsigned int open_flags, umode_t mode);
int ll_create_nd(les_idmap_t *mnt_userns, struct inode *dir, struct dentry *dentry,
		 umode_t mode, bool want_excl);
int ll_mknod(les_idmap_t *mnt_userns, struct inode *dir, struct dentry *dchild,
	     umode_t mode, dev_t rdev);
int ll_mkdir(les_idmap_t *mnt_userns, struct inode *dir, struct dentry *dchild,
	     umode_t mode);
int ll_symlink(les_idmap_t *mnt_userns, struct inode *dir, struct dentry *dchild,
	       const char *oldpath);
int ll_link(struct dentry *old_dentry, struct inode *dir, struct dentry *new_dentry);
int ll_unlink(struct inode *dir, struct dentry *dchild);
int ll_rmdir(struct inode *dir, struct dentry *dchild);
int ll_rename(les_idmap_t *mnt_userns, struct inode *src, struct dentry *src_dchild,
	      struct inode *tgt, struct dentry *tgt_dchild, unsigned int flags);
int ll_getattr(les_idmap_t *mnt_userns, const struct path *path, struct kstat *stat,
	       u32 request_mask, unsigned int flags);
int ll_setattr(les_idmap_t *mnt_userns, struct dentry *de, struct iattr *attr);
ssize_t ll_listxattr(struct dentry *dentry, char *buffer, size_t size);
int ll_xattr_get_common(const struct xattr_handler *handler, struct dentry *dentry,
			struct inode *inode, const char *name, void *buffer, size_t size);
int ll_xattr_set_common(const struct xattr_handler *handler, les_idmap_t *mnt_userns,
			struct dentry *dentry, struct inode *inode, const char *name,
			const void *value, size_t size, int flags);
struct posix_acl *ll_get_acl(struct inode *inode, int type, bool rcu);
const char *ll_get_link(struct dentry *dentry, struct inode *inode, struct delayed_call *done);
int ll_statfs(struct dentry *de, struct kstatfs *sfs);

int ll_file_open(struct inode *inode, struct file *file);
int ll_file_release(struct inode *inode, struct file *file);
ssize_t ll_file_read_iter(struct kiocb *iocb, struct iov_iter *to);
ssize_t ll_file_write_iter(struct kiocb *iocb, struct iov_iter *from);
loff_t ll_file_seek(struct file *file, loff_t offset, int origin);
int ll_fsync(struct file *file, loff_t start, loff_t end, int datasync);
int ll_dir_open(struct inode *inode, struct file *file);
int ll_dir_release(struct inode *inode, struct file *file);
int ll_iterate(struct file *filp, struct dir_context *ctx);

/* ---- Inside the module ---- */

extern const struct file_operations ll_file_operations;
extern const struct file_operations ll_dir_operations;
extern const struct inode_operations ll_file_inode_operations;
extern const struct inode_operations ll_dir_inode_operations;
extern const struct inode_operations ll_fast_symlink_inode_operations;
extern const struct inode_operations ll_special_inode_operations;
extern const struct xattr_handler *ll_xattr_handlers[];
extern struct file_system_type lustre_fs_type;

/* One synchronous request on the metadata or the data import. */
int les_md_rpc(struct inode *inode, int opcode, __u32 reint_op);
int les_dt_rpc(struct inode *inode, int opcode);
int les_dt_bulk_rpc(struct inode *inode, int opcode, int bytes);
struct ptlrpc_request *les_request_new(struct obd_import *imp, __u32 version, int opcode,
				       __u32 reint_op);
struct inode *les_new_inode(struct super_block *sb, const struct inode *dir, umode_t mode,
			    dev_t rdev);
int les_take_lock(struct inode *inode, struct obd_export *exp, enum ldlm_type type,
		  enum ldlm_mode mode, __u64 bits);

void les_xattrs_free(struct ll_inode_info *lli);
int les_ptlrpc_init(void);
void les_ptlrpc_fini(void);
int les_llite_init(void);
void les_llite_fini(void);
bool les_async_writes(void);

#endif /* LES_LUSTRE_STANDIN_H */
