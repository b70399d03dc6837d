#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# exporter-side.sh: lustre-ebpf-exporter and this tool side by side on one
# real Lustre 2.17.57 client in the 6.12 guest, against one workload
# (tool-lib.sh's lr_workload: two jobs writing at once, a read after the
# caches were dropped, the metadata ops, a failing rmdir and getfattr).
# Both run with --slurm-jobid. Each /metrics is scraped before and after
# the workload (past the exporter's 5 s drain), and exporter_compare.py
# compares the lustre_client_* series of the mount, series by series, on
# the difference of the two scrapes.
#
#   LES_EXPORTER_BIN=/path/to/lustre-ebpf-exporter LES_VM_KVER=6.12.117+deb12-amd64 \
#       LES_VM_MEM=4096 LES_BUILD=build LES_SRC=. LES_VM_TIMEOUT=1200 \
#       test/vm/run-in-vm test/vm/lustre-real/exporter-side.sh
#
# Not a CTest: the exporter's source is not reachable from CI (the Go module
# proxy refuses the module; docs/prometheus.md). The report, both scrapes
# and the exporter's log are printed between LES-SIDE markers.
set -u
# shellcheck source=test/vm/lustre-real/tool-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/tool-lib.sh"
guest_init exporter_side
up_pid=
trap '[ -n "$up_pid" ] && kill "$up_pid"; tracer_kill; guest_remove_work' EXIT
guest_require_tool
exporter=${LES_EXPORTER_BIN:-}
[ -x "$exporter" ] || die "LES_EXPORTER_BIN: the exporter's binary, executable"

scrape() # PORT FILE
{
	curl -sf --max-time 20 "http://127.0.0.1:$1/metrics" -o "$2"
}

show() # NAME FILE
{
	echo "LES-SIDE-BEGIN $1"
	cat "$2"
	echo "LES-SIDE-END $1"
}

lustre_real_start || { guest_done; die "Lustre did not come up"; }
mkdir -p "$LR_MNT/w" || die "mkdir $LR_MNT/w"
lustre_real_jobid SLURM_JOB_ID >/dev/null || die "jobid_var"
"$exporter" --mount "$LR_MNT" --web.listen-address 127.0.0.1:9200 --slurm-jobid \
	>"$work/exporter.log" 2>&1 &
up_pid=$!
for _ in $(seq 1 240); do
	scrape 9200 "$work/up0.txt" && break
	kill -0 "$up_pid" 2>/dev/null || break
	sleep 0.5
done
check "the exporter serves /metrics" scrape 9200 "$work/up0.txt" || {
	show exporter.log "$work/exporter.log"
	die "the exporter did not start"
}
tracer_start 300 /dev/null "$work/tool.err" "$tool" -v --attach "${LES_SIDE_ATTACH:-kprobe}" \
	--mount "$LR_MNT" --prometheus 127.0.0.1:9108 --slurm-jobid --stats-interval 0 ||
	die "the tool did not start"
lr_warm_up || die "warm-up write on $LR_MNT"
sleep 7 # the exporter's drain (5 s) takes the warm-up in
check "scrape the exporter before" scrape 9200 "$work/up1.txt"
check "scrape the tool before" scrape 9108 "$work/our1.txt"
check "workload" lr_workload
sleep 12
check "scrape the exporter after" scrape 9200 "$work/up2.txt"
check "scrape the tool after" scrape 9108 "$work/our2.txt"
lctl get_param 'llite.*.stats' >"$work/llite.txt"
check "the tool exits 0" tracer_stop
python3 "$lr_here/exporter_compare.py" --mount "$LR_MNT" \
	--exporter "$work/up1.txt" "$work/up2.txt" --ours "$work/our1.txt" "$work/our2.txt" \
	--fixture "$src/test/fixtures/exporter-e743798.txt" >"$work/report.txt" 2>&1
say "compare: exit $?"
show report "$work/report.txt"
for f in up1 up2 our1 our2 llite; do
	show "$f.txt" "$work/$f.txt"
done
show exporter.log "$work/exporter.log"
show tool.err "$work/tool.err"
guest_done
