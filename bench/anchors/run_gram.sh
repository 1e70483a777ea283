#!/usr/bin/env bash
# Times the exact Gram certification max_{l≠j} |⟨s_l, s_j⟩| in attncheck
# (examples/gram_bench.rs: SignMatrix::max_abs_offdiag, bit-packed XOR-popcount)
# and, in the same run, numpy float32 S @ Sᵀ plus the off-diagonal max
# (bench/anchors/gram.py) on the same seeded S, at n = 2^12, d = 2130 and
# n = 2^14, d = 2485; prints a Markdown table. Both sides must find the same max.
# The scan runs the best instruction set this CPU has (AVX-512 VPOPCNTDQ, AVX-512,
# AVX2 or scalar, chosen at run time).
# Run it on a quiet machine (check `uptime`): both sides are wall-clock timed.
set -euo pipefail
cd "$(dirname "$0")/../.."
pip install --quiet numpy
cargo build --release --quiet --example gram_bench
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# the clock this process gets (a dependent integer chain): the VPOPCNTDQ bound is 8 words per cycle per core
echo "clock: $(target/release/examples/gram_bench clock)" >&2
small=$(target/release/examples/gram_bench 4096 2130 9 1)
echo "ours: $small" >&2
large=$(target/release/examples/gram_bench 16384 2485 5 1)
echo "ours: $large" >&2
python3 bench/anchors/gram.py --ours "$small" --ours "$large" "$@"
