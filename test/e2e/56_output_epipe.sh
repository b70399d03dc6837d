#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The reader goes away (`| head -n 1`) while records wait in the ring, and
# the tool first meets EPIPE in its final drain: every record left in the
# ring is still read and counted (dropped_stopped, dropped_output), the
# final stats record (echoed on stderr by -v) accounts for all of them, and
# the run ends quietly with status 0, as the man page says of a closed pipe.
#
# How the EPIPE is put in the drain: the tool is stopped (SIGSTOP) once the
# reader has its line and left, some 20000 reads fill the ring meanwhile,
# then SIGINT and SIGCONT: the run loop ends without a flush, and the drain's
# lines (some 10 MB) overflow the 1 MiB buffer, whose flush fails.

. "$(dirname "$0")/lib.sh"
les_init 56_output_epipe

M=$WORK/mnt
les_testfs "$M"
# The data is there before the tool starts: its writes are not records.
dd if=/dev/zero of="$M/data" bs=64k count=20 status=none || les_fail "dd failed"
mkfifo "$WORK/pipe"
head -n 1 <"$WORK/pipe" >"$WORK/first" &
HEAD_PID=$!
ERR=$WORK/stderr
"$LES_BIN" -v --mount "$M" --stats-interval 0 >"$WORK/pipe" 2>"$ERR" &
LES_PID=$!
les_wait_ready "$LES_PID" "$ERR"

# The reader takes the first line and leaves.
dd if="$M/data" of=/dev/null bs=4k count=4 status=none
for i in $(seq 1 100); do
	kill -0 "$HEAD_PID" 2>/dev/null || break
	sleep 0.1
done
les_true "the reader left after one line" sh -c "! kill -0 $HEAD_PID 2>/dev/null"
wait "$HEAD_PID"
les_eq "the reader got one record line" 1 \
	"$(jq -c 'select(.type=="access" or .type=="rpc")' "$WORK/first" | wc -l)"

# Idle in its poll when stopped (the execs above are behind it), so that after
# SIGCONT the signal ends the loop before any record is read.
sleep 1
kill -STOP "$LES_PID"
dd if="$M/data" of=/dev/null bs=64 count=20000 status=none || les_fail "dd failed"
kill -INT "$LES_PID"
kill -CONT "$LES_PID"
wait "$LES_PID"
status=$?
les_eq "a closed pipe ends the run with status 0" 0 "$status"

final=$(sed -n 's/^lustre-ebpf-stream: final stats: //p' "$ERR")
[ -n "$final" ] || les_fail "no final stats record on stderr: $(tail -c 2000 "$ERR")"
f() { jq -r "$1" <<<"$final"; }
les_ge "records made while the reader was gone" 20000 "$(f .produced_kernel)"
les_ge "records read after the stop counted (dropped_stopped)" 1 "$(f .dropped_stopped)"
les_ge "lines lost to the closed pipe counted (dropped_output)" 1 "$(f .dropped_output)"
les_eq "identity: produced == emitted + dropped_kernel + dropped_userspace + filtered" \
	"$(f .produced_kernel)" \
	"$(f '.emitted + .dropped_kernel + .dropped_userspace + .filtered_kernel + .filtered_userspace')"
les_eq "no output error: a closed pipe is not one" 0 "$(f .output_errors)"
les_eq "no line on stderr says records were lost to errors" 0 "$(grep -c "dropped:" "$ERR")"

les_done
