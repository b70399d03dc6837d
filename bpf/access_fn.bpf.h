/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Access plane, function probes: the file and inode operations of Lustre
 * llite, NFS and FUSE, entered and left on the thread that asked for them.
 *
 * Programs come in LES_FN_SLOTS slots. Userspace (src/probe/fnprobes.c) aims each
 * slot it uses at one kernel function and describes that function in
 * FN_DESC(slot) (.rodata, so in a slot's own programs every field is a
 * constant the verifier prunes on). A slot has four programs: fentry and
 * fexit (the target set with bpf_program__set_attach_target before load),
 * kprobe and kretprobe (attached by name). Besides the slots, one
 * kprobe.multi pair serves every slot through its attach cookie where the
 * kernel has kprobe_multi links (one link instead of two perf events per
 * function: detaching perf-event kprobes waits for an RCU grace period
 * each). Userspace keeps one method per function and disables the rest
 * before load. All twins share fn_enter() and fn_exit().
 *
 * Pairing: an entry pushes an op frame keyed -(slot + 1) on the thread's
 * stack (syscall frames use keys >= 0); the exit of the same function on
 * the same thread pops it, so nested ops (a lookup inside an open) are each
 * timed, and no unrelated call can finish an op.
 */
#ifndef LES_ACCESS_FN_BPF_H
#define LES_ACCESS_FN_BPF_H

#include "common.bpf.h"

#define FN_ENOENT    2
#define FN_ECHILD    10
#define FN_MAX_ERRNO 4095
#define FN_O_CREAT   0100
#define FN_O_EXCL    0200

/* Frame op of an op whose record another frame emits. */
#define FN_OP_SILENT 0xff
/* Bits above the op in a function frame's op field (atomic_open state). */
#define FN_OP_MASK	      0xff
#define FN_FRAME_CREAT	      0x100
#define FN_FRAME_EXCL	      0x200
#define FN_FRAME_CHILD_LOOKUP 0x400

/*
 * Filled by userspace before load, slots 0 to LES_FN_SLOTS - 1. A power of
 * two long, so that a slot known only at run time (from a frame key or an
 * attach cookie) is kept in bounds by a mask the verifier can follow.
 */
#define FN_DESC_LEN 128
const volatile struct les_fn_desc fn_desc[FN_DESC_LEN] = {};
#define FN_DESC(slot) (fn_desc[(slot) & (FN_DESC_LEN - 1)])

static __always_inline __s32 fn_key(__u32 slot)
{
	return -(__s32)slot - 1;
}

/*
 * The FID of a Lustre inode: lli_fid of the ll_inode_info around it, at
 * the offsets userspace read from the lustre module's BTF (not CO-RE: see
 * configure_lustre_fid); left 0 without them or for another filesystem.
 */
static __always_inline void fn_lustre_fid(struct inode *inode, struct les_lu_fid *fid)
{
	if (!lustre_lli_vfs_inode_off || BPF_CORE_READ(inode, i_sb, s_magic) != LES_LL_SUPER_MAGIC)
		return;
	if (bpf_probe_read_kernel(fid, sizeof(*fid),
				  (void *)inode - lustre_lli_vfs_inode_off + lustre_lli_fid_off))
		fid->seq = 0;
}

/*
 * Where an op's target argument leads: the superblock dev, the inode (NULL
 * for a negative dentry), and with --file-id the inode number and (on
 * Lustre) the FID.
 */
struct fn_target {
	__u32 dev;
	struct inode *inode;
	__u64 ino;
	struct les_lu_fid fid;
};

/*
 * How the walk from an argument to its superblock reads the kernel:
 * - FN_WALK_READ: probe reads; the argument is a number (a kprobe's
 *   register, bpf_get_func_arg), the only way before 6.2 for kprobes;
 * - FN_WALK_LOAD: the argument is a BTF pointer (an fentry program's
 *   argument as the verifier types it from the function's prototype,
 *   fn_ctx_btf_arg): each field is a plain load the verifier guards (a
 *   fault reads 0) instead of a helper call;
 * - FN_WALK_CAST: the same after bpf_rdonly_cast (6.2) makes the number a
 *   BTF pointer of the slot's argument type.
 * Passed as a constant, so each program is compiled to one of them; with
 * any other than FN_WALK_CAST no kfunc call is compiled in.
 */
enum fn_walk {
	FN_WALK_READ,
	FN_WALK_LOAD,
	FN_WALK_CAST,
};

/* The argument p as a pointer to type, cast by the kfunc under FN_WALK_CAST. */
#define FN_ARG(walk, type, p)                                                           \
	((type *)((walk) == FN_WALK_CAST                                                \
			  ? bpf_rdonly_cast((void *)(p), bpf_core_type_id_kernel(type)) \
			  : (void *)(p)))

/* Field of a pointer the walk reached. */
#define FN_FIELD(walk, p, field) ((walk) == FN_WALK_READ ? BPF_CORE_READ((p), field) : (p)->field)

/*
 * Walk from an argument of kind to its superblock. with_fid: read the FID
 * too under --file-id (FN_WALK_READ only: it is found at offsets outside
 * any BTF type, so the other walks are not used under --file-id).
 */
static __always_inline void fn_target_walk(__u8 kind, void *target, enum fn_walk walk,
					   bool with_fid, struct fn_target *t)
{
	struct kiocb *iocb;
	struct file *file;
	struct path *path;
	struct dentry *dentry = NULL;
	struct inode *inode = NULL;
	struct super_block *sb;

	if (!target)
		return;
	/* One step per statement: CO-RE reads do not nest. */
	switch (kind) {
	case LES_FN_ARG_FILE:
		file = FN_ARG(walk, struct file, target);
		inode = FN_FIELD(walk, file, f_inode);
		break;
	case LES_FN_ARG_KIOCB:
		iocb = FN_ARG(walk, struct kiocb, target);
		file = FN_FIELD(walk, iocb, ki_filp);
		inode = file ? FN_FIELD(walk, file, f_inode) : NULL;
		break;
	case LES_FN_ARG_INODE:
		inode = FN_ARG(walk, struct inode, target);
		break;
	case LES_FN_ARG_DENTRY:
		dentry = FN_ARG(walk, struct dentry, target);
		break;
	case LES_FN_ARG_PATH:
		path = FN_ARG(walk, struct path, target);
		dentry = FN_FIELD(walk, path, dentry);
		break;
	default:
		return;
	}
	if (dentry) {
		sb = FN_FIELD(walk, dentry, d_sb);
		inode = FN_FIELD(walk, dentry, d_inode); /* NULL when negative */
	} else if (inode) {
		sb = FN_FIELD(walk, inode, i_sb);
	} else {
		return;
	}
	if (walk == FN_WALK_READ && want_file_id && inode) {
		t->ino = BPF_CORE_READ(inode, i_ino);
		if (with_fid)
			fn_lustre_fid(inode, &t->fid);
	}
	t->inode = inode;
	t->dev = sb ? FN_FIELD(walk, sb, s_dev) : 0;
}

/*
 * A read or write of a file (its ->read_iter, ->write_iter, splice): the
 * current task becomes the file's cause, for the requests of its pages
 * that kernel threads build later (writeback, read-ahead). Lustre takes
 * the job ID it sends for them the same way (vvp_io_init, lli_jobinfo).
 */
static __always_inline void fn_note_cause(__u8 flags, __u8 kind, const struct fn_target *t,
					  enum fn_walk walk)
{
	struct inode *inode = t->inode;

	/* Read-only data: gone from the programs of slots without it. */
	if (!(flags & LES_FN_F_CAUSE))
		return;
	if (kind != LES_FN_ARG_KIOCB && kind != LES_FN_ARG_FILE)
		return;
	/* The entry found the inode already; the number too under --file-id. */
	if (!inode)
		return;
	if (want_file_id)
		file_cause_remember((__u64)inode, t->ino);
	else
		file_cause_remember((__u64)inode, FN_FIELD(walk, inode, i_ino));
}

/* Is the frame that of an ->atomic_open? */
static __always_inline bool fn_frame_is_atomic_open(const struct op_frame *f)
{
	__u32 slot;

	if (f->key >= 0)
		return false;
	slot = (__u32)(-f->key - 1);
	return FN_DESC(slot).flags & LES_FN_F_ATOMIC_OPEN;
}

/*
 * The op as the entry sees it. Inside an ->atomic_open the VFS may call
 * ->open (finish_open) and the filesystem may call its own ->lookup: the
 * open is the atomic_open's own (it reports it, with the whole latency);
 * a lookup is an op of its own, and the atomic_open remembers it ran.
 * A probed function inside another of the same op on the same mount is
 * the same user op (Lustre's ll_get_acl calls ll_get_inode_acl, its
 * trusted./lustre. xattr handlers call the *_common ones): the outer one
 * reports it.
 */
static __always_inline __u32 fn_entry_op(__u32 op, struct op_frame *parent, __u32 dev)
{
	if (parent && parent->key < 0 && parent->dev == dev && (parent->op & FN_OP_MASK) == op)
		return FN_OP_SILENT;
	if (!parent || !fn_frame_is_atomic_open(parent))
		return op;
	if (op == LES_OP_OPEN)
		return FN_OP_SILENT;
	if (op == LES_OP_LOOKUP)
		parent->op |= FN_FRAME_CHILD_LOOKUP;
	return op;
}

/*
 * Entry of the function of slot: target, aux and open_flags as fn_desc
 * says, t where target leads (found by walk).
 */
static __always_inline int fn_enter(__u32 slot, __u64 target, __u64 aux, __u64 open_flags,
				    const struct fn_target *t, enum fn_walk walk)
{
	__u8 flags = FN_DESC(slot).flags;
	__u64 pid_tgid, now;
	struct op_frame *frame, *parent = NULL;
	struct thread_ops *ops;
	__u32 tid, depth, dev = t->dev, op;

	if (!dev_observed(dev))
		return 0;
	pid_tgid = bpf_get_current_pid_tgid();
	tid = (__u32)pid_tgid;
	if (task_filtered_out(pid_tgid >> 32)) {
		count(LES_CNT_FILTERED);
		return 0;
	}
	ops = thread_ops_get_or_create(tid, pid_tgid >> 32);
	if (!ops)
		return 0;
	depth = ops->depth;
	if (depth >= LES_MAX_DEPTH) {
		count(LES_CNT_DEPTH_OVERFLOW);
		return 0;
	}
	if (depth)
		parent = &ops->frame[(depth - 1) & (LES_MAX_DEPTH - 1)];
	op = flags & LES_FN_F_CONTEXT ? FN_OP_SILENT : fn_entry_op(FN_DESC(slot).op, parent, dev);
	if (flags & LES_FN_F_ATOMIC_OPEN) {
		if (open_flags & FN_O_CREAT)
			op |= FN_FRAME_CREAT;
		if (open_flags & FN_O_EXCL)
			op |= FN_FRAME_EXCL;
	}
	now = bpf_ktime_get_ns();
	barrier_var(depth);
	frame = &ops->frame[depth & (LES_MAX_DEPTH - 1)];
	frame->start_ns = now;
	/*
	 * A silent op (the ->open inside an ->atomic_open, a context probe)
	 * is part of its parent's record: requests sent inside it link to the
	 * parent's id, or to none without a parent.
	 */
	if ((op & FN_OP_MASK) == FN_OP_SILENT)
		frame->op_id = parent ? parent->op_id : 0;
	else
		frame->op_id = next_op_id();
	frame->rpc_wait_ns = 0;
	frame->rpc_count = 0;
	frame->dev = dev;
	frame->ino = t->ino;
	frame->fid = t->fid;
	frame->op = op;
	frame->key = fn_key(slot);
	frame->target = target;
	/* The exit needs it and a kretprobe cannot see the arguments. */
	frame->arg = flags & (LES_FN_F_LOOKUP | LES_FN_F_ATOMIC_OPEN) ? aux : 0;
	ops->depth = depth + 1;
	ops->updated_ns = now;
	current_comm(ops->comm, les_have_task_btf());
	fn_note_cause(flags, FN_DESC(slot).kind, t, walk);
	return 0;
}

/* Positive errno of a return value, 0 on success. */
static __always_inline __s32 fn_errno(__u8 ret_kind, __u64 ret)
{
	__s64 sret = (__s64)ret;
	__s32 iret = (__s32)ret;

	switch (ret_kind) {
	case LES_FN_RET_INT:
		/* Only the low 32 bits of the register carry an int. */
		return iret < 0 && iret >= -FN_MAX_ERRNO ? -iret : 0;
	case LES_FN_RET_LONG:
	case LES_FN_RET_BYTES:
	case LES_FN_RET_PTR:
		/* A kernel pointer is never an error: only the IS_ERR range is. */
		return sret < 0 && sret >= -FN_MAX_ERRNO ? (__s32)-sret : 0;
	}
	return 0;
}

/*
 * What an ->atomic_open did, decided when it returns: created the file
 * (the filesystem set FMODE_CREATED; open(O_CREAT | O_EXCL) that opened
 * certainly created, the rule of the syscall plane too), opened it (f_op
 * set by finish_open), only looked the name up (finish_no_open), or failed.
 */
static __always_inline __u32 fn_atomic_open_op(const struct op_frame *frame, __s32 err)
{
	struct file *file = (struct file *)frame->arg;

	if (err)
		return LES_OP_OPEN;
	if (file && BPF_CORE_READ(file, f_op)) {
		if ((BPF_CORE_READ(file, f_mode) & LES_FMODE_CREATED) ||
		    (frame->op & (FN_FRAME_CREAT | FN_FRAME_EXCL)) ==
			    (FN_FRAME_CREAT | FN_FRAME_EXCL))
			return LES_OP_CREATE;
		return LES_OP_OPEN;
	}
	/* The lookup it ran has its own record; the open comes by ->open. */
	if (frame->op & FN_FRAME_CHILD_LOOKUP)
		return FN_OP_SILENT;
	return LES_OP_LOOKUP;
}

/* A ->lookup that succeeded without finding the name left a negative dentry. */
static __always_inline __s32 fn_lookup_errno(const struct op_frame *frame, __u64 ret)
{
	struct dentry *result = ret ? (struct dentry *)ret : (struct dentry *)frame->arg;

	if (result && !BPF_CORE_READ(result, d_inode))
		return FN_ENOENT;
	return 0;
}

static __always_inline void fn_emit(const struct thread_ops *ops, const struct op_frame *frame,
				    __u32 op, __u8 method, __u64 bytes, __s32 err, __u64 now,
				    __u64 pid_tgid)
{
	struct les_rec_access *rec;
	__u64 latency = now - frame->start_ns;

	if (access_filtered_out(op, latency)) {
		count(LES_CNT_FILTERED);
		return;
	}
	rec = reserve(sizeof(*rec));
	if (!rec)
		return;
	rec->kind = LES_REC_ACCESS;
	rec->op = op;
	rec->method = method;
	rec->flags = frame->fid.seq ? LES_ACCESS_F_FID : 0;
	rec->fid = frame->fid;
	rec->ts_ns = now;
	rec->latency_ns = latency;
	rec->bytes = bytes;
	rec->op_id = frame->op_id;
	rec->rpc_wait_ns = frame->rpc_wait_ns;
	rec->ino = frame->ino;
	rec->cgroup_id = bpf_get_current_cgroup_id();
	rec->dev = frame->dev;
	rec->rpc_count = frame->rpc_count;
	rec->err = err;
	rec->_pad = 0;
	fill_op_task(&rec->task, pid_tgid, les_current_uid_gid(les_have_task_btf()), ops);
	submit(rec);
}

/*
 * Index of this function's frame on the thread's stack, or -1. Frames above
 * it belong to calls whose exit was never seen (a missed kretprobe).
 */
static __always_inline int fn_find_frame(const struct thread_ops *ops, __s32 key)
{
	__u32 depth = ops->depth;

#pragma unroll
	for (int i = LES_MAX_DEPTH - 1; i >= 0; i--) {
		if ((__u32)i < depth && ops->frame[i].key == key)
			return i;
	}
	return -1;
}

/*
 * Exit of the function of slot with return value ret. fexit sees the
 * call's target (has_target): its frame must hold the same one, and a call
 * without a frame is counted as an exit without entry only when the target
 * was on an observed mount. Its mount is asked only then: the frame found
 * says it already, which saves the exit the walk to the superblock. A
 * kretprobe cannot see the arguments: its exit without a frame is counted
 * when it interrupts another function op.
 */
static __always_inline int fn_exit(__u32 slot, __u64 ret, __u8 method, bool has_target,
				   __u64 target)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct thread_ops *ops = thread_ops_get((__u32)pid_tgid);
	const struct op_frame *frame;
	__u64 now, bytes = 0;
	__s32 err;
	__u32 op;
	int idx;

	if (!ops)
		return 0;
	idx = fn_find_frame(ops, fn_key(slot));
	/* The same function around this call, for another target: not this call's frame. */
	if (idx >= 0 && has_target && ops->frame[idx & (LES_MAX_DEPTH - 1)].target != target)
		return 0;
	if (idx < 0) {
		const struct op_frame *top = current_frame(ops);
		struct fn_target t = {};

		if (has_target)
			fn_target_walk(FN_DESC(slot).kind, (void *)target, FN_WALK_READ, false, &t);
		if (has_target ? dev_observed(t.dev) : top && top->key < 0)
			count(LES_CNT_EXIT_NO_ENTRY);
		return 0;
	}
	/* Unrolled by hand: 6.1's verifier refuses the loop clang makes of it. */
	if (ops->depth > (__u32)idx + 1)
		count(LES_CNT_ENTRY_REPLACED);
	if (ops->depth > (__u32)idx + 2)
		count(LES_CNT_ENTRY_REPLACED);
	if (ops->depth > (__u32)idx + 3)
		count(LES_CNT_ENTRY_REPLACED);
	ops->depth = idx;
	now = bpf_ktime_get_ns();
	frame = &ops->frame[idx & (LES_MAX_DEPTH - 1)];
	op = frame->op & FN_OP_MASK;
	if (op == FN_OP_SILENT) {
		/* Its request waits belong to the record of the op around it. */
		if (idx > 0) {
			struct op_frame *outer = &ops->frame[(idx - 1) & (LES_MAX_DEPTH - 1)];

			outer->rpc_wait_ns += frame->rpc_wait_ns;
			outer->rpc_count += frame->rpc_count;
		}
		return 0;
	}
	err = fn_errno(FN_DESC(slot).ret, ret);
	/* -ECHILD: the VFS retries the call out of RCU walk; not the user's error. */
	if (err == FN_ECHILD)
		return 0;
	if (FN_DESC(slot).ret == LES_FN_RET_BYTES && !err && (__s64)ret > 0)
		bytes = ret;
	if ((FN_DESC(slot).flags & LES_FN_F_LOOKUP) && !err)
		err = fn_lookup_errno(frame, ret);
	if (FN_DESC(slot).flags & LES_FN_F_ATOMIC_OPEN) {
		op = fn_atomic_open_op(frame, err);
		if (op == FN_OP_SILENT)
			return 0;
	}
	fn_emit(ops, frame, op, method, bytes, err, now, pid_tgid);
	return 0;
}

/* --- fentry/fexit twins -------------------------------------------------- */

/*
 * The per-method wrappers below are BPF subprograms (__noinline): each
 * slot's program is a call with its slot number, so the object carries the
 * handlers once instead of 4 x LES_FN_SLOTS times (an object of a few
 * hundred kilobytes, not megabytes: opening it is what start-up waits on).
 * The verifier still checks a wrapper per program, with that program's
 * constant slot.
 */

/*
 * Argument i of an fentry/fexit program, and an fexit's return value (at
 * index nargs), as plain numbers. Since 5.17 the verifier turns
 * bpf_get_func_arg/bpf_get_func_ret into two loads from the trampoline's
 * frame; before, a probe read (fn_ctx_arg). The enum value says which
 * kernel this is when the program loads, so the other branch is dropped.
 */
static __always_inline __u64 fn_arg(__u64 *ctx, __u32 i)
{
	__u64 val = 0;

	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_func_arg))
		return fn_ctx_arg(ctx, i);
	bpf_get_func_arg(ctx, i, &val);
	return val;
}

static __always_inline __u64 fn_ret(__u64 *ctx, __u32 nargs)
{
	__u64 val = 0;

	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_func_ret))
		return fn_ctx_arg(ctx, nargs);
	bpf_get_func_ret(ctx, &val);
	return val;
}

/*
 * Argument i of an fentry program as the verifier types it from the
 * function's prototype: a pointer to a kernel structure is a BTF pointer.
 * One load at an offset written in the instruction, which clang cannot
 * merge into a load at a computed offset (les_ctx_reg says why).
 */
#define fn_ctx_btf_load(ctx, i)                                                           \
	({                                                                                \
		void *v_;                                                                 \
		asm volatile("%0 = *(u64 *)(%1 + %2)" : "=r"(v_) : "r"(ctx), "i"((i)*8)); \
		v_;                                                                       \
	})

static __always_inline void *fn_ctx_btf_arg(__u64 *ctx, __u32 i)
{
	switch (i) {
	case 0:
		return fn_ctx_btf_load(ctx, 0);
	case 1:
		return fn_ctx_btf_load(ctx, 1);
	case 2:
		return fn_ctx_btf_load(ctx, 2);
	case 3:
		return fn_ctx_btf_load(ctx, 3);
	case 4:
		return fn_ctx_btf_load(ctx, 4);
	case 5:
		return fn_ctx_btf_load(ctx, 5);
	}
	return NULL;
}

/*
 * The target stays a number for the frame (compared and stored, which the
 * verifier allows a BTF pointer only with pointer leaks allowed); the walk
 * to the superblock starts from its typed twin, except under --file-id.
 */
static __noinline int fn_fentry(__u64 *ctx, __u32 slot)
{
	__u8 flags = FN_DESC(slot).flags, kind = FN_DESC(slot).kind;
	__u64 aux = 0, open_flags = 0, target = fn_arg(ctx, FN_DESC(slot).arg);
	struct fn_target t = {};

	if (flags & (LES_FN_F_LOOKUP | LES_FN_F_ATOMIC_OPEN))
		aux = fn_arg(ctx, FN_DESC(slot).aux_arg);
	if (flags & LES_FN_F_ATOMIC_OPEN)
		open_flags = fn_arg(ctx, FN_DESC(slot).flags_arg);
	if (want_file_id) {
		fn_target_walk(kind, (void *)target, FN_WALK_READ, true, &t);
		return fn_enter(slot, target, aux, open_flags, &t, FN_WALK_READ);
	}
	fn_target_walk(kind, fn_ctx_btf_arg(ctx, FN_DESC(slot).arg), FN_WALK_LOAD, false, &t);
	return fn_enter(slot, target, aux, open_flags, &t, FN_WALK_LOAD);
}

static __noinline int fn_fexit(__u64 *ctx, __u32 slot)
{
	return fn_exit(slot, fn_ret(ctx, FN_DESC(slot).nargs), LES_ATTACH_FENTRY, true,
		       fn_arg(ctx, FN_DESC(slot).arg));
}

/* --- kprobe/kretprobe twins ---------------------------------------------- */

/* Argument i from the registers: a plain context load (les_ctx_reg, compat.h). */
static __always_inline __u64 fn_regs_arg(struct pt_regs *ctx, __u32 i)
{
	switch (i) {
	case 0:
		return les_ctx_reg(ctx, __PT_PARM1_REG);
	case 1:
		return les_ctx_reg(ctx, __PT_PARM2_REG);
	case 2:
		return les_ctx_reg(ctx, __PT_PARM3_REG);
	case 3:
		return les_ctx_reg(ctx, __PT_PARM4_REG);
	case 4:
		return les_ctx_reg(ctx, __PT_PARM5_REG);
	}
	return 0;
}

/*
 * cast: the kprobe_multi entry of a kernel with bpf_rdonly_cast (6.2), whose
 * walk to the superblock is loads (FN_WALK_CAST); a program of its own,
 * chosen by userspace (kernel fact rdonly_cast), because 6.1's verifier
 * refuses an unresolved kfunc call even where it cannot run.
 */
static __always_inline int fn_kprobe_common(struct pt_regs *ctx, __u32 slot, bool cast)
{
	__u8 flags = FN_DESC(slot).flags;
	__u64 aux = 0, open_flags = 0, target;
	struct fn_target t = {};

	if (flags & (LES_FN_F_LOOKUP | LES_FN_F_ATOMIC_OPEN))
		aux = fn_regs_arg(ctx, FN_DESC(slot).aux_arg);
	if (flags & LES_FN_F_ATOMIC_OPEN)
		open_flags = fn_regs_arg(ctx, FN_DESC(slot).flags_arg);
	target = fn_regs_arg(ctx, FN_DESC(slot).arg);
	if (cast && !want_file_id) {
		fn_target_walk(FN_DESC(slot).kind, (void *)target, FN_WALK_CAST, false, &t);
		return fn_enter(slot, target, aux, open_flags, &t, FN_WALK_CAST);
	}
	fn_target_walk(FN_DESC(slot).kind, (void *)target, FN_WALK_READ, true, &t);
	return fn_enter(slot, target, aux, open_flags, &t, FN_WALK_READ);
}

static __noinline int fn_kprobe(struct pt_regs *ctx, __u32 slot)
{
	return fn_kprobe_common(ctx, slot, false);
}

static __noinline int fn_kprobe_cast(struct pt_regs *ctx, __u32 slot)
{
	return fn_kprobe_common(ctx, slot, true);
}

static __noinline int fn_kretprobe(struct pt_regs *ctx, __u32 slot)
{
	return fn_exit(slot, PT_REGS_RC(ctx), LES_ATTACH_KPROBE, false, 0);
}

/* One slot: its fentry, fexit, kprobe and kretprobe programs. */
#define FN_SLOT(n)                                \
	SEC("fentry")                             \
	int fn_fentry_##n(__u64 *ctx)             \
	{                                         \
		return fn_fentry(ctx, n);         \
	}                                         \
	SEC("fexit")                              \
	int fn_fexit_##n(__u64 *ctx)              \
	{                                         \
		return fn_fexit(ctx, n);          \
	}                                         \
	SEC("kprobe")                             \
	int fn_kprobe_##n(struct pt_regs *ctx)    \
	{                                         \
		return fn_kprobe(ctx, n);         \
	}                                         \
	SEC("kretprobe")                          \
	int fn_kretprobe_##n(struct pt_regs *ctx) \
	{                                         \
		return fn_kretprobe(ctx, n);      \
	}

/* Slots b0 to b9. */
#define FN_SLOTS_10(b) \
	FN_SLOT(b##0)  \
	FN_SLOT(b##1)  \
	FN_SLOT(b##2)  \
	FN_SLOT(b##3)  \
	FN_SLOT(b##4)  \
	FN_SLOT(b##5)  \
	FN_SLOT(b##6)  \
	FN_SLOT(b##7)  \
	FN_SLOT(b##8)  \
	FN_SLOT(b##9)

/* Slots 0-95: LES_FN_SLOTS. */

FN_SLOT(0)
FN_SLOT(1)
FN_SLOT(2)
FN_SLOT(3)
FN_SLOT(4)
FN_SLOT(5)
FN_SLOT(6)
FN_SLOT(7)
FN_SLOT(8)
FN_SLOT(9)
FN_SLOTS_10(1)
FN_SLOTS_10(2)
FN_SLOTS_10(3)
FN_SLOTS_10(4)
FN_SLOTS_10(5)
FN_SLOTS_10(6)
FN_SLOTS_10(7)
FN_SLOTS_10(8)
FN_SLOT(90)
FN_SLOT(91)
FN_SLOT(92)
FN_SLOT(93)
FN_SLOT(94)
FN_SLOT(95)

_Static_assert(LES_FN_SLOTS == 96 && LES_FN_SLOTS <= FN_DESC_LEN,
	       "FN_SLOT expansions above must match LES_FN_SLOTS");

/* --- kprobe_multi: every slot through one link, the slot as cookie -------- */

/* The slot a kprobe_multi link's cookie names, or -1. */
static __always_inline int fn_multi_slot(struct pt_regs *ctx)
{
	__u64 slot = bpf_get_attach_cookie(ctx);

	return slot < LES_FN_SLOTS ? (int)slot : -1;
}

SEC("kprobe.multi")
int fn_kprobe_multi(struct pt_regs *ctx)
{
	int slot = fn_multi_slot(ctx);

	return slot < 0 ? 0 : fn_kprobe(ctx, slot);
}

/* The same where the kernel has bpf_rdonly_cast (fn_kprobe_cast). */
SEC("kprobe.multi")
int fn_kprobe_multi_cast(struct pt_regs *ctx)
{
	int slot = fn_multi_slot(ctx);

	return slot < 0 ? 0 : fn_kprobe_cast(ctx, slot);
}

SEC("kretprobe.multi")
int fn_kretprobe_multi(struct pt_regs *ctx)
{
	int slot = fn_multi_slot(ctx);

	return slot < 0 ? 0 : fn_kretprobe(ctx, slot);
}

#endif /* LES_ACCESS_FN_BPF_H */
