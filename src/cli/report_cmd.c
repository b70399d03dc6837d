// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lustre-ebpf-stream report CAPTURE [-o FILE]: the report subcommand's
 * command line (its own options; no config file is read), handed to
 * sink/report.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/options.h"
#include "cli/report_cmd.h"
#include "sink/report.h"

#ifndef LES_REPORT_JS_DIR
#define LES_REPORT_JS_DIR "/usr/share/lustre-ebpf-stream/report"
#endif

#define SERIES_DEFAULT 10
#define SERIES_MAX     100

/* The page template, built into the binary from src/sink/report_page.html. */
extern const char les_report_page[];
extern const size_t les_report_page_len;

/* --by's words: the time series charted beyond the jobs'. */
static const struct {
	const char *name;
	uint32_t bit;
} by_names[] = {
	{"job", 0}, /* always charted */
	{"user", LES_REPORT_BY_USER},
	{"process", LES_REPORT_BY_PROCESS},
};

enum { OPT_BY = 256, OPT_SLOWEST, OPT_SERIES, OPT_JS_DIR };

static const struct option long_opts[] = {
	{"output", required_argument, NULL, 'o'},
	{"window", required_argument, NULL, 'w'},
	{"by", required_argument, NULL, OPT_BY},
	{"slowest", required_argument, NULL, OPT_SLOWEST},
	{"series", required_argument, NULL, OPT_SERIES},
	{"js-dir", required_argument, NULL, OPT_JS_DIR},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: lustre-ebpf-stream report CAPTURE [OPTIONS]\n"
		"An incident report of a capture (JSON Lines as the tool writes them, gzip or\n"
		"not) as one self-contained HTML file: ops/s and bytes/s over time by job, a\n"
		"latency heatmap per op, request waits by target, the top jobs, users and\n"
		"processes, the slowest ops with their request chains.\n"
		"\n"
		"  -o, --output FILE   the HTML file (default report.html; - for stdout)\n"
		"  -w, --window DUR    window width, 2s, 1m; a bare number is seconds (default:\n"
		"                      the capture's span over ~100 windows,\n"
		"                      1s, 2s, 5s, 10s, ...); the windows of --aggregate DUR\n"
		"      --by LIST       time series by user,process besides the jobs'\n"
		"      --slowest N     slow ops listed with their chains (default %d, at most %d)\n"
		"      --series N      keys a time-series chart names (default %d); the rest\n"
		"                      are summed as (other)\n"
		"      --js-dir DIR    vega.min.js, vega-lite.min.js, vega-embed.min.js\n"
		"                      (default %s)\n"
		"  -h, --help\n"
		"\n"
		"Exit status: 0 written, 1 the capture, a script or the output cannot be\n"
		"read or written, 2 usage.\n",
		LES_REPORT_SLOWEST_DEFAULT, LES_REPORT_SLOWEST_MAX, SERIES_DEFAULT,
		LES_REPORT_JS_DIR);
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("lustre-ebpf-stream report: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (see report --help)\n", stderr);
	return LES_EXIT_USAGE;
}

static int parse_by(const char *csv, uint32_t *by)
{
	const char *p = csv;

	for (;;) {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < sizeof(by_names) / sizeof(by_names[0]); i++)
			if (strlen(by_names[i].name) == n && strncmp(by_names[i].name, p, n) == 0)
				break;
		if (i == sizeof(by_names) / sizeof(by_names[0]))
			return usage_error("--by %s: the words are job, user, process", csv);
		*by |= by_names[i].bit;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

static int parse_count(const char *name, const char *arg, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < 1 || v > max) {
		fprintf(stderr, "lustre-ebpf-stream report: %s %s: a count from 1 to %u\n", name,
			arg, max);
		return LES_EXIT_USAGE;
	}
	*out = (uint32_t)v;
	return 0;
}

/* A bare number is seconds, as in the tracing command's durations. */
static int parse_window(const char *arg, uint64_t *ns)
{
	char with_unit[64];
	int err = les_parse_duration_ns(arg, ns);

	if (err == -EDOM && snprintf(with_unit, sizeof(with_unit), "%ss", arg) < 63)
		err = les_parse_duration_ns(with_unit, ns);
	if (err || *ns < 1000000ULL)
		return usage_error("--window %s: a duration of 1ms or more (2s, 500ms, 1m)", arg);
	return 0;
}

/* One option; 0, 1 for --help, or LES_EXIT_USAGE. */
static int parse_one(int c, struct les_report_config *cfg)
{
	switch (c) {
	case 'o':
		cfg->output_path = optarg;
		return 0;
	case 'w':
		return parse_window(optarg, &cfg->window_ns);
	case OPT_BY:
		return parse_by(optarg, &cfg->by);
	case OPT_SLOWEST:
		return parse_count("--slowest", optarg, LES_REPORT_SLOWEST_MAX, &cfg->slowest);
	case OPT_SERIES:
		return parse_count("--series", optarg, SERIES_MAX, &cfg->series_max);
	case OPT_JS_DIR:
		cfg->js_dir = optarg;
		return 0;
	case 'h':
		usage(stdout);
		return 1;
	default:
		return LES_EXIT_USAGE; /* getopt said which */
	}
}

static int parse(int argc, char **argv, struct les_report_config *cfg)
{
	int c, ret;

	/* getopt names the program by argv[0]: the command, as every other message. */
	argv[0] = (char *)"lustre-ebpf-stream report";
	opterr = 1;
	while ((c = getopt_long(argc, argv, "o:w:h", long_opts, NULL)) != -1)
		if ((ret = parse_one(c, cfg)))
			return ret;
	if (optind != argc - 1)
		return usage_error("%s", optind >= argc ? "which capture? report CAPTURE -o FILE"
							: "one capture at a time");
	cfg->input_path = argv[optind];
	return 0;
}

/* The one line a report ends with: what it read, skipped and wrote. */
static void summary(const struct les_report_config *cfg, const struct les_report_stats *st)
{
	fprintf(stderr,
		"lustre-ebpf-stream report: %s: %llu lines, %llu records, %llu windows of %g s; "
		"skipped %llu malformed, %llu over 256 KiB%s; wrote %s (%zu bytes)\n",
		cfg->input_path, (unsigned long long)st->lines, (unsigned long long)st->records,
		(unsigned long long)st->windows, (double)st->window_ns / 1e9,
		(unsigned long long)st->malformed, (unsigned long long)st->too_long,
		st->truncated ? "; the gzip stream ends early (a cut capture): read up to the cut"
			      : "",
		cfg->output_path, st->bytes_written);
}

int les_report_main(int argc, char **argv)
{
	struct les_report_config cfg = {
		.output_path = "report.html",
		.js_dir = LES_REPORT_JS_DIR,
		.slowest = LES_REPORT_SLOWEST_DEFAULT,
		.series_max = SERIES_DEFAULT,
		.page = les_report_page,
		.page_len = les_report_page_len,
	};
	struct les_report_stats st;
	char err[4608];
	int ret = parse(argc, argv, &cfg);

	if (ret)
		return ret == 1 ? LES_EXIT_OK : ret;
	if (les_report_run(&cfg, &st, err, sizeof(err))) {
		fprintf(stderr, "lustre-ebpf-stream report: %s\n", err);
		return LES_EXIT_RUNTIME;
	}
	summary(&cfg, &st);
	return LES_EXIT_OK;
}
