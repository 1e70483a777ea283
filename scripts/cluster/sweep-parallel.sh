#!/usr/bin/env bash
# A sweep split into N shards run by GNU parallel (one machine, or many with
# parallel's --sshlogin), then merged into the report an unsharded run writes.
#
#   scripts/cluster/sweep-parallel.sh sparse/log-dimension 8 full
#
# Environment: ATTNCHECK (the binary, default attncheck), SHARD_DIR (default
# shards), JOBS (shards at a time, default N), REPORTS (merge --out), and
# TIMES=1 to record each shard's wall and CPU time (GNU time) in
# SHARD_DIR/times/<i>.txt, as the README's measurement of the full
# log-dimension sweep did. A shard already written is not run again, so an
# interrupted sweep resumes where it stopped.
set -euo pipefail
claim="${1:?usage: $0 CLAIM N [quick|full]}"
n="${2:?usage: $0 CLAIM N [quick|full]}"
profile="${3:-full}"
bin="${ATTNCHECK:-attncheck}"
out="${SHARD_DIR:-shards}"
mkdir -p "$out/times"
export bin out claim n profile TIMES
one() {
  local i="$1"
  local file="$out/${claim}.shard-$i-of-$n.json"
  [ -s "$file" ] && return 0
  local run=("$bin" run "$claim" --profile "$profile" --shard "$i/$n" --threads 1 --out "$out")
  if [ "${TIMES:-}" = 1 ]; then
    /usr/bin/time -f "shard $i/$n wall %e s user %U s sys %S s maxrss %M KB" -o "$out/times/$i.txt" "${run[@]}"
  else
    "${run[@]}"
  fi
}
export -f one
seq 1 "$n" | parallel --halt now,fail=1 --jobs "${JOBS:-$n}" --joblog "$out/joblog" one {}
"$bin" merge "$out" ${REPORTS:+--out "$REPORTS"}
