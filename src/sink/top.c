// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The live top view's bookkeeping and frames (see top.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sink/aggregate.h" /* les_key_hash */
#include "util/histogram.h"
#include "model/kinds.h"
#include "model/ops.h"
#include "model/rpcjoin.h"
#include "sink/top.h"
#include "util/utf8.h"

#define TABLE_SLOTS (2 * LES_TOP_GROUPS) /* open addressing, at most half full */
/* Layer view rows (job, target) per interval: a screen's worth, the rest in "(other)". */
#define TOP_JOIN_ROWS 64

struct top_row {
	char name[LES_TOP_NAME_LEN];
	uint64_t ops_meta, ops_data;
	uint64_t bytes_read, bytes_write;
	uint64_t errors;
	uint64_t latency_ns, rpc_wait_ns; /* access ops: their time, and its waits */
	uint32_t op_count[LES_OP_MAX];
	struct les_hist latency;
};

/*
 * One grouping's rows of an interval. The rows grow as names come (a
 * replay or a quiet node has a few; LES_TOP_GROUPS of them would be 1.5
 * MB per grouping, touched at each start), and are kept across intervals.
 */
struct top_table {
	uint32_t n, cap;
	int32_t slot[TABLE_SLOTS]; /* row index + 1; 0 empty */
	struct top_row *rows;
	struct top_row other; /* "(other)": names past LES_TOP_GROUPS, or past memory */
};

/* A (job, target)'s joined requests and each layer's sum (model/rpcjoin.h). */
struct top_join_row {
	char name[LES_TOP_NAME_LEN]; /* "job target" */
	uint64_t count;
	int64_t ns[LES_JOIN_LAYER_MAX];
};

struct top_interval {
	struct top_table by[LES_TOP_GROUP_MAX];
	uint32_t n_join;
	struct top_join_row join[TOP_JOIN_ROWS + 1]; /* the last: "(other)" */
	uint64_t requests, resends, expires;
	uint64_t sunrpc, backlog_ns, rtt_ns; /* sunrpc requests and their sums */
};

struct les_top {
	struct top_interval *open, *shown;
	double shown_seconds;
	struct les_top_header header;
	char filter[LES_TOP_NAME_LEN];
	char clock[16]; /* when the shown interval closed, HH:MM:SS */
};

static const char *const group_names[LES_TOP_GROUP_MAX] = { "job", "user", "process", "mount" };
static const char *const sort_names[LES_TOP_SORT_MAX] = { "ops",  "read MB/s", "write MB/s", "p50",
							  "p99",  "rpc wait",  "errors" };

const char *les_top_group_name(enum les_top_group g)
{
	return g < LES_TOP_GROUP_MAX ? group_names[g] : "?";
}

const char *les_top_sort_name(enum les_top_sort s)
{
	return s < LES_TOP_SORT_MAX ? sort_names[s] : "?";
}

static void interval_reset(struct top_interval *iv)
{
	for (int g = 0; g < LES_TOP_GROUP_MAX; g++) {
		iv->by[g].n = 0;
		memset(iv->by[g].slot, 0, sizeof(iv->by[g].slot));
		/* The overflow row is known by its name: unnamed, it starts again at 0. */
		iv->by[g].other.name[0] = '\0';
	}
	iv->n_join = 0;
	iv->join[TOP_JOIN_ROWS].count = 0;
	memset(iv->join[TOP_JOIN_ROWS].ns, 0, sizeof(iv->join[TOP_JOIN_ROWS].ns));
	iv->requests = iv->resends = iv->expires = 0;
	iv->sunrpc = iv->backlog_ns = iv->rtt_ns = 0;
}

struct les_top *les_top_new(void)
{
	struct les_top *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->open = calloc(1, sizeof(*t->open));
	t->shown = calloc(1, sizeof(*t->shown));
	if (!t->open || !t->shown) {
		les_top_free(t);
		return NULL;
	}
	return t;
}

static void interval_free(struct top_interval *iv)
{
	if (!iv)
		return;
	for (int g = 0; g < LES_TOP_GROUP_MAX; g++)
		free(iv->by[g].rows);
	free(iv);
}

void les_top_free(struct les_top *t)
{
	if (!t)
		return;
	interval_free(t->open);
	interval_free(t->shown);
	free(t);
}

void les_top_set_filter(struct les_top *t, const char *filter)
{
	snprintf(t->filter, sizeof(t->filter), "%s", filter ? filter : "");
}

const char *les_top_filter(const struct les_top *t)
{
	return t->filter;
}

static void row_init(struct top_row *r, const char *name)
{
	memset(r, 0, sizeof(*r));
	les_hist_reset(&r->latency);
	snprintf(r->name, sizeof(r->name), "%s", name);
}

/* Room for one more row: doubled up to LES_TOP_GROUPS; false without memory. */
static bool room_for_row(struct top_table *tb)
{
	uint32_t cap = tb->cap ? 2 * tb->cap : 16;
	struct top_row *rows;

	if (tb->n < tb->cap)
		return true;
	if (cap > LES_TOP_GROUPS)
		cap = LES_TOP_GROUPS;
	rows = realloc(tb->rows, cap * sizeof(*rows));
	if (!rows)
		return false;
	tb->rows = rows;
	tb->cap = cap;
	return true;
}

/* The row of name, made on first sight; "(other)" when the table is full. */
static struct top_row *find_row(struct top_table *tb, const char *name)
{
	uint32_t i = (uint32_t)les_key_hash(name, strlen(name), 0) & (TABLE_SLOTS - 1);

	for (;; i = (i + 1) & (TABLE_SLOTS - 1)) {
		int32_t s = tb->slot[i];

		if (!s)
			break;
		if (strncmp(tb->rows[s - 1].name, name, LES_TOP_NAME_LEN - 1) == 0)
			return &tb->rows[s - 1];
	}
	if (tb->n < LES_TOP_GROUPS && room_for_row(tb)) {
		tb->slot[i] = (int32_t)tb->n + 1;
		row_init(&tb->rows[tb->n], name);
		return &tb->rows[tb->n++];
	}
	/* The overflow row is apart from the others; it is never hashed. */
	if (strcmp(tb->other.name, "(other)") != 0)
		row_init(&tb->other, "(other)");
	return &tb->other;
}

/* The row's name under grouping g. */
static const char *group_key(const struct les_event *ev, enum les_top_group g, char *buf,
			     size_t len)
{
	switch (g) {
	case LES_TOP_JOB:
		return ev->job_id ? ev->job_id : "(no job)";
	case LES_TOP_USER:
		if (ev->username)
			return ev->username;
		snprintf(buf, len, "%u", ev->uid);
		return buf;
	case LES_TOP_PROCESS:
		return ev->process ? ev->process : ev->comm ? ev->comm : "?";
	default:
		return ev->mount ? ev->mount : "(unobserved)";
	}
}

static bool filtered_out(const struct les_top *t, const struct les_event *ev)
{
	const char *f = t->filter;

	if (!f[0])
		return false;
	return !((ev->job_id && strcmp(ev->job_id, f) == 0) ||
		 (ev->username && strcmp(ev->username, f) == 0) ||
		 (ev->op && strcmp(ev->op, f) == 0));
}

static void row_add(struct top_row *r, const struct les_event *ev, int op)
{
	enum les_intent intent = op >= 0 ? les_op_intent((unsigned int)op) : LES_INTENT_MAX;

	if (intent == LES_INTENT_DATA_READ || intent == LES_INTENT_DATA_WRITE)
		r->ops_data++;
	else
		r->ops_meta++;
	if (intent == LES_INTENT_DATA_READ)
		r->bytes_read += ev->bytes;
	else if (intent == LES_INTENT_DATA_WRITE)
		r->bytes_write += ev->bytes;
	if (ev->err)
		r->errors++;
	r->latency_ns += ev->latency_ns;
	r->rpc_wait_ns += ev->rpc_wait_ns;
	if (op >= 0 && op < LES_OP_MAX)
		r->op_count[op]++;
	les_hist_add(&r->latency, ev->latency_ns);
}

int les_top_event(void *ctx, const struct les_event *ev)
{
	struct les_top *t = ctx;
	enum les_rec_shape shape = les_rec_kind_shape(ev->kind);
	char buf[16];

	if (filtered_out(t, ev))
		return 0;
	if (shape == LES_SHAPE_REQUEST) {
		t->open->requests++;
		if (ev->proto_id == LES_PROTO_SUNRPC) {
			t->open->sunrpc++;
			t->open->backlog_ns += ev->backlog_ns;
			t->open->rtt_ns += ev->rtt_ns;
		}
		return 0;
	}
	if (shape == LES_SHAPE_EVENT) {
		if (ev->event_id == LES_EV_RESEND)
			t->open->resends++;
		else if (ev->event_id == LES_EV_EXPIRE)
			t->open->expires++;
		return 0;
	}
	if (shape != LES_SHAPE_ACCESS)
		return 0;
	for (int g = 0; g < LES_TOP_GROUP_MAX; g++)
		row_add(find_row(&t->open->by[g], group_key(ev, (enum les_top_group)g, buf,
							    sizeof(buf))),
			ev, les_op_from_name(ev->op));
	return 0;
}

/* HH:MM:SS, local time, of an epoch time in ns. */
static void set_clock(char *buf, size_t len, uint64_t epoch_ns)
{
	time_t secs = (time_t)(epoch_ns / 1000000000ULL);
	struct tm tm;

	if (!localtime_r(&secs, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
		snprintf(buf, len, "?");
}

void les_top_close_interval(struct les_top *t, double seconds, uint64_t end_epoch_ns,
			    const struct les_top_header *h)
{
	struct top_interval *done = t->open;

	t->open = t->shown;
	t->shown = done;
	t->shown_seconds = seconds > 0 ? seconds : 1;
	interval_reset(t->open);
	set_clock(t->clock, sizeof(t->clock), end_epoch_ns);
	if (h)
		t->header = *h;
}

/* The row of a "job target" name: a linear look over a screen's worth of rows. */
static struct top_join_row *join_row(struct top_interval *iv, const char *name)
{
	struct top_join_row *r;

	for (uint32_t i = 0; i < iv->n_join; i++)
		if (!strcmp(iv->join[i].name, name))
			return &iv->join[i];
	if (iv->n_join == TOP_JOIN_ROWS) {
		r = &iv->join[TOP_JOIN_ROWS];
		snprintf(r->name, sizeof(r->name), "(other)");
		return r;
	}
	r = &iv->join[iv->n_join++];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	return r;
}

int les_top_join(void *ctx, const struct les_event *ev)
{
	struct les_top *t = ctx;
	const struct les_join_view *v = ev->join;
	struct top_join_row *r;
	char name[LES_TOP_NAME_LEN];

	if (!v || (t->filter[0] && (!v->job || strcmp(v->job, t->filter))))
		return 0;
	snprintf(name, sizeof(name), "%s %s", v->job ? v->job : "-", v->target ? v->target : "-");
	r = join_row(t->open, name);
	r->count++;
	for (int l = 0; l < LES_JOIN_LAYER_MAX; l++)
		r->ns[l] += v->ns[l];
	return 0;
}

/* The value a row is sorted by, per second where it is a rate. */
static double sort_value(const struct top_row *r, enum les_top_sort s)
{
	switch (s) {
	case LES_TOP_SORT_READ:
		return (double)r->bytes_read;
	case LES_TOP_SORT_WRITE:
		return (double)r->bytes_write;
	case LES_TOP_SORT_P50:
		return (double)les_hist_percentile(&r->latency, 500);
	case LES_TOP_SORT_P99:
		return (double)les_hist_percentile(&r->latency, 990);
	case LES_TOP_SORT_RPC:
		return r->latency_ns ? (double)r->rpc_wait_ns / (double)r->latency_ns : 0;
	case LES_TOP_SORT_ERR:
		return (double)r->errors;
	default:
		return (double)(r->ops_meta + r->ops_data);
	}
}

static enum les_top_sort sort_by;

static int cmp_rows(const void *a, const void *b)
{
	const struct top_row *ra = *(const struct top_row *const *)a;
	const struct top_row *rb = *(const struct top_row *const *)b;
	double va = sort_value(ra, sort_by), vb = sort_value(rb, sort_by);

	if (va != vb)
		return va < vb ? 1 : -1;
	return strcmp(ra->name, rb->name);
}

/* "45us", "1.2ms", "3.40s": a latency in at most 6 columns. */
static void fmt_latency(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.0fus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1fms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", (double)ns / 1e9);
}

static const char *top_op(const struct top_row *r)
{
	unsigned int best = 0;

	for (unsigned int op = 1; op < LES_OP_MAX; op++)
		if (r->op_count[op] > r->op_count[best])
			best = op;
	return r->op_count[best] ? les_op_name(best) : "-";
}

struct frame {
	char *buf;
	size_t len, used;
	int width, lines, height;
};

/* One line of at most width columns; false once the frame is full. */
static bool put_line(struct frame *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool put_line(struct frame *f, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	if (f->height > 0 && f->lines >= f->height)
		return false;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return false;
	if (f->width > 0 && n > f->width)
		line[f->width] = '\0';
	n = snprintf(f->buf + f->used, f->len - f->used, "%s\n", line);
	if (n < 0 || (size_t)n >= f->len - f->used)
		return false;
	f->used += (size_t)n;
	f->lines++;
	return true;
}

static void put_header(struct frame *f, const struct les_top *t, enum les_top_group group,
		       enum les_top_sort sort, double secs)
{
	const struct top_interval *iv = t->shown;
	char mounts[256] = "", name[LES_TERM_SAFE_LEN(LES_TOP_NAME_LEN)];
	size_t m = 0;

	les_term_safe(t->filter, name, sizeof(name));
	put_line(f, "lustre-ebpf-stream --top  %s  by %s, sorted by %s%s%s  (%.1f s)", t->clock,
		 les_top_group_name(group), les_top_sort_name(sort), t->filter[0] ? ", only " : "",
		 name, secs);
	for (size_t i = 0; i < t->header.n_mounts && m < sizeof(mounts); i++) {
		les_term_safe(t->header.mounts[i].mount, name, sizeof(name));
		m += (size_t)snprintf(mounts + m, sizeof(mounts) - m, "%s%s %llu", i ? ", " : "",
				      name, (unsigned long long)t->header.mounts[i].inflight);
	}
	put_line(f, "requests/s %.1f  resends %llu  expires %llu  dropped %llu  in flight: %s",
		 (double)iv->requests / secs, (unsigned long long)iv->resends,
		 (unsigned long long)iv->expires, (unsigned long long)t->header.dropped,
		 t->header.n_mounts ? mounts : "-");
	if (iv->sunrpc) {
		char backlog[16], rtt[16];

		fmt_latency(backlog, sizeof(backlog), iv->backlog_ns / iv->sunrpc);
		fmt_latency(rtt, sizeof(rtt), iv->rtt_ns / iv->sunrpc);
		put_line(f, "sunrpc: %llu requests, mean backlog %s, mean rtt %s",
			 (unsigned long long)iv->sunrpc, backlog, rtt);
	}
	put_line(f, "keys: j u p m group  o r w 5 9 x e sort  f filter  q quit");
	put_line(f, "%-14s %6s %6s %7s %7s %6s %6s %4s %5s %s", les_top_group_name(group),
		 "META/s", "DATA/s", "RD MB/s", "WR MB/s", "P50", "P99", "RPC%", "ERR/s", "TOP OP");
}

size_t les_top_render(const struct les_top *t, enum les_top_group group, enum les_top_sort sort,
		      int width, int height, char *buf, size_t len)
{
	const struct top_table *tb = &t->shown->by[group < LES_TOP_GROUP_MAX ? group : 0];
	const struct top_row *rows[LES_TOP_GROUPS + 1];
	struct frame f = { .buf = buf, .len = len, .width = width, .height = height };
	double secs = t->shown_seconds > 0 ? t->shown_seconds : 1;
	size_t n = 0;

	if (!len)
		return 0;
	buf[0] = '\0';
	put_header(&f, t, group, sort, secs);
	for (uint32_t i = 0; i < tb->n; i++)
		rows[n++] = &tb->rows[i];
	if (!strcmp(tb->other.name, "(other)"))
		rows[n++] = &tb->other;
	sort_by = sort;
	qsort(rows, n, sizeof(rows[0]), cmp_rows);
	for (size_t i = 0; i < n; i++) {
		const struct top_row *r = rows[i];
		char p50[16], p99[16], name[LES_TERM_SAFE_LEN(LES_TOP_NAME_LEN)];
		uint64_t ops = r->ops_meta + r->ops_data;

		/* Names come from users: what reaches the terminal is escaped. */
		les_term_safe(r->name, name, sizeof(name));
		fmt_latency(p50, sizeof(p50), les_hist_percentile(&r->latency, 500));
		fmt_latency(p99, sizeof(p99), les_hist_percentile(&r->latency, 990));
		if (!put_line(&f, "%-14.14s %6.1f %6.1f %7.2f %7.2f %6s %6s %3.0f%% %5.1f %s", name,
			      (double)r->ops_meta / secs, (double)r->ops_data / secs,
			      (double)r->bytes_read / secs / 1e6,
			      (double)r->bytes_write / secs / 1e6, ops ? p50 : "-", ops ? p99 : "-",
			      r->latency_ns ? 100.0 * (double)r->rpc_wait_ns / (double)r->latency_ns
					    : 0.0,
			      (double)r->errors / secs, top_op(r)))
			break;
	}
	return f.used;
}

static int cmp_join_rows(const void *a, const void *b)
{
	const struct top_join_row *x = *(const struct top_join_row *const *)a;
	const struct top_join_row *y = *(const struct top_join_row *const *)b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->name, y->name);
}

/* A layer's mean per request (a negative network time, the clocks' rounding, as 0). */
static void fmt_mean(char *buf, size_t len, int64_t sum, uint64_t count)
{
	fmt_latency(buf, len, sum > 0 && count ? (uint64_t)sum / count : 0);
}

/*
 * The layers shown, in the order of a request's way: the client's queue, its
 * LNet wait, the network (both ways), the server's incoming queue, NRS queue and
 * handling, and inside the handling its bulk transfers and block I/O; the
 * client's whole wait last.
 */
static const struct {
	enum les_join_layer layer;
	const char *title;
} layer_cols[] = {
	{LES_JOIN_CLIENT_QUEUED, "CLIENTQ"}, {LES_JOIN_CLIENT_LNET, "LNET"}, {LES_JOIN_NETWORK, "NETWORK"},
	{LES_JOIN_SRV_INCOMING, "INCOMING"}, {LES_JOIN_SRV_NRS, "NRS"},
	{LES_JOIN_SRV_HANDLE, "HANDLE"},     {LES_JOIN_SRV_BULK, "BULK"},
	{LES_JOIN_SRV_IO, "DISK"},	     {LES_JOIN_CLIENT_SERVICE, "SERVICE"},
};

#define LAYER_COLS (sizeof(layer_cols) / sizeof(layer_cols[0]))
_Static_assert(LAYER_COLS == 9, "les_top_render_layers prints nine layer columns");

size_t les_top_render_layers(const struct les_top *t, int width, int height, char *buf, size_t len)
{
	const struct top_interval *iv = t->shown;
	const struct top_join_row *rows[TOP_JOIN_ROWS + 1];
	struct frame f = {.buf = buf, .len = len, .width = width, .height = height};
	double secs = t->shown_seconds > 0 ? t->shown_seconds : 1;
	char name[LES_TERM_SAFE_LEN(LES_TOP_NAME_LEN)], m[LAYER_COLS][16];
	size_t n = 0;

	if (!len)
		return 0;
	buf[0] = '\0';
	put_line(&f,
		 "lustre-ebpf-stream --top  %s  layers of joined requests, by job and target "
		 "(%.1f s)",
		 t->clock, secs);
	put_line(&f, "mean per request; keys: l back to the records  q quit");
	put_line(&f, "%-30s %6s %8s %8s %8s %8s %8s %8s %8s %8s %8s", "JOB TARGET", "REQ/s",
		 layer_cols[0].title, layer_cols[1].title, layer_cols[2].title, layer_cols[3].title,
		 layer_cols[4].title, layer_cols[5].title, layer_cols[6].title, layer_cols[7].title,
		 layer_cols[8].title);
	for (uint32_t i = 0; i < iv->n_join; i++)
		rows[n++] = &iv->join[i];
	if (iv->join[TOP_JOIN_ROWS].count)
		rows[n++] = &iv->join[TOP_JOIN_ROWS];
	if (!n)
		put_line(&f, "no joined request (the join is on where server probes attached)");
	qsort(rows, n, sizeof(rows[0]), cmp_join_rows);
	for (size_t i = 0; i < n; i++) {
		const struct top_join_row *r = rows[i];

		les_term_safe(r->name, name, sizeof(name));
		for (size_t c = 0; c < LAYER_COLS; c++)
			fmt_mean(m[c], sizeof(m[c]), r->ns[layer_cols[c].layer], r->count);
		if (!put_line(&f, "%-30.30s %6.1f %8s %8s %8s %8s %8s %8s %8s %8s %8s", name,
			      (double)r->count / secs, m[0], m[1], m[2], m[3], m[4], m[5], m[6],
			      m[7], m[8]))
			break;
	}
	return f.used;
}

bool les_top_key(struct les_top_view *v, int key)
{
	static const char group_keys[LES_TOP_GROUP_MAX] = { 'j', 'u', 'p', 'm' };
	static const char sort_keys[LES_TOP_SORT_MAX] = { 'o', 'r', 'w', '5', '9', 'x', 'e' };

	for (int g = 0; g < LES_TOP_GROUP_MAX; g++)
		if (key == group_keys[g]) {
			v->group = (enum les_top_group)g;
			return true;
		}
	for (int s = 0; s < LES_TOP_SORT_MAX; s++)
		if (key == sort_keys[s]) {
			v->sort = (enum les_top_sort)s;
			return true;
		}
	if (key == 'q') {
		v->quit = true;
		return true;
	}
	if (key == 'f') {
		v->ask_filter = true;
		return true;
	}
	if (key == 'l') {
		v->layers = !v->layers;
		return true;
	}
	return false;
}
