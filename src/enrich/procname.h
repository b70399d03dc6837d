/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The "process" field: a process name with its instance suffix stripped
 * (--process-name-strip-suffix), then collapsed to "other" unless
 * allowlisted (--process-allowlist a,b,c). The record's "comm" stays raw.
 *
 * Normalization, as in lustre-ebpf-exporter's --process-name-strip-suffix:
 *
 *   - Separators are space, '-', '_', ':' and '/'. A trailing token after a
 *     separator is an instance token when it is all digits or one ASCII
 *     letter; it is stripped with its separator:
 *       "Bun Pool 1" -> "Bun Pool", "worker-3" -> "worker",
 *       "thread_42" -> "thread", "ray-dashboard-E" -> "ray-dashboard".
 *   - A dotted name whose last dot-component ends in digits after a
 *     non-digit prefix loses those digits: "client.poll12" -> "client.poll".
 *     A last component that is all digits is a version: "python3.11" and
 *     "go1.21.5" stay; so does "python3" (no separator, no dot).
 *   - Kernel threads name their instance after a '/': "kworker/107",
 *     "kworker/u8:2", "kworker/R-mm_pe", "ksoftirqd/3", "irq/125-nvme0q1".
 *     When what follows the first '/' starts with a digit, or with one
 *     letter and then a digit or '-', all of it is the instance and is
 *     stripped: these all give "kworker", "ksoftirqd", "irq". Otherwise
 *     ("jbd2/sda1-8") only the trailing rules apply ("jbd2/sda1").
 *   - The rules repeat until none applies ("worker-3-1" -> "worker"), so a
 *     name has one normal form whichever suffixes it carries.
 *   - A rule never empties the name: "123", "-1", " 1", "a" stay as they
 *     are. A trailing separator is not an instance token: "worker-" stays.
 *
 * Bytes are compared as bytes; no locale, no allocation.
 */
#ifndef LES_PROCNAME_H
#define LES_PROCNAME_H

#include <stdbool.h>
#include <stddef.h>

#define LES_PROCNAME_MAX       64 /* longest allowlisted name + NUL */
#define LES_PROCNAME_ALLOW_MAX 256
#define LES_PROCNAME_OTHER     "other"

/*
 * Normalize comm (len bytes, or up to a NUL before that) into out (cap
 * bytes, NUL-terminated, cut to cap - 1). Returns the length written.
 * out may alias comm.
 */
size_t les_procname_normalize(const char *comm, size_t len, char *out, size_t cap);

/* The process-name options, built once, read-only afterwards. */
struct les_procname_filter {
	bool strip_suffix; /* --process-name-strip-suffix */
	unsigned int n;	   /* allowlisted names; 0 = no allowlist */
	char names[LES_PROCNAME_ALLOW_MAX][LES_PROCNAME_MAX]; /* sorted after _finish */
};

void les_procname_filter_init(struct les_procname_filter *f, bool strip_suffix);

/*
 * Add the names of a comma-separated list (repeatable option). Blank items
 * are an error, spaces inside a name are kept ("Bun Pool"). Names are
 * compared with normalized names, so list the normalized form.
 * Returns 0, or -EINVAL / -E2BIG with a message in err.
 */
int les_procname_allow_add(struct les_procname_filter *f, const char *csv, char *err,
			   size_t errlen);

/* Sort the allowlist and drop duplicates; call after the last _add. */
void les_procname_filter_finish(struct les_procname_filter *f);

/* Is name (len bytes) in the allowlist? Binary search. */
bool les_procname_allowed(const struct les_procname_filter *f, const char *name, size_t len);

/*
 * The "process" value of comm: normalized into buf if strip_suffix, then
 * LES_PROCNAME_OTHER if an allowlist is set and does not hold it. Returns
 * buf or the static LES_PROCNAME_OTHER; buf is always written.
 */
const char *les_procname_apply(const struct les_procname_filter *f, const char *comm, size_t len,
			       char *buf, size_t cap);

#endif /* LES_PROCNAME_H */
