#!/usr/bin/env bash
# Prints the README's table of the measured L_tr scan (positional/trained-model-claims, full
# profile) from what resume.sh stored: times/i.txt (GNU time) and machines/i.txt (the job each
# shard holds), then the totals per training length and in all.
#
#   bench/sweeps/trained-scan/table.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
n=72
echo "| shard | job (L_tr, scheme, seed) | wall (one thread, one core) | CPU (user + sys) | max RSS |"
echo "| --- | --- | ---: | ---: | ---: |"
for i in $(seq 1 "$n"); do
  t="$here/times/$i.txt"
  [ -s "$t" ] || continue
  job=$(sed -n 's/^job: \(.*\) #[0-9]* @[0-9]*$/\1/p' "$here/machines/$i.txt")
  echo "$i ${job:-?} $(cat "$t")"
done | awk -v n="$n" '
  # fields: i L<len> job "shard" i/n "wall" W "s" "user" U "s" "sys" S "s" "maxrss" R "KB"
  {
    wall = $7; cpu = $10 + $13; rss = $16 / 1024; l = substr($2, 2)
    printf "| %d of %d | L_tr = %s, %s | %.0f s (%.1f min) | %.0f s | %.0f MB |\n", $1, n, l, $3, wall, wall / 60, cpu, rss
    k++; tc += cpu; tw += wall; cl[l] += cpu; kl[l]++
  }
  END {
    if (k == 0) exit
    for (l in cl) printf "| L_tr = %s | %d shards | | %.0f s (%.2f CPU-hours) | |\n", l, kl[l], cl[l], cl[l] / 3600 | "sort -t= -k2 -n"
    close("sort -t= -k2 -n")
    printf "| **%s** | | %.0f s | **%.0f s (%.2f CPU-hours)** | |\n", (k == n) ? "all " n : k " of " n " done", tw, tc, tc / 3600
  }'
