#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# A FUSE daemon that dies mid-request. Killed outright, its pending request
# ends with ECONNABORTED and is recorded so. Stopped first, the request
# stays in flight past --stale-timeout and is swept and counted
# (stale_swept); when the daemon then dies, the late end finds no entry
# (end_without_send). Nothing stays in flight, the tool keeps running.

. "$(dirname "$0")/lib.sh"
les_init 58_fuse_daemon_killed pgrep

C1=$WORK/swept
C2=$WORK/aborted
les_testfs "$C1" --latency-ms=5000 --latency-ops=read
les_testfs "$C2" --latency-ms=5000 --latency-ops=read
echo data >"$C1/f"
echo data >"$C2/f"
cp /bin/cat "$WORK/cat-swept"
cp /bin/cat "$WORK/cat-aborted"
daemon_of() { pgrep -f "^$LES_TESTFS $1( |\$)" | head -1; }
D1=$(daemon_of "$C1")
D2=$(daemon_of "$C2")
[ -n "$D1" ] && [ -n "$D2" ] || les_fail "cannot find the les-testfs daemons"

les_start "$WORK/out.jsonl" --mount "$C1" --mount "$C2" --stale-timeout 2s --stats-interval 1s

# Killed outright during a read.
"$WORK/cat-aborted" "$C2/f" >/dev/null 2>&1 &
reader2=$!
sleep 1
kill -9 "$D2"
wait "$reader2"
les_true "the reader of the killed daemon got an error" test $? -ne 0

# Stopped during a read, swept, then killed.
"$WORK/cat-swept" "$C1/f" >/dev/null 2>&1 &
reader1=$!
sleep 0.5
kill -STOP "$D1"
sleep 4
kill -9 "$D1"
kill -CONT "$D1" 2>/dev/null
wait "$reader1"
les_true "tool still running" kill -0 "$LES_PID"
sleep 1.2
les_stop
# Dead FUSE mounts fail mountpoint(1) (ENOTCONN): detach them here.
umount -l "$C1" "$C2" 2>/dev/null
les_eq "tool exit status" 0 "$LES_STATUS"

OUT=$WORK/out.jsonl
q() { les_jq "$OUT" "$1"; }
les_eq "the aborted read: an rpc record with ECONNABORTED" true \
	"$(q '[.[] | select(.type=="rpc" and .op=="read" and .comm=="cat-aborted")] | length > 0 and all(.errno==103 and .errno_class=="notconn")')"
final=$(jq -c 'select(.type=="stats" and .final)' "$OUT")
[ -n "$final" ] || les_fail "no final stats record"
f() { jq -r "$1" <<<"$final"; }
les_ge "the stopped daemon's request was swept" 1 "$(f .stale_swept)"
les_ge "its late end found no entry" 1 "$(f .kernel.end_without_send)"
les_eq "the swept read has no rpc record" 0 \
	"$(q '[.[] | select(.type=="rpc" and .op=="read" and .comm=="cat-swept")] | length')"
les_eq "nothing left in flight" 0 "$(f '.inflight | if type == "object" then .total else . end')"
les_eq "identity holds" "$(f .produced_kernel)" \
	"$(f '.emitted + .dropped_kernel + .dropped_userspace + .filtered_kernel')"

les_done
