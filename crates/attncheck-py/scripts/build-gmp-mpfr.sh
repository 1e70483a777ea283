#!/usr/bin/env bash
# Builds GMP and MPFR as *shared* libraries (libgmp.so.10, libmpfr.so.6) into PREFIX, from
# the very sources that the gmp-mpfr-sys crate vendors (so no download, and the versions
# its `use-system-libs` check requires: Debian 12's libgmp-dev 6.2.1 is refused, it wants
# 6.3.0). The wheel's extension links to them, and `auditwheel repair` copies them into
# the wheel's attncheck.libs/ — the way gmpy2's wheels ship GMP/MPFR (LGPL-3.0+): shared,
# so a user can replace them (README.md, "Licences").
#
# Configure flags as gmp-mpfr-sys's own build uses, shared instead of static: GMP with
# --enable-fat (one library that picks its assembly for the CPU at run time, so the wheel
# runs on any x86-64, not only on the machine that built it).
#
# usage: build-gmp-mpfr.sh PREFIX   (skips the build when PREFIX already holds both)
set -euo pipefail
prefix=$(mkdir -p "$1" && cd "$1" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -e "$prefix/lib/libgmp.so.10" ] && [ -e "$prefix/lib/libmpfr.so.6" ] && [ -e "$prefix/include/mpfr.h" ]; then
  echo "build-gmp-mpfr: $prefix already holds GMP and MPFR" >&2
  exit 0
fi
# the gmp-mpfr-sys sources Cargo.lock pins (cargo metadata unpacks them)
src=$(cargo metadata --format-version 1 --locked --manifest-path "$here/Cargo.toml" \
  | python3 -c 'import json,sys,os; m=json.load(sys.stdin); print(os.path.dirname(next(p["manifest_path"] for p in m["packages"] if p["name"]=="gmp-mpfr-sys")))')
gmp_src=$(ls -d "$src"/gmp-*-c | head -1)
mpfr_src=$(ls -d "$src"/mpfr-*-c | head -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# -p keeps the timestamps: otherwise make sees configure.ac newer than configure and
# wants automake
cp -rp "$gmp_src" "$work/gmp-src"
cp -rp "$mpfr_src" "$work/mpfr-src"
jobs=${CARGO_BUILD_JOBS:-$(nproc)}
echo "build-gmp-mpfr: GMP from $gmp_src, MPFR from $mpfr_src into $prefix ($jobs jobs)" >&2
mkdir "$work/gmp-build" "$work/mpfr-build"
[ -e "$prefix/lib/libgmp.so.10" ] && [ -e "$prefix/include/gmp.h" ] \
  || (cd "$work/gmp-build" && ../gmp-src/configure --prefix="$prefix" --enable-fat --enable-shared --disable-static \
  --with-pic >/dev/null && make -j"$jobs" >/dev/null && make install >/dev/null)
[ -e "$prefix/lib/libmpfr.so.6" ] && [ -e "$prefix/include/mpfr.h" ] \
  || (cd "$work/mpfr-build" && ../mpfr-src/configure --prefix="$prefix" --with-gmp="$prefix" --enable-thread-safe \
  --disable-decimal-float --disable-float128 --enable-shared --disable-static --with-pic >/dev/null \
  && make -j"$jobs" >/dev/null && make install >/dev/null)
echo "build-gmp-mpfr: done" >&2
