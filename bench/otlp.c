// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The OTLP sink's per-record cost on one core, without a kernel or a
 * collector: an rpc record and its access record (a FUSE read and its
 * request) through the trace part (sink/otlp_trace.c), every op kept
 * (two spans written as OTLP/JSON) and 1 in 100 kept. docs/otlp.md has
 * the figures.
 *
 *   cc -O2 -Isrc -Iinclude -DLES_VERSION='"0"' bench/otlp.c BUILD/libles.a -o otlp-bench \
 *      $(pkg-config --libs libbpf zlib ncursesw jansson libcurl rdkafka libmicrohttpd) -lpthread
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "sink/otlp.h"
static char buf[512 << 10];
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
static double run(uint32_t sample, unsigned n)
{
	struct les_otlp_config cfg = {.sample = sample};
	struct les_otlp_traces *t = les_otlp_traces_new(&cfg, 1);
	struct jw w;
	unsigned spans, over;
	double t0;
	jw_init(&w, buf, sizeof(buf) - 16);
	les_otlp_batch_begin(&w, "node1");
	t0 = now();
	for (unsigned i = 1; i <= n; i++) {
		uint64_t id = (uint64_t)i << 12;
		struct les_event r = {.kind = LES_REC_RPC,
				      .ts_epoch_ns = 1796538144000000000ULL + i * 1000,
				      .op = "read",
				      .proto = "fuse",
				      .parent_op_id = id,
				      .latency_ns = 500,
				      .req_id = i * 2,
				      .pid = 1,
				      .tid = 1};
		struct les_event a = {.kind = LES_REC_ACCESS,
				      .ts_epoch_ns = 1796538144000000000ULL + i * 1000 + 100,
				      .host = "node1",
				      .fs_type = "fuse.les-testfs",
				      .fs = "les-testfs",
				      .mount = "/mnt/t",
				      .op = "read",
				      .access_intent = "data_read",
				      .op_id = id,
				      .latency_ns = 700,
				      .bytes = 4096,
				      .pid = 4242,
				      .tid = 4242,
				      .uid = 1000,
				      .comm = "dd",
				      .username = "alice",
				      .process = "dd",
				      .actor_type = "user",
				      .job_id = "12345",
				      .job_source = "env"};
		les_otlp_traces_add(t, &r, &w, &spans, &over);
		if (w.cap - w.len < (96u << 10)) {
			jw_init(&w, buf, sizeof(buf) - 16);
			les_otlp_batch_begin(&w, "node1");
		}
		les_otlp_traces_add(t, &a, &w, &spans, &over);
	}
	double ns = (now() - t0) * 1e9 / n;
	les_otlp_traces_free(t);
	return ns;
}
int main(void)
{
	unsigned n = 2000000;
	printf("every op kept (2 spans, about 2.2 KB of JSON): %.0f ns per op (rpc + access record)\n",
	       run(1, n));
	printf("1 in 100 kept: %.0f ns per op\n", run(100, n));
	return 0;
}
