#!/usr/bin/env python3
"""The spec's `[profiles.full.scan.probes]` from every search stored here: for each (model, layer-1 head)
the input with the largest range any search found — found.tsv's (run.sh's search) and every line
`L<L_tr> alibi-paper-s<seed> head H length N …: last-row range R … bytes HEX` (or `all-rows range`) of the .txt
files below this directory (long_search.py's, gcg_search.py's). Untrusted: the ranges here are numpy's, and only pick
which input goes into the spec; the report re-evaluates each input with the model's own forward pass.

    python3 probes.py            # print the TOML table, with each pick's source on stderr
    python3 probes.py --write    # replace the table in theorems/positional/trained-model-claims.toml"""
import re, sys, pathlib
here = pathlib.Path(__file__).resolve().parent
best = {}  # (datum name, head) -> (range, hex, source)
def offer(name, head, r, hexs, src):
    if r > best.get((name, head), (-1.0,))[0]:
        best[(name, head)] = (r, hexs, src)
for line in (here / "found.tsv").read_text().split("\n"):
    c = line.split("\t")
    if len(c) == 7 and c[1] == "1":
        offer(c[0], int(c[2]), float(c[3]), c[6], "found.tsv")
pat = re.compile(r"^(L\d+) (alibi-paper-s\d) head (\d) length \d+[^:]*: (?:last|all)-rows? range ([0-9.]+) .*bytes ([0-9a-f]+)\s*$")
for f in sorted(here.rglob("*.txt")):
    for line in f.read_text().split("\n"):
        m = pat.match(line)
        if m:
            offer(f"W_{m.group(1)}_{m.group(2)}", int(m.group(3)), float(m.group(4)), m.group(5),
                  str(f.relative_to(here)))
names = sorted({k[0] for k in best}, key=lambda s: s)
lines = []
for n in names:
    assert all((n, h) in best for h in range(8)), f"{n}: a head without a search"
    lines.append(f'"{n}" = [' + ", ".join(f'"{best[(n, h)][1]}"' for h in range(8)) + "]")
    for h in range(8):
        print(f"{n} head {h}: {best[(n, h)][0]:.4f} from {best[(n, h)][2]}", file=sys.stderr)
if "--write" in sys.argv:
    spec = here.parents[3] / "theorems/positional/trained-model-claims.toml"
    s = spec.read_text()
    head = "[profiles.full.scan.probes]\n"
    a = s.index(head) + len(head)
    b = s.index("\n\n", a)
    spec.write_text(s[:a] + "\n".join(lines) + s[b:])
else:
    print("\n".join(lines))
