// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The one JSON writer. Every record passes through here, so the string
 * path copies runs of bytes that need no escaping with one memcpy and
 * integers are converted two digits at a time.
 */
#include <math.h> /* isfinite() is a macro: no libm needed */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "util/clock.h"
#include "util/json.h"

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* "00" "01" ... "99": two decimal digits per lookup. */
static const char digit_pairs[200] = "00010203040506070809"
				     "10111213141516171819"
				     "20212223242526272829"
				     "30313233343536373839"
				     "40414243444546474849"
				     "50515253545556575859"
				     "60616263646566676869"
				     "70717273747576777879"
				     "80818283848586878889"
				     "90919293949596979899";

static const char hex_digits[16] = "0123456789abcdef";

/* UTF-8 encoding of U+FFFD, written in place of each invalid byte. */
static const char replacement_char[3] = { (char)0xef, (char)0xbf, (char)0xbd };

/* How the string scanner treats a byte. */
enum byte_class {
	BYTE_PLAIN = 0, /* copied as is */
	BYTE_ESCAPE,	/* control character, '"' or '\\' */
	BYTE_HIGH,	/* 0x80..0xff: part of a UTF-8 sequence or invalid */
};

static const unsigned char byte_class[256] = {
	[0x00 ... 0x1f] = BYTE_ESCAPE,
	['"'] = BYTE_ESCAPE,
	['\\'] = BYTE_ESCAPE,
	[0x80 ... 0xff] = BYTE_HIGH,
};

/* --- raw output ------------------------------------------------------- */

/* Reserve n bytes; on failure latch the overflow flag so nothing more is written. */
static inline int jw_room(struct jw *w, size_t n)
{
	if (unlikely(w->overflow))
		return 0;
	if (unlikely(n > w->cap - w->len)) {
		w->overflow = 1;
		return 0;
	}
	return 1;
}

/*
 * Copy n bytes; most pieces of a record are short (keys, numbers, names),
 * and for those two fixed-size, possibly overlapping moves beat a call to
 * memcpy with a length it must dispatch on.
 */
static inline void copy_bytes(char *dst, const void *src, size_t n)
{
	const char *s = src;
	uint64_t a, b;
	uint32_t c, d;

	if (n >= 8 && n <= 16) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(dst, &a, 8);
		memcpy(dst + n - 8, &b, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(&c, s, 4);
		memcpy(&d, s + n - 4, 4);
		memcpy(dst, &c, 4);
		memcpy(dst + n - 4, &d, 4);
	} else if (n < 4) {
		for (size_t i = 0; i < n; i++)
			dst[i] = s[i];
	} else {
		memcpy(dst, s, n);
	}
}

static inline void jw_put(struct jw *w, const void *p, size_t n)
{
	if (jw_room(w, n)) {
		copy_bytes(w->buf + w->len, p, n);
		w->len += n;
	}
}

static inline void jw_putc(struct jw *w, char c)
{
	if (jw_room(w, 1))
		w->buf[w->len++] = c;
}

/* --- structure -------------------------------------------------------- */

void jw_reset(struct jw *w)
{
	w->len = 0;
	w->depth = 0;
	w->overflow = 0;
	w->need_comma[0] = 0;
}

void jw_init(struct jw *w, char *buf, size_t cap)
{
	w->buf = buf;
	w->cap = cap;
	jw_reset(w);
}

/*
 * Every value goes through here: a comma if a sibling came before it, and
 * from now on the next sibling needs one. A key clears the flag again so
 * that its value is not preceded by a comma.
 */
static inline void jw_value_begin(struct jw *w)
{
	if (w->need_comma[w->depth])
		jw_putc(w, ',');
	w->need_comma[w->depth] = 1;
}

static void jw_open(struct jw *w, char c)
{
	jw_value_begin(w);
	jw_putc(w, c);
	if (w->depth + 1 >= JW_MAX_DEPTH) {
		w->overflow = 1; /* deeper than the comma state can follow */
		return;
	}
	w->depth++;
	w->need_comma[w->depth] = 0;
}

static void jw_close(struct jw *w, char c)
{
	if (w->depth == 0) {
		w->overflow = 1; /* unbalanced: the output would be invalid */
		return;
	}
	jw_putc(w, c);
	w->depth--;
}

void jw_obj_begin(struct jw *w)
{
	jw_open(w, '{');
}

void jw_obj_end(struct jw *w)
{
	jw_close(w, '}');
}

void jw_arr_begin(struct jw *w)
{
	jw_open(w, '[');
}

void jw_arr_end(struct jw *w)
{
	jw_close(w, ']');
}

void jw_newline(struct jw *w)
{
	jw_putc(w, '\n');
	if (w->depth == 0)
		w->need_comma[0] = 0;
}

/* --- strings ---------------------------------------------------------- */

/*
 * Length of the well-formed UTF-8 sequence at p (lead byte >= 0x80), or 0
 * if the lead byte does not start one. The second byte's range is what
 * excludes overlong forms (E0, F0), surrogates (ED) and code points above
 * U+10FFFF (F4); C0, C1 and F5..FF never start a valid sequence.
 */
static size_t utf8_valid_len(const unsigned char *p, size_t avail)
{
	unsigned char c = p[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (c < 0xc2)
		return 0;
	if (c < 0xe0) {
		len = 2;
	} else if (c < 0xf0) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c < 0xf5) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (avail < len || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

static void put_escape(struct jw *w, unsigned char c)
{
	char esc[6] = {'\\', 'u', '0', '0'};

	switch (c) {
	case '"':
	case '\\':
		esc[1] = (char)c;
		jw_put(w, esc, 2);
		return;
	case '\b':
		jw_put(w, "\\b", 2);
		return;
	case '\f':
		jw_put(w, "\\f", 2);
		return;
	case '\n':
		jw_put(w, "\\n", 2);
		return;
	case '\r':
		jw_put(w, "\\r", 2);
		return;
	case '\t':
		jw_put(w, "\\t", 2);
		return;
	}
	esc[4] = hex_digits[c >> 4];
	esc[5] = hex_digits[c & 0xf];
	jw_put(w, esc, sizeof(esc));
}

#define ONES  0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/*
 * Nonzero if some byte of v is zero. A borrow may also flag a byte above
 * a real zero, so only the answer "some" or "none" is exact.
 */
static inline uint64_t zero_bytes(uint64_t v)
{
	return (v - ONES) & ~v & HIGHS;
}

/*
 * Whether any of 8 bytes is not plain ASCII: a control character, '"',
 * '\\' or a byte with the high bit set. Bytes >= 0x80 are caught by their
 * own high bit, so the subtraction tricks only need to be exact below it.
 */
static inline int word_needs_care(uint64_t x)
{
	uint64_t control = (x - ONES * 0x20) & ~x;
	uint64_t quote = zero_bytes(x ^ (ONES * '"'));
	uint64_t backslash = zero_bytes(x ^ (ONES * '\\'));

	return ((x | control | quote | backslash) & HIGHS) != 0;
}

/*
 * The last r < 8 bytes of a string as one word, padded with a plain byte.
 * Built from fixed-size loads: a variable-length memcpy into a word would
 * be a call and a stalled store-to-load forward.
 */
static inline uint64_t tail_word(const unsigned char *p, size_t r)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	if (r & 4) {
		uint32_t t;

		memcpy(&t, p, sizeof(t));
		v = t;
		p += 4;
		shift = 32;
	}
	if (r & 2) {
		uint16_t t;

		memcpy(&t, p, sizeof(t));
		v |= (uint64_t)t << shift;
		p += 2;
		shift += 16;
	}
	if (r & 1) {
		v |= (uint64_t)*p << shift;
		shift += 8;
	}
	return v | ((ONES * 'a') & ~((1ULL << shift) - 1));
}

/* Length of the prefix of s that can be copied verbatim. */
static size_t verbatim_run(const unsigned char *s, size_t n)
{
	size_t i = 0, stop, seq;
	uint64_t x;

	while (i < n) {
		/* Most paths, names and hosts are ASCII: skip them 8 bytes at a time. */
		if (n - i >= sizeof(x)) {
			memcpy(&x, s + i, sizeof(x));
			if (!word_needs_care(x)) {
				i += sizeof(x);
				continue;
			}
		} else if (!word_needs_care(tail_word(s + i, n - i))) {
			return n; /* most keys and names end here */
		}
		/* Something in the next 8 bytes: look at them one by one. */
		stop = n - i > sizeof(x) ? i + sizeof(x) : n;
		while (i < stop) {
			unsigned char cls = byte_class[s[i]];

			if (cls == BYTE_PLAIN) {
				i++;
				continue;
			}
			if (cls == BYTE_HIGH) {
				seq = utf8_valid_len(s + i, n - i);
				if (seq) {
					i += seq;
					continue;
				}
			}
			return i;
		}
	}
	return i;
}

/* The body of a string, without quotes. */
static void put_escaped(struct jw *w, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run;

	while (i < n && !w->overflow) {
		run = verbatim_run(s + i, n - i);
		if (run) {
			jw_put(w, s + i, run);
			i += run;
			if (i == n)
				break;
		}
		/* s[i] needs an escape or is not part of valid UTF-8. */
		if (byte_class[s[i]] == BYTE_ESCAPE)
			put_escape(w, s[i]);
		else
			jw_put(w, replacement_char, sizeof(replacement_char));
		i++;
	}
}

/*
 * '"' s '"' followed by tail (0 or ':'). Nearly every string needs no
 * escaping: then it is one bounds check and one copy.
 */
static void put_quoted(struct jw *w, const char *s, size_t n, char tail)
{
	size_t total = n + 2 + (tail != 0);
	char *p;

	if (likely(verbatim_run((const unsigned char *)s, n) == n) && jw_room(w, total)) {
		p = w->buf + w->len;
		p[0] = '"';
		copy_bytes(p + 1, s, n);
		p[n + 1] = '"';
		if (tail)
			p[n + 2] = tail;
		w->len += total;
		return;
	}
	jw_putc(w, '"');
	put_escaped(w, s, n);
	jw_putc(w, '"');
	if (tail)
		jw_putc(w, tail);
}

void jw_key(struct jw *w, const char *key)
{
	jw_value_begin(w);
	put_quoted(w, key, strlen(key), ':');
	w->need_comma[w->depth] = 0;
}

void jw_str(struct jw *w, const char *s, size_t n)
{
	jw_value_begin(w);
	put_quoted(w, s, n, 0);
}

void jw_cstr(struct jw *w, const char *s)
{
	if (!s) {
		jw_null(w);
		return;
	}
	jw_str(w, s, strlen(s));
}

void jw_strz(struct jw *w, const char *s, size_t max)
{
	if (!s) {
		jw_null(w);
		return;
	}
	jw_str(w, s, strnlen(s, max));
}

/* --- numbers ---------------------------------------------------------- */

#define U64_DEC_MAX 20 /* digits of UINT64_MAX */

/* Writes the decimal digits of v so that they end at end; returns the start. */
static char *u32_digits(char *end, uint32_t v)
{
	char *p = end;

	while (v >= 100) {
		unsigned pair = v % 100;

		v /= 100;
		p -= 2;
		memcpy(p, &digit_pairs[pair * 2], 2);
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, &digit_pairs[v * 2], 2);
	} else {
		*--p = (char)('0' + v);
	}
	return p;
}

/* Exactly 8 digits of v < 10^8, zero-padded, ending at end. */
static void u32_8digits(char *end, uint32_t v)
{
	for (int i = 0; i < 4; i++) {
		end -= 2;
		memcpy(end, &digit_pairs[(v % 100) * 2], 2);
		v /= 100;
	}
}

/*
 * Large values (ids, nanoseconds) are cut into 8-digit pieces first:
 * 32-bit division by a constant is a few times cheaper than 64-bit.
 */
static char *u64_digits(char *end, uint64_t v)
{
	while (v > UINT32_MAX) {
		u32_8digits(end, (uint32_t)(v % 100000000));
		v /= 100000000;
		end -= 8;
	}
	return u32_digits(end, (uint32_t)v);
}

/* Number of decimal digits of v (1 for 0). */
static inline unsigned int dec_digits(uint64_t v)
{
	static const uint64_t pow10[20] = {
		1ULL,
		10ULL,
		100ULL,
		1000ULL,
		10000ULL,
		100000ULL,
		1000000ULL,
		10000000ULL,
		100000000ULL,
		1000000000ULL,
		10000000000ULL,
		100000000000ULL,
		1000000000000ULL,
		10000000000000ULL,
		100000000000000ULL,
		1000000000000000ULL,
		10000000000000000ULL,
		100000000000000000ULL,
		1000000000000000000ULL,
		10000000000000000000ULL,
	};
	/* log10(2) ~ 1233/4096: a guess from the bit length, off by at most one. */
	unsigned int guess = ((64 - (unsigned int)__builtin_clzll(v | 1)) * 1233) >> 12;

	if (!v)
		return 1;
	return guess + (v >= pow10[guess]);
}

/*
 * The digits go straight into the output: writing them to a scratch
 * array first and copying it would stall on the store-to-load forward.
 */
static void put_u64(struct jw *w, uint64_t v, bool negative)
{
	unsigned int n = dec_digits(v) + negative;
	char *p;

	if (!jw_room(w, n))
		return;
	p = w->buf + w->len;
	if (negative)
		p[0] = '-';
	u64_digits(p + n, v);
	w->len += n;
}

void jw_u64(struct jw *w, uint64_t v)
{
	jw_value_begin(w);
	put_u64(w, v, false);
}

void jw_i64(struct jw *w, int64_t v)
{
	/* Negate in unsigned arithmetic so that INT64_MIN has a magnitude. */
	uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	jw_value_begin(w);
	put_u64(w, mag, v < 0);
}

static const uint64_t pow10_u64[10] = {
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
};

/* Rare and huge values: printf, with the locale's decimal point undone. */
static void jw_double_wide(struct jw *w, double v)
{
	char tmp[40];
	int n = snprintf(tmp, sizeof(tmp), "%.17g", v);

	for (int i = 0; i < n; i++)
		if (tmp[i] == ',')
			tmp[i] = '.';
	jw_put(w, tmp, (size_t)n);
}

void jw_double(struct jw *w, double v, int decimals)
{
	char tmp[U64_DEC_MAX + 12];
	char *end = tmp + sizeof(tmp);
	char *start = end;
	uint64_t scaled, ipart, fpart;
	double mag;

	if (!isfinite(v)) {
		jw_null(w);
		return;
	}
	if (decimals < 0)
		decimals = 0;
	if (decimals > 9)
		decimals = 9;
	jw_value_begin(w);
	mag = (v < 0 ? -v : v) * (double)pow10_u64[decimals];
	if (mag >= 9.0e18) {
		jw_double_wide(w, v);
		return;
	}
	scaled = (uint64_t)(mag + 0.5);
	ipart = scaled / pow10_u64[decimals];
	fpart = scaled % pow10_u64[decimals];
	if (decimals) {
		char *frac_end = end;

		start = u64_digits(end, fpart);
		while (frac_end - start < decimals)
			*--start = '0';
		*--start = '.';
	}
	start = u64_digits(start, ipart);
	if (v < 0 && scaled)
		*--start = '-';
	jw_put(w, start, (size_t)(end - start));
}

void jw_bool(struct jw *w, int v)
{
	jw_value_begin(w);
	if (v)
		jw_put(w, "true", 4);
	else
		jw_put(w, "false", 5);
}

void jw_null(struct jw *w)
{
	jw_value_begin(w);
	jw_put(w, "null", 4);
}

void jw_raw(struct jw *w, const char *json, size_t n)
{
	jw_value_begin(w);
	jw_put(w, json, n);
}

size_t jw_members(struct jw *w)
{
	if (w->overflow || w->len < 2)
		return 0;
	memmove(w->buf, w->buf + 1, w->len - 2);
	w->len -= 2;
	return w->len;
}

void jw_raw_members(struct jw *w, const char *members, size_t n)
{
	if (!n)
		return;
	jw_value_begin(w);
	jw_put(w, members, n);
}

/* --- time ------------------------------------------------------------- */

#define SEC_PER_DAY 86400U

/* Days in a 400-year Gregorian cycle, a 4-year cycle, and from 0000-03-01 to 1970-01-01. */
#define DAYS_PER_400Y	   146097U
#define DAYS_PER_4Y	   1461U
#define DAYS_PER_100Y	   36524U
#define DAYS_0000_TO_EPOCH 719468U

/*
 * Civil date of a day number counted from 1970-01-01. The count is moved
 * to a calendar whose years start on March 1st, so the leap day is the
 * last day of its year and months have a regular 153-days-per-5 pattern.
 */
static void civil_from_days(uint64_t days, unsigned *year, unsigned *month, unsigned *day)
{
	uint64_t z = days + DAYS_0000_TO_EPOCH;
	uint64_t cycle = z / DAYS_PER_400Y;
	unsigned day_of_cycle = (unsigned)(z % DAYS_PER_400Y);
	/* Year within the cycle: the leap days of the previous years are taken out. */
	unsigned year_of_cycle =
		(day_of_cycle - day_of_cycle / (DAYS_PER_4Y - 1) + day_of_cycle / DAYS_PER_100Y -
		 day_of_cycle / (DAYS_PER_400Y - 1)) /
		365;
	unsigned day_of_year =
		day_of_cycle - (365 * year_of_cycle + year_of_cycle / 4 - year_of_cycle / 100);
	unsigned month_from_march = (5 * day_of_year + 2) / 153;

	*day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
	*month = month_from_march < 10 ? month_from_march + 3 : month_from_march - 9;
	*year = (unsigned)(cycle * 400 + year_of_cycle) + (*month <= 2);
}

static inline void put_pair(char *p, unsigned v)
{
	memcpy(p, &digit_pairs[v * 2], 2);
}

/* Exactly JW_RFC3339_NS_LEN bytes, no NUL. */
static void format_rfc3339_ns(char *p, uint64_t epoch_ns)
{
	uint64_t secs = epoch_ns / LES_NS_PER_SEC;
	unsigned nsec = (unsigned)(epoch_ns % LES_NS_PER_SEC);
	unsigned sec_of_day = (unsigned)(secs % SEC_PER_DAY);
	unsigned year, month, day;

	civil_from_days(secs / SEC_PER_DAY, &year, &month, &day);
	put_pair(p, year / 100);
	put_pair(p + 2, year % 100);
	p[4] = '-';
	put_pair(p + 5, month);
	p[7] = '-';
	put_pair(p + 8, day);
	p[10] = 'T';
	put_pair(p + 11, sec_of_day / 3600);
	p[13] = ':';
	put_pair(p + 14, sec_of_day / 60 % 60);
	p[16] = ':';
	put_pair(p + 17, sec_of_day % 60);
	p[19] = '.';
	p[20] = (char)('0' + nsec / 100000000);
	put_pair(p + 21, nsec / 1000000 % 100);
	put_pair(p + 23, nsec / 10000 % 100);
	put_pair(p + 25, nsec / 100 % 100);
	put_pair(p + 27, nsec % 100);
	p[29] = 'Z';
}

size_t jw_format_rfc3339_ns(char *out, size_t cap, uint64_t epoch_ns)
{
	if (cap < JW_RFC3339_NS_LEN + 1)
		return 0;
	format_rfc3339_ns(out, epoch_ns);
	out[JW_RFC3339_NS_LEN] = '\0';
	return JW_RFC3339_NS_LEN;
}

/* --- key + value ------------------------------------------------------ */

/*
 * Records come in time order, thousands per second: the date and time up
 * to the second are formatted once per second and reused.
 */
static void format_rfc3339_ns_cached(char *p, uint64_t epoch_ns)
{
	static __thread uint64_t cached_sec = UINT64_MAX;
	static __thread char cached[20]; /* "2026-11-30T01:02:03." */
	uint64_t secs = epoch_ns / LES_NS_PER_SEC;
	unsigned nsec = (unsigned)(epoch_ns % LES_NS_PER_SEC);

	if (secs != cached_sec) {
		format_rfc3339_ns(p, epoch_ns);
		memcpy(cached, p, sizeof(cached));
		cached_sec = secs;
		return;
	}
	memcpy(p, cached, sizeof(cached));
	p[20] = (char)('0' + nsec / 100000000);
	u32_8digits(p + 29, nsec % 100000000);
	p[29] = 'Z';
}

static void put_time(struct jw *w, uint64_t epoch_ns)
{
	jw_value_begin(w);
	if (!jw_room(w, JW_RFC3339_NS_LEN + 2))
		return;
	w->buf[w->len] = '"';
	format_rfc3339_ns_cached(w->buf + w->len + 1, epoch_ns);
	w->buf[w->len + 1 + JW_RFC3339_NS_LEN] = '"';
	w->len += JW_RFC3339_NS_LEN + 2;
}

void jw_kv_time(struct jw *w, const char *k, uint64_t epoch_ns)
{
	jw_key(w, k);
	put_time(w, epoch_ns);
}

void jw_kv_u64(struct jw *w, const char *k, uint64_t v)
{
	jw_key(w, k);
	jw_u64(w, v);
}

void jw_kv_i64(struct jw *w, const char *k, int64_t v)
{
	jw_key(w, k);
	jw_i64(w, v);
}

void jw_kv_str(struct jw *w, const char *k, const char *s, size_t n)
{
	jw_key(w, k);
	jw_str(w, s, n);
}

void jw_kv_cstr(struct jw *w, const char *k, const char *s)
{
	jw_key(w, k);
	jw_cstr(w, s);
}

void jw_kv_strz(struct jw *w, const char *k, const char *s, size_t max)
{
	jw_key(w, k);
	jw_strz(w, s, max);
}

void jw_kv_double(struct jw *w, const char *k, double v, int decimals)
{
	jw_key(w, k);
	jw_double(w, v, decimals);
}

void jw_kv_bool(struct jw *w, const char *k, int v)
{
	jw_key(w, k);
	jw_bool(w, v);
}

void jw_kv_null(struct jw *w, const char *k)
{
	jw_key(w, k);
	jw_null(w);
}

void jw_kv_raw(struct jw *w, const char *k, const char *json, size_t n)
{
	jw_key(w, k);
	jw_raw(w, json, n);
}

/* --- literal keys (the per-record path) -------------------------------- */

void jw_lit_key(struct jw *w, const char *key_colon, size_t n)
{
	jw_value_begin(w);
	jw_put(w, key_colon, n);
	w->need_comma[w->depth] = 0;
}

/* The commonest member of a record, in one bounds check: ,"key":digits */
void jw_lit_u64(struct jw *w, const char *key_colon, size_t n, uint64_t v)
{
	unsigned int digits = dec_digits(v);
	unsigned int comma = w->need_comma[w->depth];
	char *p;

	if (!jw_room(w, comma + n + digits))
		return;
	p = w->buf + w->len;
	/* Stored either way (no branch): without a comma the key overwrites it. */
	*p = ',';
	copy_bytes(p + comma, key_colon, n);
	u64_digits(p + comma + n + digits, v);
	w->len += comma + n + digits;
	w->need_comma[w->depth] = 1;
}

void jw_lit_i64(struct jw *w, const char *key_colon, size_t n, int64_t v)
{
	jw_lit_key(w, key_colon, n);
	jw_i64(w, v);
}

void jw_lit_str(struct jw *w, const char *key_colon, size_t n, const char *s, size_t len)
{
	jw_lit_key(w, key_colon, n);
	jw_str(w, s, len);
}

void jw_lit_cstr(struct jw *w, const char *key_colon, size_t n, const char *s)
{
	jw_lit_key(w, key_colon, n);
	jw_cstr(w, s);
}

void jw_lit_strz(struct jw *w, const char *key_colon, size_t n, const char *s, size_t max)
{
	jw_lit_key(w, key_colon, n);
	jw_strz(w, s, max);
}

void jw_lit_null(struct jw *w, const char *key_colon, size_t n)
{
	jw_lit_key(w, key_colon, n);
	jw_null(w);
}

void jw_lit_time(struct jw *w, const char *key_colon, size_t n, uint64_t epoch_ns)
{
	jw_lit_key(w, key_colon, n);
	put_time(w, epoch_ns);
}
