#!/usr/bin/env python3
"""The byte model's forward pass over ALL query rows (the report's quantity: crates/attncheck-lm/src/model.rs
`content_logit_ranges`: for layer 1's head h, max over queries i of max_{j<=i} s_ij - min_{j<=i} s_ij, s = q.k/sqrt(d_h),
no position bias), batched, in numpy f64 (untrusted), and its gradient with respect to the one-hot input for one
(query, max key, min key) triple, by a hand-written backward pass (checked against finite differences: `python3 net.py
SHARD gradcheck`). The weights come from zonotope_pilot.load; the forward pass is long_search.py's, extended to every row.

    python3 net.py SHARD check       # found.tsv's and long/'s inputs: their ranges here beside the stored ones
    python3 net.py SHARD gradcheck
"""
import pathlib, re, sys
import numpy as np

here = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(here.parent))
from zonotope_pilot import load, EPS  # noqa: E402

SHARDS = {1: "L32 alibi-paper-s1", 9: "L32 alibi-paper-s2", 17: "L32 alibi-paper-s3", 25: "L128 alibi-paper-s1",
          33: "L128 alibi-paper-s2", 41: "L128 alibi-paper-s3", 49: "L512 alibi-paper-s1", 57: "L512 alibi-paper-s2",
          65: "L512 alibi-paper-s3"}


def ln_f(x, g, b):
    n = x - x.mean(-1, keepdims=True); s = np.sqrt((n ** 2).mean(-1, keepdims=True) + EPS)
    return n / s * g + b, (n, s, g)


def ln_b(dy, cache):
    n, s, g = cache; gg = dy * g
    return (gg - gg.mean(-1, keepdims=True) - n * (gg * n).mean(-1, keepdims=True) / s ** 2) / s


class Net:
    def __init__(self, shard):
        key, H, W = load(shard)
        self.name = " ".join(key.split(" ")[:2]); assert self.name == SHARDS[shard], (shard, key)
        self.W, self.H = W, H
        self.D = W["emb"].shape[1]; self.DH = self.D // H
        self.slopes = 2.0 ** -(np.arange(H) + 1)

    def forward(self, B, h, cache=False):
        """B [bt, n] bytes -> Q, K [bt, n, DH] of layer 1's head h (and the caches of one input for `grad`)"""
        W, H, D, DH = self.W, self.H, self.D, self.DH
        bt, n = B.shape
        x0 = W["emb"][B]
        i = np.arange(n); dist = i[:, None] - i[None, :]
        y0, c0 = ln_f(x0, W["l0.ln1.w"], W["l0.ln1.b"]); qkv = y0 @ W["l0.qkv.w"] + W["l0.qkv.b"]
        q, k, v = [qkv[..., j * D:(j + 1) * D].reshape(bt, n, H, DH).transpose(0, 2, 1, 3) for j in range(3)]
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(DH) - self.slopes[None, :, None, None] * dist
        s = np.where(dist >= 0, s, -np.inf); s = s - s.max(-1, keepdims=True); a = np.exp(s); a /= a.sum(-1, keepdims=True)
        o = (a @ v).transpose(0, 2, 1, 3).reshape(bt, n, D)
        x1 = x0 + o @ W["l0.o.w"] + W["l0.o.b"]
        y1, c1 = ln_f(x1, W["l0.ln2.w"], W["l0.ln2.b"])
        pre = y1 @ W["l0.fc1.w"] + W["l0.fc1.b"]
        x2 = x1 + np.maximum(pre, 0) @ W["l0.fc2.w"] + W["l0.fc2.b"]
        z, c2 = ln_f(x2, W["l1.ln1.w"], W["l1.ln1.b"])
        wq, bq = W["l1.qkv.w"][:, h * DH:(h + 1) * DH], W["l1.qkv.b"][h * DH:(h + 1) * DH]
        wk, bk = W["l1.qkv.w"][:, D + h * DH:D + (h + 1) * DH], W["l1.qkv.b"][D + h * DH:D + (h + 1) * DH]
        Q, K = z @ wq + bq, z @ wk + bk
        if cache:
            return Q, K, (c0, q, k, v, a, c1, pre, c2, wq, wk)
        return Q, K

    def scores(self, Q, K):
        """[bt, n, n] content logits, -inf/+inf outside the causal mask handled by the callers"""
        return Q @ K.transpose(0, 2, 1) / np.sqrt(self.DH)

    def ranges(self, B, h, chunk=None):
        """all-rows range of each input [bt] and its (query, max key, min key) triples [bt, 3]"""
        bt, n = B.shape
        chunk = chunk or max(1, int(2 ** 21 // (self.H * n * n)))
        out = np.empty(bt); tri = np.empty((bt, 3), dtype=int)
        tril = np.tril(np.ones((n, n), dtype=bool))
        for s0 in range(0, bt, chunk):
            Q, K = self.forward(B[s0:s0 + chunk], h)
            S = self.scores(Q, K)
            hi = np.where(tril, S, -np.inf); lo = np.where(tril, S, np.inf)
            r = hi.max(-1) - lo.min(-1)                                   # [c, n] per row
            i = r.argmax(-1); c = np.arange(len(i))
            out[s0:s0 + chunk] = r[c, i]
            tri[s0:s0 + chunk] = np.stack([i, hi[c, i].argmax(-1), lo[c, i].argmin(-1)], 1)
        return out, tri

    def grad(self, b, h, tri, dx0_only=False):
        """d(s_ia - s_ib)/d(one-hot input) [n, 256] for one input b [n] at the triple (i, a, b) (or d/dx0 [n, D])"""
        W, H, D, DH = self.W, self.H, self.D, self.DH
        n = len(b); i, ja, jb = tri
        Q, K, (c0, q, k, v, a, c1, pre, c2, wq, wk) = self.forward(b[None], h, cache=True)
        Q, K = Q[0], K[0]
        dQ = np.zeros((n, DH)); dK = np.zeros((n, DH))
        dQ[i] = (K[ja] - K[jb]) / np.sqrt(DH); dK[ja] += Q[i] / np.sqrt(DH); dK[jb] -= Q[i] / np.sqrt(DH)
        dz = (dQ @ wq.T + dK @ wk.T)[None]
        dx2 = ln_b(dz, c2)
        dr = (dx2 @ W["l0.fc2.w"].T) * (pre > 0)
        dx1 = dx2 + ln_b(dr @ W["l0.fc1.w"].T, c1)
        do = (dx1 @ W["l0.o.w"].T).reshape(1, n, H, DH).transpose(0, 2, 1, 3)       # [1, H, n, DH]
        dA = do @ v.transpose(0, 1, 3, 2); dv = a.transpose(0, 1, 3, 2) @ do
        dS = a * (dA - (dA * a).sum(-1, keepdims=True)) / np.sqrt(DH)
        dq = dS @ k; dk = dS.transpose(0, 1, 3, 2) @ q
        dqkv = np.concatenate([t.transpose(0, 2, 1, 3).reshape(1, n, D) for t in (dq, dk, dv)], -1)
        dx0 = dx1 + ln_b(dqkv @ W["l0.qkv.w"].T, c0)
        return dx0[0] if dx0_only else dx0[0] @ W["emb"].T


def hexbytes(s):
    return np.frombuffer(bytes.fromhex(s), dtype=np.uint8).astype(int)


def stored(name):
    """the stored searches' inputs of one model: (head, source, stored range, bytes) from found.tsv (all-rows range,
    the model's own f64 forward pass), long_search.py's outputs (last-row range) and gcg_search.py's (long2/*.txt)"""
    out = []
    wname = "W_" + name.replace(" ", "_")
    for line in open(here.parent / "found.tsv"):
        f = line.rstrip("\n").split("\t")
        if f[0] == wname and f[1] == "1":
            out.append((int(f[2]), "found.tsv", float(f[4]), hexbytes(f[6])))
    texts = [(here.parent / "zonotope_pilot-results.txt").read_text()] + [p.read_text() for p in sorted((here.parent / "long").glob("shard-*.txt"))]
    for t in texts:
        for m in re.finditer(r"(L\d+ alibi-paper-s\d) head (\d) length (\d+): last-row range ([0-9.]+) \(.*?\) bytes ([0-9a-f]+)", t):
            if m.group(1) == name:
                out.append((int(m.group(2)), f"long_search length {m.group(3)}", float(m.group(4)), hexbytes(m.group(5))))
    for p in sorted(here.glob("*.txt")):
        for m in re.finditer(r"(L\d+ alibi-paper-s\d) head (\d) (length \d+ init \w+ seed \d+): all-rows range ([0-9.]+) .*? bytes ([0-9a-f]+)", p.read_text()):
            if m.group(1) == name:
                out.append((int(m.group(2)), f"gcg_search {m.group(3)}", float(m.group(4)), hexbytes(m.group(5))))
    return out


if __name__ == "__main__":
    net = Net(int(sys.argv[1]))
    if sys.argv[2] == "check":
        for h, src, r, b in stored(net.name):
            allr, tri = net.ranges(b[None], h)
            Q, K = net.forward(b[None], h); last = net.scores(Q, K)[0, -1]
            print(f"{net.name} head {h} {src}: stored {r:.6f}, here all rows {allr[0]:.6f} (row {tri[0, 0]}), last row {last.max() - last.min():.6f}")
    elif sys.argv[2] == "gradcheck":
        rng = np.random.default_rng(1)
        E0 = net.W["emb"]
        for n, h in ((24, 3), (96, 7)):
            b = rng.integers(256, size=n)
            _, tri = net.ranges(b[None], h); tri = tri[0]
            f = lambda B: (lambda Q, K: (Q[:, tri[0]] * (K[:, tri[1]] - K[:, tri[2]])).sum(-1) / np.sqrt(net.DH))(*net.forward(B, h))
            dx0 = net.grad(b, h, tri, dx0_only=True)
            for p in sorted({0, n // 2, *tri.tolist()}):
                d = rng.normal(size=net.D); t = 1e-5
                B2 = b.copy(); B2[p] = 256
                net.W["emb"] = np.vstack([E0, E0[b[p]] + t * d]); fp = f(B2[None])[0]
                net.W["emb"] = np.vstack([E0, E0[b[p]] - t * d]); fm = f(B2[None])[0]
                net.W["emb"] = E0
                print(f"n {n} head {h} triple {tri.tolist()} pos {p}: central difference {(fp - fm) / (2 * t):+.6e}, backward {dx0[p] @ d:+.6e}")
