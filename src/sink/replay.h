/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --top --input FILE: the top view over a saved capture (JSON Lines, gzip
 * or not), no BPF, no privileges. The records' own timestamps drive the
 * frames: an interval closes when a record of a later one is read, so a
 * replay shows the rows the live view showed over the same records. Frames
 * come at the recorded pace, --speed times faster, or at once with
 * --batch. On the screen: space pauses, n steps one frame while paused,
 * ] skips 10 frames ahead, [ goes 10 back, + and - change the speed; the
 * live view's keys group, sort and filter.
 */
#ifndef LES_REPLAY_H
#define LES_REPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include "event.h"

struct les_options;

/*
 * Fill ev from one JSON line of a capture; strings point into the parsed
 * document, valid until the next call. Returns 1 for an access, rpc or
 * rpc_event record, 0 for another line (stats, notice, window), -1 for a
 * line that is not JSON.
 */
int les_replay_parse(const char *line, struct les_event *ev);

/* The exit status: 0, or 1 with one line on stderr when FILE cannot be read. */
int les_replay_run(const struct les_options *o);

#endif /* LES_REPLAY_H */
