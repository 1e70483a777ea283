#!/usr/bin/env bash
# gcg_search.py (all-rows range, gradient-ranked coordinate ascent, random starts until the CPU budget is spent;
# untrusted f64) on the 21 heads whose Δ̄/A was > 3× at the start of session 34 (long/table.py then: A the best of
# found.tsv and long_search.py). One file per model, one line appended per head when it is done, so an interrupted
# run resumes where it stopped (a line already present is skipped). Pin it (core 0; core 1 is the mutation run's):
#   OPENBLAS_NUM_THREADS=1 taskset -c 0 nice -n 5 bench/sweeps/trained-scan/logit-search/long2/run.sh
# Pass 1: length 64, CPU (150) CPU-s per head, seed 40 (shard 57 ran at 150, shard 9 at CPU=90, the others at
# CPU=60: core 0 gave this 25-45% of its time, load 6-11). PASS=2: the heads still > 3× after pass 1, polished (gcg_search.py's `polish`:
# the best input so far, every byte at every position on a stall), CPU (45) CPU-s per head, seed 42; file polish.txt
# (run at CPU=30). Then by hand on the one head left > 3× (file extra.txt):
#   gcg_search.py 49 0 128 rand 90 43; gcg_search.py 49 0 32 rand 60 44; gcg_search.py 49 0 128 polish 75 45;
#   and (session 34, lead, load 2.2-2.8) gcg_search.py 49 0 64 rand 300 46
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export OPENBLAS_NUM_THREADS=1
declare -A heads=([1]=3,6 [9]=0,3,4,5 [17]=0,1,5 [25]=0,1 [41]=2,6 [49]=0,6,7 [57]=0,3,7 [65]=6,7)
len=64; cpu=${CPU:-150}; seed=40
init=rand; out=shard
if [ "${PASS:-1}" = 2 ]; then cpu=${CPU:-45}; seed=42; init=polish; out=polish; fi
for s in ${SHARDS:-57 9 25 49 17 1 41 65}; do
  hs="${HEADS:-${heads[$s]}}"
  [ "${PASS:-1}" = 2 ] && hs="$(python3 "$here/../long/table.py" --over 3 --shard "$s")"
  [ -z "$hs" ] && continue
  echo "shard $s heads $hs: length $len, $init, $cpu CPU-s per head, seed $seed ($(date -u +%FT%TZ), load $(cut -d' ' -f1 /proc/loadavg))" >&2
  f="$here/$out-$s.txt"; [ "$out" = polish ] && f="$here/polish.txt"
  python3 "$here/gcg_search.py" "$s" "$hs" "$len" "$init" "$cpu" "$seed" "$f" > /dev/null
done
