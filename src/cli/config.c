// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Config file: "name = value" lines resolved through the getopt table. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "cli/config.h"

int les_config_lookup(const struct les_option_table *t, const char *name, int *has_arg)
{
	const char *p;

	for (const struct option *o = t->longopts; o->name; o++) {
		if (strcmp(o->name, name) == 0) {
			*has_arg = o->has_arg;
			return o->val;
		}
	}
	/* A short option by its letter (-X has no long name). */
	if (name[0] && !name[1] && name[0] != ':' && (p = strchr(t->shortopts, name[0]))) {
		*has_arg = p[1] == ':' ? required_argument : no_argument;
		return (unsigned char)name[0];
	}
	return -1;
}

static char *dup_or_null(const char *s, bool *failed)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*failed = true;
	return d;
}

int les_settings_add(struct les_settings *s, const char *name, const char *value, int key,
		     const char *file, unsigned int line)
{
	struct les_setting *st;
	bool failed = false;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct les_setting *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	st = &s->v[s->n];
	st->name = dup_or_null(name, &failed);
	st->value = dup_or_null(value, &failed);
	if (failed) {
		free(st->name);
		free(st->value);
		return -ENOMEM;
	}
	st->key = key;
	st->file = file;
	st->line = line;
	s->n++;
	return 0;
}

bool les_settings_has_key(const struct les_settings *s, int key)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].key == key)
			return true;
	return false;
}

void les_settings_free(struct les_settings *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].name);
		free(s->v[i].value);
	}
	free(s->v);
	free(s->file);
	memset(s, 0, sizeof(*s));
}

/* --- reading ------------------------------------------------------------- */

struct cfg_reader {
	const char *path;
	unsigned int line;
	char *err;
	size_t errlen;
};

static int cfg_error(struct cfg_reader *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->err, r->errlen, "%s:%u: ", r->path, r->line);
	if (n < 0 || (size_t)n >= r->errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static char *skip_blanks(char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static void trim_end(char *start, char *end)
{
	while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*end = '\0';
}

/* A quoted value: "..." with \" and \\; nothing but a comment may follow. */
static int unquote(struct cfg_reader *r, char *p)
{
	char *out = p, *in = p + 1;

	for (; *in && *in != '"'; in++) {
		if (*in == '\\' && (in[1] == '"' || in[1] == '\\'))
			in++;
		*out++ = *in;
	}
	if (*in != '"')
		return cfg_error(r, "unterminated quoted value");
	in = skip_blanks(in + 1);
	if (*in && *in != '#')
		return cfg_error(r, "text after the quoted value");
	*out = '\0';
	return 0;
}

/* An unquoted value ends at a '#' that follows a blank: a trailing comment. */
static void strip_comment(char *p)
{
	char *start = p;

	for (; *p; p++) {
		if (*p == '#' && (p == start || p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			break;
		}
	}
	trim_end(start, p);
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* Split "name [= value]" in place; *value NULL when there is no '='. */
static int split_line(struct cfg_reader *r, char *p, char **name, char **value)
{
	char *end;

	if (p[0] == '-' && p[1] == '-')
		p += 2; /* "--mount = x" reads like the command line: accept it */
	*name = p;
	while (name_char(*p))
		p++;
	end = p;
	p = skip_blanks(p);
	if (end == *name)
		return cfg_error(r, "expected an option name");
	if (*p && *p != '=' && *p != '#')
		return cfg_error(r, "expected '=' after '%.*s'", (int)(end - *name), *name);
	*value = NULL;
	if (*p == '=') {
		*end = '\0';
		p = skip_blanks(p + 1);
		*value = p;
		if (*p == '"')
			return unquote(r, p);
		strip_comment(p);
		return 0;
	}
	*end = '\0';
	return 0;
}

static bool forbidden_name(const char *const *forbidden, const char *name)
{
	for (; forbidden && *forbidden; forbidden++)
		if (strcmp(*forbidden, name) == 0)
			return true;
	return false;
}

static int config_line(struct cfg_reader *r, char *text, const struct les_option_table *t,
		       const char *const *forbidden, struct les_settings *s)
{
	char *p = skip_blanks(text), *name = NULL, *value = NULL;
	int key, has_arg, err;

	if (!*p || *p == '#')
		return 0;
	err = split_line(r, p, &name, &value);
	if (err)
		return err;
	key = les_config_lookup(t, name, &has_arg);
	if (key < 0)
		return cfg_error(r, "unknown option '%s'", name);
	if (forbidden_name(forbidden, name))
		return cfg_error(r, "option '%s' cannot be set in a config file", name);
	if (has_arg == required_argument && !value)
		return cfg_error(r, "option '%s' needs a value ('%s = VALUE')", name, name);
	if (has_arg == no_argument && value)
		return cfg_error(r, "option '%s' takes no value (write '%s' alone)", name, name);
	if (les_settings_add(s, name, value, key, s->file, r->line))
		return cfg_error(r, "out of memory");
	return 0;
}

/*
 * One line into buf (cap bytes), without its newline: its length, or -1 at
 * the end of the file. fgets cannot tell a NUL byte from the end of what it
 * read, so the line is read byte by byte and *nul says whether it held
 * one; a line of cap bytes or more is cut and *long_line set.
 */
static long read_line(FILE *f, char *buf, size_t cap, bool *nul, bool *long_line)
{
	size_t n = 0;
	int c;

	*nul = *long_line = false;
	while ((c = getc(f)) != EOF && c != '\n') {
		if (n + 1 >= cap) {
			*long_line = true;
			break;
		}
		*nul |= c == '\0';
		buf[n++] = (char)c;
	}
	buf[n] = '\0';
	return c == EOF && !n && !*long_line ? -1 : (long)n;
}

int les_config_load(const char *path, const struct les_option_table *t,
		    const char *const *forbidden, struct les_settings *s, char *err, size_t errlen)
{
	struct cfg_reader r = {.path = path, .err = err, .errlen = errlen};
	char buf[LES_CONFIG_LINE_MAX + 1];
	bool nul, long_line;
	FILE *f;
	long n;
	int ret = 0;

	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "cannot read config file %s: %s", path, strerror(errno));
		return ret;
	}
	free(s->file);
	s->file = strdup(path);
	if (!s->file) {
		fclose(f);
		return -ENOMEM;
	}
	while ((n = read_line(f, buf, sizeof(buf), &nul, &long_line)) >= 0) {
		r.line++;
		if (long_line) {
			ret = cfg_error(&r, "line longer than %d bytes", LES_CONFIG_LINE_MAX);
			break;
		}
		if (nul) {
			ret = cfg_error(&r, "NUL byte in line");
			break;
		}
		if (n && buf[n - 1] == '\r')
			buf[n - 1] = '\0';
		ret = config_line(&r, buf, t, forbidden, s);
		if (ret)
			break;
	}
	if (!ret && ferror(f)) {
		ret = -EIO;
		snprintf(err, errlen, "%s: read error", path);
	}
	fclose(f);
	return ret;
}

/* --- writing ------------------------------------------------------------- */

/* Values that would not read back as they are get quotes. */
static bool needs_quotes(const char *v)
{
	size_t n = strlen(v);

	if (!n || v[0] == ' ' || v[0] == '\t' || v[0] == '"' || v[n - 1] == ' ' || v[n - 1] == '\t')
		return true;
	for (const char *p = v; *p; p++)
		if (*p == '#' || *p == '\n')
			return true;
	return false;
}

static void print_quoted(const char *v, FILE *out)
{
	fputc('"', out);
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			fputc('\\', out);
		fputc(*v, out);
	}
	fputc('"', out);
}

void les_settings_print(const struct les_settings *s, FILE *out)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct les_setting *st = &s->v[i];

		fputs(st->name, out);
		if (st->value) {
			fputs(" = ", out);
			if (needs_quotes(st->value))
				print_quoted(st->value, out);
			else
				fputs(st->value, out);
		}
		fputc('\n', out);
	}
}
