// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lustre-ebpf-stream: probe -> ring -> decode -> enrich -> sinks.
 * main only wires the stages together; each lives in src/.
 */
#include <errno.h>
#include <inttypes.h>
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
#include "clock.h"
#include "aggregate.h"
#include "consumer.h"
#include "enrich.h"
#include "mounts.h"
#include "mountwatch.h"
#include "observed.h"
#include "options.h"
#include "privs.h"
#include "probes.h"
#include "prom.h"
#include "sdnotify.h"
#include "replay.h"
#include "top.h"
#include "summary.h"
#include "sink.h"
#include "sink_kafka.h"
#include "tracer.h"

static volatile sig_atomic_t exiting;
static volatile sig_atomic_t reopen_output; /* SIGHUP: logrotate moved the file */
static struct les_summary *summary; /* NULL: no summary at exit */
static struct les_status status; /* .out NULL: no status line */
static struct les_sink_kafka *kafka; /* NULL without --kafka-brokers */
static struct les_aggregate *aggregator; /* NULL without --aggregate */
static struct les_prom *prom; /* NULL without --prometheus */

/* First signal asks for a clean stop; a second one kills. */
static void on_signal(int sig)
{
	if (exiting)
		signal(sig, SIG_DFL);
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

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (verbosity < 2 && level != LIBBPF_WARN)
		return 0;
	if (verbosity < 1)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static int fail(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("lustre-ebpf-stream: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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
	if (ret)
		return fail(LES_EXIT_RUNTIME, "%s", err);
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
	if (!o->kernel_facts_path && has_bpf_caps() &&
	    access("/sys/kernel/btf/vmlinux", R_OK) == 0 && les_tracer_open(&t) == 0 &&
	    les_tracer_configure(&t, o, &plan) == 0)
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
	struct les_probe_plan plan;
	int err;

	if (plan_this_kernel(&plan, o))
		return fail(LES_EXIT_RUNTIME, "out of memory");
	if (plan.fuse == LES_FUSE_NONE && plan.access == LES_ATTACH_NONE)
		return fail(LES_EXIT_RUNTIME, "no probe can attach on this kernel: %s",
			    plan.access_reason);
	err = les_tracer_open(t);
	if (err)
		return fail(LES_EXIT_RUNTIME, "cannot open the BPF object: %s", strerror(-err));
	err = les_tracer_configure(t, o, &plan);
	if (err)
		return fail(LES_EXIT_RUNTIME, "cannot configure the BPF object: %s",
			    strerror(-err));
	err = les_tracer_load(t);
	if (err)
		return fail(LES_EXIT_RUNTIME, "cannot load the BPF programs: %s%s", strerror(-err),
			    err == -EPERM ? " (root or CAP_BPF+CAP_PERFMON needed)" : "");
	err = les_tracer_set_mounts(t, obs);
	if (err)
		return fail(LES_EXIT_RUNTIME, "cannot program the observed mounts: %s",
			    strerror(-err));
	err = les_tracer_attach(t, o->verbose);
	if (err)
		return fail(LES_EXIT_RUNTIME, "cannot attach any probe: %s", strerror(-err));
	return 0;
}

static void emit_stats(struct les_consumer *c, struct les_tracer *t, bool final)
{
	struct les_kernel_stats ks;

	les_tracer_read_stats(t, &ks);
	/* Lines still buffered are written (or dropped) before they are counted. */
	les_sink_file_flush(c->file);
	les_consumer_emit_stats(c, &ks, final);
	les_sink_file_flush(c->file);
	/* -v: the final numbers also when the records go to /dev/null (benchmarks). */
	if (final && c->opts->verbose && !c->jw.overflow)
		fprintf(stderr, "lustre-ebpf-stream: final stats: %.*s", (int)c->jw.len, c->line);
}

/* A full disk loses lines: say so on stderr, at most once per interval. */
static void warn_output_drops(const struct les_consumer *c, const struct les_options *o,
			      uint64_t now)
{
	static uint64_t reported, next;
	const struct les_sink_file *f = c->file;

	if (!f || !f->last_errno || f->dropped == reported || now < next)
		return;
	fprintf(stderr,
		"lustre-ebpf-stream: warning: writing %s: %s: %" PRIu64 " lines (%" PRIu64
		" records) dropped so far\n",
		f->path ? f->path : "stdout", strerror(f->last_errno), f->dropped,
		f->records_dropped);
	reported = f->dropped;
	next = now + (o->stats_interval_ns ? o->stats_interval_ns : 10 * LES_NS_PER_SEC);
}

static struct les_mountwatch mountwatch = { .fd = -1 };
static struct les_observed *observed_mounts; /* main's, changed by refresh_mounts */

/*
 * The mount table changed: observe what is there now (the same --mount
 * paths, or every supported mount), tell BPF, and put out a notice per
 * mount gone or added. Records already in the ring are taken first, while
 * their mounts are still known.
 */
static void refresh_mounts(struct les_consumer *c, struct les_tracer *t,
			   const struct les_options *o, struct les_observed *obs)
{
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
	les_tracer_poll(t, 0);
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
static void tick_prometheus(struct les_consumer *c, struct les_tracer *t, uint64_t now)
{
	static uint64_t next;
	struct les_kernel_stats ks;

	if (!prom || now < next)
		return;
	les_tracer_read_stats(t, &ks);
	les_prom_update_stats(prom, c, &ks);
	les_prom_tick(prom, now);
	next = now + LES_NS_PER_SEC;
}

/* SIGHUP: close and reopen the output file (the old one was rotated away). */
static void reopen_if_asked(struct les_consumer *c, const struct les_options *o)
{
	int err;

	if (!reopen_output)
		return;
	reopen_output = 0;
	err = les_sink_file_reopen(c->file);
	if (err)
		fail(0, "cannot reopen %s: %s; lines are counted as dropped until the next SIGHUP",
		     o->output, strerror(-err));
	else if (o->verbose && c->file->path)
		fprintf(stderr, "lustre-ebpf-stream: reopened %s\n", c->file->path);
}

/* Once a second on a terminal: the status line. */
static void tick_status(struct les_consumer *c, struct les_tracer *t, uint64_t now,
			uint64_t start, const struct les_options *o)
{
	static uint64_t next;
	struct les_kernel_stats ks;

	if (!status.out || now < next)
		return;
	les_tracer_read_stats(t, &ks);
	les_status_update(&status, now, now - start, o->duration_ns, c->emitted,
			  ks.counters[LES_CNT_RB_DROPPED] + les_consumer_dropped(c));
	next = now + LES_NS_PER_SEC;
}

/* Summary on stderr when the run ends, with the final stats record's numbers. */
static void print_summary(struct les_consumer *c, struct les_tracer *t)
{
	struct les_summary_totals tot = { 0 };
	struct les_kernel_stats ks;

	les_status_clear(&status);
	if (!summary)
		return;
	les_tracer_read_stats(t, &ks);
	tot.elapsed_ns = les_mono_ns() - c->start_mono_ns;
	tot.emitted = c->emitted;
	tot.dropped = ks.counters[LES_CNT_RB_DROPPED] + les_consumer_dropped(c);
	tot.filtered = ks.counters[LES_CNT_FILTERED] + c->filtered_userspace;
	les_summary_print(summary, &tot, stderr);
}

/*
 * --summary, or by default when stderr is a terminal; the status line only
 * on a terminal and when the records do not go to that same terminal.
 */
static int open_summary(struct les_consumer *c, const struct les_options *o)
{
	bool tty = isatty(STDERR_FILENO);
	bool records_on_tty = (!o->output || strcmp(o->output, "-") == 0) && isatty(STDOUT_FILENO);

	if (o->summary == 1 || (o->summary == -1 && tty)) {
		summary = les_summary_new();
		if (!summary || les_consumer_add_event_sink(c, les_summary_event, summary))
			return fail(LES_EXIT_RUNTIME, "cannot set up the summary");
	}
	if (tty && !records_on_tty && !o->top)
		status.out = stderr;
	return 0;
}

/* --top: the view, its screen (NULL: plain frames on stdout), frames shown. */
static struct les_top *top;
static struct les_top_view top_view;
static bool top_screen;
static uint32_t top_frames;

static int open_top(struct les_consumer *c, const struct les_options *o)
{
	if (!o->top)
		return 0;
	top = les_top_new();
	if (!top || les_consumer_add_event_sink(c, les_top_event, top))
		return fail(LES_EXIT_RUNTIME, "cannot set up --top: out of memory");
	top_screen = !o->top_batch && isatty(STDOUT_FILENO);
	if (top_screen && les_top_screen_open())
		return fail(LES_EXIT_RUNTIME, "cannot set up the --top screen (TERM=%s)",
			    getenv("TERM") ? getenv("TERM") : "");
	return 0;
}

static void top_header(struct les_consumer *c, struct les_tracer *t, struct les_top_header *h)
{
	struct les_kernel_stats ks;

	memset(h, 0, sizeof(*h));
	les_tracer_read_stats(t, &ks);
	h->dropped = ks.counters[LES_CNT_RB_DROPPED] + les_consumer_dropped(c);
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
static void tick_top(struct les_consumer *c, struct les_tracer *t, uint64_t now,
		     const struct les_options *o)
{
	static char frame[64 * 1024];
	static uint64_t last;
	struct les_top_header h;
	int key, width = 80, height = 0;
	bool redraw = false;

	if (!top)
		return;
	while (top_screen && (key = les_top_screen_key()) >= 0)
		redraw |= les_top_key(&top_view, key);
	les_top_screen_ask_filter(&top_view, top);
	if (top_view.quit) {
		c->stop = true;
		return;
	}
	if (!last)
		last = now;
	if (now >= last + o->top_interval_ns) {
		top_header(c, t, &h);
		les_top_close_interval(top, (double)(now - last) / 1e9,
				       les_fmt_epoch_ns(&c->fmt, now), &h);
		last = now;
		redraw = true;
		top_frames++;
	}
	if (!redraw || !top_frames)
		return;
	if (top_screen)
		les_top_screen_size(&width, &height);
	les_top_render(top, top_view.group, top_view.sort, width, height, frame, sizeof(frame));
	if (top_screen) {
		les_top_screen_draw(frame);
	} else {
		/* Plain frames, as top -b prints them: a blank line between. */
		fputs(frame, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	}
	if (o->top_batch && top_frames >= o->top_batch)
		c->stop = true;
}

static int run(struct les_consumer *c, struct les_tracer *t, const struct les_options *o)
{
	uint64_t start = les_mono_ns(), next_stats = start + o->stats_interval_ns;
	int err = 0;

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
		les_sink_file_flush(c->file);
		reopen_if_asked(c, o);
		les_sink_kafka_poll(kafka);
		now = les_mono_ns();
		tick_status(c, t, now, start, o);
		warn_output_drops(c, o, now);
		if (les_mountwatch_changed(&mountwatch))
			refresh_mounts(c, t, o, observed_mounts);
		les_aggregate_tick(aggregator, les_fmt_epoch_ns(&c->fmt, now));
		tick_prometheus(c, t, now);
		tick_top(c, t, now, o);
		if (o->duration_ns && now - start >= o->duration_ns)
			break;
		if (o->stats_interval_ns && now >= next_stats) {
			les_tracer_sweep(t, o->stale_timeout_ns);
			emit_stats(c, t, false);
			next_stats = now + o->stats_interval_ns;
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
	les_tracer_poll(t, 0);
	/* The last window is cut short: it goes out marked partial. */
	les_aggregate_flush(aggregator, les_fmt_epoch_ns(&c->fmt, les_mono_ns()));
	/* The final stats record tells what Kafka could not take: flush first. */
	les_sink_kafka_flush(kafka, o->kafka_flush_timeout_ns);
	emit_stats(c, t, true);
	if (c->file && c->file->last_errno && c->file->dropped)
		fprintf(stderr,
			"lustre-ebpf-stream: writing %s: %" PRIu64 " lines (%" PRIu64
			" records) dropped: %s\n",
			c->file->path ? c->file->path : "stdout", c->file->dropped,
			c->file->records_dropped, strerror(c->file->last_errno));
	if (err)
		return fail(LES_EXIT_RUNTIME, "reading the ring buffer: %s", strerror(-err));
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
	char err[512];
	int ret = les_sink_kafka_check(o, err, sizeof(err));

	if (ret)
		return fail(ret == -EINVAL ? LES_EXIT_USAGE : LES_EXIT_RUNTIME, "%s", err);
	return 0;
}

/*
 * After the capability drop: librdkafka's threads block every signal and
 * would keep whatever the process held when they started.
 */
static int open_kafka(const struct les_options *o)
{
	char err[512];
	int ret = les_sink_kafka_open(&kafka, o, err, sizeof(err));

	if (ret)
		return fail(ret == -EINVAL ? LES_EXIT_USAGE : LES_EXIT_RUNTIME, "%s", err);
	return 0;
}

/* --aggregate and --prometheus: event sinks of the consumer. */
static int open_aggregation(struct les_consumer *c, const struct les_options *o)
{
	char err[512];

	if (o->aggregate_ns) {
		aggregator = les_aggregate_attach(c, o);
		if (!aggregator)
			return fail(LES_EXIT_RUNTIME, "cannot set up --aggregate: out of memory");
	}
	if (o->prom_listen) {
		if (les_prom_attach(&prom, c, o, err, sizeof(err)))
			return fail(LES_EXIT_RUNTIME, "%s", err);
		if (o->verbose)
			fprintf(stderr, "lustre-ebpf-stream: metrics on port %u at %s\n",
				(unsigned int)les_prom_port(prom), o->prom_path);
	}
	return 0;
}

static struct les_enricher *enricher;

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

/* The options came from a file others could have written: refuse to act on them. */
static int check_config_path(const struct les_options *o)
{
	char err[512];

	if (o->config_path && les_privs_check_path("--config", o->config_path, err, sizeof(err)))
		return fail(LES_EXIT_RUNTIME, "%s", err);
	return 0;
}

/* --output: refuse a path others could write or replace; created 0640. */
static int open_output(struct les_sink_file *out, const struct les_options *o)
{
	char err[512];
	int ret = les_privs_check_path("--output", o->output, err, sizeof(err));

	if (ret)
		return fail(LES_EXIT_RUNTIME, "%s", err);
	ret = les_sink_file_open(out, o->output);
	if (ret)
		return fail(LES_EXIT_RUNTIME, "cannot open %s: %s", o->output, strerror(-ret));
	return 0;
}

int main(int argc, char **argv)
{
	struct les_options opts;
	struct les_observed observed = { 0 };
	struct les_tracer tracer = { 0 };
	struct les_sink_file out = { 0 };
	struct les_consumer *consumer = NULL;
	char host[256] = "unknown";
	int ret;

	les_options_defaults(&opts);
	ret = les_options_parse(&opts, argc, argv);
	if (ret)
		return ret == 1 ? LES_EXIT_OK : ret;
	verbosity = opts.verbose;
	/* A capture replayed: no probes, no privileges needed. */
	if (opts.input_path) {
		if (!opts.top)
			return fail(LES_EXIT_USAGE, "--input replays a capture in --top: add --top");
		return les_replay_run(&opts) ? LES_EXIT_RUNTIME : LES_EXIT_OK;
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
	gethostname(host, sizeof(host) - 1);
	ret = check_enrichment(&opts, host);
	if (ret)
		goto cleanup;
	ret = select_mounts(&opts, &observed);
	if (ret)
		goto cleanup;
	observed_mounts = &observed;
	les_mountwatch_open(&mountwatch, opts.mountinfo_path);
	ret = open_output(&out, &opts);
	if (ret)
		goto cleanup;
	ret = start_tracer(&tracer, &opts, &observed);
	if (ret)
		goto cleanup;
	consumer = calloc(1, sizeof(*consumer));
	if (!consumer) {
		ret = fail(LES_EXIT_RUNTIME, "out of memory");
		goto cleanup;
	}
	les_consumer_init(consumer, &opts, &observed, &out, host);
	if (les_tracer_ring(&tracer, les_consumer_on_record, consumer)) {
		ret = fail(LES_EXIT_RUNTIME, "cannot set up the ring buffer: %s", strerror(errno));
		goto cleanup;
	}
	/* Every thread (user names, librdkafka, microhttpd) starts after this. */
	ret = drop_privileges(&opts, &tracer);
	if (ret)
		goto cleanup;
	ret = make_enricher(&opts, host, false, &enricher);
	if (ret)
		goto cleanup;
	consumer->enricher = enricher;
	ret = open_kafka(&opts);
	if (ret)
		goto cleanup;
	if (kafka) {
		les_consumer_add_line_sink(consumer, les_sink_kafka_line, kafka);
		les_consumer_add_stats_hook(consumer, les_sink_kafka_stats, kafka);
	}
	ret = open_aggregation(consumer, &opts);
	ret = ret ?: open_summary(consumer, &opts);
	ret = ret ?: open_top(consumer, &opts);
	if (ret)
		goto cleanup;
	/* After attach: a process that starts meanwhile sends an exec notice. */
	if (enricher)
		les_enrich_scan(enricher, NULL);
	install_signals();
	if (opts.verbose)
		fprintf(stderr, "lustre-ebpf-stream: observing %zu mount(s), %zu probes attached\n",
			observed.n, tracer.n_links);
	/* systemd Type=notify: started means attached. */
	les_sd_notify("READY=1");
	ret = run(consumer, &tracer, &opts);
	les_sd_notify("STOPPING=1");
	print_summary(consumer, &tracer);
cleanup:
	if (top_screen)
		les_top_screen_close();
	les_top_free(top);
	/* Exit status 1 when a line did not reach Kafka. */
	if (les_sink_kafka_close(kafka) && ret == LES_EXIT_OK)
		ret = LES_EXIT_RUNTIME;
	les_prom_free(prom);
	les_aggregate_free(aggregator);
	les_tracer_destroy(&tracer);
	les_enrich_free(enricher);
	les_sink_file_close(&out);
	les_observed_free(&observed);
	les_mountwatch_close(&mountwatch);
	free(consumer);
	les_summary_free(summary);
	les_options_release();
	return ret;
}
