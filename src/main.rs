//! The `attncheck` command: a thin layer over the library that maps errors to
//! exit codes (0 as expected, 1 refuted or regressed, 2 bad input or usage).

use attncheck::app;
use attncheck::kernel::Certainty;
use attncheck::progress::Progress;
use attncheck::sparse::target;
use attncheck::spec::Profile;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

const ABOUT: &str = "Machine-checked verdicts for published theorems about self-attention.";

const LONG_ABOUT: &str = "\
Machine-checked verdicts for published theorems about self-attention.

Each claim of a paper is a spec under theorems/<paper>/<claim>.toml. `run` builds
witnesses, checks the stated bounds, and writes reports/<paper>/<claim>.{md,json,svg}
plus reports/README.md (one row per claim).

VERDICTS
  certified      every inequality of the finite instance proven with outward-rounded
                 MPFR intervals or exact rationals
  supported      an asymptotic or heuristic claim observed at finite size: its finite
                 invariants certified, the rest within the spec's tolerance
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
        /// Directory of claim specs.
        #[arg(long, default_value = "theorems")]
        theorems: PathBuf,
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
    #[command(verbatim_doc_comment)]
    Run {
        /// Claim IDs (paper/claim) or paper names.
        targets: Vec<String>,
        /// Run every claim.
        #[arg(long)]
        all: bool,
        /// quick (default) or full.
        #[arg(long, value_enum, default_value_t = Profile::Quick)]
        profile: Profile,
        /// Where reports are written (and read by --check) [default: reports, or
        /// reports/full with --profile full, so a full sweep leaves the quick reports alone].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Compare against the committed JSON reports instead of writing: exit 1 when
        /// a verdict changed or a key figure moved beyond the spec's check_tolerance.
        #[arg(long)]
        check: bool,
        /// Directory of claim specs.
        #[arg(long, default_value = "theorems")]
        theorems: PathBuf,
        /// Worker threads (default: all cores). Reports do not depend on it.
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Re-check a certificate (reports/<paper>/<claim>.cert.json) with the trusted
    /// kernel alone, without the code that built it.
    Verify {
        /// The certificate file.
        certificate: PathBuf,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
        /// Re-prove the certificate in Coq instead (needs coqc and CoqInterval):
        /// exit 0 only if Coq accepts every obligation sent to it.
        #[arg(long)]
        coq: bool,
    },
    /// Export a certificate for an independent checker.
    Export {
        #[command(subcommand)]
        cmd: ExportCmd,
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
    /// prints how many obligations it proved and the time it took.
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("attncheck: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn real_main(cli: Cli) -> Result<u8, app::Error> {
    match cli.cmd {
        Cmd::List { theorems, json } => {
            let specs = app::load_specs(&theorems)?;
            if json {
                let v: Vec<_> = specs
                    .iter()
                    .map(|s| {
                        serde_json::json!({"id": s.id, "paper": s.paper(), "rigour": s.rigour,
                            "expected": s.expected, "title": s.title})
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            } else {
                println!("{:<42} {:<14} {:<14} title", "claim", "rigour", "expected");
                for s in &specs {
                    println!(
                        "{:<42} {:<14} {:<14} {}",
                        s.id,
                        s.rigour.as_str(),
                        s.expected.as_str(),
                        s.title
                    );
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
        } => {
            if let Some(n) = threads {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n.max(1))
                    .build_global()
                    .map_err(|e| app::Error::Usage(e.to_string()))?;
            }
            let out = out.unwrap_or_else(|| profile.default_out());
            let specs = app::load_specs(&theorems)?;
            let chosen = app::select(&specs, &targets, all)?;
            let progress = Progress::stderr(chosen.len() as u64);
            let runs = app::run_claims(&chosen, profile, &progress)?;
            progress.finish();
            let mut code = 0;
            for r in &runs {
                let mark = if r.report.as_expected { "ok " } else { "BAD" };
                eprintln!(
                    "{mark} {:<42} {:<14} (expected {})",
                    r.report.id,
                    r.report.verdict.as_str(),
                    r.report.expected
                );
                if !r.report.as_expected {
                    code = 1;
                }
            }
            if check {
                let problems = app::check_against(&out, &runs, &chosen);
                for p in &problems {
                    eprintln!("regression: {p}");
                }
                if !problems.is_empty() {
                    code = 1;
                }
                eprintln!(
                    "checked {} claims against {}: {} regression(s)",
                    runs.len(),
                    out.display(),
                    problems.len()
                );
            } else {
                app::write_reports(&out, &runs)?;
                eprintln!("wrote {} report(s) to {}", runs.len(), out.display());
            }
            Ok(code)
        }
        Cmd::Verify {
            certificate,
            coq: true,
            ..
        } => verify_coq(&certificate),
        Cmd::Export {
            cmd:
                ExportCmd::Coq {
                    certificates,
                    out,
                    check,
                },
        } => export_coq(&certificates, &out, check),
        Cmd::Verify {
            certificate, json, ..
        } => {
            let (cert, results) = app::verify_file(&certificate)?;
            let all = Certainty::all(results.iter().map(|r| r.result));
            if json {
                let v = serde_json::json!({"claim": cert.claim, "precision": cert.precision,
                    "result": all, "obligations": results});
                println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            } else {
                for r in &results {
                    let w = match r.result {
                        Certainty::True => "proven  ",
                        Certainty::False => "FALSE   ",
                        Certainty::Unknown => "UNKNOWN ",
                    };
                    println!("{w} {}", r.name);
                }
                let verdict = match all {
                    Certainty::True => "certified",
                    Certainty::False => "refuted",
                    Certainty::Unknown => "inconclusive",
                };
                println!(
                    "{}: {verdict} ({} obligations at {} bits, kernel only)",
                    cert.claim,
                    results.len(),
                    cert.precision
                );
            }
            Ok(if all == Certainty::True { 0 } else { 1 })
        }
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
            eprintln!(
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

fn coq_error(e: attncheck::coq::CoqError) -> app::Error {
    app::Error::Usage(e.to_string())
}

/// `verify --coq`: 0 if Coq accepted every obligation sent, 1 if it rejected
/// one, 2 without coqc (with the install hint) or on bad input.
fn verify_coq(path: &std::path::Path) -> Result<u8, app::Error> {
    use attncheck::coq::{self, CoqError, CoqVerdict};
    let cert = coq::load(path).map_err(coq_error)?;
    let dir = std::env::temp_dir().join(format!(
        "attncheck-coq-{}",
        cert.claim
            .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    ));
    let report = match coq::check(&cert, &dir) {
        Ok(r) => r,
        Err(CoqError::NotInstalled { hint }) => {
            eprintln!("attncheck: coqc was not found on PATH; install Coq and CoqInterval: {hint}");
            return Ok(2);
        }
        Err(e) => return Err(coq_error(e)),
    };
    for (name, v) in &report.results {
        match v {
            CoqVerdict::Proven => println!("proven by Coq    {name}"),
            CoqVerdict::Rejected(why) => println!("REJECTED by Coq  {name}: {why}"),
            CoqVerdict::KernelOnly(why) => println!("kernel-only      {name}: {why}"),
        }
    }
    println!(
        "{}: {} of {} obligations sent to Coq, {} proven, {} rejected; {} kernel-only (files in {})",
        cert.claim,
        report.proven() + report.rejected(),
        report.results.len(),
        report.proven(),
        report.rejected(),
        report.kernel_only(),
        dir.display()
    );
    if !report.axioms.is_empty() {
        println!("the proofs rest on: {}", report.axioms.join(", "));
    }
    Ok(if report.accepted() { 0 } else { 1 })
}

/// `export coq`: writes each certificate's Coq files (and, with `check`, runs Coq).
fn export_coq(certs: &[PathBuf], out: &std::path::Path, check: bool) -> Result<u8, app::Error> {
    use attncheck::coq::{self, CoqError};
    let mut code = 0;
    let mut total = 0.0;
    for path in certs {
        let cert =
            coq::load(path).map_err(|e| app::Error::Usage(format!("{}: {e}", path.display())))?;
        let dir = if certs.len() == 1 {
            out.to_path_buf()
        } else {
            out.join(coq::translate(&cert).stem)
        };
        let (f, cmd) = coq::export(&cert, &dir).map_err(coq_error)?;
        eprintln!(
            "{}: {} of {} obligation(s) to Coq, {} kernel-only; wrote {}",
            cert.claim,
            f.sent.len(),
            cert.obligations.len(),
            f.kernel_only.len(),
            dir.display()
        );
        for (name, why) in &f.kernel_only {
            eprintln!("  kernel-only: {name}: {why}");
        }
        println!("{cmd}");
        if check {
            match coq::check(&cert, &dir) {
                Ok(r) => {
                    total += r.seconds;
                    println!(
                        "{}: Coq proved {} of {} obligations, rejected {}, {} kernel-only ({:.1} s)",
                        cert.claim,
                        r.proven(),
                        r.results.len(),
                        r.rejected(),
                        r.kernel_only(),
                        r.seconds
                    );
                    println!("  axioms: {}", r.axioms.join(" "));
                    if !r.accepted() {
                        code = 1;
                        for (name, v) in &r.results {
                            if let coq::CoqVerdict::Rejected(why) = v {
                                println!("  REJECTED by Coq: {name}: {why}");
                            }
                        }
                    }
                }
                Err(CoqError::NotInstalled { hint }) => {
                    eprintln!("attncheck: coqc was not found on PATH; install Coq and CoqInterval: {hint}");
                    return Ok(2);
                }
                Err(e) => return Err(coq_error(e)),
            }
        }
    }
    if check && certs.len() > 1 {
        println!("total Coq time: {total:.1} s");
    }
    Ok(code)
}
