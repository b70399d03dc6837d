// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Log-linear latency histogram: octaves of 8 linear sub-buckets. */
#include <string.h>
#include "util/histogram.h"

void les_hist_reset(struct les_hist *h)
{
	memset(h, 0, sizeof(*h));
}

unsigned int les_hist_index(uint64_t ns)
{
	unsigned int octave, sub;

	if (ns < (1ULL << LES_HIST_LOW_SHIFT))
		return 0;
	if (ns >= (1ULL << LES_HIST_HIGH_SHIFT))
		return LES_HIST_BUCKETS - 1;
	octave = 63 - (unsigned int)__builtin_clzll(ns);
	/* The SUB_BITS bits below the leading one pick the linear sub-bucket. */
	sub = (unsigned int)(ns >> (octave - LES_HIST_SUB_BITS)) & (LES_HIST_SUB - 1);
	return 1 + (octave - LES_HIST_LOW_SHIFT) * LES_HIST_SUB + sub;
}

uint64_t les_hist_lower(unsigned int idx)
{
	unsigned int octave, sub;

	if (idx == 0)
		return 0;
	if (idx >= LES_HIST_BUCKETS - 1)
		return 1ULL << LES_HIST_HIGH_SHIFT;
	octave = LES_HIST_LOW_SHIFT + (idx - 1) / LES_HIST_SUB;
	sub = (idx - 1) % LES_HIST_SUB;
	return (1ULL << octave) + ((uint64_t)sub << (octave - LES_HIST_SUB_BITS));
}

uint64_t les_hist_upper(unsigned int idx)
{
	if (idx >= LES_HIST_BUCKETS - 1)
		return UINT64_MAX;
	return les_hist_lower(idx + 1);
}

void les_hist_add(struct les_hist *h, uint64_t ns)
{
	if (!h->count || ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	h->count++;
	h->sum += ns;
	h->buckets[les_hist_index(ns)]++;
}

uint64_t les_hist_percentile(const struct les_hist *h, unsigned int permille)
{
	uint64_t rank, seen = 0, v;
	unsigned int i;

	if (!h->count)
		return 0;
	if (permille > 1000)
		permille = 1000;
	/* Nearest rank: the smallest value with at least q of the values at or below it. */
	rank = (h->count * permille + 999) / 1000;
	if (rank == 0)
		rank = 1;
	for (i = 0; i < LES_HIST_BUCKETS - 1; i++) {
		seen += h->buckets[i];
		if (seen >= rank)
			break;
	}
	v = i == LES_HIST_BUCKETS - 1 ? h->max : les_hist_upper(i) - 1;
	if (v > h->max)
		v = h->max;
	if (v < h->min)
		v = h->min;
	return v;
}
