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

enum slot_state { SLOT_FREE = 0, SLOT_FILLING, SLOT_READY, SLOT_SENDING };

struct slot {
	char *buf;
	struct jw w;
	uint64_t spans;
	enum slot_state state;
	unsigned int attempts;
	uint64_t opened_ns; /* first trace in it */
	uint64_t next_ns;   /* not sent again before this */
};

struct les_otlp {
	struct les_otlp_config cfg;
	char *url; /* base + /v1/traces */
	struct les_otlp_traces *traces;
	struct slot *slots;
	unsigned int n_slots, head, count; /* a FIFO ring: the oldest batch at head */
	struct jw nowhere; /* where a trace goes when no buffer is free: it overflows at once */
	char host[256];
	CURLM *multi;
	CURL *easy;
	struct curl_slist *headers;
	char curl_err[CURL_ERROR_SIZE];
	bool sending;
	bool down; /* since the last request failed to reach the collector */
	uint64_t down_ns, last_reject_ns, next_expire_ns;
	uint64_t newest_ts;	      /* records_clock: the newest record's ts (epoch ns) */
	struct les_otlp_counters cnt; /* the queue's part; the traces' part is in traces */
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

/* The base URL with /v1/traces after it, as OTLP/HTTP exporters do with an endpoint. */
static char *traces_url(const char *base)
{
	size_t n = strlen(base);
	char *url;

	while (n && base[n - 1] == '/')
		n--;
	url = malloc(n + sizeof(PATH_TRACES));
	if (url) {
		memcpy(url, base, n);
		memcpy(url + n, PATH_TRACES, sizeof(PATH_TRACES));
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

static int curl_setup(struct les_otlp *o)
{
	o->multi = curl_multi_init();
	o->easy = curl_easy_init();
	o->headers = curl_slist_append(NULL, "Content-Type: application/json");
	if (!o->multi || !o->easy || !o->headers)
		return -ENOMEM;
	curl_easy_setopt(o->easy, CURLOPT_URL, o->url);
	curl_easy_setopt(o->easy, CURLOPT_HTTPHEADER, o->headers);
	curl_easy_setopt(o->easy, CURLOPT_USERAGENT, "lustre-ebpf-stream/" LES_VERSION);
	curl_easy_setopt(o->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(o->easy, CURLOPT_TIMEOUT_MS, REQUEST_TIMEOUT_MS);
	curl_easy_setopt(o->easy, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
	curl_easy_setopt(o->easy, CURLOPT_ERRORBUFFER, o->curl_err);
	curl_easy_setopt(o->easy, CURLOPT_WRITEFUNCTION, discard_body);
	curl_easy_setopt(o->easy, CURLOPT_POST, 1L);
	return 0;
}

static int alloc_slots(struct les_otlp *o)
{
	o->n_slots = (unsigned int)(o->cfg.queue_bytes / BATCH_BYTES);
	if (o->n_slots < MIN_SLOTS)
		o->n_slots = MIN_SLOTS;
	o->slots = calloc(o->n_slots, sizeof(*o->slots));
	if (!o->slots)
		return -ENOMEM;
	for (unsigned int i = 0; i < o->n_slots; i++) {
		o->slots[i].buf = malloc(BATCH_BYTES);
		if (!o->slots[i].buf)
			return -ENOMEM;
	}
	return 0;
}

static void free_all(struct les_otlp *o)
{
	if (o->multi && o->sending)
		curl_multi_remove_handle(o->multi, o->easy);
	if (o->easy)
		curl_easy_cleanup(o->easy);
	if (o->multi)
		curl_multi_cleanup(o->multi);
	curl_slist_free_all(o->headers);
	for (unsigned int i = 0; o->slots && i < o->n_slots; i++)
		free(o->slots[i].buf);
	free(o->slots);
	les_otlp_traces_free(o->traces);
	free(o->url);
	free(o);
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
	/* The run's salt, its start time: the trace ids of two runs never meet. */
	o->traces = les_otlp_traces_new(&o->cfg, les_clock_ns(CLOCK_REALTIME));
	o->url = traces_url(cfg->url);
	if (!o->traces || !o->url || alloc_slots(o) || curl_setup(o)) {
		free_all(o);
		snprintf(err, errlen, "cannot set up --otlp: out of memory");
		return -ENOMEM;
	}
	jw_init(&o->nowhere, NULL, 0);
	*out = o;
	return 0;
}

void les_otlp_counters(const struct les_otlp *o, struct les_otlp_counters *out)
{
	memset(out, 0, sizeof(*out));
	if (!o)
		return;
	*out = o->cnt;
	les_otlp_traces_counters(o->traces, out);
	for (unsigned int k = 0; k < o->count; k++)
		out->pending += o->slots[(o->head + k) % o->n_slots].spans;
}

static void report(const struct les_otlp *o)
{
	struct les_otlp_counters c;
	uint64_t dropped;

	les_otlp_counters(o, &c);
	dropped = les_otlp_dropped(&c);
	if (dropped)
		fprintf(stderr,
			"lustre-ebpf-stream: otlp: %" PRIu64 " of %" PRIu64
			" spans not exported (%" PRIu64 " on a full queue, %" PRIu64
			" rejected, %" PRIu64 " still queued at exit, %" PRIu64 " too big)\n",
			dropped, c.spans, c.dropped_queue_full, c.dropped_rejected, c.dropped_exit,
			c.dropped_too_big);
	else if (o->cfg.verbose)
		fprintf(stderr, "lustre-ebpf-stream: otlp: all %" PRIu64 " spans exported\n",
			c.exported);
}

uint64_t les_otlp_close(struct les_otlp *o)
{
	struct les_otlp_counters c;

	if (!o)
		return 0;
	report(o);
	les_otlp_counters(o, &c);
	free_all(o);
	return les_otlp_dropped(&c);
}

/* --- the queue ---------------------------------------------------------------------------------- */

static struct slot *slot_at(struct les_otlp *o, unsigned int k)
{
	return &o->slots[(o->head + k) % o->n_slots];
}

static struct slot *filling(struct les_otlp *o)
{
	struct slot *s;

	if (!o->count)
		return NULL;
	s = slot_at(o, o->count - 1);
	return s->state == SLOT_FILLING ? s : NULL;
}

static void close_batch(struct slot *s)
{
	/* The room for the closing brackets was kept out of the spans' capacity. */
	s->w.cap = BATCH_BYTES;
	les_otlp_batch_end(&s->w);
	s->state = SLOT_READY;
	s->attempts = 0;
	s->next_ns = 0;
}

/* A buffer with room for a trace: the one being filled, or a new one; NULL when none is free. */
static struct jw *room_for_trace(struct les_otlp *o, uint64_t now_ns)
{
	struct slot *s = filling(o);

	if (s && s->w.cap - s->w.len >= TRACE_ROOM)
		return &s->w;
	if (s)
		close_batch(s);
	if (o->count == o->n_slots)
		return NULL;
	s = slot_at(o, o->count++);
	s->state = SLOT_FILLING;
	s->spans = 0;
	s->opened_ns = now_ns;
	jw_init(&s->w, s->buf, BATCH_BYTES - LES_OTLP_BATCH_END_LEN);
	les_otlp_batch_begin(&s->w, o->host);
	return &s->w;
}

/* room_for_trace would find none: every buffer taken, the last without room. */
bool les_otlp_queue_full(const struct les_otlp *o)
{
	const struct slot *s;

	if (!o || o->count < o->n_slots)
		return false;
	s = &o->slots[(o->head + o->count - 1) % o->n_slots];
	return s->state != SLOT_FILLING || s->w.cap - s->w.len < TRACE_ROOM;
}

static void free_head(struct les_otlp *o)
{
	struct slot *s = slot_at(o, 0);

	s->state = SLOT_FREE;
	s->spans = 0;
	o->head = (o->head + 1) % o->n_slots;
	o->count--;
}

int les_otlp_event(void *ctx, const struct les_event *ev)
{
	struct les_otlp *o = ctx;
	unsigned int spans, over;
	struct jw *w = NULL;
	struct slot *s;
	int n;

	if (!o)
		return 0;
	if (ev->ts_epoch_ns > o->newest_ts)
		o->newest_ts = ev->ts_epoch_ns;
	if (ev->kind == LES_REC_ACCESS) {
		if (!o->host[0] && ev->host)
			snprintf(o->host, sizeof(o->host), "%s", ev->host);
		w = room_for_trace(o, les_mono_ns());
	}
	n = les_otlp_traces_add(o->traces, ev, w ? w : &o->nowhere, &spans, &over);
	if (ev->kind != LES_REC_ACCESS || (n == 0 && !spans))
		return 0;
	if (n > 0) {
		s = filling(o);
		s->spans += (uint64_t)n;
		o->cnt.spans += spans;
	} else if (n == -ENOSPC) {
		o->cnt.spans += spans;
		if (w)
			o->cnt.dropped_too_big += spans - over;
		else
			o->cnt.dropped_queue_full += spans - over;
	}
	return 0;
}

/* --- sending -------------------------------------------------------------------------------------- */

static void start_request(struct les_otlp *o, struct slot *s)
{
	curl_easy_setopt(o->easy, CURLOPT_POSTFIELDS, s->buf);
	curl_easy_setopt(o->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)s->w.len);
	o->curl_err[0] = '\0';
	if (curl_multi_add_handle(o->multi, o->easy) != CURLM_OK)
		return;
	if (s->attempts)
		o->cnt.retries++;
	s->state = SLOT_SENDING;
	o->sending = true;
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
static void retry_later(struct les_otlp *o, struct slot *s, const char *why, uint64_t now_ns)
{
	s->state = SLOT_READY;
	s->attempts++;
	s->next_ns = now_ns + backoff_ns(s->attempts);
	if (o->down)
		return;
	o->down = true;
	o->down_ns = now_ns;
	fprintf(stderr,
		"lustre-ebpf-stream: otlp: collector %s not reachable (%s): spans wait in the "
		"queue, retried with backoff\n",
		o->url, why);
}

static void delivered(struct les_otlp *o, uint64_t now_ns)
{
	o->cnt.exported += slot_at(o, 0)->spans;
	o->cnt.batches++;
	free_head(o);
	if (!o->down)
		return;
	o->down = false;
	fprintf(stderr, "lustre-ebpf-stream: otlp: collector back after %.1f s\n",
		(double)(now_ns - o->down_ns) / 1e9);
}

static void rejected(struct les_otlp *o, long code, uint64_t now_ns)
{
	struct slot *s = slot_at(o, 0);

	o->cnt.dropped_rejected += s->spans;
	if (!o->last_reject_ns || now_ns - o->last_reject_ns >= REJECT_LOG_NS) {
		fprintf(stderr,
			"lustre-ebpf-stream: otlp: collector %s refused a batch of %" PRIu64
			" spans (HTTP %ld): dropped\n",
			o->url, s->spans, code);
		o->last_reject_ns = now_ns;
	}
	free_head(o);
}

static void request_done(struct les_otlp *o, CURLcode res, uint64_t now_ns)
{
	struct slot *s = slot_at(o, 0);
	char why[64];
	long code = 0;

	curl_multi_remove_handle(o->multi, o->easy);
	o->sending = false;
	curl_easy_getinfo(o->easy, CURLINFO_RESPONSE_CODE, &code);
	if (res == CURLE_OK && code >= 200 && code < 300) {
		delivered(o, now_ns);
		return;
	}
	o->cnt.errors++;
	if (res != CURLE_OK) {
		retry_later(o, s, o->curl_err[0] ? o->curl_err : curl_easy_strerror(res), now_ns);
	} else if (status_retryable(code)) {
		snprintf(why, sizeof(why), "HTTP %ld", code);
		retry_later(o, s, why, now_ns);
	} else {
		rejected(o, code, now_ns);
	}
}

/* Let libcurl move the request on, and take its end if it came. */
static void drive(struct les_otlp *o, uint64_t now_ns)
{
	CURLMsg *msg;
	int running, left;

	if (!o->sending)
		return;
	curl_multi_perform(o->multi, &running);
	while ((msg = curl_multi_info_read(o->multi, &left)))
		if (msg->msg == CURLMSG_DONE)
			request_done(o, msg->data.result, now_ns);
}

/* The oldest batch goes out when it is closed and its backoff is over. */
static void maybe_send(struct les_otlp *o, uint64_t now_ns)
{
	struct slot *s = filling(o);

	if (s && s->spans && now_ns - s->opened_ns >= BATCH_DELAY_NS)
		close_batch(s);
	if (o->sending || !o->count)
		return;
	s = slot_at(o, 0);
	if (s->state == SLOT_READY && now_ns >= s->next_ns)
		start_request(o, s);
}

void les_otlp_tick(struct les_otlp *o, uint64_t now_ns)
{
	if (!o)
		return;
	maybe_send(o, now_ns);
	drive(o, now_ns);
	if (now_ns >= o->next_expire_ns) {
		les_otlp_traces_expire(o->traces, o->cfg.records_clock
							  ? o->newest_ts
							  : les_clock_ns(CLOCK_REALTIME));
		o->next_expire_ns = now_ns + LES_NS_PER_SEC;
	}
}

void les_otlp_flush(struct les_otlp *o)
{
	uint64_t now, deadline;
	struct slot *s;

	if (!o)
		return;
	/* The rpc records still waiting will see no op now. */
	les_otlp_traces_expire(o->traces, UINT64_MAX);
	s = filling(o);
	if (s && s->spans)
		close_batch(s);
	else if (s) {
		s->state = SLOT_FREE; /* an empty batch: nothing to send */
		o->count--;
	}
	now = les_mono_ns();
	deadline = now + o->cfg.flush_timeout_ns;
	if (o->count && !o->sending)
		slot_at(o, 0)->next_ns =
			now; /* the first try at once: no backoff left to wait out */
	while (o->count && now < deadline) {
		s = slot_at(o, 0);
		/*
		 * A failed try backs off as it does while running (a collector
		 * that refuses is not hammered), but never past half the time
		 * left, so that the last tries still come before the deadline.
		 */
		if (!o->sending && s->next_ns > now + (deadline - now) / 2)
			s->next_ns = now + (deadline - now) / 2;
		maybe_send(o, now);
		curl_multi_poll(o->multi, NULL, 0, 50, NULL);
		drive(o, les_mono_ns());
		now = les_mono_ns();
	}
	if (o->sending) {
		curl_multi_remove_handle(o->multi, o->easy);
		o->sending = false;
	}
	while (o->count) {
		o->cnt.dropped_exit += slot_at(o, 0)->spans;
		free_head(o);
	}
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
	jw_obj_end(w);
}
