//! An independent proof checker: certificates re-proven in Coq.
//!
//! [`translate`] turns a certificate (read by the one certificate reader,
//! [`crate::certificate::parse`], format `attncheck-certificate/3`) into a Coq file: one `Lemma` per
//! obligation, stated in Coq's real-number syntax (`Rle`, `exp`, `ln`, `sqrt`,
//! `cos`, `sin`, `PI`, `IZR`, rational literals `p / q`) with the obligation's
//! name as a comment; an obligation with `expect: "fails"` is stated negated.
//! The data operations (Gram maxima, the ratio-lemma conditions, row sums) are
//! the plain definitions of the shipped library `coq/Attncheck.v`, and Coq
//! computes them from the data embedded in the file. [`check`] runs `coqc` and
//! reports per obligation whether Coq proved it; `Print Assumptions` must show
//! nothing beyond [`ALLOWED_AXIOMS`]. [`coverage`] says, without running Coq,
//! how many obligations go to Coq and why the others stay kernel-only.
//!
//! The attncheck kernel is consulted only for hints (which disjunct holds, the
//! value of a ceiling): Coq re-proves every hint, so a wrong one can only make
//! an obligation fail.

mod translate;

use crate::certificate::{Certificate, CertificateError};
pub use translate::{MAX_EXACT_WORK, MAX_INTERVAL_GOALS, MAX_INTERVAL_TERMS};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The shipped Coq library (`coq/Attncheck.v`).
pub const LIBRARY: &str = include_str!("../../coq/Attncheck.v");

/// Lemmas proven once and for all in Coq, for all parameters rather than on an
/// instance: (module name, text) of the files shipped in `coq/` beside the
/// library, which they import. Each ends with `Print Assumptions`;
/// [`check_lemmas`] compiles them.
pub const LEMMAS: &[(&str, &str)] =
    &[("AlibiTailBound", include_str!("../../coq/AlibiTailBound.v"))];

/// How to install Coq and CoqInterval.
pub const INSTALL_HINT: &str = "apt-get install coq libcoq-interval";

/// The axioms a proof may rest on: those of Coq's standard real numbers
/// (`ClassicalDedekindReals`, functional extensionality), excluded middle and
/// the specifications of Coq's primitive 63-bit integers and floats, which is
/// exactly what a plain CoqInterval 4.6 `interval` proof prints under
/// `Print Assumptions` (at 53 bits it computes with primitive floats, above
/// with primitive integers). Anything else (an `Admitted` lemma, a new
/// `Axiom`) makes [`check`] reject the obligation.
pub const ALLOWED_AXIOMS: &[&str] = &[
    "ClassicalDedekindReals.sig_forall_dec",
    "ClassicalDedekindReals.sig_not_dec",
    "FunctionalExtensionality.functional_extensionality_dep",
    "Classical_Prop.classic",
];

/// Prefixes of the primitive-operation specifications allowed besides
/// [`ALLOWED_AXIOMS`] (`Uint63.add_spec`, `PrimFloat.mul`, …).
pub const ALLOWED_PRIMITIVE_PREFIXES: &[&str] =
    &["Uint63.", "PrimInt63.", "FloatAxioms.", "PrimFloat."];

/// The committed certificates that CI (`make test`, the test
/// `coq::verify_coq_re_proves_the_ci_subset`) does not re-prove in Coq, each
/// with its measured Coq CPU time (coqc 8.16, CoqInterval 4.6, the 2-core
/// machine of docs/performance.md): together 510 of the 716 s that all
/// committed certificates take, so without them CI's Coq check is about 3.5
/// minutes of CPU, 2 on two cores. `make coq` re-proves every
/// committed certificate, these included; the check that each report's
/// "k of n" figure is the translation's covers all of them.
pub const NOT_IN_CI: &[(&str, &str)] = &[
    (
        "positional/sandwich-identity",
        "330 s of Coq CPU: its evenness obligations unroll up to about 40000 cosine terms each for `interval`",
    ),
    (
        "positional/sandwich-log-decay",
        "33 s of Coq CPU: `interval` on B̃ (sums of 32 to 64 cosines) at up to 14 points per obligation",
    ),
    (
        "sparse/counting-lower-bound",
        "1087 s of Coq CPU and 6.9 GB: ⌈log₂ 65536!⌉ compares a 954037-bit integer with 2^954036 (163 s), ln 65536! is summed in 44 chunks twice, and 1009 `interval` goals for its forall over n = 16..1024",
    ),
    (
        "sparse/row-mass",
        "53 s of Coq CPU: Coq computes the Gram matrices of three sign matrices (up to 256 × 512) and the lemma quantities over six B",
    ),
];

/// Whether CI re-proves the certificate of `claim` in Coq (it is not in [`NOT_IN_CI`]).
pub fn in_ci(claim: &str) -> bool {
    !NOT_IN_CI.iter().any(|(id, _)| *id == claim)
}

/// An obligation's name.
pub type ObligationName = String;

/// A translated certificate.
#[derive(Clone, Debug, PartialEq)]
pub struct CoqFile {
    /// The Coq module name (`cert_<claim>`); the file is `<stem>.v`.
    pub stem: String,
    /// The obligations file.
    pub text: String,
    /// The data file `<stem>_data.v` (the embedded data and the values Coq
    /// computes from it), when the certificate has data.
    pub data: Option<String>,
    /// The obligations sent to Coq, in order.
    pub sent: Vec<ObligationName>,
    /// The obligations that stay kernel-only, with the reason.
    pub kernel_only: Vec<(ObligationName, String)>,
}

/// What Coq said about one obligation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CoqVerdict {
    /// Coq proved the statement, resting only on allowed axioms.
    Proven,
    /// Coq did not accept the proof (the message says why).
    Rejected(String),
    /// Not sent to Coq (the reason says why).
    KernelOnly(String),
}

/// The result of [`check`].
#[derive(Clone, Debug, PartialEq)]
pub struct CoqReport {
    /// The claim.
    pub claim: String,
    /// Per obligation, in certificate order.
    pub results: Vec<(ObligationName, CoqVerdict)>,
    /// Wall-clock seconds spent in `coqc` (never written into reports).
    pub seconds: f64,
    /// The axioms `Print Assumptions` listed for the proven lemmas (all allowed).
    pub axioms: Vec<String>,
}

impl CoqReport {
    /// Obligations proven by Coq.
    pub fn proven(&self) -> usize {
        self.count(|v| matches!(v, CoqVerdict::Proven))
    }
    /// Obligations rejected by Coq.
    pub fn rejected(&self) -> usize {
        self.count(|v| matches!(v, CoqVerdict::Rejected(_)))
    }
    /// Obligations not sent to Coq.
    pub fn kernel_only(&self) -> usize {
        self.count(|v| matches!(v, CoqVerdict::KernelOnly(_)))
    }
    /// Coq accepted every obligation it was given.
    pub fn accepted(&self) -> bool {
        self.rejected() == 0
    }
    fn count(&self, f: impl Fn(&CoqVerdict) -> bool) -> usize {
        self.results.iter().filter(|(_, v)| f(v)).count()
    }
}

/// What can go wrong around Coq (not a rejected obligation: that is a
/// [`CoqVerdict::Rejected`]).
#[derive(Debug, thiserror::Error)]
pub enum CoqError {
    /// `coqc` is not on PATH.
    #[error("coqc was not found on PATH; install Coq and CoqInterval: {hint}")]
    NotInstalled {
        /// The install command.
        hint: &'static str,
    },
    /// The certificate could not be read.
    #[error(transparent)]
    Certificate(#[from] CertificateError),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Coq failed outside any obligation (the library or the data file).
    #[error("coqc failed on {file}: {message}")]
    Coq {
        /// The file.
        file: String,
        /// Coq's message.
        message: String,
    },
}

/// Reads a certificate file with the one certificate reader
/// ([`crate::certificate::parse`]).
pub fn load(path: &Path) -> Result<Certificate, CoqError> {
    let text = std::fs::read_to_string(path).map_err(|source| CoqError::Io {
        path: path.into(),
        source,
    })?;
    Ok(crate::certificate::parse(path, &text)?)
}

/// Translates a certificate into Coq.
pub fn translate(cert: &Certificate) -> CoqFile {
    let t = translate::translate(cert);
    let mut text = t.header.clone();
    for b in &t.blocks {
        text.push_str(&b.text);
    }
    text.push_str(&translate::footer(
        &t.blocks.iter().map(|b| b.index).collect::<Vec<_>>(),
    ));
    CoqFile {
        stem: translate::stem(cert),
        text,
        data: t.data,
        sent: t
            .blocks
            .iter()
            .map(|b| cert.obligations[b.index].name.clone())
            .collect(),
        kernel_only: t
            .kernel_only
            .iter()
            .map(|(i, r)| (cert.obligations[*i].name.clone(), r.clone()))
            .collect(),
    }
}

/// (obligations sent to Coq, all obligations, the kernel-only ones with their
/// reason), without running Coq — for the reports' "independently proven in
/// Coq: k of n obligations" line.
pub fn coverage(cert: &Certificate) -> (usize, usize, Vec<(ObligationName, String)>) {
    let f = translate(cert);
    (f.sent.len(), cert.obligations.len(), f.kernel_only)
}

fn write(path: &Path, text: &str) -> Result<(), CoqError> {
    std::fs::write(path, text).map_err(|source| CoqError::Io {
        path: path.into(),
        source,
    })
}

/// Writes the `.v` files and the library into `dir`; returns the shell command
/// that checks them by hand.
pub fn export(cert: &Certificate, dir: &Path) -> Result<(CoqFile, String), CoqError> {
    std::fs::create_dir_all(dir).map_err(|source| CoqError::Io {
        path: dir.into(),
        source,
    })?;
    let f = translate(cert);
    write(&dir.join("Attncheck.v"), LIBRARY)?;
    let mut cmd = format!(
        "cd {} && coqc -q -R . Attncheck Attncheck.v",
        shell_quote(&dir.display().to_string())
    );
    if let Some(d) = &f.data {
        write(&dir.join(format!("{}_data.v", f.stem)), d)?;
        cmd.push_str(&format!(" && coqc -q -R . Attncheck {}_data.v", f.stem));
    }
    write(&dir.join(format!("{}.v", f.stem)), &f.text)?;
    cmd.push_str(&format!(" && coqc -q -R . Attncheck {}.v", f.stem));
    Ok((f, cmd))
}

fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Is `coqc` on PATH?
pub fn installed() -> bool {
    Command::new("coqc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Stack for coqc, in KiB: Coq's integers and `nat` exponents are deep terms,
/// and ⌈log₂ 65536!⌉ (a 954037-bit number, 2^954036) overflows the usual 8 MB
/// ("Stack overflow"); with 1 GB it is proven.
const COQC_STACK_KIB: u32 = 1 << 20;

/// `coqc` with its arguments; on Unix through `sh`, which raises the stack
/// limit to [`COQC_STACK_KIB`] (or to the hard limit, if that is lower) first.
fn coqc_command(args: &[&str]) -> Command {
    if cfg!(unix) {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!(
                "ulimit -s {COQC_STACK_KIB} 2>/dev/null || ulimit -s \"$(ulimit -H -s)\" 2>/dev/null; exec coqc \"$@\""
            ))
            .arg("coqc")
            .args(args);
        c
    } else {
        let mut c = Command::new("coqc");
        c.args(args);
        c
    }
}

fn coqc(dir: &Path, file: &str) -> Result<Run, CoqError> {
    let out = coqc_command(&["-q", "-R", ".", "Attncheck", file])
        .current_dir(dir)
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                CoqError::NotInstalled { hint: INSTALL_HINT }
            } else {
                CoqError::Io {
                    path: dir.join(file),
                    source: e,
                }
            }
        })?;
    // sh: 127 when coqc is not on the PATH
    if out.status.code() == Some(127) && cfg!(unix) {
        return Err(CoqError::NotInstalled { hint: INSTALL_HINT });
    }
    Ok(Run {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

fn compile_support(dir: &Path, name: &str, text: &str) -> Result<(), CoqError> {
    let v = dir.join(format!("{name}.v"));
    let vo = dir.join(format!("{name}.vo"));
    let fresh = std::fs::read_to_string(&v).is_ok_and(|t| t == text) && vo.exists();
    if fresh {
        return Ok(());
    }
    write(&v, text)?;
    let r = coqc(dir, &format!("{name}.v"))?;
    if !r.ok {
        return Err(CoqError::Coq {
            file: format!("{name}.v"),
            message: first_error(&r.stderr, &r.stdout),
        });
    }
    Ok(())
}

fn first_error(stderr: &str, stdout: &str) -> String {
    let all = format!("{stderr}\n{stdout}");
    let msg: Vec<&str> = all
        .lines()
        .skip_while(|l| !l.starts_with("Error"))
        .take(6)
        .collect();
    if msg.is_empty() {
        all.lines().take(6).collect::<Vec<_>>().join(" ")
    } else {
        msg.join(" ")
    }
}

/// The line of the first `File "…", line N` in Coq's output.
fn error_line(stderr: &str) -> Option<usize> {
    stderr.lines().find_map(|l| {
        let rest = l.strip_prefix("File \"")?;
        let after = rest.split_once("\", line ")?.1;
        after.split(',').next()?.trim().parse().ok()
    })
}

/// Per `Print Assumptions`, in order: the axiom names it lists.
fn assumption_blocks(stdout: &str) -> Vec<Vec<String>> {
    let mut blocks: Vec<Vec<String>> = Vec::new();
    let mut in_axioms = false;
    for l in stdout.lines() {
        if l.starts_with("Closed under the global context") {
            blocks.push(Vec::new());
            in_axioms = false;
        } else if l.starts_with("Axioms:") {
            blocks.push(Vec::new());
            in_axioms = true;
        } else if in_axioms && !l.starts_with(char::is_whitespace) && !l.is_empty() {
            if let (Some(b), Some(name)) = (blocks.last_mut(), l.split_whitespace().next()) {
                b.push(name.to_string());
            }
        } else if !l.starts_with(char::is_whitespace) && !l.is_empty() {
            in_axioms = false;
        }
    }
    blocks
}

/// Whether an axiom printed by `Print Assumptions` is allowed.
pub fn axiom_allowed(name: &str) -> bool {
    ALLOWED_AXIOMS.contains(&name)
        || ALLOWED_PRIMITIVE_PREFIXES
            .iter()
            .any(|p| name.starts_with(p))
}

/// Coq is installed and `dir` exists (created if need be).
fn prepare(dir: &Path) -> Result<(), CoqError> {
    if !installed() {
        return Err(CoqError::NotInstalled { hint: INSTALL_HINT });
    }
    std::fs::create_dir_all(dir).map_err(|source| CoqError::Io {
        path: dir.into(),
        source,
    })?;
    Ok(())
}

/// Compiles the library and each lemma file of `lemmas` (such as [`LEMMAS`])
/// in `dir`; returns per file the axioms its `Print Assumptions` lists. An
/// error if Coq rejects a file, if it prints no `Print Assumptions`, or if an
/// axiom beyond [`ALLOWED_AXIOMS`] (an `Admitted` lemma, a new `Axiom`) is listed.
pub fn check_lemmas(
    dir: &Path,
    lemmas: &[(&str, &str)],
) -> Result<Vec<(String, Vec<String>)>, CoqError> {
    prepare(dir)?;
    compile_support(dir, "Attncheck", LIBRARY)?;
    let mut out = Vec::new();
    for (name, text) in lemmas {
        let file = format!("{name}.v");
        write(&dir.join(&file), text)?;
        let r = coqc(dir, &file)?;
        let fail = |message: String| CoqError::Coq {
            file: format!("coq/{file}"),
            message,
        };
        if !r.ok {
            return Err(fail(first_error(&r.stderr, &r.stdout)));
        }
        let blocks = assumption_blocks(&r.stdout);
        if blocks.is_empty() {
            return Err(fail("no `Print Assumptions` output".into()));
        }
        let mut axioms = blocks.concat();
        axioms.sort();
        axioms.dedup();
        let bad: Vec<&str> = axioms
            .iter()
            .filter(|a| !axiom_allowed(a))
            .map(|a| a.as_str())
            .collect();
        if !bad.is_empty() {
            return Err(fail(format!(
                "the proofs rest on axioms beyond the standard reals: {}",
                bad.join(", ")
            )));
        }
        out.push((name.to_string(), axioms));
    }
    Ok(out)
}

/// Translates `cert`, writes the files into `dir` and runs `coqc`: every
/// obligation sent to Coq comes back proven or rejected; when one is
/// rejected, the file is re-run without it, so each verdict is Coq's own.
pub fn check(cert: &Certificate, dir: &Path) -> Result<CoqReport, CoqError> {
    prepare(dir)?;
    let t = translate::translate(cert);
    let stem = translate::stem(cert);
    let start = Instant::now();
    compile_support(dir, "Attncheck", LIBRARY)?;
    if let Some(d) = &t.data {
        compile_support(dir, &format!("{stem}_data"), d)?;
    }
    let mut verdicts: Vec<Option<CoqVerdict>> = vec![None; cert.obligations.len()];
    for (i, r) in &t.kernel_only {
        verdicts[*i] = Some(CoqVerdict::KernelOnly(r.clone()));
    }
    // Run the file; when an obligation is rejected, run it again without the
    // rejected ones, so every verdict is Coq's own on that obligation alone.
    let mut pending: Vec<&translate::Block> = t.blocks.iter().collect();
    let mut axioms_seen = Vec::new();
    while !pending.is_empty() {
        let mut text = t.header.clone();
        let mut spans = Vec::new();
        for b in &pending {
            let first = text.lines().count() + 1;
            text.push_str(&b.text);
            spans.push((b.index, first, text.lines().count()));
        }
        text.push_str(&translate::footer(
            &pending.iter().map(|b| b.index).collect::<Vec<_>>(),
        ));
        let file = format!("{stem}.v");
        write(&dir.join(&file), &text)?;
        let r = coqc(dir, &file)?;
        if !r.ok {
            let line = error_line(&r.stderr);
            let failed = line
                .and_then(|l| spans.iter().position(|(_, a, b)| (*a..=*b).contains(&l)))
                .ok_or_else(|| CoqError::Coq {
                    file: file.clone(),
                    message: first_error(&r.stderr, &r.stdout),
                })?;
            verdicts[spans[failed].0] =
                Some(CoqVerdict::Rejected(first_error(&r.stderr, &r.stdout)));
            pending.remove(failed);
            continue;
        }
        let mut axioms = assumption_blocks(&r.stdout).concat();
        axioms.sort();
        axioms.dedup();
        axioms_seen.clone_from(&axioms);
        let bad: Vec<&String> = axioms.iter().filter(|a| !axiom_allowed(a)).collect();
        for (idx, _, _) in &spans {
            verdicts[*idx] = Some(if bad.is_empty() {
                CoqVerdict::Proven
            } else {
                CoqVerdict::Rejected(format!(
                    "the proofs rest on axioms beyond the standard reals: {}",
                    bad.iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            });
        }
        break;
    }
    let results = cert
        .obligations
        .iter()
        .zip(verdicts)
        .map(|(o, v)| {
            (
                o.name.clone(),
                v.unwrap_or_else(|| CoqVerdict::Rejected("not checked".into())),
            )
        })
        .collect();
    Ok(CoqReport {
        claim: cert.claim.clone(),
        results,
        seconds: start.elapsed().as_secs_f64(),
        axioms: axioms_seen,
    })
}
