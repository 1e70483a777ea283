#!/usr/bin/env bash
# Builds GMP and MPFR as *shared* libraries (libgmp.so.10, libmpfr.so.6) into PREFIX, from
# the very sources that the gmp-mpfr-sys crate vendors (so no download, and the versions
# its `use-system-libs` check requires: Debian 12's libgmp-dev 6.2.1 is refused, it wants
# 6.3.0). The wheel's extension links to them, and maturin's repair step copies them into
# the wheel's attncheck.libs/ — the way gmpy2's wheels ship GMP/MPFR (LGPL-3.0+): shared,
# so a user can replace them (README.md, "Licences").
#
# Two roads to the same libraries:
#  - gmp-mpfr-sys's own build of these sources (the static libgmp.a and libmpfr.a that the
#    command-line tool links, compiled with --with-pic, kept in its cache, by default
#    ~/.cache/gmp-mpfr-sys/<1.x>/<target>/<version>/), linked whole into shared libraries:
#    about a second instead of minutes (`make test` builds both the tool and the wheel);
#  - otherwise (no cache, a link that fails, or ATTNCHECK_GMP_FROM_SOURCE=1), configure
#    and make, with gmp-mpfr-sys's configure flags, shared instead of static: GMP with
#    --enable-fat (one library that picks its assembly for the CPU at run time, so the
#    wheel runs on any x86-64, not only on the machine that built it).
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
read -r src version < <(cargo metadata --format-version 1 --locked --manifest-path "$here/Cargo.toml" \
  | python3 -c 'import json,sys,os; m=json.load(sys.stdin); p=next(p for p in m["packages"] if p["name"]=="gmp-mpfr-sys"); print(os.path.dirname(p["manifest_path"]), p["version"])')

# the first road: gmp-mpfr-sys's cached static build of the same sources
cache="${GMP_MPFR_SYS_CACHE-$HOME/.cache/gmp-mpfr-sys}/${version%.*}/$(rustc -vV | sed -n 's/^host: //p')/$version"
if [ "${ATTNCHECK_GMP_FROM_SOURCE:-0}" != 1 ] && [ -n "${GMP_MPFR_SYS_CACHE-x}" ] \
  && [ -f "$cache/libgmp.a" ] && [ -f "$cache/libmpfr.a" ] && [ -f "$cache/gmp.h" ] && [ -f "$cache/mpfr.h" ]; then
  echo "build-gmp-mpfr: linking gmp-mpfr-sys's static build ($cache) into shared libraries" >&2
  tmp="$prefix/.partial"
  rm -rf "$tmp" && mkdir -p "$tmp/lib" "$tmp/include"
  if cc -shared -o "$tmp/lib/libgmp.so.10" -Wl,-soname,libgmp.so.10 \
       -Wl,--whole-archive "$cache/libgmp.a" -Wl,--no-whole-archive \
     && ln -s libgmp.so.10 "$tmp/lib/libgmp.so" \
     && cc -shared -o "$tmp/lib/libmpfr.so.6" -Wl,-soname,libmpfr.so.6 \
       -Wl,--whole-archive "$cache/libmpfr.a" -Wl,--no-whole-archive -L"$tmp/lib" -lgmp \
     && ln -s libmpfr.so.6 "$tmp/lib/libmpfr.so" \
     && cp "$cache/gmp.h" "$cache/mpfr.h" "$tmp/include/"; then
    mkdir -p "$prefix/lib" "$prefix/include"
    mv "$tmp"/lib/* "$prefix/lib/" && mv "$tmp"/include/* "$prefix/include/"
    rm -rf "$tmp"
    echo "build-gmp-mpfr: done" >&2
    exit 0
  fi
  rm -rf "$tmp"
  echo "build-gmp-mpfr: that failed; building from source instead" >&2
fi
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
