// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The options, once: getopt's table, --help and the config file's names come from here. */
#include <stdbool.h>
#include <string.h>
#include "cli/config.h"
#include "cli/option_table.h"

#define HELP_COL 27 /* where --help's text starts, and its continuation lines */

/* clang-format off */
const struct les_opt les_opts[] = {
	/* What to observe */
	{ "mount", 'm', required_argument, "PATH", LES_SEC_OBSERVE,
	  "observe this mount (repeatable; default: every\n"
	  "Lustre, NFS and FUSE mount in /proc/self/mountinfo)", .complete = "mount" },
	{ "mountinfo", OPT_MOUNTINFO, required_argument, "FILE", LES_SEC_OBSERVE,
	  "the mount table to read and follow (e.g. the host's\n"
	  "/proc/1/mountinfo in a container)", .complete = "file" },
	{ "hostname", OPT_HOSTNAME, required_argument, "NAME", LES_SEC_OBSERVE,
	  "\"host\" of every record (default: gethostname;\n"
	  "in a pod, the node's name: spec.nodeName)", .complete = "none" },
	{ "attach", OPT_ATTACH, required_argument, "METHOD", LES_SEC_OBSERVE,
	  "auto|fentry|kprobe|syscall (default auto)",
	  .complete = "words:auto fentry kprobe syscall" },
	{ "list-probes", OPT_LIST_PROBES, optional_argument, "json", LES_SEC_OBSERVE,
	  "print the probes and the attach method chosen, exit", .complete = "words:text json" },
	{ "dump-kernel-facts", OPT_DUMP_KFACTS, no_argument, NULL, LES_SEC_OBSERVE,
	  "print what the plan reads of this kernel, exit" },
	{ "kernel-facts", OPT_KERNEL_FACTS, required_argument, "FILE", LES_SEC_OBSERVE,
	  "with --list-probes: plan from facts dumped on\n"
	  "another machine instead of this kernel's", .complete = "file" },

	/* Filters */
	{ "min-latency", OPT_MIN_LATENCY, required_argument, "DUR", LES_SEC_FILTERS,
	  "only ops at least this slow (e.g. 20ms)", .complete = "none" },
	{ "uid", 'u', required_argument, "UID", LES_SEC_FILTERS,
	  "only ops of this user", .complete = "uid" },
	{ "pid", 'p', required_argument, "PID", LES_SEC_FILTERS,
	  "only ops of this process", .complete = "pid" },
	{ "comm", OPT_COMM, required_argument, "NAME", LES_SEC_FILTERS,
	  "only ops of processes with this command name", .complete = "comm" },
	{ "op", OPT_OP, required_argument, "OP", LES_SEC_FILTERS,
	  "only these access ops (lookup, open, read, ...);\n"
	  "requests: those serving these ops (repeatable)",
	  LES_OPT_F_LIST, .complete = "list:ops" },
	{ "intent", OPT_INTENT, required_argument, "I", LES_SEC_FILTERS,
	  "only ops of these intents: namespace_read,\n"
	  "namespace_mutation, data_read, data_write, sync",
	  LES_OPT_F_LIST, .complete = "list:intents" },
	{ "job", OPT_JOB, required_argument, "ID", LES_SEC_FILTERS,
	  "only records of this job (after enrichment)", .complete = "none" },

	/* Output */
	{ "output", 'o', required_argument, "FILE", LES_SEC_OUTPUT,
	  "write to FILE ('-' = stdout, default; *.gz = gzip)", .complete = "file" },
	{ "file-id", OPT_FILE_ID, no_argument, NULL, LES_SEC_OUTPUT,
	  "add dev, ino and a Lustre FID to access records" },
	{ "stats-interval", OPT_STATS_INTERVAL, required_argument, "DUR", LES_SEC_OUTPUT,
	  "stats record every DUR (default 10s; 0: at exit only)", .complete = "none" },

	/* Kafka */
	{ "kafka-brokers", OPT_KAFKA_BROKERS, required_argument, "LIST", LES_SEC_KAFKA,
	  "bootstrap brokers, host:port[,host:port...]", .complete = "none" },
	{ "kafka-topic", OPT_KAFKA_TOPIC, required_argument, "NAME", LES_SEC_KAFKA,
	  "topic to produce to (needs --kafka-brokers)", .complete = "none" },
	{ "kafka-key", OPT_KAFKA_KEY, required_argument, "KEY", LES_SEC_KAFKA,
	  "message key: job_id (default; the host when a record\n"
	  "has no job), uid, host or none", .complete = "words:job_id uid host none" },
	{ NULL, 'X', required_argument, "PROP=VALUE", LES_SEC_KAFKA,
	  "librdkafka property, repeatable; topic.PROP for topic\n"
	  "properties; -X list prints them all", .complete = "words:list" },
	{ "kafka-queue-size", OPT_KAFKA_QUEUE_SIZE, required_argument, "MIB", LES_SEC_KAFKA,
	  "local queue for broker outages (default 256); when\n"
	  "full, lines are dropped and counted (dropped_kafka)", .complete = "none" },
	{ "kafka-flush-timeout", OPT_KAFKA_FLUSH_TIMEOUT, required_argument, "DUR", LES_SEC_KAFKA,
	  "wait this long at exit for delivery\n"
	  "(default 10s)", .complete = "none" },

	/* OTLP */
	{ "otlp", OPT_OTLP, required_argument, "URL", LES_SEC_OTLP,
	  "send traces to an OpenTelemetry collector at\n"
	  "URL/v1/traces (OTLP/HTTP, JSON), e.g.\n"
	  "http://127.0.0.1:4318", .complete = "none" },
	{ "otlp-sample", OPT_OTLP_SAMPLE, required_argument, "N", LES_SEC_OTLP,
	  "trace 1 op in N (default 100); every op with\n"
	  "--min-latency; failed and resent ones always", .complete = "none" },
	{ "otlp-queue-size", OPT_OTLP_QUEUE_SIZE, required_argument, "MIB", LES_SEC_OTLP,
	  "batches held for collector outages (default 16);\n"
	  "when full, spans are dropped and counted", .complete = "none" },
	{ "otlp-flush-timeout", OPT_OTLP_FLUSH_TIMEOUT, required_argument, "DUR", LES_SEC_OTLP,
	  "wait this long at exit for export\n"
	  "(default 10s)", .complete = "none" },
	{ "otlp-signals", OPT_OTLP_SIGNALS, required_argument, "LIST", LES_SEC_OTLP,
	  "traces, metrics or traces,metrics (default\n"
	  "traces); metrics: each --aggregate window to\n"
	  "URL/v1/metrics", .complete = "none" },

	/* Attribution */
	{ "job-env", OPT_JOB_ENV, required_argument, "NAME", LES_SEC_ATTRIBUTION,
	  "a site variable holding the job id (repeatable)", .complete = "none" },
	{ "env-tag", OPT_ENV_TAG, required_argument, "NAME", LES_SEC_ATTRIBUTION,
	  "copy this environment variable into \"tags\"\n"
	  "(repeatable); no other variable ever leaves\n"
	  "the process environment", .complete = "none" },
	{ "jobid-name", OPT_JOBID_NAME, required_argument, "FORMAT", LES_SEC_ATTRIBUTION,
	  "job_id like Lustre's jobid_name: %j job, %e comm,\n"
	  "%u uid, %g gid, %h host, %H short host, %p pid\n"
	  "(default %j)", .complete = "none" },
	{ "process-name-strip-suffix", OPT_STRIP_SUFFIX, optional_argument, "BOOL",
	  LES_SEC_ATTRIBUTION, "\"worker-3\" -> \"worker\" in \"process\"",
	  LES_OPT_F_HELP_BARE, .complete = "bool" },
	{ "process-allowlist", OPT_PROCESS_ALLOWLIST, required_argument, "a,b,c",
	  LES_SEC_ATTRIBUTION, "other process names become \"other\"",
	  .help_col = 35, .complete = "none" },
	{ "actor-rule", OPT_ACTOR_RULE, required_argument, "CLASS=GLOB", LES_SEC_ATTRIBUTION,
	  "classify comm GLOB as user, batch_job,\n"
	  "system_daemon or client_worker (repeatable, the\n"
	  "first that matches wins)", .help_col = 35, .complete = "none" },
	{ "proc-cache-size", OPT_PROC_CACHE, required_argument, "N", LES_SEC_ATTRIBUTION,
	  "processes remembered (default 65536)", .complete = "none" },
	{ "user-cache-size", OPT_USER_CACHE, required_argument, "N", LES_SEC_ATTRIBUTION,
	  "user names remembered (default 4096)", .complete = "none" },
	{ "no-enrich", OPT_NO_ENRICH, no_argument, NULL, LES_SEC_ATTRIBUTION,
	  "kernel fields only" },

	/* Aggregation */
	{ "aggregate", OPT_AGGREGATE, required_argument, "DUR", LES_SEC_AGGREGATION,
	  "one type:\"window\" line per group every DUR, windows\n"
	  "aligned to multiples of DUR (e.g. 2s, 1m); per-op\n"
	  "records are then not written unless --records", .complete = "none" },
	{ "group-by", OPT_GROUP_BY, required_argument, "F", LES_SEC_AGGREGATION,
	  "group fields (default fs_type,fs,mount,op,\n"
	  "access_intent,uid,username,process,actor_type,\n"
	  "job_id); also type, comm, proto, event, host",
	  LES_OPT_F_LIST, .complete = "list:fields" },
	{ "max-groups", OPT_MAX_GROUPS, required_argument, "N", LES_SEC_AGGREGATION,
	  "groups per window (default 10000); more fold into one\n"
	  "\"other\":true group per record type", .complete = "none" },
	{ "records", OPT_RECORDS, no_argument, NULL, LES_SEC_AGGREGATION,
	  "with --aggregate, write the per-op records too" },

	/* Prometheus */
	{ "prometheus", OPT_PROMETHEUS, required_argument, "ADDR", LES_SEC_PROMETHEUS,
	  "serve metrics on ADDR, e.g. 127.0.0.1:9108 (:9108 is\n"
	  "every address)\n"
	  "(alias --web.listen-address)", .complete = "none" },
	{ "web.listen-address", OPT_PROMETHEUS, required_argument, "ADDR", LES_SEC_PROMETHEUS,
	  NULL, LES_OPT_F_ALIAS, .complete = "none" },
	{ "web.telemetry-path", OPT_TELEMETRY_PATH, required_argument, "PATH",
	  LES_SEC_PROMETHEUS, "metrics path (default /metrics)", .complete = "none" },
	{ "uid-labels", OPT_UID_LABELS, optional_argument, "BOOL", LES_SEC_PROMETHEUS,
	  "uid and username labels (default true)", .complete = "bool" },
	{ "histogram-process-labels", OPT_HIST_PROCESS, optional_argument, "BOOL",
	  LES_SEC_PROMETHEUS, "process label on the histograms too\n"
	  "(default false)", .complete = "bool" },
	{ "series-ttl", OPT_SERIES_TTL, required_argument, "DUR", LES_SEC_PROMETHEUS,
	  "drop series not updated for DUR (default 10m;\n"
	  "0: never)", .complete = "none" },

	/* Live view */
	{ "top", OPT_TOP, no_argument, NULL, LES_SEC_LIVE,
	  "a screen of who is busy now, per job, user, process\n"
	  "or mount (keys j u p m; sort o r w 5 9 x e; f filter;\n"
	  "q quit); records still go to -o FILE if given" },
	{ "interval", OPT_INTERVAL, required_argument, "DUR", LES_SEC_LIVE,
	  "one frame every DUR (default 1s)", .complete = "none" },
	{ "batch", OPT_BATCH, required_argument, "N", LES_SEC_LIVE,
	  "N plain frames on stdout, then exit (like top -b)", .complete = "none" },
	{ "input", OPT_INPUT, required_argument, "FILE", LES_SEC_LIVE,
	  "--top over a capture (-o FILE, .gz too), at its pace;\n"
	  "keys: space pause, n step, [ ] 10 frames, + - speed;\n"
	  "or --otlp URL: the capture's traces sent", .complete = "file" },
	{ "speed", OPT_SPEED, required_argument, "X", LES_SEC_LIVE,
	  "replay X times faster than recorded (default 1)", .complete = "none" },

	/* Run time */
	{ "duration", 'd', required_argument, "DUR", LES_SEC_RUN,
	  "stop after DUR (e.g. 60s, 5m)", .complete = "none" },
	{ "count", 'c', required_argument, "N", LES_SEC_RUN,
	  "stop after N records", .complete = "none" },
	{ "summary", OPT_SUMMARY, optional_argument, "BOOL", LES_SEC_RUN,
	  "summary on stderr at exit (default: when stderr is\n"
	  "a terminal, which also gets a live status line)", .complete = "bool" },
	{ "config", OPT_CONFIG, required_argument, "FILE", LES_SEC_RUN,
	  "read options from FILE, 'name = value' lines (default\n"
	  LES_CONFIG_DEFAULT_PATH " when present);\n"
	  "command-line options override it", LES_OPT_F_NOT_IN_FILE, .complete = "file" },
	{ "print-config", OPT_PRINT_CONFIG, no_argument, NULL, LES_SEC_RUN,
	  "print the settings in effect, in that format, exit", LES_OPT_F_NOT_IN_FILE },

	/* Tuning */
	{ "ringbuf-size", OPT_RINGBUF, required_argument, "SIZE", LES_SEC_TUNING,
	  "BPF ring buffer size (default 16M, power of 2)", .complete = "none" },
	{ "wakeup-bytes", OPT_WAKEUP, required_argument, "SIZE", LES_SEC_TUNING,
	  "wake the consumer when this much is pending (1M;\n"
	  "0 = on every record)", .complete = "none" },
	{ "poll-interval", OPT_POLL_MS, required_argument, "MS", LES_SEC_TUNING,
	  "consumer poll timeout (default 10)", .complete = "none" },
	{ "stale-timeout", OPT_STALE_TIMEOUT, required_argument, "DUR", LES_SEC_TUNING,
	  "sweep requests in flight longer than DUR (300s)", .complete = "none" },
	{ "inflight-max", OPT_INFLIGHT_MAX, required_argument, "N", LES_SEC_TUNING,
	  "requests tracked in flight (default 16384)", .complete = "none" },
	{ "threads-max", OPT_THREADS_MAX, required_argument, "N", LES_SEC_TUNING,
	  "threads tracked with ops in flight (default 16384)", .complete = "none" },

	{ "keep-caps", OPT_KEEP_CAPS, no_argument, NULL, LES_SEC_PRIVILEGES,
	  "keep every capability after attaching (default: only\n"
	  "those enrichment needs; see docs/security.md)" },

	/* The Lustre exporter's flags */
	{ "once", OPT_ONCE, no_argument, NULL, LES_SEC_EXPORTER,
	  "stop after one --drain-interval" },
	{ "drain-interval", OPT_DRAIN_INTERVAL, required_argument, "DUR", LES_SEC_EXPORTER,
	  "with --once, how long (default 5s); metrics are\n"
	  "updated per record, so there is nothing to drain", .complete = "none" },
	{ "slurm-jobid", OPT_SLURM_JOBID, optional_argument, "BOOL", LES_SEC_EXPORTER,
	  "the slurm_job_id label on lustre_client_* (off by\n"
	  "default, as there; records always carry job_id)", .complete = "bool" },
	{ "slurm-jobid-cache-size", OPT_SLURM_JOBID_CACHE_SIZE, required_argument, "N",
	  LES_SEC_EXPORTER, "the same as --proc-cache-size", .help_col = 35, .complete = "none" },
	{ "slurm-jobid-ttl", OPT_SLURM_JOBID_TTL, required_argument, "DUR", LES_SEC_EXPORTER,
	  NULL, LES_OPT_F_JOINED, .complete = "none" },
	{ "slurm-jobid-negative-ttl", OPT_SLURM_JOBID_NEGATIVE_TTL, required_argument, "DUR",
	  LES_SEC_EXPORTER, NULL, LES_OPT_F_JOINED, .complete = "none" },
	{ "slurm-jobid-verify-ttl", OPT_SLURM_JOBID_VERIFY_TTL, required_argument, "DUR",
	  LES_SEC_EXPORTER, "checked, then unused: jobs follow exec and\n"
	  "fork as they happen", .help_col = 35, .complete = "none" },
	{ "legacy-symbol-allow-missing", OPT_LEGACY_SYMBOL_ALLOW_MISSING, optional_argument,
	  "BOOL", LES_SEC_EXPORTER, "always so: what is missing is\n"
	  "reported and the rest attaches", .complete = "bool" },

	{ "verbose", 'v', no_argument, NULL, LES_SEC_GENERAL,
	  "more diagnostics on stderr (repeat for libbpf's)" },
	{ "help", 'h', no_argument, NULL, LES_SEC_GENERAL, "this text", LES_OPT_F_NOT_IN_FILE },
	{ "version", 'V', no_argument, NULL, LES_SEC_GENERAL, "print the version",
	  LES_OPT_F_NOT_IN_FILE },
};
/* clang-format on */

const size_t les_n_opts = sizeof(les_opts) / sizeof(les_opts[0]);

/* What --help prints before each group's first option. */
static const char *const section_heading[LES_SEC_MAX] = {
	[LES_SEC_OBSERVE] = "\nWhat to observe:\n",
	[LES_SEC_FILTERS] =
		"\nFilters (in the kernel, but --job; filtered records are counted in stats):\n",
	[LES_SEC_OUTPUT] = "\nOutput:\n",
	[LES_SEC_KAFKA] =
		"\nKafka (every output line also goes to a topic; -o /dev/null for Kafka only):\n",
	[LES_SEC_OTLP] = "\nOpenTelemetry (each op a trace, its requests child spans):\n",
	[LES_SEC_ATTRIBUTION] = "\nAttribution (who a record belongs to):\n",
	[LES_SEC_AGGREGATION] =
		"\nAggregation (windows of per-group counts, bytes, errors, latency):\n",
	[LES_SEC_PROMETHEUS] = "\nPrometheus (lustre-ebpf-exporter's metric families):\n",
	[LES_SEC_LIVE] = "\nLive view:\n",
	[LES_SEC_RUN] = "\nRun time:\n",
	[LES_SEC_TUNING] = "\nTuning:\n",
	[LES_SEC_PRIVILEGES] = "\n",
	[LES_SEC_EXPORTER] =
		"\nThe Lustre exporter's flags, so that its command lines run unchanged:\n",
	/* One string in two lines: parenthesised, not two elements with a comma missing. */
	[LES_SEC_GENERAL] =
		("\nDUR is a number and its unit: 20ms, 10s, 5m, 1h (also us, ns); a bare number\n"
		 "is seconds, except for --min-latency (bcc reads one as ms there).\n\n"),
};

static const char usage_head[] =
	"Usage: lustre-ebpf-stream [OPTIONS]\n"
	"       lustre-ebpf-stream report CAPTURE -o FILE.html   (report --help)\n"
	"Stream every file operation and client request on Lustre, NFS and FUSE mounts\n"
	"as JSON Lines, attributed to the process, user and job that caused it.\n";

static const char usage_tail[] =
	"\n"
	"Examples:\n"
	"  lustre-ebpf-stream --mount /mnt/lustre | jq 'select(.type==\"access\")'\n"
	"  lustre-ebpf-stream --min-latency 20ms --duration 60s -o slow.jsonl.gz\n"
	"  lustre-ebpf-stream --kafka-brokers k1:9092 --kafka-topic les -o /dev/null \\\n"
	"      -X security.protocol=SASL_SSL -X topic.acks=all\n"
	"\n"
	"Exit status: 0 success, 1 runtime failure, 2 usage error.\n";

int les_opt_short(const struct les_opt *o)
{
	return o->key > 0 && o->key < 256 ? o->key : 0;
}

/*
 * One entry's names and argument as --help shows them: "--mount PATH",
 * "--op OP,OP...", "--summary[=BOOL]", "-X PROP=VALUE". Returns its length.
 */
static int help_synopsis(const struct les_opt *o, char *buf, size_t size)
{
	const char *sep = o->has_arg == optional_argument ? "[=" : " ";
	const char *end = o->has_arg == optional_argument ? "]" : "";
	char arg[64] = "";
	char names[64];

	if (o->name)
		snprintf(names, sizeof(names), "--%s", o->name);
	else
		snprintf(names, sizeof(names), "-%c", les_opt_short(o));
	if (o->has_arg != no_argument && !(o->flags & LES_OPT_F_HELP_BARE)) {
		if (o->flags & LES_OPT_F_LIST)
			snprintf(arg, sizeof(arg), "%s%s,%s...%s", sep, o->arg, o->arg, end);
		else
			snprintf(arg, sizeof(arg), "%s%s%s", sep, o->arg, end);
	}
	return snprintf(buf, size, "%s%s", names, arg);
}

/* The help text's lines after the first, each at the help column. */
static void put_help_lines(FILE *out, const char *help)
{
	const char *nl;

	while ((nl = strchr(help, '\n'))) {
		fprintf(out, "%.*s\n%*s", (int)(nl - help), help, HELP_COL, "");
		help = nl + 1;
	}
	fprintf(out, "%s\n", help);
}

/*
 * "  -m, --mount PATH         observe ...": the letter (or its place), the
 * synopsis, then the help from its column, or two blanks after a synopsis
 * that reaches it.
 */
static void put_option(FILE *out, const struct les_opt *o)
{
	unsigned int col = o->help_col ?: HELP_COL;
	char syn[128];
	int len;

	help_synopsis(o, syn, sizeof(syn));
	if (les_opt_short(o) && o->name)
		len = fprintf(out, "  -%c, %s", les_opt_short(o), syn);
	else if (o->name)
		len = fprintf(out, "      %s", syn);
	else
		len = fprintf(out, "  %s", syn);
	fprintf(out, "%*s", len < (int)col ? (int)col - len : 2, "");
	put_help_lines(out, o->help);
}

void les_opt_usage(FILE *out)
{
	int section = -1;
	bool joined = false;
	char syn[128];

	fputs(usage_head, out);
	for (size_t i = 0; i < les_n_opts; i++) {
		const struct les_opt *o = &les_opts[i];

		if (o->flags & LES_OPT_F_ALIAS)
			continue;
		if ((int)o->section != section) {
			section = (int)o->section;
			fputs(section_heading[section], out);
		}
		if (o->flags & LES_OPT_F_JOINED) {
			/* "      --a DUR, --b DUR," then the last one on a line of its own */
			help_synopsis(o, syn, sizeof(syn));
			fprintf(out, "%s%s,", joined ? " " : "      ", syn);
			joined = true;
			continue;
		}
		if (joined)
			fputc('\n', out);
		joined = false;
		put_option(out, o);
	}
	fputs(usage_tail, out);
}

/* --- getopt's table and the config file's names, made once ---------------- */

static struct option long_options[sizeof(les_opts) / sizeof(les_opts[0]) + 1];
/* A leading ':' (report a missing argument as such), then "x" or "x:" per letter. */
static char short_options[2 + 2 * sizeof(les_opts) / sizeof(les_opts[0])];
static const char *not_in_file[2 * sizeof(les_opts) / sizeof(les_opts[0]) + 1];
static char not_in_file_letters[sizeof(les_opts) / sizeof(les_opts[0])][2];
static bool made;

static void make_tables(void)
{
	size_t n_long = 0, n_short = 1, n_forbidden = 0;

	short_options[0] = ':';
	for (size_t i = 0; i < les_n_opts; i++) {
		const struct les_opt *o = &les_opts[i];

		if (o->name)
			long_options[n_long++] = (struct option){o->name, o->has_arg, NULL, o->key};
		if (les_opt_short(o) && !(o->flags & LES_OPT_F_ALIAS)) {
			short_options[n_short++] = (char)o->key;
			if (o->has_arg == required_argument)
				short_options[n_short++] = ':';
		}
		if (!(o->flags & LES_OPT_F_NOT_IN_FILE))
			continue;
		not_in_file[n_forbidden++] = o->name;
		/* By its letter too: a file names a short-only option so (X = ...). */
		if (les_opt_short(o)) {
			not_in_file_letters[i][0] = (char)o->key;
			not_in_file[n_forbidden++] = not_in_file_letters[i];
		}
	}
	made = true;
}

const struct option *les_opt_getopt_long(void)
{
	if (!made)
		make_tables();
	return long_options;
}

const char *les_opt_getopt_short(void)
{
	if (!made)
		make_tables();
	return short_options;
}

const char *const *les_opt_not_in_file(void)
{
	if (!made)
		make_tables();
	return not_in_file;
}
