/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel side's numbers, as the tracer reads them from the BPF maps
 * (counters, requests in flight, programs refused at load) for the stats
 * records, the Prometheus gauges and the top view.
 */
#ifndef LES_KSTATS_H
#define LES_KSTATS_H

#include <stddef.h>
#include <stdint.h>
#include "util/json.h"
#include "les_record.h"

#define LES_INFLIGHT_GROUPS 32

#define LES_INFLIGHT_TASKS 1024

/* One request in flight: its protocol, mount and submitter. */
struct les_inflight_task {
	uint32_t dev; /* 0: mount unknown */
	uint16_t proto; /* enum les_rpc_proto */
	uint16_t async; /* sent by a worker on the submitter's behalf */
	struct les_task task;
};

/* Requests of one protocol in flight on one mount (dev 0: mount unknown). */
struct les_inflight_group {
	uint32_t dev;
	uint32_t proto; /* enum les_rpc_proto */
	uint64_t requests;
};

/*
 * A BPF program the running kernel refused (verifier, missing BTF type or
 * attach point): turned off before the load that succeeded, with why.
 */
#define LES_MAX_REFUSED	   48
#define LES_PROG_NAME_LEN  64
#define LES_REFUSAL_REASON 200

struct les_refusal {
	char prog[LES_PROG_NAME_LEN];
	char reason[LES_REFUSAL_REASON];
};

struct les_refusals {
	struct les_refusal r[LES_MAX_REFUSED];
	size_t n;
};

/* "programs_refused":[{"program":…,"reason":…}] (refused may be NULL: []). */
void les_refusals_json(struct jw *w, const struct les_refusals *refused);

struct les_kernel_stats {
	uint64_t counters[LES_CNT_SLOTS];
	const struct les_refusals *refused; /* programs turned off at load */
	uint64_t kretprobe_missed; /* returns lost: more callers at once than instances */
	uint64_t stale_swept; /* in-flight requests swept by age */
	uint64_t threads_swept; /* per-thread op stacks swept by age */
	uint64_t inflight_fuse; /* FUSE requests in flight now */
	uint64_t inflight_by_proto[LES_PROTO_MAX]; /* requests in flight now */
	struct les_inflight_group inflight[LES_INFLIGHT_GROUPS]; /* by mount, nonzero only */
	size_t n_inflight;
	/* each request in flight, for per-user gauges; n_tasks_over: beyond the array */
	struct les_inflight_task tasks[LES_INFLIGHT_TASKS];
	size_t n_tasks, n_tasks_over;
};

#endif /* LES_KSTATS_H */
