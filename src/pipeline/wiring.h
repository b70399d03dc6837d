/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What ties a sink to the consumer where the sink table (sinks.c) needs
 * more than the sink's own functions: the output, the aggregator's
 * windows, Prometheus's self-metrics. The sinks know nothing of the
 * consumer.
 */
#ifndef LES_WIRING_H
#define LES_WIRING_H

#include <stdbool.h>
#include <stddef.h>
#include "model/kstats.h"
#include "pipeline/consumer.h"
#include "sink/aggregate.h"
#include "sink/prom.h"
#include "sink/sink.h"

/* The file sink f as the consumer's output, the records accounted against it. */
void les_pipeline_attach_file(struct les_consumer *c, struct les_sink_file *f);

/*
 * An aggregator of cfg (its host is the consumer's) whose windows go out
 * through les_consumer_output(); per-op records stop being lines unless
 * records (--records). NULL on ENOMEM.
 */
struct les_aggregate *les_pipeline_new_aggregate(struct les_consumer *c,
						 const struct les_aggregate_config *cfg,
						 bool records);

/*
 * The same, registered as the consumer's event sink and stats hook
 * ("aggregate":{...}), as the run's sink table does.
 */
struct les_aggregate *les_pipeline_attach_aggregate(struct les_consumer *c,
						    const struct les_aggregate_config *cfg,
						    bool records);

/* The endpoint's self-metrics and in-flight gauge, from c's and the kernel's counters. */
void les_pipeline_update_prom(struct les_prom *p, struct les_consumer *c,
			      const struct les_kernel_stats *ks);

#endif /* LES_WIRING_H */
