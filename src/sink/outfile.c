// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Opening an output file as root: the directory, O_NOFOLLOW, fstat, mode (outfile.h). */
#define _GNU_SOURCE /* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "sink/outfile.h"

/* Root and the service user are trusted; anyone else could swap what they own. */
static bool foreign_owner(uid_t uid)
{
	return uid != 0 && uid != geteuid();
}

static int check_dir(const char *dir, const struct stat *st, char *why, size_t len)
{
	unsigned int mode = (unsigned int)(st->st_mode & 07777);

	if (!S_ISDIR(st->st_mode)) {
		snprintf(why, len, "%s is not a directory", dir);
		return -ENOTDIR;
	}
	/*
	 * A sticky directory (/tmp) is safe: nobody else can rename or remove
	 * what the tool made there, and what someone else planted first is
	 * refused by the checks of the opened file (no link followed, owner,
	 * hard links). Incident captures go to /tmp.
	 */
	if (st->st_mode & S_ISVTX)
		goto owner;
	if (st->st_mode & S_IWOTH) {
		snprintf(why, len, "refusing a directory anyone can write (%s, mode %04o, no sticky bit)",
			 dir, mode);
		return -EPERM;
	}
	if (st->st_mode & S_IWGRP) {
		snprintf(why, len, "refusing a directory its group can write (%s, mode %04o)", dir,
			 mode);
		return -EPERM;
	}
owner:
	if (foreign_owner(st->st_uid)) {
		snprintf(why, len, "refusing a directory owned by uid %u (%s)",
			 (unsigned int)st->st_uid, dir);
		return -EPERM;
	}
	return 0;
}

int les_outfile_open_dir(const char *path, const char **base, char *why, size_t len)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat st;
	int dfd, err;

	*base = slash ? slash + 1 : path;
	if (!**base) {
		snprintf(why, len, "names a directory, not a file");
		return -EISDIR;
	}
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else {
		snprintf(why, len, "path too long");
		return -ENAMETOOLONG;
	}
	/* The directory examined is the one the file is opened in (openat). */
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st)) {
		err = -errno;
		snprintf(why, len, "%s: %s", dir, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return err;
	}
	err = check_dir(dir, &st, why, len);
	if (err) {
		close(dfd);
		return err;
	}
	return dfd;
}

int les_outfile_check_file(const struct stat *st, char *why, size_t len)
{
	unsigned int mode = (unsigned int)(st->st_mode & 07777);

	if (!S_ISREG(st->st_mode))
		return 0;
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, len, "refusing a file others can write (mode %04o)", mode);
		return -EPERM;
	}
	if (foreign_owner(st->st_uid)) {
		snprintf(why, len, "refusing a file owned by uid %u", (unsigned int)st->st_uid);
		return -EPERM;
	}
	return 0;
}

/* The errors of openat(O_NOFOLLOW | O_NONBLOCK) that mean a planted file. */
static int open_refusal(int err, char *why, size_t len)
{
	if (err == ELOOP)
		snprintf(why, len, "refusing a symbolic link (the output is opened as root)");
	else if (err == ENXIO)
		snprintf(why, len, "a FIFO with no reader (start the reader first)");
	else
		snprintf(why, len, "%s", strerror(err));
	return -err;
}

/* What was opened: a regular file (checked, made at most 0640), a device, a FIFO. */
static int check_opened(int fd, bool append, char *why, size_t len)
{
	struct stat st;
	int err;

	if (fstat(fd, &st))
		return open_refusal(errno, why, len);
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
		return 0;
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, len,
			 "refusing what is neither a file, a character device nor a FIFO");
		return -EPERM;
	}
	err = les_outfile_check_file(&st, why, len);
	if (err)
		return err;
	/* Truncating a file with another name would truncate that one too. */
	if (st.st_nlink > 1) {
		snprintf(why, len, "refusing a file with %lu hard links",
			 (unsigned long)st.st_nlink);
		return -EPERM;
	}
	/* Records name users and jobs: an existing 0644 file must not stay so. */
	if ((st.st_mode & 07777 & ~LES_OUTFILE_MODE) && fchmod(fd, st.st_mode & LES_OUTFILE_MODE))
		return open_refusal(errno, why, len);
	/* Only now, once it is known what the file is, is it truncated. */
	if (!append && ftruncate(fd, 0))
		return open_refusal(errno, why, len);
	return 0;
}

int les_outfile_open(const char *path, bool append, char *why, size_t len)
{
	const char *base;
	int dfd = les_outfile_open_dir(path, &base, why, len);
	int fd, err;

	if (dfd < 0)
		return dfd;
	/* O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of hanging. */
	fd = openat(dfd, base, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
		    LES_OUTFILE_MODE);
	err = fd < 0 ? open_refusal(errno, why, len) : check_opened(fd, append, why, len);
	/* Writes block again (a slow pipe reader); a reopen appends. */
	if (!err && fcntl(fd, F_SETFL, append ? O_APPEND : 0))
		err = open_refusal(errno, why, len);
	close(dfd);
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	return fd;
}
