// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The sinks' table and the run's part of their lifecycle (see sinks.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/clock.h"
#include "util/utf8.h"
#include "pipeline/run.h"
#include "pipeline/sinks.h"
#include "pipeline/wiring.h"
#include "sink/sink.h"
#include "sink/summary.h"
#include "sink/top.h"

/* --- the output: the file sink (--output, else stdout) ----------------------- */

/* Its warnings of lines lost: at most one per stats interval. */
struct output_state {
	uint64_t drops_warned; /* lines lost, as last warned about */
	uint64_t next_warn_ns;
};

/*
 * Before the probes load, as root: a path others could write or replace
 * is refused (outfile.h), and fails the start before anything loads. The
 * consumer's output, its counts at the stats record's fixed places.
 */
static int output_open(struct les_sink_slot *slot, struct les_run *r,
		       const struct les_sinks_config *cfg, char *err, size_t errlen)
{
	struct les_sink_file *f = calloc(1, sizeof(*f));

	(void)r;
	slot->sink = f;
	slot->priv = calloc(1, sizeof(struct output_state));
	if (!f || !slot->priv) {
		snprintf(err, errlen, "cannot set up the output: out of memory");
		return -ENOMEM;
	}
	if (les_sink_file_open(f, cfg->output)) {
		snprintf(err, errlen, "--output %s: %s", cfg->output, f->why);
		return -EIO;
	}
	return 0;
}

/* A full disk loses lines: say so on stderr, at most once per interval. */
static void output_warn_drops(struct les_sink_slot *slot, struct les_run *r, uint64_t now)
{
	const struct les_sink_file *f = slot->sink;
	struct output_state *st = slot->priv;

	if (!f->last_errno || f->dropped == st->drops_warned || now < st->next_warn_ns)
		return;
	fprintf(stderr,
		"lustre-ebpf-stream: warning: writing %s: %s: %" PRIu64 " lines (%" PRIu64
		" records) dropped so far\n",
		f->path ? f->path : "stdout", strerror(f->last_errno), f->dropped,
		f->records_dropped);
	st->drops_warned = f->dropped;
	st->next_warn_ns =
		now + (r->cfg->stats_interval_ns ? r->cfg->stats_interval_ns : 10 * LES_NS_PER_SEC);
}

/*
 * Every pass: what is buffered goes out; on SIGHUP the file is reopened
 * (the old one was rotated away); lines lost are warned about.
 */
static void output_tick(struct les_sink_slot *slot, struct les_run *r, uint64_t now_ns)
{
	struct les_sink_file *f = slot->sink;

	les_sink_file_flush(f);
	if (r->reopen) {
		if (les_sink_file_reopen(f))
			les_say("cannot reopen %s: %s; lines are counted as dropped until the next "
				"SIGHUP",
				slot->cfg->output, f->why);
		else if (slot->cfg->verbose && f->path)
			fprintf(stderr, "lustre-ebpf-stream: reopened %s\n", f->path);
	}
	output_warn_drops(slot, r, now_ns);
}

static void output_sync(struct les_sink_slot *slot, struct les_run *r)
{
	(void)r;
	les_sink_file_flush(slot->sink);
}

/* Lines lost to write errors (not a closed pipe): the run failed, say how much. */
static int output_verdict(struct les_sink_slot *slot, struct les_run *r)
{
	const struct les_sink_file *f = slot->sink;

	(void)r;
	if (!f->write_errors || !f->dropped)
		return 0;
	les_say("writing %s: %" PRIu64 " lines (%" PRIu64 " records) dropped: %s",
		f->path ? f->path : "stdout", f->dropped, f->records_dropped,
		strerror(f->last_errno));
	return 1;
}

/* The file's last bytes (a gzip end, NFS's delayed errors) go out at close, last of all. */
static int output_close(struct les_sink_slot *slot, struct les_run *r)
{
	struct les_sink_file *f = slot->sink;
	int failed = f && les_sink_file_close(f);

	if (failed && !r->failed)
		les_say("closing %s: %s", f->path ? f->path : "stdout", strerror(f->last_errno));
	free(f);
	free(slot->priv);
	return failed;
}

/* --- Kafka: a line sink ------------------------------------------------------ */

static int kafka_check(const struct les_sinks_config *cfg, char *err, size_t errlen)
{
	return les_sink_kafka_check(&cfg->kafka, err, errlen);
}

/*
 * After the capability drop: librdkafka's threads block every signal and
 * would keep whatever the process held when they started.
 */
static int kafka_open(struct les_sink_slot *slot, struct les_run *r,
		      const struct les_sinks_config *cfg, char *err, size_t errlen)
{
	(void)r;
	return les_sink_kafka_open((struct les_sink_kafka **)&slot->sink, &cfg->kafka, err, errlen);
}

static void kafka_counters(void *ctx, struct les_sink_counters *sc)
{
	les_sink_kafka_counters(ctx, &sc->kafka);
	sc->have_kafka = true;
}

/* Every pass: delivery reports run. */
static void kafka_tick(struct les_sink_slot *slot, struct les_run *r, uint64_t now_ns)
{
	(void)r, (void)now_ns;
	les_sink_kafka_poll(slot->sink);
}

/* The final stats record tells what Kafka could not take: flushed before it. */
static void kafka_flush(struct les_sink_slot *slot, struct les_run *r)
{
	(void)r;
	les_sink_kafka_flush(slot->sink, slot->cfg->kafka.flush_timeout_ns);
}

/* A line that did not reach Kafka fails the run (exit status 1). */
static int kafka_close(struct les_sink_slot *slot, struct les_run *r)
{
	(void)r;
	return les_sink_kafka_close(slot->sink) != 0;
}

/* --- --otlp: traces to an OpenTelemetry collector --------------------------------- */

static int otlp_check(const struct les_sinks_config *cfg, char *err, size_t errlen)
{
	return les_otlp_check(&cfg->otlp, err, errlen);
}

static int otlp_open(struct les_sink_slot *slot, struct les_run *r,
		     const struct les_sinks_config *cfg, char *err, size_t errlen)
{
	(void)r;
	return les_otlp_open((struct les_otlp **)&slot->sink, &cfg->otlp, err, errlen);
}

static void otlp_counters(void *ctx, struct les_sink_counters *sc)
{
	les_otlp_counters(ctx, &sc->otlp);
	sc->have_otlp = true;
}

/* Every pass: a batch due goes out, the collector's answer is read; never waits. */
static void otlp_tick(struct les_sink_slot *slot, struct les_run *r, uint64_t now_ns)
{
	(void)r;
	les_otlp_tick(slot->sink, now_ns);
}

/* The final stats record counts what did not leave: flushed before it. */
static void otlp_flush(struct les_sink_slot *slot, struct les_run *r)
{
	(void)r;
	les_otlp_flush(slot->sink);
}

/* Spans are a sample already: the dropped are counted and told, the run does not fail. */
static int otlp_close(struct les_sink_slot *slot, struct les_run *r)
{
	(void)r;
	les_otlp_close(slot->sink);
	return 0;
}

/* --- --aggregate: windows out through the consumer ---------------------------- */

static int aggregate_open(struct les_sink_slot *slot, struct les_run *r,
			  const struct les_sinks_config *cfg, char *err, size_t errlen)
{
	if (!cfg->aggregate.window_ns)
		return 0;
	slot->sink = les_pipeline_new_aggregate(&r->consumer, &cfg->aggregate, cfg->records);
	if (!slot->sink) {
		snprintf(err, errlen, "cannot set up --aggregate: out of memory");
		return -ENOMEM;
	}
	return 0;
}

static void aggregate_tick(struct les_sink_slot *slot, struct les_run *r, uint64_t now_ns)
{
	les_aggregate_tick(slot->sink, les_fmt_epoch_ns(&r->consumer.fmt, now_ns));
}

/* The last window is cut short: it goes out marked partial. */
static void aggregate_flush(struct les_sink_slot *slot, struct les_run *r)
{
	les_aggregate_flush(slot->sink, les_fmt_epoch_ns(&r->consumer.fmt, les_mono_ns()));
}

static int aggregate_close(struct les_sink_slot *slot, struct les_run *r)
{
	(void)r;
	les_aggregate_free(slot->sink);
	return 0;
}

/* --- --prometheus ----------------------------------------------------------------- */

static int prom_open(struct les_sink_slot *slot, struct les_run *r,
		     const struct les_sinks_config *cfg, char *err, size_t errlen)
{
	int ret;

	(void)r;
	if (!cfg->prom.listen)
		return 0;
	ret = les_prom_open((struct les_prom **)&slot->sink, &cfg->prom, err, errlen);
	/* Whatever the endpoint's error, it is found at run time: never a usage error. */
	if (ret)
		return ret == -EINVAL ? -EIO : ret;
	if (cfg->verbose)
		fprintf(stderr, "lustre-ebpf-stream: metrics on port %u at %s\n",
			(unsigned int)les_prom_port(slot->sink), cfg->prom.path);
	return 0;
}

static bool prom_binds_privileged_port(const struct les_sinks_config *cfg)
{
	char host[256];
	uint16_t port;

	return cfg->prom.listen &&
	       les_prom_parse_listen(cfg->prom.listen, host, sizeof(host), &port) == 0 &&
	       port < 1024;
}

/* Once a second: the endpoint's self-metrics, in-flight gauge and series TTL. */
static void prom_tick(struct les_sink_slot *slot, struct les_run *r, uint64_t now_ns)
{
	struct les_sink_counters sc = {0};
	struct les_kernel_stats ks;

	if (now_ns < slot->next_ns)
		return;
	les_tracer_read_stats(&r->tracer, &ks);
	les_pipeline_update_prom(slot->sink, &r->consumer, &ks);
	les_consumer_sink_counters(&r->consumer, &sc);
	if (sc.have_kafka)
		les_prom_update_kafka(slot->sink, &sc.kafka);
	if (sc.have_otlp)
		les_prom_update_otlp(slot->sink, &sc.otlp);
	les_prom_tick(slot->sink, now_ns);
	slot->next_ns = now_ns + LES_NS_PER_SEC;
}

static int prom_close(struct les_sink_slot *slot, struct les_run *r)
{
	(void)r;
	les_prom_free(slot->sink);
	return 0;
}

/* --- --top: the view, its screen (or plain frames on stdout) ----------------------- */

struct top_state {
	struct les_top_view keys;
	bool screen;
	uint32_t frames;
	uint64_t last_ns; /* the current interval's start */
	char frame[64 * 1024];
};

static int top_open(struct les_sink_slot *slot, struct les_run *r,
		    const struct les_sinks_config *cfg, char *err, size_t errlen)
{
	struct top_state *top;

	(void)r;
	if (!cfg->top)
		return 0;
	slot->priv = top = calloc(1, sizeof(*top));
	slot->sink = les_top_new();
	if (!top || !slot->sink) {
		snprintf(err, errlen, "cannot set up --top: out of memory");
		return -ENOMEM;
	}
	top->screen = !cfg->top_batch && isatty(STDOUT_FILENO);
	if (top->screen && les_top_screen_open()) {
		snprintf(err, errlen, "cannot set up the --top screen (TERM=%s)",
			 getenv("TERM") ? getenv("TERM") : "");
		return -EIO;
	}
	return 0;
}

static void top_header(struct les_run *r, struct les_top_header *h)
{
	const struct les_observed *observed_mounts = &r->observed;
	struct les_kernel_stats ks;

	memset(h, 0, sizeof(*h));
	les_tracer_read_stats(&r->tracer, &ks);
	h->dropped = ks.counters[LES_CNT_RB_DROPPED] + les_consumer_dropped(&r->consumer);
	for (size_t i = 0; i < observed_mounts->n && h->n_mounts < LES_TOP_MOUNTS; i++) {
		uint64_t n = 0;

		for (size_t k = 0; k < ks.n_inflight; k++)
			if (ks.inflight[k].dev == observed_mounts->m[i].dev)
				n += ks.inflight[k].requests;
		snprintf(h->mounts[h->n_mounts].mount, sizeof(h->mounts[0].mount), "%s",
			 observed_mounts->m[i].mount_point);
		h->mounts[h->n_mounts++].inflight = n;
	}
}

static void top_draw(struct top_state *top, const struct les_top *view)
{
	int width = 80, height = 0;

	if (top->screen)
		les_top_screen_size(&width, &height);
	if (top->keys.layers)
		les_top_render_layers(view, width, height, top->frame, sizeof(top->frame));
	else
		les_top_render(view, top->keys.group, top->keys.sort, width, height, top->frame,
			       sizeof(top->frame));
	if (top->screen) {
		les_top_screen_draw(top->frame);
	} else {
		/* Plain frames, as top -b prints them: a blank line between. */
		fputs(top->frame, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	}
}

/* Keys first (every pass: the screen answers at once), then a frame per interval. */
static void top_tick(struct les_sink_slot *slot, struct les_run *r, uint64_t now_ns)
{
	const struct les_sinks_config *cfg = slot->cfg;
	struct les_consumer *c = &r->consumer;
	struct top_state *top = slot->priv;
	struct les_top_header h;
	bool redraw = false;
	int key;

	while (top->screen && (key = les_top_screen_key()) >= 0)
		redraw |= les_top_key(&top->keys, key);
	les_top_screen_ask_filter(&top->keys, slot->sink);
	if (top->keys.quit) {
		c->stop = true;
		return;
	}
	if (!top->last_ns)
		top->last_ns = now_ns;
	if (now_ns >= top->last_ns + cfg->top_interval_ns) {
		top_header(r, &h);
		les_top_close_interval(slot->sink, (double)(now_ns - top->last_ns) / 1e9,
				       les_fmt_epoch_ns(&c->fmt, now_ns), &h);
		top->last_ns = now_ns;
		redraw = true;
		top->frames++;
	}
	if (!redraw || !top->frames)
		return;
	top_draw(top, slot->sink);
	if (cfg->top_batch && top->frames >= cfg->top_batch)
		c->stop = true;
}

static int top_close(struct les_sink_slot *slot, struct les_run *r)
{
	struct top_state *top = slot->priv;

	(void)r;
	if (top && top->screen)
		les_top_screen_close();
	les_top_free(slot->sink);
	free(top);
	return 0;
}

/* --- the summary at exit ----------------------------------------------------------- */

/* --summary, or by default when stderr is a terminal. */
static int summary_open(struct les_sink_slot *slot, struct les_run *r,
			const struct les_sinks_config *cfg, char *err, size_t errlen)
{
	(void)r;
	if (cfg->summary != 1 && !(cfg->summary == -1 && isatty(STDERR_FILENO)))
		return 0;
	slot->sink = les_summary_new();
	if (!slot->sink) {
		snprintf(err, errlen, "cannot set up the summary");
		return -ENOMEM;
	}
	return 0;
}

/* On stderr once the run ran, with the final stats record's numbers. */
static int summary_close(struct les_sink_slot *slot, struct les_run *r)
{
	struct les_summary_totals tot = {0};
	struct les_consumer *c = &r->consumer;
	struct les_kernel_stats ks;

	if (r->ran) {
		les_tracer_read_stats(&r->tracer, &ks);
		tot.elapsed_ns = les_mono_ns() - c->start_mono_ns;
		tot.emitted = les_consumer_emitted(c);
		tot.dropped = ks.counters[LES_CNT_RB_DROPPED] + les_consumer_dropped(c);
		tot.filtered = ks.counters[LES_CNT_FILTERED] + c->filtered_userspace;
		les_summary_print(slot->sink, &tot, stderr);
	}
	les_summary_free(slot->sink);
	return 0;
}

/* --- the table --------------------------------------------------------------------- */

/*
 * In the order they are opened and their hooks run: the output first (it
 * opens before the probes load, and closes last of all, its last bytes out
 * after every other sink's); Kafka, the line sink, next (its stats member
 * leads the sinks'; it is flushed last, after the windows the aggregator
 * puts out at the end); OTLP next, an event sink whose flush sends its last
 * batches before the final stats record; the summary last, so that it
 * prints before the others close.
 */
static const struct les_sink_ops sink_table[] = {
	{
		.name = "output",
		.early = true,
		.open = output_open,
		.output = les_sink_file_line,
		.counts = les_sink_file_counts,
		.tick = output_tick,
		.sync = output_sync,
		.verdict = output_verdict,
		.close = output_close,
	},
	{
		.name = "kafka",
		.check = kafka_check,
		.open = kafka_open,
		.line = les_sink_kafka_line,
		.stats = les_sink_kafka_stats,
		.counters = kafka_counters,
		.tick = kafka_tick,
		.flush = kafka_flush,
		.close = kafka_close,
	},
	{
		.name = "otlp",
		.check = otlp_check,
		.open = otlp_open,
		.event = les_otlp_event,
		.stats = les_otlp_stats_json,
		.counters = otlp_counters,
		.tick = otlp_tick,
		.flush = otlp_flush,
		.close = otlp_close,
	},
	{
		.name = "aggregate",
		.open = aggregate_open,
		.event = les_aggregate_add,
		.join = les_aggregate_add_join,
		.stats = les_aggregate_stats_json,
		.tick = aggregate_tick,
		.flush = aggregate_flush,
		.close = aggregate_close,
	},
	{
		.name = "prometheus",
		.binds_privileged_port = prom_binds_privileged_port,
		.open = prom_open,
		.event = les_prom_add,
		.join = les_prom_add_join,
		.stats = les_prom_stats_json,
		.tick = prom_tick,
		.close = prom_close,
	},
	{
		.name = "top",
		.open = top_open,
		.event = les_top_event,
		.join = les_top_join,
		.tick = top_tick,
		.close = top_close,
	},
	{
		.name = "summary",
		.open = summary_open,
		.event = les_summary_event,
		.close = summary_close,
	},
};

#define N_SINKS (sizeof(sink_table) / sizeof(sink_table[0]))

int les_sinks_check(const struct les_sinks_config *cfg, char *err, size_t errlen)
{
	int ret = 0;

	for (size_t i = 0; i < N_SINKS && !ret; i++)
		if (sink_table[i].check)
			ret = sink_table[i].check(cfg, err, errlen);
	return ret;
}

bool les_sinks_bind_privileged_port(const struct les_sinks_config *cfg)
{
	for (size_t i = 0; i < N_SINKS; i++)
		if (sink_table[i].binds_privileged_port && sink_table[i].binds_privileged_port(cfg))
			return true;
	return false;
}

/* The open sink's hooks, registered with the consumer. */
static int register_hooks(struct les_consumer *c, const struct les_sink_slot *slot)
{
	const struct les_sink_ops *ops = slot->ops;
	int err = 0;

	if (ops->output)
		les_consumer_set_output(c, ops->output, slot->sink);
	if (ops->event)
		err = les_consumer_add_event_sink(c, ops->event, slot->sink);
	if (!err && ops->line)
		err = les_consumer_add_line_sink(c, ops->line, slot->sink);
	if (!err && ops->join)
		err = les_consumer_add_join_sink(c, ops->join, slot->sink);
	if (!err && (ops->stats || ops->counts || ops->counters))
		err = les_consumer_add_stats_hook(c, &(const struct les_stats_hook){
							     .members = ops->stats,
							     .counts = ops->counts,
							     .counters = ops->counters,
							     .ctx = slot->sink,
						     });
	return err;
}

/* One slot per row, made once. */
static int slots_make(struct les_sinks *s, const struct les_sinks_config *cfg, char *err,
		      size_t errlen)
{
	if (s->slots)
		return 0;
	s->slots = calloc(N_SINKS, sizeof(*s->slots));
	if (!s->slots) {
		snprintf(err, errlen, "cannot set up the outputs: out of memory");
		return -ENOMEM;
	}
	s->n = N_SINKS;
	for (size_t i = 0; i < N_SINKS; i++) {
		s->slots[i].ops = &sink_table[i];
		s->slots[i].cfg = cfg;
	}
	return 0;
}

static int open_row(struct les_sink_slot *slot, struct les_run *r,
		    const struct les_sinks_config *cfg, char *err, size_t errlen)
{
	if (slot->opened)
		return 0;
	slot->opened = true;
	return slot->ops->open(slot, r, cfg, err, errlen);
}

int les_sinks_open_early(struct les_run *r, const struct les_sinks_config *cfg, char *err,
			 size_t errlen)
{
	struct les_sinks *s = &r->sinks;
	int ret = slots_make(s, cfg, err, errlen);

	for (size_t i = 0; i < s->n && !ret; i++)
		if (s->slots[i].ops->early)
			ret = open_row(&s->slots[i], r, cfg, err, errlen);
	return ret;
}

/* The early rows, opened already, are registered in their place among the others. */
int les_sinks_open(struct les_run *r, const struct les_sinks_config *cfg, char *err, size_t errlen)
{
	struct les_sinks *s = &r->sinks;
	int ret = slots_make(s, cfg, err, errlen);

	for (size_t i = 0; i < s->n && !ret; i++) {
		struct les_sink_slot *slot = &s->slots[i];

		ret = open_row(slot, r, cfg, err, errlen);
		if (!ret && slot->sink && register_hooks(&r->consumer, slot)) {
			snprintf(err, errlen, "cannot set up %s: out of memory", slot->ops->name);
			return -ENOMEM;
		}
	}
	return ret;
}

void les_sinks_tick(struct les_run *r, uint64_t now_ns)
{
	for (size_t i = 0; i < r->sinks.n; i++) {
		struct les_sink_slot *slot = &r->sinks.slots[i];

		if (slot->sink && slot->ops->tick)
			slot->ops->tick(slot, r, now_ns);
	}
}

void les_sinks_sync(struct les_run *r)
{
	for (size_t i = 0; i < r->sinks.n; i++) {
		struct les_sink_slot *slot = &r->sinks.slots[i];

		if (slot->sink && slot->ops->sync)
			slot->ops->sync(slot, r);
	}
}

int les_sinks_verdict(struct les_run *r)
{
	int failed = 0;

	for (size_t i = 0; i < r->sinks.n; i++) {
		struct les_sink_slot *slot = &r->sinks.slots[i];

		if (slot->sink && slot->ops->verdict)
			failed |= slot->ops->verdict(slot, r);
	}
	return failed;
}

void les_sinks_flush(struct les_run *r)
{
	for (size_t i = r->sinks.n; i-- > 0;) {
		struct les_sink_slot *slot = &r->sinks.slots[i];

		if (slot->sink && slot->ops->flush)
			slot->ops->flush(slot, r);
	}
}

int les_sinks_close(struct les_run *r)
{
	int failed = 0;

	for (size_t i = r->sinks.n; i-- > 0;) {
		struct les_sink_slot *slot = &r->sinks.slots[i];

		if ((slot->sink || slot->priv) && slot->ops->close)
			failed |= slot->ops->close(slot, r);
		/* A later close (the output's, last) adds no message to a failure. */
		r->failed |= failed != 0;
	}
	free(r->sinks.slots);
	memset(&r->sinks, 0, sizeof(r->sinks));
	return failed;
}
