// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The run loop: poll, flush, ticks, stats records, the final drain. */
#include <errno.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/clock.h"
#include "util/utf8.h"
#include "pipeline/run.h"
#include "pipeline/wiring.h"

/* The handlers' flags are file scope: a signal handler takes no context. */
static volatile sig_atomic_t exiting;
static volatile sig_atomic_t reopen_output; /* SIGHUP: logrotate moved the file */

/*
 * The first signal asks for a clean stop; the second kills: the default
 * action back, and the signal sent again (it is delivered when this
 * handler returns, as the handler blocks it meanwhile).
 */
static void on_signal(int sig)
{
	if (exiting) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	exiting = 1;
}

static void on_hangup(int sig)
{
	(void)sig;
	reopen_output = 1;
}

void les_run_install_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	struct sigaction hup = {.sa_handler = on_hangup};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&hup.sa_mask);
	sigaction(SIGHUP, &hup, NULL);
	/* A closed pipe shows up as EPIPE from write: the sink ends quietly. */
	signal(SIGPIPE, SIG_IGN);
}

static void emit_stats(struct les_run *r, bool final)
{
	struct les_consumer *c = &r->consumer;
	struct les_kernel_stats ks;

	les_tracer_read_stats(&r->tracer, &ks);
	/* Lines still buffered are written (or dropped) before they are counted. */
	les_sinks_sync(r);
	les_consumer_emit_stats(c, &ks, final);
	les_sinks_sync(r);
	/* -v: the final numbers also when the records go to /dev/null (benchmarks). */
	if (final && r->cfg->verbose && !c->jw.overflow)
		fprintf(stderr, "lustre-ebpf-stream: final stats: %.*s", (int)c->jw.len, c->line);
}

/*
 * The mount table changed: observe what is there now (the same --mount
 * paths, or every supported mount), tell BPF, and put out a notice per
 * mount gone or added. Records already in the ring are taken first, while
 * their mounts are still known.
 */
static void refresh_mounts(struct les_run *r)
{
	const struct les_run_config *cfg = r->cfg;
	struct les_observed *obs = &r->observed;
	struct les_consumer *c = &r->consumer;
	struct les_tracer *t = &r->tracer;
	struct les_mount_table table;
	struct les_observed *next = calloc(1, sizeof(*next));
	unsigned int changes = 0;
	int err;

	if (!next || les_mount_table_load(&table, cfg->mountinfo_path)) {
		free(next);
		return;
	}
	err = les_observed_reselect(next, &table, cfg->mounts, cfg->n_mounts);
	les_mount_table_free(&table);
	if (!err)
		err = les_tracer_set_mounts(t, next);
	if (err) {
		fprintf(stderr, "lustre-ebpf-stream: warning: mounts changed, not followed: %s\n",
			strerror(-err));
		les_observed_free(next);
		free(next);
		return;
	}
	/*
	 * Records in the ring were made under either selection: those of a
	 * mount gone are described by the old one, those of a mount the
	 * probes follow from now on by the new one (the soak test saw reads
	 * of a mount that had just found a place under the limit come out
	 * without a mount, test/soak/README.md).
	 */
	c->observed_next = next;
	les_tracer_poll(t, 0);
	c->observed_next = NULL;
	les_observed_warn_skipped(next, obs, stderr);
	for (size_t i = 0; i < obs->n; i++)
		if (!les_observed_has(next, &obs->m[i]) && ++changes)
			les_consumer_emit_notice(c, "mount_gone", &obs->m[i]);
	for (size_t i = 0; i < next->n; i++)
		if (!les_observed_has(obs, &next->m[i]) && ++changes)
			les_consumer_emit_notice(c, "mount_added", &next->m[i]);
	if (cfg->verbose && changes)
		fprintf(stderr, "lustre-ebpf-stream: mounts changed: observing %zu mount(s)\n",
			next->n);
	les_observed_free(obs);
	*obs = *next;
	free(next);
}

/*
 * Every 10 s: free heap pages go back to the system. A broker outage
 * queues lines (up to --kafka-queue-size), /metrics renders into a large
 * buffer; once freed, the allocator keeps those pages, and the objects
 * made meanwhile (series, attributions) are scattered among them, so a
 * daemon would hold its highest need for the rest of its run. Those
 * objects die in their turn, and each trim gives back more. The soak test
 * (test/soak/README.md) measured 218 MiB after an outage without this,
 * against 103 MiB before it; with it, RSS is back within a few MiB. A trim
 * of a 100 MiB heap takes 7-20 ms; every 30 s left the pages freed between
 * two trims to be touched again, 5 MiB a time.
 */
static void tick_trim(struct les_run *r, uint64_t now)
{
	if (now < r->next_trim_ns)
		return;
#ifdef __GLIBC__
	malloc_trim(0);
#endif
	r->next_trim_ns = now + 10 * LES_NS_PER_SEC;
}

/* Once a second on a terminal: the status line. */
static void tick_status(struct les_run *r, uint64_t now)
{
	struct les_kernel_stats ks;

	if (!r->status.out || now < r->next_status_ns)
		return;
	les_tracer_read_stats(&r->tracer, &ks);
	les_status_update(&r->status, now, now - r->start_ns, r->cfg->duration_ns,
			  les_consumer_emitted(&r->consumer),
			  ks.counters[LES_CNT_RB_DROPPED] + les_consumer_dropped(&r->consumer));
	r->next_status_ns = now + LES_NS_PER_SEC;
}

/*
 * The final drain, after the detach: a program that counted its record
 * before it may still be running (tracing programs can be preempted on a
 * loaded machine, for longer than the detach's pause), so the ring is read
 * until every record counted as produced was read or dropped, for at most
 * a second. Then the final counters and the records agree.
 */
static void drain_final(struct les_run *r)
{
	struct les_kernel_stats ks;

	for (int i = 0; i < 100; i++) {
		les_tracer_poll(&r->tracer, 0);
		les_tracer_read_stats(&r->tracer, &ks);
		if (ks.counters[LES_CNT_PRODUCED] <=
		    ks.counters[LES_CNT_RB_DROPPED] + les_consumer_records_read(&r->consumer))
			return;
		usleep(10000);
	}
}

int les_run(struct les_run *r)
{
	const struct les_run_config *cfg = r->cfg;
	struct les_consumer *c = &r->consumer;
	struct les_tracer *t = &r->tracer;
	int err = 0;

	r->ran = true;
	r->start_ns = les_mono_ns();
	r->next_stats_ns = r->start_ns + cfg->stats_interval_ns;
	while (!exiting && !c->stop) {
		uint64_t now;

		err = les_tracer_poll(t, (int)cfg->poll_ms);
		/* SIGHUP interrupts the poll too: it asks for a reopen, not a stop. */
		if (err == -EINTR && !exiting)
			err = 0;
		if (err == -EINTR || c->stop) {
			/* A signal, --count reached, or the reader went away. */
			err = 0;
			break;
		}
		if (err < 0 && err != -ECANCELED)
			break;
		err = 0;
		now = les_mono_ns();
		tick_status(r, now);
		if (les_mountwatch_changed(&r->mountwatch))
			refresh_mounts(r);
		/* SIGHUP: logrotate moved the file away; the output's tick reopens it. */
		r->reopen = reopen_output;
		if (r->reopen)
			reopen_output = 0;
		les_sinks_tick(r, now);
		r->reopen = false;
		tick_trim(r, now);
		if (cfg->duration_ns && now - r->start_ns >= cfg->duration_ns)
			break;
		if (cfg->stats_interval_ns && now >= r->next_stats_ns) {
			les_tracer_sweep(t, cfg->stale_timeout_ns);
			emit_stats(r, false);
			r->next_stats_ns = now + cfg->stats_interval_ns;
		}
	}
	/*
	 * Detached, the probes produce nothing more: the counters read for
	 * the final stats are final and this drain takes every record the run
	 * made (after a stop they are counted, not written), so the identity
	 * of the final stats record holds exactly.
	 */
	les_tracer_detach(t);
	c->draining = true;
	drain_final(r);
	/* What the sinks hold goes out (the last window, Kafka's queue) before it is counted. */
	les_sinks_flush(r);
	emit_stats(r, true);
	if (err) {
		les_say("reading the ring buffer: %s", strerror(-err));
		return -1;
	}
	/* Lines a sink lost to write errors (not a closed pipe): the run failed, said by it. */
	return les_sinks_verdict(r) ? -1 : 0;
}

void les_run_clear_status(struct les_run *r)
{
	les_status_clear(&r->status);
}
