/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The command line's options, translated into each stage's own
 * configuration: the stages take their struct, and only cli/ knows
 * struct les_options.
 */
#ifndef LES_STAGE_CONFIG_H
#define LES_STAGE_CONFIG_H

#include "cli/options.h"
#include "pipeline/consumer.h"
#include "pipeline/run.h"
#include "probe/tracer.h"
#include "sink/aggregate.h"
#include "sink/prom.h"
#include "sink/replay.h"
#include "sink/sink_kafka.h"

/* --kafka-*, -X and -v. */
void les_kafka_config_of(const struct les_options *o, struct les_kafka_config *cfg);

/* --input, --speed, --interval, --batch. */
void les_replay_config_of(const struct les_options *o, struct les_replay_config *cfg);

/* The BPF object's maps, filters and --file-id. */
void les_tracer_config_of(const struct les_options *o, struct les_tracer_config *cfg);

/* The run loop's timings, --duration, the mounts it follows, the output's name, -v. */
void les_run_config_of(const struct les_options *o, struct les_run_config *cfg);

/* --job, --count, --file-id. */
void les_consumer_config_of(const struct les_options *o, struct les_consumer_config *cfg);

/* --aggregate, --group-by, --max-groups (the host is the consumer's). */
void les_aggregate_config_of(const struct les_options *o, struct les_aggregate_config *cfg);

/* --prometheus, --web.telemetry-path, the label flags, --series-ttl. */
void les_prom_config_of(const struct les_options *o, struct les_prom_config *cfg);

/* Every sink's (pipeline/sinks.h), from its own config_of above. */
void les_sinks_config_of(const struct les_options *o, struct les_sinks_config *cfg);

#endif /* LES_STAGE_CONFIG_H */
