// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Lustre jobid_name formats. See jobid.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "enrich/jobid.h"

/* The codes the format knows. */
static bool known_code(char c)
{
	return c && strchr("jeughHp%", c);
}

/* Lustre skips whitespace in the format, as isspace() in the C locale does. */
static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

int les_jobid_fmt_check(const char *fmt, char *err, size_t errlen)
{
	if (!fmt || !*fmt) {
		snprintf(err, errlen, "--jobid-name: empty format");
		return -EINVAL;
	}
	if (strlen(fmt) >= LES_JOBID_SIZE) {
		snprintf(err, errlen, "--jobid-name '%s': longer than Lustre's %d characters", fmt,
			 LES_JOBID_SIZE - 1);
		return -EINVAL;
	}
	for (const char *p = fmt; *p; p++) {
		if (*p != '%')
			continue;
		if (!p[1]) {
			snprintf(err, errlen, "--jobid-name '%s': lone '%%' at the end", fmt);
			return -EINVAL;
		}
		if (!known_code(p[1])) {
			snprintf(err, errlen,
				 "--jobid-name '%s': unknown code '%%%c' (known: %%j %%e %%u %%g "
				 "%%h %%H %%p %%%%)",
				 fmt, p[1]);
			return -EINVAL;
		}
		p++;
	}
	return 0;
}

/* An output buffer that cuts silently at its end. */
struct sink {
	char *buf;
	size_t len;
	size_t cap; /* usable bytes, NUL excluded */
};

static void put(struct sink *s, const char *p, size_t n)
{
	if (n > s->cap - s->len)
		n = s->cap - s->len;
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

/* At most max bytes of p, up to its NUL; longer than the sink is cut anyway. */
static void put_str(struct sink *s, const char *p, size_t max)
{
	if (p)
		put(s, p, strnlen(p, max));
}

static void put_u32(struct sink *s, uint32_t v)
{
	char num[16];
	int n = snprintf(num, sizeof(num), "%u", v);

	put(s, num, (size_t)n);
}

static void put_code(struct sink *s, char code, const struct les_jobid_ctx *c)
{
	const char *dot;

	switch (code) {
	case 'j':
		put_str(s, c->job_id, LES_JOBID_SIZE);
		break;
	case 'e':
		put_str(s, c->comm, c->comm_len);
		break;
	case 'u':
		put_u32(s, c->uid);
		break;
	case 'g':
		put_u32(s, c->gid);
		break;
	case 'h':
		put_str(s, c->hostname, LES_JOBID_SIZE);
		break;
	case 'H':
		if (!c->hostname)
			break;
		dot = strchr(c->hostname, '.');
		put(s, c->hostname, dot ? (size_t)(dot - c->hostname) : strlen(c->hostname));
		break;
	case 'p':
		put_u32(s, c->pid);
		break;
	case '%':
		put(s, "%", 1);
		break;
	default:
		break; /* unknown code: dropped, as Lustre does */
	}
}

size_t les_jobid_format(const char *fmt, const struct les_jobid_ctx *c, char *out, size_t cap)
{
	struct sink s = {out, 0, 0};

	if (!cap)
		return 0;
	s.cap = (cap < LES_JOBID_SIZE ? cap : LES_JOBID_SIZE) - 1;

	for (const char *p = fmt ? fmt : ""; *p && s.len < s.cap; p++) {
		if (is_space(*p))
			continue;
		if (*p != '%') {
			put(&s, p, 1);
			continue;
		}
		if (!p[1])
			break; /* lone '%' at the end */
		put_code(&s, *++p, c);
	}
	out[s.len] = '\0';
	return s.len;
}
