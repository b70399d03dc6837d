#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# --aggregate against per-op records, on the real kernel and the test
# filesystem. Four instances attach at once to one workload of known
# counts (two Slurm jobs, an injected EIO on every 3rd read):
#   A  per-op records only
#   B  --aggregate 2s --group-by job_id,op
#   C  --aggregate 2s (default group-by) --records: windows and records
#   D  --aggregate 2s --group-by op --max-groups 3: overflow into "other"
# Windows summed over the run must equal the records exactly, per group:
# counts, bytes and errors by class. The workload runs as nobody and the
# instances trace only that uid: the instances' own start-up touches the
# mount (as root) while the others are already attached.

. "$(dirname "$0")/lib.sh"
les_init 40_aggregate python3 setpriv

M=$WORK/mnt
NW=12   # writes of K bytes by job 101
NR=9    # reads of K bytes by job 102; every 3rd fails with EIO
K=4096
# direct_io: each read/write syscall is exactly one FUSE request, so the
# injected error hits exactly reads 3, 6 and 9.
les_testfs "$M" --direct-io --inject=read:EIO:3
chmod 1777 "$M"
NOBODY=$(id -u nobody)

start() { # NAME OPTIONS...: start one instance, remember its pid
	local name=$1
	shift
	les_start "$WORK/$name.jsonl" --mount "$M" --uid "$NOBODY" --stats-interval 0 "$@"
	eval "PID_$name=$LES_PID"
}
start A
start B --aggregate 2s --group-by job_id,op
start C --aggregate 2s --records
start D --aggregate 2s --group-by op --max-groups 3
les_pass "four instances attached"

les_two_jobs "$M/data" $K $NW $NR 3

for name in A B C D; do
	LES_PID=$(eval echo "\$PID_$name")
	les_stop
	les_eq "instance $name exit status" 0 "$LES_STATUS"
done

A=$WORK/A.jsonl B=$WORK/B.jsonl C=$WORK/C.jsonl D=$WORK/D.jsonl
for f in "$A" "$B" "$C" "$D"; do
	les_true "$(basename "$f"): every line is JSON" jq -e . "$f"
done

# --- the workload as the records tell it ------------------------------------

q() { les_jq "$A" "$1"; }
les_eq "records: writes of job 101" $NW \
	"$(q '[.[] | select(.type=="access" and .op=="write" and .job_id=="101")] | length')"
les_eq "records: reads of job 102" $NR \
	"$(q '[.[] | select(.type=="access" and .op=="read" and .job_id=="102")] | length')"
les_eq "records: EIO reads" $((NR / 3)) \
	"$(q '[.[] | select(.type=="access" and .op=="read" and .errno_class=="io")] | length')"
les_eq "records: no drops" 0 "$(q '[.[] | select(.type=="stats" and .final)][0].dropped_kernel + [.[] | select(.type=="stats" and .final)][0].dropped_userspace')"

# --- B: windows per (record type, job_id, op) == records of A -----------------

# Records grouped by [type, job_id, op] (RPC events: op null), summed.
RECORD_GROUPS='[.[] | select(.type=="access" or .type=="rpc" or .type=="rpc_event")
	| {k: [.type, .job_id, (if .type=="rpc_event" then null else .op end)],
	   bytes: (.bytes // 0), e: .errno_class}]
	| group_by(.k) | map({key: (.[0].k | tojson), count: length,
		bytes: (map(.bytes) | add),
		errors: (map(select(.e != null) | .e) | group_by(.) | map({key: .[0], value: length}) | from_entries)})'
# Windows grouped the same way, summed over every window of the run.
WINDOW_GROUPS='[.[] | select(.type=="window")] | group_by([.record_type, .job_id, .op])
	| map({key: ([.[0].record_type, .[0].job_id, .[0].op] | tojson),
		count: (map(.count) | add), bytes: (map(.bytes) | add),
		errors: ([.[].errors | to_entries[]] | group_by(.key)
			| map({key: .[0].key, value: (map(.value) | add)}) | from_entries)})'
les_jq "$A" "$RECORD_GROUPS" >"$WORK/A.groups" || les_fail "jq over A's records"
les_jq "$B" "$WINDOW_GROUPS" >"$WORK/B.groups" || les_fail "jq over B's windows"
les_true "B: windows summed == A's records, per (type, job_id, op)" \
	diff <(jq -S . "$WORK/A.groups") <(jq -S . "$WORK/B.groups")
les_ge "B: groups compared" 5 "$(jq length "$WORK/B.groups")"
qb() { les_jq "$B" "$1"; }
les_eq "B: write windows of job 101 sum to $NW ops" $NW \
	"$(qb '[.[] | select(.type=="window" and .record_type=="access" and .op=="write" and .job_id=="101") | .count] | add')"
les_eq "B: write bytes of job 101" $((NW * K)) \
	"$(qb '[.[] | select(.type=="window" and .record_type=="access" and .op=="write" and .job_id=="101") | .bytes] | add')"
les_eq "B: read errors of job 102 by class" '{"io":3}' \
	"$(qb '[.[] | select(.type=="window" and .record_type=="access" and .op=="read" and .job_id=="102") | .errors | to_entries[]] | group_by(.key) | map({key: .[0].key, value: (map(.value) | add)}) | from_entries | tojson')"
les_eq "B: cache_served reads (direct_io: none)" 0 \
	"$(qb '[.[] | select(.type=="window" and .record_type=="access" and .op=="read") | .cache_served] | add')"
les_eq "B: the jobs' ops fall in at least two windows" true \
	"$(qb '[.[] | select(.type=="window" and .job_id != null) | .window_start] | unique | length >= 2')"
les_eq "B: windows are 2 s long and start on even seconds" true \
	"$(qb '[.[] | select(.type=="window") | (.window_end | sub("\\.0+Z$"; "Z") | fromdate) as $e
		| (.window_start | sub("\\.0+Z$"; "Z") | fromdate) as $s | $e - $s == 2 and $s % 2 == 0] | all')"
les_eq "B: only the last window is partial" true \
	"$(qb '([.[] | select(.type=="window") | .window_start] | max) as $last
		| [.[] | select(.type=="window" and .partial == true) | .window_start == $last] | all')"
les_eq "B: one line per group and window" true \
	"$(qb '[.[] | select(.type=="window") | [.window_start, .record_type, .job_id, .op]] | length == (unique | length)')"
les_eq "B: no per-op records without --records" 0 \
	"$(qb '[.[] | select(.type=="access" or .type=="rpc")] | length')"
les_eq "B: final stats count the aggregated records" true \
	"$(qb '[.[] | select(.type=="stats" and .final)][0].aggregate.records == ([.[] | select(.type=="window") | .count] | add)')"
les_eq "B: write latency percentiles are ordered" true \
	"$(qb '[.[] | select(.type=="window" and .record_type=="access" and .op=="write")
		| .min_ns <= .p50_ns and .p50_ns <= .p90_ns and .p90_ns <= .p99_ns and .p99_ns <= .max_ns
		  and ([.latency_hist[][2]] | add) == .count] | all')"

# --- C: default group-by, windows and records from one process --------------

FIELDS='.fs_type, .fs, .mount, .op, .access_intent, .uid, .username, .process, .actor_type, .job_id'
les_jq "$C" "[.[] | select(.type==\"access\" or .type==\"rpc\") | {k: [.type, $FIELDS]}]
	| group_by(.k) | map({key: (.[0].k | tojson), count: length})" >"$WORK/C.records"
les_jq "$C" "[.[] | select(.type==\"window\" and .record_type != \"rpc_event\")
	| {k: [.record_type, $FIELDS], count}] | group_by(.k)
	| map({key: (.[0].k | tojson), count: (map(.count) | add)})" >"$WORK/C.windows"
les_ge "C: record groups" 5 "$(jq length "$WORK/C.records")"
les_true "C: windows == its own records, per default group" \
	diff <(jq -S . "$WORK/C.records") <(jq -S . "$WORK/C.windows")
les_eq "C: as many records as instance A" \
	"$(q '[.[] | select(.type=="access" or .type=="rpc")] | length')" \
	"$(les_jq "$C" '[.[] | select(.type=="access" or .type=="rpc")] | length')"
les_eq "C: every default field is in the window lines" true \
	"$(les_jq "$C" "[.[] | select(.type==\"window\") | has(\"fs_type\") and has(\"username\") and has(\"actor_type\") and has(\"access_intent\")] | all")"

# --- D: --max-groups 3 ------------------------------------------------------

qd() { les_jq "$D" "$1"; }
les_eq "D: at most 3 groups per window, besides \"other\"" true \
	"$(qd '[.[] | select(.type=="window" and .other != true)] | group_by(.window_start) | map(length <= 3) | all')"
les_eq "D: overflow lines are marked other with null fields" true \
	"$(qd '[.[] | select(.type=="window" and .other == true) | .op == null] | (length > 0 and all)')"
les_eq "D: all records counted, overflow included" \
	"$(q '[.[] | select(.type=="access" or .type=="rpc" or .type=="rpc_event")] | length')" \
	"$(qd '[.[] | select(.type=="window") | .count] | add')"
les_eq "D: stats count the overflow" \
	"$(qd '[.[] | select(.type=="window" and .other == true) | .count] | add')" \
	"$(qd '[.[] | select(.type=="stats" and .final)][0].aggregate.overflow_records')"
les_eq "D: bytes add up, overflow included" \
	"$(q '[.[] | select(.type=="access" or .type=="rpc") | .bytes] | add')" \
	"$(qd '[.[] | select(.type=="window") | .bytes] | add')"

les_done
