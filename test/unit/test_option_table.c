// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The option table (src/cli/option_table.h) against what is written
 * outside the program from it by hand: the man page must list every
 * option with the table's argument names (and no option the table does
 * not have), and the bash completion must complete each option's argument
 * as the table's hint says and offer every short letter. The table itself
 * must be whole: one key per option, an argument name and a completion
 * hint for each option that takes an argument, help for each listed one.
 */
#include <check.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/option_table.h"

static const char *source_path(const char *rel)
{
	static char path[1024];
	const char *unit = strstr(__FILE__, "/test/unit/test_option_table.c");

	snprintf(path, sizeof(path), "%.*s/%s", unit ? (int)(unit - __FILE__) : 1,
		 unit ? __FILE__ : ".", rel);
	return path;
}

/* A whole file, NUL-terminated; the caller frees it. */
static char *slurp(const char *rel)
{
	FILE *f = fopen(source_path(rel), "re");
	char *buf = calloc(1, 1 << 20);
	size_t n;

	ck_assert_msg(f, "cannot open %s", source_path(rel));
	ck_assert_ptr_nonnull(buf);
	n = fread(buf, 1, (1 << 20) - 1, f);
	ck_assert_uint_lt(n, (1 << 20) - 1);
	fclose(f);
	return buf;
}

static const struct les_opt *by_name(const char *name)
{
	for (size_t i = 0; i < les_n_opts; i++)
		if (les_opts[i].name && strcmp(les_opts[i].name, name) == 0)
			return &les_opts[i];
	return NULL;
}

static const struct les_opt *by_letter(int letter)
{
	for (size_t i = 0; i < les_n_opts; i++)
		if (les_opt_short(&les_opts[i]) == letter)
			return &les_opts[i];
	return NULL;
}

/* "--mount" or "-m" (an item of the man page or the completion) to its entry. */
static const struct les_opt *by_flag(const char *flag)
{
	if (flag[0] == '-' && flag[1] == '-')
		return by_name(flag + 2);
	if (flag[0] == '-' && flag[1] && !flag[2])
		return by_letter((unsigned char)flag[1]);
	return NULL;
}

/* --- the table itself ------------------------------------------------------ */

START_TEST(test_table_whole)
{
	for (size_t i = 0; i < les_n_opts; i++) {
		const struct les_opt *o = &les_opts[i];
		const char *what = o->name ? o->name : "(short-only)";
		bool listed = !(o->flags & (LES_OPT_F_ALIAS | LES_OPT_F_JOINED));

		ck_assert_msg(o->name || les_opt_short(o), "entry %zu has no name", i);
		ck_assert_msg(!o->arg == (o->has_arg == no_argument), "%s: argument name", what);
		ck_assert_msg(!o->complete == (o->has_arg == no_argument), "%s: completion hint",
			      what);
		ck_assert_msg(!o->help == !listed, "%s: help text", what);
		/* An alias shares the key of the entry before it; no other entry does. */
		for (size_t j = 0; j < i; j++)
			ck_assert_msg(les_opts[j].key != o->key ||
					      (o->flags & LES_OPT_F_ALIAS && j == i - 1),
				      "%s: key of %s", what, les_opts[j].name);
		ck_assert_msg(!o->name || by_name(o->name) == o, "%s twice", what);
	}
}
END_TEST

/* getopt's table holds every long name, and the short string every letter. */
START_TEST(test_getopt_tables)
{
	const struct option *lo = les_opt_getopt_long();
	const char *shorts = les_opt_getopt_short();
	size_t n_long = 0;

	ck_assert_int_eq(shorts[0], ':');
	for (size_t i = 0; i < les_n_opts; i++) {
		const struct les_opt *o = &les_opts[i];
		const char *at;

		if (o->name) {
			ck_assert_str_eq(lo[n_long].name, o->name);
			ck_assert_int_eq(lo[n_long].has_arg, o->has_arg);
			ck_assert_int_eq(lo[n_long].val, o->key);
			n_long++;
		}
		if (!les_opt_short(o))
			continue;
		at = strchr(shorts + 1, o->key);
		ck_assert_msg(at, "-%c not in getopt's short options", o->key);
		ck_assert_int_eq(at[1] == ':', o->has_arg == required_argument);
	}
	ck_assert_ptr_null(lo[n_long].name);
}
END_TEST

/*
 * --help: within 80 columns, and every long name in it as a word (the
 * completion takes its option names from --help).
 */
START_TEST(test_help_lists_every_name)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	char *line, *save = NULL;

	les_opt_usage(f);
	fclose(f);
	for (size_t i = 0; i < les_n_opts; i++) {
		char flag[64];
		const char *at;
		bool word = false;

		if (!les_opts[i].name)
			continue;
		snprintf(flag, sizeof(flag), "--%s", les_opts[i].name);
		for (at = strstr(text, flag); at && !word; at = strstr(at + 1, flag))
			word = !isalnum((unsigned char)at[strlen(flag)]) &&
			       at[strlen(flag)] != '-';
		ck_assert_msg(word, "--help does not name %s", flag);
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		ck_assert_msg(strlen(line) <= 80, "--help line over 80 columns: %s", line);
	free(text);
}
END_TEST

/* --- the man page ----------------------------------------------------------- */

/*
 * A .B/.BI/.BR line as it reads: the macro's arguments run together (each
 * alternates the font), quotes and font escapes gone, "\-" a hyphen.
 */
static void man_text(const char *line, char *out, size_t size)
{
	char joined[512];
	size_t n = 0;
	const char *p = strchr(line, ' ');

	while (p && *p && n < sizeof(joined) - 1) {
		while (*p == ' ')
			p++;
		if (*p == '"') {
			for (p++; *p && *p != '"' && n < sizeof(joined) - 1; p++)
				joined[n++] = *p;
			p += *p == '"';
		} else {
			for (; *p && *p != ' ' && n < sizeof(joined) - 1; p++)
				joined[n++] = *p;
		}
	}
	joined[n] = '\0';
	n = 0;
	for (p = joined; *p && n < size - 1; p++) {
		if (p[0] == '\\' && p[1] == 'f' && p[2]) {
			p += 2;
			continue;
		}
		if (p[0] == '\\' && (p[1] == '-' || p[1] == '&')) {
			p++;
			if (*p == '&')
				continue;
		}
		out[n++] = *p;
	}
	out[n] = '\0';
}

/* How the man page writes an entry: "--op OP[,OP...]", "--summary[=BOOL]", "-X PROP=VALUE". */
static void man_synopsis(const struct les_opt *o, char *buf, size_t size)
{
	char names[64];

	if (o->name)
		snprintf(names, sizeof(names), "--%s", o->name);
	else
		snprintf(names, sizeof(names), "-%c", les_opt_short(o));
	if (o->has_arg == no_argument)
		snprintf(buf, size, "%s", names);
	else if (o->has_arg == optional_argument)
		snprintf(buf, size, "%s[=%s]", names, o->arg);
	else if (o->flags & LES_OPT_F_LIST)
		snprintf(buf, size, "%s %s[,%s...]", names, o->arg, o->arg);
	else
		snprintf(buf, size, "%s %s", names, o->arg);
}

/* Which entries the man page's OPTIONS section gives a paragraph (.TP) of. */
static void man_options(bool *seen)
{
	char *man = slurp("man/lustre-ebpf-stream.8");
	char *start = strstr(man, "\n.SH OPTIONS\n"), *end, *line, *save = NULL;
	bool after_tp = false;

	ck_assert_ptr_nonnull(start);
	end = strstr(start + 1, "\n.SH ");
	ck_assert_ptr_nonnull(end);
	*end = '\0';
	for (line = strtok_r(start, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char text[512], *item, *next;
		const struct les_opt *o = NULL;
		bool tp = after_tp;

		after_tp = strcmp(line, ".TP") == 0;
		if (!tp || line[0] != '.')
			continue;
		man_text(line, text, sizeof(text));
		/* "-m, --mount PATH": the letter and the names, each in the table. */
		for (item = text; item; item = next) {
			char flag[128], want[160];

			next = strstr(item, ", ");
			if (next) {
				*next = '\0';
				next += 2;
			}
			if (item[0] != '-')
				break;
			sscanf(item, "%127[^ []", flag);
			o = by_flag(flag);
			ck_assert_msg(o, "the man page has %s, the table does not", flag);
			seen[(o - les_opts) * 2 + (flag[1] != '-')] = true;
			if (flag[1] != '-' && o->name)
				continue; /* "-m" before "--mount PATH" */
			man_synopsis(o, want, sizeof(want));
			ck_assert_msg(strcmp(item, want) == 0, "man page: '%s', table: '%s'", item,
				      want);
		}
	}
	free(man);
}

START_TEST(test_man_page_lists_each_option)
{
	bool seen[512] = {false};

	ck_assert_uint_le(les_n_opts * 2, sizeof(seen));
	man_options(seen);
	for (size_t i = 0; i < les_n_opts; i++) {
		const struct les_opt *o = &les_opts[i];

		ck_assert_msg(!o->name || seen[i * 2], "the man page has no paragraph of --%s",
			      o->name);
		ck_assert_msg(!les_opt_short(o) || seen[i * 2 + 1],
			      "the man page does not give -%c", les_opt_short(o));
	}
}
END_TEST

/* --- the bash completion ------------------------------------------------------ */

/* The hint a completion branch's body stands for (see struct les_opt's complete). */
static void branch_hint(const char *body, char *hint, size_t size)
{
	const char *w;

	if (strstr(body, "compgen -f"))
		snprintf(hint, size, "file");
	else if (strstr(body, "/proc/self/mounts"))
		snprintf(hint, size, "mount");
	else if (strstr(body, "getent passwd"))
		snprintf(hint, size, "uid");
	else if (strstr(body, "-o pid="))
		snprintf(hint, size, "pid");
	else if (strstr(body, "-o comm="))
		snprintf(hint, size, "comm");
	else if ((w = strstr(body, "_lustre_ebpf_stream_list \"$cur\" \"$")))
		snprintf(hint, size, "list:%.*s", (int)strcspn(w + 34, "\""), w + 34);
	else if (strstr(body, "compgen -W \"true false\""))
		snprintf(hint, size, "bool");
	else if ((w = strstr(body, "compgen -W \"")) && w[12] != '$')
		snprintf(hint, size, "words:%.*s", (int)strcspn(w + 12, "\""), w + 12);
	else if (strspn(body, "\t ") == strlen(body) - strlen("return ;;\n") &&
		 strstr(body, "return ;;"))
		snprintf(hint, size, "none");
	else
		snprintf(hint, size, "?");
}

/* Each option of a branch's pattern ("-d | --duration | -c ...)") has the branch's hint. */
static void check_branch(char *pattern, const char *body, bool *seen)
{
	char hint[256], *flag, *save = NULL;

	branch_hint(body, hint, sizeof(hint));
	for (flag = strtok_r(pattern, " |)\\\t\n", &save); flag;
	     flag = strtok_r(NULL, " |)\\\t\n", &save)) {
		const struct les_opt *o = by_flag(flag);

		ck_assert_msg(o, "the completion completes %s, the table has no such option", flag);
		ck_assert_msg(o->complete && strcmp(o->complete, hint) == 0,
			      "%s: the completion does '%s', the table says '%s'", flag, hint,
			      o->complete ? o->complete : "(no argument)");
		seen[(o - les_opts) * 2 + (flag[1] != '-')] = true;
	}
}

/* The branches of "case $prev in": patterns at one tab, bodies at two, up to ";;". */
static void completion_branches(const char *script, bool *seen)
{
	const char *p = strstr(script, "\tcase $prev in\n"), *end = strstr(script, "\tesac\n");
	char pattern[2048], body[2048];

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(end);
	p = strchr(p, '\n') + 1;
	while (p < end) {
		size_t np = 0, nb = 0;

		/* The pattern: lines until one that ends in ')'. */
		for (;;) {
			size_t n = strcspn(p, "\n");

			ck_assert_uint_lt(np + n + 1, sizeof(pattern));
			memcpy(pattern + np, p, n);
			np += n;
			pattern[np++] = ' ';
			p += n + 1;
			if (p[-2] == ')')
				break;
		}
		pattern[np] = '\0';
		/* The body: lines until one with ";;". */
		for (;;) {
			size_t n = strcspn(p, "\n") + 1;

			ck_assert_uint_lt(nb + n, sizeof(body));
			memcpy(body + nb, p, n);
			nb += n;
			p += n;
			body[nb] = '\0';
			if (strstr(body + nb - n, ";;"))
				break;
		}
		check_branch(pattern, body, seen);
	}
}

/* The letters offered after "-": those of the table. */
static void completion_letters(const char *script)
{
	const char *at = strstr(script, "_lustre_ebpf_stream_options \"${COMP_WORDS[0]}\")");
	char letters[256], *tok, *save = NULL;
	size_t n_offered = 0, n_table = 0;

	ck_assert_ptr_nonnull(at);
	at = strchr(at, ')') + 1;
	snprintf(letters, sizeof(letters), "%.*s", (int)strcspn(at, "\""), at);
	for (tok = strtok_r(letters, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		const struct les_opt *o = by_flag(tok);

		ck_assert_msg(o && tok[1] != '-', "the completion offers %s, no letter of the table",
			      tok);
		n_offered++;
	}
	for (size_t i = 0; i < les_n_opts; i++)
		n_table += les_opt_short(&les_opts[i]) != 0;
	ck_assert_uint_eq(n_offered, n_table);
}

START_TEST(test_completion_follows_table)
{
	char *script = slurp("completion/lustre-ebpf-stream");
	bool seen[512] = {false};

	ck_assert_uint_le(les_n_opts * 2, sizeof(seen));
	completion_branches(script, seen);
	completion_letters(script);
	for (size_t i = 0; i < les_n_opts; i++) {
		const struct les_opt *o = &les_opts[i];

		if (o->has_arg == no_argument)
			continue;
		ck_assert_msg(!o->name || seen[i * 2], "the completion does not complete --%s",
			      o->name);
		ck_assert_msg(!les_opt_short(o) || seen[i * 2 + 1],
			      "the completion does not complete -%c", les_opt_short(o));
	}
	free(script);
}
END_TEST

static Suite *option_table_suite(void)
{
	Suite *s = suite_create("option_table");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, test_table_whole);
	tcase_add_test(tc, test_getopt_tables);
	tcase_add_test(tc, test_help_lists_every_name);
	tcase_add_test(tc, test_man_page_lists_each_option);
	tcase_add_test(tc, test_completion_follows_table);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(option_table_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
