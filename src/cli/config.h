/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Settings as (option, value) pairs, from the command line or a config
 * file, and the config file format:
 *
 *	# a comment
 *	mount = /mnt/lustre          one option per line: its long name = value
 *	mount = /mnt/scratch         repeatable options repeat
 *	file-id                      a flag: the name alone
 *	jobid-name = "%j %e"         quotes keep blanks, '#' and quotes (\" \\)
 *	X = security.protocol=SSL    a short-only option by its letter
 *
 * Every long option works in the file: names are resolved through the same
 * getopt_long table as the command line.
 */
#ifndef LES_CONFIG_H
#define LES_CONFIG_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define LES_CONFIG_DEFAULT_PATH "/etc/lustre-ebpf-stream.conf"
#define LES_CONFIG_LINE_MAX	4096

/* One setting; strings are owned by the list. */
struct les_setting {
	char *name;	  /* long name, or the letter of a short-only option */
	char *value;	  /* NULL: a flag given without a value */
	int key;	  /* getopt's val: aliases of one option share it */
	const char *file; /* where it was read: NULL for the command line */
	unsigned int line;
};

struct les_settings {
	struct les_setting *v;
	size_t n, cap;
	char *file; /* the path the file settings point to */
};

/* How names resolve: the getopt_long table and its short option string. */
struct les_option_table {
	const struct option *longopts;
	const char *shortopts;
};

/* Resolve a name to its key and has_arg; -1 when the option does not exist. */
int les_config_lookup(const struct les_option_table *t, const char *name, int *has_arg);

int les_settings_add(struct les_settings *s, const char *name, const char *value, int key,
		     const char *file, unsigned int line);
bool les_settings_has_key(const struct les_settings *s, int key);
void les_settings_free(struct les_settings *s);

/*
 * Read a config file into s, checking every name against t. Options in
 * forbidden (NULL-terminated long names) are refused: --config itself,
 * --help. On error, returns -errno (cannot read) or -EINVAL and writes
 * "FILE:LINE: message" to err.
 */
int les_config_load(const char *path, const struct les_option_table *t,
		    const char *const *forbidden, struct les_settings *s, char *err, size_t errlen);

/* The settings in the file format, which les_config_load reads back. */
void les_settings_print(const struct les_settings *s, FILE *out);

#endif /* LES_CONFIG_H */
