/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Access plane, generic fallback: the raw sys_enter/sys_exit tracepoints,
 * which exist on every kernel and reach every filesystem. Two attach points
 * instead of one per syscall: attaching is instant and detaching 130 perf
 * events would take ~10 s of RCU grace periods. A per-syscall descriptor
 * (map "syscalls") says which syscalls matter; every other syscall costs one
 * array lookup. Each traced entry resolves its target to a superblock dev
 * (fd -> file -> inode -> sb; or dirfd/cwd + path; or an absolute path
 * matched against the observed mount points). An fd syscall stops there
 * when that dev is not observed. A path syscall cannot be told so early: a
 * relative path can cross into a mount, a process in another mount
 * namespace or chroot sees the mount at another path, a symlink can lead
 * anywhere. So it gets a pending frame, and its exit decides exactly where
 * the kernel says: the fd an open returned, the st_dev a stat wrote, or the
 * mount of a request the op made (rpc planes). What none of these decides
 * is counted (path_unresolved) when the entry was unsure. The exit of the
 * same syscall on the same thread finishes the op: the frame remembers the
 * syscall number, so no unrelated call can finish it.
 */
#ifndef LES_ACCESS_SYSCALL_BPF_H
#define LES_ACCESS_SYSCALL_BPF_H

#include "common.bpf.h"

#define LES_AT_FDCWD	   -100
#define LES_AT_REMOVEDIR   0x200
#define LES_O_CREAT	   0100
#define LES_O_EXCL	   0200
#define PATH_WORDS	   (LES_MOUNT_PATH_MAX / 8)

/* Scratch for user path strings: too large for the BPF stack. */
struct path_buf {
	__u64 word[PATH_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct path_buf);
} path_scratch SEC(".maps");

/*
 * An fd array slot read by a load (LES_FLAVOUR_CAST): bpf_rdonly_cast
 * takes a structure's type, and BTF has none for a pointer to a pointer,
 * so the slot is read as a struct list_head's first member, a pointer at
 * offset 0 in every kernel. The file pointer it gives is cast again
 * (file_btf) before its fields are read.
 */
static __always_inline struct file *fd_slot_load(struct file **slot)
{
	struct list_head *head = bpf_rdonly_cast(slot, bpf_core_type_id_kernel(struct list_head));

	return (struct file *)head->next;
}

/*
 * task from les_current_task(btf). With btf the walk to the fd array is
 * made of plain loads the verifier guards (a fault reads 0), not helper
 * calls: this runs for every fd syscall of every process, observed or not,
 * so each helper call saved counts. The array slot is a pointer to a
 * pointer, which BTF cannot follow: one read for it, or with
 * LES_FLAVOUR_CAST a load (fd_slot_load).
 */
static __always_inline struct file *fd_file(struct task_struct *task, int fd, int btf)
{
	struct fdtable *fdt = btf ? task->files->fdt : BPF_CORE_READ(task, files, fdt);
	struct file **fds;
	struct file *file = NULL;
	unsigned int max_fds;

	if (!fdt || fd < 0)
		return NULL;
	max_fds = btf ? fdt->max_fds : BPF_CORE_READ(fdt, max_fds);
	if ((unsigned int)fd >= max_fds)
		return NULL;
	fds = btf ? fdt->fd : BPF_CORE_READ(fdt, fd);
	if (btf == LES_FLAVOUR_CAST)
		return fd_slot_load(&fds[fd]);
	bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
	return file;
}

/* A file pointer the fd array gave, as a BTF pointer (LES_FLAVOUR_CAST only). */
static __always_inline struct file *file_btf(struct file *file)
{
	return bpf_rdonly_cast(file, bpf_core_type_id_kernel(struct file));
}

static __always_inline __u32 file_dev(struct file *file, int btf)
{
	if (!file)
		return 0;
	if (btf == LES_FLAVOUR_CAST)
		return file_btf(file)->f_inode->i_sb->s_dev;
	return BPF_CORE_READ(file, f_inode, i_sb, s_dev);
}

static __always_inline __u64 file_ino(struct file *file, int btf)
{
	if (!file)
		return 0;
	if (btf == LES_FLAVOUR_CAST)
		return file_btf(file)->f_inode->i_ino;
	return BPF_CORE_READ(file, f_inode, i_ino);
}

static __always_inline struct file *current_fd_file(int fd, int btf)
{
	return fd_file(les_current_task(btf), fd, btf);
}

static __always_inline __u32 dirfd_dev(int dirfd, int btf)
{
	struct task_struct *task = les_current_task(btf);

	if (dirfd == LES_AT_FDCWD)
		return BPF_CORE_READ(task, fs, pwd.dentry, d_sb, s_dev);
	return file_dev(fd_file(task, dirfd, btf), btf);
}

/* Does the path in buf start with mount point mp, component-wise? */
static __always_inline bool path_has_prefix(const struct path_buf *buf,
					    const struct les_mount_path *mp)
{
	const __u64 *want = (const __u64 *)mp->path;
	__u32 len = mp->len, full = len / 8, rem = len % 8, i;
	const char *bytes = (const char *)buf->word;
	char next;

	for (i = 0; i < PATH_WORDS; i++) {
		if (i >= full)
			break;
		if (buf->word[i] != want[i])
			return false;
	}
	if (rem) {
		__u64 mask = (1ULL << (rem * 8)) - 1;

		if ((buf->word[full & (PATH_WORDS - 1)] ^ want[full & (PATH_WORDS - 1)]) & mask)
			return false;
	}
	next = bytes[len & (LES_MOUNT_PATH_MAX - 1)];
	return next == '/' || next == '\0';
}

/* Longest observed mount point that prefixes an absolute path. */
static __noinline __u32 abs_path_dev(const struct path_buf *buf, __u32 path_len)
{
	__u32 best_dev = 0, best_len = 0;

	for (__u32 slot = 0; slot < LES_MAX_MOUNTS; slot++) {
		/* A copy for the lookup: a counter whose address escapes is imprecise. */
		__u32 key = slot;
		struct les_mount_path *mp = bpf_map_lookup_elem(&mount_paths, &key);

		if (!mp || !mp->len || mp->len > path_len || mp->len >= LES_MOUNT_PATH_MAX)
			continue;
		if (mp->len <= best_len || !path_has_prefix(buf, mp))
			continue;
		best_len = mp->len;
		best_dev = mp->dev;
	}
	return best_dev;
}

/* false: decide path syscalls at entry only, the earlier way (bench/run's baseline). */
const volatile bool path_exit_resolve = true;

/* The tool's own mount namespace and root (userspace fills them). */
const volatile __u32 self_mntns_ino = 0;
const volatile __u32 self_root_dev = 0;
const volatile __u64 self_root_ino = 0;

/* Does the current task resolve absolute paths as the tool does? */
static __always_inline bool same_view(int btf)
{
	struct task_struct *task = les_current_task(btf);
	struct dentry *root = BPF_CORE_READ(task, fs, root.dentry);

	return BPF_CORE_READ(task, nsproxy, mnt_ns, ns.inum) == self_mntns_ino &&
	       BPF_CORE_READ(root, d_inode, i_ino) == self_root_ino &&
	       BPF_CORE_READ(root, d_sb, s_dev) == self_root_dev;
}

enum path_kind {
	PATH_EMPTY, /* NULL, unreadable or "": AT_EMPTY_PATH names dirfd itself */
	PATH_RELATIVE,
	PATH_ABSOLUTE,
};

/*
 * Read a user path and, when absolute, the dev of the observed mount point
 * that prefixes it (*dev, 0 if none). Takes no task: one copy serves both
 * flavours of the programs.
 */
static __noinline enum path_kind read_path(const char *upath, __u32 *dev)
{
	struct path_buf *buf;
	__u32 zero = 0;
	long n;

	*dev = 0;
	buf = bpf_map_lookup_elem(&path_scratch, &zero);
	if (!buf)
		return PATH_EMPTY;
	buf->word[0] = 0;
	n = upath ? bpf_probe_read_user_str(buf->word, sizeof(buf->word), upath) : 0;
	if (n <= 1)
		return PATH_EMPTY;
	if (((const char *)buf->word)[0] != '/')
		return PATH_RELATIVE;
	*dev = abs_path_dev(buf, n - 1);
	return PATH_ABSOLUTE;
}

/*
 * The superblock dev a (dirfd, path) pair names, as far as it can be told
 * before the walk: absolute paths by mount point, relative and empty ones
 * by their directory. *kind says which; symlinks and ".." are left to the
 * exit, and so is whether an absolute path was seen as the tool sees it
 * (same_view() is asked only of the rare op the exit cannot place).
 */
static __always_inline __u32 path_dev(int dirfd, const char *upath, enum path_kind *kind,
				      int btf)
{
	__u32 dev;

	*kind = read_path(upath, &dev);
	if (*kind == PATH_ABSOLUTE)
		return dev;
	return dirfd_dev(dirfd, btf);
}

/*
 * Push an op frame for the current thread if dev is observed, or a pending
 * one (dev 0, sys_flags LES_FRAME_PENDING) for a path syscall whose exit
 * decides.
 */
static __always_inline int access_enter(__s32 nr, __u32 op, __u32 dev, __u64 arg, int fd,
					__u32 sys_flags, int btf)
{
	const struct les_observed_val *ov = observed_get(dev);
	__u64 pid_tgid, now;
	struct thread_ops *ops;
	struct op_frame *frame;
	__u32 tid, depth;

	if (!ov) {
		if (!(sys_flags & LES_FRAME_PENDING))
			return 0;
		dev = 0;
	} else if (fn_covers_op(ov, op)) {
		/* Function probes report this op on this mount (access_fn.bpf.h). */
		return 0;
	}
	count_probe(LES_PROBE_SYS_ENTER);
	pid_tgid = bpf_get_current_pid_tgid();
	tid = (__u32)pid_tgid;
	if (task_filtered_out(pid_tgid >> 32)) {
		/* Counted once the op is known to be on an observed mount. */
		if (dev) {
			count(LES_CNT_FILTERED);
			return 0;
		}
		sys_flags |= LES_FRAME_FILTERED;
	}
	ops = thread_ops_get_or_create(tid, pid_tgid >> 32);
	if (!ops)
		return 0;
	depth = ops->depth;
	/*
	 * A syscall frame still on top never exited: syscalls do not nest.
	 * Counted when it was on an observed mount; a pending frame may be
	 * any process's syscall that entered while the tool attached its
	 * sys_enter but not yet its sys_exit.
	 */
	if (depth && depth <= LES_MAX_DEPTH && ops->frame[(depth - 1) & (LES_MAX_DEPTH - 1)].key >= 0) {
		if (ops->frame[(depth - 1) & (LES_MAX_DEPTH - 1)].dev)
			count(LES_CNT_ENTRY_REPLACED);
		depth--;
	}
	if (depth >= LES_MAX_DEPTH) {
		count(LES_CNT_DEPTH_OVERFLOW);
		return 0;
	}
	now = bpf_ktime_get_ns();
	/* Keep the mask: the verifier needs it even though depth < LES_MAX_DEPTH. */
	barrier_var(depth);
	frame = &ops->frame[depth & (LES_MAX_DEPTH - 1)];
	frame->start_ns = now;
	frame->op_id = next_op_id();
	frame->rpc_wait_ns = 0;
	frame->rpc_count = 0;
	frame->dev = dev;
	frame->ino = want_file_id && fd >= 0 ? file_ino(current_fd_file(fd, btf), btf) : 0;
	frame->op = op;
	frame->key = nr;
	frame->arg = arg;
	frame->sys_flags = sys_flags;
	ops->depth = depth + 1;
	ops->updated_ns = now;
	/* A pending op takes its comm at the exit, if it was ours at all. */
	if (dev)
		current_comm(ops->comm, btf);
	return 0;
}

static __always_inline __u32 exit_op(const struct op_frame *frame, __s64 ret)
{
	/* open(O_CREAT | O_EXCL) that succeeded certainly created the file. */
	if (frame->op == LES_OP_OPEN && ret >= 0 &&
	    (frame->arg & (LES_O_CREAT | LES_O_EXCL)) == (LES_O_CREAT | LES_O_EXCL))
		return LES_OP_CREATE;
	return frame->op;
}

/* The kernel's dev_t from a struct stat's st_dev (new_encode_dev() form). */
static __always_inline __u32 dev_from_stat(__u64 st_dev)
{
	__u32 major = ((st_dev >> 8) & 0xfff) | ((st_dev >> 32) & ~0xfffULL);
	__u32 minor = (st_dev & 0xff) | ((st_dev >> 12) & ~0xffULL);

	return (major << 20) | (minor & 0xfffff);
}

/* Where a pending frame's op ran, from what the syscall returned; 0 if unknown. */
static __always_inline __u32 exit_dev(const struct op_frame *frame,
				      const struct les_syscall_desc *d, __s64 ret, int btf)
{
	__u32 devno[2] = {};
	__u64 st_dev = 0;

	if (ret < 0)
		return frame->dev;
	if (frame->op == LES_OP_OPEN)
		return file_dev(current_fd_file((int)ret, btf), btf);
	switch (d->stat_kind) {
	case LES_STAT_STAT:
		if (!bpf_probe_read_user(&st_dev, sizeof(st_dev), (void *)frame->arg))
			return dev_from_stat(st_dev);
		break;
	case LES_STAT_STATX:
		if (!bpf_probe_read_user(devno, sizeof(devno), (void *)(frame->arg + 136)))
			return (devno[0] << 20) | (devno[1] & 0xfffff);
		break;
	}
	return frame->dev;
}

/*
 * An op the exit could not place, that may have run on an observed mount:
 * the entry was unsure, it succeeded, and neither its result nor a request
 * says where (a mutation on FUSE, NFS or Lustre always sends one; a failed
 * lookup that a cached negative entry answered is not counted).
 */
static __always_inline bool unresolvable(const struct op_frame *frame, __s64 ret, int btf)
{
	if (ret < 0)
		return false;
	switch (frame->op) {
	case LES_OP_READLINK:
	case LES_OP_GETXATTR:
	case LES_OP_LISTXATTR:
	case LES_OP_STATFS:
		break;
	default:
		return false;
	}
	if (frame->sys_flags & LES_FRAME_UNCERTAIN)
		return true;
	/* An absolute path means what the tool matched only in its own view. */
	return (frame->sys_flags & LES_FRAME_ABSOLUTE) && !same_view(btf);
}

/* Pop the frame the same syscall pushed and emit the access record. */
static __always_inline int access_exit(__s32 nr, __s64 ret, const struct les_syscall_desc *d,
				       int btf)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct thread_ops *ops = thread_ops_get((__u32)pid_tgid);
	struct op_frame *frame = current_frame(ops);
	const struct les_observed_val *ov;
	struct les_rec_access *rec;
	__u64 now, latency;

	if (!frame || frame->key != nr)
		return 0; /* not an op on an observed mount */
	ops->depth--;
	if (frame->sys_flags & LES_FRAME_PENDING) {
		frame->dev = exit_dev(frame, d, ret, btf);
		ov = observed_get(frame->dev);
		if (!ov) {
			if (!frame->dev && unresolvable(frame, ret, btf))
				count(LES_CNT_PATH_UNRESOLVED);
			return 0;
		}
		if (fn_covers_op(ov, frame->op))
			return 0;
		if (frame->sys_flags & LES_FRAME_FILTERED) {
			count(LES_CNT_FILTERED);
			return 0;
		}
		current_comm(ops->comm, btf);
	}
	count_probe(LES_PROBE_SYS_EXIT);
	now = bpf_ktime_get_ns();
	latency = now - frame->start_ns;
	if (access_filtered_out(exit_op(frame, ret), latency)) {
		count(LES_CNT_FILTERED);
		return 0;
	}
	rec = reserve(sizeof(*rec));
	if (!rec)
		return 0;
	rec->kind = LES_REC_ACCESS;
	rec->op = exit_op(frame, ret);
	rec->method = LES_ATTACH_SYSCALL;
	rec->flags = 0;
	rec->ts_ns = now;
	rec->latency_ns = latency;
	rec->bytes = ret > 0 && (frame->op == LES_OP_READ || frame->op == LES_OP_WRITE) ? ret : 0;
	rec->op_id = frame->op_id;
	rec->rpc_wait_ns = frame->rpc_wait_ns;
	rec->ino = frame->ino;
	if (want_file_id && !rec->ino && frame->op == LES_OP_OPEN && ret >= 0)
		rec->ino = file_ino(current_fd_file((int)ret, btf), btf);
	rec->cgroup_id = bpf_get_current_cgroup_id();
	rec->dev = frame->dev;
	rec->rpc_count = frame->rpc_count;
	rec->err = ret < 0 && ret > -4096 ? (__s32)-ret : 0;
	rec->_pad = 0;
	rec->fid = (struct les_lu_fid){}; /* a FID comes only with function probes */
	fill_op_task(&rec->task, pid_tgid, les_current_uid_gid(btf), ops);
	submit(rec);
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LES_SYS_MAX);
	__type(key, __u32);
	__type(value, struct les_syscall_desc);
} syscalls SEC(".maps");

static __always_inline const struct les_syscall_desc *syscall_desc(long id)
{
	__u32 key = (__u32)id;

	if (id < 0 || id >= LES_SYS_MAX)
		return NULL;
	return bpf_map_lookup_elem(&syscalls, &key);
}

/*
 * The record of a syscalls:sys_enter_NAME / sys_exit_NAME tracepoint (the
 * layout of their format files, the same for every syscall).
 */
struct les_sys_enter_tp {
	__u64 common;
	int nr;
	__u32 pad;
	__u64 args[6];
};

struct les_sys_exit_tp {
	__u64 common;
	int nr;
	__u32 pad;
	long ret;
};

/*
 * Where the arguments are: the user registers (raw sys_enter), or a copy
 * of the per-syscall tracepoint's arguments on the stack (the context
 * takes only constant offsets, and the compiler may not keep them so if
 * the index varies). One of the two is NULL, known when inlined.
 */
struct sys_args {
	struct pt_regs *regs;
	const __u64 *args;
	bool regs_btf; /* regs is a BTF pointer (LES_FLAVOUR_CAST): plain loads */
};

/* Syscall argument i (0-5). */
static __always_inline __u64 sys_arg(const struct sys_args *a, int i)
{
	struct pt_regs *regs;

	if (a->args)
		return i >= 0 && i < 5 ? a->args[i] : 0;
	/*
	 * Out of the CO-RE read's expression: inside it, a->regs would be a
	 * relocation against this local struct, which no kernel has.
	 */
	regs = a->regs;
	if (a->regs_btf) {
		switch (i) {
		case 0:
			return PT_REGS_PARM1_SYSCALL(regs);
		case 1:
			return PT_REGS_PARM2_SYSCALL(regs);
		case 2:
			return PT_REGS_PARM3_SYSCALL(regs);
		case 3:
			return PT_REGS_PARM4_SYSCALL(regs);
		case 4:
			return PT_REGS_PARM5_SYSCALL(regs);
		}
		return 0;
	}
	switch (i) {
	case 0:
		return PT_REGS_PARM1_CORE_SYSCALL(regs);
	case 1:
		return PT_REGS_PARM2_CORE_SYSCALL(regs);
	case 2:
		return PT_REGS_PARM3_CORE_SYSCALL(regs);
	case 3:
		return PT_REGS_PARM4_CORE_SYSCALL(regs);
	case 4:
		return PT_REGS_PARM5_CORE_SYSCALL(regs);
	}
	return 0;
}

/*
 * *sys_flags: LES_FRAME_PENDING for path syscalls, with UNCERTAIN for a
 * relative path and ABSOLUTE for an absolute one.
 */
static __always_inline __u32 syscall_target_dev(const struct sys_args *a,
						const struct les_syscall_desc *d, int *fd,
						__u32 *sys_flags, int btf)
{
	enum path_kind kind = PATH_EMPTY;
	__u32 dev = 0;
	int dirfd;

	*fd = -1;
	*sys_flags = 0;
	switch (d->target) {
	case LES_SYS_FD:
		*fd = (int)sys_arg(a, d->fd_arg);
		return file_dev(current_fd_file(*fd, btf), btf);
	case LES_SYS_AT:
		dirfd = (int)sys_arg(a, d->fd_arg);
		dev = path_dev(dirfd, (const char *)sys_arg(a, d->path_arg), &kind, btf);
		break;
	case LES_SYS_PATH:
		dev = path_dev(LES_AT_FDCWD, (const char *)sys_arg(a, d->path_arg), &kind, btf);
		break;
	}
	if (path_exit_resolve)
		*sys_flags = LES_FRAME_PENDING |
			     (kind == PATH_RELATIVE ? LES_FRAME_UNCERTAIN : 0) |
			     (kind == PATH_ABSOLUTE ? LES_FRAME_ABSOLUTE : 0);
	return dev;
}

static __always_inline int sys_enter_common(const struct sys_args *a, long id, int btf)
{
	const struct les_syscall_desc *d = syscall_desc(id);
	__u32 dev, op, sys_flags;
	__u64 flags = 0;
	int fd;

	if (!d || d->target == LES_SYS_NONE)
		return 0;
	dev = syscall_target_dev(a, d, &fd, &sys_flags, btf);
	op = d->op;
	if (d->flags_arg >= 0)
		flags = sys_arg(a, d->flags_arg);
	if (d->rmdir_flag && (flags & LES_AT_REMOVEDIR))
		op = LES_OP_RMDIR;
	/* A stat's exit reads st_dev from the buffer it filled. */
	if (d->stat_kind != LES_STAT_NONE && d->stat_arg >= 0)
		flags = sys_arg(a, d->stat_arg);
	return access_enter((__s32)id, op, dev, flags, fd, sys_flags, btf);
}

static __always_inline int sys_exit_common(long id, long ret, int btf)
{
	const struct les_syscall_desc *d = syscall_desc(id);

	/* Only the traced syscalls pay for the per-thread lookup. */
	if (!d || d->target == LES_SYS_NONE)
		return 0;
	return access_exit((__s32)id, ret, d, btf);
}

/*
 * Exits first: programs attach in this order, so no syscall enters (and
 * leaves a frame) while its exit is not yet traced.
 *
 * Two ways in. The raw sys_enter/sys_exit tracepoints run for every
 * syscall of every task; the per-syscall ones (syscalls:sys_enter_NAME,
 * attached once for each syscall of the table, src/probe/syscalls.c) run
 * only for those, and the kernel skips every other syscall before any
 * program runs. Both need the kernel's syscall tracing path, which every
 * syscall then takes (docs/performance.md).
 */
/* 6.2 and later: the fd's file as a BTF pointer too. */
/* The user registers as a BTF pointer: the number and arguments are loads. */
static __always_inline struct pt_regs *regs_btf(struct pt_regs *regs)
{
	return bpf_rdonly_cast(regs, bpf_core_type_id_kernel(struct pt_regs));
}

SEC("raw_tp/sys_exit")
int BPF_PROG(sys_exit_cast, struct pt_regs *regs, long ret)
{
	return sys_exit_common(SYSCALL_NR_BTF(regs_btf(regs)), ret, LES_FLAVOUR_CAST);
}

SEC("raw_tp/sys_enter")
int BPF_PROG(sys_enter_cast, struct pt_regs *regs, long id)
{
	struct sys_args a = { .regs = regs_btf(regs), .regs_btf = true };

	return sys_enter_common(&a, id, LES_FLAVOUR_CAST);
}

/* 5.11 and later: the task as a BTF pointer. */
SEC("raw_tp/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	return sys_exit_common(SYSCALL_NR(regs), ret, LES_FLAVOUR_BTF);
}

SEC("raw_tp/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long id)
{
	struct sys_args a = { .regs = regs };

	return sys_enter_common(&a, id, LES_FLAVOUR_BTF);
}

/* 5.10 (no bpf_get_current_task_btf): the task by probe reads. */
SEC("raw_tp/sys_exit")
int BPF_PROG(sys_exit_nobtf, struct pt_regs *regs, long ret)
{
	return sys_exit_common(SYSCALL_NR(regs), ret, LES_FLAVOUR_NOBTF);
}

SEC("raw_tp/sys_enter")
int BPF_PROG(sys_enter_nobtf, struct pt_regs *regs, long id)
{
	struct sys_args a = { .regs = regs };

	return sys_enter_common(&a, id, LES_FLAVOUR_NOBTF);
}

/* The per-syscall tracepoints: attached by name, not by their section. */
SEC("tracepoint")
int sys_exit_tp(struct les_sys_exit_tp *ctx)
{
	return sys_exit_common(ctx->nr, ctx->ret, LES_FLAVOUR_BTF);
}

/*
 * The five arguments the table names, copied by one probe read: each
 * syscall's record holds only its own arguments, and the kernel refuses to
 * attach a program whose direct context reads go past a record's end
 * (read's has three), so direct reads of args[3] and args[4] would keep
 * this program off every shorter syscall. Past a short record's end the
 * copy holds bytes the table never asks for.
 */
static __always_inline void sys_tp_args(const struct les_sys_enter_tp *ctx, __u64 *args)
{
	if (bpf_probe_read_kernel(args, 5 * sizeof(__u64), ctx->args))
		__builtin_memset(args, 0, 5 * sizeof(__u64));
}

SEC("tracepoint")
int sys_enter_tp(struct les_sys_enter_tp *ctx)
{
	__u64 args[5];
	struct sys_args a = { .args = args };

	sys_tp_args(ctx, args);

	return sys_enter_common(&a, ctx->nr, LES_FLAVOUR_BTF);
}

SEC("tracepoint")
int sys_exit_tp_cast(struct les_sys_exit_tp *ctx)
{
	return sys_exit_common(ctx->nr, ctx->ret, LES_FLAVOUR_CAST);
}

SEC("tracepoint")
int sys_enter_tp_cast(struct les_sys_enter_tp *ctx)
{
	__u64 args[5];
	struct sys_args a = { .args = args };

	sys_tp_args(ctx, args);

	return sys_enter_common(&a, ctx->nr, LES_FLAVOUR_CAST);
}

SEC("tracepoint")
int sys_exit_tp_nobtf(struct les_sys_exit_tp *ctx)
{
	return sys_exit_common(ctx->nr, ctx->ret, LES_FLAVOUR_NOBTF);
}

SEC("tracepoint")
int sys_enter_tp_nobtf(struct les_sys_enter_tp *ctx)
{
	__u64 args[5];
	struct sys_args a = { .args = args };

	sys_tp_args(ctx, args);

	return sys_enter_common(&a, ctx->nr, LES_FLAVOUR_NOBTF);
}

#endif /* LES_ACCESS_SYSCALL_BPF_H */
