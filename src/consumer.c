// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Decode -> enrich -> format -> sinks, one record at a time. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include "consumer.h"
#include "ops.h"

static uint64_t mono_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void les_consumer_init(struct les_consumer *c, const struct les_options *opts,
		       const struct les_observed *observed, struct les_sink_file *file,
		       const char *host)
{
	memset(c, 0, sizeof(*c));
	c->opts = opts;
	c->observed = observed;
	c->file = file;
	les_fmt_ctx_init(&c->fmt, host, opts->file_id);
	jw_init(&c->jw, c->line, sizeof(c->line));
	c->start_mono_ns = mono_now_ns();
}

uint64_t les_consumer_dropped(const struct les_consumer *c)
{
	return c->decode_errors + c->format_errors + (c->file ? c->file->dropped : 0);
}

/* Hand a finished line to every sink. */
static int emit_line(struct les_consumer *c)
{
	int err = 0;

	if (c->jw.overflow) {
		c->format_errors++;
		return 0;
	}
	if (c->file)
		err = les_sink_file_write(c->file, c->line, c->jw.len);
	if (err == -EPIPE) {
		c->stop = true;
		return err;
	}
	return 0;
}

static int emit_record(struct les_consumer *c)
{
	int err = emit_line(c);

	if (err)
		return err;
	c->emitted++;
	if (c->opts->count && c->emitted >= c->opts->count) {
		c->stop = true;
		return -ECANCELED;
	}
	return 0;
}

/* The record's size must be exactly its kind's: anything else is corrupt. */
static bool size_ok(uint32_t kind, size_t size)
{
	switch (kind) {
	case LES_REC_ACCESS:
		return size >= sizeof(struct les_rec_access);
	case LES_REC_RPC:
		return size >= sizeof(struct les_rec_rpc);
	case LES_REC_RPC_EVENT:
		return size >= sizeof(struct les_rec_rpc_event);
	case LES_REC_PROC_EXEC:
	case LES_REC_PROC_EXIT:
		return size >= sizeof(struct les_rec_proc);
	}
	return false;
}

static const struct les_observed_mount *mount_of(struct les_consumer *c, uint32_t dev)
{
	const struct les_observed_mount *m = les_observed_find(c->observed, dev);

	if (!m)
		c->unobserved++;
	return m;
}

int les_consumer_on_record(void *ctx, void *data, size_t size)
{
	struct les_consumer *c = ctx;
	uint32_t kind;

	if (c->stop)
		return -ECANCELED;
	if (size < sizeof(kind)) {
		c->decode_errors++;
		return 0;
	}
	memcpy(&kind, data, sizeof(kind));
	if (!size_ok(kind, size)) {
		c->decode_errors++;
		return 0;
	}
	c->by_kind[kind]++;
	jw_reset(&c->jw);
	switch (kind) {
	case LES_REC_ACCESS: {
		const struct les_rec_access *r = data;

		les_format_access(&c->jw, &c->fmt, mount_of(c, r->dev), r);
		return emit_record(c);
	}
	case LES_REC_RPC: {
		const struct les_rec_rpc *r = data;

		les_format_rpc(&c->jw, &c->fmt, mount_of(c, r->dev), r);
		return emit_record(c);
	}
	case LES_REC_RPC_EVENT: {
		const struct les_rec_rpc_event *r = data;

		les_format_rpc_event(&c->jw, &c->fmt, mount_of(c, r->dev), r);
		return emit_record(c);
	}
	default:
		/* Process notices feed enrichment; they are not output. */
		return 0;
	}
}

static void put_kind_counts(struct jw *w, const struct les_consumer *c)
{
	static const char *const names[LES_REC_KIND_MAX] = {
		[LES_REC_ACCESS] = "access",	   [LES_REC_RPC] = "rpc",
		[LES_REC_RPC_EVENT] = "rpc_event", [LES_REC_PROC_EXEC] = "proc_exec",
		[LES_REC_PROC_EXIT] = "proc_exit",
	};

	jw_key(w, "records");
	jw_obj_begin(w);
	for (unsigned int k = 1; k < LES_REC_KIND_MAX; k++)
		jw_kv_u64(w, names[k], c->by_kind[k]);
	jw_obj_end(w);
}

static void put_kernel_counters(struct jw *w, const struct les_kernel_stats *ks)
{
	jw_key(w, "kernel");
	jw_obj_begin(w);
	for (unsigned int i = 0; i < LES_CNT_MAX; i++)
		jw_kv_u64(w, les_counter_name(i), ks->counters[i]);
	jw_obj_end(w);
	jw_key(w, "probe_hits");
	jw_obj_begin(w);
	for (unsigned int p = 0; p < LES_PROBE_MAX; p++)
		jw_kv_u64(w, les_probe_name(p), ks->counters[LES_CNT_PROBE_BASE + p]);
	jw_obj_end(w);
}

int les_consumer_emit_stats(struct les_consumer *c, const struct les_kernel_stats *ks, bool final)
{
	struct jw *w = &c->jw;
	uint64_t now = mono_now_ns();

	les_fmt_ctx_sync_clock(&c->fmt);
	jw_reset(w);
	jw_obj_begin(w);
	jw_kv_cstr(w, "type", "stats");
	jw_kv_time(w, "ts", les_fmt_epoch_ns(&c->fmt, now));
	jw_raw_members(w, c->fmt.host_json, c->fmt.host_json_len);
	jw_kv_bool(w, "final", final);
	jw_kv_double(w, "elapsed_s", (double)(now - c->start_mono_ns) / 1e9, 3);
	jw_kv_u64(w, "emitted", c->emitted);
	jw_kv_u64(w, "produced_kernel", ks->counters[LES_CNT_PRODUCED]);
	jw_kv_u64(w, "dropped_kernel", ks->counters[LES_CNT_RB_DROPPED]);
	jw_kv_u64(w, "dropped_userspace", les_consumer_dropped(c));
	jw_kv_u64(w, "dropped_decode", c->decode_errors);
	jw_kv_u64(w, "dropped_format", c->format_errors);
	jw_kv_u64(w, "dropped_output", c->file ? c->file->dropped : 0);
	jw_kv_u64(w, "filtered_kernel", ks->counters[LES_CNT_FILTERED]);
	jw_kv_u64(w, "stale_swept", ks->stale_swept);
	jw_kv_u64(w, "threads_swept", ks->threads_swept);
	jw_kv_u64(w, "inflight", ks->inflight_fuse);
	put_kind_counts(w, c);
	put_kernel_counters(w, ks);
	jw_obj_end(w);
	jw_newline(w);
	return emit_line(c);
}
