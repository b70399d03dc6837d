#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""lustre-ebpf-exporter's /metrics and this tool's, series by series.

    exporter_compare.py --mount M --exporter BEFORE AFTER --ours BEFORE AFTER
                        [--fixture test/fixtures/exporter-e743798.txt]

Takes the lustre_client_* series of mount M from each pair of scrapes,
the difference AFTER - BEFORE for counters and histograms (the value in
AFTER for gauges), and prints, per family: the label names each side uses,
then every series whose value differs or that one side lacks, and a count
of the series equal on both sides. A histogram's _sum is compared within
--sum-tolerance (two tools time the same call with different clocks and
probe points). Exit 1 when any series differs, 0 when all are equal.
"""
import argparse
import re
import sys

SAMPLE = re.compile(r'^(\w+)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def read(path, mount):
    """{(name, labels-tuple): value}, {family: type}, {family: [label names]}."""
    values, types, names = {}, {}, {}
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("# TYPE "):
            _, _, fam, typ = line.split(" ", 3)
            types[fam] = typ
            continue
        m = SAMPLE.match(line)
        if not m or not m.group(1).startswith("lustre_client_"):
            continue
        labels = LABEL.findall(m.group(2) or "")
        if dict(labels).get("mount", mount) != mount:
            continue
        fam = re.sub(r"_(bucket|sum|count)$", "", m.group(1))
        if fam not in types:
            fam = m.group(1)
        names.setdefault(fam, [k for k, _ in labels if k != "le"])
        values[(m.group(1), tuple(sorted(labels)))] = float(m.group(3))
    return values, types, names


def delta(before, after, types):
    out = {}
    for key, v in after.items():
        fam = re.sub(r"_(bucket|sum|count)$", "", key[0])
        if types.get(fam, types.get(key[0])) != "gauge":
            v -= before.get(key, 0.0)
        if v:
            out[key] = v
    return out


def fmt(key):
    return key[0] + "{" + ",".join(f'{k}="{v}"' for k, v in key[1]) + "}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mount", required=True)
    ap.add_argument("--exporter", nargs=2, required=True)
    ap.add_argument("--ours", nargs=2, required=True)
    ap.add_argument("--fixture")
    ap.add_argument("--sum-tolerance", type=float, default=0.5)
    a = ap.parse_args()
    ub, ut, un = read(a.exporter[0], a.mount)
    ua, ut2, un2 = read(a.exporter[1], a.mount)
    ob, ot, on = read(a.ours[0], a.mount)
    oa, ot2, on2 = read(a.ours[1], a.mount)
    ut.update(ut2), un.update(un2), ot.update(ot2), on.update(on2)
    up, ours = delta(ub, ua, ut), delta(ob, oa, ot)
    fams = sorted(set(ut) | set(ot))
    fams = [f for f in fams if f.startswith("lustre_client_")]
    differ = 0
    for fam in fams:
        print(f"== {fam} ({ut.get(fam, 'absent')} / {ot.get(fam, 'absent')})")
        if un.get(fam) != on.get(fam):
            print(f"   labels: exporter {un.get(fam)}; ours {on.get(fam)}")
        keys = sorted(k for k in set(up) | set(ours)
                      if re.sub(r"_(bucket|sum|count)$", "", k[0]) == fam or k[0] == fam)
        same = 0
        for k in keys:
            u, o = up.get(k), ours.get(k)
            if k[0].endswith("_sum") and u and o and abs(u - o) <= a.sum_tolerance * max(u, o):
                same += 1
                print(f"   ~ {fmt(k)}: exporter {u:g}, ours {o:g} (within tolerance)")
                continue
            if u == o:
                same += 1
                continue
            differ += 1
            print(f"   ! {fmt(k)}: exporter {u if u is not None else '-'}, "
                  f"ours {o if o is not None else '-'}")
        total_u = sum(v for k, v in up.items() if k[0] == fam or k[0] == fam + "_count")
        total_o = sum(v for k, v in ours.items() if k[0] == fam or k[0] == fam + "_count")
        print(f"   {same} equal of {len(keys)}; total exporter {total_u:g}, ours {total_o:g}")
    print(f"series that differ: {differ}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
