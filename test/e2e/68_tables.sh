#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Tables at their limits, through the real kernel path (docs/reliability.md):
# a process evicted from a small process cache keeps its job (read again
# from /proc); a mount too long to describe neither stops start-up nor hides
# the mounts after it, at start or when the mount table changes; mounts past
# the limit of 16 are counted and said once on stderr.

. "$(dirname "$0")/lib.sh"
les_init 68_tables

A=$WORK/a
les_testfs "$A"
echo one >"$A/f"

# --- a process evicted from the cache --------------------------------------

les_start "$WORK/evict.jsonl" --mount "$A" --proc-cache-size 64
# One long-lived shell of job evict-me reads the mount itself (a builtin),
# before and after 300 other processes pushed it out of the cache. It
# waits on FIFOs: a fork of its own would make it the most recent again.
# It lives on until the tool stops: /proc has nothing of a process gone.
mkfifo "$WORK/go" "$WORK/end"
env SLURM_JOB_ID=evict-me bash -c '
	read -r l <"$1/f"; echo $$ >"$2"
	read -r l <"$3"
	read -r l <"$1/f"; read -r l <"$1/f"
	read -r l <"$4"' _ "$A" "$WORK/shell.pid" "$WORK/go" "$WORK/end" &
shell=$!
for i in $(seq 1 300); do
	env SLURM_JOB_ID=other-$i true
done
sleep 0.3
echo go >"$WORK/go"
sleep 0.5
les_stop
echo end >"$WORK/end"
wait "$shell"
les_eq "evict: exit status" 0 "$LES_STATUS"
pid=$(cat "$WORK/shell.pid")
OUT=$WORK/evict.jsonl
les_ge "evict: records of the shell" 3 \
	"$(les_jq "$OUT" "[.[] | select(.type==\"access\" and .pid==$pid and .op==\"read\")] | length")"
les_eq "evict: every read of the shell carries its job, after the eviction too" true \
	"$(les_jq "$OUT" "[.[] | select(.type==\"access\" and .pid==$pid)] | all(.job_id==\"evict-me\")")"
final=$(jq -c 'select(.type=="stats" and .final)' "$OUT")
les_ge "evict: processes evicted (stats enrich.proc_evictions)" 200 \
	"$(jq .enrich.proc_evictions <<<"$final")"
les_ge "evict: processes read again from /proc (stats enrich.proc_rereads)" 1 \
	"$(jq .enrich.proc_rereads <<<"$final")"

# --- mounts too long and too many ------------------------------------------

# A mount table: this one with a FUSE mount whose fsname is 1600 bytes
# inserted first, so that every real mount comes after it.
long_table() {
	local long
	long=$(printf 'x%.0s' $(seq 1 1600))
	head -1 "/proc/$$/mountinfo"
	echo "9990 1 0:9990 / /les-e2e-long rw - fuse.les-long $long rw,user_id=1000"
	tail -n +2 "/proc/$$/mountinfo"
}

long_table >"$WORK/mountinfo"
les_start "$WORK/long.jsonl" --mountinfo "$WORK/mountinfo"
les_true "long: one warning on stderr" grep -q "1 too long to describe" "$WORK/long.jsonl.err"
cat "$A/f" >/dev/null
# The mount table changes: a new mount after the long one is observed too.
B=$WORK/b
les_testfs "$B"
echo two >"$B/f"
long_table >"$WORK/mountinfo.new" && mv "$WORK/mountinfo.new" "$WORK/mountinfo"
for i in $(seq 1 50); do
	jq -e "select(.type==\"notice\" and .notice==\"mount_added\" and .mount==\"$B\")" \
		"$WORK/long.jsonl" >/dev/null 2>&1 && break
	sleep 0.1
done
cp /bin/cat "$WORK/cat-b"
"$WORK/cat-b" "$B/f" >/dev/null
sleep 0.3
les_stop
les_eq "long: exit status" 0 "$LES_STATUS"
OUT=$WORK/long.jsonl
les_eq "long: a mount_added notice for $B, after the long mount" 1 \
	"$(les_jq "$OUT" "[.[] | select(.type==\"notice\" and .notice==\"mount_added\" and .mount==\"$B\")] | length")"
les_eq "long: records of the mount added while running" true \
	"$(les_jq "$OUT" "[.[] | select(.type==\"access\" and .comm==\"cat-b\" and .op==\"read\")] | length > 0 and all(.mount==\"$B\")")"
les_eq "long: no record or notice of the long mount" 0 \
	"$(les_jq "$OUT" '[.[] | select(.mount=="/les-e2e-long")] | length')"
final=$(jq -c 'select(.type=="stats" and .final)' "$OUT")
les_eq "long: stats mounts.skipped_too_long" 1 "$(jq .mounts.skipped_too_long <<<"$final")"
les_eq "long: one warning for the same mount, not one per change" 1 \
	"$(grep -c "too long to describe" "$WORK/long.jsonl.err")"

# Sixteen more FUSE mounts after the real ones: the limit is reached.
{
	cat "/proc/$$/mountinfo"
	for i in $(seq 1 16); do
		echo "$((9000 + i)) 1 0:$((9000 + i)) / /les-e2e-extra$i rw - fuse.les-extra x$i rw"
	done
} >"$WORK/mountinfo.many"
les_start "$WORK/many.jsonl" --mountinfo "$WORK/mountinfo.many"
les_true "many: one warning on stderr" grep -q "past the limit of 16" "$WORK/many.jsonl.err"
les_stop
les_eq "many: exit status" 0 "$LES_STATUS"
final=$(jq -c 'select(.type=="stats" and .final)' "$WORK/many.jsonl")
les_eq "many: stats mounts.observed" 16 "$(jq .mounts.observed <<<"$final")"
les_ge "many: stats mounts.skipped_limit" 1 "$(jq .mounts.skipped_limit <<<"$final")"

les_done
