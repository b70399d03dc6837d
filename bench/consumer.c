// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Consumer throughput on one core, without a kernel: synthetic ring-buffer
 * records replayed through the library's own per-record path
 * (les_consumer_on_record: decode, enrich, JSON, file sink to /dev/null),
 * and, for comparison, the same decode and enrichment with the line built
 * by jansson. Also the aggregation path with 10 k groups.
 *
 *   consumer RECORDS [PIPELINE]	(PIPELINE: one of the names below, for a profiler)
 *
 * Prints one line per pipeline:  NAME records_per_s=R ns_per_record=N
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sink/aggregate.h"
#include "pipeline/wiring.h"
#include "pipeline/consumer.h"
#include "enrich/enrich.h"
#include "util/json.h"
#include "model/mounts.h"
#include "model/observed.h"
#include "model/ops.h"
#include "cli/options.h"
#include "cli/stage_config.h"
#include "sink/sink.h"

#define N_SAMPLES 4096 /* distinct records, replayed in a loop */
#define N_PIDS	  64
#define KDEV	  ((1u << 20) | 77) /* the synthetic Lustre mount below */

static const char mountinfo[] =
	"36 25 1:77 / /mnt/lustre rw,relatime shared:1 - lustre 10.0.0.1@o2ib:/scratch rw\n";

static struct les_rec_access samples[N_SAMPLES];

/* CPU time of the thread: the machine is shared, wall time would count others. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "bench consumer: %s\n", what);
	exit(1);
}

/* Access records of 64 processes of 4 users, mixed ops, some errors. */
static void make_samples(void)
{
	static const unsigned int ops[] = { LES_OP_READ, LES_OP_WRITE, LES_OP_GETATTR,
					    LES_OP_OPEN, LES_OP_CLOSE, LES_OP_LOOKUP };

	for (unsigned int i = 0; i < N_SAMPLES; i++) {
		struct les_rec_access *r = &samples[i];
		unsigned int p = i % N_PIDS;

		r->kind = LES_REC_ACCESS;
		r->op = (uint16_t)ops[i % 6];
		r->method = LES_ATTACH_SYSCALL;
		r->ts_ns = 1000000000ULL + i * 1000ULL;
		r->latency_ns = 1000 + (i * 7919) % 5000000;
		r->bytes = r->op == LES_OP_READ || r->op == LES_OP_WRITE ? 4096 : 0;
		r->op_id = ((uint64_t)i << 12) | 1;
		r->dev = KDEV;
		r->err = i % 97 == 0 ? 2 : 0;
		r->task.pid = 10000 + p;
		r->task.tid = 10000 + p;
		r->task.uid = p % 4 ? 1000 + p % 4 : 0;
		r->task.gid = r->task.uid;
		snprintf(r->task.comm, sizeof(r->task.comm), "worker-%u", p % 8);
	}
}

/* Exec notices so that every process has a job and tags, as in production. */
static void feed_execs(struct les_enricher *e)
{
	static struct les_rec_proc n;

	for (unsigned int p = 0; p < N_PIDS; p++) {
		int len;

		memset(&n, 0, sizeof(n));
		n.kind = LES_REC_PROC_EXEC;
		n.pid = 10000 + p;
		n.ppid = 1;
		n.uid = p % 4 ? 1000 + p % 4 : 0;
		snprintf(n.comm, sizeof(n.comm), "worker-%u", p % 8);
		len = snprintf(n.env, sizeof(n.env), "PATH=/usr/bin:/bin%cSLURM_JOB_ID=%u%cHOME=/x",
			       0, 4242 + p % 3, 0);
		n.env_len = (uint32_t)len + 1;
		les_enrich_exec(e, &n);
	}
}

struct bench {
	struct les_options opts;
	struct les_consumer_config consumer_cfg; /* from opts, as the tool makes it */
	struct les_observed observed;
	struct les_sink_file out;
	struct les_enricher *enricher;
	struct les_consumer *consumer;
};

static void bench_open(struct bench *b, bool enrich)
{
	struct les_mount_table table;
	char path[] = "/tmp/les-bench-mountinfo.XXXXXX", err[256];
	int fd = mkstemp(path);

	memset(b, 0, sizeof(*b));
	les_options_defaults(&b->opts);
	if (fd < 0 || write(fd, mountinfo, sizeof(mountinfo) - 1) < 0)
		die("cannot write the mount table");
	close(fd);
	if (les_mount_table_load(&table, path))
		die("cannot load the mount table");
	unlink(path);
	if (les_observed_select(&b->observed, &table, NULL, 0, err, sizeof(err)))
		die(err);
	les_mount_table_free(&table);
	if (les_sink_file_open(&b->out, "/dev/null"))
		die("cannot open /dev/null");
	if (enrich && les_enrich_new(&b->enricher, &b->opts.enrich, "node17", err, sizeof(err)))
		die(err);
	if (b->enricher)
		feed_execs(b->enricher);
	b->consumer = calloc(1, sizeof(*b->consumer));
	if (!b->consumer)
		die("out of memory");
	les_consumer_config_of(&b->opts, &b->consumer_cfg);
	les_consumer_init(b->consumer, &b->consumer_cfg, &b->observed, "node17");
	les_pipeline_attach_file(b->consumer, &b->out);
	b->consumer->enricher = b->enricher;
}

static void bench_close(struct bench *b)
{
	les_sink_file_close(&b->out);
	les_enrich_free(b->enricher);
	les_observed_free(&b->observed);
	free(b->consumer);
}

typedef int (*record_fn)(void *ctx, void *data, size_t size);

static void report(const char *name, unsigned long n, double secs)
{
	printf("%s records_per_s=%.0f ns_per_record=%.1f\n", name, (double)n / secs,
	       secs * 1e9 / (double)n);
	fflush(stdout);
}

/* Replay n records through fn; the first pass warms the caches (and NSS). */
static double replay(record_fn fn, void *ctx, unsigned long n)
{
	double t0;

	for (unsigned int i = 0; i < N_SAMPLES; i++)
		fn(ctx, &samples[i], sizeof(samples[i]));
	t0 = now_s();
	for (unsigned long i = 0; i < n; i++)
		if (fn(ctx, &samples[i % N_SAMPLES], sizeof(samples[0])) < 0)
			die("the consumer stopped");
	return now_s() - t0;
}

/* --- the same pipeline with jansson building the line ----------------- */

struct jansson_ctx {
	struct bench *b;
	char line[LES_LINE_MAX];
	const struct les_enriched *en;
	char comm[LES_COMM_LEN + 1];
};

static void put_str(json_t *o, const char *k, const char *v)
{
	json_object_set_new(o, k, v ? json_string(v) : json_null());
}

/* Mirrors les_format_access's fields and order, enrichment included. */
static int jansson_on_record(void *vctx, void *data, size_t size)
{
	struct jansson_ctx *j = vctx;
	struct les_consumer *c = j->b->consumer;
	const struct les_rec_access *r = data;
	const struct les_observed_mount *m;
	char ts[JW_RFC3339_NS_LEN + 1];
	json_t *o, *tags;
	size_t n;

	if (size < sizeof(*r) || r->kind != LES_REC_ACCESS)
		return 0;
	m = les_observed_find(&j->b->observed, r->dev);
	memcpy(j->comm, r->task.comm, LES_COMM_LEN);
	j->comm[LES_COMM_LEN] = '\0';
	j->en = les_enrich_task(j->b->enricher, &r->task, 0, r->ts_ns);
	jw_format_rfc3339_ns(ts, sizeof(ts), les_fmt_epoch_ns(&c->fmt, r->ts_ns));
	o = json_object();
	put_str(o, "type", "access");
	put_str(o, "ts", ts);
	put_str(o, "host", c->host);
	put_str(o, "fs_type", m ? m->fs_type : NULL);
	put_str(o, "fs", m ? m->fs_name : NULL);
	put_str(o, "mount", m ? m->mount_point : NULL);
	put_str(o, "op", les_op_name(r->op));
	put_str(o, "access_intent", les_intent_name(les_op_intent(r->op)));
	put_str(o, "method", les_attach_method_name(r->method));
	json_object_set_new(o, "op_id", json_integer((json_int_t)r->op_id));
	json_object_set_new(o, "pid", json_integer(r->task.pid));
	json_object_set_new(o, "tid", json_integer(r->task.tid));
	json_object_set_new(o, "uid", json_integer(r->task.uid));
	json_object_set_new(o, "gid", json_integer(r->task.gid));
	put_str(o, "comm", j->comm);
	put_str(o, "process", j->en->process);
	put_str(o, "username", j->en->username);
	put_str(o, "actor_type", j->en->actor_type);
	put_str(o, "job_id", j->en->job_id);
	put_str(o, "job_source", j->en->job_source);
	tags = json_object();
	json_object_set_new(o, "tags", tags);
	json_object_set_new(o, "latency_ns", json_integer((json_int_t)r->latency_ns));
	json_object_set_new(o, "bytes", json_integer((json_int_t)r->bytes));
	json_object_set_new(o, "errno", json_integer(r->err));
	put_str(o, "errno_class", les_errno_class_name(les_errno_class(r->err)));
	json_object_set_new(o, "rpc_count", json_integer(r->rpc_count));
	json_object_set_new(o, "rpc_wait_ns", json_integer((json_int_t)r->rpc_wait_ns));
	n = json_dumpb(o, j->line, sizeof(j->line) - 1, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!n || n >= sizeof(j->line) - 1)
		return 0;
	j->line[n++] = '\n';
	return les_sink_file_write(&j->b->out, j->line, n);
}

/* --- aggregation ------------------------------------------------------ */

static unsigned long windows_out;

static int count_window(void *ctx, const struct les_event *ev)
{
	(void)ctx;
	(void)ev;
	windows_out++;
	return 0;
}

/*
 * les_aggregate_add straight from events: 2500 uids x 4 ops = 10 k groups
 * per window, a window closing every 1 M records (one per simulated second).
 */
static double aggregate_direct(unsigned long n)
{
	static const char *const ops[] = { "read", "write", "getattr", "open" };
	static const char *const intents[] = { "data_read", "data_write", "namespace_read",
					       "namespace_read" };
	struct les_aggregate_config cfg = {
		.window_ns = 1000000000ULL,
		.group_by = LES_GROUP_BY_DEFAULT,
		.max_groups = LES_AGG_MAX_GROUPS_DEFAULT,
		.host = "node17",
	};
	struct les_aggregate *a = les_aggregate_new(&cfg, count_window, NULL);
	struct les_event ev = {
		.kind = LES_REC_ACCESS,
		.type = "access",
		.host = "node17",
		.fs_type = "lustre",
		.fs = "scratch",
		.mount = "/mnt/lustre",
		.process = "worker",
		.comm = "worker",
		.actor_type = "batch_job",
		.job_id = "4242",
		.job_source = "env",
	};
	double t0;

	if (!a)
		die("cannot create the aggregator");
	t0 = now_s();
	for (unsigned long i = 0; i < n; i++) {
		unsigned int g = (unsigned int)(i % 10000);

		ev.ts_epoch_ns = 1700000000000000000ULL + i * 1000ULL;
		ev.uid = 1000 + g / 4;
		ev.op = ops[g % 4];
		ev.access_op = (unsigned int)les_op_from_name(ev.op);
		ev.access_intent = intents[g % 4];
		ev.latency_ns = 1000 + (i * 7919) % 5000000;
		ev.bytes = 4096;
		if (les_aggregate_add(a, &ev) < 0)
			die("aggregate_add failed");
	}
	t0 = now_s() - t0;
	les_aggregate_free(a);
	return t0;
}

static const char *only;

static bool wanted(const char *name)
{
	return !only || !strcmp(only, name);
}

/* The library's pipeline, with or without enrichment. */
static void run_consumer(const char *name, bool enrich, unsigned long n)
{
	struct bench b;

	if (!wanted(name))
		return;
	bench_open(&b, enrich);
	report(name, n, replay(les_consumer_on_record, b.consumer, n));
	bench_close(&b);
}

static void run_jansson(unsigned long n)
{
	struct jansson_ctx *j = calloc(1, sizeof(*j));
	struct bench b;

	if (!wanted("jansson_enriched"))
		return;
	if (!j)
		die("out of memory");
	bench_open(&b, true);
	j->b = &b;
	report("jansson_enriched", n, replay(jansson_on_record, j, n));
	bench_close(&b);
	free(j);
}

/* --aggregate 1s through the consumer: no per-op lines. */
static void run_aggregate_consumer(unsigned long n)
{
	struct les_aggregate_config cfg;
	struct les_aggregate *agg;
	struct bench b;

	if (!wanted("aggregate_consumer"))
		return;
	bench_open(&b, true);
	b.opts.aggregate_ns = 1000000000ULL;
	les_aggregate_config_of(&b.opts, &cfg);
	agg = les_pipeline_attach_aggregate(b.consumer, &cfg, b.opts.records);
	if (!agg)
		die("cannot attach the aggregator");
	report("aggregate_consumer", n, replay(les_consumer_on_record, b.consumer, n));
	les_aggregate_free(agg);
	bench_close(&b);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;

	if (!n)
		return 2;
	only = argc > 2 ? argv[2] : NULL;
	make_samples();
	run_consumer("json_enriched", true, n);
	run_jansson(n / 4 + 1); /* an order of magnitude slower */
	run_consumer("json_no_enrich", false, n);
	run_aggregate_consumer(n);
	if (wanted("aggregate_10k_groups")) {
		report("aggregate_10k_groups", n, aggregate_direct(n));
		printf("aggregate_window_lines=%lu\n", windows_out);
	}
	return 0;
}
