// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --top --input over real capture files: a jump in time is one gap frame,
 * not one frame per interval of the jump; malformed and overlong lines are
 * skipped, counted and reported; the frames' sums are the records'.
 */
#include <check.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sink/replay.h"

#define ACCESS(ts, job)                                                            \
	"{\"type\":\"access\",\"ts\":\"" ts "\",\"op\":\"read\",\"job_id\":\"" job \
	"\",\"bytes\":4096,\"latency_ns\":1000}\n"

struct run {
	int rc;
	char out[1 << 16], err[1024];
	double secs;
};

static void slurp(FILE *f, char *buf, size_t len)
{
	size_t n;

	rewind(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Replay the file at path with --batch 100000 --interval 1s; stdout and stderr kept. */
static void replay(const char *path, struct run *r)
{
	FILE *out = tmpfile(), *err = tmpfile();
	int saved_out = dup(1), saved_err = dup(2);
	struct les_replay_config o = {
		.input_path = path, .batch = 100000, .interval_ns = 1000000000ULL};
	struct timespec t0, t1;

	ck_assert(out && err && saved_out >= 0 && saved_err >= 0);
	fflush(stdout);
	dup2(fileno(out), 1);
	dup2(fileno(err), 2);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r->rc = les_replay_run(&o);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	r->secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	slurp(out, r->out, sizeof(r->out));
	slurp(err, r->err, sizeof(r->err));
}

static char *write_capture(const char *text, size_t len)
{
	static char path[64];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/les-test-replay.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	fclose(f);
	return path;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

#define FRAME "lustre-ebpf-stream --top "

/* Two lines 500 years apart: the first frame, one gap frame, the last one. */
START_TEST(test_gap_is_one_frame)
{
	static const char text[] = ACCESS("2026-12-01T16:47:56.100000000Z", "601")
		ACCESS("2526-12-01T16:47:56.100000000Z", "602");
	char *path = write_capture(text, sizeof(text) - 1);
	static struct run r;

	replay(path, &r);
	unlink(path);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_int_eq(count(r.out, FRAME), 3);
	ck_assert_int_eq(count(r.out, "gap: "), 1);
	ck_assert_msg(strstr(r.out, "gap: 15778"), "%s", r.out); /* 500 years in s, about */
	ck_assert(r.secs < 1.0);
	ck_assert_ptr_nonnull(strstr(r.err, "2 records in 3 frames"));
	ck_assert_ptr_nonnull(strstr(r.err, "1 gaps shown as one frame"));
}
END_TEST

/* Up to LES_REPLAY_GAP_MAX empty intervals are shown as they are; one more is a gap. */
START_TEST(test_short_gap_kept)
{
	static const char kept[] = ACCESS("2026-12-01T16:47:56.1Z", "601")
		ACCESS("2026-12-01T16:48:07.1Z", "601"); /* 10 empty intervals between */
	static const char gap[] = ACCESS("2026-12-01T16:47:56.1Z", "601")
		ACCESS("2026-12-01T16:48:08.1Z", "601"); /* 11 */
	static struct run r;
	char *path;

	ck_assert_int_eq(LES_REPLAY_GAP_MAX, 10);
	path = write_capture(kept, sizeof(kept) - 1);
	replay(path, &r);
	unlink(path);
	ck_assert_int_eq(count(r.out, FRAME), 12);
	ck_assert_int_eq(count(r.out, "gap: "), 0);
	path = write_capture(gap, sizeof(gap) - 1);
	replay(path, &r);
	unlink(path);
	ck_assert_int_eq(count(r.out, FRAME), 3);
	ck_assert_int_eq(count(r.out, "gap: 11 s without records"), 1);
}
END_TEST

/*
 * Malformed lines (not JSON, a record without a valid ts, a ts past 2554)
 * and a line over 256 KiB are skipped and counted; the good records
 * around them are all replayed; stats and notices are not records.
 */
START_TEST(test_skipped_lines_counted)
{
	const char *head =
		ACCESS("2026-12-01T16:47:56.1Z",
		       "601") "not json\n"
			      "{\"type\":\"access\",\"ts\":\"yesterday\"}\n"
			      "{\"type\":\"access\",\"ts\":\"2600-01-01T00:00:00Z\"}\n"
			      "{\"type\":\"stats\",\"final\":true}\n\n"
			      "{\"type\":\"access\",\"ts\":\"2026-12-01T16:47:56.2Z\",\"comm\":\"";
	const char *tail = "\"}\n" ACCESS("2026-12-01T16:47:56.3Z", "601");
	size_t long_len = 300 * 1024, n = strlen(head);
	char *text = malloc(n + long_len + strlen(tail) + 1), *path;
	static struct run r;

	ck_assert_ptr_nonnull(text);
	memcpy(text, head, n);
	memset(text + n, 'x', long_len);
	strcpy(text + n + long_len, tail);
	path = write_capture(text, strlen(text));
	free(text);
	replay(path, &r);
	unlink(path);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_msg(strstr(r.err, "8 lines, 2 records in 1 frames; skipped 3 malformed, 1 over "
				    "262144 bytes"),
		      "%s", r.err);
	ck_assert_int_eq(count(r.err, "\n"), 1);
	/* both records in the one frame: 2 ops in 1 s; its header shows the 4 skipped */
	ck_assert_msg(strstr(r.out, "dropped 4"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "\n601 ") && strstr(strstr(r.out, "\n601 "), "    2.0 "), "%s",
		      r.out);
}
END_TEST

/* Out of order: a record older than the open frame is summed into it, no frame. */
START_TEST(test_backwards_in_frame)
{
	static const char text[] = ACCESS("2026-12-01T16:47:56.5Z", "601")
		ACCESS("1999-01-01T00:00:00.0Z", "601") ACCESS("2026-12-01T16:47:56.6Z", "601");
	char *path = write_capture(text, sizeof(text) - 1);
	static struct run r;

	replay(path, &r);
	unlink(path);
	ck_assert_int_eq(count(r.out, FRAME), 1);
	ck_assert_ptr_nonnull(strstr(r.err, "3 records in 1 frames"));
}
END_TEST

/* An access line without "op" (found by fuzz_replay): a record of no op, no crash. */
START_TEST(test_access_without_op)
{
	static const char text[] = "{\"type\":\"access\",\"ts\":\"2026-12-01T16:47:56.1Z\"}\n";
	char *path = write_capture(text, sizeof(text) - 1);
	static struct run r;

	replay(path, &r);
	unlink(path);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_ptr_nonnull(strstr(r.err, "1 records in 1 frames"));
	ck_assert_ptr_nonnull(strstr(r.out, "\n(no job) "));
}
END_TEST

/* Read what the screen drew for ms milliseconds, appended to buf. */
static void drain(int fd, char *buf, size_t cap, size_t *len, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	while (poll(&p, 1, ms) > 0) {
		ssize_t n = read(fd, buf + *len, cap - 1 - *len);

		if (n <= 0)
			break;
		*len += (size_t)n;
		buf[*len] = '\0';
		if (*len >= cap - 1)
			*len = 0; /* keep reading; only the latest screens matter */
	}
}

/*
 * '[' on the screen while the very first frame is shown: the replay starts
 * again from the capture's first record. Its frame counter went back to 0,
 * where it already was, so the rewind went unseen: the frames went on
 * from the epoch's first second to the record, as a gap (an endless loop
 * of empty frames before gaps were bounded).
 */
START_TEST(test_rewind_at_first_frame)
{
	static const char text[] = ACCESS("2026-12-01T16:47:56.1Z", "601")
		ACCESS("2026-12-01T16:47:57.1Z", "602") ACCESS("2026-12-01T16:47:58.1Z", "603");
	char *path = write_capture(text, sizeof(text) - 1);
	struct winsize ws = {.ws_row = 24, .ws_col = 80};
	static char screen[1 << 16];
	size_t len = 0;
	int master, status = -1;
	pid_t pid = forkpty(&master, NULL, NULL, &ws);

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct les_replay_config o = {
			.input_path = path, .interval_ns = 1000000000ULL, .speed = 1};

		setenv("TERM", "xterm", 1);
		_exit(les_replay_run(&o));
	}
	drain(master, screen, sizeof(screen), &len, 500); /* the first frame, shown 1 s */
	ck_assert_int_eq(write(master, "[", 1), 1);
	len = 0;
	screen[0] = '\0';
	drain(master, screen, sizeof(screen), &len, 1500);
	for (int i = 0; i < 50 && waitpid(pid, &status, WNOHANG) == 0; i++) {
		ck_assert_int_eq(write(master, "q", 1), 1);
		drain(master, screen + len, sizeof(screen) - len, &(size_t){0}, 100);
	}
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	close(master);
	unlink(path);
	ck_assert_msg(!strstr(screen, "gap:"), "a gap frame after '[': %s", screen);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
}
END_TEST

static Suite *replay_suite(void)
{
	Suite *s = suite_create("replay");
	TCase *tc = tcase_create("replay");

	tcase_add_test(tc, test_gap_is_one_frame);
	tcase_add_test(tc, test_short_gap_kept);
	tcase_add_test(tc, test_skipped_lines_counted);
	tcase_add_test(tc, test_backwards_in_frame);
	tcase_add_test(tc, test_access_without_op);
	tcase_add_test(tc, test_rewind_at_first_frame);
	tcase_set_timeout(tc, 20);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(replay_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
