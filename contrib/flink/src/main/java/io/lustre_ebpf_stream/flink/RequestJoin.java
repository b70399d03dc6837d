// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
package io.lustre_ebpf_stream.flink;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.StatementSet;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;

/**
 * The client-server join of PtlRPC requests across nodes (docs/layers.md):
 * the clients' request records (type rpc, op request) and the servers'
 * records (type srv), produced to Kafka by the tool on each node, joined on
 * (server NID, xid) as the consumer joins them on one node
 * (src/model/rpcjoin.h), with the same layer split as its rpc_join lines:
 * each side's durations are its own clock's, and network = the client's
 * service_ns - the server's arrival to reply (to the handler's end where no
 * reply was seen) - the request PUT's LNet wait (lnet_wait_ns, its own
 * layer, where the client linked one). No clock is compared across nodes but event time, which
 * only bounds how long a side waits for the other (--max-skew).
 *
 * Each output row has a kind: rpc_join (a pair, the consumer's line's
 * members), unjoined_client or unjoined_server (a side whose other never
 * came within the bound: a server or client not traced, a record lost),
 * so nothing is dropped silently. Records without an xid or a NID (no
 * module BTF) have no key and are left out, as the consumer counts them
 * as no_key.
 *
 * SQL only: an event-time interval full outer join, append-only, so its
 * rows go to Kafka and files as they are final.
 */
public final class RequestJoin {
	private RequestJoin() {
	}

	private static final String USAGE = String.join("\n",
		"usage: RequestJoin --brokers HOST:PORT[,...] --topic NAME[;NAME...] [options]",
		"  --brokers LIST       Kafka bootstrap servers (required)",
		"  --topic NAMES        the topic(s) clients and servers produce to (required)",
		"  --out-topic NAME     rows to this topic (default: none)",
		"  --out-dir DIR        rows as JSON files under DIR (default: none)",
		"  --print              rows to stdout as well",
		"  --max-skew DUR       a side waits for the other this long in event time,",
		"                       the nodes' clock skew included (default 30s, the",
		"                       consumer's wait)",
		"  --lateness DUR       watermark = largest ts seen - DUR (default 5s)",
		"  --group-id ID        consumer group (default les-flink-join)",
		"  --from earliest|latest|group   where to start reading (default group)",
		"  --bounded            stop at the offsets that are the end when the job starts",
		"  --checkpoint DUR     checkpoint interval (default 10s; files are committed then)",
		"  --checkpoint-dir URI where checkpoints go",
		"  --parallelism N      default parallelism (default: Flink's)",
		"  --show-sql           print every SQL statement on stderr before it runs");

	static String sourceDdl(Map<String, String> o, long latenessMs) {
		Map<String, String> p = ClusterWindows.kafkaSource(o, "les-flink-join");
		p.put("format", "json");
		p.put("json.fail-on-missing-field", "false");
		p.put("json.ignore-parse-errors", "true");
		// The members of the client's rpc line and of the server's srv line the join reads.
		return "CREATE TABLE les_records (\n"
			+ "  `type` STRING, `ts` STRING, `host` STRING, `proto` STRING, `op` STRING,\n"
			+ "  `xid` BIGINT, `nid` STRING, `req_id` BIGINT, `pid` BIGINT, `comm` STRING,\n"
			+ "  `queued_ns` BIGINT, `service_ns` BIGINT, `resends` BIGINT, `lnet_wait_ns` BIGINT,\n"
			+ "  `service` STRING, `target` STRING, `opcode` BIGINT, `opcode_name` STRING,\n"
			+ "  `client_nid` STRING, `server_nid` STRING, `lustre_jobid` STRING,\n"
			+ "  `status` BIGINT, `replied` BOOLEAN, `queue_ns` BIGINT, `incoming_ns` BIGINT,\n"
			+ "  `nrs_ns` BIGINT, `handle_ns` BIGINT, `reply_ns` BIGINT, `total_ns` BIGINT,\n"
			+ "  `bulk_ns` BIGINT, `io_ns` BIGINT,\n"
			+ "  rt AS TO_TIMESTAMP_LTZ(" + ClusterWindows.eventMs("ts") + ", 3),\n"
			+ "  WATERMARK FOR rt AS TO_TIMESTAMP_LTZ(" + ClusterWindows.eventMs("ts") + " - " + latenessMs + ", 3)\n"
			+ ") " + ClusterWindows.with(p);
	}

	/* The output row: the consumer's rpc_join members, with kind and each side's host. */
	static final String COLS = "kind STRING, client_host STRING, server_host STRING, proto STRING, "
		+ "service STRING, target STRING, opcode BIGINT, opcode_name STRING, xid BIGINT, "
		+ "client_nid STRING, server_nid STRING, lustre_jobid STRING, req_id BIGINT, pid BIGINT, "
		+ "comm STRING, client_queued_ns BIGINT, client_service_ns BIGINT, client_resends BIGINT, "
		+ "client_lnet_wait_ns BIGINT, "
		+ "network_ns BIGINT, server_queue_ns BIGINT, server_incoming_ns BIGINT, server_nrs_ns BIGINT, "
		+ "server_handle_ns BIGINT, server_reply_ns BIGINT, server_total_ns BIGINT, server_status BIGINT, "
		+ "server_bulk_ns BIGINT, server_io_ns BIGINT";

	/*
	 * The layer split, as les_rpcjoin_network_ns and les_srv_times: the
	 * server's reply is its arrival -> reply sent where it was seen, null
	 * otherwise, and the network is what the client waited beyond it and
	 * beyond its PUT's LNet credit wait.
	 */
	static String query(String skew) {
		return "SELECT CASE WHEN c.xid IS NULL THEN 'unjoined_server'"
			+ " WHEN s.xid IS NULL THEN 'unjoined_client' ELSE 'rpc_join' END,"
			+ " c.host, s.host, 'ptlrpc', s.service, s.target, s.opcode, s.opcode_name,"
			+ " COALESCE(c.xid, s.xid), s.client_nid, COALESCE(s.server_nid, c.nid), s.lustre_jobid,"
			+ " c.req_id, c.pid, c.comm, c.queued_ns, c.service_ns, c.resends, c.lnet_wait_ns,"
			+ " c.service_ns - COALESCE(s.reply_ns, s.total_ns) - COALESCE(c.lnet_wait_ns, 0),"
			+ " s.queue_ns, s.incoming_ns, s.nrs_ns, s.handle_ns, s.reply_ns, s.total_ns, s.status,"
			+ " s.bulk_ns, s.io_ns"
			+ " FROM les_client c FULL OUTER JOIN les_server s"
			+ " ON c.nid = s.server_nid AND c.xid = s.xid"
			+ " AND c.rt BETWEEN s.rt - " + skew + " AND s.rt + " + skew;
	}

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
		ClusterWindows.showSql = o.containsKey("show-sql");
		if (!o.containsKey("brokers") || !o.containsKey("topic"))
			usage("--brokers and --topic are required");
		if (!o.containsKey("out-topic") && !o.containsKey("out-dir") && !o.containsKey("print"))
			usage("no output: give --out-topic, --out-dir or --print");
		long skewMs = 0, latenessMs = 0, checkpointMs = 0;
		String skew = null;
		try {
			skewMs = ClusterWindows.parseMillis("--max-skew", o.getOrDefault("max-skew", "30s"));
			latenessMs = ClusterWindows.parseMillis("--lateness", o.getOrDefault("lateness", "5s"));
			checkpointMs = ClusterWindows.parseMillis("--checkpoint", o.getOrDefault("checkpoint", "10s"));
			skew = ClusterWindows.interval("--max-skew", skewMs);
		} catch (IllegalArgumentException e) {
			usage(e.getMessage());
		}

		TableEnvironment t = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
		t.getConfig().set("table.local-time-zone", "UTC");
		t.getConfig().set("execution.checkpointing.interval", checkpointMs + " ms");
		if (o.containsKey("checkpoint-dir"))
			t.getConfig().set("execution.checkpointing.dir", o.get("checkpoint-dir"));
		if (o.containsKey("parallelism"))
			t.getConfig().set("parallelism.default", o.get("parallelism"));
		t.getConfig().set("pipeline.name", "lustre-ebpf-stream request join (" + o.get("topic") + ")");

		try {
			exec(t, sourceDdl(o, latenessMs));
		} catch (IllegalArgumentException e) {
			usage(e.getMessage());
		}
		// The keyed requests of each side (the consumer's les_rpcjoin_*_key).
		exec(t, "CREATE TEMPORARY VIEW les_client AS SELECT * FROM les_records WHERE `type` = 'rpc'"
			+ " AND proto = 'ptlrpc' AND op = 'request' AND xid IS NOT NULL AND nid IS NOT NULL");
		exec(t, "CREATE TEMPORARY VIEW les_server AS SELECT * FROM les_records WHERE `type` = 'srv'"
			+ " AND proto = 'ptlrpc' AND xid IS NOT NULL AND server_nid IS NOT NULL");

		StatementSet set = t.createStatementSet();
		String q = query(skew);
		Map<String, Map<String, String>> outs = new LinkedHashMap<>();
		if (o.containsKey("out-topic")) {
			Map<String, String> p = new LinkedHashMap<>();
			p.put("connector", "kafka");
			p.put("topic", o.get("out-topic"));
			p.put("properties.bootstrap.servers", o.get("brokers"));
			p.put("format", "json");
			p.put("json.encode.ignore-null-fields", "false");
			p.put("sink.delivery-guarantee", "at-least-once");
			outs.put("out_kafka", p);
		}
		if (o.containsKey("out-dir")) {
			Map<String, String> p = new LinkedHashMap<>();
			p.put("connector", "filesystem");
			p.put("path", o.get("out-dir"));
			p.put("format", "json");
			p.put("json.encode.ignore-null-fields", "false");
			outs.put("out_files", p);
		}
		if (o.containsKey("print")) {
			Map<String, String> p = new LinkedHashMap<>();
			p.put("connector", "print");
			p.put("print-identifier", "join");
			outs.put("out_print", p);
		}
		for (Map.Entry<String, Map<String, String>> e : outs.entrySet()) {
			exec(t, "CREATE TABLE " + e.getKey() + " (" + COLS + ") " + ClusterWindows.with(e.getValue()));
			insert(set, "INSERT INTO " + e.getKey() + " " + q);
		}
		TableResult r = set.execute();
		if (t.getConfig().getRootConfiguration().get(DeploymentOptions.ATTACHED))
			r.await();
	}

	/* ClusterWindows' statement runner: --show-sql prints what runs. */
	private static void exec(TableEnvironment t, String sql) {
		ClusterWindows.exec(t, sql);
	}

	private static void insert(StatementSet set, String sql) {
		ClusterWindows.insert(set, sql);
	}

	private static void usage(String why) {
		System.err.println("RequestJoin: " + why);
		System.err.println(USAGE);
		System.exit(2);
	}
}
