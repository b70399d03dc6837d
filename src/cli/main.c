// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lustre-ebpf-stream: probe -> ring -> decode -> enrich -> sinks.
 * main only wires the stages together; each lives in src/.
 */
#include <errno.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "util/clock.h"
#include "sink/aggregate.h"
#include "pipeline/wiring.h"
#include "pipeline/consumer.h"
#include "enrich/enrich.h"
#include "model/mounts.h"
#include "decode/mountwatch.h"
#include "model/observed.h"
#include "cli/options.h"
#include "cli/privs.h"
#include "probe/probes.h"
#include "sink/prom.h"
#include "cli/sdnotify.h"
#include "sink/replay.h"
#include "sink/top.h"
#include "sink/summary.h"
#include "sink/sink.h"
#include "sink/sink_kafka.h"
#include "cli/stage_config.h"
#include "probe/tracer.h"
#include "util/utf8.h"

/*
 * Why a load is refused with EPERM: loading needs CAP_BPF and CAP_PERFMON,
 * and where kernel modules carry BTF (Lustre's, sunrpc) CAP_SYS_ADMIN as
 * well: the kernel lists and opens BTF objects only for it.
 */
#define LES_EPERM_MODULE_BTF                                                                  \
	" (loading needs root, or CAP_BPF, CAP_PERFMON and, where kernel modules carry BTF, " \
	"CAP_SYS_ADMIN)"

/*
 * The signal handlers' flags and libbpf's print level are file scope: a
 * handler and libbpf's print callback take no context. Everything else a
 * run owns is in struct app, made by main and passed down.
 */
static volatile sig_atomic_t exiting;
static volatile sig_atomic_t reopen_output; /* SIGHUP: logrotate moved the file */

/* --top: the view, its screen (or plain frames on stdout), frames shown. */
struct app_top {
	struct les_top *view; /* NULL without --top */
	struct les_top_view keys;
	bool screen;
	uint32_t frames;
	uint64_t last_ns; /* the current interval's start */
	char frame[64 * 1024];
};

/* One run: the options, the stages, and when each periodic task is due. */
struct app {
	const struct les_options *o;
	char host[256];
	struct les_observed observed; /* changed by refresh_mounts */
	struct les_mountwatch mountwatch;
	struct les_sink_file out;
	struct les_tracer tracer;
	struct les_consumer_config consumer_cfg; /* the consumer reads it on every record */
	struct les_consumer consumer;
	struct les_enricher *enricher; /* NULL with --no-enrich */
	struct les_sink_kafka *kafka; /* NULL without --kafka-brokers */
	struct les_aggregate *aggregator; /* NULL without --aggregate */
	struct les_prom *prom; /* NULL without --prometheus */
	struct les_summary *summary; /* NULL: no summary at exit */
	struct les_status status; /* .out NULL: no status line */
	struct app_top top;
	uint64_t start_ns;
	uint64_t next_stats_ns, next_status_ns, next_prom_ns, next_drop_warn_ns, next_trim_ns;
	uint64_t drops_warned; /* output lines lost, as last warned about */
};

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

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction hup = { .sa_handler = on_hangup };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&hup.sa_mask);
	sigaction(SIGHUP, &hup, NULL);
	/* A closed pipe shows up as EPIPE from write: the sink ends quietly. */
	signal(SIGPIPE, SIG_IGN);
}

static int verbosity;

/*
 * libbpf's messages with our prefix on every line, like all the others
 * (its own "libbpf: " follows); a verifier log is many lines in one call.
 */
static int print_prefixed(const char *fmt, va_list args)
{
	char *msg, *line, *next;
	va_list again;
	int n;

	va_copy(again, args);
	n = vsnprintf(NULL, 0, fmt, args);
	msg = n < 0 ? NULL : malloc((size_t)n + 1);
	if (!msg) {
		va_end(again);
		return -1;
	}
	vsnprintf(msg, (size_t)n + 1, fmt, again);
	va_end(again);
	for (line = msg; *line; line = next) {
		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		fprintf(stderr, "lustre-ebpf-stream: %.*s", (int)(next - line), line);
	}
	if (n && msg[n - 1] != '\n')
		fputc('\n', stderr);
	free(msg);
	return n;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (verbosity < 2 && level != LIBBPF_WARN)
		return 0;
	if (verbosity < 1)
		return 0;
	return print_prefixed(fmt, args);
}

/* One line on stderr; mount paths and names in it escaped for the terminal. */
static int fail(int status, const char *fmt, ...)
{
	char msg[2048], safe[LES_TERM_SAFE_LEN(sizeof(msg))];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	les_term_safe(msg, safe, sizeof(safe));
	fprintf(stderr, "lustre-ebpf-stream: %s\n", safe);
	return status;
}

static bool has_bpf_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &hdr, data))
		return false;
	/* CAP_BPF (39) and CAP_PERFMON (38) live in the second word. */
	return (data[1].effective & (1u << (39 - 32))) && (data[1].effective & (1u << (38 - 32)));
}

static int preflight(void)
{
	if (!has_bpf_caps())
		return fail(LES_EXIT_RUNTIME, "must run as root (or with CAP_BPF and CAP_PERFMON)");
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return fail(LES_EXIT_RUNTIME, "kernel has no BTF (/sys/kernel/btf/vmlinux): "
					      "a kernel built with CONFIG_DEBUG_INFO_BTF is required");
	return 0;
}

static int select_mounts(const struct les_options *o, struct les_observed *obs)
{
	struct les_mount_table table;
	char err[512];
	int ret;

	ret = les_mount_table_load(&table, o->mountinfo_path);
	if (ret)
		return fail(LES_EXIT_RUNTIME, "cannot read the mount table: %s", strerror(-ret));
	ret = les_observed_select(obs, &table, o->mounts, o->n_mounts, err, sizeof(err));
	les_mount_table_free(&table);
	if (ret == -EINVAL)
		return fail(LES_EXIT_USAGE, "%s", err);
	/*
	 * A node whose filesystem is not mounted yet (a DaemonSet's pod, a
	 * unit started before the mounts): the probes go on as for any run,
	 * and mounts are observed as they come (refresh_mounts), so the tool
	 * is up and ready instead of exiting into a restart loop.
	 */
	if (ret == -ENOENT && !o->n_mounts) {
		fprintf(stderr, "lustre-ebpf-stream: %s: waiting for one to be mounted\n", err);
		return 0;
	}
	if (ret)
		return fail(LES_EXIT_RUNTIME, "%s", err);
	les_observed_warn_skipped(obs, NULL, stderr);
	return 0;
}

/*
 * --list-probes: the plan and, with the privileges for it, a trial load of
 * its programs, so that what this kernel's verifier refuses is listed too.
 */
static int list_probes(const struct les_options *o)
{
	struct les_kfacts *facts = calloc(1, sizeof(*facts));
	struct les_tracer t = { 0 };
	struct les_plan_options po;
	struct les_tracer_config cfg;
	struct les_probe_plan plan;
	bool loaded = false;
	char err[256];

	if (!facts || (!o->kernel_facts_path && les_probe_facts_gather(facts))) {
		free(facts);
		return fail(LES_EXIT_RUNTIME, "out of memory");
	}
	if (o->kernel_facts_path && les_kfacts_load(facts, o->kernel_facts_path, err, sizeof(err))) {
		free(facts);
		return fail(LES_EXIT_USAGE, "--kernel-facts %s: %s", o->kernel_facts_path, err);
	}
	les_plan_options_init(&po, o->attach);
	les_probe_plan_make(&plan, facts, &po);
	free(facts);
	/* A trial load says what this kernel refuses: not for another's facts. */
	les_tracer_config_of(o, &cfg);
	if (!o->kernel_facts_path && has_bpf_caps() &&
	    access("/sys/kernel/btf/vmlinux", R_OK) == 0 && les_tracer_open(&t) == 0 &&
	    les_tracer_configure(&t, &cfg, &plan) == 0)
		loaded = les_tracer_load(&t) == 0;
	les_probe_plan_print(&plan, stdout, o->list_probes == LES_LIST_JSON,
			     loaded ? &t.refused : NULL);
	les_tracer_destroy(&t);
	return LES_EXIT_OK;
}

/* --dump-kernel-facts: what the plan reads of this kernel, for --kernel-facts. */
static int dump_kernel_facts(void)
{
	struct les_kfacts *facts = calloc(1, sizeof(*facts));

	if (!facts || les_probe_facts_gather(facts)) {
		free(facts);
		return fail(LES_EXIT_RUNTIME, "out of memory");
	}
	les_kfacts_write(facts, stdout);
	free(facts);
	return fflush(stdout) ? fail(LES_EXIT_RUNTIME, "cannot write the facts: %s",
				     strerror(errno))
			      : LES_EXIT_OK;
}

/* The plan for this kernel: its facts, read once, then the planners. */
static int plan_this_kernel(struct les_probe_plan *plan, const struct les_options *o)
{
	struct les_kfacts *facts = calloc(1, sizeof(*facts));
	struct les_plan_options po;

	if (!facts || les_probe_facts_gather(facts)) {
		free(facts);
		return -ENOMEM;
	}
	les_plan_options_init(&po, o->attach);
	les_probe_plan_make(plan, facts, &po);
	free(facts);
	return 0;
}

static int start_tracer(struct les_tracer *t, const struct les_options *o,
			const struct les_observed *obs)
{
	struct les_tracer_config cfg;
	struct les_probe_plan plan;
	int err;

	if (plan_this_kernel(&plan, o))
		return fail(LES_EXIT_RUNTIME, "out of memory");
	if (plan.fuse == LES_FUSE_NONE && plan.access == LES_ATTACH_NONE)
		return fail(LES_EXIT_RUNTIME, "no probe can attach on this kernel: %s",
			    plan.access_reason);
	/* A method asked for by name that attaches nothing would trace without it. */
	if ((o->attach == LES_ATTACH_MODE_FENTRY || o->attach == LES_ATTACH_MODE_KPROBE) &&
	    plan.access == LES_ATTACH_NONE)
		return fail(LES_EXIT_USAGE, "--attach %s attaches no access probe on this kernel: %s",
			    o->attach == LES_ATTACH_MODE_FENTRY ? "fentry" : "kprobe",
			    plan.access_reason);
	err = les_tracer_open(t);
	if (err)
		return fail(LES_EXIT_RUNTIME, "cannot open the BPF object: %s", strerror(-err));
	les_tracer_config_of(o, &cfg);
	err = les_tracer_configure(t, &cfg, &plan);
	if (err)
		return fail(LES_EXIT_RUNTIME, "cannot configure the BPF object: %s%s",
			    strerror(-err), err == -EPERM ? LES_EPERM_MODULE_BTF : "");
	err = les_tracer_load(t);
	if (err)
		return fail(LES_EXIT_RUNTIME, "cannot load the BPF programs: %s%s", strerror(-err),
			    err == -EPERM ? LES_EPERM_MODULE_BTF : "");
	err = les_tracer_set_mounts(t, obs);
	if (err)
		return fail(LES_EXIT_RUNTIME, "cannot program the observed mounts: %s",
			    strerror(-err));
	err = les_tracer_attach(t, o->verbose);
	if (err)
		return fail(LES_EXIT_RUNTIME, "cannot attach any probe: %s", strerror(-err));
	return 0;
}

static void emit_stats(struct app *a, bool final)
{
	struct les_consumer *c = &a->consumer;
	struct les_kernel_stats ks;

	les_tracer_read_stats(&a->tracer, &ks);
	/* Lines still buffered are written (or dropped) before they are counted. */
	les_sink_file_flush(&a->out);
	les_consumer_emit_stats(c, &ks, final);
	les_sink_file_flush(&a->out);
	/* -v: the final numbers also when the records go to /dev/null (benchmarks). */
	if (final && a->o->verbose && !c->jw.overflow)
		fprintf(stderr, "lustre-ebpf-stream: final stats: %.*s", (int)c->jw.len, c->line);
}

/* A full disk loses lines: say so on stderr, at most once per interval. */
static void warn_output_drops(struct app *a, uint64_t now)
{
	const struct les_sink_file *f = &a->out;

	if (!f->last_errno || f->dropped == a->drops_warned || now < a->next_drop_warn_ns)
		return;
	fprintf(stderr,
		"lustre-ebpf-stream: warning: writing %s: %s: %" PRIu64 " lines (%" PRIu64
		" records) dropped so far\n",
		f->path ? f->path : "stdout", strerror(f->last_errno), f->dropped,
		f->records_dropped);
	a->drops_warned = f->dropped;
	a->next_drop_warn_ns =
		now + (a->o->stats_interval_ns ? a->o->stats_interval_ns : 10 * LES_NS_PER_SEC);
}

/*
 * The mount table changed: observe what is there now (the same --mount
 * paths, or every supported mount), tell BPF, and put out a notice per
 * mount gone or added. Records already in the ring are taken first, while
 * their mounts are still known.
 */
static void refresh_mounts(struct app *a)
{
	const struct les_options *o = a->o;
	struct les_observed *obs = &a->observed;
	struct les_consumer *c = &a->consumer;
	struct les_tracer *t = &a->tracer;
	struct les_mount_table table;
	struct les_observed *next = calloc(1, sizeof(*next));
	unsigned int changes = 0;
	int err;

	if (!next || les_mount_table_load(&table, o->mountinfo_path)) {
		free(next);
		return;
	}
	err = les_observed_reselect(next, &table, o->mounts, o->n_mounts);
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
	if (o->verbose && changes)
		fprintf(stderr, "lustre-ebpf-stream: mounts changed: observing %zu mount(s)\n",
			next->n);
	les_observed_free(obs);
	*obs = *next;
	free(next);
}

/* Once a second: the endpoint's self-metrics, in-flight gauge and series TTL. */
static void tick_prometheus(struct app *a, uint64_t now)
{
	struct les_kernel_stats ks;

	if (!a->prom || now < a->next_prom_ns)
		return;
	les_tracer_read_stats(&a->tracer, &ks);
	les_pipeline_update_prom(a->prom, &a->consumer, &ks);
	if (a->kafka) {
		struct les_kafka_counters kc;

		les_sink_kafka_counters(a->kafka, &kc);
		les_prom_update_kafka(a->prom, &kc);
	}
	les_prom_tick(a->prom, now);
	a->next_prom_ns = now + LES_NS_PER_SEC;
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
static void tick_trim(struct app *a, uint64_t now)
{
	if (now < a->next_trim_ns)
		return;
#ifdef __GLIBC__
	malloc_trim(0);
#endif
	a->next_trim_ns = now + 10 * LES_NS_PER_SEC;
}

/* SIGHUP: close and reopen the output file (the old one was rotated away). */
static void reopen_if_asked(struct app *a)
{
	const struct les_options *o = a->o;
	int err;

	if (!reopen_output)
		return;
	reopen_output = 0;
	err = les_sink_file_reopen(&a->out);
	if (err)
		fail(0, "cannot reopen %s: %s; lines are counted as dropped until the next SIGHUP",
		     o->output, a->out.why);
	else if (o->verbose && a->out.path)
		fprintf(stderr, "lustre-ebpf-stream: reopened %s\n", a->out.path);
}

/* Once a second on a terminal: the status line. */
static void tick_status(struct app *a, uint64_t now)
{
	struct les_kernel_stats ks;

	if (!a->status.out || now < a->next_status_ns)
		return;
	les_tracer_read_stats(&a->tracer, &ks);
	les_status_update(&a->status, now, now - a->start_ns, a->o->duration_ns,
			  les_consumer_emitted(&a->consumer),
			  ks.counters[LES_CNT_RB_DROPPED] + les_consumer_dropped(&a->consumer));
	a->next_status_ns = now + LES_NS_PER_SEC;
}

/* Summary on stderr when the run ends, with the final stats record's numbers. */
static void print_summary(struct app *a)
{
	struct les_summary_totals tot = { 0 };
	struct les_consumer *c = &a->consumer;
	struct les_kernel_stats ks;

	les_status_clear(&a->status);
	if (!a->summary)
		return;
	les_tracer_read_stats(&a->tracer, &ks);
	tot.elapsed_ns = les_mono_ns() - c->start_mono_ns;
	tot.emitted = les_consumer_emitted(c);
	tot.dropped = ks.counters[LES_CNT_RB_DROPPED] + les_consumer_dropped(c);
	tot.filtered = ks.counters[LES_CNT_FILTERED] + c->filtered_userspace;
	les_summary_print(a->summary, &tot, stderr);
}

/*
 * --summary, or by default when stderr is a terminal; the status line only
 * on a terminal and when the records do not go to that same terminal.
 */
static int open_summary(struct app *a)
{
	const struct les_options *o = a->o;
	bool tty = isatty(STDERR_FILENO);
	bool records_on_tty = (!o->output || strcmp(o->output, "-") == 0) && isatty(STDOUT_FILENO);

	if (o->summary == 1 || (o->summary == -1 && tty)) {
		a->summary = les_summary_new();
		if (!a->summary ||
		    les_consumer_add_event_sink(&a->consumer, les_summary_event, a->summary))
			return fail(LES_EXIT_RUNTIME, "cannot set up the summary");
	}
	if (tty && !records_on_tty && !o->top)
		a->status.out = stderr;
	return 0;
}

static int open_top(struct app *a)
{
	const struct les_options *o = a->o;
	struct app_top *top = &a->top;

	if (!o->top)
		return 0;
	top->view = les_top_new();
	if (!top->view || les_consumer_add_event_sink(&a->consumer, les_top_event, top->view))
		return fail(LES_EXIT_RUNTIME, "cannot set up --top: out of memory");
	top->screen = !o->top_batch && isatty(STDOUT_FILENO);
	if (top->screen && les_top_screen_open())
		return fail(LES_EXIT_RUNTIME, "cannot set up the --top screen (TERM=%s)",
			    getenv("TERM") ? getenv("TERM") : "");
	return 0;
}

static void top_header(struct app *a, struct les_top_header *h)
{
	const struct les_observed *observed_mounts = &a->observed;
	struct les_kernel_stats ks;

	memset(h, 0, sizeof(*h));
	les_tracer_read_stats(&a->tracer, &ks);
	h->dropped = ks.counters[LES_CNT_RB_DROPPED] + les_consumer_dropped(&a->consumer);
	for (size_t i = 0; i < observed_mounts->n && h->n_mounts < LES_TOP_MOUNTS; i++) {
		uint64_t n = 0;

		for (size_t k = 0; k < ks.n_inflight; k++)
			if (ks.inflight[k].dev == observed_mounts->m[i].dev)
				n += ks.inflight[k].requests;
		snprintf(h->mounts[h->n_mounts].mount, sizeof(h->mounts[0].mount), "%s",
			 observed_mounts->m[i].mount_point);
		h->mounts[h->n_mounts++].inflight = n;
	}
}

/* Keys first (every pass: the screen answers at once), then a frame per interval. */
static void tick_top(struct app *a, uint64_t now)
{
	const struct les_options *o = a->o;
	struct les_consumer *c = &a->consumer;
	struct app_top *top = &a->top;
	struct les_top_header h;
	int key, width = 80, height = 0;
	bool redraw = false;

	if (!top->view)
		return;
	while (top->screen && (key = les_top_screen_key()) >= 0)
		redraw |= les_top_key(&top->keys, key);
	les_top_screen_ask_filter(&top->keys, top->view);
	if (top->keys.quit) {
		c->stop = true;
		return;
	}
	if (!top->last_ns)
		top->last_ns = now;
	if (now >= top->last_ns + o->top_interval_ns) {
		top_header(a, &h);
		les_top_close_interval(top->view, (double)(now - top->last_ns) / 1e9,
				       les_fmt_epoch_ns(&c->fmt, now), &h);
		top->last_ns = now;
		redraw = true;
		top->frames++;
	}
	if (!redraw || !top->frames)
		return;
	if (top->screen)
		les_top_screen_size(&width, &height);
	les_top_render(top->view, top->keys.group, top->keys.sort, width, height, top->frame,
		       sizeof(top->frame));
	if (top->screen) {
		les_top_screen_draw(top->frame);
	} else {
		/* Plain frames, as top -b prints them: a blank line between. */
		fputs(top->frame, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	}
	if (o->top_batch && top->frames >= o->top_batch)
		c->stop = true;
}

/*
 * The final drain, after the detach: a program that counted its record
 * before it may still be running (tracing programs can be preempted on a
 * loaded machine, for longer than the detach's pause), so the ring is read
 * until every record counted as produced was read or dropped, for at most
 * a second. Then the final counters and the records agree.
 */
static void drain_final(struct app *a)
{
	struct les_kernel_stats ks;

	for (int i = 0; i < 100; i++) {
		les_tracer_poll(&a->tracer, 0);
		les_tracer_read_stats(&a->tracer, &ks);
		if (ks.counters[LES_CNT_PRODUCED] <=
		    ks.counters[LES_CNT_RB_DROPPED] + les_consumer_records_read(&a->consumer))
			return;
		usleep(10000);
	}
}

static int run(struct app *a)
{
	const struct les_options *o = a->o;
	struct les_consumer *c = &a->consumer;
	struct les_tracer *t = &a->tracer;
	int err = 0;

	a->start_ns = les_mono_ns();
	a->next_stats_ns = a->start_ns + o->stats_interval_ns;
	while (!exiting && !c->stop) {
		uint64_t now;

		err = les_tracer_poll(t, (int)o->poll_ms);
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
		les_sink_file_flush(&a->out);
		reopen_if_asked(a);
		les_sink_kafka_poll(a->kafka);
		now = les_mono_ns();
		tick_status(a, now);
		warn_output_drops(a, now);
		if (les_mountwatch_changed(&a->mountwatch))
			refresh_mounts(a);
		les_aggregate_tick(a->aggregator, les_fmt_epoch_ns(&c->fmt, now));
		tick_prometheus(a, now);
		tick_top(a, now);
		tick_trim(a, now);
		if (o->duration_ns && now - a->start_ns >= o->duration_ns)
			break;
		if (o->stats_interval_ns && now >= a->next_stats_ns) {
			les_tracer_sweep(t, o->stale_timeout_ns);
			emit_stats(a, false);
			a->next_stats_ns = now + o->stats_interval_ns;
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
	drain_final(a);
	/* The last window is cut short: it goes out marked partial. */
	les_aggregate_flush(a->aggregator, les_fmt_epoch_ns(&c->fmt, les_mono_ns()));
	/* The final stats record tells what Kafka could not take: flush first. */
	les_sink_kafka_flush(a->kafka, o->kafka_flush_timeout_ns);
	emit_stats(a, true);
	if (err)
		return fail(LES_EXIT_RUNTIME, "reading the ring buffer: %s", strerror(-err));
	/* Lines lost to write errors (not a closed pipe): the run failed, say how much. */
	if (a->out.write_errors && a->out.dropped)
		return fail(LES_EXIT_RUNTIME,
			    "writing %s: %" PRIu64 " lines (%" PRIu64 " records) dropped: %s",
			    a->out.path ? a->out.path : "stdout", a->out.dropped,
			    a->out.records_dropped, strerror(a->out.last_errno));
	return LES_EXIT_OK;
}

/*
 * Under systemd with no output set, standard output is the journal: every
 * operation would become a journal entry. Refused, with what to do, and
 * exit status 2 (the unit does not restart on it).
 */
static int check_not_journal(const struct les_options *o)
{
	if (o->output && strcmp(o->output, "-") != 0)
		return 0;
	if (!les_sd_is_journal(STDOUT_FILENO))
		return 0;
	return fail(LES_EXIT_USAGE,
		    "standard output is the systemd journal; set output = FILE in %s "
		    "(e.g. /var/log/lustre-ebpf-stream/ops.jsonl) or -o FILE",
		    o->config_path ? o->config_path : "/etc/lustre-ebpf-stream.conf");
}

/* Every Kafka property, before anything loads or the output file is touched. */
static int check_kafka(const struct les_options *o)
{
	struct les_kafka_config cfg;
	char err[512];
	int ret;

	les_kafka_config_of(o, &cfg);
	ret = les_sink_kafka_check(&cfg, err, sizeof(err));

	if (ret)
		return fail(ret == -EINVAL ? LES_EXIT_USAGE : LES_EXIT_RUNTIME, "%s", err);
	return 0;
}

/*
 * After the capability drop: librdkafka's threads block every signal and
 * would keep whatever the process held when they started.
 */
static int open_kafka(struct app *a)
{
	struct les_kafka_config cfg;
	char err[512];
	int ret;

	les_kafka_config_of(a->o, &cfg);
	ret = les_sink_kafka_open(&a->kafka, &cfg, err, sizeof(err));

	if (ret)
		return fail(ret == -EINVAL ? LES_EXIT_USAGE : LES_EXIT_RUNTIME, "%s", err);
	if (a->kafka) {
		les_consumer_add_line_sink(&a->consumer, les_sink_kafka_line, a->kafka);
		les_consumer_add_stats_hook(&a->consumer, les_sink_kafka_stats, a->kafka);
	}
	return 0;
}

/* --aggregate and --prometheus: event sinks of the consumer. */
static int open_aggregation(struct app *a)
{
	const struct les_options *o = a->o;
	struct les_aggregate_config aggregate;
	struct les_prom_config prom;
	char err[512];

	if (o->aggregate_ns) {
		les_aggregate_config_of(o, &aggregate);
		a->aggregator = les_pipeline_attach_aggregate(&a->consumer, &aggregate, o->records);
		if (!a->aggregator)
			return fail(LES_EXIT_RUNTIME, "cannot set up --aggregate: out of memory");
	}
	if (o->prom_listen) {
		les_prom_config_of(o, &prom);
		if (les_pipeline_attach_prom(&a->prom, &a->consumer, &prom, err, sizeof(err)))
			return fail(LES_EXIT_RUNTIME, "%s", err);
		if (o->verbose)
			fprintf(stderr, "lustre-ebpf-stream: metrics on port %u at %s\n",
				(unsigned int)les_prom_port(a->prom), o->prom_path);
	}
	return 0;
}

/*
 * The enricher, or with check only the check of the enrichment options
 * before anything is loaded (usage errors): an enricher made without its
 * resolver thread, as threads start only once capabilities are dropped.
 */
static int make_enricher(const struct les_options *o, const char *host, bool check,
			 struct les_enricher **out)
{
	struct les_enrich_config cfg = o->enrich;
	char err[512];
	int ret;

	*out = NULL;
	if (o->no_enrich)
		return 0;
	cfg.no_user_lookup = cfg.no_user_lookup || check;
	ret = les_enrich_new(out, &cfg, host, err, sizeof(err));
	if (ret == -EINVAL)
		return fail(LES_EXIT_USAGE, "%s (see --help)", err);
	if (ret)
		return fail(LES_EXIT_RUNTIME, "cannot set up enrichment: %s", strerror(-ret));
	return 0;
}

static int check_enrichment(const struct les_options *o, const char *host)
{
	struct les_enricher *e;
	int ret = make_enricher(o, host, true, &e);

	les_enrich_free(e);
	return ret;
}

/* A port below 1024 for --prometheus, bound after the drop, needs its capability. */
static bool prom_needs_bind_cap(const struct les_options *o)
{
	char host[256];
	uint16_t port;

	return o->prom_listen &&
	       les_prom_parse_listen(o->prom_listen, host, sizeof(host), &port) == 0 &&
	       port < 1024;
}

/*
 * After attaching, before any thread starts (capabilities are per
 * thread): keep only what enrichment reads /proc and cgroups with.
 */
static int drop_privileges(const struct les_options *o, struct les_tracer *t)
{
	uint64_t keep = 0;
	struct les_privs_result res;
	char err[256], names[256];

	if (o->keep_caps)
		return 0;
	if (!o->no_enrich)
		keep |= LES_CAP_BIT(CAP_SYS_PTRACE) | LES_CAP_BIT(CAP_DAC_READ_SEARCH);
	if (prom_needs_bind_cap(o))
		keep |= LES_CAP_BIT(CAP_NET_BIND_SERVICE);
	if (les_privs_drop(keep, les_tracer_map_access, t, &res, err, sizeof(err)))
		return fail(LES_EXIT_RUNTIME, "cannot drop capabilities: %s (--keep-caps to skip)",
			    err);
	if (o->verbose) {
		les_privs_caps_names(res.kept, names, sizeof(names));
		fprintf(stderr, "lustre-ebpf-stream: capabilities kept: %s%s\n", names,
			res.bpf_for_maps ? " (cap_bpf: this kernel checks it on map access)" : "");
	}
	if (res.other_threads)
		fprintf(stderr,
			"lustre-ebpf-stream: warning: %d thread(s) started before the drop keep "
			"their capabilities\n",
			res.other_threads);
	return 0;
}

/*
 * The options came from a file others could have written: refuse to act on
 * them. A usage error (2): restarting cannot fix it, and the unit's
 * RestartPreventExitStatus=2 stops systemd from trying every 5 s.
 */
static int check_config_path(const struct les_options *o)
{
	char err[512];

	if (o->config_path && les_privs_check_path("--config", o->config_path, err, sizeof(err)))
		return fail(LES_EXIT_USAGE, "%s", err);
	return 0;
}

/* --output: a path others could write or replace is refused (outfile.h). */
static int open_output(struct les_sink_file *out, const struct les_options *o)
{
	if (les_sink_file_open(out, o->output))
		return fail(LES_EXIT_RUNTIME, "--output %s: %s", o->output, out->why);
	return 0;
}

/*
 * The run after the checks: mounts, output, probes, consumer, then the
 * privileges dropped and the stages that start threads; one cleanup path.
 */
static int start_and_run(struct app *a)
{
	const struct les_options *o = a->o;
	int ret;

	/*
	 * Before anything is attached: a SIGTERM during start-up stops the
	 * run through the one cleanup path (run() sees it before its first
	 * poll; the tracefs events go), not by the default action, which
	 * leaves them behind.
	 */
	install_signals();
	ret = check_enrichment(o, a->host);
	ret = ret ?: select_mounts(o, &a->observed);
	if (ret)
		return ret;
	les_mountwatch_open(&a->mountwatch, o->mountinfo_path);
	ret = open_output(&a->out, o);
	ret = ret ?: start_tracer(&a->tracer, o, &a->observed);
	if (ret)
		return ret;
	les_consumer_config_of(o, &a->consumer_cfg);
	les_consumer_init(&a->consumer, &a->consumer_cfg, &a->observed, a->host);
	les_pipeline_attach_file(&a->consumer, &a->out);
	if (les_tracer_ring(&a->tracer, les_consumer_on_record, &a->consumer))
		return fail(LES_EXIT_RUNTIME, "cannot set up the ring buffer: %s", strerror(errno));
	/* Every thread (user names, librdkafka, microhttpd) starts after this. */
	ret = drop_privileges(o, &a->tracer);
	ret = ret ?: make_enricher(o, a->host, false, &a->enricher);
	if (ret)
		return ret;
	a->consumer.enricher = a->enricher;
	ret = open_kafka(a);
	ret = ret ?: open_aggregation(a);
	ret = ret ?: open_summary(a);
	ret = ret ?: open_top(a);
	if (ret)
		return ret;
	/* After attach: a process that starts meanwhile sends an exec notice. */
	if (a->enricher)
		les_enrich_scan(a->enricher, NULL);
	if (o->verbose)
		fprintf(stderr, "lustre-ebpf-stream: observing %zu mount(s), %zu probes attached\n",
			a->observed.n, a->tracer.n_links);
	/* systemd Type=notify: started means attached. */
	les_sd_notify("READY=1");
	ret = run(a);
	les_sd_notify("STOPPING=1");
	print_summary(a);
	return ret;
}

static int app_free(struct app *a, int ret)
{
	if (a->top.screen)
		les_top_screen_close();
	les_top_free(a->top.view);
	/* Exit status 1 when a line did not reach Kafka. */
	if (les_sink_kafka_close(a->kafka) && ret == LES_EXIT_OK)
		ret = LES_EXIT_RUNTIME;
	les_prom_free(a->prom);
	les_aggregate_free(a->aggregator);
	les_tracer_destroy(&a->tracer);
	les_enrich_free(a->enricher);
	/* The file's last bytes (a gzip end, NFS's delayed errors) go out at close. */
	if (les_sink_file_close(&a->out) && ret == LES_EXIT_OK)
		ret = fail(LES_EXIT_RUNTIME, "closing %s: %s", a->out.path ? a->out.path : "stdout",
			   strerror(a->out.last_errno));
	les_observed_free(&a->observed);
	les_mountwatch_close(&a->mountwatch);
	les_summary_free(a->summary);
	free(a);
	return ret;
}

int main(int argc, char **argv)
{
	struct les_options opts;
	struct app *a;
	int ret;

	les_options_defaults(&opts);
	ret = les_options_parse(&opts, argc, argv);
	if (ret)
		return ret == 1 ? LES_EXIT_OK : ret;
	verbosity = opts.verbose;
	/* A capture replayed: no probes, no privileges needed. */
	if (opts.input_path) {
		struct les_replay_config replay;

		if (!opts.top)
			return fail(LES_EXIT_USAGE, "--input replays a capture in --top: add --top");
		les_replay_config_of(&opts, &replay);
		return les_replay_run(&replay) ? LES_EXIT_RUNTIME : LES_EXIT_OK;
	}
	/* --top owns stdout: records go to -o FILE or nowhere, no status line. */
	if (opts.top) {
		if (!opts.output || strcmp(opts.output, "-") == 0)
			opts.output = "/dev/null";
		if (opts.summary == -1)
			opts.summary = 0;
	}
	libbpf_set_print(libbpf_print);

	if (opts.dump_kernel_facts)
		return dump_kernel_facts();
	if (opts.list_probes)
		return list_probes(&opts);
	ret = check_config_path(&opts);
	ret = ret ?: check_not_journal(&opts);
	ret = ret ?: check_kafka(&opts);
	ret = ret ?: preflight();
	if (ret)
		return ret;
	a = calloc(1, sizeof(*a));
	if (!a)
		return fail(LES_EXIT_RUNTIME, "out of memory");
	a->o = &opts;
	a->mountwatch.fd = -1;
	/* In a pod gethostname() is the pod's name: --hostname gives the node's. */
	snprintf(a->host, sizeof(a->host), "%s", opts.hostname ? opts.hostname : "unknown");
	if (!opts.hostname)
		gethostname(a->host, sizeof(a->host) - 1);
	ret = app_free(a, start_and_run(a));
	les_options_release();
	return ret;
}
