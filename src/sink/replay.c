// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The top view over a saved capture (see replay.h). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "les_record.h"
#include "model/kinds.h"
#include "model/ops.h"
#include "sink/replay.h"
#include "sink/top.h"

#define LINE_MAX_LEN (256 * 1024) /* newline included; longer lines are skipped */
#define LINE_BUF     (LINE_MAX_LEN + 1)
#define FRAME_BUF    (64 * 1024)

static json_t *doc; /* the line les_replay_parse filled ev from */

static const char *str_of(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static uint64_t u64_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v)
							       : 0;
}

/* "2026-12-01T16:47:56.821209727Z" as ns since the epoch; 0 if malformed. */
static uint64_t parse_ts(const char *ts)
{
	struct tm tm = {0};
	char frac[16] = "";
	uint64_t ns = 0;
	time_t secs;

	if (!ts || sscanf(ts, "%4d-%2d-%2dT%2d:%2d:%2d.%15[0-9]", &tm.tm_year, &tm.tm_mon,
			  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, frac) < 6)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	secs = timegm(&tm);
	/* ns since the epoch fit in 64 bits until 2554; a later time is malformed. */
	if (secs < 0 || (uint64_t)secs > UINT64_MAX / 1000000000ULL - 1)
		return 0;
	/* Nanoseconds: the fraction's first 9 digits, padded with zeros. */
	for (size_t i = 0, n = strlen(frac); i < 9; i++)
		ns = ns * 10 + (i < n ? (uint64_t)(frac[i] - '0') : 0);
	return (uint64_t)secs * 1000000000ULL + ns;
}

int les_replay_parse(const char *line, struct les_event *ev)
{
	const char *type;

	json_decref(doc);
	doc = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL);
	memset(ev, 0, sizeof(*ev));
	if (!json_is_object(doc))
		return -1;
	type = str_of(doc, "type");
	if (!type)
		return 0;
	/* Stats, window and notice lines are not records: skipped. */
	ev->kind = les_rec_op_kind_by_name(type);
	if (ev->kind == LES_REC_NONE)
		return 0;
	ev->type = type;
	ev->ts_epoch_ns = parse_ts(str_of(doc, "ts"));
	ev->op = str_of(doc, "op");
	ev->event = str_of(doc, "event");
	ev->proto = str_of(doc, "proto");
	/* The enums the stages count by, from the names the lines carry. */
	ev->access_op = ev->op ? (unsigned int)les_op_from_name(ev->op) : LES_OP_MAX;
	ev->event_id = (unsigned int)les_rpc_event_index(ev->event);
	ev->proto_id = (unsigned int)les_rpc_proto_index(ev->proto);
	ev->mount = str_of(doc, "mount");
	ev->fs_type = str_of(doc, "fs_type");
	ev->latency_ns = u64_of(doc, "latency_ns");
	ev->bytes = u64_of(doc, "bytes");
	ev->err = (int)u64_of(doc, "errno");
	ev->errno_class = str_of(doc, "errno_class");
	ev->rpc_count = u64_of(doc, "rpc_count");
	ev->rpc_wait_ns = u64_of(doc, "rpc_wait_ns");
	ev->backlog_ns = u64_of(doc, "backlog_ns");
	ev->rtt_ns = u64_of(doc, "rtt_ns");
	ev->pid = (uint32_t)u64_of(doc, "pid");
	ev->uid = (uint32_t)u64_of(doc, "uid");
	ev->comm = str_of(doc, "comm");
	ev->username = str_of(doc, "username");
	ev->process = str_of(doc, "process");
	ev->actor_type = str_of(doc, "actor_type");
	ev->job_id = str_of(doc, "job_id");
	return 1;
}

/* The replay's state: where it is in the file and in time. */
struct replay {
	const struct les_replay_config *cfg;
	gzFile in;
	struct les_top *top;
	struct les_top_view view;
	bool screen, paused, step, at_end;
	double speed;
	uint64_t interval_ns, frame_start;
	uint64_t gap_ns;    /* the frame being closed spans a gap of this long (0: none) */
	bool open_empty;    /* no record in the open frame yet */
	bool rewound;	    /* '[' while a frame was shown: read again from the start */
	uint32_t frames;    /* closed so far */
	uint32_t show_from; /* frames before this are replayed without being shown */
	struct les_replay_stats st;
	/* Not zeroed: most of each is never touched by a short capture. */
	char *line;  /* LINE_BUF bytes */
	char *frame; /* FRAME_BUF bytes */
};

static void draw(struct replay *r)
{
	int width = 80, height = 0;
	size_t n;

	if (r->screen)
		les_top_screen_size(&width, &height);
	/* A gap frame says so on its last line (kept short: no row has so few words). */
	n = les_top_render(r->top, r->view.group, r->view.sort, width,
			   r->gap_ns && height > 1 ? height - 1 : height, r->frame, FRAME_BUF);
	if (r->gap_ns)
		snprintf(r->frame + n, FRAME_BUF - n, "gap: %.0f s without records\n",
			 (double)r->gap_ns / 1e9);
	if (r->screen) {
		les_top_screen_draw(r->frame);
		return;
	}
	fputs(r->frame, stdout);
	fputc('\n', stdout);
	fflush(stdout);
}

/* Start again from the file's beginning (seeking back). */
static int rewind_replay(struct replay *r, uint32_t show_from)
{
	les_top_free(r->top);
	r->top = les_top_new();
	if (!r->top || gzrewind(r->in) != 0)
		return -1;
	r->frames = 0;
	r->rewound = true;
	r->frame_start = 0;
	r->gap_ns = 0;
	r->open_empty = true;
	memset(&r->st, 0, sizeof(r->st));
	r->show_from = show_from;
	r->at_end = false;
	return 0;
}

/* Keys while a frame is shown; true when the frame must be drawn again. */
static bool handle_keys(struct replay *r)
{
	bool redraw = false;
	int key;

	while ((key = les_top_screen_key()) >= 0) {
		switch (key) {
		case ' ':
			r->paused = !r->paused;
			break;
		case 'n':
			r->step = true;
			break;
		case '+':
			r->speed *= 2;
			break;
		case '-':
			r->speed /= 2;
			break;
		case ']':
			r->show_from = r->frames + 10;
			r->paused = false;
			break;
		case '[':
			rewind_replay(r, r->frames > 10 ? r->frames - 10 : 0);
			return false;
		default:
			redraw |= les_top_key(&r->view, key);
		}
	}
	les_top_screen_ask_filter(&r->view, r->top);
	return redraw;
}

/* Show a closed frame, then wait its recorded length (over the speed). */
static void show_frame(struct replay *r)
{
	uint64_t wait_ns, waited = 0;

	if (r->frames < r->show_from)
		return;
	draw(r);
	if (!r->screen)
		return;
	wait_ns = (uint64_t)((double)r->interval_ns / (r->speed > 0 ? r->speed : 1));
	r->step = false;
	while (!r->view.quit && (r->paused || r->at_end ? !r->step : waited < wait_ns)) {
		if (handle_keys(r))
			draw(r);
		if (r->frames == 0) /* rewound: replay from the start */
			return;
		usleep(20000);
		waited += 20000000ULL;
	}
}

/*
 * Close the open frame, spanning intervals intervals (more than one: a gap
 * frame). The header's dropped is what the replay skipped so far.
 */
static void close_frame(struct replay *r, uint64_t intervals)
{
	struct les_top_header h = {.dropped = r->st.malformed + r->st.too_long};

	r->gap_ns = intervals > 1 ? intervals * r->interval_ns : 0;
	les_top_close_interval(r->top, (double)r->interval_ns / 1e9,
			       r->frame_start + intervals * r->interval_ns, &h);
	r->frames++;
	r->open_empty = true;
	show_frame(r);
	r->gap_ns = 0;
}

static bool batch_done(const struct replay *r)
{
	return r->cfg->batch && r->frames >= r->show_from + r->cfg->batch;
}

/*
 * Close the frames before the interval of a record at ts: a record of a
 * later interval closes the open one, and each empty one up to it. More
 * than LES_REPLAY_GAP_MAX empty ones in a row are one frame, noted as a
 * gap, so a capture with a jump in time (two lines years apart) gives two
 * frames, not one per interval of the years between. A record from before
 * the open frame (out of order) is summed into it. Returns 1 if rewound.
 */
static int advance(struct replay *r, uint64_t ts)
{
	while (ts >= r->frame_start && ts - r->frame_start >= r->interval_ns && !r->view.quit &&
	       !batch_done(r)) {
		uint64_t behind = (ts - r->frame_start) / r->interval_ns;
		uint64_t span = r->open_empty && behind > LES_REPLAY_GAP_MAX ? behind : 1;

		if (span > 1)
			r->st.gaps++;
		close_frame(r, span);
		if (r->rewound) {
			r->rewound = false;
			return 1;
		}
		r->frame_start += span * r->interval_ns;
	}
	return 0;
}

/*
 * The next line into r->line: 1, or 0 at the end. A line over LINE_MAX_LEN
 * bytes is skipped whole and counted, not split into pieces that would
 * each be read as a malformed line. gzgets does not say how much it read
 * (a NUL byte may be in the line): a full buffer is seen by its last byte,
 * set before and overwritten with the terminator only when it filled.
 */
static int next_line(struct replay *r)
{
	const size_t last = LINE_BUF - 1;
	bool full;

	for (;;) {
		r->line[last] = 1;
		if (!gzgets(r->in, r->line, LINE_BUF))
			return 0;
		full = !r->line[last] && r->line[last - 1] != '\n';
		if (!full)
			return 1;
		r->st.too_long++;
		r->st.lines++;
		do {
			r->line[last] = 1;
			if (!gzgets(r->in, r->line, LINE_BUF))
				return 0;
		} while (!r->line[last] && r->line[last - 1] != '\n');
	}
}

static int replay_file(struct replay *r)
{
	struct les_event ev;

	while (!r->view.quit && !batch_done(r) && next_line(r)) {
		int rc;

		r->st.lines++;
		if (r->line[0] == '\n')
			continue;
		rc = les_replay_parse(r->line, &ev);
		if (rc == 0)
			continue;
		if (rc < 0 || !ev.ts_epoch_ns) {
			r->st.malformed++;
			continue;
		}
		r->st.records++;
		if (!r->frame_start)
			r->frame_start = ev.ts_epoch_ns;
		if (advance(r, ev.ts_epoch_ns))
			return 1;
		les_top_event(r->top, &ev);
		r->open_empty = false;
	}
	return 0;
}

/* The one line a replay ends with, on stderr: what it read and skipped. */
static void report(const struct replay *r)
{
	fprintf(stderr,
		"lustre-ebpf-stream: --input %s: %llu lines, %llu records in %u frames; skipped "
		"%llu malformed, %llu over %d bytes; %llu gaps shown as one frame\n",
		r->cfg->input_path, (unsigned long long)r->st.lines,
		(unsigned long long)r->st.records, r->frames, (unsigned long long)r->st.malformed,
		(unsigned long long)r->st.too_long, LINE_MAX_LEN, (unsigned long long)r->st.gaps);
}

int les_replay_run(const struct les_replay_config *cfg)
{
	struct replay *r = calloc(1, sizeof(*r));
	int ret = 0;

	if (!r) {
		fprintf(stderr, "lustre-ebpf-stream: out of memory\n");
		return 1;
	}
	r->cfg = cfg;
	r->speed = cfg->speed > 0 ? cfg->speed : 1;
	r->interval_ns = cfg->interval_ns ? cfg->interval_ns : 1000000000ULL;
	r->open_empty = true;
	r->line = malloc(LINE_BUF);
	r->frame = malloc(FRAME_BUF);
	r->in = gzopen(cfg->input_path, "rb");
	r->top = les_top_new();
	if (!r->line || !r->frame || !r->in || !r->top) {
		fprintf(stderr, "lustre-ebpf-stream: cannot read %s: %s\n", cfg->input_path,
			strerror(errno ? errno : ENOMEM));
		ret = 1;
		goto out;
	}
	r->screen = !cfg->batch && isatty(STDOUT_FILENO);
	if (r->screen && les_top_screen_open()) {
		fprintf(stderr, "lustre-ebpf-stream: cannot set up the --top screen\n");
		ret = 1;
		goto out;
	}
	for (;;) {
		while (replay_file(r))
			;
		if (r->view.quit || batch_done(r) || !r->frame_start)
			break;
		/* The last, partial interval; the screen then waits for q (or [). */
		r->at_end = true;
		close_frame(r, 1);
		if (!r->rewound)
			break;
		r->rewound = false;
	}
	if (r->screen)
		les_top_screen_close();
	report(r);
out:
	if (r->in)
		gzclose(r->in);
	les_top_free(r->top);
	json_decref(doc);
	doc = NULL;
	free(r->line);
	free(r->frame);
	free(r);
	return ret;
}
