#!/usr/bin/env python3
"""Untrusted f64 prototype toward a tighter layer-1 bound (issue #40; README, "How far is layer 1's bound from the
worst input?"): for each ALiBi model of the scan and each byte a, a lower bound on the smallest variance of layer 0's
second LayerNorm input x = E[a] + b_O + o over every attention output o of layer 0, o = sum_h u_h W_O^h with u_h in
the convex hull of head h's 256 value vectors (a superset of what inputs reach). The variance |P x|^2/d (P = I - 11^T/d)
is convex in the mixture weights, so Frank-Wolfe's duality gap gives the lower bound f(x_k) - gap_k <= min. numpy only.

    python3 bench/sweeps/trained-scan/logit-search/ln_variance.py
"""
import gzip, json, pathlib
import numpy as np

here = pathlib.Path(__file__).resolve().parent
for i in [1, 9, 17, 25, 33, 41, 49, 57, 65]:
    d = json.load(gzip.open(here.parent / "shards" / f"trained-model-claims.shard-{i}-of-72.json.gz"))
    (key, v), = [(k, v) for k, v in d["record"]["results"].items() if v["result"] and v["result"].get("weights")]
    w = v["result"]["weights"]
    H = w["heads"]
    W = {n: np.frombuffer(bytes.fromhex(t["values"]), dtype=">u4").view(">f4").astype(np.float64).reshape(t["shape"])
         for n, t in w["tensors"].items()}
    E = W["emb"]; D = E.shape[1]; DH = D // H
    mu = E.mean(-1, keepdims=True); var = ((E - mu) ** 2).mean(-1, keepdims=True)
    y = (E - mu) / np.sqrt(var + 1e-5) * W["l0.ln1.w"] + W["l0.ln1.b"]
    V = (y @ W["l0.qkv.w"] + W["l0.qkv.b"])[:, 2 * D:].reshape(256, H, DH)
    P = lambda x: x - x.mean(-1, keepdims=True)
    U = P(np.stack([V[:, h] @ W["l0.o.w"][h * DH:(h + 1) * DH] for h in range(H)]))  # [H, 256, D]
    base = P(E + W["l0.o.b"])                                                          # [a, D]
    u = np.repeat(U.mean(1)[None], 256, 0)                                             # [a, H, D]
    for _ in range(3000):
        r = base + u.sum(1)
        s = U[np.arange(H)[None, :], np.einsum("ad,hbd->ahb", r, U).argmin(-1)]          # FW vertex per head
        step = (s - u).sum(1)
        num = -(r * step).sum(-1)
        gap = 2 * num / D
        u = u + np.clip(num / ((step * step).sum(-1) + 1e-300), 0, 1)[:, None, None] * (s - u)
    r = base + u.sum(1)
    f = (r * r).sum(-1) / D
    lo = f - np.maximum(gap, 0)
    print(f"{key.split(' ')[0]} {key.split(' ')[1]}: min over bytes of the smallest variance >= {lo.min():.3g} "
          f"(attained <= {f.min():.3g}); E[a] + b_O's own variance >= {((base ** 2).sum(-1) / D).min():.3g}; "
          f"so 1/sqrt(var + eps) <= {1 / np.sqrt(lo.min() + 1e-5):.1f} against 1/sqrt(eps) = {1 / np.sqrt(1e-5):.1f}")
