/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * systemd's readiness protocol (sd_notify(3)) without libsystemd: one
 * datagram ("READY=1", "STOPPING=1", ...) to the unix socket named by
 * $NOTIFY_SOCKET, which systemd sets for Type=notify services. A leading
 * '@' names an abstract socket. Without the variable it does nothing.
 */
#ifndef LES_SDNOTIFY_H
#define LES_SDNOTIFY_H

#include <stdbool.h>

/* 0 when sent or when not under systemd; -errno when sending failed. */
int les_sd_notify(const char *state);

/*
 * Is fd the stream systemd connected to the journal? $JOURNAL_STREAM
 * ("DEV:INODE", systemd.exec(5)) names it; fd must be that very file.
 */
bool les_sd_is_journal(int fd);

#endif /* LES_SDNOTIFY_H */
