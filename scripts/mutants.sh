#!/usr/bin/env bash
# cargo mutants on the kernel crate with its own tests (`make mutants`), in shards, and a
# summary by file: caught, missed, timeouts (a mutant that hangs the tests: caught) and
# unviable (does not build), and the score caught / viable.
#
#   MUTANTS_SHARDS   how many shards (default 8)
#   MUTANTS_PARALLEL how many shards at once (default 1; GNU parallel when > 1); each shard
#                    builds in its own copy of the tree (cargo mutants' default)
#   MUTANTS_OUT      where each shard's mutants.out goes (default target/mutants)
#   MUTANTS_ARGS     more arguments for cargo mutants, e.g. "-f crates/attncheck-kernel/src/interval.rs"
#   SUMMARY_ONLY=1   only summarise the shards already in MUTANTS_OUT
#
# Configuration (test arguments, profile, timeouts): .cargo/mutants.toml.
set -u
cd "$(dirname "$0")/.."
N=${MUTANTS_SHARDS:-8}
J=${MUTANTS_PARALLEL:-1}
OUT=${MUTANTS_OUT:-target/mutants}
CARGO=${CARGO:-cargo}
mkdir -p "$OUT"

run_shard() {
    local k=$1
    # exit 2 (mutants missed) and 3 (timeouts) are results, not failures of the run
    nice -n 10 $CARGO mutants -p attncheck-kernel --shard "$k/$N" --output "$OUT/shard-$k" \
        ${MUTANTS_ARGS:-} >"$OUT/shard-$k.log" 2>&1
    local rc=$?
    echo "shard $k/$N: exit $rc ($(tail -1 "$OUT/shard-$k.log"))" >&2
    [ $rc = 0 ] || [ $rc = 2 ] || [ $rc = 3 ]
}
export -f run_shard
export N OUT CARGO MUTANTS_ARGS

if [ "${SUMMARY_ONLY:-0}" != 1 ]; then
    if [ "$J" -gt 1 ] && command -v parallel >/dev/null; then
        seq 0 $((N - 1)) | parallel -j "$J" --halt never run_shard {} || true
    else
        for k in $(seq 0 $((N - 1))); do run_shard "$k" || true; done
    fi
fi

# The summary: one line per file, then the total; then every missed mutant.
for kind in caught missed timeout unviable; do
    cat "$OUT"/shard-*/mutants.out/$kind.txt 2>/dev/null | sed "s/^/$kind /"
done | awk '
    { split($2, p, ":"); f = p[1]; sub(/^crates\/attncheck-kernel\/src\//, "", f); n[f, $1]++; files[f] = 1; t[$1]++ }
    function line(name, c, m, o, u) {
        v = c + o + m
        printf "%-18s %7d %7d %8d %9d %7s\n", name, c, m, o, u, v ? sprintf("%.1f%%", 100 * (c + o) / v) : "-"
    }
    END {
        printf "%-18s %7s %7s %8s %9s %7s\n", "file", "caught", "missed", "timeout", "unviable", "score"
        k = 0
        for (f in files) names[++k] = f
        for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (names[j] < names[i]) { x = names[i]; names[i] = names[j]; names[j] = x }
        for (i = 1; i <= k; i++) { f = names[i]; line(f, n[f, "caught"], n[f, "missed"], n[f, "timeout"], n[f, "unviable"]) }
        line("all", t["caught"], t["missed"], t["timeout"], t["unviable"])
    }' > "$OUT/summary.txt"
cat "$OUT/summary.txt"
echo "missed:"
cat "$OUT"/shard-*/mutants.out/missed.txt 2>/dev/null | sort -t: -k1,1 -k2,2n
