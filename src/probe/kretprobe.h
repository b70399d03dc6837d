/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Return probes with room for many callers at once. A kretprobe made
 * through the perf kprobe PMU (libbpf's default) keeps max(10, 2 x CPUs)
 * return instances: an op that blocks in more threads at once than that
 * (ptlrpc_queue_wait, ldlm_completion_ast, a read on a busy client) loses
 * its returns. A kretprobe created in tracefs takes maxactive ("rN:"), so
 * these are made there, attached as perf tracepoint events, counted
 * (tracefs kprobe_profile reports their misses) and removed at the end.
 */
#ifndef LES_KRETPROBE_H
#define LES_KRETPROBE_H

#include <stddef.h>
#include <stdint.h>

#define LES_KRETPROBES_MAX	160
#define LES_KRETPROBE_NAME_LEN	64
#define LES_KRETPROBE_MAXACTIVE 1024 /* the kernel allows up to 4096 */

struct bpf_program;
struct bpf_link;

struct les_kretprobes {
	char event[LES_KRETPROBES_MAX][LES_KRETPROBE_NAME_LEN]; /* created in kprobe_events */
	size_t n;
	unsigned int seq;
};

/*
 * Attach prog as a return probe of func with LES_KRETPROBE_MAXACTIVE
 * instances; NULL with errno set when tracefs cannot make it (the caller
 * then falls back to libbpf's own attach).
 */
struct bpf_link *les_kretprobe_attach(struct les_kretprobes *k, struct bpf_program *prog,
				      const char *func);
/* Returns these probes missed for want of an instance, from kprobe_profile. */
uint64_t les_kretprobes_missed(const struct les_kretprobes *k);
/* Remove the events (after their links are gone). */
void les_kretprobes_remove(struct les_kretprobes *k);
/*
 * Remove the events that runs killed before their cleanup left in
 * root/kprobe_events (les<PID>_*, the PID gone); returns how many. The
 * root is a parameter for the tests; the tool passes les_tracefs_root().
 */
int les_kretprobes_reap(const char *root);

#endif /* LES_KRETPROBE_H */
