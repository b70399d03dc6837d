// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Command line: defaults, parsing, validation, --help. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "options.h"

#define NS_PER_SEC 1000000000ULL

void les_options_defaults(struct les_options *o)
{
	memset(o, 0, sizeof(*o));
	o->ringbuf_bytes = 16ULL << 20;
	o->wakeup_bytes = 1ULL << 20;
	o->stats_interval_ns = 10 * NS_PER_SEC;
	o->stale_timeout_ns = 300 * NS_PER_SEC;
	o->inflight_max = 16384;
	o->threads_max = 16384;
	o->poll_ms = 10;
	o->filter_uid = -1;
	o->attach = LES_ATTACH_MODE_AUTO;
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

int les_parse_duration_ns(const char *s, uint64_t *out)
{
	static const struct {
		const char *suffix;
		double ns;
	} units[] = {
		{ "", 1e9 },   { "s", 1e9 },   { "ms", 1e6 },	{ "us", 1e3 },
		{ "ns", 1 },   { "m", 60e9 },  { "min", 60e9 }, { "h", 3600e9 },
	};
	const char *unit;
	double val;

	if (parse_scaled(s, &val, &unit))
		return -EINVAL;
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

enum {
	OPT_RINGBUF = 1000,
	OPT_WAKEUP,
	OPT_STATS_INTERVAL,
	OPT_STALE_TIMEOUT,
	OPT_INFLIGHT_MAX,
	OPT_THREADS_MAX,
	OPT_POLL_MS,
	OPT_MIN_LATENCY,
	OPT_UID,
	OPT_PID,
	OPT_FILE_ID,
	OPT_ATTACH,
	OPT_LIST_PROBES,
	OPT_MOUNTINFO,
	OPT_VERSION,
};

static const struct option long_options[] = {
	{ "mount", required_argument, NULL, 'm' },
	{ "duration", required_argument, NULL, 'd' },
	{ "count", required_argument, NULL, 'c' },
	{ "output", required_argument, NULL, 'o' },
	{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF },
	{ "wakeup-bytes", required_argument, NULL, OPT_WAKEUP },
	{ "stats-interval", required_argument, NULL, OPT_STATS_INTERVAL },
	{ "stale-timeout", required_argument, NULL, OPT_STALE_TIMEOUT },
	{ "inflight-max", required_argument, NULL, OPT_INFLIGHT_MAX },
	{ "threads-max", required_argument, NULL, OPT_THREADS_MAX },
	{ "poll-interval", required_argument, NULL, OPT_POLL_MS },
	{ "min-latency", required_argument, NULL, OPT_MIN_LATENCY },
	{ "uid", required_argument, NULL, OPT_UID },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "file-id", no_argument, NULL, OPT_FILE_ID },
	{ "attach", required_argument, NULL, OPT_ATTACH },
	{ "list-probes", optional_argument, NULL, OPT_LIST_PROBES },
	{ "mountinfo", required_argument, NULL, OPT_MOUNTINFO },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

void les_usage(FILE *out)
{
	fputs("Usage: lustre-ebpf-stream [OPTIONS]\n"
	      "Stream every file operation and client request on Lustre, NFS and FUSE mounts\n"
	      "as JSON Lines, attributed to the process, user and job that caused it.\n"
	      "\n"
	      "What to observe:\n"
	      "  -m, --mount PATH         observe this mount (repeatable; default: every\n"
	      "                           Lustre, NFS and FUSE mount in /proc/self/mountinfo)\n"
	      "      --attach METHOD      auto|fentry|kprobe|syscall (default auto)\n"
	      "      --list-probes[=json] print the probes and the attach method chosen, then exit\n"
	      "\n"
	      "Filters (applied in the kernel):\n"
	      "      --min-latency DUR    only ops at least this slow (e.g. 20ms)\n"
	      "      --uid UID            only ops of this user\n"
	      "      --pid PID            only ops of this process\n"
	      "\n"
	      "Output:\n"
	      "  -o, --output FILE        write to FILE ('-' = stdout, default; *.gz = gzip)\n"
	      "      --file-id            add dev and ino to access records\n"
	      "      --stats-interval DUR stats record every DUR (default 10s; 0 = at exit only)\n"
	      "\n"
	      "Run time:\n"
	      "  -d, --duration DUR       stop after DUR (e.g. 60, 90s, 5m)\n"
	      "  -c, --count N            stop after N records\n"
	      "\n"
	      "Tuning:\n"
	      "      --ringbuf-size SIZE  BPF ring buffer size (default 16M, power of 2)\n"
	      "      --wakeup-bytes SIZE  wake the consumer when this much is pending (default 1M;\n"
	      "                           0 = on every record)\n"
	      "      --poll-interval MS   consumer poll timeout (default 10)\n"
	      "      --stale-timeout DUR  sweep requests in flight longer than DUR (default 300s)\n"
	      "      --inflight-max N     requests tracked in flight (default 16384)\n"
	      "      --threads-max N      threads tracked with ops in flight (default 16384)\n"
	      "\n"
	      "  -v, --verbose            more diagnostics on stderr (repeat for libbpf's)\n"
	      "  -h, --help               this text\n"
	      "      --version            print the version\n"
	      "\n"
	      "Examples:\n"
	      "  lustre-ebpf-stream --mount /mnt/lustre | jq 'select(.type==\"access\")'\n"
	      "  lustre-ebpf-stream --min-latency 20ms --duration 60 -o slow.jsonl.gz\n"
	      "\n"
	      "Exit status: 0 success, 1 runtime failure, 2 usage error.\n",
	      out);
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("lustre-ebpf-stream: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (see --help)\n", stderr);
	return LES_EXIT_USAGE;
}

static int parse_u32_opt(const char *name, const char *arg, uint64_t min, uint64_t max,
			 uint32_t *out)
{
	uint64_t v;

	if (les_parse_u64(arg, min, max, &v)) {
		fprintf(stderr, "lustre-ebpf-stream: invalid %s '%s' (see --help)\n", name, arg);
		return LES_EXIT_USAGE;
	}
	*out = (uint32_t)v;
	return 0;
}

static int parse_duration_opt(const char *name, const char *arg, uint64_t *out)
{
	if (les_parse_duration_ns(arg, out)) {
		fprintf(stderr, "lustre-ebpf-stream: invalid %s '%s' (see --help)\n", name, arg);
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

static int parse_one(struct les_options *o, int opt, const char *arg)
{
	uint64_t v;

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
	case OPT_UID:
		if (les_parse_u64(arg, 0, UINT32_MAX - 1, &v))
			return usage_error("invalid --uid '%s': expected a numeric uid", arg);
		o->filter_uid = (int64_t)v;
		return 0;
	case OPT_PID:
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
	case OPT_MOUNTINFO:
		o->mountinfo_path = arg;
		return 0;
	case 'v':
		o->verbose++;
		return 0;
	}
	return LES_EXIT_USAGE;
}

int les_options_parse(struct les_options *o, int argc, char **argv)
{
	int opt, err;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":m:d:c:o:vh", long_options, NULL)) != -1) {
		switch (opt) {
		case 'h':
			les_usage(stdout);
			return 1;
		case OPT_VERSION:
			printf("lustre-ebpf-stream %s\n", LES_VERSION);
			return 1;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		case '?':
			return usage_error("unknown option '%s'", argv[optind - 1]);
		default:
			err = parse_one(o, opt, optarg);
			if (err)
				return err;
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return 0;
}
