// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * File sink: write errors counted (/dev/full, plain and gzip; a file size
 * limit hit part way), gzip that resumes after an error and stays whole,
 * and the rules of outfile.h on real paths, at open and at reopen: a
 * symlink, a FIFO, a 0644 file, a hard link, directories others can write;
 * the same rules for --config (les_privs_check_path).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "cli/privs.h"
#include "sink/sink.h"

static char dir[64];

static void dir_setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/les-test-sink.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void dir_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static const char *in_dir(const char *name)
{
	static char path[4][128];
	static int i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", dir, name);
	return path[i];
}

/* Line i of a run: distinct, so that a line lost or doubled shows. */
static size_t line_of(int i, char *buf, size_t len)
{
	return (size_t)snprintf(buf, len, "{\"type\":\"access\",\"n\":%d,\"pad\":\"%0*d\"}\n", i,
				64 + i % 50, i);
}

static void write_lines(struct les_sink_file *s, int from, int to)
{
	char line[256];

	for (int i = from; i < to; i++) {
		size_t n = line_of(i, line, sizeof(line));

		ck_assert_int_eq(les_sink_file_write_record(s, line, n), 0);
	}
}

/* The text lines from..to-1 of write_lines, in a malloc'd string. */
static char *expected_lines(int from, int to)
{
	size_t cap = (size_t)(to - from) * 256 + 1, len = 0;
	char *text = malloc(cap);

	ck_assert_ptr_nonnull(text);
	text[0] = '\0';
	for (int i = from; i < to; i++)
		len += line_of(i, text + len, cap - len);
	return text;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *text;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	text = calloc(1, *len + 1);
	ck_assert_uint_eq(fread(text, 1, *len, f), *len);
	fclose(f);
	return text;
}

/* The whole of a gzip file (every member); fails on a corrupt or cut one. */
static char *gunzip_file(const char *path)
{
	gzFile gz = gzopen(path, "rb");
	size_t cap = 1 << 20, len = 0;
	char *text = calloc(1, cap);
	int n, zerr;

	ck_assert_ptr_nonnull(gz);
	while ((n = gzread(gz, text + len, (unsigned int)(cap - len - 1))) > 0)
		len += (size_t)n;
	gzerror(gz, &zerr);
	ck_assert_msg(n == 0 && zerr == Z_OK, "gzread %d: %s", n, gzerror(gz, &zerr));
	gzclose(gz);
	text[len] = '\0';
	return text;
}

/* gzip -t checks every member's CRC and length, as a reader of the file would. */
static void assert_gzip_whole(const char *path)
{
	char cmd[256];

	if (system("command -v gzip >/dev/null") != 0)
		return;
	snprintf(cmd, sizeof(cmd), "gzip -t '%s'", path);
	ck_assert_msg(system(cmd) == 0, "gzip -t %s failed", path);
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	ck_assert_int_eq(lstat(path, &st), 0);
	return st.st_mode & 07777;
}

static void make_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

/* --- write errors: every line that did not reach the disk is dropped ------ */

START_TEST(test_dev_full_plain)
{
	struct les_sink_file s;

	ck_assert_int_eq(les_sink_file_open(&s, "/dev/full"), 0);
	write_lines(&s, 0, 40);
	ck_assert_int_eq(les_sink_file_flush(&s), -ENOSPC);
	ck_assert_uint_eq(s.written, 0);
	ck_assert_uint_eq(s.dropped, 40);
	ck_assert_uint_eq(s.records_dropped, 40);
	ck_assert_uint_eq(s.write_errors, 1);
	ck_assert_int_eq(s.last_errno, ENOSPC);
	ck_assert_int_eq(les_sink_file_close(&s), 0);
}
END_TEST

/*
 * A .gz name on /dev/full (a device node of our own: a symlink would be
 * refused). Lines must not count as written while inside zlib.
 */
START_TEST(test_dev_full_gzip)
{
	const char *path = in_dir("full.gz");
	struct les_sink_file s;

	if (mknod(path, S_IFCHR | 0600, makedev(1, 7))) {
		fprintf(stderr, "test_dev_full_gzip: mknod: %s, skipped (needs root)\n",
			strerror(errno));
		return;
	}
	ck_assert_int_eq(les_sink_file_open(&s, path), 0);
	write_lines(&s, 0, 40);
	ck_assert_int_eq(les_sink_file_flush(&s), -ENOSPC);
	/* Nothing of a member reached the device: no end to write at close. */
	ck_assert_int_eq(les_sink_file_close(&s), 0);
	ck_assert_uint_eq(s.written, 0);
	ck_assert_uint_eq(s.dropped, 40);
	ck_assert_uint_eq(s.records_dropped, 40);
	ck_assert_uint_ge(s.write_errors, 1);
	ck_assert_int_eq(s.last_errno, ENOSPC);
}
END_TEST

/*
 * One flush while no file may grow past limit bytes (write(2) fails with
 * EFBIG), as on a full disk. The limit holds for check's own message file
 * too: nothing is asserted until it is lifted.
 */
static int flush_limited(struct les_sink_file *s, off_t limit)
{
	struct rlimit rl, was;
	int err;

	signal(SIGXFSZ, SIG_IGN);
	if (getrlimit(RLIMIT_FSIZE, &was))
		return -errno;
	rl = was;
	rl.rlim_cur = (rlim_t)limit;
	if (setrlimit(RLIMIT_FSIZE, &rl))
		return -errno;
	err = les_sink_file_flush(s);
	setrlimit(RLIMIT_FSIZE, &was);
	return err;
}

static off_t size_of(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_size;
}

/*
 * Lines 0-99 go out, 100-299 meet a full disk part way through their
 * flush, 300-399 go out once there is room: the file holds exactly 0-99
 * and 300-399, whole, and the counters say so.
 */
static void full_then_room(const char *path, bool gzip)
{
	struct les_sink_file s;
	char *want, *want_tail, *got;
	size_t len;
	off_t good;

	ck_assert_int_eq(les_sink_file_open(&s, path), 0);
	write_lines(&s, 0, 100);
	ck_assert_int_eq(les_sink_file_flush(&s), 0);
	good = size_of(path);
	/* 100 bytes more fit: the flush fails part way, what went out is taken back. */
	write_lines(&s, 100, 300);
	ck_assert_int_eq(flush_limited(&s, good + 100), -EFBIG);
	ck_assert_int_eq(size_of(path), good);
	write_lines(&s, 300, 400);
	ck_assert_int_eq(les_sink_file_flush(&s), 0);
	ck_assert_int_eq(les_sink_file_close(&s), 0);
	ck_assert_uint_eq(s.written, 200);
	ck_assert_uint_eq(s.records_written, 200);
	ck_assert_uint_eq(s.dropped, 200);
	ck_assert_uint_eq(s.records_dropped, 200);
	ck_assert_uint_eq(s.write_errors, 1);
	ck_assert_int_eq(s.last_errno, EFBIG);
	want = expected_lines(0, 100);
	want_tail = expected_lines(300, 400);
	want = realloc(want, strlen(want) + strlen(want_tail) + 1);
	strcat(want, want_tail);
	got = gzip ? gunzip_file(path) : read_file(path, &len);
	ck_assert_str_eq(got, want);
	if (gzip)
		assert_gzip_whole(path);
	free(want);
	free(want_tail);
	free(got);
}

START_TEST(test_full_then_room_plain)
{
	full_then_room(in_dir("out.jsonl"), false);
}
END_TEST

START_TEST(test_full_then_room_gzip)
{
	full_then_room(in_dir("out.jsonl.gz"), true);
}
END_TEST

/* Several failed flushes in a row, then room: still one readable file. */
START_TEST(test_gzip_fails_twice)
{
	const char *path = in_dir("twice.gz");
	struct les_sink_file s;
	char *got, *want;

	ck_assert_int_eq(les_sink_file_open(&s, path), 0);
	write_lines(&s, 0, 50);
	ck_assert_int_eq(les_sink_file_flush(&s), 0);
	write_lines(&s, 50, 60);
	ck_assert_int_eq(flush_limited(&s, size_of(path)), -EFBIG);
	write_lines(&s, 60, 70);
	ck_assert_int_eq(flush_limited(&s, size_of(path) + 5), -EFBIG);
	write_lines(&s, 70, 80);
	ck_assert_int_eq(les_sink_file_close(&s), 0);
	ck_assert_uint_eq(s.written, 60);
	ck_assert_uint_eq(s.dropped, 20);
	got = gunzip_file(path);
	want = expected_lines(0, 50);
	ck_assert_uint_eq(strncmp(got, want, strlen(want)), 0);
	free(want);
	want = expected_lines(70, 80);
	ck_assert_str_eq(got + strlen(got) - strlen(want), want);
	assert_gzip_whole(path);
	free(want);
	free(got);
}
END_TEST

/* What is written is on disk at each flush, not held back in zlib. */
START_TEST(test_gzip_flush_reaches_disk)
{
	const char *path = in_dir("live.gz");
	struct les_sink_file s;
	off_t before;

	ck_assert_int_eq(les_sink_file_open(&s, path), 0);
	write_lines(&s, 0, 3);
	ck_assert_int_eq(les_sink_file_flush(&s), 0);
	before = size_of(path);
	ck_assert_int_gt(before, 10);
	write_lines(&s, 3, 4);
	ck_assert_int_eq(les_sink_file_flush(&s), 0);
	ck_assert_int_gt(size_of(path), before);
	ck_assert_int_eq(les_sink_file_close(&s), 0);
	ck_assert_uint_eq(s.written, 4);
}
END_TEST

/* --- paths: what may be opened as root ------------------------------------ */

START_TEST(test_symlink_refused)
{
	const char *path = in_dir("out.jsonl"), *victim = in_dir("victim");
	struct les_sink_file s;
	size_t len;
	char *text;

	make_file(victim, "precious\n", 0600);
	ck_assert_int_eq(symlink(victim, path), 0);
	ck_assert_int_eq(les_sink_file_open(&s, path), -ELOOP);
	ck_assert_ptr_nonnull(strstr(s.why, "symbolic link"));
	les_sink_file_close(&s);
	text = read_file(victim, &len);
	ck_assert_str_eq(text, "precious\n");
	ck_assert_uint_eq(mode_of(victim), 0600);
	free(text);
	/* A dangling one is not followed to create its target either. */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(symlink(in_dir("nothing"), path), 0);
	ck_assert_int_eq(les_sink_file_open(&s, path), -ELOOP);
	les_sink_file_close(&s);
	ck_assert_int_eq(access(in_dir("nothing"), F_OK), -1);
}
END_TEST

/* A FIFO without a reader fails at once (it used to hang); with one, lines flow. */
START_TEST(test_fifo)
{
	const char *path = in_dir("fifo");
	struct les_sink_file s;
	char buf[4096], *want;
	ssize_t n;
	int rd;

	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(les_sink_file_open(&s, path), -ENXIO);
	ck_assert_ptr_nonnull(strstr(s.why, "no reader"));
	les_sink_file_close(&s);
	rd = open(path, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rd, 0);
	ck_assert_int_eq(les_sink_file_open(&s, path), 0);
	write_lines(&s, 0, 5);
	ck_assert_int_eq(les_sink_file_flush(&s), 0);
	n = read(rd, buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	want = expected_lines(0, 5);
	ck_assert_str_eq(buf, want);
	ck_assert_uint_eq(mode_of(path), 0600); /* not a file: its mode is not ours */
	free(want);
	close(rd);
	ck_assert_int_eq(les_sink_file_close(&s), 0);
}
END_TEST

START_TEST(test_existing_0644_becomes_0640)
{
	const char *path = in_dir("out.jsonl");
	struct les_sink_file s;
	size_t len;
	char *text;

	make_file(path, "old capture\n", 0644);
	ck_assert_int_eq(les_sink_file_open(&s, path), 0);
	ck_assert_uint_eq(mode_of(path), 0640);
	ck_assert_int_eq(size_of(path), 0); /* a capture starts a new file */
	les_sink_file_close(&s);
	/* Nothing beyond 0640 is kept; a tighter mode stays as it is. */
	make_file(path, "x\n", 0600);
	ck_assert_int_eq(les_sink_file_open(&s, path), 0);
	ck_assert_uint_eq(mode_of(path), 0600);
	les_sink_file_close(&s);
	ck_assert_int_eq(unlink(path), 0);
	umask(0);
	ck_assert_int_eq(les_sink_file_open(&s, path), 0);
	ck_assert_uint_eq(mode_of(path), 0640);
	les_sink_file_close(&s);
	text = read_file(path, &len);
	ck_assert_uint_eq(len, 0);
	free(text);
}
END_TEST

/* Refused before anything is truncated: the file keeps its content. */
static void assert_refused_untouched(const char *path, const char *why)
{
	struct les_sink_file s;
	size_t len;
	char *text;

	ck_assert_int_eq(les_sink_file_open(&s, path), -EPERM);
	ck_assert_msg(strstr(s.why, why), "'%s' does not say '%s'", s.why, why);
	les_sink_file_close(&s);
	text = read_file(path, &len);
	ck_assert_str_eq(text, "keep\n");
	free(text);
}

START_TEST(test_files_refused)
{
	const char *path = in_dir("out.jsonl");

	make_file(path, "keep\n", 0664);
	assert_refused_untouched(path, "others can write");
	ck_assert_int_eq(chmod(path, 0600), 0);
	ck_assert_int_eq(link(path, in_dir("other-name")), 0);
	assert_refused_untouched(path, "hard links");
	ck_assert_int_eq(unlink(in_dir("other-name")), 0);
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(path, 65534, 65534), 0);
		assert_refused_untouched(path, "owned by uid 65534");
	}
}
END_TEST

static void assert_dir_refused(const char *why)
{
	const char *path = in_dir("out.jsonl");
	struct les_sink_file s;

	ck_assert_int_eq(les_sink_file_open(&s, path), -EPERM);
	ck_assert_msg(strstr(s.why, why), "'%s' does not say '%s'", s.why, why);
	les_sink_file_close(&s);
	ck_assert_int_eq(access(path, F_OK), -1); /* nothing created */
}

START_TEST(test_dirs_refused)
{
	ck_assert_int_eq(chmod(dir, 0775), 0);
	assert_dir_refused("its group can write");
	ck_assert_int_eq(chmod(dir, 0777), 0);
	assert_dir_refused("anyone can write");
	ck_assert_int_eq(chmod(dir, 0755), 0);
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(dir, 65534, 65534), 0);
		assert_dir_refused("owned by uid 65534");
		/* Sticky, but its owner may remove what is in it. */
		ck_assert_int_eq(chmod(dir, 01777), 0);
		assert_dir_refused("owned by uid 65534");
		ck_assert_int_eq(chown(dir, 0, 0), 0);
		ck_assert_int_eq(chmod(dir, 0755), 0);
	}
}
END_TEST

/*
 * SIGHUP: the rotated file is replaced by a symlink (refused: lines are
 * dropped and counted until the next reopen), then by a 0644 file (made
 * 0640, appended to).
 */
/*
 * A sticky directory of root's, as /tmp: accepted (incident captures go
 * there); a file someone else planted in it first is still refused.
 */
START_TEST(test_sticky_dir)
{
	const char *path = in_dir("out.jsonl"), *victim = in_dir("victim");
	struct les_sink_file s;
	size_t len;
	char *text;

	ck_assert_int_eq(chmod(dir, 01777), 0);
	ck_assert_int_eq(les_sink_file_open(&s, path), 0);
	write_lines(&s, 0, 3);
	les_sink_file_close(&s);
	ck_assert_int_eq(unlink(path), 0);
	if (geteuid() == 0) {
		make_file(path, "keep\n", 0600);
		ck_assert_int_eq(chown(path, 65534, 65534), 0);
		assert_refused_untouched(path, "owned by uid 65534");
		ck_assert_int_eq(unlink(path), 0);
	}
	make_file(victim, "keep\n", 0600);
	ck_assert_int_eq(symlink(victim, path), 0);
	ck_assert_int_lt(les_sink_file_open(&s, path), 0);
	ck_assert_msg(strstr(s.why, "symbolic link"), "'%s'", s.why);
	les_sink_file_close(&s);
	text = read_file(victim, &len);
	ck_assert_str_eq(text, "keep\n");
	free(text);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(unlink(victim), 0);
	ck_assert_int_eq(chmod(dir, 0755), 0);
}
END_TEST

START_TEST(test_reopen_same_rules)
{
	const char *path = in_dir("out.jsonl"), *victim = in_dir("victim");
	struct les_sink_file s;
	char *text, *want;
	size_t len;

	make_file(victim, "precious\n", 0600);
	ck_assert_int_eq(les_sink_file_open(&s, path), 0);
	write_lines(&s, 0, 10);
	ck_assert_int_eq(rename(path, in_dir("out.jsonl.1")), 0);
	ck_assert_int_eq(symlink(victim, path), 0);
	ck_assert_int_eq(les_sink_file_reopen(&s), -ELOOP);
	ck_assert_ptr_nonnull(strstr(s.why, "symbolic link"));
	write_lines(&s, 10, 15);
	ck_assert_int_eq(les_sink_file_flush(&s), -ELOOP);
	ck_assert_int_eq(s.last_errno, ELOOP);
	ck_assert_uint_eq(s.dropped, 5);
	ck_assert_uint_eq(s.records_dropped, 5);
	text = read_file(victim, &len);
	ck_assert_str_eq(text, "precious\n");
	free(text);
	ck_assert_int_eq(unlink(path), 0);
	make_file(path, "before\n", 0644);
	ck_assert_int_eq(les_sink_file_reopen(&s), 0);
	ck_assert_uint_eq(mode_of(path), 0640);
	write_lines(&s, 15, 20);
	ck_assert_int_eq(les_sink_file_close(&s), 0);
	text = read_file(path, &len);
	want = expected_lines(15, 20);
	ck_assert_uint_eq(strncmp(text, "before\n", 7), 0);
	ck_assert_str_eq(text + 7, want);
	free(text);
	free(want);
	text = read_file(in_dir("out.jsonl.1"), &len);
	want = expected_lines(0, 10);
	ck_assert_str_eq(text, want);
	free(text);
	free(want);
	ck_assert_uint_eq(s.written, 15);
}
END_TEST

/* gzip across a reopen: each file whole, the new one a member of its own. */
START_TEST(test_reopen_gzip)
{
	const char *path = in_dir("out.gz");
	struct les_sink_file s;
	char *text, *want;

	ck_assert_int_eq(les_sink_file_open(&s, path), 0);
	write_lines(&s, 0, 10);
	ck_assert_int_eq(rename(path, in_dir("out.1.gz")), 0);
	ck_assert_int_eq(les_sink_file_reopen(&s), 0);
	write_lines(&s, 10, 20);
	ck_assert_int_eq(les_sink_file_close(&s), 0);
	text = gunzip_file(in_dir("out.1.gz"));
	want = expected_lines(0, 10);
	ck_assert_str_eq(text, want);
	assert_gzip_whole(in_dir("out.1.gz"));
	free(text);
	free(want);
	text = gunzip_file(path);
	want = expected_lines(10, 20);
	ck_assert_str_eq(text, want);
	assert_gzip_whole(path);
	free(text);
	free(want);
}
END_TEST

/* --config: the same directory and file rules; a symlink to a sound file is fine. */
START_TEST(test_config_path)
{
	const char *conf = in_dir("les.conf"), *link = in_dir("link.conf");
	char err[512];

	make_file(conf, "stats-interval = 5s\n", 0644);
	ck_assert_int_eq(symlink(conf, link), 0);
	ck_assert_int_eq(les_privs_check_path("--config", conf, err, sizeof(err)), 0);
	ck_assert_int_eq(les_privs_check_path("--config", link, err, sizeof(err)), 0);
	ck_assert_int_eq(les_privs_check_path("--config", in_dir("absent"), err, sizeof(err)), 0);
	ck_assert_int_eq(chmod(conf, 0666), 0);
	ck_assert_int_eq(les_privs_check_path("--config", link, err, sizeof(err)), -EPERM);
	ck_assert_ptr_nonnull(strstr(err, "--config"));
	ck_assert_ptr_nonnull(strstr(err, "others can write"));
	ck_assert_int_eq(chmod(conf, 0644), 0);
	ck_assert_int_eq(chmod(dir, 0770), 0);
	ck_assert_int_eq(les_privs_check_path("--config", conf, err, sizeof(err)), -EPERM);
	ck_assert_ptr_nonnull(strstr(err, "its group can write"));
	ck_assert_int_eq(chmod(dir, 0700), 0);
}
END_TEST

static Suite *sink_suite(void)
{
	Suite *s = suite_create("sink");
	TCase *tc;

	tc = tcase_create("errors");
	tcase_add_checked_fixture(tc, dir_setup, dir_teardown);
	tcase_add_test(tc, test_dev_full_plain);
	tcase_add_test(tc, test_dev_full_gzip);
	tcase_add_test(tc, test_full_then_room_plain);
	tcase_add_test(tc, test_full_then_room_gzip);
	tcase_add_test(tc, test_gzip_fails_twice);
	tcase_add_test(tc, test_gzip_flush_reaches_disk);
	suite_add_tcase(s, tc);

	tc = tcase_create("paths");
	tcase_add_checked_fixture(tc, dir_setup, dir_teardown);
	tcase_add_test(tc, test_symlink_refused);
	tcase_add_test(tc, test_fifo);
	tcase_add_test(tc, test_existing_0644_becomes_0640);
	tcase_add_test(tc, test_files_refused);
	tcase_add_test(tc, test_dirs_refused);
	tcase_add_test(tc, test_sticky_dir);
	tcase_add_test(tc, test_config_path);
	suite_add_tcase(s, tc);

	tc = tcase_create("reopen");
	tcase_add_checked_fixture(tc, dir_setup, dir_teardown);
	tcase_add_test(tc, test_reopen_same_rules);
	tcase_add_test(tc, test_reopen_gzip);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sink_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
