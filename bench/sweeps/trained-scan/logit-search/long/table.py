#!/usr/bin/env python3
"""Layer 1's Δ̄/A per ALiBi model with A the better of the stored search (found.tsv's, as in
zonotope_pilot-results.txt's table) and long_search.py's length-32 ranges (that file and long/shard-*.txt):
an untrusted reading of the yardstick only; the report's own column changes when the spec's probes do."""
import re, glob, pathlib
here = pathlib.Path(__file__).resolve().parent
res = (here.parent / "zonotope_pilot-results.txt").read_text()
rows = {}
for line in res.split("\n"):
    c = [x.strip() for x in line.strip().strip("|").split("|")]
    if len(c) > 4 and c[1].isdigit() and c[0].startswith("L"):
        rows[(c[0], int(c[1]))] = (float(c[2].replace(" ", "")), float(c[3].replace(" ", "")))
best = {}
for t in [res] + [pathlib.Path(f).read_text() for f in sorted(glob.glob(str(here / "shard-*.txt")))]:
    for m in re.finditer(r"(L\d+ alibi-paper-s\d) head (\d) length (\d+): last-row range ([0-9.]+)", t):
        k = (m.group(1), int(m.group(2)))
        best[k] = max(best.get(k, 0.0), float(m.group(4)))
tot = le = le_old = 0
for mdl in sorted({k[0] for k in rows}, key=lambda s: (int(s[1:].split()[0]), s)):
    if not any((mdl, h) in best for h in range(8)):
        print(f"{mdl}: not searched yet")
        continue
    r = [rows[(mdl, h)][0] / max(rows[(mdl, h)][1], best.get((mdl, h), 0.0)) for h in range(8)]
    r0 = [rows[(mdl, h)][0] / rows[(mdl, h)][1] for h in range(8)]
    tot += 8; le += sum(x <= 3 for x in r); le_old += sum(x <= 3 for x in r0)
    print(f"{mdl}: Δ̄/A {min(r):.2f}–{max(r):.2f}× ({sum(x <= 3 for x in r)} of 8 ≤ 3×; stored search alone {min(r0):.2f}–{max(r0):.2f}×, {sum(x <= 3 for x in r0)} of 8)")
print(f"searched models: {le} of {tot} heads ≤ 3× (stored search alone: {le_old})")
