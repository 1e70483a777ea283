#!/usr/bin/env bash
# Prints the README's table of the measured log-dimension sweep (section "Sweeps on a
# cluster") from what resume.sh stored: times/i.txt (GNU time) and shards/ (for the number of
# n = 2^16 units each shard holds, the units that dominate its cost).
#
#   bench/sweeps/log-dimension-16/table.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
n=16
for i in $(seq 1 "$n"); do
  t="$here/times/$i.txt"
  [ -s "$t" ] || continue
  big=$(gunzip -c "$here/shards/log-dimension.shard-$i-of-$n.json.gz" |
    python3 -c 'import json, sys; print(sum(", n = 2^16," in k for k in json.load(sys.stdin)["record"]["results"]))')
  echo "$i $big $(cat "$t")"
done | awk -v n="$n" '
  # fields: i big "shard" i/n "wall" W "s" "user" U "s" "sys" S "s" "maxrss" R "KB",
  # so W = $6, U = $9, S = $12, R = $15
  {
    wall = $6; cpu = $9 + $12; rss = $15 / 1024
    printf "| %d of %d | %.0f s (%.1f min) | %.0f s | %.0f MB | %d |\n", $1, n, wall, wall / 60, cpu, rss, $2
    k++; tw += wall; tc += cpu; tb += $2; if (wall > mx) mx = wall
  }
  END {
    if (k == 0) exit
    label = (k == n) ? "all " n : k " of " n " done"
    printf "| **%s** | %.0f s | **%.0f s (%.2f CPU-hours)** | | %d of 512 |\n", label, tw, tc, tc / 3600, tb
    if (k < n)
      printf "\nExtrapolated from these %d: about %.1f CPU-hours for all %d, so about %.0f minutes per shard on a %d-task array and %.1f hours on 2 cores.\n", k, tc / k * n / 3600, n, tc / k / 60, n, tc / k * n / 2 / 3600
    else
      printf "\nAll %d: %.1f CPU-hours. On a %d-task array the sweep takes as long as its slowest shard (%.0f minutes); on 2 cores about %.1f hours.\n", n, tc / 3600, n, mx / 60, tc / 2 / 3600
  }'
