// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Names of the record ABI's enums as they appear in JSON. */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include "model/ops.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
	const char *name;
	enum les_intent intent;
} op_table[LES_OP_MAX] = {
	[LES_OP_LOOKUP] = { "lookup", LES_INTENT_NAMESPACE_READ },
	[LES_OP_OPEN] = { "open", LES_INTENT_NAMESPACE_READ },
	[LES_OP_CLOSE] = { "close", LES_INTENT_NAMESPACE_READ },
	[LES_OP_GETATTR] = { "getattr", LES_INTENT_NAMESPACE_READ },
	[LES_OP_GETXATTR] = { "getxattr", LES_INTENT_NAMESPACE_READ },
	[LES_OP_LISTXATTR] = { "listxattr", LES_INTENT_NAMESPACE_READ },
	[LES_OP_GET_ACL] = { "get_acl", LES_INTENT_NAMESPACE_READ },
	[LES_OP_READLINK] = { "readlink", LES_INTENT_NAMESPACE_READ },
	[LES_OP_READDIR] = { "readdir", LES_INTENT_NAMESPACE_READ },
	[LES_OP_STATFS] = { "statfs", LES_INTENT_NAMESPACE_READ },
	[LES_OP_CREATE] = { "create", LES_INTENT_NAMESPACE_MUTATION },
	[LES_OP_MKDIR] = { "mkdir", LES_INTENT_NAMESPACE_MUTATION },
	[LES_OP_MKNOD] = { "mknod", LES_INTENT_NAMESPACE_MUTATION },
	[LES_OP_UNLINK] = { "unlink", LES_INTENT_NAMESPACE_MUTATION },
	[LES_OP_RMDIR] = { "rmdir", LES_INTENT_NAMESPACE_MUTATION },
	[LES_OP_RENAME] = { "rename", LES_INTENT_NAMESPACE_MUTATION },
	[LES_OP_LINK] = { "link", LES_INTENT_NAMESPACE_MUTATION },
	[LES_OP_SYMLINK] = { "symlink", LES_INTENT_NAMESPACE_MUTATION },
	[LES_OP_SETATTR] = { "setattr", LES_INTENT_NAMESPACE_MUTATION },
	[LES_OP_SETXATTR] = { "setxattr", LES_INTENT_NAMESPACE_MUTATION },
	[LES_OP_READ] = { "read", LES_INTENT_DATA_READ },
	[LES_OP_WRITE] = { "write", LES_INTENT_DATA_WRITE },
	[LES_OP_FSYNC] = { "fsync", LES_INTENT_SYNC },
};

static const char *const intent_names[LES_INTENT_MAX] = {
	[LES_INTENT_NAMESPACE_READ] = "namespace_read",
	[LES_INTENT_NAMESPACE_MUTATION] = "namespace_mutation",
	[LES_INTENT_DATA_READ] = "data_read",
	[LES_INTENT_DATA_WRITE] = "data_write",
	[LES_INTENT_SYNC] = "sync",
};

static const char *const errc_names[LES_ERRC_MAX] = {
	[LES_ERRC_NONE] = NULL,		 [LES_ERRC_TIMEOUT] = "timeout",
	[LES_ERRC_NOTCONN] = "notconn",	 [LES_ERRC_PERM] = "perm",
	[LES_ERRC_NOTFOUND] = "notfound", [LES_ERRC_IO] = "io",
	[LES_ERRC_AGAIN] = "again",	 [LES_ERRC_OTHER] = "other",
};

const char *les_op_name(unsigned int op)
{
	return op < LES_OP_MAX ? op_table[op].name : "unknown";
}

int les_op_from_name(const char *name)
{
	/* NULL-safe as the other lookups: a replayed access line may have no "op". */
	for (unsigned int i = 0; name && i < LES_OP_MAX; i++)
		if (strcmp(op_table[i].name, name) == 0)
			return (int)i;
	return -1;
}

enum les_intent les_op_intent(unsigned int op)
{
	return op < LES_OP_MAX ? op_table[op].intent : LES_INTENT_NAMESPACE_READ;
}

const char *les_intent_name(enum les_intent intent)
{
	return (unsigned int)intent < LES_INTENT_MAX ? intent_names[intent] : "unknown";
}

int les_intent_from_name(const char *name)
{
	for (unsigned int i = 0; i < LES_INTENT_MAX; i++)
		if (strcmp(intent_names[i], name) == 0)
			return (int)i;
	return -1;
}

/* The exporter's errno classes: what an admin acts on, not every errno. */
enum les_errno_class les_errno_class(int err)
{
	/* INT_MIN (a corrupt record) has no negation: it is just "other". */
	if (err < 0)
		err = err == INT_MIN ? INT_MAX : -err;
	switch (err) {
	case 0:
		return LES_ERRC_NONE;
	case ETIMEDOUT:
	case ETIME:
		return LES_ERRC_TIMEOUT;
	case ENOTCONN:
	case ECONNABORTED:
	case ECONNRESET:
	case ECONNREFUSED:
	case ESHUTDOWN:
	case EHOSTUNREACH:
	case ENETUNREACH:
		return LES_ERRC_NOTCONN;
	case EPERM:
	case EACCES:
	case EROFS:
		return LES_ERRC_PERM;
	case ENOENT:
	case ENODATA:
	case ESTALE:
		return LES_ERRC_NOTFOUND;
	case EIO:
	case EREMOTEIO:
		return LES_ERRC_IO;
	case EAGAIN:
	case EINTR:
	case EINPROGRESS:
	case EBUSY:
		return LES_ERRC_AGAIN;
	default:
		return LES_ERRC_OTHER;
	}
}

const char *les_errno_class_name(enum les_errno_class cls)
{
	return (unsigned int)cls < LES_ERRC_MAX ? errc_names[cls] : "other";
}

/* FUSE opcodes (include/uapi/linux/fuse.h), lower case. */
static const char *const fuse_ops[] = {
	[1] = "lookup",	    [2] = "forget",	  [3] = "getattr",	[4] = "setattr",
	[5] = "readlink",   [6] = "symlink",	  [8] = "mknod",	[9] = "mkdir",
	[10] = "unlink",    [11] = "rmdir",	  [12] = "rename",	[13] = "link",
	[14] = "open",	    [15] = "read",	  [16] = "write",	[17] = "statfs",
	[18] = "release",   [20] = "fsync",	  [21] = "setxattr",	[22] = "getxattr",
	[23] = "listxattr", [24] = "removexattr", [25] = "flush",	[26] = "init",
	[27] = "opendir",   [28] = "readdir",	  [29] = "releasedir",	[30] = "fsyncdir",
	[31] = "getlk",	    [32] = "setlk",	  [33] = "setlkw",	[34] = "access",
	[35] = "create",    [36] = "interrupt",	  [37] = "bmap",	[38] = "destroy",
	[39] = "ioctl",	    [40] = "poll",	  [41] = "notify_reply", [42] = "batch_forget",
	[43] = "fallocate", [44] = "readdirplus", [45] = "rename2",	[46] = "lseek",
	[47] = "copy_file_range", [48] = "setupmapping", [49] = "removemapping",
	[50] = "syncfs",    [51] = "tmpfile",	  [52] = "statx",
};

const char *les_fuse_opcode_name(unsigned int opcode)
{
	if (opcode == 4096)
		return "cuse_init";
	if (opcode < ARRAY_SIZE(fuse_ops) && fuse_ops[opcode])
		return fuse_ops[opcode];
	return "unknown";
}

const char *les_attach_method_name(unsigned int method)
{
	static const char *const names[LES_ATTACH_MAX] = {
		[LES_ATTACH_NONE] = "none",	    [LES_ATTACH_FENTRY] = "fentry",
		[LES_ATTACH_KPROBE] = "kprobe",	    [LES_ATTACH_SYSCALL] = "syscall",
		[LES_ATTACH_TRACEPOINT] = "tracepoint",
	};
	return method < LES_ATTACH_MAX ? names[method] : "unknown";
}

const char *les_rpc_proto_name(unsigned int proto)
{
	static const char *const names[LES_PROTO_MAX] = {
		[LES_PROTO_NONE] = "none",     [LES_PROTO_FUSE] = "fuse",
		[LES_PROTO_SUNRPC] = "sunrpc", [LES_PROTO_PTLRPC] = "ptlrpc",
		[LES_PROTO_LDLM] = "ldlm",     [LES_PROTO_LNET] = "lnet",
	};
	return proto < LES_PROTO_MAX ? names[proto] : "unknown";
}

const char *les_rpc_event_name(unsigned int event)
{
	static const char *const names[LES_EV_MAX] = {
		[LES_EV_RESEND] = "resend",	    [LES_EV_RESTART] = "restart",
		[LES_EV_EXPIRE] = "expire",	    [LES_EV_NOTCONN] = "notconn",
		[LES_EV_RETRANSMIT] = "retransmit", [LES_EV_EVICT] = "evict",
	};
	return event < LES_EV_MAX ? names[event] : "unknown";
}

const char *les_counter_name(unsigned int counter)
{
	static const char *const names[LES_CNT_MAX] = {
		[LES_CNT_PRODUCED] = "produced",
		[LES_CNT_RB_DROPPED] = "dropped_kernel",
		[LES_CNT_INFLIGHT_FULL] = "inflight_full",
		[LES_CNT_END_NO_SEND] = "end_without_send",
		[LES_CNT_EXIT_NO_ENTRY] = "exit_without_entry",
		[LES_CNT_DEPTH_OVERFLOW] = "depth_overflow",
		[LES_CNT_ENTRY_REPLACED] = "entry_replaced",
		[LES_CNT_FILTERED] = "filtered_kernel",
		[LES_CNT_THREADS_FULL] = "threads_full",
		[LES_CNT_NOTICE_DROPPED] = "notices_dropped",
		[LES_CNT_PATH_UNRESOLVED] = "path_unresolved",
		[LES_CNT_FUSE_UNVERIFIED] = "fuse_unverified",
		[LES_CNT_FUSE_UNPLACED] = "fuse_unplaced",
		[LES_CNT_SRV_UNTRACKED] = "srv_untracked",
		[LES_CNT_SRV_FULL] = "srv_full",
		[LES_CNT_LNET_FULL] = "lnet_full",
	};
	return counter < LES_CNT_MAX && names[counter] ? names[counter] : "unknown";
}

const char *les_probe_name(unsigned int probe)
{
	static const char *const names[LES_PROBE_MAX] = {
		[LES_PROBE_FUSE_SEND] = "fuse_request_send",
		[LES_PROBE_FUSE_END] = "fuse_request_end",
		[LES_PROBE_SYS_ENTER] = "sys_enter",
		[LES_PROBE_SYS_EXIT] = "sys_exit",
		[LES_PROBE_SCHED_EXEC] = "sched_process_exec",
		[LES_PROBE_SCHED_FORK] = "sched_process_fork",
		[LES_PROBE_PTLRPC_CREATE] = "ptlrpc_request_created",
		[LES_PROBE_PTLRPC_SEND] = "ptlrpc_send",
		[LES_PROBE_PTLRPC_FREE] = "ptlrpc_free_req",
		[LES_PROBE_PTLRPC_PACK] = "ptlrpc_request_packed",
		[LES_PROBE_PTLRPC_REPLY] = "ptlrpc_lprocfs_rpc_sent",
		[LES_PROBE_PTLRPC_BRW] = "ptlrpc_lprocfs_brw",
		[LES_PROBE_PTLRPC_WAIT] = "ptlrpc_queue_wait",
		[LES_PROBE_PTLRPC_EVENT] = "ptlrpc_event",
		[LES_PROBE_LDLM_WAIT] = "ldlm_lock_wait",
		[LES_PROBE_PTLRPC_BRW_PREP] = "osc_brw_prep_kthread",
		[LES_PROBE_PTLRPC_CAUSE] = "ptlrpc_cause_found",
		[LES_PROBE_PTLRPC_STATUS] = "ptlrpc_reply_status",
		[LES_PROBE_SUNRPC_BEGIN] = "rpc_task_begin",
		[LES_PROBE_SUNRPC_STATS] = "rpc_stats_latency",
		[LES_PROBE_SUNRPC_END] = "rpc_task_end",
		[LES_PROBE_SUNRPC_RETRANSMIT] = "xprt_retransmit",
		[LES_PROBE_FUSE_READ] = "fuse_daemon_read",
		[LES_PROBE_SRV_NRS_ADD] = "srv_nrs_add",
		[LES_PROBE_SRV_DEQUEUE] = "srv_dequeue",
		[LES_PROBE_SRV_HANDLE] = "srv_handle",
		[LES_PROBE_SRV_REPLY] = "srv_reply",
		[LES_PROBE_LNET_COMMIT] = "lnet_commit",
		[LES_PROBE_LNET_POST] = "lnet_credit_gate",
		[LES_PROBE_LNET_WAIT] = "lnet_credit_wait",
		[LES_PROBE_LNET_LND_SEND] = "lnet_lnd_send",
		[LES_PROBE_LNET_FINALIZE] = "lnet_finalize",
		[LES_PROBE_SVC_PROCESS] = "svc_process",
		[LES_PROBE_SVC_REPLYING] = "svc_stats_latency",
		[LES_PROBE_SVC_SEND] = "svc_send",
		[LES_PROBE_NFSD_IO] = "nfsd_io",
		[LES_PROBE_SRV_BULK] = "srv_bulk",
		[LES_PROBE_SRV_IO] = "srv_osd_io",
		[LES_PROBE_SVC_ENQUEUE] = "svc_xprt_enqueue",
	};
	return probe < LES_PROBE_MAX && names[probe] ? names[probe] : "unknown";
}

const char *les_rpc_proto_fs_type(unsigned int proto)
{
	switch (proto) {
	case LES_PROTO_FUSE:
		return "fuse";
	case LES_PROTO_SUNRPC:
		return "nfs";
	case LES_PROTO_PTLRPC:
	case LES_PROTO_LDLM:
	case LES_PROTO_LNET:
		return "lustre";
	}
	return NULL;
}

int les_rpc_proto_index(const char *name)
{
	for (unsigned int i = 0; name && i < LES_PROTO_MAX; i++)
		if (strcmp(name, les_rpc_proto_name(i)) == 0)
			return (int)i;
	return -1;
}

int les_rpc_event_index(const char *name)
{
	for (unsigned int i = 0; name && i < LES_EV_MAX; i++)
		if (strcmp(name, les_rpc_event_name(i)) == 0)
			return (int)i;
	return -1;
}

/* --- names in records ------------------------------------------------------ */

/* lustre/include/uapi/linux/lustre/lustre_idl.h, lower case. */
static const char *const ptlrpc_opcodes[] = {
	[1] = "ost_getattr",
	[2] = "ost_setattr",
	[3] = "ost_read",
	[4] = "ost_write",
	[5] = "ost_create",
	[6] = "ost_destroy",
	[7] = "ost_get_info",
	[8] = "ost_connect",
	[9] = "ost_disconnect",
	[10] = "ost_punch",
	[11] = "ost_open",
	[12] = "ost_close",
	[13] = "ost_statfs",
	[16] = "ost_sync",
	[17] = "ost_set_info",
	[18] = "ost_quotacheck",
	[19] = "ost_quotactl",
	[20] = "ost_quota_adjust_qunit",
	[21] = "ost_ladvise",
	[22] = "ost_fallocate",
	[23] = "ost_seek",
	[33] = "mds_getattr",
	[34] = "mds_getattr_name",
	[35] = "mds_close",
	[36] = "mds_reint",
	[37] = "mds_readpage",
	[38] = "mds_connect",
	[39] = "mds_disconnect",
	[40] = "mds_get_root",
	[41] = "mds_statfs",
	[42] = "mds_pin",
	[43] = "mds_unpin",
	[44] = "mds_sync",
	[45] = "mds_done_writing",
	[46] = "mds_set_info",
	[47] = "mds_quotacheck",
	[48] = "mds_quotactl",
	[49] = "mds_getxattr",
	[50] = "mds_setxattr",
	[51] = "mds_writepage",
	[52] = "mds_is_subdir",
	[53] = "mds_get_info",
	[54] = "mds_hsm_state_get",
	[55] = "mds_hsm_state_set",
	[56] = "mds_hsm_action",
	[57] = "mds_hsm_progress",
	[58] = "mds_hsm_request",
	[59] = "mds_hsm_ct_register",
	[60] = "mds_hsm_ct_unregister",
	[61] = "mds_swap_layouts",
	[62] = "mds_rmfid",
	[63] = "mds_batch",
	[64] = "mds_hsm_data_version",
	[101] = "ldlm_enqueue",
	[102] = "ldlm_convert",
	[103] = "ldlm_cancel",
	[104] = "ldlm_bl_callback",
	[105] = "ldlm_cp_callback",
	[106] = "ldlm_gl_callback",
	[107] = "ldlm_set_info",
};

static const struct {
	unsigned int opcode;
	const char *name;
} ptlrpc_opcodes_high[] = {
	{250, "mgs_connect"},	  {251, "mgs_disconnect"}, {252, "mgs_exception"},
	{253, "mgs_target_reg"},  {254, "mgs_target_del"}, {255, "mgs_set_info"},
	{256, "mgs_config_read"}, {400, "obd_ping"},	   {403, "obd_idx_read"},
	{700, "seq_query"},	  {900, "fld_query"},	   {901, "fld_read"},
	{1000, "out_update"},
};

const char *les_ptlrpc_opcode_name(unsigned int opcode)
{
	size_t n = sizeof(ptlrpc_opcodes) / sizeof(ptlrpc_opcodes[0]);

	if (opcode < n)
		return ptlrpc_opcodes[opcode];
	for (size_t i = 0; i < sizeof(ptlrpc_opcodes_high) / sizeof(ptlrpc_opcodes_high[0]); i++)
		if (ptlrpc_opcodes_high[i].opcode == opcode)
			return ptlrpc_opcodes_high[i].name;
	return NULL;
}

const char *les_rpc_op_name(unsigned int rpc_op)
{
	switch (rpc_op) {
	case LES_RPC_OP_REQUEST:
		return "request";
	case LES_RPC_OP_QUEUE_WAIT:
		return "queue_wait";
	case LES_RPC_OP_LOCK_ENQUEUE:
	case LES_RPC_OP_LOCK_COMPLETION:
		return "lock_wait";
	}
	return NULL;
}

const char *les_rpc_op_function(unsigned int rpc_op)
{
	switch (rpc_op) {
	case LES_RPC_OP_LOCK_ENQUEUE:
		return "ldlm_cli_enqueue";
	case LES_RPC_OP_LOCK_COMPLETION:
		return "ldlm_completion_ast";
	}
	return NULL;
}

unsigned int les_rpc_op_of(const char *op, const char *function)
{
	for (unsigned int rpc_op = LES_RPC_OP_NONE + 1; op && rpc_op < LES_RPC_OP_MAX; rpc_op++) {
		const char *name = les_rpc_op_name(rpc_op);
		const char *fn = les_rpc_op_function(rpc_op);

		/* Both lock waits are "lock_wait": their function tells them apart. */
		if (name && strcmp(op, name) == 0 && (!fn || (function && strcmp(function, fn) == 0)))
			return rpc_op;
	}
	return LES_RPC_OP_NONE;
}

/* Registered ONC RPC program numbers a Linux client speaks. */
const char *les_sunrpc_prog_name(unsigned int prog)
{
	switch (prog) {
	case 100000:
		return "portmap";
	case 100003:
		return "nfs";
	case 100005:
		return "mount";
	case 100021:
		return "nlockmgr";
	case 100024:
		return "status";
	case 100227:
		return "nfs_acl";
	case 100011:
		return "rquota";
	}
	return NULL;
}
