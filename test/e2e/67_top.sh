#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# --top in a real terminal (tmux, 80x24), on a FUSE mount this project did
# not write (bindfs): a writer and a reader of two jobs run inside one
# interval; the frame after it, grouped by process and by job through
# keys, shows the counts and bytes of the same run's per-op records (kept
# with -o); a sort key puts the writer first; the filter key leaves only one
# job; q ends it. --batch prints plain frames; --input replays the capture.

. "$(dirname "$0")/lib.sh"
les_init 67_top bindfs tmux python3

SRC=$WORK/src
M=$WORK/m
mkdir -p "$SRC" "$M"
bindfs "$SRC" "$M" || les_fail "bindfs failed"
les_track_mount "$M"
dd if=/dev/zero of="$SRC/in" bs=4k count=64 status=none
cp /bin/dd "$WORK/topwriter"
cp /bin/dd "$WORK/topreader"
S=les-top-$$
CAP=$WORK/cap.jsonl
trap 'tmux kill-session -t "$S" 2>/dev/null; _les_cleanup' EXIT

screen() { tmux capture-pane -p -t "$S"; }
# wait_screen REGEX: until the screen shows it (20 s at most).
wait_screen() {
	local i
	for i in $(seq 1 200); do
		screen | grep -qE -- "$1" && return 0
		sleep 0.1
	done
	les_fail "the screen never showed /$1/: $(screen)"
}
clock() { screen | sed -n '1s/.*--top  \([0-9:]*\) .*/\1/p'; }
# next_frame: until the frame's clock changes.
next_frame() {
	local c0 i
	c0=$(clock)
	for i in $(seq 1 100); do
		[ "$(clock)" != "$c0" ] && return 0
		sleep 0.1
	done
	les_fail "no new frame after $c0"
}
workload() {
	SLURM_JOB_ID=601 "$WORK/topwriter" if=/dev/zero of="$M/out" bs=4k count=48 status=none
	SLURM_JOB_ID=602 "$WORK/topreader" if="$M/in" of=/dev/null bs=4k count=64 status=none
}

tmux new-session -d -s "$S" -x 80 -y 24 \
	"$LES_BIN --top --interval 3s -m '$M' -o '$CAP' 2>'$WORK/top.err'; sleep 30"
wait_screen '^lustre-ebpf-stream --top  [0-9:]+ '
next_frame
workload
next_frame
tmux send-keys -t "$S" p
wait_screen '^process '
screen >"$WORK/by-process.txt"
tmux send-keys -t "$S" j
wait_screen '^job '
screen >"$WORK/by-job.txt"
tmux send-keys -t "$S" w
wait_screen 'sorted by write MB/s'
screen >"$WORK/by-write.txt"

# The screen against the records: per row, ops/s x seconds = the records'
# count (META non-data ops, DATA reads and writes), MB/s x seconds = bytes.
cat >"$WORK/check.py" <<'PY'
import json, re, sys
screen, cap, field = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
secs = float(re.search(r"\((\d+\.\d) s\)", screen).group(1))
rows = {}
for line in screen.splitlines()[4:]:
    p = line.split()
    if len(p) >= 9:
        rows[p[0]] = p
want = {}
for l in open(cap):
    r = json.loads(l)
    if r.get("type") != "access":
        continue
    key = r.get(field) or "(no job)"
    w = want.setdefault(key, [0, 0, 0, 0])
    data = r["op"] in ("read", "write")
    w[1 if data else 0] += 1
    if r["op"] == "read":
        w[2] += r.get("bytes", 0)
    if r["op"] == "write":
        w[3] += r.get("bytes", 0)
bad = []
for key in ("topwriter", "topreader") if field == "process" else ("601", "602"):
    if key not in rows:
        bad.append(f"no row {key}")
        continue
    p, w = rows[key], want.get(key, [0, 0, 0, 0])
    shown = [round(float(p[1]) * secs), round(float(p[2]) * secs),
             float(p[3]) * secs * 1e6, float(p[4]) * secs * 1e6]
    if shown[0] != w[0] or shown[1] != w[1]:
        bad.append(f"{key}: ops shown {shown[:2]}, records {w[:2]}")
    for i in (2, 3):
        if abs(shown[i] - w[i]) > 0.006 * secs * 1e6:
            bad.append(f"{key}: bytes shown {shown[i]:.0f}, records {w[i]}")
print("; ".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PY

T2=$(date +%s%N)
tmux send-keys -t "$S" f
wait_screen '^filter '
tmux send-keys -t "$S" 601 Enter
next_frame
workload
next_frame
screen >"$WORK/filtered.txt"
tmux send-keys -t "$S" q
for _ in $(seq 1 100); do
	[ -s "$CAP" ] && tail -n 1 "$CAP" | jq -e '.type == "stats" and .final' >/dev/null 2>&1 && break
	sleep 0.1
done
les_true "q ends the tool, which writes its final stats" \
	bash -c "tail -n 1 '$CAP' | jq -e '.type == \"stats\" and .final'"

# The first run's records: those that ended before the filter was set.
python3 - "$CAP" "$WORK/first.jsonl" "$T2" <<'PY'
import datetime, json, sys
cut = int(sys.argv[3])
out = []
for l in open(sys.argv[1]):
    r = json.loads(l)
    ts = r.get("ts", "")
    sec, _, frac = ts.rstrip("Z").partition(".")
    epoch = datetime.datetime.strptime(sec, "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=datetime.timezone.utc).timestamp()
    if int(epoch) * 10**9 + int((frac + "000000000")[:9]) < cut:
        out.append(l)
open(sys.argv[2], "w").write("".join(out))
PY
les_true "by process: the rows' ops and bytes are the records'" \
	python3 "$WORK/check.py" "$WORK/by-process.txt" "$WORK/first.jsonl" process
les_true "by job: the rows' ops and bytes are the records'" \
	python3 "$WORK/check.py" "$WORK/by-job.txt" "$WORK/first.jsonl" job_id
les_eq "sorted by write MB/s: the writer's job first" 601 \
	"$(sed -n '5p' "$WORK/by-write.txt" | awk '{ print $1 }')"
les_eq "every line fits 80 columns" "" "$(awk 'length > 80' "$WORK/by-process.txt")"
les_true "filter 601: its row shown" grep -q '^601 ' "$WORK/filtered.txt"
les_true "filter 601: no other job" bash -c "! grep -q '^602 ' '$WORK/filtered.txt'"

# Replay: the same capture through --top --input, frames of 1 s at once
# (--batch); summed over its frames, each job's row has the records' counts
# and bytes, as the live rows did. A gzipped capture replays the same.
"$LES_BIN" --top --input "$CAP" --interval 1s --batch 100000 >"$WORK/replay.txt" 2>"$WORK/replay.err"
les_eq "--input: exit 0" 0 "$?"
gzip -c "$CAP" >"$CAP.gz"
"$LES_BIN" --top --input "$CAP.gz" --interval 1s --batch 100000 >"$WORK/replay-gz.txt" 2>"$WORK/replay-gz.err"
les_eq "--input FILE.gz: exit 0" 0 "$?"
les_true "--input FILE.gz: the same frames" cmp -s "$WORK/replay.txt" "$WORK/replay-gz.txt"
cat >"$WORK/sum.py" <<'PY'
import json, re, sys
text, cap = open(sys.argv[1]).read(), sys.argv[2]
shown, frames = {}, 0
for frame in text.split("lustre-ebpf-stream --top ")[1:]:
    frames += 1
    secs = float(re.search(r"\((\d+\.\d) s\)", frame).group(1))
    for line in frame.splitlines()[4:]:
        p = line.split()
        if len(p) >= 9:
            s = shown.setdefault(p[0], [0, 0, 0.0, 0.0])
            s[0] += round(float(p[1]) * secs)
            s[1] += round(float(p[2]) * secs)
            s[2] += float(p[3]) * secs * 1e6
            s[3] += float(p[4]) * secs * 1e6
want = {}
for l in open(cap):
    r = json.loads(l)
    if r.get("type") != "access":
        continue
    w = want.setdefault(r.get("job_id") or "(no job)", [0, 0, 0, 0])
    w[1 if r["op"] in ("read", "write") else 0] += 1
    w[2] += r.get("bytes", 0) if r["op"] == "read" else 0
    w[3] += r.get("bytes", 0) if r["op"] == "write" else 0
bad = []
for job in ("601", "602"):
    s, w = shown.get(job), want.get(job)
    if not s or not w:
        bad.append(f"job {job}: shown {s}, records {w}")
        continue
    if s[:2] != w[:2]:
        bad.append(f"job {job}: ops shown {s[:2]}, records {w[:2]}")
    for i in (2, 3):
        if abs(s[i] - w[i]) > 5000 * frames:
            bad.append(f"job {job}: bytes shown {s[i]:.0f}, records {w[i]}")
print("; ".join(bad) if bad else f"ok, {frames} frames")
sys.exit(1 if bad else 0)
PY
les_true "--input: per job, the frames' sums are the capture's records" \
	python3 "$WORK/sum.py" "$WORK/replay.txt" "$CAP"
les_true "--input needs --top" bash -c "! '$LES_BIN' --input '$CAP' 2>/dev/null"
les_eq "--input: one line on stderr, nothing skipped" \
	"1 skipped 0 malformed, 0 over 262144 bytes" \
	"$(wc -l <"$WORK/replay.err") $(grep -o 'skipped [0-9]* malformed, [0-9]* over [0-9]* bytes' "$WORK/replay.err")"
# The same capture, a garbage line and a record 500 years on: one gap frame
# and one frame more, the garbage counted.
{ cat "$CAP"; echo 'not json'; jq -c 'select(.type == "access")' "$CAP" | tail -n 1 |
	sed 's/"ts":"20\([0-9][0-9]\)/"ts":"25\1/'; } >"$WORK/gap.jsonl"
"$LES_BIN" --top --input "$WORK/gap.jsonl" --interval 1s --batch 100000 >"$WORK/gap.txt" 2>"$WORK/gap.err"
les_eq "--input over a 500-year gap: exit 0" 0 "$?"
les_eq "--input over a 500-year gap: two frames more" \
	"$(($(grep -c '^lustre-ebpf-stream --top ' "$WORK/replay.txt") + 2))" \
	"$(grep -c '^lustre-ebpf-stream --top ' "$WORK/gap.txt")"
les_eq "--input over a 500-year gap: one gap frame" 1 "$(grep -c '^gap: [0-9]* s without records$' "$WORK/gap.txt")"
les_true "--input: the garbage line counted" grep -q 'skipped 1 malformed' "$WORK/gap.err"

# --batch: N plain frames on stdout, then exit 0.
"$LES_BIN" --top --batch 2 --interval 1s -m "$M" >"$WORK/batch.txt" 2>"$WORK/batch.err"
les_eq "--batch 2: exit 0" 0 "$?"
les_eq "--batch 2: two frames" 2 "$(grep -c '^lustre-ebpf-stream --top ' "$WORK/batch.txt")"
les_done
