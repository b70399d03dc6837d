// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The optional outputs' entry points in a binary configured without them
 * (-DLES_WITH_KAFKA=OFF, -DLES_WITH_PROMETHEUS=OFF, -DLES_WITH_OTLP=OFF), so that main wires the
 * stages the same way in every build. They are never reached with the
 * output asked for: the options refuse its settings first (src/cli/options.c,
 * not_built_in), so each behaves as the real module does when its output
 * is not configured. Empty when both outputs are built.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "sink/otlp.h"
#include "sink/prom.h"
#include "sink/sink_kafka.h"

#if !LES_HAVE_KAFKA
int les_sink_kafka_check(const struct les_kafka_config *cfg, char *err, size_t err_size)
{
	(void)cfg, (void)err, (void)err_size;
	return 0;
}

int les_sink_kafka_open(struct les_sink_kafka **out, const struct les_kafka_config *cfg,
			char *err, size_t err_size)
{
	(void)cfg, (void)err, (void)err_size;
	*out = NULL;
	return 0;
}

int les_sink_kafka_line(void *ctx, const struct les_event *ev)
{
	(void)ctx, (void)ev;
	return 0;
}

void les_sink_kafka_poll(struct les_sink_kafka *k)
{
	(void)k;
}

uint64_t les_sink_kafka_flush(struct les_sink_kafka *k, uint64_t timeout_ns)
{
	(void)k, (void)timeout_ns;
	return 0;
}

void les_sink_kafka_stats(void *ctx, struct jw *w)
{
	(void)ctx, (void)w;
}

void les_sink_kafka_counters(const struct les_sink_kafka *k, struct les_kafka_counters *out)
{
	(void)k;
	memset(out, 0, sizeof(*out));
}

uint64_t les_sink_kafka_close(struct les_sink_kafka *k)
{
	(void)k;
	return 0;
}

void les_kafka_properties_show(FILE *out)
{
	(void)out;
}
#endif /* !LES_HAVE_KAFKA */

#if !LES_HAVE_PROMETHEUS
int les_prom_parse_listen(const char *s, char *host, size_t host_cap, uint16_t *port)
{
	(void)s, (void)host, (void)host_cap, (void)port;
	return -EINVAL;
}

int les_prom_open(struct les_prom **out, const struct les_prom_config *cfg, char *err,
		  size_t errlen)
{
	(void)cfg;
	*out = NULL;
	snprintf(err, errlen, "the Prometheus endpoint is not built into this binary");
	return -ENOTSUP;
}

uint16_t les_prom_port(const struct les_prom *p)
{
	(void)p;
	return 0;
}

void les_prom_tick(struct les_prom *p, uint64_t now_ns)
{
	(void)p, (void)now_ns;
}

void les_prom_update_stats(struct les_prom *p, const struct les_prom_consumer_stats *cs,
			   const struct les_kernel_stats *ks, les_prom_describe_fn describe,
			   void *describe_ctx)
{
	(void)p, (void)cs, (void)ks, (void)describe, (void)describe_ctx;
}

int les_prom_add(void *ctx, const struct les_event *ev)
{
	(void)ctx, (void)ev;
	return 0;
}

int les_prom_add_join(void *ctx, const struct les_event *ev)
{
	(void)ctx, (void)ev;
	return 0;
}

void les_prom_stats_json(void *ctx, struct jw *w)
{
	(void)ctx, (void)w;
}

void les_prom_update_kafka(struct les_prom *p, const struct les_kafka_counters *kc)
{
	(void)p, (void)kc;
}

void les_prom_update_otlp(struct les_prom *p, const struct les_otlp_counters *oc)
{
	(void)p, (void)oc;
}

void les_prom_free(struct les_prom *p)
{
	(void)p;
}
#endif /* !LES_HAVE_PROMETHEUS */

#if !LES_HAVE_OTLP
uint64_t les_otlp_dropped(const struct les_otlp_counters *c)
{
	(void)c;
	return 0;
}

int les_otlp_check(const struct les_otlp_config *cfg, char *err, size_t errlen)
{
	(void)cfg, (void)err, (void)errlen;
	return 0;
}

int les_otlp_open(struct les_otlp **out, const struct les_otlp_config *cfg, char *err,
		  size_t errlen)
{
	(void)cfg, (void)err, (void)errlen;
	*out = NULL;
	return 0;
}

int les_otlp_event(void *ctx, const struct les_event *ev)
{
	(void)ctx, (void)ev;
	return 0;
}

void les_otlp_tick(struct les_otlp *o, uint64_t now_ns)
{
	(void)o, (void)now_ns;
}

void les_otlp_flush(struct les_otlp *o)
{
	(void)o;
}

bool les_otlp_queue_full(const struct les_otlp *o)
{
	(void)o;
	return false;
}

void les_otlp_stats_json(void *ctx, struct jw *w)
{
	(void)ctx, (void)w;
}

void les_otlp_counters(const struct les_otlp *o, struct les_otlp_counters *out)
{
	(void)o;
	memset(out, 0, sizeof(*out));
}

uint64_t les_otlp_close(struct les_otlp *o)
{
	(void)o;
	return 0;
}
#endif /* !LES_HAVE_OTLP */
