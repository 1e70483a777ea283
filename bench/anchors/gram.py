"""numpy side of bench/anchors/run_gram.sh: the exact Gram certification
max_{l != j} |<s_l, s_j>| of the same seeded sign matrix S that attncheck draws
(sparse::sample::draw_signs: SplitMix64 words, row after row, tail masked), by
float32 S @ S.T (exact here: |entries| <= d < 2^24) plus the off-diagonal max |.|.
Prints a Markdown table beside attncheck's timings (JSON lines from
examples/gram_bench.rs, one per size, passed with --ours)."""
import argparse
import json
import os
import platform
import time

import numpy as np

GAMMA = np.uint64(0x9E3779B97F4A7C15)
C1 = np.uint64(0xBF58476D1CE4E5B9)
C2 = np.uint64(0x94D049BB133111EB)


def draw_signs(n, d, seed):
    words = -(-d // 64)
    k = np.arange(1, n * words + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + k * GAMMA
        z = (z ^ (z >> np.uint64(30))) * C1
        z = (z ^ (z >> np.uint64(27))) * C2
    z = (z ^ (z >> np.uint64(31))).reshape(n, words)
    bits = np.unpackbits(z.astype("<u8").view(np.uint8), axis=1, bitorder="little")[:, :d]
    return (1 - 2 * bits.astype(np.int8)).astype(np.float32)


def certify(s):
    g = s @ s.T
    np.fill_diagonal(g, 0)
    return int(np.abs(g).max())


def timed(reps, f):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        r = f()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[0], ts[len(ts) // 2], r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", action="append", required=True, help="JSON line from gram_bench")
    ap.add_argument("--label", default="attncheck")
    a = ap.parse_args()
    print(f"numpy {np.__version__}, Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}\n")
    print("| n | d | max \\|G\\| off-diag (both agree) | numpy f32 best s | numpy median s "
          "| ours 2 threads best s | ours median s | ours 1 thread best s | numpy / ours (best) "
          "| popcounts/s (2 threads) | popcounts/s (1 thread) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for line in a.ours:
        o = json.loads(line)
        n, d = o["n"], o["d"]
        s = draw_signs(n, d, o["seed"])
        reps = 3 if n > 8192 else 7
        best, med, m = timed(reps, lambda: certify(s))
        assert m == o["max"], (m, o["max"])
        print(f"| {n} | {d} | {m} | {best:.3f} | {med:.3f} | {o['best_s']:.3f} | {o['median_s']:.3f} "
              f"| {o['best_1t_s']:.3f} | **{best / o['best_s']:.2f}×** | {o['popcounts_per_s']:.3e} "
              f"| {o['popcounts_per_s_1t']:.3e} |")


if __name__ == "__main__":
    main()
