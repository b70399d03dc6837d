#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# A symlink planted at the output path, at start and after a rotation:
# refused with one line, the file it points to untouched. On SIGHUP the
# refused reopen drops and counts lines until the next SIGHUP, which opens
# a 0644 file left there (made 0640) and appends; the final stats record
# accounts for every record across both files, and the run, having lost
# lines, exits 1 saying how many.

. "$(dirname "$0")/lib.sh"
les_init 56_output_symlink

M=$WORK/mnt
les_testfs "$M"
V=$WORK/victim
printf 'precious\n' >"$V"
chmod 0600 "$V"

# At start.
ln -s "$V" "$WORK/out.jsonl"
"$LES_BIN" --mount "$M" -o "$WORK/out.jsonl" --duration 1s 2>"$WORK/err1"
les_eq "symlink at the output path: exit 1" 1 "$?"
les_eq "... with one line on stderr" 1 "$(wc -l <"$WORK/err1")"
les_true "... naming the symlink" grep -q -- "--output $WORK/out.jsonl: refusing a symbolic link" "$WORK/err1"
les_eq "... the file it points to untouched" precious "$(cat "$V")"
les_eq "... and its mode" 600 "$(stat -c %a "$V")"

# After a rotation: SIGHUP finds a symlink where the file was.
OUT=$WORK/run.jsonl
les_start "$OUT" --mount "$M" --stats-interval 0
dd if=/dev/zero of="$M/a" bs=4k count=5 status=none
sleep 0.5
mv "$OUT" "$OUT.1"
ln -s "$V" "$OUT"
kill -HUP "$LES_PID"
sleep 0.5
les_true "refused reopen: one line on stderr" grep -q "cannot reopen $OUT: refusing a symbolic link" "$OUT.err"
dd if=/dev/zero of="$M/b" bs=4k count=7 status=none
sleep 0.5
les_eq "... the file it points to untouched" precious "$(cat "$V")"

# The symlink gone, a 0644 file there (as logrotate's 'create 0644' leaves it).
rm "$OUT"
install -m 0644 /dev/null "$OUT"
kill -HUP "$LES_PID"
sleep 0.5
dd if=/dev/zero of="$M/c" bs=4k count=3 status=none
sleep 0.5
les_stop
les_eq "lines were lost to the refused reopen: exit status 1" 1 "$LES_STATUS"
les_eq "the file left 0644 is now 0640" 640 "$(stat -c %a "$OUT")"
les_eq "... the file it points to untouched" precious "$(cat "$V")"

cat "$OUT.1" "$OUT" >"$WORK/all.jsonl"
final=$(jq -c 'select(.type=="stats" and .final)' "$OUT")
[ -n "$final" ] || les_fail "no final stats record in the reopened file"
f() { jq -r "$1" <<<"$final"; }
writes() { les_jq "$1" "[.[] | select(.type==\"access\" and .op==\"write\" and .comm==\"dd\")] | length"; }
les_ge "records before the rotation, in the rotated file" 5 "$(writes "$OUT.1")"
les_ge "records after the second SIGHUP, in the new file" 3 "$(writes "$OUT")"
les_ge "records while refused: dropped and counted" 7 "$(f .dropped_output)"
les_eq "identity: produced == emitted + dropped_kernel + dropped_userspace + filtered" \
	"$(f .produced_kernel)" \
	"$(f '.emitted + .dropped_kernel + .dropped_userspace + .filtered_kernel + .filtered_userspace')"
les_eq "emitted == record lines in both files" \
	"$(les_jq "$WORK/all.jsonl" '[.[] | select(.type=="access" or .type=="rpc" or .type=="rpc_event")] | length')" \
	"$(f .emitted)"
les_true "exit line says how many were dropped" \
	grep -q "lines ($(f .dropped_output) records) dropped: Too many levels of symbolic links" "$OUT.err"

les_done
