#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# A secret planted in the environments of traced processes (one started
# before the tool, found by the start-up scan; others after, through exec
# notices) never appears in any output: the record file, stderr at -vv,
# aggregated windows, the Prometheus endpoint. Allowlisted tags still do.

. "$(dirname "$0")/lib.sh"
les_init 59_secrets curl

M=$WORK/mnt
SECRET=pl4nted-$RANDOM$RANDOM-secret
les_testfs "$M"
echo data >"$M/f"

# Before the tool: learned by the scan of /proc/PID/environ.
env SLURM_JOB_ID=s-59 PROJECT=visible AWS_SECRET_ACCESS_KEY="$SECRET" \
	PROJECT_SECRET="$SECRET" bash -c 'sleep 5; read -r line <"$0"' "$M/f" &
EARLY=$!
sleep 0.2
les_true "control: the secret is in the early process's environment" \
	grep -q "$SECRET" "/proc/$EARLY/environ"

les_start "$WORK/out.jsonl" --mount "$M" -v -v --env-tag PROJECT --aggregate 1s --records \
	--prometheus 127.0.0.1:0 --stats-interval 1s
for i in 1 2 3; do
	env SLURM_JOB_ID=s-59 PROJECT=visible AWS_SECRET_ACCESS_KEY="$SECRET" \
		"SECRET_$SECRET=1" PASSWORD="$SECRET" cat "$M/f" >/dev/null
done
wait "$EARLY"
port=$(sed -n 's/.*metrics on port \([0-9]*\).*/\1/p' "$WORK/out.jsonl.err" | head -1)
[ -n "$port" ] || les_fail "no metrics port in stderr: $(cat "$WORK/out.jsonl.err")"
curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/metrics" || les_fail "cannot scrape metrics"
sleep 1.2
les_stop
les_eq "tool exit status" 0 "$LES_STATUS"

OUT=$WORK/out.jsonl
les_eq "the allowlisted tag is there (scan)" true \
	"$(les_jq "$OUT" '[.[] | select(.type=="access" and .comm=="bash" and .job_id=="s-59")] | length > 0 and all(.tags.PROJECT=="visible")')"
les_eq "the allowlisted tag is there (exec)" true \
	"$(les_jq "$OUT" '[.[] | select(.type=="access" and .comm=="cat" and .job_id=="s-59")] | length > 0 and all(.tags == {"PROJECT":"visible"})')"
les_eq "windows were written" true "$(les_jq "$OUT" '[.[] | select(.type=="window")] | length > 0')"
les_ge "stderr at -vv is not empty" 1 "$(wc -l <"$OUT.err")"
les_ge "metrics were scraped" 1 "$(wc -l <"$WORK/metrics")"
for f in "$OUT" "$OUT.err" "$WORK/metrics"; do
	if grep -q "$SECRET" "$f"; then
		les_fail "the secret appears in $f: $(grep -m1 -o ".\{40\}$SECRET.\{20\}" "$f")"
	fi
	les_pass "no secret in $(basename "$f")"
done
les_true "no variable name but the allowlisted one in any tags" \
	sh -c "! jq -r 'select(.tags) | .tags | keys[]' '$OUT' | grep -v '^PROJECT\$'"

les_done
