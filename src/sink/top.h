/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The live top view (--top): who is hurting the filesystem now, and who is
 * being hurt. An event sink of the consumer sums the access and request
 * records of each interval per job, user, process and mount at once, so
 * the grouping can change between frames without losing an interval; at
 * the interval's end the sums become the frame's rows, rendered as text
 * (the curses screen draws the same lines; --batch prints them).
 *
 * Rows: ops/s split into metadata and data, read and write MB/s, p50 and
 * p99 access latency, the share of the ops' time spent waiting on requests
 * (rpc_wait / latency), errors/s and the group's most frequent op. The
 * header: requests in flight per mount, request records/s, resend and
 * expire events, and the tool's drops.
 *
 * Fixed memory after les_top_new; a group past the table's room is summed
 * into "(other)". Single-threaded: call from the consumer's thread.
 */
#ifndef LES_TOP_H
#define LES_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/event.h"

enum les_top_group {
	LES_TOP_JOB = 0,
	LES_TOP_USER,
	LES_TOP_PROCESS,
	LES_TOP_MOUNT,
	LES_TOP_GROUP_MAX,
};

enum les_top_sort {
	LES_TOP_SORT_OPS = 0,
	LES_TOP_SORT_READ,
	LES_TOP_SORT_WRITE,
	LES_TOP_SORT_P50,
	LES_TOP_SORT_P99,
	LES_TOP_SORT_RPC,
	LES_TOP_SORT_ERR,
	LES_TOP_SORT_MAX,
};

#define LES_TOP_GROUPS	 1024 /* names remembered per grouping and interval */
#define LES_TOP_NAME_LEN 64
#define LES_TOP_MOUNTS	 16

struct les_top;

/* What the header shows besides the records: from the stats of the tracer. */
struct les_top_header {
	uint64_t dropped; /* kernel and userspace, since the start */
	size_t n_mounts;
	struct {
		char mount[LES_TOP_NAME_LEN];
		uint64_t inflight;
	} mounts[LES_TOP_MOUNTS];
};

struct les_top *les_top_new(void);
void les_top_free(struct les_top *t);

/* les_event_fn: sum one access, rpc or rpc_event record into the open interval. */
int les_top_event(void *ctx, const struct les_event *ev);

/*
 * Join sink (ev->join set): sum one joined request's layers into the open
 * interval's row of its job on the wire and target (the layer view).
 */
int les_top_join(void *ctx, const struct les_event *ev);

/*
 * Only records whose job, user name or op is this (NULL or "": all), like
 * --job, --uid and --op; applies from the next record on.
 */
void les_top_set_filter(struct les_top *t, const char *filter);
const char *les_top_filter(const struct les_top *t);

/*
 * Close the open interval of seconds length, which ended at end_epoch_ns
 * (the header's clock; a replay's is the capture's): its sums become the
 * frame.
 */
void les_top_close_interval(struct les_top *t, double seconds, uint64_t end_epoch_ns,
			    const struct les_top_header *h);

/*
 * The frame of the last closed interval as text lines of at most width
 * columns, at most height lines (0: no limit), rows grouped and sorted as
 * asked (descending). Returns the length written (buf is always
 * terminated).
 */
size_t les_top_render(const struct les_top *t, enum les_top_group group, enum les_top_sort sort,
		      int width, int height, char *buf, size_t len);

/*
 * The layer view ('l'): per job on the wire and target, the joined
 * requests of the last closed interval and the mean time of each layer,
 * most requests first; "no joined request" where the join is off or idle.
 */
size_t les_top_render_layers(const struct les_top *t, int width, int height, char *buf, size_t len);

const char *les_top_group_name(enum les_top_group g);
const char *les_top_sort_name(enum les_top_sort s);

/* What the user chose with keys. */
struct les_top_view {
	enum les_top_group group;
	enum les_top_sort sort;
	bool quit;
	bool ask_filter; /* 'f': the screen asks for the filter */
	bool layers;	 /* 'l': the layer view of joined requests, toggled */
};

/*
 * Apply one key: j u p m group by job, user, process, mount; o r w 5 9 x e
 * sort by ops, read, write, p50, p99, rpc wait share, errors; l the layer
 * view on and off; f filter; q quit. Returns whether the key meant something.
 */
bool les_top_key(struct les_top_view *v, int key);

/* The curses screen (top_screen.c): open, draw a frame, read a key. */
int les_top_screen_open(void);
void les_top_screen_close(void);
void les_top_screen_size(int *width, int *height);
void les_top_screen_draw(const char *frame);
/* A key pressed since the last call, or -1; never blocks. */
int les_top_screen_key(void);
/* After the 'f' key (v->ask_filter): ask for the filter on the last row and set it. */
void les_top_screen_ask_filter(struct les_top_view *v, struct les_top *t);

#endif /* LES_TOP_H */
