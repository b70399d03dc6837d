#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The data points an OpenTelemetry Collector received, read back from its
debug exporter's detailed log (scripts/jaeger-test-collector --metrics):
one JSON object per point on stdout, in the collector's own terms.

    otlp_metrics_read.py LOG

Each point: name, unit, type ("Sum" or "Histogram"), temporality,
monotonic, start and time (epoch seconds, as the collector printed them),
attrs (its attributes, values as the collector typed them: Str, Int,
Bool), resource (the resource's attributes), and value (a sum) or count,
sum, min, max, bounds and buckets (a histogram: per bucket, not cumulative).
"""
import datetime
import json
import re
import sys

ATTR = re.compile(r"^\s+-> ([^:]+): (Str|Int|Bool|Double)\((.*)\)$")
DESC = re.compile(r"^\s+-> (Name|Unit|DataType|IsMonotonic|AggregationTemporality): ?(.*)$")


def typed(kind, text):
    if kind == "Int":
        return int(text)
    if kind == "Bool":
        return text == "true"
    if kind == "Double":
        return float(text)
    return text


def stamp(text):
    # Go's time.String(): "2026-12-06 09:58:59.5 +0000 UTC", the fraction only when not 0.
    day, clock = text.split()[:2]
    whole, _, frac = clock.partition(".")
    t = datetime.datetime.strptime(day + " " + whole, "%Y-%m-%d %H:%M:%S")
    t = t.replace(tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) + (float("0." + frac) if frac else 0.0)


def main(path):
    metric, point, where, resource = {}, None, None, {}

    def done():
        if point is not None:
            print(json.dumps(point, sort_keys=True))

    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if "ResourceMetrics #" in line:
            done()
            point, resource, where = None, {}, "resource"
            continue
        if line.startswith("ScopeMetrics #"):
            where = None
            continue
        if line.startswith("Metric #"):
            done()
            point, metric, where = None, {}, "descriptor"
            continue
        m = DESC.match(line)
        if m and where == "descriptor":
            metric[m.group(1)] = m.group(2)
            continue
        if re.match(r"^(Number|Histogram)DataPoints #", line):
            done()
            point = {
                "name": metric.get("Name"),
                "unit": metric.get("Unit"),
                "type": metric.get("DataType"),
                "temporality": metric.get("AggregationTemporality"),
                "monotonic": metric.get("IsMonotonic") == "true",
                "attrs": {},
                "resource": resource,
            }
            where = "point"
            continue
        if line == "Data point attributes:":
            where = "attrs"
            continue
        m = ATTR.match(line)
        if m and where in ("resource", "attrs"):
            (resource if where == "resource" else point["attrs"])[m.group(1)] = typed(
                m.group(2), m.group(3))
            continue
        if point is None:
            continue
        key, _, value = line.partition(": ")
        if key == "StartTimestamp":
            point["start"] = stamp(value)
        elif key == "Timestamp":
            point["time"] = stamp(value)
        elif key == "Value":
            point["value"] = int(value) if re.fullmatch(r"-?\d+", value) else float(value)
        elif key in ("Count", "Sum", "Min", "Max"):
            point[key.lower()] = int(value) if key == "Count" else value
        elif key.startswith("ExplicitBounds #"):
            point.setdefault("bounds", []).append(value)
        elif key.startswith("Buckets #"):
            point.setdefault("buckets", []).append(int(line.rsplit(": ", 1)[1]))
        elif not line.startswith((" ", "\t", "Data point")) and "\t" in line:
            # The next log entry: this message's points have ended.
            done()
            point, where = None, None
    done()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write("usage: otlp_metrics_read.py LOG\n")
        sys.exit(2)
    main(sys.argv[1])
