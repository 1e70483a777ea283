#!/usr/bin/env bash
# The dependencies that only run at build time (proc macros, build scripts and what they
# use): the packages of the workspace's build graph that its normal and dev graph, proc
# macros left out, does not hold. Cargo.toml's [profile.dev.package] builds them at
# opt-level 0 ("*" would optimise them like the code the tests run). A crate missing
# from that list is only compiled slower; a crate listed that the tests' code also uses
# would only run slower (this script never lists one).
#
#   scripts/host-only-crates.sh          # the names, one per line
#   scripts/host-only-crates.sh --check  # exit 1 if Cargo.toml's list differs
set -euo pipefail
cd "$(dirname "$0")/.."
names() { cargo tree --workspace --prefix none --format '{p}' "$@" | awk '{print $1}' | sort -u; }
host=$(comm -23 <(names -e normal,build,dev) <(names -e normal,dev,no-proc-macro))
if [ "${1:-}" = --check ]; then
    listed=$(sed -n 's/^\([A-Za-z0-9_-]*\) = { opt-level = 0, debug = false }$/\1/p' Cargo.toml | sort)
    if [ "$host" != "$listed" ]; then
        diff <(echo "$listed") <(echo "$host") | sed 's/^</  in Cargo.toml only:/; s/^>/  host-only, not in Cargo.toml:/' >&2 || true
        exit 1
    fi
    exit 0
fi
echo "$host"
