// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The sinks wired into the consumer. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "pipeline/wiring.h"

void les_pipeline_attach_file(struct les_consumer *c, struct les_sink_file *f)
{
	const struct les_stats_hook counts = { .counts = les_sink_file_counts, .ctx = f };

	les_consumer_set_output(c, les_sink_file_line, f);
	les_consumer_add_stats_hook(c, &counts);
}

static int window_to_consumer(void *ctx, const struct les_event *ev)
{
	return les_consumer_output(ctx, ev);
}

struct les_aggregate *les_pipeline_new_aggregate(struct les_consumer *c,
						 const struct les_aggregate_config *cfg, bool records)
{
	struct les_aggregate_config with_host = *cfg;
	struct les_aggregate *a;

	with_host.host = c->host;
	a = les_aggregate_new(&with_host, window_to_consumer, c);
	if (a)
		c->records_to_lines = records;
	return a;
}

struct les_aggregate *les_pipeline_attach_aggregate(struct les_consumer *c,
						    const struct les_aggregate_config *cfg,
						    bool records)
{
	struct les_aggregate *a = les_pipeline_new_aggregate(c, cfg, records);

	if (!a)
		return NULL;
	if (les_consumer_add_event_sink(c, les_aggregate_add, a) ||
	    les_consumer_add_join_sink(c, les_aggregate_add_join, a) ||
	    les_consumer_add_stats_hook(
		    c, &(const struct les_stats_hook){.members = les_aggregate_stats_json,
						      .ctx = a})) {
		les_aggregate_free(a);
		return NULL;
	}
	return a;
}

static void describe(void *ctx, struct les_event *ev, uint64_t now_ns, uint32_t dev,
		     const struct les_task *t, unsigned int flags)
{
	les_consumer_describe(ctx, ev, now_ns, dev, t, flags);
}

void les_pipeline_update_prom(struct les_prom *p, struct les_consumer *c,
			      const struct les_kernel_stats *ks)
{
	struct les_prom_consumer_stats cs = {0};
	struct les_output_counts oc;

	if (!p)
		return;
	memcpy(cs.by_kind, c->by_kind, sizeof(cs.by_kind));
	cs.emitted = les_consumer_emitted(c);
	cs.dropped_decode = c->decode_errors;
	cs.dropped_format = c->format_errors;
	les_consumer_output_counts(c, &oc);
	cs.dropped_output = oc.lines_dropped;
	cs.have_enrich = c->enricher != NULL;
	if (c->enricher)
		les_enrich_get_stats(c->enricher, &cs.enrich);
	if (c->observed) {
		cs.mounts_observed = (uint32_t)c->observed->n;
		cs.mounts_skipped_limit = c->observed->skipped_limit;
		cs.mounts_skipped_too_long = c->observed->skipped_too_long;
	}
	les_prom_update_stats(p, &cs, ks, describe, c);
}
