/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The consumer: decode each ring-buffer record, enrich it, format it and
 * hand the line to the sinks. Also the stats record.
 */
#ifndef LES_CONSUMER_H
#define LES_CONSUMER_H

#include <stdbool.h>
#include <stdint.h>
#include "model/event.h"
#include "format/format.h"
#include "model/rpcjoin.h"
#include "util/json.h"
#include "model/observed.h"
#include "model/kstats.h"

#define LES_LINE_MAX 16384
/*
 * Registrations kept in the consumer itself: a usual run allocates none.
 * Not a limit: more go on the heap (les_consumer_release frees them).
 */
#define LES_CONSUMER_TAPS_IN_PLACE 8

/*
 * Two kinds of downstream stages. Event sinks (aggregation, Prometheus)
 * see every decoded record as a struct les_event. Line sinks (Kafka) get
 * every output line: records, windows, stats, each with the event's
 * metadata (type, host, fs_type, job_id, uid). Both return 0, or a
 * negative errno to stop the run.
 */
typedef int (*les_event_fn)(void *ctx, const struct les_event *ev);

/*
 * The output (the file sink, sink.h) is a line sink the per-op records are
 * accounted against: it gets every line first, told whether it is a
 * record's. -EPIPE from it stops the run. Its counts come through its
 * stats hook.
 */
typedef int (*les_output_fn)(void *ctx, const struct les_event *ev, bool record);

struct les_output {
	les_output_fn fn; /* NULL: no output */
	void *ctx;
};

/*
 * A stage's part of each stats record. members: its own members, after
 * the consumer's, e.g. "kafka":{...}. counts: the output's counts, which
 * the record puts at their fixed place (emitted, dropped_output,
 * dropped_output_lines, output_errors), and which the totals
 * (les_consumer_emitted, les_consumer_dropped) take. Either may be NULL.
 */
struct les_output_counts; /* sink/sink.h */
struct les_sink_counters; /* pipeline/sinks.h */
typedef void (*les_stats_fn)(void *ctx, struct jw *w);
typedef void (*les_output_counts_fn)(void *ctx, struct les_output_counts *oc);
typedef void (*les_sink_counters_fn)(void *ctx, struct les_sink_counters *sc);

/*
 * counters: the stage's counters other stages show (Prometheus's
 * self-metrics), put into the run's struct les_sink_counters: one stage
 * never reads another's.
 */
struct les_stats_hook {
	les_stats_fn members;
	les_output_counts_fn counts;
	les_sink_counters_fn counters;
	void *ctx;
};

/* One registration: an event sink, a line sink, a join sink or a stats hook. */
struct les_consumer_tap {
	les_event_fn event;
	les_event_fn line;
	les_event_fn join;	     /* each joined request: ev->join set, ev->kind none */
	struct les_stats_hook stats; /* .ctx set for a stats hook */
	void *ctx;
};

/* The registrations in their order, without a bound. */
struct les_consumer_taps {
	struct les_consumer_tap in_place[LES_CONSUMER_TAPS_IN_PLACE];
	struct les_consumer_tap *heap; /* all of them once they outgrow in_place */
	size_t n, cap;
};

/* The consumer's part of the command line. */
struct les_consumer_config {
	const char *filter_job; /* --job: only its records; NULL: all */
	uint64_t count;		/* --count: stop after so many records; 0: never */
	bool file_id;		/* --file-id: dev, ino and the FID in access records */
	/*
	 * Join client and server PtlRPC records (model/rpcjoin.h): set where
	 * server probes attached (the tracer's n_server_links). Without, no
	 * table is allocated, no record is offered, and the stats' "join"
	 * says it is off and why.
	 */
	bool join;
};

struct les_consumer {
	const struct les_consumer_config *cfg; /* read on every record: it lasts the run */
	const struct les_observed *observed;
	/*
	 * While the mounts change: the selection the probes already follow,
	 * looked in after observed during the drain at the change (run.c's
	 * refresh_mounts sets it around that drain only).
	 */
	const struct les_observed *observed_next;
	struct les_output out;
	struct les_fmt_ctx fmt;
	struct jw jw;
	char line[LES_LINE_MAX];
	uint64_t start_mono_ns;
	uint64_t by_kind[LES_REC_KIND_MAX]; /* records decoded, by kind */
	uint64_t emitted; /* records the output took (buffered), or the event sinks */
	uint64_t decode_errors; /* malformed records: wrong size, unknown kind */
	uint64_t format_errors; /* lines that did not fit the line buffer */
	uint64_t unobserved;	/* records of a dev in neither selection: no mount named */
	uint64_t filtered_userspace; /* records left out by --job */
	uint64_t dropped_stopped; /* records read after the run stopped (--count, EPIPE) */
	bool stop; /* --count reached or the output closed */
	bool draining; /* final drain: records after a stop are counted, not formatted */
	bool records_to_lines; /* per-op records are output lines (else only events) */
	struct les_consumer_taps taps; /* event sinks, line sinks, stats hooks */
	char host[256];
	struct les_event ev; /* the event being delivered */
	char comm[LES_COMM_LEN + 1];
	char worker_comm[LES_COMM_LEN + 1];
	char wire_job[LES_JOBID_LEN + 1]; /* the job an rpc record is charged to by the wire */
	char nid[LES_LNET_NID_STR_MAX]; /* the event's nid, as text */
	char srv_op[LES_RPC_NAME_LEN + 1]; /* a sunrpc server record's procedure, as text */
	struct les_enricher *enricher; /* NULL: records carry no enrichment */
	const struct les_enriched *enriched; /* of the record being handled */
	char describe_comm[LES_COMM_LEN + 1]; /* les_consumer_describe's */
	/* Client and server records of one PtlRPC request, joined (model/rpcjoin.h). */
	struct les_rpcjoin join;
	const char *join_off;		/* why the join is off (join.cap 0), for the stats */
	struct les_join_view join_view; /* of the pair being delivered */
	char join_job[LES_JOBID_LEN + 1], join_target[LES_RPC_NAME_LEN + 1];
	char join_nid[LES_LNET_NID_STR_MAX];
};

void les_consumer_init(struct les_consumer *c, const struct les_consumer_config *cfg,
		       const struct les_observed *observed, const char *host);

/* The output the records are accounted against (one; a second replaces it). */
void les_consumer_set_output(struct les_consumer *c, les_output_fn fn, void *ctx);

/* The enricher the records' who comes from (NULL: none); it outlives the consumer. */
void les_consumer_set_enricher(struct les_consumer *c, struct les_enricher *e);

/* Each is called in the order added; 0, or -ENOMEM. */
int les_consumer_add_event_sink(struct les_consumer *c, les_event_fn fn, void *ctx);
int les_consumer_add_line_sink(struct les_consumer *c, les_event_fn fn, void *ctx);
/*
 * A join sink sees each joined request (model/rpcjoin.h) as an event of
 * type "rpc_join" with ev->join set, also without per-op lines.
 */
int les_consumer_add_join_sink(struct les_consumer *c, les_event_fn fn, void *ctx);
int les_consumer_add_stats_hook(struct les_consumer *c, const struct les_stats_hook *h);

/* What the registrations took beyond the consumer itself. */
void les_consumer_release(struct les_consumer *c);

/* Every stats hook's counters, into sc (zeroed first by the caller). */
void les_consumer_sink_counters(const struct les_consumer *c, struct les_sink_counters *sc);

/* The output's counts, from the stats hooks that give them; all 0 without. */
void les_consumer_output_counts(const struct les_consumer *c, struct les_output_counts *oc);

/*
 * Deliver one finished line (ev->line, ev->line_len) to the output and
 * every line sink. For stages that make lines of their own (windows).
 */
int les_consumer_output(struct les_consumer *c, const struct les_event *ev);

/*
 * The where and who fields of ev (mount, ids, comm, enrichment) for a task
 * that is not in a record: a request in flight, read from the kernel's
 * maps. ev is valid until the next record or call. flags: LES_ACTOR_F_*.
 */
void les_consumer_describe(struct les_consumer *c, struct les_event *ev, uint64_t now_ns,
			   uint32_t dev, const struct les_task *t, unsigned int flags);

/* ring_buffer_sample_fn: 0 to go on, negative to stop the poll. */
int les_consumer_on_record(void *ctx, void *data, size_t size);

/* Records lost in userspace so far (decode, format, sinks). */
uint64_t les_consumer_dropped(const struct les_consumer *c);

/*
 * Records emitted so far: with per-op lines, those the output wrote
 * (plus those it holds, none after a flush); without, those the event
 * sinks took. The stats record's "emitted".
 */
uint64_t les_consumer_emitted(const struct les_consumer *c);
/* Records (not notices) taken from the ring: decoded, malformed, or read after a stop. */
uint64_t les_consumer_records_read(const struct les_consumer *c);

/*
 * The stats record. Its accounting identity, exact in the final record
 * (the probes are detached and the ring drained before it is made):
 *
 *   produced_kernel == emitted + dropped_kernel + dropped_userspace + filtered_kernel
 *                      + filtered_userspace
 *
 * produced_kernel counts every per-op record the probes made: reserved in
 * the ring (successfully or not) or discarded by a kernel filter.
 * filtered_userspace counts the records --job left out.
 * dropped_userspace = dropped_decode + dropped_format + dropped_stopped +
 * dropped_output. emitted counts records the output wrote (or, without
 * per-op lines, the event sinks took): les_consumer_emitted. Process notices are not records:
 * their losses are kernel.notice_dropped. Kafka accounts for its lines in
 * its own member.
 */
int les_consumer_emit_stats(struct les_consumer *c, const struct les_kernel_stats *ks,
			    bool final);

/*
 * A {"type":"notice"} line about an observed mount: what is "mount_gone"
 * or "mount_added"; m gives fs_type, fs and mount.
 */
int les_consumer_emit_notice(struct les_consumer *c, const char *what,
			     const struct les_observed_mount *m);

#endif /* LES_CONSUMER_H */
