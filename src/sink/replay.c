// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The top view over a saved capture (see replay.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "les_record.h"
#include "decode/capture.h"
#include "model/ops.h"
#include "sink/replay.h"
#include "sink/top.h"
#include "util/clock.h"
#include "util/json.h"

#define LINE_MAX_LEN (256 * 1024) /* newline included; longer lines are skipped */
#define LINE_BUF     (LINE_MAX_LEN + 1)
#define FRAME_BUF    (64 * 1024)

/*
 * les_replay_parse's reader, for the callers of that older interface (the
 * unit and fuzz tests); the replay has its own.
 */
static struct les_capture parse_reader;

int les_replay_parse(const char *line, struct les_event *ev)
{
	return les_capture_parse(&parse_reader, line, ev);
}

/* The replay's state: where it is in the file and in time. */
struct replay {
	const struct les_replay_config *cfg;
	gzFile in;
	struct les_capture reader; /* holds the line the event being summed came from */
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
	if (r->view.layers)
		n = les_top_render_layers(r->top, width,
					  r->gap_ns && height > 1 ? height - 1 : height, r->frame,
					  FRAME_BUF);
	else
		n = les_top_render(r->top, r->view.group, r->view.sort, width,
				   r->gap_ns && height > 1 ? height - 1 : height, r->frame,
				   FRAME_BUF);
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

/*
 * The capture's next record into ev; false at its end. Blank lines and
 * lines that are no record are passed over, the malformed ones counted.
 */
static bool next_record(struct replay *r, struct les_event *ev)
{
	while (next_line(r)) {
		int rc;

		r->st.lines++;
		if (r->line[0] == '\n')
			continue;
		rc = les_capture_parse(&r->reader, r->line, ev);
		if (rc == 0)
			continue;
		if (rc < 0 || !ev->ts_epoch_ns) {
			r->st.malformed++;
			continue;
		}
		r->st.records++;
		return true;
	}
	return false;
}

static int replay_file(struct replay *r)
{
	struct les_event ev;

	while (!r->view.quit && !batch_done(r) && next_record(r, &ev)) {
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
	les_capture_release(&r->reader);
	free(r->line);
	free(r->frame);
	free(r);
	return ret;
}

/* --- --otlp --input: the capture into the OTLP sink ------------------------------------------ */

/* How long the reading waits between two looks at a full queue. */
#define OTLP_WAIT_NS (10ULL * 1000000ULL)

/*
 * Before an access record: the collector takes the batches in front while
 * every buffer is taken, up to the flush timeout; after it the trace is
 * dropped (queue_full), as live. Returns whether the queue is still full.
 */
static bool otlp_wait_room(struct les_otlp *o, uint64_t timeout_ns)
{
	uint64_t start = les_mono_ns(), now = start;

	while (les_otlp_queue_full(o) && now - start < timeout_ns) {
		struct timespec ts = {0, OTLP_WAIT_NS};

		nanosleep(&ts, NULL);
		now = les_mono_ns();
		les_otlp_tick(o, now);
	}
	return les_otlp_queue_full(o);
}

static void otlp_feed(struct replay *r, struct les_otlp *o, const struct les_otlp_config *cfg)
{
	struct les_event ev;
	bool gave_up = false; /* a wait timed out: none again until the queue has room */

	while (next_record(r, &ev)) {
		if (ev.kind == LES_REC_ACCESS && !les_otlp_queue_full(o))
			gave_up = false;
		else if (ev.kind == LES_REC_ACCESS && !gave_up)
			gave_up = otlp_wait_room(o, cfg->flush_timeout_ns);
		les_otlp_event(o, &ev);
		les_otlp_tick(o, les_mono_ns());
	}
}

/* The replay's stats record on stdout: what was read, and the otlp member as live. */
static void otlp_stats_line(const struct replay *r, struct les_otlp *o)
{
	char buf[2048];
	struct jw w;

	jw_init(&w, buf, sizeof(buf));
	jw_obj_begin(&w);
	jw_kv_cstr(&w, "type", "stats");
	jw_key(&w, "replay");
	jw_obj_begin(&w);
	jw_kv_cstr(&w, "input", r->cfg->input_path);
	jw_kv_u64(&w, "lines", r->st.lines);
	jw_kv_u64(&w, "records", r->st.records);
	jw_kv_u64(&w, "malformed", r->st.malformed);
	jw_kv_u64(&w, "too_long", r->st.too_long);
	jw_obj_end(&w);
	les_otlp_stats_json(o, &w);
	jw_obj_end(&w);
	if (w.overflow)
		return;
	fwrite(buf, 1, w.len, stdout);
	fputc('\n', stdout);
	fflush(stdout);
}

int les_replay_otlp_run(const char *input_path, const struct les_otlp_config *cfg)
{
	struct les_replay_config rcfg = {.input_path = input_path};
	struct replay r = {.cfg = &rcfg};
	struct les_otlp_counters c;
	struct les_otlp *o = NULL;
	char err[256] = "";
	int ret = 1;

	r.line = malloc(LINE_BUF);
	r.in = gzopen(input_path, "rb");
	if (!r.line || !r.in) {
		fprintf(stderr, "lustre-ebpf-stream: cannot read %s: %s\n", input_path,
			strerror(errno ? errno : ENOMEM));
		goto out;
	}
	if (les_otlp_open(&o, cfg, err, sizeof(err)) || !o) {
		fprintf(stderr, "lustre-ebpf-stream: %s\n", err[0] ? err : "--otlp is not built");
		goto out;
	}
	otlp_feed(&r, o, cfg);
	les_otlp_flush(o);
	otlp_stats_line(&r, o);
	les_otlp_counters(o, &c);
	fprintf(stderr,
		"lustre-ebpf-stream: --input %s: %llu lines, %llu records; skipped %llu malformed, "
		"%llu over %d bytes; otlp: %llu ops, %llu spans, %llu exported, %llu dropped, "
		"%llu rpc records unlinked, %llu of no op\n",
		input_path, (unsigned long long)r.st.lines, (unsigned long long)r.st.records,
		(unsigned long long)r.st.malformed, (unsigned long long)r.st.too_long, LINE_MAX_LEN,
		(unsigned long long)c.ops, (unsigned long long)c.spans,
		(unsigned long long)c.exported, (unsigned long long)les_otlp_dropped(&c),
		(unsigned long long)c.rpc_unlinked, (unsigned long long)c.rpc_no_op);
	ret = 0;
out:
	les_otlp_close(o);
	if (r.in)
		gzclose(r.in);
	les_capture_release(&r.reader);
	free(r.line);
	return ret;
}
