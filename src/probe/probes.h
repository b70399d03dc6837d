/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Choosing how each probe reaches the kernel: the plan, a pure function of
 * the kernel's facts (kfacts.h: kallsyms, BTF, tracefs and what the kernel
 * accepts, never version numbers) and the options.
 */
#ifndef LES_PROBES_H
#define LES_PROBES_H

#include <stdbool.h>
#include <stdio.h>
#include "probe/fnprobes.h"
#include "probe/kfacts.h"
#include "les_record.h"
#include "probe/attach.h"
#include "probe/rpcprobes.h"

enum les_fuse_method {
	LES_FUSE_NONE = 0,
	LES_FUSE_TP_BTF, /* tp_btf: struct fuse_req, requester fields */
	LES_FUSE_TP, /* plain tracepoint: sender stands in for requester */
};

struct les_probe_plan {
	enum les_fuse_method fuse;
	const char *fuse_reason; /* why none, when none */
	/*
	 * Method of the access plane: syscall when the syscall fallback runs
	 * (beside any function probes), else fentry/kprobe when function
	 * probes do, else none (access_reason).
	 */
	enum les_attach_method access;
	bool syscall; /* the syscall fallback */
	/*
	 * Its hook: raw sys_enter/sys_exit, or where asked for and the kernel
	 * has them the per-syscall tracepoints (syscalls:sys_enter_NAME: only
	 * the table's syscalls run a program). Not the default: their 130
	 * links take ~5 s to detach, one after another (docs/performance.md).
	 */
	bool syscall_per_call;
	bool syscall_task_btf; /* its programs' flavour: sys_enter, or sys_enter_nobtf (5.10) */
	bool syscall_cast; /* ... or sys_enter_cast (6.2: bpf_rdonly_cast) */
	const char *syscall_reason; /* why not, when not */
	struct les_fn_plan fn; /* function probes, per table row */
	struct les_rpc_plan rpc; /* PtlRPC, LDLM and sunrpc probes */
	bool proc_notices; /* exec/fork notices for enrichment */
	const char *access_reason;
	bool facts_recorded; /* planned from facts read from a file */
};

/* What the planners take besides the facts: the options and the environment. */
struct les_plan_options {
	enum les_attach_mode mode;
	bool syscall_per_call; /* LES_SYSCALL_PER_CALL=1: the per-syscall tracepoints */
	bool kprobe_multi_off; /* LES_KPROBE_MULTI=0: single kprobes */
	const char *reqmsg_offset; /* LES_PTLRPC_REQMSG_OFFSET, or NULL */
};

/* The running kernel's facts, as every planner below needs them (read once); 0 or -ENOMEM. */
int les_probe_facts_gather(struct les_kfacts *f);

/* mode, and what the environment sets for tests (LES_KPROBE_MULTI, ...). */
void les_plan_options_init(struct les_plan_options *po, enum les_attach_mode mode);

/* The plan: reads nothing but f and po. */
void les_probe_plan_make(struct les_probe_plan *plan, const struct les_kfacts *f,
			 const struct les_plan_options *po);

/*
 * Whether a program of the skeleton belongs to the plan: by its name and
 * section. For syscall programs, also whether the tracepoint exists.
 */
bool les_probe_plan_wants(const struct les_probe_plan *plan, const char *prog_name,
			  const char *section);

/*
 * Warnings for the start: with --attach fentry|kprobe one line per
 * (filesystem, op) that stays uncovered; with verbose, one per missing
 * function too.
 */
void les_probe_plan_warn(const struct les_probe_plan *plan, FILE *out, int verbose);

struct les_refusals;

/*
 * --list-probes. refused: what a trial load of the plan's programs had
 * turned off, or NULL when no trial load was made (no privileges).
 */
void les_probe_plan_print(const struct les_probe_plan *plan, FILE *out, bool json,
			  const struct les_refusals *refused);

#endif /* LES_PROBES_H */
