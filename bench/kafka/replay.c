// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Replays a JSON Lines file through the Kafka sink exactly as the consumer
 * drives it (one les_sink_kafka_line per line, a poll per batch of lines
 * as the main loop does per ring-buffer poll), then flushes, and prints
 * one line of numbers for bench/kafka/run:
 *   lines=N delivered=N dropped=N failed=N seconds=S records_per_s=R
 *
 *   replay FILE BROKERS TOPIC [PROP=VALUE...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sink/sink_kafka.h"

#define LINES_PER_POLL 1000 /* about one ring-buffer poll's worth at full rate */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		return NULL;
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* "type" of a line the tool wrote: its first member. */
static const char *line_type(const char *line)
{
	if (!strncmp(line, "{\"type\":\"access\"", 16))
		return "access";
	if (!strncmp(line, "{\"type\":\"rpc\"", 13))
		return "rpc";
	return "other";
}

int main(int argc, char **argv)
{
	struct les_kafka_config o;
	struct les_sink_kafka *k;
	struct les_kafka_counters c;
	struct les_event ev = { .kind = LES_REC_ACCESS, .host = "bench", .fs_type = "lustre" };
	char err[512];
	size_t len, n = 0;
	char *buf, *p, *end;
	double t0, t1;

	if (argc < 4) {
		fprintf(stderr, "usage: replay FILE BROKERS TOPIC [PROP=VALUE...]\n");
		return 2;
	}
	buf = slurp(argv[1], &len);
	if (!buf) {
		perror(argv[1]);
		return 1;
	}
	/* The --kafka-* defaults of the command line, set here to link the sink alone. */
	memset(&o, 0, sizeof(o));
	o.key = LES_KAFKA_KEY_JOB_ID;
	o.queue_bytes = 256ULL << 20;
	o.flush_timeout_ns = 10 * 1000000000ULL;
	o.brokers = argv[2];
	o.topic = argv[3];
	for (int i = 4; i < argc && o.n_props < LES_KAFKA_MAX_PROPS; i++)
		o.props[o.n_props++] = argv[i];
	if (les_sink_kafka_open(&k, &o, err, sizeof(err))) {
		fprintf(stderr, "replay: %s\n", err);
		return 2;
	}

	t0 = now_s();
	for (p = buf, end = buf + len; p < end; p += ev.line_len) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		ev.line = p;
		ev.line_len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		ev.type = line_type(p);
		les_sink_kafka_line(k, &ev);
		if (++n % LINES_PER_POLL == 0)
			les_sink_kafka_poll(k);
	}
	les_sink_kafka_flush(k, 120 * 1000000000ULL);
	t1 = now_s();
	les_sink_kafka_counters(k, &c);
	printf("lines=%zu delivered=%llu dropped=%llu failed=%llu seconds=%.3f records_per_s=%.0f\n",
	       n, (unsigned long long)c.delivered, (unsigned long long)c.dropped,
	       (unsigned long long)c.failed, t1 - t0, (double)c.delivered / (t1 - t0));
	les_sink_kafka_close(k);
	free(buf);
	return 0;
}
