#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Compare an old build's output with a new build's, byte for byte but for
what varies from run to run (test/golden/compare).

Usage: mask.py OLD NEW -- RUN_A RUN_A' [RUN_B RUN_B' ...]

The pairs after -- are two runs of one build on the same input (of this
mode and of others): they tell what varies. Each file is cut into lines,
each line into tokens (JSON strings, numbers, words, punctuation, blanks).
Where a pair differs, the JSON member there varies run to run (a time, a
pid, a latency, a histogram): its value, whole, is masked by its key on
every line. Outside JSON, a token is masked by its line's first word and
its place. OLD and NEW, so masked, must then be equal, token for token:
every other byte the same. Lines of other keys at one place (another
record) teach nothing. When a build's own runs differ in their lines'
order or number, OLD and NEW are compared as the multisets
of their masked lines (each line as often). Prints what was masked; exit status 1 on a
difference.
"""
import collections
import re
import sys

TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[A-Za-z_][A-Za-z_0-9.]*|\s+|.')


def tokens(line):
    return TOKEN.findall(line)


def lines(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read().split("\n")


def value_end(toks, i):
    """The index after the value that starts at i (balanced brackets)."""
    if toks[i] not in ("{", "["):
        return i + 1
    depth = 0
    for j in range(i, len(toks)):
        if toks[j] in ("{", "["):
            depth += 1
        elif toks[j] in ("}", "]"):
            depth -= 1
            if depth == 0:
                return j + 1
    return len(toks)


def mask(toks, volatile):
    """toks with each volatile member's value as '@', and the masked keys."""
    out, keys, i = [], [], 0
    first = next((t for t in toks if t.strip()), "?")
    while i < len(toks):
        t = toks[i]
        if t.startswith('"') and i + 2 < len(toks) and toks[i + 1] == ":" and t.strip('"') in volatile:
            out += [t, ":", "@"]
            keys.append(t.strip('"'))
            i = value_end(toks, i + 2)
            continue
        if f"{first}[{i}]" in volatile:
            out.append("@")
            keys.append(f"{first}[{i}]")
        else:
            out.append(t)
        i += 1
    return out, keys


def key_at(toks, i):
    """The innermost JSON key whose value holds token i, or first-word[i]."""
    depth = 0
    for j in range(i - 1, -1, -1):
        t = toks[j]
        if t in ("}", "]"):
            depth += 1
        elif t in ("{", "["):
            if depth == 0:
                continue
            depth -= 1
        elif depth == 0 and t == ":" and j > 0 and toks[j - 1].startswith('"'):
            return toks[j - 1].strip('"')
    first = next((t for t in toks if t.strip()), "?")
    return f"{first}[{i}]"


def shape(toks):
    """A line's keys in order (its first word outside JSON)."""
    keys = tuple(t for i, t in enumerate(toks[:-1]) if t.startswith('"') and toks[i + 1] == ":")
    return keys or (next((t for t in toks if t.strip()), ""),)


def learn(a, b, volatile):
    """Add to volatile what makes line a and line b, of one shape, differ."""
    ta, tb = tokens(a), tokens(b)
    for _ in range(200):
        ma, _ = mask(ta, volatile)
        mb, _ = mask(tb, volatile)
        if ma == mb:
            return
        i = next((k for k, (x, y) in enumerate(zip(ma, mb)) if x != y), min(len(ma), len(mb)))
        # the key in the masked line: map back by masking the prefix only
        k = key_at(ma, i) if i < len(ma) else key_at(mb, i)
        if k in volatile:
            return  # not a member's value: leave it to the comparison
        volatile.add(k)


def main():
    sep = sys.argv.index("--")
    old, new = lines(sys.argv[1]), lines(sys.argv[2])
    pairs = sys.argv[sep + 1:]
    volatile, reordered = set(), False
    for p, q in zip(pairs[0::2], pairs[1::2]):
        lp, lq = lines(p), lines(q)
        same_file = p.split("/")[-1] == sys.argv[2].split("/")[-1]
        mine = p.split("/")[-2].rsplit(".", 1)[0] == sys.argv[2].split("/")[-2].rsplit(".", 1)[0]
        if len(lp) != len(lq):
            reordered |= mine and same_file
            continue
        for a, b in zip(lp, lq):
            if a == b:
                continue
            ta, tb = tokens(a), tokens(b)
            if shape(ta) != shape(tb):
                # another record at this place: the order varies run to run
                reordered |= mine
                continue
            learn(a, b, volatile)
    masked = collections.Counter()
    problems = []
    mo = [mask(tokens(l), volatile) for l in old]
    mn = [mask(tokens(l), volatile) for l in new]
    for _, keys in mn:
        masked.update(keys)
    if len(old) != len(new) or reordered:
        co = collections.Counter("".join(t) for t, _ in mo)
        cn = collections.Counter("".join(t) for t, _ in mn)
        print(f"  lines: old {len(old)}, new {len(new)}; a build's own runs differ in their "
              "lines' order or number: compared as multisets of masked lines")
        for l in sorted(set(co) | set(cn)):
            if co[l] != cn[l]:
                problems.append(f"old x{co[l]}, new x{cn[l]}: {l[:400]}")
    else:
        for n, ((to, _), (tn, _)) in enumerate(zip(mo, mn), 1):
            if to != tn:
                problems.append(f"line {n}\n    old: {''.join(to)[:400]}\n    new: {''.join(tn)[:400]}")
    if masked:
        print("  masked (varies run to run): " + ", ".join(f"{k} x{v}" for k, v in sorted(masked.items())))
    for p in problems[:10]:
        print("  DIFFERENT: " + p)
    if len(problems) > 10:
        print(f"  ... {len(problems) - 10} more")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
