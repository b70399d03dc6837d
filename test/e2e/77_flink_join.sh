#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The client-server join across nodes (docs/layers.md): a client's request
# records and its servers' srv records, two captures (test/data/
# lustre-2.17-join-{client,server}.jsonl.gz, see test/data/README.md), are
# produced to one Kafka topic (a real broker, two partitions) as the two
# nodes' tools would; the Flink job RequestJoin (contrib/flink) joins them,
# and its rows must equal the consumer's join of the same two captures
# (`lustre-ebpf-stream join`, the consumer's rpcjoin over the lines read
# back) row by row on every member of the rpc_join line, with the same
# requests left unjoined on each side: one client request whose server was
# not traced and one server record whose client was not are added to the
# captures here, and each side's unjoined count must be 1 in both.
#
# Every third client request is given an LNet wait of its PUT
# (lnet_wait_ns, which the one-node run predates), so that the split's
# LNet layer, out of the network, is compared too.
#
# The comparison is shown to fail on a copy of Flink's rows with the
# network's sign flipped.
#
# Environment (set by CTest): LES_BUILD (build tree), LES_SRC (source tree).

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kafka_lib.sh"
les_kafka_init 77_flink_join javac /usr/bin/python3

RUN_LOCAL=$LES_SRC/contrib/flink/run-local
DATA=$LES_SRC/test/data

t0=$SECONDS
nice -n 19 "$RUN_LOCAL" --fetch >"$WORK/fetch.log" 2>&1 ||
	les_fail "contrib/flink/run-local --fetch: $(tail -n 20 "$WORK/fetch.log")"
les_pass "Flink classpath and job compiled ($((SECONDS - t0)) s)"

# The one-node consumer wrote the split captures' pairs in the guest: their
# join must give its lines back, byte for byte. That run's lines are older
# than client_lnet_wait_ns: null there (no LNet wait linked), as the split
# captures have it.
"$LES_BIN" join --hostname les-vm "$DATA/lustre-2.17-join-client.jsonl.gz" \
	"$DATA/lustre-2.17-join-server.jsonl.gz" >"$WORK/split.jsonl" 2>"$WORK/split.err" ||
	les_fail "lustre-ebpf-stream join: $(cat "$WORK/split.err")"
grep '"type":"rpc_join"' "$WORK/split.jsonl" >"$WORK/rejoined.jsonl"
zcat "$DATA/lustre-2.17-join.jsonl.gz" | grep '"type":"rpc_join"' |
	sed 's/\("client_service_ns":[0-9]*,\)/\1"client_lnet_wait_ns":null,/' |
	sed 's/\("server_total_ns":[0-9]*,\)/\1"server_bulk_ns":null,"server_io_ns":null,/' >"$WORK/one-node.jsonl"
cmp -s "$WORK/one-node.jsonl" "$WORK/rejoined.jsonl" ||
	les_fail "the join of the two sides differs from the one-node consumer's lines:" \
		"$(cmp "$WORK/one-node.jsonl" "$WORK/rejoined.jsonl")"
les_pass "the join of the two sides = the one-node consumer's $(wc -l <"$WORK/one-node.jsonl") rpc_join lines, byte for byte"

# The clients' and the servers' records for Flink: the two-guest run's, as
# the two nodes captured them (test/data/capture-two-guests), and the split
# one-node run's, every third of its client requests with an LNet wait of
# its PUT (that run predates lnet_wait_ns), its ost_read and ost_write
# server records with a bulk transfer and a block I/O inside the handling
# (that run predates bulk_ns and io_ns), each side with one request
# whose other side was not traced (xids no record of the other side has:
# 7 and 9).
# Each side in time order, as a node produces: the older run first (a
# record older than the watermark is late for Flink's event-time join).
{
	zcat "$DATA/lustre-2.17-join-client.jsonl.gz" |
		jq -c 'if .xid % 3 == 0 then .lnet_wait_ns = (.service_ns / 4 | floor) else . end' &&
		zcat "$DATA/lustre-2.17-join-client.jsonl.gz" | tail -n 1 | jq -c '.xid = 7 | .req_id = 7' &&
		zcat "$DATA/lustre-2.17-two-guests-client.jsonl.gz"
} >"$WORK/client.jsonl" || les_fail "no client capture"
{
	zcat "$DATA/lustre-2.17-join-server.jsonl.gz" |
		jq -c 'if .opcode == 3 or .opcode == 4 then .bulk_ns = (.handle_ns / 3 | floor) |
			.io_ns = (.handle_ns / 5 | floor) | .io_count = 1 else . end' &&
		zcat "$DATA/lustre-2.17-join-server.jsonl.gz" | tail -n 1 | jq -c '.xid = 9' &&
		zcat "$DATA/lustre-2.17-two-guests-server.jsonl.gz"
} >"$WORK/server.jsonl" || les_fail "no server capture"
n_client=$(wc -l <"$WORK/client.jsonl")
n_server=$(wc -l <"$WORK/server.jsonl")

# The consumer's join of both.
"$LES_BIN" join --hostname les-vm "$WORK/client.jsonl" "$WORK/server.jsonl" \
	>"$WORK/consumer.jsonl" 2>"$WORK/consumer.err" ||
	les_fail "lustre-ebpf-stream join: $(cat "$WORK/consumer.err")"
counts=$(tail -n 1 "$WORK/consumer.jsonl")
les_eq "the consumer's join: no bad line, no record without a key, no duplicate" "0 0 0" \
	"$(jq -r '"\(.bad) \(.client.no_key + .server.no_key) \(.client.duplicate + .server.duplicate)"' <<<"$counts")"
les_pass "the consumer's join: $(jq -r '"\(.joined) joined; unjoined: \(.client.unjoined) client, \(.server.unjoined) server"' <<<"$counts")"
# Across the two guests: every request the client sent the servers and had
# a reply to met its server record, with its PUT's LNet wait.
les_eq "the two-guest run: replied client requests to 192.168.77.1@tcp not joined" "" \
	"$(/usr/bin/python3 - "$WORK/consumer.jsonl" "$DATA/lustre-2.17-two-guests-client.jsonl.gz" <<'PYEOF'
import gzip, json, sys
joined = {(r["server_nid"], r["xid"]) for r in map(json.loads, open(sys.argv[1]))
          if r["type"] == "rpc_join"}
for l in gzip.open(sys.argv[2], "rt"):
    r = json.loads(l)
    if r["type"] == "rpc" and r.get("op") == "request" and r.get("nid") == "192.168.77.1@tcp" \
            and r.get("replied") and (r["nid"], r["xid"]) not in joined:
        print(r["xid"], r.get("opcode_name"))
PYEOF
)"
les_ge "joined across the two guests (client 192.168.77.2@tcp), each with its LNet wait" 100 \
	"$(jq -c 'select(.type == "rpc_join" and .client_nid == "192.168.77.2@tcp" and .client_lnet_wait_ns != null)' \
		"$WORK/consumer.jsonl" | wc -l)"

/usr/bin/python3 - "$LES_SRC/docs/record.schema.json" "$WORK/consumer.jsonl" <<'PYEOF' ||
import json, sys, jsonschema
v = jsonschema.Draft7Validator(json.load(open(sys.argv[1])))
for n, l in enumerate(open(sys.argv[2]), 1):
    for e in v.iter_errors(json.loads(l)):
        sys.exit(f"line {n}: {e.message}")
PYEOF
	les_fail "the join's lines are not valid against docs/record.schema.json"
les_pass "the join's $(wc -l <"$WORK/consumer.jsonl") lines are valid against docs/record.schema.json"

les_kafka_start
B=$KAFKA_ADDR
/usr/bin/python3 - "$B" <<'PYEOF' || les_fail "cannot create topic"
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
for f in a.create_topics([NewTopic("les-join", 2, 1)]).values():
    f.result(30)
PYEOF
# Each node's lines, keyed by its node.
kcat -b "$B" -t les-join -P -K $'\t' -l <(sed 's/^/client\t/' "$WORK/client.jsonl") ||
	les_fail "kcat -P (client) failed"
kcat -b "$B" -t les-join -P -K $'\t' -l <(sed 's/^/server\t/' "$WORK/server.jsonl") ||
	les_fail "kcat -P (server) failed"
les_eq "both captures in the topic" "$((n_client + n_server))" \
	"$(les_kafka_consume "$B" les-join | wc -l)"

t=$SECONDS
nice -n 19 timeout 240 "$RUN_LOCAL" --job RequestJoin --brokers "$B" --topic les-join \
	--from earliest --bounded --group-id e2e-join --checkpoint 1s \
	--checkpoint-dir "file://$WORK/ckpt" --parallelism 2 --out-dir "$WORK/flink" \
	>"$WORK/flink.log" 2>&1 ||
	les_fail "Flink RequestJoin failed: $(grep -v '^[[:space:]]*at ' "$WORK/flink.log" | tail -n 20)"
find "$WORK/flink" -type f -name 'part-*' ! -name '.*' -exec cat {} + >"$WORK/flink.jsonl" ||
	les_fail "no result files under $WORK/flink"
les_pass "Flink's join ran ($((SECONDS - t)) s, $(wc -l <"$WORK/flink.jsonl") rows)"

# compare CONSUMER FLINK: 0 when Flink's rpc_join rows are the consumer's
# lines, row by row on every member of the line but ts and host (each side's
# own), and each side's unjoined count is the consumer's.
compare() {
	/usr/bin/python3 - "$1" "$2" <<'PYEOF'
import json, sys
cons = [json.loads(l) for l in open(sys.argv[1])]
rows = [json.loads(l) for l in open(sys.argv[2])]
counts = cons[-1]
lines = [r for r in cons if r["type"] == "rpc_join"]
joined = {(r["server_nid"], r["xid"]): r for r in rows if r["kind"] == "rpc_join"}
bad = 0
if len(joined) != len([r for r in rows if r["kind"] == "rpc_join"]):
    print("Flink joined a request twice"); bad += 1
if len(joined) != len(lines):
    print(f"rows: Flink {len(joined)}, consumer {len(lines)}"); bad += 1
for c in lines:
    f = joined.get((c["server_nid"], c["xid"]))
    if f is None:
        print(f"xid {c['xid']}: no Flink row"); bad += 1
        continue
    for k, v in c.items():
        if k in ("type", "ts", "host", "fs_type", "fs", "mount"):
            continue
        if f.get(k) != v:
            print(f"xid {c['xid']} {k}: Flink {f.get(k)}, consumer {v}"); bad += 1
            break
for side in ("client", "server"):
    n = sum(1 for r in rows if r["kind"] == "unjoined_" + side)
    if n != counts[side]["unjoined"]:
        print(f"{side} unjoined: Flink {n}, consumer {counts[side]['unjoined']}"); bad += 1
print(f"{len(lines)} joined rows compared, {bad} differ")
sys.exit(1 if bad else 0)
PYEOF
}

compare "$WORK/consumer.jsonl" "$WORK/flink.jsonl" >"$WORK/compare.out" ||
	les_fail "Flink's rows differ from the consumer's join: $(head -n 5 "$WORK/compare.out")"
les_pass "Flink's rows = the consumer's join, every layer: $(tail -n 1 "$WORK/compare.out")"
les_eq "Flink's unjoined rows hold the planted client request and server record" \
	"7 9" "$(jq -r 'select(.kind != "rpc_join" and .xid < 10) | .xid' "$WORK/flink.jsonl" | sort -n | xargs)"

# The check itself: Flink's network with the wrong sign must fail it.
jq -c 'if .kind == "rpc_join" then .network_ns = -.network_ns else . end' \
	"$WORK/flink.jsonl" >"$WORK/flink-planted.jsonl"
if compare "$WORK/consumer.jsonl" "$WORK/flink-planted.jsonl" >"$WORK/planted.out"; then
	les_fail "rows with the network's sign flipped passed the comparison"
fi
les_pass "rows with the network's sign flipped fail: $(head -n 1 "$WORK/planted.out")"
les_done
