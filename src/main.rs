//! The `attncheck` command: a thin layer over the library that maps errors to
//! exit codes (0 as expected, 1 refuted or regressed, 2 bad input or usage).

#![deny(clippy::print_stdout, clippy::print_stderr)]

use attncheck::app;
use attncheck::kernel::Certainty;
use attncheck::progress::Progress;
use attncheck::sparse::target;
use attncheck::spec::{default_out, Profile, SpecSource};
use attncheck::{errln, outln};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The `--profile` argument: the kernel's [`Profile`] as clap sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ProfileArg {
    /// Small instances: the whole suite within a few minutes on 2 cores.
    Quick,
    /// The large sweeps.
    Full,
}

impl From<ProfileArg> for Profile {
    fn from(p: ProfileArg) -> Profile {
        match p {
            ProfileArg::Quick => Profile::Quick,
            ProfileArg::Full => Profile::Full,
        }
    }
}

const ABOUT: &str = "Machine-checked verdicts for published theorems about self-attention.";

const LONG_ABOUT: &str = "\
Machine-checked verdicts for published theorems about self-attention.

Each claim of a paper is a spec under theorems/<paper>/<claim>.toml. `run` builds
witnesses, checks the stated bounds, and writes reports/<paper>/<claim>.{md,json,svg}
plus reports/README.md (one row per claim). A claim of your own is a spec written as
formulas: `attncheck new mine/my-bound`, then `attncheck run mine/my-bound.toml`
(docs/your-own-claims.md); `eval` and `prove` compute and decide single formulas.

VERDICTS
  certified      every inequality of the finite instance proven with outward-rounded
                 MPFR intervals or exact rationals
  supported      an asymptotic or heuristic claim observed at finite size: what its
                 certificate states is certified, the rest observed within the spec's
                 tolerance
  refuted        a certified counterexample
  inconclusive   neither, with the reason (precision, horizon, budget)
  not-checkable  no finite computation decides it; the report says what would
  report-only    exploration: observations recorded, nothing asserted

PROFILES
  quick (default)  small instances; the whole suite runs in minutes on 2 cores
  full             the large sweeps

EXIT CODES
  0  every verdict as the spec expects (and, with --check, nothing regressed)
  1  a verdict differs from the expected one, or --check found a regression
  2  bad input or usage (the message names the file, line and field)";

#[derive(Parser)]
#[command(name = "attncheck", version, about = ABOUT, long_about = LONG_ABOUT)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List every claim with its paper, the rigour it can reach and its title.
    List {
        /// Directory of claim specs [default: ./theorems when it exists, else the
        /// specs built into the binary].
        #[arg(long)]
        theorems: Option<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Run claims and write (or, with --check, compare) their reports.
    ///
    /// Examples:
    ///   attncheck run positional/alibi-window
    ///   attncheck run positional            (every claim of a paper)
    ///   attncheck run --all                 (everything; writes reports/README.md)
    ///   attncheck run --all --check         (CI: exit 1 if a verdict or key figure changed)
    ///   attncheck run sparse --profile full (the large sweeps; writes reports/full/)
    ///   attncheck run mine/my-bound.toml    (a claim of your own, written as formulas:
    ///                                        see `attncheck new` and docs/your-own-claims.md)
    #[command(verbatim_doc_comment)]
    Run {
        /// Claim IDs (paper/claim), paper names, or spec files (ending in .toml).
        targets: Vec<String>,
        /// Run every claim.
        #[arg(long)]
        all: bool,
        /// quick (default) or full.
        #[arg(long, value_enum, default_value_t = ProfileArg::Quick)]
        profile: ProfileArg,
        /// Where reports are written (and read by --check) [default: reports, or
        /// reports/full with --profile full, so a full sweep leaves the quick reports alone].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Compare against the committed JSON reports instead of writing: exit 1 when
        /// a verdict changed or a key figure moved beyond the spec's check_tolerance.
        #[arg(long)]
        check: bool,
        /// Directory of claim specs [default: ./theorems when it exists, else the
        /// specs built into the binary].
        #[arg(long)]
        theorems: Option<PathBuf>,
        /// Worker threads (default: all cores). Reports do not depend on it.
        #[arg(long)]
        threads: Option<usize>,
        /// Put this text (e.g. "$(git rev-parse --short HEAD), $(date -u +%F)") into
        /// index.html; without it the committed reports stay byte-identical.
        #[arg(long)]
        stamp: Option<String>,
        /// Run only shard i of N (1 ≤ i ≤ N) of each claim's independent units of work
        /// (seeds, instances, cells) and write <out>/<paper>/<claim>.shard-i-of-N.json;
        /// `attncheck merge` joins the N shards into the report an unsharded run
        /// writes, byte for byte. For Slurm job arrays and GNU parallel (README).
        #[arg(long, value_name = "i/N")]
        shard: Option<String>,
        /// With --shard: shard a further sweep of the claim instead of its own units,
        /// work its spec adds to a sweep that already ran (`sweeps.NAME`), written as
        /// <claim>.NAME.shard-i-of-N.json with its own N; `merge` joins each sweep's
        /// shards, and a merge without a sweep's shards says that sweep is absent.
        #[arg(long, value_name = "NAME", requires = "shard")]
        sweep: Option<String>,
        /// Set a parameter of the claim for this run: PATH=VALUE, where PATH names a
        /// parameter of its spec (`eps`, `rows[0].slope`) and VALUE is a TOML value or a
        /// literal (`2^-5`); repeatable; one claim only. The reports go to
        /// reports/what-if/ unless --out says otherwise, and their command shows the
        /// --set. Every range check of the claim applies to the new value.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<String>,
        /// After each claim's line, print the certified values behind its checks:
        /// both sides of every comparison its certificate states, computed by the
        /// kernel (exact, or the digits the enclosure certifies), so a wrong printed
        /// value shows next to the true one.
        ///
        /// Example: attncheck run positional/alibi-window --set 'rows[0].slope=2^-5' --explain
        #[arg(long)]
        explain: bool,
        /// Print one JSON document on stdout (each claim's verdict, expectation,
        /// every check, the report paths, and with --check the regressions) instead
        /// of one line per claim. Its shape is documented in docs/run-json.md.
        #[arg(long)]
        json: bool,
    },
    /// Join the shard files of `run … --shard i/N` into the reports an unsharded
    /// run writes (byte for byte), then rebuild the index.
    ///
    /// Example: attncheck merge shards/ --out reports/full
    #[command(verbatim_doc_comment)]
    Merge {
        /// Directories (searched two levels deep) or shard files.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Where the reports are written [default: reports, or reports/full for
        /// shards of the full profile].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Directory of claim specs [default: ./theorems when it exists, else the
        /// specs built into the binary].
        #[arg(long)]
        theorems: Option<PathBuf>,
    },
    /// Compare two report sets check by check: verdicts, check results, key
    /// figures and parameters (exit 0 when they agree, 1 when anything differs).
    ///
    /// Example: attncheck diff old/reports reports
    #[command(verbatim_doc_comment)]
    Diff {
        /// The older report directory.
        old: PathBuf,
        /// The newer report directory.
        new: PathBuf,
    },
    /// Re-check a certificate (reports/<paper>/<claim>.cert.json) with the trusted
    /// kernel alone, without the code that built it.
    ///
    /// The claim's statement is rebuilt from its spec (theorems/<paper>/<claim>.toml,
    /// or --theorems DIR) and the certificate must carry exactly that statement: a
    /// tampered, truncated or foreign certificate is rejected. Then every obligation
    /// is decided in outward-rounded intervals or exact rationals.
    ///
    /// Exit codes: 0 every obligation as asserted (proven, or disproven where the
    /// claim asserts a refutation); 1 an obligation certifiably contrary to what it
    /// asserts; 2 bad input or usage; 3 undecided at the certificate's precision;
    /// 4 rejected: the certificate's statement is not its claim's statement.
    #[command(verbatim_doc_comment)]
    Verify {
        /// The certificate file.
        certificate: PathBuf,
        /// Directory of claim specs the statement is rebuilt from [default:
        /// ./theorems when it exists, else the specs built into the binary].
        #[arg(long)]
        theorems: Option<PathBuf>,
        /// The spec file the statement is rebuilt from (a claim of your own, written
        /// as formulas, wherever its file sits); its ID must be the certificate's.
        #[arg(long, conflicts_with_all = ["theorems", "no_spec"])]
        spec: Option<PathBuf>,
        /// For a `sparse construct` certificate: the target matrix (Matrix Market) it
        /// must be about; without it the statement is rebuilt from the A it pins.
        #[arg(long)]
        target: Option<PathBuf>,
        /// For an `attncheck window` certificate: the model (safetensors) it must be
        /// about, with --config; without it the statement is rebuilt from the weights
        /// and slopes the certificate pins.
        #[arg(long, requires = "config", conflicts_with_all = ["no_spec", "target", "formula"])]
        model: Option<PathBuf>,
        /// With --model: the model's config (the same file `attncheck window` read).
        #[arg(long, requires = "model")]
        config: Option<PathBuf>,
        /// For a certificate of `attncheck prove --cert`: the formula it must state
        /// (spacing aside); without it the statement is the formula the certificate
        /// carries, and the output prints it.
        #[arg(long, allow_hyphen_values = true)]
        formula: Option<String>,
        /// Do not rebuild the statement: only evaluate the certificate's own
        /// formulas (the output says plainly that the statement was not checked).
        #[arg(long)]
        no_spec: bool,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
        /// Also re-prove the statement in Coq (needs coqc and CoqInterval): after
        /// the same statement check and kernel decisions as without it, every
        /// obligation the Coq translation takes is proven by Coq as well; the
        /// others rest on the kernel alone (each line says which). Exit 0 only if the
        /// kernel decides every obligation as asserted and Coq proves every one
        /// sent to it; 1 if either finds one contrary (Coq: does not prove it);
        /// 2 without coqc; 3 and 4 as without --coq.
        #[arg(long)]
        coq: bool,
        /// With --coq: the CPU seconds each coqc process may use; an obligation
        /// whose coqc reaches it stays kernel-only, with the reason.
        #[arg(long, requires = "coq", default_value_t = attncheck::coq::Limits::DEFAULT.cpu_seconds)]
        coq_cpu_limit: u64,
        /// With --coq: the address space (MiB) each coqc process may use; an
        /// obligation whose coqc reaches it stays kernel-only, with the reason.
        #[arg(long, requires = "coq", default_value_t = attncheck::coq::Limits::DEFAULT.memory_mib)]
        coq_memory_limit: u64,
    },
    /// Write a new spec for a claim of your own, written as formulas, with comments
    /// that teach the format and obligations that already certify.
    ///
    /// Example:
    ///   attncheck new mine/my-bound           (writes mine/my-bound.toml)
    ///   attncheck run mine/my-bound.toml      (report and certificate in reports/mine/)
    ///   attncheck verify reports/mine/my-bound.cert.json --spec mine/my-bound.toml --coq
    ///
    /// The tutorial is docs/your-own-claims.md. An existing file is never overwritten.
    #[command(verbatim_doc_comment)]
    New {
        /// The claim's ID, <group>/<name> (lowercase letters, digits and `-`), not an
        /// ID of the tool's own claims.
        id: String,
        /// Where to write it [default: <group>/<name>.toml].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Compute a term of the formula language: its exact value, or a certified
    /// enclosure, with the precision it needed.
    ///
    /// The term is an S-expression of docs/certificate-format.md ("Formulas"): exact
    /// literals (7, -3/4, 1.5e-3, 2^-8), pi, (+ a b …), (- a b), (* a b …), (/ a b),
    /// (exp a), (ln a), (sqrt a), (sin a), (cos a), (pow a n), (abs a), (min a b),
    /// (max a b), (ceil a), (floor a), (sum k lo hi body). A term that stays rational
    /// is computed exactly; otherwise in outward-rounded intervals at --precision bits,
    /// doubled up to --max-precision until the enclosure is narrow enough (relative
    /// width 2^-53, or 10^-N with --digits N). Nothing is decided in floating point.
    ///
    /// Examples:
    ///   attncheck eval "(exp -2)"
    ///   attncheck eval "(/ (sum k 1 10 (/ 1 k)) 3)"           (exact: 7381/7560)
    ///   attncheck eval "(ceil (/ (ln (/ (+ (* (exp 2) (- 1 1/1000)) 1/1000) 1/1000)) 2^-5))"
    ///       (the minimal ALiBi window for m = 2^-5, Δ = 2, ε = 10^-3: exactly 286)
    ///   attncheck eval pi --digits 100
    ///
    /// Exit codes: 0 a value (exact, or an enclosure as narrow as asked); 1 the term is
    /// undefined (ln of a non-positive, sqrt of a negative, division by zero: the
    /// message names the subterm); 2 bad input (the position as line:column, with a
    /// caret); 3 not settled at --max-precision (the enclosure at the highest precision
    /// tried is shown).
    #[command(verbatim_doc_comment)]
    Eval {
        /// The term, e.g. "(exp -2)".
        #[arg(allow_hyphen_values = true)]
        term: String,
        /// The first precision, in bits.
        #[arg(long, default_value_t = attncheck::calc::DEFAULT_PRECISION)]
        precision: u32,
        /// The highest precision to climb to, in bits.
        #[arg(long, default_value_t = attncheck::calc::DEFAULT_MAX_PRECISION)]
        max_precision: u32,
        /// Climb until the enclosure's relative width is at most 10^-N (and print
        /// its endpoints with N + 2 significant digits).
        #[arg(long, value_name = "N")]
        digits: Option<u32>,
        /// Print one JSON document (exact endpoints as fractions).
        #[arg(long)]
        json: bool,
    },
    /// Decide a formula: proven (exit 0), certifiably false (exit 1) or undecided
    /// (exit 3), with the kernel alone; optionally write a certificate and re-prove it
    /// in Coq.
    ///
    /// A formula is a comparison (< a b), (<= a b), (> a b), (>= a b), (= a b) of
    /// terms (see `attncheck eval --help`), or (and f …), (not f), (forall k lo hi f).
    /// It is decided in exact rationals or outward-rounded intervals at --precision
    /// bits, doubled up to --max-precision while undecided.
    ///
    /// Examples:
    ///   attncheck prove "(<= (exp (* -2^-8 512)) 1/1000)"        (e^{-512m} ≤ ε for m = 2^-8: false)
    ///   attncheck prove "(< 285 (/ (ln (/ (+ (* (exp 2) (- 1 1/1000)) 1/1000) 1/1000)) 2^-5))"
    ///   attncheck prove "(<= (sum i 1 100 (/ 1 (* i i))) 2)" --cert basel.cert.json
    ///   attncheck verify basel.cert.json --formula "(<= (sum i 1 100 (/ 1 (* i i))) 2)"
    ///   attncheck prove "(< (exp -2) 0.13533528323661269190)" --coq
    ///
    /// --cert FILE writes (atomically) a certificate of the statement "the formula
    /// holds" when it is proven (nothing otherwise); `attncheck verify FILE` re-checks
    /// it with the kernel, and `verify FILE --formula TEXT` also requires that it
    /// states exactly TEXT (exit 4 otherwise). To certify that a formula is false,
    /// prove its negation (not …).
    ///
    /// Exit codes: 0 proven; 1 certifiably false (or, with --coq, Coq rejects it);
    /// 2 bad input (the position as line:column, with a caret), or --coq without
    /// coqc; 3 undecided at --max-precision (the reason is printed).
    #[command(verbatim_doc_comment)]
    Prove {
        /// The formula, e.g. "(<= (exp -2) 1/7)".
        #[arg(allow_hyphen_values = true)]
        formula: String,
        /// The first precision, in bits.
        #[arg(long, default_value_t = attncheck::calc::DEFAULT_PRECISION)]
        precision: u32,
        /// The highest precision to climb to, in bits.
        #[arg(long, default_value_t = attncheck::calc::DEFAULT_MAX_PRECISION)]
        max_precision: u32,
        /// Write a certificate of the proof to this file (only when proven).
        #[arg(long, value_name = "FILE")]
        cert: Option<PathBuf>,
        /// Also re-prove it in Coq (needs coqc and CoqInterval); a formula the Coq
        /// translation does not take stays kernel-only, with the reason.
        #[arg(long)]
        coq: bool,
        /// Print one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Export a certificate for an independent checker.
    Export {
        #[command(subcommand)]
        cmd: ExportCmd,
    },
    /// Certify the implicit window of every head of your own ALiBi model: for every
    /// input, the attention mass a query puts on keys at distance ≥ w is at most ε.
    ///
    /// The model is a pre-LayerNorm decoder with ALiBi, in the safetensors format
    /// (F32, F16 or BF16 weights); a config file (TOML) names its tensors, heads,
    /// layers, layer-norm ε and slopes; docs/window.md shows one. The kernel bounds
    /// each head's content-logit range over every input from the exact weights (at
    /// layer 0 of a byte-level model exactly, over every byte pair), and the window is
    /// the smallest w with ALiBi's tail bound T^∞(w) ≤ ε at that range. It writes
    /// OUT/<model>.windows.json and the certificate OUT/<model>.cert.json, which
    /// `attncheck verify` re-checks (with --model and --config, against your file).
    ///
    /// Example:
    ///   attncheck window model.safetensors --config model.toml --epsilon 1/1000
    ///   attncheck verify window/model.cert.json --model model.safetensors --config model.toml
    ///
    /// Exit codes: 0 every window certified; 2 bad input (the message names the file
    /// and the tensor or field; nothing is written), or a model beyond the kernel's
    /// budget (with its cost); 3 a window the kernel did not decide at --precision
    /// (nothing is written).
    #[command(verbatim_doc_comment)]
    Window {
        /// The model (safetensors).
        model: PathBuf,
        /// The config naming its tensors (TOML; see docs/window.md).
        #[arg(long)]
        config: PathBuf,
        /// The attention mass allowed beyond the window (exact literal in (0, 1)).
        #[arg(long, default_value = attncheck::model_window::DEFAULT_EPSILON)]
        epsilon: String,
        /// Precision of the kernel's intervals, bits.
        #[arg(long, default_value_t = attncheck::model_window::DEFAULT_PRECISION)]
        precision: u32,
        /// Output directory.
        #[arg(long, default_value = "window")]
        out: PathBuf,
        /// Print the windows as one JSON document (the file OUT/<model>.windows.json).
        #[arg(long)]
        json: bool,
    },
    /// The sparse-pattern construction (sparse.md §3, the project's reconstruction).
    Sparse {
        #[command(subcommand)]
        cmd: SparseCmd,
    },
}

#[derive(Subcommand)]
enum ExportCmd {
    /// Write the Coq files of certificates (and the Attncheck library) so that
    /// anyone can run coqc on them by hand; prints the command. With several
    /// certificates each goes to OUT/<module>/; --check also runs Coq on each and
    /// prints how many obligations it proved and the time it took, then checks
    /// the lemmas proven once and for all in coq/ (coq/AlibiTailBound.v, coq/BooleanLimit.v) in
    /// OUT/lemmas/.
    ///
    /// Example: attncheck export coq reports/*/*.cert.json --out target/coq --check
    #[command(verbatim_doc_comment)]
    Coq {
        /// The certificate file(s).
        #[arg(required = true)]
        certificates: Vec<PathBuf>,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// Run coqc on every exported certificate (exit 1 if Coq rejects an
        /// obligation, 2 without coqc).
        #[arg(long)]
        check: bool,
    },
}

#[derive(Subcommand)]
enum SparseCmd {
    /// Build the input X for a target matrix A with fixed W_Q, W_K, and write the
    /// witness and its certificate.
    ///
    /// The target is a Matrix Market coordinate file (`%%MatrixMarket matrix
    /// coordinate real general`, a size line `n n nnz`, then `i j value` lines,
    /// 1-based, values positive exact decimals). Bad input exits 2, naming the line,
    /// and writes nothing.
    Construct {
        /// The target matrix (Matrix Market coordinate format).
        #[arg(long)]
        target: PathBuf,
        /// Row sparsity k: at most k nonzeros per row.
        #[arg(long, default_value_t = 1)]
        k: usize,
        /// Ratio tolerance ε (exact literal).
        #[arg(long, default_value = "1/2")]
        epsilon: String,
        /// Margin γ off the support (exact literal).
        #[arg(long, default_value = "2.302585")]
        gamma: String,
        /// Dynamic range ρ ≥ max_i ln(max/min of row i) (exact literal).
        #[arg(long, default_value = "0")]
        rho: String,
        /// Failure probability δ of the draw (exact literal).
        #[arg(long, default_value = "0.01")]
        delta: String,
        /// Seed of the sign matrix S.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Output directory.
        #[arg(long, default_value = "construct")]
        out: PathBuf,
    },
}

/// Prints one line of results to stdout; a closed pipe (`| head`) stops the output
/// quietly and changes nothing else ([`attncheck::stdio`]).
fn emit(line: &str) {
    outln!("{line}");
}

fn main() -> ExitCode {
    // before any thread starts: candle reads CANDLE_NUM_THREADS once (speed only)
    #[cfg(feature = "lm")]
    attncheck_lm::configure();
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            errln!("attncheck: error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn real_main(cli: Cli) -> Result<u8, app::Error> {
    match cli.cmd {
        Cmd::List { theorems, json } => {
            let specs = app::load_specs_from(&SpecSource::choose(theorems))?;
            if json {
                let v: Vec<_> = specs
                    .iter()
                    .map(|s| {
                        serde_json::json!({"id": s.id, "paper": s.paper(), "rigour": s.rigour,
                            "expected": s.expected, "title": s.title})
                    })
                    .collect();
                emit(&serde_json::to_string_pretty(&v).unwrap_or_default());
            } else {
                emit(&format!(
                    "{:<42} {:<14} {:<14} title",
                    "claim", "rigour", "expected"
                ));
                for s in &specs {
                    emit(&format!(
                        "{:<42} {:<14} {:<14} {}",
                        s.id,
                        s.rigour.as_str(),
                        s.expected.as_str(),
                        s.title
                    ));
                }
            }
            Ok(0)
        }
        Cmd::Run {
            targets,
            all,
            profile,
            out,
            check,
            theorems,
            threads,
            stamp,
            shard,
            sweep,
            sets,
            explain,
            json,
        } => {
            let profile = Profile::from(profile);
            if let Some(n) = threads {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n.max(1))
                    .build_global()
                    .map_err(|e| app::Error::Usage(e.to_string()))?;
            }
            if !sets.is_empty() && (check || shard.is_some() || all) {
                return Err(app::Error::Usage(
                    "--set changes a claim's parameters for one run: it cannot be combined with \
                     --check, --shard or --all"
                        .into(),
                ));
            }
            let out_dir = out.unwrap_or_else(|| {
                if sets.is_empty() {
                    default_out(profile)
                } else {
                    default_out(profile).join("what-if")
                }
            });
            // spec files named on the command line (claims of the user's own), then IDs
            let (files, names): (Vec<String>, Vec<String>) =
                targets.into_iter().partition(|t| t.ends_with(".toml"));
            if all && !files.is_empty() {
                return Err(app::Error::Usage(format!(
                    "--all runs every claim of the spec directory; it cannot be combined with \
                     spec files ({}): drop one",
                    files.join(", ")
                )));
            }
            let file_specs = files
                .iter()
                .map(|f| app::load_spec_file(std::path::Path::new(f)))
                .collect::<Result<Vec<_>, _>>()?;
            let specs = if all || !names.is_empty() || file_specs.is_empty() {
                app::load_specs_from(&SpecSource::choose(theorems))?
            } else {
                Vec::new()
            };
            let mut chosen = if file_specs.is_empty() || !names.is_empty() {
                app::select(&specs, &names, all)?
            } else {
                Vec::new()
            };
            for f in &file_specs {
                if !chosen.iter().any(|c| c.id == f.id) {
                    chosen.push(f);
                }
            }
            let edited;
            if !sets.is_empty() {
                let [one] = chosen.as_slice() else {
                    return Err(app::Error::Usage(format!(
                        "--set applies to one claim; {} are selected",
                        chosen.len()
                    )));
                };
                edited = app::with_sets(one, &sets)?;
                chosen = vec![&edited];
            }
            if check {
                app::check_baseline_dir(&out_dir)?;
            }
            if let Some(sh) = shard {
                if check || json {
                    return Err(app::Error::Usage(
                        "--shard writes shard files; --check and --json apply to the merged run"
                            .into(),
                    ));
                }
                let (index, count) = app::parse_shard(&sh)?;
                let progress = Progress::stderr(chosen.len() as u64);
                let files =
                    app::run_shard(&chosen, profile, index, count, sweep.as_deref(), &progress)?;
                progress.finish();
                for f in &files {
                    let path = app::shard_path(&out_dir, f);
                    let mut t = serde_json::to_string_pretty(f).unwrap_or_default();
                    t.push('\n');
                    app::write_atomic(&path, &t)?;
                    emit(&format!(
                        "shard {}/{} of {}: {} of {} units, wrote {}",
                        index + 1,
                        count,
                        f.claim,
                        f.record.results.len(),
                        f.record.keys.len(),
                        path.display()
                    ));
                }
                return Ok(0);
            }
            let progress = Progress::stderr(chosen.len() as u64);
            let runs = app::run_claims(&chosen, profile, &progress)?;
            progress.finish();
            let mut code = 0;
            for r in &runs {
                if !r.report.as_expected {
                    code = 1;
                }
                if !json {
                    let mark = if r.report.as_expected { "ok " } else { "BAD" };
                    let why = r
                        .report
                        .unexpected()
                        .map(|w| format!(": {w}"))
                        .unwrap_or_default();
                    emit(&format!(
                        "{mark} {:<42} {:<14} (expected {}){why}",
                        r.report.id,
                        r.report.verdict.as_str(),
                        r.report.expected
                    ));
                    if explain {
                        for l in app::explain_lines(r) {
                            emit(&l);
                        }
                    }
                }
            }
            let problems = if check {
                let problems = app::check_against(&out_dir, &runs)?;
                if !problems.is_empty() {
                    code = 1;
                }
                if !json {
                    for p in &problems {
                        emit(&format!("regression: {p}"));
                    }
                    emit(&format!(
                        "checked {} claims against {}: {} regression(s)",
                        runs.len(),
                        out_dir.display(),
                        problems.len()
                    ));
                }
                Some(problems)
            } else {
                app::write_reports_stamped(&out_dir, &runs, stamp.as_deref())?;
                errln!("wrote {} report(s) to {}", runs.len(), out_dir.display());
                None
            };
            if json {
                emit(&app::run_json(
                    &runs,
                    &out_dir,
                    profile,
                    problems.as_deref(),
                    code,
                ));
            }
            Ok(code)
        }
        Cmd::Export {
            cmd:
                ExportCmd::Coq {
                    certificates,
                    out,
                    check,
                },
        } => export_coq(&certificates, &out, check),
        Cmd::Merge {
            paths,
            out,
            theorems,
        } => {
            let specs = app::load_specs_from(&SpecSource::choose(theorems))?;
            let shards = app::find_shards(&paths)?;
            let profile = shards.first().map(|(_, f)| f.profile).unwrap_or_default();
            let out_dir = out.unwrap_or_else(|| default_out(profile));
            let progress = Progress::stderr(1);
            let runs = app::merge_shards(&specs, shards, &progress)?;
            progress.finish();
            let mut code = 0;
            for r in &runs {
                let mark = if r.report.as_expected { "ok " } else { "BAD" };
                if !r.report.as_expected {
                    code = 1;
                }
                emit(&format!(
                    "{mark} {:<42} {:<14} (expected {}; merged)",
                    r.report.id,
                    r.report.verdict.as_str(),
                    r.report.expected
                ));
            }
            app::write_reports(&out_dir, &runs)?;
            errln!("wrote {} report(s) to {}", runs.len(), out_dir.display());
            Ok(code)
        }
        Cmd::Diff { old, new } => {
            let lines = app::diff_dirs(&old, &new)?;
            for l in &lines {
                emit(l);
            }
            emit(&format!(
                "{} difference(s) between {} and {}",
                lines.len(),
                old.display(),
                new.display()
            ));
            Ok(if lines.is_empty() { 0 } else { 1 })
        }
        Cmd::New { id, out } => {
            let path = app::new_spec(&id, out.as_deref())?;
            errln!("wrote {}", path.display());
            emit(&format!(
                "next: attncheck run {0}   then: attncheck verify reports/{1}.cert.json --spec {0} --coq",
                path.display(),
                id
            ));
            Ok(0)
        }
        Cmd::Verify {
            certificate,
            theorems,
            spec,
            target,
            model,
            config,
            formula,
            no_spec,
            json,
            coq,
            coq_cpu_limit,
            coq_memory_limit,
        } => {
            let source = SpecSource::file_or(spec, theorems);
            // the model is read and checked first: bad input is exit 2, not a rejection
            let model = match (&model, &config) {
                (Some(m), Some(c)) => Some(attncheck::model_window::ModelInput::read(m, c)?),
                _ => None,
            };
            if let Some(f) = &formula {
                if no_spec {
                    return Err(app::Error::Usage(
                        "--formula binds the statement to a formula; --no-spec does not check \
                         the statement: drop one"
                            .into(),
                    ));
                }
                // bad input is exit 2 with its position, not a rejection
                attncheck::calc::canonical_formula(f).map_err(calc_error)?;
            }
            let v = app::verify_inputs(
                &certificate,
                (!no_spec).then_some(&source),
                &attncheck::claims::rebuild::Inputs {
                    target: target.as_deref(),
                    formula: formula.as_deref(),
                    model: model.as_ref(),
                },
            )?;
            if coq {
                let limits = attncheck::coq::Limits {
                    cpu_seconds: coq_cpu_limit,
                    memory_mib: coq_memory_limit,
                };
                return verify_coq(&v, json, &limits);
            }
            let ds = v.checked.decisions();
            let (word, code) = app::verify_result(&v);
            let statement = statement_words(&v);
            if json {
                emit(&serde_json::to_string_pretty(&app::verify_json(&v)).unwrap_or_default());
            } else {
                for d in ds {
                    let w = match (d.result(), d.as_expected()) {
                        (Certainty::True, true) => "proven  ",
                        (Certainty::False, true) => "refuted ",
                        (Certainty::Unknown, _) => "UNKNOWN ",
                        (_, false) => "CONTRARY",
                    };
                    emit(&format!("{w} {}", d.name()));
                }
                emit(&format!(
                    "{}: {word} ({} obligations at {} bits, kernel only; {statement})",
                    v.cert.claim,
                    ds.len(),
                    v.cert.precision
                ));
            }
            Ok(code)
        }
        Cmd::Eval {
            term,
            precision,
            max_precision,
            digits,
            json,
        } => calc_eval(&term, precision, max_precision, digits, json),
        Cmd::Prove {
            formula,
            precision,
            max_precision,
            cert,
            coq,
            json,
        } => calc_prove(
            &formula,
            precision,
            max_precision,
            cert.as_deref(),
            coq,
            json,
        ),
        Cmd::Window {
            model,
            config,
            epsilon,
            precision,
            out,
            json,
        } => window(&model, &config, &epsilon, precision, &out, json),
        Cmd::Sparse {
            cmd:
                SparseCmd::Construct {
                    target,
                    k,
                    epsilon,
                    gamma,
                    rho,
                    delta,
                    seed,
                    out,
                },
        } => {
            let p = target::ConstructParams::parse(k, &epsilon, &gamma, &rho, &delta)?;
            let a = target::load(&target, k)?;
            let c = target::construct(&a, &p, seed, 64, 128)?;
            let name = target
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("target");
            let w = out.join(format!("{name}.witness.json"));
            let cert = out.join(format!("{name}.cert.json"));
            app::write_atomic(
                &w,
                &serde_json::to_string_pretty(&c.witness).unwrap_or_default(),
            )?;
            app::write_atomic(
                &cert,
                &serde_json::to_string_pretty(&c.certificate).unwrap_or_default(),
            )?;
            errln!(
                "{}: {}; d = {}, t* = {}; wrote {} and {}",
                target.display(),
                target::Summary::of(&a),
                c.witness["d"],
                c.witness["t_star"].as_str().unwrap_or("?"),
                w.display(),
                cert.display()
            );
            Ok(0)
        }
    }
}

// ───── window (src/model_window) ─────

/// `attncheck window`: certify ([`app::window`]), print the table (or JSON).
fn window(
    model: &Path,
    config: &Path,
    epsilon: &str,
    precision: u32,
    out: &Path,
    json: bool,
) -> Result<u8, app::Error> {
    let r = app::window(model, config, epsilon, precision, out)?;
    if !r.windows.undecided.is_empty() {
        for n in &r.windows.undecided {
            errln!("undecided at {precision} bits: {n}");
        }
        errln!(
            "{}: {} obligations not decided as asserted at {precision} bits; nothing written \
             (try --precision {})",
            model.display(),
            r.windows.undecided.len(),
            precision
                .saturating_mul(2)
                .min(attncheck::calc::MAX_PRECISION)
        );
        return Ok(3);
    }
    if json {
        emit(&serde_json::to_string_pretty(&r.doc).unwrap_or_default());
    } else {
        for line in attncheck::model_window::table(&r.windows) {
            emit(&line);
        }
    }
    errln!(
        "{}: {} windows certified at ε = {} ({} obligations, kernel); wrote {} and {}",
        model.display(),
        r.windows.heads.len(),
        epsilon,
        r.windows.certificate.obligations.len(),
        r.doc_path.display(),
        r.cert_path.display()
    );
    Ok(0)
}

// ───── eval and prove (src/calc.rs) ─────

fn calc_error(e: attncheck::calc::CalcError) -> app::Error {
    app::Error::Usage(e.to_string())
}

/// `attncheck eval`: the value, exact or a certified enclosure, and the precision.
fn calc_eval(
    term: &str,
    precision: u32,
    max_precision: u32,
    digits: Option<u32>,
    json: bool,
) -> Result<u8, app::Error> {
    use attncheck::calc::{self, EvalOptions, Value};
    use rug::float::Round;
    // 16384 bits, the highest precision, carry about 4932 decimal digits
    if let Some(d) = digits.filter(|&d| d > 5000) {
        return Err(app::Error::Usage(format!(
            "--digits {d} is more than 5000 (the highest precision, {} bits, carries about 4932)",
            calc::MAX_PRECISION
        )));
    }
    let opts = EvalOptions {
        precision,
        max_precision,
        rel_width: digits.map(EvalOptions::digits_width),
    };
    let ev = calc::evaluate(term, &opts).map_err(calc_error)?;
    let code = match (&ev.value, ev.settled) {
        (_, false) => 3,
        (Value::Undefined(_), true) => 1,
        _ => 0,
    };
    // endpoint digits: what the precision carries (at most 40), or N + 2 with --digits N
    let shown = digits.map_or_else(
        || ((f64::from(ev.precision) * std::f64::consts::LOG10_2) as usize).clamp(5, 40),
        |d| d as usize + 2,
    );
    let endpoints = ev.enclosure.as_ref().map(|i| {
        (
            calc::float_decimal(i.lo(), shown, Round::Down),
            calc::float_decimal(i.hi(), shown, Round::Up),
        )
    });
    let certified = ev
        .enclosure
        .as_ref()
        .and_then(|i| calc::certified_digits(i, shown));
    if json {
        let mut j = serde_json::json!({"term": term, "precision": ev.precision,
            "settled": ev.settled, "rel_width": ev.rel_width.to_string(), "exit_code": code});
        let o = j.as_object_mut().expect("an object");
        match &ev.value {
            Value::Exact(q) => {
                o.insert("kind".into(), "exact".into());
                o.insert("value".into(), q.to_string().into());
                o.insert(
                    "decimal".into(),
                    calc::rational_decimal(q, shown as u32).0.into(),
                );
            }
            Value::Enclosure { lo, hi }
            | Value::Unbounded {
                lo: Some(lo),
                hi: Some(hi),
            } => {
                o.insert("kind".into(), "enclosure".into());
                o.insert("lo".into(), lo.to_string().into());
                o.insert("hi".into(), hi.to_string().into());
            }
            Value::Unbounded { lo, hi } => {
                o.insert("kind".into(), "unbounded".into());
                o.insert("lo".into(), lo.as_ref().map(|q| q.to_string()).into());
                o.insert("hi".into(), hi.as_ref().map(|q| q.to_string()).into());
            }
            Value::Undefined(why) => {
                o.insert("kind".into(), "undefined".into());
                o.insert("reason".into(), why.clone().into());
            }
        }
        if let Some((lo, hi)) = &endpoints {
            o.insert("lo_decimal".into(), lo.clone().into());
            o.insert("hi_decimal".into(), hi.clone().into());
            o.insert("digits".into(), certified.clone().into());
        }
        o.insert("note".into(), ev.note.clone().into());
        emit(&serde_json::to_string_pretty(&j).unwrap_or_default());
        return Ok(code);
    }
    match &ev.value {
        Value::Exact(q) => {
            let (dec, whole) = calc::rational_decimal(q, shown as u32);
            if *q.denom() == 1 {
                emit(&format!("{q}  (exact)"));
            } else if whole {
                emit(&format!("{q} = {dec}  (exact)"));
            } else {
                emit(&format!("{q} = {dec}  (exact; the decimal is truncated)"));
            }
        }
        Value::Enclosure { .. } | Value::Unbounded { .. } => {
            if let Some(d) = &certified {
                emit(&format!("{d}  (certified digits)"));
            }
            if let Some((lo, hi)) = &endpoints {
                emit(&format!("enclosure: [{lo}, {hi}]"));
            }
        }
        Value::Undefined(why) => emit(&format!("undefined: {why}")),
    }
    emit(&format!(
        "precision: {} bits{}",
        ev.precision,
        match &ev.value {
            Value::Enclosure { .. } | Value::Unbounded { .. } => format!(
                " (relative width asked: at most {})",
                calc_rel(&ev.rel_width)
            ),
            _ => String::new(),
        }
    ));
    if let Some(n) = &ev.note {
        emit(&format!("note: {n}"));
    }
    Ok(code)
}

fn calc_rel(q: &rug::Rational) -> String {
    let (n, d) = (q.numer(), q.denom());
    if *n == 1 && d.is_power_of_two() {
        format!("2^-{}", d.significant_bits() - 1)
    } else if *n == 1
        && d.to_string()
            .trim_start_matches('1')
            .chars()
            .all(|c| c == '0')
    {
        format!("10^-{}", d.to_string().len() - 1)
    } else {
        q.to_string()
    }
}

/// `attncheck prove`: decides, writes the certificate (proven only), re-proves in Coq.
fn calc_prove(
    formula: &str,
    precision: u32,
    max_precision: u32,
    cert: Option<&std::path::Path>,
    coq: bool,
    json: bool,
) -> Result<u8, app::Error> {
    use attncheck::calc::{self, ProveOptions};
    use attncheck::coq::{CoqError, CoqVerdict};
    let proof = calc::prove(
        formula,
        &ProveOptions {
            precision,
            max_precision,
        },
    )
    .map_err(calc_error)?;
    let mut code = match proof.result {
        Certainty::True => 0,
        Certainty::False => 1,
        Certainty::Unknown => 3,
    };
    let mut written = None;
    if let Some(path) = cert {
        if proof.result == Certainty::True {
            let mut t = serde_json::to_string_pretty(&proof.certificate).unwrap_or_default();
            t.push('\n');
            app::write_atomic(path, &t)?;
            written = Some(path.to_path_buf());
        } else {
            errln!(
                "no certificate written to {}: the formula is {}{}",
                path.display(),
                if proof.result == Certainty::False {
                    "false"
                } else {
                    "undecided"
                },
                if proof.result == Certainty::False {
                    " (to certify that, prove its negation: (not …))"
                } else {
                    ""
                }
            );
        }
    }
    // --coq: the kernel's decision re-proven by Coq, through verify's road
    let mut coq_result: Option<(&'static str, Option<String>, Vec<String>)> = None;
    if coq {
        if proof.result == Certainty::Unknown {
            errln!("--coq: nothing to re-prove: the kernel left the formula undecided");
        } else {
            let mut st = proof.statement.clone();
            if proof.result == Certainty::False {
                st.expect_fails(&[calc::OBLIGATION.to_string()])
                    .expect("the one obligation");
            }
            let checked = attncheck::kernel::check(&st, proof.precision).map_err(|e| {
                app::Error::Usage(format!("the kernel could not evaluate the formula: {e}"))
            })?;
            let v = app::Verification {
                cert: attncheck::certificate::Certificate::of(
                    &st,
                    proof.certificate.profile,
                    proof.precision,
                    &proof.certificate.hints,
                ),
                statement: st,
                checked,
                source: app::StatementSource::Spec(PathBuf::from("the formula given")),
            };
            let r = match app::verify_coq(&v, &attncheck::coq::Limits::DEFAULT) {
                Ok(r) => r,
                Err(CoqError::NotInstalled { hint }) => {
                    errln!(
                        "attncheck: coqc was not found on PATH; install Coq and CoqInterval: {hint}"
                    );
                    return Ok(2);
                }
                Err(e) => return Err(coq_error(e)),
            };
            let o = &r.obligations[0];
            coq_result = Some(match &o.coq {
                CoqVerdict::Proven => ("proven", None, r.axioms.clone()),
                CoqVerdict::KernelOnly(why) => ("kernel-only", Some(why.clone()), vec![]),
                CoqVerdict::Rejected(why) => {
                    code = 1;
                    ("rejected", Some(why.clone()), vec![])
                }
            });
        }
    }
    let word = match proof.result {
        Certainty::True => "true",
        Certainty::False => "false",
        Certainty::Unknown => "unknown",
    };
    if json {
        let j = serde_json::json!({"formula": proof.formula, "result": word,
            "precision": proof.precision, "reason": proof.reason,
            "certificate": written,
            "coq": coq_result.as_ref().map(|(v, why, axioms)| serde_json::json!({
                "verdict": v, "reason": why, "axioms": axioms})),
            "exit_code": code});
        emit(&serde_json::to_string_pretty(&j).unwrap_or_default());
        return Ok(code);
    }
    match proof.result {
        Certainty::True => emit(&format!(
            "proven: the formula holds (decided at {} bits)",
            proof.precision
        )),
        Certainty::False => emit(&format!(
            "false: the formula is certifiably false (decided at {} bits)",
            proof.precision
        )),
        Certainty::Unknown => emit(&format!(
            "undecided: {}",
            proof.reason.as_deref().unwrap_or("the enclosures overlap")
        )),
    }
    if let Some((v, why, axioms)) = &coq_result {
        let what = if proof.result == Certainty::False {
            "its negation"
        } else {
            "it"
        };
        match *v {
            "proven" => emit(&format!(
                "Coq: proves {what} too (on {} allowed axioms; --json lists them)",
                axioms.len()
            )),
            "kernel-only" => emit(&format!(
                "Coq: kernel only, not proven in Coq: {}",
                why.as_deref().unwrap_or("")
            )),
            _ => emit(&format!(
                "Coq: REJECTS {what}: {}",
                why.as_deref().unwrap_or("")
            )),
        }
    }
    if let Some(p) = &written {
        errln!(
            "wrote {} (check it with: attncheck verify {} --formula '{}')",
            p.display(),
            p.display(),
            proof.formula
        );
    }
    Ok(code)
}

fn coq_error(e: attncheck::coq::CoqError) -> app::Error {
    app::Error::Usage(e.to_string())
}

/// The statement line of `verify`'s summary.
fn statement_words(v: &app::Verification) -> String {
    match &v.source {
        app::StatementSource::Spec(p) => {
            format!("statement rebuilt from {} and matched", p.display())
        }
        app::StatementSource::Unchecked => {
            "STATEMENT NOT CHECKED (--no-spec): this shows only that the certificate's own \
             formulas evaluate as marked, not that they state the claim"
                .to_string()
        }
    }
}

/// `verify --coq` after the statement check and the kernel ([`app::verify_coq`]):
/// one line per obligation saying which checker(s) it rests on, then the summary.
fn verify_coq(
    v: &app::Verification,
    json: bool,
    limits: &attncheck::coq::Limits,
) -> Result<u8, app::Error> {
    use attncheck::coq::{CoqError, CoqVerdict};
    let r = match app::verify_coq(v, limits) {
        Ok(r) => r,
        Err(CoqError::NotInstalled { hint }) => {
            errln!("attncheck: coqc was not found on PATH; install Coq and CoqInterval: {hint}");
            return Ok(2);
        }
        Err(e) => return Err(coq_error(e)),
    };
    let statement = statement_words(v);
    let by_coq = r
        .obligations
        .iter()
        .filter(|o| o.coq == CoqVerdict::Proven)
        .count();
    let rejected = r
        .obligations
        .iter()
        .filter(|o| matches!(o.coq, CoqVerdict::Rejected(_)))
        .count();
    let kernel_only = r.obligations.len() - by_coq - rejected;
    if json {
        emit(&serde_json::to_string_pretty(&app::verify_coq_json(v, &r)).unwrap_or_default());
        return Ok(r.exit_code);
    }
    for o in &r.obligations {
        let kernel = match (o.kernel, o.kernel_as_expected) {
            (Certainty::True, true) => "proven  ",
            (Certainty::False, true) => "refuted ",
            (Certainty::Unknown, _) => "UNKNOWN ",
            (_, false) => "CONTRARY",
        };
        let line = match &o.coq {
            CoqVerdict::Proven => format!("{kernel} Coq + kernel  {}", o.name),
            CoqVerdict::KernelOnly(why) => {
                format!(
                    "{kernel} kernel only   {} (not proven in Coq: {why})",
                    o.name
                )
            }
            CoqVerdict::Rejected(why) => {
                format!(
                    "REJECTED by Coq      {} (kernel: {}): {why}",
                    o.name,
                    kernel.trim_end()
                )
            }
        };
        emit(&line);
    }
    if let Some(i) = &r.instance {
        for w in &i.witnesses {
            let what = format!(
                "the Boolean limit of {}, from coq/BooleanLimit.v ({})",
                w.label,
                w.theorems.join(", ")
            );
            emit(&match &w.verdict {
                CoqVerdict::Proven => format!("proven   Coq          {what}"),
                CoqVerdict::Rejected(why) => format!("REJECTED by Coq      {what}: {why}"),
                CoqVerdict::KernelOnly(why) => format!("not proven in Coq    {what}: {why}"),
            });
        }
    }
    emit(&format!(
        "{}: {} ({} obligations at {} bits: {by_coq} proven by Coq and the kernel, {kernel_only} by the kernel \
         only, {rejected} rejected by Coq; {statement})",
        v.cert.claim,
        r.word,
        r.obligations.len(),
        v.cert.precision
    ));
    if !r.axioms.is_empty() {
        emit(&format!("the Coq proofs rest on: {}", r.axioms.join(", ")));
    }
    Ok(r.exit_code)
}

/// `export coq`: writes each certificate's Coq files (and, with `check`, runs Coq).
fn export_coq(certs: &[PathBuf], out: &std::path::Path, check: bool) -> Result<u8, app::Error> {
    use attncheck::coq::{self, CoqError};
    let mut code = 0;
    let mut total = 0.0;
    for path in certs {
        let cert = coq::load(path).map_err(coq_error)?;
        let dir = if certs.len() == 1 {
            out.to_path_buf()
        } else {
            out.join(coq::translate(&cert).stem)
        };
        let (f, cmd) = coq::export(&cert, &dir).map_err(coq_error)?;
        errln!(
            "{}: {} of {} obligation(s) to Coq, {} kernel-only; wrote {}",
            cert.claim,
            f.sent.len(),
            cert.obligations.len(),
            f.kernel_only.len(),
            dir.display()
        );
        for (name, why) in &f.kernel_only {
            errln!("  kernel-only: {name}: {why}");
        }
        outln!("{cmd}");
        if check {
            // the kernel first (on the certificate's own formulas: export does not
            // consult the spec; `verify --coq` does), then Coq
            let kernel = coq::kernel_decisions(&cert).map_err(coq_error)?;
            let contrary: Vec<&str> = kernel
                .decisions()
                .iter()
                .filter(|d| d.contrary())
                .map(|d| d.name())
                .collect();
            if !contrary.is_empty() {
                code = 1;
                for name in &contrary {
                    outln!("  CONTRARY (kernel): {name}");
                }
            }
            match coq::check(&cert, &kernel, &coq::Limits::DEFAULT) {
                Ok(r) => {
                    total += r.seconds;
                    outln!(
                        "{}: Coq proved {} of {} obligations, rejected {}, {} kernel-only ({:.1} s)",
                        cert.claim,
                        r.proven(),
                        r.results.len(),
                        r.rejected(),
                        r.kernel_only(),
                        r.seconds
                    );
                    outln!("  axioms: {}", r.axioms.join(" "));
                    if let Some(i) = &r.instance {
                        outln!(
                            "{}: the Boolean limit of {} witness(es) from coq/BooleanLimit.v: {} proven by Coq ({:.1} s)",
                            cert.claim,
                            i.witnesses.len(),
                            i.witnesses
                                .iter()
                                .filter(|w| w.verdict == coq::CoqVerdict::Proven)
                                .count(),
                            i.seconds
                        );
                        for w in &i.witnesses {
                            match &w.verdict {
                                coq::CoqVerdict::Proven => {}
                                coq::CoqVerdict::Rejected(why) => {
                                    code = 1;
                                    outln!(
                                        "  REJECTED by Coq: the Boolean limit of {}: {why}",
                                        w.label
                                    );
                                }
                                coq::CoqVerdict::KernelOnly(why) => {
                                    outln!(
                                        "  not proven in Coq: the Boolean limit of {}: {why}",
                                        w.label
                                    );
                                }
                            }
                        }
                    }
                    if !r.accepted() {
                        code = 1;
                        for (name, v) in &r.results {
                            if let coq::CoqVerdict::Rejected(why) = v {
                                outln!("  REJECTED by Coq: {name}: {why}");
                            }
                        }
                    }
                }
                Err(CoqError::NotInstalled { hint }) => {
                    errln!("attncheck: coqc was not found on PATH; install Coq and CoqInterval: {hint}");
                    return Ok(2);
                }
                Err(e) => return Err(coq_error(e)),
            }
        }
    }
    if check && certs.len() > 1 {
        outln!("total Coq time: {total:.1} s");
    }
    if check {
        // the lemmas proven once and for all (coq/*.v beside the library), also
        // written to OUT/lemmas for checking by hand
        let lemmas = out.join("lemmas");
        std::fs::create_dir_all(&lemmas).map_err(|e| app::Error::Io {
            path: lemmas.clone(),
            reason: e.to_string(),
        })?;
        for (name, text) in coq::LEMMAS.iter().chain([&("Attncheck", coq::LIBRARY)]) {
            let p = lemmas.join(format!("{name}.v"));
            std::fs::write(&p, text).map_err(|e| app::Error::Io {
                path: p.clone(),
                reason: e.to_string(),
            })?;
        }
        match coq::check_lemmas(coq::LEMMAS, &coq::Limits::DEFAULT) {
            Ok(done) => {
                for (name, axioms) in done {
                    outln!("coq/{name}.v: proven by Coq; axioms: {}", axioms.join(" "));
                }
            }
            Err(CoqError::Coq { file, message }) => {
                outln!("  REJECTED by Coq: {file}: {message}");
                code = 1;
            }
            Err(e) => return Err(coq_error(e)),
        }
    }
    Ok(code)
}
