#!/usr/bin/env bash
# Times certified softmax of one 65,536-entry row at 128 bits and in the f64 tier in
# attncheck (examples/softmax_bench.rs) and, in the same run, in python-flint, mpmath
# and numpy (bench/anchors/softmax.py); prints a Markdown table with the ratios (the
# f64 tier against numpy float64: issue #41) and the widest relative output widths.
# Run it on a quiet machine (check `uptime`): both sides are wall-clock timed.
set -euo pipefail
cd "$(dirname "$0")/../.."
pip install --quiet python-flint mpmath numpy
cargo build --release --quiet --example softmax_bench
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
ours=$(target/release/examples/softmax_bench 65536 15)
echo "ours: $ours" >&2
python3 bench/anchors/softmax.py --ours "$ours" "$@"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
