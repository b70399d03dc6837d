/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --top --input FILE: the top view over a saved capture (JSON Lines, gzip
 * or not), no BPF, no privileges. The records' own timestamps drive the
 * frames: an interval closes when a record of a later one is read, so a
 * replay shows the rows the live view showed over the same records. Frames
 * come at the recorded pace, --speed times faster, or at once with
 * --batch. A jump in time of more than LES_REPLAY_GAP_MAX empty intervals
 * is one frame, its last line "gap: N s without records". On the screen: space pauses, n steps one frame while paused,
 * ] skips 10 frames ahead, [ goes 10 back, + and - change the speed; the
 * live view's keys group, sort and filter.
 */
#ifndef LES_REPLAY_H
#define LES_REPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include "model/event.h"
#include "sink/otlp.h"

/* --top --input's settings. */
struct les_replay_config {
	const char *input_path; /* --input: the capture, gzip or not */
	double speed;		/* --speed: times the recorded pace; 0: 1 */
	uint64_t interval_ns;	/* --interval: one frame per interval; 0: 1 s */
	uint32_t batch;		/* --batch: frames on stdout, then exit; 0: the screen */
};

/*
 * Fill ev from one JSON line of a capture; strings point into the parsed
 * document, valid until the next call. Returns 1 for an access, rpc or
 * rpc_event record, 0 for another line (stats, notice, window), -1 for a
 * line that is not JSON.
 */
int les_replay_parse(const char *line, struct les_event *ev);

/* More empty intervals than this in a row are shown as one frame, a gap. */
#define LES_REPLAY_GAP_MAX 10

/* What a replay read and skipped; the end-of-replay line on stderr says it. */
struct les_replay_stats {
	uint64_t lines;	    /* read, skipped ones included */
	uint64_t records;   /* access, rpc and rpc_event records summed into frames */
	uint64_t malformed; /* not a JSON object, or a record without a valid "ts" */
	uint64_t too_long;  /* over 256 KiB, newline included: skipped whole */
	uint64_t gaps;	    /* runs of empty intervals shown as one frame */
};

/*
 * The exit status: 0, or 1 with one line on stderr when FILE cannot be
 * read. A replay ends with one line on stderr: the les_replay_stats counts
 * and the frames shown. Skipped lines do not change the exit status (a
 * capture cut by a crash ends in half a line); the frames' header shows
 * them as dropped while replaying.
 */
int les_replay_run(const struct les_replay_config *cfg);

/*
 * --otlp URL --input FILE: the capture's records into the OTLP sink, as
 * the consumer hands it live ones (the same traces, sampling and
 * accounting), no BPF, no privileges. rpc records wait for their op by the
 * records' own clock (les_otlp_config.records_clock); a full queue makes
 * the reading wait for the collector, up to the flush timeout (then the
 * traces are dropped, counted dropped_by.queue_full); at the end of the
 * file the queue is flushed. The run ends with one JSON line on stdout, a
 * stats record of the replay ({"type":"stats","replay":{lines, records,
 * malformed, too_long},"otlp":{...}}, the otlp member as live), and one
 * line on stderr.
 *
 * The exit status: 0; 1 with one line on stderr when FILE cannot be read
 * or the sink cannot be set up. Skipped lines and dropped spans do not
 * change it (as live: they are counted).
 */
int les_replay_otlp_run(const char *input_path, const struct les_otlp_config *cfg);

#endif /* LES_REPLAY_H */
