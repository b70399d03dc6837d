// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
package io.lustre_ebpf_stream.flink;

import java.util.Arrays;
import org.apache.flink.table.annotation.DataTypeHint;
import org.apache.flink.table.annotation.FunctionHint;
import org.apache.flink.table.functions.AggregateFunction;

/**
 * An aggregate of latencies in nanoseconds: their nearest-rank percentile
 * (per mille: 500 = p50, 990 = p99, fixed when the function is registered as
 * P50_NS, P99_NS, ...). Read
 * from the same log-linear histogram the tool's --aggregate
 * windows use (src/util/histogram.c, docs/aggregation.md): octaves
 * [2^k, 2^(k+1)) from 128 ns to 2^36 ns cut into 8 linear buckets, the
 * percentile reported as the largest value of the bucket holding the rank,
 * clamped to the exact [min, max]. So it is never below the true percentile
 * and at most 12.5 % above it, and it is exactly what the nodes' own window
 * lines give once their latency_hist buckets are summed.
 *
 * The state is fixed (236 longs per group and window), whatever the number
 * of records, and two states merge by adding buckets.
 */
@FunctionHint(output = @DataTypeHint("BIGINT"))
public class HistQuantile extends AggregateFunction<Long, HistQuantile.Acc> {
	private static final long serialVersionUID = 1L;

	static final int SUB_BITS = 3;
	static final int SUB = 1 << SUB_BITS;
	static final int LOW_SHIFT = 7;
	static final int HIGH_SHIFT = 36;
	static final int BUCKETS = 2 + (HIGH_SHIFT - LOW_SHIFT) * SUB;

	/** The histogram of one group; public fields for Flink's POJO serializer. */
	public static class Acc {
		public long count;
		public long min;
		public long max;
		public long[] buckets = new long[BUCKETS];
	}

	static int index(long ns) {
		if (ns < (1L << LOW_SHIFT))
			return 0;
		if (ns >= (1L << HIGH_SHIFT))
			return BUCKETS - 1;
		int octave = 63 - Long.numberOfLeadingZeros(ns);
		int sub = (int) (ns >>> (octave - SUB_BITS)) & (SUB - 1);
		return 1 + (octave - LOW_SHIFT) * SUB + sub;
	}

	static long lower(int idx) {
		if (idx == 0)
			return 0;
		if (idx >= BUCKETS - 1)
			return 1L << HIGH_SHIFT;
		int octave = LOW_SHIFT + (idx - 1) / SUB;
		int sub = (idx - 1) % SUB;
		return (1L << octave) + ((long) sub << (octave - SUB_BITS));
	}

	private final int permille;

	public HistQuantile(int permille) {
		if (permille < 0 || permille > 1000)
			throw new IllegalArgumentException("per mille out of 0..1000: " + permille);
		this.permille = permille;
	}

	@Override
	public Acc createAccumulator() {
		return new Acc();
	}

	public void accumulate(Acc acc, Long ns) {
		if (ns == null || ns < 0)
			return;
		if (acc.count == 0 || ns < acc.min)
			acc.min = ns;
		if (ns > acc.max)
			acc.max = ns;
		acc.count++;
		acc.buckets[index(ns)]++;
	}

	public void merge(Acc acc, Iterable<Acc> others) {
		mergeInto(acc, others);
	}

	static void mergeInto(Acc acc, Iterable<Acc> others) {
		for (Acc o : others) {
			if (o.count == 0)
				continue;
			if (acc.count == 0 || o.min < acc.min)
				acc.min = o.min;
			if (o.max > acc.max)
				acc.max = o.max;
			acc.count += o.count;
			for (int i = 0; i < BUCKETS; i++)
				acc.buckets[i] += o.buckets[i];
		}
	}

	public void resetAccumulator(Acc acc) {
		acc.count = 0;
		acc.min = 0;
		acc.max = 0;
		Arrays.fill(acc.buckets, 0);
	}

	@Override
	public Long getValue(Acc acc) {
		return acc.count == 0 ? null : percentile(acc, permille);
	}

	/* The tool's les_hist_percentile(), value for value. */
	static long percentile(Acc acc, long permille) {
		long rank = (acc.count * permille + 999) / 1000;
		long seen = 0;
		int i;

		if (rank == 0)
			rank = 1;
		for (i = 0; i < BUCKETS - 1; i++) {
			seen += acc.buckets[i];
			if (seen >= rank)
				break;
		}
		long v = i == BUCKETS - 1 ? acc.max : lower(i + 1) - 1;
		if (v > acc.max)
			v = acc.max;
		if (v < acc.min)
			v = acc.min;
		return v;
	}
}
