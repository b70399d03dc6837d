// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Command line: defaults, parsing, validation, --help. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/clock.h"
#include "cli/options.h"
#include "cli/config.h"
#include "cli/option_table.h"
#include "decode/filter.h"
#include "sink/sink_kafka.h"
#include "sink/aggregate.h"
#include "sink/otlp.h"
#include "sink/prom.h"


void les_options_defaults(struct les_options *o)
{
	memset(o, 0, sizeof(*o));
	o->ringbuf_bytes = 16ULL << 20;
	o->wakeup_bytes = 1ULL << 20;
	o->stats_interval_ns = 10 * LES_NS_PER_SEC;
	o->stale_timeout_ns = 300 * LES_NS_PER_SEC;
	o->inflight_max = 16384;
	o->threads_max = 16384;
	o->poll_ms = 10;
	o->filter_uid = -1;
	o->summary = -1;
	o->top_interval_ns = 1000000000ULL;
	o->attach = LES_ATTACH_MODE_AUTO;
	o->kafka_key = LES_KAFKA_KEY_JOB_ID;
	o->kafka_queue_bytes = 256ULL << 20;
	o->kafka_flush_timeout_ns = 10 * LES_NS_PER_SEC;
	o->otlp_sample = 100;
	o->otlp_queue_bytes = 16ULL << 20;
	o->otlp_flush_timeout_ns = 10 * LES_NS_PER_SEC;
	o->otlp_traces = true;
	o->group_by = LES_GROUP_BY_DEFAULT;
	o->max_groups = LES_AGG_MAX_GROUPS_DEFAULT;
	o->prom_path = LES_PROM_PATH_DEFAULT;
	o->prom_uid_labels = true;
	o->series_ttl_ns = LES_PROM_TTL_DEFAULT_NS;
	o->drain_interval_ns = 5 * LES_NS_PER_SEC; /* the exporter's default */
}

int les_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* A non-negative decimal with an optional fraction; returns the unit suffix. */
static int parse_scaled(const char *s, double *val, const char **unit)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*val = strtod(s, &end);
	if (errno || end == s || !isfinite(*val) || *val < 0)
		return -EINVAL;
	*unit = end;
	return 0;
}

/*
 * A duration needs its unit: a bare "10" is ten milliseconds to bcc's
 * fsslower and ten seconds to others, so it is refused (-EDOM) rather than
 * guessed; only 0 needs none.
 */
int les_parse_duration_ns(const char *s, uint64_t *out)
{
	static const struct {
		const char *suffix;
		double ns;
	} units[] = {
		{ "s", 1e9 },  { "ms", 1e6 },	{ "us", 1e3 },	{ "ns", 1 },
		{ "m", 60e9 }, { "min", 60e9 }, { "h", 3600e9 },
	};
	const char *unit;
	double val;

	if (parse_scaled(s, &val, &unit))
		return -EINVAL;
	if (!*unit) {
		if (val != 0)
			return -EDOM;
		*out = 0;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(unit, units[i].suffix) == 0) {
			double ns = val * units[i].ns;

			if (ns >= 18e18)
				return -ERANGE;
			*out = (uint64_t)(ns + 0.5);
			return 0;
		}
	}
	return -EINVAL;
}

int les_parse_size(const char *s, uint64_t *out)
{
	static const struct {
		const char *suffix;
		double mult;
	} units[] = {
		{ "", 1 },	     { "K", 1024.0 },	      { "KiB", 1024.0 },
		{ "M", 1048576.0 }, { "MiB", 1048576.0 }, { "G", 1073741824.0 },
		{ "GiB", 1073741824.0 },
	};
	const char *unit;
	double val;

	if (parse_scaled(s, &val, &unit))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(unit, units[i].suffix) == 0) {
			double bytes = val * units[i].mult;

			if (bytes >= 9e18)
				return -ERANGE;
			*out = (uint64_t)bytes;
			return 0;
		}
	}
	return -EINVAL;
}

void les_usage(FILE *out)
{
	les_opt_usage(out);
}

/* "FILE:LINE" of the config file setting being applied, NULL for the command line. */
static char err_where[512];

/* Every option error starts so: with the config file line when it came from there. */
static void err_begin(void)
{
	fputs("lustre-ebpf-stream: ", stderr);
	if (err_where[0])
		fprintf(stderr, "%s: ", err_where);
}

static int usage_error(const char *fmt, const char *arg)
{
	err_begin();
	fprintf(stderr, fmt, arg);
	fputs(" (see --help)\n", stderr);
	return LES_EXIT_USAGE;
}

static int parse_u32_opt(const char *name, const char *arg, uint64_t min, uint64_t max,
			 uint32_t *out)
{
	uint64_t v;

	if (les_parse_u64(arg, min, max, &v)) {
		err_begin();
		fprintf(stderr, "invalid %s '%s' (see --help)\n", name, arg);
		return LES_EXIT_USAGE;
	}
	*out = (uint32_t)v;
	return 0;
}

/*
 * A bare number is seconds, as the exporter and timeout(1) read it
 * (`--duration 60`), except for --min-latency: bcc's fsslower reads a bare
 * number there as milliseconds, so it is refused rather than guessed.
 */
static bool bare_is_seconds(const char *name)
{
	return strcmp(name, "--min-latency") != 0;
}

/* A host name as records and labels carry it: 1 to 255 printable bytes, no blank. */
static int parse_hostname(struct les_options *o, const char *arg)
{
	size_t n = strlen(arg);

	if (n == 0 || n > 255)
		return usage_error("invalid --hostname '%s': 1 to 255 characters", arg);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)arg[i] <= ' ' || arg[i] == 0x7f)
			return usage_error("%s", "invalid --hostname: it holds a blank or a "
						 "control character");
	o->hostname = arg;
	return 0;
}

static int parse_duration_opt(const char *name, const char *arg, uint64_t *out)
{
	int err = les_parse_duration_ns(arg, out);

	if (err == -EDOM && bare_is_seconds(name)) {
		char with_unit[64];
		int n = snprintf(with_unit, sizeof(with_unit), "%ss", arg);

		err = n > 0 && (size_t)n < sizeof(with_unit) ? les_parse_duration_ns(with_unit, out)
							     : -EINVAL;
	}
	if (err == -EDOM) {
		err_begin();
		fprintf(stderr, "%s '%s' needs a unit: %sms or %ss (ms, s, m, h, us, ns)\n", name, arg,
			arg, arg);
		return LES_EXIT_USAGE;
	}
	if (err) {
		err_begin();
		fprintf(stderr, "invalid %s '%s' (see --help)\n", name, arg);
		return LES_EXIT_USAGE;
	}
	return 0;
}

static int parse_attach(const char *arg, enum les_attach_mode *out)
{
	static const char *const names[] = { "auto", "fentry", "kprobe", "syscall" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(arg, names[i]) == 0) {
			*out = (enum les_attach_mode)i;
			return 0;
		}
	}
	return usage_error("invalid --attach '%s': expected auto, fentry, kprobe or syscall", arg);
}

/*
 * An output this binary was configured without (-DLES_WITH_KAFKA=OFF,
 * -DLES_WITH_PROMETHEUS=OFF): asking for it is a usage error, said in one
 * line that names the option and the missing output.
 */
static int not_built_in(int opt, const char *output, const char *cmake_option)
{
	const char *name = NULL;

	for (const struct option *lo = les_opt_getopt_long(); lo->name && !name; lo++)
		if (lo->val == opt)
			name = lo->name;
	err_begin();
	if (name)
		fprintf(stderr, "--%s: ", name);
	else
		fprintf(stderr, "-%c: ", opt);
	fprintf(stderr, "the %s is not built into this binary (configured with %s=OFF)\n", output,
		cmake_option);
	return LES_EXIT_USAGE;
}

static int parse_kafka_key(const char *arg, enum les_kafka_key *out)
{
	static const char *const names[] = {
		[LES_KAFKA_KEY_JOB_ID] = "job_id",
		[LES_KAFKA_KEY_UID] = "uid",
		[LES_KAFKA_KEY_HOST] = "host",
		[LES_KAFKA_KEY_NONE] = "none",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(arg, names[i]) == 0) {
			*out = (enum les_kafka_key)i;
			return 0;
		}
	}
	return usage_error("invalid --kafka-key '%s': expected job_id, uid, host or none", arg);
}

/* -X prop=value is checked by librdkafka when the producer is made; -X list answers here. */
static int parse_kafka_prop(struct les_options *o, const char *arg)
{
	const char *eq = strchr(arg, '=');

	if (strcmp(arg, "list") == 0) {
		les_kafka_properties_show(stdout);
		return 1;
	}
	if (!eq || eq == arg)
		return usage_error("invalid -X '%s': expected PROP=VALUE or list", arg);
	if (o->n_kafka_props >= LES_KAFKA_MAX_PROPS)
		return usage_error("too many -X options (at most %s)", "64");
	o->kafka_props[o->n_kafka_props++] = arg;
	return 0;
}

static int parse_kafka_opt(struct les_options *o, int opt, const char *arg)
{
	uint64_t v;

	if (!LES_HAVE_KAFKA)
		return not_built_in(opt, "Kafka output", "LES_WITH_KAFKA");
	switch (opt) {
	case OPT_KAFKA_BROKERS:
		o->kafka_brokers = arg;
		return 0;
	case OPT_KAFKA_TOPIC:
		o->kafka_topic = arg;
		return 0;
	case OPT_KAFKA_KEY:
		return parse_kafka_key(arg, &o->kafka_key);
	case OPT_KAFKA_QUEUE_SIZE:
		/* librdkafka counts the queue in KiB in an int */
		if (les_parse_u64(arg, 1, 1 << 20, &v))
			return usage_error("invalid --kafka-queue-size '%s': MiB from 1 to 1048576",
					   arg);
		o->kafka_queue_bytes = v << 20;
		return 0;
	case OPT_KAFKA_FLUSH_TIMEOUT:
		return parse_duration_opt("--kafka-flush-timeout", arg,
					  &o->kafka_flush_timeout_ns);
	case 'X':
		return parse_kafka_prop(o, arg);
	}
	return LES_EXIT_USAGE;
}

static int parse_otlp_opt(struct les_options *o, int opt, const char *arg)
{
	struct les_otlp_config cfg = {.url = arg};
	char err[512];
	uint64_t v;

	if (!LES_HAVE_OTLP)
		return not_built_in(opt, "OTLP export", "LES_WITH_OTLP");
	switch (opt) {
	case OPT_OTLP:
		if (les_otlp_check(&cfg, err, sizeof(err)))
			return usage_error("%s", err);
		o->otlp_url = arg;
		return 0;
	case OPT_OTLP_SAMPLE:
		return parse_u32_opt("--otlp-sample", arg, 1, UINT32_MAX, &o->otlp_sample);
	case OPT_OTLP_QUEUE_SIZE:
		if (les_parse_u64(arg, 1, 1 << 16, &v))
			return usage_error("invalid --otlp-queue-size '%s': MiB from 1 to 65536", arg);
		o->otlp_queue_bytes = v << 20;
		return 0;
	case OPT_OTLP_FLUSH_TIMEOUT:
		return parse_duration_opt("--otlp-flush-timeout", arg, &o->otlp_flush_timeout_ns);
	case OPT_OTLP_SIGNALS:
		if (les_otlp_signals_parse(arg, &o->otlp_traces, &o->otlp_metrics))
			return usage_error("invalid --otlp-signals '%s': traces, metrics or "
					   "traces,metrics",
					   arg);
		return 0;
	}
	return LES_EXIT_USAGE;
}

/* --flag, --flag=true|false|1|0|yes|no */
static int parse_bool_opt(const char *name, const char *arg, bool *out)
{
	static const char *const yes[] = { "true", "1", "yes" }, *const no[] = { "false", "0", "no" };

	if (!arg) {
		*out = true;
		return 0;
	}
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(arg, yes[i]) == 0 || strcmp(arg, no[i]) == 0) {
			*out = strcmp(arg, yes[i]) == 0;
			return 0;
		}
	}
	err_begin();
	fprintf(stderr, "invalid %s '%s': expected true or false (see --help)\n", name, arg);
	return LES_EXIT_USAGE;
}

/*
 * The Lustre exporter's flags (its cmd/lustre-ebpf-exporter at 1ad0144), with
 * its meaning where ours differs only in name, and checked as it checks them
 * where the tool has nothing to tune: its TTLs bound how stale a job id may
 * be, and ours follows exec and fork as they happen; its drain moves kernel
 * counters to the metrics, and ours are updated per record.
 */
static int parse_exporter_opt(struct les_options *o, int opt, const char *arg)
{
	uint64_t ns;
	bool on;

	switch (opt) {
	case OPT_ONCE:
		o->once = true;
		return 0;
	case OPT_DRAIN_INTERVAL:
		if (parse_duration_opt("--drain-interval", arg, &o->drain_interval_ns))
			return LES_EXIT_USAGE;
		if (!o->drain_interval_ns)
			return usage_error("invalid --drain-interval '%s': must be positive", arg);
		return 0;
	case OPT_SLURM_JOBID:
		/* As the exporter: its families carry slurm_job_id only with it. */
		return parse_bool_opt("--slurm-jobid", arg, &o->prom_slurm_label);
	case OPT_SLURM_JOBID_TTL:
		if (parse_duration_opt("--slurm-jobid-ttl", arg, &ns))
			return LES_EXIT_USAGE;
		return ns ? 0 : usage_error("invalid --slurm-jobid-ttl '%s': must be positive", arg);
	case OPT_SLURM_JOBID_NEGATIVE_TTL:
		return parse_duration_opt("--slurm-jobid-negative-ttl", arg, &ns);
	case OPT_SLURM_JOBID_VERIFY_TTL:
		return parse_duration_opt("--slurm-jobid-verify-ttl", arg, &ns);
	case OPT_SLURM_JOBID_CACHE_SIZE:
		/* the pids whose job is remembered: the process cache */
		return parse_u32_opt("--slurm-jobid-cache-size", arg, 64, 1 << 24,
				     &o->enrich.proc_cache_size);
	case OPT_LEGACY_SYMBOL_ALLOW_MISSING:
		/* Missing functions are always reported and the rest attaches. */
		return parse_bool_opt("--legacy-symbol-allow-missing", arg, &on);
	}
	return LES_EXIT_USAGE;
}

/* --aggregate and its windows' options; --records beside them. */
static int parse_aggregate_opt(struct les_options *o, int opt, const char *arg)
{
	char err[512];

	switch (opt) {
	case OPT_AGGREGATE:
		if (parse_duration_opt("--aggregate", arg, &o->aggregate_ns))
			return LES_EXIT_USAGE;
		if (o->aggregate_ns < 1000000)
			return usage_error("invalid --aggregate '%s': at least 1ms", arg);
		return 0;
	case OPT_GROUP_BY:
		if (les_group_by_parse(arg, &o->group_by, err, sizeof(err)))
			return usage_error("%s", err);
		return 0;
	case OPT_MAX_GROUPS:
		return parse_u32_opt("--max-groups", arg, 1, 1 << 24, &o->max_groups);
	case OPT_RECORDS:
		o->records = true;
		return 0;
	}
	return LES_EXIT_USAGE;
}

/* --prometheus, its endpoint and its series. */
static int parse_prometheus_opt(struct les_options *o, int opt, const char *arg)
{
	char host[LES_PROM_HOST_MAX];
	uint16_t port;

	switch (opt) {
	case OPT_PROMETHEUS:
		if (!LES_HAVE_PROMETHEUS)
			return not_built_in(opt, "Prometheus endpoint", "LES_WITH_PROMETHEUS");
		if (les_prom_parse_listen(arg, host, sizeof(host), &port))
			return usage_error("invalid --prometheus '%s': expected [HOST]:PORT", arg);
		o->prom_listen = arg;
		return 0;
	case OPT_TELEMETRY_PATH:
		if (arg[0] != '/')
			return usage_error("invalid --web.telemetry-path '%s': must start with /",
					   arg);
		o->prom_path = arg;
		return 0;
	case OPT_UID_LABELS:
		return parse_bool_opt("--uid-labels", arg, &o->prom_uid_labels);
	case OPT_HIST_PROCESS:
		return parse_bool_opt("--histogram-process-labels", arg,
				      &o->prom_histogram_process);
	case OPT_SERIES_TTL:
		return parse_duration_opt("--series-ttl", arg, &o->series_ttl_ns);
	}
	return LES_EXIT_USAGE;
}

static int add_name(const char *opt, const char **v, size_t *n, const char *arg)
{
	if (*n >= LES_ENRICH_NAMES_MAX) {
		err_begin();
		fprintf(stderr, "too many %s options (at most %d) (see --help)\n", opt,
			LES_ENRICH_NAMES_MAX);
		return LES_EXIT_USAGE;
	}
	v[(*n)++] = arg;
	return 0;
}

static int parse_enrich_opt(struct les_options *o, int opt, const char *arg)
{
	struct les_enrich_config *e = &o->enrich;

	switch (opt) {
	case OPT_JOB_ENV:
		return add_name("--job-env", e->job_env, &e->n_job_env, arg);
	case OPT_ENV_TAG:
		return add_name("--env-tag", e->env_tags, &e->n_env_tags, arg);
	case OPT_JOBID_NAME:
		e->jobid_name = arg;
		return 0;
	case OPT_STRIP_SUFFIX:
		return parse_bool_opt("--process-name-strip-suffix", arg, &e->strip_suffix);
	case OPT_PROCESS_ALLOWLIST:
		return add_name("--process-allowlist", e->process_allowlist,
				&e->n_process_allowlist, arg);
	case OPT_ACTOR_RULE:
		return add_name("--actor-rule", e->actor_rules, &e->n_actor_rules, arg);
	case OPT_PROC_CACHE:
		return parse_u32_opt("--proc-cache-size", arg, 64, 1 << 24, &e->proc_cache_size);
	case OPT_USER_CACHE:
		return parse_u32_opt("--user-cache-size", arg, 16, 1 << 20, &e->user_cache_size);
	case OPT_NO_ENRICH:
		o->no_enrich = true;
		return 0;
	}
	return LES_EXIT_USAGE;
}

/* --comm, --op, --intent, --job (src/decode/filter.h). */
static int parse_filter_opt(struct les_options *o, int opt, const char *arg)
{
	uint64_t comm[2];
	char err[768];

	switch (opt) {
	case OPT_COMM:
		if (les_filter_comm(arg, comm))
			return usage_error("invalid --comm '%s': 1 to 15 characters, as the kernel "
					   "keeps a command name", arg);
		o->filter_comm = arg;
		return 0;
	case OPT_OP:
		if (les_filter_parse_ops(arg, &o->filter_ops, err, sizeof(err)))
			return usage_error("invalid --op: %s", err);
		return 0;
	case OPT_INTENT:
		if (les_filter_parse_intents(arg, &o->filter_intents, err, sizeof(err)))
			return usage_error("invalid --intent: %s", err);
		return 0;
	case OPT_JOB:
		if (!*arg)
			return usage_error("invalid --job '%s': empty", arg);
		o->filter_job = arg;
		return 0;
	}
	return LES_EXIT_USAGE;
}

/* --top, its screen and the capture it replays (--input, --speed). */
static int parse_top_opt(struct les_options *o, int opt, const char *arg)
{
	switch (opt) {
	case OPT_TOP:
		o->top = true;
		return 0;
	case OPT_INTERVAL:
		if (parse_duration_opt("--interval", arg, &o->top_interval_ns))
			return LES_EXIT_USAGE;
		if (o->top_interval_ns < 100000000ULL)
			return usage_error("invalid --interval '%s': at least 100ms", arg);
		return 0;
	case OPT_BATCH:
		return parse_u32_opt("--batch", arg, 1, 1000000, &o->top_batch);
	case OPT_INPUT:
		if (!*arg)
			return usage_error("invalid --input '%s': empty", arg);
		o->input_path = arg;
		return 0;
	case OPT_SPEED: {
		char *end;

		errno = 0;
		o->replay_speed = strtod(arg, &end);
		if (errno || end == arg || *end || !(o->replay_speed > 0 && o->replay_speed <= 1e6))
			return usage_error("invalid --speed '%s': a number above 0", arg);
		return 0;
	}
	}
	return LES_EXIT_USAGE;
}

static int parse_one(struct les_options *o, int opt, const char *arg)
{
	uint64_t v;
	bool on;

	switch (opt) {
	case 'm':
		if (o->n_mounts >= LES_MAX_MOUNTS)
			return usage_error("too many --mount options (at most %s)", "16");
		o->mounts[o->n_mounts++] = arg;
		return 0;
	case 'd':
		if (parse_duration_opt("--duration", arg, &o->duration_ns))
			return LES_EXIT_USAGE;
		if (!o->duration_ns)
			return usage_error("invalid --duration '%s': must be positive", arg);
		return 0;
	case 'c':
		if (les_parse_u64(arg, 1, UINT64_MAX, &o->count))
			return usage_error("invalid --count '%s': expected a positive integer", arg);
		return 0;
	case 'o':
		o->output = arg;
		return 0;
	case OPT_SUMMARY:
		if (parse_bool_opt("--summary", arg, &on))
			return LES_EXIT_USAGE;
		o->summary = on;
		return 0;
	case OPT_RINGBUF:
		if (les_parse_size(arg, &v) || v < 4096 || v > (1ULL << 30) || (v & (v - 1)))
			return usage_error("invalid --ringbuf-size '%s': a power of 2 from 4K to 1G",
					   arg);
		o->ringbuf_bytes = v;
		return 0;
	case OPT_WAKEUP:
		if (les_parse_size(arg, &o->wakeup_bytes))
			return usage_error("invalid --wakeup-bytes '%s'", arg);
		return 0;
	case OPT_STATS_INTERVAL:
		return parse_duration_opt("--stats-interval", arg, &o->stats_interval_ns);
	case OPT_STALE_TIMEOUT:
		if (parse_duration_opt("--stale-timeout", arg, &o->stale_timeout_ns))
			return LES_EXIT_USAGE;
		if (!o->stale_timeout_ns)
			return usage_error("invalid --stale-timeout '%s': must be positive", arg);
		return 0;
	case OPT_INFLIGHT_MAX:
		return parse_u32_opt("--inflight-max", arg, 64, 1 << 24, &o->inflight_max);
	case OPT_THREADS_MAX:
		return parse_u32_opt("--threads-max", arg, 64, 1 << 24, &o->threads_max);
	case OPT_POLL_MS:
		return parse_u32_opt("--poll-interval", arg, 1, 10000, &o->poll_ms);
	case OPT_MIN_LATENCY:
		return parse_duration_opt("--min-latency", arg, &o->min_latency_ns);
	case 'u':
		if (les_parse_u64(arg, 0, UINT32_MAX - 1, &v))
			return usage_error("invalid --uid '%s': expected a numeric uid", arg);
		o->filter_uid = (int64_t)v;
		return 0;
	case 'p':
		return parse_u32_opt("--pid", arg, 1, INT32_MAX, &o->filter_pid);
	case OPT_FILE_ID:
		o->file_id = true;
		return 0;
	case OPT_ATTACH:
		return parse_attach(arg, &o->attach);
	case OPT_LIST_PROBES:
		if (!arg || strcmp(arg, "text") == 0)
			o->list_probes = LES_LIST_TEXT;
		else if (strcmp(arg, "json") == 0)
			o->list_probes = LES_LIST_JSON;
		else
			return usage_error("invalid --list-probes '%s': expected text or json", arg);
		return 0;
	case OPT_DUMP_KFACTS:
		o->dump_kernel_facts = true;
		return 0;
	case OPT_KERNEL_FACTS:
		if (!*arg)
			return usage_error("invalid --kernel-facts '%s': empty", arg);
		o->kernel_facts_path = arg;
		return 0;
	case OPT_MOUNTINFO:
		o->mountinfo_path = arg;
		return 0;
	case OPT_HOSTNAME:
		return parse_hostname(o, arg);
	case OPT_KEEP_CAPS:
		o->keep_caps = true;
		return 0;
	case 'v':
		o->verbose++;
		return 0;
	case 'X':
	case OPT_KAFKA_BROKERS:
	case OPT_KAFKA_TOPIC:
	case OPT_KAFKA_KEY:
	case OPT_KAFKA_QUEUE_SIZE:
	case OPT_KAFKA_FLUSH_TIMEOUT:
		return parse_kafka_opt(o, opt, arg);
	case OPT_OTLP:
	case OPT_OTLP_SAMPLE:
	case OPT_OTLP_QUEUE_SIZE:
	case OPT_OTLP_FLUSH_TIMEOUT:
	case OPT_OTLP_SIGNALS:
		return parse_otlp_opt(o, opt, arg);
	case OPT_JOB_ENV:
	case OPT_ENV_TAG:
	case OPT_JOBID_NAME:
	case OPT_STRIP_SUFFIX:
	case OPT_PROCESS_ALLOWLIST:
	case OPT_ACTOR_RULE:
	case OPT_PROC_CACHE:
	case OPT_USER_CACHE:
	case OPT_NO_ENRICH:
		return parse_enrich_opt(o, opt, arg);
	case OPT_AGGREGATE:
	case OPT_GROUP_BY:
	case OPT_MAX_GROUPS:
	case OPT_RECORDS:
		return parse_aggregate_opt(o, opt, arg);
	case OPT_PROMETHEUS:
	case OPT_TELEMETRY_PATH:
	case OPT_UID_LABELS:
	case OPT_HIST_PROCESS:
	case OPT_SERIES_TTL:
		return parse_prometheus_opt(o, opt, arg);
	case OPT_COMM:
	case OPT_OP:
	case OPT_INTENT:
	case OPT_JOB:
		return parse_filter_opt(o, opt, arg);
	case OPT_TOP:
	case OPT_INTERVAL:
	case OPT_BATCH:
	case OPT_INPUT:
	case OPT_SPEED:
		return parse_top_opt(o, opt, arg);
	case OPT_ONCE:
	case OPT_DRAIN_INTERVAL:
	case OPT_SLURM_JOBID:
	case OPT_SLURM_JOBID_TTL:
	case OPT_SLURM_JOBID_NEGATIVE_TTL:
	case OPT_SLURM_JOBID_VERIFY_TTL:
	case OPT_SLURM_JOBID_CACHE_SIZE:
	case OPT_LEGACY_SYMBOL_ALLOW_MISSING:
		return parse_exporter_opt(o, opt, arg);
	}
	return LES_EXIT_USAGE;
}

/* --- settings: config file, then command line (src/cli/config.h) ---------- */

/* Names resolve as on the command line: through getopt's table, made from les_opts. */
static const struct les_option_table *option_table(void)
{
	static struct les_option_table t;

	t.longopts = les_opt_getopt_long();
	/* Without getopt's leading ':' (report a missing argument as such). */
	t.shortopts = les_opt_getopt_short() + 1;
	return &t;
}

/* Kept for the whole run: the options' strings point into them. */
static struct les_settings cmdline_settings, file_settings, effective_settings;

const struct les_settings *les_options_settings(void)
{
	return &effective_settings;
}

void les_options_release(void)
{
	les_settings_free(&cmdline_settings);
	les_settings_free(&file_settings);
	les_settings_free(&effective_settings);
}

/* The name a setting is printed under: its long name, else its letter. */
static const char *key_name(int key, int longindex)
{
	static char letter[2];

	if (longindex >= 0)
		return les_opt_getopt_long()[longindex].name;
	for (const struct option *lo = les_opt_getopt_long(); lo->name; lo++)
		if (lo->val == key)
			return lo->name;
	letter[0] = (char)key;
	return letter;
}

/* getopt over argv into cmdline_settings; answers --help and --version. */
static int collect_cmdline(int argc, char **argv, bool *print_config, const char **config)
{
	int opt, longindex = -1;

	opterr = 0;
	/*
	 * 0, not 1: glibc and musl then reset getopt entirely. With 1, a
	 * parse that stopped inside a cluster ("-vq") leaves getopt pointing
	 * into the previous argv, which the next parse would read.
	 */
	optind = 0;
	while ((opt = getopt_long(argc, argv, les_opt_getopt_short(),
				  les_opt_getopt_long(), &longindex)) != -1) {
		switch (opt) {
		case 'h':
			les_usage(stdout);
			return 1;
		case 'V':
			printf("lustre-ebpf-stream %s\n", LES_VERSION);
			return 1;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		case '?':
			return usage_error("unknown option '%s'", argv[optind - 1]);
		case OPT_CONFIG:
			*config = optarg;
			break;
		case OPT_PRINT_CONFIG:
			*print_config = true;
			break;
		default:
			if (les_settings_add(&cmdline_settings, key_name(opt, longindex), optarg,
					     opt, NULL, 0))
				return usage_error("%s", "out of memory");
		}
		longindex = -1;
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return 0;
}

/* --config FILE, else the default file when it exists. */
static int load_config_file(const char *path, struct les_options *o)
{
	char err[1024];
	int ret;

	if (!path) {
		if (access(LES_CONFIG_DEFAULT_PATH, F_OK))
			return 0;
		path = LES_CONFIG_DEFAULT_PATH;
	}
	ret = les_config_load(path, option_table(), les_opt_not_in_file(), &file_settings, err,
			      sizeof(err));
	if (ret)
		return usage_error("%s", err);
	o->config_path = file_settings.file;
	return 0;
}

/* File settings the command line does not override, then the command line's. */
static int merge_settings(void)
{
	const struct les_settings *from[2] = { &file_settings, &cmdline_settings };

	for (int i = 0; i < 2; i++) {
		for (size_t k = 0; k < from[i]->n; k++) {
			const struct les_setting *st = &from[i]->v[k];

			if (i == 0 && les_settings_has_key(&cmdline_settings, st->key))
				continue;
			if (les_settings_add(&effective_settings, st->name, st->value, st->key,
					     st->file, st->line))
				return usage_error("%s", "out of memory");
		}
	}
	return 0;
}

static int apply_settings(struct les_options *o)
{
	int err = 0;

	for (size_t i = 0; i < effective_settings.n && !err; i++) {
		const struct les_setting *st = &effective_settings.v[i];

		if (st->file)
			snprintf(err_where, sizeof(err_where), "%s:%u", st->file, st->line);
		err = parse_one(o, st->key, st->value);
		err_where[0] = '\0';
	}
	return err;
}

/* --print-config: a config file that gives the same settings. */
static void print_settings(const struct les_options *o, FILE *out)
{
	fprintf(out, "# lustre-ebpf-stream %s: settings in effect (%s%s); defaults otherwise\n",
		LES_VERSION, o->config_path ? "config file " : "no config file",
		o->config_path ? o->config_path : "");
	les_settings_print(&effective_settings, out);
}

/*
 * Options that only tune an output: given without that output they would
 * do nothing, silently, so they are refused. The exporter's own flags
 * (--uid-labels, --histogram-process-labels, --web.telemetry-path) are
 * not: its command lines give them without --web.listen-address, relying
 * on its default address.
 */
static const struct {
	int key;
	const char *name;
	int needs;
	const char *needs_name;
} option_needs[] = {
	{ OPT_KAFKA_KEY, "--kafka-key", OPT_KAFKA_BROKERS, "--kafka-brokers" },
	{ OPT_KAFKA_QUEUE_SIZE, "--kafka-queue-size", OPT_KAFKA_BROKERS, "--kafka-brokers" },
	{ OPT_KAFKA_FLUSH_TIMEOUT, "--kafka-flush-timeout", OPT_KAFKA_BROKERS, "--kafka-brokers" },
	{ OPT_SERIES_TTL, "--series-ttl", OPT_PROMETHEUS, "--prometheus" },
	{ OPT_OTLP_SAMPLE, "--otlp-sample", OPT_OTLP, "--otlp" },
	{ OPT_OTLP_QUEUE_SIZE, "--otlp-queue-size", OPT_OTLP, "--otlp" },
	{ OPT_OTLP_FLUSH_TIMEOUT, "--otlp-flush-timeout", OPT_OTLP, "--otlp" },
	{ OPT_OTLP_SIGNALS, "--otlp-signals", OPT_OTLP, "--otlp" },
};

static int check_option_needs(void)
{
	char why[96];

	for (size_t i = 0; i < sizeof(option_needs) / sizeof(option_needs[0]); i++) {
		if (!les_settings_has_key(&effective_settings, option_needs[i].key) ||
		    les_settings_has_key(&effective_settings, option_needs[i].needs))
			continue;
		snprintf(why, sizeof(why), "%s does nothing without %s", option_needs[i].name,
			 option_needs[i].needs_name);
		return usage_error("%s", why);
	}
	return 0;
}

/*
 * Run under lustre-ebpf-exporter's name (a link in its place, its systemd
 * unit and command line unchanged), the tool does what that exporter
 * does: metrics on its default address, every interface, and no records,
 * whose stdout is the journal there. -o and --prometheus still choose.
 */
static void apply_exporter_name(struct les_options *o, const char *argv0)
{
	const char *base = argv0 ? strrchr(argv0, '/') : NULL;

	base = base ? base + 1 : argv0;
	if (!base || strcmp(base, LES_EXPORTER_NAME) != 0)
		return;
	o->exporter_name = true;
	if (!o->prom_listen && LES_HAVE_PROMETHEUS)
		o->prom_listen = LES_EXPORTER_LISTEN;
	if (!o->output)
		o->output = "/dev/null";
}

int les_options_parse(struct les_options *o, int argc, char **argv)
{
	const char *config = NULL;
	bool print_config = false;
	int err;

	les_options_release();
	err = collect_cmdline(argc, argv, &print_config, &config);
	err = err ?: load_config_file(config, o);
	err = err ?: merge_settings();
	err = err ?: apply_settings(o);
	if (err)
		return err;
	o->print_config = print_config;
	if (!o->kafka_brokers != !o->kafka_topic)
		return usage_error("%s", o->kafka_brokers ? "--kafka-brokers needs --kafka-topic"
							  : "--kafka-topic needs --kafka-brokers");
	/* A producer property with no producer would do nothing, silently. */
	if (o->n_kafka_props && !o->kafka_brokers)
		return usage_error("%s", "-X sets a Kafka producer property: it needs --kafka-brokers");
	err = check_option_needs();
	if (err)
		return err;
	apply_exporter_name(o, argc > 0 ? argv[0] : NULL);
	/* The exporter's --once: one drain interval, then exit. */
	if (o->once && (!o->duration_ns || o->drain_interval_ns < o->duration_ns))
		o->duration_ns = o->drain_interval_ns;
	if (o->records && !o->aggregate_ns)
		return usage_error("%s", "--records needs --aggregate");
	/* The metrics are the windows': without windows there is nothing to send. */
	if (o->otlp_metrics && !o->aggregate_ns)
		return usage_error("%s", "--otlp-signals metrics needs --aggregate");
	if (o->kernel_facts_path && !o->list_probes)
		return usage_error("%s", "--kernel-facts needs --list-probes");
	if (o->print_config) {
		print_settings(o, stdout);
		return 1;
	}
	return 0;
}
