#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The output disk fills: lines are dropped and counted (dropped_output), the
# tool keeps running and recording, warns on stderr at most once per stats
# interval, leaves no half-written line behind, and once there is room again
# writes on; the final stats record accounts for every record.

. "$(dirname "$0")/lib.sh"
les_init 56_disk_full

M=$WORK/mnt
D=$WORK/out
les_testfs "$M"
mkdir -p "$D"
mount -t tmpfs -o size=64k,mode=0755 les-e2e-full "$D" || les_fail "cannot mount a tmpfs"
les_track_mount "$D"
# Fill it up but for a few KiB, so the first flushes still fit.
dd if=/dev/zero of="$D/filler" bs=1k count=56 status=none 2>/dev/null

# stderr goes to $WORK, not to the full disk.
ERR=$WORK/stderr
"$LES_BIN" -o "$D/out.jsonl" -v --mount "$M" --stats-interval 2s 2>"$ERR" &
LES_PID=$!
_les_pids+=("$LES_PID")
for i in $(seq 1 300); do
	grep -q "probes attached" "$ERR" && break
	kill -0 "$LES_PID" 2>/dev/null || les_fail "tool exited at start: $(cat "$ERR")"
	sleep 0.1
done
t0=$(date +%s)
for round in 1 2 3 4 5 6; do
	dd if=/dev/zero of="$M/w$round" bs=4k count=100 status=none || les_fail "dd failed"
	sleep 1
done
elapsed=$(($(date +%s) - t0))
les_true "tool still running with the disk full" kill -0 "$LES_PID"
warnings=$(grep -c "No space left on device" "$ERR")
les_ge "warned about the full disk" 1 "$warnings"
les_true "at most one warning per 2 s interval ($warnings in ${elapsed}s)" \
	test "$warnings" -le $((elapsed / 2 + 1))

# Room again: later records are written.
rm -f "$D/filler"
dd if=/dev/zero of="$M/after" bs=4k count=3 status=none
sleep 0.5
les_stop
les_eq "tool exit status" 0 "$LES_STATUS"
OUT=$D/out.jsonl
les_true "every line in the file is whole JSON" sh -c "jq -e . '$OUT' >/dev/null"
final=$(jq -c 'select(.type=="stats" and .final)' "$OUT")
[ -n "$final" ] || les_fail "no final stats record"
f() { jq -r "$1" <<<"$final"; }
les_ge "final stats: records dropped at the output" 1 "$(f .dropped_output)"
les_ge "final stats: lines dropped at the output" "$(f .dropped_output)" "$(f .dropped_output_lines)"
les_eq "identity: produced == emitted + dropped_kernel + dropped_userspace + filtered" \
	"$(f .produced_kernel)" "$(f '.emitted + .dropped_kernel + .dropped_userspace + .filtered_kernel')"
les_eq "emitted == record lines in the file" \
	"$(les_jq "$OUT" '[.[] | select(.type=="access" or .type=="rpc")] | length')" "$(f .emitted)"
les_eq "records after the disk had room again" true \
	"$(les_jq "$OUT" '[.[] | select(.type=="access" and .op=="write" and .comm=="dd")] | length >= 3')"
les_true "exit summary on stderr says how many were dropped" grep -q "records) dropped: No space" "$ERR"

les_done
