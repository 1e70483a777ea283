#!/usr/bin/env python3
"""Untrusted f64 search (issue #40; README, "The zonotope road, measured"): can LONGER inputs raise the range A that
the byte search (probe.rs: lengths 16 and 24) reaches for layer 1's heads? ALiBi's slopes 2^-1 ... 2^-8 let the
heads of layer 0 look at different distance bands, so a long input can steer the heads' attention outputs more
independently, toward the hull relaxation's freedom (H). Coordinate ascent on the LAST query's row range
(max_j s_nj - min_j s_nj, s = q.k/sqrt(d_h), j <= n, no position bias: probe.rs's quantity) over inputs of length n:
each step tries all 256 bytes at one position (batched numpy forward passes, f64), positions in seeded random order,
plus "band" moves (a run of 2^k positions set to one byte). `check` evaluates found.tsv's inputs of the shard's model
(cut after the query that attains their range: a row depends on the bytes up to its query only) with the same
forward pass and prints them beside found.tsv's ranges (the model's own f64 forward pass): they agree to the 6
printed decimals on shard 1.

    python3 long_search.py SHARD LENGTHS HEADS [STARTS] [SWEEPS]     # e.g. 1 32,64,128 0,3 2 3
    python3 long_search.py SHARD check
"""
import sys, time, pathlib
import numpy as np
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from zonotope_pilot import load, EPS

shard = int(sys.argv[1]); check = sys.argv[2] == "check"
lengths = [] if check else [int(x) for x in sys.argv[2].split(",")]
heads = [] if check else [int(x) for x in sys.argv[3].split(",")]
starts = int(sys.argv[4]) if len(sys.argv) > 4 else 2; sweeps = int(sys.argv[5]) if len(sys.argv) > 5 else 3
key, H, W = load(shard)
D = W["emb"].shape[1]; DH = D // H; slopes = 2.0 ** -(np.arange(H) + 1)


def ln(x, g, b):
    n = x - x.mean(-1, keepdims=True); return n / np.sqrt((n ** 2).mean(-1, keepdims=True) + EPS) * g + b


def last_row_range(B, h):
    """B [batch, n] bytes -> the last query's row range of layer 1's head h, [batch]"""
    bt, n = B.shape; x = W["emb"][B]
    i = np.arange(n); dist = i[:, None] - i[None, :]
    y = ln(x, W["l0.ln1.w"], W["l0.ln1.b"]); qkv = y @ W["l0.qkv.w"] + W["l0.qkv.b"]
    q, k, v = [qkv[..., j * D:(j + 1) * D].reshape(bt, n, H, DH).transpose(0, 2, 1, 3) for j in range(3)]
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(DH) - slopes[None, :, None, None] * dist
    s = np.where(dist >= 0, s, -np.inf); s = s - s.max(-1, keepdims=True); a = np.exp(s); a /= a.sum(-1, keepdims=True)
    o = (a @ v).transpose(0, 2, 1, 3).reshape(bt, n, D) @ W["l0.o.w"] + W["l0.o.b"]
    x = x + o
    x = x + np.maximum(ln(x, W["l0.ln2.w"], W["l0.ln2.b"]) @ W["l0.fc1.w"] + W["l0.fc1.b"], 0) @ W["l0.fc2.w"] + W["l0.fc2.b"]
    y = ln(x, W["l1.ln1.w"], W["l1.ln1.b"])
    wq = W["l1.qkv.w"][:, h * DH:(h + 1) * DH]; bq = W["l1.qkv.b"][h * DH:(h + 1) * DH]
    wk = W["l1.qkv.w"][:, D + h * DH:D + (h + 1) * DH]; bk = W["l1.qkv.b"][D + h * DH:D + (h + 1) * DH]
    qn = y[:, -1] @ wq + bq; kk = y @ wk + bk
    sc = np.einsum("bd,bnd->bn", qn, kk) / np.sqrt(DH)
    return sc.max(-1) - sc.min(-1)


def trial(cur, h, positions_sets):
    """try all 256 bytes on each set of positions (one set at a time), keep the best strictly better"""
    best = last_row_range(cur[None], h)[0]
    for ps in positions_sets:
        C = np.repeat(cur[None], 256, 0); C[:, ps] = np.arange(256)[:, None]
        for s0 in range(0, 256, 64):
            r = last_row_range(C[s0:s0 + 64], h); j = r.argmax()
            if r[j] > best + 1e-12: best, cur = r[j], C[s0 + j].copy()
    return cur, best


if check:
    name = "W_" + key.split(" ")[0] + "_" + key.split(" ")[1]
    for line in open(pathlib.Path(__file__).resolve().parent / "found.tsv"):
        f = line.rstrip("\n").split("\t")
        if f[0] != name or f[1] != "1": continue
        b = np.frombuffer(bytes.fromhex(f[6]), dtype=np.uint8).astype(int)[:int(f[5]) + 1]
        print(f"head {f[2]}: found.tsv {f[4]}, here {last_row_range(b[None], int(f[2]))[0]:.6f}")
rng = np.random.default_rng(40)
for h in heads:
    for n in lengths:
        t0 = time.process_time(); top = (0, None)
        for st in range(starts):
            cur = rng.integers(256, size=n)
            for sw in range(sweeps):
                bands = [np.arange(s0, min(n, s0 + w)) for w in (2 ** k for k in range(1, int(np.log2(n)) + 1))
                         for s0 in range(0, n, w)]
                singles = [[p] for p in rng.permutation(n)]
                order = bands + singles
                new, val = trial(cur, h, order)
                done = np.array_equal(new, cur); cur = new
                if done: break
            if val > top[0]: top = (val, cur.copy())
        print(f"{key.split(' ')[0]} {key.split(' ')[1]} head {h} length {n}: last-row range {top[0]:.4f} "
              f"({time.process_time() - t0:.0f} CPU-s) bytes {bytes(top[1].astype(np.uint8)).hex()}", flush=True)
print(f"# load average {open('/proc/loadavg').read().split()[0]}")
