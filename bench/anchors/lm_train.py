"""Training throughput of the trained-model claim's quick model in PyTorch (CPU).

The same model as crates/attncheck-lm (model.rs): byte vocabulary 256, pre-LayerNorm
decoder, H = 8 heads, an additive [H, L, L] attention bias plus the causal mask, MLP of
width 4·hidden with ReLU, untied output layer; AdamW (0.9, 0.999, 1e-8, no weight
decay), global gradient clipping at 1.0, batches of random windows of random printable
bytes. Prints one line in the same format as
`cargo run --release -p attncheck-lm --example throughput`.

    python3 bench/anchors/lm_train.py [hidden layers length batch steps] [--threads N]
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x, bias):
        b, l, d = x.shape
        h, dh = self.h, d // self.h
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (t.view(b, l, h, dh).transpose(1, 2) for t in (q, k, v))
        s = q @ k.transpose(-1, -2) / math.sqrt(dh) + bias
        a = torch.softmax(s, dim=-1)
        o = (a @ v).transpose(1, 2).reshape(b, l, d)
        x = x + self.o(o)
        return x + self.fc2(F.relu(self.fc1(self.ln2(x))))


class LM(nn.Module):
    def __init__(self, d, layers, h):
        super().__init__()
        self.emb = nn.Embedding(256, d)
        self.blocks = nn.ModuleList(Block(d, h) for _ in range(layers))
        self.lnf = nn.LayerNorm(d)
        self.head = nn.Linear(d, 256, bias=False)

    def forward(self, t, bias):
        x = self.emb(t)
        for blk in self.blocks:
            x = blk(x, bias)
        return self.head(self.lnf(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dims", nargs="*", type=int, default=[])
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    hidden, layers, length, batch, steps = (a.dims + [64, 2, 32, 16, 200][len(a.dims):])[:5]
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    h = 8
    model = LM(hidden, layers, h)
    causal = torch.full((length, length), float("-inf")).triu(1)
    bias = torch.zeros(h, length, length) + causal
    data = torch.randint(32, 128, (1 << 20,))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    g = torch.Generator().manual_seed(3)

    def run(n):
        for _ in range(n):
            off = torch.randint(0, data.numel() - length - 1, (batch,), generator=g)
            idx = off[:, None] + torch.arange(length + 1)[None, :]
            w = data[idx]
            logits = model(w[:, :-1], bias)
            loss = F.cross_entropy(logits.reshape(-1, 256), w[:, 1:].reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()

    run(5)
    t = time.perf_counter()
    c = time.process_time()
    run(steps)
    s = time.perf_counter() - t
    cpu = time.process_time() - c
    params = sum(p.numel() for p in model.parameters())
    print(
        f"pytorch {torch.__version__} ({a.threads} threads): hidden {hidden}, layers {layers}, heads {h}, "
        f"length {length}, batch {batch}: {steps} steps in {s:.2f} s = {steps / s:.2f} steps/s, "
        f"{steps * batch * length / s:.0f} tokens/s, CPU (user+sys) {1000 * cpu / steps:.1f} ms/step "
        f"({params} parameters)"
    )


if __name__ == "__main__":
    main()
