/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The report's rows (sink/report.c fills them from a capture) and the page
 * made of them (sink/report_page.c): the aggregator's window lines per
 * dimension, the latency buckets per op, the request waits per target,
 * the slowest ops with their chains.
 */
#ifndef LES_REPORT_DATA_H
#define LES_REPORT_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sink/aggregate.h"
#include "sink/report.h"

enum les_report_dim {
	LES_REPORT_DIM_JOB = 0,
	LES_REPORT_DIM_USER,
	LES_REPORT_DIM_PROCESS,
	LES_REPORT_DIM_OP,
	LES_REPORT_DIM_MAX,
};

/* One dimension: what it is keyed by, and where the page shows it. */
struct les_report_dim_row {
	const char *name;	    /* in the page's data: "job", "user", ... */
	enum les_group_field field; /* the --group-by field of its aggregator */
	uint32_t series_by;	    /* its --by bit; 0: always charted over time */
	bool top;		    /* a top list */
	bool series;		    /* ops/s and bytes/s over time */
	bool heat;		    /* a latency heatmap per key */
};

extern const struct les_report_dim_row les_report_dims[LES_REPORT_DIM_MAX];

/* Key ids: 0 is a null field, 1 the aggregator's overflow group ("other"). */
#define LES_REPORT_KEY_NULL  0
#define LES_REPORT_KEY_OTHER 1

/* One access window line of one group: the numbers --aggregate wrote. */
struct les_report_row {
	uint64_t t_ns; /* window start */
	uint32_t key;
	uint64_t count, bytes, errors, latency_ns, rpc_wait_ns;
};

/* Latency: a window's ops of one key in one power-of-two octave. */
struct les_report_heat {
	uint64_t t_ns;
	uint32_t key;
	uint32_t octave; /* [2^octave, 2^(octave+1)) ns */
	uint64_t n;
};

/* Request waits of one target in one window. */
struct les_report_wait {
	uint64_t t_ns;
	uint32_t key;
	uint64_t wait_ns, n;
};

/* A record of a slow op's chain. */
struct les_report_link {
	char *type, *op, *target, *errno_class;
	uint64_t end_ns, latency_ns, bytes;
	uint64_t req_id, wait_id, parent_wait_id, xid;
};

struct les_report_slow {
	uint64_t op_id, end_ns, latency_ns, bytes, rpc_count, rpc_wait_ns;
	uint32_t pid;
	char *op, *job_id, *username, *process, *comm, *mount, *errno_class;
	struct les_report_link *chain;
	uint32_t n_chain;
	uint64_t chain_more; /* over LES_REPORT_CHAIN_MAX: counted, not kept */
};

struct les_report_data {
	uint64_t window_ns;
	struct les_report_slow slow[LES_REPORT_SLOWEST_MAX];
	uint32_t n_slow;
	/* interned keys */
	char **keys;
	uint32_t n_keys, cap_keys;
	uint32_t *key_slots; /* 0 empty, else key id */
	uint32_t key_mask;
	struct les_report_row *rows[LES_REPORT_DIM_MAX];
	size_t n_rows[LES_REPORT_DIM_MAX], cap_rows[LES_REPORT_DIM_MAX];
	uint64_t n_windows[LES_REPORT_DIM_MAX]; /* window lines read back, every kind */
	struct les_report_heat *heat;
	size_t n_heat, cap_heat;
	struct les_report_wait *waits;
	size_t n_waits, cap_waits;
	uint32_t *wait_slots; /* 0 empty, else index + 1, by (t, key) */
	uint32_t wait_mask;
};

struct les_report_data *les_report_data_new(const struct les_report_config *cfg);
void les_report_data_free(struct les_report_data *d);

struct json_t;
/* One window line of dim's aggregator (window start t_ns): 0, or -ENOMEM. */
int les_report_data_window(struct les_report_data *d, enum les_report_dim dim, uint64_t t_ns,
			   struct json_t *line);

/* wait_ns more of one request piece on target key in the window at t_ns. */
int les_report_data_wait(struct les_report_data *d, uint64_t t_ns, const char *key,
			 uint64_t wait_ns);

/* The page: template, scripts, data. 0, or -1 with err. */
int les_report_write(const struct les_report_config *cfg, const struct les_report_data *d,
		     struct les_report_stats *st, char *err, size_t errlen);

/* The report's error: err filled from fmt; returns -1, for `return les_report_fail(...)`. */
int les_report_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* LES_REPORT_DATA_H */
