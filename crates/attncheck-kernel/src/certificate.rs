//! Certificates: a claim's statement, its data and the hints its builder took,
//! so that `attncheck verify` can rebuild the statement from the spec, require the
//! certificate's statement to equal it, and decide it with the kernel alone.
//!
//! The format (`docs/certificate-format.md` is the normative document):
//! ```json
//! { "format": "attncheck-certificate/6", "claim": "positional/alibi-window",
//!   "profile": "quick", "precision": 128, "hints": { "t_star": "1/8" },
//!   "obligations": [ { "name": "T∞(1179) ≤ 1/100", "formula": "(<= … 1/100)", "expect": "holds" } ],
//!   "data": { "S": { "kind": "signs", "n": 2, "d": 3, "rows": ["0000000000000005", "0000000000000002"] } } }
//! ```
//! Each formula is an S-expression over exact rational literals and named data
//! ([`crate::expr`]). `expect: "fails"` marks an obligation the claim
//! asserts to be false (a refutation). A sign row is its ⌈d/64⌉ packed 64-bit
//! words (bit c of word w is column 64w + c, bit 1 = −1), each as 16 hex digits,
//! most significant first, concatenated; bits at columns ≥ d must be zero. A sparse
//! row lists [column, "p/q"] pairs with strictly increasing columns; the stored
//! columns are the row's support.

use crate::expr::{Data, Datum, SparseRows};
use crate::layer_data::LayerData;
use crate::{expr, parse_rational, Expect, Mat, SignMatrix, Statement};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// The format tag.
pub const FORMAT: &str = "attncheck-certificate/6";

/// The run profile a statement was built from: `quick` (default; the whole suite in
/// minutes) or `full`. The application's specs give each profile its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
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
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Witness values a statement builder takes from the run (e.g. a t* found by
/// search). They choose *which* statement is proven, never whether a formula is
/// true: a builder must give a sound statement for any hint value.
pub type Hints = BTreeMap<String, String>;

/// One proof obligation, as stored in the file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Obligation {
    /// What it states, in words.
    pub name: String,
    /// The formula, an S-expression.
    pub formula: String,
    /// `holds` (asserted true) or `fails` (asserted false: a refutation).
    pub expect: Expect,
}

/// A certificate file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Certificate {
    /// Always [`FORMAT`].
    pub format: String,
    /// The claim ID.
    pub claim: String,
    /// The spec profile whose parameters the statement was built from.
    pub profile: Profile,
    /// Precision in bits for the re-check.
    pub precision: u32,
    /// Values the statement builder took from the witness search.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hints: Hints,
    /// The obligations.
    pub obligations: Vec<Obligation>,
    /// Named data the formulas refer to (optional).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data: BTreeMap<String, DataEntry>,
}

/// One named datum, as stored in the file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum DataEntry {
    /// A ±1 sign matrix, bit-packed rows as hex.
    Signs {
        /// Rows.
        n: usize,
        /// Columns.
        d: usize,
        /// One hex string per row.
        rows: Vec<String>,
    },
    /// A row-sparse rational matrix.
    Sparse {
        /// Rows and columns.
        n: usize,
        /// Per row, (column, exact rational literal) pairs.
        rows: Vec<Vec<(usize, String)>>,
    },
    // ───── BEGIN `layer` datum (clusters group) ─────
    /// The exact initial data of the discrete map (D) in layer form
    /// ([`crate::layer_data::LayerData`]); the kernel iterates it, the file
    /// carries no enclosure.
    Layer {
        /// The form of the map: only `"layer"` (x^{k+1} = x^k + Δt V Σ_j P_ij x_j^k).
        form: String,
        /// Tokens per configuration.
        n: usize,
        /// Dimension.
        d: usize,
        /// Δt, an exact rational literal.
        dt: String,
        /// Number of steps K.
        steps: usize,
        /// Q (m × d), rows of exact literals.
        q: Vec<Vec<String>>,
        /// K (m × d).
        k: Vec<Vec<String>>,
        /// V (d × d).
        v: Vec<Vec<String>>,
        /// The initial configurations (runs), each n rows of d exact literals.
        tokens: Vec<Vec<Vec<String>>>,
    },
    // ───── END `layer` datum ─────
    /// The attention weights of a trained model ([`crate::weights::AttnWeights`]): f32
    /// bit patterns, exact, with their SHA-256 (checked when read).
    #[serde(rename = "attn-weights")]
    AttnWeights {
        /// Hidden size d.
        hidden: usize,
        /// Heads H.
        heads: usize,
        /// SHA-256 of the values ([`crate::weights::digest`]).
        sha256: String,
        /// One entry per layer.
        layers: Vec<AttnLayerEntry>,
        /// ε_LN, one f32 (with the embedding).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ln_eps: Option<String>,
        /// The token embedding E, 256 × d (layer 0's input; with ε_LN).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        embedding: Option<String>,
    },
}

/// One layer of an `attn-weights` entry: 8 lower-case hex digits per f32 value,
/// row-major ([`crate::weights`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttnLayerEntry {
    /// LayerNorm gain γ (d values).
    pub ln_gain: String,
    /// LayerNorm shift β (d values).
    pub ln_shift: String,
    /// W_Q (d × d, input × output).
    pub w_q: String,
    /// b_Q (d values).
    pub b_q: String,
    /// W_K (d × d).
    pub w_k: String,
    /// b_K (d values).
    pub b_k: String,
}

impl DataEntry {
    /// The file form of a sign matrix.
    pub fn from_signs(s: &SignMatrix) -> DataEntry {
        DataEntry::Signs {
            n: s.n(),
            d: s.d(),
            rows: (0..s.n())
                .map(|l| s.row(l).iter().map(|w| format!("{w:016x}")).collect())
                .collect(),
        }
    }
    /// The file form of a row-sparse rational matrix.
    pub fn from_sparse(b: &SparseRows) -> DataEntry {
        DataEntry::Sparse {
            n: b.n,
            rows: b
                .rows
                .iter()
                .map(|r| r.iter().map(|(c, v)| (*c, v.to_string())).collect())
                .collect(),
        }
    }
    /// The kernel form; errors name the sub-field (relative to the entry).
    pub fn to_datum(&self) -> Result<Datum, (String, String)> {
        match self {
            DataEntry::Signs { n, d, rows } => {
                // n = 0 passed here, though the message said 1..=2^24
                if *n == 0 || *n > 1 << 24 {
                    return Err(("n".into(), format!("is {n}; n must lie in 1..=2^24")));
                }
                if *d == 0 || *d > 1 << 24 {
                    return Err(("d".into(), format!("is {d}; d must lie in 1..=2^24")));
                }
                if rows.len() != *n {
                    return Err((
                        "rows".into(),
                        format!("has {} rows, but n = {n}", rows.len()),
                    ));
                }
                let words = d.div_ceil(64);
                let mut bits = Vec::with_capacity(n * words);
                for (l, r) in rows.iter().enumerate() {
                    if r.len() != 16 * words {
                        return Err((
                            format!("rows[{l}]"),
                            format!(
                                "has {} hex digits, but d = {d} needs {} ({} words)",
                                r.len(),
                                16 * words,
                                words
                            ),
                        ));
                    }
                    for w in 0..words {
                        let h = &r[16 * w..16 * w + 16];
                        let v = u64::from_str_radix(h, 16)
                            .map_err(|_| (format!("rows[{l}]"), format!("bad hex word `{h}`")))?;
                        bits.push(v);
                    }
                }
                SignMatrix::from_words(*n, *d, bits)
                    .map(Datum::Signs)
                    .ok_or_else(|| {
                        (
                            "rows".into(),
                            format!("a row has bits set at columns ≥ d = {d}"),
                        )
                    })
            }
            DataEntry::Layer { .. } => self.layer_to_datum(),
            DataEntry::AttnWeights {
                hidden,
                heads,
                sha256,
                layers,
                ln_eps,
                embedding,
            } => {
                let hex = layers
                    .iter()
                    .map(|l| {
                        [&l.ln_gain, &l.ln_shift, &l.w_q, &l.b_q, &l.w_k, &l.b_k].map(String::clone)
                    })
                    .collect();
                let input = match (ln_eps, embedding) {
                    (None, None) => None,
                    (Some(e), Some(x)) => Some(crate::weights::InputHex {
                        ln_eps: e.clone(),
                        embedding: x.clone(),
                    }),
                    (None, Some(_)) => {
                        return Err(("ln_eps".into(), "missing (the embedding needs it)".into()))
                    }
                    (Some(_), None) => {
                        return Err(("embedding".into(), "missing (ln_eps needs it)".into()))
                    }
                };
                crate::weights::AttnWeights::new(*hidden, *heads, sha256, hex, input)
                    .map(Datum::Attn)
            }
            DataEntry::Sparse { n, rows } => {
                let mut out = Vec::with_capacity(rows.len());
                for (i, r) in rows.iter().enumerate() {
                    let mut row = Vec::with_capacity(r.len());
                    for (q, (c, v)) in r.iter().enumerate() {
                        let x = parse_rational(v)
                            .map_err(|e| (format!("rows[{i}][{q}][1]"), e.to_string()))?;
                        row.push((*c, x));
                    }
                    out.push(row);
                }
                let b = SparseRows { n: *n, rows: out };
                b.validate().map_err(|e| ("rows".into(), e.to_string()))?;
                Ok(Datum::Sparse(b))
            }
        }
    }
}

/// The kernel form of a certificate's data; errors name the field.
fn build_data(path: &Path, cert: &Certificate) -> Result<Data, CertificateError> {
    let mut data = Data::new();
    for (name, e) in &cert.data {
        let d = e.to_datum().map_err(|(f, r)| CertificateError {
            file: path.into(),
            line: None,
            field: format!("data.{name}.{f}"),
            reason: r,
        })?;
        data.insert(name.clone(), d);
    }
    Ok(data)
}

impl DataEntry {
    /// The file form of a kernel datum.
    pub fn from_datum(d: &Datum) -> DataEntry {
        match d {
            Datum::Signs(s) => DataEntry::from_signs(s),
            Datum::Sparse(b) => DataEntry::from_sparse(b),
            Datum::Layer(l) => DataEntry::from_layer(l),
            Datum::Attn(w) => DataEntry::AttnWeights {
                hidden: w.hidden(),
                heads: w.heads(),
                sha256: w.sha256().to_string(),
                layers: w
                    .hex()
                    .iter()
                    .map(|[g, b, wq, bq, wk, bk]| AttnLayerEntry {
                        ln_gain: g.clone(),
                        ln_shift: b.clone(),
                        w_q: wq.clone(),
                        b_q: bq.clone(),
                        w_k: wk.clone(),
                        b_k: bk.clone(),
                    })
                    .collect(),
                ln_eps: w.input().map(|i| i.ln_eps.clone()),
                embedding: w.input().map(|i| i.embedding.clone()),
            },
        }
    }
}

// ───── BEGIN `layer` datum conversions (clusters group) ─────
impl DataEntry {
    /// The file form of a layer datum: its exact data only.
    pub fn from_layer(l: &LayerData) -> DataEntry {
        let rows = |m: &Mat| -> Vec<Vec<String>> {
            (0..m.rows)
                .map(|i| m.row(i).iter().map(|x| x.to_string()).collect())
                .collect()
        };
        DataEntry::Layer {
            form: "layer".into(),
            n: l.n(),
            d: l.d(),
            dt: l.dt().to_string(),
            steps: l.steps(),
            q: rows(l.q()),
            k: rows(l.k()),
            v: rows(l.v()),
            tokens: l.runs().iter().map(rows).collect(),
        }
    }

    fn layer_to_datum(&self) -> Result<Datum, (String, String)> {
        let DataEntry::Layer {
            form,
            n,
            d,
            dt,
            steps,
            q,
            k,
            v,
            tokens,
        } = self
        else {
            unreachable!("called on a layer entry")
        };
        if form != "layer" {
            return Err((
                "form".into(),
                format!("`{form}`: only \"layer\" is defined"),
            ));
        }
        // shape limits before anything is parsed (LayerData::new checks them again)
        if *n == 0 || *n > 512 || *d == 0 || *d > 64 {
            return Err(("n".into(), "n must lie in 1..=512 and d in 1..=64".into()));
        }
        let mat = |field: &str, rows: &[Vec<String>], r: Option<usize>| {
            if rows.is_empty() || rows.len() > 512 || r.is_some_and(|r| rows.len() != r) {
                return Err((
                    field.to_string(),
                    format!(
                        "has {} rows; expected {}",
                        rows.len(),
                        r.map_or("1..=512".to_string(), |r| r.to_string())
                    ),
                ));
            }
            let mut data = Vec::with_capacity(rows.len() * d);
            for (i, row) in rows.iter().enumerate() {
                if row.len() != *d {
                    return Err((
                        format!("{field}[{i}]"),
                        format!("has {} entries; d = {d}", row.len()),
                    ));
                }
                for (j, x) in row.iter().enumerate() {
                    data.push(
                        parse_rational(x)
                            .map_err(|e| (format!("{field}[{i}][{j}]"), e.to_string()))?,
                    );
                }
            }
            Ok(Mat {
                rows: rows.len(),
                cols: *d,
                data,
            })
        };
        let dt = parse_rational(dt).map_err(|e| ("dt".to_string(), e.to_string()))?;
        let q = mat("q", q, None)?;
        let k = mat("k", k, Some(q.rows))?;
        let v = mat("v", v, Some(*d))?;
        if tokens.is_empty() || tokens.len() > crate::layer_data::MAX_RUNS {
            return Err((
                "tokens".into(),
                format!(
                    "must list 1 to {} initial configurations",
                    crate::layer_data::MAX_RUNS
                ),
            ));
        }
        let runs = tokens
            .iter()
            .enumerate()
            .map(|(r, t)| mat(&format!("tokens[{r}]"), t, Some(*n)))
            .collect::<Result<Vec<_>, _>>()?;
        LayerData::new(q, k, v, dt, *steps, runs).map(Datum::Layer)
    }
}

/// The first field in which two layer entries differ (for the rejection message).
fn layer_difference(x: &DataEntry, y: &DataEntry) -> String {
    let (Ok(a), Ok(b)) = (serde_json::to_value(x), serde_json::to_value(y)) else {
        return String::new();
    };
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return String::new();
    };
    a.iter()
        .find(|(k, v)| b.get(*k) != Some(*v))
        .map(|(k, _)| format!(" (field `{k}`)"))
        .unwrap_or_default()
}
// ───── END `layer` datum conversions ─────

impl Certificate {
    /// The certificate of a statement: its obligations and data, the profile and
    /// hints it was built from, and the precision that decided it.
    pub fn of(st: &Statement, profile: Profile, precision: u32, hints: &Hints) -> Certificate {
        Certificate {
            format: FORMAT.into(),
            claim: st.claim.clone(),
            profile,
            precision,
            hints: hints.clone(),
            obligations: st
                .obligations
                .iter()
                .map(|o| Obligation {
                    name: o.name.clone(),
                    formula: o.formula.clone(),
                    expect: o.expect,
                })
                .collect(),
            data: st
                .data
                .iter()
                .map(|(k, v)| (k.clone(), DataEntry::from_datum(v)))
                .collect(),
        }
    }

    /// The kernel form of the certificate's own statement (used when no spec is
    /// consulted); errors name the field.
    pub fn statement(&self, path: &Path) -> Result<Statement, CertificateError> {
        let mut st = Statement::new(&self.claim);
        st.data = build_data(path, self)?;
        for o in &self.obligations {
            st.assert(o.name.clone(), o.formula.clone());
            if o.expect == Expect::Fails {
                st.expect_fails(std::slice::from_ref(&o.name))
                    .expect("just added");
            }
        }
        Ok(st)
    }

    /// The first difference between this certificate's statement and `expected`
    /// (the one rebuilt from the spec), or `None` when they are the same statement.
    pub fn statement_difference(&self, expected: &Certificate) -> Option<String> {
        if self.claim != expected.claim {
            return Some(format!(
                "it is a certificate of `{}`, not of `{}`",
                self.claim, expected.claim
            ));
        }
        let (a, b) = (&self.obligations, &expected.obligations);
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            if x.name != y.name {
                return Some(format!(
                    "obligations[{i}] is named `{}`, the statement's is `{}`",
                    x.name, y.name
                ));
            }
            if x.formula != y.formula {
                return Some(format!(
                    "obligations[{i}] ({}) has formula `{}`, the statement's is `{}`",
                    x.name,
                    abbreviate(&x.formula),
                    abbreviate(&y.formula)
                ));
            }
            if x.expect != y.expect {
                return Some(format!(
                    "obligations[{i}] ({}) is marked `{}`, the statement says `{}`",
                    x.name,
                    x.expect.as_str(),
                    y.expect.as_str()
                ));
            }
        }
        if a.len() != b.len() {
            return Some(format!(
                "it has {} obligations, the statement has {}",
                a.len(),
                b.len()
            ));
        }
        for (k, v) in &expected.data {
            match self.data.get(k) {
                None => return Some(format!("datum `{k}` is missing")),
                Some(x) if x != v => {
                    return Some(format!(
                        "datum `{k}` differs from the one the statement derives{}",
                        first_data_difference(x, v)
                    ))
                }
                _ => {}
            }
        }
        if let Some(k) = self.data.keys().find(|k| !expected.data.contains_key(*k)) {
            return Some(format!("datum `{k}` is not part of the statement"));
        }
        None
    }
}

fn abbreviate(s: &str) -> String {
    if s.chars().count() <= 120 {
        s.to_string()
    } else {
        let head: String = s.chars().take(117).collect();
        format!("{head}…")
    }
}

fn first_data_difference(x: &DataEntry, y: &DataEntry) -> String {
    match (x, y) {
        (DataEntry::Signs { rows: a, .. }, DataEntry::Signs { rows: b, .. }) => a
            .iter()
            .zip(b)
            .position(|(p, q)| p != q)
            .map(|i| format!(" (first at row {i})"))
            .unwrap_or_default(),
        (DataEntry::Sparse { rows: a, .. }, DataEntry::Sparse { rows: b, .. }) => a
            .iter()
            .zip(b)
            .position(|(p, q)| p != q)
            .map(|i| format!(" (first at row {i})"))
            .unwrap_or_default(),
        (DataEntry::Layer { .. }, DataEntry::Layer { .. })
        | (DataEntry::AttnWeights { .. }, DataEntry::AttnWeights { .. }) => layer_difference(x, y),
        _ => " (another kind)".into(),
    }
}

/// A malformed certificate.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{}: {field}: {reason}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct CertificateError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The field (e.g. `obligations[3].formula`).
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

/// The highest working precision a spec may ask for, in bits. A run that cannot
/// decide a comparison retries at twice the precision, at most [`ESCALATIONS`]
/// (= 2) times, so a spec at this bound may run at up to 16384 bits; the committed
/// specs use at most 256. Beyond it a run takes minutes per claim with nothing to
/// show, so the spec is refused instead. (The application's `spec::MAX_PRECISION`.)
pub const MAX_SPEC_PRECISION: u32 = 4096;

/// How many times a run doubles the precision before it stays `inconclusive`
/// (the application's `app::ESCALATIONS`).
pub const ESCALATIONS: u32 = 2;

/// The highest precision a certificate may ask for, even under `verify --no-spec`:
/// the highest a run can decide a statement at ([`MAX_SPEC_PRECISION`], doubled
/// [`ESCALATIONS`] times). Against the spec, `verify` accepts only the precisions
/// the spec's run uses (the application's `app::run_precisions`).
pub const MAX_PRECISION: u32 = MAX_SPEC_PRECISION << ESCALATIONS;

/// Parses a certificate from JSON text; errors name the field (and the line, where
/// the JSON reader knows it; the application's `certificate::parse` finds the line of
/// every field).
pub fn parse(path: &Path, text: &str) -> Result<Certificate, CertificateError> {
    // the version first, so that an old or foreign file gets a clear message
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        match v.get("format").and_then(|f| f.as_str()) {
            Some(FORMAT) => {}
            Some(other) => {
                return Err(CertificateError {
                    file: path.into(),
                    line: None,
                    field: "format".into(),
                    reason: format!(
                        "expected `{FORMAT}`, found `{other}` (regenerate the certificate with `attncheck run`; \
                         docs/certificate-format.md lists the versions)"
                    ),
                })
            }
            None => {}
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let cert: Certificate = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        CertificateError {
            file: path.into(),
            line: Some(inner.line()),
            field,
            reason: inner.to_string(),
        }
    })?;
    // the line of a field is the application's to find (its error messages); the
    // kernel names the field
    let fe = |field: String, reason: String| CertificateError {
        file: path.into(),
        line: None,
        field,
        reason,
    };
    if cert.format != FORMAT {
        return Err(fe(
            "format".into(),
            format!("expected `{FORMAT}`, found `{}`", cert.format),
        ));
    }
    if cert.precision < 24 || cert.precision > MAX_PRECISION {
        return Err(fe(
            "precision".into(),
            format!("must be between 24 and {MAX_PRECISION} bits"),
        ));
    }
    if cert.obligations.is_empty() {
        return Err(fe(
            "obligations".into(),
            "a certificate with no obligation proves nothing".into(),
        ));
    }
    build_data(path, &cert)?;
    for (i, o) in cert.obligations.iter().enumerate() {
        expr::parse(&o.formula)
            .map_err(|e| fe(format!("obligations[{i}].formula"), e.to_string()))?;
    }
    Ok(cert)
}
