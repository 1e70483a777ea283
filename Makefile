# The two quick-start commands (README): `make reports` and `make test`.
# Both first make sure the system can build rug's bundled GMP/MPFR (it needs m4
# and a C compiler) and has the independent proof checker (Coq with CoqInterval)
# and GNU parallel for the tests; on Debian/Ubuntu missing packages are installed
# with apt-get.

CARGO ?= cargo
# candle (positional/trained-model-claims) runs its elementwise kernels on a pool of spinning
# workers; for these small models one thread is faster, 5x so on a loaded machine
# (bench/anchors/LM_RESULTS.md). Results do not depend on it.
export CANDLE_NUM_THREADS ?= 1
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: reports test python build-tests check deps fetch bench anchors lint coq mutants

## reports: run every claim (quick profile) and write reports/
reports: deps
	$(CARGO) run --release -- run --all

## test: the whole test suite
# One test thread more than the cores: many tests wait (for a claim run that another test is computing
# behind util::run_quick's cache, or for a single-threaded coqc or attncheck subprocess), and the measured
# run kept only about 1.3 of 2 cores busy (bench/ci-time.md); the extra thread gives an idle core work.
# Coq's limits are CPU seconds, not wall time, so sharing a core changes no result. RUST_TEST_THREADS=…
# overrides it.
TEST_THREADS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 1 )))
# The Python wheel's build and tests (`make python`) run in the background beside `cargo test`,
# which leaves about 0.7 of a core idle (bench/ci-time.md), at nice 10 so that it takes that idle
# time rather than the Rust tests' (Coq's limits are CPU seconds, so no result depends on it); its
# output is printed when both are done, and either one failing fails the target. PYTHON=0 leaves
# it out.
PYTHON ?= 1
test: deps
	@set -u; pylog=$${CARGO_TARGET_DIR:-target}/python.log; py=""; \
	$(CARGO) test --no-run --quiet 2>&1 | grep -v '^ *Executable ' ; \
	if [ "$(PYTHON)" = 1 ]; then \
	  mkdir -p "$$(dirname "$$pylog")"; \
	  echo "make test: the Python wheel builds and is tested in the background (log: $$pylog)"; \
	  nice -n 10 bash crates/attncheck-py/scripts/test-wheel.sh >"$$pylog" 2>&1 & py=$$!; \
	fi; \
	RUST_TEST_THREADS=$${RUST_TEST_THREADS:-$(TEST_THREADS)} $(CARGO) test; rust=$$?; \
	pyrc=0; \
	if [ -n "$$py" ]; then \
	  wait $$py || pyrc=$$?; \
	  echo "---- the Python wheel's build and tests (make python) ----"; cat "$$pylog"; \
	  [ $$pyrc = 0 ] || echo "make test: the Python tests failed (exit $$pyrc)"; \
	fi; \
	[ $$rust = 0 ] && [ $$pyrc = 0 ]

## python: build the Python wheel (crates/attncheck-py), install it into a fresh venv, run its pytest file
python: deps
	bash crates/attncheck-py/scripts/test-wheel.sh

## build-tests: build what `make test` runs, without the test-only packages (CI installs those meanwhile)
build-tests: fetch
	$(CARGO) test --no-run

## check: CI-style regression check against the committed reports
check: deps
	$(CARGO) run --release -- run --all --check

## coq: re-prove every committed certificate in Coq (prints the Coq time per certificate), and the lemmas of coq/
coq: deps
	$(CARGO) run --release -- export coq $$(find reports -name '*.cert.json' | sort) --out target/coq --check

## lint: formatting and clippy (the Python binding, its own workspace: formatting; `make python` builds and tests it)
lint:
	$(CARGO) fmt --check
	$(CARGO) fmt --check --manifest-path crates/attncheck-py/Cargo.toml
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --quiet

## mutants: cargo mutants on the kernel crate with its own tests, sharded (scripts/mutants.sh:
## shards of at most MUTANTS_CHUNK=40 mutants of one file, stored as they land in
## bench/sweeps/mutants/; RECHECK=1, SUMMARY_ONLY=1, MUTANTS_FILES): the score and the
## surviving mutants by file are recorded in crates/attncheck-kernel/README.md
mutants: deps
	@command -v cargo-mutants >/dev/null || nice -n 10 $(CARGO) install --locked cargo-mutants --version 27.1.0
	bash scripts/mutants.sh

## bench: criterion benchmarks (crates/attncheck-bench)
bench: deps
	$(CARGO) bench -p attncheck-bench

## anchors: side-by-side timings against python-flint / mpmath / numpy / PyTorch (run on a quiet machine)
anchors: deps
	bash bench/anchors/run_softmax.sh
	bash bench/anchors/run_gram.sh
	bash bench/anchors/run_lm.sh

fetch:
	@# the trained-model claim's corpus is the source of crates that Cargo.lock pins (every platform's)
	@$(CARGO) fetch --locked --quiet || echo "attncheck: cargo fetch failed; positional/trained-model-claims will report its corpus missing"

deps: fetch
	@missing=""; \
	command -v m4 >/dev/null 2>&1 || missing="$$missing m4"; \
	command -v cc >/dev/null 2>&1 || missing="$$missing gcc"; \
	command -v make >/dev/null 2>&1 || missing="$$missing make"; \
	command -v coqc >/dev/null 2>&1 || missing="$$missing coq"; \
	{ command -v coqc >/dev/null 2>&1 && [ -d "$$(coqc -where 2>/dev/null)/user-contrib/Interval" ]; } || missing="$$missing libcoq-interval"; \
	command -v parallel >/dev/null 2>&1 || missing="$$missing parallel"; \
	if [ -n "$$missing" ]; then \
	  if command -v apt-get >/dev/null 2>&1; then \
	    echo "attncheck: installing$$missing (GMP/MPFR for rug; Coq for verify --coq; GNU parallel for the shard tests)"; \
	    $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "attncheck: please install$$missing (GMP/MPFR for rug; Coq for verify --coq; GNU parallel for the shard tests)"; exit 1; \
	  fi; \
	fi
