/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A bounded LRU map from u32 keys (pids, uids) to fixed-size values, all
 * storage allocated once: lookups and inserts allocate nothing, the least
 * recently used entry makes room.
 */
#ifndef LES_LRU_H
#define LES_LRU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct les_lru_node {
	uint32_t key;
	uint32_t hnext; /* next in bucket, or LES_LRU_NIL */
	uint32_t prev, next; /* recency list, most recent at head */
};

/* Called with the value an entry had, before its slot is taken for another key. */
typedef void (*les_lru_evict_fn)(void *ctx, void *value);

struct les_lru {
	uint32_t cap, n;
	uint32_t nbuckets; /* power of 2 */
	uint32_t head, tail;
	uint32_t *buckets;
	struct les_lru_node *nodes;
	unsigned char *values;
	size_t value_size;
	uint64_t evictions;
	les_lru_evict_fn on_evict; /* NULL: values hold nothing to release */
	void *evict_ctx;
};

#define LES_LRU_NIL UINT32_MAX

int les_lru_init(struct les_lru *l, uint32_t cap, size_t value_size);
void les_lru_free(struct les_lru *l);
/* The value of key, made most recent; NULL if absent. */
void *les_lru_get(struct les_lru *l, uint32_t key);
/* The value slot of key, zeroed if new (evicting the least recent when full). */
void *les_lru_put(struct les_lru *l, uint32_t key, bool *created);
/* Evict the least recent entry (on_evict sees it); false when empty. */
bool les_lru_evict_oldest(struct les_lru *l);

#endif /* LES_LRU_H */
