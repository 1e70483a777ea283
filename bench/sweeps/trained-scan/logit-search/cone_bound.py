#!/usr/bin/env python3
"""Untrusted f64 estimate (issue #40; README, "The zonotope road, measured"): what could layer 1's row range bound
be if LayerNorm's output were relaxed by its CONE instead of a zonotope? Per byte a the hull zonotope's x1 set is
separated from the origin by a hyperplane r_a (the dual vector of the certified variance floor, zonotope_pilot.py),
so LN(x1) lies in the half-ball {z centred, |z| <= sqrt(D), r_a . z >= 0}. OPTIMISTICALLY taking that half-ball as
layer 1's normalised input (i.e. as if layer 0's MLP moved no direction across r_a), this maximises
q.(k1 - k2)/sqrt(d_h) with z_q in S_a, z_k1 in S_b1, z_k2 in S_b2 (the keys' supports in closed form, the query by
projected gradient ascent from several starts, a lower bound of that relaxation's maximum), and the same with the
full ball (no half-space), which should reproduce bound 6. If the half-ball value is near the ball's, a cone
relaxation of LN cannot reach 3x either.

    python3 cone_bound.py SHARD
"""
import sys, time
import numpy as np
sys.path.insert(0, __import__("os").path.dirname(__file__))
from zonotope_pilot import Model, var_floor

m = Model(int(sys.argv[1])); W = m.W; D, DH = m.D, m.DH; R = np.sqrt(D)
rng = np.random.default_rng(40)
t0 = time.process_time()
c = m.base + m.hc; G = np.broadcast_to(m.hG, (256,) + m.hG.shape)
Pc = c - c.mean(-1, keepdims=True); PG = G - G.mean(-1, keepdims=True)
vf, _ = var_floor(Pc, np.ascontiguousarray(PG))
# the separating vector: y from the floor's dual (recomputed: min point of the box QP)
e = np.zeros((256, 64)); Lc = np.linalg.eigvalsh(np.einsum("bmn,bmk->bnk", PG, PG))[:, -1] * 1.01
yk = e.copy(); t = 1.0
for _ in range(600):
    w = Pc + np.einsum("bm,bmn->bn", yk, PG)
    e2 = np.clip(yk - np.einsum("bmn,bn->bm", PG, w) / Lc[:, None], -1, 1)
    t2 = (1 + np.sqrt(1 + 4 * t * t)) / 2; yk = e2 + (t - 1) / t2 * (e2 - e); e, t = e2, t2
r = Pc + np.einsum("bm,bmn->bn", e, PG)
marg = (r * Pc).sum(-1) - np.abs(np.einsum("bmn,bn->bm", PG, r)).sum(-1)              # min over the box of r.n
# a byte whose zonotope this does not separate from 0 keeps the whole ball (its half-space vector set to 0)
rh = np.where((marg > 0)[:, None], r / np.linalg.norm(r, axis=1, keepdims=True), 0.0)
print(f"# {m.key}: {(marg <= 0).sum()} of 256 bytes' zonotopes not separated from 0 (their LN image: the whole ball)")
P = lambda v: v - v.mean(-1, keepdims=True)
g, beta = W["l1.ln1.w"], W["l1.ln1.b"]


def supp(v, half):                         # v [N, D] -> h over all 256 sets [N, 256] and support points
    vc = P(v)
    if not half:
        n = np.linalg.norm(vc, axis=1, keepdims=True)
        return np.repeat(R * n, 256, 1), None
    s = vc @ rh.T                                                                          # [N, 256]
    par = np.linalg.norm(vc, axis=1)[:, None] ** 2 - np.minimum(s, 0) ** 2
    return R * np.sqrt(np.maximum(par, 0)), s


def point(v, b, half):                     # support point of set b for direction v
    vc = P(v)
    if half:
        s = (vc * rh[b]).sum(-1, keepdims=True); vc = vc - np.minimum(s, 0) * rh[b]
    return R * vc / np.linalg.norm(vc, axis=1, keepdims=True)


def project(z, a, half):                   # onto S_a (centred, half-space, ball): alternating, few rounds
    z = P(z)
    for _ in range(20):
        if half:
            s = (z * rh[a]).sum(-1, keepdims=True); z = z - np.minimum(s, 0) * rh[a]
        n = np.linalg.norm(z, axis=1, keepdims=True); z = z * np.minimum(1, R / n)
    return z


for h in range(m.H):
    wq, bq = W["l1.qkv.w"][:, h * DH:(h + 1) * DH], W["l1.qkv.b"][h * DH:(h + 1) * DH]
    wk = W["l1.qkv.w"][:, D + h * DH:D + (h + 1) * DH]
    A = (g[:, None] * wk) @ (g[:, None] * wq).T                                            # v = A z + v0
    v0 = (g[:, None] * wk) @ (beta @ wq + bq)
    out = []
    for half in (False, True):
        best = 0
        for start in range(4):
            a = np.arange(256)
            z = project(rng.normal(size=(256, D)), a, half)
            for it in range(150):
                v = z @ A.T + v0
                h1, _ = supp(v, half); h2, _ = supp(-v, half)
                b1, b2 = h1.argmax(1), h2.argmax(1)
                val = h1[a, b1] + h2[a, b2]
                best = max(best, val.max())
                gz = (point(v, b1, half) - point(-v, b2, half)) @ A                        # gradient in z
                z = project(z + 0.5 * gz / (np.linalg.norm(gz, axis=1, keepdims=True) + 1e-12) * R, a, half)
        out.append(best / np.sqrt(DH))
    print(f"{m.key.split(' ')[0]} {m.key.split(' ')[1]} head {h}: ball (bound-6 analogue) {out[0]:.2f}, "
          f"half-ball (cone, optimistic) {out[1]:.2f}, ratio {out[1] / out[0]:.2f}", flush=True)
print(f"# {time.process_time() - t0:.1f} CPU-s, load average {open('/proc/loadavg').read().split()[0]}")
