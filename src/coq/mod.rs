//! An independent proof checker: certificates re-proven in Coq.
//!
//! [`translate`] turns a certificate (read by the one certificate reader,
//! [`crate::certificate::parse`], format `attncheck-certificate/6`) into a Coq file: one `Lemma` per
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

pub mod instance;
mod translate;

use crate::certificate::{Certificate, CertificateError};
use crate::kernel::Checked;
pub use translate::{
    LAYER_OP_SECONDS, MARGIN_BITS, MAX_COQ_NUMBER_BITS, MAX_EXACT_WORK, MAX_INTERVAL_GOALS,
    MAX_INTERVAL_TERMS, MAX_LAYER_SECONDS, RUNGS,
};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The shipped Coq library (`coq/Attncheck.v`).
pub const LIBRARY: &str = include_str!("../../coq/Attncheck.v");

/// Lemmas proven once and for all in Coq, for all parameters rather than on an
/// instance: (module name, text) of the files shipped in `coq/` beside the
/// library, which they import ([`crate::lemmas`]). Each ends with `Print
/// Assumptions`; [`check_lemmas`] compiles them.
pub use crate::lemmas::LEMMAS;

/// What `Print Assumptions` lists for each file of [`LEMMAS`], in the order Coq prints
/// it: the axioms of Coq's standard real numbers, nothing else. A report whose claim
/// rests on one of these lemmas (the spec's `[lemma]`) states it in its trust base; the
/// tests of the lemmas (tests/it/coq.rs) require Coq to print exactly this list.
pub const LEMMA_ASSUMPTIONS: &[&str] = &[
    "ClassicalDedekindReals.sig_not_dec",
    "ClassicalDedekindReals.sig_forall_dec",
    "FunctionalExtensionality.functional_extensionality_dep",
    "Classical_Prop.classic",
];

/// How to install Coq and CoqInterval.
pub const INSTALL_HINT: &str = "apt-get install coq libcoq-interval";

/// The axioms a proof may rest on, fully qualified: those of Coq's standard
/// real numbers (`ClassicalDedekindReals`, functional extensionality),
/// excluded middle, and the primitive 63-bit integers and floats of Coq's
/// standard library with their specifications (`PrimInt63`, `Uint63`,
/// `PrimFloat`, `FloatAxioms`), which is what a plain CoqInterval 4.6 `interval`
/// proof prints under `Print Assumptions` (at 53 bits it computes with primitive
/// floats, above with primitive integers). Each is matched exactly, never by a
/// prefix: `Print Assumptions` prints the short name (`Uint63.add_spec`), which
/// is accepted only if it is in this list and the generated file's own check
/// (`axiom_identity_checks`) proves that the short name denotes this very
/// constant in the file's context (a library that defined its own
/// `Uint63.add_spec` would take the short name: the check fails). Anything else
/// (an `Admitted` lemma, a new `Axiom`, `Uint63.cheat`) makes [`check`] reject.
pub const ALLOWED_AXIOMS: &[&str] = &[
    "Coq.Reals.ClassicalDedekindReals.sig_forall_dec",
    "Coq.Reals.ClassicalDedekindReals.sig_not_dec",
    "Coq.Logic.FunctionalExtensionality.functional_extensionality_dep",
    "Coq.Logic.Classical_Prop.classic",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.int",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.lsl",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.lsr",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.land",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.lor",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.lxor",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.asr",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.add",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.sub",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.mul",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.mulc",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.div",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.mod",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.divs",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.mods",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.eqb",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.ltb",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.leb",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.ltsb",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.lesb",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.addc",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.addcarryc",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.subc",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.subcarryc",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.diveucl",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.diveucl_21",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.addmuldiv",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.compare",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.compares",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.head0",
    "Coq.Numbers.Cyclic.Int63.PrimInt63.tail0",
    "Coq.Numbers.Cyclic.Int63.Uint63.of_to_Z",
    "Coq.Numbers.Cyclic.Int63.Uint63.lsl_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.lsr_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.land_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.lor_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.lxor_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.add_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.sub_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.mul_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.mulc_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.div_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.mod_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.eqb_correct",
    "Coq.Numbers.Cyclic.Int63.Uint63.eqb_refl",
    "Coq.Numbers.Cyclic.Int63.Uint63.ltb_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.leb_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.compare_def_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.head0_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.tail0_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.addc_def_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.addcarryc_def_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.subc_def_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.subcarryc_def_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.diveucl_def_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.diveucl_21_spec",
    "Coq.Numbers.Cyclic.Int63.Uint63.addmuldiv_def_spec",
    "Coq.Floats.PrimFloat.float",
    "Coq.Floats.PrimFloat.classify",
    "Coq.Floats.PrimFloat.abs",
    "Coq.Floats.PrimFloat.sqrt",
    "Coq.Floats.PrimFloat.opp",
    "Coq.Floats.PrimFloat.eqb",
    "Coq.Floats.PrimFloat.ltb",
    "Coq.Floats.PrimFloat.leb",
    "Coq.Floats.PrimFloat.compare",
    "Coq.Floats.PrimFloat.Leibniz.eqb",
    "Coq.Floats.PrimFloat.mul",
    "Coq.Floats.PrimFloat.add",
    "Coq.Floats.PrimFloat.sub",
    "Coq.Floats.PrimFloat.div",
    "Coq.Floats.PrimFloat.of_uint63",
    "Coq.Floats.PrimFloat.normfr_mantissa",
    "Coq.Floats.PrimFloat.frshiftexp",
    "Coq.Floats.PrimFloat.ldshiftexp",
    "Coq.Floats.PrimFloat.next_up",
    "Coq.Floats.PrimFloat.next_down",
    "Coq.Floats.FloatAxioms.Prim2SF_valid",
    "Coq.Floats.FloatAxioms.SF2Prim_Prim2SF",
    "Coq.Floats.FloatAxioms.Prim2SF_SF2Prim",
    "Coq.Floats.FloatAxioms.opp_spec",
    "Coq.Floats.FloatAxioms.abs_spec",
    "Coq.Floats.FloatAxioms.eqb_spec",
    "Coq.Floats.FloatAxioms.ltb_spec",
    "Coq.Floats.FloatAxioms.leb_spec",
    "Coq.Floats.FloatAxioms.compare_spec",
    "Coq.Floats.FloatAxioms.Leibniz.eqb_spec",
    "Coq.Floats.FloatAxioms.classify_spec",
    "Coq.Floats.FloatAxioms.mul_spec",
    "Coq.Floats.FloatAxioms.add_spec",
    "Coq.Floats.FloatAxioms.sub_spec",
    "Coq.Floats.FloatAxioms.div_spec",
    "Coq.Floats.FloatAxioms.sqrt_spec",
    "Coq.Floats.FloatAxioms.of_uint63_spec",
    "Coq.Floats.FloatAxioms.normfr_mantissa_spec",
    "Coq.Floats.FloatAxioms.frshiftexp_spec",
    "Coq.Floats.FloatAxioms.ldshiftexp_spec",
    "Coq.Floats.FloatAxioms.next_up_spec",
    "Coq.Floats.FloatAxioms.next_down_spec",
];

/// The library modules (dirpaths) of [`ALLOWED_AXIOMS`]: `Print Assumptions`
/// names an axiom by the module's last component and the rest of the path
/// (`Uint63.add_spec`, `PrimFloat.Leibniz.eqb`).
const AXIOM_MODULES: &[&str] = &[
    "Coq.Reals.ClassicalDedekindReals",
    "Coq.Logic.FunctionalExtensionality",
    "Coq.Logic.Classical_Prop",
    "Coq.Numbers.Cyclic.Int63.PrimInt63",
    "Coq.Numbers.Cyclic.Int63.Uint63",
    "Coq.Floats.PrimFloat",
    "Coq.Floats.FloatAxioms",
];

/// The name `Print Assumptions` gives an allowed axiom in a generated file
/// (`Coq.Numbers.Cyclic.Int63.Uint63.add_spec` → `Uint63.add_spec`).
fn printed_name(full: &str) -> String {
    let module = AXIOM_MODULES
        .iter()
        .find(|m| full.starts_with(*m) && full[m.len()..].starts_with('.'))
        .expect("every allowed axiom is in one of the modules");
    let short = module.rsplit('.').next().unwrap_or(module);
    format!("{short}{}", &full[module.len()..])
}

/// Whether an axiom printed by `Print Assumptions` is the printed name of one
/// of [`ALLOWED_AXIOMS`] (exactly; that the name denotes that axiom is checked
/// by Coq itself, `axiom_identity_checks`).
pub fn axiom_allowed(name: &str) -> bool {
    ALLOWED_AXIOMS.iter().any(|a| printed_name(a) == name)
}

/// Coq commands, for the end of a generated file, that load the modules of
/// [`ALLOWED_AXIOMS`] (without importing anything) and prove for each allowed
/// axiom that its printed name denotes the fully qualified constant: `eq_refl`
/// types only if both names are the same constant (two axioms are never
/// convertible). The loading comes before `Print Assumptions`
/// ([`AXIOM_MODULES_REQUIRE`]), so that both see one context.
fn axiom_identity_checks() -> String {
    let mut s = String::from(
        "(* Every allowed axiom's printed name is the standard library's constant itself. *)\n",
    );
    for (k, full) in ALLOWED_AXIOMS.iter().enumerate() {
        s.push_str(&format!(
            "Definition attncheck_axiom_{} := (eq_refl : @{} = @{full}).\n",
            k + 1,
            printed_name(full)
        ));
    }
    s
}

/// The message when [`axiom_identity_checks`] fails.
const NOT_COQS_OWN: &str =
    "an allowed axiom's printed name does not denote the standard library's axiom in this file";

/// Loads the modules of [`ALLOWED_AXIOMS`] (Require without Import).
const AXIOM_MODULES_REQUIRE: &str = "From Coq Require ClassicalDedekindReals FunctionalExtensionality Classical_Prop PrimInt63 Uint63 PrimFloat FloatAxioms.\n";

/// The committed certificates that CI (`make test`, the test
/// `coq::verify_coq_re_proves_the_ci_subset`) does not re-prove in Coq, each
/// with its measured Coq CPU time (coqc 8.16, CoqInterval 4.6, the 2-core
/// machine of docs/performance.md, under load): together about 1670 of the about
/// 1950 s that all committed certificates take, so without them CI's Coq check is
/// about 4.5 minutes of CPU (sparse/row-mass left this list in session 38, when its
/// Gram matrices and lemma rows came to be computed once: 53 → 30 s). `make coq` re-proves every
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
        "clusters/growth-bound",
        "221 s of Coq CPU: the layer map iterated in Coq's interval arithmetic on big-integer floats (80 to 192 bits: the kernel needs 42 to 116), up to 100 steps of 10 tokens in d = 4, once per obligation",
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
    /// For a certificate with witnesses of the Boolean limit ([`instance`]): the
    /// limit of each instance, stated and proven in Coq from coq/BooleanLimit.v.
    pub instance: Option<InstanceProof>,
}

/// The Boolean limit of a certificate's witnesses in Coq ([`instance`]), witness by
/// witness.
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceProof {
    /// Per witness, in the certificate's order.
    pub witnesses: Vec<WitnessProof>,
    /// Wall-clock seconds spent in `coqc` on the lemma files and the witnesses (never
    /// written into reports).
    pub seconds: f64,
}

/// The Boolean limit of one witness in Coq.
#[derive(Clone, Debug, PartialEq)]
pub struct WitnessProof {
    /// The witness, as its obligations name it.
    pub label: String,
    /// The theorems of the generated file that state its limit.
    pub theorems: Vec<String>,
    /// Coq's verdict on them.
    pub verdict: CoqVerdict,
}

impl InstanceProof {
    /// Whether Coq rejected the limit of a witness.
    pub fn rejected(&self) -> bool {
        self.witnesses
            .iter()
            .any(|w| matches!(w.verdict, CoqVerdict::Rejected(_)))
    }
    /// Whether Coq proved the limit of every witness.
    pub fn proven(&self) -> bool {
        self.witnesses
            .iter()
            .all(|w| w.verdict == CoqVerdict::Proven)
    }
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
    /// The certificate's file could not be read as text (missing, not UTF-8, larger
    /// than `spec::MAX_INPUT_BYTES`, or without end: `/dev/zero`).
    #[error(transparent)]
    Input(#[from] crate::spec::SpecError),
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
    /// [`check`] was given kernel decisions that are not the certificate's.
    #[error("the kernel's decisions are not those of the certificate's obligations: {0}")]
    NotDecided(String),
}

/// Why a directory or file is not used as private to this user (a run directory, the
/// Coq cache or one of its entries), or why the cache could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// Reading, copying or writing failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Not a directory (or a link to one).
    #[error("not a directory")]
    NotDirectory,
    /// A directory others may read, write or enter: its mode.
    #[error("mode {0:o}: others may use it")]
    OpenMode(u32),
    /// Not a regular file (or a link to one).
    #[error("not a regular file")]
    NotFile,
    /// A file others may write.
    #[error("writable by others")]
    WritableByOthers,
    /// Owned by another user.
    #[error("owned by another user")]
    OtherOwner,
    /// A cache entry whose source or `coqc` version is not this library's or this
    /// `coqc`'s.
    #[error("not this library or not this coqc")]
    Stale,
    /// One of the above, at this path.
    #[error("{path}: {source}")]
    At {
        /// The directory or file, as displayed.
        path: String,
        /// What is wrong with it.
        source: Box<CacheError>,
    },
}

impl CacheError {
    /// This error at `path`.
    fn at(self, path: impl std::fmt::Display) -> CacheError {
        CacheError::At {
            path: path.to_string(),
            source: Box::new(self),
        }
    }
}

/// Reads a certificate file with the one certificate reader
/// ([`crate::certificate::parse`]), through the one input reader
/// ([`crate::spec::read_utf8`]: at most `spec::MAX_INPUT_BYTES`, UTF-8 checked, the
/// file named in every error), as `verify` reads it.
pub fn load(path: &Path) -> Result<Certificate, CoqError> {
    let text = crate::spec::read_utf8(path)?;
    Ok(crate::certificate::parse(path, &text)?)
}

/// The end of a generated file with the lemmas `o_k` for these indices: the
/// modules of the allowed axioms, `Print Assumptions` of the conjunction of the
/// lemmas, and the proof that each allowed axiom's printed name is Coq's own
/// constant.
fn footer(indices: &[usize]) -> String {
    if indices.is_empty() {
        return String::new();
    }
    format!(
        "{AXIOM_MODULES_REQUIRE}{}{}",
        translate::footer(indices),
        axiom_identity_checks()
    )
}

/// Translates a certificate into Coq.
pub fn translate(cert: &Certificate) -> CoqFile {
    let t = translate::translate(cert);
    let mut text = t.header.clone();
    for b in &t.blocks {
        text.push_str(&b.text());
    }
    text.push_str(&footer(
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
            .map(|(i, r)| (cert.obligations[*i].name.clone(), r.to_string()))
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

/// For tests: per obligation of `cert` over the layer map, `[a, b, r]`: whether the
/// kernel decides it true at `bits` as the layer road's precision check answers it (a
/// prefix of the walk first), by the whole check alone, and whether a prefix refuted it
/// (`a == b` always; `None` for an obligation off the layer road).
#[doc(hidden)]
pub fn layer_road_decisions(cert: &Certificate, bits: u32) -> Vec<Option<[bool; 3]>> {
    translate::layer_road_decisions(cert, bits)
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> CoqError + '_ {
    move |source| CoqError::Io {
        path: path.into(),
        source,
    }
}

fn write(path: &Path, text: &str) -> Result<(), CoqError> {
    std::fs::write(path, text).map_err(io_error(path))
}

/// Writes the `.v` files and the library into `dir`; returns the shell command
/// that checks them by hand.
pub fn export(cert: &Certificate, dir: &Path) -> Result<(CoqFile, String), CoqError> {
    std::fs::create_dir_all(dir).map_err(io_error(dir))?;
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
    // the Boolean limit of the certificate's witnesses ([`instance`]): the lemma files
    // and the file `verify --coq` proves
    if let Ok(st) = cert.statement(Path::new("<certificate>")) {
        let ws = instance::witnesses(cert, &st.data);
        let all: Vec<usize> = (0..ws.len()).collect();
        let data_module = format!("{}_data", f.stem);
        if let Some(text) = instance::file(cert, &st.data, &ws, &all, &data_module) {
            for (name, lemma) in LEMMAS.iter().filter(|(n, _)| n.starts_with("Boolean")) {
                write(&dir.join(format!("{name}.v")), lemma)?;
                cmd.push_str(&format!(" && coqc -q -R . Attncheck {name}.v"));
            }
            write(
                &dir.join(format!("{}_instance.v", f.stem)),
                &format!("{AXIOM_MODULES_REQUIRE}{text}{}", axiom_identity_checks()),
            )?;
            cmd.push_str(&format!(" && coqc -q -R . Attncheck {}_instance.v", f.stem));
        }
    }
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

/// `coqc --version`, when `coqc` is on PATH.
fn coqc_version() -> Option<String> {
    Command::new("coqc")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
}

/// Is `coqc` on PATH?
pub fn installed() -> bool {
    coqc_version().is_some()
}

// ---------------------------------------------------------------- limits

/// The resources each `coqc` process may use. A process that reaches a limit is
/// stopped; the obligations it was proving stay kernel-only, with the reason
/// (never a crash, never a pass).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// CPU seconds (`ulimit -t`).
    pub cpu_seconds: u64,
    /// Address space in MiB (`ulimit -v`).
    pub memory_mib: u64,
}

impl Limits {
    /// The default: 1800 CPU seconds and 16 GiB of address space per `coqc`, above
    /// what the committed certificates need: the slowest, counting-lower-bound, is
    /// one `coqc` of about 1100 CPU seconds, and its ⌈log₂ 65536!⌉ alone peaks at
    /// 9.9 GB of address space (VmPeak; 8.8 GB resident), measured with coqc 8.16.
    pub const DEFAULT: Limits = Limits {
        cpu_seconds: 1800,
        memory_mib: 16 * 1024,
    };
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::DEFAULT
    }
}

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
    /// Set when `coqc` hit a resource limit or died by a signal: why.
    limit: Option<String>,
}

/// Stack for coqc, in KiB: Coq's integers and `nat` exponents are deep terms,
/// and ⌈log₂ 65536!⌉ (a 954037-bit number, 2^954036) overflows the usual 8 MB
/// ("Stack overflow"); with 1 GB it is proven.
const COQC_STACK_KIB: u32 = 1 << 20;

/// `coqc` with its arguments; on Unix through `sh`, which raises the stack limit
/// to [`COQC_STACK_KIB`] (or to the hard limit, if that is lower) and sets the
/// CPU-time and address-space limits of `limits` (a lower hard limit already in
/// force stays in force).
fn coqc_command(args: &[&str], limits: &Limits) -> Command {
    if cfg!(unix) {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!(
                "ulimit -s {COQC_STACK_KIB} 2>/dev/null || ulimit -s \"$(ulimit -H -s)\" 2>/dev/null; \
                 ulimit -t {} 2>/dev/null; ulimit -v {} 2>/dev/null; exec coqc \"$@\"",
                limits.cpu_seconds.max(1),
                limits.memory_mib.max(1).saturating_mul(1024)
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

/// Why a `coqc` run stopped short, if it hit a limit: killed by a signal
/// (SIGXCPU or SIGKILL at the CPU-time limit), out of memory, or out of stack.
fn limit_hit(status: &std::process::ExitStatus, out: &str, limits: &Limits) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return Some(match sig {
                24 | 9 => format!(
                    "coqc was stopped at its CPU-time limit of {} s (signal {sig})",
                    limits.cpu_seconds
                ),
                _ => format!("coqc died by signal {sig}"),
            });
        }
    }
    #[cfg(not(unix))]
    let _ = status;
    if out.contains("Out of memory") {
        return Some(format!(
            "coqc ran out of memory (limit {} MiB of address space)",
            limits.memory_mib
        ));
    }
    if out.contains("Stack overflow") {
        return Some("coqc ran out of stack".into());
    }
    None
}

fn coqc(dir: &Path, file: &str, limits: &Limits) -> Result<Run, CoqError> {
    let out = coqc_command(&["-q", "-R", ".", "Attncheck", file], limits)
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
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let limit = if out.status.success() {
        None
    } else {
        limit_hit(&out.status, &format!("{stderr}\n{stdout}"), limits)
    };
    Ok(Run {
        ok: out.status.success(),
        stdout,
        stderr,
        limit,
    })
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

/// The line of the error in Coq's output: the `File "…", line N` that precedes
/// the first `Error` (a warning also names a file and a line).
///
/// Public for the tests (tests/it/coq_helpers.rs) only: not API.
#[doc(hidden)]
pub fn error_line(stderr: &str) -> Option<usize> {
    let line_of = |l: &str| -> Option<usize> {
        let rest = l.strip_prefix("File \"")?;
        let after = rest.split_once("\", line ")?.1;
        after.split(',').next()?.trim().parse().ok()
    };
    let mut last = None;
    for l in stderr.lines() {
        if let Some(n) = line_of(l) {
            last = Some(n);
        } else if l.starts_with("Error") {
            return last;
        }
    }
    stderr.lines().find_map(line_of)
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

/// The axioms listed, sorted and deduplicated, and those not allowed.
fn axioms_of(stdout: &str) -> (Vec<String>, Vec<String>) {
    let mut axioms = assumption_blocks(stdout).concat();
    axioms.sort();
    axioms.dedup();
    let bad = axioms
        .iter()
        .filter(|a| !axiom_allowed(a))
        .cloned()
        .collect();
    (axioms, bad)
}

fn beyond(bad: &[String]) -> String {
    format!(
        "the proofs rest on axioms beyond the standard reals: {}",
        bad.join(", ")
    )
}

// ---------------------------------------------------------------- private places

/// A fresh directory for one run of Coq: created with a random name under the
/// system's temporary directory (`mkdtemp`: it cannot already exist), mode 0700,
/// removed when dropped.
///
/// Public for the tests (tests/it/coq_helpers.rs) only: not API.
#[doc(hidden)]
pub fn private_dir() -> Result<tempfile::TempDir, CoqError> {
    let mut b = tempfile::Builder::new();
    b.prefix("attncheck-coq-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o700));
    }
    let dir = b.tempdir().map_err(io_error(&std::env::temp_dir()))?;
    check_private(dir.path()).map_err(|reason| CoqError::Io {
        path: dir.path().into(),
        source: std::io::Error::other(reason),
    })?;
    Ok(dir)
}

/// The user id that owns what this process creates (that of a fresh directory).
///
/// Public for the tests (tests/it/coq_helpers.rs) only: not API.
#[cfg(unix)]
#[doc(hidden)]
pub fn owner_of(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).ok().map(|m| m.uid())
}

/// `path` is a directory (not a link to one) that nobody but its owner can
/// read, write or enter.
fn check_private(path: &Path) -> Result<(), CacheError> {
    let m = std::fs::symlink_metadata(path)?;
    if !m.is_dir() {
        return Err(CacheError::NotDirectory);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if m.permissions().mode() & 0o077 != 0 {
            return Err(CacheError::OpenMode(m.permissions().mode() & 0o777));
        }
    }
    Ok(())
}

/// The directory under which compiled libraries are kept:
/// `$XDG_CACHE_HOME/attncheck`, else `~/.cache/attncheck` (absolute paths only).
fn cache_root() -> Option<PathBuf> {
    let abs = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    std::env::var_os("XDG_CACHE_HOME")
        .and_then(abs)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(abs)
                .map(|h| h.join(".cache"))
        })
        .map(|c| c.join("attncheck"))
}

/// The cache key of the library: SHA-256 of its source and of `coqc --version`.
///
/// Public for the tests (tests/it/coq_helpers.rs) only: not API.
#[doc(hidden)]
pub fn library_key(version: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(LIBRARY.as_bytes());
    h.update([0u8]);
    h.update(version.as_bytes());
    h.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The name of the cache entry of the compiled library for the `coqc` on PATH
/// (`lib-<key>` below `$XDG_CACHE_HOME/attncheck` or `~/.cache/attncheck`), for
/// tests; `None` without coqc.
#[doc(hidden)]
pub fn library_cache_entry_name() -> Option<String> {
    coqc_version().map(|v| format!("lib-{}", library_key(&v)))
}

/// `path` is owned by `uid`, a directory private to it (mode 0700 or tighter),
/// not a link.
///
/// Public for the tests (tests/it/coq_helpers.rs) only: not API.
#[doc(hidden)]
pub fn owned_private_dir(path: &Path, uid: Option<u32>) -> Result<(), CacheError> {
    check_private(path)?;
    #[cfg(unix)]
    if owner_of(path) != uid {
        return Err(CacheError::OtherOwner);
    }
    #[cfg(not(unix))]
    let _ = uid;
    Ok(())
}

/// `path` is a regular file (not a link) owned by `uid` that only it may write.
///
/// Public for the tests (tests/it/coq_helpers.rs) only: not API.
#[doc(hidden)]
pub fn owned_file(path: &Path, uid: Option<u32>) -> Result<(), CacheError> {
    let m = std::fs::symlink_metadata(path)?;
    if !m.is_file() {
        return Err(CacheError::NotFile);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if m.permissions().mode() & 0o022 != 0 {
            return Err(CacheError::WritableByOthers);
        }
        if owner_of(path) != uid {
            return Err(CacheError::OtherOwner);
        }
    }
    #[cfg(not(unix))]
    let _ = uid;
    Ok(())
}

/// A compiled library from the cache, for the run directory `run`: the entry of
/// this library's key, used only if the cache directory and the entry are
/// private directories of the user who owns `run` and the entry's source and
/// `coqc` version are exactly this library's and this `coqc`'s. `Err` says why
/// the cache is not used (a missing entry is `Ok(false)`).
fn from_cache(root: &Path, run: &Path, version: &str) -> Result<bool, CacheError> {
    #[cfg(unix)]
    let uid = owner_of(run);
    #[cfg(not(unix))]
    let uid = None;
    let entry = root.join(format!("lib-{}", library_key(version)));
    if std::fs::symlink_metadata(&entry).is_err() {
        return Ok(false);
    }
    owned_private_dir(root, uid).map_err(|e| e.at(root.display()))?;
    owned_private_dir(&entry, uid).map_err(|e| e.at(entry.display()))?;
    for f in ["Attncheck.v", "Attncheck.vo", "coqc-version"] {
        owned_file(&entry.join(f), uid)
            .map_err(|e| e.at(format_args!("{}/{f}", entry.display())))?;
    }
    let same =
        |f: &str, want: &str| std::fs::read(entry.join(f)).is_ok_and(|t| t == want.as_bytes());
    if !same("Attncheck.v", LIBRARY) || !same("coqc-version", version) {
        return Err(CacheError::Stale.at(entry.display()));
    }
    std::fs::copy(entry.join("Attncheck.vo"), run.join("Attncheck.vo"))
        .map_err(|e| CacheError::from(e).at(entry.display()))?;
    Ok(true)
}

/// Stores the library compiled in `run` in the cache (best effort: a private
/// temporary directory inside the cache, renamed into place in one step, so a
/// concurrent run sees the whole entry or none).
fn to_cache(root: &Path, run: &Path, version: &str) -> Result<(), CacheError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        if std::fs::symlink_metadata(root).is_err() {
            if let Some(parent) = root.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::DirBuilder::new().mode(0o700).create(root)?;
        }
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(root)?;
    #[cfg(unix)]
    owned_private_dir(root, owner_of(run))?;
    let mut b = tempfile::Builder::new();
    b.prefix(".new-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o700));
    }
    let tmp = b.tempdir_in(root)?;
    std::fs::copy(run.join("Attncheck.vo"), tmp.path().join("Attncheck.vo"))?;
    std::fs::write(tmp.path().join("Attncheck.v"), LIBRARY)?;
    std::fs::write(tmp.path().join("coqc-version"), version)?;
    let entry = root.join(format!("lib-{}", library_key(version)));
    let tmp = tmp.keep();
    if std::fs::rename(&tmp, &entry).is_err() {
        // another run stored it first
        let _ = std::fs::remove_dir_all(&tmp);
    }
    Ok(())
}

/// What happened to a support file (the library, the data file).
enum Support {
    Compiled,
    /// `coqc` hit a limit: the reason.
    Limit(String),
}

/// Puts the compiled library in the run directory: from the cache when it holds
/// this library for this `coqc` (and is private to this user), else compiled
/// there (and stored in the cache).
fn library(run: &Path, version: &str, limits: &Limits) -> Result<Support, CoqError> {
    write(&run.join("Attncheck.v"), LIBRARY)?;
    let root = cache_root();
    if let Some(root) = &root {
        match from_cache(root, run, version) {
            Ok(true) => return Ok(Support::Compiled),
            Ok(false) => {}
            Err(why) => crate::errln!("attncheck: not using the Coq cache: {why}"),
        }
    }
    let r = coqc(run, "Attncheck.v", limits)?;
    if let Some(why) = r.limit {
        return Ok(Support::Limit(format!("the library Attncheck.v: {why}")));
    }
    if !r.ok {
        return Err(CoqError::Coq {
            file: "Attncheck.v".into(),
            message: first_error(&r.stderr, &r.stdout),
        });
    }
    if let Some(root) = &root {
        if let Err(why) = to_cache(root, run, version) {
            crate::errln!(
                "attncheck: could not store the compiled library in {}: {why}",
                root.display()
            );
        }
    }
    Ok(Support::Compiled)
}

fn compile_support(
    dir: &Path,
    name: &str,
    text: &str,
    limits: &Limits,
) -> Result<Support, CoqError> {
    write(&dir.join(format!("{name}.v")), text)?;
    let r = coqc(dir, &format!("{name}.v"), limits)?;
    if let Some(why) = r.limit {
        return Ok(Support::Limit(format!("{name}.v: {why}")));
    }
    if !r.ok {
        return Err(CoqError::Coq {
            file: format!("{name}.v"),
            message: first_error(&r.stderr, &r.stdout),
        });
    }
    Ok(Support::Compiled)
}

/// A private run directory with the compiled library; `Err` when Coq is missing.
fn prepare(limits: &Limits) -> Result<(tempfile::TempDir, Support), CoqError> {
    let version = coqc_version().ok_or(CoqError::NotInstalled { hint: INSTALL_HINT })?;
    let dir = private_dir()?;
    let lib = library(dir.path(), &version, limits)?;
    Ok((dir, lib))
}

/// Compiles the library and each lemma file of `lemmas` (such as [`LEMMAS`])
/// in a private directory; returns per file the axioms its `Print Assumptions`
/// lists. An error if Coq rejects a file, if it prints no `Print Assumptions`,
/// if an axiom beyond [`ALLOWED_AXIOMS`] (an `Admitted` lemma, a new `Axiom`) is
/// listed, or if a limit is hit.
pub fn check_lemmas(
    lemmas: &[(&str, &str)],
    limits: &Limits,
) -> Result<Vec<(String, Vec<String>)>, CoqError> {
    let (dir, lib) = prepare(limits)?;
    let dir = dir.path();
    if let Support::Limit(why) = lib {
        return Err(CoqError::Coq {
            file: "Attncheck.v".into(),
            message: why,
        });
    }
    let mut out = Vec::new();
    for (name, text) in lemmas {
        let file = format!("{name}.v");
        // the modules of the allowed axioms first (so that `Print Assumptions`
        // and the check see one context), the file, then the check that the
        // allowed axioms' names are Coq's own
        let body = format!("{AXIOM_MODULES_REQUIRE}{text}\n");
        let checks_from = body.lines().count() + 1;
        write(
            &dir.join(&file),
            &format!("{body}{}", axiom_identity_checks()),
        )?;
        let r = coqc(dir, &file, limits)?;
        let fail = |message: String| CoqError::Coq {
            file: format!("coq/{file}"),
            message,
        };
        if let Some(why) = r.limit {
            return Err(fail(why));
        }
        if !r.ok {
            let message = first_error(&r.stderr, &r.stdout);
            if error_line(&r.stderr).is_some_and(|l| l >= checks_from) {
                return Err(fail(format!("{NOT_COQS_OWN}: {message}")));
            }
            return Err(fail(message));
        }
        if assumption_blocks(&r.stdout).is_empty() {
            return Err(fail("no `Print Assumptions` output".into()));
        }
        let (axioms, bad) = axioms_of(&r.stdout);
        if !bad.is_empty() {
            return Err(fail(beyond(&bad)));
        }
        out.push((name.to_string(), axioms));
    }
    Ok(out)
}

/// The kernel's decisions of a certificate's own statement (its formulas as
/// they stand, no spec consulted): what [`check`] needs when no `verify` ran
/// first. Formulas the kernel rejects are an error.
pub fn kernel_decisions(cert: &Certificate) -> Result<Checked, CoqError> {
    let path = Path::new("<certificate>");
    let st = cert.statement(path)?;
    crate::kernel::check(&st, cert.precision).map_err(|e| {
        CoqError::Certificate(CertificateError {
            file: path.into(),
            line: None,
            field: format!("obligations[{}].formula", e.index),
            reason: e.error.to_string(),
        })
    })
}

/// Re-proves in Coq the obligations of `cert` that the kernel has decided
/// (`kernel`, [`crate::kernel::check`] of the certificate's statement: the
/// kernel runs first, so every formula sent to Coq is one the kernel read,
/// validated and evaluated): translates, writes the files into a fresh private
/// directory and runs `coqc` under `limits`. Every obligation sent to Coq comes
/// back proven or rejected (when one is rejected, the file is re-run without it,
/// so each verdict is Coq's own) or, when `coqc` hits a limit on it, kernel-only
/// with the reason.
pub fn check(cert: &Certificate, kernel: &Checked, limits: &Limits) -> Result<CoqReport, CoqError> {
    let ds = kernel.decisions();
    if ds.len() != cert.obligations.len() || kernel.prec() != cert.precision {
        return Err(CoqError::NotDecided(format!(
            "{} decisions at {} bits for {} obligations at {} bits",
            ds.len(),
            kernel.prec(),
            cert.obligations.len(),
            cert.precision
        )));
    }
    if let Some((o, d)) = cert
        .obligations
        .iter()
        .zip(ds)
        .find(|(o, d)| o.name != d.name() || o.expect != d.expect())
    {
        return Err(CoqError::NotDecided(format!(
            "obligation `{}` against decision `{}`",
            o.name,
            d.name()
        )));
    }
    let (dir, lib) = prepare(limits)?;
    let start = Instant::now();
    let mut run = Batch {
        dir: dir.path(),
        stem: translate::stem(cert),
        t: translate::translate(cert),
        limits,
        verdicts: vec![None; cert.obligations.len()],
        axioms: Vec::new(),
    };
    for (i, r) in &run.t.kernel_only {
        run.verdicts[*i] = Some(CoqVerdict::KernelOnly(r.to_string()));
    }
    let mut support = lib;
    if let (Support::Compiled, Some(d)) = (&support, &run.t.data) {
        support = compile_support(run.dir, &format!("{}_data", run.stem), d, limits)?;
    }
    let all: Vec<usize> = (0..run.t.blocks.len()).collect();
    match &support {
        Support::Limit(why) => {
            for b in &run.t.blocks {
                run.verdicts[b.index] = Some(CoqVerdict::KernelOnly(why.clone()));
            }
        }
        Support::Compiled => run.prove(all)?,
    }
    let instance = match &support {
        Support::Compiled => prove_instance(cert, &mut run)?,
        Support::Limit(_) => None,
    };
    let results = cert
        .obligations
        .iter()
        .zip(run.verdicts)
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
        axioms: run.axioms,
        instance,
    })
}

/// The Boolean limit of the certificate's witnesses alone ([`prove_instance`], without
/// its obligations): what [`check`] adds for a certificate of clusters/boolean-limit.
/// `Ok(None)` when it has no witnesses or the data hit a limit.
///
/// Public for the tests (tests/it/coq_boolean.rs) only: not API.
#[doc(hidden)]
pub fn check_instance(
    cert: &Certificate,
    limits: &Limits,
) -> Result<Option<InstanceProof>, CoqError> {
    let (dir, lib) = prepare(limits)?;
    let mut run = Batch {
        dir: dir.path(),
        stem: translate::stem(cert),
        t: translate::translate(cert),
        limits,
        verdicts: Vec::new(),
        axioms: Vec::new(),
    };
    let mut support = lib;
    if let (Support::Compiled, Some(d)) = (&support, &run.t.data) {
        support = compile_support(run.dir, &format!("{}_data", run.stem), d, limits)?;
    }
    match support {
        Support::Compiled => prove_instance(cert, &mut run),
        Support::Limit(_) => Ok(None),
    }
}

/// The Boolean limit of the certificate's witnesses ([`instance`]): compiles
/// coq/BooleanLimit.v and coq/BooleanInstance.v in the run's directory (beside the
/// library and the data), then one file of all witnesses, whose `Print Assumptions`
/// must list allowed axioms only. As for obligations ([`Batch::prove`]), a witness
/// whose proof Coq does not accept gets that verdict and the file is run again without
/// it (a failing run stops at its error, before the costly `Print Assumptions`); when
/// `coqc` hits a limit without saying where, each witness is run alone. `None` when
/// the certificate has no witnesses.
fn prove_instance(cert: &Certificate, run: &mut Batch) -> Result<Option<InstanceProof>, CoqError> {
    let Ok(st) = cert.statement(Path::new("<certificate>")) else {
        return Ok(None);
    };
    let ws = instance::witnesses(cert, &st.data);
    if ws.is_empty() {
        return Ok(None);
    }
    let start = Instant::now();
    let data_module = format!("{}_data", run.stem);
    let mut verdicts: Vec<Option<CoqVerdict>> = vec![None; ws.len()];
    let mut support = None;
    for (name, lemma) in LEMMAS.iter().filter(|(n, _)| n.starts_with("Boolean")) {
        if let Support::Limit(why) = compile_support(run.dir, name, lemma, run.limits)? {
            support = Some(why);
            break;
        }
    }
    match support {
        Some(why) => verdicts.fill(Some(CoqVerdict::KernelOnly(why))),
        None => {
            let p = InstanceRun {
                cert,
                data: &st.data,
                ws: &ws,
                data_module: &data_module,
            };
            p.prove((0..ws.len()).collect(), &mut verdicts, run)?;
        }
    }
    Ok(Some(InstanceProof {
        witnesses: ws
            .iter()
            .zip(verdicts)
            .enumerate()
            .map(|(i, (w, v))| WitnessProof {
                label: w.label.clone(),
                theorems: instance::theorems(i, w, &st.data),
                verdict: v.unwrap_or_else(|| CoqVerdict::Rejected("not checked".into())),
            })
            .collect(),
        seconds: start.elapsed().as_secs_f64(),
    }))
}

/// The witnesses of a certificate being proven in Coq ([`prove_instance`]).
struct InstanceRun<'a> {
    cert: &'a Certificate,
    data: &'a crate::kernel::expr::Data,
    ws: &'a [instance::Witness],
    data_module: &'a str,
}

impl InstanceRun<'_> {
    fn prove(
        &self,
        mut pending: Vec<usize>,
        verdicts: &mut [Option<CoqVerdict>],
        run: &mut Batch,
    ) -> Result<(), CoqError> {
        while !pending.is_empty() {
            let mut text = format!(
                "{AXIOM_MODULES_REQUIRE}{}",
                instance::header(self.cert, self.data_module)
            );
            let mut spans = Vec::new();
            let mut all = Vec::new();
            for &w in &pending {
                let first = text.lines().count() + 1;
                text.push_str(&instance::block(self.cert, self.data, self.ws, w));
                spans.push((w, first, text.lines().count()));
                all.extend(instance::theorems(w, &self.ws[w], self.data));
            }
            text.push_str(&instance::footer(&all));
            let checks_from = text.lines().count() + 1;
            text.push_str(&axiom_identity_checks());
            let file = format!("{}_instance.v", run.stem);
            write(&run.dir.join(&file), &text)?;
            let r = coqc(run.dir, &file, run.limits)?;
            let line = error_line(&r.stderr);
            let at = line.and_then(|l| spans.iter().position(|(_, a, b)| (*a..=*b).contains(&l)));
            if let Some(why) = &r.limit {
                match at {
                    Some(k) => {
                        verdicts[pending.remove(k)] = Some(CoqVerdict::KernelOnly(why.clone()));
                        continue;
                    }
                    None if pending.len() == 1 => {
                        verdicts[pending[0]] = Some(CoqVerdict::KernelOnly(why.clone()));
                    }
                    None => {
                        for w in pending {
                            self.prove(vec![w], verdicts, run)?;
                        }
                    }
                }
                return Ok(());
            }
            if !r.ok {
                let message = first_error(&r.stderr, &r.stdout);
                match (at, line) {
                    (Some(k), _) => {
                        verdicts[pending.remove(k)] = Some(CoqVerdict::Rejected(message));
                        continue;
                    }
                    (None, Some(l)) if l >= checks_from => {
                        let why = format!("{NOT_COQS_OWN}: {message}");
                        for w in pending {
                            verdicts[w] = Some(CoqVerdict::Rejected(why.clone()));
                        }
                        return Ok(());
                    }
                    _ => return Err(CoqError::Coq { file, message }),
                }
            }
            let (axioms, bad) = axioms_of(&r.stdout);
            let why = if assumption_blocks(&r.stdout).is_empty() {
                Some("no `Print Assumptions` output".to_string())
            } else {
                (!bad.is_empty()).then(|| beyond(&bad))
            };
            if why.is_none() {
                for a in axioms {
                    if !run.axioms.contains(&a) {
                        run.axioms.push(a);
                    }
                }
                run.axioms.sort();
            }
            for w in pending {
                verdicts[w] = Some(match &why {
                    None => CoqVerdict::Proven,
                    Some(why) => CoqVerdict::Rejected(why.clone()),
                });
            }
            return Ok(());
        }
        Ok(())
    }
}

/// One certificate's obligations being proven.
struct Batch<'a> {
    dir: &'a Path,
    stem: String,
    t: translate::Translation,
    limits: &'a Limits,
    verdicts: Vec<Option<CoqVerdict>>,
    axioms: Vec<String>,
}

impl Batch<'_> {
    /// Proves the blocks `pending` (indices into the translation's blocks) in one
    /// file; when one is rejected or hits a limit, the rest are run again without
    /// it; when `coqc` is stopped without saying where, each is run alone.
    fn prove(&mut self, mut pending: Vec<usize>) -> Result<(), CoqError> {
        while !pending.is_empty() {
            let mut text = self.t.header.clone();
            let mut spans = Vec::new();
            for &b in &pending {
                let first = text.lines().count() + 1;
                text.push_str(&self.t.blocks[b].text());
                spans.push((b, first, text.lines().count()));
            }
            let footer_from = text.lines().count() + 1;
            let indices: Vec<usize> = pending.iter().map(|&b| self.t.blocks[b].index).collect();
            text.push_str(&footer(&indices));
            let file = format!("{}.v", self.stem);
            write(&self.dir.join(&file), &text)?;
            let r = coqc(self.dir, &file, self.limits)?;
            let line = error_line(&r.stderr);
            let at = line.and_then(|l| spans.iter().position(|(_, a, b)| (*a..=*b).contains(&l)));
            if let Some(why) = &r.limit {
                match at {
                    Some(k) => {
                        let b = pending.remove(k);
                        self.set(b, CoqVerdict::KernelOnly(why.clone()));
                    }
                    None if pending.len() == 1 => {
                        self.set(pending[0], CoqVerdict::KernelOnly(why.clone()));
                        return Ok(());
                    }
                    None => {
                        // stopped without saying where: each obligation alone
                        for b in pending {
                            self.prove(vec![b])?;
                        }
                        return Ok(());
                    }
                }
                continue;
            }
            if !r.ok {
                let message = first_error(&r.stderr, &r.stdout);
                match (at, line) {
                    (Some(k), _) => {
                        let b = pending.remove(k);
                        self.set(b, CoqVerdict::Rejected(message));
                        continue;
                    }
                    (None, Some(l)) if l >= footer_from => {
                        // the check that the allowed axioms' names are Coq's own failed
                        for b in pending {
                            self.set(
                                b,
                                CoqVerdict::Rejected(format!("{NOT_COQS_OWN}: {message}")),
                            );
                        }
                        return Ok(());
                    }
                    _ => {
                        return Err(CoqError::Coq { file, message });
                    }
                }
            }
            let (axioms, bad) = axioms_of(&r.stdout);
            for a in axioms {
                if !self.axioms.contains(&a) {
                    self.axioms.push(a);
                }
            }
            self.axioms.sort();
            for b in pending {
                self.set(
                    b,
                    if bad.is_empty() {
                        CoqVerdict::Proven
                    } else {
                        CoqVerdict::Rejected(beyond(&bad))
                    },
                );
            }
            return Ok(());
        }
        Ok(())
    }

    fn set(&mut self, block: usize, v: CoqVerdict) {
        let i = self.t.blocks[block].index;
        self.verdicts[i] = Some(v);
    }
}

/// For a test of agreement with the kernel: asks Coq to prove each obligation of
/// `cert` that the translation sends, all in one file, each under `Fail` (its
/// statement first defined as a `Prop`, which must be well formed). `Ok(None)`
/// when Coq proves none of them; `Ok(Some((k, message)))` when it proves
/// obligation k (the file stops there); `Err` when Coq fails otherwise (a
/// statement that is not well formed, the library, the data, a limit).
#[doc(hidden)]
pub fn proves_none(
    cert: &Certificate,
    limits: &Limits,
) -> Result<Option<(usize, String)>, CoqError> {
    let (dir, lib) = prepare(limits)?;
    let dir = dir.path();
    let t = translate::translate(cert);
    let stem = translate::stem(cert);
    let fail = |file: &str, message: String| CoqError::Coq {
        file: file.into(),
        message,
    };
    if let Support::Limit(why) = lib {
        return Err(fail("Attncheck.v", why));
    }
    if let Some(d) = &t.data {
        if let Support::Limit(why) = compile_support(dir, &format!("{stem}_data"), d, limits)? {
            return Err(fail("data", why));
        }
    }
    let mut text = t.header.clone();
    let mut spans = Vec::new();
    for b in &t.blocks {
        let first = text.lines().count() + 1;
        text.push_str(&b.refutation_text());
        spans.push((b.index, first, text.lines().count()));
    }
    let file = format!("{stem}.v");
    write(&dir.join(&file), &text)?;
    let r = coqc(dir, &file, limits)?;
    if r.ok {
        return Ok(None);
    }
    let message = first_error(&r.stderr, &r.stdout);
    if let Some(why) = r.limit {
        return Err(fail(&file, why));
    }
    let at =
        error_line(&r.stderr).and_then(|l| spans.iter().find(|(_, a, b)| (*a..=*b).contains(&l)));
    match at {
        Some((k, _, _)) if message.contains("The command has not failed") => {
            Ok(Some((*k, message)))
        }
        _ => Err(fail(&file, message)),
    }
}
