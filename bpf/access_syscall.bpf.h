/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Access plane, generic fallback: the raw sys_enter/sys_exit tracepoints,
 * which exist on every kernel and reach every filesystem. Two attach points
 * instead of one per syscall: attaching is instant and detaching 130 perf
 * events would take ~10 s of RCU grace periods. A per-syscall descriptor
 * (map "syscalls") says which syscalls matter; every other syscall costs one
 * array lookup. Each traced entry resolves its target to a superblock dev
 * (fd -> file -> inode -> sb; or dirfd/cwd + path; or an absolute path
 * matched against the observed mount points) and stops there when that dev
 * is not observed. The exit of the same syscall on the same thread finishes
 * the op: the frame remembers the syscall number, so no unrelated call can
 * finish it.
 */
#ifndef LES_ACCESS_SYSCALL_BPF_H
#define LES_ACCESS_SYSCALL_BPF_H

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
 * task must come from bpf_get_current_task_btf(): the walk to the fd array
 * is then made of plain loads the verifier guards (a fault reads 0), not
 * helper calls. This runs for every fd syscall of every process, observed
 * or not, so each helper call saved counts. The array slot is a pointer to
 * a pointer, which BTF cannot follow: one read for it.
 */
static __always_inline struct file *fd_file(struct task_struct *task, int fd)
{
	struct fdtable *fdt = task->files->fdt;
	struct file **fds;
	struct file *file = NULL;

	if (!fdt || fd < 0 || (unsigned int)fd >= fdt->max_fds)
		return NULL;
	fds = fdt->fd;
	bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
	return file;
}

static __always_inline __u32 file_dev(struct file *file)
{
	return file ? BPF_CORE_READ(file, f_inode, i_sb, s_dev) : 0;
}

static __always_inline __u64 file_ino(struct file *file)
{
	return file ? BPF_CORE_READ(file, f_inode, i_ino) : 0;
}

static __always_inline __u32 fd_dev(int fd)
{
	return file_dev(fd_file(bpf_get_current_task_btf(), fd));
}

static __always_inline __u32 dirfd_dev(int dirfd)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (dirfd == LES_AT_FDCWD)
		return BPF_CORE_READ(task, fs, pwd.dentry, d_sb, s_dev);
	return file_dev(fd_file(task, dirfd));
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

/*
 * The superblock dev a (dirfd, path) pair names, as far as it can be told
 * before the walk: absolute paths by mount point, relative and empty ones
 * by their directory. Symlinks and ".." crossing a mount are not followed.
 */
static __noinline __u32 path_dev(int dirfd, const char *upath)
{
	struct path_buf *buf;
	__u32 zero = 0;
	long n;

	buf = bpf_map_lookup_elem(&path_scratch, &zero);
	if (!buf)
		return 0;
	buf->word[0] = 0;
	n = upath ? bpf_probe_read_user_str(buf->word, sizeof(buf->word), upath) : 0;
	if (n <= 1) /* NULL, unreadable or "": AT_EMPTY_PATH names dirfd itself */
		return dirfd_dev(dirfd);
	if (((const char *)buf->word)[0] == '/')
		return abs_path_dev(buf, n - 1);
	return dirfd_dev(dirfd);
}

/* Push an op frame for the current thread if dev is observed. */
static __always_inline int access_enter(__s32 nr, __u32 op, __u32 dev, __u64 arg, int fd)
{
	__u64 pid_tgid, now;
	struct thread_ops *ops;
	struct op_frame *frame;
	__u32 tid, depth;

	if (!dev_observed(dev))
		return 0;
	/* Function probes report this op on this mount (access_fn.bpf.h). */
	if (fn_covers_op(dev, op))
		return 0;
	count_probe(LES_PROBE_SYS_ENTER);
	pid_tgid = bpf_get_current_pid_tgid();
	tid = (__u32)pid_tgid;
	if (task_filtered_out(pid_tgid >> 32, (__u32)bpf_get_current_uid_gid())) {
		count(LES_CNT_FILTERED);
		return 0;
	}
	ops = thread_ops_get_or_create(tid, pid_tgid >> 32);
	if (!ops)
		return 0;
	depth = ops->depth;
	/* A syscall frame still on top never exited: syscalls do not nest. */
	if (depth && depth <= LES_MAX_DEPTH && ops->frame[(depth - 1) & (LES_MAX_DEPTH - 1)].key >= 0) {
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
	frame->ino = want_file_id && fd >= 0 ? file_ino(fd_file(bpf_get_current_task_btf(), fd)) : 0;
	frame->op = op;
	frame->key = nr;
	frame->arg = arg;
	ops->depth = depth + 1;
	ops->updated_ns = now;
	bpf_get_current_comm(ops->comm, sizeof(ops->comm));
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

/* Pop the frame the same syscall pushed and emit the access record. */
static __always_inline int access_exit(__s32 nr, __s64 ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct thread_ops *ops = thread_ops_get(tid);
	struct op_frame *frame = current_frame(ops);
	struct les_rec_access *rec;
	__u64 now, latency;

	if (!frame || frame->key != nr)
		return 0; /* not an op on an observed mount */
	count_probe(LES_PROBE_SYS_EXIT);
	ops->depth--;
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
		rec->ino = file_ino(fd_file(bpf_get_current_task_btf(), (int)ret));
	rec->cgroup_id = bpf_get_current_cgroup_id();
	rec->dev = frame->dev;
	rec->rpc_count = frame->rpc_count;
	rec->err = ret < 0 && ret > -4096 ? (__s32)-ret : 0;
	rec->_pad = 0;
	fill_current_task(&rec->task);
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

/* Syscall argument i (0-5) from the user registers. */
static __always_inline __u64 sys_arg(struct pt_regs *regs, int i)
{
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

static __always_inline __u32 syscall_target_dev(struct pt_regs *regs,
						const struct les_syscall_desc *d, int *fd)
{
	int dirfd;

	*fd = -1;
	switch (d->target) {
	case LES_SYS_FD:
		*fd = (int)sys_arg(regs, d->fd_arg);
		return fd_dev(*fd);
	case LES_SYS_AT:
		dirfd = (int)sys_arg(regs, d->fd_arg);
		return path_dev(dirfd, (const char *)sys_arg(regs, d->path_arg));
	case LES_SYS_PATH:
		return path_dev(LES_AT_FDCWD, (const char *)sys_arg(regs, d->path_arg));
	}
	return 0;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long id)
{
	const struct les_syscall_desc *d = syscall_desc(id);
	__u64 flags = 0;
	__u32 dev, op;
	int fd;

	if (!d || d->target == LES_SYS_NONE)
		return 0;
	dev = syscall_target_dev(regs, d, &fd);
	op = d->op;
	if (d->flags_arg >= 0)
		flags = sys_arg(regs, d->flags_arg);
	if (d->rmdir_flag && (flags & LES_AT_REMOVEDIR))
		op = LES_OP_RMDIR;
	return access_enter((__s32)id, op, dev, flags, fd);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	long id = SYSCALL_NR(regs);
	const struct les_syscall_desc *d = syscall_desc(id);

	/* Only the traced syscalls pay for the per-thread lookup. */
	if (!d || d->target == LES_SYS_NONE)
		return 0;
	return access_exit((__s32)id, ret);
}

#endif /* LES_ACCESS_SYSCALL_BPF_H */
