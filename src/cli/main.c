// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lustre-ebpf-stream: probe -> ring -> decode -> enrich -> sinks.
 * main parses the options, builds and attaches the stages (each lives in
 * src/), hands them to the run loop (pipeline/run.c), cleans up and turns
 * the result into an exit status.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "pipeline/wiring.h"
#include "pipeline/consumer.h"
#include "pipeline/run.h"
#include "pipeline/sinks.h"
#include "enrich/enrich.h"
#include "model/mounts.h"
#include "decode/mountwatch.h"
#include "model/observed.h"
#include "cli/options.h"
#include "cli/privs.h"
#include "cli/join_cmd.h"
#include "cli/report_cmd.h"
#include "probe/probes.h"
#include "cli/sdnotify.h"
#include "sink/replay.h"
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

/* One run: the options, the stages (in the run loop's struct), the enricher. */
struct app {
	const struct les_options *o;
	char host[256];
	struct les_consumer_config consumer_cfg; /* the consumer reads it on every record */
	struct les_run_config run_cfg;
	struct les_sinks_config sinks_cfg; /* the sinks keep it for the run */
	struct les_run run;
	struct les_enricher *enricher; /* NULL with --no-enrich */
	char **real_mounts;	       /* --mount's paths resolved at start, followed as text */
};

/* libbpf's print level: its print callback takes no context. */
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
	va_list ap;

	va_start(ap, fmt);
	les_vsay(fmt, ap);
	va_end(ap);
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

static int select_mounts(struct app *a)
{
	const struct les_options *o = a->o;
	struct les_observed *obs = &a->run.observed;
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
	/*
	 * Resolved once, before the probes: when the mounts change, the run
	 * chooses again from these by text, never by a walk of the mounts.
	 */
	if (o->n_mounts) {
		a->real_mounts = les_observed_real_paths(o->mounts, o->n_mounts);
		if (!a->real_mounts)
			return fail(LES_EXIT_RUNTIME, "--mount: %s", strerror(errno));
		a->run_cfg.mounts = (const char *const *)a->real_mounts;
	}
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

/* The status line: on a terminal, when the records do not go to that same terminal. */
static void open_status(struct app *a)
{
	const struct les_options *o = a->o;
	bool tty = isatty(STDERR_FILENO);
	bool records_on_tty = (!o->output || strcmp(o->output, "-") == 0) && isatty(STDOUT_FILENO);

	if (tty && !records_on_tty && !o->top)
		a->run.status.out = stderr;
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

/* Every sink's options (Kafka's properties), before anything loads or the output file is touched. */
static int check_sinks(const struct les_options *o)
{
	struct les_sinks_config cfg;
	char err[512];
	int ret;

	les_sinks_config_of(o, &cfg);
	ret = les_sinks_check(&cfg, err, sizeof(err));
	if (ret)
		return fail(ret == -EINVAL ? LES_EXIT_USAGE : LES_EXIT_RUNTIME, "%s", err);
	return 0;
}

/*
 * After the capability drop (librdkafka's and microhttpd's threads keep
 * what the process held when they started): the sinks of sinks.c.
 */
static int open_sinks(struct app *a)
{
	char err[512];
	int ret;

	ret = les_sinks_open(&a->run, &a->sinks_cfg, err, sizeof(err));
	if (ret)
		return fail(ret == -EINVAL ? LES_EXIT_USAGE : LES_EXIT_RUNTIME, "%s", err);
	open_status(a);
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

/*
 * After attaching, before any thread starts (capabilities are per
 * thread): keep only what enrichment reads /proc and cgroups with.
 */
static int drop_privileges(const struct les_options *o, const struct les_sinks_config *sinks,
			   struct les_tracer *t)
{
	uint64_t keep = 0;
	struct les_privs_result res;
	char err[256], names[256];

	if (o->keep_caps)
		return 0;
	if (!o->no_enrich)
		keep |= LES_CAP_BIT(CAP_SYS_PTRACE) | LES_CAP_BIT(CAP_DAC_READ_SEARCH);
	if (les_sinks_bind_privileged_port(sinks))
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

/* Before the probes load: the output (sinks.c's early rows), its path checked as root. */
static int open_output(struct app *a)
{
	char err[512];
	int ret;

	ret = les_sinks_open_early(&a->run, &a->sinks_cfg, err, sizeof(err));
	if (ret)
		return fail(ret == -EINVAL ? LES_EXIT_USAGE : LES_EXIT_RUNTIME, "%s", err);
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
	 * run through the one cleanup path (les_run() sees it before its first
	 * poll; the tracefs events go), not by the default action, which
	 * leaves them behind.
	 */
	les_run_install_signals();
	ret = check_enrichment(o, a->host);
	ret = ret ?: select_mounts(a);
	if (ret)
		return ret;
	les_mountwatch_open(&a->run.mountwatch, o->mountinfo_path);
	ret = open_output(a);
	ret = ret ?: start_tracer(&a->run.tracer, o, &a->run.observed);
	if (ret)
		return ret;
	les_consumer_config_of(o, &a->consumer_cfg);
	/* Decided once, from what attached: a client-only node has no join. */
	a->consumer_cfg.join = a->run.tracer.n_server_links > 0;
	les_consumer_init(&a->run.consumer, &a->consumer_cfg, &a->run.observed, a->host);
	if (les_tracer_ring(&a->run.tracer, les_consumer_on_record, &a->run.consumer))
		return fail(LES_EXIT_RUNTIME, "cannot set up the ring buffer: %s", strerror(errno));
	/* Every thread (user names, librdkafka, microhttpd) starts after this. */
	ret = drop_privileges(o, &a->sinks_cfg, &a->run.tracer);
	ret = ret ?: make_enricher(o, a->host, false, &a->enricher);
	if (ret)
		return ret;
	les_consumer_set_enricher(&a->run.consumer, a->enricher);
	ret = open_sinks(a);
	if (ret)
		return ret;
	/* After attach: a process that starts meanwhile sends an exec notice. */
	if (a->enricher)
		les_enrich_scan(a->enricher, NULL);
	if (o->verbose)
		fprintf(stderr, "lustre-ebpf-stream: observing %zu mount(s), %zu probes attached\n",
			a->run.observed.n, a->run.tracer.n_links);
	/* systemd Type=notify: started means attached. */
	les_sd_notify("READY=1");
	ret = les_run(&a->run) ? LES_EXIT_RUNTIME : LES_EXIT_OK;
	les_sd_notify("STOPPING=1");
	les_run_clear_status(&a->run);
	return ret;
}

static int app_free(struct app *a, int ret)
{
	/*
	 * Exit status 1 when a sink lost what it took (a line that did not
	 * reach Kafka, the output's last bytes): each says why, unless the run
	 * failed already.
	 */
	a->run.failed = ret != LES_EXIT_OK;
	if (les_sinks_close(&a->run) && ret == LES_EXIT_OK)
		ret = LES_EXIT_RUNTIME;
	les_consumer_release(&a->run.consumer);
	les_tracer_destroy(&a->run.tracer);
	les_enrich_free(a->enricher);
	les_observed_free(&a->run.observed);
	les_observed_free_paths(a->real_mounts);
	les_mountwatch_close(&a->run.mountwatch);
	free(a);
	return ret;
}

/* --input: a capture replayed into --top or --otlp, one of them. */
static int replay_main(const struct les_options *o)
{
	struct les_replay_config replay;
	struct les_sinks_config sinks;

	if (!o->top && !o->otlp_url)
		return fail(LES_EXIT_USAGE,
			    "--input replays a capture in --top or into --otlp: add one of them");
	if (o->top && o->otlp_url)
		return fail(LES_EXIT_USAGE, "--input replays into --top or --otlp, not both");
	if (o->otlp_url) {
		les_sinks_config_of(o, &sinks);
		return les_replay_otlp_run(o->input_path, &sinks.otlp) ? LES_EXIT_RUNTIME :
									LES_EXIT_OK;
	}
	les_replay_config_of(o, &replay);
	return les_replay_run(&replay) ? LES_EXIT_RUNTIME : LES_EXIT_OK;
}

/*
 * The tool without a subcommand: tracing (the service), and the modes its
 * options select (--list-probes, --top --input, ...). Its options come
 * from the command line and the service's config file, read here only.
 */
static int trace_main(int argc, char **argv)
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
	if (opts.input_path)
		return replay_main(&opts);
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
	ret = ret ?: check_sinks(&opts);
	ret = ret ?: preflight();
	if (ret)
		return ret;
	a = calloc(1, sizeof(*a));
	if (!a)
		return fail(LES_EXIT_RUNTIME, "out of memory");
	a->o = &opts;
	les_run_config_of(&opts, &a->run_cfg);
	les_sinks_config_of(&opts, &a->sinks_cfg);
	a->run.cfg = &a->run_cfg;
	a->run.mountwatch.fd = -1;
	/* In a pod gethostname() is the pod's name: --hostname gives the node's. */
	snprintf(a->host, sizeof(a->host), "%s", opts.hostname ? opts.hostname : "unknown");
	if (!opts.hostname)
		gethostname(a->host, sizeof(a->host) - 1);
	ret = app_free(a, start_and_run(a));
	les_options_release();
	return ret;
}

/*
 * The subcommands, by the first word of the command line. The tracing
 * command is the first row, taken when that word names no other (or is an
 * option): a word that is no subcommand stays its usage error. Each
 * command parses its own arguments, after its name.
 */
struct command {
	const char *name; /* NULL: the tool without a subcommand */
	int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
	{ .name = NULL, .run = trace_main },
	{ .name = "report", .run = les_report_main },
	{ .name = "join", .run = les_join_main },
};

static const struct command *command_of(int argc, char **argv)
{
	if (argc < 2 || argv[1][0] == '-')
		return &commands[0];
	for (size_t i = 1; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, argv[1]) == 0)
			return &commands[i];
	return &commands[0];
}

int main(int argc, char **argv)
{
	const struct command *cmd = command_of(argc, argv);

	return cmd->name ? cmd->run(argc - 1, argv + 1) : cmd->run(argc, argv);
}
