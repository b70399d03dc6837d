/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Windowed aggregation (--aggregate): records are summed per group and
 * per tumbling window; at the window's close its groups are handed over as
 * data (struct les_window_group), which the JSON window writer
 * (sink/window_json.h) makes one type:"window" line each. See
 * docs/aggregation.md.
 *
 * Windows are aligned to wall-clock multiples of the window length, so
 * 2 s windows end at even seconds and instances on different nodes cut
 * the same windows. A record belongs to the window of its completion time.
 * A window closes when a record of a later window arrives, when
 * les_aggregate_tick() sees the wall clock past its end (plus a grace for
 * records still in the ring), or at les_aggregate_flush().
 *
 * Memory is fixed at creation: a pool of max_groups groups, an
 * open-addressing table twice that size and an arena for the keys. A
 * record whose group does not fit is folded into its record type's
 * overflow group, which is output with "other":true and null fields.
 * Single-threaded: call everything from the consumer's thread.
 */
#ifndef LES_AGGREGATE_H
#define LES_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/histogram.h"
#include "model/event.h"
#include "model/ops.h"
#include "model/families.h"
#include "model/rpcjoin.h"

/* Record fields a group can be keyed by (--group-by). */
enum les_group_field {
	LES_GF_FS_TYPE = 0,
	LES_GF_FS,
	LES_GF_MOUNT,
	LES_GF_OP,
	LES_GF_ACCESS_INTENT,
	LES_GF_UID,
	LES_GF_USERNAME,
	LES_GF_PROCESS,
	LES_GF_ACTOR_TYPE,
	LES_GF_JOB_ID,
	LES_GF_TYPE, /* accepted; the record type always splits groups */
	LES_GF_COMM,
	LES_GF_PROTO,
	LES_GF_EVENT,
	LES_GF_HOST,
	LES_GF_MAX,
};

#define LES_GROUP_BY_DEFAULT                                                                     \
	((1u << LES_GF_FS_TYPE) | (1u << LES_GF_FS) | (1u << LES_GF_MOUNT) | (1u << LES_GF_OP) | \
	 (1u << LES_GF_ACCESS_INTENT) | (1u << LES_GF_UID) | (1u << LES_GF_USERNAME) |           \
	 (1u << LES_GF_PROCESS) | (1u << LES_GF_ACTOR_TYPE) | (1u << LES_GF_JOB_ID))

#define LES_AGG_MAX_GROUPS_DEFAULT 10000
#define LES_AGG_GRACE_NS	   200000000ULL /* ring-buffer slack before a tick closes */

const char *les_group_field_name(enum les_group_field f);

/*
 * Parse "job_id,op" into a bit mask of enum les_group_field. Returns 0, or
 * -EINVAL with a message in err for an unknown or empty field.
 */
int les_group_by_parse(const char *csv, uint32_t *mask, char *err, size_t errlen);

/*
 * Hash of a serialized key (a group's, a series' labels): eight bytes per
 * step, for the per-record path. Not for untrusted-collision resistance.
 */
uint64_t les_key_hash(const void *key, size_t n, uint64_t seed);

/* The first multiple of window_ns at or below epoch_ns. */
uint64_t les_window_start(uint64_t epoch_ns, uint64_t window_ns);

struct les_aggregate_config {
	uint64_t window_ns;
	uint32_t group_by;   /* mask of enum les_group_field */
	uint32_t max_groups; /* per window, overflow groups not counted */
	const char *host;    /* for the window lines */
};

/* Where finished window lines go: les_consumer_output() in the tool. */
typedef int (*les_window_out_fn)(void *ctx, const struct les_event *ev);

/* A closed window, as the outputs of its groups see it. */
struct les_window {
	uint64_t start_ns, end_ns; /* epoch */
	bool partial;		   /* closed at exit before its end */
	const char *host;	   /* the config's */
	uint32_t group_by;	   /* mask of enum les_group_field */
};

/*
 * One group of a closed window, as data: what a JSON window line
 * (sink/window_json.h), a Prometheus-like output, an OTLP exporter or a
 * report take. Valid during the call that hands it over only.
 */
struct les_window_group {
	unsigned int kind; /* a per-op kind (model/kinds.h); its shape says which sums apply */
	bool other;	   /* the kind's overflow group: every grouped field null */
	/* Grouped fields by enum les_group_field: NULL where null, or not grouped. */
	const char *field[LES_GF_MAX];
	uint32_t uid; /* LES_GF_UID's value, when grouped and not other */
	uint64_t count;
	uint64_t bytes;
	uint64_t rpc_wait_ns;
	uint64_t rpc_count;
	uint64_t reads;		/* access reads, to know when cache_served applies */
	uint64_t cache_served;	/* successful reads that sent no request */
	const uint64_t *errors; /* [LES_ERRC_MAX], by errno class */
	const uint64_t *events; /* [LES_EV_MAX], RPC events by event */
	const struct les_hist *latency;
	/* Latencies by the metrics outputs' buckets (model/families.h): per bucket, +Inf last. */
	const uint64_t *le_buckets;
	/*
	 * A group of joined requests (rpc_join, kind LES_REC_KIND_MAX): its
	 * keys (job on the wire, target, client NID; NULL for null and for
	 * "other") and each layer's sum; latency is client_service_ns's.
	 * NULL for a group of records. Only an accumulator fed
	 * les_aggregate_add_join makes them.
	 */
	const struct les_join_view *join;
};

/*
 * Where a closing window's groups go, one call per group (the groups of
 * the table first, then the overflow groups by kind): 0, or an error that
 * stops the window's remaining groups.
 */
typedef int (*les_window_fn)(void *ctx, const struct les_window *win,
			     const struct les_window_group *g);

struct les_aggregate_stats {
	uint64_t windows;	   /* windows closed with at least one group */
	uint64_t groups;	   /* window lines written */
	uint64_t records;	   /* records aggregated */
	uint64_t overflow_records; /* records folded into an "other" group */
	uint64_t late_records;	   /* records older than the open window, added to it */
	uint64_t format_errors;	   /* window lines that did not fit the line buffer */
	uint64_t max_groups_seen;  /* most groups in one window */
	uint64_t unknown_kind;	   /* events of no per-op kind (model/kinds.h): not aggregated */
	uint64_t joined;	   /* joined requests aggregated (les_aggregate_add_join) */
};

struct les_aggregate;

/*
 * The accumulator whose windows become JSON window lines (sink/window_json.h)
 * handed to out.
 */
struct les_aggregate *les_aggregate_new(const struct les_aggregate_config *cfg,
					les_window_out_fn out, void *out_ctx);
/* The accumulator whose windows' groups go to fn as data. */
struct les_aggregate *les_aggregate_new_groups(const struct les_aggregate_config *cfg,
					       les_window_fn fn, void *fn_ctx);
void les_aggregate_free(struct les_aggregate *a);

/* Event sink (les_event_fn): add one record. May close a window. */
int les_aggregate_add(void *ctx, const struct les_event *ev);

/*
 * Join sink (les_event_fn, ev->join set): add one joined request to its
 * group by (job on the wire, target, client NID) of the window of
 * ev->ts_epoch_ns. May close a window.
 */
int les_aggregate_add_join(void *ctx, const struct les_event *ev);

/* Close the open window if now_epoch_ns is past its end and the grace. NULL-safe. */
int les_aggregate_tick(struct les_aggregate *a, uint64_t now_epoch_ns);

/*
 * Close the open window at exit; marked "partial":true when now_epoch_ns
 * is before its end. NULL-safe.
 */
int les_aggregate_flush(struct les_aggregate *a, uint64_t now_epoch_ns);

void les_aggregate_get_stats(const struct les_aggregate *a, struct les_aggregate_stats *st);

struct jw;
/* Stats hook (les_stats_fn): the stats record's "aggregate":{...}. */
void les_aggregate_stats_json(void *ctx, struct jw *w);

#endif /* LES_AGGREGATE_H */
