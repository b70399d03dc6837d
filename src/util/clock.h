/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Time in nanoseconds, the one way the tool reads it. CLOCK_MONOTONIC is
 * the clock of the BPF timestamps (bpf_ktime_get_ns), so a record's time
 * and "now" compare directly.
 */
#ifndef LES_CLOCK_H
#define LES_CLOCK_H

#include <stdint.h>
#include <time.h>

#define LES_NS_PER_SEC 1000000000ULL

static inline uint64_t les_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * LES_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static inline uint64_t les_mono_ns(void)
{
	return les_clock_ns(CLOCK_MONOTONIC);
}

/*
 * CLOCK_REALTIME - CLOCK_MONOTONIC, from the tightest of a few readings of
 * real between two of mono: a thread preempted between two reads of a busy
 * machine (a guest under emulation) would otherwise put milliseconds of
 * error into every time moved from one clock to the other.
 */
static inline int64_t les_clock_real_minus_mono_ns(void)
{
	uint64_t best_gap = UINT64_MAX;
	int64_t best = 0;

	for (int i = 0; i < 5; i++) {
		uint64_t m0 = les_mono_ns(), r = les_clock_ns(CLOCK_REALTIME), m1 = les_mono_ns();

		if (m1 - m0 < best_gap) {
			best_gap = m1 - m0;
			best = (int64_t)r - (int64_t)(m0 + (m1 - m0) / 2);
		}
	}
	return best;
}

#endif /* LES_CLOCK_H */
