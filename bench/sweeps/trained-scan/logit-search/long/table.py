#!/usr/bin/env python3
"""Layer 1's Δ̄/A per ALiBi model with A the best range any search found: found.tsv's (the stored search, probe.rs;
the model's own f64 range), long_search.py's length-32 last-row ranges (zonotope_pilot-results.txt and long/shard-*.txt)
and gcg_search.py's all-rows ranges (long2/*.txt). Δ̄ comes from zonotope_pilot-results.txt's table. An untrusted
reading of the yardstick only; the report's own column changes when the spec's probes do. Every input listed is a
valid probe: its all-rows range (the report's quantity) is at least the figure printed (long_search's figure is its
last row's).

    python3 long/table.py                      # per model
    python3 long/table.py --heads              # and per head: the best range, its source and its bytes (hex)
    python3 long/table.py --over 3 --shard S   # the heads of shard S's model still above 3×, comma-separated
    python3 long/table.py --paste              # one line per head where gcg_search.py beat the earlier searches
"""
import re, glob, pathlib, sys
here = pathlib.Path(__file__).resolve().parent
res = (here.parent / "zonotope_pilot-results.txt").read_text()
SHARDS = {1: "L32 alibi-paper-s1", 9: "L32 alibi-paper-s2", 17: "L32 alibi-paper-s3", 25: "L128 alibi-paper-s1",
          33: "L128 alibi-paper-s2", 41: "L128 alibi-paper-s3", 49: "L512 alibi-paper-s1", 57: "L512 alibi-paper-s2",
          65: "L512 alibi-paper-s3"}
dbar = {}
for line in res.split("\n"):
    c = [x.strip() for x in line.strip().strip("|").split("|")]
    if len(c) > 4 and c[1].isdigit() and c[0].startswith("L"):
        dbar[(c[0], int(c[1]))] = float(c[2].replace(" ", ""))
found = {}                                                   # (model, head) -> [(range, source, hex)] per search family
for line in open(here.parent / "found.tsv"):
    f = line.rstrip("\n").split("\t")
    if f[1] == "1":
        k = (f[0][2:].replace("_", " "), int(f[2]))
        found.setdefault(k, {})["found"] = [(float(f[4]), "found.tsv", f[6][:2 * (int(f[5]) + 1)])]
for t in [res] + [pathlib.Path(f).read_text() for f in sorted(glob.glob(str(here / "shard-*.txt")))]:
    for m in re.finditer(r"(L\d+ alibi-paper-s\d) head (\d) length (\d+): last-row range ([0-9.]+) \(.*?\) bytes ([0-9a-f]+)", t):
        found.setdefault((m.group(1), int(m.group(2))), {}).setdefault("long", []).append(
            (float(m.group(4)), f"long_search.py length {m.group(3)}", m.group(5)))
for p in sorted(glob.glob(str(here.parent / "long2" / "*.txt"))):
    for m in re.finditer(r"(L\d+ alibi-paper-s\d) head (\d) length (\d+) init (\w+) seed (\d+): all-rows range ([0-9.]+) .*? bytes ([0-9a-f]+)",
                         pathlib.Path(p).read_text()):
        found.setdefault((m.group(1), int(m.group(2))), {}).setdefault("gcg", []).append(
            (float(m.group(6)), f"gcg_search.py length {m.group(3)} {m.group(4)} seed {m.group(5)} ({pathlib.Path(p).name})", m.group(7)))


def best(k, fams):
    return max((x for f in fams for x in found.get(k, {}).get(f, [])), default=(0.0, "-", ""))


ALL, OLD = ("found", "long", "gcg"), ("found", "long")
if "--over" in sys.argv:
    x = float(sys.argv[sys.argv.index("--over") + 1]); mdl = SHARDS[int(sys.argv[sys.argv.index("--shard") + 1])]
    print(",".join(str(h) for h in range(8) if dbar[(mdl, h)] / best((mdl, h), ALL)[0] > x))
    sys.exit(0)
if "--paste" in sys.argv:
    for mdl in SHARDS.values():
        for h in range(8):
            a, src, hx = best((mdl, h), ALL)
            if a > best((mdl, h), OLD)[0]:
                print(f"{mdl} head {h} range {a:.6f} bytes {hx}")
    sys.exit(0)
tot = le = le_old = 0
for mdl in SHARDS.values():
    r = [dbar[(mdl, h)] / best((mdl, h), ALL)[0] for h in range(8)]
    r0 = [dbar[(mdl, h)] / best((mdl, h), OLD)[0] for h in range(8)]
    tot += 8; le += sum(x <= 3 for x in r); le_old += sum(x <= 3 for x in r0)
    print(f"{mdl}: Δ̄/A {min(r):.2f}–{max(r):.2f}× ({sum(x <= 3 for x in r)} of 8 ≤ 3×; before gcg_search.py "
          f"{min(r0):.2f}–{max(r0):.2f}×, {sum(x <= 3 for x in r0)} of 8)")
    if "--heads" in sys.argv:
        for h in range(8):
            a, src, hx = best((mdl, h), ALL); a0 = best((mdl, h), OLD)[0]
            print(f"  head {h}: Δ̄ {dbar[(mdl, h)]:.2f}, A {a:.4f} ({dbar[(mdl, h)] / a:.2f}×; before {a0:.4f}, "
                  f"{dbar[(mdl, h)] / a0:.2f}×) from {src}, {len(hx) // 2} bytes {hx}")
print(f"all 9 models: {le} of {tot} heads ≤ 3× (before gcg_search.py: {le_old})")
