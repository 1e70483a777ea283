//! A small reader for certificates, formats `attncheck-certificate/1` and `/2`.
//!
//! The Coq translation is an independent checker: it reads the file itself,
//! from the format document, and does not depend on the reader the kernel uses.
//! Version 1 has no `expect` (every obligation asserts that its formula holds);
//! version 2 adds `expect: "holds" | "fails"`, `profile` and `hints`.

use super::CoqError;
use crate::kernel::expr::{Data, Datum, SparseRows};
use crate::kernel::{parse_rational, SignMatrix};
use rug::Rational;
use serde_json::Value;
use std::collections::BTreeMap;

/// What a certificate asserts about one formula.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The formula is true.
    Holds,
    /// The formula is false (the certificate proves its negation).
    Fails,
}

/// One obligation.
#[derive(Clone, Debug, PartialEq)]
pub struct Obligation {
    /// What it states, in words.
    pub name: String,
    /// The S-expression.
    pub formula: String,
    /// Holds or fails.
    pub expect: Expect,
}

/// One named datum.
#[derive(Clone, Debug, PartialEq)]
pub enum CertDatum {
    /// A ±1 sign matrix: per row its ⌈d/64⌉ words (bit c of word w is column 64w + c, 1 = −1).
    Signs {
        /// Rows.
        n: usize,
        /// Columns.
        d: usize,
        /// Words per row.
        rows: Vec<Vec<u64>>,
    },
    /// A row-sparse rational matrix: per row its (column, value) pairs.
    Sparse {
        /// Rows and columns.
        n: usize,
        /// The rows.
        rows: Vec<Vec<(usize, Rational)>>,
    },
    /// A kind this translator does not know (kept so that formulas using it are
    /// listed as kernel-only, never dropped).
    Other(String),
}

/// A certificate as the Coq translation reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct Cert {
    /// The format tag.
    pub format: String,
    /// The claim ID.
    pub claim: String,
    /// The profile (v2), if given.
    pub profile: Option<String>,
    /// Precision in bits of the kernel re-check; also the Coq `interval` precision.
    pub precision: u32,
    /// Witness values the statement builder took (v2); they never change a formula.
    pub hints: BTreeMap<String, String>,
    /// The obligations.
    pub obligations: Vec<Obligation>,
    /// Named data.
    pub data: BTreeMap<String, CertDatum>,
}

fn bad(field: &str, reason: impl Into<String>) -> CoqError {
    CoqError::Certificate {
        field: field.into(),
        reason: reason.into(),
    }
}

fn str_field<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a str, CoqError> {
    v.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| bad(&format!("{at}{key}"), "missing or not a string"))
}

fn usize_field(v: &Value, key: &str, at: &str) -> Result<usize, CoqError> {
    v.get(key)
        .and_then(Value::as_u64)
        .and_then(|x| usize::try_from(x).ok())
        .ok_or_else(|| {
            bad(
                &format!("{at}{key}"),
                "missing or not a nonnegative integer",
            )
        })
}

impl Cert {
    /// Parses certificate JSON (format 1 or 2).
    pub fn parse(text: &str) -> Result<Cert, CoqError> {
        let v: Value = serde_json::from_str(text).map_err(|e| bad("", e.to_string()))?;
        let format = str_field(&v, "format", "")?.to_string();
        let v2 = match format.as_str() {
            "attncheck-certificate/1" => false,
            "attncheck-certificate/2" => true,
            f => return Err(bad("format", format!("unknown format `{f}`"))),
        };
        let claim = str_field(&v, "claim", "")?.to_string();
        let precision = v
            .get("precision")
            .and_then(Value::as_u64)
            .and_then(|p| u32::try_from(p).ok())
            .filter(|p| (24..=1 << 20).contains(p))
            .ok_or_else(|| bad("precision", "must be an integer between 24 and 1048576"))?;
        let profile = v.get("profile").and_then(Value::as_str).map(String::from);
        let mut hints = BTreeMap::new();
        if let Some(h) = v.get("hints").and_then(Value::as_object) {
            for (k, x) in h {
                let s = x
                    .as_str()
                    .map(String::from)
                    .unwrap_or_else(|| x.to_string());
                hints.insert(k.clone(), s);
            }
        }
        let obs = v
            .get("obligations")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("obligations", "missing or not a list"))?;
        let mut obligations = Vec::with_capacity(obs.len());
        for (i, o) in obs.iter().enumerate() {
            let at = format!("obligations[{i}].");
            let expect = match o.get("expect").and_then(Value::as_str) {
                None if !v2 => Expect::Holds,
                Some("holds") => Expect::Holds,
                Some("fails") => Expect::Fails,
                _ => {
                    return Err(bad(
                        &format!("{at}expect"),
                        "must be \"holds\" or \"fails\"",
                    ))
                }
            };
            obligations.push(Obligation {
                name: str_field(o, "name", &at)?.to_string(),
                formula: str_field(o, "formula", &at)?.to_string(),
                expect,
            });
        }
        if obligations.is_empty() {
            return Err(bad(
                "obligations",
                "a certificate with no obligation proves nothing",
            ));
        }
        let mut data = BTreeMap::new();
        if let Some(d) = v.get("data").and_then(Value::as_object) {
            for (name, e) in d {
                data.insert(name.clone(), parse_datum(e, &format!("data.{name}."))?);
            }
        }
        Ok(Cert {
            format,
            claim,
            profile,
            precision,
            hints,
            obligations,
            data,
        })
    }

    /// The kernel form of the data (for the untrusted hints the translation
    /// takes from the kernel: witnesses of disjunctions, values of ceilings).
    pub(crate) fn kernel_data(&self) -> Data {
        let mut out = Data::new();
        for (name, d) in &self.data {
            match d {
                CertDatum::Signs { n, d, rows } => {
                    let bits = rows.iter().flatten().copied().collect();
                    if let Some(s) = SignMatrix::from_words(*n, *d, bits) {
                        out.insert(name.clone(), Datum::Signs(s));
                    }
                }
                CertDatum::Sparse { n, rows } => {
                    out.insert(
                        name.clone(),
                        Datum::Sparse(SparseRows {
                            n: *n,
                            rows: rows.clone(),
                        }),
                    );
                }
                CertDatum::Other(_) => {}
            }
        }
        out
    }
}

fn parse_datum(e: &Value, at: &str) -> Result<CertDatum, CoqError> {
    let kind = str_field(e, "kind", at)?;
    match kind {
        "signs" => {
            let n = usize_field(e, "n", at)?;
            let d = usize_field(e, "d", at)?;
            if d == 0 || d > 1 << 24 || n > 1 << 24 {
                return Err(bad(&format!("{at}d"), "n and d must lie in 1..=2^24"));
            }
            let words = d.div_ceil(64);
            let rows = e
                .get("rows")
                .and_then(Value::as_array)
                .ok_or_else(|| bad(&format!("{at}rows"), "missing or not a list"))?;
            if rows.len() != n {
                return Err(bad(
                    &format!("{at}rows"),
                    format!("{} rows for n = {n}", rows.len()),
                ));
            }
            let mut out = Vec::with_capacity(n);
            for (l, r) in rows.iter().enumerate() {
                let r = r
                    .as_str()
                    .filter(|r| r.len() == 16 * words)
                    .ok_or_else(|| {
                        bad(
                            &format!("{at}rows[{l}]"),
                            format!("needs {} hex digits", 16 * words),
                        )
                    })?;
                let mut row = Vec::with_capacity(words);
                for w in 0..words {
                    let h = r.get(16 * w..16 * w + 16).unwrap_or("");
                    let x = u64::from_str_radix(h, 16).map_err(|_| {
                        bad(&format!("{at}rows[{l}]"), format!("bad hex word `{h}`"))
                    })?;
                    row.push(x);
                }
                let spare = words * 64 - d;
                if spare > 0 && row[words - 1] >> (64 - spare) != 0 {
                    return Err(bad(&format!("{at}rows[{l}]"), "bits set at columns ≥ d"));
                }
                out.push(row);
            }
            Ok(CertDatum::Signs { n, d, rows: out })
        }
        "sparse" => {
            let n = usize_field(e, "n", at)?;
            let rows = e
                .get("rows")
                .and_then(Value::as_array)
                .ok_or_else(|| bad(&format!("{at}rows"), "missing or not a list"))?;
            if rows.len() != n {
                return Err(bad(
                    &format!("{at}rows"),
                    format!("{} rows for n = {n}", rows.len()),
                ));
            }
            let mut out = Vec::with_capacity(n);
            for (i, r) in rows.iter().enumerate() {
                let r = r
                    .as_array()
                    .ok_or_else(|| bad(&format!("{at}rows[{i}]"), "not a list"))?;
                let mut row: Vec<(usize, Rational)> = Vec::with_capacity(r.len());
                for (q, p) in r.iter().enumerate() {
                    let f = format!("{at}rows[{i}][{q}]");
                    let pair = p.as_array().filter(|p| p.len() == 2);
                    let (c, x) = pair
                        .and_then(|p| Some((p[0].as_u64()?, p[1].as_str()?)))
                        .ok_or_else(|| bad(&f, "expected [column, \"p/q\"]"))?;
                    let c = usize::try_from(c).map_err(|_| bad(&f, "column too large"))?;
                    if c >= n || row.last().is_some_and(|(l, _)| *l >= c) {
                        return Err(bad(&f, "columns must be < n and strictly increasing"));
                    }
                    let x = parse_rational(x).map_err(|e| bad(&f, e.to_string()))?;
                    row.push((c, x));
                }
                out.push(row);
            }
            Ok(CertDatum::Sparse { n, rows: out })
        }
        other => Ok(CertDatum::Other(other.to_string())),
    }
}
