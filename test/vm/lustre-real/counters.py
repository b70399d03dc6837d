#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Compare the tool's records with Lustre's own counters.

Run inside the guest by the real-Lustre tests (test/vm/lustre-real/t_tool_*.sh):

    counters.py GROUP --records OUT.jsonl --mount /mnt/lustre --lctl STATS.txt
                [--jobs JOBSTATS.txt] [--job ID ...]

STATS.txt is `lctl get_param llite.*.stats mdc.*.stats osc.*.stats` taken
once after the workload (the counters were cleared after the tool
started); only records whose ts lies between the counters' start_time and
snapshot_time count, so requests made before the clear or after the
snapshot (a ping) are left out on both sides. Lustre's counters are the
oracle: every comparison is exact, and where Lustre counts by a rule of
its own the rule is applied and said here (Lustre's source, lustre/llite,
lustre/ptlrpc).

GROUP:
  access    access records vs llite.*.stats
  requests  request records vs the client's mdc.*.stats and osc.*.stats
  jobs      request records' lustre_jobid (--wire-prefix + job: the
            servers' job_stats key), their charged job_id and the
            --aggregate windows by job_id vs the servers' job_stats; the
            writeback of each --writeback-job sent by a kernel thread and
            charged to its writer (--writers: its pid, uid and comm;
            --cause-comm: its comm alone)
  locks     the blocked grant waits (lock_wait of ldlm_completion_ast,
            blocked) on --mount and each --mount2 vs the completion ASTs
            the node's callback service received (--ldlm: lctl get_param
            ldlm.services.ldlm_cbd.stats), each inside its job's access op,
            some of each --job
  servers   server records (type srv) vs the servers' rpctrace lines
            (--dk: lctl dk with debug=+rpctrace, "Handled RPC ... Request
            processed in Xus (Yus total)"): one record per line by (xid,
            client NID), the same opcode, thread and rq_status, handle_ns
            within --bound-us of X and total_ns of Y; no record in the log's
            window without its line; every client request record the servers
            logged joined (rpc_join) with its server's, and the stats' join
            counts as the lines say. --ids none: no server record at all,
            every client request counted as without a key
  joinwindows  the --aggregate windows' rpc_join groups (per lustre_jobid,
            target, client_nid: count and each layer's sum) vs the sums over
            the run's rpc_join lines (--records only)
  delays    injected delays, each found in its own layer and not in the
            others, in the joined lines (rpc_join) and in the servers'
            rpctrace lines (--dk) of the same xids: --nrs-job's ost_io
            requests held by the NRS delay policy (--nrs-delay-s) in the NRS
            queue, not in handling or the network; --pause-job's requests
            paused in their handler by fail_loc 0x50a (--pause-ms) in
            handling, not in the queue or the network; --tbf-job's
            ost_io requests limited by an NRS TBF jobid rule (--tbf-rate)
            waiting in the NRS queue, --tbf-free-job's beside them not
  selftest  the parsers on synthetic text (no guest): job_stats of two
            OSTs summed per job, rpctrace lines; the delays check on a
            delay in its layer (passes) and in another (fails)
            (CTest unit.lustre_counters)
Prints one line per comparison; exits 1 if any differs. A job or counter
Lustre does not list is a failure, never taken as 0.
"""
import argparse
import contextlib
import io
import json
import os
import re
import sys
from datetime import datetime, timezone

EOPNOTSUPP = 95
ENOTEMPTY = 39


def parse_ts(text):
    """RFC 3339 with nanoseconds -> integer nanoseconds since the epoch."""
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z", text)
    base = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    frac = (m.group(2) or "0").ljust(9, "0")[:9]
    return int(base.timestamp()) * 1_000_000_000 + int(frac)


def secs_ns(text):
    whole, _, frac = text.partition(".")
    return int(whole) * 1_000_000_000 + int(frac.ljust(9, "0")[:9])


def parse_lctl(path):
    """{device: {"start": ns, "snapshot": ns, counter: (samples, unit, sum)}}"""
    devices, cur = {}, None
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"^(\S+)\.stats=$", line)
        if m:
            cur = devices.setdefault(m.group(1), {})
            continue
        if cur is None or not line.strip():
            continue
        f = line.split()
        if f[0] == "snapshot_time":
            cur["snapshot"] = secs_ns(f[1])
        elif f[0] == "start_time":
            cur["start"] = secs_ns(f[1])
        elif len(f) >= 4 and f[2] == "samples":
            total = int(f[6]) if len(f) >= 7 else int(f[1])
            cur[f[0]] = (int(f[1]), f[3].strip("[]"), total)
    return devices


def client_devices(devices, kind):
    """The client's own mdc/osc devices (named ...-<kind>-<instance>), not a server's."""
    return {
        name: c
        for name, c in devices.items()
        if name.startswith(kind + ".") and not re.search(r"-(MDT|OST)[0-9a-f]{4}$", name)
    }


def load_records(path, mount, start, end):
    out, other = [], []
    for line in open(path):
        r = json.loads(line)
        if r.get("type") not in ("access", "rpc") or not start <= parse_ts(r["ts"]) <= end:
            continue
        (out if r.get("mount") == mount else other).append(r)
    # What the window holds on no mount or another one: server threads of
    # this single-node setup, requests of imports no access op used yet.
    notes = sorted({(r["type"], r.get("op"), r.get("opcode_name"), r.get("comm"), r.get("mount"))
                    for r in other if r["type"] == "rpc"}, key=str)
    for n in notes:
        print("note not on the mount:", n)
    for r in other:
        if r["type"] == "rpc" and r.get("op") in ("request", "queue_wait") and r.get("uid") is not None \
                and not re.match(r"(osp|mdt|ll_ost|ldlm|ptlrpcd|kworker)", r.get("comm", "")):
            print("note:", json.dumps(r, sort_keys=True))
    return out


class Report:
    def __init__(self):
        self.failed = 0

    def eq(self, what, ours, lustre, names=("tool", "Lustre")):
        ok = ours == lustre
        self.failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {names[0]} {ours}, {names[1]} {lustre}")

    def true(self, what, ok, detail=""):
        self.failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {what}{': ' + detail if detail else ''}")

    def listed(self, what, table, key):
        """table[key], or a failure when Lustre does not list it (never 0)."""
        if key in table:
            return table[key]
        self.true(f"{what}: Lustre lists {key}", False, f"only {sorted(table)}")
        return None


def window(devices):
    starts = [c["start"] for c in devices.values() if "start" in c]
    ends = [c["snapshot"] for c in devices.values() if "snapshot" in c]
    return max(starts), min(ends)


def counter(devs, name):
    """Samples and sum of a counter over devices (0, 0 when absent)."""
    n = s = 0
    for c in devs.values():
        if name in c:
            n += c[name][0]
            s += c[name][2]
    return n, s


# The access ops llite counts, by the tool's op: (llite counter, which
# records it counts). llite counts successful calls only (ll_file_open,
# ll_file_release, ll_rename, ll_link, ll_symlink, ll_statfs tally on
# rc == 0); the tests keep the root directory out of the workload, whose
# open and close llite does not count. ll_xattr_get_common returns
# EOPNOTSUPP for a disabled name space before it tallies; everything else
# (also ENODATA) is counted. read and write: the calls that moved bytes.
OK = lambda r: r["errno"] == 0  # noqa: E731
LLITE_OPS = {
    "close": ("close", OK), "getattr": ("getattr", OK), "setattr": ("setattr", OK),
    "mkdir": ("mkdir", OK), "rmdir": ("rmdir", OK), "unlink": ("unlink", OK),
    "rename": ("rename", OK), "fsync": ("fsync", OK), "readdir": ("readdir", OK),
    "statfs": ("statfs", OK), "link": ("link", OK), "symlink": ("symlink", OK),
    "setxattr": ("setxattr", OK), "listxattr": ("listxattr", OK),
    "getxattr": ("getxattr", lambda r: r["errno"] != EOPNOTSUPP),
}
# Ops of the tool llite has no counter for (lproc_llite.c's table has no
# lookup, get_link or get_acl): their records are required, not compared.
LLITE_UNCOUNTED = ("lookup", "readlink", "get_acl")
# llite counters no access record kind matches (mmap, seek, the permission
# checks the tool probes as a context only, ioctls of lfs/lctl, how a
# write was done: hybrid buffered/direct I/O, ...), and read/write, the
# latency twins of read_bytes/write_bytes compared above.
LLITE_NO_RECORD = ("seek", "inode_permission", "ioctl", "opencount", "openclosetime",
                   "getxattr_hits", "mmap", "page_fault", "page_mkwrite", "cached_read_bytes",
                   "read", "write", "truncate", "flock", "fallocate", "removexattr",
                   "hybrid_noswitch", "hybrid_writesize_switch", "hybrid_readsize_switch",
                   "hybrid_read_bytes", "hybrid_write_bytes")


def check_access(args, rep):
    devices = parse_lctl(args.lctl)
    llite = {k: v for k, v in devices.items() if k.startswith("llite.")}
    start, end = window(llite)
    recs = [r for r in load_records(args.records, args.mount, start, end) if r["type"] == "access"]
    rep.true("access records in the window", len(recs) > 0, f"{len(recs)}")

    def count(op, pred=OK):
        ops = op if isinstance(op, tuple) else (op,)
        return sum(1 for r in recs if r["op"] in ops and pred(r))

    def lustre(name):
        """llite's samples of a counter the workload makes: listed and > 0."""
        n = counter(llite, name)[0]
        rep.true(f"llite {name} > 0 (the workload makes it)", n > 0, f"{n}")
        return n

    ours_total = lustre_total = 0
    for op in ("read", "write"):
        moved = [r for r in recs if r["op"] == op and r["bytes"] > 0]
        # llite tallies read_bytes/write_bytes only when the call moved bytes.
        n = lustre(f"{op}_bytes")
        rep.eq(f"{op} calls that moved bytes vs llite {op}_bytes samples", len(moved), n)
        rep.eq(f"{op} bytes vs llite {op}_bytes sum", sum(r["bytes"] for r in moved),
               counter(llite, f"{op}_bytes")[1])
        ours_total += len(moved)
        lustre_total += n
    # A create through ->atomic_open is one create record; llite counts it
    # in both mknod and open.
    n = lustre("open")
    rep.eq("opens and creates that succeeded vs llite open", count(("open", "create")), n)
    ours_total += count(("open", "create"))
    lustre_total += n
    n = lustre("mknod")
    rep.eq("creates vs llite mknod (DISP_OPEN_CREATE)", count("create"), n)
    for op, (lname, pred) in sorted(LLITE_OPS.items()):
        n = lustre(lname)
        rep.eq(f"{op} (llite's rule) vs llite {lname}", count(op, pred), n)
        ours_total += count(op, pred)
        lustre_total += n
    # The total: every op llite counts, each by llite's rule.
    rep.eq("all access ops llite counts: total", ours_total, lustre_total)
    for op in LLITE_UNCOUNTED[:2]:
        rep.true(f"{op} records (llite has no counter)", count(op, lambda r: True) > 0,
                 f"{count(op, lambda r: True)}")
    # An op the tool reports that is neither compared nor known to be
    # uncounted would escape every comparison.
    known = set(LLITE_OPS) | set(LLITE_UNCOUNTED) | {"read", "write", "open", "create"}
    other = sorted({r["op"] for r in recs} - known)
    rep.true("every op of the records is compared with llite or known uncounted", not other,
             f"not: {other}" if other else "")
    used = {c for c, _ in LLITE_OPS.values()} | {"read_bytes", "write_bytes", "open", "mknod"}
    left = sorted(n for c in llite.values() for n, v in c.items()
                  if isinstance(v, tuple) and v[0] and n not in used and n not in LLITE_NO_RECORD)
    rep.true("every llite counter with samples is compared or has no record kind", not left,
             f"not: {left}" if left else "")


def check_requests(args, rep):
    devices = parse_lctl(args.lctl)
    client = {**client_devices(devices, "mdc"), **client_devices(devices, "osc")}
    start, end = window(client)
    every = [r for r in load_records(args.records, args.mount, start, end)
             if r["type"] == "rpc" and r["op"] == "request"]
    # Lustre's counters hold replies; a request released without one
    # (timed out, failed) is a record of its own with replied false.
    reqs = [r for r in every if r.get("replied") is True]
    unreplied = [r for r in every if r.get("replied") is False]
    # Each one expected, by opcode, errno and the process that sent it; a
    # ping of the pinger that the fault caught as well may be among them
    # (its errno is how Lustre gave up on it: aborted by the reconnect).
    expected = sorted(tuple(u.split(":")) for u in args.unreplied)
    got = [(r.get("opcode_name"), str(r["errno"]), r.get("comm")) for r in unreplied]
    print("note: released without a reply (opcode, errno, comm):", got)
    rep.eq("requests released without a reply, as expected (opcode, errno, comm)",
           sorted(g for g in got if g in expected), expected)
    if args.phase == "restart":
        # A target restart: requests that expired (ETIMEDOUT, each one of
        # the imports' timeouts, checked by the caller) or that an
        # eviction aborted (EIO), or refused while disconnected (ENOTCONN).
        # At least one: the OSC's connects that expired (the caller requires
        # a timeout), so all() is never over nothing.
        rep.true("requests released without a reply in a restart: expired, aborted or refused",
                 len(got) > 0 and all(g[1] in ("110", "11", "5", "107") for g in got),
                 f"{len(got)}: {sorted(set(got))}")
    else:
        rep.true("no other request released without a reply but a kernel thread's ping",
                 all(g in expected or (g[0] == "obd_ping" and KTHREAD.match(g[2] or ""))
                     for g in got))
    rep.eq("every request record says replied or not", len(reqs) + len(unreplied), len(every))
    by_opc = {}
    for r in reqs:
        by_opc.setdefault(r.get("opcode_name"), []).append(r)
    # Every reply is counted in req_waittime (after_reply), whatever its opcode.
    rep.eq("request records vs mdc+osc req_waittime samples", len(reqs),
           counter(client, "req_waittime")[0])
    # Every opcode either side has, so that one only the tool reports
    # fails too (Lustre lists no counter it never added to). Lustre keeps no
    # reply counter for LDLM_ENQUEUE and MDS_REINT (ptlrpc_lprocfs_rpc_sent).
    lustre_names = {n for c in client.values() for n, v in c.items()
                    if isinstance(v, tuple) and v[1] == "usecs" and n != "req_waittime"}
    names = sorted((lustre_names | set(by_opc)) - set(NO_OPCODE_COUNTER), key=str)
    rep.true("per opcode: opcodes compared", len(names) > 0, f"{len(names)}: {names}")
    for name in names:
        recs = by_opc.get(name, [])
        n, total = counter(client, name)
        rep.eq(f"{name} requests", len(recs), n)
        # ptlrpc_lprocfs_rpc_sent(req, usecs): the same service time.
        rep.eq(f"{name} service time (us)", sum(r["latency_ns"] for r in recs) // 1000, total)
    # LDLM_ENQUEUE and MDS_REINT have no reply counter of their own: Lustre
    # counts enqueues by lock type when it packs them.
    enq = sum(counter(client, n)[0] for n in ("ldlm_ibits_enqueue", "ldlm_extent_enqueue",
                                                 "ldlm_glimpse_enqueue", "ldlm_flock_enqueue",
                                                 "ldlm_plain_enqueue"))
    # Counted when packed: an enqueue without a reply (aborted) too.
    rep.eq("ldlm_enqueue requests (replied or not) vs ldlm_*_enqueue",
           len(by_opc.get("ldlm_enqueue", []))
           + sum(1 for r in unreplied if r.get("opcode_name") == "ldlm_enqueue"), enq)
    for op in ("read", "write"):
        recs = by_opc.get(f"ost_{op}", [])
        rep.eq(f"ost_{op} bytes vs osc {op}_bytes sum", sum(r["bytes"] for r in recs),
               counter(client, f"{op}_bytes")[1])
    rep.eq("every request record has an opcode", all("opcode" in r for r in reqs), True)
    # The time split: created -> first send, first send -> reply; the
    # tool's first send comes before Lustre's rq_sent_ns and its reply
    # point after Lustre's, so service_ns covers Lustre's own time.
    rep.true("every request has queued_ns, service_ns >= latency_ns and resends",
             all(isinstance(r.get("queued_ns"), int) and r.get("service_ns", -1) >= r["latency_ns"]
                 and isinstance(r.get("resends"), int) for r in reqs) and len(reqs) > 0)
    if args.phase == "main":
        rep.eq("resends on a healthy single-node Lustre", sum(r.get("resends", 0) for r in reqs), 0)
    print("note: resends:", sum(r.get("resends", 0) for r in reqs))
    if args.phase != "restart":
        # ptl_send_rpc adds one req_active sample per transmission, first or
        # resent; req_waittime one per reply Lustre accounted. What is left
        # is Lustre's count of resends plus the sends that never had a reply
        # (a resend on -EINPROGRESS, after_reply, adds no reply sample).
        # Not in a restart: a request refused while the import is down is
        # released unsent.
        # A request refused before ptl_send_rpc (its import not ready: a
        # pinger's ping while the import reconnects) was never sent.
        sends = counter(client, "req_active")[0]
        unsent = [r for r in every if r.get("sent") is False]
        lustre_resends = (sends - counter(client, "req_waittime")[0]
                          - (len(unreplied) - len(unsent)))
        ours = sum(r.get("resends", 0) for r in every)
        if unsent:
            print("note: released unsent (opcode, errno, comm):",
                  [(r.get("opcode_name"), r.get("errno"), r.get("comm")) for r in unsent])
        rep.eq("transmissions: request records sent and their resends vs mdc+osc req_active samples",
               len(every) - len(unsent) + ours, sends)
        rep.eq("resends vs Lustre's (req_active - req_waittime - sent without a reply)",
               ours, lustre_resends)
        if args.min_resends:
            rep.true(f"Lustre resent {args.min_resends} or more", lustre_resends >= args.min_resends,
                     f"{lustre_resends}")
    # errno is the reply's status: the workload's rmdir of a directory
    # that is not empty is refused by the MDT in its reint's reply.
    failed = {}
    for r in reqs:
        if r["errno"]:
            key = (r.get("opcode_name"), r["errno"])
            failed[key] = failed.get(key, 0) + 1
    if args.phase == "main":
        rep.eq("mds_reint requests with errno ENOTEMPTY (the refused rmdir)",
               failed.get(("mds_reint", ENOTEMPTY), 0), 1)
    print("note: requests with an errno, (opcode, errno): count:", sorted(failed.items()))
    # xid and target come from module BTF: present with it, null without.
    if args.ids == "btf":
        per_target = {}
        for r in reqs:
            per_target[r.get("target")] = per_target.get(r.get("target"), 0) + 1
        lustre_targets = {re.sub(r"^(mdc|osc)\.(.*)-(mdc|osc)-[0-9a-f]+$", r"\2", name):
                          counter({name: c}, "req_waittime")[0] for name, c in client.items()}
        rep.eq("requests per target vs req_waittime samples per device", per_target, lustre_targets)
        xids = [r.get("xid") for r in reqs]
        rep.true("every request has an xid, each its own",
                 all(isinstance(x, int) and x > 0 for x in xids) and len(set(xids)) == len(xids))
        if args.imports:
            nids = {}
            for r in reqs:
                nids.setdefault(r.get("target"), set()).add(r.get("nid"))
            lustre_nids = parse_imports(args.imports)
            rep.true("Lustre lists a current_connection per client import",
                     len(lustre_nids) == len(client), f"{lustre_nids} for {len(client)} devices")
            rep.eq("server NID per target vs the imports' current_connection", nids,
                   {t: {n} for t, n in lustre_nids.items() if t in nids})
    elif args.ids == "none":
        rep.true("no module BTF: xid, target and nid null",
                 all(r.get("xid", 0) is None and r.get("target", 0) is None
                     and r.get("nid", 0) is None for r in reqs))
    # The workload pings every client import from outside any access op.
    pings = counter(client, "obd_ping")[0]
    if args.phase == "main":
        rep.true("obd_ping: Lustre counts one per client import at least", pings >= len(client),
                 f"{pings} for {len(client)} devices")


NO_OPCODE_COUNTER = ("ldlm_enqueue", "mds_reint")


def parse_imports(path):
    """{target: current_connection} from lctl get_param osc.*.import mdc.*.import."""
    out, target = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*target:\s*\"?(\S+?)(_UUID)?\"?\s*$", line)
            if m:
                target = m.group(1)
            m = re.match(r"\s*current_connection:\s*\"?([^\s\"]+)\"?\s*$", line)
            if m and target:
                out[target] = m.group(1)
                target = None
    return out


def parse_job_stats(path):
    """{target kind: {job: {counter: (samples, sum)}}} from lctl get_param *.job_stats."""
    out, kind, job = {}, None, None
    for line in open(path):
        m = re.match(r"^(obdfilter|mdt)\.\S+\.job_stats=", line)
        if m:
            kind = m.group(1)
            out.setdefault(kind, {})
            continue
        m = re.match(r"^- job_id:\s+(\S+)", line)
        if m and kind:
            job = out[kind].setdefault(m.group(1), {})
            continue
        # Counters without a sum (no LPROCFS_CNTR_AVGMINMAX) are listed too.
        m = re.match(r"^\s+(\w+):\s+\{ samples:\s+(\d+)(?:,.*?sum:\s+(\d+))?", line)
        if m and job is not None:
            # A job has an entry on every target it used (each OST, each
            # MDT of the kind): the kind's counters are their sums.
            n, total = job.get(m.group(1), (0, 0))
            job[m.group(1)] = (n + int(m.group(2)), total + int(m.group(3) or 0))
    return out


def ost_sums(path):
    """{OST: {read_bytes|write_bytes: sum}} of lctl get_param obdfilter.*.job_stats (over
    its jobs) or obdfilter.*.stats (the target's own counters), whichever PATH holds."""
    out, target = {}, None
    for line in open(path):
        m = re.match(r"^obdfilter\.(\S+)\.(?:job_stats|stats)=", line)
        if m:
            target = out.setdefault(m.group(1), {"read_bytes": 0, "write_bytes": 0})
            continue
        if re.match(r"^\S+\.\S+=", line):
            target = None
        # job_stats: "  write_bytes: { samples: N, ..., sum: S, ...}";
        # stats: "write_bytes N samples [bytes] MIN MAX SUM SUMSQ".
        m = (re.match(r"^\s+(read_bytes|write_bytes):\s+\{.*?sum:\s+(\d+)", line) or
             re.match(r"^(read_bytes|write_bytes)\s+\d+ samples \[bytes\] \d+ \d+ (\d+)", line))
        if m and target is not None:
            target[m.group(1)] += int(m.group(2))
    return out


def note_jobs_whole(jobs_path, stats_path):
    """Whether the OSTs' job_stats list all their bytes: per OST, the jobs' sums vs the
    target's own stats (every client request carries a job ID). Where they differ,
    Lustre's listing lost entries, and the job comparisons above are against less
    than the OST did."""
    listed, own = ost_sums(jobs_path), ost_sums(stats_path)
    for ost in sorted(own):
        for c in ("read_bytes", "write_bytes"):
            a, b = listed.get(ost, {}).get(c, 0), own[ost][c]
            print(f"note job_stats whole: {ost} {c}: the jobs' sum {a}, the target's stats {b}"
                  + ("" if a == b else " (the job_stats listing lacks entries)"))


# A thread of the kernel or of Lustre (a flusher, ptlrpcd, read-ahead), not a user's process.
KTHREAD = re.compile(r"^(kworker|ptlrpcd|ll_|ldlm_|writeback|flush-)")


def sender(r):
    """The thread that sent a request: its worker when another thread did."""
    return r.get("worker_comm") or r.get("comm", "")


def compare_job(rep, label, recs, ost, mdt):
    """Records of one job vs its obdfilter and mdt job_stats, every counter listed."""
    for op in ("read", "write"):
        got = [r for r in recs if r.get("opcode_name") == f"ost_{op}"]
        c = rep.listed(f"{label}: obdfilter job_stats", ost, f"{op}_bytes")
        if c is None:
            continue
        rep.eq(f"{label}: ost_{op} requests vs obdfilter job_stats {op}_bytes samples",
               len(got), c[0])
        rep.eq(f"{label}: ost_{op} bytes vs obdfilter job_stats {op}_bytes sum",
               sum(r["bytes"] for r in got), c[1])
    for opc, name in (("ost_sync", "sync"), ("ost_setattr", "setattr")):
        c = rep.listed(f"{label}: obdfilter job_stats", ost, name)
        if c is not None:
            rep.eq(f"{label}: {opc} requests vs obdfilter job_stats {name}",
                   sum(1 for r in recs if r.get("opcode_name") == opc), c[0])
    c = rep.listed(f"{label}: mdt job_stats", mdt, "close")
    if c is not None:
        rep.eq(f"{label}: mds_close requests vs mdt job_stats close",
               sum(1 for r in recs if r.get("opcode_name") == "mds_close"), c[0])


def note_kthread_writes(job, writes):
    """How a job's ost_write requests sent by kernel threads were charged."""
    by_source = {}
    for r in writes:
        if KTHREAD.match(sender(r)):
            key = (r.get("comm"), r.get("job_source"))
            by_source[key] = by_source.get(key, 0) + 1
    print(f"note job {job}: {len(writes)} ost_write, sent by a kernel thread by (comm, "
          f"job_source): {by_source}")


def parse_writers(path):
    """{job: (pid, uid, comm)} from lr_writer's file (JOB PID UID COMM a line)."""
    out = {}
    for line in open(path, encoding="utf-8"):
        f = line.split()
        if len(f) == 4:
            out[f[0]] = (int(f[1]), int(f[2]), f[3])
    return out


def note_lustre_charged(rep, job, writes):
    """Requests charged to the wire job because the writer was unknown (rule 2)."""
    lustre = [r for r in writes if r.get("job_source") == "lustre"]
    print(f"note job {job}: {len(lustre)} of {len(writes)} ost_write charged by Lustre's job "
          f"(job_source lustre, writer unknown)"
          + (f": {sorted({(r.get('comm'), r.get('job_id')) for r in lustre}, key=str)}"
             if lustre else ""))
    return lustre


def check_writeback(rep, job, mine, cause_comm, writer=None, unprobed=None, wire=None):
    """The job's ost_write requests, writeback by kernel threads among them,
    are charged to the job's writer: its pid, uid and comm where the writer
    is known (--writers), and the job of its environment."""
    writes = [r for r in mine if r.get("opcode_name") == "ost_write"]
    by_kthread = [r for r in writes if KTHREAD.match(sender(r))]
    senders = sorted({sender(r) for r in by_kthread})
    rep.true(f"job {job}: ost_write requests sent by a kernel thread", len(by_kthread) > 0,
             f"{len(by_kthread)} of {len(writes)} ({', '.join(senders)})")
    wrong = [(r.get("comm"), r.get("job_id"), r.get("job_source")) for r in writes
             if r.get("job_id") != job]
    rep.true(f"job {job}: every ost_write charged to job_id {job}"
             + (f" (the environment's; Lustre sent {wire})" if wire and wire != job else ""),
             not wrong, f"{len(wrong)} not: {sorted(set(wrong), key=str)[:5]}" if wrong else "")
    note_kthread_writes(job, writes)
    lustre = note_lustre_charged(rep, job, writes)
    if unprobed is not None:
        rep.true(f"job {job}: writeback charged to its writer: osc_brw_prep_request probed",
                 False, f"not probed ({unprobed})")
    if writer:
        pid, uid, comm = writer
        off = [(r.get("pid"), r.get("uid"), r.get("comm"), r.get("worker_comm"),
                r.get("job_source")) for r in writes
               if (r.get("pid"), r.get("uid"), r.get("comm")) != (pid, uid, comm)]
        rep.true(f"job {job}: every ost_write carries its writer (pid {pid}, uid {uid}, "
                 f"comm {comm})", not off and not lustre,
                 f"{len(off)} not: {sorted(set(off), key=str)[:5]}" if off else "")
        cause_comm = cause_comm or comm
    if cause_comm:
        # Charged to the process that wrote the file, the sender kept as worker.
        off = [(r.get("comm"), r.get("worker_comm")) for r in by_kthread
               if r.get("comm") != cause_comm or not KTHREAD.match(r.get("worker_comm") or "")]
        rep.true(f"job {job}: kernel-thread ost_write have comm {cause_comm}, the thread as "
                 f"worker_comm", not off, f"{len(off)} not: {sorted(set(off), key=str)[:5]}"
                 if off else "")


def window_bytes(path, job):
    """Bytes of the job's requests in the --aggregate windows (group-by job_id,op)."""
    total = n = 0
    for line in open(path):
        w = json.loads(line)
        if w.get("type") == "window" and w.get("record_type") == "rpc" \
                and w.get("op") == "request" and w.get("job_id") == job:
            total += w["bytes"]
            n += 1
    return n, total


def parse_metrics(path, mount):
    """[(family, {label: value}, value)] of the mount from a /metrics scrape."""
    out = []
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^(\w+)\{(.*)\} (\S+)$", line.strip())
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
        if labels.get("mount") == mount:
            out.append((m.group(1), labels, float(m.group(3))))
    return out


FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures",
                       "exporter-e743798.txt")


def exporter_labels():
    """{family: [label, ...]} of lustre-ebpf-exporter (with --slurm-jobid)."""
    fams = {}
    for line in open(FIXTURE):
        w = line.split()
        if len(w) == 4 and w[0] == "family":
            fams[w[1]] = w[3].split(",")
    return fams


def check_exporter_families(rep, metrics):
    """The mount's lustre_client_* series carry the exporter's labels, in its order."""
    want = exporter_labels()
    bad = []
    for f, lab, _ in metrics:
        base = re.sub(r"_(bucket|sum|count)$", "", f)
        if base not in want:
            continue
        names = [k for k in lab if k != "le"]
        if names != want[base]:
            bad.append(f"{f}: {names}")
    rep.true("lustre_client_* series of the Lustre mount: the exporter's labels, no fs_type",
             not bad and any(f.startswith("lustre_client_") for f, _, _ in metrics),
             "; ".join(bad[:3]))
    ops = {lab.get("op") for f, lab, _ in metrics
           if f == "lustre_client_rpc_wait_operations_total"}
    rep.eq("lustre_client_rpc_wait_* is ptlrpc_queue_wait only, as the exporter's",
           sorted(ops), ["queue_wait"])


def check_metrics(rep, job, metrics, ost, mine):
    """The Prometheus series of one job vs its obdfilter job_stats and its records."""
    fam = [(lab, v) for f, lab, v in metrics if lab.get("slurm_job_id") == job]
    for op in ("read", "write"):
        c = rep.listed(f"job {job}: obdfilter job_stats", ost, f"{op}_bytes")
        if c is None:
            continue
        got = sum(v for f, lab, v in metrics if f == "lustre_client_data_bytes_total"
                  and lab.get("slurm_job_id") == job and lab.get("op") == op)
        rep.eq(f"job {job}: Prometheus lustre_client_data_bytes_total{{op={op}}} vs obdfilter "
               f"job_stats {op}_bytes sum", int(got), c[1])
    done = sum(v for f, lab, v in metrics if f == "lustre_client_ptlrpc_requests_completed_total"
               and lab.get("slurm_job_id") == job)
    rep.true(f"job {job}: Prometheus series by slurm_job_id", len(fam) > 0, f"{len(fam)}")
    rep.eq(f"job {job}: Prometheus ptlrpc_requests_completed_total vs its request records",
           int(done), len(mine))
    timed = sum(v for f, lab, v in metrics
                if f == "lustre_ebpf_stream_client_ptlrpc_request_duration_seconds_count"
                and lab.get("slurm_job_id") == job)
    rep.eq(f"job {job}: our ptlrpc_request_duration_seconds_count vs its request records",
           int(timed), len(mine))


def check_jobs(args, rep):
    jobs = parse_job_stats(args.jobs)
    writers = parse_writers(args.writers) if args.writers else {}
    reqs = []
    for line in open(args.records):
        r = json.loads(line)
        if r.get("type") == "rpc" and r.get("op") == "request" and r.get("mount") == args.mount:
            reqs.append(r)
    for kind in ("obdfilter", "mdt"):
        rep.true(f"{kind} job_stats read", kind in jobs)
    if args.ost_stats:
        note_jobs_whole(args.jobs, args.ost_stats)
    for job in args.job:
        # The servers list a job by the ID Lustre sent (jobid_var), which
        # the tests make differ from the environment's (--wire-prefix).
        wire_id = args.wire_prefix + job
        ost = rep.listed("obdfilter job_stats", jobs.get("obdfilter", {}), wire_id)
        mdt = rep.listed("mdt job_stats", jobs.get("mdt", {}), wire_id)
        wire = [r for r in reqs if r.get("lustre_jobid") == wire_id]
        rep.true(f"job {job}: the job has requests (lustre_jobid {wire_id})", len(wire) > 0,
                 f"{len(wire)}")
        if ost is None or mdt is None:
            continue
        # The job ID Lustre sent, and the job the tool charges (what
        # --aggregate, Prometheus, --top and --job count by).
        compare_job(rep, f"job {job} (lustre_jobid {wire_id})", wire, ost, mdt)
        compare_job(rep, f"job {job} (job_id)", [r for r in reqs if r.get("job_id") == job],
                    ost, mdt)
        if args.windows:
            n, total = window_bytes(args.windows, job)
            lustre = sum((ost.get(c) or (0, 0))[1] for c in ("read_bytes", "write_bytes"))
            rep.true(f"job {job}: --aggregate windows by job_id", n > 0, f"{n} windows")
            rep.eq(f"job {job}: --aggregate request bytes vs obdfilter read_bytes + "
                   f"write_bytes sums", total, lustre)
        if args.metrics:
            check_metrics(rep, job, parse_metrics(args.metrics, args.mount), ost,
                          [r for r in reqs if r.get("job_id") == job])
        if job in args.writeback_job:
            check_writeback(rep, job, wire, args.cause_comm, writers.get(job),
                            args.cause_unprobed, wire_id)
        else:
            writes = [r for r in wire if r.get("opcode_name") == "ost_write"]
            note_kthread_writes(job, writes)
            note_lustre_charged(rep, job, writes)
            if job in writers and writes:
                # A writer of its own: every write of the job is its.
                pid, uid, comm = writers[job]
                off = [(r.get("pid"), r.get("uid"), r.get("comm"), r.get("job_id"))
                       for r in writes
                       if (r.get("pid"), r.get("uid"), r.get("comm"), r.get("job_id"))
                       != (pid, uid, comm, job)]
                rep.true(f"job {job}: every ost_write carries its writer (pid {pid}, uid {uid}, "
                         f"comm {comm}) and job_id {job}", not off,
                         f"{len(off)} not: {sorted(set(off), key=str)[:5]}" if off else "")
    for job in args.writeback_job:
        rep.true(f"--writeback-job {job} is one of the --job", job in args.job)
    if args.writers:
        rep.true("every --writeback-job has a writer in --writers",
                 all(j in writers for j in args.writeback_job), f"{sorted(writers)}")
    if args.metrics:
        check_exporter_families(rep, parse_metrics(args.metrics, args.mount))


def check_locks(args, rep):
    """Blocked grant waits on two mounts vs the completion ASTs the node received."""
    svc = parse_lctl(args.ldlm).get("ldlm.services.ldlm_cbd")
    rep.true("ldlm.services.ldlm_cbd.stats read", svc is not None)
    if svc is None:
        return
    start, end = svc.get("start", 0), svc.get("snapshot", 1 << 63)
    every = [json.loads(line) for line in open(args.records)]
    ops = {r["op_id"]: r for r in every if r.get("type") == "access"}
    waits = [r for r in every if r.get("type") == "rpc" and r.get("op") == "lock_wait"
             and r.get("function") == "ldlm_completion_ast" and start <= parse_ts(r["ts"]) <= end]
    blocked = [r for r in waits if r.get("blocked")]
    bl = rep.listed("ldlm_cbd stats", svc, "ldlm_bl_callback")
    cp = rep.listed("ldlm_cbd stats", svc, "ldlm_cp_callback")
    if bl is None or cp is None:
        return
    rep.true("blocking ASTs received (ldlm_bl_callback)", bl[0] > 0, f"{bl[0]}")
    # A lock the server queued behind a conflicting one is granted by a
    # completion AST (ldlm_server_completion_ast); one granted at once is not.
    rep.eq("blocked grant waits (ldlm_completion_ast lock_wait, blocked) vs ldlm_cbd "
           "ldlm_cp_callback", len(blocked), cp[0])
    # Every Lustre mount of one filesystem has one s_dev: the records of
    # all of them name the first (said on stderr at start).
    rep.true(f"blocked grant waits name {args.mount}, also those on {', '.join(args.mount2)}",
             all(r.get("mount") == args.mount for r in blocked),
             f"{sorted({r.get('mount') for r in blocked}, key=str)}")
    for job in args.job:
        rep.true(f"blocked grant waits of job {job}", any(r.get("job_id") == job for r in blocked),
                 f"{sum(1 for r in blocked if r.get('job_id') == job)}")
    off = []
    for r in blocked:
        op = ops.get(r.get("parent_op_id"))
        if not op or op["pid"] != r["pid"] or op["mount"] != r["mount"] \
                or op["latency_ns"] < r["latency_ns"] or r.get("job_id") is None:
            off.append((r.get("comm"), r.get("mount"), r.get("parent_op_id"), r.get("job_id")))
    rep.true(f"each blocked wait >= {args.min_blocked_ms} ms (the holder's cancel paused)",
             all(r["latency_ns"] >= args.min_blocked_ms * 1_000_000 for r in blocked),
             f"{[round(r['latency_ns'] / 1e6, 1) for r in blocked]}")
    rep.true("each blocked wait inside the access op of the job that waited, and no longer",
             not off, f"{len(off)} not: {off[:5]}" if off else "")
    for r in blocked:
        op = ops.get(r.get("parent_op_id")) or {}
        print(f"note blocked: job {r.get('job_id')} {r.get('comm')} on {r.get('mount')}: "
              f"{r['latency_ns'] / 1e6:.1f} ms of its {op.get('op')} "
              f"({op.get('latency_ns', 0) / 1e6:.1f} ms)")


# A server's rpctrace line (lustre/ptlrpc/service.c, ptlrpc_server_handle_request):
# debug header (mask:subsystem:cpu:epoch secs.usecs:...), then the request's
# pname:cluuid+ref:pid:xid:nid:opc:job and its two times.
HANDLED_RE = re.compile(
    r"^[0-9a-f]+:[0-9a-f]+:[\d.]+F?:(?P<t>\d+\.\d+):.*Handled RPC req@\S+ "
    r"pname:cluuid\+ref:pid:xid:nid:opc:job "
    r"(?P<pname>[^:]+):(?P<uuid>[^+]*)\+-?\d+:-?\d+:x(?P<xid>\d+):(?:\d+-)?(?P<nid>[^:]+):"
    r"(?P<opc>\d+):(?P<job>.*?) Request processed in (?P<x>-?\d+)us \((?P<y>-?\d+)us total\) "
    r"trans (?P<trans>\d+) rc (?P<rc>-?\d+)/(?P<rep>-?\d+)")


def parse_handled(path):
    """The servers' Handled RPC lines: one dict per line (times in us, t in ns)."""
    out = []
    for line in open(path, errors="replace"):
        m = HANDLED_RE.match(line)
        if not m:
            if "Handled RPC" in line:
                print("note unparsed Handled line:", line.strip()[:200])
            continue
        d = m.groupdict()
        out.append({"t": secs_ns(d["t"]), "pname": d["pname"], "xid": int(d["xid"]),
                    "nid": d["nid"], "opc": int(d["opc"]), "job": d["job"],
                    "x": int(d["x"]), "y": int(d["y"]), "rc": int(d["rc"])})
    return out


def dk_window(path):
    """The epoch ns of the log's first and last line."""
    ts = [secs_ns(m.group(1)) for m in
          (re.match(r"^[0-9a-f]+:[0-9a-f]+:[\d.]+F?:(\d+\.\d+):", ln)
           for ln in open(path, errors="replace")) if m]
    return (min(ts), max(ts)) if ts else (0, 0)


def check_servers(args, rep):
    lines = parse_handled(args.dk)
    recs = [json.loads(ln) for ln in open(args.records)]
    srv = [r for r in recs if r.get("type") == "srv"]
    joins = [r for r in recs if r.get("type") == "rpc_join"]
    stats = [r for r in recs if r.get("type") == "stats"]
    # A run's first part (--segment) ends with a periodic stats record: its
    # join counts are those of the lines before it, as the final's are the run's.
    final = stats[-1:] if args.segment else [r for r in stats if r.get("final")]
    join = final[-1].get("join") if final else None
    client = [r for r in recs if r.get("type") == "rpc" and r.get("proto") == "ptlrpc"
              and r.get("op") == "request"]
    rep.true("the servers logged Handled RPC lines", len(lines) > 0, f"{len(lines)}")
    rep.true("a final stats record with the join's object", join is not None, f"{join}")
    if args.ids == "none":
        rep.eq("server records without module BTF", len(srv), 0)
        rep.eq("joined lines without module BTF", len(joins), 0)
        # No server probe attaches without BTF: the join is off, and says so.
        rep.eq("the join is off without server probes", (join or {}).get("off"),
               "no server probe attached")
        return
    by_key = {}
    for r in srv:
        by_key.setdefault((r["xid"], r["client_nid"]), []).append(r)
    worst_x = worst_y = 0
    missing, twice, differ, off = [], [], [], []
    for ln in lines:
        mine = by_key.get((ln["xid"], ln["nid"]), [])
        if not mine:
            missing.append(ln)
            continue
        if len(mine) > 1:
            twice.append(ln)
        r = mine[0]
        if (r.get("opcode"), r["thread"], r["status"]) != (ln["opc"], ln["pname"], ln["rc"]):
            differ.append((ln, {k: r.get(k) for k in ("opcode", "thread", "status")}))
        dx = r["handle_ns"] / 1000 - ln["x"]
        dy = r["total_ns"] / 1000 - ln["y"]
        worst_x = max(worst_x, abs(dx), key=abs)
        worst_y = max(worst_y, abs(dy), key=abs)
        if abs(dx) > args.bound_us or abs(dy) > args.bound_us:
            off.append((ln["xid"], ln["pname"], ln["x"], round(r["handle_ns"] / 1000),
                        ln["y"], round(r["total_ns"] / 1000)))
    rep.true("every Handled line has a server record (xid, client NID)", not missing,
             f"{len(missing)} of {len(lines)} not: {missing[:3]}" if missing else f"{len(lines)}")
    rep.true("no Handled line has two records", not twice, f"{twice[:3]}")
    rep.true("each record's opcode, thread and rq_status = its line's", not differ, f"{differ[:3]}")
    # A guest under single-threaded emulation stalls a vCPU for milliseconds
    # now and then, between the handler's return and Lustre's stamp: most
    # lines within the bound, every line within the outlier bound.
    allowed = len(lines) * args.outliers_pct // 100
    rep.true(f"handle_ns = X and total_ns = Y within {args.bound_us} us "
             f"(at most {args.outliers_pct}% of lines within {args.outlier_us} us)",
             len(off) <= allowed and all(abs(o[2] - o[3]) <= args.outlier_us
                                         and abs(o[4] - o[5]) <= args.outlier_us for o in off),
             f"worst {worst_x:.0f} us, {worst_y:.0f} us; {len(off)} off (allowed {allowed}): "
             f"{off[:5]}")
    print(f"note rpctrace: {len(lines)} lines; handle_ns - X worst {worst_x:.0f} us, "
          f"total_ns - Y worst {worst_y:.0f} us")
    start, end = dk_window(args.dk)
    logged = {(ln["xid"], ln["nid"]) for ln in lines}
    if args.svc:
        check_svcstats(args, [r for r in srv if (r["xid"], r["client_nid"]) in logged], rep)
    if args.brw:
        check_brw(args, [r for r in srv if (r["xid"], r["client_nid"]) in logged], rep)
    inside = [r for r in srv if start <= parse_ts(r["ts"]) <= end - args.bound_us * 1000]
    extra = [(r["xid"], r["service"], r["thread"]) for r in inside
             if (r["xid"], r["client_nid"]) not in logged]
    rep.true("no server record in the log's window without its Handled line", not extra,
             f"{len(inside)} in the window; {len(extra)} not logged: {extra[:5]}")
    # The join: every client request the servers logged is joined, once.
    logged_xids = {ln["xid"] for ln in lines}
    mine = [r for r in client if r.get("xid") in logged_xids]
    joined = {j["req_id"] for j in joins}
    unjoined = [(r["xid"], r.get("opcode_name"), r.get("comm")) for r in mine
                if r["req_id"] not in joined]
    rep.true("every client request the servers logged is joined (rpc_join)", not unjoined and mine,
             f"{len(mine)} requests; {len(unjoined)} not: {unjoined[:5]}")
    for r in client:
        if r["req_id"] not in joined:
            print("note client request not joined:", {k: r.get(k) for k in (
                "xid", "opcode_name", "comm", "target", "nid", "replied", "errno", "ts")})
    srv_ids = {(r["xid"], r["server_nid"]) for r in srv}
    bad = [j for j in joins if (j["xid"], j["server_nid"]) not in srv_ids
           or j["network_ns"] < 0 or j["server_queue_ns"] + j["server_handle_ns"]
           != j["server_total_ns"]]
    rep.true("each joined line has its server record, network_ns >= 0, queue + handle = total",
             not bad, f"{len(joins)} joined; {len(bad)} not: {bad[:2]}")
    rep.true("the join is on where server probes attached", join is not None and "off" not in join,
             f"{join}")
    if join and "off" not in join:
        rep.eq("stats: joined = rpc_join lines", join["joined"], len(joins))
        print(f"note join: {json.dumps(join, sort_keys=True)}; client request records "
              f"{len(client)}, server records {len(srv)}, joined {len(joins)} "
              f"({100 * len(joins) / max(len(client), 1):.1f}% of the client's)")


# Services only the workload sends to (no pings, no statfs of the MDT's
# OSP threads): their service stats over the rpctrace window hold exactly
# the workload's requests, so they are compared as equal; the others are
# printed as notes (a ping at either end of the window may fall between the
# stats' clear and the log's).
QUIET_SERVICES = ("ost_io",)
# A service's stats lines that are not an opcode's handling time.
SVC_EXTRA = ("req_waittime", "req_qdepth", "req_active", "req_timeout", "reqbuf_avail",
             "ldlm_glimpse_enqueue", "ldlm_plain_enqueue", "ldlm_flock_enqueue", "ldlm_extent_enqueue",
             "ldlm_ibits_enqueue", "mds_reint_setattr", "mds_reint_create", "mds_reint_link",
             "mds_reint_unlink", "mds_reint_rename", "mds_reint_open", "mds_reint_setxattr",
             "mds_reint_resync", "read_bytes", "write_bytes")


def check_svcstats(args, srv_logged, rep):
    """The servers' own service stats (ost.OSS.*.stats, mds.MDS.*.stats), cleared
    with the rpctrace log and read with it: per service, req_waittime's samples =
    the server records handled in the window and its sum (work_start - arrival,
    us) = their queue_ns; per opcode (not ldlm_enqueue or mds_reint, which
    Lustre counts elsewhere) samples = records and sum (work_end - work_start)
    = their handle_ns; each sum within bound-us per request plus one outlier."""
    stats = parse_lctl(args.svc)
    by_svc = {}
    for r in srv_logged:
        by_svc.setdefault(r["service"], []).append(r)
    seen = False
    for dev, c in sorted(stats.items()):
        svc = dev.rsplit(".", 1)[-1]
        mine = by_svc.get(svc, [])
        n, _, total_us = c.get("req_waittime", (0, "", 0))
        queue_us = sum(r["queue_ns"] for r in mine) / 1000
        slack = len(mine) * args.bound_us + args.outlier_us
        ops = {}
        for r in mine:
            o = ops.setdefault(r.get("opcode_name"), [0, 0])
            o[0] += 1
            o[1] += r["handle_ns"] / 1000
        lustre_ops = {k: (v[0], v[2]) for k, v in c.items()
                      if isinstance(v, tuple) and k not in SVC_EXTRA and v[0]}
        if svc not in QUIET_SERVICES:
            print(f"note service {svc}: records {len(mine)}, req_waittime samples {n}; "
                  f"queue {queue_us:.0f} us, req_waittime sum {total_us} us")
            continue
        seen = seen or n > 0
        rep.eq(f"service {svc}: requests handled = req_waittime samples", len(mine), n)
        rep.true(f"service {svc}: queue_ns sum = req_waittime sum (within {slack} us)",
                 abs(queue_us - total_us) <= slack, f"tool {queue_us:.0f} us, Lustre {total_us} us")
        for op, (cnt, sum_us) in sorted(lustre_ops.items()):
            got = ops.get(op, [0, 0])
            slack = cnt * args.bound_us + args.outlier_us
            rep.true(f"service {svc} {op}: records = samples, handle_ns sum = its sum "
                     f"(within {slack} us)", got[0] == cnt and abs(got[1] - sum_us) <= slack,
                     f"tool {got[0]} / {got[1]:.0f} us, Lustre {cnt} / {sum_us} us")
        extra = sorted(set(ops) - set(lustre_ops) - set(SVC_EXTRA))
        rep.true(f"service {svc}: no opcode recorded that Lustre's stats lack", not extra,
                 f"{extra}")
    rep.true(f"the service stats list the quiet services {QUIET_SERVICES} with requests", seen)


JOIN_LAYERS = ("client_queued_ns", "client_lnet_wait_ns", "client_service_ns", "network_ns",
               "server_incoming_ns",
               "server_nrs_ns", "server_handle_ns", "server_reply_ns", "server_bulk_ns",
               "server_io_ns")


def parse_brw_io_time(path):
    """lctl get_param osd-ldiskfs.*.brw_stats: {target: {"read": {bucket: ios},
    "write": {...}}} from each target's "I/O time (1/1000s)" histogram. A row's
    label is the bucket's upper bound in ms (1, 2, 4, ... 1K, ...): bucket
    fls(ms - 1), 0 for 0 and 1 ms (lprocfs_oh_tally_log2)."""
    out, cur, section = {}, None, False
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"^\S+?\.([^.]+)\.brw_stats=$", line)
        if m:
            cur = out.setdefault(m.group(1), {"read": {}, "write": {}})
            section = False
            continue
        if cur is None:
            continue
        if line.startswith("I/O time"):
            section = True
            continue
        m = re.match(r"^(\d+)([KM]?):\s+(\d+)\s+\d+\s+\d+\s+\|\s+(\d+)", line)
        if section and m:
            ms = int(m.group(1)) << {"": 0, "K": 10, "M": 20}[m.group(2)]
            bucket = ms.bit_length() - 1
            for rw, n in (("read", int(m.group(3))), ("write", int(m.group(4)))):
                if n:
                    cur[rw][bucket] = cur[rw].get(bucket, 0) + n
        elif section and not m and line.strip() and not line.lstrip().startswith(("read", "I/O")):
            section = False
    return out


def io_bucket(io_ns):
    """The bucket osd_fini_iobuf files an I/O of io_ns in: fls(ms - 1), ms truncated."""
    ms = io_ns // 1_000_000
    return 0 if ms == 0 else min((ms - 1).bit_length(), 32)


def check_brw(args, srv_logged, rep):
    """The OSD's block I/O in the server records (io_ns, io_count) against the
    targets' brw_stats "I/O time" histograms, cleared with the rpctrace log
    and read with it: per target and direction (ost_read, ost_write), the I/Os
    are the histogram's; where each record has one I/O, each lands in the
    bucket Lustre filed it in (the same dr_elapsed). The bulk transfer and the
    I/O lie inside the handling, and every ost_read and ost_write has a bulk."""
    hist = parse_brw_io_time(args.brw)
    rep.true("brw_stats: an I/O time histogram per target", hist, f"{sorted(hist)}")
    untraced = [r["xid"] for r in srv_logged if r.get("io_ns") is None or r.get("bulk_ns") is None]
    rep.true("server records: bulk_ns and io_ns traced (not null)", not untraced,
             f"{len(untraced)} null: {untraced[:5]}")
    if untraced:
        return
    rw_of = {"ost_read": "read", "ost_write": "write"}
    mine = {}
    for r in srv_logged:
        if r["io_count"]:
            t = mine.setdefault(r.get("target"), {"read": [], "write": [], "other": []})
            t[rw_of.get(r.get("opcode_name"), "other")].append(r)
    total = 0
    for target in sorted(set(hist) | set(k for k in mine if k)):
        t = mine.get(target, {"read": [], "write": [], "other": []})
        rep.true(f"brw_stats {target}: no block I/O in a request other than ost_read/ost_write",
                 not t["other"], f"{[(r['xid'], r.get('opcode_name')) for r in t['other'][:3]]}")
        for rw in ("read", "write"):
            lustre = hist.get(target, {}).get(rw, {})
            ios = sum(r["io_count"] for r in t[rw])
            total += ios
            rep.eq(f"brw_stats {target} {rw}: block I/Os = the records' io_count", ios,
                   sum(lustre.values()))
            if all(r["io_count"] == 1 for r in t[rw]):
                got = {}
                for r in t[rw]:
                    got[io_bucket(r["io_ns"])] = got.get(io_bucket(r["io_ns"]), 0) + 1
                rep.eq(f"brw_stats {target} {rw}: each I/O's time in Lustre's bucket", got, lustre)
    rep.true("brw_stats: block I/Os in the window", total > 0, f"{total}")
    brw = [r for r in srv_logged if r.get("opcode_name") in rw_of]
    nobulk = [r["xid"] for r in brw if r["bulk_ns"] <= 0]
    rep.true("every ost_read and ost_write has a bulk transfer (bulk_ns > 0)", brw and not nobulk,
             f"{len(brw)} records; {len(nobulk)} without: {nobulk[:5]}")
    over = [(r["xid"], r["bulk_ns"], r["io_ns"], r["handle_ns"]) for r in srv_logged
            if r["bulk_ns"] + r["io_ns"] > r["handle_ns"]]
    rep.true("bulk_ns + io_ns <= handle_ns (both inside the handling)", not over, f"{over[:3]}")
    bulk = sum(r["bulk_ns"] for r in brw) / 1e6
    disk = sum(r["io_ns"] for r in brw) / 1e6
    handle = sum(r["handle_ns"] for r in brw) / 1e6
    print(f"note bulk/disk: {len(brw)} ost_read/ost_write records, {total} block I/Os; "
          f"handling {handle:.1f} ms, of which bulk {bulk:.1f} ms, disk {disk:.1f} ms")
JOIN_KEYS = ("lustre_jobid", "target", "client_nid")


def join_sums(recs, layers=JOIN_LAYERS):
    """Per (job, target, client NID): [count, sum of each layer], from the rpc_join
    lines and, apart, from the --aggregate windows' rpc_join groups."""
    lines, windows = {}, {}
    for r in recs:
        key = tuple(r.get(k) for k in JOIN_KEYS)
        if r.get("type") == "rpc_join":
            s = lines.setdefault(key, [0] * (1 + len(layers)))
            s[0] += 1
            for i, f in enumerate(layers):
                s[1 + i] += r.get(f) or 0
        elif r.get("type") == "window" and r.get("record_type") == "rpc_join":
            key = key + (True,) if r.get("other") else key
            s = windows.setdefault(key, [0] * (1 + len(layers)))
            s[0] += r["count"]
            for i, f in enumerate(layers):
                # A layer the window lacks: NaN, equal to nothing.
                s[1 + i] += r["layers"].get(f, float("nan"))
    return lines, windows


def check_join_windows(args, rep):
    """The --aggregate windows' rpc_join groups: per (lustre_jobid, target,
    client_nid), the count and each layer's sum equal those over the rpc_join
    lines of the run (the windows are the whole run's, the last one flushed)."""
    recs = [json.loads(ln) for ln in open(args.records)]
    layers = JOIN_LAYERS
    if args.capture_layers:
        # A kept capture of an older build: the layers its windows have.
        first = next((r for r in recs if r.get("record_type") == "rpc_join"), {})
        layers = tuple(f for f in JOIN_LAYERS if f in first.get("layers", {}))
        # Never fewer than the seven layers the first joined windows had.
        rep.true("the capture's windows have the layers", len(layers) >= 7, f"{layers}")
    lines, windows = join_sums(recs, layers)
    rep.true("rpc_join lines to compare", len(lines) > 0, f"{len(lines)} groups")
    rep.true("rpc_join window groups", len(windows) > 0, f"{len(windows)} groups")
    names = ("count",) + layers
    for key in sorted(set(lines) | set(windows), key=str):
        a, b = windows.get(key), lines.get(key)
        if a == b:
            continue
        diff = [f"{n} {x} != {y}" for n, x, y in zip(names, a or [], b or [])
                if x != y] if a and b else ["no window group" if b else "no line"]
        rep.true(f"window group {key} = its rpc_join lines", False, "; ".join(diff))
    same = sum(1 for k in lines if windows.get(k) == lines[k])
    rep.eq("window groups equal to their rpc_join lines (count and every layer)",
           same, len(set(lines) | set(windows)), ("equal", "groups"))
    print(f"note join windows: {len(windows)} groups, "
          f"{sum(s[0] for s in windows.values())} joined requests; layers (ms) "
          + ", ".join(f"{n} {sum(s[1 + i] for s in windows.values()) / 1e6:.1f}"
                      for i, n in enumerate(layers)))


# Where an injected delay may show, in the tool's joined line (rpc_join) and
# in the server's Handled line (X: handling, Y: arrival to reply): the NRS
# queue is inside Y - X (rpctrace has no split of it), the network is not
# in rpctrace at all.
DELAY_LAYERS = {
    "nrs": ("server_nrs_ns", lambda ln: (ln["y"] - ln["x"]) * 1000),
    "queue": ("server_queue_ns", lambda ln: (ln["y"] - ln["x"]) * 1000),
    "handle": ("server_handle_ns", lambda ln: ln["x"] * 1000),
    "network": ("network_ns", None),
    # The bulk transfer lies inside the handling: Lustre's X holds it too.
    "bulk": ("server_bulk_ns", lambda ln: ln["x"] * 1000),
    "disk": ("server_io_ns", None),
}


def injected(rep, what, joins, lines, inside, outside, least_ns, most_ns=None):
    """Each joined line (and its Handled line, by xid and client NID) has at
    least least_ns (and at most most_ns) in the layer inside, and under half
    of least_ns in each layer outside: a delay recovered in its own layer
    and not in the others."""
    off = []
    for j in joins:
        ln = lines.get((j["xid"], j["client_nid"]))
        if ln is None:
            off.append((j["xid"], j["opcode_name"], "no Handled line"))
            continue
        for layer, least in [(inside, True)] + [(o, False) for o in outside]:
            field, lustre = DELAY_LAYERS[layer]
            for who, ns in (("tool", j.get(field)), ("Lustre", lustre and lustre(ln))):
                if ns is None and who == "Lustre":
                    continue
                if ns is None or (ns < least_ns or most_ns and ns > most_ns if least
                                  else ns >= least_ns // 2):
                    off.append((j["xid"], j["opcode_name"], who, layer,
                                None if ns is None else round(ns / 1e6, 1)))
    ms = [(j["opcode_name"], round(j.get(DELAY_LAYERS[inside][0]) or 0) // 10**6) for j in joins]
    most = f" and <= {most_ns / 1e6:.0f} ms" if most_ns else ""
    rep.true(f"{what}: {inside} >= {least_ns / 1e6:.0f} ms{most} (tool and rpctrace), "
             f"{', '.join(outside)} < {least_ns / 2e6:.0f} ms", joins and not off,
             f"{len(joins)} requests {ms[:6]}; {len(off)} off: {off[:5]}")


def throttled(rep, args, slow, free, lines):
    """NRS TBF by job ID, one job limited to --tbf-rate requests a second:
    once its bucket is spent, each of its requests waits about 1/rate in
    the NRS queue, and one at least for half that, in the tool's lines and
    in rpctrace (Y - X); the other job, sending at the same time with no
    rule of its own, never waits that long."""
    half = 10**9 // args.tbf_rate // 2

    def nrs(group):
        out = []
        for j in group:
            ln = lines.get((j["xid"], j["client_nid"]))
            out.append((j.get("server_nrs_ns") or 0, None if ln is None else (ln["y"] - ln["x"]) * 1000))
        return out

    s, f = nrs(slow), nrs(free)
    ms = lambda v: [(round(a / 1e6, 1), b and round(b / 1e6, 1)) for a, b in v]
    ok = (s and f and None not in [b for _, b in s + f]
          and max(a for a, _ in s) >= half and max(b for _, b in s) >= half
          and all(a < half and b < half for a, b in f))
    rep.true(f"NRS TBF jobid rate {args.tbf_rate}/s on job {args.tbf_job}: its NRS queue grows "
             f"(longest >= {half / 1e6:.0f} ms, tool and rpctrace), job {args.tbf_free_job}'s "
             f"does not (all < {half / 1e6:.0f} ms)", bool(ok),
             f"job {args.tbf_job} (tool, rpctrace ms) {ms(s)}; job {args.tbf_free_job} {ms(f)}")


def check_delays(args, rep):
    """The injections of the delays phase, each for one job's requests."""
    lines = {(ln["xid"], ln["nid"]): ln for ln in parse_handled(args.dk)}
    joins = [r for r in map(json.loads, open(args.records)) if r.get("type") == "rpc_join"]

    def of(job, services=None):
        return [j for j in joins if j.get("lustre_jobid") == args.wire_prefix + job
                and (services is None or j["service"] in services)]

    if args.nrs_job:
        # nrs_delay holds a request until the real clock's second reaches
        # arrival's second + the delay (lustre/ptlrpc/nrs_delay.c): at
        # least delay - 1 s, at most delay and the time a thread takes to
        # see it is due (1 s allowed): the policy's defaults (5 to 300 s)
        # never pass.
        injected(rep, f"NRS delay of {args.nrs_delay_s} s on ost_io, job {args.nrs_job}",
                 of(args.nrs_job, {"ost_io"}), lines, "nrs", ["handle", "network"],
                 (args.nrs_delay_s - 1) * 10**9, (args.nrs_delay_s + 1) * 10**9)
    if args.tbf_job:
        throttled(rep, args, of(args.tbf_job, {"ost_io"}), of(args.tbf_free_job, {"ost_io"}), lines)
    if args.bulk_job:
        # An LNet delay rule on the bulk portal holds each bulk PUT or GET
        # the OSS sends at LNet's gate until its second's deadline
        # (lnet/lnet/net_fault.c: now + latency, in seconds): at least the
        # latency less 1 s, inside target_bulk_io.
        brw = [j for j in of(args.bulk_job, {"ost_io"})
               if j["opcode_name"] in ("ost_read", "ost_write")]
        rep.eq(f"LNet delay rule on the bulk portal, job {args.bulk_job}: its ost_write and "
               "ost_read joined", sorted(j["opcode_name"] for j in brw), ["ost_read", "ost_write"])
        injected(rep, f"LNet delay rule of {args.bulk_delay_s} s on the bulk portal (8), job "
                 f"{args.bulk_job}", brw, lines, "bulk", ["queue", "network", "disk"],
                 (args.bulk_delay_s - 1) * 10**9, (args.bulk_delay_s + 1) * 10**9)
    if args.pause_job:
        # OBD_FAIL_PTLRPC_PAUSE_REQ: every request the job sends (none of
        # the opcodes Lustre exempts) sleeps in its handler.
        injected(rep, f"fail_loc 0x50a (handler paused {args.pause_ms} ms), job {args.pause_job}",
                 of(args.pause_job), lines, "handle", ["queue", "network"],
                 args.pause_ms * 10**6)


# Two OSTs and one MDT, as lctl get_param prints them: job 7 wrote on both
# OSTs, job 8 on one. (selftest)
SELFTEST_JOB_STATS = """obdfilter.lustre-OST0000.job_stats=
job_stats:
- job_id:          7
  snapshot_time:   1700000000.100000000 secs.nsecs
  write_bytes:     { samples:           2, unit: bytes, min: 4096, max: 1048576, sum:         1052672, sumsq: 0 }
  read_bytes:      { samples:           0, unit: bytes, min:       0, max:       0, sum:               0, sumsq: 0 }
  sync:            { samples:           1, unit: usecs, min:      10, max:      10, sum:              10, sumsq: 0 }
  punch:           { samples:           0, unit: usecs }
- job_id:          8
  snapshot_time:   1700000000.100000000 secs.nsecs
  write_bytes:     { samples:           1, unit: bytes, min: 4096, max: 4096, sum:            4096, sumsq: 0 }
obdfilter.lustre-OST0001.job_stats=
job_stats:
- job_id:          7
  snapshot_time:   1700000000.200000000 secs.nsecs
  write_bytes:     { samples:           3, unit: bytes, min: 4096, max: 1048576, sum:         2101248, sumsq: 0 }
  sync:            { samples:           1, unit: usecs, min:      12, max:      12, sum:              12, sumsq: 0 }
mdt.lustre-MDT0000.job_stats=
job_stats:
- job_id:          7
  snapshot_time:   1700000000.300000000 secs.nsecs
  close:           { samples:           1, unit: usecs, min:      30, max:      30, sum:              30, sumsq: 0 }
"""


SELFTEST_OST_STATS = """obdfilter.lustre-OST0000.stats=
snapshot_time             1700000000.100000000 secs.nsecs
start_time                1699999990.000000000 secs.nsecs
elapsed_time              10.100000000 secs.nsecs
read_bytes                2 samples [bytes] 4096 4096 8192 33554432
write_bytes               3 samples [bytes] 4096 1048576 1056768 1099528404992
read                      2 samples [usecs] 10 20 30 500
obdfilter.lustre-OST0001.stats=
snapshot_time             1700000000.100000000 secs.nsecs
statfs                    4 samples [reqs]
"""


SELFTEST_RPCTRACE = """00000100:00100000:1.0:1796537868.775048:0:316:0:(service.c:2543:ptlrpc_server_handle_request()) Handling RPC req@000000005630823f pname:cluuid+ref:pid:xid:nid:opc:job mdt00_002:2cc2cf42-f106-4791-94cc-0962851d80c5+5:598:x1883806430670976:12345-0@lo:101:
00000100:00100000:1.0:1796537868.787392:0:316:0:(service.c:2592:ptlrpc_server_handle_request()) Handled RPC req@000000005630823f pname:cluuid+ref:pid:xid:nid:opc:job mdt00_002:2cc2cf42-f106-4791-94cc-0962851d80c5+6:598:x1883806430670976:12345-0@lo:101: Request processed in 12301us (12900us total) trans 0 rc 0/0
00000100:00100000:1.0:1796537868.787722:0:598:0:(client.c:2406:ptlrpc_check_set()) Completed RPC req@0000000034bd31fb pname:cluuid:pid:xid:nid:opc:job dd:2cc2cf42-f106-4791-94cc-0962851d80c5:598:1883806430670976:0@lo:101:
00000100:00100000:0.0F:1796537868.911000:0:316:0:(service.c:2592:ptlrpc_server_handle_request()) Handled RPC req@00000000a1424c66 pname:cluuid+ref:pid:xid:nid:opc:job mdt00_002:2cc2cf42-f106-4791-94cc-0962851d80c5+6:598:x1883806430671744:12345-192.168.1.2@tcp:36:dd.0:x Request processed in 5us (7us total) trans 0 rc -39/-39
"""


def self_test(args, rep):
    """Host-side regressions of the parsers (CTest unit.lustre_counters)."""
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write(SELFTEST_JOB_STATS)
        f.flush()
        jobs = parse_job_stats(f.name)
        job_bytes = ost_sums(f.name)
    ost, mdt = jobs.get("obdfilter", {}), jobs.get("mdt", {})
    # Summed over the targets, not the last target's alone.
    got = ("parsed", "expected")
    rep.eq("job_stats: job 7 write_bytes over two OSTs", ost.get("7", {}).get("write_bytes"),
           (5, 3153920), got)
    rep.eq("job_stats: job 7 sync over two OSTs", ost.get("7", {}).get("sync"), (2, 22), got)
    rep.eq("job_stats: job 7 read_bytes (listed, 0)", ost.get("7", {}).get("read_bytes"), (0, 0), got)
    rep.eq("job_stats: job 7 punch (no sum)", ost.get("7", {}).get("punch"), (0, 0), got)
    rep.eq("job_stats: job 8 on one OST", ost.get("8", {}).get("write_bytes"), (1, 4096), got)
    rep.eq("job_stats: job 7 close on the MDT", mdt.get("7", {}).get("close"), (1, 30), got)
    rep.eq("job_stats: jobs by kind", {k: sorted(v) for k, v in jobs.items()},
           {"obdfilter": ["7", "8"], "mdt": ["7"]}, got)
    rep.eq("job_stats: bytes per OST over its jobs", job_bytes,
           {"lustre-OST0000": {"read_bytes": 0, "write_bytes": 1056768},
            "lustre-OST0001": {"read_bytes": 0, "write_bytes": 2101248}}, got)
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write(SELFTEST_OST_STATS)
        f.flush()
        rep.eq("obdfilter stats: bytes per OST", ost_sums(f.name),
               {"lustre-OST0000": {"read_bytes": 8192, "write_bytes": 1056768},
                "lustre-OST0001": {"read_bytes": 0, "write_bytes": 0}}, got)
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write(SELFTEST_RPCTRACE)
        f.flush()
        handled = parse_handled(f.name)
        span = dk_window(f.name)
    rep.eq("rpctrace: Handled lines (not Handling, not a client's)", len(handled), 2, got)
    rep.eq("rpctrace: the first line", handled[0] if handled else None,
           {"t": 1796537868787392000, "pname": "mdt00_002", "xid": 1883806430670976,
            "nid": "0@lo", "opc": 101, "job": "", "x": 12301, "y": 12900, "rc": 0}, got)
    rep.eq("rpctrace: a job with a colon, an error", handled[1:] and
           {k: handled[1][k] for k in ("job", "rc", "nid", "x", "y")},
           {"job": "dd.0:x", "rc": -39, "nid": "192.168.1.2@tcp", "x": 5, "y": 7}, got)
    rep.eq("rpctrace: the log's window", span, (1796537868775048000, 1796537868911000000), got)
    # The join windows' sums against their lines: equal, then one layer planted wrong.
    j = {"type": "rpc_join", "lustre_jobid": "dd.0", "target": "lustre-OST0000",
         "client_nid": "0@lo", "server_nrs_ns": None}
    j.update({f: 10 for f in JOIN_LAYERS if f != "server_nrs_ns"})
    w = {"type": "window", "record_type": "rpc_join", "count": 2,
         "layers": {f: 20 if f != "server_nrs_ns" else 0 for f in JOIN_LAYERS}}
    w.update({k: j[k] for k in JOIN_KEYS})
    lines, windows = join_sums([j, j, w])
    rep.eq("join windows: a window group = its two lines (null as 0)", windows, lines, got)
    w["layers"]["server_handle_ns"] += 10  # NRS time filed under handling
    lines, windows = join_sums([j, j, w])
    rep.true("join windows: a layer off is seen", windows != lines)
    rep.eq("service stats: ost_io's records = its stats", selftest_svcstats(rep), 0, got)
    rep.true("service stats: a record missing fails", selftest_svcstats(rep, "count") > 0)
    rep.true("service stats: a queue 30 ms off fails", selftest_svcstats(rep, "queue") > 0)
    rep.eq("brw_stats: the records' block I/Os = the I/O time histogram", selftest_brw(rep), 0, got)
    rep.true("brw_stats: an I/O in the wrong bucket fails", selftest_brw(rep, "bucket") > 0)
    rep.true("brw_stats: an I/O not in a record fails", selftest_brw(rep, "uncounted") > 0)
    rep.true("brw_stats: an ost_read without a bulk fails", selftest_brw(rep, "bulk") > 0)
    rep.eq("delays: an NRS delay in the NRS queue passes", selftest_delays(rep, "nrs"), 0, got)
    rep.eq("delays: an NRS delay found in handling fails", selftest_delays(rep, "handle"), 1, got)
    rep.eq("delays: an NRS delay found in the network fails", selftest_delays(rep, "network"), 1, got)
    rep.eq("delays: a bulk delay rule in the bulk passes", selftest_delays(rep, "bulk", rule="bulk"),
           0, got)
    rep.eq("delays: a bulk delay rule found in the network fails",
           selftest_delays(rep, "network", rule="bulk"), 1, got)
    rep.eq("delays: a bulk delay rule found in handling outside the bulk fails",
           selftest_delays(rep, "handle", rule="bulk"), 1, got)
    rep.eq("delays: the policy's default delay (263 s, not 2) fails",
           selftest_delays(rep, "nrs", 263756), 1, got)


SELFTEST_SVC_STATS = """ost.OSS.ost_io.stats=
snapshot_time             1796537870.000000000 secs.nsecs
start_time                1796537860.000000000 secs.nsecs
req_waittime              2 samples [usecs] 100 200 300 50000
req_active                2 samples [reqs] 1 1 2 2
reqbuf_avail              4 samples [bufs] 1 1 4 4
write_bytes               2 samples [bytes] 4096 4096 8192 33554432
ost_write                 2 samples [usecs] 1000 2000 3000 5000000
ost.OSS.ost.stats=
snapshot_time             1796537870.000000000 secs.nsecs
req_waittime              1 samples [usecs] 7 7 7 49
obd_ping                  1 samples [usecs] 9 9 9 81
"""


def selftest_svcstats(rep, planted=None):
    """check_svcstats on two synthetic ost_write records of ost_io (queue 100
    and 200 us, handling 1 and 2 ms) against SELFTEST_SVC_STATS: the failures it
    counts. planted: "count" drops a record, "queue" adds 30 ms to a queue."""
    import tempfile
    recs = [{"type": "srv", "service": "ost_io", "xid": 42 + i, "client_nid": "0@lo",
             "opcode_name": "ost_write", "queue_ns": (i + 1) * 100_000,
             "handle_ns": (i + 1) * 1_000_000} for i in range(2)]
    if planted == "count":
        recs.pop()
    elif planted == "queue":
        recs[0]["queue_ns"] += 30_000_000
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write(SELFTEST_SVC_STATS)
        f.flush()
        args = argparse.Namespace(svc=f.name, bound_us=1000, outlier_us=20000)
        inner, said = Report(), io.StringIO()
        with contextlib.redirect_stdout(said):
            check_svcstats(args, recs, inner)
    print(said.getvalue().rstrip().replace("\n", "\n     | ").join(("     | ", "")))
    return inner.failed


SELFTEST_BRW_STATS = """osd-ldiskfs.lustre-OST0000.brw_stats=
snapshot_time:         1796537870.000000000 secs.nsecs
start_time:            1796537860.000000000 secs.nsecs
elapsed_time:          10.000000000 secs.nsecs

                           read      |     write
pages per bulk r/w     rpcs  % cum % |  rpcs        % cum %
256:		         1 100 100   |    2 100 100

                           read      |     write
I/O time (1/1000s)     ios   % cum % |  ios         % cum %
1:		         1 100 100   |    0   0   0
2:		         0   0 100   |    0   0   0
4:		         0   0 100   |    1  50  50
8:		         0   0 100   |    1  50 100

                           read      |     write
disk I/O size          ios   % cum % |  ios         % cum %
1M:		         1 100 100   |    2 100 100
"""


def selftest_brw(rep, planted=None):
    """check_brw on an ost_read (I/O 0.5 ms) and two ost_writes (3.2 and 7.9
    ms) of lustre-OST0000 against SELFTEST_BRW_STATS: the failures it counts.
    planted: "bucket" makes the first write's I/O 9 ms (the 16 ms bucket),
    "uncounted" takes the read's I/O out, "bulk" gives it no bulk."""
    import tempfile
    recs = [{"type": "srv", "xid": 40 + i, "target": "lustre-OST0000", "opcode_name": op,
             "handle_ns": 20_000_000, "bulk_ns": 1_000_000, "io_ns": io, "io_count": 1}
            for i, (op, io) in enumerate((("ost_read", 500_000), ("ost_write", 3_200_000),
                                          ("ost_write", 7_900_000)))]
    if planted == "bucket":
        recs[1]["io_ns"] = 9_000_000
    elif planted == "uncounted":
        recs[0]["io_ns"], recs[0]["io_count"] = 0, 0
    elif planted == "bulk":
        recs[0]["bulk_ns"] = 0
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write(SELFTEST_BRW_STATS)
        f.flush()
        args = argparse.Namespace(brw=f.name)
        inner, said = Report(), io.StringIO()
        with contextlib.redirect_stdout(said):
            check_brw(args, recs, inner)
    print(said.getvalue().rstrip().replace("\n", "\n     | ").join(("     | ", "")))
    return inner.failed


def selftest_delays(rep, layer_ns, held_ms=1500, rule="nrs"):
    """check_delays on synthetic requests of job lr9 held held_ms in the
    layer given (their joined lines and Handled lines): for rule "nrs" one
    ost_write by an NRS delay of 2 s, for "bulk" an ost_write and an
    ost_read by an LNet delay rule of 2 s on the bulk portal (the bulk
    inside the handling). The failures it counts."""
    import tempfile
    ns = {"nrs": 0, "handle": 0, "incoming": 0, "network": 0, "bulk": 0}
    ns[layer_ns] = held_ms * 10**6
    handle = ns["handle"] + ns["bulk"]
    x_us, y_us = handle // 1000, (handle + ns["nrs"]) // 1000
    ops = ("ost_write", "ost_read") if rule == "bulk" else ("ost_write",)
    joins = [{"type": "rpc_join", "service": "ost_io", "opcode_name": op,
              "xid": 42 + i, "client_nid": "0@lo", "lustre_jobid": "lr9",
              "network_ns": ns["network"], "server_queue_ns": ns["nrs"], "server_nrs_ns": ns["nrs"],
              "server_handle_ns": handle, "server_bulk_ns": ns["bulk"], "server_io_ns": 0}
             for i, op in enumerate(ops)]
    lines = "".join(
        f"00000100:00100000:1.0:1796537868.787392:0:316:0:(service.c:2592:"
        f"ptlrpc_server_handle_request()) Handled RPC req@0 pname:cluuid+ref:pid:xid:nid:opc:job "
        f"ll_ost_io00_000:u+6:598:x{42 + i}:12345-0@lo:4:lr9 Request processed in {x_us}us "
        f"({y_us}us total) trans 0 rc 0/0\n" for i in range(len(ops)))
    with tempfile.NamedTemporaryFile("w") as rec, tempfile.NamedTemporaryFile("w") as dk:
        rec.write("".join(json.dumps(j) + "\n" for j in joins))
        dk.write(lines)
        rec.flush()
        dk.flush()
        args = argparse.Namespace(records=rec.name, dk=dk.name, wire_prefix="lr",
                                  nrs_job="9" if rule == "nrs" else None, nrs_delay_s=2,
                                  bulk_job="9" if rule == "bulk" else None, bulk_delay_s=2,
                                  pause_job=None, pause_ms=0, tbf_job=None)
        inner, said = Report(), io.StringIO()
        with contextlib.redirect_stdout(said):
            check_delays(args, inner)
    print(said.getvalue().rstrip().replace("\n", "\n     | ").join(("     | ", "")))
    return inner.failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("group", choices=("access", "requests", "jobs", "locks", "servers",
                                      "joinwindows", "delays", "selftest"))
    ap.add_argument("--records")
    ap.add_argument("--mount")
    ap.add_argument("--lctl")
    ap.add_argument("--jobs")
    ap.add_argument("--job", action="append", default=[])
    ap.add_argument("--ost-stats", help="jobs: lctl get_param obdfilter.*.stats, cleared "
                    "with the job_stats: notes whether the job_stats list every byte")
    ap.add_argument("--writeback-job", action="append", default=[])
    ap.add_argument("--cause-comm")
    ap.add_argument("--writers", help="jobs: JOB PID UID COMM per line, each job's writer; "
                    "every ost_write of a --writeback-job must carry it")
    ap.add_argument("--cause-unprobed", metavar="REASON",
                    help="jobs: osc_brw_prep_request is not probed (why): the writeback "
                         "check fails")
    ap.add_argument("--wire-prefix", default="",
                    help="jobs: Lustre sends PREFIX+JOB as the job ID (its jobid_var "
                         "differs from the tool's SLURM_JOB_ID); job_stats are keyed by it")
    ap.add_argument("--min-resends", type=int, default=0,
                    help="requests: the fewest resends Lustre must count (req_active - "
                         "req_waittime - unreplied)")
    ap.add_argument("--phase", choices=("main", "fault", "restart"), default="main",
                    help="requests: the main workload (a refused rmdir, a ping on every "
                         "import) or the fault test")
    ap.add_argument("--unreplied", action="append", default=[], metavar="OPCODE:ERRNO:COMM",
                    help="requests: one expected request without a reply, as opcode_name:errno:comm")
    ap.add_argument("--ids", choices=("btf", "none"),
                    help="requests: xid and target expected (module BTF) or null")
    ap.add_argument("--metrics", help="a /metrics scrape after the workload")
    ap.add_argument("--imports", help="lctl get_param osc.*.import mdc.*.import: the NIDs")
    ap.add_argument("--windows", help="the --aggregate output, to compare by job_id")
    ap.add_argument("--mount2", action="append", default=[],
                    help="locks: another mount of the filesystem, traced in the same run")
    ap.add_argument("--ldlm", help="locks: lctl get_param ldlm.services.ldlm_cbd.stats")
    ap.add_argument("--min-blocked-ms", type=int, default=0,
                    help="locks: the least every blocked wait lasts (an injected pause)")
    ap.add_argument("--capture-layers", action="store_true",
                    help="joinwindows: compare the layers the capture's windows have "
                         "(a capture of an older build), not every layer of this one")
    ap.add_argument("--segment", action="store_true",
                    help="servers: --records is a run's first part, up to and with a periodic "
                    "stats record (tool-lib.sh: lr_prefix), whose counts stand for the final's")
    ap.add_argument("--dk", help="servers: lctl dk with debug=+rpctrace over the workload")
    ap.add_argument("--svc", help="servers: lctl get_param ost.OSS.*.stats mds.MDS.*.stats, "
                    "cleared with the rpctrace log and read with it")
    ap.add_argument("--brw", help="servers: lctl get_param osd-ldiskfs.*.brw_stats, cleared "
                    "with the rpctrace log and read with it")
    ap.add_argument("--bound-us", type=int, default=1000,
                    help="servers: how far handle_ns and total_ns may be from Lustre's X and Y")
    ap.add_argument("--outlier-us", type=int, default=20000,
                    help="servers: how far any line may be (a stalled vCPU)")
    ap.add_argument("--outliers-pct", type=int, default=10,
                    help="servers: the share of lines that may be beyond --bound-us")
    ap.add_argument("--nrs-job", help="delays: the job whose ost_io requests the NRS delay "
                    "policy held (lustre_jobid: --wire-prefix + JOB)")
    ap.add_argument("--nrs-delay-s", type=int, default=2,
                    help="delays: nrs_delay_min = nrs_delay_max, in seconds")
    ap.add_argument("--tbf-job", help="delays: the job an NRS TBF jobid rule limited")
    ap.add_argument("--tbf-free-job", help="delays: the job sending beside it, with no rule")
    ap.add_argument("--tbf-rate", type=int, default=2, help="delays: the rule's rate (requests/s)")
    ap.add_argument("--bulk-job", help="delays: the job whose bulk transfers an LNet delay rule "
                    "on the bulk portal held")
    ap.add_argument("--bulk-delay-s", type=int, default=2,
                    help="delays: that rule's latency, in seconds")
    ap.add_argument("--pause-job", help="delays: the job whose requests fail_loc 0x50a paused")
    ap.add_argument("--pause-ms", type=int, default=400, help="delays: fail_val of 0x50a")
    args = ap.parse_args()
    if args.group == "joinwindows" and not args.records:
        ap.error("joinwindows: --records is required")
    if args.group not in ("selftest", "joinwindows") and not (args.records and args.mount):
        ap.error(f"{args.group}: --records and --mount are required")
    rep = Report()
    {"access": check_access, "requests": check_requests, "jobs": check_jobs,
     "locks": check_locks, "servers": check_servers, "joinwindows": check_join_windows,
     "delays": check_delays,
     "selftest": self_test}[args.group](args, rep)
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())
