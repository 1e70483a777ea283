#!/usr/bin/env python3
"""Softmax of one row of logits in the tools a user would pick instead of
attncheck, timed side by side with ours.

The row is z_j = ((j*2654435761) mod 2^32)/2^28 - 8: dyadic, so every tool reads
the same exact numbers. Certified: python-flint (Arb balls: exp of z_j - max,
sum, divide) and mpmath's interval context (on fewer entries: it is slow; its
rate is per entry). Uncertified: numpy float64. Ours comes in as the JSON line
that `examples/softmax_bench.rs` prints (`--ours`): the 128-bit `softmax_fast`, the
MPFR reference and the f64 tier (`kernel::softmax_f64_into`, issue #41). Every
rate is given from the best and from the median of several runs; the script prints
a Markdown table, the ratios ours / python-flint, and the f64 tier / numpy float64
(issue #41's target: at least 1/3) with the widest relative output widths.
"""
import argparse
import json
import math
import os
import platform
import statistics
import time


def logits_int(n):
    """The numerators m_j with z_j = m_j / 2^28 - 8."""
    return [(j * 2654435761) % (1 << 32) for j in range(n)]


def rates(n, reps, f):
    """Entries per second of f on n entries: (from the best run, from the median)."""
    ts = []
    for _ in range(max(1, reps)):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return n / min(ts), n / statistics.median(ts)


def flint_rates(n, prec, reps):
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
    assert sum(p).contains(1)
    # the widest relative width 2·rad/mid (log2), as ours reports it
    widest = max(math.log2(float(2 * x.rad() / x.mid())) for x in p)
    return rates(n, reps, run), flint.__version__, widest


def mpmath_rates(n, prec, reps):
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

    assert 1 in sum(run())
    return rates(n, reps, run), mpmath.__version__


def numpy_rates(n, reps):
    import numpy as np

    z = np.array(logits_int(n), dtype=np.float64) / 2**28 - 8  # exact in f64

    def run():
        t = np.exp(z - z.max())
        return t / t.sum()

    run()
    return rates(n, reps * 20, run), np.__version__


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=65536)
    ap.add_argument("--mpmath-n", type=int, default=4096)
    ap.add_argument("--prec", type=int, default=128)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--ours", help="JSON line printed by examples/softmax_bench")
    a = ap.parse_args()
    ours = json.loads(a.ours) if a.ours else None
    load = os.getloadavg()[0]

    fl, fl_ver, fl_width = flint_rates(a.n, a.prec, a.reps)
    mp, mp_ver = mpmath_rates(a.mpmath_n, a.prec, 3)
    npr, np_ver = numpy_rates(a.n, a.reps)

    rows = []
    if ours:
        rows.append((f"attncheck softmax_fast ({ours['threads']} threads)", "yes", ours["n"], ours["fast"]))
        rows.append(("attncheck softmax_fast (1 thread)", "yes", ours["n"], ours["fast_1thread"]))
        if "f64" in ours:
            rows.append((f"attncheck softmax_f64_into, f64 tier ({ours['threads']} threads)", "yes", ours["n"], ours["f64"]))
            rows.append(("attncheck softmax_f64_into, f64 tier (1 thread)", "yes", ours["n"], ours["f64_1thread"]))
        if ours["mpfr"][0]:
            rows.append(("attncheck kernel::softmax (MPFR, 1 thread)", "yes", ours["n"], ours["mpfr"]))
    rows.append((f"python-flint {fl_ver} (arb, 1 thread)", "yes", a.n, fl))
    rows.append((f"mpmath {mp_ver} iv (1 thread)", "yes", a.mpmath_n, mp))
    rows.append((f"numpy {np_ver} float64", "no", a.n, npr))

    print(f"softmax of one row at {a.prec} bits, z_j = ((j*2654435761) mod 2^32)/2^28 - 8")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores; 1-min load average at start: {load:.2f}")
    print()
    print("| implementation | certified | n | M entries/s (best) | M entries/s (median) | ours 2 threads / this (best) |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    fast = ours["fast"][0] if ours else None
    for name, cert, n, (best, med) in rows:
        ratio = f"{fast / best:.2f}×" if fast else "—"
        print(f"| {name} | {cert} | {n} | {best / 1e6:.3f} | {med / 1e6:.3f} | {ratio} |")
    if ours:
        print()
        for label, key in (("2 threads", "fast"), ("1 thread", "fast_1thread")):
            b, m = ours[key]
            print(f"ratio ours ({label}) / python-flint: {b / fl[0]:.2f}× (best), {m / fl[1]:.2f}× (median); target ≥ 3×")
    if ours and "f64" in ours:
        for label, key in ((f"{ours['threads']} threads", "f64"), ("1 thread", "f64_1thread")):
            b, m = ours[key]
            print(f"ratio f64 tier ({label}) / numpy float64: {b / npr[0]:.3f} (best), {m / npr[1]:.3f} (median); target ≥ 1/3")
    print(f"widest relative output width, log2: python-flint {fl_width:.2f}"
          + (f", ours (128 bits) {ours['max_log2_rel_width']:.2f}" if ours else "")
          + (f", f64 tier {ours['f64_max_log2_rel_width']:.2f} ((hi − lo)/lo = {ours['f64_max_rel_width']:.3e})"
             if ours and "f64" in ours else ""))


if __name__ == "__main__":
    main()
