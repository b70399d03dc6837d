/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The RPC plane's probes besides the FUSE tracepoints: Lustre PtlRPC and
 * LDLM functions (kprobe, or fentry where the module has BTF), the sunrpc
 * tracepoints (tp_btf), and FUSE's own functions where its tracepoints are
 * missing (module BTF needed). For each, the method the running kernel offers or the reason
 * there is none, chosen from the kernel's facts (kallsyms, BTF, tracefs). The names the
 * records of this plane carry (PtlRPC opcodes, sunrpc programs) are in model/ops.h.
 */
#ifndef LES_RPCPROBES_H
#define LES_RPCPROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "util/json.h"
#include "probe/kfacts.h"
#include "les_record.h"
#include "probe/attach.h"

/*
 * Room for the table's rows (rpcprobes.c checks it holds them all): today's
 * client rows and the server and LNet rows to come, with room to spare.
 */
#define LES_RPC_FN_MAX	     128
#define LES_RPC_REASON_MAX   160
/* Environment: offset of rq_reqmsg in struct ptlrpc_request (see rpcprobes.c). */
#define LES_PTLRPC_REQMSG_ENV "LES_PTLRPC_REQMSG_OFFSET"

/* One kernel function or tracepoint and the programs that serve it. */
struct les_rpc_fn {
	const char *name; /* function, or tracepoint as "sunrpc:event" */
	enum les_rpc_proto proto;
	const char *role; /* what the probe tells, for --list-probes */
	const char *kprobe[2]; /* entry and exit programs; NULL: none */
	const char *fentry[2];
	const char *tp_btf; /* tracepoint rows: the program */
	const char *kprobe_nobtf[2]; /* FUSE: kprobes that read no struct by BTF */
	/*
	 * A fentry/fexit program the kernel refuses at load gives way to its
	 * kprobe/kretprobe twin (kprobe[i] for fentry[i]). FUSE rows have
	 * none: their send and end go together in one flavour (planned).
	 */
	bool kprobe_twin;
	/* PtlRPC server side: reads struct ptlrpc_request by CO-RE, so needs its BTF */
	bool server;
	/* sunrpc server side (nfsd's requests): planned only where nfsd is loaded */
	bool svc;
	/* LNet: reads struct lnet_msg by CO-RE, so needs the lnet module's BTF */
	bool lnet;
	/* PtlRPC server side, a step inside the handling: optional, planned with the records */
	bool server_step;
};

struct les_rpc_probe {
	const struct les_rpc_fn *f;
	enum les_attach_method method; /* NONE, FENTRY, KPROBE or TRACEPOINT */
	bool present; /* in kallsyms, or the tracepoint exists */
	bool nobtf;   /* FUSE: by kprobe_nobtf (no BTF for its structs) */
	char where[32]; /* "vmlinux" or the module */
	char reason[LES_RPC_REASON_MAX]; /* why none; empty when planned */
};

struct les_rpc_plan {
	struct les_rpc_probe probe[LES_RPC_FN_MAX];
	size_t n;
	int reqmsg_off; /* for BPF's ptlrpc_reqmsg_off, -1: none */
	char opcode_source[2 * LES_RPC_REASON_MAX]; /* where PtlRPC opcodes come from, or why not */
	char reqmsg_source[LES_RPC_REASON_MAX]; /* where rq_reqmsg's offset comes from, or why not */
};

/* How the FUSE tracepoints serve (the FUSE rows stand back for them). */
struct les_rpc_fuse {
	bool tracepoints;  /* fuse:fuse_request_send/end give send and end */
	bool keyed_by_req; /* ... by struct fuse_req (tp_btf), not by unique ID */
};

/* What the table needs to know of the kernel: functions, tracepoints, types. */
void les_rpc_plan_wants(struct les_kf_wants *w);

/*
 * Choose from the kernel's facts, purely. fentry_ok/fentry_reason: whether
 * fentry is permitted (the access plane's decision); --attach kprobe keeps
 * kprobes. reqmsg_env: LES_PTLRPC_REQMSG_OFFSET's value, or NULL.
 */
void les_rpc_plan_make(struct les_rpc_plan *p, const struct les_kfacts *f,
		       enum les_attach_mode mode, bool fentry_ok, const char *fentry_reason,
		       const char *reqmsg_env, const struct les_rpc_fuse *fuse);

/* How the function or tracepoint name is reached, LES_ATTACH_NONE if not. */
enum les_attach_method les_rpc_plan_method(const struct les_rpc_plan *p, const char *name);

/*
 * The kprobe/kretprobe program that stands in for fentry/fexit program
 * prog_name when the kernel refuses it, as its row says; NULL: none.
 */
const char *les_rpc_kprobe_twin(const char *prog_name);

/* Whether prog_name is a program of this plane; if so, *want says if it loads. */
bool les_rpc_plan_owns(const struct les_rpc_plan *p, const char *prog_name, bool *want);

/* Rows for --list-probes. */
void les_rpc_plan_json(const struct les_rpc_plan *p, struct jw *w);
void les_rpc_plan_text(const struct les_rpc_plan *p, FILE *out);

/*
 * Whether prog_name is a program of a server row (server records): the
 * tracer counts the links of those it attached, and the consumer joins
 * client and server records only where one did.
 */
bool les_rpc_prog_is_server(const char *prog_name);

/* Number of planned probes of proto. */
size_t les_rpc_plan_count(const struct les_rpc_plan *p, enum les_rpc_proto proto);

#endif /* LES_RPCPROBES_H */
