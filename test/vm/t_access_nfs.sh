#!/bin/bash
# t_access_nfs.sh: the access plane on NFS in the stock-kernel guest. nfsd
# exports a tmpfs directory over loopback, mounted as NFSv3 and NFSv4.2;
# the tool observes both mounts at once with each attach method forced
# (fentry, kprobe, syscall) while one workload runs on each.
#
#   test/vm/run-in-vm test/vm/t_access_nfs.sh      (LES_BUILD: the build dir)
#
# Each method's run uses fresh names (its own directory, made before the
# tool starts), so the dentry cache holds nothing of them and the kernel's
# calls are known exactly. Records are grouped per mount by (comm, op,
# errno_class) with count and byte sum and compared with the expected
# tables. Ends with the matrix of verified cells.
set -u

# shellcheck source=test/vm/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
# shellcheck source=test/vm/nfs-setup.sh
. "$here/nfs-setup.sh"
guest_init t_access_nfs
export_dir=$work/export
declare -A cell
tool_status=

cleanup()
{
	tracer_kill
	nfs_teardown "$work/v3" "$work/v4"
	guest_remove_work
}
trap cleanup EXIT

guest_require_tool

# One export, fsid=0: also the NFSv4 root.
mount_clients()
{
	nfs_mount 3 "$export_dir" "$work/v3" && nfs_mount 4.2 / "$work/v4"
}

trace_workload()
{
	local method=$1 v

	# Fresh directories, made before the tool watches (one export: the
	# two mounts show the same tree).
	for v in v3 v4; do
		mkdir "$work/$v/$method.$v" || return 1
	done
	tracer_start 180 "$work/$method.jsonl" "$work/$method.err" \
		"$tool" -v --attach "$method" --mount "$work/v3" --mount "$work/v4" || return 1
	for v in v3 v4; do
		workload "$work/$v/$method.$v"
	done
	sleep 1
	tracer_stop
	tool_status=$? # a check of its own (verify_method)
	return 0
}

workload()
{
	local d=$1

	dd if=/dev/zero of="$d/f" bs=4k count=100 2>/dev/null
	dd if="$d/f" of=/dev/null bs=4k count=100 2>/dev/null
	stat "$d/f" >/dev/null
	mkdir "$d/d"
	touch "$d/d/x"
	rmdir "$d/d" 2>/dev/null # ENOTEMPTY from the server
	rm "$d/d/x"
	mv "$d/f" "$d/g"
	rm "$d/g"
	rmdir "$d/d"
	cat "$d/missing" 2>/dev/null
	ls "$d" >/dev/null
}

# comm op errno_class count bytes of one mount, sorted.
summary()
{
	jq -r --arg m "$2" 'select(.type == "access" and .mount == $m)
		| [.comm, .op, (.errno_class // "ok"), .bytes] | @tsv' "$1" |
		awk -F'\t' '{ n[$1" "$2" "$3]++; b[$1" "$2" "$3] += $4 }
			END { for (k in n) print k, n[k], b[k] }' | sort
}

# Common to both versions as the filesystem functions see them.
functions_common()
{
	cat <<'EOF'
dd close ok 2 0
dd read ok 100 409600
dd write ok 100 409600
ls close ok 1 0
ls getattr ok 2 0
ls open ok 1 0
ls readdir ok 2 0
mkdir lookup notfound 1 0
mkdir mkdir ok 1 0
mv lookup notfound 2 0
mv rename ok 1 0
mv rename other 1 0
rm getattr ok 2 0
rm unlink ok 2 0
rmdir rmdir ok 1 0
rmdir rmdir other 1 0
stat getattr ok 1 0
touch close ok 1 0
touch setattr ok 1 0
EOF
}

# NFSv3: lookup, then ->create and ->open (and the ACL of the new file);
# where the kernel has nfs_atomic_open_v23 (test/vm/expect: nfs_open_v23),
# an O_CREAT open is one ->atomic_open: a create, no lookup, no open.
expected_functions_v3()
{
	{
		functions_common
		echo "cat lookup notfound 1 0"
		if [ "$(kernel_expect nfs_open_v23)" = yes ]; then
			cat <<'EOF'
dd create ok 1 0
dd get_acl ok 1 0
dd open ok 1 0
touch create ok 1 0
touch get_acl ok 1 0
EOF
		else
			cat <<'EOF'
dd create ok 1 0
dd get_acl ok 1 0
dd lookup notfound 1 0
dd open ok 2 0
touch create ok 1 0
touch get_acl ok 1 0
touch lookup notfound 1 0
touch open ok 1 0
EOF
		fi
	} | sort
}

# NFSv4: ->atomic_open looks up, opens and creates in one call (a create
# when it set FMODE_CREATED); a missing name is its ENOENT.
expected_functions_v4()
{
	{
		functions_common
		cat <<'EOF'
cat open notfound 1 0
dd create ok 1 0
dd open ok 1 0
touch create ok 1 0
EOF
	} | sort
}

expected_syscalls()
{
	cat <<'EOF'
cat open notfound 1 0
dd close ok 4 0
dd open ok 2 0
dd read ok 100 409600
dd write ok 100 409600
ls close ok 1 0
ls getattr ok 2 0
ls open ok 1 0
ls readdir ok 2 0
mkdir mkdir ok 1 0
mv getattr notfound 1 0
mv rename ok 1 0
mv rename other 1 0
rm getattr ok 2 0
rm unlink ok 2 0
rmdir rmdir ok 1 0
rmdir rmdir other 1 0
stat getattr ok 1 0
touch close ok 2 0
touch open ok 1 0
touch setattr ok 1 0
EOF
}

# No process substitution: the guest has no /dev/fd.
table_matches()
{
	"$3" >"$work/expected.txt"
	summary "$1" "$2" >"$work/actual.txt"
	diff -u "$work/expected.txt" "$work/actual.txt"
}

only_method()
{
	local bad

	bad=$(jq -r --arg m "$2" 'select(.type == "access" and .method != $m) | .method' "$1" |
		sort | uniq -c)
	[ -z "$bad" ] || { echo "records of other methods: $bad"; return 1; }
}

fs_types_right()
{
	jq -e -s --arg v3 "$work/v3" --arg v4 "$work/v4" '
		[.[] | select(.type == "access")] as $a
		| ($a | map(select(.mount == $v3)) | length > 0 and all(.fs_type == "nfs"))
		and ($a | map(select(.mount == $v4)) | length > 0 and all(.fs_type == "nfs4"))
		and ($a | map(select(.mount != $v3 and .mount != $v4)) | length == 0)' "$1"
}

pairing_clean()
{
	local k v

	for k in exit_without_entry entry_replaced depth_overflow; do
		v=$(jq -r --arg k "$k" 'select(.type == "stats" and .final) | .kernel[$k]' "$1" |
			tail -n 1)
		[ "$v" = 0 ] || { echo "$k = $v"; return 1; }
	done
}

verify_method()
{
	local method=$1 func=$2 out=$work/$1.jsonl ok3=1 ok4=1 ok=1

	say "--attach $method"
	if [ "$method" = fentry ] && [ "$(kernel_expect module_btf)" = no ]; then
		check "fentry: refused with its reason (no module BTF on this kernel)" \
			tool_refuses_method fentry --mount "$work/v3" --mount "$work/v4"
		cell[$method.v3]="none: no module BTF"
		cell[$method.v4]="none: no module BTF"
		return
	fi
	check "$method: tool starts and attaches to the v3 and v4 mounts" \
		trace_workload "$method" || {
		cell[$method.v3]=FAIL
		cell[$method.v4]=FAIL
		return
	}
	grep -E "function probes|links detached|probes attached" "$work/$method.err" |
		sed "s/^lustre-ebpf-stream: /     timing: /"
	check "$method: NFSv3 exact counts and byte sums" \
		table_matches "$out" "$work/v3" "${func}_v3" || ok3=0
	check "$method: NFSv4.2 exact counts and byte sums" \
		table_matches "$out" "$work/v4" "${func}_v4" || ok4=0
	check "$method: every record by $method" only_method "$out" "$method" || ok=0
	check "$method: records carry their mount's fs_type, none from elsewhere" \
		fs_types_right "$out" || ok=0
	check "$method: entry/exit pairing counters are 0" pairing_clean "$out" || ok=0
	check "$method: the tool exits 0" tracer_exited_ok "$tool_status" "$work/$method.err" || ok=0
	[ $ok = 1 ] || { ok3=0; ok4=0; }
	cell[$method.v3]=$([ $ok3 = 1 ] && echo verified || echo FAIL)
	cell[$method.v4]=$([ $ok4 = 1 ] && echo verified || echo FAIL)
}

expected_syscalls_v3() { expected_syscalls; }
expected_syscalls_v4() { expected_syscalls; }

list_probes_right()
{
	local json=$work/probes.json

	"$tool" --list-probes=json >"$json" || return 1
	jq -e '[.probes[] | select(.fs == "nfs" and .plane == "access")
		| select(.method == "none" and (.reason // "") == "")] | length == 0' "$json" &&
		jq -e '[.probes[] | select(.fs == "nfs" and .method != "none")] | length >= 28' \
			"$json"
}

say "kernel $(uname -r)"
check "nfsd serves a tmpfs export" nfs_server_start "$export_dir" || die "no NFS server"
check "NFSv3 and NFSv4.2 mounts over loopback" mount_clients || die "no NFS mounts"
check "--list-probes=json: NFS functions probed, the rest with reasons" list_probes_right
verify_method fentry expected_functions
verify_method kprobe expected_functions
verify_method syscall expected_syscalls

echo
echo "matrix (NFS, kernel $(uname -r)):"
printf '  %-8s %-10s %-10s %-10s\n' fs fentry kprobe syscall
for v in v3 v4; do
	printf '  %-8s %-10s %-10s %-10s\n' "nfs$v" "${cell[fentry.$v]:-?}" \
		"${cell[kprobe.$v]:-?}" "${cell[syscall.$v]:-?}"
done
for v in v3 v4; do
	for m in fentry kprobe syscall; do
		cell "nfs$v" access "$m" "${cell[$m.$v]:-FAIL}"
	done
done
guest_done
