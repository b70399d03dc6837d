/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The capture reader: a saved JSON line back into the struct les_event the
 * consumer handed the sinks when it made that line, for the stages that
 * take a capture instead of the ring (--top --input, a report).
 */
#ifndef LES_CAPTURE_H
#define LES_CAPTURE_H

#include <stdint.h>
#include "model/event.h"

/* One reader: it holds the document of the line it read last. */
struct les_capture {
	void *doc; /* the parsed line the event's strings point into */
};

/*
 * Fill ev from one JSON line; its strings point into the reader, valid
 * until the next call or les_capture_release. Returns 1 for a per-op
 * record (model/kinds.h), 0 for another line (stats, notice, window), -1
 * for a line that is not a JSON object.
 */
int les_capture_parse(struct les_capture *cap, const char *line, struct les_event *ev);

/* "2026-12-01T16:47:56.821209727Z" as ns since the epoch; 0 if malformed. */
uint64_t les_capture_parse_ts(const char *ts);

/* The document of the last line; the reader can read again after. */
void les_capture_release(struct les_capture *cap);

#endif /* LES_CAPTURE_H */
