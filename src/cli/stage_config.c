// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The options, translated into each stage's configuration. */
#include <string.h>
#include "cli/stage_config.h"

void les_kafka_config_of(const struct les_options *o, struct les_kafka_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->brokers = o->kafka_brokers;
	cfg->topic = o->kafka_topic;
	cfg->key = o->kafka_key;
	memcpy(cfg->props, o->kafka_props, o->n_kafka_props * sizeof(cfg->props[0]));
	cfg->n_props = o->n_kafka_props;
	cfg->queue_bytes = o->kafka_queue_bytes;
	cfg->flush_timeout_ns = o->kafka_flush_timeout_ns;
	cfg->verbose = o->verbose;
}

void les_replay_config_of(const struct les_options *o, struct les_replay_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->input_path = o->input_path;
	cfg->speed = o->replay_speed;
	cfg->interval_ns = o->top_interval_ns;
	cfg->batch = o->top_batch;
}

void les_tracer_config_of(const struct les_options *o, struct les_tracer_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ringbuf_bytes = o->ringbuf_bytes;
	cfg->wakeup_bytes = o->wakeup_bytes;
	cfg->inflight_max = o->inflight_max;
	cfg->threads_max = o->threads_max;
	cfg->min_latency_ns = o->min_latency_ns;
	cfg->filter_uid = o->filter_uid;
	cfg->filter_pid = o->filter_pid;
	cfg->filter_comm = o->filter_comm;
	cfg->filter_ops = o->filter_ops;
	cfg->filter_intents = o->filter_intents;
	cfg->file_id = o->file_id;
	cfg->mountinfo_path = o->mountinfo_path;
	cfg->verbose = o->verbose;
}

void les_consumer_config_of(const struct les_options *o, struct les_consumer_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->filter_job = o->filter_job;
	cfg->count = o->count;
	cfg->file_id = o->file_id;
}

void les_aggregate_config_of(const struct les_options *o, struct les_aggregate_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->window_ns = o->aggregate_ns;
	cfg->group_by = o->group_by;
	cfg->max_groups = o->max_groups;
}

void les_prom_config_of(const struct les_options *o, struct les_prom_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->listen = o->prom_listen;
	cfg->path = o->prom_path;
	cfg->uid_labels = o->prom_uid_labels;
	cfg->histogram_process = o->prom_histogram_process;
	cfg->slurm_label = o->prom_slurm_label;
	cfg->series_ttl_ns = o->series_ttl_ns;
}

void les_run_config_of(const struct les_options *o, struct les_run_config *cfg)
{
	*cfg = (struct les_run_config){
		.mountinfo_path = o->mountinfo_path,
		.mounts = o->mounts,
		.n_mounts = o->n_mounts,
		.poll_ms = o->poll_ms,
		.duration_ns = o->duration_ns,
		.stats_interval_ns = o->stats_interval_ns,
		.stale_timeout_ns = o->stale_timeout_ns,
		.verbose = o->verbose != 0,
	};
}

void les_sinks_config_of(const struct les_options *o, struct les_sinks_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->output = o->output;
	les_kafka_config_of(o, &cfg->kafka);
	cfg->otlp = (struct les_otlp_config){
		.url = o->otlp_url,
		.sample = o->otlp_sample,
		/* A capture replayed was not filtered by this run's --min-latency. */
		.min_latency = o->min_latency_ns != 0 && !o->input_path,
		.queue_bytes = o->otlp_queue_bytes,
		.flush_timeout_ns = o->otlp_flush_timeout_ns,
		.records_clock = o->input_path != NULL,
		.verbose = o->verbose != 0,
		.traces = o->otlp_traces,
		.metrics = o->otlp_metrics,
	};
	les_aggregate_config_of(o, &cfg->aggregate);
	cfg->otlp.aggregate = cfg->aggregate;
	cfg->records = o->records;
	les_prom_config_of(o, &cfg->prom);
	cfg->summary = o->summary;
	cfg->top = o->top;
	cfg->top_interval_ns = o->top_interval_ns;
	cfg->top_batch = o->top_batch;
	cfg->verbose = o->verbose != 0;
}
