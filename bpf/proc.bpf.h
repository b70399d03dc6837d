/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Process notices for enrichment. A process's job and tags are taken at
 * exec, from the new program's own environment, so records of a process
 * that exits at once (cat, cp, shell pipelines) still carry its job; forks
 * pass the parent's attribution on. Userspace reads /proc only for a
 * process missing from its cache (evicted, or its notice lost).
 */
#ifndef LES_PROC_BPF_H
#define LES_PROC_BPF_H

#include "common.bpf.h"

/* Notices are not records: their drops are counted apart. */
static __always_inline void *reserve_notice(__u64 size)
{
	void *rec;

	if (les_stopped)
		return NULL;
	rec = bpf_ringbuf_reserve(&events, size, 0);
	if (!rec)
		count(LES_CNT_NOTICE_DROPPED);
	return rec;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	unsigned long env_start, env_end, len;
	struct les_rec_proc *rec;
	struct mm_struct *mm;

	count_probe(LES_PROBE_SCHED_EXEC);
	rec = reserve_notice(sizeof(*rec));
	if (!rec)
		return 0;
	rec->kind = LES_REC_PROC_EXEC;
	rec->ts_ns = bpf_ktime_get_ns();
	rec->start_ns = BPF_CORE_READ(task, start_time);
	rec->cgroup_id = bpf_get_current_cgroup_id();
	rec->pid = BPF_CORE_READ(task, tgid);
	rec->ppid = BPF_CORE_READ(task, real_parent, tgid);
	rec->uid = (__u32)bpf_get_current_uid_gid();
	rec->flags = 0;
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	mm = BPF_CORE_READ(task, mm);
	env_start = BPF_CORE_READ(mm, env_start);
	env_end = BPF_CORE_READ(mm, env_end);
	len = env_end > env_start ? env_end - env_start : 0;
	if (len > LES_ENV_MAX) {
		len = LES_ENV_MAX;
		rec->flags |= LES_PROC_F_ENV_TRUNCATED;
	}
	barrier_var(len);
	if (len > LES_ENV_MAX)
		len = LES_ENV_MAX;
	if (len && bpf_probe_read_user(rec->env, len, (const void *)env_start))
		len = 0;
	rec->env_len = len;
	submit(rec);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(proc_fork, struct task_struct *parent, struct task_struct *child)
{
	struct les_rec_fork *rec;
	__u32 pid = BPF_CORE_READ(child, pid);

	/* Threads share their process's attribution: only new processes count. */
	if (pid != (__u32)BPF_CORE_READ(child, tgid))
		return 0;
	if (BPF_CORE_READ(child, flags) & LES_PF_KTHREAD)
		return 0;
	count_probe(LES_PROBE_SCHED_FORK);
	rec = reserve_notice(sizeof(*rec));
	if (!rec)
		return 0;
	rec->kind = LES_REC_PROC_FORK;
	rec->_pad = 0;
	rec->ts_ns = bpf_ktime_get_ns();
	rec->start_ns = BPF_CORE_READ(child, start_time);
	rec->pid = pid;
	rec->ppid = BPF_CORE_READ(parent, tgid);
	submit(rec);
	return 0;
}

#endif /* LES_PROC_BPF_H */
