/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The sinks, the output (the file sink) included, by one interface: a row
 * of the table in sinks.c each. The run opens every row whose
 * configuration asks for it, registers its hooks with the consumer, ticks,
 * flushes and closes them; neither the run loop nor main names a sink.
 */
#ifndef LES_SINKS_H
#define LES_SINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pipeline/consumer.h"
#include "sink/aggregate.h"
#include "sink/otlp.h"
#include "sink/prom.h"
#include "sink/sink_kafka.h"

struct les_run;

/* The sinks' part of the command line: each sink's own configuration. */
struct les_sinks_config {
	const char *output;		       /* --output: the file sink's path; NULL or "-": stdout */
	struct les_kafka_config kafka;	       /* off without brokers */
	struct les_otlp_config otlp;	       /* off without a URL */
	struct les_aggregate_config aggregate; /* off when window_ns is 0 */
	bool records;			       /* --records: per-op lines besides the windows */
	struct les_prom_config prom;	       /* off when listen is NULL */
	int summary;			       /* 1 on, 0 off, -1 when stderr is a terminal */
	bool top;
	uint64_t top_interval_ns; /* --interval: a --top frame every this long */
	uint32_t top_batch;	  /* --batch N: stop after N frames; 0: never */
	bool verbose;
};

/*
 * What sinks publish for other stages to show (Prometheus's self-metrics),
 * gathered through the stats hooks' counters: no sink reads another.
 */
struct les_sink_counters {
	bool have_kafka;
	struct les_kafka_counters kafka;
	bool have_otlp;
	struct les_otlp_counters otlp;
};

struct les_sink_slot;

/*
 * One sink. open builds it when cfg asks for it and sets slot->sink (left
 * NULL: not asked for); 0, or a negative errno with one line in err,
 * -EINVAL for a usage error. A row marked early opens before the probes
 * load and the capabilities are dropped (les_sinks_open_early: the output,
 * whose path is checked as root); the others after. Every row's hooks are
 * registered with the consumer by les_sinks_open, in the table's order,
 * slot->sink their ctx: event, line, output (the consumer's output, between
 * the two: at most one row), and the stats hook's stats, counts (the
 * output's, at the stats record's fixed places) and counters. tick runs on every pass of the loop, sync before and
 * after each stats record (what a row buffers is written, so the record
 * counts it and goes out itself), flush once at the end before the final
 * stats record, verdict after it (nonzero: the run failed, said on stderr
 * by the row), close after the run (a nonzero return fails the run). Any
 * hook may be NULL.
 */
struct les_sink_ops {
	const char *name;
	bool early;
	int (*check)(const struct les_sinks_config *cfg, char *err, size_t errlen);
	/* Whether it will bind a port below 1024 (after the capability drop). */
	bool (*binds_privileged_port)(const struct les_sinks_config *cfg);
	int (*open)(struct les_sink_slot *slot, struct les_run *r,
		    const struct les_sinks_config *cfg, char *err, size_t errlen);
	les_event_fn event;
	les_event_fn line;
	les_event_fn join; /* each joined request (les_consumer_add_join_sink) */
	les_output_fn output;
	les_stats_fn stats;
	les_output_counts_fn counts;
	les_sink_counters_fn counters;
	void (*tick)(struct les_sink_slot *slot, struct les_run *r, uint64_t now_ns);
	void (*sync)(struct les_sink_slot *slot, struct les_run *r);
	void (*flush)(struct les_sink_slot *slot, struct les_run *r);
	int (*verdict)(struct les_sink_slot *slot, struct les_run *r);
	int (*close)(struct les_sink_slot *slot, struct les_run *r);
};

struct les_sink_slot {
	const struct les_sink_ops *ops;
	const struct les_sinks_config *cfg;
	void *sink;	  /* the sink's object, its hooks' ctx; NULL: not open */
	void *priv;	  /* what its row keeps besides, freed by its close */
	bool opened;	  /* its open ran */
	uint64_t next_ns; /* when its periodic work is due next */
};

/* The open sinks of a run, one slot per row of the table. */
struct les_sinks {
	struct les_sink_slot *slots;
	size_t n;
};

/* Before anything loads: every check; 0, or as open. */
int les_sinks_check(const struct les_sinks_config *cfg, char *err, size_t errlen);

/* Whether a sink cfg asks for binds a port below 1024: its capability is kept. */
bool les_sinks_bind_privileged_port(const struct les_sinks_config *cfg);

/*
 * Before the probes load: open the early rows (the output), in the table's
 * order; 0, or as open. cfg outlasts the run.
 */
int les_sinks_open_early(struct les_run *r, const struct les_sinks_config *cfg, char *err,
			 size_t errlen);

/*
 * Open every other sink cfg asks for, and register every open row's hooks
 * with the consumer, in the table's order; 0, or as open. cfg outlasts the run.
 */
int les_sinks_open(struct les_run *r, const struct les_sinks_config *cfg, char *err, size_t errlen);

/* Each open sink's tick, in the table's order. */
void les_sinks_tick(struct les_run *r, uint64_t now_ns);

/* Each open sink's sync, around a stats record. */
void les_sinks_sync(struct les_run *r);

/* Each open sink's flush, last row first: a sink's lines reach the line sinks before it. */
void les_sinks_flush(struct les_run *r);

/* After the final stats record: nonzero when a sink says the run failed (each says why). */
int les_sinks_verdict(struct les_run *r);

/* Close every sink, last row first; nonzero when one says the run failed. */
int les_sinks_close(struct les_run *r);

#endif /* LES_SINKS_H */
