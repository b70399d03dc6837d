// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
package io.lustre_ebpf_stream.flink;

import java.util.Map;
import org.apache.flink.table.annotation.DataTypeHint;
import org.apache.flink.table.functions.ScalarFunction;

/** MAP_SUM(m): the sum of a map's values (a window line's errors by class); 0 for null. */
public class MapSum extends ScalarFunction {
	private static final long serialVersionUID = 1L;

	public long eval(@DataTypeHint("MAP<STRING, BIGINT>") Map<String, Long> m) {
		long sum = 0;

		if (m == null)
			return 0;
		for (Long v : m.values())
			if (v != null)
				sum += v;
		return sum;
	}
}
