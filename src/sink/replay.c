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
#include "ops.h"
#include "options.h"
#include "replay.h"
#include "top.h"

#define LINE_MAX_LEN (256 * 1024)

static json_t *doc; /* the line les_replay_parse filled ev from */

static const char *str_of(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static uint64_t u64_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

/* "2026-12-01T16:47:56.821209727Z" as ns since the epoch; 0 if malformed. */
static uint64_t parse_ts(const char *ts)
{
	struct tm tm = { 0 };
	char frac[16] = "";
	uint64_t ns = 0;
	time_t secs;

	if (!ts || sscanf(ts, "%4d-%2d-%2dT%2d:%2d:%2d.%15[0-9]", &tm.tm_year, &tm.tm_mon,
			  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, frac) < 6)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	secs = timegm(&tm);
	if (secs < 0)
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
	if (!strcmp(type, "access"))
		ev->kind = LES_REC_ACCESS;
	else if (!strcmp(type, "rpc"))
		ev->kind = LES_REC_RPC;
	else if (!strcmp(type, "rpc_event"))
		ev->kind = LES_REC_RPC_EVENT;
	else
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
	const struct les_options *o;
	gzFile in;
	struct les_top *top;
	struct les_top_view view;
	bool screen, paused, step, at_end;
	double speed;
	uint64_t interval_ns, frame_start;
	uint32_t frames; /* closed so far */
	uint32_t show_from; /* frames before this are replayed without being shown */
	char line[LINE_MAX_LEN];
	char frame[64 * 1024];
};

static void draw(struct replay *r)
{
	int width = 80, height = 0;

	if (r->screen)
		les_top_screen_size(&width, &height);
	les_top_render(r->top, r->view.group, r->view.sort, width, height, r->frame,
		       sizeof(r->frame));
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
	r->frame_start = 0;
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

static void close_frame(struct replay *r)
{
	les_top_close_interval(r->top, (double)r->interval_ns / 1e9,
			       r->frame_start + r->interval_ns, NULL);
	r->frames++;
	show_frame(r);
}

static bool batch_done(const struct replay *r)
{
	return r->o->top_batch && r->frames >= r->show_from + r->o->top_batch;
}

static int replay_file(struct replay *r)
{
	struct les_event ev;

	while (!r->view.quit && !batch_done(r) && gzgets(r->in, r->line, sizeof(r->line))) {
		if (les_replay_parse(r->line, &ev) != 1 || !ev.ts_epoch_ns)
			continue;
		if (!r->frame_start)
			r->frame_start = ev.ts_epoch_ns;
		while (ev.ts_epoch_ns >= r->frame_start + r->interval_ns && !r->view.quit &&
		       !batch_done(r)) {
			uint32_t before = r->frames;

			close_frame(r);
			if (r->frames < before) /* rewound */
				return 1;
			r->frame_start += r->interval_ns;
		}
		les_top_event(r->top, &ev);
	}
	return 0;
}

int les_replay_run(const struct les_options *o)
{
	struct replay *r = calloc(1, sizeof(*r));
	int ret = 0;

	if (!r) {
		fprintf(stderr, "lustre-ebpf-stream: out of memory\n");
		return 1;
	}
	r->o = o;
	r->speed = o->replay_speed > 0 ? o->replay_speed : 1;
	r->interval_ns = o->top_interval_ns;
	r->in = gzopen(o->input_path, "rb");
	r->top = les_top_new();
	if (!r->in || !r->top) {
		fprintf(stderr, "lustre-ebpf-stream: cannot read %s: %s\n", o->input_path,
			strerror(errno ? errno : ENOMEM));
		ret = 1;
		goto out;
	}
	r->screen = !o->top_batch && isatty(STDOUT_FILENO);
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
		close_frame(r);
		if (r->frames) /* not rewound */
			break;
	}
	if (r->screen)
		les_top_screen_close();
out:
	if (r->in)
		gzclose(r->in);
	les_top_free(r->top);
	json_decref(doc);
	doc = NULL;
	free(r);
	return ret;
}
