/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one JSON writer: a streaming encoder into a caller-owned fixed
 * buffer. No allocation, no locale, no printf on the record path.
 *
 * Values are appended in document order; commas are inserted from the
 * nesting state. When something does not fit (or the nesting is misused)
 * the overflow flag is set, nothing more is written and the contents are
 * invalid: the caller drops or retries the record with a larger buffer.
 * The buffer is never NUL-terminated; len bytes are valid.
 *
 * Strings are escaped as RFC 8259 requires and made valid UTF-8: each byte
 * that is not part of a well-formed UTF-8 sequence (stray continuation,
 * overlong form, UTF-16 surrogate, code point above U+10FFFF, truncated
 * sequence) becomes U+FFFD, so every line can be read by strict parsers.
 */
#ifndef LES_JSON_H
#define LES_JSON_H

#include <stddef.h>
#include <stdint.h>

#define JW_MAX_DEPTH	  16 /* nesting levels, top level included */
#define JW_RFC3339_NS_LEN 30 /* strlen("2026-11-30T01:02:03.123456789Z") */

struct jw {
	char *buf;
	size_t cap;
	size_t len;
	int overflow;	/* set when output did not fit; contents then invalid */
	unsigned depth; /* nesting, for comma logic */
	unsigned char need_comma[JW_MAX_DEPTH]; /* per depth */
};

void jw_init(struct jw *w, char *buf, size_t cap);
/* Start over in the same buffer: len = 0, depth = 0, overflow = 0. */
void jw_reset(struct jw *w);

void jw_obj_begin(struct jw *w);
void jw_obj_end(struct jw *w);
void jw_arr_begin(struct jw *w);
void jw_arr_end(struct jw *w);

/* An object key; meant for C literals but escaped all the same. */
void jw_key(struct jw *w, const char *key);

/* String values. */
void jw_str(struct jw *w, const char *s, size_t n);    /* arbitrary bytes */
void jw_cstr(struct jw *w, const char *s);	       /* NUL-terminated; NULL -> null */
void jw_strz(struct jw *w, const char *s, size_t max); /* up to NUL or max, e.g. comm[16] */

/* Scalars. */
void jw_u64(struct jw *w, uint64_t v);
void jw_i64(struct jw *w, int64_t v);
/* Fixed decimals (0..9); NaN and infinities are written as null. Not hot. */
void jw_double(struct jw *w, double v, int decimals);
void jw_bool(struct jw *w, int v);
void jw_null(struct jw *w);
/* A value already encoded as JSON, copied verbatim. */
void jw_raw(struct jw *w, const char *json, size_t n);
/*
 * Object members already encoded, '"a":1,"b":2' without braces, spliced
 * into the current object with the comma logic of a key. Nothing for n 0.
 */
void jw_raw_members(struct jw *w, const char *members, size_t n);

/*
 * An object written whole from the buffer's start, turned into its members
 * alone ('"a":1,"b":2', braces removed, moved to the start) for splicing
 * with jw_raw_members later. Returns their length, 0 when the object
 * overflowed (an empty object's is 0 too).
 */
size_t jw_members(struct jw *w);

/* End of a JSON Line: '\n'; the next top-level value starts a new line. */
void jw_newline(struct jw *w);

/* Key + value. */
void jw_kv_u64(struct jw *w, const char *k, uint64_t v);
void jw_kv_i64(struct jw *w, const char *k, int64_t v);
void jw_kv_str(struct jw *w, const char *k, const char *s, size_t n);
void jw_kv_cstr(struct jw *w, const char *k, const char *s);
void jw_kv_strz(struct jw *w, const char *k, const char *s, size_t max);
void jw_kv_double(struct jw *w, const char *k, double v, int decimals);
void jw_kv_bool(struct jw *w, const char *k, int v);
void jw_kv_null(struct jw *w, const char *k);
void jw_kv_raw(struct jw *w, const char *k, const char *json, size_t n);

/*
 * Members whose key is a C string literal, the per-record path's: the key
 * is pasted as "key": at compile time, so no key is measured or scanned
 * per record. The literal must need no escaping (field names never do).
 *
 *	jw_lit_u64(w, JW_LIT("pid"), pid);
 */
#define JW_LIT(k) ("\"" k "\":"), (sizeof("\"" k "\":") - 1)
void jw_lit_key(struct jw *w, const char *key_colon, size_t n);
void jw_lit_u64(struct jw *w, const char *key_colon, size_t n, uint64_t v);
void jw_lit_i64(struct jw *w, const char *key_colon, size_t n, int64_t v);
void jw_lit_str(struct jw *w, const char *key_colon, size_t n, const char *s, size_t len);
void jw_lit_cstr(struct jw *w, const char *key_colon, size_t n, const char *s);
void jw_lit_strz(struct jw *w, const char *key_colon, size_t n, const char *s, size_t max);
void jw_lit_null(struct jw *w, const char *key_colon, size_t n);
void jw_lit_time(struct jw *w, const char *key_colon, size_t n, uint64_t epoch_ns);

/*
 * RFC 3339 UTC time with nanoseconds, 2026-11-30T01:02:03.123456789Z, from
 * nanoseconds since the epoch. Writes JW_RFC3339_NS_LEN bytes and a NUL;
 * returns JW_RFC3339_NS_LEN, or 0 (and writes nothing) when cap is smaller
 * than JW_RFC3339_NS_LEN + 1.
 */
size_t jw_format_rfc3339_ns(char *out, size_t cap, uint64_t epoch_ns);
void jw_kv_time(struct jw *w, const char *k, uint64_t epoch_ns);

#endif /* LES_JSON_H */
