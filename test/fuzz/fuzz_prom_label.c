// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Prometheus label escaping: any bytes (job ids, comms, mount paths come
 * from users) give a value the text format reads back: valid UTF-8, no raw
 * '"' or newline, every '\' starting \\, \" or \n, within the room given,
 * never a cut escape or character. A valid UTF-8 input reads back as
 * itself (or a prefix of itself when the room is short).
 */
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "model/families.h"

/*
 * Length of the UTF-8 sequence at p (strict: no overlong, surrogate, >
 * U+10FFFF), 0 if bad. A decoder of its own, not families.c's: the oracle must
 * not share the code it checks.
 */
static size_t utf8_len(const unsigned char *p, size_t left)
{
	uint32_t cp;
	size_t n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (n > left)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static bool valid_utf8(const char *s, size_t n)
{
	for (size_t i = 0, k; i < n; i += k)
		if (!(k = utf8_len((const unsigned char *)s + i, n - i)))
			return false;
	return true;
}

/* Undo the three escapes into back; the escaped form's rules are asserted on the way. */
static size_t unescape(const char *e, size_t n, char *back)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		assert(e[i] != '"' && e[i] != '\n' && e[i] != '\0');
		if (e[i] != '\\') {
			back[o++] = e[i];
			continue;
		}
		assert(i + 1 < n);
		i++;
		assert(e[i] == '\\' || e[i] == '"' || e[i] == 'n');
		back[o++] = e[i] == 'n' ? '\n' : e[i];
	}
	return o;
}

static void check(const char *in, size_t in_len, size_t cap)
{
	char *out = malloc(cap), *back = malloc(cap);
	size_t n, b;

	assert(out && back);
	n = les_label_escape(in, out, cap);
	assert(n < cap && out[n] == '\0' && strlen(out) == n);
	assert(valid_utf8(out, n));
	b = unescape(out, n, back);
	if (valid_utf8(in, in_len)) {
		assert(b <= in_len && memcmp(back, in, b) == 0);
		if (cap > 3 * in_len)
			assert(b == in_len); /* room for all: whole */
	}
	free(out);
	free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1);
	size_t len;

	if (!in)
		return 0;
	memcpy(in, data, size);
	in[size] = '\0';
	len = strlen(in); /* a label value is a C string */
	check(in, len, 3 * len + 1);
	check(in, len, 1 + (size ? data[0] % 64 : 0));
	free(in);
	return 0;
}
