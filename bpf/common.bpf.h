/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Maps, settings and helpers shared by every plane's programs. */
#ifndef LES_COMMON_BPF_H
#define LES_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "les_record.h"
#include "les_maps.h"
#include "compat.h"

/* --- settings, written by userspace between open and load --------------- */

/* Wake the consumer only when this much data is pending (0: every record). */
const volatile __u64 wakeup_bytes = 1 << 20;
/* Only ops at least this slow are emitted (0: all). */
const volatile __u64 min_latency_ns = 0;
/* Only this uid (-1: all). */
const volatile __s64 filter_uid = -1;
/* Only this thread group (0: all). */
const volatile __u32 filter_pid = 0;
/* Fill dev/ino of the file in access records. */
const volatile bool want_file_id = false;
/* struct ll_inode_info's lli_vfs_inode and lli_fid (0: unknown), from the lustre module's BTF */
const volatile __u32 lustre_lli_vfs_inode_off = 0;
const volatile __u32 lustre_lli_fid_off = 0;
/* Access ops reported, bit 1 << enum les_access_op (--op, --intent). */
const volatile __u32 filter_access_ops = ~0u;
/*
 * FUSE requests reported, bit per opcode below 128, and whether opcodes
 * from 128 (cuse_init) are: the requests serving the access ops reported.
 */
const volatile __u64 filter_fuse_opcodes[2] = { ~0ULL, ~0ULL };
const volatile bool filter_fuse_high = true;
/* Only tasks with this comm, NUL-padded (--comm; filter_comm_on false: all). */
const volatile bool filter_comm_on = false;
const volatile __u64 filter_comm[2] = {};

/* --- maps ---------------------------------------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* resized by userspace */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LES_CNT_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/*
 * Superblock devs of observed mounts -> what function probes cover there. Room for two
 * selections: a change adds the new mounts before it takes the old out.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * LES_MAX_MOUNTS);
	__type(key, __u32);
	__type(value, struct les_observed_val);
} observed SEC(".maps");

/* Mount points of observed mounts, for path-based syscalls. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LES_MAX_MOUNTS);
	__type(key, __u32);
	__type(value, struct les_mount_path);
} mount_paths SEC(".maps");


struct {
	/* LRU: threads that touched an observed mount long ago make room. */
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384); /* resized by userspace */
	__type(key, __u32); /* tid */
	__type(value, struct thread_ops);
} thread_ops SEC(".maps");

/* Zeroed template for new thread_ops entries (too large for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct thread_ops);
} thread_ops_zero SEC(".maps");

/* Sequence for op ids: per CPU, so no cache line bounces between CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} op_seq SEC(".maps");

/*
 * File (struct inode *) -> who last read or wrote it (struct file_cause):
 * written by the access plane at each read and write, read by PtlRPC when
 * a kernel thread builds a bulk request of the file's pages. Lustre keeps
 * the same per inode (lli_jobinfo) for the job ID it sends. LRU: files
 * untouched for long make room; a request of a file no longer here keeps
 * its builder (and the job ID Lustre sent, see les_enrich_wire_job).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct file_cause);
} file_cause SEC(".maps");

/* --- helpers ------------------------------------------------------------- */

#define LES_PF_KTHREAD 0x00200000 /* include/linux/sched.h */

static __always_inline bool current_is_kthread(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(task, flags) & LES_PF_KTHREAD;
}

static __always_inline void count(__u32 slot)
{
	__u64 *val = bpf_map_lookup_elem(&counters, &slot);

	if (val)
		*val += 1; /* per-CPU slot: no atomic needed */
}

static __always_inline void count_probe(__u32 probe)
{
	count(LES_CNT_PROBE_BASE + probe);
}

static __always_inline const struct les_observed_val *observed_get(__u32 dev)
{
	return dev ? bpf_map_lookup_elem(&observed, &dev) : NULL;
}

static __always_inline bool dev_observed(__u32 dev)
{
	return observed_get(dev) != NULL;
}

/* Unique within the run, never 0: per-CPU sequence with the CPU in the low bits. */
static __always_inline __u64 next_op_id(void)
{
	__u32 zero = 0;
	__u64 *seq = bpf_map_lookup_elem(&op_seq, &zero);

	if (!seq)
		return 0;
	*seq += 1;
	return (*seq << 12) | (bpf_get_smp_processor_id() & 0xfff);
}

static __always_inline void fill_current_task(struct les_task *t)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 uid_gid = bpf_get_current_uid_gid();

	t->pid = pid_tgid >> 32;
	t->tid = (__u32)pid_tgid;
	t->uid = (__u32)uid_gid;
	t->gid = uid_gid >> 32;
	bpf_get_current_comm(t->comm, sizeof(t->comm));
}

/*
 * Whether the running kernel has bpf_get_current_task_btf() (5.11). The
 * function probes' programs ask it of the kernel's BTF at load; the other
 * branch of each use is dead code the verifier drops.
 */
#define les_have_task_btf() bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)

/*
 * The bytes of an 8-byte piece of a comm up to its first NUL, the rest
 * zeroed; *nul tells whether it had one. The lowest bit that
 * (w - 0x01..) & ~w & 0x80.. sets is bit 7 of the first zero byte.
 */
static __always_inline __u64 comm_word_padded(__u64 w, bool *nul)
{
	__u64 zeros = (w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL;

	*nul = zeros != 0;
	return w & (((zeros & -zeros) >> 7) - 1);
}

/*
 * The current task's comm, NUL-padded as bpf_get_current_comm() leaves it.
 * With a BTF task (btf) it is two loads instead of a helper call; the
 * padding is made here because older kernels copied a new comm with
 * strlcpy, which leaves the old name's bytes after the NUL.
 */
static __always_inline void current_comm(char comm[LES_COMM_LEN], bool btf)
{
	const __u64 *src;
	__u64 w0, w1 = 0;
	bool nul;

	if (!btf) {
		bpf_get_current_comm(comm, LES_COMM_LEN);
		return;
	}
	src = (const __u64 *)bpf_get_current_task_btf()->comm;
	w0 = comm_word_padded(src[0], &nul);
	if (!nul)
		w1 = comm_word_padded(src[1], &nul);
	__builtin_memcpy(comm, &w0, sizeof(w0));
	__builtin_memcpy(comm + sizeof(w0), &w1, sizeof(w1));
}

/*
 * The current task read or writes inode (ino): it is the file's cause now.
 * A thread that keeps writing one file updates nothing.
 */
static __always_inline void file_cause_remember(__u64 inode, __u64 ino)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct file_cause c = {}, *old;

	if (!inode)
		return;
	old = bpf_map_lookup_elem(&file_cause, &inode);
	if (old && old->task.tid == (__u32)pid_tgid && old->ino == ino)
		return;
	c.ino = ino;
	c.cgroup_id = bpf_get_current_cgroup_id();
	fill_current_task(&c.task);
	bpf_map_update_elem(&file_cause, &inode, &c, BPF_ANY);
}

/*
 * The task of an access record at its exit: the comm was taken when the op
 * entered (or, for a pending frame, when its exit placed it), so it is not
 * read again; pid_tgid is what the exit already asked for, uid_gid as
 * bpf_get_current_uid_gid() gives it (or les_current_uid_gid()).
 */
static __always_inline void fill_op_task(struct les_task *t, __u64 pid_tgid, __u64 uid_gid,
					 const struct thread_ops *ops)
{
	t->pid = pid_tgid >> 32;
	t->tid = (__u32)pid_tgid;
	t->uid = (__u32)uid_gid;
	t->gid = uid_gid >> 32;
	__builtin_memcpy(t->comm, ops->comm, LES_COMM_LEN);
}

/* comm as bpf_get_current_comm leaves it: NUL-padded to LES_COMM_LEN. */
static __always_inline bool comm_filtered_out(const char *comm)
{
	__u64 w[2];

	if (!filter_comm_on)
		return false;
	__builtin_memcpy(w, comm, sizeof(w));
	return w[0] != filter_comm[0] || w[1] != filter_comm[1];
}

/* --pid, --uid and --comm of the current task. */
/* The tool's own process: what it does on a mount is not user activity. */
const volatile __u32 self_tgid = 0;

/*
 * The uid is asked only when --uid is given: the helper maps it through
 * the user namespace, which the profile of a traced op showed as 4 % of it.
 */
static __always_inline bool task_filtered_out(__u32 tgid)
{
	char comm[LES_COMM_LEN];

	if (tgid == self_tgid)
		return true;
	if (filter_pid && tgid != filter_pid)
		return true;
	if (filter_uid >= 0 && (__u32)bpf_get_current_uid_gid() != (__u32)filter_uid)
		return true;
	if (filter_comm_on) {
		bpf_get_current_comm(comm, sizeof(comm));
		return comm_filtered_out(comm);
	}
	return false;
}

/* --pid, --uid and --comm of the task a request is attributed to. */
static __always_inline bool task_rec_filtered_out(const struct les_task *t)
{
	if (t->pid == self_tgid)
		return true;
	if (filter_pid && t->pid != filter_pid)
		return true;
	if (filter_uid >= 0 && t->uid != (__u32)filter_uid)
		return true;
	return comm_filtered_out(t->comm);
}

/* --min-latency, --op and --intent at the end of an access op. */
static __always_inline bool access_filtered_out(__u32 op, __u64 latency)
{
	return latency < min_latency_ns || op >= 32 || !(filter_access_ops & (1u << op));
}

/* --min-latency, and --op/--intent through the access op a FUSE request serves. */
static __always_inline bool fuse_filtered_out(__u32 opcode, __u64 latency)
{
	if (latency < min_latency_ns)
		return true;
	if (opcode >= 128)
		return !filter_fuse_high;
	return !(filter_fuse_opcodes[opcode >> 6] & (1ULL << (opcode & 63)));
}

/*
 * Set by userspace when the run ends, before it detaches the programs: the
 * detach takes them a link at a time (seconds for a few hundred fentry
 * links under qemu), and a record made meanwhile is half traced (a request
 * replied after its pack's and its LNet PUT's programs were gone has no
 * opcode and no LNet wait). So nothing is produced after the stop, and the
 * run's records end there.
 */
volatile __u32 les_stopped;

/* Reserve a record, counting the attempt and any failure. */
static __always_inline void *reserve(__u64 size)
{
	void *rec;

	if (les_stopped)
		return NULL;
	count(LES_CNT_PRODUCED);
	rec = bpf_ringbuf_reserve(&events, size, 0);
	if (!rec)
		count(LES_CNT_RB_DROPPED);
	return rec;
}

/* Ring-buffer bytes a record of size bytes takes: 8-byte header, 8-aligned. */
#define LES_RB_FOOTPRINT(size) (((size) + 8 + 7) & ~7ULL)

/*
 * Submit without waking the consumer unless enough is pending: a wakeup per
 * record costs the traced task microseconds (an IPI: a VM exit under a
 * hypervisor); the consumer polls on a short timeout anyway. Only the record
 * that makes the backlog cross a multiple of wakeup_bytes wakes it: waking
 * for every record above the threshold would put that cost on every op
 * exactly when the consumer is behind.
 */
static __always_inline void submit_sized(void *rec, __u64 size)
{
	__u64 flags = BPF_RB_NO_WAKEUP, pending;

	if (!wakeup_bytes) {
		flags = BPF_RB_FORCE_WAKEUP;
	} else {
		pending = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
		if (pending / wakeup_bytes != (pending - LES_RB_FOOTPRINT(size)) / wakeup_bytes)
			flags = BPF_RB_FORCE_WAKEUP;
	}
	bpf_ringbuf_submit(rec, flags);
}

#define submit(rec) submit_sized((rec), sizeof(*(rec)))

static __always_inline struct thread_ops *thread_ops_get(__u32 tid)
{
	return bpf_map_lookup_elem(&thread_ops, &tid);
}

static __always_inline struct thread_ops *thread_ops_get_or_create(__u32 tid, __u32 tgid)
{
	struct thread_ops *ops = bpf_map_lookup_elem(&thread_ops, &tid);
	__u32 zero = 0;

	if (ops)
		return ops;
	ops = bpf_map_lookup_elem(&thread_ops_zero, &zero);
	if (!ops)
		return NULL;
	ops->tgid = tgid;
	/* EEXIST from a racing creator is fine: look up what is there. */
	bpf_map_update_elem(&thread_ops, &tid, ops, BPF_NOEXIST);
	ops = bpf_map_lookup_elem(&thread_ops, &tid);
	if (!ops)
		count(LES_CNT_THREADS_FULL);
	return ops;
}

/* The access op in flight on thread tid, or NULL. */
static __always_inline struct op_frame *current_frame(struct thread_ops *ops)
{
	__u32 top;

	if (!ops || ops->depth == 0)
		return NULL;
	top = ops->depth - 1;
	if (top >= LES_MAX_DEPTH)
		return NULL;
	return &ops->frame[top];
}

/* Whether function probes already report op on this observed mount. */
static __always_inline bool fn_covers_op(const struct les_observed_val *ov, __u32 op)
{
	return op < 32 && (ov->fn_ops & (1u << op));
}

/*
 * Argument i of a tracing program's context, as a plain number: read
 * through the helper so that the verifier never sees a typed kernel pointer
 * (ORed, compared or negated later) whatever the function's prototype.
 */
static __always_inline __u64 fn_ctx_arg(__u64 *ctx, __u32 i)
{
	__u64 val = 0;

	bpf_probe_read_kernel(&val, sizeof(val), &ctx[i & 15]);
	return val;
}

#endif /* LES_COMMON_BPF_H */
