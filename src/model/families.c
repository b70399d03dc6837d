// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The metric families' rules (see families.h). */
#include <stdint.h>
#include <string.h>
#include "model/families.h"
#include "model/ops.h"
#include "model/rpcjoin.h"
#include "util/utf8.h"

static const char *const prefixes[LES_FSET_MAX] = {
	[LES_FSET_EXPORTER] = "lustre_client_",
	[LES_FSET_OURS] = "lustre_ebpf_stream_client_",
};

const char *les_family_prefix(enum les_family_set fset)
{
	return prefixes[fset];
}

/* Bytes copied as they are: ASCII other than the three the format escapes. */
static size_t plain_run(const unsigned char *p)
{
	size_t n = 0;

	while (p[n] && p[n] < 0x80 && p[n] != '\\' && p[n] != '"' && p[n] != '\n')
		n++;
	return n;
}

size_t les_label_escape(const char *s, char *out, size_t cap)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	if (!cap)
		return 0;
	while (*p) {
		const char *piece = (const char *)p;
		size_t n = plain_run(p), adv;

		if (n) {
			if (n > cap - 1 - o)
				n = cap - 1 - o; /* plain bytes can be cut anywhere */
			adv = n;
		} else if (*p == '\\') {
			piece = "\\\\", n = 2, adv = 1;
		} else if (*p == '"') {
			piece = "\\\"", n = 2, adv = 1;
		} else if (*p == '\n') {
			piece = "\\n", n = 2, adv = 1;
		} else {
			adv = n = les_utf8_seq_len(p);
			if (!adv)
				piece = "\xef\xbf\xbd", n = 3, adv = 1; /* U+FFFD */
		}
		if (!n || o + n > cap - 1)
			break;
		memcpy(out + o, piece, n);
		o += n;
		p += adv;
	}
	out[o] = '\0';
	return o;
}

struct keybuf {
	char *buf;
	size_t len;
	bool overflow;
};

/* Append name="value"; a NULL value is the empty string, as Prometheus has no null. */
static void kb_label(struct keybuf *k, const char *name, const char *value)
{
	size_t name_len = strlen(name), val_len;

	if (!value)
		value = "";
	val_len = strlen(value);
	/* Worst case: every byte becomes 3 (U+FFFD); plus ,name="" and the NUL. */
	if (k->overflow || k->len + name_len + 3 * val_len + 5 > LES_LABELS_MAX) {
		k->overflow = true;
		return;
	}
	if (k->len)
		k->buf[k->len++] = ',';
	memcpy(k->buf + k->len, name, name_len);
	k->len += name_len;
	k->buf[k->len++] = '=';
	k->buf[k->len++] = '"';
	k->len += les_label_escape(value, k->buf + k->len, LES_LABELS_MAX - k->len - 1);
	k->buf[k->len++] = '"';
}

/* v in decimal, in buf[16]; the hot path avoids snprintf. */
static const char *u32_decimal(uint32_t v, char *buf)
{
	char *p = buf + 15;

	*p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
}

static bool is_lustre_mount(const struct les_event *ev)
{
	return ev->fs_type && strcmp(ev->fs_type, "lustre") == 0;
}

/* Which set of families a record's series of this kind belongs to. */
enum les_family_set les_family_set_of(const struct les_event *ev, enum les_series_kind kind)
{
	bool exporter = false;

	switch (kind) {
	case LES_SK_ACCESS:
	case LES_SK_ACCESS_HIST:
		exporter = is_lustre_mount(ev);
		break;
	case LES_SK_RPC:
	case LES_SK_RPC_HIST:
		exporter = ev->proto_id == LES_PROTO_PTLRPC && ev->rpc_op == LES_RPC_OP_QUEUE_WAIT;
		break;
	case LES_SK_RPC_EVENT:
		exporter = ev->proto_id == LES_PROTO_PTLRPC && ev->event_id <= LES_EV_NOTCONN;
		break;
	case LES_SK_INFLIGHT:
	case LES_SK_PTLRPC:
		exporter = ev->proto_id == LES_PROTO_PTLRPC;
		break;
	default:
		break;
	}
	return exporter ? LES_FSET_EXPORTER : LES_FSET_OURS;
}

/*
 * The label set of a record, in the exporter's order; kind decides
 * access_intent and op vs event, with_process the process. Our families
 * add fs_type first and always carry slurm_job_id (the record's job_id,
 * under the exporter's name so that one query covers both sets); the
 * exporter's carry it only with --slurm-jobid, as it does. The set is
 * left in *fset_out.
 */
size_t les_labels_make(char *buf, const struct les_label_opts *opts, const struct les_event *ev,
		       enum les_series_kind kind, bool with_process, enum les_family_set *fset_out)
{
	struct keybuf k = {.buf = buf};
	enum les_family_set fset = les_family_set_of(ev, kind);
	char uid[16];

	*fset_out = fset;
	if (fset == LES_FSET_OURS)
		kb_label(&k, "fs_type", ev->fs_type);
	kb_label(&k, "fs", ev->fs);
	kb_label(&k, "mount", ev->mount);
	if (kind == LES_SK_ACCESS || kind == LES_SK_ACCESS_HIST)
		kb_label(&k, "access_intent", ev->access_intent);
	if (kind == LES_SK_ACCESS || kind == LES_SK_ACCESS_HIST || kind == LES_SK_RPC ||
	    kind == LES_SK_RPC_HIST)
		kb_label(&k, "op", ev->op);
	if (opts->uid) {
		kb_label(&k, "uid", u32_decimal(ev->uid, uid));
		kb_label(&k, "username", ev->username);
	}
	if (with_process)
		kb_label(&k, "process", ev->process);
	/* The exporter's actor_type is by name only: a job's dd is a "user". */
	kb_label(&k, "actor_type",
		 fset == LES_FSET_EXPORTER && ev->actor_by_name ? ev->actor_by_name
								: ev->actor_type);
	if (fset == LES_FSET_OURS || opts->slurm)
		kb_label(&k, "slurm_job_id", ev->job_id);
	return k.overflow ? 0 : k.len;
}

const uint64_t les_family_bucket_ns[LES_FAMILY_BUCKETS] = {
	10000,	  50000,     250000,	1000000,    2500000,	10000000,
	25000000, 100000000, 250000000, 1000000000, 2500000000, 10000000000,
};

unsigned int les_family_bucket(uint64_t ns)
{
	unsigned int i = 0;

	while (i < LES_FAMILY_BUCKETS && ns > les_family_bucket_ns[i])
		i++;
	return i;
}

size_t les_join_labels_make(char *buf, const struct les_join_view *v, unsigned int layer)
{
	struct keybuf k = {.buf = buf};

	kb_label(&k, "lustre_jobid", v->job);
	kb_label(&k, "target", v->target);
	kb_label(&k, "client_nid", v->client_nid);
	kb_label(&k, "layer", les_join_layer_name(layer));
	return k.overflow ? 0 : k.len;
}
