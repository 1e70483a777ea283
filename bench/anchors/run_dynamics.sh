#!/usr/bin/env bash
# Times the flow engine (src/dynamics/flow.rs: MPFR RK4 with P recomputed at every
# stage) side by side with the same RK4 in mpmath (mp.prec = 128) and numpy float64
# (bench/anchors/dynamics.py):
#   1. n = 20, d = 2, Q = K = V = I, T = 5, h = 1/10 (examples/flow_bench.rs; target ≥ 30× mpmath);
#   2. n = d = 128, the authors' largest run made exact, T = 15, h = 1/10: the double-double tier
#      (flow_cupy --dd, best of 3; issue #41's target: at most 10x numpy float64's time), MPFR at
#      128 and 256 bits (examples/flow_cupy.rs; target < 60 s on 2 cores), against numpy float64;
#      each run's z(T) is compared element-wise with the 128-bit run's.
# Prints Markdown tables. Run it on a quiet machine (check `uptime`): times are wall clock.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 -c "import mpmath, numpy" 2>/dev/null || pip install --quiet mpmath numpy
cargo build --release --quiet --example flow_bench --example flow_cupy
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
target/release/examples/flow_cupy --dump "$tmp"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
small=$(target/release/examples/flow_bench 9)
echo "ours (small): ${small:0:200}…" >&2
cupydd=$(target/release/examples/flow_cupy --dd --reps 3 --state "$tmp/z_dd.txt")
echo "ours (n = 128, dd): $cupydd" >&2
cupydd1=$(RAYON_NUM_THREADS=1 target/release/examples/flow_cupy --dd --reps 3)
echo "ours (n = 128, dd, 1 thread): $cupydd1" >&2
# numpy with one BLAS thread: under load a multithreaded BLAS can lose far more than a
# single-threaded one, so both are timed
np1=$(OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python3 bench/anchors/dynamics.py \
  --ours-small "$small" --numpy-only --data "$tmp")
echo "numpy (n = 128, 1 BLAS thread): $np1" >&2
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
cupy128=$(target/release/examples/flow_cupy 128 --state "$tmp/z_128.txt")
echo "ours (n = 128, 128 bits): $cupy128" >&2
cupy256=$(target/release/examples/flow_cupy 256 --state "$tmp/z_256.txt")
echo "ours (n = 128, 256 bits): $cupy256" >&2
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 bench/anchors/dynamics.py --ours-small "$small" \
  --ours-cupy "$cupydd" --state "$tmp/z_dd.txt" \
  --ours-cupy "$cupydd1" --state "" --numpy-1thread "$np1" \
  --ours-cupy "$cupy128" --state "$tmp/z_128.txt" \
  --ours-cupy "$cupy256" --state "$tmp/z_256.txt" \
  --state-ref "$tmp/z_128.txt" --data "$tmp" "$@"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
