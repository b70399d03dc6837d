#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The consumer stalled by SIGSTOP for 10 s while the workload goes on: the
# ring buffer fills, the kernel drops and counts, and after SIGCONT the
# stream recovers; the final stats identity still holds exactly.

. "$(dirname "$0")/lib.sh"
les_init 51_consumer_stalled

M=$WORK/mnt
les_testfs "$M"
cp /bin/dd "$WORK/dd-stalled"
cp /bin/dd "$WORK/dd-after"
les_start "$WORK/out.jsonl" --mount "$M" --ringbuf-size 64K --stats-interval 1s

kill -STOP "$LES_PID"
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 10 ]; do
	"$WORK/dd-stalled" if=/dev/zero of="$M/w" bs=512 count=500 status=none ||
		les_fail "dd failed"
done
les_eq "the tool is stopped" T "$(ps -o stat= -p "$LES_PID" | cut -c1)"
kill -CONT "$LES_PID"
sleep 1
"$WORK/dd-after" if=/dev/zero of="$M/w2" bs=512 count=20 status=none
sleep 1.5
les_true "tool running after SIGCONT" kill -0 "$LES_PID"
les_stop
les_eq "tool exit status" 0 "$LES_STATUS"

OUT=$WORK/out.jsonl
final=$(jq -c 'select(.type=="stats" and .final)' "$OUT")
f() { jq -r "$1" <<<"$final"; }
les_ge "kernel drops while stalled" 1 "$(f .dropped_kernel)"
les_eq "records of the stalled period still arrive (what fit the ring)" true \
	"$(les_jq "$OUT" '[.[] | select(.type=="access" and .comm=="dd-stalled")] | length > 0')"
les_eq "recovery: every write after SIGCONT recorded" 20 \
	"$(les_jq "$OUT" '[.[] | select(.type=="access" and .comm=="dd-after" and .op=="write")] | length')"
les_eq "stats records resume after SIGCONT" true \
	"$(les_jq "$OUT" '[.[] | select(.type=="stats" and .final==false and .dropped_kernel > 0)] | length > 0')"
les_eq "identity: produced == emitted + dropped_kernel + dropped_userspace + filtered" \
	"$(f .produced_kernel)" "$(f '.emitted + .dropped_kernel + .dropped_userspace + .filtered_kernel')"

les_done
