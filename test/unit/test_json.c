// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The JSON writer, checked against exact bytes and against jansson as a parser. */
#include <check.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "util/json.h"

#define CANARY	    0xa5
#define CANARY_SIZE 16

static char out[65536];

/* The writer's output must be exactly expected (a C string). */
static void assert_output(const struct jw *w, const char *expected)
{
	size_t n = strlen(expected);

	ck_assert_msg(!w->overflow, "unexpected overflow");
	ck_assert_msg(w->len == n && !memcmp(w->buf, expected, n), "got '%.*s', want '%s'",
		      (int)w->len, w->buf, expected);
}

/* --- random numbers: a fixed, printed seed makes failures replayable ---- */

static uint64_t rng_state;
static uint64_t rng_seed;

static void rng_init(void)
{
	const char *env = getenv("LES_TEST_SEED");

	rng_seed = env ? strtoull(env, NULL, 0) : 0x6a736f6e31ULL;
	rng_state = rng_seed;
}

/* splitmix64 */
static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned rng_below(unsigned n)
{
	return (unsigned)(rng_next() % n);
}

/* --- values ------------------------------------------------------------ */

START_TEST(test_every_value_kind)
{
	struct jw w;
	const char comm[16] = "commandname";
	const char with_nul[5] = {'a', 'b', '\0', 'c', 'd'};

	jw_init(&w, out, sizeof(out));
	jw_arr_begin(&w);
	jw_u64(&w, 0);
	jw_u64(&w, UINT64_MAX);
	jw_i64(&w, INT64_MIN);
	jw_i64(&w, INT64_MAX);
	jw_i64(&w, -1);
	jw_bool(&w, 1);
	jw_bool(&w, 0);
	jw_null(&w);
	jw_str(&w, "s", 1);
	jw_str(&w, "", 0);
	jw_cstr(&w, "cs");
	jw_cstr(&w, NULL);
	jw_strz(&w, comm, 4);
	jw_strz(&w, comm, sizeof(comm));
	jw_strz(&w, with_nul, sizeof(with_nul));
	jw_raw(&w, "{\"x\":1}", 7);
	jw_double(&w, 1.5, 3);
	jw_arr_end(&w);
	assert_output(&w, "[0,18446744073709551615,-9223372036854775808,9223372036854775807,-1,"
			  "true,false,null,\"s\",\"\",\"cs\",null,\"comm\",\"commandname\",\"ab\","
			  "{\"x\":1},1.500]");
}
END_TEST

START_TEST(test_key_value_helpers)
{
	struct jw w;
	const char comm[4] = {'b', 'a', 's', 'h'}; /* no NUL at all */

	jw_init(&w, out, sizeof(out));
	jw_obj_begin(&w);
	jw_kv_u64(&w, "u", 7);
	jw_kv_i64(&w, "i", -7);
	jw_kv_str(&w, "s", "abc", 2);
	jw_kv_cstr(&w, "c", "x");
	jw_kv_cstr(&w, "n", NULL);
	jw_kv_strz(&w, "comm", comm, sizeof(comm));
	jw_kv_double(&w, "d", 0.25, 2);
	jw_kv_bool(&w, "b", 1);
	jw_kv_null(&w, "z");
	jw_kv_raw(&w, "r", "[1]", 3);
	jw_kv_time(&w, "t", 1000000001ULL);
	jw_obj_end(&w);
	assert_output(&w, "{\"u\":7,\"i\":-7,\"s\":\"ab\",\"c\":\"x\",\"n\":null,\"comm\":\"bash\","
			  "\"d\":0.25,\"b\":true,\"z\":null,\"r\":[1],"
			  "\"t\":\"1970-01-01T00:00:01.000000001Z\"}");
}
END_TEST

START_TEST(test_double)
{
	static const struct {
		double v;
		int decimals;
		const char *want;
	} cases[] = {
		{0.0, 0, "0"},		{0.0, 3, "0.000"},
		{1.5, 1, "1.5"},	{2.5, 0, "3"},
		{-1.75, 1, "-1.8"},	{-0.0001, 2, "0.00"},
		{123.456, 2, "123.46"}, {0.001, 3, "0.001"},
		{1e6, 0, "1000000"},	{42.0, 12, "42.000000000"},
		{7.0, -3, "7"},		{1e300, 2, "1.0000000000000001e+300"},
	};
	struct jw w;
	char want[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		jw_init(&w, out, sizeof(out));
		jw_double(&w, cases[i].v, cases[i].decimals);
		assert_output(&w, cases[i].want);
	}
	jw_init(&w, out, sizeof(out));
	jw_arr_begin(&w);
	jw_double(&w, NAN, 2);
	jw_double(&w, INFINITY, 2);
	jw_double(&w, -INFINITY, 2);
	jw_arr_end(&w);
	assert_output(&w, "[null,null,null]");

	/* Huge values must still be a JSON number that parses back to v. */
	jw_init(&w, out, sizeof(out));
	jw_double(&w, -3.5e19, 1);
	snprintf(want, sizeof(want), "%.*s", (int)w.len, out);
	ck_assert_double_eq(strtod(want, NULL), -3.5e19);
}
END_TEST

/* --- structure --------------------------------------------------------- */

START_TEST(test_nesting_and_commas)
{
	struct jw w;

	jw_init(&w, out, sizeof(out));
	jw_obj_begin(&w);
	jw_kv_u64(&w, "a", 1);
	jw_key(&w, "b");
	jw_arr_begin(&w);
	jw_u64(&w, 1);
	jw_u64(&w, 2);
	jw_obj_begin(&w);
	jw_obj_end(&w);
	jw_arr_begin(&w);
	jw_arr_end(&w);
	jw_null(&w);
	jw_arr_end(&w);
	jw_kv_cstr(&w, "c", "x");
	jw_key(&w, "d");
	jw_obj_begin(&w);
	jw_kv_bool(&w, "e", 1);
	jw_key(&w, "f");
	jw_arr_begin(&w);
	jw_obj_begin(&w);
	jw_obj_end(&w);
	jw_obj_begin(&w);
	jw_kv_u64(&w, "g", 3);
	jw_obj_end(&w);
	jw_arr_end(&w);
	jw_obj_end(&w);
	jw_obj_end(&w);
	jw_newline(&w);
	jw_obj_begin(&w);
	jw_obj_end(&w);
	jw_newline(&w);
	jw_arr_begin(&w);
	jw_arr_end(&w);
	jw_newline(&w);
	assert_output(&w, "{\"a\":1,\"b\":[1,2,{},[],null],\"c\":\"x\","
			  "\"d\":{\"e\":true,\"f\":[{},{\"g\":3}]}}\n{}\n[]\n");
	ck_assert_uint_eq(w.depth, 0);
}
END_TEST

START_TEST(test_raw_members)
{
	struct jw w;

	jw_init(&w, out, sizeof(out));
	jw_obj_begin(&w);
	jw_raw_members(&w, "\"h\":\"x\"", strlen("\"h\":\"x\""));
	jw_kv_u64(&w, "a", 1);
	jw_raw_members(&w, "", 0);
	jw_raw_members(&w, "\"b\":2,\"c\":3", strlen("\"b\":2,\"c\":3"));
	jw_obj_end(&w);
	jw_newline(&w);
	jw_obj_begin(&w);
	jw_kv_u64(&w, "a", 1);
	jw_raw_members(&w, "\"b\":2", strlen("\"b\":2"));
	jw_obj_end(&w);
	assert_output(&w, "{\"h\":\"x\",\"a\":1,\"b\":2,\"c\":3}\n{\"a\":1,\"b\":2}");
}
END_TEST

START_TEST(test_reset)
{
	struct jw w;

	jw_init(&w, out, 4);
	jw_cstr(&w, "too long");
	ck_assert(w.overflow);
	jw_init(&w, out, sizeof(out));
	jw_obj_begin(&w);
	jw_kv_u64(&w, "a", 1);
	jw_reset(&w);
	ck_assert(!w.overflow);
	jw_obj_begin(&w);
	jw_kv_u64(&w, "b", 2);
	jw_obj_end(&w);
	assert_output(&w, "{\"b\":2}");
}
END_TEST

START_TEST(test_nesting_limits)
{
	struct jw w;
	int i;

	/* JW_MAX_DEPTH - 1 levels fit. */
	jw_init(&w, out, sizeof(out));
	for (i = 0; i < JW_MAX_DEPTH - 1; i++)
		jw_arr_begin(&w);
	for (i = 0; i < JW_MAX_DEPTH - 1; i++)
		jw_arr_end(&w);
	ck_assert(!w.overflow);
	ck_assert_uint_eq(w.len, 2 * (JW_MAX_DEPTH - 1));

	/* One more cannot be followed: flagged instead of corrupting need_comma[]. */
	jw_init(&w, out, sizeof(out));
	for (i = 0; i < JW_MAX_DEPTH; i++)
		jw_arr_begin(&w);
	ck_assert(w.overflow);
	ck_assert_uint_lt(w.depth, JW_MAX_DEPTH);

	/* Closing what was never opened is flagged too. */
	jw_init(&w, out, sizeof(out));
	jw_obj_end(&w);
	ck_assert(w.overflow);
}
END_TEST

/* --- escapes ----------------------------------------------------------- */

/* jw_str(in, n) must give exactly "body". */
static void assert_str(const char *in, size_t n, const char *body)
{
	struct jw w;
	char want[1024];

	snprintf(want, sizeof(want), "\"%s\"", body);
	jw_init(&w, out, sizeof(out));
	jw_str(&w, in, n);
	assert_output(&w, want);
}

START_TEST(test_escapes)
{
	static const char *const control[0x20] = {
		"\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006",
		"\\u0007", "\\b",     "\\t",	 "\\n",	    "\\u000b", "\\f",	  "\\r",
		"\\u000e", "\\u000f", "\\u0010", "\\u0011", "\\u0012", "\\u0013", "\\u0014",
		"\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019", "\\u001a", "\\u001b",
		"\\u001c", "\\u001d", "\\u001e", "\\u001f",
	};
	struct jw w;

	for (int c = 0; c < 0x20; c++) {
		char in = (char)c;

		assert_str(&in, 1, control[c]);
	}
	assert_str("\"", 1, "\\\"");
	assert_str("\\", 1, "\\\\");
	assert_str("/", 1, "/");
	assert_str("\x7f", 1, "\x7f");
	assert_str("a\"b\\c\nd\te\x01", 10, "a\\\"b\\\\c\\nd\\te\\u0001");
	assert_str("end\0mid", 7, "end\\u0000mid");

	/* Keys are escaped too, even though they are meant to be literals. */
	jw_init(&w, out, sizeof(out));
	jw_obj_begin(&w);
	jw_kv_u64(&w, "q\"k\n", 1);
	jw_obj_end(&w);
	assert_output(&w, "{\"q\\\"k\\n\":1}");
}
END_TEST

#define FFFD "\xef\xbf\xbd"

START_TEST(test_invalid_utf8)
{
	/* stray continuation bytes */
	assert_str("\x80", 1, FFFD);
	assert_str("a\xbf"
		   "b",
		   3, "a" FFFD "b");
	assert_str("\x80\x81\x82", 3, FFFD FFFD FFFD);
	/* overlong forms */
	assert_str("\xc0\xaf", 2, FFFD FFFD);
	assert_str("\xc1\xbf", 2, FFFD FFFD);
	assert_str("\xe0\x80\xaf", 3, FFFD FFFD FFFD);
	assert_str("\xe0\x9f\xbf", 3, FFFD FFFD FFFD);
	assert_str("\xf0\x80\x80\xaf", 4, FFFD FFFD FFFD FFFD);
	assert_str("\xf0\x8f\xbf\xbf", 4, FFFD FFFD FFFD FFFD);
	/* UTF-16 surrogates encoded in UTF-8 */
	assert_str("\xed\xa0\x80", 3, FFFD FFFD FFFD);
	assert_str("\xed\xbf\xbf", 3, FFFD FFFD FFFD);
	assert_str("\xed\xa0\xbd\xed\xb8\x80", 6, FFFD FFFD FFFD FFFD FFFD FFFD);
	/* above U+10FFFF */
	assert_str("\xf4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD);
	assert_str("\xf5\x80\x80\x80", 4, FFFD FFFD FFFD FFFD);
	assert_str("\xf8\x88\x80\x80\x80", 5, FFFD FFFD FFFD FFFD FFFD);
	assert_str("\xfe\xff", 2, FFFD FFFD);
	/* truncated sequences, at the end and before other bytes */
	assert_str("\xc3", 1, FFFD);
	assert_str("\xe2\x82", 2, FFFD FFFD);
	assert_str("\xe2\x82"
		   "A",
		   3, FFFD FFFD "A");
	assert_str("\xf0\x9f\x98", 3, FFFD FFFD FFFD);
	assert_str("\xf0\x9f\x98\"", 4, FFFD FFFD FFFD "\\\"");
	assert_str("x\xe2\xe2\x82\xac", 5, "x" FFFD "\xe2\x82\xac");
}
END_TEST

START_TEST(test_valid_utf8_passes)
{
	static const char *const valid[] = {
		"\xc2\x80",	    /* U+0080 */
		"\xdf\xbf",	    /* U+07FF */
		"\xe0\xa0\x80",	    /* U+0800 */
		"\xed\x9f\xbf",	    /* U+D7FF */
		"\xee\x80\x80",	    /* U+E000 */
		"\xef\xbf\xbf",	    /* U+FFFF */
		"\xef\xbf\xbd",	    /* U+FFFD itself */
		"\xf0\x90\x80\x80", /* U+10000 */
		"\xf4\x8f\xbf\xbf", /* U+10FFFF */
		"h\xc3\xa9llo w\xc3\xb6rld \xe2\x82\xac \xf0\x9f\x98\x80 \xe6\x97\xa5\xe6\x9c\xac",
	};

	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
		assert_str(valid[i], strlen(valid[i]), valid[i]);
}
END_TEST

/* --- random strings against jansson ------------------------------------- */

/*
 * The reference: decode each sequence the obvious way (lead byte gives the
 * length, continuation bytes give the bits) and keep it only if the code
 * point is in range, not a surrogate and not overlong; otherwise replace
 * the lead byte by U+FFFD and go on with the next byte.
 */
static size_t ref_sanitize(const unsigned char *s, size_t n, unsigned char *dst)
{
	size_t i = 0, o = 0;

	while (i < n) {
		unsigned char c = s[i];
		size_t len = 0, k;
		uint32_t cp = 0, min = 0;
		int ok;

		if (c < 0x80) {
			dst[o++] = c;
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			len = 2;
			cp = c & 0x1f;
			min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3;
			cp = c & 0x0f;
			min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4;
			cp = c & 0x07;
			min = 0x10000;
		}
		ok = len && i + len <= n;
		for (k = 1; ok && k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				ok = 0;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (ok && (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)))
			ok = 0;
		if (ok) {
			memcpy(dst + o, s + i, len);
			o += len;
			i += len;
		} else {
			memcpy(dst + o, FFFD, 3);
			o += 3;
			i++;
		}
	}
	return o;
}

static size_t put_utf8(unsigned char *p, uint32_t cp)
{
	if (cp < 0x80) {
		p[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		p[0] = (unsigned char)(0xc0 | cp >> 6);
		p[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		p[0] = (unsigned char)(0xe0 | cp >> 12);
		p[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		p[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	p[0] = (unsigned char)(0xf0 | cp >> 18);
	p[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
	p[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
	p[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

#define RAND_STR_MAX 300

/* A code point below a random limit, so that every UTF-8 length is common. */
static uint32_t random_code_point(int valid_only)
{
	static const uint32_t limits[] = {0x80, 0x800, 0x10000, 0x110000, 0x200000};
	uint32_t cp;

	do
		cp = (uint32_t)(rng_next() % limits[rng_below(valid_only ? 4 : 5)]);
	while (valid_only && cp >= 0xd800 && cp <= 0xdfff);
	return cp;
}

/*
 * Up to RAND_STR_MAX bytes, in one of three kinds: uniformly random bytes
 * (every byte value, mostly invalid UTF-8), well-formed UTF-8 of random
 * code points, or a mix of random bytes and encodings of any value below
 * 2^21 (surrogates and beyond U+10FFFF included).
 */
static size_t random_string(unsigned char *s)
{
	size_t len = rng_below(RAND_STR_MAX + 1), i = 0;
	unsigned kind = rng_below(3);

	while (i < len) {
		unsigned char seq[4];
		size_t n;

		if (kind == 0 || (kind == 2 && rng_below(4) == 0)) {
			s[i++] = (unsigned char)rng_next();
			continue;
		}
		n = put_utf8(seq, random_code_point(kind == 1));
		if (i + n > len)
			break;
		memcpy(s + i, seq, n);
		i += n;
	}
	return i;
}

/* A parsed string value must be the reference decoding of the n bytes at s. */
static void assert_decoded(json_t *v, const char *what, const unsigned char *s, size_t n, int iter)
{
	static unsigned char want[3 * RAND_STR_MAX];
	size_t want_len = ref_sanitize(s, n, want);

	ck_assert_msg(json_is_string(v), "seed %#" PRIx64 " iteration %d: %s not a string",
		      rng_seed, iter, what);
	ck_assert_msg(json_string_length(v) == want_len &&
			      !memcmp(json_string_value(v), want, want_len),
		      "seed %#" PRIx64 " iteration %d: %s differs", rng_seed, iter, what);
}

/*
 * Every byte value at every position of an ASCII run: the 8-bytes-at-a-time
 * scan must notice each byte that needs care, wherever it sits in a word.
 */
START_TEST(test_every_byte_in_ascii_runs)
{
	unsigned char s[40];
	struct jw w;

	for (unsigned byte = 0; byte < 256; byte++) {
		for (size_t len = 1; len <= sizeof(s); len++) {
			for (size_t pos = 0; pos < len; pos++) {
				json_error_t err;
				json_t *v;

				memset(s, 'a' + (int)(len % 26), len);
				s[pos] = (unsigned char)byte;
				jw_init(&w, out, sizeof(out));
				jw_str(&w, (const char *)s, len);
				v = json_loadb(out, w.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
				ck_assert_msg(v != NULL, "byte %#x at %zu of %zu: %s", byte, pos,
					      len, err.text);
				assert_decoded(v, "run", s, len, (int)byte);
				json_decref(v);
				if (byte >= 0x20 && byte < 0x80 && byte != '"' && byte != '\\')
					ck_assert_uint_eq(w.len, len + 2);
			}
		}
	}
}
END_TEST

static int is_valid_utf8(const unsigned char *s, size_t n)
{
	unsigned char tmp[3 * RAND_STR_MAX];

	return ref_sanitize(s, n, tmp) == n && !memcmp(tmp, s, n);
}

START_TEST(test_random_strings_jansson)
{
	unsigned char a[RAND_STR_MAX + 1], b[RAND_STR_MAX + 1], c[RAND_STR_MAX + 1];
	int valid_seen = 0, invalid_seen = 0;
	struct jw w;

	rng_init();
	for (int iter = 0; iter < 20000; iter++) {
		size_t na = random_string(a), nb = random_string(b), nc = random_string(c);
		json_error_t err;
		json_t *root;

		b[nb] = '\0';
		nb = strlen((char *)b); /* what jw_cstr will see */
		if (is_valid_utf8(a, na))
			valid_seen++;
		else
			invalid_seen++;

		jw_init(&w, out, sizeof(out));
		jw_obj_begin(&w);
		jw_kv_u64(&w, "i", (uint64_t)iter);
		jw_kv_str(&w, "a", (const char *)a, na);
		jw_kv_cstr(&w, "b", (const char *)b);
		jw_kv_strz(&w, "c", (const char *)c, nc);
		jw_key(&w, "arr");
		jw_arr_begin(&w);
		jw_str(&w, (const char *)a, na);
		jw_u64(&w, rng_next() >> 1);
		jw_arr_end(&w);
		jw_obj_end(&w);
		jw_newline(&w);

		ck_assert_msg(!w.overflow, "seed %#" PRIx64 " iteration %d: overflow", rng_seed,
			      iter);
		ck_assert_msg(memchr(out, '\n', w.len - 1) == NULL && out[w.len - 1] == '\n',
			      "seed %#" PRIx64 " iteration %d: not one line", rng_seed, iter);
		root = json_loadb(out, w.len, JSON_ALLOW_NUL, &err);
		ck_assert_msg(root != NULL, "seed %#" PRIx64 " iteration %d: jansson: %s: %.*s",
			      rng_seed, iter, err.text, (int)w.len, out);
		assert_decoded(json_object_get(root, "a"), "a", a, na, iter);
		assert_decoded(json_object_get(root, "b"), "b", b, nb, iter);
		assert_decoded(json_object_get(root, "c"), "c", c, strnlen((char *)c, nc), iter);
		assert_decoded(json_array_get(json_object_get(root, "arr"), 0), "arr[0]", a, na,
			       iter);
		ck_assert_int_eq(json_integer_value(json_object_get(root, "i")), iter);
		json_decref(root);
	}
	/* The generator must have exercised both paths. */
	ck_assert_int_gt(valid_seen, 2000);
	ck_assert_int_gt(invalid_seen, 2000);
}
END_TEST

/* --- integers ------------------------------------------------------------ */

static void assert_u64_text(uint64_t v)
{
	struct jw w;
	char want[32];

	snprintf(want, sizeof(want), "%" PRIu64, v);
	jw_init(&w, out, sizeof(out));
	jw_u64(&w, v);
	assert_output(&w, want);
}

static void assert_i64_jansson(int64_t v)
{
	struct jw w;
	json_error_t err;
	json_t *j;

	jw_init(&w, out, sizeof(out));
	jw_arr_begin(&w);
	jw_i64(&w, v);
	jw_arr_end(&w);
	j = json_loadb(out, w.len, 0, &err);
	ck_assert_msg(j != NULL, "jansson: %s", err.text);
	ck_assert_msg(json_integer_value(json_array_get(j, 0)) == (json_int_t)v,
		      "seed %#" PRIx64 ": %" PRId64 " did not round-trip", rng_seed, v);
	json_decref(j);
}

START_TEST(test_integers)
{
	static const uint64_t edges[] = {
		0,
		1,
		9,
		10,
		11,
		99,
		100,
		101,
		999,
		1000,
		65535,
		4294967295ULL,
		9999999999999999999ULL,
		10000000000000000000ULL,
		(uint64_t)INT64_MAX,
		(uint64_t)INT64_MAX + 1,
		UINT64_MAX,
	};

	rng_init();
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		assert_u64_text(edges[i]);
	assert_i64_jansson(INT64_MIN);
	assert_i64_jansson(INT64_MAX);
	assert_i64_jansson(0);
	assert_i64_jansson(-1);
	for (int i = 0; i < 20000; i++) {
		/* Spread over all magnitudes, not just 19-20 digit numbers. */
		uint64_t v = rng_next() >> rng_below(64);

		assert_u64_text(v);
		if (v <= INT64_MAX) {
			assert_i64_jansson((int64_t)v);
			assert_i64_jansson(-(int64_t)v);
		}
	}
}
END_TEST

/* --- overflow ------------------------------------------------------------ */

static void write_sample(struct jw *w)
{
	jw_obj_begin(w);
	jw_kv_time(w, "time", 1764464523123456789ULL);
	jw_kv_cstr(w, "op", "read");
	jw_kv_u64(w, "bytes", 1048576);
	jw_kv_i64(w, "err", -5);
	jw_kv_str(w, "path", "/mnt/a \"b\"\n\xff\xe2\x82\xac", 15);
	jw_kv_double(w, "ms", 12.345, 3);
	jw_lit_u64(w, JW_LIT("op_id"), 18446744073709551615ULL);
	jw_lit_i64(w, JW_LIT("errno"), -110);
	jw_lit_time(w, JW_LIT("ts"), 1764464523000000001ULL);
	jw_lit_strz(w, JW_LIT("comm"), "dd\"x", 16);
	jw_lit_null(w, JW_LIT("job_id"));
	jw_key(w, "list");
	jw_arr_begin(w);
	jw_bool(w, 1);
	jw_null(w);
	jw_arr_end(w);
	jw_obj_end(w);
	jw_newline(w);
}

START_TEST(test_overflow)
{
	struct jw w;
	char full[1024];
	size_t full_len;

	jw_init(&w, full, sizeof(full));
	write_sample(&w);
	ck_assert(!w.overflow);
	full_len = w.len;

	for (size_t cap = 0; cap <= full_len + 2; cap++) {
		unsigned char *buf = malloc(cap + CANARY_SIZE);

		ck_assert_ptr_nonnull(buf);
		memset(buf, CANARY, cap + CANARY_SIZE);
		jw_init(&w, (char *)buf, cap);
		write_sample(&w);
		ck_assert_msg(w.overflow == (cap < full_len), "cap %zu: overflow %d", cap,
			      w.overflow);
		ck_assert_uint_le(w.len, cap);
		for (size_t i = cap; i < cap + CANARY_SIZE; i++)
			ck_assert_msg(buf[i] == CANARY, "cap %zu: byte %zu written", cap, i);
		if (!w.overflow)
			ck_assert(w.len == full_len && !memcmp(buf, full, full_len));
		free(buf);
	}
}
END_TEST

START_TEST(test_overflow_latches)
{
	struct jw w;
	size_t len;

	jw_init(&w, out, 8);
	jw_arr_begin(&w);
	jw_cstr(&w, "0123456789");
	ck_assert(w.overflow);
	len = w.len;
	jw_u64(&w, 1); /* would fit, but the record is already lost */
	jw_arr_end(&w);
	ck_assert_uint_eq(w.len, len);
	ck_assert(w.overflow);
}
END_TEST

/* --- time ---------------------------------------------------------------- */

static void assert_time(uint64_t ns)
{
	time_t secs = (time_t)(ns / 1000000000ULL);
	char want[64], got[JW_RFC3339_NS_LEN + 1];
	struct tm tm;
	size_t n;

	ck_assert_ptr_nonnull(gmtime_r(&secs, &tm));
	n = strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(want + n, sizeof(want) - n, ".%09uZ", (unsigned)(ns % 1000000000ULL));
	ck_assert_uint_eq(jw_format_rfc3339_ns(got, sizeof(got), ns), JW_RFC3339_NS_LEN);
	ck_assert_msg(!strcmp(got, want), "seed %#" PRIx64 ": %" PRIu64 " -> %s, want %s", rng_seed,
		      ns, got, want);
}

static uint64_t epoch_ns_of(int year, int month, int day, int sec_of_day)
{
	struct tm tm = {.tm_year = year - 1900, .tm_mon = month - 1, .tm_mday = day};

	return ((uint64_t)timegm(&tm) + (uint64_t)sec_of_day) * 1000000000ULL;
}

START_TEST(test_rfc3339)
{
	/* Leap days, the days around them, and years that are not leap. */
	static const int days[][3] = {
		{1970, 1, 1},  {1972, 2, 29}, {1972, 3, 1},   {1999, 12, 31},
		{2000, 2, 28}, {2000, 2, 29}, {2000, 3, 1},   {2001, 2, 28},
		{2001, 3, 1},  {2024, 2, 29}, {2024, 12, 31}, {2038, 1, 19},
		{2096, 2, 29}, {2100, 2, 28}, {2100, 3, 1},   {2100, 12, 31},
	};
	char got[JW_RFC3339_NS_LEN + 1];

	rng_init();
	for (size_t i = 0; i < sizeof(days) / sizeof(days[0]); i++) {
		uint64_t day = epoch_ns_of(days[i][0], days[i][1], days[i][2], 0);

		assert_time(day);
		assert_time(day + 999999999ULL);
		assert_time(day + 86399ULL * 1000000000ULL + 999999999ULL);
		assert_time(day + 43210ULL * 1000000000ULL + 7ULL);
	}
	ck_assert_uint_eq(jw_format_rfc3339_ns(got, sizeof(got), 951782400ULL * 1000000000ULL),
			  JW_RFC3339_NS_LEN);
	ck_assert_str_eq(got, "2000-02-29T00:00:00.000000000Z");
	assert_time(UINT64_MAX); /* 2554-07-21 */

	uint64_t end_2100 = epoch_ns_of(2101, 1, 1, 0);

	for (int i = 0; i < 20000; i++)
		assert_time(rng_next() % end_2100);
}
END_TEST

START_TEST(test_rfc3339_small_buffer)
{
	char buf[JW_RFC3339_NS_LEN + CANARY_SIZE];

	memset(buf, CANARY, sizeof(buf));
	ck_assert_uint_eq(jw_format_rfc3339_ns(buf, JW_RFC3339_NS_LEN, 0), 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		ck_assert_int_eq((unsigned char)buf[i], CANARY);
}
END_TEST

/* --- literal keys: the same bytes as the measured keys ----------------- */

/* One object written both ways must come out byte for byte the same. */
static void assert_lit_u64_same(uint64_t v, int64_t s)
{
	char a[256], b[256];
	struct jw wa, wb;

	jw_init(&wa, a, sizeof(a));
	jw_init(&wb, b, sizeof(b));
	jw_obj_begin(&wa);
	jw_obj_begin(&wb);
	jw_kv_u64(&wa, "first", v);
	jw_lit_u64(&wb, JW_LIT("first"), v);
	jw_kv_i64(&wa, "second", s);
	jw_lit_i64(&wb, JW_LIT("second"), s);
	jw_kv_u64(&wa, "third", v);
	jw_lit_u64(&wb, JW_LIT("third"), v);
	jw_obj_end(&wa);
	jw_obj_end(&wb);
	ck_assert(!wa.overflow && !wb.overflow);
	ck_assert_msg(wa.len == wb.len && !memcmp(a, b, wa.len), "%" PRIu64 ": '%.*s' vs '%.*s'", v,
		      (int)wa.len, a, (int)wb.len, b);
}

START_TEST(test_literal_keys)
{
	char got[64], want[64];
	uint64_t p = 1;
	struct jw w;

	rng_init();
	assert_lit_u64_same(0, 0);
	assert_lit_u64_same(UINT64_MAX, INT64_MIN);
	assert_lit_u64_same(UINT64_MAX - 1, INT64_MAX);
	for (int k = 1; k < 20; k++, p *= 10) {
		assert_lit_u64_same(p * 10 - 1, -(int64_t)(p * 10 - 1));
		assert_lit_u64_same(p * 10, (int64_t)(p * 10));
		assert_lit_u64_same(p * 10 + 1, -(int64_t)p);
	}
	for (int i = 0; i < 100000; i++) {
		uint64_t v = rng_next() >> rng_below(64);

		assert_lit_u64_same(v, (int64_t)rng_next() >> rng_below(64));
	}
	/* the digits themselves, against printf */
	for (int i = 0; i < 10000; i++) {
		uint64_t v = rng_next() >> rng_below(64);

		jw_init(&w, got, sizeof(got));
		jw_lit_u64(&w, JW_LIT("v"), v);
		snprintf(want, sizeof(want), "\"v\":%" PRIu64, v);
		ck_assert_msg(w.len == strlen(want) && !memcmp(got, want, w.len), "seed %#" PRIx64,
			      rng_seed);
	}
	jw_init(&w, out, sizeof(out));
	jw_obj_begin(&w);
	jw_lit_cstr(&w, JW_LIT("a"), "x\"y");
	jw_lit_cstr(&w, JW_LIT("b"), NULL);
	jw_lit_str(&w, JW_LIT("c"), "abc", 2);
	jw_lit_strz(&w, JW_LIT("d"), "0123456789abcdefXYZ", 16);
	jw_lit_null(&w, JW_LIT("e"));
	jw_lit_key(&w, JW_LIT("f"));
	jw_u64(&w, 5);
	jw_obj_end(&w);
	assert_output(&w, "{\"a\":\"x\\\"y\",\"b\":null,\"c\":\"ab\","
			  "\"d\":\"0123456789abcdef\",\"e\":null,\"f\":5}");
}
END_TEST

/* Every length of a spliced fragment is copied exactly, nothing beyond it. */
START_TEST(test_raw_every_length)
{
	char src[80], buf[128];
	struct jw w;

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (char)('A' + i % 26);
	for (size_t n = 1; n < sizeof(src); n++) {
		memset(buf, CANARY, sizeof(buf));
		jw_init(&w, buf, n);
		jw_raw_members(&w, src, n);
		ck_assert(!w.overflow && w.len == n && !memcmp(buf, src, n));
		ck_assert_int_eq((unsigned char)buf[n], CANARY);
	}
}
END_TEST

/*
 * Timestamps reuse the formatted second: across second, day and year
 * boundaries, and going backwards, each must equal the uncached form.
 */
START_TEST(test_rfc3339_cached)
{
	static const uint64_t starts[] = {1764464522999999990ULL, 1767225599999999995ULL,
					  951868799999999990ULL, 0};
	char want[JW_RFC3339_NS_LEN + 1], got[64];
	struct jw w;

	for (size_t s = 0; s < sizeof(starts) / sizeof(starts[0]); s++) {
		for (uint64_t t = starts[s]; t < starts[s] + 20; t += 3) {
			uint64_t ts[] = {t, t + 1000000000ULL, t - 999999999ULL, t};

			for (size_t i = 0; i < 4; i++) {
				jw_format_rfc3339_ns(want, sizeof(want), ts[i]);
				jw_init(&w, got, sizeof(got));
				jw_lit_time(&w, JW_LIT("ts"), ts[i]);
				ck_assert_msg(w.len == 6 + JW_RFC3339_NS_LEN + 1 &&
						      !memcmp(got + 6, want, JW_RFC3339_NS_LEN),
					      "%" PRIu64 ": '%.*s' vs '%s'", ts[i], (int)w.len, got,
					      want);
			}
		}
	}
}
END_TEST

/* An object written whole, kept as its members; nothing when it overflowed. */
START_TEST(test_members)
{
	char small[8];
	struct jw w;

	jw_init(&w, out, sizeof(out));
	jw_obj_begin(&w);
	jw_kv_u64(&w, "a", 1);
	jw_kv_cstr(&w, "b", "x");
	jw_obj_end(&w);
	ck_assert_uint_eq(jw_members(&w), strlen("\"a\":1,\"b\":\"x\""));
	assert_output(&w, "\"a\":1,\"b\":\"x\"");
	jw_init(&w, out, sizeof(out));
	jw_obj_begin(&w);
	jw_obj_end(&w);
	ck_assert_uint_eq(jw_members(&w), 0);
	jw_init(&w, small, sizeof(small));
	jw_obj_begin(&w);
	jw_kv_cstr(&w, "long", "value");
	jw_obj_end(&w);
	ck_assert(w.overflow);
	ck_assert_uint_eq(jw_members(&w), 0);
}
END_TEST

static Suite *json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc;

	tc = tcase_create("values");
	tcase_add_test(tc, test_every_value_kind);
	tcase_add_test(tc, test_key_value_helpers);
	tcase_add_test(tc, test_double);
	tcase_add_test(tc, test_literal_keys);
	tcase_add_test(tc, test_raw_every_length);
	suite_add_tcase(s, tc);

	tc = tcase_create("structure");
	tcase_add_test(tc, test_nesting_and_commas);
	tcase_add_test(tc, test_raw_members);
	tcase_add_test(tc, test_members);
	tcase_add_test(tc, test_reset);
	tcase_add_test(tc, test_nesting_limits);
	suite_add_tcase(s, tc);

	tc = tcase_create("escapes");
	tcase_add_test(tc, test_escapes);
	suite_add_tcase(s, tc);

	tc = tcase_create("utf8");
	tcase_add_test(tc, test_invalid_utf8);
	tcase_add_test(tc, test_valid_utf8_passes);
	suite_add_tcase(s, tc);

	tc = tcase_create("random_jansson");
	tcase_add_test(tc, test_random_strings_jansson);
	tcase_add_test(tc, test_every_byte_in_ascii_runs);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);

	tc = tcase_create("integers");
	tcase_add_test(tc, test_integers);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);

	tc = tcase_create("overflow");
	tcase_add_test(tc, test_overflow);
	tcase_add_test(tc, test_overflow_latches);
	suite_add_tcase(s, tc);

	tc = tcase_create("time");
	tcase_add_test(tc, test_rfc3339);
	tcase_add_test(tc, test_rfc3339_small_buffer);
	tcase_add_test(tc, test_rfc3339_cached);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(json_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
