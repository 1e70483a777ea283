#!/usr/bin/env bash
# The full sweep of sparse/log-dimension run again with the current binary (issue #41: "the full
# log-dimension sweep needs at most 2 CPU-hours"; the stored one took 7.8 CPU-hours with fe61fff).
# The same 16 shards as resume.sh, one at a time on one thread; each finished shard's GNU time
# record and machine go to rerun/<i>.time.txt and rerun/<i>.machine.txt, and its JSON must be
# byte for byte the stored shard's (shards/): the rerun measures the cost and checks the answers,
# it stores no second copy of them. Resumable like resume.sh (a shard with a time record is done).
#
#   taskset -c 1 bench/sweeps/log-dimension-16/rerun.sh      # ATTNCHECK=… to pick the binary
#   bench/sweeps/log-dimension-16/rerun.sh --sum             # the CPU-seconds of the shards done
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
bin="${ATTNCHECK:-$root/target/release/attncheck}"
n=16
if [ "${1:-}" = "--sum" ]; then
  cat "$here"/rerun/*.time.txt 2>/dev/null | awk '{u += $(NF-7); s += $(NF-4); k++}
    END {printf "%d of 16 shards, %.0f CPU-s (user %.0f + sys %.0f) = %.2f CPU-h\n", k, u + s, u, s, (u + s) / 3600}'
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$here/rerun"
for i in $(seq 1 "$n"); do
  [ -s "$here/rerun/$i.time.txt" ] && continue
  exec 9> "${TMPDIR:-/tmp}/attncheck-log-dimension-16-rerun-$i.lock"
  flock -n 9 || continue
  echo "shard $i/$n: running ($(date -u +%FT%TZ))" >&2
  {
    echo "binary: $bin ($("$bin" --version)); repository HEAD at the start: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown) (not necessarily the commit the binary was built from)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc --all) cores (this shard may use $(nproc))"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "started: $(date -u +%FT%TZ)"
  } > "$work/machine.txt"
  /usr/bin/time -f "shard $i/$n wall %e s user %U s sys %S s maxrss %M KB" -o "$work/time.txt" \
    "$bin" run sparse/log-dimension --profile full --shard "$i/$n" --threads 1 --out "$work" >&2
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$work/machine.txt"
  if ! gunzip -c "$here/shards/log-dimension.shard-$i-of-$n.json.gz" \
      | cmp -s - "$work/sparse/log-dimension.shard-$i-of-$n.json"; then
    echo "shard $i/$n: DIFFERS from the stored shard (kept in $here/rerun/$i.differs.json)" >&2
    cp "$work/sparse/log-dimension.shard-$i-of-$n.json" "$here/rerun/$i.differs.json"
    exit 1
  fi
  cp "$work/machine.txt" "$here/rerun/$i.machine.txt"
  cp "$work/time.txt" "$here/rerun/$i.time.txt"
  rm "$work/sparse/log-dimension.shard-$i-of-$n.json"
  exec 9>&-
done
"$0" --sum
