#!/usr/bin/env python3
"""Untrusted f64 pilot (issue #40; README, "The zonotope road, measured"): what bound on layer 1's content-logit row range
does a CERTIFIABLE propagation through layer 0 give, over the hull relaxation (layer 0's attention output of each head
anywhere in the convex hull of its 256 value vectors, independently at the query and at each key)?

Every step is a relaxation that is sound in exact arithmetic (the f64 here is untrusted: no rounding control), DeepZ /
DeepT style, on zonotopes c + sum_j g_j e_j, e in [-1, 1]^m:

  hull     each head's 256 vectors u = v W_O^h boxed in their principal axes (8 generators per head, 64 in all): a
           zonotope that contains the hull; per query byte a the centre is E[a] + b_O + sum_h centre_h.
  split    optional: bisect the noise box along the largest generators (2^k pieces; the pieces cover the zonotope).
           (Splitting the hull by value-vector clusters is NOT sound: a mixture of two clusters' vectors lies in
           neither cluster's hull. Only cuts of the set itself, here of its noise box, cover it.)
  LN       n = P x exact (affine). Variance v = |n|^2/D: a certified lower bound over the piece (dual of the box QP:
           |w|^2 >= 2 y.w - |y|^2, minimised over the box exactly, y from projected gradient), an upper bound from the
           coordinates' intervals. Then per coordinate the better (smaller radius) of
             (i)  interval scale: n_i s with s in [s_lo, s_hi] = n_i s_mid +- max|n_i| (s_hi - s_lo)/2;
             (ii) DeepT: v as an affine form (n_i^2 by chord/tangent over [l_i, u_i], fresh symbol each), 1/sqrt(v+eps)
                  by chord/tangent over [max(v_floor, l_v), u_v], the product n_i * s of two affine forms (cross
                  term |a|_1 |b|_1 as a fresh symbol);
           and the coordinate's range is clipped to |z_i| <= sqrt(D - 1) (a centred vector of norm <= sqrt(D)).
           Then gain and bias (affine).
  MLP      affine, ReLU by DeepZ (lambda = u/(u - l), fresh symbol per unstable neuron), affine; residual added
           (x2 = x1 + MLP: the same symbols, so the residual is exact).
  LN1      as LN; then q = z W_Q^h + b_Q, k = z W_K^h + b_K (affine).
  q.k      row range = max over query set Q_i and key sets K_j1, K_j2 of q.(k1 - k2) / sqrt(d_h), bounded by
           supp(Q_i, c_j1 - c_j2) + R_i(j1) + R_i(j2), R_i(j) = sum_s |c_i . g_js| + sum_r sum_s |g_ir . g_js|
           (the zonotope product bound; the centres' difference taken exactly, over all pairs (j1, j2) by
           a top-T block plus a separable bound for the rest).

`pieces` measures each step's loss on single pieces of growing split depth: per coordinate, the bound's width against
the width that points of the same piece reach (per coordinate the two noise-box vertices the stage's Jacobian at the
piece's centre points to, plus random vertices: a lower bound of the true width), at LN2's output, the MLP's output
x2, LN1's output z and head 0's q.

    python3 zonotope_pilot.py SHARD [SPLIT_DEPTHS] [HEADS]     # e.g. 1 0,6    (the bound Z per head)
    python3 zonotope_pilot.py pieces SHARD DEPTHS              # e.g. pieces 1 0,64,128,256,384,512
"""
import gzip, json, pathlib, sys, time, os
import numpy as np

root = pathlib.Path(__file__).resolve().parent.parent
EPS = 1e-5


def load(i):
    d = json.load(gzip.open(root / "shards" / f"trained-model-claims.shard-{i}-of-72.json.gz"))
    (key, v), = [(k, v) for k, v in d["record"]["results"].items() if v["result"] and v["result"].get("weights")]
    w = v["result"]["weights"]
    W = {n: np.frombuffer(bytes.fromhex(t["values"]), dtype=">u4").view(">f4").astype(np.float64).reshape(t["shape"])
         for n, t in w["tensors"].items()}
    return key, w["heads"], W


# ---------------------------------------------------------------- zonotope ops, batched: c [B, n], G [B, m, n]
def affine(c, G, Wm, b):
    return c @ Wm + b, G @ Wm


def rad(G):
    return np.abs(G).sum(1)


def fresh(G, r):
    """append fresh symbols, one per coordinate, radius r [B, n] (zero columns where r = 0 are kept: uniform shapes)"""
    B, m, n = G.shape
    F = np.zeros((B, n, n))
    idx = np.arange(n)
    F[:, idx, idx] = r
    return np.concatenate([G, F], 1)


def relu(c, G):
    r = rad(G); l = c - r; u = c + r
    lam = np.where(u <= 0, 0.0, np.where(l >= 0, 1.0, u / np.where(u - l > 0, u - l, 1)))
    mu = np.where((l < 0) & (u > 0), -lam * l / 2, 0.0)
    return lam * c + mu, fresh(G * lam[:, None, :], mu)


def var_floor(c, G, steps=600):
    """certified (in exact arithmetic) lower bound of min_e |c + e G|^2 over the box: for any y,
    |w|^2 >= 2 y.w - |y|^2 and min_e (2 y.(c + e G)) = 2 y.c - 2 sum_j |g_j . y|; y from FISTA (projected, accelerated)."""
    B, m, n = G.shape
    L = np.linalg.eigvalsh(np.einsum("bmn,bmk->bnk", G, G))[:, -1] * 1.01 + 1e-12          # spectral |G|^2
    e = np.zeros((B, m)); yk = e.copy(); t = 1.0
    for _ in range(steps):
        w = c + np.einsum("bm,bmn->bn", yk, G)
        e2 = np.clip(yk - np.einsum("bmn,bn->bm", G, w) / L[:, None], -1, 1)
        t2 = (1 + np.sqrt(1 + 4 * t * t)) / 2
        yk = e2 + (t - 1) / t2 * (e2 - e); e, t = e2, t2
    y = c + np.einsum("bm,bmn->bn", e, G)
    lo = 2 * (y * c).sum(-1) - (y * y).sum(-1) - 2 * np.abs(np.einsum("bmn,bn->bm", G, y)).sum(-1)
    return np.maximum(lo, 0.0), (y * y).sum(-1)


def sq_relax(c, r):
    """t^2 over [l, u] as lam t + mu +- beta (chord above, midpoint tangent below)"""
    l, u = c - r, c + r
    lam = l + u; m = (l + u) / 2
    lo_off, hi_off = -m * m, -l * u
    return lam, (lo_off + hi_off) / 2, (hi_off - lo_off) / 2


def rsqrt_relax(L, U):
    """f(v) = (v + EPS)^-1/2, convex decreasing, on [L, U]: chord above, tangent at the midpoint below (shifted to
    be parallel to the chord: the tangent of slope = chord slope), as lam v + mu +- beta"""
    f = lambda v: (v + EPS) ** -0.5
    same = U - L < 1e-12
    lam = np.where(same, -0.5 * (L + EPS) ** -1.5, (f(U) - f(L)) / np.where(same, 1, U - L))
    # tangent point t with f'(t) = lam: -1/2 (t + EPS)^-3/2 = lam
    t = (-2 * lam) ** (-2 / 3) - EPS
    t = np.clip(t, L, U)
    hi = f(L) - lam * L                   # chord: f(L) + lam (v - L)
    lo = f(t) - lam * t                   # parallel tangent
    return lam, (hi + lo) / 2, (hi - lo) / 2


def layernorm(c, G, g, b, stats=None):
    B, m, D = G.shape
    c = c - c.mean(-1, keepdims=True); G = G - G.mean(-1, keepdims=True)                # n = P x, exact
    r = rad(G)
    vf, vatt = var_floor(c, G)
    vlo = vf / D
    vhi = np.minimum((np.maximum(np.abs(c - r), np.abs(c + r)) ** 2).sum(-1), (np.linalg.norm(c, axis=-1) + np.linalg.norm(G, axis=-1).sum(-1)) ** 2) / D
    slo, shi = (vhi + EPS) ** -0.5, (vlo + EPS) ** -0.5
    # (i) interval scale
    smid, srad = (slo + shi) / 2, (shi - slo) / 2
    c1 = c * smid[:, None]; G1 = G * smid[:, None, None]; e1 = (np.abs(c) + r) * srad[:, None]
    # (ii) DeepT: v affine form over [G, fresh square symbols]
    lam, mu, beta = sq_relax(c, r)
    vc = ((lam * c + mu).sum(-1)) / D
    vG = np.einsum("bmn,bn->bm", G, lam) / D                                             # old symbols
    vF = beta / D                                                                        # fresh, one per coord
    vr = np.abs(vG).sum(-1) + vF.sum(-1)
    L = np.maximum(vc - vr, vlo); U = np.maximum(np.minimum(vc + vr, vhi), L)
    la, mu2, be2 = rsqrt_relax(L, U)
    sc = la * vc + mu2; sG = la[:, None] * vG; sF = la[:, None] * vF; sfresh = be2        # s = sc + sG e + sF f + sfresh e'
    s1 = np.abs(sG).sum(-1) + np.abs(sF).sum(-1) + sfresh                               # |s - sc|_1
    # n_i * s = c_i sc + c_i (s - sc) + sc (n_i - c_i) + (n_i - c_i)(s - sc)
    c2 = c * sc[:, None]
    G2 = G * sc[:, None, None] + c[:, None, :] * sG[:, :, None]                          # old symbols
    F2 = c[:, None, :] * sF[:, :, None]                                                  # square symbols [B, D, D]
    P2 = c * sfresh[:, None]                                                             # rsqrt symbol [B, D]
    e2 = r * s1[:, None]                                                                 # cross term, fresh per coord
    rad1 = rad(G1) + e1
    rad2 = rad(G2) + np.abs(F2).sum(1) + np.abs(P2) + e2
    pick2 = rad2 < rad1                                                                  # per coordinate
    cc = np.where(pick2, c2, c1)
    GG = np.where(pick2[:, None, :], G2, G1)
    FF = np.where(pick2[:, None, :], F2, 0.0)
    PP = np.where(pick2, P2, 0.0)
    ee = np.where(pick2, e2, e1)
    # clip to |z_i| <= sqrt(D - 1): where the affine form exceeds it, replace the coordinate by the box
    bound = np.sqrt(D - 1)
    tot = rad(GG) + np.abs(FF).sum(1) + np.abs(PP) + ee
    clip = (np.abs(cc) + tot > bound) & (tot > bound)
    cc = np.where(clip, 0.0, cc); GG = np.where(clip[:, None, :], 0.0, GG); FF = np.where(clip[:, None, :], 0.0, FF)
    PP = np.where(clip, 0.0, PP); ee = np.where(clip, bound, ee)
    Gout = np.concatenate([GG, FF, PP[:, None, :]], 1)
    Gout = fresh(Gout, ee)
    if stats is not None:
        stats.setdefault("vfloor", []).append(vlo); stats.setdefault("vatt", []).append(vatt); stats.setdefault("s_range", []).append((slo, shi))
        stats.setdefault("pick_deept", []).append(pick2.mean()); stats.setdefault("clipped", []).append(clip.mean())
    return cc * g + b, Gout * g


def drop_zero(G, tol=0.0):
    keep = np.abs(G).max(axis=(0, 2)) > tol
    return G[:, keep]


# ---------------------------------------------------------------- the model
class Model:
    def __init__(self, i):
        self.key, H, W = load(i)
        self.W = W; self.H = H
        E = W["emb"]; D = E.shape[1]; DH = D // H; self.D, self.DH = D, DH
        mu = E.mean(-1, keepdims=True); var = ((E - mu) ** 2).mean(-1, keepdims=True)
        y0 = (E - mu) / np.sqrt(var + EPS) * W["l0.ln1.w"] + W["l0.ln1.b"]
        V = (y0 @ W["l0.qkv.w"] + W["l0.qkv.b"])[:, 2 * D:].reshape(256, H, DH)
        self.U = np.stack([V[:, h] @ W["l0.o.w"][h * DH:(h + 1) * DH] for h in range(H)])   # [H, 256, D]
        self.base = E + W["l0.o.b"]
        cs, gs = [], []
        for h in range(H):
            Uh = self.U[h]; m = Uh.mean(0)
            _, _, vt = np.linalg.svd(Uh - m, full_matrices=False)
            vt = vt[:DH]
            p = (Uh - m) @ vt.T
            lo, hi = p.min(0), p.max(0)
            cs.append(m + ((lo + hi) / 2) @ vt); gs.append(((hi - lo) / 2)[:, None] * vt)
        self.hc = sum(cs); self.hG = np.concatenate(gs)                                     # [64 gens, D]
        self.gen_head = np.repeat(np.arange(H), DH)

    def pieces(self, depth):
        """bisect the noise box `depth` times, each time the piece's generator of largest norm"""
        cs = [np.zeros(self.D)]; Gs = [self.hG.copy()]
        for _ in range(depth):
            nc, nG = [], []
            for c, G in zip(cs, Gs):
                j = np.linalg.norm(G, axis=1).argmax()
                for sgn in (-1, 1):
                    G2 = G.copy(); G2[j] /= 2
                    nc.append(c + sgn * G2[j]); nG.append(G2)
            cs, Gs = nc, nG
        return np.array(cs), np.array(Gs)

    def x1(self, depth):
        pc, pG = self.pieces(depth)                                                         # [p, D], [p, 64, D]
        p = len(pc)
        c = (self.base[:, None, :] + self.hc + pc[None]).reshape(256 * p, self.D)
        G = np.broadcast_to(pG[None], (256, p) + pG.shape[1:]).reshape(256 * p, *pG.shape[1:])
        return c, np.ascontiguousarray(G), p

    def layer0(self, c, G, stats=None, keep=None):
        W = self.W
        c1, G1 = layernorm(c, G, W["l0.ln2.w"], W["l0.ln2.b"], stats)
        if keep is not None: keep["ln2"] = (c1, G1)
        h_c, h_G = affine(c1, G1, W["l0.fc1.w"], W["l0.fc1.b"])
        h_c, h_G = relu(h_c, h_G)
        o_c, o_G = affine(h_c, h_G, W["l0.fc2.w"], W["l0.fc2.b"])
        m0 = G.shape[1]
        # x2 = x1 + mlp: the x1 symbols are the first m0 of the MLP's symbols (LN keeps the old symbols first)
        o_G[:, :m0] += G
        x2c = c + o_c
        if keep is not None: keep["x2"] = (x2c, o_G)
        z_c, z_G = layernorm(x2c, o_G, W["l1.ln1.w"], W["l1.ln1.b"], stats)
        return z_c, z_G

    def qk(self, z_c, z_G, h):
        W, D, DH = self.W, self.D, self.DH
        wq, bq = W["l1.qkv.w"][:, h * DH:(h + 1) * DH], W["l1.qkv.b"][h * DH:(h + 1) * DH]
        wk, bk = W["l1.qkv.w"][:, D + h * DH:D + (h + 1) * DH], W["l1.qkv.b"][D + h * DH:D + (h + 1) * DH]
        return affine(z_c, z_G, wq, bq), affine(z_c, z_G, wk, bk)


def reduce(c, G, k):
    """Girard-style order reduction (sound): keep the k largest generators, box the rest (d extra)"""
    B, m, d = G.shape
    if m <= k + d: return G
    nrm = np.abs(G).sum(-1)
    idx = np.argsort(-nrm, axis=1)
    Gs = np.take_along_axis(G, idx[:, :, None], 1)
    box = np.abs(Gs[:, k:]).sum(1)
    Bx = np.zeros((B, d, d)); Bx[:, np.arange(d), np.arange(d)] = box
    return np.concatenate([Gs[:, :k], Bx], 1)


def row_bound(qc, qG, kc, kG, T=48, kq=24):
    """max over i, j1, j2 of supp(Q_i, c_j1 - c_j2) + R_i(j1) + R_i(j2), a sound bound of max q.(k1 - k2)"""
    qGr = reduce(qc, qG, kq)                                                                # [NQ, mq, d]
    NQ = len(qc)
    best = -np.inf; best_i = -1
    kr = rad(kG)                                                                            # [NK, d]
    # sum_r sum_s |g_ir . g_js| <= sum_r sum_d |g_ir,d| * ... exact form is too costly for all i, j: use per d
    # |g_ir . g_js| <= sum_d |g_ir,d| |g_js,d| -> sum_d rad(Q_i)_d rad(K_j)_d (a sound upper bound)
    qrad = rad(qGr)
    for i in range(NQ):
        ci, Gi = qc[i], qGr[i]
        R = np.abs(kG @ ci).sum(-1) + kr @ qrad[i]                                         # [NK]
        a = kc @ ci + R + np.abs(kc @ Gi.T).sum(-1)                                          # supp(Q_i, c_j) + R
        b = -kc @ ci + R + np.abs(kc @ Gi.T).sum(-1)                                         # supp(Q_i, -c_j) + R
        ta = np.argsort(-a)[:T]; tb = np.argsort(-b)[:T]
        dc = kc[ta][:, None, :] - kc[tb][None, :, :]                                         # [T, T, d]
        ex = dc @ ci + np.abs(dc @ Gi.T).sum(-1) + R[ta][:, None] + R[tb][None, :]
        val = ex.max()
        if T < len(a):
            sa, sb = np.sort(a)[::-1], np.sort(b)[::-1]
            val = max(val, sa[T] + sb[0], sa[0] + sb[T])
        if val > best: best, best_i = val, i
    return best, best_i


def main():
    shard = int(sys.argv[1])
    depths = [int(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else [0]
    heads = [int(x) for x in sys.argv[3].split(",")] if len(sys.argv) > 3 else None
    m = Model(shard)
    heads = range(m.H) if heads is None else heads
    print(f"# {m.key}: hull zonotope, 64 generators, sum of norms {np.linalg.norm(m.hG, axis=1).sum():.1f}", flush=True)
    for depth in depths:
        t0 = time.process_time()
        c, G, p = m.x1(depth)
        stats, zc, zG = {}, [], []
        CH = 32
        for s in range(0, len(c), CH):
            a, bq = m.layer0(c[s:s + CH], G[s:s + CH], stats)
            zc.append(a); zG.append(drop_zero(bq))
        t1 = time.process_time()
        vf = np.concatenate(stats["vfloor"][::2]); va = np.concatenate(stats["vatt"][::2]) / m.D
        print(f"depth {depth}: {p} pieces per byte, {len(c)} sets; layer 0 + LN1 {t1 - t0:.1f} CPU-s; "
              f"LN2 variance floor min {vf.min():.3g} median {np.median(vf):.3g} (attained min {va.min():.3g}); "
              f"DeepT picked {np.mean(stats['pick_deept'][::2]):.2f} / {np.mean(stats['pick_deept'][1::2]):.2f}, "
              f"clipped {np.mean(stats['clipped'][::2]):.2f} / {np.mean(stats['clipped'][1::2]):.2f} of coords (LN2 / LN1)",
              flush=True)
        for h in heads:
            t2 = time.process_time()
            qs, ks = [], []
            for a, bq in zip(zc, zG):
                (qc_, qG_), (kc_, kG_) = m.qk(a, bq, h)
                qs.append((qc_, reduce(qc_, qG_, 24))); ks.append((kc_, reduce(kc_, kG_, 24)))
            qc = np.concatenate([q[0] for q in qs]); qG = np.concatenate([q[1] for q in qs])
            kc = np.concatenate([k[0] for k in ks]); kG = np.concatenate([k[1] for k in ks])
            val, bi = row_bound(qc, qG, kc, kG)
            t3 = time.process_time()
            print(f"  head {h}: Z = {val / np.sqrt(m.DH):.2f} (worst query set {bi}: byte {bi // p}); "
                  f"q.k step {t3 - t2:.1f} CPU-s", flush=True)
    print(f"# load average {open('/proc/loadavg').read().split()[0]}")




def piece_study(m, depths, bytes_=(32, 101, 200), npieces=16, ns=300, seed=40):
    """per step loss on single pieces of growing split depth: each piece a random leaf of the bisection tree (the
    largest generator halved each time); bound width / sampled width (random vertices of the piece's noise box),
    median over coordinates and pieces, at LN2's output, x2 (after the MLP), LN1's output z, and q, k of head 0"""
    rng = np.random.default_rng(seed)
    W = m.W
    def ln(x, g, b):
        n = x - x.mean(-1, keepdims=True); return n / np.sqrt((n ** 2).mean(-1, keepdims=True) + EPS) * g + b
    h = 0; DH = m.DH; D = m.D
    wq, bq = W["l1.qkv.w"][:, h * DH:(h + 1) * DH], W["l1.qkv.b"][h * DH:(h + 1) * DH]
    for depth in depths:
        cs, Gs = [], []
        for a in bytes_:
            for _ in range(npieces):
                c = m.base[a] + m.hc; G = m.hG.copy()
                for _ in range(depth):
                    j = np.linalg.norm(G, axis=1).argmax(); G[j] /= 2; c = c + rng.choice([-1, 1]) * G[j]
                cs.append(c); Gs.append(G)
        c = np.array(cs); G = np.array(Gs)
        stats, keep = {}, {}
        t0 = time.process_time()
        zc, zG = m.layer0(c, G, stats, keep)
        t1 = time.process_time()
        (qc, qG), _ = m.qk(zc, zG, h)
        def stages(e):                                                                    # e [B, S, m]
            x1 = c[:, None] + np.einsum("bsm,bmn->bsn", e, G)
            y = ln(x1, W["l0.ln2.w"], W["l0.ln2.b"])
            x2 = x1 + np.maximum(y @ W["l0.fc1.w"] + W["l0.fc1.b"], 0) @ W["l0.fc2.w"] + W["l0.fc2.b"]
            z = ln(x2, W["l1.ln1.w"], W["l1.ln1.b"])
            return [y, x2, z, z @ wq + bq]
        # targeted points: per stage and output coordinate, the two noise-box vertices that the stage's Jacobian at
        # the piece's centre points to (+-sign(J_i)), and random vertices: a lower bound of the true range
        mdim = G.shape[1]; dlt = 1e-6
        pts = np.concatenate([np.zeros((len(c), 1, mdim)), dlt * np.eye(mdim)[None].repeat(len(c), 0)], 1)
        st = stages(pts)
        row = []
        for k, (name, (bc, bG)) in enumerate((("LN2", keep["ln2"]), ("x2", keep["x2"]), ("z", (zc, zG)), ("q", (qc, qG)))):
            J = (st[k][:, 1:] - st[k][:, :1]) / dlt                                         # [B, m, n]
            sg = np.sign(J).transpose(0, 2, 1)                                             # [B, n, m]
            e = np.concatenate([sg, -sg, rng.choice([-1.0, 1.0], (len(c), ns, mdim))], 1)
            s = stages(e)[k]
            bw = 2 * rad(bG); sw = s.max(1) - s.min(1)
            row.append(f"{name} {np.median(bw / sw):.2f}x")
        Pc = c - c.mean(-1, keepdims=True); PG = G - G.mean(-1, keepdims=True)
        relext = np.linalg.norm(PG, axis=-1).sum(-1) / np.sqrt(D * stats["vfloor"][0] + 1e-30)
        shs = stats["s_range"][0]
        print(f"  depth {depth:3d}: piece extent / distance from 0 (median) {np.median(relext):8.2f}; "
              f"s_hi/s_lo (LN2) {np.median(shs[1] / shs[0]):7.2f}; LN2 clipped {stats['clipped'][0]:.2f}, DeepT "
              f"{stats['pick_deept'][0]:.2f}; LN1 clipped {stats['clipped'][1]:.2f}; width bound/sampled: "
              + ", ".join(row) + f"; {1000 * (t1 - t0) / len(c):.1f} CPU-ms per piece", flush=True)


def ball_study(m, nbytes=256, seed=40):
    """the unsplit chain with LN2's output enclosed by its ball instead of a clipped box (a kernel would keep the
    norm: |z| <= sqrt(D) on the centred subspace; symbols with an l2 constraint, 'ellipsotope'), the MLP by DeepZ on
    that, x2 = x1 + MLP with x1's hull symbols kept. Measures the MLP's own loss (x2's bound width against the width
    reached by sampled points: exact forward passes at the Jacobian-pointed vertices of x1's box, and random ones)
    and whether x2's set stays away from 0 (if not, LN1's output can only be enclosed by the ball: Z = bound 6)."""
    W, D = m.W, m.D
    rng = np.random.default_rng(seed)
    Q = np.linalg.svd(np.eye(D) - 1.0 / D)[0][:, :D - 1]                                 # centred basis, D x (D-1)
    A0 = np.sqrt(D) * (W["l0.ln2.w"][:, None] * Q).T                                     # ball symbols -> y
    hc = W["l0.ln2.b"] @ W["l0.fc1.w"] + W["l0.fc1.b"]; hA = A0 @ W["l0.fc1.w"]
    r = np.linalg.norm(hA, axis=0); l, u = hc - r, hc + r
    lam = np.where(u <= 0, 0.0, np.where(l >= 0, 1.0, u / np.where(u - l > 0, u - l, 1)))
    mu = np.where((l < 0) & (u > 0), -lam * l / 2, 0.0)
    oc = (lam * hc + mu) @ W["l0.fc2.w"] + W["l0.fc2.b"]
    oA = (hA * lam) @ W["l0.fc2.w"]; oF = mu[:, None] * W["l0.fc2.w"]
    mlp_rad = np.linalg.norm(oA, axis=0) + np.abs(oF).sum(0)
    print(f"  ball LN2: fc1 neurons unstable {((l < 0) & (u > 0)).mean():.2f}; MLP output radius per coordinate "
          f"median {np.median(mlp_rad):.2f}")
    # sampled MLP output widths over x1 in the hull zonotope (every byte): lower bound of the true width
    def ln(x, g, b):
        n = x - x.mean(-1, keepdims=True); return n / np.sqrt((n ** 2).mean(-1, keepdims=True) + EPS) * g + b
    mlp = lambda x1: np.maximum(ln(x1, W["l0.ln2.w"], W["l0.ln2.b"]) @ W["l0.fc1.w"] + W["l0.fc1.b"], 0) @ W["l0.fc2.w"] + W["l0.fc2.b"]
    e = rng.choice([-1.0, 1.0], (20000, 64))
    x1 = (m.base[rng.integers(256, size=20000)] + m.hc + e @ m.hG)
    o = mlp(x1)
    sw = o.max(0) - o.min(0)
    print(f"  MLP output: bound width / sampled width, median over coordinates {np.median(2 * mlp_rad / sw):.2f}x "
          f"(bound {np.median(2 * mlp_rad):.2f}, sampled {np.median(sw):.2f})")
    # the exact range of the MLP over the ball itself (DeepZ's own loss): per output coordinate, projected gradient
    # ascent of +-o_i over the centred ball (8 starts each): a lower bound of the true range
    W1, b1, W2, g2, be2 = W["l0.fc1.w"], W["l0.fc1.b"], W["l0.fc2.w"], W["l0.ln2.w"], W["l0.ln2.b"]
    S = 8; dirs = np.concatenate([np.eye(D), -np.eye(D)]).repeat(S, 0)                     # [2 D S, D]
    f = rng.normal(size=(len(dirs), D - 1)); f *= np.sqrt(D) / np.linalg.norm(f, axis=1, keepdims=True)
    for it in range(400):
        y = be2 + (f @ Q.T) * g2; pre = y @ W1 + b1
        gy = ((dirs @ W2.T) * (pre > 0)) @ W1.T                                            # d(dir.o)/dy
        gf = (gy * g2) @ Q
        f = f + 0.05 * np.sqrt(D) * gf / (np.linalg.norm(gf, axis=1, keepdims=True) + 1e-12)
        f *= np.minimum(1, np.sqrt(D) / np.linalg.norm(f, axis=1, keepdims=True))
    y = be2 + (f @ Q.T) * g2; o = np.maximum(y @ W1 + b1, 0) @ W2 + W["l0.fc2.b"]
    val = (o * dirs).sum(-1).reshape(2, D, S).max(-1)                                   # max o_i, max -o_i
    bw_ball = val[0] + val[1]
    print(f"  MLP over the ball (its exact range, by ascent): bound width / reached width, median over coordinates "
          f"{np.median(2 * mlp_rad / bw_ball):.2f}x (reached {np.median(bw_ball):.2f}); the hull's own sampled width "
          f"is {np.median(sw / bw_ball):.2f} of the ball's")
    # x2 = x1 + o: is 0 (after centring) in reach? minimise |P x2|^2 over box (hull + fresh) x ball symbols
    G = np.concatenate([m.hG, oF]); G = G - G.mean(-1, keepdims=True)
    Ab = oA - oA.mean(-1, keepdims=True)
    c = m.base + m.hc + oc; c = c - c.mean(-1, keepdims=True)
    best = np.inf
    e = np.zeros((len(c), len(G))); f = np.zeros((len(c), len(Ab)))
    L = np.linalg.eigvalsh(G.T @ G + Ab.T @ Ab)[-1] * 1.01
    for _ in range(3000):
        w = c + e @ G + f @ Ab
        e = np.clip(e - (w @ G.T) / L, -1, 1)
        f = f - (w @ Ab.T) / L; nf = np.linalg.norm(f, axis=1, keepdims=True); f = f * np.minimum(1, 1 / np.maximum(nf, 1e-300))
    w = c + e @ G + f @ Ab
    v = (w * w).sum(-1) / D
    print(f"  x2's set (ball LN2, DeepZ MLP, hull x1): smallest variance found over it, per byte: min {v.min():.2e}, "
          f"median {np.median(v):.2e}, max {v.max():.2e} (eps = 1e-5): LN1's input set reaches "
          f"{'(nearly) 0 for every byte: LN1 -> the ball, Z = bound 6' if v.max() < 1e-4 else 'not 0'}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "ball":
        m = Model(int(sys.argv[2])); print(f"# {m.key}"); ball_study(m)
    elif sys.argv[1] == "pieces":
        piece_study(Model(int(sys.argv[2])), [int(x) for x in sys.argv[3].split(",")])
    else:
        main()

