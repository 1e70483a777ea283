//! Claim specs: `theorems/<paper>/<claim>.toml`.
//!
//! A spec states what is asserted, on which instances, with which tolerance and
//! rigour. The common header is parsed here; each claim's `params` (merged with the
//! chosen profile's overrides) are deserialised here into the claim's raw struct with
//! unknown keys rejected, and resolved by the claim (`claims::shape`). Every error
//! names the file, the line and the field.

use crate::verdict::Verdict;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The run profile: `quick` (default; the whole suite in minutes) or `full` (the
/// kernel's, as part of the certificate format).
pub use crate::certificate::Profile;

/// Where `attncheck run` writes a profile's reports unless told otherwise:
/// `reports` for quick (the committed, snapshot-tested set) and `reports/full` for
/// full, so a full sweep never overwrites the quick reports.
///
/// ```
/// use attncheck::spec::{default_out, Profile};
/// assert_eq!(default_out(Profile::Quick), std::path::Path::new("reports"));
/// assert_eq!(default_out(Profile::Full), std::path::Path::new("reports/full"));
/// ```
pub fn default_out(profile: Profile) -> std::path::PathBuf {
    match profile {
        Profile::Quick => "reports".into(),
        Profile::Full => ["reports", "full"].iter().collect(),
    }
}

/// Where a claim's statement comes from (papers/README.md, "Tags").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provenance {
    /// Stated in the paper or its official code.
    Paper,
    /// Derived for this project from the paper's statements.
    Derived,
    /// Could not be confirmed against the paper text.
    Unconfirmed,
}

/// A bad spec, witness or target: names the file, line and field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    /// A field is missing, of the wrong type, unknown, or out of range.
    #[error("{}: {field}: {reason}", location(file, *line))]
    Field {
        /// The spec file.
        file: PathBuf,
        /// 1-based line, when it could be located.
        line: Option<usize>,
        /// The dotted field path, e.g. `params.slopes[2]`.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// The file could not be read or is not TOML at all.
    #[error("{}: {reason}", location(file, *line))]
    File {
        /// The file.
        file: PathBuf,
        /// 1-based line, when known.
        line: Option<usize>,
        /// What went wrong.
        reason: String,
    },
    /// A claim ID that no module implements.
    #[error("{}: unknown claim `{id}` (known claims: {known})", location(file, *line))]
    UnknownClaim {
        /// Where it was named (a spec file, or `<command line>`).
        file: PathBuf,
        /// 1-based line, when known.
        line: Option<usize>,
        /// The ID.
        id: String,
        /// The known IDs, comma-separated.
        known: String,
    },
}

fn location(file: &Path, line: Option<usize>) -> String {
    match line {
        Some(l) => format!("{}:{l}", file.display()),
        None => file.display().to_string(),
    }
}

/// A range or consistency violation found by a claim's `validate`, with the
/// field path relative to the claim's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// Path relative to `params`, e.g. `windows[1]`.
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.reason)
        } else {
            write!(f, "{}: {}", self.field, self.reason)
        }
    }
}

impl std::error::Error for FieldError {}

impl FieldError {
    /// A new field error.
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

/// Returns `Err(FieldError)` unless `cond` holds.
pub fn ensure(
    cond: bool,
    field: impl Into<String>,
    reason: impl Into<String>,
) -> Result<(), FieldError> {
    if cond {
        Ok(())
    } else {
        Err(FieldError::new(field, reason))
    }
}

/// The largest |exponent| of a decimal literal (`1e-100000`) that
/// [`crate::kernel::parse_rational`] reads; beyond it the literal is refused.
pub const MAX_DECIMAL_EXPONENT: u32 = 100_000;

/// The largest |exponent| of a power literal (`2^-1000000`) that
/// [`crate::kernel::parse_rational`] reads.
pub const MAX_POWER_EXPONENT: u32 = 1_000_000;

/// Parses an exact numeric literal of a spec field (`"2^-8"`, `"1/100"`, `"0.01"`).
/// A literal refused only because its exponent is too large says what the limit is.
pub fn exact(field: &str, s: &str) -> Result<rug::Rational, FieldError> {
    crate::kernel::parse_rational(s).map_err(|e| {
        let reason = match exponent_beyond_limit(s) {
            Some(limit) => format!(
                "`{}` has an exponent beyond the limit: exponents of exact literals must lie in \
                 −{limit}..={limit}",
                crate::kernel::abbreviate_literal(s)
            ),
            None => e.to_string(),
        };
        FieldError::new(field, reason)
    })
}

/// The exponent limit that `s` exceeds, if its only fault is a too-large exponent:
/// [`MAX_POWER_EXPONENT`] for `b^e`, [`MAX_DECIMAL_EXPONENT`] for `1.5e-3` forms.
fn exponent_beyond_limit(s: &str) -> Option<u32> {
    let t = s.trim();
    let (exp, limit) = match t.split_once('^') {
        Some((_, e)) => (e.trim(), MAX_POWER_EXPONENT),
        None => {
            let i = t.find(['e', 'E'])?;
            (&t[i + 1..], MAX_DECIMAL_EXPONENT)
        }
    };
    let digits = exp.strip_prefix(['-', '+']).unwrap_or(exp);
    let all_digits = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    let big = digits.trim_start_matches('0').len() > 9
        || digits.parse::<u64>().is_ok_and(|v| v > u64::from(limit));
    (all_digits && big).then_some(limit)
}

/// Checks every element of a non-empty list with `f`, which gets the element's field
/// path (`field[i]`) and returns a typed error.
pub fn check_each<T>(
    list: &[T],
    field: &str,
    f: impl Fn(&str, &T) -> Result<(), FieldError>,
) -> Result<(), FieldError> {
    ensure(!list.is_empty(), field, "must not be empty")?;
    for (i, x) in list.iter().enumerate() {
        f(&format!("{field}[{i}]"), x)?;
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    id: String,
    title: String,
    statement: String,
    source: String,
    provenance: Vec<Provenance>,
    rigour: Verdict,
    expected: Verdict,
    #[serde(default = "default_precision")]
    precision: u32,
    #[serde(default = "default_check_tolerance")]
    check_tolerance: f64,
    #[serde(default)]
    notes: Vec<String>,
    #[serde(default)]
    refutes: Vec<String>,
    #[serde(default)]
    lemma: Option<LemmaRef>,
    #[serde(default)]
    kind: SpecKind,
    #[serde(default)]
    obligations: Vec<WrittenObligation>,
    #[serde(default)]
    defs: toml::Table,
    #[serde(default)]
    data: toml::Table,
    #[serde(default)]
    params: toml::Table,
    #[serde(default)]
    profiles: Profiles,
}

/// What implements a spec's claim.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SpecKind {
    /// A module of this tool (no `kind` field: the thirty claims of the papers).
    #[default]
    #[serde(skip)]
    Module,
    /// The spec's own obligations, written in the certificate language
    /// (`kind = "formulas"`).
    Formulas,
}

/// One `[[obligations]]` entry of a formulas spec, as written.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WrittenObligation {
    /// What it states, in words (the check's name in the report; `refutes` names it).
    pub name: String,
    /// The formula, with `{name}` standing for a parameter or a definition.
    pub formula: String,
    /// The report part it belongs to (optional; presentation only).
    #[serde(default)]
    pub part: Option<String>,
}

/// The `[lemma]` of a spec: a lemma proven in Coq (a file of [`crate::lemmas::LEMMAS`])
/// that turns the certified obligations of one part of the claim into its limit. Only
/// that part's verdict may exceed the spec's `rigour` (the cap on asymptotic claims
/// lifts for it alone); the report's trust base lists the lemma with its file and
/// `Print Assumptions`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct LemmaRef {
    /// The report part whose checks the lemma turns into the limit.
    pub part: String,
    /// `coq/<Name>.v`, a file of [`crate::lemmas::LEMMAS`].
    pub file: String,
    /// The theorems of that file the part rests on (each a `Theorem` or `Lemma` of it).
    pub theorems: Vec<String>,
}

impl LemmaRef {
    /// The shipped text of the file, or why the reference is not one: a lemma file that
    /// gives the limit of claim `id` ([`crate::lemmas::LIMIT_LEMMAS`]), stating each
    /// theorem named.
    fn check(&self, id: &str) -> Result<(), (&'static str, String)> {
        if self.part.trim().is_empty() {
            return Err(("lemma.part", "must name a part of the claim".into()));
        }
        let text = crate::lemmas::LEMMAS
            .iter()
            .find(|(name, _)| format!("coq/{name}.v") == self.file)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                (
                    "lemma.file",
                    format!(
                        "`{}` is not a lemma file shipped with this tool (known: {})",
                        self.file,
                        crate::lemmas::LEMMAS
                            .iter()
                            .map(|(n, _)| format!("coq/{n}.v"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?;
        let gives = crate::lemmas::LIMIT_LEMMAS
            .iter()
            .find(|(name, _)| format!("coq/{name}.v") == self.file);
        if !gives.is_some_and(|(_, claims)| claims.contains(&id)) {
            return Err((
                "lemma.file",
                format!(
                    "`{}` gives the limit of no part of `{id}` (its hypotheses are not this \
                     claim's obligations; lemmas that give a limit: {})",
                    self.file,
                    crate::lemmas::LIMIT_LEMMAS
                        .iter()
                        .map(|(n, cs)| format!("coq/{n}.v for {}", cs.join(", ")))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            ));
        }
        if self.theorems.is_empty() {
            return Err(("lemma.theorems", "must name at least one theorem".into()));
        }
        for t in &self.theorems {
            let stated = ["Theorem", "Lemma"].iter().any(|kw| {
                [' ', '\n']
                    .iter()
                    .any(|end| text.contains(&format!("\n{kw} {t}{end}")))
            });
            if !stated {
                return Err((
                    "lemma.theorems",
                    format!("`{t}` is not a Theorem or Lemma of {}", self.file),
                ));
            }
        }
        Ok(())
    }
}

/// The highest working precision a spec may ask for, in bits (the kernel's
/// [`crate::certificate::MAX_SPEC_PRECISION`], which says why).
pub const MAX_PRECISION: u32 = crate::certificate::MAX_SPEC_PRECISION;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Profiles {
    #[serde(default)]
    quick: toml::Table,
    #[serde(default)]
    full: toml::Table,
}

fn default_precision() -> u32 {
    128
}
fn default_check_tolerance() -> f64 {
    1e-9
}

/// A parsed and header-validated claim spec.
#[derive(Clone, Debug)]
pub struct Spec {
    /// The file it came from.
    pub path: PathBuf,
    /// `<paper>/<claim>`.
    pub id: String,
    /// A one-line title.
    pub title: String,
    /// The claim in words.
    pub statement: String,
    /// Paper, section, equation; where the formula comes from.
    pub source: String,
    /// Provenance tags.
    pub provenance: Vec<Provenance>,
    /// The strongest verdict this claim can reach.
    pub rigour: Verdict,
    /// The verdict a correct run gives.
    pub expected: Verdict,
    /// Working precision in bits (≥ 24).
    pub precision: u32,
    /// Relative tolerance for `--check` on key figures.
    pub check_tolerance: f64,
    /// Free-form notes printed in the report.
    pub notes: Vec<String>,
    /// For `expected = "refuted"`: the names of the checks expected to come out
    /// false (each an obligation of the claim's statement). The run is as
    /// expected only when exactly these are disproven and every other check holds.
    pub refutes: Vec<String>,
    /// The Coq lemma one part of the claim rests on (`[lemma]`), if any.
    pub lemma: Option<LemmaRef>,
    /// What implements the claim: a module of this tool (the thirty claims), or the
    /// spec's own formulas (`kind = "formulas"`, `claims::formulas`).
    pub kind: SpecKind,
    /// For `kind = "formulas"`: the obligations as written (`[[obligations]]`).
    pub obligations: Vec<WrittenObligation>,
    /// For `kind = "formulas"`: named terms (`[defs]`), pasted where `{name}` is written.
    pub defs: toml::Table,
    /// For `kind = "formulas"`: named data (`[data.NAME]`, the certificate's data kinds),
    /// which the obligations' data operations name.
    pub data: toml::Table,
    /// Parameters set on the command line (`run --set path=value`), as typed, applied
    /// over both profiles' parameters in this order.
    pub sets: Vec<String>,
    set_values: Vec<(Vec<String>, toml::Value)>,
    params: toml::Table,
    quick: toml::Table,
    full: toml::Table,
    src: String,
}

impl Spec {
    /// The part whose limit the spec's `[lemma]` gives, if any.
    pub fn lemma_part(&self) -> Option<&str> {
        self.lemma.as_ref().map(|l| l.part.as_str())
    }
    /// The paper part of the ID (`positional`).
    pub fn paper(&self) -> &str {
        self.id.split('/').next().unwrap_or("")
    }
    /// The claim part of the ID (`alibi-window`).
    pub fn name(&self) -> &str {
        self.id.split_once('/').map(|x| x.1).unwrap_or(&self.id)
    }

    /// Parses a spec from text; `path` is used in errors.
    pub fn parse(path: &Path, src: &str) -> Result<Spec, SpecError> {
        let h: Header = toml::from_str(src).map_err(|e| toml_error(path, src, &e))?;
        let spec = Spec {
            path: path.to_path_buf(),
            id: h.id,
            title: h.title,
            statement: h.statement,
            source: h.source,
            provenance: h.provenance,
            rigour: h.rigour,
            expected: h.expected,
            precision: h.precision,
            check_tolerance: h.check_tolerance,
            notes: h.notes,
            refutes: h.refutes,
            lemma: h.lemma,
            kind: h.kind,
            obligations: h.obligations,
            defs: h.defs,
            data: h.data,
            sets: Vec::new(),
            set_values: Vec::new(),
            params: h.params,
            quick: h.profiles.quick,
            full: h.profiles.full,
            src: src.to_string(),
        };
        let field_err = |field: &str, reason: String| spec.field_error(&[field], reason);
        if !(24..=MAX_PRECISION).contains(&spec.precision) {
            return Err(field_err(
                "precision",
                format!(
                    "{} bits is out of range: use 24 to {MAX_PRECISION} (an undecided \
                     comparison is retried at up to 4× this precision)",
                    spec.precision
                ),
            ));
        }
        if spec.expected == Verdict::Certified && spec.rigour != Verdict::Certified {
            return Err(field_err(
                "expected",
                format!(
                    "`certified` is stronger than the rigour sought (`{}`): a claim of that \
                     rigour is capped at `supported`, so this run could never end as expected; \
                     lower `expected` or raise `rigour`",
                    spec.rigour
                ),
            ));
        }
        if !(spec.check_tolerance.is_finite() && spec.check_tolerance >= 0.0) {
            return Err(field_err(
                "check_tolerance",
                "must be a finite number ≥ 0".into(),
            ));
        }
        if let Some(Err((field, reason))) = spec.lemma.as_ref().map(|l| l.check(&spec.id)) {
            return Err(field_err(field, reason));
        }
        if spec.expected == Verdict::Refuted && spec.refutes.is_empty() {
            return Err(field_err(
                "refutes",
                "a spec that expects `refuted` must name the check(s) expected to be disproven"
                    .into(),
            ));
        }
        if spec.expected != Verdict::Refuted && !spec.refutes.is_empty() {
            return Err(field_err(
                "refutes",
                format!(
                    "names checks expected to be disproven, but the expected verdict is `{}`",
                    spec.expected
                ),
            ));
        }
        if spec.provenance.is_empty() {
            return Err(field_err(
                "provenance",
                "name at least one tag: paper, derived or unconfirmed".into(),
            ));
        }
        for (i, t) in spec.provenance.iter().enumerate() {
            if spec.provenance[..i].contains(t) {
                return Err(field_err(
                    "provenance",
                    format!("names `{}` twice", format!("{t:?}").to_lowercase()),
                ));
            }
        }
        if spec.kind == SpecKind::Module {
            for (field, set) in [
                ("obligations", !spec.obligations.is_empty()),
                ("defs", !spec.defs.is_empty()),
                ("data", !spec.data.is_empty()),
            ] {
                if set {
                    return Err(field_err(
                        field,
                        "belongs to a claim written as formulas: add `kind = \"formulas\"` (see \
                         docs/your-own-claims.md)"
                            .into(),
                    ));
                }
            }
        } else if spec.obligations.is_empty() {
            return Err(field_err(
                "obligations",
                "a claim written as formulas needs at least one [[obligations]] entry (name and \
                 formula)"
                    .into(),
            ));
        }
        let parts: Vec<&str> = spec.id.split('/').collect();
        if parts.len() != 2 || parts.iter().any(|p| p.is_empty()) {
            return Err(field_err(
                "id",
                format!("`{}` is not of the form <paper>/<claim>", spec.id),
            ));
        }
        Ok(spec)
    }

    /// Reads and parses a spec file: the common header only. A registered claim's
    /// parameters are validated by `claims::load_spec`, which calls this (this layer
    /// only parses, and never names the claims above it).
    pub fn read(path: &Path) -> Result<Spec, SpecError> {
        let src = read_utf8(path)?;
        Spec::parse(path, &src)
    }

    /// The claim parameters for `profile` as written: `params` overlaid with
    /// `profiles.<profile>`, deserialised into `P` (unknown keys are errors). Only
    /// parsed: the claim resolves them (`claims::shape::resolve`). Errors name the
    /// line of the offending field.
    pub fn params<P: DeserializeOwned>(&self, profile: Profile) -> Result<P, SpecError> {
        let merged = toml::Value::Table(self.merged(profile));
        if let Some((field, len)) = too_long_list(&merged, String::new()) {
            return Err(self.param_error(
                profile,
                &field,
                format!(
                    "{len} entries, above the bound {MAX_LIST} of a list in a claim's parameters"
                ),
            ));
        }
        let p: P = serde_path_to_error::deserialize(merged).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { path };
            let inner = e.into_inner().to_string();
            // serde_path_to_error's path already ends at an unknown key; add the
            // key only when it does not (so `slopez` is not named `slopez.slopez`)
            let field = match unknown_field(&inner) {
                Some(u) if split_path(&path).last() != Some(&u) => join(&path, &u),
                _ => path,
            };
            self.param_error(profile, &field, inner)
        })?;
        Ok(p)
    }

    /// The merged parameter table for `profile` (for reports).
    pub fn merged(&self, profile: Profile) -> toml::Table {
        let mut t = self.params.clone();
        let over = match profile {
            Profile::Quick => &self.quick,
            Profile::Full => &self.full,
        };
        deep_merge(&mut t, over);
        for (path, v) in &self.set_values {
            if let Some(slot) = slot_mut(&mut t, path) {
                *slot = v.clone();
            }
        }
        t
    }

    /// Sets a parameter from the command line: `path=value`, where `path` names a
    /// parameter of both profiles (`eps`, `rows[0].slope`) and `value` is a TOML value
    /// (`3`, `"1/100"`, `[1, 2]`) or, when it is not one, a string (`2^-5`). The
    /// claim then resolves the parameters as written in the file, so every range check
    /// applies. Errors name `--set` and the path.
    pub fn set(&mut self, assignment: &str) -> Result<(), SpecError> {
        let bad = |reason: String| SpecError::Field {
            file: PathBuf::from("<command line>"),
            line: None,
            field: format!("--set {assignment}"),
            reason,
        };
        let Some((path, value)) = assignment.split_once('=') else {
            return Err(bad(
                "write --set PATH=VALUE, e.g. --set rows[0].slope=2^-5".into()
            ));
        };
        let segs = split_path(path.trim());
        if segs.is_empty() {
            return Err(bad("the parameter's path is empty".into()));
        }
        let value = value.trim();
        // where the spec writes a string (exact literals are strings), the value is
        // that string as typed (quotes optional); elsewhere a TOML value
        let mut quick = self.merged(Profile::Quick);
        let v = match slot_mut(&mut quick, &segs) {
            Some(toml::Value::String(_)) => toml::Value::String(
                value
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .unwrap_or(value)
                    .to_string(),
            ),
            _ => format!("v = {value}")
                .parse::<toml::Table>()
                .ok()
                .and_then(|mut t| t.remove("v"))
                .unwrap_or_else(|| toml::Value::String(value.to_string())),
        };
        for profile in [Profile::Quick, Profile::Full] {
            let mut t = self.merged(profile);
            if slot_mut(&mut t, &segs).is_none() {
                let names: Vec<&String> = t.keys().collect();
                return Err(bad(format!(
                    "`{path}` is not a parameter of {} in the {} profile (its parameters: {})",
                    self.id,
                    profile.as_str(),
                    names
                        .iter()
                        .map(|n| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        self.set_values.push((segs, v));
        self.sets.push(assignment.to_string());
        Ok(())
    }

    /// An error about a parameter field, located where the merged value came from:
    /// in `[profiles.<profile>]` when the profile sets the field (or the deepest
    /// part of its path that either section sets), else in `[params]`.
    pub fn param_error(&self, profile: Profile, field: &str, reason: String) -> SpecError {
        let segs = split_path(field);
        // a value set on the command line is reported there, not at the file's line
        if let Some(i) = self
            .set_values
            .iter()
            .rposition(|(p, _)| segs.starts_with(p))
        {
            return SpecError::Field {
                file: PathBuf::from("<command line>"),
                line: None,
                field: format!("--set {}", self.sets[i]),
                reason,
            };
        }
        let with = |head: &[&'static str]| {
            let mut v: Vec<&str> = head.to_vec();
            v.extend(segs.iter().map(String::as_str));
            v
        };
        let in_prof = with(&["profiles", profile.as_str()]);
        let in_params = with(&["params"]);
        // how many segments of `field` each section sets
        let depth = |full: &[&str], head: usize| {
            (head + 1..=full.len())
                .rev()
                .find(|&n| locate(&self.src, &full[..n]).is_some())
                .map_or(0, |n| n - head)
        };
        let (dp, dq) = (depth(&in_prof, 2), depth(&in_params, 1));
        if dp > 0 && dp >= dq {
            self.field_error(&in_prof, reason)
        } else {
            self.field_error(&in_params, reason)
        }
    }

    /// An error about the field at the dotted path `field` (`obligations[2].formula`,
    /// `defs.tail`), at the line where the spec defines it (or its nearest enclosing table).
    pub fn error_at(&self, field: &str, reason: String) -> SpecError {
        let segs = split_path(field);
        let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
        self.field_error(&segs, reason)
    }

    fn field_error(&self, path: &[&str], reason: String) -> SpecError {
        let mut segs: Vec<&str> = Vec::new();
        for p in path {
            segs.extend(p.split('.'));
        }
        let display = display_path(&segs);
        // locate the deepest prefix that exists (a missing field is reported at
        // its table's line)
        let mut line = None;
        for n in (1..=segs.len()).rev() {
            if let Some(l) = locate(&self.src, &segs[..n]) {
                line = Some(l);
                break;
            }
        }
        SpecError::Field {
            file: self.path.clone(),
            line,
            field: display,
            reason,
        }
    }
}

/// The value at `path` (keys and array indices) inside `t`, if present.
fn slot_mut<'a>(t: &'a mut toml::Table, path: &[String]) -> Option<&'a mut toml::Value> {
    let (first, rest) = path.split_first()?;
    let mut v = t.get_mut(first)?;
    for seg in rest {
        v = match v {
            toml::Value::Table(t) => t.get_mut(seg)?,
            toml::Value::Array(a) => a.get_mut(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(v)
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}.{b}")
    }
}

fn unknown_field(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("unknown field `")?;
    Some(rest.split('`').next()?.to_string())
}

/// The most entries a list in a built-in claim's parameters may have (the committed specs
/// have at most 16). Each claim bounds its work by products of its sizes; a list's length
/// is one more factor, and lists thousands long made runs abort on an allocation
/// (length-usage's `increasing_heads`) or run for minutes (a list of heads, of rules, of τ)
/// before any product was checked. A formulas claim's parameters are not bounded here.
pub const MAX_LIST: usize = 256;

/// The first list (depth first, in the table's order) longer than [`MAX_LIST`]: its path
/// (`a.b[2].c`) and its length.
fn too_long_list(v: &toml::Value, path: String) -> Option<(String, usize)> {
    match v {
        toml::Value::Array(a) if a.len() > MAX_LIST => Some((path, a.len())),
        toml::Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| too_long_list(x, format!("{path}[{i}]"))),
        toml::Value::Table(t) => t.iter().find_map(|(k, x)| {
            too_long_list(
                x,
                if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                },
            )
        }),
        _ => None,
    }
}

/// `a.b[2].c` → ["a", "b", "2", "c"].
fn split_path(p: &str) -> Vec<String> {
    p.replace('[', ".")
        .replace(']', "")
        .split('.')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn display_path(segs: &[&str]) -> String {
    let mut s = String::new();
    for seg in segs {
        if seg.parse::<usize>().is_ok() {
            s.push_str(&format!("[{seg}]"));
        } else {
            if !s.is_empty() {
                s.push('.');
            }
            s.push_str(seg);
        }
    }
    s
}

fn deep_merge(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => deep_merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

fn line_of(src: &str, offset: usize) -> usize {
    src[..offset.min(src.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// The 1-based line where the key path `segs` is defined in `src`.
fn locate(src: &str, segs: &[&str]) -> Option<usize> {
    use toml_edit::{ImDocument, Item, TableLike, Value};
    enum Node<'a> {
        Like(&'a dyn TableLike),
        Arr(&'a toml_edit::Array),
        Aot(&'a toml_edit::ArrayOfTables),
        Leaf,
    }
    fn of_item(i: &Item) -> Node<'_> {
        match i {
            Item::Table(t) => Node::Like(t),
            Item::ArrayOfTables(a) => Node::Aot(a),
            Item::Value(v) => of_value(v),
            Item::None => Node::Leaf,
        }
    }
    fn of_value(v: &Value) -> Node<'_> {
        match v {
            Value::InlineTable(t) => Node::Like(t),
            Value::Array(a) => Node::Arr(a),
            _ => Node::Leaf,
        }
    }
    let doc = ImDocument::parse(src).ok()?;
    let mut node = Node::Like(doc.as_table());
    let mut span = None;
    for seg in segs {
        let idx = seg.parse::<usize>().ok();
        node = match (node, idx) {
            (Node::Arr(a), Some(i)) => {
                let v = a.get(i)?;
                span = v.span();
                of_value(v)
            }
            (Node::Aot(a), Some(i)) => {
                let t = a.get(i)?;
                span = t.span();
                Node::Like(t)
            }
            (Node::Like(t), _) => {
                let (k, v) = t.get_key_value(seg)?;
                span = k.span().or_else(|| v.span());
                of_item(v)
            }
            _ => return None,
        };
    }
    span.map(|r| line_of(src, r.start))
}

/// The 1-based line where the key `key` (a dotted path such as `id` or
/// `params.rows[0].slope`) is defined in the TOML text `text`. Whole keys only:
/// `id` does not match `idx = 3`. Falls back to a line scan when `text` is not
/// valid TOML.
pub fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let segs = split_path(key);
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    locate(text, &segs).or_else(|| {
        let last = *segs.last()?;
        text.lines()
            .position(|l| {
                l.split_once('=').is_some_and(|(k, _)| {
                    let k = k.trim();
                    k == last || k.trim_matches(['"', '\'']) == last
                })
            })
            .map(|i| i + 1)
    })
}

/// The most bytes [`read_utf8`] reads from one file: 128 MiB, a hundred times the
/// largest committed certificate (1.3 MB, the trained models' weights). A larger file,
/// or one without end (`/dev/zero`, a FIFO fed forever), is an error once this many
/// bytes are read, instead of filling the memory until the process is killed.
pub const MAX_INPUT_BYTES: u64 = 128 << 20;

/// Reads a text file that must be UTF-8 (specs, targets, certificates), of at most
/// [`MAX_INPUT_BYTES`]. Invalid bytes are an error at the line of the first one.
pub fn read_utf8(path: &Path) -> Result<String, SpecError> {
    use std::io::Read;
    let file_error = |e: std::io::Error| SpecError::File {
        file: path.to_path_buf(),
        line: None,
        reason: e.to_string(),
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes))
        .map_err(file_error)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(SpecError::File {
            file: path.to_path_buf(),
            line: None,
            reason: format!(
                "the file is larger than {} MiB, the most attncheck reads from one input file",
                MAX_INPUT_BYTES >> 20
            ),
        });
    }
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let line_start = bytes[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&bytes[line_start..at])
            .chars()
            .count()
            + 1;
        SpecError::File {
            file: path.to_path_buf(),
            line: Some(bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1),
            reason: format!(
                "byte 0x{:02x} at column {column} is not valid UTF-8 (the file must be UTF-8 text)",
                bytes[at]
            ),
        }
    })
}

/// `<paper>/<claim>` from a path `…/<paper>/<claim>.toml`.
pub fn place_id(path: &Path) -> Option<String> {
    let paper = path.parent()?.file_name()?.to_str()?;
    let claim = path.file_stem()?.to_str()?;
    Some(format!("{paper}/{claim}"))
}

pub(crate) fn toml_error(path: &Path, src: &str, e: &toml::de::Error) -> SpecError {
    let line = e.span().map(|r| line_of(src, r.start));
    let msg = e.message().to_string();
    if let Some(field) = unknown_field(&msg) {
        return SpecError::Field {
            file: path.to_path_buf(),
            line,
            field,
            reason: msg,
        };
    }
    if let Some(rest) = msg.strip_prefix("missing field `") {
        let field = rest.split('`').next().unwrap_or("").to_string();
        return SpecError::Field {
            file: path.to_path_buf(),
            line,
            field,
            reason: msg,
        };
    }
    // name the key at the error's line when we can
    if let Some(l) = line {
        if let Some(text) = src.lines().nth(l - 1) {
            if let Some((k, _)) = text.split_once('=') {
                let field = k.trim().to_string();
                if !field.is_empty() && !field.starts_with('[') {
                    return SpecError::Field {
                        file: path.to_path_buf(),
                        line,
                        field,
                        reason: msg,
                    };
                }
            }
        }
    }
    SpecError::File {
        file: path.to_path_buf(),
        line,
        reason: msg,
    }
}

/// Finds every `theorems/<paper>/<claim>.toml` below `root`, sorted.
pub fn discover(root: &Path) -> Result<Vec<PathBuf>, SpecError> {
    let mut out = Vec::new();
    let rd = std::fs::read_dir(root).map_err(|e| SpecError::File {
        file: root.to_path_buf(),
        line: None,
        reason: format!(
            "cannot read the theorems directory: {e} (run from a checkout, pass --theorems DIR, or omit \
             --theorems to use the specs built into the binary)"
        ),
    })?;
    for paper in rd.flatten() {
        if !paper.path().is_dir() {
            continue;
        }
        if let Ok(files) = std::fs::read_dir(paper.path()) {
            for f in files.flatten() {
                let p = f.path();
                if p.extension().and_then(|e| e.to_str()) == Some("toml") {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The specs built into the binary (every file under `theorems/` at build time).
pub mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_specs.rs"));
}

/// Where specs are read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecSource {
    /// A directory `<dir>/<paper>/<claim>.toml`.
    Dir(PathBuf),
    /// The specs built into the binary.
    Embedded,
    /// One spec file, wherever it sits (`verify --spec FILE`).
    File(PathBuf),
}

impl std::fmt::Display for SpecSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpecSource::Dir(d) => write!(f, "the spec directory {}", d.display()),
            SpecSource::Embedded => f.write_str("the specs built into the binary"),
            SpecSource::File(p) => write!(f, "the spec file {}", p.display()),
        }
    }
}

impl SpecSource {
    /// `--theorems DIR` when given; otherwise `./theorems` when it exists (a
    /// checkout), else the specs built into the binary (an installed tool).
    pub fn choose(dir: Option<PathBuf>) -> SpecSource {
        match dir {
            Some(d) => SpecSource::Dir(d),
            None if Path::new("theorems").is_dir() => SpecSource::Dir("theorems".into()),
            None => SpecSource::Embedded,
        }
    }

    /// `--spec FILE` when given (one spec file, wherever it sits), else as [`SpecSource::choose`].
    pub fn file_or(spec: Option<PathBuf>, dir: Option<PathBuf>) -> SpecSource {
        match spec {
            Some(f) => SpecSource::File(f),
            None => SpecSource::choose(dir),
        }
    }

    /// Whether its specs must sit at `<paper>/<claim>.toml` matching their IDs (a
    /// directory's rule; a spec file named on the command line may sit anywhere).
    pub fn placed(&self) -> bool {
        !matches!(self, SpecSource::File(_))
    }

    /// Every spec file's (path, text), sorted by path. Embedded specs are named
    /// `<built-in>/<paper>/<claim>.toml` in errors.
    pub fn files(&self) -> Result<Vec<(PathBuf, String)>, SpecError> {
        match self {
            SpecSource::Dir(d) => discover(d)?
                .into_iter()
                .map(|p| read_utf8(&p).map(|t| (p, t)))
                .collect(),
            SpecSource::Embedded => Ok(embedded::EMBEDDED
                .iter()
                .map(|(rel, text)| (Path::new("<built-in>").join(rel), text.to_string()))
                .collect()),
            SpecSource::File(p) => Ok(vec![(p.clone(), read_utf8(p)?)]),
        }
    }

    /// The spec file of one claim, if present.
    pub fn find(&self, id: &str) -> Result<Option<(PathBuf, String)>, SpecError> {
        match self {
            SpecSource::Dir(d) => {
                let p = d.join(format!("{id}.toml"));
                if p.exists() {
                    read_utf8(&p).map(|t| Some((p, t)))
                } else {
                    Ok(None)
                }
            }
            SpecSource::Embedded => Ok(embedded::EMBEDDED
                .iter()
                .find(|(rel, _)| rel.strip_suffix(".toml") == Some(id))
                .map(|(rel, text)| (Path::new("<built-in>").join(rel), text.to_string()))),
            SpecSource::File(p) => {
                let text = read_utf8(p)?;
                Ok((Spec::parse(p, &text)?.id == id).then(|| (p.clone(), text)))
            }
        }
    }
}
