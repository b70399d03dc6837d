// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sd_notify(3) over a plain unix datagram socket. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "cli/sdnotify.h"

int les_sd_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	size_t n = path ? strlen(path) : 0;
	socklen_t addr_len;
	ssize_t sent;
	int fd, err = 0;

	if (!n)
		return 0;
	if ((path[0] != '/' && path[0] != '@') || n >= sizeof(addr.sun_path))
		return -EINVAL;
	memcpy(addr.sun_path, path, n);
	if (path[0] == '@')
		addr.sun_path[0] = '\0'; /* abstract namespace */
	addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	sent = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&addr, addr_len);
	if (sent < 0)
		err = -errno;
	close(fd);
	return err;
}

bool les_sd_is_journal(int fd)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!env || sscanf(env, "%llu:%llu", &dev, &ino) != 2 || fstat(fd, &st) != 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}
