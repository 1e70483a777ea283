#!/usr/bin/env bash
# The measured full sweep of sparse/log-dimension in 16 shards (issue #14), kept here so that
# it can span several sessions or machines: every finished shard is stored gzipped in
# shards/, with its GNU time record in times/ and the machine it ran on in machines/. This
# script runs the shards still missing, one at a time on one thread each (so a shard's wall
# time is its cost on one core), and once all 16 are here merges every stored sweep
# (../merge-stored.sh) and compares the result with the committed reports/full/ file for
# file, byte for byte (the test
# shards::the_committed_full_report_is_what_the_stored_shards_merge_to does the same).
#
#   bench/sweeps/log-dimension-16/resume.sh          # ATTNCHECK=… to pick the binary
#   bench/sweeps/log-dimension-16/resume.sh --write  # replace reports/full/ by the merge
#                                                    # (after a change of the report's format)
#
# Pin it with `taskset -c 1` to keep other work off its core. An interrupted shard leaves no
# file behind (shards are written whole) and runs again next time. Several copies may run at
# once, one per core (`taskset -c 0 resume.sh & taskset -c 1 resume.sh`): each takes the next
# shard that no other copy holds (a flock per shard), and NOTE="…" goes into the machine record.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
bin="${ATTNCHECK:-$root/target/release/attncheck}"
n=16
write=0
case "${1:-}" in
  --write) write=1 ;;
  "") ;;
  *) echo "usage: $0 [--write]" >&2; exit 2 ;;
esac
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$here/shards" "$here/times" "$here/machines" "$work/sparse"
for i in $(seq 1 "$n"); do
  gz="$here/shards/log-dimension.shard-$i-of-$n.json.gz"
  [ -s "$gz" ] && continue
  exec 9> "${TMPDIR:-/tmp}/attncheck-log-dimension-16-shard-$i.lock"
  flock -n 9 || continue
  [ -s "$gz" ] && continue
  echo "shard $i/$n: running ($(date -u +%FT%TZ))" >&2
  {
    echo "binary: $bin ($("$bin" --version)); repository HEAD at the start: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown) (not necessarily the commit the binary was built from)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc --all) cores (this shard may use $(nproc))"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "started: $(date -u +%FT%TZ)"
    if [ -n "${NOTE:-}" ]; then echo "note: $NOTE"; fi
  } > "$work/machine.txt"
  /usr/bin/time -f "shard $i/$n wall %e s user %U s sys %S s maxrss %M KB" -o "$work/time.txt" \
    "$bin" run sparse/log-dimension --profile full --shard "$i/$n" --threads 1 --out "$work" >&2
  gzip -9 -n -c "$work/sparse/log-dimension.shard-$i-of-$n.json" > "$gz.tmp"
  mv "$gz.tmp" "$gz"
  cp "$work/time.txt" "$here/times/$i.txt"
  cp "$work/machine.txt" "$here/machines/$i.txt"
  rm "$work/sparse/log-dimension.shard-$i-of-$n.json"
  exec 9>&-
done
for i in $(seq 1 "$n"); do
  [ -s "$here/shards/log-dimension.shard-$i-of-$n.json.gz" ] || { echo "shard $i/$n is still missing (another copy may be running it)" >&2; exit 0; }
done
for i in $(seq 1 "$n"); do
  gunzip -c "$here/shards/log-dimension.shard-$i-of-$n.json.gz" > "$work/sparse/log-dimension.shard-$i-of-$n.json"
done
if [ "$write" = 1 ]; then
  "$bin" merge "$work" --out "$root/reports/full" >&2
  echo "the 16 shards merged into reports/full/ (review and commit the diff)" >&2
  exit 0
fi
# reports/full/ holds every stored sweep's report (bench/sweeps/merge-stored.sh merges them all)
ATTNCHECK="$bin" "$here/../merge-stored.sh" "$work/merged"
if diff -r "$work/merged" "$root/reports/full" >&2; then
  echo "the stored shards merge to reports/full/ file for file, byte for byte" >&2
else
  echo "reports/full/ differs from what the 16 shards merge to; rerun with --write to replace it" >&2
  exit 1
fi
