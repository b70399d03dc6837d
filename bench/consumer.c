// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Consumer throughput on one core, without a kernel: synthetic ring-buffer
 * records replayed through the library's own per-record path
 * (les_consumer_on_record: decode, enrich, JSON, file sink to /dev/null),
 * and, for comparison, the same decode and enrichment with the line built
 * by jansson. Also the aggregation path with 10 k groups, and a Lustre
 * server's records: each request's server record (srv) and the client's
 * request record (rpc) it joins with, the join on, beside the same client
 * records alone (a client-only node: no join), in one run.
 *
 *   consumer RECORDS [PIPELINE]	(PIPELINE: one of the names below, for a profiler)
 *
 * Prints one line per pipeline:  NAME records_per_s=R ns_per_record=N
 * (the server pipelines add what they joined and lost; a record lost or a
 * request left unjoined there is an error: exit 1).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
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
#include "util/clock.h"
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

/* A request of each kind: the client's record and the server's, same xid. */
static struct les_rec_rpc rpc_samples[N_SAMPLES];
static struct les_rec_srv srv_samples[N_SAMPLES];

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

/*
 * A Lustre server's requests, shaped as the 6.12 guest's records are: per
 * request the client's PtlRPC request record (rpc, xid and import peer
 * read from module BTF) and the server's record of it (srv), with the
 * opcodes of a mixed workload (bulk writes and reads, metadata, locks,
 * pings), their services, targets and the job on the wire.
 */
struct srv_shape {
	uint16_t opcode;
	const char *service, *target, *thread;
	uint64_t bytes;
};

static const struct srv_shape srv_shapes[] = {
	{4, "ost_io", "lustre-OST0000", "ll_ost_io00_000", 1 << 20}, /* ost_write */
	{3, "ost_io", "lustre-OST0001", "ll_ost_io00_001", 1 << 20}, /* ost_read */
	{33, "mdt", "lustre-MDT0000", "mdt00_001", 0},		     /* mds_getattr */
	{36, "mdt", "lustre-MDT0000", "mdt00_002", 0},		     /* mds_reint */
	{101, "mdt", "lustre-MDT0000", "mdt00_000", 0},		     /* ldlm_enqueue */
	{103, "ldlm_canceld", "lustre-MDT0000", "ldlm_cn00_000", 0}, /* ldlm_cancel */
	{400, "ost", "lustre-OST0000", "ll_ost00_000", 0},	     /* obd_ping */
};
#define N_SHAPES (sizeof(srv_shapes) / sizeof(srv_shapes[0]))

static struct les_lnet_nid tcp_nid(uint32_t ip)
{
	/* socklnd (type 2), tcp0, an IPv4 address: size 0 (4 bytes) */
	return (struct les_lnet_nid){.size = 0, .type = 2, .addr_be = {htonl(ip)}};
}

static void make_srv_samples(void)
{
	const struct les_lnet_nid server = tcp_nid(0xc0a84d01), client = tcp_nid(0xc0a84d02);

	for (unsigned int i = 0; i < N_SAMPLES; i++) {
		const struct srv_shape *sh = &srv_shapes[i % N_SHAPES];
		struct les_rec_rpc *c = &rpc_samples[i];
		struct les_rec_srv *s = &srv_samples[i];
		uint64_t t = 1000000000ULL + i * 1000ULL, handle = 20000 + (i * 7919) % 2000000;
		unsigned int p = i % N_PIDS;

		c->kind = LES_REC_RPC;
		c->proto = LES_PROTO_PTLRPC;
		c->rpc_op = LES_RPC_OP_REQUEST;
		c->opcode = sh->opcode;
		c->flags = LES_RPC_F_OPCODE | LES_RPC_F_XID | LES_RPC_F_NID | LES_RPC_F_TARGET |
			   LES_RPC_F_JOBID;
		c->xid = 1883793502777216ULL + i;
		c->req_id = i + 1;
		c->nid = server; /* the import's peer: the server's NID */
		c->dev = KDEV;
		c->bytes = sh->bytes;
		c->backlog_ns = 3000;
		c->rtt_ns = handle + 60000;
		c->latency_ns = c->backlog_ns + c->rtt_ns;
		c->ts_ns = t + c->latency_ns;
		c->parent_op_id = ((uint64_t)i << 12) | 1;
		c->task.pid = 10000 + p;
		c->task.tid = 10000 + p;
		c->task.uid = p % 4 ? 1000 + p % 4 : 0;
		c->task.gid = c->task.uid;
		snprintf(c->task.comm, sizeof(c->task.comm), "worker-%u", p % 8);
		snprintf(c->name, sizeof(c->name), "%s", sh->target);
		snprintf(c->jobid, sizeof(c->jobid), "worker-%u.%u", p % 8, c->task.uid);

		s->kind = LES_REC_SRV;
		s->proto = LES_PROTO_PTLRPC;
		s->opcode = sh->opcode;
		s->flags = LES_SRV_F_OPCODE | LES_SRV_F_TARGET | LES_SRV_F_JOBID | LES_SRV_F_FLAGS |
			   LES_SRV_F_NRS | LES_SRV_F_REPLY | LES_SRV_F_PEER;
		s->xid = c->xid;
		s->self = server;
		s->peer = client;
		/* Lustre's arrival stamp is CLOCK_REALTIME: the consumer moves it. */
		s->arrival_real_ns = t + 20000 + 1700000000000000000ULL;
		s->nrs_ns = t + 25000;
		s->start_ns = t + 30000;
		s->handler_ns = t + 31000;
		s->ts_ns = s->start_ns + handle;
		s->reply_ns = s->ts_ns - 500;
		s->transno = sh->opcode == 36 ? 4294967296ULL + i : 0;
		s->tid = 300 + i % 8;
		snprintf(s->comm, sizeof(s->comm), "%s", sh->thread);
		snprintf(s->service, sizeof(s->service), "%s", sh->service);
		snprintf(s->target, sizeof(s->target), "%s", sh->target);
		memcpy(s->jobid, c->jobid, sizeof(s->jobid));
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

static void bench_open_join(struct bench *b, bool enrich, bool join)
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
	b->consumer_cfg.join = join; /* as main decides it: a server probe attached */
	les_consumer_init(b->consumer, &b->consumer_cfg, &b->observed, "node17");
	les_pipeline_attach_file(b->consumer, &b->out);
	b->consumer->enricher = b->enricher;
}

static void bench_open(struct bench *b, bool enrich)
{
	bench_open_join(b, enrich, false);
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

/* --- a Lustre server's records ----------------------------------------- */

enum srv_stream { SRV_AND_RPC, SRV_ONLY, RPC_ONLY };

/*
 * The records of one stream, in the consumer's order: with both sides, a
 * request's two records one after the other, the server's first every
 * other request (on one node either may reach the ring first).
 */
static const void *stream_rec[2 * N_SAMPLES];
static size_t stream_size[2 * N_SAMPLES];

static unsigned int make_stream(enum srv_stream st)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < N_SAMPLES; i++) {
		bool srv_first = i & 1;

		if (st == SRV_AND_RPC && !srv_first) {
			stream_rec[n] = &rpc_samples[i];
			stream_size[n++] = sizeof(rpc_samples[i]);
		}
		if (st != RPC_ONLY) {
			stream_rec[n] = &srv_samples[i];
			stream_size[n++] = sizeof(srv_samples[i]);
		}
		if (st == RPC_ONLY || (st == SRV_AND_RPC && srv_first)) {
			stream_rec[n] = &rpc_samples[i];
			stream_size[n++] = sizeof(rpc_samples[i]);
		}
	}
	return n;
}

/*
 * Each pass its own xids, as a client's never repeat: a server record
 * whose request waits unjoined must not meet a later pass's twin.
 */
static void next_xids(void)
{
	for (unsigned int i = 0; i < N_SAMPLES; i++) {
		rpc_samples[i].xid += N_SAMPLES;
		srv_samples[i].xid = rpc_samples[i].xid;
	}
}

/* Replay n records of the stream (after one warm pass); n is rounded up to whole passes. */
static double replay_stream(struct les_consumer *c, unsigned int len, unsigned long *n)
{
	unsigned long passes = (*n + len - 1) / len;
	double t0;

	for (unsigned int i = 0; i < len; i++)
		if (les_consumer_on_record(c, (void *)stream_rec[i], stream_size[i]) < 0)
			die("the consumer stopped");
	t0 = now_s();
	for (unsigned long p = 0; p < passes; p++) {
		next_xids();
		for (unsigned int i = 0; i < len; i++)
			if (les_consumer_on_record(c, (void *)stream_rec[i], stream_size[i]) < 0)
				die("the consumer stopped");
	}
	*n = passes * len;
	return now_s() - t0;
}

/*
 * Nothing lost: no record dropped or unobserved, and the join's account
 * whole. With both sides every request joined, nothing waits in vain;
 * server records alone (a server node, the join on as main sets it) each
 * wait in vain and are counted as unjoined, none without a key or twice.
 * Returns the number of problems, each said on stderr.
 */
static int srv_account(const char *name, struct les_consumer *c, enum srv_stream st,
		       unsigned long records)
{
	const struct les_rpcjoin_counts *k = &c->join.counts;
	uint64_t dropped = les_consumer_dropped(c), want_joined = 0, want_unjoined_srv = 0;
	int bad = 0;

	les_rpcjoin_expire(&c->join, les_mono_ns(), true); /* the end: what waits is unjoined */
	if (st == SRV_AND_RPC)
		want_joined = records / 2;
	if (st == SRV_ONLY)
		want_unjoined_srv = records;
	if (dropped || c->unobserved) {
		fprintf(stderr, "bench consumer: %s: %lu dropped, %lu unobserved\n", name,
			(unsigned long)dropped, (unsigned long)c->unobserved);
		bad++;
	}
	if (k->joined != want_joined || k->unjoined[LES_JOIN_SERVER] != want_unjoined_srv ||
	    k->unjoined[LES_JOIN_CLIENT] || k->no_key[LES_JOIN_CLIENT] ||
	    k->no_key[LES_JOIN_SERVER] || k->duplicate[LES_JOIN_CLIENT] ||
	    k->duplicate[LES_JOIN_SERVER]) {
		fprintf(stderr,
			"bench consumer: %s: joined %lu (want %lu), unjoined client %lu server %lu (want 0, %lu), no key %lu/%lu, duplicate %lu/%lu\n",
			name, (unsigned long)k->joined, (unsigned long)want_joined,
			(unsigned long)k->unjoined[LES_JOIN_CLIENT],
			(unsigned long)k->unjoined[LES_JOIN_SERVER],
			(unsigned long)want_unjoined_srv, (unsigned long)k->no_key[LES_JOIN_CLIENT],
			(unsigned long)k->no_key[LES_JOIN_SERVER],
			(unsigned long)k->duplicate[LES_JOIN_CLIENT],
			(unsigned long)k->duplicate[LES_JOIN_SERVER]);
		bad++;
	}
	return bad;
}

static int srv_failures;

/* One stream through the library's pipeline, enriched, the join as main would set it. */
static double run_srv(const char *name, enum srv_stream st, unsigned long n)
{
	unsigned int len = make_stream(st);
	unsigned long timed = n;
	struct bench b;
	double secs;

	if (!wanted(name))
		return 0;
	bench_open_join(&b, true, st != RPC_ONLY);
	if (st != RPC_ONLY && !b.consumer->join.cap)
		die(b.consumer->join_off);
	secs = replay_stream(b.consumer, len, &timed);
	printf("%s records_per_s=%.0f ns_per_record=%.1f joined=%lu emitted=%lu dropped=%lu\n",
	       name, (double)timed / secs, secs * 1e9 / (double)timed,
	       (unsigned long)b.consumer->join.counts.joined,
	       (unsigned long)les_consumer_emitted(b.consumer),
	       (unsigned long)les_consumer_dropped(b.consumer));
	fflush(stdout);
	srv_failures += srv_account(name, b.consumer, st, timed + len);
	les_consumer_release(b.consumer);
	bench_close(&b);
	return secs * 1e9 / (double)timed;
}

static void run_srv_all(unsigned long n)
{
	double join_ns = run_srv("srv_join", SRV_AND_RPC, n);
	double server_ns = run_srv("srv_server_only", SRV_ONLY, n);
	double client_ns = run_srv("rpc_client_only", RPC_ONLY, n);

	/* One word, so that bench/run skips it: it takes its own medians. */
	if (join_ns > 0 && client_ns > 0)
		printf("srv_join_over_client_only_ns=%.2f\n", join_ns / client_ns);
	if (server_ns > 0 && client_ns > 0)
		printf("srv_server_only_over_client_only_ns=%.2f\n", server_ns / client_ns);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;

	if (!n)
		return 2;
	only = argc > 2 ? argv[2] : NULL;
	make_samples();
	make_srv_samples();
	run_consumer("json_enriched", true, n);
	run_jansson(n / 4 + 1); /* an order of magnitude slower */
	run_consumer("json_no_enrich", false, n);
	run_aggregate_consumer(n);
	if (wanted("aggregate_10k_groups")) {
		report("aggregate_10k_groups", n, aggregate_direct(n));
		printf("aggregate_window_lines=%lu\n", windows_out);
	}
	run_srv_all(n);
	return srv_failures ? 1 : 0;
}
