#!/usr/bin/env python3
"""Softmax of one row of logits in the tools a user would pick instead of
attncheck, timed side by side with ours.

The row is z_j = ((j*2654435761) mod 2^32)/2^28 - 8: dyadic, so every tool reads
the same exact numbers. Certified: python-flint (Arb balls: exp, sum, divide) and
mpmath's interval context (on fewer entries: it is slow; its rate is per entry).
Uncertified: numpy float64. Ours comes in as the JSON line that
`examples/softmax_bench.rs` prints (`--ours`), and the script prints a Markdown
table of entries per second and the ratios ours / python-flint.
"""
import argparse
import json
import os
import platform
import time


def logits_int(n):
    """The numerators m_j with z_j = m_j / 2^28 - 8."""
    return [(j * 2654435761) % (1 << 32) for j in range(n)]


def best_of(reps, f):
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def flint_rate(n, prec, reps):
    import flint
    from flint import arb, ctx

    ctx.prec = prec
    ms = logits_int(n)
    scale = arb(2) ** -28
    z = [arb(m) * scale - 8 for m in ms]  # exact: dyadic
    big = z[max(range(n), key=ms.__getitem__)]

    def run():
        e = [(x - big).exp() for x in z]
        s = sum(e)
        return [x / s for x in e]

    p = run()
    total = sum(p)
    assert total.contains(1), total
    return n / best_of(reps, run), flint.__version__, p[0].rad()


def mpmath_rate(n, prec, reps):
    import mpmath
    from mpmath import iv

    iv.prec = prec
    ms = logits_int(n)
    z = [iv.mpf(m) / 2**28 - 8 for m in ms]
    big = z[max(range(n), key=ms.__getitem__)]

    def run():
        e = [iv.exp(x - big) for x in z]
        s = sum(e)
        return [x / s for x in e]

    p = run()
    assert 1 in sum(p)
    return n / best_of(reps, run), mpmath.__version__


def numpy_rate(n, reps):
    import numpy as np

    z = np.array(logits_int(n), dtype=np.float64) / 2**28 - 8  # exact in f64

    def run():
        t = np.exp(z - z.max())
        return t / t.sum()

    run()
    return n / best_of(reps * 20, run), np.__version__


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=65536)
    ap.add_argument("--mpmath-n", type=int, default=4096)
    ap.add_argument("--prec", type=int, default=128)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--ours", help="JSON line printed by examples/softmax_bench")
    a = ap.parse_args()
    ours = json.loads(a.ours) if a.ours else None

    fl, fl_ver, fl_rad = flint_rate(a.n, a.prec, a.reps)
    mp, mp_ver = mpmath_rate(a.mpmath_n, a.prec, max(1, a.reps // 2))
    npr, np_ver = numpy_rate(a.n, a.reps)

    rows = []
    if ours:
        rows.append((f"attncheck softmax_fast ({ours['threads']} threads)", "yes", ours["n"], ours["fast_entries_per_s"]))
        rows.append(("attncheck softmax_fast (1 thread)", "yes", ours["n"], ours["fast_1thread_entries_per_s"]))
        if ours.get("mpfr_entries_per_s"):
            rows.append(("attncheck kernel::softmax (MPFR, 1 thread)", "yes", ours["n"], ours["mpfr_entries_per_s"]))
    rows.append((f"python-flint {fl_ver} (arb, 1 thread)", "yes", a.n, fl))
    rows.append((f"mpmath {mp_ver} iv (1 thread)", "yes", a.mpmath_n, mp))
    rows.append((f"numpy {np_ver} float64", "no", a.n, npr))

    print(f"softmax of one row, {a.prec}-bit, z_j = ((j*2654435761) mod 2^32)/2^28 - 8")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores; load average before: {os.getloadavg()[0]:.2f}")
    print()
    print("| implementation | certified | n | entries/s | ours(2 threads) / this |")
    print("| --- | --- | ---: | ---: | ---: |")
    fast = ours["fast_entries_per_s"] if ours else None
    for name, cert, n, rate in rows:
        ratio = f"{fast / rate:.2f}×" if fast else "—"
        print(f"| {name} | {cert} | {n} | {rate / 1e6:.3f} M | {ratio} |")
    if ours:
        print()
        print(f"ratio ours / python-flint: {fast / fl:.2f}× (2 threads), "
              f"{ours['fast_1thread_entries_per_s'] / fl:.2f}× (1 thread); target ≥ 3×")
    print(f"python-flint radius of p_0: {fl_rad}")


if __name__ == "__main__":
    main()
