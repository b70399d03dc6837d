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
#include "pipeline/consumer.h"
#include "pipeline/wiring.h"
#include "enrich/enrich.h"
#include "model/observed.h"
#include "sink/sink.h"
#include "notices.h"

struct rig {
	struct les_consumer_config opts;
	struct les_observed observed;
	struct les_sink_file out;
	struct les_consumer c;
	uint64_t in_ring; /* records the "probes" put in the ring */
	uint64_t pending; /* of them, not read yet */
};

static void rig_open(struct rig *r, const char *output)
{
	memset(r, 0, sizeof(*r));
	ck_assert_int_eq(les_sink_file_open(&r->out, output), 0);
	les_consumer_init(&r->c, &r->opts, &r->observed, "n1");
	les_pipeline_attach_file(&r->c, &r->out);
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
	les_consumer_release(&r->c);
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

/* --- one record down each exit path ------------------------------------ */

/*
 * One record handed to the consumer as libbpf would, outside poll_ring:
 * any kind and size. op says whether the probes count it as produced
 * (a per-op record, even a corrupt one) or it is a process notice.
 */
static int feed(struct rig *r, const void *rec, size_t size, bool op)
{
	if (op)
		r->in_ring++;
	return les_consumer_on_record(&r->c, (void *)rec, size);
}

static struct les_rec_access access_rec(uint32_t pid)
{
	struct les_rec_access a = {
		.kind = LES_REC_ACCESS,
		.op = 1,
		.op_id = 9,
		.ts_ns = 1000,
		.latency_ns = 5000,
		.task = {.pid = pid, .tid = pid, .uid = 1000, .gid = 1000, .comm = "dd"},
	};

	return a;
}

/*
 * Every per-op record taken from the ring is in records_read: decoded (by
 * kind), malformed, or read after a stop. The drain's count of what left
 * the ring must equal what was put in it.
 */
static void assert_all_read(const struct rig *r)
{
	ck_assert_uint_eq(les_consumer_records_read(&r->c), r->in_ring);
}

/* The three per-op kinds decoded and written: emitted, counted by kind. */
START_TEST(test_path_written_each_kind)
{
	struct les_rec_access a = access_rec(42);
	struct les_rec_rpc rpc = {.kind = LES_REC_RPC, .proto = LES_PROTO_FUSE, .ts_ns = 1};
	struct les_rec_rpc_event ev = {.kind = LES_REC_RPC_EVENT, .proto = LES_PROTO_PTLRPC};
	struct rig r;
	json_t *st, *kinds;

	rig_open(&r, "/dev/null");
	ck_assert_int_eq(feed(&r, &a, sizeof(a), true), 0);
	ck_assert_int_eq(feed(&r, &rpc, sizeof(rpc), true), 0);
	ck_assert_int_eq(feed(&r, &ev, sizeof(ev), true), 0);
	assert_all_read(&r);
	st = finish(&r);
	ck_assert_uint_eq(get_u64(st, "emitted"), 3);
	ck_assert_uint_eq(get_u64(st, "dropped_userspace"), 0);
	kinds = json_object_get(st, "records");
	ck_assert_uint_eq(get_u64(kinds, "access"), 1);
	ck_assert_uint_eq(get_u64(kinds, "rpc"), 1);
	ck_assert_uint_eq(get_u64(kinds, "rpc_event"), 1);
	/* No mount is observed in the rig: named, not lost. */
	ck_assert_uint_eq(get_u64(st, "unobserved"), 3);
	rig_close(&r, st);
}
END_TEST

/*
 * Malformed records: shorter than a kind, shorter than their kind's
 * record, of a kind that does not exist, or of the kind that is reserved.
 * Each is dropped_decode, and the poll goes on.
 */
START_TEST(test_path_decode_errors)
{
	struct les_rec_access a = access_rec(42);
	uint32_t unknown[64] = {99}, reserved[64] = {LES_REC_PROC_EXIT};
	struct rig r;
	json_t *st;

	rig_open(&r, "/dev/null");
	ck_assert_int_eq(feed(&r, &a, 2, true), 0);
	ck_assert_int_eq(feed(&r, &a, sizeof(a) - 1, true), 0);
	ck_assert_int_eq(feed(&r, unknown, sizeof(unknown), true), 0);
	ck_assert_int_eq(feed(&r, reserved, sizeof(reserved), true), 0);
	ck_assert_int_eq(feed(&r, &a, sizeof(a), true), 0);
	assert_all_read(&r);
	st = finish(&r);
	ck_assert_uint_eq(get_u64(st, "dropped_decode"), 4);
	ck_assert_uint_eq(get_u64(st, "dropped_userspace"), 4);
	ck_assert_uint_eq(get_u64(st, "emitted"), 1);
	rig_close(&r, st);
}
END_TEST

/*
 * A line that does not fit the line buffer is dropped_format. The rig's
 * buffer is made small for one record, then given back for the stats record.
 */
START_TEST(test_path_format_error)
{
	struct les_rec_access a = access_rec(42);
	struct rig r;
	json_t *st;

	rig_open(&r, "/dev/null");
	jw_init(&r.c.jw, r.c.line, 64);
	ck_assert_int_eq(feed(&r, &a, sizeof(a), true), 0);
	jw_init(&r.c.jw, r.c.line, sizeof(r.c.line));
	ck_assert_int_eq(feed(&r, &a, sizeof(a), true), 0);
	assert_all_read(&r);
	st = finish(&r);
	ck_assert_uint_eq(get_u64(st, "dropped_format"), 1);
	ck_assert_uint_eq(get_u64(st, "emitted"), 1);
	rig_close(&r, st);
}
END_TEST

/* An exec notice of pid with SLURM_JOB_ID=job, through the consumer. */
static void exec_notice(struct rig *r, uint32_t pid, const char *job)
{
	static struct les_rec_proc p;

	les_test_exec_job(&p, pid, 1, job, "dd");
	ck_assert_int_eq(feed(r, &p, sizeof(p), false), 0);
}

static struct les_enricher *job_enricher(void)
{
	struct les_enrich_config cfg = {
		.job_env = {"SLURM_JOB_ID"},
		.n_job_env = 1,
		.no_user_lookup = true,
		.proc_root = "/nonexistent",
	};
	struct les_enricher *e;
	char err[256];

	ck_assert_int_eq(les_enrich_new(&e, &cfg, "n1", err, sizeof(err)), 0);
	return e;
}

/*
 * --job: a record of another job, or of none, is filtered_userspace; one
 * of the job is emitted. Process notices are read but are not records:
 * they are in no member of the identity.
 */
START_TEST(test_path_filtered_by_job)
{
	struct les_rec_access mine = access_rec(42), other = access_rec(43), none = access_rec(44);
	struct rig r;
	json_t *st;

	rig_open(&r, "/dev/null");
	r.c.enricher = job_enricher();
	r.opts.filter_job = "7";
	exec_notice(&r, 42, "7");
	exec_notice(&r, 43, "8");
	ck_assert_int_eq(feed(&r, &mine, sizeof(mine), true), 0);
	ck_assert_int_eq(feed(&r, &other, sizeof(other), true), 0);
	ck_assert_int_eq(feed(&r, &none, sizeof(none), true), 0);
	assert_all_read(&r);
	st = finish(&r);
	ck_assert_uint_eq(get_u64(st, "filtered_userspace"), 2);
	ck_assert_uint_eq(get_u64(st, "emitted"), 1);
	ck_assert_uint_eq(get_u64(json_object_get(st, "records"), "proc_exec"), 2);
	les_enrich_free(r.c.enricher);
	rig_close(&r, st);
}
END_TEST

static int line_sink_fails(void *ctx, const struct les_event *ev)
{
	(void)ev;
	++*(int *)ctx;
	return -EIO;
}

/*
 * A line sink (Kafka) that fails stops the poll, but the file sink took
 * the line first: emitted, and the rest of the ring is read by the next poll.
 */
START_TEST(test_path_line_sink_error)
{
	struct rig r;
	int calls = 0;
	json_t *st;

	rig_open(&r, "/dev/null");
	les_consumer_add_line_sink(&r.c, line_sink_fails, &calls);
	ck_assert_int_eq(poll_ring(&r, 3), -EIO);
	ck_assert_uint_eq(r.pending, 2);
	st = finish(&r);
	ck_assert_int_eq(calls, 3 + 1); /* the stats record is a line too */
	ck_assert_uint_eq(get_u64(st, "emitted"), 3);
	rig_close(&r, st);
}
END_TEST

static int event_sink_counts(void *ctx, const struct les_event *ev)
{
	(void)ev;
	++*(int *)ctx;
	return 0;
}

/*
 * Without per-op lines (--aggregate alone) a record is emitted when the
 * event sinks had it, and never formatted: nothing is written to the file.
 */
START_TEST(test_path_events_only)
{
	struct rig r;
	int calls = 0;
	json_t *st;

	rig_open(&r, "/dev/null");
	r.c.records_to_lines = false;
	les_consumer_add_event_sink(&r.c, event_sink_counts, &calls);
	ck_assert_int_eq(poll_ring(&r, 5), 0);
	ck_assert_uint_eq(r.out.records_written + r.out.buffered_records, 0);
	st = finish(&r);
	ck_assert_int_eq(calls, 5);
	ck_assert_uint_eq(get_u64(st, "emitted"), 5);
	rig_close(&r, st);
}
END_TEST

/*
 * No bound on the sinks: more than the consumer keeps in place (the rest
 * on the heap), each handed every record.
 */
START_TEST(test_path_many_sinks)
{
	int calls[3 * LES_CONSUMER_TAPS_IN_PLACE] = {0};
	const int n = (int)(sizeof(calls) / sizeof(calls[0]));
	struct rig r;
	json_t *st;

	rig_open(&r, "/dev/null");
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(les_consumer_add_event_sink(&r.c, event_sink_counts, &calls[i]),
				 0);
	ck_assert_int_eq(poll_ring(&r, 3), 0);
	st = finish(&r);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(calls[i], 3);
	ck_assert_uint_eq(get_u64(st, "emitted"), 3);
	rig_close(&r, st);
	les_consumer_release(&r.c);
}
END_TEST

/*
 * After a stop a process notice is read and left uncounted (it is no
 * record); a per-op record is dropped_stopped.
 */
START_TEST(test_path_notice_after_stop)
{
	struct les_rec_fork fork = {.kind = LES_REC_PROC_FORK, .pid = 50, .ppid = 42};
	struct les_rec_access a = access_rec(42);
	struct rig r;
	json_t *st;

	rig_open(&r, "/dev/null");
	r.opts.count = 1;
	ck_assert_int_eq(feed(&r, &a, sizeof(a), true), -ECANCELED);
	ck_assert_int_eq(feed(&r, &fork, sizeof(fork), false), -ECANCELED);
	ck_assert_int_eq(feed(&r, &a, sizeof(a), true), -ECANCELED);
	assert_all_read(&r);
	st = finish(&r);
	ck_assert_uint_eq(get_u64(st, "emitted"), 1);
	ck_assert_uint_eq(get_u64(st, "dropped_stopped"), 1);
	ck_assert_uint_eq(get_u64(json_object_get(st, "records"), "proc_fork"), 0);
	rig_close(&r, st);
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

	tc = tcase_create("paths");
	tcase_add_test(tc, test_path_written_each_kind);
	tcase_add_test(tc, test_path_decode_errors);
	tcase_add_test(tc, test_path_format_error);
	tcase_add_test(tc, test_path_filtered_by_job);
	tcase_add_test(tc, test_path_line_sink_error);
	tcase_add_test(tc, test_path_events_only);
	tcase_add_test(tc, test_path_notice_after_stop);
	tcase_add_test(tc, test_path_many_sinks);
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
