#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# t_access_lustre.sh: the access plane on the Lustre stand-in (test/vm/lustre)
# in the stock-kernel guest. The stand-in has no BTF, like Lustre on a
# distribution kernel, so llite is reached by kprobes: --list-probes=json
# must show the llite and PtlRPC functions attached by kprobe, and a
# workload whose operations are known exactly must come back as llite
# records of method kprobe with the right counts, bytes, intents and errors,
# linked to the PtlRPC waits they caused.
#
#   LES_BUILD=build test/vm/run-in-vm test/vm/t_access_lustre.sh
set -u

# kernel_expect (test/vm/expect); this test's own helpers follow.
# shellcheck source=test/vm/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LES_BUILD=${LES_BUILD:?LES_BUILD must name the build directory}
tool=$LES_BUILD/lustre-ebpf-stream
mod=les_lustre_standin
work=$(mktemp -d /tmp/t_access_lustre.XXXXXX)
mnt=$work/mnt
passed=0
tool_pid=

die()
{
	echo "FAIL (t_access_lustre): $*" >&2
	exit 1
}

pass()
{
	passed=$((passed + 1))
	echo "ok $passed - $*"
}

check_eq()
{
	[ "$2" = "$3" ] || die "$1: expected '$2', got '$3'"
	pass "$1 ($3)"
}

cleanup()
{
	[ -n "$tool_pid" ] && kill -INT "$tool_pid" 2>/dev/null && wait "$tool_pid"
	mountpoint -q "$mnt" && umount "$mnt"
	[ -d "/sys/module/$mod" ] && rmmod "$mod"
	rm -rf "$work"
}
trap cleanup EXIT

[ "${LES_VM:-}" = 1 ] || die "runs inside the guest: test/vm/run-in-vm $0"
[ -x "$tool" ] || die "$tool not built"
ko=${LES_LUSTRE_KO:-$("$here/lustre/build-module" --no-build 2>/dev/null)}
[ -f "$ko" ] || die "stand-in module not built (test/vm/lustre/build-module on the host)"
insmod "$ko" || die "insmod $ko"
mkdir -p "$mnt" && mount -t lustre 10.0.0.1@tcp:/standin "$mnt" || die "mount"
echo hello >"$mnt/existing" || die "cannot write"

# --- the probe plan ---------------------------------------------------------
"$tool" --list-probes=json >"$work/probes.json" || die "--list-probes=json"
# One kprobe_multi link for the llite functions where the kernel has it.
llite_method=kprobe
[ "$(kernel_expect kprobe_multi)" = yes ] && llite_method=kprobe_multi
for f in ll_file_write_iter ll_file_read_iter ll_getattr ll_lookup_nd ll_mkdir ll_rename \
	ll_unlink ll_rmdir ll_iterate; do
	check_eq "list-probes: $f by $llite_method" "$llite_method" \
		"$(jq -r --arg f "$f" '[.probes[] | select(.plane=="access" and (.function==$f or .probe==$f))][0].method' "$work/probes.json")"
done
check_eq "list-probes: ptlrpc_queue_wait by kprobe" kprobe \
	"$(jq -r '[.probes[] | select(.plane=="rpc" and .probe=="ptlrpc_queue_wait")][0].method' "$work/probes.json")"

# --- a workload with known operations, traced by kprobes ----------------------
out=$work/out.jsonl
"$tool" -v --mount "$mnt" --attach kprobe --stats-interval 0 -o "$out" 2>"$work/err" &
tool_pid=$!
for i in $(seq 1 600); do
	grep -q "probes attached" "$work/err" && break
	kill -0 "$tool_pid" 2>/dev/null || die "tool exited: $(cat "$work/err")"
	sleep 0.1
done
grep -q "probes attached" "$work/err" || die "tool not ready: $(cat "$work/err")"

dd if=/dev/zero of="$mnt/f" bs=4k count=50 status=none || die "dd write"
dd if="$mnt/f" of=/dev/null bs=4k count=50 status=none || die "dd read"
stat "$mnt/f" >/dev/null
ls "$mnt" >/dev/null
mkdir "$mnt/d"
mv "$mnt/d" "$mnt/e"
rm "$mnt/f"
rmdir "$mnt/e"
cat "$mnt/missing" 2>/dev/null
sleep 1
kill -INT "$tool_pid"
wait "$tool_pid"
status=$?
tool_pid=
check_eq "tool exit status" 0 "$status"

q() { jq -s -r "$1" "$out"; }
check_eq "every access record is method kprobe" true \
	"$(q '[.[] | select(.type=="access")] | length > 0 and all(.method=="kprobe")')"
check_eq "write records of dd" 50 \
	"$(q '[.[] | select(.type=="access" and .op=="write" and .comm=="dd")] | length')"
check_eq "write bytes" 204800 \
	"$(q '[.[] | select(.type=="access" and .op=="write" and .comm=="dd") | .bytes] | add')"
check_eq "read bytes" 204800 \
	"$(q '[.[] | select(.type=="access" and .op=="read" and .comm=="dd") | .bytes] | add')"
for pair in getattr:stat:namespace_read mkdir:mkdir:namespace_mutation \
	rename:mv:namespace_mutation unlink:rm:namespace_mutation rmdir:rmdir:namespace_mutation \
	readdir:ls:namespace_read; do
	IFS=: read -r op comm intent <<<"$pair"
	check_eq "$comm -> $op ($intent)" true \
		"$(q "[.[] | select(.type==\"access\" and .op==\"$op\" and .comm==\"$comm\" and .errno==0)] | length >= 1 and all(.access_intent==\"$intent\")")"
done
check_eq "cat missing -> lookup notfound" true \
	"$(q '[.[] | select(.type=="access" and .comm=="cat" and .errno_class=="notfound")] | length >= 1')"
check_eq "the fs is lustre, fsname standin" "lustre standin" \
	"$(q '[.[] | select(.type=="access")][0] | "\(.fs_type) \(.fs)"')"
# Every queue_wait points at an access record, also those sent by the
# ->open that ll_atomic_open runs inside (part of the open's record).
check_eq "queue_wait records link to access ops" true \
	"$(q '([.[] | select(.type=="access") | .op_id]) as $ids | [.[] | select(.type=="rpc" and .op=="queue_wait")] | (length > 100) and all(.parent_op_id as $p | $p != null and ($ids | index($p)) != null)')"
check_eq "writes waited on requests (rpc_count >= 1)" true \
	"$(q '[.[] | select(.type=="access" and .op=="write" and .comm=="dd")] | length > 0 and all(.rpc_count >= 1)')"
check_eq "pairing: no exit without entry, no replaced entry" "0 0" \
	"$(q '[.[] | select(.type=="stats" and .final)][0].kernel | "\(.exit_without_entry) \(.entry_replaced)"')"
check_eq "zero drops" "0 0" \
	"$(q '[.[] | select(.type=="stats" and .final)][0] | "\(.dropped_kernel) \(.dropped_userspace)"')"

echo "matrix: lustre(stand-in) x kprobe: verified; fentry: not offered (no module BTF, as on distribution kernels)"
echo "LES-CELL lustre-standin access kprobe verified" # guest-lib.sh: cell
echo "$passed passed, 0 failed"
