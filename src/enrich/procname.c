// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Process name normalization and allowlist. See procname.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "enrich/procname.h"

static bool is_sep(char c)
{
	return c == ' ' || c == '-' || c == '_' || c == ':' || c == '/';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Length of the run of digits ending at s[n - 1]. */
static size_t trailing_digits(const char *s, size_t n)
{
	size_t d = 0;

	while (d < n && is_digit(s[n - 1 - d]))
		d++;
	return d;
}

/* Index of the last separator in s[0, n), or n if none. */
static size_t last_sep(const char *s, size_t n)
{
	for (size_t i = n; i-- > 0;) {
		if (is_sep(s[i]))
			return i;
	}
	return n;
}

/* "name/<digit>...", "name/<letter><digit or '-'>...": cut at the '/'. */
static size_t strip_kthread_instance(const char *s, size_t n)
{
	const char *slash = memchr(s, '/', n);
	size_t at, rest;

	if (!slash || slash == s)
		return n;
	at = (size_t)(slash - s);
	rest = n - at - 1;
	if (rest >= 1 && is_digit(s[at + 1]))
		return at;
	if (rest >= 2 && is_letter(s[at + 1]) && (is_digit(s[at + 2]) || s[at + 2] == '-'))
		return at;
	return n;
}

/* "<prefix><sep><digits or one letter>": cut at the separator. */
static size_t strip_instance_token(const char *s, size_t n)
{
	size_t sep = last_sep(s, n);
	size_t tok;

	if (sep == n || sep == 0)
		return n; /* no separator, or stripping would empty the name */
	tok = n - sep - 1;
	if (tok == 0)
		return n; /* trailing separator */
	if (trailing_digits(s, n) == tok || (tok == 1 && is_letter(s[n - 1])))
		return sep;
	return n;
}

/* "<...>.<non-digits><digits>" in the last token: drop the digits. */
static size_t strip_dotted_digits(const char *s, size_t n)
{
	size_t sep = last_sep(s, n);
	size_t tok_start = sep == n ? 0 : sep + 1;
	const char *dot = NULL;
	size_t comp, d;

	for (size_t i = n; i-- > tok_start;) {
		if (s[i] == '.') {
			dot = s + i;
			break;
		}
	}
	if (!dot)
		return n;
	comp = n - (size_t)(dot - s) - 1;
	d = trailing_digits(s, n);
	if (d == 0 || d >= comp)
		return n; /* no digits, or an all-digit version component */
	return n - d;
}

size_t les_procname_normalize(const char *comm, size_t len, char *out, size_t cap)
{
	size_t n, prev;

	if (!cap)
		return 0;
	if (!comm)
		comm = "";
	n = strnlen(comm, len);
	do {
		prev = n;
		n = strip_kthread_instance(comm, n);
		n = strip_instance_token(comm, n);
		n = strip_dotted_digits(comm, n);
	} while (n != prev);

	if (n > cap - 1)
		n = cap - 1;
	if (n)
		memmove(out, comm, n);
	out[n] = '\0';
	return n;
}

void les_procname_filter_init(struct les_procname_filter *f, bool strip_suffix)
{
	memset(f, 0, sizeof(*f));
	f->strip_suffix = strip_suffix;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

int les_procname_allow_add(struct les_procname_filter *f, const char *csv, char *err, size_t errlen)
{
	const char *p = csv ? csv : "";

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		const char *name = p;

		while (n && is_blank(*name)) {
			name++;
			n--;
		}
		while (n && is_blank(name[n - 1]))
			n--;
		if (!n) {
			snprintf(err, errlen, "--process-allowlist '%s': empty process name", csv);
			return -EINVAL;
		}
		if (n >= LES_PROCNAME_MAX) {
			snprintf(err, errlen,
				 "--process-allowlist: name '%.*s' longer than %d characters",
				 (int)n, name, LES_PROCNAME_MAX - 1);
			return -EINVAL;
		}
		if (f->n >= LES_PROCNAME_ALLOW_MAX) {
			snprintf(err, errlen, "--process-allowlist: more than %d names",
				 LES_PROCNAME_ALLOW_MAX);
			return -E2BIG;
		}
		memcpy(f->names[f->n], name, n);
		f->names[f->n][n] = '\0';
		f->n++;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(a, b);
}

void les_procname_filter_finish(struct les_procname_filter *f)
{
	unsigned int out = 0;

	qsort(f->names, f->n, sizeof(f->names[0]), cmp_names);
	for (unsigned int i = 0; i < f->n; i++) {
		if (out && strcmp(f->names[out - 1], f->names[i]) == 0)
			continue;
		if (out != i)
			memcpy(f->names[out], f->names[i], sizeof(f->names[0]));
		out++;
	}
	f->n = out;
}

/* strcmp order between a stored name and (name, len). */
static int cmp_stored(const char *stored, const char *name, size_t len)
{
	size_t slen = strlen(stored);
	int c = memcmp(stored, name, slen < len ? slen : len);

	if (c)
		return c;
	return slen < len ? -1 : slen > len;
}

bool les_procname_allowed(const struct les_procname_filter *f, const char *name, size_t len)
{
	unsigned int lo = 0, hi = f->n;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		int c = cmp_stored(f->names[mid], name, len);

		if (!c)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

const char *les_procname_apply(const struct les_procname_filter *f, const char *comm, size_t len,
			       char *buf, size_t cap)
{
	size_t n;

	if (!cap)
		return LES_PROCNAME_OTHER;
	if (f->strip_suffix) {
		n = les_procname_normalize(comm, len, buf, cap);
	} else {
		n = comm ? strnlen(comm, len) : 0;
		if (n > cap - 1)
			n = cap - 1;
		if (n)
			memmove(buf, comm, n);
		buf[n] = '\0';
	}
	if (f->n && !les_procname_allowed(f, buf, n))
		return LES_PROCNAME_OTHER;
	return buf;
}
