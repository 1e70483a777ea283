//! The data a certificate carries ([`Datum`]), and how a formula names them.

use super::syntax::{err, ExprError, Sexp};
use crate::SignMatrix;
use rug::Rational;
use std::collections::BTreeMap;

/// A row-sparse rational matrix: `rows[i]` lists (column, value) with strictly
/// increasing columns < n; the stored columns are row i's support.
#[derive(Clone, Debug, PartialEq)]
pub struct SparseRows {
    /// Number of columns (and rows).
    pub n: usize,
    /// The rows.
    pub rows: Vec<Vec<(usize, Rational)>>,
}

/// Why a [`SparseRows`] is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SparseRowsError {
    /// The number of rows is not n.
    #[error("has {rows} rows for n = {n}")]
    RowCount {
        /// The number of rows.
        rows: usize,
        /// The declared size.
        n: usize,
    },
    /// A stored column is not below n.
    #[error("row {row}: column {column} is not below n = {n}")]
    Column {
        /// The row.
        row: usize,
        /// The column.
        column: usize,
        /// The declared size.
        n: usize,
    },
    /// A row's columns are not strictly increasing.
    #[error("row {row}: columns must be strictly increasing")]
    Order {
        /// The row.
        row: usize,
    },
}

impl SparseRows {
    /// Checks the shape: n rows, columns < n, strictly increasing in each row.
    pub fn validate(&self) -> Result<(), SparseRowsError> {
        let n = self.n;
        if self.rows.len() != n {
            return Err(SparseRowsError::RowCount {
                rows: self.rows.len(),
                n,
            });
        }
        for (row, r) in self.rows.iter().enumerate() {
            for (q, &(column, _)) in r.iter().enumerate() {
                if column >= n {
                    return Err(SparseRowsError::Column { row, column, n });
                }
                if q > 0 && r[q - 1].0 >= column {
                    return Err(SparseRowsError::Order { row });
                }
            }
        }
        Ok(())
    }
}

/// A named datum of a certificate.
#[derive(Clone, Debug, PartialEq)]
pub enum Datum {
    /// A ±1 sign matrix.
    Signs(SignMatrix),
    /// A row-sparse rational matrix.
    Sparse(SparseRows),
    /// The exact initial data of the discrete map (D) in layer form, iterated by the
    /// kernel in outward-rounded intervals (see the `layer` section below).
    Layer(crate::layer_data::LayerData),
    /// The attention weights of a trained model, exact ([`crate::weights`]).
    Attn(crate::weights::AttnWeights),
}

/// Named data.
pub type Data = BTreeMap<String, Datum>;

/// The datum named by `e`, with its name (evaluation and [`validate`] read data
/// through these).
pub(super) fn named<'s, 'a>(
    e: &'s Sexp,
    data: &'a Data,
) -> Result<(&'s str, &'a Datum), ExprError> {
    match e {
        Sexp::Atom(a, o) => match data.get(a) {
            Some(d) => Ok((a, d)),
            None => err(*o, format!("no datum named `{a}` in the certificate")),
        },
        Sexp::List(_, o) => err(*o, "expected the name of a datum"),
    }
}

pub(super) fn datum<'a>(e: &Sexp, data: &'a Data) -> Result<&'a Datum, ExprError> {
    named(e, data).map(|(_, d)| d)
}

pub(super) fn signs_named<'s, 'a>(
    e: &'s Sexp,
    data: &'a Data,
) -> Result<(&'s str, &'a SignMatrix), ExprError> {
    match named(e, data)? {
        (a, Datum::Signs(s)) => Ok((a, s)),
        _ => err(e.offset(), "expected a sign matrix"),
    }
}

pub(super) fn signs<'a>(e: &Sexp, data: &'a Data) -> Result<&'a SignMatrix, ExprError> {
    signs_named(e, data).map(|(_, s)| s)
}

pub(super) fn sparse_named<'s, 'a>(
    e: &'s Sexp,
    data: &'a Data,
) -> Result<(&'s str, &'a SparseRows), ExprError> {
    match named(e, data)? {
        (a, Datum::Sparse(b)) => Ok((a, b)),
        _ => err(e.offset(), "expected a row-sparse rational matrix"),
    }
}

pub(super) fn sparse<'a>(e: &Sexp, data: &'a Data) -> Result<&'a SparseRows, ExprError> {
    sparse_named(e, data).map(|(_, b)| b)
}
