/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Names of the record ABI's enums as they appear in JSON. */
#ifndef LES_OPS_H
#define LES_OPS_H

#include <linux/types.h>
#include "les_record.h"

enum les_intent {
	LES_INTENT_NAMESPACE_READ = 0,
	LES_INTENT_NAMESPACE_MUTATION,
	LES_INTENT_DATA_READ,
	LES_INTENT_DATA_WRITE,
	LES_INTENT_SYNC,
	LES_INTENT_MAX,
};

enum les_errno_class {
	LES_ERRC_NONE = 0, /* success: JSON null */
	LES_ERRC_TIMEOUT,
	LES_ERRC_NOTCONN,
	LES_ERRC_PERM,
	LES_ERRC_NOTFOUND,
	LES_ERRC_IO,
	LES_ERRC_AGAIN,
	LES_ERRC_OTHER,
	LES_ERRC_MAX,
};

const char *les_op_name(unsigned int op);
int les_op_from_name(const char *name);
enum les_intent les_op_intent(unsigned int op);
const char *les_intent_name(enum les_intent intent);
int les_intent_from_name(const char *name);
enum les_errno_class les_errno_class(int err);
const char *les_errno_class_name(enum les_errno_class cls);
const char *les_fuse_opcode_name(unsigned int opcode);
const char *les_attach_method_name(unsigned int method);
const char *les_rpc_proto_name(unsigned int proto);
const char *les_rpc_event_name(unsigned int event);
/* The event id of an rpc_event name, or -1. */
int les_rpc_event_index(const char *name);
/* The fs_type a request layer serves ("fuse", "nfs", "lustre"), NULL if none. */
const char *les_rpc_proto_fs_type(unsigned int proto);
/* The enum les_rpc_proto of a name les_rpc_proto_name gives, -1 if none. */
int les_rpc_proto_index(const char *name);
const char *les_counter_name(unsigned int counter);
const char *les_probe_name(unsigned int probe);
/* Lustre opcode names (lustre_idl.h, lower case), NULL when unknown. */
const char *les_ptlrpc_opcode_name(unsigned int opcode);
/* "queue_wait", "request", "lock_wait"; NULL for LES_RPC_OP_NONE. */
const char *les_rpc_op_name(unsigned int rpc_op);
/*
 * The enum les_rpc_op of a line's "op" and "function" (NULL when the line
 * has none); LES_RPC_OP_NONE for a protocol's own request.
 */
unsigned int les_rpc_op_of(const char *op, const char *function);
/* The function a lock_wait record timed, NULL for other ops. */
const char *les_rpc_op_function(unsigned int rpc_op);
/* sunrpc program names ("nfs", "mount", "nlockmgr", ...), NULL when unknown. */
const char *les_sunrpc_prog_name(unsigned int prog);

#endif
