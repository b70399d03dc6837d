/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Choosing how each probe reaches the kernel, by probing the running kernel
 * (BTF, tracefs) rather than by version numbers.
 */
#ifndef LES_PROBES_H
#define LES_PROBES_H

#include <stdbool.h>
#include <stdio.h>
#include "fnprobes.h"
#include "les_record.h"
#include "options.h"
#include "rpcprobes.h"

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
	bool syscall; /* the syscall fallback (raw sys_enter/sys_exit) */
	bool syscall_task_btf; /* its programs' flavour: sys_enter, or sys_enter_nobtf (5.10) */
	const char *syscall_reason; /* why not, when not */
	struct les_fn_plan fn; /* function probes, per table row */
	struct les_rpc_plan rpc; /* PtlRPC, LDLM and sunrpc probes */
	bool proc_notices; /* exec/fork notices for enrichment */
	const char *access_reason;
};

/* Mount tracefs if it is not mounted: tracepoint attach needs it. */
int les_ensure_tracefs(void);
/* Where tracefs is mounted, or NULL. */
const char *les_tracefs_root(void);
bool les_tracepoint_exists(const char *category, const char *event);
/* A BTF type in vmlinux or any loaded module's BTF. */
bool les_kernel_btf_has(const char *name, int kind);

void les_probe_plan_make(struct les_probe_plan *plan, enum les_attach_mode mode);

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
