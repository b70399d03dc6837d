/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Opening a file the tool writes (or reads options from) as root. The
 * rules, the same at start and on every SIGHUP reopen:
 *
 * - the directory: only root or the service user (the effective uid the
 *   tool runs as) may own it, and neither its group nor others may write
 *   it (sticky bit or not): whoever can write it can plant a link first;
 * - the file: opened with O_NOFOLLOW (a symlink is refused), then what was
 *   opened is examined (fstat): a regular file, a character device
 *   (/dev/null, a terminal) or a FIFO with a reader; anything else is
 *   refused. A regular file that its group or others can write, that
 *   another user owns, or that has other names (hard links) is refused;
 *   one that others can read is made 0640 (no bit beyond 0640 is kept).
 *
 * Each refusal is one line of text in why (no trailing newline).
 */
#ifndef LES_OUTFILE_H
#define LES_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* The mode bits an output file may keep at most. */
#define LES_OUTFILE_MODE 0640

/*
 * Open the directory of path (O_PATH) and check it. Returns the directory
 * fd, *base pointing at the last component of path, or -errno with why.
 */
int les_outfile_open_dir(const char *path, const char **base, char *why, size_t len);

/* Refuse (-EPERM and why) a regular file others could write or replace. */
int les_outfile_check_file(const struct stat *st, char *why, size_t len);

/*
 * Open path for writing under the rules above: truncated (append false)
 * or appended to (append true), created LES_OUTFILE_MODE. Returns the fd
 * (O_CLOEXEC, blocking) or -errno with why.
 */
int les_outfile_open(const char *path, bool append, char *why, size_t len);

#endif /* LES_OUTFILE_H */
