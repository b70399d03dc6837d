// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The record decoder: ring-buffer records as the consumer gets them, but
 * made of anything: short, oversized, unknown kinds, random bytes, exec
 * notices with any environment. The input is a sequence of records, each
 * a 2-byte little-endian length and that many bytes. Every line the
 * consumer puts out must be JSON.
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "pipeline/consumer.h"
#include "pipeline/wiring.h"
#include "enrich/enrich.h"

static struct les_consumer_config opts;
static struct les_enrich_config enrich;
static struct les_observed observed;
static struct les_sink_file out;
static struct les_consumer *c;

/* Line sink: each line parses. */
static int check_line(void *ctx, const struct les_event *ev)
{
	json_error_t jerr;
	json_t *root = json_loadb(ev->line, ev->line_len, JSON_DECODE_INT_AS_REAL, &jerr);

	(void)ctx;
	if (!root) {
		fprintf(stderr, "not JSON (%s): %.*s\n", jerr.text, (int)ev->line_len, ev->line);
		__builtin_trap();
	}
	json_decref(root);
	return 0;
}

static void add_mount(uint32_t dev, const char *mnt, const char *type, const char *fs)
{
	struct les_observed_mount *m = &observed.m[observed.n++];

	m->dev = dev;
	m->family = LES_FS_FUSE;
	m->mount_point = strdup(mnt);
	m->fs_type = strdup(type);
	m->fs_name = strdup(fs);
	m->json_len = (size_t)snprintf(m->json, sizeof(m->json),
				       "\"fs_type\":\"%s\",\"fs\":\"%s\",\"mount\":\"%s\"", type,
				       fs, mnt);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct les_enricher *e = NULL;
	char err[256];

	(void)argc;
	(void)argv;
	enrich.no_user_lookup = true;
	enrich.proc_cache_size = 64;
	enrich.user_cache_size = 16;
	enrich.env_tags[enrich.n_env_tags++] = "PROJECT";
	add_mount(42, "/mnt/t", "fuse.les-testfs", "les-testfs");
	add_mount(0, "/mnt/zero", "nfs4", "server:/export");
	if (les_sink_file_open(&out, "/dev/null"))
		return 1;
	c = calloc(1, sizeof(*c));
	if (!c || les_enrich_new(&e, &enrich, "fuzzhost", err, sizeof(err)))
		return 1;
	les_consumer_init(c, &opts, &observed, "fuzzhost");
	les_pipeline_attach_file(c, &out);
	c->enricher = e;
	les_consumer_add_line_sink(c, check_line, NULL);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	while (size >= 2) {
		size_t len = (size_t)data[0] | (size_t)data[1] << 8;
		void *rec;

		data += 2;
		size -= 2;
		if (len > size)
			len = size;
		/* An exact-size, aligned copy, as the ring hands it over. */
		rec = malloc(len ? len : 1);
		if (!rec)
			return 0;
		memcpy(rec, data, len);
		les_consumer_on_record(c, rec, len);
		free(rec);
		data += len;
		size -= len;
	}
	return 0;
}
