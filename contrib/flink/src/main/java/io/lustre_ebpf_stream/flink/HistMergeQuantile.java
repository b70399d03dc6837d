// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
package io.lustre_ebpf_stream.flink;

import org.apache.flink.table.annotation.DataTypeHint;
import org.apache.flink.table.annotation.FunctionHint;
import org.apache.flink.table.functions.AggregateFunction;

/**
 * The percentile of the nodes' own window lines summed: each line's
 * latency_hist ([lower_ns, upper_ns, count] per non-empty bucket, the last
 * bucket's upper null), min_ns and max_ns are added into one histogram of
 * HistQuantile's buckets, and the percentile is read from it with the same
 * rule. Registered as WP50_NS, WP99_NS (--input windows).
 */
@FunctionHint(output = @DataTypeHint("BIGINT"))
public class HistMergeQuantile extends AggregateFunction<Long, HistQuantile.Acc> {
	private static final long serialVersionUID = 1L;

	private final int permille;

	public HistMergeQuantile(int permille) {
		if (permille < 0 || permille > 1000)
			throw new IllegalArgumentException("per mille out of 0..1000: " + permille);
		this.permille = permille;
	}

	@Override
	public HistQuantile.Acc createAccumulator() {
		return new HistQuantile.Acc();
	}

	public void accumulate(HistQuantile.Acc acc, @DataTypeHint("ARRAY<ARRAY<BIGINT>>") Long[][] hist,
			       Long min, Long max) {
		long n = 0;

		if (hist == null || min == null || max == null)
			return;
		for (Long[] b : hist) {
			if (b == null || b.length != 3 || b[0] == null || b[2] == null)
				throw new IllegalArgumentException("latency_hist bucket is not [lower, upper, count]");
			int i = HistQuantile.index(b[0]);
			if (HistQuantile.lower(i) != b[0])
				throw new IllegalArgumentException("latency_hist bucket " + b[0]
								   + " is not one of the tool's (another histogram layout?)");
			acc.buckets[i] += b[2];
			n += b[2];
		}
		if (n == 0)
			return;
		if (acc.count == 0 || min < acc.min)
			acc.min = min;
		if (max > acc.max)
			acc.max = max;
		acc.count += n;
	}

	public void merge(HistQuantile.Acc acc, Iterable<HistQuantile.Acc> others) {
		HistQuantile.mergeInto(acc, others);
	}

	@Override
	public Long getValue(HistQuantile.Acc acc) {
		return acc.count == 0 ? null : HistQuantile.percentile(acc, permille);
	}
}
