#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Exact accounting under overload: a known number of writes through a 4 KiB
# ring buffer read by a consumer that polls once a second and is never woken
# early. Records are lost in the kernel, and the final stats record still
# accounts for every one of them:
#
#   produced_kernel == emitted + dropped_kernel + dropped_userspace + filtered_kernel

. "$(dirname "$0")/lib.sh"
les_init 50_overload

M=$WORK/mnt
N=3000
les_testfs "$M"
les_start "$WORK/out.jsonl" --mount "$M" --ringbuf-size 4K --wakeup-bytes 1M \
	--poll-interval 1000 --stats-interval 0

dd if=/dev/zero of="$M/big" bs=512 count=$N status=none || les_fail "dd failed"
sleep 1.5
les_stop
les_eq "tool exit status" 0 "$LES_STATUS"

OUT=$WORK/out.jsonl
final=$(jq -c 'select(.type=="stats" and .final)' "$OUT")
[ -n "$final" ] || les_fail "no final stats record"
f() { jq -r "$1" <<<"$final"; }
produced=$(f .produced_kernel)
emitted=$(f .emitted)
dk=$(f .dropped_kernel)
du=$(f .dropped_userspace)
filt=$(f .filtered_kernel)
lines=$(jq -s '[.[] | select(.type=="access" or .type=="rpc" or .type=="rpc_event")] | length' "$OUT")

les_ge "at least one record per write produced" "$N" "$produced"
les_ge "records dropped in the kernel" 1 "$dk"
les_ge "records still emitted" 1 "$emitted"
les_eq "identity: produced == emitted + dropped_kernel + dropped_userspace + filtered" \
	"$produced" "$((emitted + dk + du + filt))"
les_eq "emitted == record lines in the output" "$lines" "$emitted"
les_eq "dropped_userspace is the sum of its stages" "$du" \
	"$(f '.dropped_decode + .dropped_format + .dropped_stopped + .dropped_output')"
les_eq "kernel counter rb_dropped == dropped_kernel" "$dk" "$(f .kernel.dropped_kernel)"
# Process notices (exec) do not fit a 4 KiB ring: counted apart, not records.
les_eq "records by kind add up to emitted + userspace drops" \
	"$((emitted + du))" "$(f '.records.access + .records.rpc + .records.rpc_event + .dropped_stopped')"

# --count stops the run with records still in the ring: they are counted.
les_start "$WORK/count.jsonl" --mount "$M" --ringbuf-size 64K --wakeup-bytes 1M \
	--poll-interval 500 --stats-interval 0 --count 5
dd if=/dev/zero of="$M/big2" bs=512 count=1000 status=none || les_fail "dd failed"
for i in $(seq 1 100); do
	kill -0 "$LES_PID" 2>/dev/null || break
	sleep 0.1
done
wait "$LES_PID"
les_eq "--count run exit status" 0 "$?"
final=$(jq -c 'select(.type=="stats" and .final)' "$WORK/count.jsonl")
les_eq "--count: 5 records written" 5 "$(f .emitted)"
les_ge "--count: the rest counted as dropped_stopped" 1 "$(f .dropped_stopped)"
les_eq "--count: identity holds" "$(f .produced_kernel)" \
	"$(f '.emitted + .dropped_kernel + .dropped_userspace + .filtered_kernel')"

les_done
