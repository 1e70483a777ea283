#!/usr/bin/env bash
# The untrusted logit-range search (issue #40; crates/attncheck-lm/src/probe.rs) on the scan's
# ALiBi models: for every head of layer 1, coordinate ascent over byte inputs of lengths 16 and
# 24 from 2 seeded random starts each (at most 3 sweeps), seed 40. Writes found.tsv (datum,
# layer, head, the search's range, the model's f64 forward pass's range, query, bytes in hex)
# and prints the spec's `[profiles.full.scan.probes]` table. Deterministic: the same weights and
# parameters give the same bytes on every machine (plain f64 loops in a fixed order).
#
#   cargo build --release -p attncheck-lm --example logit_search
#   bench/sweeps/trained-scan/logit-search/run.sh        # JOBS=2 runs two models at a time
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
bin="${LOGIT_SEARCH:-$root/target/release/examples/logit_search}"
args=(16,24 2 3 40)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# the ALiBi models' shards (they carry weights): scheme 1 of 8 at every (L_tr, seed)
shards=(1 9 17 25 33 41 49 57 65)
for i in "${shards[@]}"; do
  gunzip -c "$here/../shards/trained-model-claims.shard-$i-of-72.json.gz" > "$work/$i.json"
done
printf '%s\n' "${shards[@]}" | xargs -P "${JOBS:-1}" -I{} sh -c "'$bin' ${args[*]} '$work/{}.json' > '$work/{}.tsv'"
for i in "${shards[@]}"; do cat "$work/$i.tsv"; done > "$here/found.tsv"
echo "[profiles.full.scan.probes]"
sort -t$'\t' -k1,1 -s "$here/found.tsv" | awk -F'\t' '
  $1 != name { if (name != "") print "\"" name "\" = [" list "]"; name = $1; list = "" }
  { list = list (list == "" ? "" : ", ") "\"" $7 "\"" }
  END { print "\"" name "\" = [" list "]" }'
