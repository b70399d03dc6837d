#!/bin/bash
# client-lnet.sh: the LNet plane on a real client whose LNet credits bind,
# in the client guest of two-guests.sh (CTest lustre.client_lnet).
#
# Two phases in one guest, each with its own LNet start: first socklnd's
# default credits (8 per peer, 256 per NI), where no message waits; then
# LES_LR_LNET_CREDITS ("PEER NI", default "1 2": ksocklnd's peer_credits and
# credits, set before LNet loads), so that parallel writers' messages queue
# at LNet's credit gate ("" runs the first phase only). The client runs the
# servers' build (6.12, modules with BTF): the lnet rows read struct
# lnet_msg by CO-RE, and the 6.1 client builds have no module BTF.
#
# Checks, with LNet's own counters as the oracle:
# - every PtlRPC request record (xid) has its request's LNet PUT (match
#   bits = xid), from this NI to the servers' NID, and its opcode;
# - a request whose PUT the LNet plane saw sent has this NI's NID as its
#   client_nid, the others null;
# - the lnet records over the workload = LNet's send_count over it
#   (/sys/kernel/debug/lnet/stats, read with the tool idle at both ends);
# - with the credits reduced: credit waits > 0, the lowest peer credits a
#   record saw < 0 and not below the peer's own low-water mark ("min" in
#   /sys/kernel/debug/lnet/peers), the NI's likewise ("min" in nis);
#   a request's LNet wait fits in its service_ns (Lustre's send to reply);
# - with the defaults (8 per peer): a wait only where LNet's own low-water
#   mark went below 0 too;
# - an LNet delay rule on this node's PUTs to the servers (default phase,
#   after its workload): the messages whose delay_rule_ns > 0 = the rule's
#   own count of the messages it delayed (lctl net_delay_list), held PUTs
#   only, with no credit wait; each request whose PUT was held has that
#   wait in its lnet_wait_ns, inside its service_ns.
set -u

. "$(dirname "${BASH_SOURCE[0]}")/tool-lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/guest-client.sh"
guest_init lr-client-lnet
trap 'tracer_kill; guest_remove_work' EXIT
guest_require_tool

# The phases, one LNet start each: "default" (socklnd's own credits), then
# "PEER NI" (LES_LR_LNET_CREDITS, default "1 2").
credits=${LES_LR_LNET_CREDITS-1 2}
peer_credits=
ni_credits=
dbg=/sys/kernel/debug/lnet

# send_count of LNet's stats (lnet_counters: the 4th number of the line).
lnet_sends()
{
	awk '{ print $4; exit }' "$dbg/stats"
}

# The servers' peer NI row of the peers file: its "min" (lpni_mintxcredits).
peer_min()
{
	awk -v nid="$LR_SERVER_NID" '$1 == nid { print $(NF - 1); exit }' "$work/peers.txt"
}

# The NI's "min" column (tq_credits_min, one line per CPT): the lowest.
ni_min()
{
	awk -v nid="$LR_NID" '$1 == nid && (m == "" || $NF < m) { m = $NF } END { print m }' \
		"$work/nis.txt"
}

now_iso()
{
	date -u +%Y-%m-%dT%H:%M:%S.%NZ
}

# ksocklnd's credits for the next LNet start: "default" or "PEER NI".
set_credits()
{
	mkdir -p /etc/modprobe.d
	if [ "$1" = default ]; then
		peer_credits=
		ni_credits=
		rm -f /etc/modprobe.d/les-lnet-credits.conf
		return
	fi
	read -r peer_credits ni_credits <<<"$1"
	echo "options ksocklnd peer_credits=$peer_credits credits=$ni_credits" \
		>/etc/modprobe.d/les-lnet-credits.conf
}

# 4 parallel writers of 4 MiB each, fsync'd, then 4 parallel readers; a
# stall (LNet's queues never drained) is told with LNet's and the kernel's
# view instead of waiting for the guest's timeout.
workload()
{
	local i pids=

	for i in 1 2 3 4; do
		timeout 150 dd if=/dev/zero of="$LR_MNT/w/f$i" bs=1M count=4 conv=fsync 2>/dev/null &
		pids="$pids $!"
	done
	wait_all $pids || return 1
	echo 3 >/proc/sys/vm/drop_caches
	pids=
	for i in 1 2 3 4; do
		timeout 150 cat "$LR_MNT/w/f$i" >/dev/null &
		pids="$pids $!"
	done
	wait_all $pids || return 1
	rm -f "$LR_MNT"/w/f*
}

wait_all()
{
	local p st=0

	for p in "$@"; do
		wait "$p" || st=1
	done
	[ "$st" -eq 0 ] || workload_stalled
	return "$st"
}

workload_stalled()
{
	echo "--- the workload did not end in 150 s; peers, nis, kernel log:"
	cat "$dbg/peers" "$dbg/nis"
	dmesg | tail -n 40
}

# The reply portals (the *_REPLY_PORTAL numbers of lustre_idl.h). A
# request's PUTs have its xid as match bits and go to a request portal: this
# node also PUTs replies to the server's requests (its ASTs, to
# LDLM_CB_REPLY_PORTAL), whose match bits are the server's xid, and xids are
# unique per node only (seen: an ldlm_cancel and an ost_write each sharing
# its xid with a later AST reply).
export LR_REPLY_PORTALS="2 4 10 16 18 25 27"

lnet_check()
{
	python3 - "$work/out.jsonl" "$LR_NID" "$LR_SERVER_NID" "$sends0" "$sends1" \
		"$(peer_min)" "$(ni_min)" "${peer_credits:-default}" <<'PYEOF'
import collections, json, os, sys
path, nid, srv, s0, s1, pmin, nmin, mode = sys.argv[1:9]
REPLY_PORTALS = {int(p) for p in os.environ["LR_REPLY_PORTALS"].split()}
lines = [json.loads(l) for l in open(path)]
reqs = [r for r in lines if r["type"] == "rpc" and r.get("op") == "request"
        and r.get("proto") == "ptlrpc" and r.get("xid") is not None]
msgs = [r for r in lines if r["type"] == "lnet"]
# A request's PUTs: its xid as match bits, to a request portal (LR_REPLY_PORTALS).
sent = {}
for m in msgs:
    if m["msg_type"] == "put" and m["match_bits"] is not None and m["portal"] not in REPLY_PORTALS:
        sent.setdefault(m["match_bits"], []).append(m)
replies = sum(1 for m in msgs if m["msg_type"] == "put" and m["portal"] in REPLY_PORTALS)
ok = True
def fail(s):
    global ok
    ok = False
    print("FAIL:", s)
print(f"lnet records {len(msgs)}, PtlRPC requests with an xid {len(reqs)}")
by_type = {}
for m in msgs:
    by_type[m["msg_type"]] = by_type.get(m["msg_type"], 0) + 1
print("by type", by_type, f"of which PUTs to a reply portal (replies to the server's requests): {replies}")
# A request released without a reply may have its PUT still queued for a
# credit when the tool stops (seen: ldlm_cancels at the end): listed, not failed.
missing = [r["xid"] for r in reqs if r["xid"] not in sent and r.get("replied")]
if missing:
    fail(f"{len(missing)} requests without their LNet PUT (match bits = xid), e.g. {missing[:5]}")
# Every request record is whole: its opcode comes from the pack, the queue
# or the send. One without it was made half traced (seen: requests replied
# while the tool detached its programs one link at a time, their pack's and
# LNet's programs already gone: no opcode, no lnet_wait_ns).
no_opcode = [r["xid"] for r in reqs if r.get("opcode") is None]
if no_opcode:
    fail(f"{len(no_opcode)} request records without their opcode, e.g. xids {no_opcode[:5]}")
# A request whose opcode was not read has no opcode_name member.
unreplied = [f"{r.get('opcode_name', 'opcode?')} {r['xid']}" for r in reqs if r["xid"] not in sent and not r.get("replied")]
print(f"requests released without a reply and without a PUT seen: {len(unreplied)} {unreplied[:5]}")
# 0@lo has no peer: its messages carry no NIDs (none is expected here).
bad_nid = [m for m in msgs if m["ni_nid"] is not None and (m["ni_nid"] != nid or m["peer_nid"] != srv)]
print("records without NIDs (0@lo):", sum(1 for m in msgs if m["ni_nid"] is None))
if bad_nid:
    fail(f"{len(bad_nid)} records not from {nid} to {srv}: {bad_nid[0]}")
print("interfaces", sorted({str(m["interface"]) for m in msgs}))
wait = [m for m in msgs if m["peer_credit_wait_ns"] + m["ni_credit_wait_ns"] > 0]
peer_wait = sum(m["peer_credit_wait_ns"] for m in msgs)
ni_wait = sum(m["ni_credit_wait_ns"] for m in msgs)
pc = [m["peer_credits"] for m in msgs if m["peer_credits"] is not None]
nc = [m["ni_credits"] for m in msgs if m["ni_credits"] is not None]
print(f"waited: {len(wait)} of {len(msgs)} messages; peer credit wait {peer_wait} ns,"
      f" NI credit wait {ni_wait} ns; lowest credits seen: peer {min(pc) if pc else None}"
      f" (LNet's min {pmin}), NI {min(nc) if nc else None} (LNet's min {nmin})")
joined = 0
for r in reqs:
    for m in sent.get(r["xid"], []):
        w = m["peer_credit_wait_ns"] + m["ni_credit_wait_ns"]
        if w > 0:
            joined += 1
            if r["service_ns"] is not None and w > r["service_ns"]:
                fail(f"xid {r['xid']}: LNet wait {w} ns > service_ns {r['service_ns']}")
print(f"requests whose PUT waited for credits: {joined}")
# The request record's own lnet_wait_ns (the tool links a PUT to its request
# by the thread that sent it) = the waits of the PUTs with its xid as match
# bits, for every replied request whose PUT was recorded.
linked = off = 0
for r in reqs:
    puts = sent.get(r["xid"], [])
    if not puts or not r.get("replied"):
        continue
    want = sum(m["peer_credit_wait_ns"] + m["ni_credit_wait_ns"] + m["delay_rule_ns"] for m in puts)
    if r.get("lnet_wait_ns") != want:
        off += 1
        if off <= 3:
            fail(f"xid {r['xid']} {r.get('opcode_name', 'opcode?')}: lnet_wait_ns "
                 f"{r.get('lnet_wait_ns')}, its PUTs' waits {want} ({len(puts)} PUTs)")
            keys = ("ts", "latency_ns", "service_ns", "queued_ns", "resends", "replied", "errno",
                    "comm", "worker_comm", "tid", "sent", "req_id")
            print("  its record:", {k: r.get(k) for k in keys})
            for m in puts:
                print("  its PUT:", {k: m.get(k) for k in ("ts", "latency_ns", "queued_ns", "lnd_ns",
                      "delay_rule_ns", "ni_credit_wait_ns", "portal", "tid", "status", "committed")})
    elif want > 0:
        linked += 1
if off > 3:
    fail(f"{off} requests whose lnet_wait_ns is not their PUTs' waits")
# The request's own NID (client_nid): its PUT's NI, so this client's NID on
# every request whose PUT the LNet plane saw sent, and null on the others.
seen = collections.Counter(str(r.get("client_nid")) for r in reqs if r.get("lnet_wait_ns") is not None)
unseen = collections.Counter(str(r.get("client_nid")) for r in reqs if r.get("lnet_wait_ns") is None)
print(f"client_nid of the requests whose PUT was seen sent: {dict(seen)}, of the others: {dict(unseen)}")
if set(seen) != {nid}:
    fail(f"client_nid of the requests whose PUT was seen sent: {dict(seen)}, expected only {nid}")
if set(unseen) - {"None"}:
    fail(f"client_nid on requests whose PUT was not seen sent: {dict(unseen)}")
print(f"requests whose lnet_wait_ns = their PUTs' waits, > 0: {linked}")
if mode != "default" and not linked:
    fail("no request with an LNet wait of its own (lnet_wait_ns > 0) with the credits reduced")
# A message queued at a gate exactly when the count it left was below 0
# (lnet_post_send_locked): its wait there is > 0 then, and 0 otherwise.
for key, wkey in (("peer_credits", "peer_credit_wait_ns"), ("ni_credits", "ni_credit_wait_ns")):
    odd = [m for m in msgs if m[key] is not None and (m[key] < 0) != (m[wkey] > 0)]
    if odd:
        m = odd[0]
        fail(f"{len(odd)} messages whose {wkey} does not match {key} < 0, e.g. {key} {m[key]},"
             f" {wkey} {m[wkey]}, match_bits {m['match_bits']}")
if pc and pmin and min(pc) < int(pmin):
    fail(f"a record saw peer credits {min(pc)}, below LNet's low-water mark {pmin}")
if mode == "default":
    # socklnd's 8 credits per peer: waits only where LNet's own low-water
    # mark went below 0 (10 writers' RPCs in flight do that now and then).
    if wait and pmin and int(pmin) >= 0:
        fail(f"{len(wait)} messages waited, but LNet's peer low-water mark is {pmin}")
else:
    if not wait or peer_wait <= 0:
        fail(f"no peer credit wait with the credits reduced (peer {peer_wait} ns, NI {ni_wait} ns)")
    if not pc or min(pc) >= 0:
        fail("no record saw the peer's credits below 0")
    if nc and nmin and min(nc) < int(nmin):
        fail(f"a record saw NI credits {min(nc)}, below LNet's low-water mark {nmin}")
sys.exit(0 if ok else 1)
PYEOF
}

# send_count over the workload against the records. LNet counts a send when
# the message is committed, the record is stamped when it is finalized, and
# the counter is read a moment apart from the clock: a message of the
# ldlm_cancels that come at the window's end can fall between the two. So
# each bound is taken twice (the clock just before and just after reading
# send_count) and a record belongs to the window by its commit time (ts −
# latency_ns): the records surely inside ≤ send_count ≤ the records maybe
# inside.
lnet_sends_match()
{
	python3 - "$work/out.jsonl" "$t_a1" "$t_a2" "$t_b1" "$t_b2" "$((sends1 - sends0))" <<'PYEOF'
import json, sys
from datetime import datetime, timezone
path, a1, a2, b1, b2, sends = sys.argv[1:7]
def ns(iso):
    sec, frac = iso.rstrip("Z").split(".")
    t = datetime.strptime(sec, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    return int(t.timestamp()) * 10**9 + int(frac.ljust(9, "0")[:9])
a1, a2, b1, b2, sends = ns(a1), ns(a2), ns(b1), ns(b2), int(sends)
starts = [ns(r["ts"]) - (r.get("latency_ns") or 0)
          for r in map(json.loads, open(path)) if r["type"] == "lnet"]
inner = sum(a2 < t < b1 for t in starts)
outer = sum(a1 < t < b2 for t in starts)
print(f"lnet records in the workload's window: {inner} to {outer}; LNet's send_count: {sends}")
sys.exit(0 if inner <= sends <= outer else 1)
PYEOF
}

# Lustre's modules loaded again (the first start overlaid them and set the
# network up: lustre_client_start does not run twice), LNet with the new
# credits, the mount.
lnet_restart()
{
	modprobe lustre && lctl network up >/dev/null && mount -t lustre "$LR_SERVER_NID:/$LR_FSNAME" "$LR_MNT"
}

# An LNet delay rule on every PUT this node sends to the servers (its
# requests, its callbacks' replies), LNet's delay is whole seconds of its
# clock: 1 s holds a message for up to 1 s. A few requests of one file run
# under it; the rule's stats (delayed/matched) are read before it goes.
delay_run()
{
	local st=0

	lctl net_delay_add -s "$LR_NID" -d "$LR_SERVER_NID" -r 1 -l 1 -m PUT ||
		{ echo "lctl net_delay_add: status $?"; return 1; }
	dd if=/dev/zero of="$LR_MNT/w/d" bs=64k count=1 oflag=direct status=none ||
		{ st=$?; echo "dd: status $st"; }
	stat "$LR_MNT/w/d" >/dev/null || { st=$?; echo "stat: status $st"; }
	rm -f "$LR_MNT/w/d" || { st=$?; echo "rm: status $st"; }
	sleep 2
	# Its status is not looked at: this build's lctl prints the rules and
	# exits 22 (its netlink path returns -EINVAL after a listing that
	# worked); delay_check fails where the listing has no rule.
	lctl net_delay_list >"$work/delay_list.txt" 2>&1
	lctl net_delay_del -a || { st=$?; echo "lctl net_delay_del: status $st"; }
	return "$st"
}

delay_check()
{
	python3 - "$work/out.jsonl" "$work/delay_list.txt" <<'PYEOF'
import json, os, re, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
listing = open(sys.argv[2]).read()
# As in lnet_check: replies to the server's requests carry its xids.
REPLY_PORTALS = {int(p) for p in os.environ["LR_REPLY_PORTALS"].split()}
m = re.search(r"latency \d+\).*?, (\d+)/(\d+), PUT (\d+)", listing)
if not m:
    print("FAIL: no delay rule in lctl net_delay_list:", listing.strip()[:300])
    sys.exit(1)
delayed, matched, puts = (int(x) for x in m.groups())
msgs = [r for r in lines if r["type"] == "lnet"]
held = [r for r in msgs if r["delay_rule_ns"] > 0]
reqs = {r["xid"]: r for r in lines if r["type"] == "rpc" and r.get("op") == "request"
        and r.get("proto") == "ptlrpc" and r.get("xid") is not None}
ok = True
def fail(s):
    global ok
    ok = False
    print("FAIL:", s)
print(f"delay rule: LNet delayed {delayed} of {matched} messages (PUT {puts});"
      f" lnet records held by a delay rule: {len(held)}, by type"
      f" {sorted({m['msg_type'] for m in held})}")
if not delayed:
    fail("the rule delayed nothing")
if len(held) != delayed:
    fail(f"lnet records with delay_rule_ns > 0: {len(held)}, LNet's delayed count {delayed}")
bad = [m for m in held if m["msg_type"] != "put" or m["delay_rule_ns"] > 2_000_000_000
       or m["peer_credit_wait_ns"] + m["ni_credit_wait_ns"] > 0]
if bad:
    fail(f"{len(bad)} held messages not PUTs, held over 2 s or with a credit wait too, e.g. {bad[0]}")
mine = [(m, reqs[m["match_bits"]]) for m in held
        if m["match_bits"] in reqs and m["portal"] not in REPLY_PORTALS]
print(f"requests among them: {len(mine)}; held {sum(m['delay_rule_ns'] for m, _ in mine) // 1000000} ms in all;"
      f" replies to the server's requests: {sum(1 for m in held if m['portal'] in REPLY_PORTALS)}")
if not mine:
    fail("no request record for a held PUT")
for m, r in mine:
    if r.get("lnet_wait_ns") is None or r["lnet_wait_ns"] < m["delay_rule_ns"] \
            or r["lnet_wait_ns"] > r["service_ns"]:
        fail(f"xid {r['xid']} {r.get('opcode_name')}: PUT held {m['delay_rule_ns']} ns,"
             f" lnet_wait_ns {r.get('lnet_wait_ns')}, service_ns {r['service_ns']}")
sys.exit(0 if ok else 1)
PYEOF
}

# run_phase NAME CREDITS LAST [TOOL], or NAME restart CREDITS LAST [TOOL]:
# one phase: LNet started with CREDITS ("mounted": as the last phase left
# it; restart: its modules loaded again), the tool (TOOL, default the
# build's), the workload, the checks.
# LAST: "keep" stays mounted for the next phase, "last" unmounts, else the
# modules are removed too for the next phase's LNet start (the tool stopped
# first: its programs hold them).
run_phase()
{
	local name=$1 last=$3 use=${4:-}

	if [ "$2" = restart ]; then
		last=$4
		use=${5:-}
	fi
	local tool=${use:-$tool}

	if [ "$2" = restart ]; then
		set_credits "$3"
		check "[$name] LNet restarted, mounted $LR_SERVER_NID:/$LR_FSNAME" lnet_restart || return 1
	elif [ "$2" != mounted ]; then
		set_credits "$2"
		check "[$name] client up and mounted $LR_SERVER_NID:/$LR_FSNAME" lustre_client_start ||
			{ grep -a '^lustre-real: ' "$work/check.out"; return 1; }
	fi
	mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
	say "[$name] Lustre $(lctl get_param -n version 2>/dev/null | head -n 1) on $(uname -r);" \
		"ksocklnd peer_credits=$(cat /sys/module/ksocklnd/parameters/peer_credits)" \
		"credits=$(cat /sys/module/ksocklnd/parameters/credits)"
	mkdir -p "$LR_MNT/w" || return 1
	rm -f "$work/out.jsonl"
	tracer_start 300 "" "$work/tool.err" "$tool" -v --mount "$LR_MNT" --stats-interval 5s \
		-o "$work/out.jsonl" || { say "the tool did not start"; return 1; }
	grep -E "probes attached" "$work/tool.err" | sed "s/^lustre-ebpf-stream: /timing: /"
	"$tool" --list-probes 2>/dev/null | grep -E '^rpc +lnet' | sed 's/^/probe: /'
	sleep 2
	t_a1=$(now_iso)
	sends0=$(lnet_sends)
	t_a2=$(now_iso)
	check "[$name] workload: 4 writers and 4 readers of 4 MiB" workload
	sleep 3
	t_b1=$(now_iso)
	sends1=$(lnet_sends)
	t_b2=$(now_iso)
	cp "$dbg/peers" "$work/peers.txt"
	cp "$dbg/nis" "$work/nis.txt"
	if [ "$name" = default ]; then
		check "[$name] a delay rule of 1 s on this node's PUTs: a few requests under it" delay_run
	fi
	check "[$name] tool exits 0" tracer_stop
	check "[$name] every line is valid against docs/record.schema.json" schema_valid "$work/out.jsonl"
	check "[$name] final stats: nothing dropped, refused or missed" lr_health
	echo "--- /sys/kernel/debug/lnet/peers"; cat "$work/peers.txt"
	echo "--- /sys/kernel/debug/lnet/nis"; cat "$work/nis.txt"
	echo "---"
	check "[$name] lnet records: each request's PUT and its lnet_wait_ns, NIDs, credit waits against LNet's peers and nis" \
		lnet_check
	grep -E '^(lnet records|by type|interfaces|waited|requests whose|records without|requests released|client_nid)' \
		"$work/check.out" | while read -r l; do say "[$name] $l"; done
	check "[$name] lnet records over the workload = LNet's send_count over it" lnet_sends_match
	grep -E '^lnet records in' "$work/check.out" | while read -r l; do say "[$name] $l"; done
	if [ "$name" = default ]; then
		check "[$name] delay rule: held messages = LNet's delayed count, in the requests' lnet_wait_ns" \
			delay_check
		grep -E '^(delay rule|requests among)' "$work/check.out" |
			while read -r l; do say "[$name] $l"; done
	fi
	if [ "${LES_LR_SERVER_TRACE:-0}" = 1 ]; then
		# The client's side of a two-node capture (test/data/capture-two-guests):
		# every phase's records, the servers' side traced in their guest.
		jq -M -c 'select(.type == "rpc" or (.type == "stats" and .final))' "$work/out.jsonl" |
			gzip -9 >"$work/client-$name.jsonl.gz" &&
			guest_keep_file "$work/client-$name.jsonl.gz" "lustre-two-guest-client-$name.jsonl.gz"
	fi
	if [ "$name" = reduced ]; then
		# The capture (rpc and lnet records) for the host: run-in-vm saves
		# it in LES_VM_FILES as lustre-lnet-capture.jsonl.gz.
		jq -M -c 'select(.type == "rpc" or .type == "lnet")' "$work/out.jsonl" | gzip -9 \
			>"$work/capture.jsonl.gz" &&
			guest_keep_file "$work/capture.jsonl.gz" lustre-lnet-capture.jsonl.gz
		# The client's kernel facts with LNet's BTF, for the planner's fixtures.
		"$tool" --dump-kernel-facts >"$work/kfacts.txt" 2>/dev/null &&
			guest_keep_file "$work/kfacts.txt" lustre-lnet-client.facts
	fi
	if [ "$last" = keep ]; then
		return 0
	elif [ "$last" = last ]; then
		check "[$name] unmount" lustre_client_stop
	else
		check "[$name] unmount, Lustre's and LNet's modules removed" lustre_real_stop --rmmod
	fi
}

# LES_LR_LNET_PLANTED: a build of the tool with a planted fault, run after
# the reduced phase (the only other one then) on the same LNet: its checks
# must fail (a demonstration, never set by CTest). A path the guest sees:
# the host's / is shared but not its /tmp.
if [ -n "${LES_LR_LNET_PLANTED:-}" ]; then
	run_phase reduced "$credits" keep && run_phase planted mounted last "$LES_LR_LNET_PLANTED"
elif [ -n "$credits" ]; then
	run_phase default default more && run_phase reduced restart "$credits" last
else
	run_phase default default last
fi
guest_done
