/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Maps, settings and helpers shared by every plane's programs. */
#ifndef LES_COMMON_BPF_H
#define LES_COMMON_BPF_H

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

/* Superblock devs of observed mounts -> mount slot. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LES_MAX_MOUNTS);
	__type(key, __u32);
	__type(value, __u32);
} observed SEC(".maps");

/* Mount points of observed mounts, for path-based syscalls. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LES_MAX_MOUNTS);
	__type(key, __u32);
	__type(value, struct les_mount_path);
} mount_paths SEC(".maps");

/* One access op in flight on a thread. */
struct op_frame {
	__u64 start_ns;
	__u64 op_id;
	__u64 rpc_wait_ns;
	__u64 ino;
	__u32 dev;
	__u32 rpc_count;
	__u32 op; /* enum les_access_op */
	__s32 key; /* pairs entry with exit: syscall nr or function id */
	__u64 arg; /* entry argument the exit needs (e.g. open flags) */
};

/* Per-thread stack of access ops in flight, for nesting and linkage. */
struct thread_ops {
	__u64 updated_ns; /* for the userspace sweep of threads that died mid-op */
	__u32 depth;
	__u32 tgid;
	char comm[LES_COMM_LEN]; /* for requests sent on the thread's behalf */
	struct op_frame frame[LES_MAX_DEPTH];
};

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

/* --- helpers ------------------------------------------------------------- */

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

static __always_inline bool dev_observed(__u32 dev)
{
	return dev && bpf_map_lookup_elem(&observed, &dev) != NULL;
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

static __always_inline bool task_filtered_out(__u32 tgid, __u32 uid)
{
	if (filter_pid && tgid != filter_pid)
		return true;
	if (filter_uid >= 0 && uid != (__u32)filter_uid)
		return true;
	return false;
}

/* Reserve a record, counting the attempt and any failure. */
static __always_inline void *reserve(__u64 size)
{
	void *rec;

	count(LES_CNT_PRODUCED);
	rec = bpf_ringbuf_reserve(&events, size, 0);
	if (!rec)
		count(LES_CNT_RB_DROPPED);
	return rec;
}

/*
 * Submit without waking the consumer unless enough is pending: a wakeup per
 * record costs the traced task ~1.5 us; the consumer polls on a short
 * timeout anyway.
 */
static __always_inline void submit(void *rec)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (!wakeup_bytes || bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(rec, flags);
}

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

#endif /* LES_COMMON_BPF_H */
