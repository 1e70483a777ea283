#!/usr/bin/env python3
"""Untrusted f64 search (issue #40): larger layer-1 content-logit ranges (the report's quantity: the largest row range
over ALL query rows, net.py) from longer inputs, by greedy coordinate-gradient ascent (GCG, as in adversarial-prompt
searches): at each step the gradient of s_ia - s_ib (the current best row i, its max key a and min key b) with respect
to the one-hot input ranks, per position, the bytes whose substitution the linearisation says gains most; a batch of
candidates (single substitutions from those top-k lists, double ones, runs of 2-16 positions set to one byte, random
ones anywhere) is evaluated EXACTLY (all rows), and the best is kept if it is strictly better. After `stall` steps
without gain, every byte is tried at the positions of the triple and their neighbours (exhaustive coordinate moves);
if that gains nothing either, the start ends (a local optimum) and the next begins, until the CPU budget is spent.

Starts: `rand` (seeded random bytes of the given length), or `seed` (the best stored input for the head, cut after its
best query row, as a PREFIX, followed by random bytes up to the length: a causal model's prefix rows are unchanged, so
the start is at least the stored best), or `polish` (the first start is the best stored input as it is, including
gcg_search.py's own lines, and a stall tries every byte at EVERY position up to the row, not only near the triple; the
later starts are random).

    python3 gcg_search.py SHARD HEADS LENGTH INIT CPU_S [SEED] [OUT]   # e.g. 57 7 128 rand 60 40 long2/shard-57.txt
Each (model, head, length, init, seed) whose line is already in OUT is skipped (resumable); a line is appended per
head when it is done.
"""
import pathlib, sys, time
import numpy as np

here = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(here))
from net import Net, stored  # noqa: E402

shard = int(sys.argv[1]); heads = [int(x) for x in sys.argv[2].split(",")]; n = int(sys.argv[3]); init = sys.argv[4]
budget = float(sys.argv[5]); seed = int(sys.argv[6]) if len(sys.argv) > 6 else 40
out = pathlib.Path(sys.argv[7]) if len(sys.argv) > 7 else None
net = Net(shard)
BATCH, TOPK, STALL = 128, 16, 6


def best_stored(h):
    """the stored input with the largest all-rows range for head h, cut after the row that attains it"""
    top = (-1.0, None)
    for hh, src, _, b in stored(net.name):
        if hh != h: continue
        r, tri = net.ranges(b[None], h)
        if r[0] > top[0]: top = (r[0], b[:tri[0, 0] + 1])
    return top


def candidates(cur, L, i, rng):
    """a batch of inputs near cur: L [n, 256] linear gains, i the triple's row (positions > i do not move it)"""
    m = i + 1
    top = np.argsort(-L[:m], axis=1)[:, :TOPK]                          # [m, TOPK]
    C = np.repeat(cur[None], BATCH, 0)
    k = 0
    for _ in range(BATCH // 2):                                         # single substitutions, gradient-ranked
        p = rng.integers(m); C[k, p] = top[p, rng.integers(TOPK)]; k += 1
    for _ in range(BATCH // 8):                                         # double
        for p in rng.integers(m, size=2): C[k, p] = top[p, rng.integers(TOPK)]
        k += 1
    for _ in range(BATCH // 8):                                         # runs of one byte
        w = 2 ** rng.integers(1, 5); s0 = rng.integers(max(1, m - w + 1)); ps = np.arange(s0, min(len(cur), s0 + w))
        C[k, ps] = np.argsort(-L[ps].sum(0))[rng.integers(8)]; k += 1
    while k < BATCH:                                                    # random, anywhere
        C[k, rng.integers(len(cur))] = rng.integers(256); k += 1
    return C


def exhaustive(cur, R, positions, h):
    for p in positions:
        C = np.repeat(cur[None], 256, 0); C[:, p] = np.arange(256)
        r, _ = net.ranges(C, h); j = r.argmax()
        if r[j] > R + 1e-9: cur, R = C[j].copy(), r[j]
    return cur, R


def search(h, rng, t_end, start_best):
    top = start_best
    st = 0
    while time.process_time() < t_end:
        if init == "polish" and st == 0 and top[1] is not None:
            cur = top[1].copy()
        elif init == "seed" and st == 0 and top[1] is not None:
            pre = top[1][:n]; cur = np.concatenate([pre, rng.integers(256, size=n - len(pre))])
        else:
            cur = rng.integers(256, size=n)
        m = len(cur)
        R, tri = net.ranges(cur[None], h); R, tri = R[0], tri[0]
        stall = 0; steps = 0
        while time.process_time() < t_end:
            G = net.grad(cur, h, tri); L = G - G[np.arange(m), cur][:, None]
            C = candidates(cur, L, tri[0], rng); r, tr = net.ranges(C, h); j = r.argmax(); steps += 1
            if r[j] > R + 1e-9:
                cur, R, tri = C[j].copy(), r[j], tr[j]; stall = 0; continue
            stall += 1
            if stall >= STALL:
                ps = sorted({min(m - 1, max(0, p + d)) for p in tri for d in (-2, -1, 0, 1, 2)})
                if init == "polish" and st == 0: ps = rng.permutation(tri[0] + 1)
                c2, R2 = exhaustive(cur, R, ps, h)
                if R2 <= R + 1e-9: break
                cur, R = c2, R2; _, tri = net.ranges(cur[None], h); tri = tri[0]; stall = 0
        if R > top[0]: top = (R, cur.copy(), tri.copy())
        print(f"#   head {h} start {st}: {R:.4f} after {steps} steps", file=sys.stderr, flush=True)
        st += 1
    return top, st


rng = np.random.default_rng(seed)
done = out.read_text() if out and out.exists() else ""
for h in heads:
    tag = f"{net.name} head {h} length {n} init {init} seed {seed}:"
    if tag in done: continue
    t0 = time.process_time()
    sb = best_stored(h)
    (R, b, tri), starts = search(h, rng, t0 + budget, (sb[0], sb[1], None) if init in ("seed", "polish") else (-1.0, None, None))
    if tri is None: _, tri = net.ranges(b[None], h); tri = tri[0]
    b = b[:tri[0] + 1]                                                  # the rows after the best one add nothing
    line = (f"{tag} all-rows range {R:.6f} (row {tri[0]}, max key {tri[1]}, min key {tri[2]}; stored best {sb[0]:.6f}; "
            f"{starts} starts, {time.process_time() - t0:.0f} CPU-s, load {open('/proc/loadavg').read().split()[0]}) "
            f"bytes {bytes(b.astype(np.uint8)).hex()}")
    print(line, flush=True)
    if out:
        with open(out, "a") as f: f.write(line + "\n")
