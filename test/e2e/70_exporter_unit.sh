#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The tool in lustre-ebpf-exporter's place, as that exporter's own systemd
# unit (build/systemd/lustre-ebpf-exporter.service at its 1ad0144) starts
# it, unchanged: the binary at its path under its name, its command line
#   --mount $LUSTRE_MOUNT --web.listen-address $LISTEN_ADDRESS
#   --web.telemetry-path $TELEMETRY_PATH
# with its environment file's values, its capabilities only (CAP_BPF and
# CAP_PERFMON, NoNewPrivileges) and standard output the journal
# (JOURNAL_STREAM naming the file stdout is, as systemd sets it). Checks:
#   - under our own name that is refused (records would flood the journal);
#   - under the exporter's name it serves metrics on the address given,
#     writes nothing to stdout, and stops with 0 on SIGTERM;
#   - the exporter's --once and a bare --duration (seconds) end the run.

. "$(dirname "$0")/lib.sh"
les_init 70_exporter_unit curl setpriv /usr/bin/python3

M=$WORK/lustre
les_testfs "$M"
mkdir -p "$WORK/usr/local/bin"
ln -s "$LES_BIN" "$WORK/usr/local/bin/lustre-ebpf-exporter"
PORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# /etc/default/lustre-ebpf-exporter, with a free port on localhost.
LUSTRE_MOUNT=$M
LISTEN_ADDRESS=127.0.0.1:$PORT
TELEMETRY_PATH=/metrics

# unit BINARY STDOUT [ARGS...]: as the unit starts its ExecStart. It execs:
# run it in a subshell, "(unit ...)", or in the background, where $! is
# then the tool's pid.
unit() {
	local bin=$1 out=$2
	shift 2
	: >"$out"
	export JOURNAL_STREAM
	JOURNAL_STREAM=$(stat -c '%d:%i' "$out")
	exec setpriv --bounding-set=-all,+bpf,+perfmon --inh-caps=-all --no-new-privs \
		"$bin" --mount "$LUSTRE_MOUNT" --web.listen-address "$LISTEN_ADDRESS" \
		--web.telemetry-path "$TELEMETRY_PATH" "$@" >>"$out" 2>"$out.err"
}

(unit "$LES_BIN" "$WORK/ours.journal")
les_eq "under our name, stdout the journal and no -o: exit 2" 2 "$?"
les_true "... saying why" grep -q 'standard output is the systemd journal' "$WORK/ours.journal.err"

unit "$WORK/usr/local/bin/lustre-ebpf-exporter" "$WORK/journal" &
UNIT=$!
_les_pids+=("$UNIT")
for _ in $(seq 1 100); do
	curl -sf "http://$LISTEN_ADDRESS/metrics" -o /dev/null && break
	kill -0 "$UNIT" 2>/dev/null || les_fail "the unit's command exited: $(cat "$WORK/journal.err")"
	sleep 0.1
done
sleep 1 # probes attach after the endpoint starts
dd if=/dev/zero of="$M/f" bs=4k count=5 status=none
sleep 1.5
curl -sf "http://$LISTEN_ADDRESS$TELEMETRY_PATH" -o "$WORK/metrics" || les_fail "scrape failed"
les_eq "metrics on the unit's address: the 5 writes" 5 \
	"$(awk '/^lustre_ebpf_stream_client_access_operations_total\{.*op="write"/ { s += $NF } END { print s + 0 }' "$WORK/metrics")"
les_true "the exporter's families are declared" grep -q '^# TYPE lustre_client_access_operations_total counter' "$WORK/metrics"
kill -TERM "$UNIT"
wait "$UNIT"
les_eq "SIGTERM (systemctl stop): exit 0" 0 "$?"
les_eq "nothing written to the journal's stdout" 0 "$(wc -c <"$WORK/journal")"

start=$(date +%s.%N)
(unit "$WORK/usr/local/bin/lustre-ebpf-exporter" "$WORK/once" --once --drain-interval 1)
les_eq "--once --drain-interval 1: exit 0" 0 "$?"
(unit "$WORK/usr/local/bin/lustre-ebpf-exporter" "$WORK/dur" --duration 2)
les_eq "a bare --duration 2 (seconds): exit 0" 0 "$?"
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%d", b - a }')
les_true "both ended on time ($took s for 1 s and 2 s runs)" test "$took" -lt 30
les_done
