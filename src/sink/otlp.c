// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * OTLP/HTTP export: the bounded queue of batch buffers, one request at a
 * time through libcurl's multi interface (never blocking the run loop),
 * retry with backoff, the outage told on stderr once, every span counted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <curl/curl.h>
#include "util/clock.h"
#include "sink/otlp.h"

/*
 * A batch buffer: big enough for hundreds of traces, and for the largest
 * trace (LES_OTLP_CHILDREN_MAX children with long names and targets, about
 * 1 KiB a span) with room to spare. A trace is written into a buffer only
 * while TRACE_ROOM is left in it, so one never straddles two.
 */
#define BATCH_BYTES (512u << 10)
#define TRACE_ROOM  (96u << 10)
#define MIN_SLOTS   2
/* A batch goes out when full or this long after its first trace. */
#define BATCH_DELAY_NS (LES_NS_PER_SEC)
/* Retry: 100 ms doubled at each failure, at most 5 s (OTLP asks for exponential backoff). */
#define BACKOFF_MIN_NS	   (100ULL * 1000000ULL)
#define BACKOFF_MAX_NS	   (5ULL * LES_NS_PER_SEC)
#define REQUEST_TIMEOUT_MS 10000L
#define CONNECT_TIMEOUT_MS 3000L
/* A rejected batch is told at most this often. */
#define REJECT_LOG_NS (60ULL * LES_NS_PER_SEC)
#define PATH_TRACES   "/v1/traces"

/* A metrics batch: a window's groups are written while GROUP_ROOM is left (a group's points). */
#define GROUP_ROOM   (32u << 10)
#define PATH_METRICS "/v1/metrics"

enum slot_state { SLOT_FREE = 0, SLOT_FILLING, SLOT_READY, SLOT_SENDING };

struct slot {
	char *buf;
	struct jw w;
	uint64_t items;	    /* spans or data points */
	uint64_t window_ns; /* metrics: the window the batch holds */
	enum slot_state state;
	unsigned int attempts;
	uint64_t opened_ns; /* first item in it */
	uint64_t next_ns;   /* not sent again before this */
};

/* A stream's own counters: the export part, the same for spans and data points. */
struct stream_counters {
	uint64_t kept, exported, dropped_queue_full, dropped_rejected, dropped_exit,
		dropped_too_big, batches, retries, errors;
};

/*
 * One signal's way out: its bounded queue of batch buffers (a FIFO ring,
 * the oldest batch at head), its request (one at a time, an easy handle
 * of the sink's multi handle), its outage state and counters. Traces and
 * metrics each have one; everything below works on either.
 */
struct stream {
	bool on;
	const char *noun;  /* "spans", "data points": what the messages count */
	const char *path;  /* PATH_TRACES, PATH_METRICS */
	size_t room;	   /* what one unit (a trace, a group) may take */
	uint64_t delay_ns; /* a batch goes out this long after its first item */
	void (*begin)(struct jw *w, const char *host);
	char *url;
	struct slot *slots;
	unsigned int n_slots, head, count;
	CURL *easy;
	char curl_err[CURL_ERROR_SIZE];
	bool sending;
	bool down; /* since the last request failed to reach the collector */
	uint64_t down_ns, last_reject_ns;
	struct stream_counters cnt;
};

enum { ST_TRACES = 0, ST_METRICS, ST_MAX };

struct les_otlp {
	struct les_otlp_config cfg;
	struct les_otlp_traces *traces;
	struct les_aggregate *windows; /* --otlp-signals metrics: the windows' groups come here */
	struct stream st[ST_MAX];
	struct jw nowhere; /* where a unit goes when no buffer is free: it overflows at once */
	char host[256];
	CURLM *multi;
	struct curl_slist *headers;
	uint64_t next_expire_ns;
	uint64_t newest_ts;	 /* records_clock: the newest record's ts (epoch ns) */
	uint64_t windows_closed; /* windows with a group in the metrics */
	uint64_t last_window_ns;
};

uint64_t les_otlp_dropped(const struct les_otlp_counters *c)
{
	return c->dropped_queue_full + c->dropped_rejected + c->dropped_exit + c->dropped_too_big;
}

/* --- the URL ---------------------------------------------------------------------------------- */

int les_otlp_check(const struct les_otlp_config *cfg, char *err, size_t errlen)
{
	CURLU *u;
	char *scheme = NULL, *host = NULL;
	int ret = 0;

	if (!cfg->url)
		return 0;
	u = curl_url();
	if (!u) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (curl_url_set(u, CURLUPART_URL, cfg->url, 0) ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) ||
	    (strcmp(scheme, "http") && strcmp(scheme, "https")) || !*host) {
		snprintf(err, errlen,
			 "invalid --otlp '%s': expected http://HOST[:PORT][/PATH] or https://...",
			 cfg->url);
		ret = -EINVAL;
	}
	curl_free(scheme);
	curl_free(host);
	curl_url_cleanup(u);
	return ret;
}

/* The base URL with the signal's path after it, as OTLP/HTTP exporters do with an endpoint. */
static char *signal_url(const char *base, const char *path)
{
	size_t n = strlen(base), p = strlen(path);
	char *url;

	while (n && base[n - 1] == '/')
		n--;
	url = malloc(n + p + 1);
	if (url) {
		memcpy(url, base, n);
		memcpy(url + n, path, p + 1);
	}
	return url;
}

/* --- open and close ------------------------------------------------------------------------- */

/* The collector's answer is not read: only its status counts. */
static size_t discard_body(char *ptr, size_t size, size_t n, void *ctx)
{
	(void)ptr, (void)ctx;
	return size * n;
}

static int stream_curl(struct stream *s, struct curl_slist *headers)
{
	s->easy = curl_easy_init();
	if (!s->easy)
		return -ENOMEM;
	curl_easy_setopt(s->easy, CURLOPT_URL, s->url);
	curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(s->easy, CURLOPT_USERAGENT, "lustre-ebpf-stream/" LES_VERSION);
	curl_easy_setopt(s->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(s->easy, CURLOPT_TIMEOUT_MS, REQUEST_TIMEOUT_MS);
	curl_easy_setopt(s->easy, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
	curl_easy_setopt(s->easy, CURLOPT_ERRORBUFFER, s->curl_err);
	curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, discard_body);
	curl_easy_setopt(s->easy, CURLOPT_PRIVATE, s);
	curl_easy_setopt(s->easy, CURLOPT_POST, 1L);
	return 0;
}

/* A stream's buffers (--otlp-queue-size each), URL and request. */
static int stream_open(struct les_otlp *o, struct stream *s)
{
	s->url = signal_url(o->cfg.url, s->path);
	if (!s->url)
		return -ENOMEM;
	s->n_slots = (unsigned int)(o->cfg.queue_bytes / BATCH_BYTES);
	if (s->n_slots < MIN_SLOTS)
		s->n_slots = MIN_SLOTS;
	s->slots = calloc(s->n_slots, sizeof(*s->slots));
	if (!s->slots)
		return -ENOMEM;
	for (unsigned int i = 0; i < s->n_slots; i++) {
		s->slots[i].buf = malloc(BATCH_BYTES);
		if (!s->slots[i].buf)
			return -ENOMEM;
	}
	return stream_curl(s, o->headers);
}

static void stream_free(struct les_otlp *o, struct stream *s)
{
	if (s->easy) {
		if (s->sending)
			curl_multi_remove_handle(o->multi, s->easy);
		curl_easy_cleanup(s->easy);
	}
	for (unsigned int i = 0; s->slots && i < s->n_slots; i++)
		free(s->slots[i].buf);
	free(s->slots);
	free(s->url);
}

static void free_all(struct les_otlp *o)
{
	for (int i = 0; i < ST_MAX; i++)
		stream_free(o, &o->st[i]);
	if (o->multi)
		curl_multi_cleanup(o->multi);
	curl_slist_free_all(o->headers);
	les_aggregate_free(o->windows);
	les_otlp_traces_free(o->traces);
	free(o);
}

static int window_group(void *ctx, const struct les_window *win, const struct les_window_group *g);

/* The streams of the signals asked for, their shapes. */
static void streams_init(struct les_otlp *o)
{
	o->st[ST_TRACES] = (struct stream){
		.on = o->cfg.traces,
		.noun = "spans",
		.path = PATH_TRACES,
		.room = TRACE_ROOM,
		.delay_ns = BATCH_DELAY_NS,
		.begin = les_otlp_batch_begin,
	};
	/* A window's groups all come in one call: the batch is whole at the next tick. */
	o->st[ST_METRICS] = (struct stream){
		.on = o->cfg.metrics,
		.noun = "data points",
		.path = PATH_METRICS,
		.room = GROUP_ROOM,
		.delay_ns = 0,
		.begin = les_otlp_metrics_begin,
	};
}

static int open_parts(struct les_otlp *o)
{
	o->multi = curl_multi_init();
	o->headers = curl_slist_append(NULL, "Content-Type: application/json");
	if (!o->multi || !o->headers)
		return -ENOMEM;
	if (o->cfg.traces) {
		/* The run's salt, its start time: the trace ids of two runs never meet. */
		o->traces = les_otlp_traces_new(&o->cfg, les_clock_ns(CLOCK_REALTIME));
		if (!o->traces)
			return -ENOMEM;
	}
	if (o->cfg.metrics) {
		o->windows = les_aggregate_new_groups(&o->cfg.aggregate, window_group, o);
		if (!o->windows)
			return -ENOMEM;
	}
	for (int i = 0; i < ST_MAX; i++)
		if (o->st[i].on && stream_open(o, &o->st[i]))
			return -ENOMEM;
	return 0;
}

int les_otlp_open(struct les_otlp **out, const struct les_otlp_config *cfg, char *err,
		  size_t errlen)
{
	struct les_otlp *o;
	int ret;

	*out = NULL;
	if (!cfg->url)
		return 0;
	ret = les_otlp_check(cfg, err, errlen);
	if (ret)
		return ret;
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(err, errlen, "cannot set up --otlp: libcurl did not initialize");
		return -EIO;
	}
	o = calloc(1, sizeof(*o));
	if (!o) {
		snprintf(err, errlen, "cannot set up --otlp: out of memory");
		return -ENOMEM;
	}
	o->cfg = *cfg;
	/* A config that names no signal (a caller before --otlp-signals) means traces. */
	if (!o->cfg.traces && !o->cfg.metrics)
		o->cfg.traces = true;
	streams_init(o);
	if (open_parts(o)) {
		free_all(o);
		snprintf(err, errlen, "cannot set up --otlp: out of memory");
		return -ENOMEM;
	}
	jw_init(&o->nowhere, NULL, 0);
	*out = o;
	return 0;
}

static uint64_t queued(const struct stream *s)
{
	uint64_t n = 0;

	for (unsigned int k = 0; k < s->count; k++)
		n += s->slots[(s->head + k) % s->n_slots].items;
	return n;
}

void les_otlp_counters(const struct les_otlp *o, struct les_otlp_counters *out)
{
	const struct stream *t, *m;

	memset(out, 0, sizeof(*out));
	if (!o)
		return;
	t = &o->st[ST_TRACES];
	m = &o->st[ST_METRICS];
	*out = (struct les_otlp_counters){
		.spans = t->cnt.kept,
		.exported = t->cnt.exported,
		.dropped_queue_full = t->cnt.dropped_queue_full,
		.dropped_rejected = t->cnt.dropped_rejected,
		.dropped_exit = t->cnt.dropped_exit,
		.dropped_too_big = t->cnt.dropped_too_big,
		.pending = queued(t),
		.batches = t->cnt.batches,
		.retries = t->cnt.retries,
		.errors = t->cnt.errors,
		.metrics =
			{
				.windows = o->windows_closed,
				.points = m->cnt.kept,
				.exported = m->cnt.exported,
				.dropped_queue_full = m->cnt.dropped_queue_full,
				.dropped_rejected = m->cnt.dropped_rejected,
				.dropped_exit = m->cnt.dropped_exit,
				.dropped_too_big = m->cnt.dropped_too_big,
				.pending = queued(m),
				.batches = m->cnt.batches,
				.retries = m->cnt.retries,
				.errors = m->cnt.errors,
			},
	};
	if (o->traces)
		les_otlp_traces_counters(o->traces, out);
}

static void report(const struct les_otlp *o, const struct stream *s, uint64_t kept,
		   uint64_t dropped)
{
	const struct stream_counters *c = &s->cnt;

	if (dropped)
		fprintf(stderr,
			"lustre-ebpf-stream: otlp: %" PRIu64 " of %" PRIu64
			" %s not exported (%" PRIu64 " on a full queue, %" PRIu64
			" rejected, %" PRIu64 " still queued at exit, %" PRIu64 " too big)\n",
			dropped, kept, s->noun, c->dropped_queue_full, c->dropped_rejected,
			c->dropped_exit,
			dropped - c->dropped_queue_full - c->dropped_rejected - c->dropped_exit);
	else if (o->cfg.verbose)
		fprintf(stderr, "lustre-ebpf-stream: otlp: all %" PRIu64 " %s exported\n",
			c->exported, s->noun);
}

uint64_t les_otlp_close(struct les_otlp *o)
{
	struct les_otlp_counters c;
	uint64_t dropped, mdropped;

	if (!o)
		return 0;
	les_otlp_counters(o, &c);
	dropped = les_otlp_dropped(&c);
	mdropped = les_otlp_metrics_dropped(&c.metrics);
	if (o->st[ST_TRACES].on)
		report(o, &o->st[ST_TRACES], c.spans, dropped);
	if (o->st[ST_METRICS].on)
		report(o, &o->st[ST_METRICS], c.metrics.points, mdropped);
	free_all(o);
	return dropped + mdropped;
}

/* --- the queue ---------------------------------------------------------------------------------- */

static struct slot *slot_at(struct stream *s, unsigned int k)
{
	return &s->slots[(s->head + k) % s->n_slots];
}

static struct slot *filling(struct stream *s)
{
	struct slot *b;

	if (!s->count)
		return NULL;
	b = slot_at(s, s->count - 1);
	return b->state == SLOT_FILLING ? b : NULL;
}

static void close_batch(struct slot *b)
{
	/* The room for the closing brackets was kept out of the items' capacity. */
	b->w.cap = BATCH_BYTES;
	les_otlp_batch_end(&b->w);
	b->state = SLOT_READY;
	b->attempts = 0;
	b->next_ns = 0;
}

/*
 * A buffer with room for a unit: the one being filled (of the same window,
 * for metrics), or a new one; NULL when none is free.
 */
static struct jw *room_for(struct les_otlp *o, struct stream *s, uint64_t window_ns,
			   uint64_t now_ns)
{
	struct slot *b = filling(s);

	if (b && b->w.cap - b->w.len >= s->room && b->window_ns == window_ns)
		return &b->w;
	if (b && b->items)
		close_batch(b);
	else if (b) {
		b->state = SLOT_FREE; /* empty: taken again below */
		s->count--;
	}
	if (s->count == s->n_slots)
		return NULL;
	b = slot_at(s, s->count++);
	b->state = SLOT_FILLING;
	b->items = 0;
	b->window_ns = window_ns;
	b->opened_ns = now_ns;
	jw_init(&b->w, b->buf, BATCH_BYTES - LES_OTLP_BATCH_END_LEN);
	s->begin(&b->w, o->host);
	return &b->w;
}

/* room_for would find none: every buffer taken, the last without room. */
static bool stream_full(const struct stream *s)
{
	const struct slot *b;

	if (s->count < s->n_slots)
		return false;
	b = &s->slots[(s->head + s->count - 1) % s->n_slots];
	return b->state != SLOT_FILLING || b->w.cap - b->w.len < s->room;
}

bool les_otlp_queue_full(const struct les_otlp *o)
{
	return o && o->st[ST_TRACES].on && stream_full(&o->st[ST_TRACES]);
}

static void free_head(struct stream *s)
{
	struct slot *b = slot_at(s, 0);

	b->state = SLOT_FREE;
	b->items = 0;
	s->head = (s->head + 1) % s->n_slots;
	s->count--;
}

/*
 * What les_otlp_traces_add or les_otlp_metrics_add returned for a unit of
 * items (written n, or -ENOSPC), into the stream's counters: w NULL when
 * no buffer was free.
 */
static void account(struct stream *s, int n, unsigned int items, unsigned int lost,
		    const struct jw *w)
{
	struct slot *b;

	s->cnt.kept += items;
	if (n > 0) {
		b = filling(s);
		b->items += (uint64_t)n;
	} else if (n == -ENOSPC && w) {
		s->cnt.dropped_too_big += items - lost;
	} else if (n == -ENOSPC) {
		s->cnt.dropped_queue_full += items - lost;
	}
}

static void traces_event(struct les_otlp *o, const struct les_event *ev)
{
	struct stream *s = &o->st[ST_TRACES];
	unsigned int spans, over;
	struct jw *w = NULL;
	int n;

	if (ev->kind == LES_REC_ACCESS)
		w = room_for(o, s, 0, les_mono_ns());
	n = les_otlp_traces_add(o->traces, ev, w ? w : &o->nowhere, &spans, &over);
	if (ev->kind != LES_REC_ACCESS || (n == 0 && !spans))
		return;
	/* Sampled out (0): counted by the traces. Children past the cap: too big, there too. */
	if (n == -ENOSPC || n > 0)
		account(s, n, spans, over, w);
}

/* les_window_fn: a closed window's group into the metrics batch of its window. */
static int window_group(void *ctx, const struct les_window *win, const struct les_window_group *g)
{
	struct les_otlp *o = ctx;
	struct stream *s = &o->st[ST_METRICS];
	unsigned int points;
	struct jw *w;
	int n;

	if (win->start_ns != o->last_window_ns) {
		o->last_window_ns = win->start_ns;
		o->windows_closed++;
	}
	w = room_for(o, s, win->start_ns, les_mono_ns());
	n = les_otlp_metrics_add(w ? w : &o->nowhere, win, g, &points);
	account(s, n, points, 0, w);
	return 0;
}

int les_otlp_event(void *ctx, const struct les_event *ev)
{
	struct les_otlp *o = ctx;

	if (!o)
		return 0;
	if (ev->ts_epoch_ns > o->newest_ts)
		o->newest_ts = ev->ts_epoch_ns;
	if (!o->host[0] && ev->host)
		snprintf(o->host, sizeof(o->host), "%s", ev->host);
	if (o->traces)
		traces_event(o, ev);
	if (o->windows)
		les_aggregate_add(o->windows, ev);
	return 0;
}

/* --- sending -------------------------------------------------------------------------------------- */

static void start_request(struct les_otlp *o, struct stream *s, struct slot *b)
{
	curl_easy_setopt(s->easy, CURLOPT_POSTFIELDS, b->buf);
	curl_easy_setopt(s->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)b->w.len);
	s->curl_err[0] = '\0';
	if (curl_multi_add_handle(o->multi, s->easy) != CURLM_OK)
		return;
	if (b->attempts)
		s->cnt.retries++;
	b->state = SLOT_SENDING;
	s->sending = true;
}

/* OTLP/HTTP's retryable answers: too many requests, and a gateway or the service unavailable. */
static bool status_retryable(long code)
{
	return code == 429 || code == 502 || code == 503 || code == 504;
}

static uint64_t backoff_ns(unsigned int attempts)
{
	uint64_t ns = BACKOFF_MIN_NS;

	while (--attempts && ns < BACKOFF_MAX_NS)
		ns *= 2;
	return ns < BACKOFF_MAX_NS ? ns : BACKOFF_MAX_NS;
}

/* The collector is not answering: told once per outage, the batch kept for later. */
static void retry_later(struct stream *s, struct slot *b, const char *why, uint64_t now_ns)
{
	b->state = SLOT_READY;
	b->attempts++;
	b->next_ns = now_ns + backoff_ns(b->attempts);
	if (s->down)
		return;
	s->down = true;
	s->down_ns = now_ns;
	fprintf(stderr,
		"lustre-ebpf-stream: otlp: collector %s not reachable (%s): %s wait in the "
		"queue, retried with backoff\n",
		s->url, why, s->noun);
}

static void delivered(struct stream *s, uint64_t now_ns)
{
	s->cnt.exported += slot_at(s, 0)->items;
	s->cnt.batches++;
	free_head(s);
	if (!s->down)
		return;
	s->down = false;
	fprintf(stderr, "lustre-ebpf-stream: otlp: collector %s back after %.1f s\n", s->url,
		(double)(now_ns - s->down_ns) / 1e9);
}

static void rejected(struct stream *s, long code, uint64_t now_ns)
{
	struct slot *b = slot_at(s, 0);

	s->cnt.dropped_rejected += b->items;
	if (!s->last_reject_ns || now_ns - s->last_reject_ns >= REJECT_LOG_NS) {
		fprintf(stderr,
			"lustre-ebpf-stream: otlp: collector %s refused a batch of %" PRIu64
			" %s (HTTP %ld): dropped\n",
			s->url, b->items, s->noun, code);
		s->last_reject_ns = now_ns;
	}
	free_head(s);
}

static void request_done(struct les_otlp *o, struct stream *s, CURLcode res, uint64_t now_ns)
{
	struct slot *b = slot_at(s, 0);
	char why[64];
	long code = 0;

	curl_multi_remove_handle(o->multi, s->easy);
	s->sending = false;
	curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
	if (res == CURLE_OK && code >= 200 && code < 300) {
		delivered(s, now_ns);
		return;
	}
	s->cnt.errors++;
	if (res != CURLE_OK) {
		retry_later(s, b, s->curl_err[0] ? s->curl_err : curl_easy_strerror(res), now_ns);
	} else if (status_retryable(code)) {
		snprintf(why, sizeof(why), "HTTP %ld", code);
		retry_later(s, b, why, now_ns);
	} else {
		rejected(s, code, now_ns);
	}
}

/* Let libcurl move the requests on, and take their ends if they came. */
static void drive(struct les_otlp *o, uint64_t now_ns)
{
	struct stream *s;
	CURLMsg *msg;
	int running, left;

	if (!o->st[ST_TRACES].sending && !o->st[ST_METRICS].sending)
		return;
	curl_multi_perform(o->multi, &running);
	while ((msg = curl_multi_info_read(o->multi, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		s = NULL;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
		if (s)
			request_done(o, s, msg->data.result, now_ns);
	}
}

/* The oldest batch goes out when it is closed and its backoff is over. */
static void maybe_send(struct les_otlp *o, struct stream *s, uint64_t now_ns)
{
	struct slot *b = filling(s);

	if (b && b->items && now_ns - b->opened_ns >= s->delay_ns)
		close_batch(b);
	if (s->sending || !s->count)
		return;
	b = slot_at(s, 0);
	if (b->state == SLOT_READY && now_ns >= b->next_ns)
		start_request(o, s, b);
}

void les_otlp_tick(struct les_otlp *o, uint64_t now_ns)
{
	uint64_t epoch;

	if (!o)
		return;
	epoch = o->cfg.records_clock ? o->newest_ts : les_clock_ns(CLOCK_REALTIME);
	/* A window past its end closes here: its groups reach the batch before it is sent. */
	if (o->windows)
		les_aggregate_tick(o->windows, epoch);
	for (int i = 0; i < ST_MAX; i++)
		if (o->st[i].on)
			maybe_send(o, &o->st[i], now_ns);
	drive(o, now_ns);
	if (o->traces && now_ns >= o->next_expire_ns) {
		les_otlp_traces_expire(o->traces, epoch);
		o->next_expire_ns = now_ns + LES_NS_PER_SEC;
	}
}

/* Before the flush: the filling batch closed (or let go when empty), the first try at once. */
static void flush_prepare(struct stream *s, uint64_t now)
{
	struct slot *b = filling(s);

	if (b && b->items)
		close_batch(b);
	else if (b) {
		b->state = SLOT_FREE; /* an empty batch: nothing to send */
		s->count--;
	}
	if (s->count && !s->sending)
		slot_at(s, 0)->next_ns = now; /* no backoff left to wait out */
}

/* What the flush could not send is dropped at exit, counted. */
static void flush_drop(struct les_otlp *o, struct stream *s)
{
	if (s->sending) {
		curl_multi_remove_handle(o->multi, s->easy);
		s->sending = false;
	}
	while (s->count) {
		s->cnt.dropped_exit += slot_at(s, 0)->items;
		free_head(s);
	}
}

void les_otlp_flush(struct les_otlp *o)
{
	uint64_t now, deadline;
	struct stream *s;
	bool left;

	if (!o)
		return;
	/* The rpc records still waiting will see no op now; the open window closes, partial. */
	if (o->traces)
		les_otlp_traces_expire(o->traces, UINT64_MAX);
	if (o->windows)
		les_aggregate_flush(o->windows, o->cfg.records_clock
							? o->newest_ts
							: les_clock_ns(CLOCK_REALTIME));
	now = les_mono_ns();
	deadline = now + o->cfg.flush_timeout_ns;
	for (int i = 0; i < ST_MAX; i++)
		if (o->st[i].on)
			flush_prepare(&o->st[i], now);
	for (left = true; left && now < deadline; now = les_mono_ns()) {
		left = false;
		for (int i = 0; i < ST_MAX; i++) {
			s = &o->st[i];
			if (!s->on || !s->count)
				continue;
			left = true;
			/*
			 * A failed try backs off as it does while running (a
			 * collector that refuses is not hammered), but never past
			 * half the time left, so that the last tries still come
			 * before the deadline.
			 */
			if (!s->sending && slot_at(s, 0)->next_ns > now + (deadline - now) / 2)
				slot_at(s, 0)->next_ns = now + (deadline - now) / 2;
			maybe_send(o, s, now);
		}
		if (left) {
			curl_multi_poll(o->multi, NULL, 0, 50, NULL);
			drive(o, les_mono_ns());
		}
	}
	for (int i = 0; i < ST_MAX; i++)
		if (o->st[i].on)
			flush_drop(o, &o->st[i]);
}

static void metrics_stats_json(const struct les_otlp_metric_counters *m, struct jw *w)
{
	jw_key(w, "metrics");
	jw_obj_begin(w);
	jw_kv_u64(w, "windows", m->windows);
	jw_kv_u64(w, "points", m->points);
	jw_kv_u64(w, "exported", m->exported);
	jw_kv_u64(w, "pending", m->pending);
	jw_kv_u64(w, "dropped_otlp", les_otlp_metrics_dropped(m));
	jw_key(w, "dropped_by");
	jw_obj_begin(w);
	jw_kv_u64(w, "queue_full", m->dropped_queue_full);
	jw_kv_u64(w, "rejected", m->dropped_rejected);
	jw_kv_u64(w, "exit", m->dropped_exit);
	jw_kv_u64(w, "too_big", m->dropped_too_big);
	jw_obj_end(w);
	jw_kv_u64(w, "batches", m->batches);
	jw_kv_u64(w, "retries", m->retries);
	jw_kv_u64(w, "errors", m->errors);
	jw_obj_end(w);
}

void les_otlp_stats_json(void *ctx, struct jw *w)
{
	struct les_otlp *o = ctx;
	struct les_otlp_counters c;

	if (!o)
		return;
	les_otlp_counters(o, &c);
	jw_key(w, "otlp");
	jw_obj_begin(w);
	jw_kv_u64(w, "ops", c.ops);
	jw_kv_u64(w, "ops_sampled_out", c.ops_sampled_out);
	jw_kv_u64(w, "spans_sampled_out", c.spans_sampled_out);
	jw_kv_u64(w, "spans", c.spans);
	jw_kv_u64(w, "exported", c.exported);
	jw_kv_u64(w, "pending", c.pending);
	jw_kv_u64(w, "dropped_otlp", les_otlp_dropped(&c));
	jw_key(w, "dropped_by");
	jw_obj_begin(w);
	jw_kv_u64(w, "queue_full", c.dropped_queue_full);
	jw_kv_u64(w, "rejected", c.dropped_rejected);
	jw_kv_u64(w, "exit", c.dropped_exit);
	jw_kv_u64(w, "too_big", c.dropped_too_big);
	jw_obj_end(w);
	jw_kv_u64(w, "rpc_no_op", c.rpc_no_op);
	jw_kv_u64(w, "rpc_unlinked", c.rpc_unlinked);
	jw_kv_u64(w, "batches", c.batches);
	jw_kv_u64(w, "retries", c.retries);
	jw_kv_u64(w, "errors", c.errors);
	if (o->st[ST_METRICS].on)
		metrics_stats_json(&c.metrics, w);
	jw_obj_end(w);
}
