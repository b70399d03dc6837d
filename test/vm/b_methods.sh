#!/bin/bash
# b_methods.sh: a benchmark, not a test (CTest takes only t_*.sh). In the
# stock-kernel guest, the cost of each attach method of the access plane
# (fentry, kprobe, the syscall fallback) on the same op loops in one boot:
#
#   test/vm/run-in-vm test/vm/b_methods.sh [REPS]     (bench/methods runs it)
#
# On a les-testfs FUSE mount (attribute and entry timeouts of a day, so a
# warm pread or stat never reaches the daemon), an NFSv3 mount over
# loopback (nfs-setup.sh; attribute cache of a day: no request either;
# left out with a note when the NFS server does not start) and a tmpfs
# file (a filesystem the tool does not observe), with
# kernel.bpf_stats_enabled=1,
# each repetition runs, in an order that rotates from one repetition to
# the next: no tool, then the tool with --attach fentry, kprobe, syscall.
# For each tool run and each op loop (bench/oploop.c) it takes the tool's
# programs' run_cnt and run_time_ns before and after the loop (bpftool
# prog show), less the same snapshot pair around an empty loop (the
# snapshots' and oploop's own syscalls). Prints, for bench/methods:
#
#   LES-M prog METHOD NAME TYPE XLATED_INSNS JITED_BYTES    (each loaded program, rep 1)
#   LES-M loop REP METHOD OP OPS CPU_NS_PER_OP               (METHOD none too)
#   LES-M bpf REP METHOD OP OPS NAME XLATED_INSNS RUN_CNT RUN_TIME_NS
#                                                     (each program that ran)
#   LES-M emitted REP METHOD RECORDS EXPECTED_AT_LEAST
#
# Times are the guest's clock: under TCG not real time. bench/methods boots
# the guest with qemu's -icount shift=0 on one vCPU by default, which makes
# them counts of guest instructions executed; otherwise only ratios between
# methods of one boot mean something. The xlated sizes are exact.
set -euo pipefail

# shellcheck source=test/vm/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
# shellcheck source=test/vm/nfs-setup.sh
. "$here/nfs-setup.sh"
guest_init b_methods
reps=${1:-3}
mnt=$work/mnt
nfs=$work/nfs
tmpd=$work/tmpfs
oploop=${LES_OPLOOP:-$build/bench/oploop}
# Ops per loop: CHUNKS x PER_CHUNK timed, plus PER_CHUNK/10 + 1 warm-up ops.
chunks=5
per_chunk=${LES_METHODS_OPS:-4000}
# openclose is a daemon round trip per op: fewer.
per_chunk_openclose=$((per_chunk / 10))
methods=(none fentry kprobe syscall)
nfs_on=

cleanup()
{
	set +e
	tracer_kill
	[ -n "$nfs_on" ] && nfs_teardown "$nfs"
	mountpoint -q "$mnt" 2>/dev/null && { fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"; }
	mountpoint -q "$tmpd" 2>/dev/null && umount -l "$tmpd"
	echo 0 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null
	guest_remove_work
}
trap cleanup EXIT

guest_require_tool
command -v bpftool >/dev/null || die "bpftool missing (scripts/install-deps)"
[ -x "$build/les-testfs" ] || die "no $build/les-testfs"
if [ ! -x "$oploop" ]; then
	say "no $oploop: compiling bench/oploop.c in the guest (slow under TCG)"
	oploop=$work/oploop
	cc -O2 -pthread "$src/bench/oploop.c" -o "$oploop" || die "cannot compile bench/oploop.c"
fi
# Kernel messages must not split the LES-M lines on the console.
echo 1 >/proc/sys/kernel/printk
modprobe -d "$LES_VM_MODDIR" fuse || die "cannot load fuse"
mkdir -p "$mnt" "$tmpd"
"$build/les-testfs" "$mnt" -o attr_timeout=86400,entry_timeout=86400 || die "cannot mount les-testfs"
mount -t tmpfs -o size=16m tmpfs "$tmpd" || die "cannot mount tmpfs"
head -c 4096 /dev/urandom >"$mnt/f"
cp "$mnt/f" "$tmpd/f"
if nfs_server_start "$work/export" >"$work/nfs.log" 2>&1 &&
	NFS_MOUNT_OPTS=actimeo=86400 nfs_mount 3 "$work/export" "$nfs" >>"$work/nfs.log" 2>&1; then
	nfs_on=1
	cp "$mnt/f" "$nfs/f"
else
	say "NFS left out: the server or the mount did not start"
	sed 's/^/     | /' "$work/nfs.log"
fi
echo 1 >/proc/sys/kernel/bpf_stats_enabled

# The loops: NAME OP FILE PER_CHUNK. NAME is what the table calls it.
loops=(
	"pread pread $mnt/f $per_chunk"
	"stat stat $mnt/f $per_chunk"
	"openclose openclose $mnt/f $per_chunk_openclose"
	"tmpfs_pread pread $tmpd/f $per_chunk"
)
[ -n "$nfs_on" ] && loops+=("nfs_pread pread $nfs/f $per_chunk" "nfs_stat stat $nfs/f $per_chunk")
observe=(--mount "$mnt")
[ -n "$nfs_on" ] && observe+=(--mount "$nfs")

loop_ops() { echo $((chunks * $1 + $1 / 10 + 1)); }

# snapshot FILE: id run_cnt run_time_ns of every program, one a line.
snapshot()
{
	bpftool -j prog show | jq -r '.[] | "\(.id) \(.run_cnt // 0) \(.run_time_ns // 0)"' >"$1"
}

# delta BEFORE AFTER: id run_cnt run_time of the tool's programs ($work/mine).
delta()
{
	awk 'FILENAME == ARGV[1] { mine[$1] = 1; next }
		FILENAME == ARGV[2] { c[$1] = $2; t[$1] = $3; next }
		($1 in mine) { print $1, $2 - c[$1], $3 - t[$1] }' "$work/mine" "$1" "$2"
}

tool_start()
{
	local method=$1 i

	bpftool -j prog show | jq -r '.[].id' | sort >"$work/ids.before"
	"$tool" -v --attach "$method" "${observe[@]}" -o /dev/null --stats-interval 0 \
		2>"$work/tool.err" &
	tracer_pid=$!
	for i in $(seq 600); do
		grep -q "probes attached" "$work/tool.err" && break
		kill -0 "$tracer_pid" 2>/dev/null || break
		sleep 0.5
	done
	grep -q "probes attached" "$work/tool.err" || {
		cat "$work/tool.err"
		die "--attach $method: the tool did not start"
	}
	bpftool -j prog show | jq -r '.[].id' | sort >"$work/ids.after"
	comm -13 "$work/ids.before" "$work/ids.after" >"$work/mine"
	[ -s "$work/mine" ] || die "--attach $method: no programs of the tool found"
}

tool_stop()
{
	local st=0

	kill -INT "$tracer_pid"
	wait "$tracer_pid" || st=$?
	tracer_pid=
	[ "$st" = 0 ] || { cat "$work/tool.err"; die "the tool exited with status $st"; }
}

# The programs of this tool run, once per method (the same at every rep).
print_programs()
{
	local method=$1

	bpftool -j prog show | jq -r '.[] | "\(.id) \(.name) \(.type) \(.bytes_xlated / 8) \(.bytes_jited)"' |
		awk -v m="$method" 'FILENAME == ARGV[1] { mine[$1] = 1; next }
			($1 in mine) { print "LES-M prog", m, $2, $3, $4, $5 }' "$work/mine" -
}

# One configuration of one repetition.
run_config()
{
	local rep=$1 method=$2 l name op file pc ops out emitted expected=0

	if [ "$method" = none ]; then
		for l in "${loops[@]}"; do
			read -r name op file pc <<<"$l"
			out=$("$oploop" "$op" "$file" cost "$chunks" "$pc")
			echo "LES-M loop $rep none $name $(loop_ops "$pc") $(sed 's/ns_median=\([0-9.]*\).*/\1/' <<<"$out")"
		done
		return
	fi
	say "rep $rep: --attach $method"
	tool_start "$method"
	[ "$rep" = 1 ] && print_programs "$method"
	# The cost of taking the snapshots themselves, and of starting oploop.
	"$oploop" getppid "$tmpd/f" cost 1 1 >/dev/null
	snapshot "$work/s0"
	"$oploop" getppid "$tmpd/f" cost 1 1 >/dev/null
	snapshot "$work/s1"
	delta "$work/s0" "$work/s1" >"$work/empty"
	for l in "${loops[@]}"; do
		read -r name op file pc <<<"$l"
		ops=$(loop_ops "$pc")
		# Under TCG the first runs of any code are translated first (ms
		# each): a short run beforehand keeps that out of the figures.
		"$oploop" "$op" "$file" cost 1 100 >/dev/null
		snapshot "$work/s0"
		out=$("$oploop" "$op" "$file" cost "$chunks" "$pc")
		snapshot "$work/s1"
		echo "LES-M loop $rep $method $name $ops $(sed 's/ns_median=\([0-9.]*\).*/\1/' <<<"$out")"
		delta "$work/s0" "$work/s1" >"$work/d"
		# Less the empty loop's runs; programs by name (ids differ per run).
		bpftool -j prog show | jq -r '.[] | "\(.id) \(.name) \(.bytes_xlated / 8)"' >"$work/names"
		awk -v r="$rep" -v m="$method" -v n="$name" -v ops="$ops" '
			FILENAME == ARGV[1] { nm[$1] = $2 " " $3; next }
			FILENAME == ARGV[2] { ec[$1] = $2; et[$1] = $3; next }
			{ c = $2 - ec[$1]; t = $3 - et[$1]
			  if (c > 0) print "LES-M bpf", r, m, n, ops, nm[$1], c, t }' \
			"$work/names" "$work/empty" "$work/d"
		case $name in
		pread | stat | nfs_pread | nfs_stat) expected=$((expected + ops)) ;;
		openclose) expected=$((expected + 2 * ops)) ;;
		esac
	done
	tool_stop
	emitted=$(sed -n 's/^lustre-ebpf-stream: final stats: //p' "$work/tool.err" | tail -n 1 | jq .emitted)
	echo "LES-M emitted $rep $method $emitted $expected"
}

say "kernel $(uname -r), $reps repetitions, $per_chunk ops per chunk"
start=$(date +%s)
for rep in $(seq "$reps"); do
	for k in 0 1 2 3; do # rotate: no configuration always first
		run_config "$rep" "${methods[$(((rep - 1 + k) % 4))]}"
	done
done
say "done in $(($(date +%s) - start)) s (guest clock)"
