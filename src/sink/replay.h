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

#endif /* LES_REPLAY_H */
