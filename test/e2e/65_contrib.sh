#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# contrib/: the Grafana dashboard is valid JSON whose panels query the
# metric families a running lustre-ebpf-stream serves (per job, user and
# process: ops, bytes, latency percentiles, RPC wait), every query parses
# as PromQL; the Kubernetes DaemonSet parses and has what the tool needs;
# the example config files read back; the logrotate snippet signals HUP.
# Metrics bind localhost in the examples and the pod's IP in the DaemonSet.

. "$(dirname "$0")/lib.sh"
les_init 65_contrib curl promtool
PY=/usr/bin/python3
$PY -c 'import yaml' 2>/dev/null || les_fail "python3-yaml not installed (scripts/install-deps)"
C=$LES_SRC/contrib
DASH=$C/grafana/lustre-ebpf-stream.json

# --- Grafana ---------------------------------------------------------------------
les_true "dashboard is JSON with panels" jq -e '.panels | length > 10' "$DASH"
jq -r '.. | objects | select(has("expr")) | .expr' "$DASH" >"$WORK/exprs"
les_ge "dashboard queries" 20 "$(wc -l <"$WORK/exprs")"
want() { # want DESCRIPTION REGEX: some query matches
	grep -Eq -- "$2" "$WORK/exprs" || les_fail "no panel query for $1 (/$2/)"
	les_pass "panel query: $1"
}
want "ops by job" 'sum by \(slurm_job_id\) \(rate\(\{__name__=~"lustre_client_access_operations_total'
want "ops by user" 'sum by \(username\) \(rate\(\{__name__=~"lustre_client_access_operations_total'
want "ops by process" 'sum by \(process\) \(rate\(\{__name__=~"lustre_client_access_operations_total'
want "bytes by job" 'sum by \(slurm_job_id, op\) \(rate\(\{__name__=~"lustre_client_data_bytes_total'
want "bytes by user" 'sum by \(username, op\) \(rate\(\{__name__=~"lustre_client_data_bytes_total'
want "bytes by process" 'sum by \(process, op\) \(rate\(\{__name__=~"lustre_client_data_bytes_total'
want "latency p99" 'histogram_quantile\(0\.99, sum by \(le, op\) \(rate\(\{__name__=~"lustre_client_access_duration_seconds_bucket'
want "latency p99 by job" 'histogram_quantile\(0\.99, sum by \(le, slurm_job_id\)'
want "RPC wait percentiles" 'histogram_quantile\(0\.99, sum by \(le, op\) \(rate\(\{__name__=~"lustre_client_rpc_wait_duration_seconds_bucket'
want "RPC wait by job" 'sum by \(slurm_job_id\) \(rate\(\{__name__=~"lustre_client_rpc_wait_duration_seconds_sum'

# Every query is PromQL: checked as recording rules with the variables filled in.
les_dashboard_rules "$WORK/exprs" >"$WORK/rules.yml"
les_true "every dashboard query parses (promtool check rules)" promtool check rules "$WORK/rules.yml"

# The families the dashboard uses are those the tool serves.
M=$WORK/mnt
les_testfs "$M"
# The bracketed form the DaemonSet gives its pod IP in, IPv4 here.
les_start "$WORK/prom.jsonl" --mount "$M" --prometheus "[127.0.0.1]:0" --stats-interval 0
PORT=$(sed -n 's/.*metrics on port \([0-9]*\).*/\1/p' "$WORK/prom.jsonl.err" | head -n 1)
[ -n "$PORT" ] || les_fail "no metrics port in: $(cat "$WORK/prom.jsonl.err")"
dd if=/dev/zero of="$M/f" bs=4k count=4 status=none
cat "$M/f" >/dev/null
sleep 1.5
curl -sf "http://127.0.0.1:$PORT/metrics" >"$WORK/metrics" || les_fail "scrape failed"
les_stop
les_eq "tool exit status" 0 "$LES_STATUS"
grep -o '^# TYPE [a-z_]*' "$WORK/metrics" | awk '{ print $3 }' | sort -u >"$WORK/served"
# The Kafka families are served with --kafka-brokers only: 72_alert_rules
# checks them on an instance that has it.
grep -o 'lustre_[a-z_]*' "$WORK/exprs" | sed -E 's/_(bucket|sum|count)$//' |
	grep -v '^lustre_ebpf_stream_kafka_' | sort -u >"$WORK/used"
les_eq "every metric family of the dashboard is served (but Kafka's)" "" \
	"$(comm -23 "$WORK/used" "$WORK/served" | paste -sd' ')"
for label in slurm_job_id username process op; do
	grep -q "^lustre_ebpf_stream_client_access_operations_total{.*$label=" "$WORK/metrics" ||
		les_fail "label $label not served"
done
les_pass "labels slurm_job_id, username, process, op are served"

# --- Kubernetes --------------------------------------------------------------------
cat >"$WORK/k8s.py" <<'PYEOF'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
kinds = {d["kind"]: d for d in docs}
ds = kinds["DaemonSet"]
spec = ds["spec"]["template"]["spec"]
assert spec.get("hostPID") is True, "hostPID"
c = spec["containers"][0]
sc = c["securityContext"]
assert sc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem"
caps = set(sc["capabilities"]["add"])
for need in ("BPF", "PERFMON", "SYS_ADMIN", "SYS_PTRACE", "DAC_READ_SEARCH"):
    assert need in caps, "capability " + need
mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
for need in ("/sys/kernel/btf", "/sys/kernel/tracing", "/sys/fs/cgroup"):
    assert need in mounts, "mount " + need
assert not mounts["/sys/kernel/tracing"].get("readOnly"), "tracefs must be writable (kretprobes)"
paths = {v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v}
for need in ("/sys/kernel/btf", "/sys/kernel/tracing", "/sys/fs/cgroup"):
    assert need in paths, "hostPath " + need
# Every volume is mounted (no host path handed in and never read).
names = {m["name"] for m in c["volumeMounts"]}
assert all(v["name"] in names for v in spec["volumes"]), "a volume no container mounts"
ns = kinds["Namespace"]["metadata"].get("labels", {})
assert ns.get("pod-security.kubernetes.io/enforce") == "privileged", "Pod Security label"
conf = kinds["ConfigMap"]["data"]["lustre-ebpf-stream.conf"]
assert "mountinfo = /proc/1/mountinfo" in conf, "the host's mount table"
# Metrics on the pod's IP only: not in the config (no bind to every address).
assert not any(l.strip().startswith("prometheus") for l in conf.splitlines()), "prometheus in conf"
args = c["args"]
assert args[args.index("--prometheus") + 1] == "[$(POD_IP)]:9108", "--prometheus [$(POD_IP)]:9108"
env = {e["name"]: e for e in c.get("env", [])}
assert env["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP", "POD_IP from status.podIP"
# host: the node's name (in a pod gethostname() is the pod's).
assert args[args.index("--hostname") + 1] == "$(NODE_NAME)", "--hostname $(NODE_NAME)"
assert env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName", "NODE_NAME from spec.nodeName"
open(sys.argv[2], "w").write(kinds["ConfigMap"]["data"]["lustre-ebpf-stream.conf"])
print("ok")
PYEOF
les_true "DaemonSet: hostPID, capabilities, BTF, writable tracefs, host cgroups, Pod Security label, metrics on the pod IP, host the node's name" \
	$PY "$WORK/k8s.py" "$C/k8s/daemonset.yaml" "$WORK/k8s.conf"
KV=${LES_CACHE:-/var/cache/lustre-ebpf-stream}/venv/bin/kubernetes-validate
[ -x "$KV" ] || les_fail "kubernetes-validate missing (scripts/install-deps)"
les_true "kubernetes-validate --strict: every resource valid against the Kubernetes schemas" \
	"$KV" --strict --quiet "$C/k8s/daemonset.yaml"
les_true "the DaemonSet's config file reads back" "$LES_BIN" --config "$WORK/k8s.conf" --print-config

# The ServiceMonitor: its Service selects the DaemonSet's pods and names
# their metrics port; the ServiceMonitor selects that Service and port.
cat >"$WORK/sm.py" <<'PYEOF'
import sys, yaml
ds = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "DaemonSet"][0]
docs = {d["kind"]: d for d in yaml.safe_load_all(open(sys.argv[2])) if d}
svc, sm = docs["Service"], docs["ServiceMonitor"]
pod_labels = ds["spec"]["template"]["metadata"]["labels"]
assert all(pod_labels.get(k) == v for k, v in svc["spec"]["selector"].items()), "Service selects the pods"
ports = [p["name"] for p in ds["spec"]["template"]["spec"]["containers"][0]["ports"]]
sport = svc["spec"]["ports"][0]
assert sport["targetPort"] in ports, "Service targets the container's port by name"
assert svc["spec"].get("clusterIP") == "None", "headless Service"
sel = sm["spec"]["selector"]["matchLabels"]
assert all(svc["metadata"]["labels"].get(k) == v for k, v in sel.items()), "ServiceMonitor selects the Service"
assert svc["metadata"]["namespace"] in sm["spec"]["namespaceSelector"]["matchNames"], "namespace"
ep = sm["spec"]["endpoints"][0]
assert ep["port"] == sport["name"] and ep["path"] == "/metrics", "endpoint port and path"
assert any(r.get("sourceLabels") == ["__meta_kubernetes_pod_node_name"] and r["targetLabel"] == "node"
           for r in ep["relabelings"]), "node label from the pod's node"
yaml.safe_dump(svc, open(sys.argv[3], "w"))
print("ok")
PYEOF
les_true "ServiceMonitor: its headless Service selects the DaemonSet's pods and metrics port; it selects the Service" \
	$PY "$WORK/sm.py" "$C/k8s/daemonset.yaml" "$C/k8s/servicemonitor.yaml" "$WORK/svc.yaml"
les_true "kubernetes-validate --strict: the Service" "$KV" --strict --quiet "$WORK/svc.yaml"

# --- config example and logrotate ------------------------------------------------------
les_true "contrib config example reads back" \
	"$LES_BIN" --config "$C/lustre-ebpf-stream.conf.example" --print-config
grep -q '^output = /var/log/lustre-ebpf-stream/' "$WORK/check.out" ||
	les_fail "the example's output is not under /var/log/lustre-ebpf-stream"
les_true "contrib config example: metrics on localhost" \
	grep -qx '#prometheus = 127.0.0.1:9108' "$C/lustre-ebpf-stream.conf.example"
les_true "logrotate: rotates the output directory's plain captures" \
	grep -qx '/var/log/lustre-ebpf-stream/\*.jsonl {' "$C/logrotate/lustre-ebpf-stream"
les_true "logrotate: ... and its gzip captures, not compressed again" \
	bash -c "sed -n '/^\/var\/log\/lustre-ebpf-stream\/\*\.jsonl\.gz {/,/^}/p' '$C/logrotate/lustre-ebpf-stream' | grep -qx '[[:space:]]*nocompress'"
les_true "logrotate: systemctl reload (the unit's ExecReload sends SIGHUP), no copytruncate" \
	bash -c "grep -q 'systemctl reload lustre-ebpf-stream.service' '$C/logrotate/lustre-ebpf-stream' &&
		! grep -q '^[[:space:]]*copytruncate' '$C/logrotate/lustre-ebpf-stream'"
# RHEL 8's systemd 239 has no --kill-whom; a failure must not be hidden.
les_true "logrotate: no --kill-whom, no '|| true'" \
	bash -c "! grep -qE 'kill-whom|\\|\\| *true' '$C/logrotate/lustre-ebpf-stream'"
if command -v logrotate >/dev/null; then
	les_true "logrotate -d accepts the snippet" logrotate -d "$C/logrotate/lustre-ebpf-stream"
fi

les_done
