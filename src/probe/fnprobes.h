/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Function probes of the access plane: the table of Lustre llite, NFS and
 * FUSE file and inode operations, and for each one the attach method the
 * running kernel offers (fentry/fexit, kprobe/kretprobe, or none and why),
 * chosen from the kernel's facts (kfacts.h: kallsyms, BTF and the kernel's
 * answers), never by version; the choice reads nothing else.
 *
 * The argument a probe reads is found from a prototype, not hard-coded:
 * the function's own BTF (vmlinux or module) when it has one, otherwise the
 * VFS method it implements, as the running kernel's BTF declares it
 * (struct inode_operations.mkdir, ...). So the idmapped-mount argument
 * added to many inode methods (5.12, 6.3), ->mkdir returning a dentry
 * (6.15) and ->get_acl taking a dentry (6.2) are followed on any kernel,
 * including for Lustre modules built without BTF.
 */
#ifndef LES_FNPROBES_H
#define LES_FNPROBES_H

#include <stdbool.h>
#include <stddef.h>
#include "probe/kfacts.h"
#include "les_record.h"
#include "model/mounts.h"
#include "probe/attach.h"

#define LES_FN_TABLE_MAX  128
#define LES_FN_REASON_MAX 160

/* Target kinds as a mask of (1 << enum les_fn_arg_kind). */
#define LES_FN_K(kind) (1u << (kind))

/* One row of the table: a kernel function and the op it performs. */
struct les_fn_entry {
	enum les_fs_family family;
	enum les_access_op op;
	const char *func;
	const char *module;	/* where it lives when not built in */
	const char *ops_struct; /* the VFS operations struct it fills in */
	const char *members;	/* the member(s) it implements, '|'-separated */
	unsigned int kinds;	/* acceptable target kinds: the first such argument */
	unsigned int flags;	/* LES_FN_F_* */
};

/* What the running kernel offers for one row. */
struct les_fn_probe {
	const struct les_fn_entry *e;
	enum les_attach_method method; /* LES_ATTACH_NONE, _FENTRY or _KPROBE */
	int slot;		       /* program slot, -1 when none */
	bool in_kallsyms;
	bool has_btf;	/* the function itself, in vmlinux or module BTF */
	bool has_proto; /* desc below is valid */
	bool blacklisted;
	unsigned long long addr;
	const char *fentry_refused;	/* this function refused a trial fexit */
	char where[32];			/* "vmlinux" or the module kallsyms names */
	char proto_from[96];		/* "BTF nfs", "vmlinux inode_operations.mkdir" */
	char reason[LES_FN_REASON_MAX]; /* why none; empty when attached */
	struct les_fn_desc desc;
};

struct les_fn_plan {
	enum les_attach_mode mode;
	struct les_fn_probe probe[LES_FN_TABLE_MAX];
	size_t n;
	size_t n_slots;
	bool fentry_ok;
	bool kprobe_ok;
	bool kprobe_multi; /* kprobe slots attach through one kprobe_multi link pair */
	/* ... whose entry is fn_kprobe_multi_cast: the kernel has bpf_rdonly_cast (6.2) */
	bool kprobe_multi_cast;
	char fentry_reason[LES_FN_REASON_MAX];
	char kprobe_reason[LES_FN_REASON_MAX];
	char multi_reason[LES_FN_REASON_MAX];
	/* Per family: ops (1 << op) that function probes report completely. */
	unsigned int covered[LES_FS_FAMILY_MAX];
};

const struct les_fn_entry *les_fn_table(size_t *n);

/* What the table needs to know of the kernel: its functions, modules, VFS methods. */
void les_fn_plan_wants(struct les_kf_wants *w);

/*
 * Choose a method per table row from the kernel's facts, purely.
 * kprobe_multi_off: single kprobes even where kprobe_multi links work.
 */
void les_fn_plan_make(struct les_fn_plan *p, const struct les_kfacts *f,
		      enum les_attach_mode mode, bool kprobe_multi_off);

/* The probe planned for slot, or NULL. */
const struct les_fn_probe *les_fn_plan_slot(const struct les_fn_plan *p, int slot);

/* Ops of family covered by function probes, as a bitmap of (1 << op). */
unsigned int les_fn_plan_covered(const struct les_fn_plan *p, enum les_fs_family family);

/*
 * Program names of the function probes: "fn_fentry_<slot>", ... The slot
 * and the method a program name stands for; false when it is not one.
 */
bool les_fn_prog_parse(const char *prog_name, int *slot, enum les_attach_method *method,
		       bool *multi);

const char *les_fn_kind_name(unsigned int kind);
const char *les_fn_ret_name(unsigned int ret);

#endif /* LES_FNPROBES_H */
