#!/usr/bin/env bash
# long_search.py (length 32, band moves, 2 starts, ≤ 3 sweeps; untrusted f64) on every ALiBi model of the
# scan whose result is not stored yet: one file per model in this folder, written whole when the model is
# done, so an interrupted run resumes (issue #40: the yardstick A of layer 1's ratio column). Pin it:
#   taskset -c 0 nice -n 10 bench/sweeps/trained-scan/logit-search/long/run.sh
# Shards 1, 25 and 57 were run by hand (zonotope_pilot-results.txt, "long_search.py").
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
for s in 9 17 33 41 49 65; do
  out="$here/shard-$s.txt"
  [ -s "$out" ] && continue
  echo "shard $s: running ($(date -u +%FT%TZ), load $(cut -d' ' -f1 /proc/loadavg))" >&2
  python3 "$here/../long_search.py" "$s" 32 0,1,2,3,4,5,6,7 2 3 > "$out.tmp"
  echo "## load after: $(cut -d' ' -f1-3 /proc/loadavg), finished $(date -u +%FT%TZ)" >> "$out.tmp"
  mv "$out.tmp" "$out"
done
