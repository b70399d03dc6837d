// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Kafka sink against librdkafka's in-process mock cluster: keys,
 * configuration errors, delivery, exact drop counting on a full queue,
 * outages and broker errors. These add fault injection to the end-to-end
 * tests against a real broker (test/e2e/3*_kafka_*.sh); they replace none.
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sink/sink_kafka.h" /* before rdkafka_mock.h: it brings rdkafka.h */
#include <librdkafka/rdkafka_mock.h>

#define TOPIC	     "les-unit"
#define NS_PER_SEC   1000000000ULL
#define API_PRODUCE  0 /* Kafka protocol ApiKey of ProduceRequest */
#define HOST	     "node17"
/* Every message says which program and record schema wrote it. */
#define STR_(x)		#x
#define STR(x)		STR_(x)
#define VERSION_HEADERS "les_version=" LES_VERSION ",schema_version=" STR(LES_SCHEMA_VERSION)
#define CONSUME_SECS 10

static struct les_kafka_config opts;
/*
 * A standalone mock cluster per test, its topic created before the sink
 * exists: created by the sink's own metadata request it would get the
 * mock's default partition count, and the order checks need one.
 */
static rd_kafka_t *mock_rk;
static rd_kafka_mock_cluster_t *mock;

static void mock_start(void)
{
	char err[512];

	mock_rk = rd_kafka_new(RD_KAFKA_PRODUCER, rd_kafka_conf_new(), err, sizeof(err));
	ck_assert_msg(mock_rk != NULL, "mock handle: %s", err);
	mock = rd_kafka_mock_cluster_new(mock_rk, 1);
	ck_assert_ptr_nonnull(mock);
	ck_assert_int_eq(rd_kafka_mock_topic_create(mock, TOPIC, 1, 1), 0);
}

static void mock_stop(void)
{
	if (mock)
		rd_kafka_mock_cluster_destroy(mock);
	if (mock_rk)
		rd_kafka_destroy(mock_rk);
	mock = NULL;
	mock_rk = NULL;
}

/* Options for a producer on a one-broker mock cluster, plus extra -X. */
static void mock_options(const char *const *extra, size_t n_extra)
{
	memset(&opts, 0, sizeof(opts));
	opts.queue_bytes = 256ULL << 20; /* --kafka-queue-size's default */
	mock_stop();
	mock_start();
	opts.brokers = rd_kafka_mock_cluster_bootstraps(mock);
	opts.topic = TOPIC;
	opts.flush_timeout_ns = 10 * NS_PER_SEC;
	opts.props[opts.n_props++] = "linger.ms=5";
	for (size_t i = 0; i < n_extra; i++)
		opts.props[opts.n_props++] = extra[i];
}

static struct les_sink_kafka *open_sink(void)
{
	struct les_sink_kafka *k = NULL;
	char err[512] = "";
	int ret = les_sink_kafka_open(&k, &opts, err, sizeof(err));

	ck_assert_msg(ret == 0 && k, "open: %d %s", ret, err);
	return k;
}

static rd_kafka_mock_cluster_t *mock_of(struct les_sink_kafka *k)
{
	ck_assert_ptr_nonnull(k);
	ck_assert_ptr_nonnull(mock);
	return mock;
}

/* An access record line number i, with its '\n', as the consumer makes it. */
static void make_line(char *buf, size_t size, int i, struct les_event *ev)
{
	int n = snprintf(buf, size, "{\"type\":\"access\",\"seq\":%d,\"uid\":%d}\n", i,
			 1000 + i % 3);

	memset(ev, 0, sizeof(*ev));
	ev->kind = LES_REC_ACCESS;
	ev->type = "access";
	ev->host = HOST;
	ev->fs_type = "lustre";
	ev->uid = 1000 + i % 3;
	ev->job_id = i % 2 ? "job-42" : NULL;
	ev->line = buf;
	ev->line_len = (size_t)n;
}

static void produce_lines(struct les_sink_kafka *k, int first, int n)
{
	char buf[256];
	struct les_event ev;

	for (int i = first; i < first + n; i++) {
		make_line(buf, sizeof(buf), i, &ev);
		ck_assert_int_eq(les_sink_kafka_line(k, &ev), 0);
	}
}

static struct les_kafka_counters counters(struct les_sink_kafka *k)
{
	struct les_kafka_counters c;

	les_sink_kafka_counters(k, &c);
	return c;
}

/* --- consuming back from the mock cluster ----------------------------------- */

#define MAX_CONSUMED 512

struct consumed {
	int n;
	char value[MAX_CONSUMED][128];
	char key[MAX_CONSUMED][32];
	char headers[MAX_CONSUMED][128];
};

static void header_text(const rd_kafka_message_t *m, char *out, size_t size)
{
	rd_kafka_headers_t *h = NULL;
	const char *name;
	const void *val;
	size_t len, used = 0;

	out[0] = '\0';
	if (rd_kafka_message_headers(m, &h))
		return;
	for (size_t i = 0; !rd_kafka_header_get_all(h, i, &name, &val, &len); i++)
		used += (size_t)snprintf(out + used, size - used, "%s%s=%.*s", i ? "," : "", name,
					 (int)len, (const char *)val);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void keep(struct consumed *got, const rd_kafka_message_t *m)
{
	snprintf(got->value[got->n], sizeof(got->value[0]), "%.*s", (int)m->len,
		 (const char *)m->payload);
	snprintf(got->key[got->n], sizeof(got->key[0]), "%.*s", (int)m->key_len,
		 m->key ? (const char *)m->key : "");
	header_text(m, got->headers[got->n], sizeof(got->headers[0]));
	got->n++;
}

static void consume_all(rd_kafka_mock_cluster_t *mc, int want, struct consumed *got)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(1);
	char err[256];
	rd_kafka_t *rk;

	memset(got, 0, sizeof(*got));
	ck_assert_int_eq(rd_kafka_conf_set(conf, "bootstrap.servers",
					   rd_kafka_mock_cluster_bootstraps(mc), err, sizeof(err)),
			 RD_KAFKA_CONF_OK);
	/* assign() needs a group, though nothing is committed to it. */
	ck_assert_int_eq(rd_kafka_conf_set(conf, "group.id", "les-unit", err, sizeof(err)),
			 RD_KAFKA_CONF_OK);
	ck_assert_int_eq(rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof(err)),
			 RD_KAFKA_CONF_OK);
	rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
	ck_assert_msg(rk, "consumer: %s", err);
	rd_kafka_topic_partition_list_add(parts, TOPIC, 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
	ck_assert_int_eq(rd_kafka_assign(rk, parts), 0);
	/* Until want messages came and then half a second of quiet: more are duplicates. */
	for (uint64_t now = mono_ms(), end = now + CONSUME_SECS * 1000, quiet = 0; now < end;
	     now = mono_ms()) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);

		if (m && !m->err && got->n < MAX_CONSUMED)
			keep(got, m);
		if (m && !m->err)
			quiet = mono_ms() + 500;
		if (m)
			rd_kafka_message_destroy(m);
		if (got->n >= want && now >= quiet)
			break;
	}
	rd_kafka_topic_partition_list_destroy(parts);
	rd_kafka_consumer_close(rk);
	rd_kafka_destroy(rk);
}

/* --- keys -------------------------------------------------------------------- */

START_TEST(test_key_modes)
{
	struct les_event rec = { .kind = LES_REC_RPC, .host = HOST, .uid = 4242 };
	struct les_event stats = { .type = "stats", .host = HOST };
	char buf[LES_KAFKA_KEY_BUF];
	const char *key;
	size_t len;

	key = les_kafka_key(LES_KAFKA_KEY_JOB_ID, &rec, buf, &len);
	ck_assert_str_eq(key, HOST); /* no job: the host */
	ck_assert_uint_eq(len, strlen(HOST));
	rec.job_id = "";
	ck_assert_str_eq(les_kafka_key(LES_KAFKA_KEY_JOB_ID, &rec, buf, &len), HOST);
	rec.job_id = "slurm-123";
	ck_assert_str_eq(les_kafka_key(LES_KAFKA_KEY_JOB_ID, &rec, buf, &len), "slurm-123");
	ck_assert_uint_eq(len, 9);
	ck_assert_str_eq(les_kafka_key(LES_KAFKA_KEY_UID, &rec, buf, &len), "4242");
	ck_assert_uint_eq(len, 4);
	ck_assert_str_eq(les_kafka_key(LES_KAFKA_KEY_HOST, &rec, buf, &len), HOST);
	ck_assert_ptr_null(les_kafka_key(LES_KAFKA_KEY_NONE, &rec, buf, &len));
	ck_assert_uint_eq(len, 0);
	/* A stats line has no uid: keyed by host rather than by a made-up 0. */
	ck_assert_str_eq(les_kafka_key(LES_KAFKA_KEY_UID, &stats, buf, &len), HOST);
	rec.uid = UINT32_MAX;
	ck_assert_str_eq(les_kafka_key(LES_KAFKA_KEY_UID, &rec, buf, &len), "4294967295");
}
END_TEST

/* --- configuration ------------------------------------------------------------ */

static int open_with(const char *prop, char *err, size_t size)
{
	struct les_sink_kafka *k = NULL;
	int ret;

	mock_options(&prop, 1);
	ret = les_sink_kafka_open(&k, &opts, err, size);
	ck_assert_ptr_null(k);
	return ret;
}

START_TEST(test_config_errors)
{
	struct les_sink_kafka *k = (void *)1;
	char err[512];

	ck_assert_int_eq(open_with("no.such.property=1", err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "no.such.property"));
	ck_assert_int_eq(open_with("topic.no.such=1", err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "no.such"));
	ck_assert_int_eq(open_with("linger.ms=-5", err, sizeof(err)), -EINVAL);
	/* Valid alone, refused together with our idempotence default. */
	ck_assert_int_eq(open_with("acks=1", err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "idempotence"));
	ck_assert_int_eq(open_with("=1", err, sizeof(err)), -EINVAL);

	/* No Kafka asked for: no sink, no error. */
	memset(&opts, 0, sizeof(opts));
	ck_assert_int_eq(les_sink_kafka_open(&k, &opts, err, sizeof(err)), 0);
	ck_assert_ptr_null(k);
	/* NULL-safe, as main relies on. */
	les_sink_kafka_poll(NULL);
	ck_assert_uint_eq(les_sink_kafka_flush(NULL, 1), 0);
	ck_assert_uint_eq(les_sink_kafka_close(NULL), 0);
}
END_TEST

START_TEST(test_topic_property_accepted)
{
	static const char *const extra[] = { "topic.acks=all", "compression.type=zstd",
					     "topic.message.timeout.ms=60000" };
	struct les_sink_kafka *k;

	mock_options(extra, 3);
	k = open_sink();
	ck_assert_uint_eq(les_sink_kafka_close(k), 0);
}
END_TEST

/* --- delivery ------------------------------------------------------------------ */

START_TEST(test_delivers_lines_verbatim)
{
	struct les_sink_kafka *k;
	rd_kafka_mock_cluster_t *mc;
	struct consumed *got = calloc(1, sizeof(*got));
	struct les_kafka_counters c;
	char want[256];
	struct les_event ev;

	mock_options(NULL, 0);
	k = open_sink();
	mc = mock_of(k);
	produce_lines(k, 0, 100);
	ck_assert_uint_eq(les_sink_kafka_flush(k, 10 * NS_PER_SEC), 0);
	c = counters(k);
	ck_assert_uint_eq(c.produced, 100);
	ck_assert_uint_eq(c.delivered, 100);
	ck_assert_uint_eq(c.failed + c.dropped + c.pending, 0);

	consume_all(mc, 100, got);
	ck_assert_int_eq(got->n, 100);
	for (int i = 0; i < 100; i++) {
		make_line(want, sizeof(want), i, &ev);
		want[ev.line_len - 1] = '\0'; /* the value has no '\n' */
		ck_assert_str_eq(got->value[i], want);
		ck_assert_str_eq(got->key[i], i % 2 ? "job-42" : HOST);
		ck_assert_str_eq(got->headers[i], VERSION_HEADERS ",type=access,host=" HOST
						  ",fs_type=lustre");
	}
	ck_assert_uint_eq(les_sink_kafka_close(k), 0);
	free(got);
}
END_TEST

START_TEST(test_stats_line_headers_without_fs_type)
{
	static const char line[] = "{\"type\":\"stats\",\"final\":true}\n";
	struct les_event ev = { .type = "stats", .host = HOST, .line = line };
	struct consumed *got = calloc(1, sizeof(*got));
	rd_kafka_mock_cluster_t *mc;
	struct les_sink_kafka *k;

	mock_options(NULL, 0);
	opts.key = LES_KAFKA_KEY_NONE;
	k = open_sink();
	mc = mock_of(k);
	ev.line_len = strlen(line);
	les_sink_kafka_line(k, &ev);
	les_sink_kafka_flush(k, 10 * NS_PER_SEC);
	consume_all(mc, 1, got);
	ck_assert_int_eq(got->n, 1);
	ck_assert_str_eq(got->value[0], "{\"type\":\"stats\",\"final\":true}");
	ck_assert_str_eq(got->headers[0], VERSION_HEADERS ",type=stats,host=" HOST);
	ck_assert_str_eq(got->key[0], "");
	ck_assert_uint_eq(les_sink_kafka_close(k), 0);
	free(got);
}
END_TEST

/* --- faults ------------------------------------------------------------------------ */

START_TEST(test_full_queue_drops_exactly)
{
	static const char *const extra[] = { "queue.buffering.max.messages=10" };
	struct les_sink_kafka *k;
	rd_kafka_mock_cluster_t *mc;
	struct les_kafka_counters c;
	struct consumed *got = calloc(1, sizeof(*got));

	mock_options(extra, 1);
	k = open_sink();
	mc = mock_of(k);
	rd_kafka_mock_broker_set_down(mc, 1);
	produce_lines(k, 0, 50); /* must return at once, never wait for room */
	c = counters(k);
	ck_assert_uint_eq(c.produced, 10);
	ck_assert_uint_eq(c.dropped, 40);
	ck_assert_uint_eq(c.failed, 0);

	rd_kafka_mock_broker_set_up(mc, 1);
	ck_assert_uint_eq(les_sink_kafka_flush(k, 15 * NS_PER_SEC), 0);
	c = counters(k);
	ck_assert_uint_eq(c.delivered, 10);
	consume_all(mc, 10, got);
	ck_assert_int_eq(got->n, 10);
	/* The first ten were queued and survive; the rest were dropped. */
	ck_assert_str_eq(got->value[9], "{\"type\":\"access\",\"seq\":9,\"uid\":1000}");
	ck_assert_uint_eq(les_sink_kafka_close(k), 40);
	free(got);
}
END_TEST

START_TEST(test_outage_loses_nothing)
{
	struct les_sink_kafka *k;
	rd_kafka_mock_cluster_t *mc;
	struct les_kafka_counters c;
	struct consumed *got = calloc(1, sizeof(*got));
	/* Reconnect quickly once the broker is back: the test is about loss, not backoff. */
	static const char *const fast[] = { "reconnect.backoff.ms=50",
					    "reconnect.backoff.max.ms=250",
					    "retry.backoff.ms=50" };

	mock_options(fast, sizeof(fast) / sizeof(fast[0]));
	k = open_sink();
	mc = mock_of(k);
	produce_lines(k, 0, 50);
	les_sink_kafka_flush(k, 10 * NS_PER_SEC);
	rd_kafka_mock_broker_set_down(mc, 1);
	produce_lines(k, 50, 100);
	for (int i = 0; i < 20; i++) { /* two seconds of outage, polled as main does */
		les_sink_kafka_poll(k);
		usleep(100000);
	}
	c = counters(k);
	ck_assert_uint_eq(c.delivered, 50);
	ck_assert_uint_eq(c.pending, 100);
	rd_kafka_mock_broker_set_up(mc, 1);
	/* Broker errors on the way back are retried without duplicates. */
	rd_kafka_mock_push_request_errors(mc, API_PRODUCE, 3,
					  RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
					  RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT,
					  RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS);
	ck_assert_uint_eq(les_sink_kafka_flush(k, 60 * NS_PER_SEC), 0);
	c = counters(k);
	ck_assert_uint_eq(c.delivered, 150);
	ck_assert_uint_eq(c.failed + c.dropped, 0);
	consume_all(mc, 150, got);
	ck_assert_int_eq(got->n, 150);
	for (int i = 0; i < 150; i++) {
		char want[64];

		snprintf(want, sizeof(want), "\"seq\":%d,", i);
		ck_assert_msg(strstr(got->value[i], want), "message %d is '%s'", i, got->value[i]);
	}
	ck_assert_uint_eq(les_sink_kafka_close(k), 0);
	free(got);
}
END_TEST

START_TEST(test_timeout_counted_by_error)
{
	static const char *const extra[] = { "message.timeout.ms=300" };
	struct les_sink_kafka *k;
	rd_kafka_mock_cluster_t *mc;
	struct les_kafka_counters c;
	char buf[4096];
	struct jw w;
	json_t *root, *kafka;
	json_error_t jerr;

	mock_options(extra, 1);
	opts.flush_timeout_ns = 3 * NS_PER_SEC;
	k = open_sink();
	mc = mock_of(k);
	rd_kafka_mock_broker_set_down(mc, 1);
	produce_lines(k, 0, 7);
	les_sink_kafka_flush(k, 3 * NS_PER_SEC);
	c = counters(k);
	ck_assert_uint_eq(c.failed, 7);
	ck_assert_uint_eq(c.pending, 0);

	jw_init(&w, buf, sizeof(buf));
	jw_obj_begin(&w);
	les_sink_kafka_stats(k, &w);
	jw_obj_end(&w);
	ck_assert(!w.overflow);
	root = json_loadb(buf, w.len, 0, &jerr);
	ck_assert_msg(root, "stats member is not JSON: %s", jerr.text);
	kafka = json_object_get(root, "kafka");
	ck_assert_int_eq(json_integer_value(json_object_get(kafka, "failed")), 7);
	ck_assert_int_eq(json_integer_value(json_object_get(kafka, "delivered")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(kafka, "dropped_kafka")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(kafka, "queue")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(kafka,
									      "failed_by_error"),
							     "_MSG_TIMED_OUT")),
			 7);
	json_decref(root);
	ck_assert_uint_eq(les_sink_kafka_close(k), 7);
}
END_TEST

static Suite *sink_kafka_suite(void)
{
	Suite *s = suite_create("sink_kafka");
	TCase *tc = tcase_create("unit");
	TCase *mock_tc = tcase_create("mock_cluster");

	/*
	 * Each refused configuration makes and destroys a librdkafka
	 * producer (its threads joined): about a second apiece on a loaded
	 * 2-CPU machine, past check's default of 4 s for the test.
	 */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_key_modes);
	tcase_add_test(tc, test_config_errors);
	suite_add_tcase(s, tc);

	tcase_set_timeout(mock_tc, 120);
	tcase_add_checked_fixture(mock_tc, NULL, mock_stop);
	tcase_add_test(mock_tc, test_topic_property_accepted);
	tcase_add_test(mock_tc, test_delivers_lines_verbatim);
	tcase_add_test(mock_tc, test_stats_line_headers_without_fs_type);
	tcase_add_test(mock_tc, test_full_queue_drops_exactly);
	tcase_add_test(mock_tc, test_outage_loses_nothing);
	tcase_add_test(mock_tc, test_timeout_counted_by_error);
	suite_add_tcase(s, mock_tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sink_kafka_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
