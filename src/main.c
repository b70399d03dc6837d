// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lustre-ebpf-stream: probe -> ring -> decode -> enrich -> sinks.
 * main only wires the stages together; each lives in src/.
 */
#include <errno.h>
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
#include "aggregate.h"
#include "consumer.h"
#include "enrich.h"
#include "mounts.h"
#include "observed.h"
#include "options.h"
#include "probes.h"
#include "prom.h"
#include "sink.h"
#include "sink_kafka.h"
#include "tracer.h"

static volatile sig_atomic_t exiting;
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

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
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

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
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

static int start_tracer(struct les_tracer *t, const struct les_options *o,
			const struct les_observed *obs)
{
	struct les_probe_plan plan;
	int err;

	les_probe_plan_make(&plan, o->attach);
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
	les_consumer_emit_stats(c, &ks, final);
	les_sink_file_flush(c->file);
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
	next = now + 1000000000ULL;
}

static int run(struct les_consumer *c, struct les_tracer *t, const struct les_options *o)
{
	uint64_t start = mono_ns(), next_stats = start + o->stats_interval_ns;
	int err = 0;

	while (!exiting && !c->stop) {
		uint64_t now;

		err = les_tracer_poll(t, (int)o->poll_ms);
		if (err == -EINTR || c->stop) {
			/* A signal, --count reached, or the reader went away. */
			err = 0;
			break;
		}
		if (err < 0 && err != -ECANCELED)
			break;
		err = 0;
		les_sink_file_flush(c->file);
		les_sink_kafka_poll(kafka);
		now = mono_ns();
		les_aggregate_tick(aggregator, les_fmt_epoch_ns(&c->fmt, now));
		tick_prometheus(c, t, now);
		if (o->duration_ns && now - start >= o->duration_ns)
			break;
		if (o->stats_interval_ns && now >= next_stats) {
			les_tracer_sweep(t, o->stale_timeout_ns);
			emit_stats(c, t, false);
			next_stats = now + o->stats_interval_ns;
		}
	}
	/* What is already in the ring was produced inside the run: take it. */
	if (!c->stop)
		les_tracer_poll(t, 0);
	/* The last window is cut short: it goes out marked partial. */
	les_aggregate_flush(aggregator, les_fmt_epoch_ns(&c->fmt, mono_ns()));
	/* The final stats record tells what Kafka could not take: flush first. */
	les_sink_kafka_flush(kafka, o->kafka_flush_timeout_ns);
	emit_stats(c, t, true);
	if (err)
		return fail(LES_EXIT_RUNTIME, "reading the ring buffer: %s", strerror(-err));
	return LES_EXIT_OK;
}

/* Before the BPF programs load, so that a bad -X fails fast. */
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

/* Enrichment options are checked before anything is loaded: usage errors. */
static int open_enrichment(const struct les_options *o, const char *host)
{
	char err[512];
	int ret;

	if (o->no_enrich)
		return 0;
	ret = les_enrich_new(&enricher, &o->enrich, host, err, sizeof(err));
	if (ret == -EINVAL)
		return fail(LES_EXIT_USAGE, "%s (see --help)", err);
	if (ret)
		return fail(LES_EXIT_RUNTIME, "cannot set up enrichment: %s", strerror(-ret));
	return 0;
}

int main(int argc, char **argv)
{
	struct les_options opts;
	struct les_observed observed = { 0 };
	struct les_tracer tracer = { 0 };
	struct les_sink_file out = { 0 };
	struct les_consumer *consumer = NULL;
	struct les_probe_plan plan;
	char host[256] = "unknown";
	int ret;

	les_options_defaults(&opts);
	ret = les_options_parse(&opts, argc, argv);
	if (ret)
		return ret == 1 ? LES_EXIT_OK : ret;
	verbosity = opts.verbose;
	libbpf_set_print(libbpf_print);

	if (opts.list_probes) {
		les_probe_plan_make(&plan, opts.attach);
		les_probe_plan_print(&plan, stdout, opts.list_probes == LES_LIST_JSON);
		return LES_EXIT_OK;
	}
	ret = preflight();
	if (ret)
		return ret;
	gethostname(host, sizeof(host) - 1);
	ret = open_enrichment(&opts, host);
	if (ret)
		goto cleanup;
	ret = select_mounts(&opts, &observed);
	if (ret)
		goto cleanup;
	ret = open_kafka(&opts);
	if (ret)
		goto cleanup;
	ret = les_sink_file_open(&out, opts.output);
	if (ret) {
		ret = fail(LES_EXIT_RUNTIME, "cannot open %s: %s", opts.output, strerror(-ret));
		goto cleanup;
	}
	ret = start_tracer(&tracer, &opts, &observed);
	if (ret)
		goto cleanup;
	consumer = calloc(1, sizeof(*consumer));
	if (!consumer) {
		ret = fail(LES_EXIT_RUNTIME, "out of memory");
		goto cleanup;
	}
	les_consumer_init(consumer, &opts, &observed, &out, host);
	consumer->enricher = enricher;
	if (kafka) {
		les_consumer_add_line_sink(consumer, les_sink_kafka_line, kafka);
		les_consumer_add_stats_hook(consumer, les_sink_kafka_stats, kafka);
	}
	ret = open_aggregation(consumer, &opts);
	if (ret)
		goto cleanup;
	if (les_tracer_ring(&tracer, les_consumer_on_record, consumer)) {
		ret = fail(LES_EXIT_RUNTIME, "cannot set up the ring buffer: %s", strerror(errno));
		goto cleanup;
	}
	/* After attach: a process that starts meanwhile sends an exec notice. */
	if (enricher)
		les_enrich_scan(enricher, NULL);
	install_signals();
	if (opts.verbose)
		fprintf(stderr, "lustre-ebpf-stream: observing %zu mount(s), %zu probes attached\n",
			observed.n, tracer.n_links);
	ret = run(consumer, &tracer, &opts);
cleanup:
	/* Exit status 1 when a line did not reach Kafka. */
	if (les_sink_kafka_close(kafka) && ret == LES_EXIT_OK)
		ret = LES_EXIT_RUNTIME;
	les_prom_free(prom);
	les_aggregate_free(aggregator);
	les_tracer_destroy(&tracer);
	les_enrich_free(enricher);
	les_sink_file_close(&out);
	les_observed_free(&observed);
	free(consumer);
	return ret;
}
