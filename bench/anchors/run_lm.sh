#!/usr/bin/env bash
# Training throughput of the trained-model claim's models, candle (attncheck-lm) against
# PyTorch on the CPU: the same model, batch and optimiser (bench/anchors/lm_train.py), one
# thread each, measured alternately (candle, PyTorch, candle, PyTorch, ...) so that a
# changing load hits both alike. Each line carries the 1-minute load average read just
# before it; compare CPU time per step (user + sys of the timed loop) when the machine is
# busy, steps/s when it is quiet. Sizes: the scan's models (hidden 64 / 2 layers and
# hidden 96 / 3 layers, 8 heads) at L = 32 (the quick profile's) and L = 512.
#
#   bash bench/anchors/run_lm.sh [repetitions]        (default 3)
#
# PyTorch comes from PyPI (`pip install torch`; the Linux wheel is the CUDA build, about
# 3 GB, and runs on the CPU).
set -euo pipefail
cd "$(dirname "$0")/../.."
reps=${1:-3}
python3 -c 'import torch' 2>/dev/null || pip install --quiet torch
cargo build --release --quiet -p attncheck-lm --example throughput
bin=${CARGO_TARGET_DIR:-target}/release/examples/throughput
export CANDLE_NUM_THREADS=1 RAYON_NUM_THREADS=1 OMP_NUM_THREADS=1
for dims in "64 2 32 16 200" "96 3 32 16 200" "64 2 512 16 10" "96 3 512 16 10"; do
  for _ in $(seq "$reps"); do
    echo "load $(cut -d' ' -f1 /proc/loadavg) | $("$bin" $dims)"
    echo "load $(cut -d' ' -f1 /proc/loadavg) | $(python3 bench/anchors/lm_train.py $dims --threads 1)"
  done
done
