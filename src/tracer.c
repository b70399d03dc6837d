// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Skeleton lifecycle, map programming, counters and sweeping. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "les.skel.h"
#include "syscalls.h"
#include "tracer.h"

/* Userspace views of the BPF maps' value types (see bpf/). */
struct fuse_inflight_key {
	__u32 dev;
	__u32 _pad;
	__u64 unique;
};

struct fuse_inflight {
	__u64 start_ns;
	__u64 parent_op_id;
	__u64 bytes_sent;
	__u64 cgroup_id;
	__u32 opcode;
	__u32 flags;
	__u32 worker_pid;
	__u32 _pad;
	struct les_task task;
	char worker_comm[LES_COMM_LEN];
};

struct op_frame {
	__u64 start_ns, op_id, rpc_wait_ns, ino;
	__u32 dev, rpc_count, op;
	__s32 key;
	__u64 arg;
};

struct thread_ops {
	__u64 updated_ns;
	__u32 depth;
	__u32 tgid;
	char comm[LES_COMM_LEN];
	struct op_frame frame[LES_MAX_DEPTH];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int les_tracer_open(struct les_tracer *t)
{
	memset(t, 0, sizeof(*t));
	t->skel = les_bpf__open();
	return t->skel ? 0 : -errno;
}

int les_tracer_configure(struct les_tracer *t, const struct les_options *o,
			 const struct les_probe_plan *plan)
{
	struct les_bpf *s = t->skel;
	struct bpf_program *prog;
	int err;

	s->rodata->wakeup_bytes = o->wakeup_bytes;
	s->rodata->min_latency_ns = o->min_latency_ns;
	s->rodata->filter_uid = o->filter_uid;
	s->rodata->filter_pid = o->filter_pid;
	s->rodata->want_file_id = o->file_id;

	err = bpf_map__set_max_entries(s->maps.events, (__u32)o->ringbuf_bytes);
	err = err ?: bpf_map__set_max_entries(s->maps.fuse_inflight, o->inflight_max);
	err = err ?: bpf_map__set_max_entries(s->maps.thread_ops, o->threads_max);
	if (err)
		return err;

	bpf_object__for_each_program(prog, s->obj) {
		bool want = les_probe_plan_wants(plan, bpf_program__name(prog),
						 bpf_program__section_name(prog));

		err = bpf_program__set_autoload(prog, want);
		if (err)
			return err;
	}
	return 0;
}

static int put_mount_path(int fd, __u32 slot, const struct les_observed_mount *m)
{
	struct les_mount_path mp;
	size_t len = m->mount_point ? strlen(m->mount_point) : 0;

	memset(&mp, 0, sizeof(mp));
	/* Longer mount points are matched through fds and the cwd only. */
	if (len < sizeof(mp.path)) {
		mp.len = (__u32)len;
		mp.dev = m->dev;
		memcpy(mp.path, m->mount_point, len);
	}
	return bpf_map_update_elem(fd, &slot, &mp, BPF_ANY) ? -errno : 0;
}

/* The syscall access plane's descriptors, by syscall number. */
static int put_syscalls(struct les_tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.syscalls);
	const struct les_syscall_entry *tab;
	size_t n;

	tab = les_syscall_table(&n);
	for (size_t i = 0; i < n; i++) {
		__u32 key = (__u32)tab[i].nr;

		if (tab[i].nr < 0 || tab[i].nr >= LES_SYS_MAX)
			continue;
		if (bpf_map_update_elem(fd, &key, &tab[i].desc, BPF_ANY))
			return -errno;
	}
	return 0;
}

int les_tracer_load(struct les_tracer *t)
{
	int err = les_bpf__load(t->skel);

	return err ?: put_syscalls(t);
}

int les_tracer_set_mounts(struct les_tracer *t, const struct les_observed *obs)
{
	int observed_fd = bpf_map__fd(t->skel->maps.observed);
	int paths_fd = bpf_map__fd(t->skel->maps.mount_paths);
	const struct les_observed_mount empty = { 0 };
	__u32 key, next;
	int err;

	/* Clear, then fill: mounts may have come and gone since the last call. */
	while (bpf_map_get_next_key(observed_fd, NULL, &next) == 0)
		bpf_map_delete_elem(observed_fd, &next);
	for (__u32 slot = 0; slot < LES_MAX_MOUNTS; slot++) {
		const struct les_observed_mount *m = slot < obs->n ? &obs->m[slot] : &empty;

		if (slot < obs->n) {
			key = m->dev;
			if (bpf_map_update_elem(observed_fd, &key, &slot, BPF_ANY))
				return -errno;
		}
		err = put_mount_path(paths_fd, slot, m);
		if (err)
			return err;
	}
	return 0;
}

int les_tracer_attach(struct les_tracer *t, int verbose)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, t->skel->obj) {
		struct bpf_link *link;

		if (!bpf_program__autoload(prog))
			continue;
		link = bpf_program__attach(prog);
		if (!link) {
			/* An optional probe missing degrades, it does not fail the start. */
			t->n_attach_failed++;
			if (verbose)
				fprintf(stderr, "lustre-ebpf-stream: warning: %s not attached: %s\n",
					bpf_program__name(prog), strerror(errno));
			continue;
		}
		if (t->n_links >= LES_MAX_LINKS) {
			bpf_link__destroy(link);
			return -E2BIG;
		}
		t->links[t->n_links++] = link;
	}
	return t->n_links ? 0 : -ENOENT;
}

int les_tracer_ring(struct les_tracer *t, int (*fn)(void *, void *, size_t), void *ctx)
{
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), fn, ctx, NULL);
	return t->rb ? 0 : -errno;
}

int les_tracer_poll(struct les_tracer *t, int timeout_ms)
{
	int n = ring_buffer__poll(t->rb, timeout_ms);

	if (n < 0)
		return n;
	/*
	 * Producers submit without waking us below the wakeup threshold, so
	 * an expired timeout still finds records waiting.
	 */
	return ring_buffer__consume(t->rb);
}

void les_tracer_read_stats(struct les_tracer *t, struct les_kernel_stats *ks)
{
	int ncpu = libbpf_num_possible_cpus();
	int fd = bpf_map__fd(t->skel->maps.counters);
	int inflight_fd = bpf_map__fd(t->skel->maps.fuse_inflight);
	struct fuse_inflight_key key, next;
	__u64 *percpu;
	__u64 n = 0;

	memset(ks, 0, sizeof(*ks));
	percpu = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*percpu)) : NULL;
	for (__u32 slot = 0; percpu && slot < LES_CNT_SLOTS; slot++) {
		if (bpf_map_lookup_elem(fd, &slot, percpu))
			continue;
		for (int cpu = 0; cpu < ncpu; cpu++)
			ks->counters[slot] += percpu[cpu];
	}
	free(percpu);
	for (void *prev = NULL; bpf_map_get_next_key(inflight_fd, prev, &next) == 0; prev = &key) {
		key = next;
		n++;
	}
	ks->inflight_fuse = n;
	ks->stale_swept = t->stale_swept;
	ks->threads_swept = t->threads_swept;
}

static void sweep_inflight(struct les_tracer *t, uint64_t cutoff)
{
	int fd = bpf_map__fd(t->skel->maps.fuse_inflight);
	struct fuse_inflight_key key, next, stale[256];
	struct fuse_inflight val;
	size_t n_stale = 0;

	for (void *prev = NULL; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &val) == 0 && val.start_ns < cutoff &&
		    n_stale < sizeof(stale) / sizeof(stale[0]))
			stale[n_stale++] = key;
	}
	/* Deleted after the walk: deleting during it restarts the iteration. */
	for (size_t i = 0; i < n_stale; i++)
		if (bpf_map_delete_elem(fd, &stale[i]) == 0)
			t->stale_swept++;
}

static void sweep_threads(struct les_tracer *t, uint64_t cutoff)
{
	int fd = bpf_map__fd(t->skel->maps.thread_ops);
	__u32 key, next, stale[256];
	struct thread_ops val;
	size_t n_stale = 0;

	for (void *prev = NULL; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &val) == 0 && val.depth &&
		    val.updated_ns < cutoff && n_stale < sizeof(stale) / sizeof(stale[0]))
			stale[n_stale++] = key;
	}
	for (size_t i = 0; i < n_stale; i++)
		if (bpf_map_delete_elem(fd, &stale[i]) == 0)
			t->threads_swept++;
}

void les_tracer_sweep(struct les_tracer *t, uint64_t max_age_ns)
{
	uint64_t now = mono_ns();
	uint64_t cutoff = now > max_age_ns ? now - max_age_ns : 0;

	sweep_inflight(t, cutoff);
	sweep_threads(t, cutoff);
}

void les_tracer_destroy(struct les_tracer *t)
{
	ring_buffer__free(t->rb);
	t->rb = NULL;
	for (size_t i = 0; i < t->n_links; i++)
		bpf_link__destroy(t->links[i]);
	t->n_links = 0;
	les_bpf__destroy(t->skel);
	t->skel = NULL;
}
