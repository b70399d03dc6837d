/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The fields the start-up scan takes from /proc/PID/stat and
 * /proc/PID/status (proc(5)), parsed from the files' text. Any bytes are a
 * valid input: a comm may hold spaces, parentheses and newlines, so stat's
 * fields are read after the last ')'.
 */
#ifndef LES_PROCFS_H
#define LES_PROCFS_H

#include <stdbool.h>
#include <stdint.h>

/* ppid (field 4) and flags (field 9) of a NUL-terminated stat; false if malformed. */
bool les_procfs_stat(const char *stat, uint32_t *ppid, uint64_t *flags);

/* The real uid (the first number of "Uid:") of a NUL-terminated status; false if none. */
bool les_procfs_status_uid(const char *status, uint32_t *uid);

#endif /* LES_PROCFS_H */
