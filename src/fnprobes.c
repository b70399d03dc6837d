// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The access plane's function table and the attach method of each row. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "fnprobes.h"

#define KALLSYMS "/proc/kallsyms"
/* The kernel's ENOTSUPP (not in the uapi errno list). */
#define ENOTSUPP_ERRNO 524
#define BLACKLIST      "/sys/kernel/debug/kprobes/blacklist"

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

__attribute__((format(printf, 2, 3))) static void set_reason(struct les_fn_probe *pr,
							     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pr->reason, sizeof(pr->reason), fmt, ap);
	va_end(ap);
}

/* --- kallsyms and the kprobe blacklist ----------------------------------- */

static int cmp_probe_name(const void *key, const void *elem)
{
	const struct les_fn_probe *const *pr = elem;

	return strcmp(key, (*pr)->e->func);
}

static int cmp_probe_ptr(const void *a, const void *b)
{
	const struct les_fn_probe *const *pa = a, *const *pb = b;

	return strcmp((*pa)->e->func, (*pb)->e->func);
}

/* Text symbols only; the first one of a name wins, as for kprobes by name. */
static void scan_kallsyms(struct les_fn_plan *p, struct les_fn_probe **sorted)
{
	FILE *f = fopen(KALLSYMS, "re");
	char line[512];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char type, name[256], mod[64] = "";
		unsigned long long addr;
		struct les_fn_probe **hit;

		if (sscanf(line, "%llx %c %255s [%63[^]]]", &addr, &type, name, mod) < 3)
			continue;
		if (type != 't' && type != 'T')
			continue;
		hit = bsearch(name, sorted, p->n, sizeof(*sorted), cmp_probe_name);
		if (!hit || (*hit)->in_kallsyms)
			continue;
		(*hit)->in_kallsyms = true;
		(*hit)->addr = addr;
		snprintf((*hit)->where, sizeof((*hit)->where), "%s", mod[0] ? mod : "vmlinux");
	}
	fclose(f);
}

static void scan_blacklist(struct les_fn_plan *p, struct les_fn_probe **sorted)
{
	FILE *f = fopen(BLACKLIST, "re");
	char line[512];

	if (!f)
		return; /* debugfs not mounted: the attach itself will tell */
	while (fgets(line, sizeof(line), f)) {
		char name[256];
		struct les_fn_probe **hit;

		if (sscanf(line, "%*s %255s", name) != 1)
			continue;
		hit = bsearch(name, sorted, p->n, sizeof(*sorted), cmp_probe_name);
		if (hit)
			(*hit)->blacklisted = true;
	}
	fclose(f);
}

/* --- BTF: the function's own prototype, or its VFS method's ---------------- */

#define MAX_MODULE_BTF 8

struct btf_set {
	struct btf *vmlinux;
	struct {
		char name[32];
		struct btf *btf; /* NULL: the module has no BTF */
	} mod[MAX_MODULE_BTF];
	size_t n_mod;
};

static struct btf *btf_for(struct btf_set *s, const char *where)
{
	char path[96];

	if (strcmp(where, "vmlinux") == 0)
		return s->vmlinux;
	for (size_t i = 0; i < s->n_mod; i++)
		if (strcmp(s->mod[i].name, where) == 0)
			return s->mod[i].btf;
	if (s->n_mod == MAX_MODULE_BTF || !s->vmlinux)
		return NULL;
	snprintf(s->mod[s->n_mod].name, sizeof(s->mod[0].name), "%s", where);
	snprintf(path, sizeof(path), "/sys/kernel/btf/%s", where);
	s->mod[s->n_mod].btf =
		access(path, R_OK) == 0 ? btf__load_module_btf(where, s->vmlinux) : NULL;
	return s->mod[s->n_mod++].btf;
}

static void btf_set_free(struct btf_set *s)
{
	for (size_t i = 0; i < s->n_mod; i++)
		btf__free(s->mod[i].btf);
	btf__free(s->vmlinux);
	memset(s, 0, sizeof(*s));
}

static const struct btf_type *skip_mods(const struct btf *btf, __u32 id, __u32 *out_id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (t && (btf_is_mod(t) || btf_is_typedef(t))) {
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	if (out_id)
		*out_id = id;
	return t;
}

/* enum les_fn_arg_kind of a parameter type, or -1. */
static int param_kind(const struct btf *btf, __u32 type_id)
{
	static const char *const structs[LES_FN_ARG_KIND_MAX] = {
		[LES_FN_ARG_FILE] = "file",   [LES_FN_ARG_KIOCB] = "kiocb",
		[LES_FN_ARG_INODE] = "inode", [LES_FN_ARG_DENTRY] = "dentry",
		[LES_FN_ARG_PATH] = "path",
	};
	const struct btf_type *t = skip_mods(btf, type_id, NULL);
	const char *name;

	if (!t || !btf_is_ptr(t))
		return -1;
	t = skip_mods(btf, t->type, NULL);
	if (!t || !btf_is_struct(t))
		return -1;
	name = btf__name_by_offset(btf, t->name_off);
	for (int k = 0; k < LES_FN_ARG_KIND_MAX; k++)
		if (name && strcmp(name, structs[k]) == 0)
			return k;
	return -1;
}

static int ret_kind(const struct btf *btf, __u32 type_id)
{
	const struct btf_type *t;

	if (type_id == 0)
		return LES_FN_RET_VOID;
	t = skip_mods(btf, type_id, NULL);
	if (t && btf_is_ptr(t))
		return LES_FN_RET_PTR;
	if (t && (btf_is_int(t) || btf_is_enum(t)) && t->size == 8)
		return LES_FN_RET_LONG;
	return LES_FN_RET_INT;
}

/* Fill the probe's descriptor from a FUNC_PROTO; false if it does not fit the row. */
static bool desc_from_proto(struct les_fn_probe *pr, const struct btf *btf, __u32 proto_id)
{
	const struct btf_type *t = btf__type_by_id(btf, proto_id);
	const struct les_fn_entry *e = pr->e;
	const struct btf_param *params;
	int target = -1, dentry = -1, file = -1;
	__u16 n;

	if (!t || !btf_is_func_proto(t))
		return false;
	n = btf_vlen(t);
	params = btf_params(t);
	for (int i = 0; i < n; i++) {
		int k = param_kind(btf, params[i].type);

		if (k < 0)
			continue;
		if (target < 0 && (e->kinds & LES_FN_K(k))) {
			target = i;
			pr->desc.kind = (__u8)k;
		}
		if (k == LES_FN_ARG_DENTRY && dentry < 0)
			dentry = i;
		if (k == LES_FN_ARG_FILE && file < 0)
			file = i;
	}
	/* kprobes read arguments from the first five registers. */
	if (target < 0 || target > 4)
		return false;
	pr->desc.op = (__u8)e->op;
	pr->desc.arg = (__u8)target;
	pr->desc.nargs = (__u8)n;
	pr->desc.flags = (__u8)e->flags;
	pr->desc.ret = (__u8)ret_kind(btf, t->type);
	if ((e->op == LES_OP_READ || e->op == LES_OP_WRITE) && pr->desc.ret == LES_FN_RET_LONG)
		pr->desc.ret = LES_FN_RET_BYTES;
	if (e->flags & LES_FN_F_LOOKUP) {
		if (dentry < 0 || dentry > 4)
			return false;
		pr->desc.aux_arg = (__u8)dentry;
	}
	if (e->flags & LES_FN_F_ATOMIC_OPEN) {
		/* ->atomic_open(dir, dentry, file, open_flag, mode) */
		if (file < 0 || file + 1 >= n || file + 1 > 4)
			return false;
		pr->desc.aux_arg = (__u8)file;
		pr->desc.flags_arg = (__u8)(file + 1);
	}
	return true;
}

/* The FUNC_PROTO of member (one of "a|b") of struct ops_struct in vmlinux. */
static int member_proto(const struct btf *vmlinux, const char *ops_struct, const char *members,
			char *found, size_t found_len)
{
	const struct btf_type *st;
	const struct btf_member *m;
	char want[64];
	const char *p = members;
	int sid = btf__find_by_name_kind(vmlinux, ops_struct, BTF_KIND_STRUCT);

	if (sid < 0)
		return -1;
	st = btf__type_by_id(vmlinux, sid);
	while (*p) {
		size_t len = strcspn(p, "|");

		snprintf(want, sizeof(want), "%.*s", (int)len, p);
		m = btf_members(st);
		for (__u16 i = 0; i < btf_vlen(st); i++, m++) {
			const char *name = btf__name_by_offset(vmlinux, m->name_off);
			const struct btf_type *t;
			__u32 id;

			if (!name || strcmp(name, want) != 0)
				continue;
			t = skip_mods(vmlinux, m->type, NULL);
			if (!t || !btf_is_ptr(t))
				return -1;
			t = skip_mods(vmlinux, t->type, &id);
			if (!t || !btf_is_func_proto(t))
				return -1;
			snprintf(found, found_len, "%s", want);
			return (int)id;
		}
		p += len;
		if (*p == '|')
			p++;
	}
	return -1;
}

static void find_proto(struct les_fn_probe *pr, struct btf_set *s)
{
	struct btf *btf = pr->in_kallsyms ? btf_for(s, pr->where) : NULL;
	char member[64];
	int id;

	if (btf) {
		id = btf__find_by_name_kind(btf, pr->e->func, BTF_KIND_FUNC);
		if (id >= 0) {
			pr->has_btf = true;
			pr->btf_id = id;
			pr->has_proto = desc_from_proto(pr, btf, btf__type_by_id(btf, id)->type);
			snprintf(pr->proto_from, sizeof(pr->proto_from), "BTF %s", pr->where);
			return;
		}
	}
	if (!s->vmlinux)
		return;
	id = member_proto(s->vmlinux, pr->e->ops_struct, pr->e->members, member, sizeof(member));
	if (id < 0)
		return;
	pr->has_proto = desc_from_proto(pr, s->vmlinux, (__u32)id);
	snprintf(pr->proto_from, sizeof(pr->proto_from), "vmlinux %s.%s", pr->e->ops_struct,
		 member);
}

/* --- what the kernel permits ---------------------------------------------- */

static const struct bpf_insn return_zero[] = {
	{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
	{.code = BPF_JMP | BPF_EXIT},
};

/*
 * Load (and attach for a moment) a do-nothing fentry program on vfs_read:
 * a kernel may know BTF and trampolines and still refuse tracing programs
 * (lockdown, or a policy returning EPERM as on the build machines).
 */
static void probe_fentry(struct les_fn_plan *p, const struct btf *vmlinux)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY);
	int id, fd, link;

	id = vmlinux ? btf__find_by_name_kind(vmlinux, "vfs_read", BTF_KIND_FUNC) : -1;
	if (id < 0) {
		snprintf(p->fentry_reason, sizeof(p->fentry_reason), "no kernel BTF for fentry");
		return;
	}
	opts.attach_btf_id = (__u32)id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "les_fentry_ok", "GPL", return_zero, 2, &opts);
	if (fd < 0) {
		int err = errno;

		snprintf(p->fentry_reason, sizeof(p->fentry_reason),
			 "fentry not permitted on this kernel (%s)",
			 err == EPERM ? "EPERM" : strerror(err));
		return;
	}
	link = bpf_link_create(fd, 0, BPF_TRACE_FENTRY, NULL);
	if (link < 0) {
		snprintf(p->fentry_reason, sizeof(p->fentry_reason),
			 "fentry cannot attach on this kernel (%s)", strerror(errno));
	} else {
		p->fentry_ok = true;
		close(link);
	}
	close(fd);
}

/* An fd of the kernel BTF object called name (a module), or -1. */
static int kernel_btf_fd(const char *name)
{
	__u32 id = 0;

	while (bpf_btf_get_next_id(id, &id) == 0) {
		struct bpf_btf_info info;
		__u32 len = sizeof(info);
		char found[64] = "";
		int fd = bpf_btf_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		info.name = (__u64)(unsigned long)found;
		info.name_len = sizeof(found);
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.kernel_btf &&
		    strcmp(found, name) == 0)
			return fd;
		close(fd);
	}
	return -1;
}

/*
 * Trampolines of some kernels take at most six arguments (x86 before 6.6):
 * a function with more is tried with a do-nothing fexit program, once.
 */
static void probe_fentry_wide(struct les_fn_probe *pr)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FEXIT);
	bool module = strcmp(pr->where, "vmlinux") != 0;
	int btf_fd = module ? kernel_btf_fd(pr->where) : 0;
	int fd, link;

	if (btf_fd < 0) {
		pr->fentry_refused = "no BTF object for its module";
		return;
	}
	opts.attach_btf_id = (__u32)pr->btf_id;
	opts.attach_btf_obj_fd = (__u32)btf_fd;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "les_fexit_ok", "GPL", return_zero, 2, &opts);
	link = fd < 0 ? -1 : bpf_link_create(fd, 0, BPF_TRACE_FEXIT, NULL);
	if (link < 0)
		pr->fentry_refused = errno == ENOTSUPP_ERRNO
					     ? "the kernel's trampolines take fewer "
					       "arguments than it has (ENOTSUPP)"
					     : "a trial fexit program was refused";
	else
		close(link);
	if (fd >= 0)
		close(fd);
	if (module)
		close(btf_fd);
}

static void probe_kprobes(struct les_fn_plan *p)
{
	p->kprobe_ok = access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0 ||
		       access("/sys/kernel/tracing/kprobe_events", F_OK) == 0 ||
		       access("/sys/kernel/debug/tracing/kprobe_events", F_OK) == 0;
	if (!p->kprobe_ok)
		snprintf(p->kprobe_reason, sizeof(p->kprobe_reason),
			 "kprobes not configured (no kprobe PMU or kprobe_events)");
}

/*
 * kprobe_multi (fprobe) links: tried on a function that is about to be
 * probed, by address, so that a module function counts (6.1 to 6.2 could
 * not resolve module symbols by name). LES_KPROBE_MULTI=0 turns them off,
 * to compare with single kprobes.
 */
static void probe_kprobe_multi(struct les_fn_plan *p, unsigned long long addr)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_KPROBE_MULTI);
	LIBBPF_OPTS(bpf_link_create_opts, lopts);
	const char *env = getenv("LES_KPROBE_MULTI");
	unsigned long a = (unsigned long)addr;
	int fd, link;

	if (env && strcmp(env, "0") == 0) {
		snprintf(p->multi_reason, sizeof(p->multi_reason), "off (LES_KPROBE_MULTI=0)");
		return;
	}
	fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "les_kpm_ok", "GPL", return_zero, 2, &opts);
	if (fd < 0) {
		snprintf(p->multi_reason, sizeof(p->multi_reason),
			 "kprobe_multi programs not supported (%s)", strerror(errno));
		return;
	}
	lopts.kprobe_multi.addrs = &a;
	lopts.kprobe_multi.cnt = 1;
	link = bpf_link_create(fd, 0, BPF_TRACE_KPROBE_MULTI, &lopts);
	if (link < 0) {
		snprintf(p->multi_reason, sizeof(p->multi_reason),
			 "kprobe_multi links not supported (%s)", strerror(errno));
	} else {
		p->kprobe_multi = true;
		close(link);
	}
	close(fd);
}

/* --- the choice ----------------------------------------------------------- */

static bool module_loaded(const char *module)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/module/%s", module);
	return access(path, F_OK) == 0;
}

static const char *fentry_block(const struct les_fn_plan *p, const struct les_fn_probe *pr,
				char *buf, size_t len)
{
	if (!p->fentry_ok)
		return p->fentry_reason;
	if (!pr->has_btf) {
		char path[96];

		snprintf(path, sizeof(path), "/sys/kernel/btf/%s", pr->where);
		if (access(path, F_OK) != 0)
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

static void choose(struct les_fn_plan *p, struct les_fn_probe *pr)
{
	char fbuf[LES_FN_REASON_MAX], kbuf[LES_FN_REASON_MAX];
	const char *fe, *kp;

	if (p->mode == LES_ATTACH_MODE_SYSCALL) {
		set_reason(pr, "--attach syscall: function probes off");
		return;
	}
	if (!pr->in_kallsyms) {
		if (strcmp(pr->e->module, "vmlinux") != 0 && !module_loaded(pr->e->module))
			set_reason(pr, "module %s not loaded", pr->e->module);
		else
			set_reason(pr, "not in kallsyms: inlined or absent in this kernel");
		return;
	}
	fe = fentry_block(p, pr, fbuf, sizeof(fbuf));
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

static void choose_kprobe_link(struct les_fn_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		if (p->probe[i].method == LES_ATTACH_KPROBE) {
			probe_kprobe_multi(p, p->probe[i].addr);
			return;
		}
	}
	snprintf(p->multi_reason, sizeof(p->multi_reason), "no function uses kprobes");
}

void les_fn_plan_make(struct les_fn_plan *p, enum les_attach_mode mode)
{
	struct les_fn_probe *sorted[LES_FN_TABLE_MAX];
	struct btf_set btfs = { 0 };

	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->n = sizeof(fn_table) / sizeof(fn_table[0]);
	for (size_t i = 0; i < p->n; i++) {
		p->probe[i].e = &fn_table[i];
		p->probe[i].slot = -1;
		sorted[i] = &p->probe[i];
	}
	qsort(sorted, p->n, sizeof(sorted[0]), cmp_probe_ptr);
	scan_kallsyms(p, sorted);
	scan_blacklist(p, sorted);
	btfs.vmlinux = btf__load_vmlinux_btf();
	for (size_t i = 0; i < p->n; i++)
		find_proto(&p->probe[i], &btfs);
	if (mode != LES_ATTACH_MODE_SYSCALL && mode != LES_ATTACH_MODE_KPROBE)
		probe_fentry(p, btfs.vmlinux);
	else
		snprintf(p->fentry_reason, sizeof(p->fentry_reason), "not tried (--attach)");
	if (mode != LES_ATTACH_MODE_SYSCALL && mode != LES_ATTACH_MODE_FENTRY)
		probe_kprobes(p);
	else
		snprintf(p->kprobe_reason, sizeof(p->kprobe_reason), "not tried (--attach)");
	btf_set_free(&btfs);
	for (size_t i = 0; i < p->n && p->fentry_ok; i++)
		if (p->probe[i].has_btf && p->probe[i].has_proto && p->probe[i].desc.nargs > 6)
			probe_fentry_wide(&p->probe[i]);
	for (size_t i = 0; i < p->n; i++)
		choose(p, &p->probe[i]);
	assign_slots(p);
	compute_coverage(p);
	choose_kprobe_link(p);
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
		*multi = strcmp(name + len, "multi") == 0;
		*slot = -1;
		return *multi || parse_slot(name + len, slot);
	}
	return false;
}
