/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The syscall access plane's table: which syscalls are file operations,
 * which op each one is, and where its target is among its arguments.
 * Syscall numbers come from this build's <sys/syscall.h>.
 */
#ifndef LES_SYSCALLS_H
#define LES_SYSCALLS_H

#include <stddef.h>
#include "les_record.h"

struct les_syscall_entry {
	const char *name;
	long nr;
	struct les_syscall_desc desc;
};

/* The table and its length. */
const struct les_syscall_entry *les_syscall_table(size_t *n);

/*
 * The programs of the per-syscall tracepoints (bpf/access_syscall.bpf.h):
 * 1 for an exit (sys_exit_tp*), 2 for an entry (sys_enter_tp*), else 0.
 * Each attaches once per table syscall, to syscalls:sys_{exit,enter}_NAME.
 */
int les_syscall_prog(const char *prog_name);

#endif /* LES_SYSCALLS_H */
