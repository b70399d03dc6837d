#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The container image, built here (scripts/container-image: a Debian 12
# base from Debian's packages, no registry) and run under podman as the
# DaemonSet runs it: privileged, the host's PID namespace and network,
# /sys and tracefs, the host's mount table (--mountinfo /proc/1/mountinfo)
# and the node's name (--hostname). Processes of the host read a FUSE mount
# of the host; each one's records must carry its own pid, its job and the
# node's name. /healthz answers; SIGTERM (podman stop) ends it with 0.
# The node has no network filesystem when the container starts (its mount
# table, a file of the host's without them, bound in by directory): the
# tool waits, ready, and observes the FUSE mount made afterwards when the
# table (replaced, as /proc/1/mountinfo changes) shows it.
#
# podman's runtime here: runc (crun refuses a host with cgroup v1 and v2
# side by side), and the limits of podman's own process (it keeps 32768
# processes; without CAP_SYS_RESOURCE a container cannot have more).

. "$(dirname "$0")/../e2e/lib.sh"
les_init container.podman podman mmdebstrap runc curl

IMAGE=$("$LES_SRC/scripts/container-image" localhost/lustre-ebpf-stream:test) ||
	les_fail "the image did not build"
les_pass "image built ($IMAGE)"
NAME=les-test-$$
PORT=$((20000 + $$ % 20000))
M=$WORK/mnt
NODE=$WORK/node
mkdir -p "$NODE"
grep -vE ' - (lustre|nfs4?|fuse(\.[^ ]*)?) ' /proc/1/mountinfo >"$NODE/mountinfo"
trap 'podman rm -f "$NAME" >/dev/null 2>&1; _les_cleanup' EXIT

podman run --name "$NAME" --runtime runc --ulimit nofile="$(ulimit -Hn)":"$(ulimit -Hn)" \
	--ulimit nproc=32768:32768 --privileged --pid=host --network=host \
	-v /sys:/sys -v /sys/kernel/tracing:/sys/kernel/tracing -v "$NODE:/node:ro" "$IMAGE" \
	--mountinfo /node/mountinfo --hostname node-a --prometheus "127.0.0.1:$PORT" -v \
	>"$WORK/out.jsonl" 2>"$WORK/err" &
PODMAN_PID=$!
les_wait_ready "$PODMAN_PID" "$WORK/err" 60
les_pass "the container attached its probes"
les_true "no network filesystem: it says it waits" \
	grep -q "no Lustre, NFS or FUSE mount found: waiting for one to be mounted" "$WORK/err"
les_eq "no network filesystem: /healthz answers" 200 \
	"$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/healthz")"
kill -0 "$PODMAN_PID" 2>/dev/null || les_fail "the container ended: $(tail -3 "$WORK/err")"

les_testfs "$M"
echo data >"$M/f"
cp /proc/1/mountinfo "$NODE/mountinfo.new"
mv "$NODE/mountinfo.new" "$NODE/mountinfo"
for _ in $(seq 50); do
	grep -q '"mount_added"' "$WORK/out.jsonl" && break
	sleep 0.2
done
les_eq "the mount made afterwards is observed" "$M" \
	"$(jq -r 'select(.type == "notice" and .notice == "mount_added") | .mount' "$WORK/out.jsonl" |
		grep -Fx "$M")"

pids=()
for j in 1 2 3; do
	SLURM_JOB_ID=77$j cat "$M/f" >/dev/null &
	pids+=("$!:77$j")
	wait "$!"
done
les_eq "/healthz answers" 200 "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/healthz")"
sleep 2
podman stop -t 20 "$NAME" >/dev/null
wait "$PODMAN_PID"
les_eq "SIGTERM ends it with 0 (podman stop)" 0 "$?"

for pj in "${pids[@]}"; do
	pid=${pj%%:*} job=${pj#*:}
	les_eq "pid $pid: its read, with its job and the node's name" "read $job node-a $M" \
		"$(jq -r --argjson p "$pid" 'select(.type == "access" and .pid == $p and .op == "read")
			| "\(.op) \(.job_id) \(.host) \(.mount)"' "$WORK/out.jsonl" | head -1)"
done
les_eq "no record of another node name" 0 \
	"$(jq -r 'select(.host != null and .host != "node-a")' "$WORK/out.jsonl" | wc -l)"
les_done
