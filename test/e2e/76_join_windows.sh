#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The client-server join's outputs, on the host (no Lustre here):
#   - a client-only node (a FUSE mount, no server probe attached) has the
#     join off: the final stats say "join":{"off":"no server probe
#     attached"}, and --aggregate writes no rpc_join window;
#   - on a real guest run's join lines (test/data/lustre-*-join.jsonl.gz,
#     and a fresh lustre-real-join-*.jsonl.gz in the build tree when
#     lustre.t_tool_fentry ran): per (lustre_jobid, target, client_nid), the
#     --aggregate windows' rpc_join groups have the count and, per layer, the
#     sum of the rpc_join lines, computed here by jq; the stats' join.joined
#     and aggregate.joined equal the lines; counters.py joinwindows agrees;
#   - a copy with one window's NRS time filed under handling fails both.

. "$(dirname "$0")/lib.sh"
les_init 76_join_windows jq python3 gzip

COUNTERS=$LES_SRC/test/vm/lustre-real/counters.py

# A client-only node: the join is off, and says so.
M=$WORK/mnt
les_testfs "$M"
les_start "$WORK/fuse.jsonl" --mount "$M" --aggregate 1s --records --stats-interval 0
for i in 1 2 3; do echo x >"$M/f$i" && cat "$M/f$i" >/dev/null; done
les_stop
les_eq "exit status" 0 "$LES_STATUS"
les_eq "client-only: the join is off" "no server probe attached" \
	"$(les_jq "$WORK/fuse.jsonl" '[.[] | select(.type == "stats" and .final)][-1].join.off')"
les_eq "client-only: no rpc_join line or window" 0 \
	"$(les_jq "$WORK/fuse.jsonl" '[.[] | select(.type == "rpc_join" or .record_type == "rpc_join")] | length')"
les_ge "client-only: its records were traced" 3 \
	"$(les_jq "$WORK/fuse.jsonl" '[.[] | select(.type == "access")] | length')"

# Per group: [count, the sum of each layer], from the lines and from the windows.
# The layers are the ones the capture's windows have (a capture made before
# client_lnet_wait_ns has seven; test_join_gate checks a window has them all).
SUMS='(map(select(.type == "window" and .record_type == "rpc_join")) | first | .layers | keys) as $names
	| def layers: $names;
	def key: [.lustre_jobid, .target, .client_nid, (.other // false)] | tostring;
	(map(select(.type == "rpc_join"))
		| group_by(key) | map({key: (.[0] | key),
			value: ([length] + [layers[] as $l | map(.[$l] // 0) | add])}) | from_entries) as $lines
	| (map(select(.type == "window" and .record_type == "rpc_join"))
		| group_by(key) | map({key: (.[0] | key),
			value: ([map(.count) | add] + [layers[] as $l | map(.layers[$l]) | add])}) | from_entries) as $windows
	| {lines: $lines, windows: $windows}'

# join_ok FILE: 0 when the windows equal the lines, else the groups that differ on stdout.
join_ok() {
	local f=$1
	gzip -dc "$f" | jq -s -c "$SUMS"' | . as $s
		| [(($s.lines | keys) + ($s.windows | keys) | unique)[]
			| select($s.lines[.] != $s.windows[.])
			| {group: ., lines: $s.lines[.], windows: $s.windows[.]}]
		| if length == 0 then empty else .[] end' >"$WORK/diff" || return 2
	[ ! -s "$WORK/diff" ] || { head -3 "$WORK/diff"; return 1; }
}

check_join() { # NAME FILE
	local name=$1 f=$2 n
	n=$(gzip -dc "$f" | jq -s '[.[] | select(.type == "rpc_join")] | length')
	les_ge "$name: rpc_join lines" 1 "$n"
	les_ge "$name: rpc_join window groups" 1 \
		"$(gzip -dc "$f" | jq -s '[.[] | select(.record_type == "rpc_join")] | length')"
	join_ok "$f" || les_fail "$name: window groups differ from their lines: $(cat "$WORK/diff")"
	les_pass "$name: every window group (job, target, client NID) = its lines, count and every layer"
	les_eq "$name: stats join.joined = the lines" "$n" \
		"$(gzip -dc "$f" | jq -s '[.[] | select(.type == "stats" and .final)][-1].join.joined')"
	les_eq "$name: stats aggregate.joined = the lines" "$n" \
		"$(gzip -dc "$f" | jq -s '[.[] | select(.type == "stats" and .final)][-1].aggregate.joined')"
	gzip -dc "$f" >"$WORK/plain.jsonl"
	python3 "$COUNTERS" joinwindows --capture-layers --records "$WORK/plain.jsonl" >"$WORK/counters.out" ||
		les_fail "$name: counters.py joinwindows: $(grep FAIL "$WORK/counters.out")"
	les_pass "$name: counters.py joinwindows agrees"
	# Planted: the first window with NRS time has it filed under handling as
	# well (without NRS time, 1 ms more handling).
	jq -c -s '(map(.record_type == "rpc_join" and .layers.server_nrs_ns > 0) | index(true)) as $n
		| (map(.record_type == "rpc_join") | index(true)) as $w
		| to_entries | map(if .key == ($n // $w)
			then .value.layers.server_handle_ns += (if $n then .value.layers.server_nrs_ns else 1000000 end)
			else . end | .value) | .[]' "$WORK/plain.jsonl" | gzip >"$WORK/planted.jsonl.gz"
	if join_ok "$WORK/planted.jsonl.gz" >/dev/null; then
		les_fail "$name: a window with NRS time filed under handling went unseen"
	fi
	les_pass "$name: planted (NRS time under handling): the jq check fails: $(head -c 300 "$WORK/diff")"
	gzip -dc "$WORK/planted.jsonl.gz" >"$WORK/planted.jsonl"
	if python3 "$COUNTERS" joinwindows --records "$WORK/planted.jsonl" >"$WORK/counters.out"; then
		les_fail "$name: counters.py joinwindows missed the planted window"
	fi
	les_pass "$name: planted: counters.py joinwindows fails: $(grep -m1 FAIL "$WORK/counters.out")"
}

n=0
for f in "$LES_SRC"/test/data/lustre-*-join.jsonl.gz "$LES_BUILD"/lustre-real-join-*.jsonl.gz; do
	[ -e "$f" ] || continue
	check_join "$(basename "$f" .jsonl.gz)" "$f"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || les_fail "no join lines to check: test/data/lustre-*-join.jsonl.gz is missing"

les_done
