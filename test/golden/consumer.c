// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CTest golden.consumer: the consumer's lines for a fixed set of ring
 * records, as the tool writes them (test/golden/README.md). Records of
 * each kind through the decoder, the formatter, --aggregate windows (with
 * --records) and the file sink on stdout, then the final stats record with
 * fixed kernel counters. The records' clock is fixed; the stats record's
 * "ts" and "elapsed_s" are the only wall-clock members (masked by the
 * test). With --file-id the access records carry dev, ino and the FID.
 * With --full the file sink writes to /dev/full and loses every line:
 * the lines reach stdout through a line sink, and the stats record counts
 * the file sink's losses in its members.
 *
 * The observed mount is /mnt/golden of test/golden/mountinfo (dev 0:42).
 *
 * Usage: les-golden-consumer MOUNTINFO [--file-id | --full]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/mounts.h"
#include "pipeline/consumer.h"
#include "pipeline/wiring.h"
#include "sink/aggregate.h"
#include "sink/sink.h"

#define DEV	     42u
#define BASE	     1000000000000ull	   /* the records' monotonic clock, ns */
#define EPOCH_OFFSET 1767225600000000000ll /* monotonic 0 is 2026-01-01T00:00:00Z */

static void task(struct les_task *t, uint32_t pid, uint32_t uid, const char *comm)
{
	t->pid = pid;
	t->tid = pid + 1;
	t->uid = uid;
	t->gid = uid;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
}

static void access_rec(struct les_consumer *c, unsigned int i, uint16_t op, uint64_t latency,
		       uint64_t bytes, int32_t err, uint32_t dev, const char *comm)
{
	struct les_rec_access r = {
		.kind = LES_REC_ACCESS,
		.op = op,
		.method = i % 3 ? LES_ATTACH_FENTRY : LES_ATTACH_SYSCALL,
		.flags = i % 2 ? LES_ACCESS_F_FID : 0,
		.ts_ns = BASE + i * 100000000ull,
		.latency_ns = latency,
		.bytes = bytes,
		.op_id = 1000 + i,
		.rpc_wait_ns = latency / 2,
		.ino = 5000 + i,
		.dev = dev,
		.rpc_count = i % 4,
		.err = err,
		.fid = {.seq = 0x200000401ull, .oid = i, .ver = 0},
	};

	task(&r.task, 300 + i % 3, 1000 + i % 2, comm);
	les_consumer_on_record(c, &r, sizeof(r));
}

static void rpc_rec(struct les_consumer *c, unsigned int i, uint16_t opcode, uint16_t rpc_op,
		    uint64_t latency, int32_t err)
{
	struct les_rec_rpc r = {
		.kind = LES_REC_RPC,
		.proto = LES_PROTO_FUSE,
		.opcode = opcode,
		.ts_ns = BASE + i * 100000000ull - 1000,
		.latency_ns = latency,
		.bytes = 4096,
		.parent_op_id = 1000 + i,
		.req_id = 70 + i,
		.backlog_ns = latency / 4,
		.rtt_ns = latency / 2,
		.dev = DEV,
		.err = err,
		.rpc_op = rpc_op,
	};

	task(&r.task, 300 + i % 3, 1000 + i % 2, "dd");
	les_consumer_on_record(c, &r, sizeof(r));
}

/* --full: every line to stdout, past the file sink that loses them. */
static int print_line(void *ctx, const struct les_event *ev)
{
	(void)ctx;
	fwrite(ev->line, 1, ev->line_len, stdout);
	return 0;
}

int main(int argc, char **argv)
{
	static struct les_consumer c;
	const char *mode = argc > 2 ? argv[2] : "";
	/* As on a node whose server probes attached: the join's counts in the stats. */
	struct les_consumer_config cfg = {.file_id = !strcmp(mode, "--file-id"), .join = true};
	struct les_aggregate_config agg = {
		.window_ns = 1000000000ull,
		.group_by = LES_GROUP_BY_DEFAULT,
		.max_groups = LES_AGG_MAX_GROUPS_DEFAULT,
	};
	struct les_observed observed = {0};
	struct les_mount_table table;
	char err[256];
	struct les_kernel_stats ks = {0};
	struct les_sink_file out;
	struct les_aggregate *a;
	char junk[7] = {0};
	unsigned int i = 1;

	if (argc < 2 || les_mount_table_load(&table, argv[1]) ||
	    les_observed_select(&observed, &table, NULL, 0, err, sizeof(err)))
		return 1;
	if (les_sink_file_open(&out, strcmp(mode, "--full") ? "-" : "/dev/full"))
		return 1;
	les_consumer_init(&c, &cfg, &observed, "golden");
	les_pipeline_attach_file(&c, &out);
	if (!strcmp(mode, "--full"))
		les_consumer_add_line_sink(&c, print_line, NULL);
	a = les_pipeline_attach_aggregate(&c, &agg, true);
	if (!a)
		return 1;
	c.fmt.mono_to_epoch_ns = EPOCH_OFFSET;
	access_rec(&c, i++, LES_OP_LOOKUP, 20000, 0, 0, DEV, "ls");
	access_rec(&c, i++, LES_OP_OPEN, 35000, 0, 0, DEV, "dd");
	rpc_rec(&c, i, 16, LES_RPC_OP_NONE, 900000, 0);
	access_rec(&c, i++, LES_OP_WRITE, 1000000, 4096, 0, DEV, "dd");
	rpc_rec(&c, i, 16, LES_RPC_OP_NONE, 300000, 5);
	access_rec(&c, i++, LES_OP_WRITE, 400000, 0, 5, DEV, "dd");
	access_rec(&c, i++, LES_OP_READ, 15000000, 65536, 0, DEV, "cat");
	access_rec(&c, i++, LES_OP_GETATTR, 8000, 0, 2, DEV, "stat");
	access_rec(&c, i++, LES_OP_MKDIR, 60000, 0, 17, DEV, "mkdir");
	access_rec(&c, i++, LES_OP_READ, 5000, 100, 0, 7, "cat"); /* a dev not observed */
	access_rec(&c, i++, LES_OP_CLOSE, 3000, 0, 0, DEV, "dd");
	les_consumer_on_record(&c, junk, sizeof(junk)); /* too short: dropped_decode */
	access_rec(&c, i + 20, LES_OP_READ, 2000000, 8192, 0, DEV, "cat"); /* the next window */
	les_aggregate_flush(a, BASE + EPOCH_OFFSET + (i + 30) * 100000000ull);
	ks.counters[LES_CNT_PRODUCED] = 14;
	ks.counters[LES_CNT_FILTERED] = 3;
	ks.counters[LES_CNT_PROBE_BASE] = 17;
	les_sink_file_flush(&out);
	les_consumer_emit_stats(&c, &ks, true);
	les_sink_file_close(&out);
	les_aggregate_free(a);
	/* Freed, so that the sanitizer build (sanitize.quick) finds no leak. */
	les_observed_free(&observed);
	les_mount_table_free(&table);
	return 0;
}
