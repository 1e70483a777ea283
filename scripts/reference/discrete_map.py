#!/usr/bin/env python3
"""Independent reference digits for the discrete map (D) of the clusters paper.

    x_i^{k+1} = x_i^k + dt V sum_j P_ij(x^k) x_j^k,   P_ij(x) = softmax_j x_i^T (Q^T K) x_j

written from the paper's definition alone (no code shared with attncheck), in mpmath at
60 significant digits. Prints max_i |x_i^k|^2 for each step, for the paper's map and for
the transposed map (logits x_j^T (Q^T K) x_i), which `DiscreteMap::attention` computed
until issue 23. The digits are pasted into tests/it/clusters_dynamics.rs.

Run: python3 scripts/reference/discrete_map.py   (needs mpmath: pip install mpmath)
"""
from fractions import Fraction as F

import mpmath as mp

mp.mp.dps = 60


def mat(rows):
    return [[mp.mpf(F(x).numerator) / F(x).denominator for x in r] for r in rows]


def matmul(a, b):
    return [[mp.fsum(a[i][l] * b[l][j] for l in range(len(b))) for j in range(len(b[0]))]
            for i in range(len(a))]


def transpose(a):
    return [list(r) for r in zip(*a)]


def step(q, k, v, dt, x, transposed):
    m = matmul(transpose(q), k)  # Q^T K
    n, d = len(x), len(x[0])
    out = []
    for i in range(n):
        if transposed:
            logits = [mp.fsum(x[j][a] * m[a][b] * x[i][b] for a in range(d) for b in range(d))
                      for j in range(n)]
        else:
            logits = [mp.fsum(x[i][a] * m[a][b] * x[j][b] for a in range(d) for b in range(d))
                      for j in range(n)]
        top = max(logits)
        w = [mp.exp(l - top) for l in logits]
        s = mp.fsum(w)
        p = [wj / s for wj in w]
        avg = [mp.fsum(p[j] * x[j][c] for j in range(n)) for c in range(d)]
        upd = [mp.fsum(v[c][e] * avg[e] for e in range(d)) for c in range(d)]
        out.append([x[i][c] + dt * upd[c] for c in range(d)])
    return out


def max_sqnorm(x):
    return max(mp.fsum(c * c for c in xi) for xi in x)


def run(name, q, k, v, dt, x0, steps):
    q, k, v, x0 = mat(q), mat(k), mat(v), mat(x0)
    dt = mp.mpf(F(dt).numerator) / F(dt).denominator
    for transposed in (False, True):
        x = x0
        label = "transposed" if transposed else "paper"
        for s in range(1, steps + 1):
            x = step(q, k, v, dt, x, transposed)
            print(f"{name} [{label}] k = {s}: max_i |x_i|^2 = {mp.nstr(max_sqnorm(x), 30)}")


# Issue 23's example: Q = [[1, 2], [0, 1]], K = V = I, dt = 1/2, one step.
run("issue-23", [["1", "2"], ["0", "1"]], [["1", "0"], ["0", "1"]],
    [["1", "0"], ["0", "1"]], "1/2", [["1", "0"], ["1/2", "3/2"]], 1)

# A second case: m = 2, d = 3, n = 3, Q != K (Q^T K not symmetric), V not the identity.
run("second", [["1", "-1/2", "0"], ["1/3", "1", "2"]], [["0", "1", "1"], ["1", "0", "-1/2"]],
    [["1", "0", "1/2"], ["0", "-1", "0"], ["1/4", "0", "1"]], "1/4",
    [["1", "0", "-1"], ["1/2", "1", "0"], ["-1", "1/4", "2"]], 2)
