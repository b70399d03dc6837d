// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* File sink: buffered JSON Lines to stdout, a file or gzip. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "sink.h"

#define SINK_BUF_SIZE (1 << 20)

static bool is_gzip_path(const char *path)
{
	size_t n = path ? strlen(path) : 0;

	return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

static int open_target(struct les_sink_file *s)
{
	if (!s->path) {
		s->fd = STDOUT_FILENO;
		s->owns_fd = false;
		return 0;
	}
	/* 0640: records name users, jobs and processes. */
	/* A capture starts a new file; a reopen (logrotate) appends to what is there. */
	s->fd = open(s->path, O_WRONLY | O_CREAT | O_CLOEXEC | (s->opened ? O_APPEND : O_TRUNC),
		     0640);
	if (s->fd < 0)
		return -errno;
	s->opened = true;
	s->owns_fd = true;
	if (is_gzip_path(s->path)) {
		s->gz = gzdopen(dup(s->fd), "ab6");
		if (!s->gz)
			return -ENOMEM;
	}
	return 0;
}

int les_sink_file_open(struct les_sink_file *s, const char *path)
{
	memset(s, 0, sizeof(*s));
	s->path = path && strcmp(path, "-") != 0 ? path : NULL;
	s->buf = malloc(SINK_BUF_SIZE);
	if (!s->buf)
		return -ENOMEM;
	s->cap = SINK_BUF_SIZE;
	return open_target(s);
}

/*
 * A flush that fails part way (a full disk) must not leave half a line in
 * the file: what went out of it is taken back, the whole flush is counted
 * as dropped. Fails quietly on what cannot be truncated (a pipe).
 */
static void unwrite(int fd, size_t n)
{
	off_t end = lseek(fd, 0, SEEK_CUR);

	if (end >= (off_t)n && ftruncate(fd, end - (off_t)n) == 0)
		lseek(fd, end - (off_t)n, SEEK_SET);
}

static int write_all(int fd, const char *p, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(fd, p + done, n - done);

		if (w < 0) {
			int err = -errno;

			if (err == -EINTR)
				continue;
			if (done)
				unwrite(fd, done);
			return err;
		}
		done += (size_t)w;
	}
	return 0;
}

static int write_gz(void *gz, const char *p, size_t n)
{
	int zerr;

	if (gzwrite(gz, p, (unsigned int)n) == (int)n)
		return 0;
	gzerror(gz, &zerr);
	return zerr == Z_ERRNO && errno ? -errno : -EIO;
}

int les_sink_file_flush(struct les_sink_file *s)
{
	int err;

	if (!s->len || s->pipe_closed)
		return s->pipe_closed ? -EPIPE : 0;
	err = s->gz ? write_gz(s->gz, s->buf, s->len) : write_all(s->fd, s->buf, s->len);
	if (err) {
		/* The lines are gone (a closed pipe, a full disk): count them, go on. */
		s->dropped += s->buffered_lines;
		s->records_dropped += s->buffered_records;
		if (err == -EPIPE) {
			s->pipe_closed = true;
		} else {
			s->last_errno = -err;
			s->write_errors++;
		}
	} else {
		s->written += s->buffered_lines;
		s->records_written += s->buffered_records;
	}
	s->len = 0;
	s->buffered_lines = 0;
	s->buffered_records = 0;
	return err;
}

static void count_dropped(struct les_sink_file *s, bool record)
{
	s->dropped++;
	if (record)
		s->records_dropped++;
}

static int append_line(struct les_sink_file *s, const char *line, size_t n, bool record)
{
	if (s->pipe_closed) {
		count_dropped(s, record);
		return -EPIPE;
	}
	if (s->len + n > s->cap) {
		int err = les_sink_file_flush(s);

		if (err == -EPIPE) {
			count_dropped(s, record);
			return err;
		}
	}
	if (n > s->cap) {
		count_dropped(s, record);
		return -E2BIG;
	}
	memcpy(s->buf + s->len, line, n);
	s->len += n;
	s->buffered_lines++;
	if (record)
		s->buffered_records++;
	return 0;
}

int les_sink_file_write(struct les_sink_file *s, const char *line, size_t n)
{
	return append_line(s, line, n, false);
}

int les_sink_file_write_record(struct les_sink_file *s, const char *line, size_t n)
{
	return append_line(s, line, n, true);
}

static void close_target(struct les_sink_file *s)
{
	if (s->gz) {
		gzclose(s->gz);
		s->gz = NULL;
	}
	if (s->owns_fd && s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->owns_fd = false;
}

int les_sink_file_reopen(struct les_sink_file *s)
{
	if (!s->path)
		return 0;
	les_sink_file_flush(s);
	close_target(s);
	return open_target(s);
}

void les_sink_file_close(struct les_sink_file *s)
{
	if (!s->buf)
		return;
	les_sink_file_flush(s);
	close_target(s);
	free(s->buf);
	s->buf = NULL;
}
