#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Against a FUSE filesystem this project did not write (bindfs, from
# Debian): the byte accounting of dd writes, access records with their
# requests linked, the intent of namespace ops, a failed lookup, and zero
# drops. strace -f -c on the same workload is the independent oracle for the
# syscall counts.

. "$(dirname "$0")/lib.sh"
les_init 11_foreign_fuse bindfs strace

SRC=$WORK/src
M=$WORK/mnt
mkdir -p "$SRC" "$M"
bindfs "$SRC" "$M" || les_fail "bindfs failed"
les_track_mount "$M"

les_start "$WORK/out.jsonl" --mount "$M" --file-id
strace -f -c -o "$WORK/strace.txt" -e trace=write dd if=/dev/zero of="$M/f" bs=4k count=100 status=none ||
	les_fail "dd failed"
dd if=/dev/zero of="$M/g" bs=64k count=16 conv=fsync status=none || les_fail "dd 64k failed"
stat "$M/f" >/dev/null
INO_G=$(stat -c %i "$M/g")
ls "$M" >/dev/null
mkdir "$M/d"
mv "$M/d" "$M/e"
rm "$M/f"
rmdir "$M/e"
cat "$M/missing" 2>/dev/null
sleep 0.3
les_stop
les_eq "tool exit status" 0 "$LES_STATUS"

OUT=$WORK/out.jsonl
q() { les_jq "$OUT" "$1"; }
STRACE_WRITES=$(awk '$NF == "write" { print $4 }' "$WORK/strace.txt")
les_eq "strace counts 100 write syscalls" 100 "$STRACE_WRITES"
les_eq "access write records of the 4k dd" "$STRACE_WRITES" \
	"$(q '[.[] | select(.type=="access" and .op=="write" and .comm=="dd" and .bytes==4096)] | length')"
les_eq "each with rpc_count >= 1" true \
	"$(q '[.[] | select(.type=="access" and .op=="write" and .comm=="dd" and .bytes==4096) | .rpc_count >= 1] | all')"
les_eq "rpc writes of dd link to access writes" true \
	"$(q '([.[] | select(.type=="access" and .op=="write") | .op_id]) as $ids | [.[] | select(.type=="rpc" and .op=="write" and .comm=="dd") | .parent_op_id as $p | $ids | index($p) != null] | all')"
les_eq "rpc write bytes of dd: 400 KiB + 1 MiB" $((409600 + 1048576)) \
	"$(q '[.[] | select(.type=="rpc" and .op=="write" and .comm=="dd") | .bytes] | add')"
les_eq "rpc write latencies > 0" true \
	"$(q '[.[] | select(.type=="rpc" and .op=="write") | .latency_ns > 0] | all')"
for pair in getattr:stat:namespace_read readdir:ls:namespace_read mkdir:mkdir:namespace_mutation \
	rename:mv:namespace_mutation unlink:rm:namespace_mutation rmdir:rmdir:namespace_mutation; do
	IFS=: read -r op comm intent <<<"$pair"
	les_eq "$comm -> $op ($intent)" true \
		"$(q "[.[] | select(.type==\"access\" and .op==\"$op\" and .comm==\"$comm\" and .errno==0 and .access_intent==\"$intent\")] | length >= 1")"
done
les_eq "cat missing -> open notfound" 1 \
	"$(q '[.[] | select(.type=="access" and .op=="open" and .comm=="cat" and .errno_class=="notfound")] | length')"
les_eq "--file-id: dev of the mount" "$(mountpoint -d "$M")" \
	"$(q '[.[] | select(.type=="access" and .op=="write" and .bytes==65536)][0].dev')"
les_eq "--file-id: ino of the file written" "$INO_G" \
	"$(q '[.[] | select(.type=="access" and .op=="write" and .bytes==65536)][0].ino')"
les_eq "no record of the tool's own work (pid $LES_PID)" 0 \
	"$(q "[.[] | select((.type==\"access\" or .type==\"rpc\") and .pid == $LES_PID)] | length")"
les_eq "final stats: zero drops" "0 0" \
	"$(q '[.[] | select(.type=="stats" and .final)][0] | "\(.dropped_kernel) \(.dropped_userspace)"')"
les_done
