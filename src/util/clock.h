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

#endif /* LES_CLOCK_H */
