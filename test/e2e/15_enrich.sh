#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Enrichment end to end: job, user name, actor class and allowlisted tags of
# a batch workload run as another user; 300 one-shot processes that all
# keep their job; pid reuse; --jobid-name; process name normalization; and a
# secret in the environment that never appears in any output.

. "$(dirname "$0")/lib.sh"
les_init 15_enrich setpriv

M=$WORK/mnt
SECRET=s3cr3t-$RANDOM-token-$RANDOM
les_testfs "$M"
chmod 1777 "$M"
echo hello >"$M/f"
cp /bin/cat "$WORK/worker-3"

les_start "$WORK/out.jsonl" --mount "$M" --env-tag PROJECT --env-tag MISSING \
	--process-name-strip-suffix --actor-rule client_worker=worker-*

env SLURM_JOB_ID=4242 PROJECT=climate SECRET_TOKEN="$SECRET" \
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
	dd if=/dev/zero of="$M/batch" bs=4k count=8 status=none || les_fail "dd failed"
for i in $(seq 1 300); do
	env SLURM_JOB_ID=77 cat "$M/f" >/dev/null
done
"$WORK/worker-3" "$M/f" >/dev/null

# pid reuse: the same pid, two processes, two jobs.
reuse_ok=0
for attempt in 1 2 3 4 5; do
	last=$(cat /proc/sys/kernel/ns_last_pid)
	echo "$last" >/proc/sys/kernel/ns_last_pid
	env SLURM_JOB_ID=reuse-a sh -c 'echo $$ >"$0"; exec cat "$1" >/dev/null' "$WORK/pid-a" "$M/f"
	echo "$last" >/proc/sys/kernel/ns_last_pid
	env SLURM_JOB_ID=reuse-b sh -c 'echo $$ >"$0"; exec cat "$1" >/dev/null' "$WORK/pid-b" "$M/f"
	if [ "$(cat "$WORK/pid-a")" = "$(cat "$WORK/pid-b")" ]; then
		reuse_ok=1
		break
	fi
done
sleep 0.5
les_stop
les_eq "tool exit status" 0 "$LES_STATUS"
OUT=$WORK/out.jsonl
q() { les_jq "$OUT" "$1"; }

les_eq "dd records: job 4242 from env" true \
	"$(q '[.[] | select(.type=="access" and .comm=="dd" and .op=="write")] | length == 8 and all(.job_id=="4242" and .job_source=="env")')"
les_eq "dd records: username nobody" true \
	"$(q '[.[] | select(.type=="access" and .comm=="dd")] | length > 0 and all(.username=="nobody")')"
les_eq "dd records: actor batch_job" true \
	"$(q '[.[] | select(.type=="access" and .comm=="dd")] | length > 0 and all(.actor_type=="batch_job")')"
les_eq "dd records: tags hold PROJECT only" '{"PROJECT":"climate"}' \
	"$(q '[.[] | select(.type=="access" and .comm=="dd")][0].tags | tojson')"
les_eq "dd's FUSE requests carry the job too" true \
	"$(q '[.[] | select(.type=="rpc" and .comm=="dd")] | length > 0 and all(.job_id=="4242" and .username=="nobody")')"
les_eq "300 one-shot cats: 300 read records with job 77" 300 \
	"$(q '[.[] | select(.type=="access" and .op=="read" and .comm=="cat" and .bytes > 0 and .job_id=="77")] | length')"
les_eq "no read record of cat without a job" 0 \
	"$(q '[.[] | select(.type=="access" and .comm=="cat" and .job_id==null)] | length')"
les_eq "records of cat as root: username root, actor batch_job" true \
	"$(q '[.[] | select(.type=="access" and .comm=="cat" and .job_id=="77")] | length > 0 and all(.username=="root" and .actor_type=="batch_job")')"
les_eq "worker-3: process normalized to worker" true \
	"$(q '[.[] | select(.type=="access" and .comm=="worker-3")] | length > 0 and all(.process=="worker")')"
les_eq "--actor-rule client_worker=worker-* applies" true \
	"$(q '[.[] | select(.type=="access" and .comm=="worker-3")] | length > 0 and all(.actor_type=="client_worker")')"
if [ "$reuse_ok" = 1 ]; then
	PID=$(cat "$WORK/pid-a")
	les_eq "pid reuse: the first process keeps its job" true \
		"$(q "[.[] | select(.type==\"access\" and .pid==$PID and .op==\"read\" and .bytes > 0)] | .[0].job_id == \"reuse-a\"")"
	les_eq "pid reuse: the second process gets its own job" true \
		"$(q "[.[] | select(.type==\"access\" and .pid==$PID and .op==\"read\" and .bytes > 0)] | .[-1].job_id == \"reuse-b\"")"
else
	les_fail "could not make two processes share a pid in 5 attempts"
fi
if grep -q "$SECRET" "$OUT" "$OUT.err"; then
	les_fail "the secret appears in the output"
fi
les_pass "the secret appears nowhere in the output or the log"

# --jobid-name, Lustre's jobid_name codes.
les_start "$WORK/jobname.jsonl" --mount "$M" --jobid-name '%j.%e.%u'
env SLURM_JOB_ID=9 cat "$M/f" >/dev/null
sleep 0.3
les_stop
les_eq "--jobid-name: tool exit status" 0 "$LES_STATUS"
les_eq "--jobid-name %j.%e.%u" "9.cat.0" \
	"$(les_jq "$WORK/jobname.jsonl" '[.[] | select(.type=="access" and .comm=="cat")][0].job_id')"
les_eq "bad --jobid-name is a usage error" 2 "$("$LES_BIN" --jobid-name '%' >/dev/null 2>&1; echo $?)"
les_eq "bad --env-tag is a usage error" 2 "$("$LES_BIN" --env-tag 'A=B' >/dev/null 2>&1; echo $?)"
les_done
