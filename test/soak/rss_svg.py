#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The RSS curve of a soak run (LES_SOAK_RSS: "seconds KiB" per line) as an
SVG line chart, with optional marks ("SECONDS:LABEL") for events such as
the broker's outages.

    test/soak/rss_svg.py /tmp/rss.txt docs/soak-rss-60min.svg 15:outage 1220:outage
"""
import sys

W, H, PAD = 720, 300, 50


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: rss_svg.py RSS_FILE OUT.svg [SECONDS:LABEL...]\n")
        return 2
    pts = []
    with open(argv[1]) as f:
        for line in f:
            t, kib = line.split()
            pts.append((float(t), float(kib) / 1024))
    t_max = max(t for t, _ in pts) or 1
    m_max = (int(max(m for _, m in pts) / 50) + 1) * 50

    def x(t):
        return PAD + t / t_max * (W - 2 * PAD)

    def y(m):
        return H - PAD + 0.0 - m / m_max * (H - 2 * PAD)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>']
    for m in range(0, m_max + 1, 50):
        out.append(f'<line x1="{PAD}" x2="{W - PAD}" y1="{y(m):.1f}" y2="{y(m):.1f}" '
                   f'stroke="#ddd"/><text x="{PAD - 6}" y="{y(m) + 4:.1f}" '
                   f'text-anchor="end">{m}</text>')
    step = 600 if t_max > 1800 else 60
    for t in range(0, int(t_max) + 1, step):
        out.append(f'<text x="{x(t):.1f}" y="{H - PAD + 16}" text-anchor="middle">'
                   f'{t // 60}</text>')
    out.append(f'<text x="{W / 2}" y="{H - 10}" text-anchor="middle">minutes</text>')
    out.append(f'<text x="14" y="{H / 2}" transform="rotate(-90 14 {H / 2})" '
               f'text-anchor="middle">RSS, MiB</text>')
    for mark in argv[3:]:
        t, label = mark.split(":", 1)
        xt = x(float(t))
        out.append(f'<line x1="{xt:.1f}" x2="{xt:.1f}" y1="{PAD}" y2="{H - PAD}" '
                   f'stroke="#c33" stroke-dasharray="3,3"/><text x="{xt + 3:.1f}" '
                   f'y="{PAD + 10}" fill="#c33">{label}</text>')
    path = " ".join(f"{x(t):.1f},{y(m):.1f}" for t, m in pts)
    out.append(f'<polyline fill="none" stroke="#236" stroke-width="1" points="{path}"/>')
    out.append("</svg>")
    with open(argv[2], "w") as f:
        f.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
