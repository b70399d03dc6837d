/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Records to JSON Lines, through the one JSON writer. */
#ifndef LES_FORMAT_H
#define LES_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "enrich/enrich.h"
#include "util/json.h"
#include "les_record.h"
#include "model/observed.h"

#define LES_FMT_ERRNO_MAX 255 /* errnos whose members are encoded in advance */
#define LES_FMT_MEMBERS	  80

/* A few record members, encoded once. */
struct les_fmt_members {
	uint8_t len;
	char json[LES_FMT_MEMBERS];
};

/* What every record shares and the per-record path must not recompute. */
struct les_fmt_ctx {
	char host_json[300]; /* "host":"…" */
	size_t host_json_len;
	/* "op":…,"access_intent":…,"method":… per access op and method */
	struct les_fmt_members access_op[LES_OP_MAX][LES_ATTACH_MAX];
	/* "errno":E,"errno_class":… per errno E up to LES_FMT_ERRNO_MAX */
	struct les_fmt_members errno_members[LES_FMT_ERRNO_MAX + 1];
	int64_t mono_to_epoch_ns; /* add to a BPF timestamp for wall-clock time */
	bool file_id;
};

void les_fmt_ctx_init(struct les_fmt_ctx *fc, const char *host, bool file_id);
/* Re-read the offset between CLOCK_MONOTONIC and CLOCK_REALTIME. */
void les_fmt_ctx_sync_clock(struct les_fmt_ctx *fc);
uint64_t les_fmt_epoch_ns(const struct les_fmt_ctx *fc, uint64_t mono_ns);

/* The op name of an RPC record: FUSE opcode name, PtlRPC op, ... */
const char *les_format_rpc_op(const struct les_rec_rpc *r);
/* The target ("lustre-OST0001") of a Lustre client device name, as a length. */
size_t les_ptlrpc_target_len(const char *name, size_t max);
/* queue_wait and lock_wait records: wait_id and parent_wait_id. */
bool les_rpc_op_is_wait(unsigned int rpc_op);
/* An LNet NID as lctl prints it; its length, 0 if none or cut. */
#define LES_LNET_NID_STR_MAX 80
size_t les_lnet_nid_str(const struct les_lnet_nid *nid, char *buf, size_t size);
/* The LND number of a network type's name ("tcp": 2), -1 if none; is_ip: its addresses are IP. */
int les_lnet_lnd_type(const char *name, size_t len, bool *is_ip);

/* en: the record's enrichment, NULL to leave its fields out. */
void les_format_access(struct jw *w, const struct les_fmt_ctx *fc,
		       const struct les_observed_mount *m, const struct les_rec_access *r,
		       const struct les_enriched *en);
/* wire_job: the job the request is charged to instead (les_enrich_wire_job), or NULL. */
void les_format_rpc(struct jw *w, const struct les_fmt_ctx *fc, const struct les_observed_mount *m,
		    const struct les_rec_rpc *r, const struct les_enriched *en,
		    const char *wire_job);
/* A request a PtlRPC service handled ("type":"srv"). */
void les_format_srv(struct jw *w, const struct les_fmt_ctx *fc, const struct les_rec_srv *r);
/* An LNet message this node sent ("type":"lnet"). */
void les_format_lnet(struct jw *w, const struct les_fmt_ctx *fc, const struct les_rec_lnet *r);
/* A client's request and its server's record, joined ("type":"rpc_join", model/rpcjoin.h). */
void les_format_rpc_join(struct jw *w, const struct les_fmt_ctx *fc, const struct les_rec_rpc *c,
			 const struct les_rec_srv *s);
void les_format_rpc_event(struct jw *w, const struct les_fmt_ctx *fc,
			  const struct les_observed_mount *m, const struct les_rec_rpc_event *r,
			  const struct les_enriched *en);

/*
 * A record kind's formatter, the column of the kinds list (model/kinds.h)
 * that format/ expands: rec is the kind's struct; wire_job as for
 * les_format_rpc (NULL for kinds that have none).
 */
typedef void les_rec_format_fn(struct jw *w, const struct les_fmt_ctx *fc,
			       const struct les_observed_mount *m, const void *rec,
			       const struct les_enriched *en, const char *wire_job);

/* The kinds list's formatters, as les_rec_format_fn. */
les_rec_format_fn les_format_access_line, les_format_rpc_line, les_format_rpc_event_line,
	les_format_srv_line, les_format_lnet_line;

/* The formatter of kind's lines; NULL for a notice, or a kind no row names. */
les_rec_format_fn *les_format_of(unsigned int kind);

#endif /* LES_FORMAT_H */
