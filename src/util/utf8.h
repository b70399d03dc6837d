/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * UTF-8 checks, and the copy of a name that is safe to print on a
 * terminal. Job IDs, comm, user names and mount paths come from users:
 * printed as they are, an escape sequence in one of them would drive the
 * operator's terminal (retitle it, move the cursor, hide lines).
 */
#ifndef LES_UTF8_H
#define LES_UTF8_H

#include <stdarg.h>
#include <stddef.h>

/* Length of the well-formed UTF-8 sequence at p (RFC 3629), 0 if none. */
size_t les_utf8_seq_len(const unsigned char *p);

/*
 * Copy s into out for a terminal: control characters (C0, DEL, C1), the
 * bidirectional overrides and every byte that is not well-formed UTF-8
 * become a visible \xHH per byte, a backslash becomes \\, everything else
 * is copied. Writes at most cap - 1 bytes and a NUL, never cutting an
 * escape or a character; returns the length. LES_TERM_SAFE_LEN(n) is the
 * room that always holds a name of n bytes.
 */
size_t les_term_safe(const char *s, char *out, size_t cap);
#define LES_TERM_SAFE_LEN(n) (4 * (n) + 1)

/*
 * One line on stderr, "lustre-ebpf-stream: " and the message, made safe
 * for the terminal (mount paths and names in it are users').
 */
void les_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void les_vsay(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif /* LES_UTF8_H */
