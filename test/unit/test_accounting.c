// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The stats identity on every exit path, driven without BPF: records are
 * fed to les_consumer_on_record as libbpf's ring_buffer__poll does (it
 * stops at the first callback that returns an error: the rest stay in the
 * ring), and the final stats record must account for every one of them.
 * Outputs are real: a full device, a FIFO whose reader went away, a file.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "decode/consumer.h"
#include "decode/observed.h"
#include "cli/options.h"
#include "sink/sink.h"

struct rig {
	struct les_options opts;
	struct les_observed observed;
	struct les_sink_file out;
	struct les_consumer c;
	uint64_t in_ring; /* records the "probes" put in the ring */
	uint64_t pending; /* of them, not read yet */
};

static void rig_open(struct rig *r, const char *output)
{
	memset(r, 0, sizeof(*r));
	les_options_defaults(&r->opts);
	ck_assert_int_eq(les_sink_file_open(&r->out, output), 0);
	les_consumer_init(&r->c, &r->opts, &r->observed, &r->out, "n1");
}

/*
 * n new access records in the ring, then one ring_buffer__poll (or
 * __consume): it hands over what is there in order, and the first callback
 * error ends it; the records after that one stay in the ring, for the next
 * poll. Returns that error, or 0.
 */
static int poll_ring(struct rig *r, unsigned int n)
{
	static uint64_t op_id;

	r->in_ring += n;
	r->pending += n;
	while (r->pending) {
		uint64_t id = ++op_id;
		struct les_rec_access rec = {
			.kind = LES_REC_ACCESS,
			.op = 1,
			.op_id = id,
			.ts_ns = 1000 + id,
			.latency_ns = 5000,
			.bytes = 4096,
			.task = {.pid = 42, .tid = 42, .uid = 1000, .gid = 1000, .comm = "dd"},
		};
		int err;

		r->pending--;
		err = les_consumer_on_record(&r->c, &rec, sizeof(rec));
		if (err)
			return err;
	}
	return 0;
}

static uint64_t get_u64(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	ck_assert_msg(json_is_integer(v), "no %s in the stats record", key);
	return (uint64_t)json_integer_value(v);
}

/*
 * The run's end as main does it: the drain, then the final stats record.
 * Every record put in the ring is in it: emitted or dropped.
 */
static json_t *finish(struct rig *r)
{
	struct les_kernel_stats ks;
	json_error_t jerr;
	json_t *st;

	r->c.draining = true;
	ck_assert_int_eq(poll_ring(r, 0), 0);
	memset(&ks, 0, sizeof(ks));
	ks.counters[LES_CNT_PRODUCED] = r->in_ring;
	les_sink_file_flush(&r->out);
	les_consumer_emit_stats(&r->c, &ks, true);
	st = json_loadb(r->c.line, r->c.jw.len, 0, &jerr);
	ck_assert_msg(st, "stats record: %s", jerr.text);
	ck_assert_uint_eq(r->pending, 0);
	ck_assert_uint_eq(get_u64(st, "produced_kernel"),
			  get_u64(st, "emitted") + get_u64(st, "dropped_kernel") +
				  get_u64(st, "dropped_userspace") +
				  get_u64(st, "filtered_kernel") +
				  get_u64(st, "filtered_userspace"));
	return st;
}

static void rig_close(struct rig *r, json_t *st)
{
	json_decref(st);
	les_sink_file_close(&r->out);
}

/* The end of a run stopped by --count: so many emitted, so many counted after. */
static void finish_stopped(struct rig *r, uint64_t emitted, uint64_t stopped)
{
	json_t *st = finish(r);

	ck_assert_uint_eq(get_u64(st, "emitted"), emitted);
	ck_assert_uint_eq(get_u64(st, "dropped_stopped"), stopped);
	rig_close(r, st);
}

/* A FIFO in a directory of its own whose reader has read once and left. */
struct fifo {
	char dir[64], path[96];
	int rd;
};

static void fifo_open(struct fifo *f)
{
	signal(SIGPIPE, SIG_IGN);
	snprintf(f->dir, sizeof(f->dir), "/tmp/les-test-acct.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/fifo", f->dir);
	ck_assert_int_eq(mkfifo(f->path, 0600), 0);
	f->rd = open(f->path, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(f->rd, 0);
}

static void fifo_reader_leaves(struct fifo *f)
{
	char buf[65536];

	while (read(f->rd, buf, sizeof(buf)) > 0)
		;
	close(f->rd);
	f->rd = -1;
}

static void fifo_remove(struct fifo *f)
{
	unlink(f->path);
	rmdir(f->dir);
}

/* --count reached in the final drain: the records after it are read and counted. */
START_TEST(test_count_reached_in_drain)
{
	struct rig r;

	rig_open(&r, "/dev/null");
	r.opts.count = 3;
	ck_assert_int_eq(poll_ring(&r, 2), 0);
	r.c.draining = true;
	ck_assert_int_eq(poll_ring(&r, 10), 0);
	finish_stopped(&r, 3, 9);
}
END_TEST

/* --count reached while running: the poll stops, the drain takes the rest. */
START_TEST(test_count_reached_running)
{
	struct rig r;

	rig_open(&r, "/dev/null");
	r.opts.count = 3;
	ck_assert_int_eq(poll_ring(&r, 10), -ECANCELED);
	ck_assert_uint_eq(r.pending, 7);
	finish_stopped(&r, 3, 7);
}
END_TEST

/*
 * The reader goes away and the drain's records fill the buffer: its flush
 * meets EPIPE in the middle of the drain. Every record after it is still
 * read, and counted.
 */
START_TEST(test_epipe_in_drain)
{
	struct fifo f;
	struct rig r;
	json_t *st;

	fifo_open(&f);
	rig_open(&r, f.path);
	ck_assert_int_eq(poll_ring(&r, 5), 0);
	ck_assert_int_eq(les_sink_file_flush(&r.out), 0);
	fifo_reader_leaves(&f);
	r.c.draining = true;
	/* Lines of some 400 bytes: 5000 of them overflow the 1 MiB buffer. */
	ck_assert_int_eq(poll_ring(&r, 5000), 0);
	ck_assert(r.out.pipe_closed);
	st = finish(&r);
	ck_assert_uint_eq(get_u64(st, "emitted"), 5);
	ck_assert_uint_gt(get_u64(st, "dropped_stopped"), 0);
	ck_assert_uint_gt(get_u64(st, "dropped_output"), 0);
	rig_close(&r, st);
	fifo_remove(&f);
}
END_TEST

/* A full disk: nothing emitted, every record dropped at the output. */
START_TEST(test_disk_full)
{
	struct rig r;
	json_t *st;

	rig_open(&r, "/dev/full");
	ck_assert_int_eq(poll_ring(&r, 40), 0);
	st = finish(&r);
	ck_assert_uint_eq(get_u64(st, "emitted"), 0);
	ck_assert_uint_eq(get_u64(st, "dropped_output"), 40);
	ck_assert_uint_ge(get_u64(st, "output_errors"), 1);
	rig_close(&r, st);
}
END_TEST

static int failing_sink(void *ctx, const struct les_event *ev)
{
	(void)ev;
	++*(int *)ctx;
	return -EPIPE;
}

/*
 * An event sink that fails (its own line to a closed pipe) does not keep
 * the record from the file, and the record counts as emitted only because
 * its line was written.
 */
START_TEST(test_emitted_after_write)
{
	char dir[] = "/tmp/les-test-acct.XXXXXX", path[64];
	struct rig r;
	int calls = 0;
	size_t lines = 0;
	json_t *st;
	char line[4096];
	FILE *in;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.jsonl", dir);
	rig_open(&r, path);
	les_consumer_add_event_sink(&r.c, failing_sink, &calls);
	ck_assert_int_eq(poll_ring(&r, 1), -EPIPE);
	ck_assert_int_eq(poll_ring(&r, 1), -EPIPE);
	st = finish(&r);
	ck_assert_int_eq(calls, 2);
	ck_assert_uint_eq(get_u64(st, "emitted"), 2);
	rig_close(&r, st);
	in = fopen(path, "re");
	ck_assert_ptr_nonnull(in);
	while (fgets(line, sizeof(line), in))
		lines += strstr(line, "\"type\":\"access\"") != NULL;
	fclose(in);
	ck_assert_uint_eq(lines, 2);
	unlink(path);
	rmdir(dir);
}
END_TEST

static Suite *accounting_suite(void)
{
	Suite *s = suite_create("accounting");
	TCase *tc;

	tc = tcase_create("drain");
	tcase_add_test(tc, test_count_reached_in_drain);
	tcase_add_test(tc, test_count_reached_running);
	tcase_add_test(tc, test_epipe_in_drain);
	suite_add_tcase(s, tc);

	tc = tcase_create("output");
	tcase_add_test(tc, test_disk_full);
	tcase_add_test(tc, test_emitted_after_write);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(accounting_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
