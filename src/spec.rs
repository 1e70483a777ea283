//! Claim specs: `theorems/<paper>/<claim>.toml`.
//!
//! A spec states what is asserted, on which instances, with which tolerance and
//! rigour. The common header is parsed here; each claim parses its own `params`
//! (merged with the chosen profile's overrides) into a typed struct with unknown
//! keys rejected. Every error names the file, the line and the field.

use crate::verdict::Verdict;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// The run profile: `quick` (default; the whole suite in minutes) or `full`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Small instances: the whole suite within a few minutes on 2 cores.
    #[default]
    Quick,
    /// The large sweeps.
    Full,
}

impl Profile {
    /// `"quick"` or `"full"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Full => "full",
        }
    }

    /// Where `attncheck run` writes this profile's reports unless told otherwise:
    /// `reports` for quick (the committed, snapshot-tested set) and `reports/full` for
    /// full, so a full sweep never overwrites the quick reports.
    ///
    /// ```
    /// use attncheck::spec::Profile;
    /// assert_eq!(Profile::Quick.default_out(), std::path::Path::new("reports"));
    /// assert_eq!(Profile::Full.default_out(), std::path::Path::new("reports/full"));
    /// ```
    pub fn default_out(self) -> std::path::PathBuf {
        match self {
            Profile::Quick => "reports".into(),
            Profile::Full => ["reports", "full"].iter().collect(),
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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

/// Parses an exact numeric literal of a spec field (`"2^-8"`, `"1/100"`, `"0.01"`).
pub fn exact(field: &str, s: &str) -> Result<rug::Rational, FieldError> {
    crate::kernel::parse_rational(s).map_err(|e| FieldError::new(field, e.to_string()))
}

/// Checks every element of a list with `f`, naming the index on failure.
pub fn ensure_each<T>(
    list: &[T],
    field: &str,
    f: impl Fn(&T) -> Result<(), String>,
) -> Result<(), FieldError> {
    ensure(!list.is_empty(), field, "must not be empty")?;
    for (i, x) in list.iter().enumerate() {
        f(x).map_err(|r| FieldError::new(format!("{field}[{i}]"), r))?;
    }
    Ok(())
}

/// Claim parameters: deserialised with unknown keys denied, then range-checked.
pub trait Params: DeserializeOwned + Serialize + Send + Sync + 'static {
    /// Range and consistency checks beyond the types.
    fn validate(&self) -> Result<(), FieldError>;
    /// The claim's statement for these parameters: the obligations that say, in
    /// formulas, what the claim asserts (DESIGN.md, "Trust"). Trusted: pure, small,
    /// built from the spec and the `hints` alone, and sound for every hint value.
    /// `None` for claims that certify nothing by statement.
    fn statement(
        &self,
        claim: &str,
        hints: &crate::certificate::Hints,
    ) -> Option<Result<crate::kernel::Statement, String>> {
        let _ = (claim, hints);
        None
    }
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
    params: toml::Table,
    #[serde(default)]
    profiles: Profiles,
}

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
    params: toml::Table,
    quick: toml::Table,
    full: toml::Table,
    src: String,
}

impl Spec {
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
            params: h.params,
            quick: h.profiles.quick,
            full: h.profiles.full,
            src: src.to_string(),
        };
        let field_err = |field: &str, reason: String| spec.field_error(&[field], reason);
        if spec.precision < 24 || spec.precision > 1 << 20 {
            return Err(field_err(
                "precision",
                format!("{} bits is out of range: use 24 to 1048576", spec.precision),
            ));
        }
        if !(spec.check_tolerance.is_finite() && spec.check_tolerance >= 0.0) {
            return Err(field_err(
                "check_tolerance",
                "must be a finite number ≥ 0".into(),
            ));
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
        let parts: Vec<&str> = spec.id.split('/').collect();
        if parts.len() != 2 || parts.iter().any(|p| p.is_empty()) {
            return Err(field_err(
                "id",
                format!("`{}` is not of the form <paper>/<claim>", spec.id),
            ));
        }
        Ok(spec)
    }

    /// Reads and parses a spec file.
    pub fn load(path: &Path) -> Result<Spec, SpecError> {
        let src = read_spec_text(path)?;
        Spec::parse(path, &src)
    }

    /// The claim parameters for `profile`: `params` overlaid with
    /// `profiles.<profile>`, deserialised into `P` (unknown keys are errors) and
    /// validated. Errors name the line of the offending field.
    pub fn params<P: Params>(&self, profile: Profile) -> Result<P, SpecError> {
        let merged = toml::Value::Table(self.merged(profile));
        let p: P = serde_path_to_error::deserialize(merged).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { path };
            let inner = e.into_inner().to_string();
            let field = unknown_field(&inner)
                .map(|u| join(&path, &u))
                .unwrap_or(path);
            self.param_error(profile, &field, inner)
        })?;
        p.validate()
            .map_err(|fe| self.param_error(profile, &fe.field, fe.reason))?;
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
        t
    }

    /// An error about a parameter field, located in the profile section when the
    /// profile sets it, else in `[params]`.
    pub fn param_error(&self, profile: Profile, field: &str, reason: String) -> SpecError {
        let segs = split_path(field);
        let mut in_prof = vec!["profiles", profile.as_str()];
        in_prof.extend(segs.iter().map(String::as_str));
        if locate(&self.src, &in_prof).is_some() {
            return self.field_error(&in_prof, reason);
        }
        let mut in_params = vec!["params"];
        in_params.extend(segs.iter().map(String::as_str));
        self.field_error(&in_params, reason)
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

fn toml_error(path: &Path, src: &str, e: &toml::de::Error) -> SpecError {
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

    /// Every spec file's (path, text), sorted by path. Embedded specs are named
    /// `<built-in>/<paper>/<claim>.toml` in errors.
    pub fn files(&self) -> Result<Vec<(PathBuf, String)>, SpecError> {
        match self {
            SpecSource::Dir(d) => discover(d)?
                .into_iter()
                .map(|p| read_spec_text(&p).map(|t| (p, t)))
                .collect(),
            SpecSource::Embedded => Ok(embedded::EMBEDDED
                .iter()
                .map(|(rel, text)| (Path::new("<built-in>").join(rel), text.to_string()))
                .collect()),
        }
    }

    /// The spec file of one claim, if present.
    pub fn find(&self, id: &str) -> Result<Option<(PathBuf, String)>, SpecError> {
        match self {
            SpecSource::Dir(d) => {
                let p = d.join(format!("{id}.toml"));
                if p.exists() {
                    read_spec_text(&p).map(|t| Some((p, t)))
                } else {
                    Ok(None)
                }
            }
            SpecSource::Embedded => Ok(embedded::EMBEDDED
                .iter()
                .find(|(rel, _)| rel.strip_suffix(".toml") == Some(id))
                .map(|(rel, text)| (Path::new("<built-in>").join(rel), text.to_string()))),
        }
    }
}

/// Reads a spec file; invalid UTF-8 is an error naming the line of the first bad byte.
fn read_spec_text(path: &Path) -> Result<String, SpecError> {
    let bytes = std::fs::read(path).map_err(|e| SpecError::File {
        file: path.to_path_buf(),
        line: None,
        reason: e.to_string(),
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        SpecError::File {
            file: path.to_path_buf(),
            line: Some(e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1),
            reason: format!("not valid UTF-8 (byte offset {at})"),
        }
    })
}
