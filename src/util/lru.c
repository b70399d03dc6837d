// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Bounded LRU map, u32 keys, preallocated. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/lru.h"

static uint32_t hash32(uint32_t k)
{
	k ^= k >> 16;
	k *= 0x7feb352dU;
	k ^= k >> 15;
	k *= 0x846ca68bU;
	k ^= k >> 16;
	return k;
}

int les_lru_init(struct les_lru *l, uint32_t cap, size_t value_size)
{
	memset(l, 0, sizeof(*l));
	if (!cap)
		return -EINVAL;
	l->nbuckets = 1;
	while (l->nbuckets < cap * 2)
		l->nbuckets <<= 1;
	l->cap = cap;
	l->value_size = value_size;
	l->head = l->tail = LES_LRU_NIL;
	l->buckets = malloc(sizeof(*l->buckets) * l->nbuckets);
	l->nodes = calloc(cap, sizeof(*l->nodes));
	l->values = calloc(cap, value_size);
	if (!l->buckets || !l->nodes || !l->values) {
		les_lru_free(l);
		return -ENOMEM;
	}
	memset(l->buckets, 0xff, sizeof(*l->buckets) * l->nbuckets);
	return 0;
}

void les_lru_free(struct les_lru *l)
{
	free(l->buckets);
	free(l->nodes);
	free(l->values);
	memset(l, 0, sizeof(*l));
}

static void *value_of(struct les_lru *l, uint32_t i)
{
	return l->values + (size_t)i * l->value_size;
}

static void list_unlink(struct les_lru *l, uint32_t i)
{
	struct les_lru_node *n = &l->nodes[i];

	if (n->prev != LES_LRU_NIL)
		l->nodes[n->prev].next = n->next;
	else
		l->head = n->next;
	if (n->next != LES_LRU_NIL)
		l->nodes[n->next].prev = n->prev;
	else
		l->tail = n->prev;
}

static void list_push_front(struct les_lru *l, uint32_t i)
{
	struct les_lru_node *n = &l->nodes[i];

	n->prev = LES_LRU_NIL;
	n->next = l->head;
	if (l->head != LES_LRU_NIL)
		l->nodes[l->head].prev = i;
	l->head = i;
	if (l->tail == LES_LRU_NIL)
		l->tail = i;
}

static uint32_t find(struct les_lru *l, uint32_t key)
{
	uint32_t i = l->buckets[hash32(key) & (l->nbuckets - 1)];

	while (i != LES_LRU_NIL && l->nodes[i].key != key)
		i = l->nodes[i].hnext;
	return i;
}

void *les_lru_get(struct les_lru *l, uint32_t key)
{
	uint32_t i = find(l, key);

	if (i == LES_LRU_NIL)
		return NULL;
	if (l->head != i) {
		list_unlink(l, i);
		list_push_front(l, i);
	}
	return value_of(l, i);
}

static void bucket_remove(struct les_lru *l, uint32_t i)
{
	uint32_t *link = &l->buckets[hash32(l->nodes[i].key) & (l->nbuckets - 1)];

	while (*link != i)
		link = &l->nodes[*link].hnext;
	*link = l->nodes[i].hnext;
}

/* Take entry i out of the map, its value released, its slot not yet reused. */
static void unlink_entry(struct les_lru *l, uint32_t i)
{
	list_unlink(l, i);
	bucket_remove(l, i);
	if (l->on_evict)
		l->on_evict(l->evict_ctx, value_of(l, i));
}

/*
 * Free slots are n..cap-1; an evicted entry's slot is moved there by
 * moving the last used slot into it, so the used slots stay 0..n-1.
 */
static void move_slot(struct les_lru *l, uint32_t from, uint32_t to)
{
	struct les_lru_node *n = &l->nodes[from];
	uint32_t *link = &l->buckets[hash32(n->key) & (l->nbuckets - 1)];

	while (*link != from)
		link = &l->nodes[*link].hnext;
	*link = to;
	if (n->prev != LES_LRU_NIL)
		l->nodes[n->prev].next = to;
	else
		l->head = to;
	if (n->next != LES_LRU_NIL)
		l->nodes[n->next].prev = to;
	else
		l->tail = to;
	l->nodes[to] = *n;
	memcpy(value_of(l, to), value_of(l, from), l->value_size);
}

bool les_lru_evict_oldest(struct les_lru *l)
{
	uint32_t i = l->tail;

	if (i == LES_LRU_NIL)
		return false;
	unlink_entry(l, i);
	l->evictions++;
	if (i != l->n - 1)
		move_slot(l, l->n - 1, i);
	l->n--;
	return true;
}

void *les_lru_put(struct les_lru *l, uint32_t key, bool *created)
{
	uint32_t i = find(l, key), b;

	if (i != LES_LRU_NIL) {
		if (created)
			*created = false;
		return les_lru_get(l, key);
	}
	if (l->n < l->cap) {
		i = l->n++;
	} else {
		i = l->tail; /* least recent makes room */
		unlink_entry(l, i);
		l->evictions++;
	}
	b = hash32(key) & (l->nbuckets - 1);
	l->nodes[i].key = key;
	l->nodes[i].hnext = l->buckets[b];
	l->buckets[b] = i;
	list_push_front(l, i);
	memset(value_of(l, i), 0, l->value_size);
	if (created)
		*created = true;
	return value_of(l, i);
}
