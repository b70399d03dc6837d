#!/bin/bash
# b_srv_cost.sh: a benchmark, not a test (CTest takes only t_*.sh). In the
# 6.12 guest, on a single-node Lustre (guest-lustre.sh, modules with BTF),
# what the server programs (bpf/rpc_ptlrpc_srv.bpf.h) and the LNet
# programs (bpf/rpc_lnet.bpf.h) cost per request the servers handle:
#
#   test/vm/run-in-vm test/vm/lustre-real/b_srv_cost.sh [FILES] [METHOD...]
#   (bench/srv-cost runs it, under qemu -icount on one vCPU)
#
# For each METHOD (fentry and kprobe by default), one tool run on
# /mnt/lustre with kernel.bpf_stats_enabled=1: its programs' run_cnt and
# run_time_ns (bpftool prog show) are taken before and after a metadata
# and data workload (FILES files created, stat'ed and removed; a 4 MiB
# write with fsync, read back after the caches are dropped). The requests
# the servers handled in between are the run_cnt of the handler-exit
# programs (one per request: each makes the request's srv record). Prints,
# for bench/srv-cost:
#
#   LES-S prog METHOD NAME XLATED_INSNS RUN_CNT RUN_TIME_NS   (each program that ran)
#   LES-S records METHOD SRV RPC LNET JOINED DROPPED          (the run's final stats)
#
# Times are the guest's clock: with qemu's -icount shift=0 one nanosecond
# per emulated instruction, so RUN_TIME_NS counts the instructions the
# programs executed (bench/methods does the same for the access plane).
set -uo pipefail

lr_dir=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=test/vm/guest-lib.sh
. "$lr_dir/../guest-lib.sh"
# shellcheck source=test/vm/lustre-real/guest-lustre.sh
. "$lr_dir/guest-lustre.sh"
guest_init b_srv_cost
trap 'tracer_kill; echo 0 >/proc/sys/kernel/bpf_stats_enabled; guest_remove_work' EXIT
guest_require_tool
files=${1:-100}
shift $(($# > 0 ? 1 : 0))
methods=("$@")
[ ${#methods[@]} -gt 0 ] || methods=(fentry kprobe)

prog_ids() { bpftool -j prog show | jq -r '.[].id' | sort; }

# snapshot IDS: "id name xlated_insns run_cnt run_time_ns" per program.
snapshot()
{
	[ -n "$1" ] || die "no program of the tool found"
	bpftool -j prog show | jq -r --argjson ids "[$(paste -sd, <<<"$1")]" \
		'.[] | select(.id as $i | $ids | index($i))
		| "\(.id) \(.name) \((.bytes_xlated // 0) / 8 | floor) \(.run_cnt // 0) \(.run_time_ns // 0)"'
}

workload()
{
	local d=$LR_MNT/b i

	mkdir -p "$d" || return 1
	for ((i = 0; i < files; i++)); do
		echo x >"$d/f$i" || return 1
	done
	stat "$d"/f* >/dev/null || return 1
	rm -f "$d"/f* || return 1
	dd if=/dev/zero of="$d/big" bs=1M count=4 conv=fsync status=none || return 1
	echo 3 >/proc/sys/vm/drop_caches
	dd if="$d/big" of=/dev/null bs=1M status=none || return 1
	rm -f "$d/big" && rmdir "$d"
}

measure()
{
	local m=$1 mine out=$work/out-$1.jsonl st

	prog_ids >"$work/pre-$m"
	tracer_start 600 "" "$work/tool-$m.err" "$tool" -v --attach "$m" --mount "$LR_MNT" \
		--stats-interval 10s -o "$out" || die "$m: the tool did not start"
	# The guest has no /dev/fd: files, not process substitutions.
	prog_ids >"$work/all-$m"
	mine=$(comm -13 "$work/pre-$m" "$work/all-$m")
	dd if=/dev/zero of="$LR_MNT/.warm" bs=4k count=1 conv=fsync status=none
	sleep 1
	snapshot "$mine" >"$work/before-$m"
	workload || die "$m: the workload failed"
	sleep 2
	snapshot "$mine" >"$work/after-$m"
	tracer_stop
	st=$?
	[ "$st" = 0 ] || say "$m: the tool exited $st"
	sort "$work/before-$m" >"$work/before-$m.s"
	sort "$work/after-$m" >"$work/after-$m.s"
	# id, then name xlated run_cnt run_time_ns before ($2-$5) and after ($6-$9)
	join "$work/before-$m.s" "$work/after-$m.s" |
		awk -v m="$m" '$8 > $4 { print "LES-S prog", m, $2, $3, $8 - $4, $9 - $5 }'
	jq -r -s --arg m "$m" '[.[] | select(.type == "stats" and .final)][0] as $s
		| "LES-S records \($m) \($s.records.srv // 0) \($s.records.rpc // 0)"
		+ " \($s.records.lnet // 0) \($s.join.joined // 0)"
		+ " \(($s.dropped_kernel // 0) + ($s.dropped_userspace // 0))"' "$out"
	grep -m1 'probes attached' "$work/tool-$m.err" | sed "s/^/$m: /"
}

lustre_real_start || die "Lustre did not come up"
echo 1 >/proc/sys/kernel/bpf_stats_enabled
for m in "${methods[@]}"; do
	measure "$m"
done
lustre_real_stop
say "done"
