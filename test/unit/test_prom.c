// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Prometheus endpoint: label escaping, listen addresses, the rendered
 * families (exact sample lines), cardinality flags, series TTL, and the
 * HTTP server answering on a loopback port.
 */
#include <arpa/inet.h>
#include <check.h>
#include <jansson.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "util/clock.h"
#include "model/ops.h"
#include "pipeline/wiring.h"
#include "pipeline/consumer.h"
#include "enrich/enrich.h"
#include "model/mounts.h"
#include "model/observed.h"
#include "model/ops.h"
#include "model/families.h"
#include "sink/prom.h"
#include "sink/sink.h"

#define NS 1000000000ULL

static struct les_prom *make(bool uid_labels, bool hist_process, uint64_t ttl_ns)
{
	struct les_prom_config cfg = {
		.listen = "127.0.0.1:0",
		.path = "/metrics",
		.uid_labels = uid_labels,
		.histogram_process = hist_process,
		.slurm_label = true,
		.series_ttl_ns = ttl_ns,
	};
	struct les_prom *p = les_prom_new(&cfg);

	ck_assert_ptr_nonnull(p);
	return p;
}

static struct les_event access_ev(const char *op, const char *process, uint64_t lat, int err)
{
	struct les_event ev = {
		.kind = LES_REC_ACCESS,
		.type = "access",
		.fs_type = "fuse",
		.fs = "les-testfs",
		.mount = "/mnt/t",
		.op = op,
		.access_op = (unsigned int)les_op_from_name(op),
		.access_intent = "data_write",
		.latency_ns = lat,
		.bytes = 4096,
		.err = err,
		.uid = 1000,
		.username = "alice",
		.process = process,
		.actor_type = "user",
		.job_id = "42",
	};
	return ev;
}

/* The rendered text must hold this exact line. */
static void assert_has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return;
	fprintf(stderr, "%s", text); /* too long for check's message pipe */
	ck_abort_msg("missing line '%s' in the text above", line);
}

static char *render(struct les_prom *p)
{
	size_t len = 0;
	char *text = les_prom_render(p, &len);

	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(strlen(text), len);
	return text;
}

/* --- requests: in flight by submitter, PtlRPC started and completed ------- */

#define KDEV ((1u << 20) | 77)

struct rig {
	struct les_consumer_config opts;
	struct les_enrich_config enrich;
	struct les_observed observed;
	struct les_sink_file out;
	struct les_enricher *enricher;
	struct les_consumer consumer;
};

/* A consumer on a Lustre mount, a process of job 42, the prom store as its sink. */
static void rig_open(struct rig *r, struct les_prom *p)
{
	static const char mountinfo[] =
		"36 25 1:77 / /mnt/lustre rw,relatime shared:1 - lustre 10.0.0.1@o2ib:/scratch rw\n";
	static struct les_rec_proc exec;
	char path[] = "/tmp/les-test-mountinfo.XXXXXX", err[256];
	struct les_mount_table table;
	int fd = mkstemp(path);

	memset(r, 0, sizeof(*r));
	r->enrich.no_user_lookup = true;
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, mountinfo, sizeof(mountinfo) - 1), sizeof(mountinfo) - 1);
	close(fd);
	ck_assert_int_eq(les_mount_table_load(&table, path), 0);
	unlink(path);
	ck_assert_int_eq(les_observed_select(&r->observed, &table, NULL, 0, err, sizeof(err)), 0);
	les_mount_table_free(&table);
	ck_assert_int_eq(les_sink_file_open(&r->out, "/dev/null"), 0);
	ck_assert_int_eq(les_enrich_new(&r->enricher, &r->enrich, "n1", err, sizeof(err)), 0);
	memset(&exec, 0, sizeof(exec));
	exec.kind = LES_REC_PROC_EXEC;
	exec.pid = 500;
	exec.ppid = 1;
	memcpy(exec.env, "SLURM_JOB_ID=42", sizeof("SLURM_JOB_ID=42"));
	exec.env_len = sizeof("SLURM_JOB_ID=42");
	les_enrich_exec(r->enricher, &exec);
	les_consumer_init(&r->consumer, &r->opts, &r->observed, "n1");
	les_pipeline_attach_file(&r->consumer, &r->out);
	r->consumer.enricher = r->enricher;
	ck_assert_int_eq(les_consumer_add_event_sink(&r->consumer, les_prom_add, p), 0);
}

static void rig_close(struct rig *r)
{
	les_consumer_release(&r->consumer);
	les_sink_file_close(&r->out);
	les_enrich_free(r->enricher);
	les_observed_free(&r->observed);
}

static struct les_task submitter(void)
{
	struct les_task t = { .pid = 500, .tid = 501, .uid = 1000, .gid = 1000 };

	memcpy(t.comm, "ior", 4);
	return t;
}

/* A PtlRPC request's record, as the kernel sends it when the request completes. */
static void complete_request(struct rig *r)
{
	struct les_rec_rpc rec = {
		.kind = LES_REC_RPC,
		.proto = LES_PROTO_PTLRPC,
		.rpc_op = LES_RPC_OP_REQUEST,
		.ts_ns = 1000,
		.latency_ns = 2000000,
		.dev = KDEV,
		.task = submitter(),
	};

	ck_assert_int_eq(les_consumer_on_record(&r->consumer, &rec, sizeof(rec)), 0);
}

/* A PtlRPC/LDLM wait of the submitter: rpc_op, and the wait it runs inside (0: none). */
static void complete_wait(struct rig *r, unsigned int proto, unsigned int rpc_op, uint64_t latency,
			  uint64_t parent_wait_id)
{
	struct les_rec_rpc rec = {
		.kind = LES_REC_RPC,
		.proto = proto,
		.rpc_op = rpc_op,
		.ts_ns = 1000,
		.latency_ns = latency,
		.dev = KDEV,
		.task = submitter(),
		.wait_id = parent_wait_id + 1,
		.parent_wait_id = parent_wait_id,
	};

	ck_assert_int_eq(les_consumer_on_record(&r->consumer, &rec, sizeof(rec)), 0);
}

/* The exporter's actor_type is by name alone: ior in job 42 is a user there, a batch_job in ours. */
#define WHO                                                                 \
	"{fs=\"scratch\",mount=\"/mnt/lustre\",uid=\"1000\",username=\"\"," \
	"process=\"ior\",actor_type=\"user\",slurm_job_id=\"42\"}"

START_TEST(test_requests_in_flight)
{
	struct les_prom *p = make(true, false, 0);
	static struct les_kernel_stats ks;
	struct les_task t = submitter();
	struct rig r;
	char *text;

	rig_open(&r, p);
	complete_request(&r);
	/* two PtlRPC requests of the job in flight, one FUSE request of unknown mount */
	memset(&ks, 0, sizeof(ks));
	ks.tasks[0] = (struct les_inflight_task){ .dev = KDEV, .proto = LES_PROTO_PTLRPC, .task = t };
	ks.tasks[1] = ks.tasks[0];
	ks.tasks[2] = (struct les_inflight_task){ .dev = 0, .proto = LES_PROTO_FUSE, .task = t };
	ks.n_tasks = 3;
	les_pipeline_update_prom(p, &r.consumer, &ks);
	text = render(p);
	assert_has_line(text, "lustre_client_ptlrpc_requests_completed_total" WHO " 1");
	assert_has_line(text, "lustre_client_ptlrpc_requests_started_total" WHO " 3");
	assert_has_line(text, "lustre_client_inflight_requests" WHO " 2");
	assert_has_line(
		text,
		"lustre_ebpf_stream_client_inflight_requests{fs_type=\"fuse\",fs=\"\",mount=\"\","
		"uid=\"1000\",username=\"\",process=\"ior\",actor_type=\"batch_job\","
		"slurm_job_id=\"42\"} 1");
	free(text);

	/* both complete: the gauge falls to 0, started never goes back */
	complete_request(&r);
	complete_request(&r);
	ks.n_tasks = 0;
	ks.n_tasks_over = 5;
	les_pipeline_update_prom(p, &r.consumer, &ks);
	text = render(p);
	assert_has_line(text, "lustre_client_ptlrpc_requests_completed_total" WHO " 3");
	assert_has_line(text, "lustre_client_ptlrpc_requests_started_total" WHO " 3");
	assert_has_line(text, "lustre_client_inflight_requests" WHO " 0");
	assert_has_line(text, "lustre_ebpf_stream_inflight_unlabeled 5");
	free(text);

	/* a record's completion before the next read: started follows at once */
	complete_request(&r);
	text = render(p);
	assert_has_line(text, "lustre_client_ptlrpc_requests_started_total" WHO " 4");
	free(text);
	rig_close(&r);
	les_prom_free(p);
}
END_TEST

#define WAIT(op)                                                            \
	"{fs=\"scratch\",mount=\"/mnt/lustre\",op=\"" op "\",uid=\"1000\"," \
	"username=\"\",process=\"ior\",actor_type=\"user\",slurm_job_id=\"42\"}"
#define WAIT_SUM(op)                                                        \
	"{fs=\"scratch\",mount=\"/mnt/lustre\",op=\"" op "\",uid=\"1000\"," \
	"username=\"\",actor_type=\"user\",slurm_job_id=\"42\"}"
#define WAIT_OURS_SUM(op)                                                                      \
	"{fs_type=\"lustre\",fs=\"scratch\",mount=\"/mnt/lustre\",op=\"" op "\",uid=\"1000\"," \
	"username=\"\",actor_type=\"batch_job\",slurm_job_id=\"42\"}"
#define WAIT_OURS(op)                                                                          \
	"{fs_type=\"lustre\",fs=\"scratch\",mount=\"/mnt/lustre\",op=\"" op "\",uid=\"1000\"," \
	"username=\"\",process=\"ior\",actor_type=\"batch_job\",slurm_job_id=\"42\"}"

/*
 * rpc_wait counts each nanosecond a thread waited once, across both sets:
 * a lock enqueue of 3 s holds its request's queue_wait (1 s, counted with
 * every queue_wait in the exporter's, as it counts them) and the grant's
 * wait (2 s, in ours), so the enqueue itself is not counted; a PtlRPC
 * request record is no thread's wait (its time is the queue_wait's) and
 * counts only as a completed request.
 */
START_TEST(test_rpc_wait_once)
{
	struct les_prom *p = make(true, false, 0);
	struct rig r;
	char *text;

	rig_open(&r, p);
	complete_wait(&r, LES_PROTO_LDLM, LES_RPC_OP_LOCK_ENQUEUE, 3000000000ULL, 0);
	complete_wait(&r, LES_PROTO_PTLRPC, LES_RPC_OP_QUEUE_WAIT, 1000000000ULL, 10);
	complete_wait(&r, LES_PROTO_LDLM, LES_RPC_OP_LOCK_COMPLETION, 2000000000ULL, 10);
	complete_wait(&r, LES_PROTO_PTLRPC, LES_RPC_OP_QUEUE_WAIT, 500000000ULL, 0);
	complete_request(&r);
	text = render(p);
	assert_has_line(text, "lustre_ebpf_stream_client_rpc_wait_operations_total" WAIT_OURS(
				      "lock_wait") " 1");
	ck_assert_msg(!strstr(text, "lustre_client_rpc_wait_operations_total{fs=\"scratch\","
				    "mount=\"/mnt/lustre\",op=\"lock_wait\""),
		      "a lock wait in the exporter's rpc_wait, which is ptlrpc_queue_wait only");
	assert_has_line(text, "lustre_client_rpc_wait_operations_total" WAIT("queue_wait") " 2");
	assert_has_line(text, "lustre_client_rpc_wait_duration_seconds_sum" WAIT_SUM("queue_wait")
			      " 1.500000000");
	assert_has_line(text, "lustre_ebpf_stream_client_rpc_wait_duration_seconds_sum" WAIT_OURS_SUM(
				      "lock_wait") " 2.000000000");
	ck_assert_msg(!strstr(text, "op=\"request\""), "a request record counted as a wait");
	assert_has_line(text, "lustre_client_ptlrpc_requests_completed_total" WHO " 1");
	free(text);
	rig_close(&r);
	les_prom_free(p);
}
END_TEST

/* Lines of text starting with prefix that contain needle. */
static int lines_with(const char *text, const char *prefix, const char *needle)
{
	size_t plen = strlen(prefix);
	int n = 0;

	for (const char *l = text; *l;) {
		size_t len = strcspn(l, "\n");
		const char *hit = strstr(l, needle);

		if (strncmp(l, prefix, plen) == 0 && hit && hit < l + len)
			n++;
		l += len + (l[len] == '\n');
	}
	return n;
}

/*
 * The exporter's families as it renders them by default: Lustre only,
 * its labels without fs_type and, without --slurm-jobid, without
 * slurm_job_id; NFS and FUSE, evictions and whole PtlRPC requests in
 * ours, with fs_type and job_id.
 */
START_TEST(test_exporter_families)
{
	struct les_prom_config cfg = {.path = "/metrics", .uid_labels = true};
	struct les_prom *p = les_prom_new(&cfg);
	struct les_event lustre = access_ev("write", "dd", 1000, 0);
	struct les_event fuse = access_ev("write", "dd", 1000, 0);
	struct les_event evict = {
		.kind = LES_REC_RPC_EVENT,
		.fs_type = "lustre",
		.fs = "scratch",
		.mount = "/mnt/lustre",
		.proto_id = LES_PROTO_PTLRPC,
		.event_id = LES_EV_EVICT,
		.actor_type = "client_worker",
	};
	struct les_event resend = evict;
	struct rig r;
	char *text;

	ck_assert_ptr_nonnull(p);
	lustre.fs_type = "lustre";
	lustre.fs = "scratch";
	lustre.mount = "/mnt/lustre";
	resend.event_id = LES_EV_RESEND;
	les_prom_add(p, &lustre);
	les_prom_add(p, &fuse);
	les_prom_add(p, &evict);
	les_prom_add(p, &resend);
	rig_open(&r, p);
	complete_request(&r);
	text = render(p);
	assert_has_line(text,
			"lustre_client_access_operations_total{fs=\"scratch\","
			"mount=\"/mnt/lustre\",access_intent=\"data_write\",op=\"write\","
			"uid=\"1000\",username=\"alice\",process=\"dd\",actor_type=\"user\"} 1");
	assert_has_line(text, "lustre_ebpf_stream_client_access_operations_total{fs_type=\"fuse\","
			      "fs=\"les-testfs\",mount=\"/mnt/t\",access_intent=\"data_write\","
			      "op=\"write\",uid=\"1000\",username=\"alice\",process=\"dd\","
			      "actor_type=\"user\",slurm_job_id=\"42\"} 1");
	ck_assert_msg(!strstr(text, "lustre_client_access_operations_total{fs=\"les-testfs\""),
		      "a FUSE mount in the exporter's families");
	ck_assert_int_eq(lines_with(text, "lustre_client_", "slurm_job_id="), 0);
	assert_has_line(text, "lustre_client_rpc_errors_total{fs=\"scratch\",mount=\"/mnt/lustre\","
			      "uid=\"0\",username=\"\",process=\"\",actor_type=\"client_worker\","
			      "event=\"resend\"} 1");
	assert_has_line(text, "lustre_ebpf_stream_client_rpc_errors_total{fs_type=\"lustre\","
			      "fs=\"scratch\",mount=\"/mnt/lustre\",uid=\"0\",username=\"\","
			      "process=\"\",actor_type=\"client_worker\",slurm_job_id=\"\","
			      "event=\"evict\"} 1");
	assert_has_line(text, "lustre_client_ptlrpc_requests_completed_total{fs=\"scratch\","
			      "mount=\"/mnt/lustre\",uid=\"1000\",username=\"\",process=\"ior\","
			      "actor_type=\"user\"} 1");
	assert_has_line(text,
			"lustre_ebpf_stream_client_ptlrpc_request_duration_seconds_count{"
			"fs_type=\"lustre\",fs=\"scratch\",mount=\"/mnt/lustre\",uid=\"1000\","
			"username=\"\",actor_type=\"batch_job\",slurm_job_id=\"42\"} 1");
	assert_has_line(text,
			"lustre_ebpf_stream_client_ptlrpc_request_duration_seconds_sum{"
			"fs_type=\"lustre\",fs=\"scratch\",mount=\"/mnt/lustre\",uid=\"1000\","
			"username=\"\",actor_type=\"batch_job\",slurm_job_id=\"42\"} 0.002000000");
	free(text);
	rig_close(&r);
	les_prom_free(p);
}
END_TEST

/*
 * The bounded tables' levels and overflows, in Prometheus and in the stats
 * record alike: the enricher's (one process of job 42 cached, an
 * attribution too long for its tags) and the observed mounts'.
 */
START_TEST(test_table_counters)
{
	struct les_prom *p = make(true, false, 0);
	static struct les_kernel_stats ks;
	char path[] = "/tmp/les-test-stats.XXXXXX", *text, line[16384];
	json_t *doc, *en, *mounts;
	struct rig r;
	FILE *f;
	int fd;

	rig_open(&r, p);
	memset(&ks, 0, sizeof(ks));
	r.observed.skipped_too_long = 2;
	les_pipeline_update_prom(p, &r.consumer, &ks);
	text = render(p);
	assert_has_line(text, "lustre_ebpf_stream_enrich_attribs 1");
	assert_has_line(text, "lustre_ebpf_stream_enrich_attrib_cache_size 65537");
	assert_has_line(text, "lustre_ebpf_stream_enrich_procs_known 1");
	assert_has_line(text, "lustre_ebpf_stream_enrich_attrib_overflow_total 0");
	assert_has_line(text, "lustre_ebpf_stream_enrich_user_queue_full_total 0");
	assert_has_line(text, "# TYPE lustre_ebpf_stream_enrich_attrib_aged_total counter");
	assert_has_line(text, "lustre_ebpf_stream_observed_mounts 1");
	assert_has_line(text, "lustre_ebpf_stream_mounts_skipped{reason=\"limit\"} 0");
	assert_has_line(text, "lustre_ebpf_stream_mounts_skipped{reason=\"too_long\"} 2");
	free(text);

	/* The stats record, written to a real file. */
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	les_sink_file_close(&r.out);
	ck_assert_int_eq(les_sink_file_open(&r.out, path), 0);
	ck_assert_int_eq(les_consumer_emit_stats(&r.consumer, &ks, true), 0);
	les_sink_file_close(&r.out);
	ck_assert_int_eq(les_sink_file_open(&r.out, "/dev/null"), 0);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	fclose(f);
	unlink(path);
	doc = json_loads(line, 0, NULL);
	ck_assert_msg(doc, "%s", line);
	en = json_object_get(doc, "enrich");
	mounts = json_object_get(doc, "mounts");
	ck_assert_int_eq(json_integer_value(json_object_get(en, "attribs")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(en, "attrib_overflow")), 0);
	ck_assert_int_eq(json_object_size(en), les_enrich_n_stat_fields);
	ck_assert_int_eq(json_integer_value(json_object_get(mounts, "observed")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(mounts, "skipped_too_long")), 2);
	json_decref(doc);
	rig_close(&r);
	les_prom_free(p);
}
END_TEST

/*
 * /healthz: "starting" before the consumer's first update, then "ok" with
 * its drops per second, "stalled" once the last update is older than
 * LES_PROM_STALL_NS (a consumer blocked on its output).
 */
START_TEST(test_health)
{
	struct les_prom *p = make(true, false, 0);
	static struct les_kernel_stats ks;
	char buf[256];
	size_t len;
	struct rig r;
	uint64_t now;

	rig_open(&r, p);
	memset(&ks, 0, sizeof(ks));
	ck_assert_int_eq(les_prom_health(p, les_mono_ns(), buf, sizeof(buf), &len), 503);
	ck_assert_str_eq(buf, "{\"status\":\"starting\"}\n");
	les_pipeline_update_prom(p, &r.consumer, &ks);
	usleep(20000);
	ks.counters[LES_CNT_RB_DROPPED] = 50;
	les_pipeline_update_prom(p, &r.consumer, &ks);
	now = les_mono_ns();
	ck_assert_int_eq(les_prom_health(p, now, buf, sizeof(buf), &len), 200);
	ck_assert_uint_eq(len, strlen(buf));
	ck_assert_msg(strstr(buf, "\"status\":\"ok\"") && strstr(buf, "\"dropped\":50,") &&
			      strstr(buf, "\"observed_mounts\":1}") &&
			      !strstr(buf, "\"drops_per_s\":0.0"),
		      "%s", buf);
	ck_assert_int_eq(
		les_prom_health(p, now + LES_PROM_STALL_NS + 1000000000ULL, buf, sizeof(buf), &len),
		503);
	ck_assert_msg(strstr(buf, "\"status\":\"stalled\"") != NULL, "%s", buf);
	rig_close(&r);
	les_prom_free(p);
}
END_TEST

START_TEST(test_escape_label)
{
	char out[64];

	ck_assert_uint_eq(les_label_escape("a\"b\\c\nd", out, sizeof(out)), 10);
	ck_assert_str_eq(out, "a\\\"b\\\\c\\nd");
	/* Valid UTF-8 passes; a stray byte, an overlong form, a surrogate become U+FFFD. */
	les_label_escape("caf\xc3\xa9", out, sizeof(out));
	ck_assert_str_eq(out, "caf\xc3\xa9");
	les_label_escape("x\xffy", out, sizeof(out));
	ck_assert_str_eq(out, "x\xef\xbf\xbdy");
	les_label_escape("\xc0\xaf", out, sizeof(out));
	ck_assert_str_eq(out, "\xef\xbf\xbd\xef\xbf\xbd");
	les_label_escape("\xed\xa0\x80", out, sizeof(out));
	ck_assert_str_eq(out, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	les_label_escape("\xe2\x82", out, sizeof(out)); /* truncated sequence */
	ck_assert_str_eq(out, "\xef\xbf\xbd\xef\xbf\xbd");
	/* A short buffer never cuts an escape or a character. */
	ck_assert_uint_eq(les_label_escape("ab\"", out, 4), 2);
	ck_assert_str_eq(out, "ab");
	ck_assert_uint_eq(les_label_escape("a\xc3\xa9", out, 3), 1);
	ck_assert_str_eq(out, "a");
	ck_assert_uint_eq(les_label_escape("", out, sizeof(out)), 0);
}
END_TEST

START_TEST(test_parse_listen)
{
	char host[64];
	uint16_t port;

	ck_assert_int_eq(les_prom_parse_listen(":9108", host, sizeof(host), &port), 0);
	ck_assert_str_eq(host, "");
	ck_assert_uint_eq(port, 9108);
	ck_assert_int_eq(les_prom_parse_listen("127.0.0.1:9108", host, sizeof(host), &port), 0);
	ck_assert_str_eq(host, "127.0.0.1");
	ck_assert_int_eq(les_prom_parse_listen("[::1]:80", host, sizeof(host), &port), 0);
	ck_assert_str_eq(host, "::1");
	ck_assert_uint_eq(port, 80);
	ck_assert_int_eq(les_prom_parse_listen("localhost:0", host, sizeof(host), &port), 0);
	ck_assert_uint_eq(port, 0);
	ck_assert_int_eq(les_prom_parse_listen("9108", host, sizeof(host), &port), -EINVAL);
	ck_assert_int_eq(les_prom_parse_listen("::1:9108", host, sizeof(host), &port), -EINVAL);
	ck_assert_int_eq(les_prom_parse_listen("h:65536", host, sizeof(host), &port), -EINVAL);
	ck_assert_int_eq(les_prom_parse_listen("h:", host, sizeof(host), &port), -EINVAL);
	ck_assert_int_eq(les_prom_parse_listen("h:9x", host, sizeof(host), &port), -EINVAL);
	ck_assert_int_eq(les_prom_parse_listen("[::1]9108", host, sizeof(host), &port), -EINVAL);
}
END_TEST

/*
 * Joined requests: one histogram per layer of (job, target, client NID),
 * with the same buckets; the family only where some came.
 */
START_TEST(test_join_layers)
{
	struct les_prom *p = make(true, false, 0);
	struct les_join_view v = {.job = "dd.0", .target = "lustre-OST0000", .client_nid = "0@lo"};
	struct les_event ev = {.type = "rpc_join", .kind = LES_REC_KIND_MAX, .join = &v};
	const char *fam = "lustre_ebpf_stream_client_request_layer_duration_seconds";
	const char *keys = "lustre_jobid=\"dd.0\",target=\"lustre-OST0000\",client_nid=\"0@lo\"";
	char line[512];
	char *text;

	text = render(p);
	ck_assert_ptr_null(strstr(text, fam));
	free(text);
	for (int l = 0; l < LES_JOIN_LAYER_MAX; l++)
		v.ns[l] = 2000000;	/* 2 ms: the 0.0025 bucket */
	v.ns[LES_JOIN_SRV_NRS] = 40000; /* 40 us: 5e-05 */
	v.ns[LES_JOIN_NETWORK] = -5;	/* counted as 0 */
	les_prom_add_join(p, &ev);
	v.ns[LES_JOIN_SRV_NRS] = 300000; /* 0.3 ms: 0.001 */
	les_prom_add_join(p, &ev);
	text = render(p);
	snprintf(line, sizeof(line), "%s_count{%s,layer=\"server_nrs_ns\"} 2", fam, keys);
	assert_has_line(text, line);
	snprintf(line, sizeof(line), "%s_sum{%s,layer=\"server_nrs_ns\"} 0.000340000", fam, keys);
	assert_has_line(text, line);
	snprintf(line, sizeof(line), "%s_bucket{%s,layer=\"server_nrs_ns\",le=\"5e-05\"} 1", fam,
		 keys);
	assert_has_line(text, line);
	snprintf(line, sizeof(line), "%s_bucket{%s,layer=\"server_nrs_ns\",le=\"0.001\"} 2", fam,
		 keys);
	assert_has_line(text, line);
	snprintf(line, sizeof(line), "%s_sum{%s,layer=\"server_handle_ns\"} 0.004000000", fam,
		 keys);
	assert_has_line(text, line);
	snprintf(line, sizeof(line), "%s_sum{%s,layer=\"network_ns\"} 0.000000000", fam, keys);
	assert_has_line(text, line);
	snprintf(line, sizeof(line), "%s_bucket{%s,layer=\"network_ns\",le=\"1e-05\"} 2", fam,
		 keys);
	assert_has_line(text, line);
	free(text);
	ck_assert_uint_eq(les_prom_series(p), LES_JOIN_LAYER_MAX);
	les_prom_free(p);
}
END_TEST

START_TEST(test_render_families)
{
	struct les_prom *p = make(true, false, 0);
	struct les_event ev = access_ev("write", "dd", 3000, 0);
	struct les_event rpc = {.kind = LES_REC_RPC,
				.type = "rpc",
				.fs_type = "fuse",
				.op = "write",
				.latency_ns = 2 * NS,
				.uid = 1000};
	struct les_event rpc_ev = {.kind = LES_REC_RPC_EVENT,
				   .type = "rpc_event",
				   .fs_type = "nfs",
				   .event = "resend",
				   .event_id = LES_EV_RESEND,
				   .op = "resend"};
	char *text;

	les_prom_add(p, &ev);
	les_prom_add(p, &ev);
	ev.process = "cp"; /* another counter series, the same histogram series */
	ev.err = EIO;
	ev.bytes = 0;
	ev.latency_ns = 20 * NS;
	les_prom_add(p, &ev);
	les_prom_add(p, &rpc);
	les_prom_add(p, &rpc_ev);
	text = render(p);
	assert_has_line(text, "# TYPE lustre_client_access_operations_total counter");
	assert_has_line(
		text, "lustre_ebpf_stream_client_access_operations_total{fs_type=\"fuse\",fs=\"les-"
		      "testfs\",mount=\"/mnt/t\",access_intent=\"data_write\",op=\"write\","
		      "uid=\"1000\",username=\"alice\",process=\"dd\",actor_type=\"user\","
		      "slurm_job_id=\"42\"} 2");
	assert_has_line(
		text,
		"lustre_ebpf_stream_client_data_bytes_total{fs_type=\"fuse\",fs=\"les-testfs\","
		"mount=\"/mnt/t\",access_intent=\"data_write\",op=\"write\",uid="
		"\"1000\",username=\"alice\",process=\"dd\",actor_type=\"user\","
		"slurm_job_id=\"42\"} 8192");
	assert_has_line(
		text, "lustre_ebpf_stream_client_operation_errors_total{fs_type=\"fuse\",fs=\"les-"
		      "testfs\",mount=\"/mnt/t\",access_intent=\"data_write\",op=\"write\","
		      "uid=\"1000\",username=\"alice\",process=\"cp\",actor_type=\"user\","
		      "slurm_job_id=\"42\",errno_class=\"io\"} 1");
	/* Histograms drop process by default: dd and cp share one series. */
	assert_has_line(text, "# TYPE lustre_client_access_duration_seconds histogram");
	assert_has_line(
		text,
		"lustre_ebpf_stream_client_access_duration_seconds_bucket{fs_type=\"fuse\",fs="
		"\"les-testfs\",mount=\"/mnt/t\",access_intent=\"data_write\",op="
		"\"write\",uid=\"1000\",username=\"alice\",actor_type=\"user\","
		"slurm_job_id=\"42\",le=\"1e-05\"} 2");
	assert_has_line(
		text,
		"lustre_ebpf_stream_client_access_duration_seconds_bucket{fs_type=\"fuse\",fs="
		"\"les-testfs\",mount=\"/mnt/t\",access_intent=\"data_write\",op="
		"\"write\",uid=\"1000\",username=\"alice\",actor_type=\"user\","
		"slurm_job_id=\"42\",le=\"10\"} 2");
	assert_has_line(
		text,
		"lustre_ebpf_stream_client_access_duration_seconds_bucket{fs_type=\"fuse\",fs="
		"\"les-testfs\",mount=\"/mnt/t\",access_intent=\"data_write\",op="
		"\"write\",uid=\"1000\",username=\"alice\",actor_type=\"user\","
		"slurm_job_id=\"42\",le=\"+Inf\"} 3");
	assert_has_line(text,
			"lustre_ebpf_stream_client_access_duration_seconds_sum{fs_type=\"fuse\",fs="
			"\"les-testfs\",mount=\"/mnt/t\",access_intent=\"data_write\",op="
			"\"write\",uid=\"1000\",username=\"alice\",actor_type=\"user\","
			"slurm_job_id=\"42\"} 20.000006000");
	assert_has_line(
		text, "lustre_ebpf_stream_client_access_duration_seconds_count{fs_type=\"fuse\",fs="
		      "\"les-testfs\",mount=\"/mnt/t\",access_intent=\"data_write\",op="
		      "\"write\",uid=\"1000\",username=\"alice\",actor_type=\"user\","
		      "slurm_job_id=\"42\"} 3");
	/* NULL strings are empty labels; a 2 s wait falls in le="2.5". */
	assert_has_line(
		text,
		"lustre_ebpf_stream_client_rpc_wait_operations_total{fs_type=\"fuse\",fs=\"\","
		"mount=\"\",op=\"write\",uid=\"1000\",username=\"\",process=\"\","
		"actor_type=\"\",slurm_job_id=\"\"} 1");
	assert_has_line(
		text, "lustre_ebpf_stream_client_rpc_wait_duration_seconds_bucket{fs_type=\"fuse\","
		      "fs=\"\",mount=\"\",op=\"write\",uid=\"1000\",username=\"\","
		      "actor_type=\"\",slurm_job_id=\"\",le=\"1\"} 0");
	assert_has_line(
		text, "lustre_ebpf_stream_client_rpc_wait_duration_seconds_bucket{fs_type=\"fuse\","
		      "fs=\"\",mount=\"\",op=\"write\",uid=\"1000\",username=\"\","
		      "actor_type=\"\",slurm_job_id=\"\",le=\"2.5\"} 1");
	assert_has_line(
		text,
		"lustre_ebpf_stream_client_rpc_errors_total{fs_type=\"nfs\",fs=\"\",mount=\"\","
		"uid=\"0\",username=\"\",process=\"\",actor_type=\"\","
		"slurm_job_id=\"\",event=\"resend\"} 1");
	assert_has_line(text, "lustre_ebpf_stream_prometheus_series 6");
	free(text);
	les_prom_free(p);
}
END_TEST

START_TEST(test_cardinality_flags)
{
	struct les_prom *p = make(false, true, 0);
	struct les_event ev = access_ev("write", "dd\"x", 3000, 0);
	char *text;

	les_prom_add(p, &ev);
	text = render(p);
	/* No uid/username; process kept on the histogram and escaped. */
	assert_has_line(
		text, "lustre_ebpf_stream_client_access_operations_total{fs_type=\"fuse\",fs=\"les-"
		      "testfs\",mount=\"/mnt/t\",access_intent=\"data_write\",op=\"write\","
		      "process=\"dd\\\"x\",actor_type=\"user\",slurm_job_id=\"42\"} 1");
	assert_has_line(
		text, "lustre_ebpf_stream_client_access_duration_seconds_count{fs_type=\"fuse\",fs="
		      "\"les-testfs\",mount=\"/mnt/t\",access_intent=\"data_write\",op="
		      "\"write\",process=\"dd\\\"x\",actor_type=\"user\",slurm_job_id=\"42\"} "
		      "1");
	ck_assert_ptr_null(strstr(text, "uid="));
	free(text);
	les_prom_free(p);
}
END_TEST

START_TEST(test_series_ttl)
{
	struct les_prom *p = make(true, false, 600 * NS);
	struct les_event ev = access_ev("write", "dd", 3000, 0);
	char *text;

	les_prom_tick(p, 1000 * NS);
	les_prom_add(p, &ev); /* job 42: counter + histogram series */
	ck_assert_uint_eq(les_prom_series(p), 2);
	les_prom_tick(p, 1300 * NS);
	ev.job_id = "43";
	les_prom_add(p, &ev);
	ck_assert_uint_eq(les_prom_series(p), 4);
	les_prom_tick(p, 1600 * NS - 1); /* job 42 is 1 ns short of its TTL */
	ck_assert_uint_eq(les_prom_series(p), 4);
	les_prom_tick(p, 1600 * NS);
	ck_assert_uint_eq(les_prom_series(p), 2);
	ck_assert_uint_eq(les_prom_expired(p), 2);
	text = render(p);
	ck_assert_ptr_null(strstr(text, "slurm_job_id=\"42\""));
	ck_assert_ptr_nonnull(strstr(text, "slurm_job_id=\"43\""));
	free(text);
	/* An update keeps a series alive; a series that comes back starts from 0. */
	les_prom_tick(p, 1800 * NS);
	les_prom_add(p, &ev);
	les_prom_tick(p, 2100 * NS);
	ck_assert_uint_eq(les_prom_series(p), 2);
	les_prom_tick(p, 2400 * NS);
	ck_assert_uint_eq(les_prom_series(p), 0);
	les_prom_add(p, &ev);
	text = render(p);
	ck_assert_ptr_nonnull(strstr(text, "slurm_job_id=\"43\"} 1\n"));
	free(text);
	les_prom_free(p);
}
END_TEST

START_TEST(test_many_series)
{
	struct les_prom *p = make(true, false, 0);
	char proc[32];

	/* The table grows past its first size; every series stays reachable. */
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 5000; i++) {
			struct les_event ev = access_ev("read", proc, 100, 0);

			snprintf(proc, sizeof(proc), "p%d", i);
			les_prom_add(p, &ev);
		}
	ck_assert_uint_eq(les_prom_series(p), 5001); /* 5000 counters, 1 histogram */
	les_prom_free(p);
}
END_TEST

/* n jobs, each with its access counter and histogram: 2 n series. */
static void add_jobs(struct les_prom *p, int n)
{
	char job[32];

	for (int i = 0; i < n; i++) {
		struct les_event ev = access_ev("read", "dd", 100, 0);

		snprintf(job, sizeof(job), "%d", i);
		ev.job_id = job;
		les_prom_add(p, &ev);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct render_job {
	struct les_prom *p;
	atomic_int state; /* 1 rendering, 2 done */
	double start, seconds;
	size_t len;
};

static void *render_thread(void *arg)
{
	struct render_job *r = arg;
	char *text;

	r->start = now_s();
	atomic_store(&r->state, 1);
	text = les_prom_render(r->p, &r->len);
	r->seconds = now_s() - r->start;
	atomic_store(&r->state, 2);
	free(text);
	return NULL;
}

#define MS_BINS 60000

/*
 * A scrape of a big store does not hold the record path: while one
 * renders, the updater (the consumer's thread) keeps counting records,
 * in the second half of the render as in the first. Rendered under the
 * store's lock, the updater gets in only before the render takes the
 * lock, and once after it lets go.
 */
START_TEST(test_render_unblocked)
{
	struct les_prom *p = make(true, false, 0);
	struct render_job r = {.p = p};
	struct les_event ev = access_ev("read", "dd", 100, 0);
	unsigned int *done_at_ms = calloc(MS_BINS, sizeof(*done_at_ms));
	unsigned long late = 0, all = 0;
	double worst = 0;
	pthread_t th;

	ck_assert_ptr_nonnull(done_at_ms);
	add_jobs(p, 30000);
	ck_assert_uint_eq(les_prom_series(p), 60000);
	ev.job_id = "7";
	ck_assert_int_eq(pthread_create(&th, NULL, render_thread, &r), 0);
	while (atomic_load(&r.state) == 0)
		;
	while (atomic_load(&r.state) == 1) {
		double t0 = now_s(), t1;
		size_t ms;

		les_prom_add(p, &ev);
		t1 = now_s();
		ms = (size_t)((t1 - r.start) * 1000);
		done_at_ms[ms < MS_BINS ? ms : MS_BINS - 1]++;
		worst = t1 - t0 > worst ? t1 - t0 : worst;
		/* The consumer has other work between records: the render gets the lock. */
		usleep(100);
	}
	pthread_join(th, NULL);
	/* Updates done in the second half of the render, its last ms left out. */
	for (size_t ms = (size_t)(r.seconds * 500); ms + 1 < (size_t)(r.seconds * 1000); ms++)
		late += done_at_ms[ms];
	for (size_t ms = 0; ms < MS_BINS; ms++)
		all += done_at_ms[ms];
	fprintf(stderr,
		"test_render_unblocked: 60000 series, %zu bytes rendered in %.3f s; %lu updates "
		"meanwhile, %lu in its second half, the slowest %.3f s\n",
		r.len, r.seconds, all, late, worst);
	ck_assert_uint_gt(r.len, 0);
	ck_assert_uint_ge(late, 50);
	free(done_at_ms);
	les_prom_free(p);
}
END_TEST

/* The count of lines that start with prefix. */
static size_t count_lines(const char *text, const char *prefix)
{
	size_t n = 0, len = strlen(prefix);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += strncmp(p, prefix, len) == 0;
	return n;
}

/*
 * The body cap: a scrape renders the oldest series that fit and counts
 * the rest, the same ones every time; the body never passes the cap.
 */
START_TEST(test_body_cap)
{
	struct les_prom_config cfg = {.path = "/metrics", .max_body = 128 * 1024};
	struct les_prom *p = les_prom_new(&cfg);
	char line[128];
	size_t len, shown, left;
	char *text;

	ck_assert_ptr_nonnull(p);
	add_jobs(p, 2000);
	ck_assert_uint_eq(les_prom_series(p), 4000);
	for (int scrape = 1; scrape <= 2; scrape++) {
		text = les_prom_render(p, &len);
		ck_assert_ptr_nonnull(text);
		ck_assert_uint_le(len, cfg.max_body);
		shown = count_lines(text, "lustre_ebpf_stream_client_access_operations_total{") +
			count_lines(text,
				    "lustre_ebpf_stream_client_access_duration_seconds_count{");
		left = 4000 - shown;
		ck_assert_uint_gt(shown, 10);
		ck_assert_uint_gt(left, 0);
		snprintf(line, sizeof(line), "lustre_ebpf_stream_prometheus_series_unrendered %zu",
			 left);
		assert_has_line(text, line);
		snprintf(line, sizeof(line), "lustre_ebpf_stream_prometheus_scrapes_cut_total %d",
			 scrape);
		assert_has_line(text, line);
		assert_has_line(text, "lustre_ebpf_stream_prometheus_series 4000");
		/* The oldest are shown, the newest wait. */
		ck_assert_ptr_nonnull(strstr(text, "slurm_job_id=\"0\"}"));
		ck_assert_ptr_null(strstr(text, "slurm_job_id=\"1999\"}"));
		free(text);
	}
	les_prom_free(p);
}
END_TEST

/* Under the cap, nothing is left out and no scrape counts as cut. */
START_TEST(test_body_cap_default)
{
	struct les_prom *p = make(true, false, 0);
	char *text;

	add_jobs(p, 2000);
	text = render(p);
	assert_has_line(text, "lustre_ebpf_stream_prometheus_series_unrendered 0");
	assert_has_line(text, "lustre_ebpf_stream_prometheus_scrapes_cut_total 0");
	ck_assert_uint_eq(count_lines(text, "lustre_ebpf_stream_client_access_operations_total{"),
			  2000);
	free(text);
	les_prom_free(p);
}
END_TEST

/* GET path from 127.0.0.1:port; returns the whole response (malloc'd). */
static char *http_get(uint16_t port, const char *path)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	size_t len = 0, cap = 1 << 20;
	char *buf = malloc(cap), req[256];
	struct timeval tmo = {.tv_sec = 5};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ssize_t n;

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_ge(fd, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* A refused or starved request fails the test rather than hanging it. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", path);
	ck_assert_int_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	while ((n = read(fd, buf + len, cap - len - 1)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fd);
	return buf;
}

START_TEST(test_http_server)
{
	struct les_prom *p = make(true, false, 0);
	struct les_event ev = access_ev("write", "dd", 3000, 0);
	char err[256], *resp;

	ck_assert_int_eq(les_prom_start(p, err, sizeof(err)), 0);
	ck_assert_uint_ne(les_prom_port(p), 0);
	les_prom_add(p, &ev);
	resp = http_get(les_prom_port(p), "/metrics");
	ck_assert_msg(!strncmp(resp, "HTTP/1.", 7) && strstr(resp, " 200 "), "%s", resp);
	ck_assert_ptr_nonnull(strstr(resp, "text/plain; version=0.0.4"));
	ck_assert_ptr_nonnull(strstr(resp, "\nlustre_ebpf_stream_client_access_operations_total{"));
	free(resp);
	resp = http_get(les_prom_port(p), "/nothing");
	ck_assert_ptr_nonnull(strstr(resp, " 404 "));
	free(resp);
	resp = http_get(les_prom_port(p), "/healthz"); /* no consumer update yet */
	ck_assert_msg(strstr(resp, " 503 ") && strstr(resp, "application/json") &&
			      strstr(resp, "{\"status\":\"starting\"}"),
		      "%s", resp);
	free(resp);
	les_prom_free(p);
}
END_TEST

/*
 * Slowloris from one address (127.0.0.2): every connection it can open
 * sends half a request and waits. A scrape from another address (127.0.0.1)
 * is still answered: one client holds at most its share of connections.
 */
START_TEST(test_http_slow_client)
{
	struct les_prom *p = make(true, false, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct sockaddr_in from = {.sin_family = AF_INET};
	struct les_event ev = access_ev("write", "dd", 3000, 0);
	int fds[LES_PROM_CONNECTIONS];
	char err[256], *resp;
	size_t n = 0;

	ck_assert_int_eq(les_prom_start(p, err, sizeof(err)), 0);
	les_prom_add(p, &ev);
	sa.sin_port = htons(les_prom_port(p));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	from.sin_addr.s_addr = htonl(INADDR_LOOPBACK + 1);
	for (; n < LES_PROM_CONNECTIONS; n++) {
		static const char half[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n";

		fds[n] = socket(AF_INET, SOCK_STREAM, 0);
		ck_assert_int_ge(fds[n], 0);
		ck_assert_int_eq(bind(fds[n], (struct sockaddr *)&from, sizeof(from)), 0);
		ck_assert_int_eq(connect(fds[n], (struct sockaddr *)&sa, sizeof(sa)), 0);
		ck_assert_int_eq(write(fds[n], half, sizeof(half) - 1), (ssize_t)sizeof(half) - 1);
	}
	usleep(200000); /* the server has taken what it takes of them */
	resp = http_get(les_prom_port(p), "/metrics");
	ck_assert_msg(strstr(resp, " 200 ") &&
			      strstr(resp, "\nlustre_ebpf_stream_client_access_operations_total{"),
		      "a scrape beside %zu half requests: '%.200s'", n, resp);
	free(resp);
	while (n)
		close(fds[--n]);
	les_prom_free(p);
}
END_TEST

/* The DaemonSet's "[$(POD_IP)]:9108": brackets around an IPv4 address too. */
START_TEST(test_http_bracketed_ipv4)
{
	struct les_prom_config cfg = {.listen = "[127.0.0.1]:0", .path = "/metrics"};
	struct les_prom *p = les_prom_new(&cfg);
	char err[256], *resp;

	ck_assert_int_eq(les_prom_start(p, err, sizeof(err)), 0);
	resp = http_get(les_prom_port(p), "/metrics");
	ck_assert_msg(strstr(resp, " 200 "), "%s", resp);
	free(resp);
	les_prom_free(p);
}
END_TEST

START_TEST(test_http_bad_address)
{
	struct les_prom_config cfg = {.listen = "203.0.113.7:0", .path = "/metrics"};
	struct les_prom *p = les_prom_new(&cfg);
	char err[256];

	/* Not an address of this machine: bind fails, with a message. */
	ck_assert_int_lt(les_prom_start(p, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "203.0.113.7:0"));
	les_prom_free(p);
}
END_TEST

static Suite *prom_suite(void)
{
	Suite *s = suite_create("prom");
	TCase *tc;

	tc = tcase_create("text");
	tcase_add_test(tc, test_escape_label);
	tcase_add_test(tc, test_table_counters);
	tcase_add_test(tc, test_health);
	tcase_add_test(tc, test_parse_listen);
	tcase_add_test(tc, test_render_families);
	tcase_add_test(tc, test_join_layers);
	tcase_add_test(tc, test_requests_in_flight);
	tcase_add_test(tc, test_rpc_wait_once);
	tcase_add_test(tc, test_exporter_families);
	tcase_add_test(tc, test_cardinality_flags);
	suite_add_tcase(s, tc);

	tc = tcase_create("store");
	tcase_add_test(tc, test_series_ttl);
	tcase_add_test(tc, test_many_series);
	tcase_add_test(tc, test_body_cap);
	tcase_add_test(tc, test_body_cap_default);
	tcase_add_test(tc, test_render_unblocked);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);

	tc = tcase_create("http");
	tcase_add_test(tc, test_http_server);
	tcase_add_test(tc, test_http_slow_client);
	tcase_add_test(tc, test_http_bracketed_ipv4);
	tcase_add_test(tc, test_http_bad_address);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(prom_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
