#!/usr/bin/env bash
# cargo mutants on the kernel crate with its own tests (`make mutants`), in shards that are
# stored as they finish (bench/sweeps/mutants/), so that a run of many hours can span sessions:
# each start runs only the shards still missing, then prints the score by file so far.
#
# A shard is a slice of one source file's mutants (at most MUTANTS_CHUNK of them: `-f FILE
# --shard k/n`), named after the file, e.g. interval.2-of-5. Its mutants depend only on that
# file, so a stored shard stays current until the file changes: each stores the git blob of
# its file, and a shard whose file has changed since is stale and runs again (the summary
# says so). The stored files per shard: caught.txt, missed.txt, timeout.txt, unviable.txt
# (cargo mutants' own) and log.txt (file, blob, checkout, versions, machine, times).
#
# The run works on a snapshot of HEAD (git archive) in target/mutants-work/tree, mutated in
# place there with its own target directory (kept between starts, so only the kernel is
# rebuilt), never on the working tree: edits made during a run of hours change nothing, and
# uncommitted edits are not tested. Only one run at a time (a lock on the snapshot); a
# recheck has a snapshot of its own (target/mutants-work/recheck-tree), so it can go on
# beside a run.
#
#   scripts/mutants.sh                 # run the missing shards, then the summary
#   SUMMARY_ONLY=1 scripts/mutants.sh  # only the summary, against the working tree's files
#   RECHECK=1 scripts/mutants.sh       # run again the missed mutants of current stored shards
#                                      # (after tests were added); those now caught move to
#                                      # caught.txt, with a line in log.txt
#
#   MUTANTS_CHUNK  most mutants per shard (default 40)
#   MUTANTS_FILES  only shards of these files (paths under crates/attncheck-kernel/src, e.g.
#                  "interval.rs expr/eval.rs"; default all)
#   MUTANTS_STORE  where shards are stored (default bench/sweeps/mutants)
#   MUTANTS_LAST   these files' shards run last (default "expr/cost.rs": the cost model is being
#                  edited, and charges decide no comparison)
#   MAX_SHARDS     stop after this many shards (default all)
#   MUTANTS_WORKER a second run beside the first (e.g. 2, on the other core): a snapshot and
#                  target directory of its own (target/mutants-work/tree-2); each shard is
#                  claimed by one worker, so the two share the list
#   MUTANTS_SKIP   tests left out of a shard's first pass (space-separated names; default the
#                  slowest one, which alone is 39 of the suite's 50 s at the mutants profile;
#                  "" for none). The mutants that pass survive it are rechecked at once with
#                  the whole suite, so what is stored is the whole suite's verdict: a mutant
#                  caught by part of the suite is caught by all of it, and the missed ones
#                  run again. About 3× the mutants per hour.
#
# Run it pinned to one core at low priority, e.g.
#   setsid nohup taskset -c 0 nice -n 15 scripts/mutants.sh >target/mutants-run.log 2>&1 &
# Configuration of cargo mutants (test arguments, profile, timeouts): .cargo/mutants.toml.
# exit 2 (mutants missed) and 3 (timeouts) from cargo mutants are results, not failures.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
crate=crates/attncheck-kernel
src=$crate/src
store="${MUTANTS_STORE:-$root/bench/sweeps/mutants}"
chunk=${MUTANTS_CHUNK:-40}
last="${MUTANTS_LAST:-expr/cost.rs}"
skip="${MUTANTS_SKIP-tiers::every_committed_certificate_is_decided_the_same_with_and_without_the_f64_tier}"
CARGO=${CARGO:-cargo}
work="$root/target/mutants-work"
# the snapshot: one for the run, another for rechecks (so that both can go on at once)
tree="$work/tree${MUTANTS_WORKER:+-$MUTANTS_WORKER}"
[ "${RECHECK:-0}" = 1 ] && tree="$work/recheck-tree"
mkdir -p "$store" "$work"
# without cargo-mutants the list of mutants is empty and the summary would be overwritten
# with an empty table
if ! $CARGO mutants --version >/dev/null 2>&1; then
    echo "cargo-mutants is not installed: cargo install cargo-mutants --version 27.1.0 --locked" >&2
    exit 1
fi

# shard_list DIR: "file k n" for every shard of the mutants listed in the tree DIR, in run order
shard_list() {
    local dir=$1
    (cd "$dir" && $CARGO mutants -p attncheck-kernel --list) >"$dir.list.txt" ||
        { echo "cargo mutants --list failed in $dir" >&2; kill $$; exit 1; }
    cut -d: -f1 "$dir.list.txt" | sed "s|^$src/||" | sort | uniq -c |
        awk -v chunk="$chunk" -v last=" $last " '
            { n = int(($1 + chunk - 1) / chunk); late = index(last, " " $2 " ") > 0
              for (k = 0; k < n; k++) print late, $2, k, n }' |
        sort -k1,1n -s | cut -d' ' -f2-
}
shard_name() { echo "$(echo "${1%.rs}" | tr / -).$(($2 + 1))-of-$3"; }
wanted() {
    [ -z "${MUTANTS_FILES:-}" ] && return 0
    case " $MUTANTS_FILES " in *" $1 "*) return 0 ;; esac
    return 1
}
# blob DIR FILE: the git blob of a source file as it is in the tree DIR
blob() { git hash-object "$1/$src/$2"; }
stored_blob() { sed -n 's/^blob: //p' "$store/$1/log.txt" 2>/dev/null; }
regex_escape() { sed 's/[][\\.^$|?*+(){}]/\\&/g'; }

# The snapshot: HEAD's tree, extracted afresh each start (a run killed mid-mutant leaves a
# mutated file behind), keeping its target directory.
snapshot() {
    exec 8>"$tree.lock"
    flock -n 8 || { echo "another run holds $tree" >&2; exit 1; }
    checkout=$(git rev-parse --short=12 HEAD)
    if ! git diff --quiet HEAD -- "$crate" .cargo Cargo.toml Cargo.lock; then
        echo "note: uncommitted edits in the kernel are not tested (the run tests HEAD, $checkout)" >&2
    fi
    [ -d "$tree/target" ] && mv "$tree/target" "$tree.target"
    rm -rf "$tree"
    mkdir -p "$tree"
    # -m: the files are new (mtime now), so cargo rebuilds the kernel; with the commit's
    # mtimes it would take the last mutant's build, left in target/, for the current one
    git archive HEAD | tar -xm -C "$tree"
    [ -d "$tree.target" ] && mv "$tree.target" "$tree/target"
    # a run killed while rustc wrote the kernel's incremental state can leave it broken
    # (session 40: the next baseline failed to link, "undefined hidden symbol"), so each
    # start builds the kernel once without it (about a minute); the dependencies are kept
    rm -rf "$tree/target/mutants/incremental"
    return 0
}

# mutate OUT ARGS...: cargo mutants in the snapshot; its exit status in $rc, its times in OUT.time
mutate() {
    local out=$1
    shift
    rm -rf "$out"
    mkdir -p "$out"
    set +e
    (cd "$tree" && /usr/bin/time -f "wall %e s user %U s sys %S s" -o "$out.time" \
        $CARGO mutants -p attncheck-kernel --in-place --output "$out" "$@" >"$out.log" 2>&1)
    rc=$?
    set -e
}

# first_pass_args: the arguments of a first pass without the tests in $skip. cargo mutants puts
# its command line's test arguments before the config's, so `-- --skip NAME` cannot follow the
# config's `--tests`: the first pass reads no config and gives all of .cargo/mutants.toml here.
first_pass_args() {
    [ -n "$skip" ] || return 0
    grep -q '^additional_cargo_test_args = \["--tests"\]$' .cargo/mutants.toml &&
        grep -q '^profile = "mutants"$' .cargo/mutants.toml &&
        grep -q '^minimum_test_timeout = 60$' .cargo/mutants.toml ||
        { echo "scripts/mutants.sh: .cargo/mutants.toml changed; update first_pass_args" >&2; kill $$; exit 1; }
    printf '%s\n' --no-config --profile mutants --minimum-test-timeout 60 \
        --cargo-test-arg=--tests --cargo-test-arg=--
    local t
    for t in $skip; do printf '%s\n' --cargo-test-arg=--skip "--cargo-test-arg=$t"; done
}

machine() {
    echo "checkout: $checkout"
    echo "cargo-mutants: $($CARGO mutants --version | cut -d' ' -f2), $(rustc --version)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc --all) cores (this run may use $(nproc))"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
}

run_shards() {
    snapshot
    local done=0 file k n name b
    while read -r file k n; do
        wanted "$file" || continue
        name=$(shard_name "$file" "$k" "$n")
        b=$(blob "$tree" "$file")
        [ "$(stored_blob "$name")" = "$b" ] && continue
        [ -n "${MAX_SHARDS:-}" ] && [ "$done" -ge "$MAX_SHARDS" ] && break
        # a shard is claimed by one worker (a lock held while it runs); another worker
        # skips it, and a shard stored meanwhile is not run again
        exec 9>"$work/$name.claim"
        flock -n 9 || { exec 9>&-; continue; }
        [ "$(stored_blob "$name")" = "$b" ] && { exec 9>&-; continue; }
        echo "shard $name: running ($(date -u +%FT%TZ))" >&2
        local started
        started=$(date -u +%FT%TZ)
        { machine; echo "started: $started"; } >"$work/$name.head"
        local first=()
        mapfile -t first < <(first_pass_args)
        mutate "$work/out/$name" "${first[@]}" -f "$src/$file" --shard "$k/$n"
        local m="$work/out/$name/mutants.out"
        if [ $rc != 0 ] && [ $rc != 2 ] && [ $rc != 3 ]; then
            # 4: the tests fail in the unmutated tree; any other: cargo mutants could not run
            echo "shard $name: cargo mutants exit $rc, not stored, the run stops (see $work/out/$name.log)" >&2
            exit 1
        fi
        local got
        got=$(cat "$m"/{caught,missed,timeout,unviable}.txt | wc -l)
        local tmp="$store/$name.tmp"
        rm -rf "$tmp"
        mkdir -p "$tmp"
        cp "$m"/{caught,missed,timeout,unviable}.txt "$tmp/"
        {
            echo "shard: $name (cargo mutants -p attncheck-kernel -f $src/$file --shard $k/$n)"
            echo "file: $src/$file"
            echo "blob: $b"
            echo "mutants: $got"
            cat "$work/$name.head"
            echo "finished: $(date -u +%FT%TZ)"
            echo "time: $(cat "$work/out/$name.time" | tail -1)"
            echo "exit: $rc"
            [ -n "$skip" ] && echo "first pass without: $skip (its missed mutants rechecked with the whole suite below)"
        } >"$tmp/log.txt"
        echo "shard $name: $got mutants, $(wc -l <"$m/missed.txt") missed ($(tail -1 "$work/out/$name.time"))" >&2
        # the shard is stored only with the whole suite's verdict
        if [ -n "$skip" ] && ! recheck_dir "$tmp" "$name"; then
            echo "shard $name: its recheck failed, not stored, the run stops" >&2
            exit 1
        fi
        rm -rf "$store/$name"
        mv "$tmp" "$store/$name"
        exec 9>&-
        done=$((done + 1))
    done < <(shard_list "$tree")
}

recheck() {
    snapshot
    local d name file
    for d in "$store"/*/; do
        name=$(basename "$d")
        [ -s "$d/missed.txt" ] || continue
        file=$(sed -n 's/^file: //p' "$d/log.txt")
        wanted "${file#$src/}" || continue
        [ "$(stored_blob "$name")" = "$(blob "$tree" "${file#$src/}")" ] ||
            { echo "$name: stale, not rechecked" >&2; continue; }
        recheck_dir "$d" "$name" || true
    done
}

# recheck_dir DIR NAME: the missed mutants of the shard NAME stored in DIR run again, with the whole
# suite (the config's test arguments); those caught now move to caught.txt (or timeout.txt), with a
# line in log.txt
recheck_dir() {
    local d=$1 name=$2 file re now
    [ -s "$d/missed.txt" ] || return 0
    file=$(sed -n 's/^file: //p' "$d/log.txt")
    re="^($(regex_escape <"$d/missed.txt" | paste -sd'|'))\$"
    echo "recheck $name: $(wc -l <"$d/missed.txt") missed ($(date -u +%FT%TZ))" >&2
    mutate "$work/out/recheck-$name" -f "$file" -F "$re"
    local m="$work/out/recheck-$name/mutants.out"
    if [ $rc != 0 ] && [ $rc != 2 ] && [ $rc != 3 ]; then
        echo "recheck $name: cargo mutants exit $rc (see $work/out/recheck-$name.log)" >&2
        return 1
    fi
    # a missed mutant moves only if this run caught it (or timed out on it)
    now=$(cat "$m/caught.txt" "$m/timeout.txt" | sort -u)
    if [ -z "$now" ]; then
        echo "recheck: checkout $checkout, $(date -u +%FT%TZ): none of $(wc -l <"$d/missed.txt") missed caught" >>"$d/log.txt"
        echo "recheck $name: none caught" >&2
        return 0
    fi
    grep -Fxf <(echo "$now") "$d/missed.txt" >"$work/moved.txt" || true
    grep -Fxf "$m/caught.txt" "$work/moved.txt" >>"$d/caught.txt" || true
    grep -Fxf "$m/timeout.txt" "$work/moved.txt" >>"$d/timeout.txt" || true
    grep -vFxf "$work/moved.txt" "$d/missed.txt" >"$work/still.txt" || true
    cp "$work/still.txt" "$d/missed.txt"
    echo "recheck: checkout $checkout, $(date -u +%FT%TZ): $(wc -l <"$work/moved.txt") missed now caught, $(wc -l <"$d/missed.txt") still missed" >>"$d/log.txt"
    echo "recheck $name: $(wc -l <"$work/moved.txt") now caught, $(wc -l <"$d/missed.txt") still missed" >&2
}

# The summary, against the working tree's files: per file, its mutants, how many are in
# current stored shards, and of those caught, missed, timeout (a mutant that hangs the tests:
# caught) and unviable (does not build); the score is (caught + timeout) / viable. Then the
# shards pending (missing or stale) and every missed mutant.
summary() {
    local file k n name rows="$work/rows.txt" pend="$work/pending.txt"
    : >"$rows"
    : >"$pend"
    while read -r file k n; do
        name=$(shard_name "$file" "$k" "$n")
        if [ "$(stored_blob "$name")" = "$(blob "$root" "$file")" ]; then
            for kind in caught missed timeout unviable; do
                sed "s|^|$kind $file |" "$store/$name/$kind.txt"
            done >>"$rows"
        else
            local why=missing
            [ -d "$store/$name" ] && why=stale
            echo "$name ($why)" >>"$pend"
        fi
    done < <(shard_list "$root")
    cut -d: -f1 "$root.list.txt" | sed "s|^$src/||" | sort | uniq -c | awk '{ print "all", $2, $1 }' >>"$rows"
    awk '
        $1 == "all" { total[$2] = $3; files[$2] = 1; next }
        { n[$2, $1]++; files[$2] = 1; t[$1]++ }
        function line(name, m, c, x, o, u) {
            v = c + o + x
            printf "%-18s %7d %7d %7d %7d %8d %9d %7s\n", name, m, c + x + o + u, c, x, o, u, v ? sprintf("%.1f%%", 100 * (c + o) / v) : "-"
        }
        END {
            printf "%-18s %7s %7s %7s %7s %8s %9s %7s\n", "file", "mutants", "tested", "caught", "missed", "timeout", "unviable", "score"
            k = 0
            for (f in files) names[++k] = f
            for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (names[j] < names[i]) { x = names[i]; names[i] = names[j]; names[j] = x }
            for (i = 1; i <= k; i++) { f = names[i]; all += total[f]; line(f, total[f], n[f, "caught"], n[f, "missed"], n[f, "timeout"], n[f, "unviable"]) }
            line("all", all, t["caught"], t["missed"], t["timeout"], t["unviable"])
        }' "$rows" >"$store/summary.txt"
    {
        echo
        echo "checkout $(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- "$crate" || echo ' (with uncommitted edits)');" \
            "shards pending: $(wc -l <"$pend")"
        sed 's/^/  /' "$pend"
        echo "missed:"
        sed -n 's/^missed [^ ]* /  /p' "$rows" | sort -t: -k1,1 -k2,2n
    } >>"$store/summary.txt"
    cat "$store/summary.txt"
}

if [ "${SUMMARY_ONLY:-0}" != 1 ]; then
    if [ "${RECHECK:-0}" = 1 ]; then recheck; else run_shards; fi
fi
summary
