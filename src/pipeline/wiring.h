/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The sinks wired into the consumer: each registered as its event sink,
 * line sink or stats hook. The sinks know nothing of the consumer.
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
 * through les_consumer_output(), registered as the consumer's event sink
 * and stats hook ("aggregate":{...}); per-op records stop being lines
 * unless records (--records). NULL on ENOMEM or when the consumer has no
 * room.
 */
struct les_aggregate *les_pipeline_attach_aggregate(struct les_consumer *c,
						    const struct les_aggregate_config *cfg,
						    bool records);

/*
 * An endpoint of cfg, started, registered as the consumer's event sink
 * and stats hook ("prometheus":{...}). Returns 0, or a negative errno with
 * a message in err.
 */
int les_pipeline_attach_prom(struct les_prom **out, struct les_consumer *c,
			     const struct les_prom_config *cfg, char *err, size_t errlen);

/* The endpoint's self-metrics and in-flight gauge, from c's and the kernel's counters. */
void les_pipeline_update_prom(struct les_prom *p, struct les_consumer *c,
			      const struct les_kernel_stats *ks);

#endif /* LES_WIRING_H */
