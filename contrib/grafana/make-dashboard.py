#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Writes lustre-ebpf-stream.json, the Grafana dashboard of the tool's
# --prometheus families (docs/prometheus.md, "Dashboard"):
#   python3 contrib/grafana/make-dashboard.py > contrib/grafana/lustre-ebpf-stream.json
# A panel is a row of the tables below; every selector comes from one
# function, so each query filters by the same variables. Both sets of client
# families are queried at once ({__name__=~"lustre_client_X|lustre_ebpf_stream_client_X"}):
# each operation and wait is in exactly one set, so a sum counts it once.
# test/e2e/72_alert_rules.sh checks that the JSON is this script's output
# and that every family it names is served.

import json
import sys

DS = {"type": "prometheus", "uid": "${datasource}"}
RATE = "$__rate_interval"


def both(family):
    """Both sets of a client family, by name."""
    return "lustre_client_%s|lustre_ebpf_stream_client_%s" % (family, family)


# The variables every client query is filtered by; self-metrics only by host.
CLIENT_FILTER = 'instance=~"$host",fs=~"$fs",slurm_job_id=~"$job",username=~"$user"'
HOST_FILTER = 'instance=~"$host"'


def sel(family, extra=""):
    """A selector over both sets of a client family, with the variables."""
    f = CLIENT_FILTER + ("," + extra if extra else "")
    return '{__name__=~"%s",%s}' % (both(family), f)


def own(metric, extra=""):
    """A selector of one of the tool's own families, by host."""
    f = HOST_FILTER + ("," + extra if extra else "")
    return "%s{%s}" % (metric, f)


def rate(s):
    return "rate(%s[%s])" % (s, RATE)


def by(labels, expr):
    return "sum by (%s) (%s)" % (labels, expr)


def topk(expr):
    return "topk($topn, %s)" % expr


def quantile(q, labels, family, extra=""):
    return "histogram_quantile(%s, %s)" % (q, by("le, " + labels, rate(sel(family + "_bucket", extra))))


def legend(labels):
    return " ".join("{{%s}}" % l.strip() for l in labels.split(","))


# (title, unit, description, [(expr, legend)]); a str title starts a row.
def ops_rows():
    ops = "access_operations_total"
    return [
        "Operations",
        ("Operations/s by job", "ops", "File operations completed, by job (slurm_job_id; \"\" outside jobs).",
         [(topk(by("slurm_job_id", rate(sel(ops)))), "{{slurm_job_id}}")]),
        ("Operations/s by user", "ops", "",
         [(topk(by("username", rate(sel(ops)))), "{{username}}")]),
        ("Operations/s by process", "ops", "",
         [(topk(by("process", rate(sel(ops)))), "{{process}}")]),
        ("Metadata operations/s by job", "ops", "Namespace operations (lookup, open, create, stat, ...) by job.",
         [(topk(by("slurm_job_id", rate(sel(ops, 'access_intent=~"namespace_.*"')))), "{{slurm_job_id}}")]),
        ("Operations/s by op", "ops", "",
         [(by("op", rate(sel(ops))), "{{op}}")]),
        ("Errors/s by class", "ops", "Failed operations by errno class and op.",
         [(by("errno_class, op", rate(sel("operation_errors_total"))), "{{errno_class}} {{op}}")]),
        ("Errors/s by job", "ops", "",
         [(topk(by("slurm_job_id", rate(sel("operation_errors_total")))), "{{slurm_job_id}}")]),
        ("Operations/s by host", "ops", "",
         [(by("instance", rate(sel(ops))), "{{instance}}")]),
    ]


def bytes_rows():
    b = "data_bytes_total"
    return [
        "Bytes",
        ("Bytes/s by job", "Bps", "Read and write bytes, by job.",
         [(topk(by("slurm_job_id, op", rate(sel(b)))), "{{slurm_job_id}} {{op}}")]),
        ("Bytes/s by user", "Bps", "",
         [(topk(by("username, op", rate(sel(b)))), "{{username}} {{op}}")]),
        ("Bytes/s by process", "Bps", "",
         [(topk(by("process, op", rate(sel(b)))), "{{process}} {{op}}")]),
    ]


def latency_rows():
    d = "access_duration_seconds"
    return [
        "Operation latency",
        ("Operation latency percentiles by op", "s", "",
         [(quantile(0.5, "op", d), "p50 {{op}}"), (quantile(0.99, "op", d), "p99 {{op}}")]),
        ("p99 operation latency by job", "s", "",
         [(quantile(0.99, "slurm_job_id", d), "{{slurm_job_id}}")]),
        ("p99 operation latency by user", "s", "",
         [(quantile(0.99, "username", d), "{{username}}")]),
        ("Mean operation latency by process", "s",
         "Needs the tool's --histogram-process-labels: without it the histograms have no process label.",
         [(topk("%s / %s" % (by("process", rate(sel(d + "_sum"))), by("process", rate(sel(d + "_count"))))),
           "{{process}}")]),
        ("Time in operations by job (busy seconds/s)", "s", "",
         [(topk(by("slurm_job_id", rate(sel(d + "_sum")))), "{{slurm_job_id}}")]),
        ("Time in operations by user (busy seconds/s)", "s", "",
         [(topk(by("username", rate(sel(d + "_sum")))), "{{username}}")]),
    ]


def wait_rows():
    w = "rpc_wait_duration_seconds"
    return [
        "Request wait",
        ("Request wait p50 and p99 by job", "s",
         "Time threads waited for their requests' replies (ptlrpc_queue_wait, Lustre lock grants, "
         "FUSE and sunrpc requests), by job. The alert LustreJobRequestWaitP99High watches this p99.",
         [(quantile(0.5, "slurm_job_id", w), "p50 {{slurm_job_id}}"),
          (quantile(0.99, "slurm_job_id", w), "p99 {{slurm_job_id}}")]),
        ("Request wait p50 and p99 by filesystem and host", "s",
         "The same waits by filesystem and node: one node slow is its network, every node the servers. "
         "The families carry no Lustre target (OST, MDT) label: per target, use the records' target field.",
         [(quantile(0.5, "fs, instance", w), "p50 {{fs}} {{instance}}"),
          (quantile(0.99, "fs, instance", w), "p99 {{fs}} {{instance}}")]),
        ("Request wait percentiles by request", "s", "queue_wait (Lustre), lock_wait, FUSE and NFS opcodes.",
         [(quantile(0.5, "op", w), "p50 {{op}}"), (quantile(0.99, "op", w), "p99 {{op}}")]),
        ("RPC wait by job (seconds/s)", "s", "",
         [(topk(by("slurm_job_id", rate(sel(w + "_sum")))), "{{slurm_job_id}}")]),
        ("RPC wait by user (seconds/s)", "s", "",
         [(topk(by("username", rate(sel(w + "_sum")))), "{{username}}")]),
        ("RPC requests/s by process", "reqps", "",
         [(topk(by("process", rate(sel("rpc_wait_operations_total")))), "{{process}}")]),
        ("RPC events/s (resend, expire, ...)", "ops", "",
         [(by("event", rate(sel("rpc_errors_total"))), "{{event}}")]),
        ("PtlRPC request p99 by job (send to reply)", "s",
         "Whole PtlRPC requests, writeback included (which no thread waits for). Lustre only.",
         [("histogram_quantile(0.99, %s)" % by("le, slurm_job_id", rate(
             'lustre_ebpf_stream_client_ptlrpc_request_duration_seconds_bucket{%s}' % CLIENT_FILTER)),
           "{{slurm_job_id}}")]),
    ]


def inflight_rows():
    inf = "inflight_requests"
    return [
        "Requests in flight",
        ("Requests in flight", "short",
         "Requests sent and not answered, by mount and node. The alert LustreClientRequestsStuck fires "
         "when a mount has some and completes none for 10 minutes.",
         [(by("instance, fs, mount", '{__name__=~"%s",%s}' % (both(inf), HOST_FILTER)),
           "{{instance}} {{mount}}")]),
        ("Requests in flight by job and process", "short", "Who is waiting.",
         [(topk(by("slurm_job_id, process", sel(inf))), "{{slurm_job_id}} {{process}}")]),
        ("Requests completed/s by mount", "reqps",
         "PtlRPC requests completed (Lustre) and FUSE, NFS requests ended: flat at 0 with requests in "
         "flight is a hang.",
         [(by("instance, mount", rate(own("lustre_client_ptlrpc_requests_completed_total"))),
           "ptlrpc {{instance}} {{mount}}"),
          (by("instance, mount", rate(own("lustre_ebpf_stream_client_rpc_wait_operations_total"))),
           "{{instance}} {{mount}}")]),
        ("PtlRPC requests started and completed/s", "reqps", "",
         [(by("instance", rate(own("lustre_client_ptlrpc_requests_started_total"))), "started {{instance}}"),
          (by("instance", rate(own("lustre_client_ptlrpc_requests_completed_total"))), "completed {{instance}}")]),
        ("Requests in flight the tracer could not label", "short",
         "More in flight at once than the tracer lists; counted, without labels.",
         [(by("instance", own("lustre_ebpf_stream_inflight_unlabeled")), "{{instance}}")]),
    ]


def health_rows():
    return [
        "Tracer health",
        ("Records dropped/s by stage", "short",
         "kernel_ringbuf: the ring buffer was full; decode, format: userspace; output: the output could "
         "not be written. The alert LustreEbpfStreamRecordsDropped fires on any.",
         [(by("instance, stage", rate(own("lustre_ebpf_stream_records_dropped_total"))),
           "{{instance}} {{stage}}")]),
        ("Records emitted/s", "short", "",
         [(by("instance", rate(own("lustre_ebpf_stream_records_emitted_total"))), "{{instance}}")]),
        ("Records decoded/s by kind", "short", "",
         [(by("kind", rate(own("lustre_ebpf_stream_records_total"))), "{{kind}}")]),
        ("Kafka lines/s by outcome", "short",
         "dropped: the local queue was full; failed: refused. The alert LustreEbpfStreamKafkaLinesLost "
         "fires on either.",
         [(by("instance, outcome", rate(own("lustre_ebpf_stream_kafka_lines_total"))),
           "{{instance}} {{outcome}}")]),
        ("Kafka lines pending", "short", "Produced, not yet acknowledged: grows through a broker outage.",
         [(by("instance", own("lustre_ebpf_stream_kafka_lines_pending")), "{{instance}}"),
          (by("instance", rate(own("lustre_ebpf_stream_kafka_errors_total"))), "errors/s {{instance}}")]),
        ("Prometheus series and losses", "short",
         "Series held; updates lost to the series cap; series left out of a scrape by the body cap.",
         [(by("instance", own("lustre_ebpf_stream_prometheus_series")), "series {{instance}}"),
          (by("instance", rate(own("lustre_ebpf_stream_prometheus_updates_dropped_total"))),
           "updates dropped/s {{instance}}"),
          (by("instance", own("lustre_ebpf_stream_prometheus_series_unrendered")),
           "unrendered {{instance}}")]),
        ("Observed and skipped mounts", "short", "",
         [(by("instance", own("lustre_ebpf_stream_observed_mounts")), "observed {{instance}}"),
          (by("instance, reason", own("lustre_ebpf_stream_mounts_skipped")), "skipped {{reason}} {{instance}}")]),
        ("Versions running", "short", "Nodes by tool version (build_info): a rollout's progress.",
         [(by("version, libbpf", own("lustre_ebpf_stream_build_info")), "{{version}} libbpf {{libbpf}}")]),
        ("Process cache misses/s", "short", "Enrichment: processes not found in the cache (job, user unknown).",
         [(by("instance", rate(own("lustre_ebpf_stream_enrich_proc_misses_total"))), "{{instance}}")]),
    ]


def panel(pid, x, y, title, unit, desc, targets):
    return {
        "type": "timeseries",
        "title": title,
        "id": pid,
        "description": desc,
        "datasource": DS,
        "gridPos": {"h": 8, "w": 8, "x": x, "y": y},
        "fieldConfig": {
            "defaults": {"unit": unit, "custom": {"lineWidth": 1, "fillOpacity": 10}},
            "overrides": [],
        },
        "options": {
            "legend": {"displayMode": "table", "placement": "bottom", "calcs": ["mean", "max"]},
            "tooltip": {"mode": "multi", "sort": "desc"},
        },
        "targets": [
            {"refId": chr(ord("A") + i), "expr": e, "legendFormat": l, "datasource": DS}
            for i, (e, l) in enumerate(targets)
        ],
    }


def panels():
    out, pid, x, y = [], 0, 0, 0
    for item in ops_rows() + bytes_rows() + latency_rows() + wait_rows() + inflight_rows() + health_rows():
        pid += 1
        if isinstance(item, str):
            if x:
                x, y = 0, y + 8
            out.append({"type": "row", "title": item, "id": pid, "collapsed": False,
                        "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})
            y += 1
            continue
        out.append(panel(pid, x, y, *item))
        x += 8
        if x == 24:
            x, y = 0, y + 8
    return out


def query_var(name, label, q):
    return {
        "name": name, "label": label, "type": "query", "datasource": DS,
        "query": {"query": q, "refId": name}, "definition": q,
        "refresh": 2, "includeAll": True, "multi": True, "allValue": ".*",
        "current": {"text": "All", "value": "$__all"}, "sort": 1,
    }


def templating():
    ops = '{__name__=~"%s"' % both("access_operations_total")
    return {"list": [
        {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
         "current": {}, "hide": 0},
        query_var("host", "Host", "label_values(%s}, instance)" % ops),
        query_var("fs", "Filesystem", 'label_values(%s,instance=~"$host"}, fs)' % ops),
        query_var("job", "Job", 'label_values(%s,instance=~"$host",fs=~"$fs"}, slurm_job_id)' % ops),
        query_var("user", "User", 'label_values(%s,instance=~"$host",fs=~"$fs"}, username)' % ops),
        {"name": "topn", "label": "Top N", "type": "custom", "query": "5,10,20,50",
         "current": {"text": "10", "value": "10"},
         "options": [{"text": v, "value": v, "selected": v == "10"} for v in ("5", "10", "20", "50")]},
    ]}


def dashboard():
    return {
        "title": "Lustre client operations (lustre-ebpf-stream)",
        "uid": "lustre-ebpf-stream",
        "description": "Operations, bytes, latency, request waits and requests in flight per host, job, "
                       "user and process, and the tracer's own health, from lustre-ebpf-stream "
                       "--prometheus (lustre_client_* and lustre_ebpf_stream_client_* families).",
        "tags": ["lustre", "nfs", "ebpf", "lustre-ebpf-stream"],
        "timezone": "browser",
        "editable": True,
        "schemaVersion": 39,
        "version": 2,
        "refresh": "30s",
        "time": {"from": "now-1h", "to": "now"},
        "annotations": {"list": []},
        "templating": templating(),
        "panels": panels(),
    }


if __name__ == "__main__":
    json.dump(dashboard(), sys.stdout, indent=2)
    sys.stdout.write("\n")
