#!/usr/bin/env bash
# The L_tr scan of positional/trained-model-claims (issue #25; the claim's full profile), one
# shard per (scheme, L_tr, seed): 72 shards, kept here so that the scan can span sessions and
# machines. Every finished shard is stored gzipped in shards/, with its GNU time record in
# times/ and the machine it ran on (and the job it holds) in machines/. This script runs the
# shards still missing, one at a time on one thread each (so a shard's wall time is its cost
# on one core), and once all 72 are here merges every stored sweep and compares the result
# with the committed reports/full/ file for file, byte for byte (the test
# shards::the_committed_full_report_is_what_the_stored_shards_merge_to does the same).
#
#   bench/sweeps/trained-scan/resume.sh          # ATTNCHECK=… to pick the binary
#   bench/sweeps/trained-scan/resume.sh --write  # merge into reports/full/ (once all are here)
#
# Shard i holds job i − 1 of the claim's job list: by L_tr (32, 128, 512), then seed, then
# scheme (the claim makes each job's unit key fall to its own shard of 72). Before the first
# shard the binary is copied into this run's scratch directory and every shard runs that
# copy (and a copy of theorems/), so a rebuild of target/ or an edit of a spec during a run of
# hours changes nothing. Pin it with
# `taskset -c 1` to keep other work off its core. An interrupted shard leaves no file behind
# (shards are written whole) and runs again next time. Several copies may run at once, one per
# core (`taskset -c 0 resume.sh & taskset -c 1 resume.sh`): each takes the next shard that no
# other copy holds (a flock per shard), and NOTE="…" goes into the machine record.
# FIRST=i / LAST=j restrict this copy to shards i … j.
# SWEEP=longer runs the spec's further sweep of the arms trained longer instead (issue #40:
# `run --shard i/12 --sweep longer`), stored in ../trained-scan-longer/ the same way.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
scan="$here"
claim=positional/trained-model-claims
name=trained-model-claims
n=72
sweep_args=()
case "${SWEEP:-}" in
  "") ;;
  longer) here="$scan/../trained-scan-longer"; here="$(cd "$here" && pwd)"; name=trained-model-claims.longer; n=12; sweep_args=(--sweep longer) ;;
  *) echo "SWEEP=$SWEEP: the scan's further sweeps are: longer" >&2; exit 2 ;;
esac
src="${ATTNCHECK:-$root/target/release/attncheck}"
write=0
case "${1:-}" in
  --write) write=1 ;;
  "") ;;
  *) echo "usage: $0 [--write]" >&2; exit 2 ;;
esac
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$src" "$work/attncheck"
bin="$work/attncheck"
# the specs too: an edit of theorems/ during a run of hours must not reach later shards (a shard
# run with another spec would be refused by merge)
# THEOREMS_REV=<commit> takes them from that commit instead of the working tree: the binary's
# own, when main's later specs use fields the binary does not know (session 27: `[lemma]`)
if [ -n "${THEOREMS_REV:-}" ]; then
  git -C "$root" archive "$THEOREMS_REV" theorems | tar -x -C "$work"
else
  cp -r "$root/theorems" "$work/theorems"
fi
export CANDLE_NUM_THREADS=1
mkdir -p "$here/shards" "$here/times" "$here/machines"
for i in $(seq "${FIRST:-1}" "${LAST:-$n}"); do
  gz="$here/shards/$name.shard-$i-of-$n.json.gz"
  [ -s "$gz" ] && continue
  exec 9> "${TMPDIR:-/tmp}/attncheck-$name-shard-$i.lock"
  flock -n 9 || continue
  [ -s "$gz" ] && continue
  echo "shard $i/$n: running ($(date -u +%FT%TZ))" >&2
  rm -rf "$work/out"
  {
    echo "binary: $("$bin" --version), checkout $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown), sha256 $(sha256sum "$bin" | cut -c1-16)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc --all) cores (this shard may use $(nproc))"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "started: $(date -u +%FT%TZ)"
    if [ -n "${NOTE:-}" ]; then echo "note: $NOTE"; fi
  } > "$work/machine.txt"
  /usr/bin/time -f "shard $i/$n wall %e s user %U s sys %S s maxrss %M KB" -o "$work/time.txt" \
    "$bin" run "$claim" --profile full --shard "$i/$n" "${sweep_args[@]}" --threads 1 --theorems "$work/theorems" --out "$work/out" >&2
  f="$work/out/positional/$name.shard-$i-of-$n.json"
  # exactly one job, and it succeeded (a failed job is not stored: it would fail the merge)
  unit="$(python3 - "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
res = d["record"]["results"]
if len(res) != 1:
    sys.exit(f"{len(res)} jobs in this shard, expected 1")
(key, v), = res.items()
if v.get("error") or not v.get("result"):
    sys.exit(f"{key}: the job failed: {v.get('error')}")
print(key)
PY
)"
  echo "job: $unit" >> "$work/machine.txt"
  echo "finished: $(date -u +%FT%TZ)" >> "$work/machine.txt"
  gzip -9 -n -c "$f" > "$gz.tmp"
  mv "$gz.tmp" "$gz"
  cp "$work/time.txt" "$here/times/$i.txt"
  cp "$work/machine.txt" "$here/machines/$i.txt"
  echo "shard $i/$n: $unit done ($(cat "$work/time.txt"))" >&2
  exec 9>&-
done
for i in $(seq 1 "$n"); do
  [ -s "$here/shards/$name.shard-$i-of-$n.json.gz" ] || { echo "shard $i/$n is still missing (another copy may be running it)" >&2; exit 0; }
done
if [ "$write" = 1 ]; then
  # the scan's shards and, once all are stored, the longer arms' (without them the report
  # says that sweep is not run)
  mkdir -p "$work/only"
  for d in "$scan" "$scan/../trained-scan-longer"; do
    files=("$d"/shards/*.shard-*-of-*.json.gz)
    [ -e "${files[0]}" ] || continue
    m="${files[0]##*-of-}"; m="${m%.json.gz}"
    if [ "${#files[@]}" -ne "$m" ]; then
      echo "$(basename "$d"): ${#files[@]} of $m shards stored, left out" >&2
      continue
    fi
    for f in "${files[@]}"; do gunzip -c "$f" > "$work/only/$(basename "$f" .gz)"; done
  done
  "$bin" merge "$work/only" --out "$root/reports/full" >&2 || [ $? = 1 ]
  echo "the stored shards merged into reports/full/ (review and commit the diff)" >&2
  exit 0
fi
ATTNCHECK="$bin" "$here/../merge-stored.sh" "$work/merged"
if diff -r "$work/merged" "$root/reports/full" >&2; then
  echo "the stored shards merge to reports/full/ file for file, byte for byte" >&2
else
  echo "reports/full/ differs from what the stored shards merge to; rerun with --write to replace it" >&2
  exit 1
fi
