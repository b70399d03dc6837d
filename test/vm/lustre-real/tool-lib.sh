# shellcheck shell=bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tool-lib.sh: the tool on a real Lustre client, checked against Lustre's own
# counters. Sourced by t_tool_fentry.sh (modules with BTF: fentry) and
# t_tool_kprobe.sh (the same modules without BTF, as most sites build them:
# kprobes), each of which calls
#
#   lr_tool_test ATTACH [--nobtf]
#
# In the 6.12 guest: a single-node Lustre (guest-lustre.sh), the tool with
# --attach ATTACH on /mnt/lustre, and a workload in /mnt/lustre/w (the root
# directory stays out: llite counts no open or close of it): two jobs
# (SLURM_JOB_ID 101 and 202, jobid_var=SLURM_JOB_ID) writing at once, a
# read back by job 102 after the caches were dropped, ls, stat, mkdir, mv,
# rmdir, touch, chmod, rm, getfattr. Lustre's counters are cleared after
# the tool started and read once after the workload. Then, exactly:
#   - access records vs llite.*.stats (counters.py access),
#   - request records vs the client's mdc/osc stats: per opcode count and
#     service-time sum, req_waittime, enqueues, bytes (counters.py requests),
#   - lustre_jobid of the requests, the job_id they are charged to and the
#     --aggregate windows by job_id vs the servers' obdfilter/mdt job_stats;
#     job 202's writeback sent by kernel threads and charged to job 202 (to
#     its dd where osc_brw_prep_request is probed) (counters.py jobs),
#   - server records (type srv) vs the servers' own rpctrace lines over the
#     workload (lctl dk, "Handled RPC"), and every client request they
#     logged joined to its server record (rpc_join) (counters.py servers),
#   - in flight: the gauge back to 0 on the mount, and no more requests in
#     flight at once than osc.*.rpc_stats saw;
#   - with module BTF, injected delays each found in its own layer, in the
#     joined lines and in rpctrace: the NRS delay policy in the NRS queue,
#     fail_loc 0x50a in handling, NRS TBF on one of two jobs in that job's
#     NRS queue alone (lr_delays; counters.py delays);
# and the tool's own health: started, nothing refused, nothing dropped, no
# return probe missed, every queue_wait of a user op linked to it.
#
# The tool is started once, as its systemd unit starts it, and every phase
# runs in that one run: the workload above, a job's write under the unit's
# capability set, the injected delays, lock contention between two mounts,
# a ping the OST drops, -EINPROGRESS and an eviction, an OST restart. Each
# phase's records are told apart by time (lr_mark); the checks come after
# the run. Under TCG a start with fentry costs 15-30 s and a stop 15 s:
# six runs took 467 s, one takes 233 s (test/vm/README.md).

# shellcheck source=test/vm/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../guest-lib.sh"
# shellcheck source=test/vm/lustre-real/guest-lustre.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lustre.sh"
lr_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# lr_q JQ-ARGS...: jq over the records of LR_RECORDS (default: the run's).
lr_q()
{
	jq -M -s "$@" "${LR_RECORDS:-$work/out.jsonl}"
}

lr_counters()
{
	python3 "$lr_here/counters.py" "$@" --records "${LR_RECORDS:-$work/out.jsonl}" --mount "$LR_MNT"
}

# --list-probes: every probed llite and PtlRPC function by ATTACH (the
# functions this build has; obdclass's class_new_import too), opcodes from
# ptlrpc_request_pack, a trial load with nothing refused.
lr_list_probes_ok()
{
	local attach=$1

	"$tool" --list-probes=json >"$work/probes.json" 2>"$work/probes.err" || return 1
	jq -M -e --arg m "$attach" '. as $r
		| ([.probes[] | select(.plane == "access" and .fs == "lustre" and .method != "none")
			| .method] | unique) as $fn
		| ([.probes[] | select(.plane == "rpc" and (.proto == "ptlrpc" or .proto == "ldlm")
			and .method != "none") | .method] | unique) as $rpc
		| ({llite: $fn, ptlrpc: $rpc, refused: $r.programs_refused} | tostring | debug)
		| ($m == "kprobe" and $fn == ["kprobe_multi"] and $rpc == ["kprobe"]
		   or $m == "fentry" and $fn == ["fentry"] and ($rpc - ["kprobe"]) == ["fentry"])
		and ([$r.probes[] | select(.plane == "access" and .fs == "lustre" and .method != "none")]
			| length >= 25)
		and ([$r.probes[] | select(.probe == "ptlrpc_lprocfs_rpc_sent")][0].method == $m)
		and ([$r.probes[] | select(.probe == "class_new_import")][0].method == $m)
		and ([$r.probes[] | select(.proto == "ptlrpc")][0].opcode
			| startswith("ptlrpc_request_pack"))
		and $r.load_checked and $r.programs_refused == []' "$work/probes.json"
}

# The workload's writers (lr_writer: JOB PID UID COMM a line) for
# counters.py jobs: every writeback request of a job must carry its writer.
# That is rule 1 (docs/lustre.md), which needs osc_brw_prep_request probed;
# when --list-probes says it is not, this says why, loudly, and passes
# --cause-unprobed, on which the check fails: the writeback check never
# shrinks silently to the job alone.
lr_cause_arg()
{
	local m reason

	m=$(jq -M -r '[.probes[] | select(.probe == "osc_brw_prep_request")][0].method // "none"' \
		"$work/probes.json")
	echo "osc_brw_prep_request: $m" >&2
	echo "--writers $work/writers.txt"
	if [ "$m" = none ]; then
		reason=$(jq -M -r '[.probes[] | select(.probe == "osc_brw_prep_request")][0]
			| .reason // "not in --list-probes"' "$work/probes.json" | tr -c 'A-Za-z0-9_.,:()=/\n-' _)
		echo "osc_brw_prep_request NOT PROBED ($reason): writeback cannot be charged to its writer" >&2
		echo "--cause-unprobed $reason"
	fi
}

# Lustre's jobid_var in these tests: a variable the tool does not read, so
# that the job Lustre sends (lustre_jobid, the servers' job_stats) and the
# job of the environment (job_id: SLURM_JOB_ID) differ. Where the tool
# cannot tell who wrote a file, it charges the wire job (job_source
# "lustre"), which then can never pass for the writer's own.
LR_WIRE_VAR=LES_LUSTRE_JOB
LR_WIRE_PREFIX=${LR_WIRE_PREFIX:-}

# lr_wire_arg: counters.py's --wire-prefix when jobid_var is LR_WIRE_VAR.
lr_wire_arg()
{
	[ -z "$LR_WIRE_PREFIX" ] || echo "--wire-prefix $LR_WIRE_PREFIX"
}

# lr_wire_jobs: Lustre sends LES_LUSTRE_JOB=lr<job> as the job ID.
lr_wire_jobs()
{
	LR_WIRE_PREFIX=lr
	lustre_real_jobid "$LR_WIRE_VAR"
}

# lr_job JOB COMMAND...: COMMAND as job JOB, the tool's (SLURM_JOB_ID)
# and Lustre's (LES_LUSTRE_JOB, with the wire prefix).
lr_job()
{
	local job=$1
	shift
	env SLURM_JOB_ID="$job" "$LR_WIRE_VAR=$LR_WIRE_PREFIX$job" "$@"
}

# lr_writer JOB [--uid UID] DD-ARGS...: dd as job JOB under a name of its
# own (/tmp/les-w<JOB>: its comm), in the background. Its pid is known
# before it runs (env and setpriv exec it in the same process) and goes to
# $work/writers.txt with its uid and comm; lr_writer_pid has it.
lr_writer()
{
	local job=$1 uid=0 bin
	shift
	if [ "${1:-}" = --uid ]; then
		uid=$2
		shift 2
	fi
	bin=/tmp/les-w$job
	[ -x "$bin" ] || cp "$(command -v dd)" "$bin" || return 1
	if [ "$uid" = 0 ]; then
		env SLURM_JOB_ID="$job" "$LR_WIRE_VAR=$LR_WIRE_PREFIX$job" "$bin" "$@" &
	else
		env SLURM_JOB_ID="$job" "$LR_WIRE_VAR=$LR_WIRE_PREFIX$job" \
			setpriv --reuid="$uid" --regid="$uid" --clear-groups "$bin" "$@" &
	fi
	lr_writer_pid=$!
	echo "$job $lr_writer_pid $uid les-w$job" >>"$work/writers.txt"
}

lr_workload()
{
	local w=$LR_MNT/w p1 p2

	# Each writer its own comm and pid; job 202's as uid 1000, so that its
	# writeback (sent by root's kernel threads) must carry another uid.
	chmod 1777 "$w" || return 1
	lr_writer 101 if=/dev/zero of="$w/f1" bs=1M count=16 conv=fsync status=none || return 1
	p1=$lr_writer_pid
	lr_writer 202 --uid 1000 if=/dev/zero of="$w/f2" bs=1M count=8 status=none || return 1
	p2=$lr_writer_pid
	wait $p1 $p2 || return 1
	sync
	# The read must go to the OST: no pages, no locks cached.
	echo 3 >/proc/sys/vm/drop_caches
	lctl set_param -n 'ldlm.namespaces.*.lru_size=clear' >/dev/null
	lr_job 102 dd if="$w/f1" of=/dev/null bs=1M status=none || return 1
	# LR_LS: ls's options (-l: its ACL getxattrs; see client-tool.sh for 2.15).
	lr_job 103 ls ${LR_LS--l} "$w" >/dev/null || return 1
	lr_job 103 stat "$w/f1" >/dev/null || return 1
	mkdir "$w/d" && mv "$w/d" "$w/e" && rmdir "$w/e" || return 1
	touch "$w/t" && chmod 600 "$w/t" && rm "$w/t" || return 1
	# A request the server fails: the MDT refuses to remove a directory
	# that is not empty (the reint's status, -ENOTEMPTY).
	mkdir "$w/n" && touch "$w/n/x" || return 1
	! rmdir "$w/n" 2>/dev/null || return 1
	rm "$w/n/x" && rmdir "$w/n" || return 1
	getfattr -n trusted.lov "$w/f1" >/dev/null 2>&1 || return 1
	! getfattr -n user.x "$w/f1" >/dev/null 2>&1 || return 1 # user_xattr is off: EOPNOTSUPP
	# One of each op llite counts that the above does not make: statfs,
	# link, symlink, setxattr, listxattr; and readlink and lookups, which
	# llite does not count (records only).
	stat -f "$w" >/dev/null || return 1
	ln "$w/f1" "$w/h" && ln -s f1 "$w/s" && [ "$(readlink "$w/s")" = f1 ] || return 1
	setfattr -n trusted.les -v 1 "$w/f1" && getfattr -d -m - "$w/f1" >/dev/null || return 1
	rm "$w/h" "$w/s" || return 1
	# A ping on each client import, sent outside any access op (lctl's
	# write to sysfs): its mount is its import's (obd_ping must match).
	lctl set_param -n 'osc.*-osc-[0-9a-f]*.ping=1' 'mdc.*-mdc-[0-9a-f]*.ping=1'
}

lr_final()
{
	jq -M -s -c '[.[] | select(.type == "stats" and .final)][0]' "$work/out.jsonl"
}

# The stats record that closes the records read: the run's final one, or,
# for the run's first part (LR_RECORDS: lr_prefix's), the periodic one that
# ends it, whose counters are those of the part.
lr_closing_stats()
{
	if [ -n "${LR_RECORDS:-}" ]; then
		lr_q -c '[.[] | select(.type == "stats")] | last'
	else
		lr_final
	fi
}

# The run's final stats (the main phase's checks too: its counters hold
# every phase's).
lr_health()
{
	lr_final | jq -M -e '
		{dropped_kernel, dropped_userspace, kretprobe_missed, programs_refused} | debug
		| .dropped_kernel == 0 and .dropped_userspace == 0 and .kretprobe_missed == 0
		and .programs_refused == []'
}

# Every queue_wait made inside a user's access op links to that op's record.
lr_queue_waits_linked()
{
	lr_q -e --arg m "$LR_MNT" '
		[.[] | select(.type == "access") | .op_id] as $ops
		| [.[] | select(.type == "rpc" and .op == "queue_wait" and .mount == $m
			and .parent_op_id != null)] as $qw
		| ($qw | length) > 0 and all($qw[]; .parent_op_id as $p | $ops | index($p) != null)'
}

# With --file-id, access records of Lustre files carry the file's FID as
# lfs path2fid gives it where the modules have BTF (every record with an
# inode), and null without.
lr_fids_ok()
{
	local ids=$1 fid ino

	fid=$(lfs path2fid "$LR_MNT/w/f1") && ino=$(stat -c %i "$LR_MNT/w/f1") || return 1
	echo "f1: ino $ino, lfs path2fid $fid"
	# Python, not jq: a Lustre inode number (a flattened FID) is over 2^53.
	python3 - "${LR_RECORDS:-$work/out.jsonl}" "$LR_MNT" "$ino" "$fid" "$ids" <<'PY'
import json, sys
path, mnt, ino, fid, ids = sys.argv[1:]
acc = [r for r in map(json.loads, open(path)) if r.get("type") == "access" and r.get("mount") == mnt]
f1 = sorted({r.get("fid") for r in acc if r.get("ino") == int(ino)})
with_fid = sum(1 for r in acc if r.get("fid") is not None)
print(f"access records {len(acc)}, with a fid {with_fid}, f1's fids {f1}")
ok = acc and all("fid" in r for r in acc)
if ids == "btf":
    ok = ok and f1 == [fid] and all(r.get("ino") == 0 or r.get("fid") for r in acc)
else:
    ok = ok and with_fid == 0
sys.exit(0 if ok else 1)
PY
}

# The in-flight gauge of the mount is 0 at the end, as osc/mdc rpc_stats
# say; rpc_stats must be there and name every OSC's in-flight count.
lr_inflight_zero()
{
	local n

	n=$(grep -c 'RPCs in flight:' "$work/rpc_stats.txt" 2>/dev/null)
	echo "rpc_stats: ${n:-0} 'RPCs in flight' lines"
	[ "${n:-0}" -ge 1 ] || return 1
	grep 'RPCs in flight:' "$work/rpc_stats.txt"
	! grep 'RPCs in flight:' "$work/rpc_stats.txt" | grep -vq 'flight: *0$' || return 1
	lr_closing_stats | jq -M -e --arg m "$LR_MNT" '[.inflight.by_mount[] | select(.mount == $m)] == []'
}

# The gauge rose during the workload: a periodic stats record (every
# second) taken while the OST held a write (lr_hold_write) has the mount's
# PtlRPC requests in flight. A gauge stuck at 0 would pass lr_inflight_zero.
lr_inflight_rose()
{
	lr_q -e --arg m "$LR_MNT" '
		[.[] | select(.type == "stats" and (.final | not))
			| [.inflight.by_mount[] | select(.mount == $m and .proto == "ptlrpc") | .requests]
			| add // 0] as $n
		| ({stats_records: ($n | length), most_in_flight_on_the_mount: ($n | max)}
			| tostring | "in flight: " + . | debug)
		| ($n | max // 0) >= 1'
}

# The OST holds the first write it gets for 2 s (OBD_FAIL_OST_BRW_PAUSE_BULK
# 0x214, once, fail_val seconds): a request surely in flight at a stats tick.
lr_hold_write()
{
	lctl set_param -n fail_val=2 fail_loc=0x80000214
}

# The most ost_write requests in flight at once by the records (send = ts -
# latency) is at least 1 and at most the most osc rpc_stats saw at a send
# (summed over the OSCs).
lr_inflight_bounded()
{
	local lustre_max ours

	# Each OSC's most at a send, summed over the OSCs (one per OST): the
	# records' count is over the mount's OSCs at once.
	lustre_max=$(awk '/rpc_stats=$/ { s += m; m = 0 }
		/^rpcs in flight/ { on = 1; next } !/^[0-9]+:/ { on = 0 }
		on && $6 > 0 { m = $1 + 0 } END { print s + m }' "$work/rpc_stats.txt")
	ours=$(lr_q -r --arg m "$LR_MNT" '
		[.[] | select(.type == "rpc" and .opcode_name == "ost_write" and .mount == $m)
			| (.ts | sub("\\.[0-9]+Z$"; "Z") | fromdate) as $s
			| (.ts | capture("\\.(?<f>[0-9]+)Z$") | .f | "0." + . | tonumber) as $f
			| ($s + $f) as $fin | [[$fin - .latency_ns / 1e9, 1], [$fin, -1]]]
		| add | sort | reduce .[] as $e ({n: 0, max: 0}; .n += $e[1] | .max = ([.max, .n] | max))
		| .max')
	echo "ost_write in flight at once: tool $ours, osc rpc_stats up to $lustre_max"
	[ "$ours" -ge 1 ] && [ "$ours" -le "$lustre_max" ]
}

# Pings carry the mount of their import, which the tool learns from the
# first request made on it inside an access op or of a file's bulk I/O. A
# ping in the window on an import not yet used would be counted by Lustre
# and have no mount here: a tool just started uses the MDC and the OSC once
# (a create, a write, its fsync) before the counters start.
# lr_warm_up [MOUNT]: on $LR_MNT or MOUNT; with more than one OST, one file
# per OST (lfs setstripe -i), so that every OSC of the mount is used once.
lr_warm_up()
{
	local m=${1:-$LR_MNT} n i f

	n=$(lctl list_param 'osc.*-osc-[0-9a-f]*' 2>/dev/null | sed 's/-osc-[0-9a-f]*$//' |
		sort -u | wc -l)
	if [ "${n:-0}" -le 1 ]; then
		dd if=/dev/zero of="$m/.les-warm" bs=4k count=1 conv=fsync status=none
		return
	fi
	for ((i = 0; i < n; i++)); do
		f=$m/.les-warm$i
		[ -e "$f" ] || lfs setstripe -i "$i" -c 1 "$f" || return 1
		dd if=/dev/zero of="$f" bs=4k count=1 conv=fsync status=none || return 1
	done
}

# The timeouts all the client's imports (its MDC and OSC) counted.
lr_client_timeouts()
{
	lctl get_param -n 'osc.*-osc-[0-9a-f]*.import' 'mdc.*-mdc-[0-9a-f]*.import' |
		awk '$1 == "timeouts:" { s += $2 } END { print s + 0 }'
}

# Wait up to 60 s until every client import is FULL with nothing in
# flight: a ping the fault caught has expired (and been counted) by then.
lr_client_settle()
{
	for _ in $(seq 300); do
		lctl get_param -n 'osc.*-osc-[0-9a-f]*.import' 'mdc.*-mdc-[0-9a-f]*.import' |
			awk '$1 == "state:" && $2 != "FULL" { bad = 1 }
			     $1 == "inflight:" && $2 != 0 { bad = 1 } END { exit bad }' && return 0
		sleep 0.2
	done
	return 1
}

# ---- one run of the tool, its phases told apart by time ----------------
# Under TCG a start of the tool with fentry takes 15-30 s and its stop
# 15 s: lr_tool_test starts it once, under the systemd unit's capability
# set, and runs every phase in that one run. A phase runs between two marks
# (lr_phase), its records are the run's lines whose ts lies between them
# (lr_split), and Lustre's counters it is checked against are cleared at
# its start and read at its end, so neither side holds another phase's
# requests (counters.py also keeps to the counters' own window). The main
# phase's records are the run's first part, up to a periodic stats record
# (lr_prefix), which stands for the final one. Every check is made after
# the run, on the files the phases left.

# lr_mark NAME: now, as the records' ts (RFC 3339 in UTC with nanoseconds,
# whose text orders as the time does).
lr_mark()
{
	date -u +%Y-%m-%dT%H:%M:%S.%NZ >"$work/mark-$1"
}

# lr_split PHASE...: each PHASE's lines of the run, those with a ts from
# its mark PHASE-0 to PHASE-1, and the run's final stats record, into
# $work/PHASE.jsonl; in one pass over the run's lines (jq's pass over them
# took seconds a phase under TCG), each read by the ts it begins with.
lr_split()
{
	local p args=()

	for p; do
		args+=("$p" "$(cat "$work/mark-$p-0")" "$(cat "$work/mark-$p-1")")
	done
	python3 - "$work" "${args[@]}" <<'PY'
import re, sys
work, rest = sys.argv[1], sys.argv[2:]
phases = [(rest[i], rest[i + 1], rest[i + 2]) for i in range(0, len(rest), 3)]
out = {name: open(f"{work}/{name}.jsonl", "w") for name, _, _ in phases}
head = re.compile(r'\{"type":"([a-z_]+)","ts":"([^"]+)"')
for line in open(f"{work}/out.jsonl"):
    m = head.match(line)
    if not m:
        continue  # a window line: no ts
    if m.group(1) == "stats" and '"final":true' in line:
        for f in out.values():
            f.write(line)
        continue
    for name, a, b in phases:
        if a <= m.group(2) < b:
            out[name].write(line)
PY
}

# lr_prefix MARK OUT: the run's lines up to its first stats record after
# mark MARK, that one included, into $work/OUT, once the run has written it
# (one a second: --stats-interval 1s; up to 10 s).
lr_prefix()
{
	local mark

	mark=$(cat "$work/mark-$1")
	for _ in $(seq 50); do
		python3 - "$work/out.jsonl" "$mark" "$work/$2" <<'PY' && return 0
import json, sys
src, mark, dst = sys.argv[1:]
with open(dst, "w") as out:
    for line in open(src):
        try:
            r = json.loads(line)
        except ValueError:
            break  # the run's last line, still being written
        out.write(line)
        if r.get("type") == "stats" and r.get("ts", "") >= mark:
            sys.exit(0)
sys.exit(1)
PY
		sleep 0.2
	done
	return 1
}

# lr_phase NAME COMMAND...: a phase of the run: COMMAND between the marks
# NAME-0 and NAME-1, what it says in $work/NAME.out, its status in
# $work/NAME.st, for the check made after the run (lr_phase_ok).
lr_phase()
{
	local name=$1
	shift

	lr_mark "$name-0"
	"$@" >"$work/$name.out" 2>&1
	echo $? >"$work/$name.st"
	lr_mark "$name-1"
}

# lr_phase_ok NAME: what phase NAME said; it went through (its records:
# lr_split's $work/NAME.jsonl).
lr_phase_ok()
{
	cat "$work/$1.out" 2>/dev/null
	[ "$(cat "$work/$1.st" 2>/dev/null)" = 0 ] || { echo "the $1 phase failed"; return 1; }
	[ -s "$work/$1.jsonl" ]
}

# A request the server never answers, on the real Lustre: the servers drop
# every OBD_PING (fail_loc OBD_FAIL_PTLRPC_DROP_REQ_OPC 0x513, fail_val
# 400) while a ping is sent on the client's OSC with adaptive timeouts off
# and a 5 s timeout. The ping may not be resent (rq_no_resend): it expires
# (its import counts a timeout), is released without a reply with the
# errno lctl reports (rq_status; without module BTF the tool infers
# ETIMEDOUT from the expiry), and the import reconnects. The pinger's own
# pings on the MDC and OSC may be caught too: every expire event on the
# mount is one of the imports' timeouts. Then a write goes through again.
# The phase (lr_fault_run) leaves the imports' timeouts before and after
# (lr_ping_t0, lr_ping_t1) and the ping's errno (lr_ping_errno).
lr_fault_ping()
{
	local osc=$1 at_max timeout

	lr_ping_t0=$(lr_client_timeouts)
	at_max=$(lctl get_param -n at_max) timeout=$(lctl get_param -n timeout)
	lctl set_param -n at_max=0 timeout=5 fail_val=400 fail_loc=0x513 || return 1
	if lctl set_param -n "$osc.ping=1" 2>"$work/ping.err"; then
		say "the dropped ping was answered"
		lctl set_param -n fail_loc=0 fail_val=0 at_max="$at_max" timeout="$timeout"
		return 1
	fi
	lctl set_param -n fail_loc=0 fail_val=0 at_max="$at_max" timeout="$timeout"
	# What Lustre said the ping ended with: the errno lctl reports.
	lr_ping_errno=$(python3 -c 'import os, sys
text = open(sys.argv[1]).read()
print(next((n for n in range(1, 134) if text.rstrip().endswith(os.strerror(n))), 0))' "$work/ping.err")
	say "the dropped ping: lctl says '$(tail -1 "$work/ping.err")' (errno $lr_ping_errno)"
	lr_client_settle || { say "the client's imports did not reconnect and settle in 60 s"; return 1; }
	lr_job 301 dd if=/dev/zero of="$LR_MNT/w/after-fault" bs=64k count=1 conv=fsync \
		status=none || return 1
	sleep 1
	lr_client_settle || return 1
	lctl get_param 'llite.*.stats' 'mdc.*.stats' 'osc.*.stats' >"$work/fault-stats.txt"
	lr_ping_t1=$(lr_client_timeouts)
}

lr_fault_run()
{
	local osc st

	osc=$(lctl list_param 'osc.*-osc-[0-9a-f]*' | head -1)
	[ -n "$osc" ] || return 1
	lr_warm_up || return 1
	lustre_real_clear_stats
	lr_fault_ping "$osc"
	st=$?
	lctl set_param -n fail_loc=0 fail_val=0 >/dev/null
	return $st
}

# lr_fault_ok IDS: the ping phase's records against Lustre's account.
lr_fault_ok()
{
	local ids=$1 expired

	lr_phase_ok fault || return 1
	expired=$(jq -s --arg m "$LR_MNT" '[.[] | select(.type == "rpc_event" and .event == "expire"
		and .mount == $m)] | length' "$work/fault.jsonl")
	say "timeouts of the client's imports: Lustre $lr_ping_t0 -> $lr_ping_t1, expire events on the mount: $expired"
	jq -c 'select(.type == "rpc_event" or (.type == "rpc" and .op == "request" and .replied == false)
		or (.type == "stats" and .final)) | if .type == "stats" then {probe_hits} else
		{type, event, op, opcode_name, mount, comm, errno, replied, target, resends} end' \
		"$work/fault.jsonl" | sed 's/^/released without a reply or event: /' | head -20
	[ "$expired" -eq $((lr_ping_t1 - lr_ping_t0)) ] && [ "$expired" -ge 1 ] || return 1
	LR_RECORDS=$work/fault.jsonl lr_counters requests --phase fault --lctl "$work/fault-stats.txt" \
		--ids "$ids" --unreplied "obd_ping:$([ "$ids" = btf ] && echo "$lr_ping_errno" || echo 110):lctl"
}

# The EVICTED entries in the client imports' state histories (osc.*.state,
# mdc.*.state: " - [ TIME, STATE ]", TIME in seconds of the real clock)
# from second $1 on.
lr_client_evictions()
{
	lctl get_param -n 'osc.*-osc-[0-9a-f]*.state' 'mdc.*-mdc-[0-9a-f]*.state' |
		awk -v t0="$1" '$1 == "-" && $4 == "EVICTED" && $3 + 0 >= t0 { n++ } END { print n + 0 }'
}

# A client the OST evicts, on the real Lustre, as Lustre's own
# ost_evict_client does it: obdfilter.*.evict_client with the mount's
# client UUID (lfs getname -u). The client learns it at its next request
# to the OST (a ping, refused: ENOTCONN), reconnects, is told it was
# evicted, invalidates the import and connects again. Lustre counts it as
# an EVICTED entry in the OSC's state history (lr_evict_n); the tool must
# give one evict event per entry on the mount (for the OSC's target with
# module BTF), and afterwards the records equal the mdc/osc stats again.
lr_evict()
{
	local osc=$1 uuid t0

	uuid=$(lfs getname -u "$LR_MNT") || return 1
	t0=$(date +%s)
	lctl set_param -n "obdfilter.$LR_FSNAME-OST0000.evict_client=$uuid" || return 1
	lctl set_param -n "$osc.ping=1" 2>"$work/evict-ping.err" ||
		say "the ping after the eviction: $(tail -1 "$work/evict-ping.err")"
	lr_client_settle || { say "the client's imports did not reconnect and settle in 60 s"; return 1; }
	lr_job 302 dd if=/dev/zero of="$LR_MNT/w/after-evict" bs=64k count=1 conv=fsync \
		status=none || return 1
	sleep 1
	lr_client_settle || return 1
	lctl get_param 'llite.*.stats' 'mdc.*.stats' 'osc.*.stats' >"$work/evict-stats.txt"
	lr_evict_n=$(lr_client_evictions "$t0")
}

lr_evict_records_ok()
{
	local ids=$1 ours targets

	ours=$(jq -s --arg m "$LR_MNT" '[.[] | select(.type == "rpc_event" and .event == "evict"
		and .mount == $m)] | length' "$work/evict.jsonl")
	targets=$(jq -s -c --arg m "$LR_MNT" '[.[] | select(.type == "rpc_event" and .event == "evict"
		and .mount == $m) | .target] | unique' "$work/evict.jsonl")
	say "evictions: Lustre's state history $lr_evict_n EVICTED, evict events on the mount $ours, targets $targets"
	jq -c 'select(.type == "rpc_event" or (.type == "rpc" and .op == "request" and .errno != 0))
		| {type, event, op, opcode_name, mount, comm, errno, replied, target}' \
		"$work/evict.jsonl" | sed 's/^/evict run: /' | head -20
	[ "$lr_evict_n" -ge 1 ] && [ "$ours" -eq "$lr_evict_n" ] || return 1
	if [ "$ids" = btf ]; then
		[ "$targets" = "[\"$LR_FSNAME-OST0000\"]" ] || return 1
	else
		[ "$targets" = "[null]" ] || return 1
	fi
	# --min-resends: lr_einprogress's resend, by Lustre's own count.
	LR_RECORDS=$work/evict.jsonl lr_counters requests --phase fault --lctl "$work/evict-stats.txt" \
		--ids "$ids" --min-resends 1
}

# Requests the OSTs answer -EINPROGRESS (fail_loc
# OBD_FAIL_OST_STATFS_EINPROGRESS 0x231) for two seconds while lfs df
# waits: Lustre resends each a second or more later (a new xid), without
# ptlrpc_resend_req, and counts only the last reply. (Not "once": on this
# single node the MDT's own statfs may take the one failure.) lfs's
# ost_statfs records (one per OST) must be replied with errno 0, resent
# once or more in all, with one resend event of its req_id per resend.
lr_einprogress()
{
	local pid

	sleep 2 # no statfs younger than a second is cached
	lctl set_param -n fail_loc=0x231 || return 1
	lfs df "$LR_MNT" >/dev/null &
	pid=$!
	sleep 2
	lctl set_param -n fail_loc=0
	wait $pid
}

lr_einprogress_ok()
{
	jq -s -e --arg m "$LR_MNT" '
		[.[] | select(.type == "rpc" and .op == "request" and .mount == $m
			and .opcode_name == "ost_statfs" and .comm == "lfs")] as $st
		| [.[] | select(.type == "rpc_event" and .event == "resend")] as $ev
		| ({ost_statfs: [$st[] | {resends, replied, errno, xid}], resend_events:
		    [$ev[] | {req_id, opcode_name, comm}]} | tostring | "einprogress: " + . | debug)
		| ($st | length) >= 1 and ([$st[].resends] | add) >= 1
		and all($st[]; .replied and .errno == 0
			and (.req_id as $id | [$ev[] | select(.req_id == $id)] | length) == .resends)' \
		"$work/evict.jsonl"
}

# An OST restart, as Lustre's own tests fail a target: the OSTs are
# unmounted (-f) while a write with fsync waits for OST0000, and mounted again
# (adaptive timeouts off, a 5 s timeout: the client gives up in seconds).
# The OSC's requests expire; once the OST is back its import reconnects,
# and the OST either recovers it (REPLAY, RECOVER in the state history) or,
# when the client came too late for the recovery window, evicts it (the
# write then fails with EIO). Lustre's account decides what the tool must
# show: an expire event on the mount per timeout of the client's imports,
# an evict event per EVICTED in their histories, an access record with
# EIO of job 303 exactly when dd failed, and afterwards records that
# equal the mdc/osc stats. The phase leaves Lustre's side in lr_rs_*.
lr_restart()
{
	local t0 now0 pid i

	t0=$(lr_client_timeouts) now0=$(date +%s)
	# The write's one object on OST0000, the OST that stops (the
	# directory's default stripes over every OST).
	lfs setstripe -i 0 -c 1 "$LR_MNT/w/during-restart" || return 1
	lctl set_param -n at_max=0 timeout=5 || return 1
	# Every OST: while one still runs on this node, the OSS service
	# answers the other's connects at once (ENODEV) and nothing expires.
	for ((i = LR_OSTS - 1; i >= 0; i--)); do
		umount -f /mnt/lustre-ost$i || return 1
	done
	lr_job 303 dd if=/dev/zero of="$LR_MNT/w/during-restart" bs=64k count=1 \
		conv=fsync status=none &
	pid=$!
	sleep 8
	for ((i = 0; i < LR_OSTS; i++)); do
		mount -t lustre -o loop "$LR_SCRATCH/ost$i.img" /mnt/lustre-ost$i || return 1
	done
	wait $pid
	lr_rs_dd=$?
	lr_client_settle || { say "the client's imports did not settle in 60 s"; return 1; }
	lr_rs_states=$(lctl get_param -n 'osc.*-osc-[0-9a-f]*.state' |
		awk -v t0="$now0" '$1 == "-" && $3 + 0 >= t0 { print $4 }' | tr -s ' \n' ' ')
	lr_rs_evicted=$(lr_client_evictions "$now0")
	lctl get_param 'llite.*.stats' 'mdc.*.stats' 'osc.*.stats' >"$work/restart-stats.txt"
	lr_rs_timeouts=$(($(lr_client_timeouts) - t0))
}

lr_restart_run()
{
	local at_max timeout i st

	at_max=$(lctl get_param -n at_max) timeout=$(lctl get_param -n timeout)
	lr_warm_up || return 1
	lustre_real_clear_stats
	lr_restart
	st=$?
	for ((i = 0; i < LR_OSTS; i++)); do
		mountpoint -q /mnt/lustre-ost$i ||
			mount -t lustre -o loop "$LR_SCRATCH/ost$i.img" /mnt/lustre-ost$i
	done
	lctl set_param -n at_max="$at_max" timeout="$timeout" >/dev/null
	return $st
}

lr_restart_ok()
{
	local ids=$1 expired evict_events eio

	lr_phase_ok restart || return 1
	expired=$(jq -s --arg m "$LR_MNT" '[.[] | select(.type == "rpc_event" and .event == "expire"
		and .mount == $m)] | length' "$work/restart.jsonl")
	evict_events=$(jq -s --arg m "$LR_MNT" '[.[] | select(.type == "rpc_event" and .event == "evict"
		and .mount == $m)] | length' "$work/restart.jsonl")
	eio=$(jq -s --arg m "$LR_MNT" '[.[] | select(.type == "access" and .mount == $m
		and .job_id == "303" and .errno == 5)] | length' "$work/restart.jsonl")
	say "OST restart: the OSC's states since the stop: $lr_rs_states; dd exit $lr_rs_dd; Lustre: timeouts $lr_rs_timeouts, EVICTED $lr_rs_evicted; tool: expire $expired, evict $evict_events, job 303 EIO records $eio"
	jq -c 'select(.type == "rpc_event" or (.type == "rpc" and .op == "request" and
		(.errno != 0 or .resends > 0 or .replied == false)))
		| {type, event, opcode_name, mount, comm, errno, replied, resends, target}' \
		"$work/restart.jsonl" | sort | uniq -c | sed 's/^/restart run: /' | head -20
	# At least one: a restart with no timeout proves nothing of expire events.
	[ "$lr_rs_timeouts" -ge 1 ] || { say "OST restart: no timeout of the client's imports"; return 1; }
	[ "$expired" -eq "$lr_rs_timeouts" ] && [ "$evict_events" -eq "$lr_rs_evicted" ] || return 1
	if [ "$lr_rs_dd" -eq 0 ]; then
		grep -Eq 'REPLAY|RECOVER' <<<"$lr_rs_states" && [ "$eio" -eq 0 ] || return 1
	else
		[ "$lr_rs_evicted" -ge 1 ] && [ "$eio" -ge 1 ] || return 1
	fi
	LR_RECORDS=$work/restart.jsonl lr_counters requests --phase restart \
		--lctl "$work/restart-stats.txt" --ids "$ids"
}

lr_evict_run()
{
	local osc

	osc=$(lctl list_param 'osc.*-osc-[0-9a-f]*' | head -1)
	[ -n "$osc" ] || return 1
	lr_warm_up || return 1
	lustre_real_clear_stats
	lr_einprogress || { lctl set_param -n fail_loc=0; return 1; }
	lr_evict "$osc"
}

lr_evict_ok()
{
	lr_phase_ok evict && lr_evict_records_ok "$1" && lr_einprogress_ok
}

# Lock contention between two mounts of the filesystem on this node (two
# clients, as Lustre's own sanityn.sh runs them): job 401 writes a file on
# the first mount and leaves its pages dirty under its PW extent lock; job
# 402 reads it on the second, whose PR lock the OST queues behind the PW
# one and grants once the first mount, told by a blocking AST, has flushed
# the pages (sent by a kernel thread) and cancelled; then job 401 writes
# again and waits for the second mount's PR lock the same way; every
# cancel is made to wait a second (fail_loc), so every blocked wait must
# last a second or more. Lustre's
# account is the client's callback service (ldlm.services.ldlm_cbd.stats:
# the blocking and completion ASTs this node received): a blocked grant
# wait per completion AST, on both mounts, each inside the op of the job
# that waited, and the writer's flushed data charged to job 401, the read
# to job 402, as the OST's job_stats say. Lustre gives every mount of a
# filesystem one s_dev (ll_fill_super, for NFS export clustering): the
# tool cannot tell the two apart, names the first in the records of both,
# and says so on stderr; the jobs tell the two sides apart here.
lr_contention()
{
	local m1=$LR_MNT m2=$LR_MNT2 st=0

	lr_job 401 dd if=/dev/zero of="$m1/w/contended" bs=1M count=4 status=none || return 1
	# Each lock cancel a client sends waits a second first
	# (OBD_FAIL_LDLM_PAUSE_CANCEL, in ldlm_cli_cancel_req): a lock blocked
	# by another mount's lock is granted no sooner.
	lctl set_param -n fail_val=1 fail_loc=0x312 || return 1
	lr_job 402 dd if="$m2/w/contended" of=/dev/null bs=1M status=none || st=1
	lr_job 401 dd if=/dev/zero of="$m1/w/contended" bs=1M count=4 conv=notrunc,fsync \
		status=none || st=1
	lctl set_param -n fail_loc=0 fail_val=0
	[ $st -eq 0 ] || return 1
	sleep 1
	lctl get_param 'ldlm.services.ldlm_cbd.stats' >"$work/locks-ldlm.txt" || return 1
	lctl get_param 'obdfilter.*.exports.*.ldlm_stats' 2>/dev/null | sed 's/^/note OST: /' | grep -E 'exports|callback|enqueue'
	lctl get_param 'obdfilter.*.job_stats' 'mdt.*.job_stats' >"$work/locks-jobs.txt" || return 1
}

# The phase: the second mount (unmounted after the run started: see
# lr_tool_test) mounted again, on the device the run observes, both used
# once, the counters cleared, the contention, the second mount unmounted.
lr_contention_run()
{
	local st

	mount -t lustre "$LR_NID:/$LR_FSNAME" "$LR_MNT2" || return 1
	lr_warm_up || return 1
	lr_warm_up "$LR_MNT2" || return 1
	lctl set_param -n 'ldlm.services.ldlm_cbd.stats=clear' 'obdfilter.*.job_stats=clear' \
		'mdt.*.job_stats=clear' >/dev/null || return 1
	lctl set_param -n 'obdfilter.*.exports.*.ldlm_stats=clear' >/dev/null 2>&1
	lr_contention
	st=$?
	umount "$LR_MNT2" || st=1
	return $st
}

lr_contention_ok()
{
	lr_phase_ok locks || return 1
	jq -c 'select(.type == "rpc" and .op == "lock_wait" and .blocked)
		| {mount, job_id, comm, function, ms: (.latency_ns / 1e6), parent_wait_id}' \
		"$work/locks.jsonl" | sed 's/^/blocked grant wait: /'
	# One s_dev for both mounts (ll_fill_super): records name the first,
	# as the run said at its start, given both (a mount of an observed
	# device that appears later is followed without a word).
	grep -F "note: 1 mount(s) on the device of an observed one" "$work/tool.err" || return 1
	LR_RECORDS=$work/locks.jsonl lr_counters locks --mount2 "$LR_MNT2" \
		--ldlm "$work/locks-ldlm.txt" --job 401 --job 402 --min-blocked-ms 1000 &&
		# shellcheck disable=SC2046 # lr_wire_arg: no word or two
		LR_RECORDS=$work/locks.jsonl lr_counters jobs --jobs "$work/locks-jobs.txt" --job 401 \
			--job 402 --writeback-job 401 $(lr_wire_arg)
}

# The tool as its systemd unit starts it: the unit's capability bounding
# set, nothing inheritable, no_new_privs (contrib/lustre-ebpf-stream.service.in;
# test/e2e/55_privileges.sh does the same on the host, which has no Lustre),
# as setpriv's --bounding-set.
lr_unit_bset()
{
	local unit=$build/lustre-ebpf-stream.service bset

	bset=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr 'A-Z' 'a-z' |
		sed 's/cap_//g; s/ \+/,+/g; s/^/-all,+/')
	[ -n "$bset" ] && grep -q '^NoNewPrivileges=yes' "$unit" || return 1
	echo "$bset"
}

# Under the unit's set the run must load and attach its PtlRPC programs by
# the method asked and record a job's write: module BTF is what makes the
# difference here (the phase unit: lr_unit_write).
lr_unit_write()
{
	lr_job 501 dd if=/dev/zero of="$LR_MNT/w/unit" bs=64k count=1 conv=fsync \
		status=none || return 1
	sleep 1
}

lr_unit_ok()
{
	lr_phase_ok unit || return 1
	grep -E 'capabilities kept|probes attached' "$work/tool.err"
	jq -s -e '
		[.[] | select(.type == "rpc" and .op == "request" and .job_id == "501")] as $r
		| ([.[] | select(.type == "stats" and .final)][0]) as $f
		| ({requests_of_job_501: ($r | map(.opcode_name) | group_by(.) | map({(.[0]): length}) | add),
		    refused: $f.programs_refused} | tostring | debug)
		| ($r | map(.opcode_name) | index("ost_write")) != null and $f.programs_refused == []' \
		"$work/unit.jsonl"
}

# Injected delays, each of which must be found in its own layer and not in
# the others (counters.py delays), in the tool's joined lines and in the
# servers' rpctrace lines of the same xids. With module BTF only (server
# records need it), a phase of the run (lr_phase delays):
#   - job 601's direct write, its ost_io requests held by the NRS delay
#     policy (nrs_delay_min = max = LR_NRS_DELAY_S whole seconds): in the
#     NRS queue, not in handling or the network;
#   - job 602's direct write, every request of it paused in its handler
#     (fail_loc OBD_FAIL_PTLRPC_PAUSE_REQ 0x50a, fail_val LR_PAUSE_MS):
#     in handling, not in the queue or the network;
#   - jobs 701 and 702 at once, 701 limited by an NRS TBF jobid rule
#     (lr_tbf): 701's NRS queue grows, 702's does not.
# Direct I/O: one ost_write each, sent by dd itself, no fsync.
LR_NRS_DELAY_S=2
LR_PAUSE_MS=400

lr_delays()
{
	local io=ost.OSS.ost_io st=0

	lr_rpctrace_start
	# The policy's settings exist once it has started, with defaults of
	# 5 to 300 s: set at once after it, before any request comes.
	lctl set_param -n $io.nrs_policies=delay $io.nrs_delay_min=$LR_NRS_DELAY_S \
		$io.nrs_delay_max=$LR_NRS_DELAY_S $io.nrs_delay_pct=100 || return 1
	lr_job 601 dd if=/dev/zero of="$LR_MNT/w/delayed" bs=64k count=1 oflag=direct \
		status=none || st=1
	lctl set_param -n $io.nrs_policies=fifo || st=1
	lctl set_param -n fail_val=$LR_PAUSE_MS fail_loc=0x50a || st=1
	lr_job 602 dd if=/dev/zero of="$LR_MNT/w/paused" bs=64k count=1 oflag=direct \
		status=none || st=1
	lctl set_param -n fail_loc=0 fail_val=0
	lr_tbf || st=1
	lr_bulk_delay || st=1
	lctl dk >"$work/delays-dk.txt" || st=1
	lctl set_param -n debug=-rpctrace >/dev/null
	return $st
}

# An LNet delay rule on the bulk portal (OST_BULK_PORTAL, 8): every bulk
# PUT (a read's pages) or GET (a write's) the OSS sends waits
# LR_BULK_DELAY_S at LNet's gate, inside target_bulk_io; job 801 writes 64
# KiB and reads them back, both direct.
LR_BULK_DELAY_S=2

lr_bulk_delay()
{
	local f=$LR_MNT/w/bulkdelay st=0

	lctl net_delay_add -s '*' -d '*' -r 1 -l $LR_BULK_DELAY_S -p 8 >/dev/null || return 1
	lr_job 801 dd if=/dev/zero of="$f" bs=64k count=1 oflag=direct conv=notrunc status=none ||
		st=1
	lr_job 801 dd if="$f" of=/dev/null bs=64k count=1 iflag=direct status=none || st=1
	lctl net_delay_del -a >/dev/null || st=1
	return $st
}

# NRS TBF by job ID: job 701 limited to LR_TBF_RATE requests a second on
# ost_io, job 702 (the default rule: 10000/s) writing at the same time; six
# direct writes each, in turn: once 701's bucket (tbf_depth, 3) is spent,
# its writes wait in the NRS queue, 702's do not.
LR_TBF_RATE=2

lr_tbf()
{
	local io=ost.OSS.ost_io p1 p2 st=0

	lctl set_param -n "$io.nrs_policies=tbf jobid" || return 1
	lctl set_param -n "$io.nrs_tbf_rule=start les_slow jobid={${LR_WIRE_PREFIX}701} rate=$LR_TBF_RATE" ||
		st=1
	lr_job 701 dd if=/dev/zero of="$LR_MNT/w/tbf1" bs=64k count=6 oflag=direct status=none &
	p1=$!
	lr_job 702 dd if=/dev/zero of="$LR_MNT/w/tbf2" bs=64k count=6 oflag=direct status=none &
	p2=$!
	wait $p1 || st=1
	wait $p2 || st=1
	lctl set_param -n "$io.nrs_tbf_rule=stop les_slow" || st=1
	lctl set_param -n $io.nrs_policies=fifo || st=1
	return $st
}

lr_delays_ok()
{
	lr_phase_ok delays || return 1
	# shellcheck disable=SC2046 # lr_wire_arg: no word or two
	LR_RECORDS=$work/delays.jsonl lr_counters delays --dk "$work/delays-dk.txt" \
		--nrs-job 601 --nrs-delay-s $LR_NRS_DELAY_S --pause-job 602 --pause-ms $LR_PAUSE_MS \
		--tbf-job 701 --tbf-free-job 702 --tbf-rate $LR_TBF_RATE \
		--bulk-job 801 --bulk-delay-s $LR_BULK_DELAY_S $(lr_wire_arg)
}

# The servers' own record of each request they handle (debug=+rpctrace:
# "Handled RPC ... Request processed in Xus (Yus total)"), over the
# workload only: the oracle of the server records (counters.py servers).
lr_rpctrace_start()
{
	lctl set_param -n debug=+rpctrace debug_mb=128 >/dev/null || die "debug=+rpctrace"
	# The services' own stats over the same window (counters.py servers --svc).
	lctl set_param -n 'ost.OSS.*.stats=clear' 'mds.MDS.*.stats=clear' >/dev/null ||
		die "clear the service stats"
	# ... and the targets' block I/O times (counters.py servers --brw).
	lctl set_param -n 'osd-ldiskfs.*.brw_stats=clear' >/dev/null || die "clear brw_stats"
	lctl clear
}

lr_rpctrace_stop()
{
	lctl dk >"$work/dk.txt" || die "lctl dk"
	lctl get_param 'ost.OSS.*.stats' 'mds.MDS.*.stats' >"$work/svc-stats.txt" ||
		die "read the service stats"
	lctl get_param 'osd-ldiskfs.*.brw_stats' >"$work/brw-stats.txt" || die "read brw_stats"
	lctl set_param -n debug=-rpctrace >/dev/null
	say "rpctrace: $(grep -c 'Handled RPC' "$work/dk.txt") Handled lines"
}

lr_tool_test()
{
	local attach=$1 ids bset

	ids=$([ "${2:-}" = --nobtf ] && echo none || echo btf)
	# Two OSTs, the workload's files striped over both: per-target
	# comparisons have two OSCs, and a job's job_stats two OST entries.
	LR_OSTS=2
	lustre_real_start ${2:-} || { guest_done; die "Lustre did not come up"; }
	mkdir -p "$LR_MNT/w" || die "mkdir $LR_MNT/w"
	lfs setstripe -c -1 "$LR_MNT/w" || die "lfs setstripe -c -1 $LR_MNT/w"
	say "OSTs: $(lctl list_param 'osc.*-osc-[0-9a-f]*' | tr '\n' ' ')"
	# The server's bulk transfer and disk I/O inside handling (issue 45):
	# which of the functions that bound them this build has as symbols
	# (an inlined one has none; T global, t static).
	say "bulk/disk functions in kallsyms: $(awk '$3 ~ /^(target_bulk_io|tgt_brw_(read|write)|ofd_(commitrw|preprw)(_read|_write)?|osd_(fini_iobuf|do_bio|read_prep|write_prep|write_commit|ldiskfs_map_inode_pages)|ptlrpc_(start_bulk_transfer|abort_bulk))$/ { print $3 "/" $2 }' /proc/kallsyms | sort -u | tr '\n' ' ')"
	lr_wire_jobs >/dev/null || die "jobid_var"
	check "--list-probes: llite and PtlRPC by $attach, opcodes from the pack, nothing refused" \
		lr_list_probes_ok "$attach"
	say "server steps inside the handling: $(jq -M -r '[.probes[] | select(.probe == "target_bulk_io" or .probe == "osd_fini_iobuf") | "\(.probe) \(.method) \(.where // "") \(.reason // "")"] | join("; ")' "$work/probes.json")"
	# One run for every phase (see lr_mark), as the systemd unit starts
	# the tool. The second mount is there at the start, for --mount to take
	# it, and goes until the contention phase mounts it again.
	bset=$(lr_unit_bset) || die "no capability set in $build/lustre-ebpf-stream.service"
	say "the unit's bounding set: $bset"
	mkdir -p "$LR_MNT2" && mount -t lustre "$LR_NID:/$LR_FSNAME" "$LR_MNT2" ||
		die "mount $LR_MNT2"
	tracer_start 300 "" "$work/tool.err" setpriv --bounding-set="$bset" --inh-caps=-all \
		--no-new-privs "$tool" -v --attach "$attach" --mount "$LR_MNT" --mount "$LR_MNT2" \
		--stats-interval 1s --aggregate 1s --records --group-by job_id,op \
		--prometheus 127.0.0.1:9108 --slurm-jobid --file-id -o "$work/out.jsonl" ||
		die "the tool did not start"
	umount "$LR_MNT2" || die "umount $LR_MNT2"
	sleep 1
	lr_warm_up || die "warm-up write on $LR_MNT"
	lustre_real_clear_stats
	lctl set_param -n 'obdfilter.*.job_stats=clear' 'mdt.*.job_stats=clear' 'obdfilter.*.stats=clear'
	lr_rpctrace_start
	lr_hold_write || die "fail_loc"
	check "workload" lr_workload
	lctl set_param -n fail_loc=0 fail_val=0
	sleep 3
	lr_rpctrace_stop
	lctl get_param 'llite.*.stats' 'mdc.*.stats' 'osc.*.stats' >"$work/stats.txt"
	lctl get_param 'obdfilter.*.job_stats' 'mdt.*.job_stats' >"$work/jobs.txt"
	lctl get_param 'obdfilter.*.stats' >"$work/ost-stats.txt"
	lctl get_param 'osc.*-osc-[0-9a-f]*.rpc_stats' >"$work/rpc_stats.txt"
	lctl get_param 'osc.*-osc-[0-9a-f]*.import' 'mdc.*-mdc-[0-9a-f]*.import' >"$work/imports.txt"
	check "a /metrics scrape" python3 -c 'import sys, urllib.request
open(sys.argv[1], "wb").write(urllib.request.urlopen("http://127.0.0.1:9108/metrics", timeout=20).read())' \
		"$work/metrics.txt"
	lr_mark main-1
	lr_prefix main-1 main.jsonl || die "no stats record after the workload"
	lr_phase unit lr_unit_write
	[ "$LR_MODE" != btf ] || lr_phase delays lr_delays
	lr_phase locks lr_contention_run
	lr_phase fault lr_fault_run
	lr_phase evict lr_evict_run
	# Last: the OSTs' recovery may still run after it.
	lr_phase restart lr_restart_run
	check "tool exits 0" tracer_stop
	lr_split unit $([ "$LR_MODE" != btf ] || echo delays) locks fault evict restart ||
		die "the phases' records"
	check "with the systemd unit's capability set: PtlRPC by $attach, a job's write recorded" \
		lr_unit_ok
	[ "$LR_MODE" != btf ] ||
		check "injected delays, each in its layer alone (tool and rpctrace): NRS delay on ost_io in the NRS queue, fail_loc 0x50a in handling, TBF on one of two jobs, an LNet delay rule on the bulk portal in the bulk transfer" \
			lr_delays_ok
	grep -E '^(ok  |FAIL) (NRS|fail_loc|LNet delay)' "$work/check.out" | while read -r l; do say "$l"; done
	# The main phase's checks: its records, the run's first part. (The
	# phases after it add lines of the same kinds: the whole run's took 90 s
	# to validate under TCG.)
	LR_RECORDS=$work/main.jsonl
	check "every line is valid against docs/record.schema.json" schema_valid "$LR_RECORDS"
	check "final stats: nothing dropped, refused or missed" lr_health
	check "access records = llite.*.stats" lr_counters access --lctl "$work/stats.txt"
	if [ "$ids" = none ]; then
		lr_what="no server record and no join without module BTF; every client request counted as without a key"
	else
		lr_what="server records = the servers' rpctrace lines (xid, client NID, opcode, thread, status, times), ost_io's service stats (req_waittime, per-opcode handling) and the targets' brw_stats (block I/Os and their I/O time buckets); a bulk inside each ost_read/ost_write; every client request they logged joined to its server record"
	fi
	check "$lr_what" lr_counters servers --segment --dk "$work/dk.txt" --svc "$work/svc-stats.txt" \
		--brw "$work/brw-stats.txt" --ids "$ids"
	# Its figures, before the next check's output takes check.out's place.
	grep -E '^(note (rpctrace|join|client request not joined|service|bulk)|(ok  |FAIL) (service|brw_stats|every ost_read|bulk_ns|server records: bulk))' "$work/check.out" | while read -r l; do say "$l"; done
	# The windows hold the whole run's joins, the last window flushed at its end.
	[ "$ids" = none ] ||
		check "--aggregate windows' rpc_join groups (job, target, client NID) = the sums over the rpc_join lines, every layer" \
			python3 "$lr_here/counters.py" joinwindows --records "$work/out.jsonl"
	grep -E '^note join windows' "$work/check.out" | while read -r l; do say "$l"; done
	check "request records = mdc/osc stats per opcode and per target; NIDs = the imports' connections" \
		lr_counters requests --lctl "$work/stats.txt" --imports "$work/imports.txt" --ids "$ids"
	# shellcheck disable=SC2046 # lr_cause_arg: no word or two
	check "lustre_jobid (lr<job>), job_id (SLURM_JOB_ID), windows and Prometheus = the servers' job_stats (101 and 202 at once, 102); writeback charged to its writer (pid, uid, comm)" \
		lr_counters jobs --jobs "$work/jobs.txt" --ost-stats "$work/ost-stats.txt" --job 101 \
		--job 202 --job 102 --writeback-job 202 $(lr_cause_arg) $(lr_wire_arg) --windows "$LR_RECORDS" \
		--metrics "$work/metrics.txt"
	# Who sent and who was charged the writeback, also when the checks pass.
	grep -E '^note job|kernel thread|charged to job_id|its writer|NOT PROBED' "$work/check.out" |
		while read -r l; do say "$l"; done
	say "probe hits: $(lr_final | jq -M -c '.probe_hits |
		{osc_brw_prep_kthread, ptlrpc_cause_found}')"
	check "queue_waits link to their access records" lr_queue_waits_linked
	check "access records carry the FID lfs path2fid gives (null without BTF)" lr_fids_ok "$ids"
	check "in flight: 0 on the mount at the end, as rpc_stats" lr_inflight_zero
	check "in flight: the gauge rose while the OST held a write" lr_inflight_rose
	grep -o 'in flight: {.*}' "$work/check.out" | tr -d '\\' | while read -r l; do say "$l"; done
	lr_dump_work main
	# Without module BTF the requests have no ids to link: no trees to keep.
	[ "$ids" = none ] || lr_keep_capture "$attach"
	check "in flight: ost_write concurrency within rpc_stats" lr_inflight_bounded
	unset LR_RECORDS
	check "a ping the OST drops: an expire event per import timeout, a request released without a reply (ETIMEDOUT), the import reconnected, records = osc/mdc stats" \
		lr_fault_ok "$ids"
	grep -E 'timeouts of|released without' "$work/check.out" | while read -r l; do say "$l"; done
	check "-EINPROGRESS: a resend event per resend; an eviction by the OST: an evict event per EVICTED in the import's history, the import back, records = osc/mdc stats" \
		lr_evict_ok "$ids"
	grep -E 'evictions:|^evict run|einprogress:' "$work/check.out" | while read -r l; do say "$l"; done
	lr_dump_work evict evict.jsonl evict-stats.txt
	check "an OST restart: an expire event per timeout, an evict event per EVICTED, EIO records iff the write failed, records = osc/mdc stats" \
		lr_restart_ok "$ids"
	grep -E 'OST restart:|restart run' "$work/check.out" | while read -r l; do say "$l"; done
	lr_dump_work restart restart.jsonl restart-stats.txt
	check "lock contention between two mounts: a blocked grant wait per completion AST (ldlm_cbd), in the op that waited; the flushed writes charged to their writer, as job_stats" \
		lr_contention_ok
	grep -E 'blocked grant wait|^note (OST|blocked)|^(ok  |FAIL) .*(ldlm|blocked|AST)' "$work/check.out" |
		while read -r l; do say "$l"; done
	# The servers stay up: the guest powers off (poweroff -f) right after.
	check "the client unmounts" lustre_real_stop --client
	cell_by_checks lustre-2.17.57 access "$attach"
	cell_by_checks lustre-2.17.57 rpc "$attach"
	say "stage times (s): $LR_TIMES"
	lr_dump_work locks locks.jsonl locks-ldlm.txt locks-jobs.txt
	guest_done
}

# lr_keep_capture ATTACH: the main phase's records (access, rpc, rpc_event;
# at most LES_LR_CAPTURE_MAX, default 2000) gzipped onto the console as a
# guest file (guest-lib.sh: guest_keep_file), which run-in-vm saves as
# lustre-real-capture-ATTACH.jsonl.gz in the build directory (with module
# BTF only: t_tool_fentry's):
# e2e.73_otlp_jaeger replays it into Jaeger when it is there.
#
# And the join's lines whole (rpc_join, the windows' rpc_join groups, the
# final stats) of the whole run, as lustre-real-join-ATTACH.jsonl.gz: the
# host's e2e.76_join_windows checks the windows against the lines on it.
lr_keep_capture()
{
	local f=$work/capture-$1.jsonl.gz j=$work/join-$1.jsonl.gz

	jq -M -c 'select(.type == "access" or .type == "rpc" or .type == "rpc_event")' \
		"${LR_RECORDS:-$work/out.jsonl}" | head -n "${LES_LR_CAPTURE_MAX:-2000}" | gzip -9 >"$f" &&
		guest_keep_file "$f" "lustre-real-capture-$1.jsonl.gz"
	grep -E '^\{"type":"(rpc_join|window|stats)"' "$work/out.jsonl" |
		jq -M -c 'select(.type == "rpc_join" or (.type == "window" and .record_type == "rpc_join")
		or (.type == "stats" and .final))' | gzip -9 >"$j" &&
		guest_keep_file "$j" "lustre-real-join-$1.jsonl.gz"
}

# lr_dump_work PART [FILE...]: with LES_LR_DUMP=1, the work files (records,
# Lustre's counters; all, or the FILEs) on the console as a base64 tar
# between two marker lines, for counters.py on the host: each run's as soon
# as it is checked (a run cut by LES_VM_TIMEOUT keeps those before). On the
# host:
#   sed -n '/^LES-LR-WORK-BEGIN main/,/^LES-LR-WORK-END/{//!p}' LOG | base64 -d | tar -xz
lr_dump_work()
{
	local part=$1
	shift

	[ "${LES_LR_DUMP:-0}" = 1 ] || return 0
	echo "LES-LR-WORK-BEGIN $part"
	if [ $# -eq 0 ]; then
		tar -C "$work" -czf - --exclude check.out .
	else
		tar -C "$work" -czf - "$@"
	fi | base64 -w 120
	echo "LES-LR-WORK-END $part"
}
