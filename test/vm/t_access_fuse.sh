#!/bin/bash
# t_access_fuse.sh: the access plane on FUSE in the stock-kernel guest, by
# each attach method forced with --attach (fentry, kprobe, syscall) and by
# auto, on the project's test filesystem (les-testfs).
#
#   test/vm/run-in-vm test/vm/t_access_fuse.sh      (LES_BUILD: the build dir)
#
# One workload whose kernel calls are known exactly; per method the records
# are grouped by (comm, op, errno_class) with their count and byte sum and
# compared with the expected table. Function probes see the filesystem's
# own calls, the syscall fallback the syscalls, so the two tables differ
# where the kernel does (a failed open is a negative lookup to FUSE; every
# write(2) asks FUSE for security.capability). Ends with the matrix of
# verified cells.
set -u

# shellcheck source=test/vm/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
guest_init t_access_fuse
mnt=$work/mnt
declare -A cell rpc_cell
tool_status=

cleanup()
{
	tracer_kill
	fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
	guest_remove_work
}
trap cleanup EXIT

guest_require_tool
[ -x "$build/les-testfs" ] || die "no $build/les-testfs"
modprobe -d "$LES_VM_MODDIR" fuse || die "cannot load fuse"
mkdir -p "$mnt"
# The daemon counts every request it reads, by opcode: the oracle of the
# request plane. mkdir waits 200 ms in the daemon, for the queue/daemon split.
"$build/les-testfs" "$mnt" --count-requests --stats-file="$work/ops" --latency-ops=mkdir \
	--latency-ms=200 || die "cannot mount les-testfs"
testfs_pid=$(pgrep -f -n "les-testfs $mnt") || die "no les-testfs process"
fuse_daemon_pid=$testfs_pid
fuse_mnt=$mnt

# Start the tool, wait for its "probes attached" line (TCG: fentry loads
# take tens of seconds on 6.1), run the workload, stop it.
trace_workload()
{
	local method=$1

	tracer_start 180 "$work/$method.jsonl" "$work/$method.err" \
		"$tool" -v --attach "$method" --mount "$mnt" || return 1
	daemon_counts >"$work/$method.ops0" || return 1
	workload
	sleep 1
	daemon_counts >"$work/$method.ops1" || return 1
	tracer_stop
	tool_status=$? # a check of its own (verify_method)
	return 0
}

# Each command bounded (fuse_step): a request left unanswered ends the test
# with the stacks of who waits for it, within a minute.
workload()
{
	fuse_step dd if=/dev/zero of="$mnt/f" bs=4k count=100 2>/dev/null
	fuse_step dd if="$mnt/f" of=/dev/null bs=4k count=100 2>/dev/null
	fuse_step stat "$mnt/f" >/dev/null
	fuse_step mkdir "$mnt/d"
	fuse_step mv "$mnt/f" "$mnt/g"
	fuse_step rm "$mnt/g"
	fuse_step rmdir "$mnt/d"
	fuse_step cat "$mnt/missing" 2>/dev/null
	fuse_step touch "$mnt/fail-eio-1"
	fuse_step cat "$mnt/fail-eio-1" 2>/dev/null
	fuse_step rm -f "$mnt/fail-eio-1"
}

# "opcode count" of the requests les-testfs read so far (its stats file,
# written on SIGUSR1 by rename, so a new file means a complete one).
daemon_counts()
{
	rm -f "$work/ops"
	kill -USR1 "$testfs_pid" || return 1
	for _ in $(seq 50); do
		[ -e "$work/ops" ] && break
		sleep 0.1
	done
	# Sorted as join(1) wants them.
	awk '$1 ~ /^opcode_/ { sub("opcode_", "", $1); print $1, $2 }' "$work/ops" | sort -k1,1
}

# comm op errno_class count bytes, sorted.
summary()
{
	jq -r 'select(.type == "access") | [.comm, .op, (.errno_class // "ok"), .bytes] | @tsv' "$1" |
		awk -F'\t' '{ n[$1" "$2" "$3]++; b[$1" "$2" "$3] += $4 }
			END { for (k in n) print k, n[k], b[k] }' | sort
}

# What the filesystem functions see of the workload on 6.1.
expected_functions()
{
	cat <<'EOF'
cat lookup notfound 1 0
cat open io 1 0
dd close ok 2 0
dd create ok 1 0
dd getxattr notfound 100 0
dd lookup notfound 1 0
dd open ok 1 0
dd read ok 100 409600
dd write ok 100 409600
mkdir lookup notfound 1 0
mkdir mkdir ok 1 0
mv lookup notfound 1 0
mv rename ok 1 0
rm getattr ok 2 0
rm unlink ok 2 0
rmdir rmdir ok 1 0
stat getattr ok 1 0
touch close ok 1 0
touch create ok 1 0
touch lookup notfound 1 0
touch setattr ok 1 0
EOF
}

# What the syscalls are.
expected_syscalls()
{
	cat <<'EOF'
cat open io 1 0
cat open notfound 1 0
dd close ok 4 0
dd open ok 2 0
dd read ok 100 409600
dd write ok 100 409600
mkdir mkdir ok 1 0
mv rename ok 1 0
rm getattr ok 2 0
rm unlink ok 2 0
rmdir rmdir ok 1 0
stat getattr ok 1 0
touch close ok 2 0
touch open ok 1 0
touch setattr ok 1 0
EOF
}

# No process substitution: the guest has no /dev/fd.
table_matches()
{
	"$2" >"$work/expected.txt"
	summary "$1" >"$work/actual.txt"
	diff -u "$work/expected.txt" "$work/actual.txt"
}

only_method()
{
	local bad

	bad=$(jq -r --arg m "$2" 'select(.type == "access" and .method != $m) | .method' "$1" |
		sort | uniq -c)
	[ -z "$bad" ] || { echo "records of other methods: $bad"; return 1; }
}

intents_right()
{
	jq -e -s '
		{ "read": "data_read", "write": "data_write", "fsync": "sync",
		  "lookup": "namespace_read", "open": "namespace_read", "close": "namespace_read",
		  "getattr": "namespace_read", "getxattr": "namespace_read",
		  "mkdir": "namespace_mutation", "create": "namespace_mutation",
		  "rename": "namespace_mutation",
		  "unlink": "namespace_mutation", "rmdir": "namespace_mutation",
		  "setattr": "namespace_mutation" } as $want
		| [ .[] | select(.type == "access") | select($want[.op] != .access_intent) ]
		| if length == 0 then true else (.[0] | tostring | halt_error(1)) end' "$1"
}

final_counter()
{
	jq -r --arg k "$2" 'select(.type == "stats" and .final) | .kernel[$k]' "$1" | tail -n 1
}

pairing_clean()
{
	local out=$1 k v

	for k in exit_without_entry entry_replaced depth_overflow; do
		v=$(final_counter "$out" "$k")
		[ "$v" = 0 ] || { echo "$k = $v"; return 1; }
	done
}

# The FUSE request plane as test/vm/expect says this kernel has it. With
# neither the tracepoints nor BTF for the function probes (5.10): no request
# records, so no rpc_count on the access records. With either (6.1: function
# probes, 6.12: tracepoints): one FUSE_WRITE per write record, with its
# bytes, each linked to that write, and every mkdir/rmdir/unlink request
# linked to the access op of the same name, under every attach method.
rpc_links_right()
{
	local out=$1 want

	want=$(kernel_expect fuse_rpc)
	"$tool" --list-probes=json | jq -e --arg m "$want" '[.probes[]
		| select(.plane == "rpc" and .fs == "fuse")] | length == 1 and .[0].method == $m' \
		>/dev/null || { echo "the FUSE request plane is not planned by $want"; return 1; }
	if [ "$want" = none ] && [ "$(kernel_expect fuse_rpc_fn)" = no ]; then
		jq -e -s '[.[] | select(.type == "rpc" or (.type == "access"
			and (.rpc_count // 0) > 0))] | length == 0' "$out" >/dev/null
		return
	fi
	jq -e -s '
		([.[] | select(.type == "access")] | INDEX(.op_id | tostring)) as $acc
		| [.[] | select(.type == "access" and .op == "write")] as $w
		| [.[] | select(.type == "rpc" and .op == "write")] as $rw
		| ($w | length) > 0 and ($rw | length) == ($w | length)
		and ([$rw[].bytes] | add) == ([$w[].bytes] | add)
		and ($rw | all($acc[.parent_op_id | tostring].op == "write"))
		and ([.[] | select(.type == "rpc" and (.op == "mkdir" or .op == "rmdir" or .op == "unlink"))]
			| length >= 3 and all(.op as $o | $acc[.parent_op_id | tostring].op == $o))
		and ($w | all(.rpc_count >= 1 and .rpc_wait_ns > 0))
		| if . then true else halt_error(1) end' "$out" >/dev/null || {
		jq -c 'select(.type == "rpc") | [.op, .comm, .parent_op_id, .bytes]' "$out" |
			sort | uniq -c | head -n 30
		return 1
	}
}

# The request plane's method under --attach $1: the end's row (tracepoint
# row on 6.12, fuse_request_end where function probes serve), or none.
fuse_rpc_method()
{
	"$tool" --attach "$1" --list-probes=json | jq -r '
		[.probes[] | select(.plane == "rpc" and (.fs == "fuse" or .probe == "fuse_request_end")
			and .method != "none") | if .fs == "fuse" then "tracepoint" else .method end]
		| first // "none"'
}

# Request records per opcode equal what the daemon read meanwhile, less
# FORGET (2), INTERRUPT (36) and BATCH_FORGET (42), which have queues of
# their own and are no requests to the tracepoints either.
rpc_counts_right()
{
	local method=$1 out=$work/$1.jsonl

	join -a1 -a2 -e 0 -o 0,1.2,2.2 "$work/$method.ops0" "$work/$method.ops1" |
		awk '$1 != 2 && $1 != 36 && $1 != 42 && $3 - $2 > 0 { print $1, $3 - $2 }' |
		sort -n >"$work/$method.daemon"
	jq -r 'select(.type == "rpc" and .proto == "fuse") | .opcode' "$out" | sort -n | uniq -c |
		awk '{ print $2, $1 }' >"$work/$method.records"
	[ -s "$work/$method.daemon" ] || { echo "the daemon counted no request"; return 1; }
	diff -u "$work/$method.daemon" "$work/$method.records"
}

nobtf_clean()
{
	"$tool" --attach "$1" --list-probes=json | jq -e '[.probes[]
		| select(.probe == "fuse_request_end")][0].fields | test("fixed offsets")' >/dev/null ||
		return 1
	[ "$(final_counter "$2" fuse_unverified)" = 0 ] &&
		[ "$(final_counter "$2" fuse_unplaced)" = 0 ]
}

rpc_reason_is()
{
	"$tool" --attach "$1" --list-probes=json | jq -e --arg r "$2" '[.probes[]
		| select(.probe == "fuse_request_end")][0].reason | test($r)' >/dev/null
}

# Where the daemon's read is probed (test/vm/expect fuse_split): every
# request was read, queued_ns + daemon_ns is its latency, and the mkdir the
# daemon holds 200 ms spent them in the daemon, not in the queue.
rpc_split_right()
{
	jq -e -s '[.[] | select(.type == "rpc" and .proto == "fuse")] as $r
		| ($r | length) > 0
		and ($r | all(.queued_ns != null and .queued_ns + .daemon_ns == .latency_ns))
		and ([$r[] | select(.opcode == 9)]
			| length == 1 and .[0].daemon_ns >= 200000000 and .[0].queued_ns < 100000000)
		| if . then true else halt_error(1) end' "$1" >/dev/null || {
		jq -c 'select(.type == "rpc") | [.opcode, .latency_ns, .queued_ns, .daemon_ns]' "$1" |
			head -n 20
		return 1
	}
}

verify_method()
{
	local method=$1 expect=$2 out=$work/$1.jsonl record_method=$1 ok=1

	if [ "$method" = fentry ] && [ "$(kernel_expect module_btf)" = no ]; then
		check "fentry: refused with its reason (no module BTF on this kernel)" \
			tool_refuses_method fentry --mount "$mnt"
		cell[$method]="none: no module BTF"
		cell fuse access fentry "${cell[$method]}"
		return
	fi
	[ "$method" = auto ] && record_method=$(kernel_expect fn_auto)
	say "--attach $method"
	check "$method: tool starts and attaches" trace_workload "$method" || {
		cell[$method]=FAIL
		return
	}
	grep -E "function probes|links detached|probes attached" "$work/$method.err" |
		sed "s/^lustre-ebpf-stream: /     timing: /"
	check "$method: exact counts and byte sums per (comm, op, errno_class)" \
		table_matches "$out" "$expect" || ok=0
	check "$method: every record by $record_method" only_method "$out" "$record_method" ||
		ok=0
	check "$method: access_intent of every record" intents_right "$out" || ok=0
	check "$method: entry/exit pairing counters are 0" pairing_clean "$out" || ok=0
	check "$method: the tool exits 0" tracer_exited_ok "$tool_status" "$work/$method.err" || ok=0
	check "$method: request linkage as the kernel allows" rpc_links_right "$out" || ok=0
	verify_rpc "$method" "$out" || ok=0
	cell[$method]=$([ $ok = 1 ] && echo verified || echo FAIL)
	cell fuse access "$method" "${cell[$method]}"
}

# The request plane under --attach $1, as test/vm/expect says this kernel
# has it (fuse_rpc_fn: by function probes; fuse_split: the daemon's read).
verify_rpc()
{
	local method=$1 out=$2 rpc ok=1

	rpc=$(fuse_rpc_method "$method")
	case $(kernel_expect fuse_rpc_fn) in
	tp) want=tracepoint ;;
	btf) want=$([ "$method" = kprobe ] || [ "$method" = syscall ] && echo kprobe || echo fentry) ;;
	nobtf) want=kprobe ;;
	*) want=none ;;
	esac
	check "$method: FUSE requests planned by $want" test "$rpc" = "$want" || return 1
	if [ "$rpc" = none ]; then
		check "$method: no request plane, with its reason (no BTF for struct fuse_req)" \
			rpc_reason_is "$method" "no BTF for struct fuse_req"
		rpc_cell[none]="none: no BTF for struct fuse_req (fuse has no module BTF)"
		return 0
	fi
	check "$method: FUSE requests by $rpc per opcode = the daemon's own count" \
		rpc_counts_right "$method" || ok=0
	if [ "$(kernel_expect fuse_rpc_fn)" = nobtf ]; then
		check "$method: no BTF: fixed offsets; every request placed and its unique ID checked" \
			nobtf_clean "$method" "$out" || ok=0
	fi
	if [ "$(kernel_expect fuse_split)" = yes ]; then
		check "$method: queue/daemon split (fuse_copy_args)" rpc_split_right "$out" || ok=0
	fi
	[ "${rpc_cell[$rpc]:-verified}" = verified ] && [ $ok = 1 ] && rpc_cell[$rpc]=verified ||
		rpc_cell[$rpc]=FAIL
	[ $ok = 1 ]
}

list_probes_right()
{
	local json=$work/probes.json

	"$tool" --list-probes=json >"$json" || return 1
	# Every FUSE function of the table has a method or a reason.
	jq -e '[.probes[] | select(.fs == "fuse" and .plane == "access")
		| select(.method == "none" and (.reason // "") == "")] | length == 0' "$json" &&
		jq -e --arg m "$(kernel_expect fn_auto)" '[.probes[] | select(.fs == "fuse"
			and .plane == "access" and .method == $m)] | length >= 20' "$json"
}

say "kernel $(uname -r)"
check "--list-probes=json: FUSE functions by $(kernel_expect fn_auto), the rest with reasons" \
	list_probes_right
multi=$("$tool" --attach kprobe --list-probes=json |
	jq -r '.methods.kprobe_multi | if .available then "yes" else .reason end')
say "kprobe_multi: $multi"
verify_method fentry expected_functions
verify_method kprobe expected_functions
verify_method syscall expected_syscalls
# auto: fentry where it attaches (one 8-argument function goes by kprobe on
# 6.1), and the syscall fallback leaves every covered op out: no duplicates.
verify_method auto expected_functions

echo
echo "matrix (FUSE, kernel $(uname -r)):"
printf '  %-8s %-10s %-10s %-10s %-14s\n' fs fentry kprobe syscall auto
printf '  %-8s %-10s %-10s %-10s %-14s\n' fuse "${cell[fentry]:-?}" "${cell[kprobe]:-?}" \
	"${cell[syscall]:-?}" "${cell[auto]:-?}"
[ "$multi" = yes ] || echo "  kprobe_multi: not offered by this kernel ($multi)"
rpc_plane=$(kernel_expect fuse_rpc)
if [ "$rpc_plane" = none ]; then
	cell fuse rpc tracepoint "none: no fuse_request_send/end"
else
	cell fuse rpc tracepoint "${rpc_cell[tracepoint]:-FAIL}"
fi
if [ "$(kernel_expect fuse_rpc_fn)" = tp ]; then
	cell fuse rpc fentry "none: the tracepoints serve"
	cell fuse rpc kprobe "none: the tracepoints serve"
else
	if [ "$(kernel_expect module_btf)" = no ]; then
		cell fuse rpc fentry "none: no module BTF"
	else
		cell fuse rpc fentry "${rpc_cell[fentry]:-${rpc_cell[none]:-FAIL}}"
	fi
	cell fuse rpc kprobe "${rpc_cell[kprobe]:-${rpc_cell[none]:-FAIL}}"
fi
check "kprobe_multi as test/vm/expect says ($(kernel_expect kprobe_multi))" \
	test "$([ "$multi" = yes ] && echo yes || echo no)" = "$(kernel_expect kprobe_multi)"
guest_done
