#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The whole pipeline on this kernel against the project's test filesystem:
# a workload whose operations are known exactly, run as an unprivileged
# user, with injected latency and an injected error. Checks per op: record
# counts, byte sums, latency >= the injected latency, errno and errno_class
# of the injected error, pid/uid of the workload, request -> op links, valid
# JSON on every line, zero drops; and that an unobserved filesystem yields
# nothing.

. "$(dirname "$0")/lib.sh"
les_init 10_pipeline setpriv

M=$WORK/mnt
N=24     # writes and reads of K bytes
K=4096
LAT_MS=20
# direct_io: each read/write syscall is exactly one FUSE request.
les_testfs "$M" --direct-io --latency-ms=$LAT_MS --latency-ops=write,read
chmod 1777 "$M"

mkdir -m 1777 "$WORK/pid"
# --hostname: in a pod the node's name, not the pod's.
les_start "$WORK/out.jsonl" --mount "$M" --stats-interval 1s --hostname node17.example
# CTest e2e.10_pipeline_per_call: the same with the per-syscall tracepoints
# (LES_SYSCALL_PER_CALL=1), one link per syscall of the table and way.
if [ "${LES_SYSCALL_PER_CALL:-}" = 1 ]; then
	attached=$(sed -n 's/.*observing 1 mount(s), \([0-9]*\) probes attached.*/\1/p' "$WORK/out.jsonl.err")
	les_ge "per-syscall tracepoints: a link per syscall and way" 100 "${attached:-0}"
fi

# A mount made and removed while the tool runs: it chooses its mounts again
# (by the paths it resolved at start; a walk of the observed mount then
# would be the tool's own activity there, counted as filtered).
les_testfs "$WORK/other"

# The workload runs as nobody; its pid is known before exec.
cat >"$WORK/workload.sh" <<EOF
set -e
cd "$M"
sh -c 'echo \$\$ > "$WORK/pid/dd"; exec dd if=/dev/zero of=data bs=$K count=$N status=none'
dd if=data of=/dev/null bs=$K count=$N status=none iflag=direct
stat data >/dev/null
ls -l >/dev/null
mkdir sub
mv sub sub2
rmdir sub2
touch fail-eio-1
cat fail-eio-1 2>/dev/null && exit 1
rm data
EOF
setpriv --reuid=nobody --regid=nogroup --clear-groups bash "$WORK/workload.sh" ||
	les_fail "workload failed"
fusermount3 -u "$WORK/other" || les_fail "cannot unmount $WORK/other"
# Same workload on an unobserved filesystem: must produce nothing.
mkdir -p "$WORK/local" && dd if=/dev/zero of="$WORK/local/f" bs=$K count=$N status=none
sleep 0.5
les_stop
les_eq "tool exit status" 0 "$LES_STATUS"

OUT=$WORK/out.jsonl
DD_PID=$(cat "$WORK/pid/dd")
NOBODY=$(id -u nobody)

les_true "every line is valid JSON" jq -e . "$OUT"
les_eq "every line's host is --hostname's" "node17.example" \
	"$(jq -r '.host' "$OUT" | sort -u | tr '\n' ' ' | sed 's/ $//')"
les_eq "no record for the unobserved filesystem" 0 \
	"$(les_jq "$OUT" "[.[] | select(.mount != null and (.mount | startswith(\"$WORK/local\")))] | length")"

# RPC plane: FUSE requests.
q() { les_jq "$OUT" "$1"; }
les_eq "rpc write records from dd" $N \
	"$(q "[.[] | select(.type==\"rpc\" and .op==\"write\" and .comm==\"dd\")] | length")"
les_eq "rpc write bytes" $((N * K)) \
	"$(q "[.[] | select(.type==\"rpc\" and .op==\"write\" and .comm==\"dd\") | .bytes] | add")"
les_eq "rpc read records" $N \
	"$(q "[.[] | select(.type==\"rpc\" and .op==\"read\" and .bytes > 0)] | length")"
les_eq "rpc read bytes" $((N * K)) \
	"$(q "[.[] | select(.type==\"rpc\" and .op==\"read\") | .bytes] | add")"
les_eq "write latency >= injected ${LAT_MS} ms" true \
	"$(q "[.[] | select(.type==\"rpc\" and .op==\"write\") | .latency_ns >= $((LAT_MS * 1000000))] | all")"
les_eq "rpc writes carry the workload's pid" true \
	"$(q "[.[] | select(.type==\"rpc\" and .op==\"write\") | .pid == $DD_PID and .tid == $DD_PID] | all")"
les_eq "rpc writes carry the workload's uid" true \
	"$(q "[.[] | select(.type==\"rpc\" and .op==\"write\") | .uid == $NOBODY] | all")"
les_eq "injected EIO on open: one rpc record" 1 \
	"$(q "[.[] | select(.type==\"rpc\" and .op==\"open\" and .errno==5 and .errno_class==\"io\")] | length")"
les_eq "getattr requests from stat" true \
	"$(q "[.[] | select(.type==\"rpc\" and .op==\"getattr\" and .comm==\"stat\")] | length > 0")"
les_eq "readdir requests from ls" true \
	"$(q "[.[] | select(.type==\"rpc\" and (.op==\"readdir\" or .op==\"readdirplus\") and .comm==\"ls\")] | length > 0")"
for op in mkdir rename2 rmdir unlink; do
	les_eq "rpc $op" 1 "$(q "[.[] | select(.type==\"rpc\" and .op==\"$op\" and .errno==0)] | length")"
done
les_eq "successful requests have errno_class null" true \
	"$(q "[.[] | select(.type==\"rpc\" and .errno==0) | .errno_class == null] | all")"
les_eq "mount fields" "fuse.les-testfs les-testfs $M" \
	"$(q "[.[] | select(.type==\"rpc\")][0] | \"\(.fs_type) \(.fs) \(.mount)\"")"

# Access plane (syscalls on this kernel) and the links between the planes.
les_eq "access write records from dd" $N \
	"$(q "[.[] | select(.type==\"access\" and .op==\"write\" and .comm==\"dd\")] | length")"
les_eq "access write bytes" $((N * K)) \
	"$(q "[.[] | select(.type==\"access\" and .op==\"write\" and .comm==\"dd\") | .bytes] | add")"
les_eq "each access write waited on one request" true \
	"$(q "[.[] | select(.type==\"access\" and .op==\"write\" and .comm==\"dd\") | .rpc_count == 1 and .rpc_wait_ns >= $((LAT_MS * 1000000))] | all")"
les_eq "every rpc write links to an access write" true \
	"$(q "([.[] | select(.type==\"access\" and .op==\"write\") | .op_id]) as \$ids | [.[] | select(.type==\"rpc\" and .op==\"write\") | .parent_op_id as \$p | \$ids | index(\$p) != null] | all")"
les_eq "failed open: access record with errno_class io" 1 \
	"$(q "[.[] | select(.type==\"access\" and .op==\"open\" and .comm==\"cat\" and .errno_class==\"io\")] | length")"
les_eq "intent of mkdir" namespace_mutation \
	"$(q "[.[] | select(.type==\"access\" and .op==\"mkdir\")][0].access_intent")"
les_eq "intent of write" data_write \
	"$(q "[.[] | select(.type==\"access\" and .op==\"write\")][0].access_intent")"

# Accounting: the identity of the final stats record, every term at the
# value this workload must give (no filter given, nothing lost).
final() { q "[.[] | select(.type==\"stats\" and .final)][0].$1"; }
les_eq "stats records while running" true "$(q "[.[] | select(.type==\"stats\" and .final==false)] | length > 0")"
for term in dropped_kernel dropped_userspace filtered_kernel filtered_userspace; do
	les_eq "final stats: $term" 0 "$(final $term)"
done
les_eq "final stats: emitted == record lines" \
	"$(q "[.[] | select(.type==\"access\" or .type==\"rpc\")] | length")" "$(final emitted)"
les_eq "final stats: produced == emitted + dropped + filtered" "$(final produced_kernel)" \
	"$(q "[.[] | select(.type==\"stats\" and .final)][0] | .emitted + .dropped_kernel +
		.dropped_userspace + .filtered_kernel + .filtered_userspace")"
les_eq "final stats: produced == emitted" "$(final emitted)" "$(final produced_kernel)"

les_done
