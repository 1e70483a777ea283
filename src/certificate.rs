//! Certificates: what a certified claim proved, restated as obligations that the
//! trusted kernel re-checks alone (`attncheck verify FILE`).
//!
//! The format is JSON:
//! ```json
//! { "format": "attncheck-certificate/1", "claim": "positional/alibi-window",
//!   "precision": 128,
//!   "obligations": [ { "name": "T∞(1179) ≤ 1/100", "formula": "(<= … 1/100)" } ] }
//! ```
//! Each formula is an S-expression over exact rational literals
//! ([`crate::kernel::expr`]); the certificate holds iff every formula evaluates to
//! `True` in outward-rounded intervals. The construction code is never consulted.
//!
//! An optional `data` section carries named matrices that formulas refer to by
//! name (see [`crate::kernel::expr`] for the exact operations over them):
//! ```json
//! "data": {
//!   "S": { "kind": "signs", "n": 2, "d": 3, "rows": ["0000000000000005", "0000000000000002"] },
//!   "B": { "kind": "sparse", "n": 2, "rows": [[[1, "4"]], [[0, "9/2"], [1, "4"]]] }
//! }
//! ```
//! A sign row is its ⌈d/64⌉ packed 64-bit words (bit c of word w is column
//! 64w + c, bit 1 = −1), each as 16 hex digits, most significant first,
//! concatenated; bits at columns ≥ d must be zero. A sparse row lists
//! [column, "p/q"] pairs with strictly increasing columns; the stored columns are
//! the row's support.

use crate::kernel::expr::{Data, Datum, SparseRows};
use crate::kernel::{expr, parse_rational, Certainty, SignMatrix};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The format tag.
pub const FORMAT: &str = "attncheck-certificate/1";

/// One proof obligation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Obligation {
    /// What it states, in words.
    pub name: String,
    /// The formula, an S-expression.
    pub formula: String,
}

/// A certificate file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Certificate {
    /// Always [`FORMAT`].
    pub format: String,
    /// The claim ID.
    pub claim: String,
    /// Precision in bits for the re-check.
    pub precision: u32,
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
                if *d == 0 || *d > 1 << 24 || *n > 1 << 24 {
                    return Err(("d".into(), "n and d must lie in 1..=2^24".into()));
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
            DataEntry::Sparse { n, rows } => {
                let mut out = Vec::with_capacity(rows.len());
                for (i, r) in rows.iter().enumerate() {
                    let mut row = Vec::with_capacity(r.len());
                    for (q, (c, v)) in r.iter().enumerate() {
                        let x = parse_rational(v)
                            .map_err(|e| (format!("rows[{i}][{q}]"), format!("`{v}`: {e}")))?;
                        row.push((*c, x));
                    }
                    out.push(row);
                }
                let b = SparseRows { n: *n, rows: out };
                b.validate().map_err(|e| ("rows".into(), e))?;
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

impl Certificate {
    /// An empty certificate for `claim` at `precision`.
    pub fn new(claim: &str, precision: u32) -> Certificate {
        Certificate {
            format: FORMAT.into(),
            claim: claim.into(),
            precision,
            obligations: Vec::new(),
            data: BTreeMap::new(),
        }
    }
    /// Adds an obligation.
    pub fn push(&mut self, name: impl Into<String>, formula: impl Into<String>) {
        self.obligations.push(Obligation {
            name: name.into(),
            formula: formula.into(),
        });
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

/// The result of re-checking one obligation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ObligationResult {
    /// Its name.
    pub name: String,
    /// The kernel's answer.
    pub result: Certainty,
}

/// Parses a certificate from JSON text; errors name the line and field.
pub fn parse(path: &Path, text: &str) -> Result<Certificate, CertificateError> {
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
    if cert.precision < 24 || cert.precision > 1 << 20 {
        return Err(fe(
            "precision".into(),
            "must be between 24 and 1048576 bits".into(),
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

/// Re-checks every obligation with the kernel. Errors (a formula that does not
/// evaluate, e.g. an unbound variable) name the obligation.
pub fn verify(path: &Path, cert: &Certificate) -> Result<Vec<ObligationResult>, CertificateError> {
    use rayon::prelude::*;
    let data = build_data(path, cert)?;
    cert.obligations
        .par_iter()
        .enumerate()
        .map(|(i, o)| {
            let result = expr::check_with(&o.formula, cert.precision, &data).map_err(|e| {
                CertificateError {
                    file: path.into(),
                    line: None,
                    field: format!("obligations[{i}].formula"),
                    reason: e.to_string(),
                }
            })?;
            Ok(ObligationResult {
                name: o.name.clone(),
                result,
            })
        })
        .collect()
}
