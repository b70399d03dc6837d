/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Every command-line option, once: its names, argument, --help text,
 * whether a config file may give it and how the bash completion completes
 * its argument. From this table come getopt_long's options and short
 * string, --help, and the names a config file resolves; test_option_table
 * checks the man page and the completion script against it.
 *
 * Adding an option: an OPT_* key below (or its letter), one entry in
 * les_opts[] (option_table.c), and its case in parse_one (options.c).
 */
#ifndef LES_OPTION_TABLE_H
#define LES_OPTION_TABLE_H

#include <getopt.h>
#include <stdio.h>

/* getopt's val of the options without a short letter (those with one use it). */
enum les_opt_key {
	OPT_RINGBUF = 1000,
	OPT_WAKEUP,
	OPT_STATS_INTERVAL,
	OPT_STALE_TIMEOUT,
	OPT_INFLIGHT_MAX,
	OPT_THREADS_MAX,
	OPT_POLL_MS,
	OPT_MIN_LATENCY,
	OPT_FILE_ID,
	OPT_ATTACH,
	OPT_LIST_PROBES,
	OPT_DUMP_KFACTS,
	OPT_KERNEL_FACTS,
	OPT_MOUNTINFO,
	OPT_HOSTNAME,
	OPT_KEEP_CAPS,
	OPT_JOB_ENV,
	OPT_ENV_TAG,
	OPT_JOBID_NAME,
	OPT_STRIP_SUFFIX,
	OPT_PROCESS_ALLOWLIST,
	OPT_ACTOR_RULE,
	OPT_PROC_CACHE,
	OPT_USER_CACHE,
	OPT_NO_ENRICH,
	OPT_KAFKA_BROKERS,
	OPT_KAFKA_TOPIC,
	OPT_KAFKA_KEY,
	OPT_KAFKA_QUEUE_SIZE,
	OPT_KAFKA_FLUSH_TIMEOUT,
	OPT_OTLP,
	OPT_OTLP_SAMPLE,
	OPT_OTLP_QUEUE_SIZE,
	OPT_OTLP_FLUSH_TIMEOUT,
	OPT_OTLP_SIGNALS,
	OPT_AGGREGATE,
	OPT_GROUP_BY,
	OPT_MAX_GROUPS,
	OPT_RECORDS,
	OPT_PROMETHEUS,
	OPT_TELEMETRY_PATH,
	OPT_UID_LABELS,
	OPT_HIST_PROCESS,
	OPT_SERIES_TTL,
	OPT_COMM,
	OPT_OP,
	OPT_INTENT,
	OPT_JOB,
	OPT_CONFIG,
	OPT_PRINT_CONFIG,
	OPT_SUMMARY,
	OPT_TOP,
	OPT_INTERVAL,
	OPT_BATCH,
	OPT_INPUT,
	OPT_SPEED,
	/* The Lustre exporter's own flags, so that its command lines run unchanged. */
	OPT_ONCE,
	OPT_DRAIN_INTERVAL,
	OPT_SLURM_JOBID,
	OPT_SLURM_JOBID_TTL,
	OPT_SLURM_JOBID_NEGATIVE_TTL,
	OPT_SLURM_JOBID_VERIFY_TTL,
	OPT_SLURM_JOBID_CACHE_SIZE,
	OPT_LEGACY_SYMBOL_ALLOW_MISSING,
};

/* The groups of --help, in order; each entry names the one it is listed in. */
enum les_opt_section {
	LES_SEC_OBSERVE,
	LES_SEC_FILTERS,
	LES_SEC_OUTPUT,
	LES_SEC_KAFKA,
	LES_SEC_OTLP,
	LES_SEC_ATTRIBUTION,
	LES_SEC_AGGREGATION,
	LES_SEC_PROMETHEUS,
	LES_SEC_LIVE,
	LES_SEC_RUN,
	LES_SEC_TUNING,
	LES_SEC_PRIVILEGES,
	LES_SEC_EXPORTER,
	LES_SEC_GENERAL,
	LES_SEC_MAX,
};

#define LES_OPT_F_ALIAS	      0x1 /* another name of the option before it: not in --help */
#define LES_OPT_F_NOT_IN_FILE 0x2 /* a config file may not give it (--config, --help) */
/* --help lists it on one line with the entries after it, up to one without the flag. */
#define LES_OPT_F_JOINED      0x4
/* The argument is a comma list: "OP,OP..." in --help, "OP[,OP...]" in the man page. */
#define LES_OPT_F_LIST	      0x8
/* --help shows the name without its optional argument. */
#define LES_OPT_F_HELP_BARE   0x10

/*
 * How the bash completion completes the argument, as a word the
 * completion script's branch is recognised by (test_option_table):
 * "file", "mount", "uid", "pid", "comm", "bool", "list:NAME" (a comma list
 * of the words in $NAME), "words:W W..." (one of these), "none" (free
 * text). NULL for an option without an argument.
 */
struct les_opt {
	const char *name; /* long name; NULL: a short-only option (-X) */
	int key;	  /* getopt's val: the short letter, or an OPT_* */
	int has_arg;	  /* no_argument, required_argument, optional_argument */
	const char *arg;  /* the argument's name in --help and the man page */
	enum les_opt_section section;
	const char *help; /* --help's text, lines separated by '\n', without indent */
	unsigned int flags;
	unsigned int help_col; /* column the help text starts at; 0: the usual */
	const char *complete;
};

extern const struct les_opt les_opts[];
extern const size_t les_n_opts;

/* The short letter of an entry, 0 when it has none. */
int les_opt_short(const struct les_opt *o);

/* getopt_long's table (NULL-terminated) and short option string, made from les_opts. */
const struct option *les_opt_getopt_long(void);
const char *les_opt_getopt_short(void);

/* Long names (and letters) a config file may not give, NULL-terminated. */
const char *const *les_opt_not_in_file(void);

/* --help, from the table. */
void les_opt_usage(FILE *out);

#endif /* LES_OPTION_TABLE_H */
