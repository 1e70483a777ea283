"""mpmath and numpy side of bench/anchors/run_dynamics.sh: the same RK4 on the
rescaled self-attention flow (clusters.md §1), dz_i/dt = sum_j P_ij V (z_j - z_i),
P_ij = softmax_j <e^{tV} z_i, M e^{tV} z_j>, P recomputed at every stage, e^{tV}
propagated by products with e^{(h/2)V} (as attncheck does).

Workloads (exact dyadic data, identical on both sides):
  small: n = 20, d = 2, Q = K = V = I, T = 5, h = 1/10, z0[i] = ((37i mod 101)/10.1 - 5,
         (53i mod 97)/9.7 - 5) rounded to multiples of 2^-20 (dynamics::workloads::grid_tokens_2d);
         mpmath at mp.prec = 128 and numpy float64.
  cupy:  n = d = 128, QtK = I, V and z0 read from the files `flow_cupy --dump DIR` writes
         (exact fractions), T = 15, h = 1/10; numpy float64 only (mpmath would take hours).
         attncheck's lines may come from the MPFR flow and from its double-double tier
         (`flow_cupy --dd`); with --state-ref (z(T) of the 128-bit MPFR run, written by
         `flow_cupy --state`) and --state FILE per line, the table gives each run's largest
         deviation from the 128-bit run, max_i |z_i − z_i^128| / max_i |z_i^128|, numpy's too.

Prints a Markdown table beside attncheck's timings (JSON lines from examples/flow_bench.rs
and examples/flow_cupy.rs).
"""
import argparse
import json
import os
import platform
import time
from fractions import Fraction

import mpmath
import numpy as np
from mpmath import mp, mpf


def grid_tokens_2d(n):
    def r(q):
        return Fraction(round(q * 2**20), 2**20)

    return [[r(Fraction((i * 37) % 101 * 10, 101) - 5), r(Fraction((i * 53) % 97 * 10, 97) - 5)]
            for i in range(n)]


def read_mat(path):
    with open(path) as f:
        rows, cols = map(int, f.readline().split())
        m = [[Fraction(x) for x in f.readline().split()] for _ in range(rows)]
    assert all(len(r) == cols for r in m)
    return m


def read_state(path):
    """z(T) as written by flow_cupy --state: one decimal per line."""
    mp.prec = 256
    with open(path) as f:
        return [mpf(l.strip()) for l in f if l.strip()]


def timed(reps, f):
    ts = []
    r = None
    for _ in range(reps):
        t = time.perf_counter()
        r = f()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[0], ts[len(ts) // 2], r


# ----- mpmath ------------------------------------------------------------------------

def rk4_mpmath(z0, V, T, h, prec):
    """RK4 in z with mp.prec = prec; M = QtK = I."""
    mp.prec = prec
    n, d = len(z0), len(z0[0])
    frac = lambda q: mpf(q.numerator) / q.denominator  # exact for dyadic q
    z = [[frac(x) for x in row] for row in z0]
    Vm = [[frac(x) for x in row] for row in V]
    steps = int(Fraction(T) / Fraction(h))
    hh = mpf(Fraction(h).numerator) / Fraction(h).denominator
    eh = mp.expm(mp.matrix(Vm) * (hh / 2))
    Eh = [[eh[r, c] for c in range(d)] for r in range(d)]

    def matvec(A, x):
        return [mpmath.fdot(A[r], x) for r in range(d)]

    def matmul(A, B):
        return [[mpmath.fdot(A[r], [B[k][c] for k in range(d)]) for c in range(d)] for r in range(d)]

    def f(E, z):
        y = [matvec(E, zi) for zi in z]
        out = []
        for i in range(n):
            logits = [mpmath.fdot(y[i], y[j]) for j in range(n)]
            m = max(logits)
            e = [mpmath.exp(l - m) for l in logits]
            s = mpmath.fsum(e)
            p = [x / s for x in e]
            w = [mpmath.fdot(p, [z[j][k] for j in range(n)]) - z[i][k] for k in range(d)]
            out.append(matvec(Vm, w))
        return out

    def axpy(z, c, k):
        return [[z[i][r] + c * k[i][r] for r in range(d)] for i in range(n)]

    E = [[mpf(1) if r == c else mpf(0) for c in range(d)] for r in range(d)]
    for _ in range(steps):
        Emid = matmul(E, Eh)
        Enext = matmul(Emid, Eh)
        k1 = f(E, z)
        k2 = f(Emid, axpy(z, hh / 2, k1))
        k3 = f(Emid, axpy(z, hh / 2, k2))
        k4 = f(Enext, axpy(z, hh, k3))
        z = [[z[i][r] + hh / 6 * (k1[i][r] + 2 * k2[i][r] + 2 * k3[i][r] + k4[i][r]) for r in range(d)]
             for i in range(n)]
        E = Enext
    return z


# ----- numpy float64 -----------------------------------------------------------------

def rk4_numpy(z0, V, T, h):
    """The same RK4 in float64 (V symmetric: e^{(h/2)V} by eigh)."""
    z = np.array(z0, dtype=np.float64)
    V = np.array(V, dtype=np.float64)
    lam, Q = np.linalg.eigh(V)
    Eh = (Q * np.exp(lam * h / 2)) @ Q.T
    steps = int(round(T / h))

    def f(E, z):
        y = z @ E.T
        l = y @ y.T
        l -= l.max(axis=1, keepdims=True)
        p = np.exp(l)
        p /= p.sum(axis=1, keepdims=True)
        return (p @ z - z) @ V.T

    E = np.eye(V.shape[0])
    for _ in range(steps):
        Emid = E @ Eh
        Enext = Emid @ Eh
        k1 = f(E, z)
        k2 = f(Emid, z + h / 2 * k1)
        k3 = f(Emid, z + h / 2 * k2)
        k4 = f(Enext, z + h * k3)
        z = z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        E = Enext
    return z


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours-small", required=True, help="JSON line from flow_bench")
    ap.add_argument("--ours-cupy", action="append", default=[], help="JSON lines from flow_cupy")
    ap.add_argument("--state", action="append", default=[],
                    help="z(T) file of the matching --ours-cupy line (flow_cupy --state)")
    ap.add_argument("--state-ref", help="z(T) file of the 128-bit MPFR run")
    ap.add_argument("--data", help="directory written by flow_cupy --dump")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--numpy-only", action="store_true",
                    help="time numpy on the cupy data only and print a JSON line (run it with "
                         "OPENBLAS_NUM_THREADS=1 for the one-thread figure)")
    ap.add_argument("--numpy-1thread", help="JSON line of a --numpy-only run with one BLAS thread")
    a = ap.parse_args()
    if a.numpy_only:
        V = read_mat(os.path.join(a.data, "v.txt"))
        Z0 = read_mat(os.path.join(a.data, "z0.txt"))
        Vf = np.array([[float(x) for x in r] for r in V])
        Zf = np.array([[float(x) for x in r] for r in Z0])
        b, m, _ = timed(3, lambda: rk4_numpy(Zf, Vf, 15.0, 0.1))
        print(json.dumps({"best_s": b, "median_s": m,
                          "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default")}))
        return
    print(f"mpmath {mpmath.__version__}, numpy {np.__version__}, Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}\n")

    # small workload
    o = json.loads(a.ours_small)
    prec = o["prec"]
    z0 = grid_tokens_2d(20)
    I2 = [[Fraction(1), Fraction(0)], [Fraction(0), Fraction(1)]]
    mb, mm, zm = timed(a.reps, lambda: rk4_mpmath(z0, I2, 5, Fraction(1, 10), prec))
    nb, nm, zn = timed(max(a.reps, 9), lambda: rk4_numpy([[float(x) for x in r] for r in z0],
                                                          [[1.0, 0.0], [0.0, 1.0]], 5.0, 0.1))
    mp.prec = prec + 64
    ours = [mpf(s) for s in o["z"]]
    flat_m = [x for row in zm for x in row]
    diff_m = max(abs(x - y) for x, y in zip(ours, flat_m))
    diff_n = max(abs(float(x) - y) for x, y in zip(ours, zn.flatten()))
    maxz = max(abs(x) for x in ours)
    print(f"## n = 20, d = 2, Q = K = V = I, RK4 h = 1/10 to T = 5 ({o['rhs_evals']} RHS evaluations)\n")
    print("| implementation | precision | best s | median s | time / ours (2 threads, best) |")
    print("| --- | --- | ---: | ---: | ---: |")
    print(f"| attncheck flow::rk4 ({o['threads']} threads) | {prec} bits | {o['best_s']:.4f} | "
          f"{o['median_s']:.4f} | 1.00× |")
    print(f"| attncheck flow::rk4 (1 thread) | {prec} bits | {o['best_1thread_s']:.4f} | "
          f"{o['median_1thread_s']:.4f} | {o['best_1thread_s'] / o['best_s']:.2f}× |")
    print(f"| mpmath {mpmath.__version__} | mp.prec = {prec} | {mb:.4f} | {mm:.4f} | "
          f"{mb / o['best_s']:.1f}× |")
    print(f"| numpy {np.__version__} | float64 | {nb:.4f} | {nm:.4f} | {nb / o['best_s']:.3f}× |")
    print(f"\nratio mpmath / ours: {mb / o['best_s']:.1f}× (best, {o['threads']} threads), "
          f"{mm / o['median_s']:.1f}× (median); vs ours on 1 thread: {mb / o['best_1thread_s']:.1f}×")
    print(f"max|z(T)| = {mpmath.nstr(maxz, 15)}; max |ours − mpmath| = {mpmath.nstr(diff_m, 3)}, "
          f"max |ours − numpy| = {diff_n:.3g}\n")

    # cupy workload
    if a.data and a.ours_cupy:
        V = read_mat(os.path.join(a.data, "v.txt"))
        Z0 = read_mat(os.path.join(a.data, "z0.txt"))
        Vf = np.array([[float(x) for x in r] for r in V])
        Zf = np.array([[float(x) for x in r] for r in Z0])
        assert all(Fraction(float(x)) == x for r in V + Z0 for x in r), "data not exact in float64"
        lam = np.linalg.eigvalsh(Vf)
        neg, pos = lam[lam < 0], lam[lam > 0]
        nb, nm, zc = timed(3, lambda: rk4_numpy(Zf, Vf, 15.0, 0.1))
        n, d = Zf.shape
        print(f"## n = {n}, d = {d}, QᵀK = I, V symmetric sparse, RK4 h = 1/10 to T = 15\n")
        print(f"spectrum of V (float64 eigvalsh): [{neg.min():.3f}, {neg.max():.3f}] ∪ "
              f"[{pos.min():.3f}, {pos.max():.3f}]; nonzeros {int(np.count_nonzero(Vf))} of {d * d}\n")
        ref = read_state(a.state_ref) if a.state_ref else None

        def dev(z):
            if ref is None or z is None:
                return "—"
            mp.prec = 256
            m = max(abs(x) for x in ref)
            return mpmath.nstr(max(abs(x - y) for x, y in zip(z, ref)) / m, 3)

        print("| implementation | precision | threads | wall s | time / numpy | max\\|z(T)\\| | deviation from 128 bits |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
        for k, line in enumerate(a.ours_cupy):
            c = json.loads(line)
            tier = c.get("tier", "mpfr")
            name = "flow::rk4" if tier == "mpfr" else "ddflow (double-double)"
            prec = f"{c['prec']} bits" if tier == "mpfr" else "dd (≈106 bits)"
            z = read_state(a.state[k]) if k < len(a.state) and a.state[k] else None
            print(f"| attncheck {name} (examples/flow_cupy) | {prec} | {c['threads']} | "
                  f"{c['wall_s']:.2f} | {c['wall_s'] / nb:.1f}× | {c['max_abs_z']} | {dev(z)} |")
        zn = [mpf(float(x)) for x in zc.flatten()]
        print(f"| numpy {np.__version__} (best of 3; median {nm:.3f}) | float64 | BLAS | {nb:.3f} | 1.0× | "
              f"{np.abs(zc).max():.17g} | {dev(zn)} |")
        one = json.loads(a.numpy_1thread) if a.numpy_1thread else None
        if one:
            print(f"| numpy {np.__version__} (best of 3; median {one['median_s']:.3f}) | float64 | 1 (BLAS) | "
                  f"{one['best_s']:.3f} | {one['best_s'] / nb:.2f}× | | |")
        print()
        for line in a.ours_cupy:
            c = json.loads(line)
            if c.get("tier") == "dd":
                ref = one if one and c["threads"] == 1 else {"best_s": nb, "median_s": nm}
                which = "1 BLAS thread" if ref is one else "default BLAS threads"
                print(f"- dd tier ({c['threads']} thread{'s' if c['threads'] > 1 else ''}) / numpy float64 "
                      f"({which}): {c['wall_s'] / ref['best_s']:.2f}× best to best, "
                      f"{c['median_s'] / ref['median_s']:.2f}× median to median (target ≤ 10×)")
        print()


if __name__ == "__main__":
    main()
