#!/usr/bin/env python3
"""The spec's convergence reading at earlier step counts, from the stored shards.

For each L_tr and each T in 1600, 2400, 3200, 4000 (the validation curve has a point
every 200 steps): the fall of the validation loss over the last quarter of T steps,
(loss(0.75 T) - loss(T)) / loss(T), largest and median over the 24 models. The spec's
criterion is the largest fall at T = 4000 (the steps trained) <= 2 %. Reads only
bench/sweeps/trained-scan/shards/*.json.gz; standard library only.
"""
import glob
import gzip
import json
import os
import statistics

here = os.path.dirname(os.path.abspath(__file__))
steps = (1600, 2400, 3200, 4000)
falls = {}
for path in sorted(glob.glob(os.path.join(here, "shards", "*.json.gz"))):
    with gzip.open(path) as f:
        shard = json.load(f)
    for key, v in shard["record"]["results"].items():
        curve = dict((s, loss) for s, loss in v["result"]["val_curve"])
        length = int(key.split()[0][1:])
        falls.setdefault(length, []).append(
            [(curve[3 * t // 4] - curve[t]) / curve[t] for t in steps]
        )
print("| L_tr | models | " + " | ".join(f"T = {t}: largest / median" for t in steps) + " |")
print("| ---: | ---: | " + " | ".join("---:" for _ in steps) + " |")
for length in sorted(falls):
    cols = list(zip(*falls[length]))
    cells = [f"{100 * max(c):.2f} % / {100 * statistics.median(c):.2f} %" for c in cols]
    print(f"| {length} | {len(falls[length])} | " + " | ".join(cells) + " |")
