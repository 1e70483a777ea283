#!/usr/bin/env bash
# Training throughput of the trained-model claim's models, candle (attncheck-lm) against
# PyTorch on the CPU, same model, same batch, one run each (bench/anchors/lm_train.py).
# Quick-profile size (hidden 64, 2 layers, L 32, batch 16) and the full profile's
# (hidden 256, 4 layers, L 128, batch 16). PyTorch's CPU wheel comes from PyPI:
# `pip install torch` (add `--index-url` of the CPU wheel host where it is reachable to
# avoid the CUDA libraries). Run it on a quiet machine (check `uptime`).
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 -c 'import torch' 2>/dev/null || pip install --quiet torch
cargo build --release --quiet -p attncheck-lm --example throughput
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for dims in "64 2 32 16 100" "256 4 128 16 30"; do
  target/release/examples/throughput $dims
  python3 bench/anchors/lm_train.py $dims --threads 1
done
