#!/usr/bin/env python3
"""Untrusted f64 search (issue #40; README, "Layer 1's bound without the triangle inequality"): how large can layer 1's
row range get over the HULL RELAXATION that a propagation of certified bounds through layer 0 would start from? Layer 0's
attention output of each head anywhere in the convex hull of its 256 value vectors (the mixtures independent per head,
at the query and at each of the two keys), then layer 0's MLP and layer 1's LayerNorm and projections exactly as the
model computes them (f64). Frank-Wolfe ascent with line search over the mixtures, batched over the 256 bytes of the
position, alternating: the two keys for the current query, then the query for the two keys (4 rounds, 2 seeded starts).
Any bound certified from that relaxation is >= what this finds, so its ratio to Δ̄ is a floor for what the road can
give. numpy only; about 2 CPU-min per head.

    python3 bench/sweeps/trained-scan/logit-search/hull_search.py SHARD [HEADS]    # e.g. 1 0,1,2
"""
import pathlib, sys
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from zonotope_pilot import load  # a shard's model: (datum name, heads, weights as f64 arrays)
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "long2"))
from net import ln_f, ln_b  # noqa: E402  LayerNorm forward and backward (eps = zonotope_pilot.EPS)
i = int(sys.argv[1]); heads = [int(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else range(8)
rng = np.random.default_rng(40)
key, H, W = load(i)
E = W["emb"]; D = E.shape[1]; DH = D // H
y0, _ = ln_f(E, W["l0.ln1.w"], W["l0.ln1.b"])
V = (y0 @ W["l0.qkv.w"] + W["l0.qkv.b"])[:, 2*D:].reshape(256, H, DH)
U = np.stack([V[:, h] @ W["l0.o.w"][h*DH:(h+1)*DH] for h in range(H)])   # [H, 256, D]
base = E + W["l0.o.b"]
def fwd(alpha):   # alpha [B, H, 256] (batch B = 256: byte = row index), returns x2 and cache
    x1 = base + np.einsum("bhv,hvd->bd", alpha, U)
    y, c1 = ln_f(x1, W["l0.ln2.w"], W["l0.ln2.b"])
    pre = y @ W["l0.fc1.w"] + W["l0.fc1.b"]; r = np.maximum(pre, 0)
    x2 = x1 + r @ W["l0.fc2.w"] + W["l0.fc2.b"]
    z, c2 = ln_f(x2, W["l1.ln1.w"], W["l1.ln1.b"])
    return z, (c1, pre, c2)
def grad(dz, cache):  # d/dx1 given d/dz
    c1, pre, c2 = cache
    dx2 = ln_b(dz, c2)
    dr = (dx2 @ W["l0.fc2.w"].T) * (pre > 0)
    return dx2 + ln_b(dr @ W["l0.fc1.w"].T, c1)
Wq = lambda h: (W["l1.qkv.w"][:, h*DH:(h+1)*DH], W["l1.qkv.b"][h*DH:(h+1)*DH])
Wk = lambda h: (W["l1.qkv.w"][:, D+h*DH:D+(h+1)*DH], W["l1.qkv.b"][D+h*DH:D+(h+1)*DH])
def ascend(obj_dir, Wp, alpha, steps=150):
    """maximise (z Wp) . obj_dir over the hull, batch over the 256 bytes, Frank-Wolfe with line search."""
    w, b = Wp
    val = lambda a: (fwd(a)[0] @ w + b) @ obj_dir
    cur = val(alpha)
    for _ in range(steps):
        z, cache = fwd(alpha)
        g = grad(np.repeat((w @ obj_dir)[None], alpha.shape[0], 0), cache)      # [B, D]
        sc = np.einsum("bd,hvd->bhv", g, U)
        s = np.zeros_like(alpha); idx = sc.argmax(-1)
        np.put_along_axis(s, idx[..., None], 1.0, -1)
        best = cur.copy(); besta = alpha.copy()
        for gam in [1.0, 0.5, 0.25, 0.1, 0.03, 0.01]:
            a2 = alpha + gam * (s - alpha); v = val(a2)
            m = v > best; best = np.where(m, v, best); besta[m] = a2[m]
        if np.all(best <= cur + 1e-12): break
        alpha, cur = besta, best
    return alpha, cur
def init():
    a = rng.random((256, H, 256)) ** 8; return a / a.sum(-1, keepdims=True)
for h in heads:
    best_total = 0
    for rs in range(2):
        aq = init(); zq, _ = fwd(aq); q = zq @ Wq(h)[0] + Wq(h)[1]
        qa = q[rng.integers(256)]
        for rnd in range(4):
            ak1, v1 = ascend(qa, Wk(h), init()); ak2, v2 = ascend(-qa, Wk(h), init())
            k1 = fwd(ak1[[v1.argmax()]])[0] @ Wk(h)[0] + Wk(h)[1]; k2 = fwd(ak2[[v2.argmax()]])[0] @ Wk(h)[0] + Wk(h)[1]
            dk = (k1 - k2)[0]
            aq, vq = ascend(dk, Wq(h), aq)
            qa = (fwd(aq[[vq.argmax()]])[0] @ Wq(h)[0] + Wq(h)[1])[0]
            rng_val = vq.max() / np.sqrt(DH)
            best_total = max(best_total, rng_val, (v1.max() + v2.max()) / np.sqrt(DH))
        print(f"{key.split(' ')[0]} {key.split(' ')[1]} head {h} start {rs}: hull-relaxed row range {best_total:.2f}", flush=True)
