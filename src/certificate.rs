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

use crate::kernel::{expr, Certainty};
use serde::{Deserialize, Serialize};
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
}

impl Certificate {
    /// An empty certificate for `claim` at `precision`.
    pub fn new(claim: &str, precision: u32) -> Certificate {
        Certificate {
            format: FORMAT.into(),
            claim: claim.into(),
            precision,
            obligations: Vec::new(),
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
    cert.obligations
        .par_iter()
        .enumerate()
        .map(|(i, o)| {
            let result = expr::check(&o.formula, cert.precision).map_err(|e| CertificateError {
                file: path.into(),
                line: None,
                field: format!("obligations[{i}].formula"),
                reason: e.to_string(),
            })?;
            Ok(ObligationResult {
                name: o.name.clone(),
                result,
            })
        })
        .collect()
}
