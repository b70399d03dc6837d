/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The run loop: once the stages are built and the probes attached, poll
 * the ring until a signal, --duration, --count or the reader's end; on
 * the way flush the output, reopen it on SIGHUP, tick the periodic tasks
 * (status line, the sinks' ticks, stats records, heap trims) and follow
 * the mount table. At the end: detach, drain, the sinks' flush, the final
 * stats record.
 */
#ifndef LES_RUN_H
#define LES_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "decode/mountwatch.h"
#include "model/observed.h"
#include "pipeline/consumer.h"
#include "pipeline/sinks.h"
#include "probe/tracer.h"
#include "sink/summary.h"

/* The run loop's part of the command line. */
struct les_run_config {
	const char *mountinfo_path; /* NULL: /proc/self/mountinfo */
	const char *const *mounts;  /* --mount, followed when the mounts change */
	size_t n_mounts;
	uint32_t poll_ms;	    /* the ring's poll timeout */
	uint64_t duration_ns;	    /* 0: until stopped */
	uint64_t stats_interval_ns; /* 0: only the final stats record */
	uint64_t stale_timeout_ns;  /* in-flight entries older are swept */
	bool verbose;
};

/*
 * One run: the stages (built by the caller, which frees them) and when
 * each periodic task is due.
 */
struct les_run {
	const struct les_run_config *cfg;
	struct les_observed observed; /* changed when the mounts change */
	struct les_mountwatch mountwatch;
	struct les_tracer tracer;
	struct les_consumer consumer;
	struct les_sinks sinks;	  /* the output and every other sink (sinks.h) */
	struct les_status status; /* .out NULL: no status line */
	bool ran;		  /* les_run was called: the sinks' end-of-run reports apply */
	bool reopen;		  /* SIGHUP, this pass: the outputs reopen their files */
	bool failed;		  /* the run failed already: a sink's close adds no message */
	uint64_t start_ns;
	uint64_t next_stats_ns, next_status_ns, next_trim_ns;
};

/*
 * SIGINT and SIGTERM ask for a clean stop (the second one kills), SIGHUP
 * for the output's reopen; SIGPIPE is ignored. Before anything is
 * attached, so that a stop during start-up takes the one cleanup path.
 */
void les_run_install_signals(void);

/*
 * Run until stopped, then detach, drain and put out the final stats
 * record. 0, or -1 when the run failed (the ring could not be read, or
 * lines were lost to write errors): said in one line on stderr.
 */
int les_run(struct les_run *r);

/* The status line erased (the summary follows as its sink closes). */
void les_run_clear_status(struct les_run *r);

#endif /* LES_RUN_H */
