// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The report's rows, kept while the capture is read (see report_data.h). */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sink/report_data.h"

const struct les_report_dim_row les_report_dims[LES_REPORT_DIM_MAX] = {
	[LES_REPORT_DIM_JOB] = {.name = "job", .field = LES_GF_JOB_ID, .top = true, .series = true},
	[LES_REPORT_DIM_USER] = {.name = "user",
				 .field = LES_GF_USERNAME,
				 .series_by = LES_REPORT_BY_USER,
				 .top = true,
				 .series = true},
	[LES_REPORT_DIM_PROCESS] = {.name = "process",
				    .field = LES_GF_PROCESS,
				    .series_by = LES_REPORT_BY_PROCESS,
				    .top = true,
				    .series = true},
	[LES_REPORT_DIM_OP] = {.name = "op", .field = LES_GF_OP, .heat = true},
};

#define KEY_SLOTS_MIN 1024

/* Grow an array to hold one more element; 0, or -ENOMEM. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 256;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

struct les_report_data *les_report_data_new(const struct les_report_config *cfg)
{
	struct les_report_data *d = calloc(1, sizeof(*d));

	(void)cfg;
	if (!d)
		return NULL;
	d->key_mask = KEY_SLOTS_MIN - 1;
	d->key_slots = calloc(KEY_SLOTS_MIN, sizeof(*d->key_slots));
	d->wait_mask = KEY_SLOTS_MIN - 1;
	d->wait_slots = calloc(KEY_SLOTS_MIN, sizeof(*d->wait_slots));
	d->cap_keys = 256;
	d->keys = calloc(d->cap_keys, sizeof(*d->keys));
	if (!d->key_slots || !d->wait_slots || !d->keys) {
		les_report_data_free(d);
		return NULL;
	}
	/* Ids 0 and 1: a null field and the overflow group, never looked up by text. */
	d->n_keys = 2;
	return d;
}

void les_report_data_free(struct les_report_data *d)
{
	if (!d)
		return;
	for (uint32_t i = 0; i < d->n_keys; i++)
		free(d->keys[i]);
	free(d->keys);
	free(d->key_slots);
	for (int i = 0; i < LES_REPORT_DIM_MAX; i++)
		free(d->rows[i]);
	free(d->heat);
	free(d->waits);
	free(d->wait_slots);
	free(d);
}

/* --- interned keys --------------------------------------------------------- */

static int rehash_keys(struct les_report_data *d)
{
	uint32_t n = (d->key_mask + 1) * 2, *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t id = 2; id < d->n_keys; id++) {
		uint64_t h = les_key_hash(d->keys[id], strlen(d->keys[id]), 0);
		uint32_t s = (uint32_t)h & (n - 1);

		while (slots[s])
			s = (s + 1) & (n - 1);
		slots[s] = id;
	}
	free(d->key_slots);
	d->key_slots = slots;
	d->key_mask = n - 1;
	return 0;
}

/* The id of key's text (added if new); 0 for NULL; -1 out of memory. */
static int64_t intern(struct les_report_data *d, const char *key)
{
	uint64_t h;
	uint32_t s;
	size_t n;

	if (!key)
		return LES_REPORT_KEY_NULL;
	n = strlen(key);
	h = les_key_hash(key, n, 0);
	for (s = (uint32_t)h & d->key_mask; d->key_slots[s]; s = (s + 1) & d->key_mask)
		if (strcmp(d->keys[d->key_slots[s]], key) == 0)
			return d->key_slots[s];
	if (d->n_keys == d->cap_keys) {
		char **k = realloc(d->keys, 2 * d->cap_keys * sizeof(*k));

		if (!k)
			return -1;
		d->keys = k;
		d->cap_keys *= 2;
	}
	d->keys[d->n_keys] = strdup(key);
	if (!d->keys[d->n_keys])
		return -1;
	d->key_slots[s] = d->n_keys++;
	/* At most half full, so a probe always ends soon. */
	if (2 * (uint64_t)d->n_keys > d->key_mask && rehash_keys(d))
		return -1;
	return d->n_keys - 1;
}

/* --- window lines ---------------------------------------------------------- */

static uint64_t u64_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v)
							       : 0;
}

static uint64_t errors_of(json_t *line)
{
	json_t *errors = json_object_get(line, "errors"), *v;
	const char *k;
	uint64_t n = 0;

	json_object_foreach(errors, k, v) n +=
		json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
	return n;
}

/* The octave of a histogram bucket's lower bound: floor(log2), 6 under 128 ns. */
static uint32_t octave_of(uint64_t lower)
{
	return lower < 128 ? 6 : 63 - (uint32_t)__builtin_clzll(lower);
}

/* A window line's latency_hist ([lower, upper, count] buckets) folded into octaves. */
static int heat_add(struct les_report_data *d, uint64_t t_ns, uint32_t key, json_t *line)
{
	json_t *hist = json_object_get(line, "latency_hist"), *b;
	size_t i, first = d->n_heat;

	json_array_foreach(hist, i, b)
	{
		uint32_t oct = octave_of((uint64_t)json_integer_value(json_array_get(b, 0)));
		uint64_t n = (uint64_t)json_integer_value(json_array_get(b, 2));

		/* Buckets come in order: an octave's are neighbours. */
		if (d->n_heat > first && d->heat[d->n_heat - 1].octave == oct) {
			d->heat[d->n_heat - 1].n += n;
			continue;
		}
		if (grow((void **)&d->heat, &d->cap_heat, d->n_heat, sizeof(*d->heat)))
			return -ENOMEM;
		d->heat[d->n_heat++] = (struct les_report_heat){t_ns, key, oct, n};
	}
	return 0;
}

int les_report_data_window(struct les_report_data *d, enum les_report_dim dim, uint64_t t_ns,
			   json_t *line)
{
	const char *field = les_group_field_name(les_report_dims[dim].field);
	int64_t key;
	struct les_report_row *r;

	d->n_windows[dim]++;
	/* The ops people ran: access records (rpc windows are the requests inside them). */
	if (strcmp(json_string_value(json_object_get(line, "record_type")) ?: "", "access"))
		return 0;
	key = json_is_true(json_object_get(line, "other"))
		      ? LES_REPORT_KEY_OTHER
		      : intern(d, json_string_value(json_object_get(line, field)));
	if (key < 0 || grow((void **)&d->rows[dim], &d->cap_rows[dim], d->n_rows[dim], sizeof(*r)))
		return -ENOMEM;
	r = &d->rows[dim][d->n_rows[dim]++];
	*r = (struct les_report_row){
		.t_ns = t_ns,
		.key = (uint32_t)key,
		.count = u64_of(line, "count"),
		.bytes = u64_of(line, "bytes"),
		.errors = errors_of(line),
		.latency_ns = u64_of(line, "sum_latency_ns"),
		.rpc_wait_ns = u64_of(line, "rpc_wait_ns"),
	};
	return les_report_dims[dim].heat ? heat_add(d, t_ns, r->key, line) : 0;
}

/* --- request waits ----------------------------------------------------------- */

static uint32_t wait_hash(uint64_t t_ns, uint32_t key, uint32_t mask)
{
	uint64_t k[2] = {t_ns, key};

	return (uint32_t)les_key_hash(k, sizeof(k), 0) & mask;
}

static int rehash_waits(struct les_report_data *d)
{
	uint32_t n = (d->wait_mask + 1) * 2, *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < d->n_waits; i++) {
		uint32_t s = wait_hash(d->waits[i].t_ns, d->waits[i].key, n - 1);

		while (slots[s])
			s = (s + 1) & (n - 1);
		slots[s] = (uint32_t)i + 1;
	}
	free(d->wait_slots);
	d->wait_slots = slots;
	d->wait_mask = n - 1;
	return 0;
}

int les_report_data_wait(struct les_report_data *d, uint64_t t_ns, const char *key,
			 uint64_t wait_ns)
{
	int64_t id = intern(d, key);
	struct les_report_wait *w;
	uint32_t s;

	if (id < 0)
		return -ENOMEM;
	for (s = wait_hash(t_ns, (uint32_t)id, d->wait_mask); d->wait_slots[s];
	     s = (s + 1) & d->wait_mask) {
		w = &d->waits[d->wait_slots[s] - 1];
		if (w->t_ns == t_ns && w->key == (uint32_t)id) {
			w->wait_ns += wait_ns;
			w->n++;
			return 0;
		}
	}
	if (grow((void **)&d->waits, &d->cap_waits, d->n_waits, sizeof(*d->waits)))
		return -ENOMEM;
	d->waits[d->n_waits] = (struct les_report_wait){t_ns, (uint32_t)id, wait_ns, 1};
	d->wait_slots[s] = (uint32_t)++d->n_waits;
	if (2 * (uint64_t)d->n_waits > d->wait_mask)
		return rehash_waits(d);
	return 0;
}

int les_report_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}
