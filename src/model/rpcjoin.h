/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The join of a client's request record with the server's record of the
 * same request, where both sides are traced by one consumer (a client
 * mounted on its own servers). The key is (protocol, the address that
 * names the connection on both sides, xid):
 * - PtlRPC: the server's NID the request went to: the client's import peer
 *   and the server's rq_self are the same NID, and the client's xids are
 *   unique on that client.
 * - sunrpc (NFS): the client's address and port, its socket's own on the
 *   client and rq_addr on the server, with the 32-bit xid, which is unique
 *   per transport only (docs/nfs.md: what this key cannot tell apart).
 * Whichever
 * side comes first waits in a bounded table for the other; one that waits
 * in vain (evicted when its slots are full, too old, or left at the end)
 * is counted as unjoined on its side, never dropped silently.
 *
 * The table is allocated once (les_rpcjoin_init); offering a record
 * allocates nothing.
 */
#ifndef LES_RPCJOIN_H
#define LES_RPCJOIN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "les_record.h"

enum les_rpcjoin_side {
	LES_JOIN_CLIENT = 0, /* a struct les_rec_rpc (PtlRPC request, sunrpc task) */
	LES_JOIN_SERVER,     /* a struct les_rec_srv (of either protocol) */
	LES_JOIN_SIDES,
};

/* Zeroed before it is filled, so that its bytes (hashed, compared) hold no garbage. */
struct les_rpcjoin_key {
	uint32_t proto; /* enum les_rpc_proto: PTLRPC or SUNRPC */
	union {
		struct les_lnet_nid server_nid; /* PtlRPC */
		struct les_sock_addr client;	/* sunrpc */
	} addr;
	uint64_t xid;
};

struct les_rpcjoin_slot {
	bool used;
	uint8_t side;	  /* enum les_rpcjoin_side */
	uint64_t seen_ns; /* when it was offered, the consumer's monotonic clock */
	struct les_rpcjoin_key key;
	union {
		struct les_rec_rpc client;
		struct les_rec_srv server;
	} rec;
};

struct les_rpcjoin_counts {
	uint64_t joined;
	/* By side: waited in vain (evicted, expired or left at the end). */
	uint64_t unjoined[LES_JOIN_SIDES];
	/* By side: records without a key (no xid or NID: no module BTF; sunrpc: no socket address). */
	uint64_t no_key[LES_JOIN_SIDES];
	/* By side: a second record with a key already waiting (the first one is kept). */
	uint64_t duplicate[LES_JOIN_SIDES];
};

struct les_rpcjoin {
	struct les_rpcjoin_slot *slots;
	size_t cap;	     /* a power of 2 */
	uint64_t max_age_ns; /* a record waiting longer is unjoined */
	struct les_rpcjoin_counts counts;
	/* The pair the last les_rpcjoin_offer that returned true joined. */
	struct les_rec_rpc client;
	struct les_rec_srv server;
};

/*
 * A server record's steps as durations (ns), each on the server's own
 * clock: arrival is Lustre's CLOCK_REALTIME stamp moved onto the monotonic
 * clock by mono_to_epoch_ns (the consumer's offset between the two).
 * A step whose two ends are not both known is 0 with its has_ false.
 */
struct les_srv_times {
	uint64_t arrival_ns;  /* monotonic */
	uint64_t incoming_ns; /* arrival -> NRS enqueue: the incoming queue (unpack, checks) */
	uint64_t nrs_ns;      /* NRS enqueue -> a thread takes it: the policy's queue */
	uint64_t queue_ns;    /* arrival -> a thread takes it (incoming + NRS) */
	uint64_t handle_ns; /* a thread takes it -> the handler returns (Lustre's "processed in") */
	uint64_t reply_ns;  /* arrival -> the reply sent, with has_reply */
	uint64_t total_ns;  /* arrival -> the handler returns (Lustre's "total") */
	uint64_t bulk_ns;   /* inside handle_ns: PtlRPC's bulk transfers, with has_bulk */
	uint64_t io_ns;     /* inside handle_ns: the OSD's block I/O or nfsd's file I/O, with has_io */
	bool has_nrs, has_reply, has_bulk, has_io;
};

void les_srv_times(const struct les_rec_srv *r, int64_t mono_to_epoch_ns, struct les_srv_times *t);

/*
 * The durations of a joined request that a window sums per group (job,
 * target, client NID): each is the rpc_join line's field of that name, 0
 * where the line has null, so a window's sums are the sums over its lines.
 * client_queued (created -> first send: the RPC slot's wait), client_lnet
 * (the request's PUT held by LNet for credits or a delay rule), network
 * and the server's incoming, NRS and handling steps are disjoint parts of
 * the request's time; client_service is the client's whole wait for the
 * reply, server_reply the server's arrival -> reply sent; server_bulk (the
 * bulk transfers) and server_io (the OSD's block I/O, nfsd's file I/O) lie
 * inside server_handle.
 */
#define LES_JOIN_LAYERS(X)                         \
	X(CLIENT_QUEUED, "client_queued_ns")       \
	X(CLIENT_LNET, "client_lnet_wait_ns")      \
	X(CLIENT_SERVICE, "client_service_ns") \
	X(NETWORK, "network_ns")               \
	X(SRV_INCOMING, "server_incoming_ns")  \
	X(SRV_NRS, "server_nrs_ns")            \
	X(SRV_HANDLE, "server_handle_ns")      \
	X(SRV_REPLY, "server_reply_ns")        \
	X(SRV_BULK, "server_bulk_ns")          \
	X(SRV_IO, "server_io_ns")

/* clang-format off */
enum les_join_layer {
#define LES_JOIN_LAYER_ENUM(id, name) LES_JOIN_##id,
	LES_JOIN_LAYERS(LES_JOIN_LAYER_ENUM)
#undef LES_JOIN_LAYER_ENUM
	LES_JOIN_LAYER_MAX,
};
/* clang-format on */

/* The layer's name: its rpc_join field (and window member). */
const char *les_join_layer_name(enum les_join_layer l);

/* A joined request as the windows group it: the keys NULL where the line has null. */
struct les_join_view {
	const char *job;	/* lustre_jobid: the job on the wire */
	const char *target;	/* the server's target */
	const char *client_nid; /* the client's NID as the server knows it */
	int64_t ns[LES_JOIN_LAYER_MAX];
};

/* The layers of a joined pair (t: the server record's steps). */
void les_rpcjoin_layers(const struct les_rec_rpc *c, const struct les_srv_times *t,
			int64_t ns[LES_JOIN_LAYER_MAX]);

/*
 * The joined request's split: the client's service time (send -> reply, its
 * clock) less the server's arrival -> reply (its clock) is the network and
 * the reply's way back; no clock is compared across the two.
 */
int64_t les_rpcjoin_network_ns(const struct les_rec_rpc *c, const struct les_srv_times *t);

/* cap: slots, rounded up to a power of 2 (at least 16). 0, or -ENOMEM. */
int les_rpcjoin_init(struct les_rpcjoin *j, size_t cap, uint64_t max_age_ns);
void les_rpcjoin_free(struct les_rpcjoin *j);

/* A record's key, or false when it has none (the record is counted as no_key). */
bool les_rpcjoin_client_key(const struct les_rec_rpc *r, struct les_rpcjoin_key *k);
bool les_rpcjoin_server_key(const struct les_rec_srv *r, struct les_rpcjoin_key *k);

/*
 * Offer a record of one side, seen at now_ns. True when it met its other
 * side: the pair is in j->client and j->server and its slot is free again.
 * Otherwise it waits (or was counted as no_key or duplicate).
 */
bool les_rpcjoin_offer_client(struct les_rpcjoin *j, const struct les_rec_rpc *r, uint64_t now_ns);
bool les_rpcjoin_offer_server(struct les_rpcjoin *j, const struct les_rec_srv *r, uint64_t now_ns);

/* Count records that waited longer than max_age_ns (all, with all) as unjoined. */
void les_rpcjoin_expire(struct les_rpcjoin *j, uint64_t now_ns, bool all);

/* Records waiting now, by side. */
uint64_t les_rpcjoin_pending(const struct les_rpcjoin *j, enum les_rpcjoin_side side);

#endif /* LES_RPCJOIN_H */
