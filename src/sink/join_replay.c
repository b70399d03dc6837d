// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The join of saved captures (see join_replay.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "decode/joinrec.h"
#include "format/format.h"
#include "sink/join_replay.h"
#include "util/json.h"

#define LINE_BUF      (64 * 1024) /* a longer line is counted bad */
#define OUT_BUF	      8192	  /* an rpc_join line is under 2 KiB */
#define SLOTS_DEFAULT 65536

struct replay {
	const struct les_join_replay_config *cfg;
	struct les_join_replay_stats *st;
	struct les_rpcjoin join;
	struct les_fmt_ctx fc;
	struct les_rec_rpc client;
	struct les_rec_srv server;
	struct jw w;
	char *line, *out;
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* The pair the join just made, as the consumer writes it. */
static void write_join(struct replay *r)
{
	jw_reset(&r->w);
	les_format_rpc_join(&r->w, &r->fc, &r->join.client, &r->join.server);
	if (r->w.overflow) {
		r->st->cut++;
		return;
	}
	fwrite(r->w.buf, 1, r->w.len, r->cfg->out);
}

/* One line: offered to its side of the join (no clock: nothing expires before the end). */
static void offer_line(struct replay *r, const char *line)
{
	bool joined = false;

	switch (les_joinrec_parse(line, &r->client, &r->server)) {
	case LES_JOINREC_CLIENT:
		joined = les_rpcjoin_offer_client(&r->join, &r->client, 0);
		break;
	case LES_JOINREC_SERVER:
		joined = les_rpcjoin_offer_server(&r->join, &r->server, 0);
		break;
	case LES_JOINREC_SKIPPED:
		r->st->skipped++;
		break;
	case LES_JOINREC_BAD:
		r->st->bad++;
		break;
	default:
		break;
	}
	if (joined)
		write_join(r);
}

static int read_file(struct replay *r, const char *path, char *err, size_t errlen)
{
	gzFile in = strcmp(path, "-") ? gzopen(path, "rb") : gzdopen(dup(STDIN_FILENO), "rb");
	bool cut = false;
	int zerr = Z_OK;

	if (!in)
		return fail(err, errlen, "%s: %s", path, strerror(errno ? errno : ENOMEM));
	while (gzgets(in, r->line, LINE_BUF)) {
		size_t n = strlen(r->line);
		bool whole = n && r->line[n - 1] == '\n';

		/* A line longer than the buffer: its pieces are one bad line. */
		if (cut || !whole) {
			if (!cut)
				r->st->lines++, r->st->bad++;
			cut = !whole;
			continue;
		}
		r->st->lines++;
		offer_line(r, r->line);
	}
	gzerror(in, &zerr);
	gzclose(in);
	if (zerr != Z_OK && zerr != Z_STREAM_END)
		return fail(err, errlen, "%s: not a readable gzip stream", path);
	return 0;
}

/* The join_counts line: what joined, and by side what did not. */
static void write_counts(struct replay *r)
{
	const struct les_rpcjoin_counts *n = &r->join.counts;
	static const char *const sides[LES_JOIN_SIDES] = {"client", "server"};

	jw_reset(&r->w);
	jw_obj_begin(&r->w);
	jw_kv_cstr(&r->w, "type", "join_counts");
	jw_kv_u64(&r->w, "lines", r->st->lines);
	jw_kv_u64(&r->w, "bad", r->st->bad);
	jw_kv_u64(&r->w, "skipped", r->st->skipped);
	jw_kv_u64(&r->w, "cut", r->st->cut);
	jw_kv_u64(&r->w, "joined", n->joined);
	for (int i = 0; i < LES_JOIN_SIDES; i++) {
		jw_key(&r->w, sides[i]);
		jw_obj_begin(&r->w);
		jw_kv_u64(&r->w, "unjoined", n->unjoined[i]);
		jw_kv_u64(&r->w, "no_key", n->no_key[i]);
		jw_kv_u64(&r->w, "duplicate", n->duplicate[i]);
		jw_obj_end(&r->w);
	}
	jw_obj_end(&r->w);
	jw_newline(&r->w);
	fwrite(r->w.buf, 1, r->w.len, r->cfg->out);
}

int les_join_replay_run(const struct les_join_replay_config *cfg, struct les_join_replay_stats *st,
			char *err, size_t errlen)
{
	struct replay *r = calloc(1, sizeof(*r));
	int ret = -1;

	memset(st, 0, sizeof(*st));
	if (!r)
		return fail(err, errlen, "%s", strerror(ENOMEM));
	r->cfg = cfg;
	r->st = st;
	r->line = malloc(LINE_BUF);
	r->out = malloc(OUT_BUF);
	if (!r->line || !r->out ||
	    les_rpcjoin_init(&r->join, cfg->slots ? cfg->slots : SLOTS_DEFAULT, UINT64_MAX)) {
		fail(err, errlen, "%s", strerror(ENOMEM));
		goto out;
	}
	/* Times were read back onto the lines' wall clock: no offset to add. */
	les_fmt_ctx_init(&r->fc, cfg->host, false);
	r->fc.mono_to_epoch_ns = 0;
	jw_init(&r->w, r->out, OUT_BUF);
	for (size_t i = 0; i < cfg->n_inputs; i++)
		if (read_file(r, cfg->inputs[i], err, errlen))
			goto out;
	les_rpcjoin_expire(&r->join, 0, true);
	st->counts = r->join.counts;
	write_counts(r);
	if (fflush(cfg->out) || ferror(cfg->out)) {
		fail(err, errlen, "write: %s", strerror(errno ? errno : EIO));
		goto out;
	}
	ret = 0;
out:
	les_rpcjoin_free(&r->join);
	free(r->line);
	free(r->out);
	free(r);
	return ret;
}
