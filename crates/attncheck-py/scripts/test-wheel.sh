#!/usr/bin/env bash
# `make python` (and the Python half of `make test`): builds the attncheck wheel, installs
# it into a fresh virtual environment, and runs crates/attncheck-py/tests with pytest.
#
#   1. GMP and MPFR as shared libraries (scripts/build-gmp-mpfr.sh; kept between runs);
#   2. `maturin build --release --locked`: the extension links them, and maturin's repair
#      step (with patchelf) copies them into the wheel's attncheck.libs/;
#   3. a new venv, the wheel installed from the file (--no-index), pytest.
#
# Everything goes under $CARGO_TARGET_DIR/python (default target/python): the tools'
# venv (maturin, patchelf, pytest, pinned below), the libraries, the wheel's own cargo
# target dir (its workspace is not the root's: other features, other profile), the wheel
# in dist/, and the test venv. Progress to stderr; pytest's report to stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
crate="$root/crates/attncheck-py"
target=${CARGO_TARGET_DIR:-$root/target}
case "$target" in /*) ;; *) target="$root/$target" ;; esac
work="$target/python"
mkdir -p "$work"
say() { echo "python: $*" >&2; }

SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  say "installing python3-venv"
  $SUDO apt-get install -y -qq python3-venv >/dev/null
fi

# the build tools, once (pinned: the wheel and the tests do not change under us)
tools="$work/tools"
if [ ! -x "$tools/bin/maturin" ] || [ ! -x "$tools/bin/patchelf" ]; then
  say "the build tools' venv: maturin, patchelf"
  rm -rf "$tools"
  python3 -m venv "$tools"
  "$tools/bin/pip" install -q --disable-pip-version-check "maturin==1.16.0" "patchelf==0.19.3.0"
fi

gmp="$work/gmp"
say "GMP and MPFR (shared) in $gmp"
"$crate/scripts/build-gmp-mpfr.sh" "$gmp"

# the Cargo profile of the tested wheel (Cargo.toml: wheel-test is release at opt-level 1, the
# kernel and the library at 0, much cheaper to build); ATTNCHECK_WHEEL_PROFILE=release tests
# the wheel users install
profile=${ATTNCHECK_WHEEL_PROFILE:-wheel-test}
say "building the wheel (profile $profile)"
rm -rf "$work/dist"
(
  cd "$crate"
  export PATH="$tools/bin:$PATH" CARGO_TARGET_DIR="$work/cargo"
  export C_INCLUDE_PATH="$gmp/include${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}"
  export LIBRARY_PATH="$gmp/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
  # maturin's repair finds the libraries to copy into the wheel here
  export LD_LIBRARY_PATH="$gmp/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  maturin build --profile "$profile" --locked --out "$work/dist" 2>&1 | grep -v '^ *Compiling ' >&2
)
wheel=$(ls "$work"/dist/attncheck-*.whl)

# the binding's Rust unit tests (src/work.rs, src/formula.rs): the same release build of
# attncheck is reused, only pyo3 (without extension-module) and the test harness are built;
# they link libpython, so they need a shared one (pyenv's and Debian's python3 have it)
pylib=$(python3 -c 'import sysconfig as s; print(s.get_config_var("LIBDIR") if s.get_config_var("Py_ENABLE_SHARED") else "")')
if [ -n "$pylib" ]; then
  say "the binding's Rust unit tests"
  (
    cd "$crate"
    export CARGO_TARGET_DIR="$work/cargo" PYO3_PYTHON="$tools/bin/python3"
    export C_INCLUDE_PATH="$gmp/include${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}"
    export LIBRARY_PATH="$gmp/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
    export LD_LIBRARY_PATH="$gmp/lib:$pylib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    cargo test --profile "$profile" --locked --lib 2>&1 | grep -v '^ *Compiling '
  )
else
  say "the binding's Rust unit tests are skipped: this python3 has no shared libpython to link them with"
fi

say "a fresh venv with $(basename "$wheel")"
venv="$work/venv"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check --no-index "$wheel"
"$venv/bin/pip" install -q --disable-pip-version-check "pytest==9.2.0"

# the command-line tool, to compare error messages with: the tests that need it fail
# without it (issue #38: no test skips silently). It is the binary the Rust suite runs,
# built by `cargo test --no-run` (`make test` builds it before it starts us, so this is a
# no-op there). Not `cargo build --bin attncheck`: the test build's profile and features
# differ from the dev build's, so that rebuilt the crate at opt-level 1 in the middle of
# `make test` and overwrote the binary the suite's tests run with the slower one (CI went
# from 23 to 64 minutes, session 22).
bin="$target/debug/attncheck"
if [ -z "${ATTNCHECK_BIN:-}" ]; then
  say "the command-line tool to compare with ($bin)"
  (cd "$root" && cargo test --locked --quiet --no-run 2>&1 | grep -v '^ *Executable ' || true)
  [ -x "$bin" ] || { echo "test-wheel: $bin was not built" >&2; exit 1; }
  export ATTNCHECK_BIN="$bin"
fi
# from a directory of its own: the tests must import the installed wheel, not the source
cd "$work"
# LD_LIBRARY_PATH is not set here: the wheel must find its own copies of GMP and MPFR
exec "$venv/bin/python" -m pytest -p no:cacheprovider -q "$crate/tests" "$@"
