#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The output disk fills (ENOSPC), plain and gzip: lines are dropped and
# counted (dropped_output, output_errors), the tool keeps running and
# recording, warns on stderr at most once per stats interval, leaves no
# half-written line (gzip: no broken member) behind, and once there is room
# again writes on; the final stats record accounts for every record, and the
# run exits 1 with one line saying how many were lost.

. "$(dirname "$0")/lib.sh"
les_init 56_disk_full gzip

M=$WORK/mnt
les_testfs "$M"

# full_run NAME OUT-FILE FREE-KIB OPS-PER-ROUND READ-CMD: one run on a 64 KiB
# tmpfs left with FREE-KIB; READ-CMD prints the output file as text.
full_run() {
	local name=$1 file=$2 free=$3 ops=$4 cat=$5
	local D=$WORK/out-$name ERR=$WORK/stderr-$name OUT i t0 elapsed warnings round
	mkdir -p "$D"
	mount -t tmpfs -o size=64k,mode=0755 "les-e2e-full-$name" "$D" ||
		les_fail "cannot mount a tmpfs"
	les_track_mount "$D"
	# Fill it up but for a few KiB, so the first flushes still fit.
	dd if=/dev/zero of="$D/filler" bs=1k count=$((64 - free)) status=none 2>/dev/null
	OUT=$D/$file

	# stderr goes to $WORK, not to the full disk.
	"$LES_BIN" -o "$OUT" -v --mount "$M" --stats-interval 2s 2>"$ERR" &
	LES_PID=$!
	les_wait_ready "$LES_PID" "$ERR"
	t0=$(date +%s)
	for round in 1 2 3 4 5 6; do
		dd if=/dev/zero of="$M/w$round" bs=4k count="$ops" status=none || les_fail "dd failed"
		sleep 1
	done
	elapsed=$(($(date +%s) - t0))
	les_true "$name: tool still running with the disk full" kill -0 "$LES_PID"
	warnings=$(grep -c "No space left on device" "$ERR")
	les_ge "$name: warned about the full disk" 1 "$warnings"
	les_true "$name: at most one warning per 2 s interval ($warnings in ${elapsed}s)" \
		test "$warnings" -le $((elapsed / 2 + 1))

	# Room again: later records are written.
	rm -f "$D/filler"
	dd if=/dev/zero of="$M/after" bs=4k count=3 status=none
	sleep 0.5
	les_stop
	les_eq "$name: exit status 1: records were lost" 1 "$LES_STATUS"
	$cat "$OUT" >"$WORK/text-$name" || les_fail "$name: cannot read $OUT back"
	les_true "$name: every line in the file is whole JSON" \
		sh -c "jq -e . '$WORK/text-$name' >/dev/null"
	final=$(jq -c 'select(.type=="stats" and .final)' "$WORK/text-$name")
	[ -n "$final" ] || les_fail "$name: no final stats record"
	f() { jq -r "$1" <<<"$final"; }
	les_ge "$name: final stats: records dropped at the output" 1 "$(f .dropped_output)"
	les_ge "$name: final stats: lines dropped at the output" "$(f .dropped_output)" \
		"$(f .dropped_output_lines)"
	les_ge "$name: final stats: output errors counted" 1 "$(f .output_errors)"
	les_eq "$name: identity: produced == emitted + dropped_kernel + dropped_userspace + filtered" \
		"$(f .produced_kernel)" \
		"$(f '.emitted + .dropped_kernel + .dropped_userspace + .filtered_kernel + .filtered_userspace')"
	les_eq "$name: emitted == record lines in the file" \
		"$(les_jq "$WORK/text-$name" '[.[] | select(.type=="access" or .type=="rpc" or .type=="rpc_event")] | length')" \
		"$(f .emitted)"
	les_eq "$name: records after the disk had room again" true \
		"$(les_jq "$WORK/text-$name" '[.[] | select(.type=="access" and .op=="write" and .comm=="dd")] | length >= 3')"
	les_eq "$name: one exit line on stderr says how many were dropped" 1 \
		"$(grep -c "lines ($(f .dropped_output) records) dropped: No space" "$ERR")"
}

full_run plain out.jsonl 8 100 cat
# gzip: lines compress some tenfold, so more of them and less room.
full_run gzip out.jsonl.gz 4 400 "gzip -dc"
les_true "gzip: every member whole (gzip -t)" gzip -t "$WORK/out-gzip/out.jsonl.gz"

les_done
