#!/bin/bash
# client-tool.sh: the tool on a Lustre client of another version or kernel
# than the servers', in the client guest of two-guests.sh (the servers run
# in a 6.12 guest, guest-server.sh):
#
#   LES_LR_JOBID=lr101 test/vm/lustre-real/two-guests.sh test/vm/lustre-real/client-tool.sh
#
# (lr101 is the job Lustre sends for the workload's first writer, job 101:
# the server guest checks it shows in its job_stats)
# with LES_LR_CLIENT_VERSION (2.15.8, master) and LES_LR_CLIENT_KVER
# (5.10.0-32-amd64, 6.1.0-57-amd64). The client's modules have no BTF
# (Debian's 5.10 and 6.1 headers have no vmlinux to build it from), and these
# kernels have no kprobe_multi: every llite and PtlRPC function gets a
# kprobe of its own. The workload and the comparisons are tool-lib.sh's:
# two jobs writing at once, a read back by a third, namespace operations;
# then, exactly, the access records against llite.*.stats, the request
# records against mdc/osc stats, and the jobs against the servers'
# job_stats, which the server guest prints on request (LR-REQUEST, passed
# on by the host). Reports the cells lustre-<version> access/rpc kprobe.
set -u

# tool-lib.sh first: guest-client.sh sets the client's interface and NIDs
# after the defaults of guest-lustre.sh, which both source.
# shellcheck source=test/vm/lustre-real/tool-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/tool-lib.sh"
# shellcheck source=test/vm/lustre-real/guest-client.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-client.sh"
guest_init lr-client-tool
# 2.15's llite counts a getxattr of a POSIX ACL that a file does not have
# (ls -l asks for every entry's) only where master does not return early:
# ll_xattr_get_common returns -ENODATA before ll_stats_ops_tally, and the
# record carries no xattr name to tell those apart. ls without -l asks none.
LR_LS=-1
trap 'tracer_kill; guest_remove_work' EXIT
guest_require_tool
# The console: requests to the servers are printed there, also from inside check.
exec 9>&1
lr_req=0

# server_request WHAT: the servers' answer on stdout (jobstats, clear-jobstats);
# fails unless the servers' command exited 0 (the answer's last line).
server_request()
{
	local f st

	lr_req=$((lr_req + 1))
	echo "LR-REQUEST $lr_req $1" >&9
	f=$lr_sync_dir/reply.$lr_req
	for _ in $(seq 600); do
		if [ -e "$f" ]; then
			sed '$d' "$f"
			st=$(tail -n 1 "$f")
			[ "$st" = "LR-STATUS 0" ] && return 0
			echo "request $lr_req ($1): the servers' command failed: ${st:-no status}" >&2
			return 1
		fi
		sleep 0.5
	done
	echo "no answer from the servers to request $lr_req ($1)"
	return 1
}

server_jobstats()
{
	server_request jobstats >"$work/jobs.txt"
}

# Every llite and PtlRPC function (obdclass's class_new_import too) by a
# kprobe of its own, nothing refused.
client_probes_ok()
{
	"$tool" --list-probes=json >"$work/probes.json" 2>"$work/probes.err" || return 1
	jq -M -e '. as $r
		| ([.probes[] | select(.plane == "access" and .fs == "lustre" and .method != "none")
			| .method] | unique) as $fn
		| ([.probes[] | select(.plane == "rpc" and (.proto == "ptlrpc" or .proto == "ldlm")
			and .method != "none") | .method] | unique) as $rpc
		| ({llite: $fn, ptlrpc: $rpc, kprobe_multi: $r.methods.kprobe_multi.available,
		    refused: $r.programs_refused} | tostring | debug)
		| $fn == ["kprobe"] and $rpc == ["kprobe"]
		and ([$r.probes[] | select(.plane == "access" and .fs == "lustre" and .method != "none")]
			| length >= 25)
		and ([$r.probes[] | select(.probe == "ptlrpc_lprocfs_rpc_sent")][0].method == "kprobe")
		and ([$r.probes[] | select(.probe == "class_new_import")][0].method == "kprobe")
		and $r.load_checked and $r.programs_refused == []' "$work/probes.json"
}

check "client up and mounted $LR_SERVER_NID:/$LR_FSNAME" lustre_client_start ||
	{ grep -a '^lustre-real: ' "$work/check.out"; guest_done; exit 1; }
version=$(lctl get_param -n version 2>/dev/null | sed -n 's/^lustre: *//p;1s/^\([0-9][0-9.]*\)$/\1/p' |
	head -n 1)
say "Lustre client $version on $(uname -r)"
mkdir -p "$LR_MNT/w" || die "mkdir $LR_MNT/w"
# Lustre sends another variable's job than the tool reads (tool-lib.sh
# lr_wire_jobs), so that a writeback charged by the wire job is told apart.
lr_wire_jobs >/dev/null || die "jobid_var"
check "--list-probes: llite and PtlRPC by one kprobe per function, nothing refused" \
	client_probes_ok
tracer_start 300 "" "$work/tool.err" "$tool" -v --attach kprobe --mount "$LR_MNT" \
	--stats-interval 1s --aggregate 1s --records --group-by job_id,op \
	--prometheus 127.0.0.1:9108 --slurm-jobid --file-id -o "$work/out.jsonl" ||
	die "the tool did not start"
grep -E "function probes|probes attached" "$work/tool.err" | sed "s/^lustre-ebpf-stream: /timing: /"
sleep 1
lr_warm_up || die "warm-up write on $LR_MNT"
lustre_real_clear_stats
check "the servers' job_stats cleared" server_request clear-jobstats
check "workload" lr_workload
sleep 3
lctl get_param 'llite.*.stats' 'mdc.*.stats' 'osc.*.stats' >"$work/stats.txt"
lctl get_param 'osc.*-osc-[0-9a-f]*.import' 'mdc.*-mdc-[0-9a-f]*.import' >"$work/imports.txt"
lctl get_param 'osc.*-osc-[0-9a-f]*.rpc_stats' >"$work/rpc_stats.txt"
check "the servers' job_stats" server_jobstats
check "a /metrics scrape" python3 -c 'import sys, urllib.request
open(sys.argv[1], "wb").write(urllib.request.urlopen("http://127.0.0.1:9108/metrics", timeout=20).read())' \
	"$work/metrics.txt"
check "tool exits 0" tracer_stop
check "every line is valid against docs/record.schema.json" schema_valid "$work/out.jsonl"
check "final stats: nothing dropped, refused or missed" lr_health
check "access records = llite.*.stats" lr_counters access --lctl "$work/stats.txt"
# Per target and NID need module BTF (CO-RE reads of the request and its
# import), which these clients' builds have not (docs/lustre.md): without
# it, every record's xid, target and nid must be null, and are checked so.
check "request records = mdc/osc stats per opcode; no module BTF: xid, target and nid null" \
	lr_counters requests --lctl "$work/stats.txt" --imports "$work/imports.txt" --ids none
# shellcheck disable=SC2046 # lr_cause_arg: no word or two
check "lustre_jobid, job_id, windows and Prometheus = the servers' job_stats (101 and 202 at once, 102); writeback charged to its writer" \
	lr_counters jobs --jobs "$work/jobs.txt" --job 101 --job 202 --job 102 \
	--writeback-job 202 $(lr_cause_arg) $(lr_wire_arg) --windows "$work/out.jsonl" \
	--metrics "$work/metrics.txt"
grep -E '^note job|kernel thread|charged to job_id' "$work/check.out" |
	while read -r l; do say "$l"; done
check "queue_waits link to their access records" lr_queue_waits_linked
check "access records carry no FID without module BTF (--file-id)" lr_fids_ok none
check "in flight: 0 on the mount at the end" lr_inflight_zero
check "in flight: ost_write concurrency within rpc_stats" lr_inflight_bounded
check "unmount" lustre_client_stop
cell_by_checks "lustre-${version:-unknown}" access kprobe
cell_by_checks "lustre-${version:-unknown}" rpc kprobe
guest_done
