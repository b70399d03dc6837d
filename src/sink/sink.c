// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* File sink: buffered JSON Lines to stdout, a file or gzip. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "sink/outfile.h"
#include "sink/sink.h"

#define SINK_BUF_SIZE (1 << 20)

static bool is_gzip_path(const char *path)
{
	size_t n = path ? strlen(path) : 0;

	return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

/*
 * gzip written by hand around raw deflate, so that what is on disk is
 * always whole: every flush ends on a sync point and is counted written
 * only once the kernel took its bytes; nothing waits inside zlib. A
 * failed flush is taken back and its lines dropped; the member on disk is
 * then closed (an empty final block and a trailer over what it holds) and
 * the next flush starts a new one: gunzip and zcat read the members in
 * turn. Output is made in chunks of GZ_OUT_SIZE.
 */
#define GZ_OUT_SIZE   (256 << 10)
#define GZ_HEADER_LEN 10
#define GZ_END_LEN    13 /* final stored block (5) + CRC-32 + ISIZE */

struct sink_gz {
	z_stream z;
	bool member_open;    /* a header and whole blocks on disk, no end yet */
	bool end_pending;    /* a member on disk still lacks its end */
	uint32_t crc, isize; /* of the open member's (or the pending end's) data */
	unsigned char out[GZ_OUT_SIZE];
};

static struct sink_gz *gz_new(void)
{
	struct sink_gz *g = calloc(1, sizeof(*g));

	if (g && deflateInit2(&g->z, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		g = NULL;
	}
	return g;
}

static void gz_free(struct sink_gz *g)
{
	if (!g)
		return;
	deflateEnd(&g->z);
	free(g);
}

static void put_le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* RFC 1952 header: deflate, no name, no time, Unix. */
static size_t gz_put_header(unsigned char *p)
{
	static const unsigned char h[GZ_HEADER_LEN] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};

	memcpy(p, h, sizeof(h));
	return sizeof(h);
}

/* After a sync point: an empty final stored block, then the trailer. */
static size_t gz_put_end(unsigned char *p, uint32_t crc, uint32_t isize)
{
	static const unsigned char last[5] = {1, 0, 0, 0xff, 0xff};

	memcpy(p, last, sizeof(last));
	put_le32(p + 5, crc);
	put_le32(p + 9, isize);
	return GZ_END_LEN;
}

/* write(2) until done; *done counts what the kernel took. */
static int write_all(int fd, const void *p, size_t n, size_t *done)
{
	size_t off = 0;

	while (off < n) {
		ssize_t w = write(fd, (const char *)p + off, n - off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)w;
		*done += (size_t)w;
	}
	return 0;
}

/*
 * A flush that fails part way (a full disk) must not leave half a line in
 * the file: what went out of it is taken back, the whole flush is counted
 * as dropped. Fails quietly on what cannot be truncated (a pipe).
 */
static void unwrite(int fd, size_t n)
{
	off_t end = lseek(fd, 0, SEEK_CUR);

	if (n && end >= (off_t)n && ftruncate(fd, end - (off_t)n) == 0)
		lseek(fd, end - (off_t)n, SEEK_SET);
}

/* Compress p into g->out after the first used bytes, writing each full chunk. */
static int gz_deflate(struct sink_gz *g, int fd, const char *p, size_t n, size_t used, size_t *done)
{
	int err = 0;

	g->z.next_in = (unsigned char *)p;
	g->z.avail_in = (unsigned int)n;
	do {
		g->z.next_out = g->out + used;
		g->z.avail_out = (unsigned int)(sizeof(g->out) - used);
		if (deflate(&g->z, Z_SYNC_FLUSH) == Z_STREAM_ERROR)
			return -EIO;
		used = sizeof(g->out) - g->z.avail_out;
		/* A full chunk, or the last one: out it goes. */
		if (used && (g->z.avail_out == 0 || g->z.avail_in == 0)) {
			err = write_all(fd, g->out, used, done);
			used = 0;
		}
	} while (!err && (g->z.avail_in || g->z.avail_out == 0));
	return err;
}

static int write_gz(struct sink_gz *g, int fd, const char *p, size_t n)
{
	size_t used = 0, done = 0;
	int err;

	if (!g->member_open) {
		if (g->end_pending)
			used += gz_put_end(g->out, g->crc, g->isize);
		used += gz_put_header(g->out + used);
		deflateReset(&g->z);
	}
	err = gz_deflate(g, fd, p, n, used, &done);
	if (err) {
		unwrite(fd, done);
		/* The stream went on past what is on disk: close the member there. */
		if (g->member_open) {
			g->member_open = false;
			g->end_pending = true;
		}
		return err;
	}
	if (!g->member_open) {
		g->member_open = true;
		g->end_pending = false;
		g->crc = (uint32_t)crc32(0, NULL, 0);
		g->isize = 0;
	}
	g->crc = (uint32_t)crc32(g->crc, (const unsigned char *)p, (unsigned int)n);
	g->isize += (uint32_t)n;
	return 0;
}

/* The end of the member on disk, if it has none yet. */
static int gz_finish(struct sink_gz *g, int fd)
{
	size_t done = 0;
	int err;

	if (!g->member_open && !g->end_pending)
		return 0;
	err = write_all(fd, g->out, gz_put_end(g->out, g->crc, g->isize), &done);
	if (err)
		unwrite(fd, done);
	g->member_open = false;
	g->end_pending = false;
	return err;
}

static int write_plain(int fd, const char *p, size_t n)
{
	size_t done = 0;
	int err = write_all(fd, p, n, &done);

	if (err)
		unwrite(fd, done);
	return err;
}

static int open_target(struct les_sink_file *s)
{
	int fd;

	s->why[0] = '\0';
	if (!s->path) {
		s->fd = STDOUT_FILENO;
		s->owns_fd = false;
		return 0;
	}
	/* A capture starts a new file; a reopen (logrotate) appends to what is there. */
	fd = les_outfile_open(s->path, s->opened, s->why, sizeof(s->why));
	s->open_err = fd < 0 ? fd : 0;
	if (fd < 0)
		return fd;
	s->fd = fd;
	s->opened = true;
	s->owns_fd = true;
	if (is_gzip_path(s->path) && !s->gz) {
		s->gz = gz_new();
		if (!s->gz) {
			snprintf(s->why, sizeof(s->why), "%s", strerror(ENOMEM));
			return -ENOMEM;
		}
	}
	return 0;
}

int les_sink_file_open(struct les_sink_file *s, const char *path)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->path = path && strcmp(path, "-") != 0 ? path : NULL;
	s->buf = malloc(SINK_BUF_SIZE);
	if (!s->buf) {
		snprintf(s->why, sizeof(s->why), "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	s->cap = SINK_BUF_SIZE;
	return open_target(s);
}

/* A write or close error: counted, and its errno kept for the warnings. */
static void count_error(struct les_sink_file *s, int err)
{
	s->last_errno = -err;
	s->write_errors++;
}

int les_sink_file_flush(struct les_sink_file *s)
{
	int err;

	if (!s->len || s->pipe_closed)
		return s->pipe_closed ? -EPIPE : 0;
	if (s->fd < 0)
		err = s->open_err ?: -EBADF; /* a reopen failed: dropped until the next one */
	else if (s->gz)
		err = write_gz(s->gz, s->fd, s->buf, s->len);
	else
		err = write_plain(s->fd, s->buf, s->len);
	if (err) {
		/* The lines are gone (a closed pipe, a full disk): count them, go on. */
		s->dropped += s->buffered_lines;
		s->records_dropped += s->buffered_records;
		if (err == -EPIPE)
			s->pipe_closed = true;
		else
			count_error(s, err);
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

int les_sink_file_line(void *ctx, const struct les_event *ev, bool record)
{
	return append_line(ctx, ev->line, ev->line_len, record);
}

void les_sink_file_counts(void *ctx, struct les_output_counts *oc)
{
	const struct les_sink_file *s = ctx;

	oc->records_written = s->records_written;
	oc->records_buffered = s->buffered_records;
	oc->records_dropped = s->records_dropped;
	oc->lines_dropped = s->dropped;
	oc->write_errors = s->write_errors;
}

/* The gzip end and close(2): their errors are counted like a failed write. */
static int close_target(struct les_sink_file *s)
{
	int err = 0;

	if (s->gz && s->fd >= 0)
		err = gz_finish(s->gz, s->fd);
	if (s->owns_fd && s->fd >= 0 && close(s->fd) && !err)
		err = -errno;
	s->fd = -1;
	s->owns_fd = false;
	if (err && err != -EPIPE)
		count_error(s, err);
	return err;
}

int les_sink_file_reopen(struct les_sink_file *s)
{
	if (!s->path)
		return 0;
	les_sink_file_flush(s);
	/* An error closing the old file is counted (write_errors), not fatal. */
	close_target(s);
	return open_target(s);
}

int les_sink_file_close(struct les_sink_file *s)
{
	int err;

	if (!s->buf)
		return 0;
	les_sink_file_flush(s);
	err = close_target(s);
	gz_free(s->gz);
	s->gz = NULL;
	free(s->buf);
	s->buf = NULL;
	return err == -EPIPE ? 0 : err;
}
