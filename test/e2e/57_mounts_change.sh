#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Mounts that change while traced. With --mount: the observed filesystem is
# unmounted (a "mount_gone" notice, its records stop, nothing crashes) and
# mounted again at the same path (a "mount_added" notice, records again).
# Without --mount: a FUSE mount that appears after start-up is observed
# without a restart, and the ops of the mounts kept go on being recorded
# while others come and go.

. "$(dirname "$0")/lib.sh"
les_init 57_mounts_change

A=$WORK/a
les_testfs "$A"
echo one >"$A/f"
for c in cat-before cat-between cat-after cat-b2; do
	cp /bin/cat "$WORK/$c"
done

# wait_for FILE JQ-FILTER: until a line of FILE matches (5 s at most).
wait_for() {
	local i
	for i in $(seq 1 50); do
		[ "$(jq -c "select($2)" "$1" 2>/dev/null | head -1)" != "" ] && return 0
		sleep 0.1
	done
	les_fail "no line matching $2 in $1 after 5 s"
}

les_start "$WORK/out.jsonl" --mount "$A"
"$WORK/cat-before" "$A/f" >/dev/null
fusermount3 -u "$A" || les_fail "cannot unmount $A"
wait_for "$WORK/out.jsonl" ".type==\"notice\" and .notice==\"mount_gone\" and .mount==\"$A\""
les_pass "unmounted: a mount_gone notice for $A"
echo under >"$A/f"
"$WORK/cat-between" "$A/f" >/dev/null
les_true "tool still running after the unmount" kill -0 "$LES_PID"
les_testfs "$A"
echo two >"$A/f"
wait_for "$WORK/out.jsonl" ".type==\"notice\" and .notice==\"mount_added\" and .mount==\"$A\""
les_pass "mounted again: a mount_added notice for $A"
"$WORK/cat-after" "$A/f" >/dev/null
sleep 0.5
les_stop
les_eq "tool exit status" 0 "$LES_STATUS"
OUT=$WORK/out.jsonl
q() { les_jq "$OUT" "$1"; }
les_eq "notice lines carry fs_type and fs" true \
	"$(q '[.[] | select(.type=="notice")] | length >= 2 and all(.fs_type=="fuse.les-testfs" and .fs=="les-testfs" and .host != null and .ts != null)')"
les_eq "records before the unmount" true \
	"$(q "[.[] | select(.type==\"access\" and .comm==\"cat-before\" and .mount==\"$A\")] | length > 0")"
les_eq "no records while unmounted" 0 "$(q '[.[] | select(.comm=="cat-between")] | length')"
les_eq "records after mounting again, with the mount's fields" true \
	"$(q "[.[] | select(.type==\"access\" and .comm==\"cat-after\" and .op==\"read\")] | length > 0 and all(.mount==\"$A\")")"
final=$(jq -c 'select(.type=="stats" and .final)' "$OUT")
# Without it both sides of the identity are empty, and equal.
[ -n "$final" ] || les_fail "no final stats record"
les_eq "identity holds" "$(jq .produced_kernel <<<"$final")" \
	"$(jq '.emitted + .dropped_kernel + .dropped_userspace + .filtered_kernel' <<<"$final")"

# Auto-detection: a new FUSE mount after start-up is picked up.
B1=$WORK/b1
B2=$WORK/b2
les_testfs "$B1"
les_start "$WORK/auto.jsonl"
les_testfs "$B2"
echo three >"$B2/f"
wait_for "$WORK/auto.jsonl" ".type==\"notice\" and .notice==\"mount_added\" and .mount==\"$B2\""
les_pass "auto: a mount_added notice for the new mount $B2"
"$WORK/cat-b2" "$B2/f" >/dev/null
fusermount3 -u "$B1"
wait_for "$WORK/auto.jsonl" ".type==\"notice\" and .notice==\"mount_gone\" and .mount==\"$B1\""
les_pass "auto: a mount_gone notice for $B1"
sleep 0.3
les_stop
les_eq "auto: tool exit status" 0 "$LES_STATUS"
les_eq "auto: records of the new mount" true \
	"$(les_jq "$WORK/auto.jsonl" "[.[] | select(.type==\"access\" and .comm==\"cat-b2\" and .op==\"read\")] | length > 0 and all(.mount==\"$B2\")")"

# Ops of a mount kept while others come and go: none missed. (The probes'
# table of mounts was cleared and filled again at each change; reads made
# meanwhile left no record and no count.)
K=$WORK/kept
les_testfs "$K"
head -c 20000 /dev/zero >"$K/f"
cp /bin/dd "$WORK/dd-kept"
les_start "$WORK/kept.jsonl"
"$WORK/dd-kept" if="$K/f" of=/dev/null bs=1 count=20000 status=none &
dd_pid=$!
for i in $(seq 1 40); do
	les_testfs "$WORK/churn$i"
	fusermount3 -u "$WORK/churn$i"
done
wait "$dd_pid" || les_fail "dd failed"
sleep 0.3
les_stop
les_eq "kept: tool exit status" 0 "$LES_STATUS"
les_eq "kept: every one of 20000 reads recorded while 40 mounts came and went" 20000 \
	"$(jq -c "select(.type==\"access\" and .comm==\"dd-kept\" and .op==\"read\" and .mount==\"$K\")" \
		"$WORK/kept.jsonl" | wc -l)"

# --mountinfo: a /proc/PID/mountinfo is followed as the tool's own is (a
# DaemonSet reads the host's /proc/1/mountinfo), and a plain file when it
# is replaced.
B3=$WORK/b3
B4=$WORK/b4
cp /bin/cat "$WORK/cat-b3"
cp /bin/cat "$WORK/cat-b4"
les_start "$WORK/proc.jsonl" --mountinfo "/proc/$$/mountinfo"
les_testfs "$B3"
echo four >"$B3/f"
wait_for "$WORK/proc.jsonl" ".type==\"notice\" and .notice==\"mount_added\" and .mount==\"$B3\""
les_pass "--mountinfo /proc/$$/mountinfo: a mount_added notice for $B3, made after start"
"$WORK/cat-b3" "$B3/f" >/dev/null
sleep 0.3
les_stop
les_eq "--mountinfo /proc/PID/mountinfo: tool exit status" 0 "$LES_STATUS"
les_eq "--mountinfo /proc/PID/mountinfo: records of the new mount" true \
	"$(les_jq "$WORK/proc.jsonl" "[.[] | select(.type==\"access\" and .comm==\"cat-b3\" and .op==\"read\")] | length > 0 and all(.mount==\"$B3\")")"
cp "/proc/$$/mountinfo" "$WORK/mountinfo"
les_start "$WORK/file.jsonl" --mountinfo "$WORK/mountinfo"
les_testfs "$B4"
echo five >"$B4/f"
cp "/proc/$$/mountinfo" "$WORK/mountinfo.new" && mv "$WORK/mountinfo.new" "$WORK/mountinfo"
wait_for "$WORK/file.jsonl" ".type==\"notice\" and .notice==\"mount_added\" and .mount==\"$B4\""
les_pass "--mountinfo FILE: a mount_added notice for $B4 once the file is replaced"
"$WORK/cat-b4" "$B4/f" >/dev/null
sleep 0.3
les_stop
les_eq "--mountinfo FILE: tool exit status" 0 "$LES_STATUS"
les_eq "--mountinfo FILE: records of the new mount" true \
	"$(les_jq "$WORK/file.jsonl" "[.[] | select(.type==\"access\" and .comm==\"cat-b4\" and .op==\"read\")] | length > 0 and all(.mount==\"$B4\")")"

les_done
