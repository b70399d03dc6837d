/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The BPF side as userspace sees it: skeleton lifecycle in four visible
 * steps (open -> configure -> load -> attach), the observed mounts pushed
 * into maps, counters read back, stale in-flight entries swept.
 */
#ifndef LES_TRACER_H
#define LES_TRACER_H

#include <stddef.h>
#include <stdint.h>
#include "model/kstats.h"
#include "probe/kretprobe.h"
#include "model/observed.h"
#include "probe/probes.h"

#define LES_MAX_LINKS 512 /* function pairs, per-syscall tracepoint pairs, RPC probes */

struct les_bpf;
struct ring_buffer;
struct bpf_link;

/*
 * What the function probes need after configure (the plan is gone by
 * then): per slot the function, its address and method; the ops each
 * family covers; the observed mounts, to tell the syscall fallback what to
 * leave out.
 */
struct les_tracer_fn {
	const char *func[LES_FN_SLOTS];
	unsigned long addr[LES_FN_SLOTS];
	enum les_attach_method method[LES_FN_SLOTS];
	enum les_fs_family family[LES_FN_SLOTS];
	enum les_access_op op[LES_FN_SLOTS];
	size_t n_slots;
	bool multi; /* kprobe slots through one kprobe_multi link pair */
	bool multi_cast; /* ... its entry program fn_kprobe_multi_cast */
	unsigned int covered[LES_FS_FAMILY_MAX];
	__u32 mount_dev[LES_MAX_MOUNTS];
	enum les_fs_family mount_family[LES_MAX_MOUNTS];
	size_t n_mounts;
	int verbose;
};

/*
 * What the BPF object is configured with before load: its maps' sizes and
 * the constants its programs decide by (filters, --file-id), so that the
 * verifier sees constants.
 */
struct les_tracer_config {
	uint64_t ringbuf_bytes;	 /* --ringbuf-size */
	uint64_t wakeup_bytes;	 /* --wakeup-bytes */
	uint32_t inflight_max;	 /* requests tracked in flight */
	uint32_t threads_max;	 /* threads tracked with ops in flight */
	uint64_t min_latency_ns; /* --min-latency */
	int64_t filter_uid;	 /* -1: all */
	uint32_t filter_pid;	 /* 0: all */
	const char *filter_comm; /* --comm, NULL: all */
	uint32_t filter_ops;	 /* --op: 1 << enum les_access_op, 0: all */
	uint32_t filter_intents; /* --intent: 1 << enum les_intent, 0: all */
	bool file_id;		 /* dev, ino and the Lustre FID in access records */
	const char *mountinfo_path; /* for tests; NULL: /proc/self/mountinfo */
	int verbose;
};

struct les_tracer {
	struct les_bpf *skel;
	/* Kept for a reload without the programs the kernel refused. */
	const struct les_tracer_config *cfg;
	const struct les_probe_plan *plan;
	struct les_refusals refused;
	struct les_kretprobes kretprobes; /* made in tracefs, with maxactive */
	uint64_t kretprobe_missed; /* their misses when they were removed */
	struct ring_buffer *rb;
	struct bpf_link *links[LES_MAX_LINKS];
	size_t n_links;
	size_t n_server_links; /* of them, the server rows' (rpcprobes.h): server records come */
	size_t n_attach_failed;
	uint64_t stale_swept;
	uint64_t threads_swept;
	struct les_tracer_fn fn;
};

int les_tracer_open(struct les_tracer *t);
/* cfg and plan must last until les_tracer_load returns. */
int les_tracer_configure(struct les_tracer *t, const struct les_tracer_config *cfg,
			 const struct les_probe_plan *plan);
/*
 * Load what the kernel takes: a program it refuses is turned off (its
 * kprobe twin turned on where it has one) and the object loaded again,
 * each refusal kept in t->refused with the verifier's or libbpf's reason.
 * Fails only when something other than a program fails, or nothing is left.
 */
int les_tracer_load(struct les_tracer *t);
int les_tracer_set_mounts(struct les_tracer *t, const struct les_observed *obs);
int les_tracer_attach(struct les_tracer *t, int verbose);
int les_tracer_ring(struct les_tracer *t, int (*fn)(void *, void *, size_t), void *ctx);
/* Wait for records up to timeout_ms, then take whatever is pending. */
int les_tracer_poll(struct les_tracer *t, int timeout_ms);
void les_tracer_read_stats(struct les_tracer *t, struct les_kernel_stats *ks);
/* Remove in-flight entries older than max_age_ns, counting them. */
void les_tracer_sweep(struct les_tracer *t, uint64_t max_age_ns);
/*
 * Whether the maps still answer through their fds (les_privs_probe_fn):
 * 0 or a negative errno (-EPERM without CAP_BPF on kernels before 6.5).
 */
int les_tracer_map_access(void *tracer);
/*
 * Detach every probe: nothing is produced afterwards, so the counters
 * read then are final and one more poll drains the ring. Maps and the
 * ring stay. Safe to call twice.
 */
void les_tracer_detach(struct les_tracer *t);
void les_tracer_destroy(struct les_tracer *t);

#endif /* LES_TRACER_H */
