#!/usr/bin/env bash
# Merges every complete stored sweep below bench/sweeps/ (a directory whose shards/ holds the
# gzipped shard files <claim>.shard-<i>-of-<N>.json.gz of a `run --shard` sweep, all N of
# them) into one report set. reports/full/ is exactly this merge: the test
# shards::the_committed_full_report_is_what_the_stored_shards_merge_to does the same.
# A sweep with shards still missing is left out (its report is not committed yet).
#
#   bench/sweeps/merge-stored.sh OUT     # ATTNCHECK=… to pick the binary
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${ATTNCHECK:-$root/target/release/attncheck}"
out="${1:?usage: $0 OUT}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/shards"
for sweep in "$here"/*/; do
  [ -d "$sweep/shards" ] || continue
  files=("$sweep"shards/*.shard-*-of-*.json.gz)
  [ -e "${files[0]}" ] || continue
  n="${files[0]##*-of-}"; n="${n%.json.gz}"
  if [ "${#files[@]}" -ne "$n" ]; then
    echo "$(basename "$sweep"): ${#files[@]} of $n shards stored, left out" >&2
    continue
  fi
  for f in "${files[@]}"; do
    b="$(basename "$f" .gz)"
    gunzip -c "$f" > "$work/shards/$b"
  done
  echo "$(basename "$sweep"): all $n shards" >&2
done
# exit 1 only says that a verdict is not the one its spec expects: the reports are written
"$bin" merge "$work/shards" --out "$out" >&2 || [ $? = 1 ]
