/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A consumer over one Lustre mount (dev 1:77, /mnt/lustre), its output
 * /dev/null, for the unit tests that feed it records and read what its
 * event sink is handed.
 */
#ifndef LES_TEST_LUSTRE_BENCH_H
#define LES_TEST_LUSTRE_BENCH_H

#include <check.h>
#include "model/mounts.h"
#include "model/observed.h"
#include "pipeline/consumer.h"
#include "pipeline/wiring.h"
#include "sink/sink.h"

#define LES_TEST_LUSTRE_DEV ((1u << 20) | 77)

/* obs observes the Lustre mount; c writes to out and hands each event to fn. */
static inline void les_test_lustre_consumer(struct les_consumer *c,
					    const struct les_consumer_config *cfg,
					    struct les_observed *obs, struct les_sink_file *out,
					    les_event_fn fn, void *ctx)
{
	struct les_mount lustre;
	struct les_mount_table table = {.v = &lustre, .n = 1, .cap = 1};
	char err[256];

	ck_assert_int_eq(les_mount_parse_line("40 25 1:77 / /mnt/lustre rw - lustre "
					      "10.0.0.1@tcp:/fs rw",
					      &lustre),
			 0);
	ck_assert_int_eq(les_observed_select(obs, &table, NULL, 0, err, sizeof(err)), 0);
	les_mount_free(&lustre);
	ck_assert_int_eq(les_sink_file_open(out, "/dev/null"), 0);
	les_consumer_init(c, cfg, obs, "n1");
	les_pipeline_attach_file(c, out);
	ck_assert_int_eq(les_consumer_add_event_sink(c, fn, ctx), 0);
}

#endif /* LES_TEST_LUSTRE_BENCH_H */
