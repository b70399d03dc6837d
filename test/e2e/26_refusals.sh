#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# A program the kernel refuses never takes the tool down: it is turned off
# before load, with its reason, and the rest runs. LES_FORCE_LOAD makes the
# tool load two programs this kernel cannot take (an fentry twin aimed at a
# PtlRPC function and a sunrpc tp_btf program, with neither Lustre nor
# sunrpc here); a bindfs workload must still be recorded exactly, and the
# refusals must be said on stderr, in every stats record and by
# --list-probes.

. "$(dirname "$0")/lib.sh"
les_init 26_refusals bindfs

SRC=$WORK/src
M=$WORK/mnt
mkdir -p "$SRC" "$M"
bindfs "$SRC" "$M" || les_fail "bindfs failed"
les_track_mount "$M"
export LES_FORCE_LOAD=ptl_queue_wait_fe,sunrpc_begin_btf

les_start "$WORK/out.jsonl" --mount "$M" --stats-interval 1s
dd if=/dev/zero of="$M/f" bs=4k count=25 status=none || les_fail "dd failed"
sleep 1.2
les_stop
les_eq "tool exit status" 0 "$LES_STATUS"

OUT=$WORK/out.jsonl
q() { les_jq "$OUT" "$1"; }
les_eq "the workload is recorded: 25 writes of dd" 25 \
	"$(q '[.[] | select(.type=="access" and .op=="write" and .comm=="dd")] | length')"
les_eq "stderr: one warning per refused program" 2 \
	"$(grep -c 'refused by this kernel, running without it' "$OUT.err")"
les_eq "every stats record lists both refusals" true \
	"$(q '[.[] | select(.type=="stats") | [.programs_refused[].program] | sort == ["ptl_queue_wait_fe","sunrpc_begin_btf"]] | (length >= 2 and all)')"
les_eq "each refusal says why" true \
	"$(q '[.[] | select(.type=="stats" and .final) | .programs_refused[] | .reason | test("ptlrpc_queue_wait|rpc_task_begin")] | (length == 2 and all)')"
les_eq "nothing dropped" 0 "$(q '[.[] | select(.type=="stats" and .final)][0].dropped_kernel')"

"$LES_BIN" --list-probes=json >"$WORK/probes.json" 2>"$WORK/probes.err" ||
	les_fail "--list-probes failed"
les_eq "--list-probes: a trial load was made" true "$(jq .load_checked "$WORK/probes.json")"
les_eq "--list-probes: the refusals with their reasons" true \
	"$(jq '[.programs_refused[] | select(.reason | length > 0) | .program] | sort == ["ptl_queue_wait_fe","sunrpc_begin_btf"]' "$WORK/probes.json")"
"$LES_BIN" --list-probes >"$WORK/probes.txt" 2>/dev/null || les_fail "--list-probes (text) failed"
les_eq "--list-probes (text): one line per refusal" 2 "$(grep -c '^load: .* refused by this kernel' "$WORK/probes.txt")"

unset LES_FORCE_LOAD
les_eq "without forcing: nothing refused on this kernel" "[]" \
	"$("$LES_BIN" --list-probes=json 2>/dev/null | jq -c .programs_refused)"
les_done
