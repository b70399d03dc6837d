// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Whom a PtlRPC request is charged to, through the whole consumer: a record
 * goes in as the kernel sends it, and the event every sink counts by
 * (--aggregate, Prometheus, --top, --job, the Kafka key) and the JSON line
 * come out. Writeback that a kernel thread built is charged to the job
 * Lustre sent with it (job_source "lustre") when the tool did not see its
 * cause, to the cause's own job when it did; a user's own request keeps
 * its own job whatever Lustre sent.
 */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include "enrich/enrich.h"
#include "lustre_bench.h"

#define KDEV   LES_TEST_LUSTRE_DEV
#define WRITER 500 /* a process of job 42 */

struct bench {
	struct les_consumer_config opts;
	struct les_enrich_config enrich;
	struct les_observed observed;
	struct les_sink_file out;
	struct les_enricher *enricher;
	struct les_consumer consumer;
	int events;
	char job_id[64], job_source[16]; /* of the last event; "-" for NULL */
	json_t *line;			 /* the last line, parsed */
};

static void copy_or_dash(char *dst, size_t n, const char *s)
{
	snprintf(dst, n, "%s", s ? s : "-");
}

static int capture(void *ctx, const struct les_event *ev)
{
	struct bench *b = ctx;
	json_error_t err;

	b->events++;
	copy_or_dash(b->job_id, sizeof(b->job_id), ev->job_id);
	copy_or_dash(b->job_source, sizeof(b->job_source), ev->job_source);
	json_decref(b->line);
	b->line = json_loadb(ev->line, ev->line_len, 0, &err);
	ck_assert_msg(b->line, "not JSON: %s: %.*s", err.text, (int)ev->line_len, ev->line);
	return 0;
}

/* A Lustre mount on dev 1:77; with enrich, an enricher that knows WRITER's job 42. */
static void bench_open(struct bench *b, bool enrich, const char *filter_job)
{
	static const char env[] = "SLURM_JOB_ID=42";
	struct les_rec_proc exec = { .kind = LES_REC_PROC_EXEC, .pid = WRITER, .ppid = 1 };
	char err[256];

	memset(b, 0, sizeof(*b));
	b->enrich.no_user_lookup = true;
	b->opts.filter_job = filter_job;
	les_test_lustre_consumer(&b->consumer, &b->opts, &b->observed, &b->out, capture, b);
	if (!enrich)
		return;
	ck_assert_int_eq(les_enrich_new(&b->enricher, &b->enrich, "n1", err, sizeof(err)),
			 0);
	memcpy(exec.env, env, sizeof(env));
	exec.env_len = sizeof(env);
	les_enrich_exec(b->enricher, &exec);
	b->consumer.enricher = b->enricher;
}

static void bench_close(struct bench *b)
{
	json_decref(b->line);
	les_consumer_release(&b->consumer);
	les_sink_file_close(&b->out);
	les_enrich_free(b->enricher);
	les_observed_free(&b->observed);
}

/* An ost_write request as the kernel sends it, from task (pid, comm), flags. */
static void send_write(struct bench *b, uint32_t pid, const char *comm, uint32_t flags,
		       const char *jobid)
{
	struct les_rec_rpc r = {
		.kind = LES_REC_RPC,
		.proto = LES_PROTO_PTLRPC,
		.rpc_op = LES_RPC_OP_REQUEST,
		.opcode = 4,
		.ts_ns = 1000,
		.latency_ns = 2000000,
		.bytes = 4 << 20,
		.req_id = 9,
		.dev = KDEV,
		.flags = flags | LES_RPC_F_OPCODE,
		.task = { .pid = pid, .tid = pid, .uid = pid == WRITER ? 1000 : 0 },
		.worker_pid = 33,
	};

	memcpy(r.task.comm, comm, strnlen(comm, sizeof(r.task.comm)));
	strcpy(r.worker_comm, "ptlrpcd_00_01");
	if (jobid)
		memcpy(r.jobid, jobid, strnlen(jobid, sizeof(r.jobid)));
	ck_assert_int_eq(les_consumer_on_record(&b->consumer, &r, sizeof(r)), 0);
}

static const char *str(json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);

	ck_assert_msg(v, "no %s", key);
	return json_is_null(v) ? "-" : json_string_value(v);
}

/* The event and the line say the same job and source. */
static void assert_charged(struct bench *b, const char *job, const char *source)
{
	ck_assert_str_eq(b->job_id, job);
	ck_assert_str_eq(b->job_source, source);
	ck_assert_str_eq(str(b->line, "job_id"), job);
	ck_assert_str_eq(str(b->line, "job_source"), source);
}

START_TEST(test_kthread_writeback_wire_job)
{
	struct bench b;

	bench_open(&b, true, NULL);
	send_write(&b, 71, "kworker/u8:2", LES_RPC_F_KTHREAD | LES_RPC_F_JOBID | LES_RPC_F_ASYNC,
		   "202");
	assert_charged(&b, "202", "lustre");
	/* The thread is still who built and sent it, and the wire's job stays. */
	ck_assert_str_eq(str(b.line, "comm"), "kworker/u8:2");
	ck_assert_str_eq(str(b.line, "worker_comm"), "ptlrpcd_00_01");
	ck_assert_str_eq(str(b.line, "lustre_jobid"), "202");
	/* A job ID of the full 32 bytes, no NUL: cut at the wire's length. */
	send_write(&b, 71, "kworker/u8:2", LES_RPC_F_KTHREAD | LES_RPC_F_JOBID,
		   "0123456789abcdef0123456789abcdef");
	assert_charged(&b, "0123456789abcdef0123456789abcdef", "lustre");
	/* Without a job ID on the wire the thread has none. */
	send_write(&b, 71, "kworker/u8:2", LES_RPC_F_KTHREAD, NULL);
	assert_charged(&b, "-", "-");
	bench_close(&b);
}
END_TEST

START_TEST(test_user_request_keeps_its_job)
{
	struct bench b;

	bench_open(&b, true, NULL);
	/* A user's own request: its job from its environment, whatever the wire says. */
	send_write(&b, WRITER, "dd", LES_RPC_F_JOBID, "dd.1000");
	assert_charged(&b, "42", "env");
	ck_assert_str_eq(str(b.line, "lustre_jobid"), "dd.1000");
	/* Charged to its cause in the kernel: the cause's own job, not the wire's. */
	send_write(&b, WRITER, "dd", LES_RPC_F_CAUSE | LES_RPC_F_JOBID | LES_RPC_F_ASYNC, "202");
	assert_charged(&b, "42", "env");
	ck_assert_str_eq(str(b.line, "worker_comm"), "ptlrpcd_00_01");
	bench_close(&b);
}
END_TEST

/* --job and the sinks see the charged job: the record passes the writer's filter. */
START_TEST(test_job_filter_sees_wire_job)
{
	struct bench b;

	bench_open(&b, true, "202");
	send_write(&b, 71, "kworker/u8:2", LES_RPC_F_KTHREAD | LES_RPC_F_JOBID, "202");
	ck_assert_int_eq(b.events, 1);
	send_write(&b, 71, "kworker/u8:2", LES_RPC_F_KTHREAD | LES_RPC_F_JOBID, "101");
	ck_assert_int_eq(b.events, 1);
	ck_assert_uint_eq(b.consumer.filtered_userspace, 1);
	bench_close(&b);
}
END_TEST

/* Job IDs are enrichment: without it a record has none, and gets none. */
START_TEST(test_no_enrichment_no_job)
{
	struct bench b;

	bench_open(&b, false, NULL);
	send_write(&b, 71, "kworker/u8:2", LES_RPC_F_KTHREAD | LES_RPC_F_JOBID, "202");
	ck_assert_str_eq(b.job_id, "-");
	ck_assert_ptr_null(json_object_get(b.line, "job_id"));
	ck_assert_str_eq(str(b.line, "lustre_jobid"), "202");
	bench_close(&b);
}
END_TEST

START_TEST(test_wire_job_rule)
{
	struct les_rec_rpc r = { .proto = LES_PROTO_PTLRPC,
				 .flags = LES_RPC_F_KTHREAD | LES_RPC_F_JOBID };
	char buf[LES_JOBID_LEN + 1];

	strcpy(r.jobid, "7");
	ck_assert_str_eq(les_enrich_wire_job(&r, buf), "7");
	r.proto = LES_PROTO_SUNRPC; /* only Lustre sends a job ID */
	ck_assert_ptr_null(les_enrich_wire_job(&r, buf));
	r.proto = LES_PROTO_PTLRPC;
	r.jobid[0] = '\0'; /* set but empty */
	ck_assert_ptr_null(les_enrich_wire_job(&r, buf));
	ck_assert_str_eq(les_job_source_name(LES_JOB_LUSTRE), "lustre");
}
END_TEST

static Suite *charge_suite(void)
{
	Suite *s = suite_create("rpc_charge");
	TCase *tc = tcase_create("charge");

	tcase_add_test(tc, test_kthread_writeback_wire_job);
	tcase_add_test(tc, test_user_request_keeps_its_job);
	tcase_add_test(tc, test_job_filter_sees_wire_job);
	tcase_add_test(tc, test_no_enrichment_no_job);
	tcase_add_test(tc, test_wire_job_rule);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(charge_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
