#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Split a consumer's rpc_join lines into the two captures they were made of.

Usage: split-join.py JOIN.jsonl.gz CLIENT.jsonl.gz SERVER.jsonl.gz

Each rpc_join line (both sides traced on one node) becomes the client's
PtlRPC request record (type rpc, op request) and the server's record of it
(type srv), with the members each side's line carries and the join reads:
the client's xid, server NID, queued and service times; the server's
service, target, opcode, NIDs, job and steps. The other lines are left out.
Each side's ts is the join's (the later of the two; the join reads no time
across the sides). What a side's line has that the join line lacks (the
client's enrichment, the server's thread and tid) is null or left out.
"""
import gzip
import json
import sys

COMMON = ("ts", "host", "fs_type", "fs", "mount")


def client_of(j):
    r = {"type": "rpc", **{k: j[k] for k in COMMON}, "op": "request", "proto": "ptlrpc",
         "opcode": j["opcode"], "opcode_name": j.get("opcode_name"),
         "lustre_jobid": j["lustre_jobid"], "req_id": j["req_id"], "parent_op_id": None,
         "pid": j["pid"], "comm": j["comm"],
         "latency_ns": j["client_queued_ns"] + j["client_service_ns"], "bytes": 0,
         "errno": 0, "errno_class": None, "xid": j["xid"], "target": j["target"],
         "nid": j["server_nid"], "replied": True, "queued_ns": j["client_queued_ns"],
         "service_ns": j["client_service_ns"], "resends": j["client_resends"],
         "lnet_wait_ns": j.get("client_lnet_wait_ns")}
    return r


def server_of(j):
    r = {"type": "srv", **{k: j[k] for k in COMMON}, "proto": "ptlrpc",
         "service": j["service"], "target": j["target"], "opcode": j["opcode"],
         "opcode_name": j.get("opcode_name"), "xid": j["xid"],
         "client_nid": j["client_nid"], "server_nid": j["server_nid"],
         "lustre_jobid": j["lustre_jobid"], "resent": False, "replay": False,
         "msg_flags": 0, "thread": "", "tid": 0, "status": j["server_status"], "transno": 0,
         "replied": j["server_reply_ns"] is not None}
    for k in ("queue_ns", "incoming_ns", "nrs_ns", "handle_ns", "reply_ns", "total_ns"):
        r[k] = j["server_" + k]
    return r


def main():
    src, cout, sout = sys.argv[1:4]
    with gzip.open(src, "rt") as f, gzip.GzipFile(cout, "wb", mtime=0) as cz, \
            gzip.GzipFile(sout, "wb", mtime=0) as sz:
        for line in f:
            j = json.loads(line)
            if j.get("type") != "rpc_join":
                continue
            cz.write((json.dumps(client_of(j), separators=(",", ":")) + "\n").encode())
            sz.write((json.dumps(server_of(j), separators=(",", ":")) + "\n").encode())


if __name__ == "__main__":
    main()
