#!/bin/bash
# 20_probes_list.sh: --list-probes and --attach on this kernel.
#   - --list-probes=json names every Lustre, NFS and FUSE function of the
#     access plane with its method or the reason it has none, and the
#     syscall fallback per op;
#   - forced methods switch the others off in the listing;
#   - forcing a method the kernel refuses warns per op and still starts;
#   - in auto mode the access plane reports a dd exactly once per write.
#
# Needs root: LES_BUILD=build LES_SRC=. bash test/e2e/20_probes_list.sh
set -u

build=${LES_BUILD:-build}
tool=$build/lustre-ebpf-stream
passed=0
failed=0
work=$(mktemp -d /tmp/les-probes-list.XXXXXX)
mnt=$work/mnt

check()
{
	local what=$1
	shift

	if "$@" >"$work/check.out" 2>&1; then
		passed=$((passed + 1))
		echo "ok   $what"
	else
		failed=$((failed + 1))
		echo "FAIL $what"
		sed 's/^/     | /' "$work/check.out" | tail -n 30
	fi
}

cleanup()
{
	[ -n "${tracer_pid:-}" ] && kill "$tracer_pid" 2>/dev/null
	fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

die()
{
	echo "20_probes_list: $*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "must run as root"
[ -x "$tool" ] || die "no $tool"
[ -x "$build/les-testfs" ] || die "no $build/les-testfs"
command -v jq >/dev/null || die "jq missing"

LUSTRE="ll_lookup_nd ll_file_open ll_file_release ll_file_read_iter ll_file_write_iter ll_fsync
ll_getattr ll_setattr ll_xattr_get_common ll_xattr_set_common ll_listxattr ll_get_inode_acl
ll_get_acl ll_get_link ll_iterate ll_statfs ll_create_nd ll_mkdir ll_mknod ll_unlink ll_rmdir
ll_rename ll_link ll_symlink ll_atomic_open"
NFS="nfs_file_read nfs_file_write nfs_file_open nfs_file_release nfs_file_fsync nfs_getattr
nfs_setattr nfs_lookup nfs_readdir nfs_create nfs_mkdir nfs_unlink nfs_rmdir nfs_rename nfs_link
nfs_symlink nfs4_file_open nfs_atomic_open nfs_opendir nfs_closedir nfs_mknod nfs_get_link
nfs_statfs"
FUSE="fuse_file_read_iter fuse_file_write_iter fuse_open fuse_release fuse_fsync fuse_getattr
fuse_setattr fuse_lookup fuse_readdir fuse_create fuse_atomic_open fuse_mkdir fuse_unlink
fuse_rmdir fuse_rename2 fuse_link fuse_symlink fuse_listxattr fuse_get_link fuse_statfs
fuse_mknod fuse_xattr_get fuse_xattr_set"

"$tool" --list-probes=json >"$work/auto.json" || die "--list-probes=json failed"
"$tool" --list-probes >"$work/auto.txt" || die "--list-probes failed"

every_function_listed()
{
	local fs=$1 fn missing=0
	shift

	for fn in "$@"; do
		jq -e --arg fs "$fs" --arg fn "$fn" '[.probes[] | select(.plane == "access"
			and .fs == $fs and .function == $fn)] | length == 1' "$work/auto.json" \
			>/dev/null || { echo "$fs $fn not listed once"; missing=1; }
		grep -q " $fn " "$work/auto.txt" || { echo "$fn not in the text listing"; missing=1; }
	done
	return $missing
}

# shellcheck disable=SC2086 # word lists
check "every Lustre llite function listed (json and text)" every_function_listed lustre $LUSTRE
# shellcheck disable=SC2086
check "every NFS function listed" every_function_listed nfs $NFS
# shellcheck disable=SC2086
check "every FUSE function listed" every_function_listed fuse $FUSE

method_or_reason()
{
	jq -e '[.probes[] | select(.plane == "access" and .fs != "any")
		| select((.method == "fentry" or .method == "kprobe" or .method == "kprobe_multi")
			 | not)
		| select(.method != "none" or (.reason // "") == "")] | length == 0' "$1"
}
check "each function row has a method or a reason" method_or_reason "$work/auto.json"

valid_ops()
{
	jq -e '[.probes[] | select(.plane == "access" and .context != true) | .op] | unique
		| . - ["lookup","open","close","getattr","getxattr","listxattr","get_acl",
		       "readlink","readdir","statfs","create","mkdir","mknod","unlink","rmdir",
		       "rename","link","symlink","setattr","setxattr","read","write","fsync"]
		| length == 0' "$1"
}
check "op names are the access vocabulary (context probes have none)" valid_ops "$work/auto.json"

any_rows()
{
	jq -e '[.probes[] | select(.fs == "any")] | length == 23
		and all(.method == "syscall" or (.reason // "") != "")' "$1"
}
check "the syscall fallback listed for all 23 ops" any_rows "$work/auto.json"
check "the rule for the syscall fallback is stated" \
	jq -e '.syscall_rule | test("unless function probes cover")' "$work/auto.json" &&
		jq -e '.syscall_paths | test("path_unresolved")' "$work/auto.json"

methods_explained()
{
	jq -e '.methods | to_entries | length > 0 and all(.value.available or (.value.reason // "") != "")' "$1"
}
check "every method available or explained" methods_explained "$work/auto.json"

if jq -e '.methods.fentry.available | not' "$work/auto.json" >/dev/null; then
	echo "note fentry here: $(jq -r .methods.fentry.reason "$work/auto.json")"
fi
if jq -e '.methods.kprobe.available | not' "$work/auto.json" >/dev/null; then
	echo "note kprobe here: $(jq -r .methods.kprobe.reason "$work/auto.json")"
fi

"$tool" --attach syscall --list-probes=json >"$work/syscall.json" || die "listing failed"
check "--attach syscall: every function off with the reason" jq -e '[.probes[]
	| select(.plane == "access" and .fs != "any")]
	| length > 0 and all(.method == "none" and (.reason | startswith("--attach syscall")))' "$work/syscall.json"

"$tool" --attach fentry --list-probes=json >"$work/fentry.json" || die "listing failed"
check "--attach fentry: syscall fallback off, no kprobe chosen" jq -e '
	([.probes[] | select(.fs == "any")] | length > 0 and all(.method == "none"))
	and ([.probes[] | select(.plane == "access")] | length > 0 and all(.method != "kprobe"))' \
	"$work/fentry.json"

"$tool" --attach kprobe --list-probes=json >"$work/kprobe.json" || die "listing failed"
check "--attach kprobe: no fentry chosen" jq -e '[.probes[] | select(.plane == "access")]
	| length > 0 and all(.method != "fentry")' "$work/kprobe.json"

# --- starting with a forced method ----------------------------------------

mkdir -p "$mnt"
"$build/les-testfs" "$mnt" || die "cannot mount les-testfs"

start_forced()
{
	local method=$1 status

	timeout 60 "$tool" --attach "$method" --mount "$mnt" --duration 1s >"$work/$method.out" \
		2>"$work/$method.err"
	status=$?
	if jq -e ".methods.$method.available | not" "$work/auto.json" >/dev/null; then
		# Unavailable here: it would trace without the method asked for, so
		# a usage error in one line with the reason.
		[ "$status" = 2 ] && [ "$(wc -l <"$work/$method.err")" = 1 ] &&
			grep -q "attach $method attaches no access probe on this kernel: ." \
				"$work/$method.err" || { echo "exit $status: $(cat "$work/$method.err")"; return 1; }
	else
		[ "$status" = 0 ] || { echo "exit $status: $(cat "$work/$method.err")"; return 1; }
	fi
}
check "--attach fentry: starts, or exit 2 in one line where it attaches nothing" start_forced fentry
check "--attach kprobe: starts, or exit 2 in one line where it attaches nothing" start_forced kprobe

one_record_per_write()
{
	local out=$work/auto.jsonl err=$work/auto.err i n status

	"$tool" -v --mount "$mnt" >"$out" 2>"$err" &
	tracer_pid=$!
	for i in $(seq 1 60); do
		grep -q "probes attached" "$err" && break
		sleep 0.25
	done
	grep -q "probes attached" "$err" || { cat "$err"; return 1; }
	dd if=/dev/zero of="$mnt/auto" bs=4k count=10 2>/dev/null
	sleep 0.5
	kill -INT "$tracer_pid"
	wait "$tracer_pid"
	status=$?
	tracer_pid=
	[ "$status" = 0 ] || { echo "exit $status: $(tail -n 5 "$err")"; return 1; }
	n=$(jq -r 'select(.type == "access" and .op == "write" and .comm == "dd")
		| .method' "$out" | sort | uniq -c)
	echo "$n"
	[ "$(echo "$n" | awk '{s += $1} END {print s}')" = 10 ] &&
		[ "$(echo "$n" | wc -l)" = 1 ]
}
check "auto: 10 writes of dd are 10 records of one method (no double count)" \
	one_record_per_write

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
