// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The JSON writer: any bytes as keys and string values, any numbers, any
 * nesting the input asks for; whatever is written must parse (jansson),
 * and a string must read back as what was written when it was valid UTF-8.
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include "util/json.h"

/* Pull n bytes off the input. */
static const uint8_t *take(const uint8_t **data, size_t *size, size_t n)
{
	const uint8_t *p = *data;

	if (*size < n)
		return NULL;
	*data += n;
	*size -= n;
	return p;
}

static void write_value(struct jw *w, uint8_t op, const uint8_t **data, size_t *size)
{
	const uint8_t *p;
	uint64_t v = 0;
	double d;
	size_t n;

	switch (op % 6) {
	case 0: /* a string of the next len bytes */
		p = take(data, size, 1);
		n = p ? *p : 0;
		p = take(data, size, n);
		jw_str(w, p ? (const char *)p : "", p ? n : 0);
		break;
	case 1:
		p = take(data, size, sizeof(v));
		if (p)
			memcpy(&v, p, sizeof(v));
		jw_u64(w, v);
		break;
	case 2:
		p = take(data, size, sizeof(v));
		if (p)
			memcpy(&v, p, sizeof(v));
		jw_i64(w, (int64_t)v);
		break;
	case 3:
		p = take(data, size, sizeof(d));
		d = 0;
		if (p)
			memcpy(&d, p, sizeof(d));
		jw_double(w, d, op % 10);
		break;
	case 4:
		p = take(data, size, sizeof(v));
		if (p)
			memcpy(&v, p, sizeof(v));
		jw_bool(w, (int)(v & 1));
		break;
	default:
		jw_null(w);
	}
}

/* The whole input as one string: it must come back byte for byte when it is UTF-8. */
static void round_trip(const uint8_t *data, size_t size)
{
	static char buf[6 * 4096 + 64];
	json_t *root, *expect, *got;
	json_error_t jerr;
	struct jw w;

	jw_init(&w, buf, sizeof(buf));
	jw_obj_begin(&w);
	jw_kv_str(&w, "s", (const char *)data, size);
	jw_obj_end(&w);
	if (w.overflow)
		return;
	root = json_loadb(buf, w.len, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &jerr);
	if (!root) {
		fprintf(stderr, "not JSON (%s at %d): %.*s\n", jerr.text, jerr.position, (int)w.len,
			buf);
		__builtin_trap();
	}
	expect = json_stringn((const char *)data, size); /* NULL: not UTF-8 */
	got = json_object_get(root, "s");
	if (expect && !json_equal(expect, got)) {
		fprintf(stderr, "string changed: %.*s\n", (int)w.len, buf);
		__builtin_trap();
	}
	json_decref(expect);
	json_decref(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[4096], key[64];
	unsigned int depth = 0;
	json_error_t jerr;
	const uint8_t *p;
	struct jw w;
	json_t *root;

	if (size <= 4096)
		round_trip(data, size);
	jw_init(&w, buf, sizeof(buf));
	jw_obj_begin(&w);
	while ((p = take(&data, &size, 1))) {
		uint8_t op = *p;
		size_t klen = op >> 4;

		/* Keys are C strings: any bytes but NUL. */
		p = take(&data, &size, klen);
		if (!p)
			break;
		memcpy(key, p, klen);
		key[klen] = '\0';
		if ((op & 0x0f) == 0x0f && depth < 8) {
			jw_key(&w, key);
			jw_obj_begin(&w);
			depth++;
		} else if ((op & 0x0f) == 0x0e && depth) {
			jw_obj_end(&w);
			depth--;
		} else {
			jw_key(&w, key);
			write_value(&w, op, &data, &size);
		}
	}
	while (depth--)
		jw_obj_end(&w);
	jw_obj_end(&w);
	if (w.overflow)
		return 0;
	root = json_loadb(buf, w.len, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &jerr);
	if (!root) {
		fprintf(stderr, "not JSON (%s at %d): %.*s\n", jerr.text, jerr.position, (int)w.len,
			buf);
		__builtin_trap();
	}
	json_decref(root);
	return 0;
}
