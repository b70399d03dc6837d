/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Log-linear latency histogram in nanoseconds, fixed size, no allocation.
 *
 * Each power-of-two octave [2^k, 2^(k+1)) between 2^LES_HIST_LOW_SHIFT
 * (128 ns) and 2^LES_HIST_HIGH_SHIFT (about 68.7 s) is cut into
 * LES_HIST_SUB equal linear sub-buckets, so a bucket is at most 1/8 of its
 * lower bound wide: a percentile read from it is at most 12.5% above the
 * true value (never below it). Values under 128 ns share bucket 0, values
 * from 68.7 s up the last bucket; min and max are kept exactly, and every
 * percentile is clamped to [min, max].
 */
#ifndef LES_HISTOGRAM_H
#define LES_HISTOGRAM_H

#include <stdint.h>

#define LES_HIST_SUB_BITS   3
#define LES_HIST_SUB	    (1u << LES_HIST_SUB_BITS) /* sub-buckets per octave */
#define LES_HIST_LOW_SHIFT  7			      /* 128 ns: everything below is bucket 0 */
#define LES_HIST_HIGH_SHIFT 36 /* 2^36 ns = 68.7 s: everything above is the last */
#define LES_HIST_BUCKETS    (2 + (LES_HIST_HIGH_SHIFT - LES_HIST_LOW_SHIFT) * LES_HIST_SUB)

struct les_hist {
	uint64_t count;
	uint64_t sum; /* ns */
	uint64_t min; /* ns; meaningless while count is 0 */
	uint64_t max;
	uint32_t buckets[LES_HIST_BUCKETS];
};

void les_hist_reset(struct les_hist *h);
void les_hist_add(struct les_hist *h, uint64_t ns);

/* The bucket a value falls in, and that bucket's bounds [lower, upper). */
unsigned int les_hist_index(uint64_t ns);
uint64_t les_hist_lower(unsigned int idx);
/* Exclusive upper bound; UINT64_MAX for the last bucket. */
uint64_t les_hist_upper(unsigned int idx);

/*
 * The nearest-rank percentile (per mille: 500 = p50, 990 = p99): the
 * largest value the bucket holding that rank can contain, clamped to
 * [min, max]. 0 for an empty histogram.
 */
uint64_t les_hist_percentile(const struct les_hist *h, unsigned int permille);

#endif /* LES_HISTOGRAM_H */
