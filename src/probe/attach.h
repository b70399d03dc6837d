/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The attach method asked for (--attach): the probe planners' input, here
 * in the probe layer so that they need nothing of the command line.
 */
#ifndef LES_ATTACH_H
#define LES_ATTACH_H

enum les_attach_mode {
	LES_ATTACH_MODE_AUTO = 0,
	LES_ATTACH_MODE_FENTRY,
	LES_ATTACH_MODE_KPROBE,
	LES_ATTACH_MODE_SYSCALL,
};

#endif /* LES_ATTACH_H */
