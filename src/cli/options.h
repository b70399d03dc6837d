/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Settings: one struct with defaults, filled from the command line. */
#ifndef LES_OPTIONS_H
#define LES_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include "enrich/enrich.h"
#include "probe/attach.h"
#include "sink/sink_kafka.h"
#include "les_record.h"

/* Exit statuses (documented in the man page). */
#define LES_EXIT_OK	 0
#define LES_EXIT_RUNTIME 1
#define LES_EXIT_USAGE	 2

/* The Lustre exporter this replaces: its name, and its default address. */
#define LES_EXPORTER_NAME   "lustre-ebpf-exporter"
#define LES_EXPORTER_LISTEN ":9108"

enum les_list_probes {
	LES_LIST_NONE = 0,
	LES_LIST_TEXT,
	LES_LIST_JSON,
};

struct les_options {
	const char *mounts[LES_MAX_MOUNTS]; /* --mount, empty: auto-detect */
	size_t n_mounts;
	uint64_t duration_ns; /* 0: until signalled */
	uint64_t count; /* stop after this many records, 0: no limit */
	const char *output; /* NULL or "-": stdout; *.gz: gzip */
	uint64_t ringbuf_bytes;
	uint64_t wakeup_bytes;
	uint64_t stats_interval_ns; /* 0: only the final stats record */
	uint64_t stale_timeout_ns; /* in-flight entries older than this are swept */
	uint32_t inflight_max; /* requests tracked in flight */
	uint32_t threads_max; /* threads tracked with ops in flight */
	uint32_t poll_ms; /* consumer poll timeout */
	uint64_t min_latency_ns;
	int64_t filter_uid; /* -1: all */
	uint32_t filter_pid; /* 0: all */
	const char *filter_comm; /* --comm, NULL: all */
	uint32_t filter_ops; /* --op: 1 << enum les_access_op, 0: all */
	uint32_t filter_intents; /* --intent: 1 << enum les_intent, 0: all */
	const char *filter_job; /* --job, in userspace after enrichment; NULL: all */
	/* Operation: config file (src/cli/config.h), summary and status line (src/sink/summary.h) */
	const char *config_path; /* the config file read, NULL if none */
	bool print_config; /* --print-config: print the settings and exit */
	int summary; /* --summary[=BOOL]; -1: when stderr is a terminal */
	bool top; /* --top: the live view (src/sink/top.h) */
	uint64_t top_interval_ns; /* --interval: a frame every this long */
	uint32_t top_batch; /* --batch N: N plain frames on stdout, then exit; 0: screen */
	const char *input_path; /* --input FILE: --top over a capture (src/sink/replay.h) */
	double replay_speed; /* --speed X: frames X times faster than recorded */
	bool file_id;
	enum les_attach_mode attach;
	enum les_list_probes list_probes;
	bool dump_kernel_facts; /* --dump-kernel-facts: print them and exit (src/probe/kfacts.h) */
	const char *kernel_facts_path; /* --kernel-facts FILE: plan from these, not this kernel */
	int verbose;
	const char *mountinfo_path; /* for tests; NULL: /proc/self/mountinfo */
	const char *hostname; /* --hostname; NULL: gethostname() */
	bool once; /* the exporter's --once: stop after one drain interval */
	uint64_t drain_interval_ns; /* the exporter's --drain-interval (default 5 s) */
	bool keep_caps; /* --keep-caps: keep every capability after attaching */
	/* Enrichment (src/enrich/enrich.h) */
	struct les_enrich_config enrich;
	bool no_enrich; /* --no-enrich: kernel fields only */
	/* Kafka sink: on when brokers and topic are both set */
	const char *kafka_brokers;
	const char *kafka_topic;
	enum les_kafka_key kafka_key;
	const char *kafka_props[LES_KAFKA_MAX_PROPS]; /* "prop=value", as given */
	size_t n_kafka_props;
	uint64_t kafka_queue_bytes; /* local queue bound */
	uint64_t kafka_flush_timeout_ns; /* at exit */
	/* OTLP trace export (src/sink/otlp.h): on when otlp_url is set */
	const char *otlp_url;
	uint32_t otlp_sample;
	uint64_t otlp_queue_bytes;
	uint64_t otlp_flush_timeout_ns;
	bool otlp_traces, otlp_metrics; /* --otlp-signals */
	/* Windowed aggregation (src/sink/aggregate.h): on when aggregate_ns is set */
	uint64_t aggregate_ns; /* --aggregate window length */
	uint32_t group_by; /* mask of enum les_group_field */
	uint32_t max_groups; /* groups per window before "other" */
	bool records; /* --records: per-op records too with --aggregate */
	/* Prometheus endpoint (src/sink/prom.h): on when prom_listen is set */
	const char *prom_listen; /* --prometheus / --web.listen-address */
	const char *prom_path; /* --web.telemetry-path */
	bool prom_uid_labels; /* --uid-labels */
	bool prom_histogram_process; /* --histogram-process-labels */
	bool prom_slurm_label;	     /* --slurm-jobid: slurm_job_id on lustre_client_* */
	bool exporter_name; /* run as lustre-ebpf-exporter: metrics, no records */
	uint64_t series_ttl_ns; /* --series-ttl, 0: never */
};

void les_options_defaults(struct les_options *o);

/*
 * Parse argv into o. Returns 0 to run, 1 when the request was answered
 * (--help, --version), or LES_EXIT_USAGE after printing one line on stderr.
 */
int les_options_parse(struct les_options *o, int argc, char **argv);

void les_usage(FILE *out);

/*
 * Settings in effect after les_options_parse: the config file's, less the
 * options the command line gives (a repeatable option given on the command
 * line replaces the file's list), then the command line's. --print-config
 * prints them.
 */
struct les_settings;
const struct les_settings *les_options_settings(void);
/* Free what les_options_parse kept; the options' strings point into it. */
void les_options_release(void);

/* Number parsers that check errno, range and trailing garbage. */
int les_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* "250ms", "2s", "1.5m", "100us", "10" (seconds) -> ns */
int les_parse_duration_ns(const char *s, uint64_t *out);
/* "8M", "64K", "1G", "4096" -> bytes */
int les_parse_size(const char *s, uint64_t *out);

#endif /* LES_OPTIONS_H */
