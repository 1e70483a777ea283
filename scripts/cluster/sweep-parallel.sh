#!/usr/bin/env bash
# A sweep split into N shards run by GNU parallel (one machine, or many with
# parallel's --sshlogin), then merged into the report an unsharded run writes.
#
#   scripts/cluster/sweep-parallel.sh sparse/log-dimension 8 full
#
set -euo pipefail
claim="${1:?usage: $0 CLAIM N [quick|full]}"
n="${2:?usage: $0 CLAIM N [quick|full]}"
profile="${3:-full}"
bin="${ATTNCHECK:-attncheck}"
out="${SHARD_DIR:-shards}"
seq 1 "$n" | parallel --halt now,fail=1 --jobs "${JOBS:-$n}" \
  "$bin" run "$claim" --profile "$profile" --shard "{}/$n" --threads 1 --out "$out"
"$bin" merge "$out" ${REPORTS:+--out "$REPORTS"}
