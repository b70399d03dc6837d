// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The report's page: the template (report_page.html, built into the
 * binary), the Vega scripts read from the scripts' directory and inlined,
 * and the data as one JSON document the page's charts read. Nothing in
 * the page is fetched when it is opened.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "sink/report_data.h"
#include "util/json.h"

#define SCRIPT_MAX   (16u << 20) /* a script larger than this is not Vega */
#define DATA_CAP_MIN (1u << 20)
#define TOP_MAX	     50 /* rows of a top list */

/* Where the template takes the scripts and the data. */
#define MARK_SCRIPTS "<!--@LES_SCRIPTS@-->"
#define MARK_DATA    "<!--@LES_DATA@-->"

/* The scripts, in the order they load: vega-lite and vega-embed use vega. */
static const char *const scripts[] = {"vega.min.js", "vega-lite.min.js", "vega-embed.min.js"};
#define N_SCRIPTS (sizeof(scripts) / sizeof(scripts[0]))

/* --- the data ---------------------------------------------------------------- */

static const char *key_text(const struct les_report_data *d, uint32_t id)
{
	if (id == LES_REPORT_KEY_NULL)
		return NULL;
	return id == LES_REPORT_KEY_OTHER ? "(other groups)" : d->keys[id];
}

struct total {
	uint32_t key;
	uint64_t count, bytes, errors, latency_ns, rpc_wait_ns;
};

static int by_count(const void *a, const void *b)
{
	const struct total *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* A dimension's rows summed per key, most ops first; *n keys. NULL: out of memory. */
static struct total *totals_of(const struct les_report_data *d, enum les_report_dim dim, size_t *n)
{
	struct total *t = calloc(d->n_keys, sizeof(*t));
	size_t k = 0;

	if (!t)
		return NULL;
	for (size_t i = 0; i < d->n_rows[dim]; i++) {
		const struct les_report_row *r = &d->rows[dim][i];
		struct total *x = &t[r->key];

		x->count += r->count;
		x->bytes += r->bytes;
		x->errors += r->errors;
		x->latency_ns += r->latency_ns;
		x->rpc_wait_ns += r->rpc_wait_ns;
		x->key = r->key + 1; /* 0: no row */
	}
	for (uint32_t i = 0; i < d->n_keys; i++)
		if (t[i].key) {
			t[k] = t[i];
			t[k++].key--;
		}
	qsort(t, k, sizeof(*t), by_count);
	*n = k;
	return t;
}

static void put_top(struct jw *w, const struct les_report_data *d, enum les_report_dim dim)
{
	size_t n = 0;
	struct total *t = totals_of(d, dim, &n);

	jw_key(w, les_report_dims[dim].name);
	jw_obj_begin(w);
	jw_kv_u64(w, "keys", n);
	jw_key(w, "rows");
	jw_arr_begin(w);
	for (size_t i = 0; t && i < n && i < TOP_MAX; i++) {
		jw_obj_begin(w);
		jw_kv_cstr(w, "key", key_text(d, t[i].key));
		jw_kv_u64(w, "ops", t[i].count);
		jw_kv_u64(w, "bytes", t[i].bytes);
		jw_kv_u64(w, "errors", t[i].errors);
		jw_kv_u64(w, "latency_ns", t[i].latency_ns);
		jw_kv_u64(w, "rpc_wait_ns", t[i].rpc_wait_ns);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
	free(t);
}

/*
 * The keys a chart shows by name: the max most active; the others are
 * summed into "(other)" per window. NULL: out of memory.
 */
static bool *shown_keys(const struct les_report_data *d, enum les_report_dim dim, uint32_t max)
{
	bool *shown = calloc(d->n_keys, sizeof(*shown));
	size_t n = 0;
	struct total *t = totals_of(d, dim, &n);

	for (size_t i = 0; shown && t && i < n && i < max; i++)
		shown[t[i].key] = true;
	free(t);
	return shown;
}

static void put_series_row(struct jw *w, const struct les_report_data *d, const char *dim,
			   const char *key, const struct les_report_row *r)
{
	double secs = (double)d->window_ns / 1e9;

	jw_obj_begin(w);
	jw_kv_cstr(w, "dim", dim);
	jw_kv_cstr(w, "key", key);
	jw_kv_u64(w, "t", r->t_ns / 1000000);
	jw_kv_u64(w, "t2", (r->t_ns + d->window_ns) / 1000000);
	jw_kv_u64(w, "ops", r->count);
	jw_kv_u64(w, "bytes", r->bytes);
	jw_kv_double(w, "ops_s", (double)r->count / secs, 3);
	jw_kv_double(w, "bytes_s", (double)r->bytes / secs, 1);
	jw_obj_end(w);
}

/*
 * A dimension's rows per window: the shown keys as they are, the others
 * summed. A window's rows are neighbours (the aggregator writes a window
 * at once), so the sum of the others is written when the window changes.
 */
static void put_series_dim(struct jw *w, const struct les_report_data *d, enum les_report_dim dim,
			   uint32_t max)
{
	bool *shown = shown_keys(d, dim, max);
	struct les_report_row other = {0};
	const char *name = les_report_dims[dim].name;

	for (size_t i = 0; shown && i <= d->n_rows[dim]; i++) {
		const struct les_report_row *r = i < d->n_rows[dim] ? &d->rows[dim][i] : NULL;

		if (other.count && (!r || r->t_ns != other.t_ns)) {
			put_series_row(w, d, name, "(other)", &other);
			memset(&other, 0, sizeof(other));
		}
		if (!r)
			break;
		if (shown[r->key]) {
			put_series_row(w, d, name, key_text(d, r->key) ?: "(none)", r);
			continue;
		}
		other.t_ns = r->t_ns;
		other.count += r->count;
		other.bytes += r->bytes;
	}
	free(shown);
}

static void put_series(struct jw *w, const struct les_report_config *cfg,
		       const struct les_report_data *d)
{
	jw_key(w, "series");
	jw_arr_begin(w);
	for (int i = 0; i < LES_REPORT_DIM_MAX; i++) {
		const struct les_report_dim_row *dim = &les_report_dims[i];

		if (dim->series && (!dim->series_by || (cfg->by & dim->series_by)))
			put_series_dim(w, d, (enum les_report_dim)i, cfg->series_max);
	}
	jw_arr_end(w);
}

static void put_heat(struct jw *w, const struct les_report_data *d)
{
	jw_key(w, "heat");
	jw_arr_begin(w);
	for (size_t i = 0; i < d->n_heat; i++) {
		const struct les_report_heat *h = &d->heat[i];

		jw_obj_begin(w);
		jw_kv_cstr(w, "op", key_text(d, h->key) ?: "(none)");
		jw_kv_u64(w, "t", h->t_ns / 1000000);
		jw_kv_u64(w, "t2", (h->t_ns + d->window_ns) / 1000000);
		jw_kv_u64(w, "lo", 1ULL << h->octave);
		jw_kv_u64(w, "hi", 2ULL << h->octave);
		jw_kv_u64(w, "n", h->n);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

static void put_waits(struct jw *w, const struct les_report_data *d)
{
	double secs = (double)d->window_ns / 1e9;

	jw_key(w, "waits");
	jw_arr_begin(w);
	for (size_t i = 0; i < d->n_waits; i++) {
		const struct les_report_wait *x = &d->waits[i];

		jw_obj_begin(w);
		jw_kv_cstr(w, "target", key_text(d, x->key));
		jw_kv_u64(w, "t", x->t_ns / 1000000);
		jw_kv_u64(w, "n", x->n);
		jw_kv_u64(w, "wait_ns", x->wait_ns);
		/* Seconds waited per second: the requests waiting at once, on average. */
		jw_kv_double(w, "waiting", (double)x->wait_ns / 1e9 / secs, 4);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

static void kv_id(struct jw *w, const char *k, uint64_t v)
{
	if (v)
		jw_kv_u64(w, k, v);
	else
		jw_kv_null(w, k);
}

/* A chain record, its start and end as offsets from the op's start (µs). */
static void put_link(struct jw *w, const struct les_report_slow *s, const struct les_report_link *l)
{
	int64_t start = (int64_t)(s->end_ns - s->latency_ns);

	jw_obj_begin(w);
	jw_kv_cstr(w, "type", l->type);
	jw_kv_cstr(w, "op", l->op);
	jw_kv_cstr(w, "target", l->target);
	jw_kv_cstr(w, "errno_class", l->errno_class);
	jw_kv_double(w, "start_us", (double)((int64_t)(l->end_ns - l->latency_ns) - start) / 1e3,
		     1);
	jw_kv_double(w, "end_us", (double)((int64_t)l->end_ns - start) / 1e3, 1);
	jw_kv_u64(w, "latency_ns", l->latency_ns);
	jw_kv_u64(w, "bytes", l->bytes);
	kv_id(w, "req_id", l->req_id);
	kv_id(w, "xid", l->xid);
	kv_id(w, "wait_id", l->wait_id);
	kv_id(w, "parent_wait_id", l->parent_wait_id);
	jw_obj_end(w);
}

static void put_slow(struct jw *w, const struct les_report_data *d)
{
	jw_key(w, "slow");
	jw_arr_begin(w);
	for (uint32_t i = 0; i < d->n_slow; i++) {
		const struct les_report_slow *s = &d->slow[i];

		jw_obj_begin(w);
		kv_id(w, "op_id", s->op_id);
		jw_kv_time(w, "end", s->end_ns);
		jw_kv_u64(w, "latency_ns", s->latency_ns);
		jw_kv_cstr(w, "op", s->op);
		jw_kv_cstr(w, "job_id", s->job_id);
		jw_kv_cstr(w, "username", s->username);
		jw_kv_cstr(w, "process", s->process);
		jw_kv_cstr(w, "comm", s->comm);
		jw_kv_u64(w, "pid", s->pid);
		jw_kv_cstr(w, "mount", s->mount);
		jw_kv_u64(w, "bytes", s->bytes);
		jw_kv_cstr(w, "errno_class", s->errno_class);
		jw_kv_u64(w, "rpc_count", s->rpc_count);
		jw_kv_u64(w, "rpc_wait_ns", s->rpc_wait_ns);
		jw_key(w, "chain");
		jw_arr_begin(w);
		for (uint32_t j = 0; j < s->n_chain; j++)
			put_link(w, s, &s->chain[j]);
		jw_arr_end(w);
		jw_kv_u64(w, "chain_more", s->chain_more);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

static void put_meta(struct jw *w, const struct les_report_config *cfg,
		     const struct les_report_stats *st, const char *versions)
{
	jw_key(w, "meta");
	jw_obj_begin(w);
	jw_kv_cstr(w, "tool", "lustre-ebpf-stream " LES_VERSION);
	jw_kv_cstr(w, "input", cfg->input_path);
	jw_kv_cstr(w, "scripts", versions);
	if (st->records) {
		jw_kv_time(w, "first", st->first_ns);
		jw_kv_time(w, "last", st->last_ns);
	} else {
		jw_kv_null(w, "first"); /* no record: no time */
		jw_kv_null(w, "last");
	}
	jw_kv_double(w, "window_s", (double)st->window_ns / 1e9, 3);
	jw_kv_u64(w, "lines", st->lines);
	jw_kv_u64(w, "records", st->records);
	jw_kv_u64(w, "malformed", st->malformed);
	jw_kv_u64(w, "too_long", st->too_long);
	jw_kv_bool(w, "truncated", st->truncated);
	jw_kv_u64(w, "series_max", cfg->series_max);
	jw_obj_end(w);
}

static void put_data(struct jw *w, const struct les_report_config *cfg,
		     const struct les_report_data *d, const struct les_report_stats *st,
		     const char *versions)
{
	jw_obj_begin(w);
	put_meta(w, cfg, st, versions);
	put_series(w, cfg, d);
	put_heat(w, d);
	put_waits(w, d);
	jw_key(w, "top");
	jw_obj_begin(w);
	for (int i = 0; i < LES_REPORT_DIM_MAX; i++)
		if (les_report_dims[i].top)
			put_top(w, d, (enum les_report_dim)i);
	jw_obj_end(w);
	put_slow(w, d);
	jw_obj_end(w);
}

/* The data as JSON, in a buffer grown until it fits; the caller frees *buf. */
static int data_json(const struct les_report_config *cfg, const struct les_report_data *d,
		     const struct les_report_stats *st, const char *versions, char **buf,
		     size_t *len)
{
	size_t cap = DATA_CAP_MIN;
	struct jw w;

	for (;;) {
		char *b = realloc(*buf, cap);

		if (!b)
			return -ENOMEM;
		*buf = b;
		jw_init(&w, b, cap);
		put_data(&w, cfg, d, st, versions);
		if (!w.overflow)
			break;
		if (cap > SIZE_MAX / 4)
			return -ENOMEM;
		cap *= 4;
	}
	*len = w.len;
	return 0;
}

/* --- the scripts and the page ------------------------------------------------- */

/* A whole file into memory, NUL-terminated; NULL with errno. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && (size_t)n <= SCRIPT_MAX &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) &&
	    fread(buf, 1, (size_t)n, f) == (size_t)n) {
		buf[n] = '\0';
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
		errno = errno ?: EFBIG;
	}
	fclose(f);
	return buf;
}

/* "</script" in any case: what ends a script element in HTML. */
static bool ends_element(const char *js)
{
	for (const char *p = js; (p = strstr(p, "</")); p += 2)
		if (strncasecmp(p + 2, "script", 6) == 0)
			return true;
	return false;
}

/*
 * One script, ready to inline: its source-map comment cut (the map is not
 * in the page; a browser would look for it). A script that holds
 * "</script" would end the element early: refused, not patched.
 */
static char *load_script(const char *dir, const char *name, size_t *len, char *err, size_t errlen)
{
	char path[4096], *js, *map;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	js = slurp(path, len);
	if (!js) {
		les_report_fail(err, errlen,
				"%s: %s (the report's scripts: --js-dir, docs/report.md)", path,
				strerror(errno));
		return NULL;
	}
	if (strlen(js) != *len || ends_element(js)) {
		les_report_fail(err, errlen,
				"%s: cannot be inlined (a NUL byte or \"</script\" in it)", path);
		free(js);
		return NULL;
	}
	map = strstr(js, "\n//# sourceMappingURL=");
	if (map)
		*len = (size_t)(map - js) + 1;
	return js;
}

/*
 * The data, every '<' as \u003c: only strings hold one, and none ends the
 * element. Returns the bytes written.
 */
static size_t write_data(FILE *f, const char *s, size_t n)
{
	const char *lt;
	size_t out = 0;

	while ((lt = memchr(s, '<', n))) {
		out += fwrite(s, 1, (size_t)(lt - s), f);
		out += fwrite("\\u003c", 1, 6, f);
		n -= (size_t)(lt - s) + 1;
		s = lt + 1;
	}
	return out + fwrite(s, 1, n, f);
}

struct page {
	char *js[N_SCRIPTS];
	size_t js_len[N_SCRIPTS];
	char *versions; /* the scripts' VERSIONS file, if any */
	char *data;
	size_t data_len;
};

static void page_free(struct page *p)
{
	for (size_t i = 0; i < N_SCRIPTS; i++)
		free(p->js[i]);
	free(p->versions);
	free(p->data);
}

/* The page into f; *n: the bytes written (a pipe has no position to ask). */
static int write_page(FILE *f, const struct les_report_config *cfg, const struct page *p, size_t *n)
{
	const char *t = cfg->page, *end = cfg->page + cfg->page_len;
	const char *ms = strstr(t, MARK_SCRIPTS), *md = strstr(t, MARK_DATA);

	if (!ms || !md || md < ms)
		return -1;
	*n = fwrite(t, 1, (size_t)(ms - t), f);
	for (size_t i = 0; i < N_SCRIPTS; i++) {
		int head = fprintf(f, "<script>/* %s */\n", scripts[i]);

		*n += (head > 0 ? (size_t)head : 0) + fwrite(p->js[i], 1, p->js_len[i], f);
		*n += fwrite("\n</script>\n", 1, 11, f);
	}
	t = ms + strlen(MARK_SCRIPTS);
	*n += fwrite(t, 1, (size_t)(md - t), f);
	*n += write_data(f, p->data, p->data_len);
	t = md + strlen(MARK_DATA);
	*n += fwrite(t, 1, (size_t)(end - t), f);
	return 0;
}

/* Into FILE.tmp, renamed over FILE once whole: never half a page under FILE's name. */
static int write_file(const struct les_report_config *cfg, const struct page *p,
		      struct les_report_stats *st, char *err, size_t errlen)
{
	char tmp[4096];
	FILE *f;
	int bad;

	if (strcmp(cfg->output_path, "-") == 0) {
		bad = write_page(stdout, cfg, p, &st->bytes_written) || fflush(stdout);
		return bad ? les_report_fail(err, errlen, "standard output: %s", strerror(errno))
			   : 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", cfg->output_path);
	f = fopen(tmp, "w");
	if (!f)
		return les_report_fail(err, errlen, "%s: %s", tmp, strerror(errno));
	bad = write_page(f, cfg, p, &st->bytes_written);
	bad |= ferror(f);
	bad |= fclose(f);
	if (bad || rename(tmp, cfg->output_path)) {
		les_report_fail(err, errlen, "%s: %s", cfg->output_path, strerror(errno ?: EIO));
		unlink(tmp);
		return -1;
	}
	return 0;
}

int les_report_write(const struct les_report_config *cfg, const struct les_report_data *d,
		     struct les_report_stats *st, char *err, size_t errlen)
{
	struct page p = {0};
	char path[4096];
	size_t n;
	int ret = -1;

	for (size_t i = 0; i < N_SCRIPTS; i++)
		if (!(p.js[i] = load_script(cfg->js_dir, scripts[i], &p.js_len[i], err, errlen)))
			goto out;
	snprintf(path, sizeof(path), "%s/VERSIONS", cfg->js_dir);
	p.versions = slurp(path, &n);
	if (p.versions)
		p.versions[strcspn(p.versions, "\n")] = '\0';
	if (data_json(cfg, d, st, p.versions, &p.data, &p.data_len)) {
		les_report_fail(err, errlen, "out of memory");
		goto out;
	}
	ret = write_file(cfg, &p, st, err, errlen);
out:
	page_free(&p);
	return ret;
}
