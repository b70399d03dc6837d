#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Filters and daemon conventions on a real mount:
#  - --op and --comm (from a config file and the command line), --intent
#    and --job: only the matching records, the others counted as filtered;
#  - --print-config and config file errors;
#  - SIGHUP reopens the output file (logrotate), sd_notify READY/STOPPING;
#  - on a terminal, a status line that is erased at exit and a summary;
#    neither when stderr is not a terminal.

. "$(dirname "$0")/lib.sh"
les_init 62_filters_daemon script python3

M=$WORK/mnt
les_testfs "$M"
q() { les_jq "$1" "$2"; }
final() { q "$1" "[.[] | select(.type==\"stats\" and .final)][0].$2"; }

# --- config file and --print-config (no BPF) --------------------------------
cat >"$WORK/les.conf" <<CONF
# filters for run 1
mount = $M
op = write,mkdir    # the ops
summary
stats-interval = 0
CONF
"$LES_BIN" --config "$WORK/les.conf" --comm dd --print-config >"$WORK/printed.conf" ||
	les_fail "--print-config failed"
les_eq "--print-config: file settings, then the command line's" \
	"mount = $M|op = write,mkdir|summary|stats-interval = 0|comm = dd" \
	"$(grep -v '^#' "$WORK/printed.conf" | paste -sd '|')"
"$LES_BIN" --config "$WORK/printed.conf" --print-config >"$WORK/printed2.conf"
les_eq "--print-config of its own output: exit 0" 0 $?
les_eq "--print-config output reads back as a config file" "" \
	"$(diff <(grep -v '^#' "$WORK/printed.conf") <(grep -v '^#' "$WORK/printed2.conf"))"
printf 'mount = %s\n\nopp = write\n' "$M" >"$WORK/bad.conf"
"$LES_BIN" --config "$WORK/bad.conf" 2>"$WORK/bad.err"
les_eq "unknown option in the file: exit 2" 2 $?
les_true "error names FILE:LINE and the option" \
	grep -q "bad.conf:3: unknown option 'opp'" "$WORK/bad.err"

# --- run 1: --op write,mkdir (file) and --comm dd (command line) -------------
OUT1=$WORK/run1.jsonl
les_start "$OUT1" --config "$WORK/les.conf" --comm dd
dd if=/dev/zero of="$M/f1" bs=4k count=8 status=none
mkdir "$M/d1"
stat "$M/f1" >/dev/null
cat "$M/f1" >/dev/null
les_stop
les_eq "run 1: exit 0" 0 "$LES_STATUS"
les_eq "run 1: only dd's writes (access)" "write dd 8" \
	"$(q "$OUT1" '[.[] | select(.type=="access")] | "\(map(.op) | unique | join(",")) \(map(.comm) | unique | join(",")) \(length)"')"
les_eq "run 1: requests serving writes only" "write" \
	"$(q "$OUT1" '[.[] | select(.type=="rpc") | .op] | unique | join(",")')"
les_ge "run 1: the rest counted as filtered in the kernel" 5 "$(final "$OUT1" filtered_kernel)"
les_true "run 1: --summary in the file prints a summary (stderr not a tty)" \
	grep -q "summary: .* 16 records" "$OUT1.err"

# --- run 2: --intent namespace_mutation --job 4242 ---------------------------
OUT2=$WORK/run2.jsonl
les_start "$OUT2" --mount "$M" --intent namespace_mutation --job 4242 --stats-interval 0
SLURM_JOB_ID=4242 mkdir "$M/j1"
SLURM_JOB_ID=777 mkdir "$M/j2"
SLURM_JOB_ID=4242 dd if=/dev/zero of="$M/f2" bs=4k count=2 status=none
SLURM_JOB_ID=4242 rmdir "$M/j1"
les_stop
les_eq "run 2: exit 0" 0 "$LES_STATUS"
les_eq "run 2: access ops of job 4242's namespace mutations" "mkdir,rmdir" \
	"$(q "$OUT2" '[.[] | select(.type=="access") | .op] | unique | join(",")')"
les_eq "run 2: every record is job 4242's" true \
	"$(q "$OUT2" '[.[] | select(.type=="access" or .type=="rpc") | .job_id == "4242"] | all')"
les_ge "run 2: job 777's mkdir counted as filtered in userspace" 1 \
	"$(final "$OUT2" filtered_userspace)"
les_eq "run 2: produced == emitted + dropped + filtered (kernel and userspace)" \
	"$(final "$OUT2" produced_kernel)" \
	"$(q "$OUT2" '[.[] | select(.type=="stats" and .final)][0] | .emitted + .dropped_kernel +
		.dropped_userspace + .filtered_kernel + .filtered_userspace')"
les_eq "run 2: no summary when stderr is not a terminal" 0 \
	"$(grep -c 'summary:' "$OUT2.err")"

# --- run 3: SIGHUP reopens the output; sd_notify ------------------------------
SOCK=$WORK/notify.sock
python3 - "$SOCK" >"$WORK/notify.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(60)
while True:
    msg = s.recv(4096).decode()
    print(msg, flush=True)
    if "STOPPING=1" in msg:
        break
PY
NOTIFY_PID=$!
for _ in $(seq 1 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
OUT3=$WORK/run3.jsonl
NOTIFY_SOCKET=$SOCK les_start "$OUT3" --mount "$M" --stats-interval 0
# READY=1 follows the "probes attached" line les_start waits for.
for _ in $(seq 1 50); do grep -qx "READY=1" "$WORK/notify.log" && break; sleep 0.1; done
les_true "READY=1 sent once attached" grep -qx "READY=1" "$WORK/notify.log"
mkdir "$M/before"
sleep 0.3
mv "$OUT3" "$OUT3.1"
kill -HUP "$LES_PID"
sleep 0.5
mkdir "$M/after"
les_stop
wait "$NOTIFY_PID"
les_eq "run 3: exit 0 after SIGHUP" 0 "$LES_STATUS"
les_true "STOPPING=1 sent at exit" grep -qx "STOPPING=1" "$WORK/notify.log"
les_eq "rotated file has the records from before SIGHUP" 1 \
	"$(q "$OUT3.1" '[.[] | select(.type=="access" and .op=="mkdir")] | length')"
les_eq "reopened file has the records from after" 1 \
	"$(q "$OUT3" '[.[] | select(.type=="access" and .op=="mkdir")] | length')"
les_eq "reopened file ends with the final stats" true "$(tail -n 1 "$OUT3" | jq '.final')"

# --- run 4: on a terminal, status line and summary ----------------------------
( sleep 2; for i in $(seq 1 20); do stat "$M" >/dev/null; done ) &
script -qec "$LES_BIN --mount $M --duration 4s -o $WORK/run4.jsonl" "$WORK/tty.log" >/dev/null
wait
les_true "status line with elapsed and remaining time" \
	grep -aq $'\r[0-9.]*s elapsed, [0-9.]*s left | [0-9]* records | [0-9]*/s | 0 dropped\e\[K' "$WORK/tty.log"
les_true "status line erased before the summary" \
	grep -aq $'\r\e\[Klustre-ebpf-stream: summary: ' "$WORK/tty.log"
les_true "summary: records by type and op, top jobs and processes" \
	grep -aq "top processes by access latency:" "$WORK/tty.log"
les_eq "no status line when stderr is not a terminal" 0 \
	"$(cat "$OUT1.err" "$OUT2.err" | grep -c $'\e\\[K')"

les_done
