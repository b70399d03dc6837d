// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The client-server join of PtlRPC requests (see rpcjoin.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "model/rpcjoin.h"

/*
 * Open addressing over a window of PROBE slots from the key's hash, every
 * slot of it looked at: a freed slot then never hides a key behind it, and
 * no tombstones are needed. A full window evicts its oldest record.
 */
#define PROBE 8

int les_rpcjoin_init(struct les_rpcjoin *j, size_t cap, uint64_t max_age_ns)
{
	size_t n = 16;

	memset(j, 0, sizeof(*j));
	while (n < cap)
		n *= 2;
	j->slots = calloc(n, sizeof(*j->slots));
	if (!j->slots)
		return -ENOMEM;
	j->cap = n;
	j->max_age_ns = max_age_ns;
	return 0;
}

void les_rpcjoin_free(struct les_rpcjoin *j)
{
	free(j->slots);
	j->slots = NULL;
	j->cap = 0;
}

/* A NID that names a node: not absent (size beyond the address), not LNET_NID_ANY. */
static bool nid_valid(const struct les_lnet_nid *n)
{
	return n->type != 0xff && n->size <= 12;
}

bool les_rpcjoin_client_key(const struct les_rec_rpc *r, struct les_rpcjoin_key *k)
{
	const uint32_t need = LES_RPC_F_XID | LES_RPC_F_NID;

	memset(k, 0, sizeof(*k));
	k->proto = r->proto;
	if (r->proto == LES_PROTO_SUNRPC) {
		if (!(r->flags & LES_RPC_F_LOCAL))
			return false;
		k->addr.client = r->local;
		k->xid = r->req_id;
		return true;
	}
	if (r->proto != LES_PROTO_PTLRPC || r->rpc_op != LES_RPC_OP_REQUEST ||
	    (r->flags & need) != need || !nid_valid(&r->nid))
		return false;
	k->addr.server_nid = r->nid;
	k->xid = r->xid;
	return true;
}

bool les_rpcjoin_server_key(const struct les_rec_srv *r, struct les_rpcjoin_key *k)
{
	memset(k, 0, sizeof(*k));
	k->proto = r->proto;
	k->xid = r->xid;
	if (r->proto == LES_PROTO_SUNRPC) {
		k->addr.client = r->client;
		return r->flags & LES_SRV_F_CLIENT;
	}
	k->addr.server_nid = r->self;
	return r->proto == LES_PROTO_PTLRPC && (r->flags & LES_SRV_F_PEER) && nid_valid(&r->self);
}

static bool key_eq(const struct les_rpcjoin_key *a, const struct les_rpcjoin_key *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/*
 * FNV-1a over the key's 8-byte words (the key is zeroed before it is
 * filled, its size a multiple of 8), then a final mix, so that the slot
 * index, the low bits, depends on every bit of the xid. Word by word: it
 * runs twice per request, at a server's 10^5 requests/s and more.
 */
static size_t key_hash(const struct les_rpcjoin_key *k)
{
	const unsigned char *p = (const unsigned char *)k;
	uint64_t h = 1469598103934665603ULL, w;

	_Static_assert(sizeof(*k) % sizeof(w) == 0, "the join key is hashed in 8-byte words");
	for (size_t i = 0; i < sizeof(*k); i += sizeof(w)) {
		memcpy(&w, p + i, sizeof(w));
		h = (h ^ w) * 1099511628211ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)h;
}

static void slot_drop(struct les_rpcjoin *j, struct les_rpcjoin_slot *s)
{
	j->counts.unjoined[s->side]++;
	s->used = false;
}

/*
 * Find the other side's record under k and take it into j's pair, or put
 * rec into a slot of the window. True when joined.
 */
static bool offer(struct les_rpcjoin *j, enum les_rpcjoin_side side,
		  const struct les_rpcjoin_key *k, const void *rec, size_t size, uint64_t now_ns)
{
	size_t h = key_hash(k), mask = j->cap - 1;
	struct les_rpcjoin_slot *free_slot = NULL, *oldest = NULL;

	for (size_t i = 0; i < PROBE; i++) {
		struct les_rpcjoin_slot *s = &j->slots[(h + i) & mask];

		if (!s->used) {
			free_slot = free_slot ? free_slot : s;
			continue;
		}
		if (key_eq(&s->key, k)) {
			if (s->side == side) {
				j->counts.duplicate[side]++;
				return false;
			}
			if (side == LES_JOIN_CLIENT) {
				memcpy(&j->client, rec, sizeof(j->client));
				j->server = s->rec.server;
			} else {
				j->client = s->rec.client;
				memcpy(&j->server, rec, sizeof(j->server));
			}
			s->used = false;
			j->counts.joined++;
			return true;
		}
		if (!oldest || s->seen_ns < oldest->seen_ns)
			oldest = s;
	}
	if (!free_slot) {
		slot_drop(j, oldest);
		free_slot = oldest;
	}
	free_slot->used = true;
	free_slot->side = (uint8_t)side;
	free_slot->seen_ns = now_ns;
	free_slot->key = *k;
	memcpy(&free_slot->rec, rec, size);
	return false;
}

bool les_rpcjoin_offer_client(struct les_rpcjoin *j, const struct les_rec_rpc *r, uint64_t now_ns)
{
	struct les_rpcjoin_key k;

	if (!les_rpcjoin_client_key(r, &k)) {
		j->counts.no_key[LES_JOIN_CLIENT]++;
		return false;
	}
	return offer(j, LES_JOIN_CLIENT, &k, r, sizeof(*r), now_ns);
}

bool les_rpcjoin_offer_server(struct les_rpcjoin *j, const struct les_rec_srv *r, uint64_t now_ns)
{
	struct les_rpcjoin_key k;

	if (!les_rpcjoin_server_key(r, &k)) {
		j->counts.no_key[LES_JOIN_SERVER]++;
		return false;
	}
	return offer(j, LES_JOIN_SERVER, &k, r, sizeof(*r), now_ns);
}

void les_rpcjoin_expire(struct les_rpcjoin *j, uint64_t now_ns, bool all)
{
	for (size_t i = 0; i < j->cap; i++) {
		struct les_rpcjoin_slot *s = &j->slots[i];

		if (s->used && (all || now_ns - s->seen_ns > j->max_age_ns))
			slot_drop(j, s);
	}
}

uint64_t les_rpcjoin_pending(const struct les_rpcjoin *j, enum les_rpcjoin_side side)
{
	uint64_t n = 0;

	for (size_t i = 0; i < j->cap; i++)
		n += j->slots[i].used && j->slots[i].side == side;
	return n;
}

static uint64_t span(uint64_t from, uint64_t to)
{
	return from && to > from ? to - from : 0;
}

void les_srv_times(const struct les_rec_srv *r, int64_t mono_to_epoch_ns, struct les_srv_times *t)
{
	/* sunrpc's arrival (rq_qtime) is monotonic already; Lustre's is CLOCK_REALTIME. */
	uint64_t arrival = (r->flags & LES_SRV_F_ARRIVAL_MONO)
				   ? r->arrival_real_ns
				   : r->arrival_real_ns - (uint64_t)mono_to_epoch_ns;
	uint64_t reply = (r->flags & LES_SRV_F_REPLY) ? r->reply_ns : 0;

	memset(t, 0, sizeof(*t));
	/* A stamp after the thread took it is the offset's noise: the queue was empty. */
	t->arrival_ns = arrival < r->start_ns ? arrival : r->start_ns;
	t->has_nrs = (r->flags & LES_SRV_F_NRS) && r->nrs_ns;
	if (t->has_nrs) {
		uint64_t nrs = r->nrs_ns < t->arrival_ns ? t->arrival_ns : r->nrs_ns;

		t->incoming_ns = span(t->arrival_ns, nrs);
		t->nrs_ns = span(nrs, r->start_ns);
	}
	t->queue_ns = span(t->arrival_ns, r->start_ns);
	t->handle_ns = span(r->start_ns, r->ts_ns);
	t->total_ns = span(t->arrival_ns, r->ts_ns);
	t->has_reply = reply != 0;
	t->reply_ns = span(t->arrival_ns, reply);
	t->has_bulk = r->flags & LES_SRV_F_BULK;
	t->bulk_ns = t->has_bulk ? r->bulk_ns : 0;
	t->has_io = r->flags & LES_SRV_F_IO;
	t->io_ns = t->has_io ? r->io_ns : 0;
}

const char *les_join_layer_name(enum les_join_layer l)
{
	static const char *const names[LES_JOIN_LAYER_MAX] = {
#define LES_JOIN_LAYER_NAME(id, name) [LES_JOIN_##id] = name,
		LES_JOIN_LAYERS(LES_JOIN_LAYER_NAME)
#undef LES_JOIN_LAYER_NAME
	};

	return (unsigned int)l < LES_JOIN_LAYER_MAX ? names[l] : NULL;
}

/* The client's PUTs held by LNet: 0 where the LNet plane did not see them. */
static int64_t client_lnet_ns(const struct les_rec_rpc *c)
{
	return (c->flags & LES_RPC_F_LNET) ? (int64_t)c->lnet_wait_ns : 0;
}

void les_rpcjoin_layers(const struct les_rec_rpc *c, const struct les_srv_times *t,
			int64_t ns[LES_JOIN_LAYER_MAX])
{
	ns[LES_JOIN_CLIENT_QUEUED] = (int64_t)c->backlog_ns;
	ns[LES_JOIN_CLIENT_LNET] = client_lnet_ns(c);
	ns[LES_JOIN_CLIENT_SERVICE] = (int64_t)c->rtt_ns;
	ns[LES_JOIN_NETWORK] = les_rpcjoin_network_ns(c, t);
	ns[LES_JOIN_SRV_INCOMING] = t->has_nrs ? (int64_t)t->incoming_ns : 0;
	ns[LES_JOIN_SRV_NRS] = t->has_nrs ? (int64_t)t->nrs_ns : 0;
	ns[LES_JOIN_SRV_HANDLE] = (int64_t)t->handle_ns;
	ns[LES_JOIN_SRV_REPLY] = t->has_reply ? (int64_t)t->reply_ns : 0;
	ns[LES_JOIN_SRV_BULK] = (int64_t)t->bulk_ns;
	ns[LES_JOIN_SRV_IO] = (int64_t)t->io_ns;
}

int64_t les_rpcjoin_network_ns(const struct les_rec_rpc *c, const struct les_srv_times *t)
{
	uint64_t server = t->has_reply ? t->reply_ns : t->total_ns;

	/* The PUT's LNet wait is inside rtt_ns too, before the wire: its own layer. */
	return (int64_t)c->rtt_ns - (int64_t)server - client_lnet_ns(c);
}
