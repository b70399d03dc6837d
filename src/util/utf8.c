// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* UTF-8 checks and terminal-safe names: see utf8.h. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "util/utf8.h"

size_t les_utf8_seq_len(const unsigned char *p)
{
	uint32_t cp;
	size_t n, i;

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
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* The code point of a well-formed sequence of n bytes. */
static uint32_t code_point(const unsigned char *p, size_t n)
{
	static const unsigned char lead_mask[5] = {0, 0x7f, 0x1f, 0x0f, 0x07};
	uint32_t cp = p[0] & lead_mask[n];

	for (size_t i = 1; i < n; i++)
		cp = (cp << 6) | (p[i] & 0x3f);
	return cp;
}

/* Characters a terminal acts on or that reorder what it shows. */
static int must_escape(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t les_term_safe(const char *s, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	if (!cap)
		return 0;
	while (*p) {
		size_t n = les_utf8_seq_len(p), adv = n ? n : 1, need;
		char piece[16];

		if (!n || must_escape(code_point(p, n))) {
			need = 0;
			for (size_t i = 0; i < adv; i++) {
				piece[need++] = '\\';
				piece[need++] = 'x';
				piece[need++] = hex[p[i] >> 4];
				piece[need++] = hex[p[i] & 15];
			}
		} else if (*p == '\\') {
			piece[0] = piece[1] = '\\';
			need = 2;
		} else {
			memcpy(piece, p, n);
			need = n;
		}
		if (o + need > cap - 1)
			break;
		memcpy(out + o, piece, need);
		o += need;
		p += adv;
	}
	out[o] = '\0';
	return o;
}

void les_vsay(const char *fmt, va_list ap)
{
	char msg[2048], safe[LES_TERM_SAFE_LEN(sizeof(msg))];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	les_term_safe(msg, safe, sizeof(safe));
	fprintf(stderr, "lustre-ebpf-stream: %s\n", safe);
}

void les_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	les_vsay(fmt, ap);
	va_end(ap);
}
