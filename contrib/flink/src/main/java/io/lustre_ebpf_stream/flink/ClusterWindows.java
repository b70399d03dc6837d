// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
package io.lustre_ebpf_stream.flink;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.StatementSet;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;

/**
 * Cluster-wide windows over the per-op records that lustre-ebpf-stream
 * nodes produce to Kafka (docs/pipeline.md). Flink SQL only: a Kafka source
 * with event time taken from each record's ts and a bounded-out-of-orderness
 * watermark, epoch-aligned tumbling windows like the nodes' --aggregate, and
 * three result kinds written to a Kafka topic and to JSON files:
 *
 *   job     per window, job_id and username: ops, metadata ops, data bytes
 *           read and written, errors, p50/p99 latency of all access ops
 *   job_op  per window, job_id, username, op and access_intent: count,
 *           bytes, errors, latency sum, min, max, p50, p99
 *   target  per window, fs, target, job_id (request records): requests,
 *           wait (latency) sum, resends, p99
 *
 * With --input windows the job and job_op rows come from the nodes' own
 * --aggregate window lines instead (summed, histograms merged): the same
 * rows from one line per group and window per node.
 *
 * Run with --help for the options. The same main() runs in local mode
 * (java -cp ..., a MiniCluster in this JVM) and under `flink run`.
 */
public final class ClusterWindows {
	private ClusterWindows() {
	}

	private static final String USAGE = String.join("\n",
		"usage: ClusterWindows --brokers HOST:PORT[,...] --topic NAME [options]",
		"  --brokers LIST       Kafka bootstrap servers (required)",
		"  --topic NAME         the topic the nodes produce to (required)",
		"  --out-topic NAME     results to this topic (default: none)",
		"  --out-dir DIR        results as JSON files under DIR/{job,job_op,target} (default: none)",
		"  --print              results to stdout as well",
		"  --input records|windows   read the per-op records (default), or the nodes'",
		"                       own --aggregate window lines and sum them (job and",
		"                       job_op only; far fewer lines, docs/pipeline.md)",
		"  --window DUR         window length, as the nodes' --aggregate (default 2s)",
		"  --lateness DUR       watermark = largest ts seen - DUR (default 5s)",
		"  --idle DUR           a partition without records for DUR does not hold",
		"                       the watermark back (default 30s; 0 = never idle)",
		"  --watermark-emit periodic|on-event   when the source emits watermarks:",
		"                       every 200 ms (default) or after every record",
		"  --group-id ID        consumer group (default les-flink)",
		"  --from earliest|latest|group   where to start reading (default group,",
		"                       earliest when the group has no offsets)",
		"  --bounded            stop at the offsets that are the end when the job starts",
		"                       (end of input fires every window: tests, backfills)",
		"  --checkpoint DUR     checkpoint interval (default 10s; files are committed then)",
		"  --checkpoint-dir URI where checkpoints go (file:///..., s3://...); default: the",
		"                       cluster's configuration (local mode: the JobManager's",
		"                       memory, 5 MiB at most, too small beyond tests)",
		"  --parallelism N      default parallelism (default: Flink's)",
		"  --show-sql           print every SQL statement on stderr before it runs",
		"DUR: a number with ms, s, m or h (2s, 500ms, 1m).");

	static long parseMillis(String opt, String v) {
		String num = v;
		long unit = 1000;
		if (v.endsWith("ms")) {
			num = v.substring(0, v.length() - 2);
			unit = 1;
		} else if (v.endsWith("s")) {
			num = v.substring(0, v.length() - 1);
		} else if (v.endsWith("m")) {
			num = v.substring(0, v.length() - 1);
			unit = 60_000;
		} else if (v.endsWith("h")) {
			num = v.substring(0, v.length() - 1);
			unit = 3_600_000;
		}
		try {
			long n = Long.parseLong(num);
			if (n < 0)
				throw new NumberFormatException();
			return n * unit;
		} catch (NumberFormatException e) {
			throw new IllegalArgumentException("invalid " + opt + " '" + v + "': expected e.g. 2s, 500ms, 1m");
		}
	}

	/*
	 * A whole number of milliseconds as an SQL interval literal in the
	 * largest unit that holds it exactly; SQL's default leading precision
	 * (two digits) bounds each form below 100 of its unit.
	 */
	static String interval(String opt, long ms) {
		if (ms % 3_600_000 == 0 && ms / 3_600_000 < 100)
			return "INTERVAL '" + ms / 3_600_000 + "' HOUR";
		if (ms % 60_000 == 0 && ms / 60_000 < 100)
			return "INTERVAL '" + ms / 60_000 + "' MINUTE";
		if (ms < 100_000)
			return String.format("INTERVAL '%d.%03d' SECOND", ms / 1000, ms % 1000);
		throw new IllegalArgumentException(opt + ": give under 100 s, whole minutes under 100 m, or whole hours under 100 h");
	}

	/** SQL string literal. */
	static String lit(String s) {
		return "'" + s.replace("'", "''") + "'";
	}

	static String with(Map<String, String> props) {
		List<String> kv = new ArrayList<>();
		props.forEach((k, v) -> kv.add(lit(k) + " = " + lit(v)));
		return "WITH (\n  " + String.join(",\n  ", kv) + "\n)";
	}

	/*
	 * ts is RFC 3339 UTC with nanoseconds (2026-11-30T01:29:30.123456789Z).
	 * Event time is its milliseconds, truncated: windows are whole
	 * milliseconds long and start on multiples of their length, so the
	 * truncation never moves a record to another window.
	 */
	static String eventMs(String col) {
		String c = "COALESCE(" + col + ", '1970-01-01T00:00:00.000')";
		return "UNIX_TIMESTAMP(SUBSTRING(" + c + " FROM 1 FOR 19), 'yyyy-MM-dd''T''HH:mm:ss') * 1000"
			+ " + CAST(SUBSTRING(" + c + " FROM 21 FOR 3) AS BIGINT)";
	}

	/* The Kafka source's options both jobs take: topic, brokers, group, where to start, bounded. */
	static Map<String, String> kafkaSource(Map<String, String> o, String defaultGroup) {
		Map<String, String> p = new LinkedHashMap<>();
		p.put("connector", "kafka");
		p.put("topic", o.get("topic"));
		p.put("properties.bootstrap.servers", o.get("brokers"));
		p.put("properties.group.id", o.getOrDefault("group-id", defaultGroup));
		switch (o.getOrDefault("from", "group")) {
		case "earliest":
			p.put("scan.startup.mode", "earliest-offset");
			break;
		case "latest":
			p.put("scan.startup.mode", "latest-offset");
			break;
		case "group":
			p.put("scan.startup.mode", "group-offsets");
			p.put("properties.auto.offset.reset", "earliest");
			break;
		default:
			throw new IllegalArgumentException("--from: earliest, latest or group");
		}
		if (o.containsKey("bounded"))
			p.put("scan.bounded.mode", "latest-offset");
		return p;
	}

	static String sourceDdl(Map<String, String> o, long latenessMs, boolean windows) {
		Map<String, String> p = kafkaSource(o, "les-flink");
		switch (o.getOrDefault("watermark-emit", "periodic")) {
		case "periodic":
			break;
		case "on-event":
			p.put("scan.watermark.emit.strategy", "on-event");
			break;
		default:
			throw new IllegalArgumentException("--watermark-emit: periodic or on-event");
		}
		p.put("format", "json");
		// Every line type shares the topic; only the fields below are read,
		// the others are ignored, and a line that is not JSON is skipped.
		p.put("json.fail-on-missing-field", "false");
		p.put("json.ignore-parse-errors", "true");
		if (windows)
			// The nodes' window lines: event time is the window's start.
			return "CREATE TABLE les_records (\n"
				+ "  `type` STRING, `window_start` STRING, `window_end` STRING, `host` STRING,\n"
				+ "  `record_type` STRING, `op` STRING, `access_intent` STRING, `username` STRING,\n"
				+ "  `job_id` STRING, `count` BIGINT, `bytes` BIGINT, `errors` MAP<STRING, BIGINT>,\n"
				+ "  `latency_hist` ARRAY<ARRAY<BIGINT>>, `min_ns` BIGINT, `max_ns` BIGINT,\n"
				+ "  `sum_latency_ns` BIGINT,\n"
				+ "  rt AS TO_TIMESTAMP_LTZ(" + eventMs("window_start") + ", 3),\n"
				+ "  WATERMARK FOR rt AS TO_TIMESTAMP_LTZ(" + eventMs("window_start") + " - " + latenessMs + ", 3)\n"
				+ ") " + with(p);
		return "CREATE TABLE les_records (\n"
			+ "  `type` STRING, `ts` STRING, `host` STRING, `fs_type` STRING, `fs` STRING,\n"
			+ "  `op` STRING, `access_intent` STRING, `username` STRING, `job_id` STRING,\n"
			+ "  `latency_ns` BIGINT, `bytes` BIGINT, `errno_class` STRING,\n"
			+ "  `target` STRING, `resends` BIGINT,\n"
			+ "  rt AS TO_TIMESTAMP_LTZ(" + eventMs("ts") + ", 3),\n"
			+ "  WATERMARK FOR rt AS TO_TIMESTAMP_LTZ(" + eventMs("ts") + " - " + latenessMs + ", 3)\n"
			+ ") " + with(p);
	}

	/* The result kinds: name, columns, query. */
	static final String[][] KINDS = {
		{ "job",
		  "window_start STRING, window_end STRING, job_id STRING, username STRING, "
		  + "ops BIGINT, metadata_ops BIGINT, data_ops BIGINT, bytes_read BIGINT, bytes_written BIGINT, "
		  + "errors BIGINT, hosts BIGINT, p50_ns BIGINT, p99_ns BIGINT",
		  "SELECT %WS%, %WE%, job_id, username, COUNT(*),"
		  + " COUNT(*) FILTER (WHERE access_intent IN ('namespace_read', 'namespace_mutation')),"
		  + " COUNT(*) FILTER (WHERE op IN ('read', 'write')),"
		  + " COALESCE(SUM(`bytes`) FILTER (WHERE op = 'read'), 0),"
		  + " COALESCE(SUM(`bytes`) FILTER (WHERE op = 'write'), 0),"
		  + " COUNT(errno_class), COUNT(DISTINCT host), P50_NS(latency_ns), P99_NS(latency_ns)"
		  + " FROM TABLE(TUMBLE(TABLE les_access, DESCRIPTOR(rt), %WIN%))"
		  + " GROUP BY window_start, window_end, job_id, username" },
		{ "job_op",
		  "window_start STRING, window_end STRING, job_id STRING, username STRING, op STRING, "
		  + "access_intent STRING, `count` BIGINT, `bytes` BIGINT, errors BIGINT, sum_latency_ns BIGINT, "
		  + "min_ns BIGINT, max_ns BIGINT, p50_ns BIGINT, p99_ns BIGINT",
		  "SELECT %WS%, %WE%, job_id, username, op, access_intent, COUNT(*), SUM(`bytes`),"
		  + " COUNT(errno_class), SUM(latency_ns), MIN(latency_ns), MAX(latency_ns),"
		  + " P50_NS(latency_ns), P99_NS(latency_ns)"
		  + " FROM TABLE(TUMBLE(TABLE les_access, DESCRIPTOR(rt), %WIN%))"
		  + " GROUP BY window_start, window_end, job_id, username, op, access_intent" },
		{ "target",
		  "window_start STRING, window_end STRING, fs STRING, target STRING, job_id STRING, "
		  + "requests BIGINT, wait_ns BIGINT, resends BIGINT, errors BIGINT, p99_ns BIGINT",
		  "SELECT %WS%, %WE%, fs, target, job_id, COUNT(*), SUM(latency_ns),"
		  + " COALESCE(SUM(resends), 0), COUNT(errno_class), P99_NS(latency_ns)"
		  + " FROM TABLE(TUMBLE(TABLE les_rpc, DESCRIPTOR(rt), %WIN%))"
		  + " GROUP BY window_start, window_end, fs, target, job_id" },
	};

	/*
	 * --input windows: the same job and job_op rows from the nodes' own
	 * window lines (any --group-by that has job_id, username, op and
	 * access_intent, the default's included), summed; the percentiles from
	 * their summed histograms. A node's window falls in the Flink window
	 * holding its start, so Flink's window can be the nodes' or a multiple.
	 */
	static final String[][] WINDOW_KINDS = {
		{ "job", KINDS[0][1],
		  "SELECT %WS%, %WE%, job_id, username, SUM(`count`),"
		  + " COALESCE(SUM(`count`) FILTER (WHERE access_intent IN ('namespace_read', 'namespace_mutation')), 0),"
		  + " COALESCE(SUM(`count`) FILTER (WHERE op IN ('read', 'write')), 0),"
		  + " COALESCE(SUM(`bytes`) FILTER (WHERE op = 'read'), 0),"
		  + " COALESCE(SUM(`bytes`) FILTER (WHERE op = 'write'), 0),"
		  + " SUM(MAP_SUM(errors)), COUNT(DISTINCT host),"
		  + " WP50_NS(latency_hist, min_ns, max_ns), WP99_NS(latency_hist, min_ns, max_ns)"
		  + " FROM TABLE(TUMBLE(TABLE les_access, DESCRIPTOR(rt), %WIN%))"
		  + " GROUP BY window_start, window_end, job_id, username" },
		{ "job_op", KINDS[1][1],
		  "SELECT %WS%, %WE%, job_id, username, op, access_intent, SUM(`count`), SUM(`bytes`),"
		  + " SUM(MAP_SUM(errors)), SUM(sum_latency_ns), MIN(min_ns), MAX(max_ns),"
		  + " WP50_NS(latency_hist, min_ns, max_ns), WP99_NS(latency_hist, min_ns, max_ns)"
		  + " FROM TABLE(TUMBLE(TABLE les_access, DESCRIPTOR(rt), %WIN%))"
		  + " GROUP BY window_start, window_end, job_id, username, op, access_intent" },
	};

	/* Window bounds as the tool writes them: RFC 3339 UTC, 9 digits. */
	static final String WS = "DATE_FORMAT(window_start, 'yyyy-MM-dd''T''HH:mm:ss.SSS') || '000000Z'";
	static final String WE = "DATE_FORMAT(window_end, 'yyyy-MM-dd''T''HH:mm:ss.SSS') || '000000Z'";

	public static void main(String[] args) throws Exception {
		Map<String, String> o = new LinkedHashMap<>();
		for (int i = 0; i < args.length; i++) {
			String a = args[i];
			if (a.equals("--help") || a.equals("-h")) {
				System.out.println(USAGE);
				return;
			}
			if (!a.startsWith("--"))
				usage("unexpected argument '" + a + "'");
			String name = a.substring(2);
			if (name.equals("bounded") || name.equals("print") || name.equals("show-sql")) {
				o.put(name, "");
				continue;
			}
			if (i + 1 >= args.length)
				usage(a + " needs a value");
			o.put(name, args[++i]);
		}
		showSql = o.containsKey("show-sql");
		String input = o.getOrDefault("input", "records");
		if (!input.equals("records") && !input.equals("windows"))
			usage("--input: records or windows");
		boolean windows = input.equals("windows");
		if (!o.containsKey("brokers") || !o.containsKey("topic"))
			usage("--brokers and --topic are required");
		if (!o.containsKey("out-topic") && !o.containsKey("out-dir") && !o.containsKey("print"))
			usage("no output: give --out-topic, --out-dir or --print");

		long windowMs, latenessMs, idleMs, checkpointMs;
		try {
			windowMs = parseMillis("--window", o.getOrDefault("window", "2s"));
			latenessMs = parseMillis("--lateness", o.getOrDefault("lateness", "5s"));
			idleMs = parseMillis("--idle", o.getOrDefault("idle", "30s"));
			checkpointMs = parseMillis("--checkpoint", o.getOrDefault("checkpoint", "10s"));
		} catch (IllegalArgumentException e) {
			usage(e.getMessage());
			return;
		}
		if (windowMs < 1)
			usage("--window must be at least 1ms");

		TableEnvironment t = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
		// UTC: the session time zone decides how ts is parsed and how the
		// window bounds are printed.
		t.getConfig().set("table.local-time-zone", "UTC");
		t.getConfig().set("execution.checkpointing.interval", Duration.ofMillis(checkpointMs).toMillis() + " ms");
		t.getConfig().set("table.exec.source.idle-timeout", idleMs + " ms");
		if (o.containsKey("checkpoint-dir"))
			t.getConfig().set("execution.checkpointing.dir", o.get("checkpoint-dir"));
		if (o.containsKey("parallelism"))
			t.getConfig().set("parallelism.default", o.get("parallelism"));
		t.getConfig().set("pipeline.name", "lustre-ebpf-stream cluster windows (" + o.get("topic") + ")");

		t.createTemporarySystemFunction("P50_NS", new HistQuantile(500));
		t.createTemporarySystemFunction("P99_NS", new HistQuantile(990));
		t.createTemporarySystemFunction("WP50_NS", new HistMergeQuantile(500));
		t.createTemporarySystemFunction("WP99_NS", new HistMergeQuantile(990));
		t.createTemporarySystemFunction("MAP_SUM", MapSum.class);

		try {
			exec(t, sourceDdl(o, latenessMs, windows));
		} catch (IllegalArgumentException e) {
			usage(e.getMessage());
		}
		if (windows) {
			// Without the lines' own window_start and window_end, which
			// the window function's columns of the same names would meet.
			exec(t, "CREATE TEMPORARY VIEW les_access AS SELECT `host`, `op`, `access_intent`,"
				+ " `username`, `job_id`, `count`, `bytes`, `errors`, `latency_hist`, `min_ns`,"
				+ " `max_ns`, `sum_latency_ns`, rt FROM les_records"
				+ " WHERE `type` = 'window' AND record_type = 'access'");
		} else {
			exec(t, "CREATE TEMPORARY VIEW les_access AS SELECT * FROM les_records WHERE `type` = 'access'");
			exec(t, "CREATE TEMPORARY VIEW les_rpc AS SELECT * FROM les_records WHERE `type` = 'rpc'");
		}

		String win;
		try {
			win = interval("--window", windowMs);
		} catch (IllegalArgumentException e) {
			usage(e.getMessage());
			return;
		}
		StatementSet set = t.createStatementSet();
		for (String[] kind : windows ? WINDOW_KINDS : KINDS) {
			String name = kind[0];
			String cols = "kind STRING, " + kind[1];
			String query = kind[2].replace("%WS%", WS).replace("%WE%", WE).replace("%WIN%", win)
				.replaceFirst("^SELECT ", "SELECT " + lit(name) + ", ");
			if (o.containsKey("out-topic")) {
				Map<String, String> p = new LinkedHashMap<>();
				p.put("connector", "kafka");
				p.put("topic", o.get("out-topic"));
				p.put("properties.bootstrap.servers", o.get("brokers"));
				p.put("format", "json");
				// json writes nulls as null (a record without a job)
				p.put("json.encode.ignore-null-fields", "false");
				p.put("sink.delivery-guarantee", "at-least-once");
				exec(t, "CREATE TABLE out_kafka_" + name + " (" + cols + ") " + with(p));
				insert(set, "INSERT INTO out_kafka_" + name + " " + query);
			}
			if (o.containsKey("out-dir")) {
				Map<String, String> p = new LinkedHashMap<>();
				p.put("connector", "filesystem");
				p.put("path", o.get("out-dir") + "/" + name);
				p.put("format", "json");
				p.put("json.encode.ignore-null-fields", "false");
				exec(t, "CREATE TABLE out_files_" + name + " (" + cols + ") " + with(p));
				insert(set, "INSERT INTO out_files_" + name + " " + query);
			}
			if (o.containsKey("print")) {
				Map<String, String> p = new LinkedHashMap<>();
				p.put("connector", "print");
				p.put("print-identifier", name);
				exec(t, "CREATE TABLE out_print_" + name + " (" + cols + ") " + with(p));
				insert(set, "INSERT INTO out_print_" + name + " " + query);
			}
		}
		TableResult r = set.execute();
		// Local mode and `flink run` without -d wait for the job's end (a
		// bounded run ends; an unbounded one runs until cancelled); with -d
		// the client returns once the job is submitted.
		if (t.getConfig().getRootConfiguration().get(DeploymentOptions.ATTACHED))
			r.await();
	}

	/* Set by --show-sql, of this job or RequestJoin, which runs its statements here too. */
	static boolean showSql;

	/* Every statement goes through here, so --show-sql prints what runs. */
	static void exec(TableEnvironment t, String sql) {
		if (showSql)
			System.err.println(sql + ";\n");
		t.executeSql(sql);
	}

	static void insert(StatementSet set, String sql) {
		if (showSql)
			System.err.println(sql + ";\n");
		set.addInsertSql(sql);
	}

	private static void usage(String why) {
		System.err.println("ClusterWindows: " + why);
		System.err.println(USAGE);
		System.exit(2);
	}
}
