// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The access plane's function table and the attach method of each row. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe/fnprobes.h"
#include "probe/kfacts.h"

/* The kernel's ENOTSUPP (not in the uapi errno list). */
#define ENOTSUPP_ERRNO 524

#define K_FILE	LES_FN_K(LES_FN_ARG_FILE)
#define K_KIOCB LES_FN_K(LES_FN_ARG_KIOCB)
#define K_INODE LES_FN_K(LES_FN_ARG_INODE)
#define K_DENT	LES_FN_K(LES_FN_ARG_DENTRY)
#define K_PATH	LES_FN_K(LES_FN_ARG_PATH)

#define F_LOOKUP LES_FN_F_LOOKUP
#define F_ATOMIC LES_FN_F_ATOMIC_OPEN
#define F_CTX	 LES_FN_F_CONTEXT

#define FOPS  "file_operations"
#define IOPS  "inode_operations"
#define SOPS  "super_operations"
#define XATTR "xattr_handler"

#define ROW(fam, o, fn, mod, ops, mem, kinds, fl)                       \
	{                                                               \
		LES_FS_##fam, LES_OP_##o, #fn, mod, ops, mem, kinds, fl \
	}

/*
 * The functions, each with the VFS method it implements: the method's
 * prototype in the running kernel's BTF says where the target argument is
 * when the function has no BTF of its own (Lustre). The target is the
 * first argument of an accepted kind: for directory operations the parent
 * directory's inode, for ->get_link the inode (its dentry is NULL in RCU
 * walk). Sources: Linux fs/fuse, fs/nfs (6.1 and 6.18), lustre-release
 * lustre/llite (namei.c, file.c, dir.c, llite_lib.c, xattr.c, symlink.c,
 * acl.c).
 */
static const struct les_fn_entry fn_table[] = {
	/* Lustre llite */
	ROW(LUSTRE, LOOKUP, ll_lookup_nd, "lustre", IOPS, "lookup", K_INODE, F_LOOKUP),
	ROW(LUSTRE, OPEN, ll_atomic_open, "lustre", IOPS, "atomic_open", K_INODE, F_ATOMIC),
	ROW(LUSTRE, OPEN, ll_file_open, "lustre", FOPS, "open", K_INODE, 0),
	ROW(LUSTRE, OPEN, ll_dir_open, "lustre", FOPS, "open", K_INODE, 0),
	ROW(LUSTRE, CLOSE, ll_file_release, "lustre", FOPS, "release", K_INODE, 0),
	ROW(LUSTRE, CLOSE, ll_dir_release, "lustre", FOPS, "release", K_INODE, 0),
	ROW(LUSTRE, READ, ll_file_read_iter, "lustre", FOPS, "read_iter", K_KIOCB, 0),
	ROW(LUSTRE, WRITE, ll_file_write_iter, "lustre", FOPS, "write_iter", K_KIOCB, 0),
	ROW(LUSTRE, FSYNC, ll_fsync, "lustre", FOPS, "fsync", K_FILE, 0),
	ROW(LUSTRE, GETATTR, ll_getattr, "lustre", IOPS, "getattr", K_PATH, 0),
	ROW(LUSTRE, SETATTR, ll_setattr, "lustre", IOPS, "setattr", K_DENT, 0),
	ROW(LUSTRE, GETXATTR, ll_xattr_get_common, "lustre", XATTR, "get", K_INODE, 0),
	ROW(LUSTRE, SETXATTR, ll_xattr_set_common, "lustre", XATTR, "set", K_INODE, 0),
	/* trusted. and lustre. names: these call the *_common ones above but for "lov" */
	ROW(LUSTRE, GETXATTR, ll_xattr_get, "lustre", XATTR, "get", K_INODE, 0),
	ROW(LUSTRE, SETXATTR, ll_xattr_set, "lustre", XATTR, "set", K_INODE, 0),
	ROW(LUSTRE, LISTXATTR, ll_listxattr, "lustre", IOPS, "listxattr", K_DENT, 0),
	ROW(LUSTRE, GET_ACL, ll_get_inode_acl, "lustre", IOPS, "get_inode_acl", K_INODE, 0),
	ROW(LUSTRE, GET_ACL, ll_get_acl, "lustre", IOPS, "get_acl", K_INODE | K_DENT, 0),
	ROW(LUSTRE, READLINK, ll_get_link, "lustre", IOPS, "get_link", K_INODE, 0),
	ROW(LUSTRE, READDIR, ll_iterate, "lustre", FOPS, "iterate_shared|iterate", K_FILE, 0),
	ROW(LUSTRE, STATFS, ll_statfs, "lustre", SOPS, "statfs", K_DENT, 0),
	ROW(LUSTRE, CREATE, ll_create_nd, "lustre", IOPS, "create", K_INODE, 0),
	ROW(LUSTRE, MKDIR, ll_mkdir, "lustre", IOPS, "mkdir", K_INODE, 0),
	ROW(LUSTRE, MKNOD, ll_mknod, "lustre", IOPS, "mknod", K_INODE, 0),
	ROW(LUSTRE, UNLINK, ll_unlink, "lustre", IOPS, "unlink", K_INODE, 0),
	ROW(LUSTRE, RMDIR, ll_rmdir, "lustre", IOPS, "rmdir", K_INODE, 0),
	ROW(LUSTRE, RENAME, ll_rename, "lustre", IOPS, "rename", K_INODE, 0),
	ROW(LUSTRE, LINK, ll_link, "lustre", IOPS, "link", K_INODE, 0),
	ROW(LUSTRE, SYMLINK, ll_symlink, "lustre", IOPS, "symlink", K_INODE, 0),
	/*
	 * Not an op: the path walk's permission checks, where Lustre may
	 * revalidate an inode with an RPC (the root's, ll_inode_revalidate)
	 * that no op of the user's encloses. The requests get the mount.
	 */
	ROW(LUSTRE, LOOKUP, ll_inode_permission, "lustre", IOPS, "permission", K_INODE, F_CTX),

	/* NFS (nfs, nfsv3 and nfsv4 modules) */
	ROW(NFS, LOOKUP, nfs_lookup, "nfs", IOPS, "lookup", K_INODE, F_LOOKUP),
	ROW(NFS, OPEN, nfs_atomic_open, "nfs", IOPS, "atomic_open", K_INODE, F_ATOMIC),
	/* 6.12: NFSv2/v3 directories got their own ->atomic_open for O_CREAT */
	ROW(NFS, OPEN, nfs_atomic_open_v23, "nfs", IOPS, "atomic_open", K_INODE, F_ATOMIC),
	ROW(NFS, OPEN, nfs_file_open, "nfs", FOPS, "open", K_INODE, 0),
	ROW(NFS, OPEN, nfs4_file_open, "nfsv4", FOPS, "open", K_INODE, 0),
	ROW(NFS, OPEN, nfs_opendir, "nfs", FOPS, "open", K_INODE, 0),
	ROW(NFS, CLOSE, nfs_file_release, "nfs", FOPS, "release", K_INODE, 0),
	ROW(NFS, CLOSE, nfs_closedir, "nfs", FOPS, "release", K_INODE, 0),
	ROW(NFS, READ, nfs_file_read, "nfs", FOPS, "read_iter", K_KIOCB, 0),
	ROW(NFS, WRITE, nfs_file_write, "nfs", FOPS, "write_iter", K_KIOCB, 0),
	ROW(NFS, FSYNC, nfs_file_fsync, "nfs", FOPS, "fsync", K_FILE, 0),
	ROW(NFS, FSYNC, nfs_fsync_dir, "nfs", FOPS, "fsync", K_FILE, 0),
	ROW(NFS, GETATTR, nfs_getattr, "nfs", IOPS, "getattr", K_PATH, 0),
	ROW(NFS, SETATTR, nfs_setattr, "nfs", IOPS, "setattr", K_DENT, 0),
	ROW(NFS, READDIR, nfs_readdir, "nfs", FOPS, "iterate_shared|iterate", K_FILE, 0),
	ROW(NFS, READLINK, nfs_get_link, "nfs", IOPS, "get_link", K_INODE, 0),
	ROW(NFS, STATFS, nfs_statfs, "nfs", SOPS, "statfs", K_DENT, 0),
	ROW(NFS, CREATE, nfs_create, "nfs", IOPS, "create", K_INODE, 0),
	ROW(NFS, MKDIR, nfs_mkdir, "nfs", IOPS, "mkdir", K_INODE, 0),
	ROW(NFS, MKNOD, nfs_mknod, "nfs", IOPS, "mknod", K_INODE, 0),
	ROW(NFS, UNLINK, nfs_unlink, "nfs", IOPS, "unlink", K_INODE, 0),
	ROW(NFS, RMDIR, nfs_rmdir, "nfs", IOPS, "rmdir", K_INODE, 0),
	ROW(NFS, RENAME, nfs_rename, "nfs", IOPS, "rename", K_INODE, 0),
	ROW(NFS, LINK, nfs_link, "nfs", IOPS, "link", K_INODE, 0),
	ROW(NFS, SYMLINK, nfs_symlink, "nfs", IOPS, "symlink", K_INODE, 0),
	ROW(NFS, LISTXATTR, nfs3_listxattr, "nfsv3", IOPS, "listxattr", K_DENT, 0),
	ROW(NFS, LISTXATTR, nfs4_listxattr, "nfsv4", IOPS, "listxattr", K_DENT, 0),
	ROW(NFS, GETXATTR, nfs4_xattr_get_nfs4_user, "nfsv4", XATTR, "get", K_INODE, 0),
	ROW(NFS, SETXATTR, nfs4_xattr_set_nfs4_user, "nfsv4", XATTR, "set", K_INODE, 0),
	ROW(NFS, GET_ACL, nfs3_get_acl, "nfsv3", IOPS, "get_inode_acl|get_acl", K_INODE | K_DENT,
	    0),
	ROW(NFS, GET_ACL, nfs4_xattr_get_nfs4_acl, "nfsv4", XATTR, "get", K_INODE, 0),
	ROW(NFS, SETXATTR, nfs3_set_acl, "nfsv3", IOPS, "set_acl", K_INODE | K_DENT, 0),
	ROW(NFS, SETXATTR, nfs4_xattr_set_nfs4_acl, "nfsv4", XATTR, "set", K_INODE, 0),

	/* FUSE */
	ROW(FUSE, LOOKUP, fuse_lookup, "fuse", IOPS, "lookup", K_INODE, F_LOOKUP),
	ROW(FUSE, OPEN, fuse_atomic_open, "fuse", IOPS, "atomic_open", K_INODE, F_ATOMIC),
	ROW(FUSE, OPEN, fuse_open, "fuse", FOPS, "open", K_INODE, 0),
	ROW(FUSE, OPEN, fuse_dir_open, "fuse", FOPS, "open", K_INODE, 0),
	ROW(FUSE, CLOSE, fuse_release, "fuse", FOPS, "release", K_INODE, 0),
	ROW(FUSE, CLOSE, fuse_dir_release, "fuse", FOPS, "release", K_INODE, 0),
	ROW(FUSE, READ, fuse_file_read_iter, "fuse", FOPS, "read_iter", K_KIOCB, 0),
	ROW(FUSE, WRITE, fuse_file_write_iter, "fuse", FOPS, "write_iter", K_KIOCB, 0),
	ROW(FUSE, FSYNC, fuse_fsync, "fuse", FOPS, "fsync", K_FILE, 0),
	ROW(FUSE, FSYNC, fuse_dir_fsync, "fuse", FOPS, "fsync", K_FILE, 0),
	ROW(FUSE, GETATTR, fuse_getattr, "fuse", IOPS, "getattr", K_PATH, 0),
	ROW(FUSE, SETATTR, fuse_setattr, "fuse", IOPS, "setattr", K_DENT, 0),
	ROW(FUSE, READDIR, fuse_readdir, "fuse", FOPS, "iterate_shared|iterate", K_FILE, 0),
	ROW(FUSE, READLINK, fuse_get_link, "fuse", IOPS, "get_link", K_INODE, 0),
	ROW(FUSE, STATFS, fuse_statfs, "fuse", SOPS, "statfs", K_DENT, 0),
	ROW(FUSE, CREATE, fuse_create, "fuse", IOPS, "create", K_INODE, 0),
	ROW(FUSE, MKDIR, fuse_mkdir, "fuse", IOPS, "mkdir", K_INODE, 0),
	ROW(FUSE, MKNOD, fuse_mknod, "fuse", IOPS, "mknod", K_INODE, 0),
	ROW(FUSE, UNLINK, fuse_unlink, "fuse", IOPS, "unlink", K_INODE, 0),
	ROW(FUSE, RMDIR, fuse_rmdir, "fuse", IOPS, "rmdir", K_INODE, 0),
	ROW(FUSE, RENAME, fuse_rename2, "fuse", IOPS, "rename", K_INODE, 0),
	ROW(FUSE, LINK, fuse_link, "fuse", IOPS, "link", K_INODE, 0),
	ROW(FUSE, SYMLINK, fuse_symlink, "fuse", IOPS, "symlink", K_INODE, 0),
	ROW(FUSE, LISTXATTR, fuse_listxattr, "fuse", IOPS, "listxattr", K_DENT, 0),
	ROW(FUSE, GETXATTR, fuse_xattr_get, "fuse", XATTR, "get", K_INODE, 0),
	ROW(FUSE, SETXATTR, fuse_xattr_set, "fuse", XATTR, "set", K_INODE, 0),
	ROW(FUSE, GET_ACL, fuse_get_acl, "fuse", IOPS, "get_acl", K_INODE | K_DENT, 0),
	ROW(FUSE, GET_ACL, fuse_get_inode_acl, "fuse", IOPS, "get_inode_acl", K_INODE, 0),
	ROW(FUSE, SETXATTR, fuse_set_acl, "fuse", IOPS, "set_acl", K_INODE | K_DENT, 0),
};

_Static_assert(sizeof(fn_table) / sizeof(fn_table[0]) <= LES_FN_TABLE_MAX,
	       "LES_FN_TABLE_MAX too small for the table");

const struct les_fn_entry *les_fn_table(size_t *n)
{
	*n = sizeof(fn_table) / sizeof(fn_table[0]);
	return fn_table;
}

const char *les_fn_kind_name(unsigned int kind)
{
	static const char *const names[LES_FN_ARG_KIND_MAX] = {
		[LES_FN_ARG_FILE] = "struct file *",	   [LES_FN_ARG_KIOCB] = "struct kiocb *",
		[LES_FN_ARG_INODE] = "struct inode *",	   [LES_FN_ARG_DENTRY] = "struct dentry *",
		[LES_FN_ARG_PATH] = "const struct path *",
	};
	return kind < LES_FN_ARG_KIND_MAX ? names[kind] : "unknown";
}

const char *les_fn_ret_name(unsigned int ret)
{
	static const char *const names[LES_FN_RET_MAX] = {
		[LES_FN_RET_INT] = "int",     [LES_FN_RET_LONG] = "long",
		[LES_FN_RET_BYTES] = "bytes", [LES_FN_RET_PTR] = "pointer",
		[LES_FN_RET_VOID] = "void",
	};
	return ret < LES_FN_RET_MAX ? names[ret] : "unknown";
}

/* Why a row is not probed; a long reason is cut, never overflows. */
__attribute__((format(printf, 2, 3))) static void set_reason(struct les_fn_probe *pr,
							     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pr->reason, sizeof(pr->reason), fmt, ap);
	va_end(ap);
}

/* --- the prototype: the function's own BTF, or its VFS method's ----------- */

/* Fill the probe's descriptor from a prototype; false if it does not fit the row. */
static bool desc_from_proto(struct les_fn_probe *pr, const struct les_kf_proto *proto)
{
	const struct les_fn_entry *e = pr->e;
	int target = -1, dentry = -1, file = -1;
	unsigned int n = proto->nargs;

	for (unsigned int i = 0; i < n && i < LES_KF_ARGS_MAX; i++) {
		unsigned int k = proto->arg[i];

		if (k >= LES_FN_ARG_KIND_MAX)
			continue;
		if (target < 0 && (e->kinds & LES_FN_K(k))) {
			target = (int)i;
			pr->desc.kind = (__u8)k;
		}
		if (k == LES_FN_ARG_DENTRY && dentry < 0)
			dentry = (int)i;
		if (k == LES_FN_ARG_FILE && file < 0)
			file = (int)i;
	}
	/* kprobes read arguments from the first five registers. */
	if (target < 0 || target > 4)
		return false;
	pr->desc.op = (__u8)e->op;
	pr->desc.arg = (__u8)target;
	pr->desc.nargs = (__u8)n;
	pr->desc.flags = (__u8)e->flags;
	/* Only PtlRPC asks who caused a file's pages (file_cause): other filesystems pay nothing. */
	if (e->family == LES_FS_LUSTRE && (e->op == LES_OP_READ || e->op == LES_OP_WRITE))
		pr->desc.flags |= LES_FN_F_CAUSE;
	pr->desc.ret = proto->ret;
	if ((e->op == LES_OP_READ || e->op == LES_OP_WRITE) && pr->desc.ret == LES_FN_RET_LONG)
		pr->desc.ret = LES_FN_RET_BYTES;
	if (e->flags & LES_FN_F_LOOKUP) {
		if (dentry < 0 || dentry > 4)
			return false;
		pr->desc.aux_arg = (__u8)dentry;
	}
	if (e->flags & LES_FN_F_ATOMIC_OPEN) {
		/* ->atomic_open(dir, dentry, file, open_flag, mode) */
		if (file < 0 || (unsigned int)file + 1 >= n || file + 1 > 4)
			return false;
		pr->desc.aux_arg = (__u8)file;
		pr->desc.flags_arg = (__u8)(file + 1);
	}
	return true;
}

/* The first member of "a|b" of the row's ops struct that vmlinux BTF declares. */
static const struct les_kf_proto *member_proto(const struct les_kfacts *f,
					       const struct les_fn_entry *e)
{
	const char *p = e->members;

	while (*p) {
		size_t len = strcspn(p, "|");
		char name[LES_KF_NAME_LEN];
		const struct les_kf_proto *proto;

		snprintf(name, sizeof(name), "%s.%.*s", e->ops_struct, (int)len, p);
		proto = les_kfacts_proto(f, name, "vmlinux");
		if (proto)
			return proto;
		p += len + (p[len] == '|');
	}
	return NULL;
}

/*
 * Trampolines of some kernels take at most six arguments (x86 before 6.6):
 * a function with more was tried with a do-nothing fexit program.
 */
static const char *fexit_refusal(const struct les_kf_proto *proto)
{
	if (proto->nargs <= 6 || !proto->fexit_errno)
		return NULL;
	if (proto->fexit_errno == LES_KF_NO_BTF_OBJECT)
		return "no BTF object for its module";
	if (proto->fexit_errno == ENOTSUPP_ERRNO)
		return "the kernel's trampolines take fewer arguments than it has (ENOTSUPP)";
	return "a trial fexit program was refused";
}

static void find_proto(struct les_fn_probe *pr, const struct les_kfacts *f)
{
	const struct les_kf_proto *proto =
		pr->in_kallsyms ? les_kfacts_proto(f, pr->e->func, pr->where) : NULL;

	if (proto) {
		pr->has_btf = true;
		pr->has_proto = desc_from_proto(pr, proto);
		pr->fentry_refused = fexit_refusal(proto);
		snprintf(pr->proto_from, sizeof(pr->proto_from), "BTF %s", pr->where);
		return;
	}
	proto = member_proto(f, pr->e);
	if (!proto)
		return;
	pr->has_proto = desc_from_proto(pr, proto);
	snprintf(pr->proto_from, sizeof(pr->proto_from), "vmlinux %s", proto->name);
}

/* --- what the kernel permits ---------------------------------------------- */

static void plan_fentry(struct les_fn_plan *p, const struct les_kfacts *f)
{
	char e[16];

	if (p->mode == LES_ATTACH_MODE_SYSCALL || p->mode == LES_ATTACH_MODE_KPROBE) {
		snprintf(p->fentry_reason, sizeof(p->fentry_reason), "not tried (--attach)");
		return;
	}
	switch (f->fentry) {
	case LES_KF_OK:
		p->fentry_ok = true;
		break;
	case LES_KF_LOAD_REFUSED:
		snprintf(p->fentry_reason, sizeof(p->fentry_reason),
			 "fentry not permitted on this kernel (%s)",
			 f->fentry_errno == EPERM ? "EPERM" : strerror(f->fentry_errno));
		break;
	case LES_KF_ATTACH_REFUSED:
		snprintf(p->fentry_reason, sizeof(p->fentry_reason),
			 "fentry cannot attach on this kernel (%s)", strerror(f->fentry_errno));
		break;
	case LES_KF_NO_BTF:
		snprintf(p->fentry_reason, sizeof(p->fentry_reason), "no kernel BTF for fentry");
		break;
	default:
		snprintf(p->fentry_reason, sizeof(p->fentry_reason), "fentry not tried (%s)",
			 les_kf_errno_name(f->fentry_errno, e, sizeof(e)));
	}
}

static void plan_kprobes(struct les_fn_plan *p, const struct les_kfacts *f)
{
	if (p->mode == LES_ATTACH_MODE_SYSCALL || p->mode == LES_ATTACH_MODE_FENTRY) {
		snprintf(p->kprobe_reason, sizeof(p->kprobe_reason), "not tried (--attach)");
		return;
	}
	p->kprobe_ok = f->kprobes;
	if (!p->kprobe_ok)
		snprintf(p->kprobe_reason, sizeof(p->kprobe_reason),
			 "kprobes not configured (no kprobe PMU or kprobe_events)");
}

/*
 * kprobe_multi (fprobe) links, when a function is to be probed by kprobe:
 * what the trial link told, unless turned off (LES_KPROBE_MULTI=0, to
 * compare with single kprobes).
 */
static void plan_kprobe_link(struct les_fn_plan *p, const struct les_kfacts *f, bool multi_off)
{
	bool any = false;

	for (size_t i = 0; i < p->n && !any; i++)
		any = p->probe[i].method == LES_ATTACH_KPROBE;
	if (!any)
		snprintf(p->multi_reason, sizeof(p->multi_reason), "no function uses kprobes");
	else if (multi_off)
		snprintf(p->multi_reason, sizeof(p->multi_reason), "off (LES_KPROBE_MULTI=0)");
	else if (f->kprobe_multi == LES_KF_OK)
		p->kprobe_multi = true;
	else if (f->kprobe_multi == LES_KF_LOAD_REFUSED)
		snprintf(p->multi_reason, sizeof(p->multi_reason),
			 "kprobe_multi programs not supported (%s)",
			 strerror(f->kprobe_multi_errno));
	else if (f->kprobe_multi == LES_KF_ATTACH_REFUSED)
		snprintf(p->multi_reason, sizeof(p->multi_reason),
			 "kprobe_multi links not supported (%s)", strerror(f->kprobe_multi_errno));
	else
		snprintf(p->multi_reason, sizeof(p->multi_reason),
			 "kprobe_multi not tried (no function address)");
	p->kprobe_multi_cast = p->kprobe_multi && f->rdonly_cast;
}

/* --- the choice ----------------------------------------------------------- */

static const char *fentry_block(const struct les_fn_plan *p, const struct les_kfacts *f,
				const struct les_fn_probe *pr, char *buf, size_t len)
{
	if (!p->fentry_ok)
		return p->fentry_reason;
	if (!pr->has_btf) {
		if (!les_kfacts_module_btf(f, pr->where))
			snprintf(buf, len, "no BTF for module %s", pr->where);
		else
			snprintf(buf, len, "not in the BTF of %s", pr->where);
		return buf;
	}
	if (!pr->has_proto)
		return "BTF prototype has no argument of the expected kind";
	if (pr->fentry_refused)
		return pr->fentry_refused;
	return NULL;
}

static const char *kprobe_block(const struct les_fn_plan *p, const struct les_fn_probe *pr,
				char *buf, size_t len)
{
	if (!p->kprobe_ok)
		return p->kprobe_reason;
	if (pr->blacklisted)
		return "blacklisted for kprobes";
	if (!pr->has_proto) {
		snprintf(buf, len, "no prototype: no BTF for it and none for %s.%s",
			 pr->e->ops_struct, pr->e->members);
		return buf;
	}
	return NULL;
}

/* Why a row kallsyms does not name exactly is not probed. */
static void explain_absent(struct les_fn_probe *pr, const struct les_kfacts *f)
{
	const struct les_kf_sym *clone = les_kfacts_clone(f, pr->e->func);

	if (clone)
		set_reason(pr, "only the compiler's clone %s in kallsyms: its arguments may differ",
			 clone->name);
	else if (strcmp(pr->e->module, "vmlinux") != 0 &&
		 !les_kfacts_module_loaded(f, pr->e->module))
		set_reason(pr, "module %s not loaded", pr->e->module);
	else
		set_reason(pr, "not in kallsyms: inlined or absent in this kernel");
}

static void choose(struct les_fn_plan *p, const struct les_kfacts *f, struct les_fn_probe *pr)
{
	char fbuf[LES_FN_REASON_MAX], kbuf[LES_FN_REASON_MAX];
	const char *fe, *kp;

	if (p->mode == LES_ATTACH_MODE_SYSCALL) {
		set_reason(pr, "--attach syscall: function probes off");
		return;
	}
	if (!pr->in_kallsyms) {
		explain_absent(pr, f);
		return;
	}
	fe = fentry_block(p, f, pr, fbuf, sizeof(fbuf));
	kp = kprobe_block(p, pr, kbuf, sizeof(kbuf));
	switch (p->mode) {
	case LES_ATTACH_MODE_FENTRY:
		if (!fe)
			pr->method = LES_ATTACH_FENTRY;
		else
			set_reason(pr, "--attach fentry: %s", fe);
		return;
	case LES_ATTACH_MODE_KPROBE:
		if (!kp)
			pr->method = LES_ATTACH_KPROBE;
		else
			set_reason(pr, "--attach kprobe: %s", kp);
		return;
	default:
		break;
	}
	if (!fe)
		pr->method = LES_ATTACH_FENTRY;
	else if (!kp)
		pr->method = LES_ATTACH_KPROBE;
	else
		set_reason(pr, "fentry: %s; kprobe: %s", fe, kp);
}

static void assign_slots(struct les_fn_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct les_fn_probe *pr = &p->probe[i];

		if (pr->method == LES_ATTACH_NONE)
			continue;
		if (p->n_slots == LES_FN_SLOTS) {
			pr->method = LES_ATTACH_NONE;
			set_reason(pr, "no free program slot (LES_FN_SLOTS)");
			continue;
		}
		pr->slot = (int)p->n_slots++;
	}
}

/*
 * An op of a family is covered when every function of it that this kernel
 * has is probed (and at least one is): then the syscall fallback can leave
 * that op out on that family's mounts without losing any.
 */
static void compute_coverage(struct les_fn_plan *p)
{
	unsigned int present[LES_FS_FAMILY_MAX] = { 0 }, probed[LES_FS_FAMILY_MAX] = { 0 };
	unsigned int missing[LES_FS_FAMILY_MAX] = { 0 };

	for (size_t i = 0; i < p->n; i++) {
		const struct les_fn_probe *pr = &p->probe[i];
		unsigned int bit = 1u << pr->e->op;

		if (!pr->in_kallsyms || (pr->e->flags & LES_FN_F_CONTEXT))
			continue;
		present[pr->e->family] |= bit;
		if (pr->method != LES_ATTACH_NONE)
			probed[pr->e->family] |= bit;
		else
			missing[pr->e->family] |= bit;
	}
	for (int f = 0; f < LES_FS_FAMILY_MAX; f++)
		p->covered[f] = present[f] & probed[f] & ~missing[f];
}

/* Where the row's function is: kallsyms' module, address, blacklist. */
static void locate(struct les_fn_probe *pr, const struct les_kfacts *f)
{
	const struct les_kf_sym *s = les_kfacts_sym(f, pr->e->func);

	if (!s)
		return;
	pr->in_kallsyms = true;
	pr->addr = s->addr;
	pr->blacklisted = s->blacklisted;
	snprintf(pr->where, sizeof(pr->where), "%s", s->module);
}

void les_fn_plan_wants(struct les_kf_wants *w)
{
	for (size_t i = 0; i < sizeof(fn_table) / sizeof(fn_table[0]); i++) {
		les_kf_want_func(w, fn_table[i].func);
		les_kf_want_module(w, fn_table[i].module);
		les_kf_want_member(w, fn_table[i].ops_struct, fn_table[i].members);
	}
}

void les_fn_plan_make(struct les_fn_plan *p, const struct les_kfacts *f,
		      enum les_attach_mode mode, bool kprobe_multi_off)
{
	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->n = sizeof(fn_table) / sizeof(fn_table[0]);
	plan_fentry(p, f);
	plan_kprobes(p, f);
	for (size_t i = 0; i < p->n; i++) {
		struct les_fn_probe *pr = &p->probe[i];

		pr->e = &fn_table[i];
		pr->slot = -1;
		locate(pr, f);
		find_proto(pr, f);
		if (!p->fentry_ok)
			pr->fentry_refused = NULL; /* only asked when fentry is permitted */
		choose(p, f, pr);
	}
	assign_slots(p);
	compute_coverage(p);
	plan_kprobe_link(p, f, kprobe_multi_off);
}

const struct les_fn_probe *les_fn_plan_slot(const struct les_fn_plan *p, int slot)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->probe[i].slot == slot && slot >= 0)
			return &p->probe[i];
	return NULL;
}

unsigned int les_fn_plan_covered(const struct les_fn_plan *p, enum les_fs_family family)
{
	return (unsigned)family < LES_FS_FAMILY_MAX ? p->covered[family] : 0;
}

static bool parse_slot(const char *s, int *slot)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v >= LES_FN_SLOTS)
		return false;
	*slot = (int)v;
	return true;
}

bool les_fn_prog_parse(const char *name, int *slot, enum les_attach_method *method, bool *multi)
{
	static const struct {
		const char *prefix;
		enum les_attach_method method;
	} kinds[] = {
		{"fn_fentry_", LES_ATTACH_FENTRY},
		{"fn_fexit_", LES_ATTACH_FENTRY},
		{"fn_kprobe_", LES_ATTACH_KPROBE},
		{"fn_kretprobe_", LES_ATTACH_KPROBE},
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t len = strlen(kinds[i].prefix);

		if (strncmp(name, kinds[i].prefix, len) != 0)
			continue;
		*method = kinds[i].method;
		*multi = strcmp(name + len, "multi") == 0 || strcmp(name + len, "multi_cast") == 0;
		*slot = -1;
		return *multi || parse_slot(name + len, slot);
	}
	return false;
}
