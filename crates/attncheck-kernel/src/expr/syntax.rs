//! The syntax every job reads: the S-expression and its errors.

/// A parse or evaluation error, with the byte offset in the source text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at offset {offset}: {reason}")]
pub struct ExprError {
    /// Byte offset in the expression text.
    pub offset: usize,
    /// What is wrong.
    pub reason: String,
}

/// A parsed S-expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sexp {
    /// An atom (number, symbol, operator).
    Atom(String, usize),
    /// A list.
    List(Vec<Sexp>, usize),
}

impl Sexp {
    /// Its byte offset in the text.
    pub(super) fn offset(&self) -> usize {
        match self {
            Sexp::Atom(_, o) | Sexp::List(_, o) => *o,
        }
    }
}

pub(super) fn err<T>(offset: usize, reason: impl Into<String>) -> Result<T, ExprError> {
    Err(ExprError {
        offset,
        reason: reason.into(),
    })
}

/// The deepest nesting of parentheses a formula may have. Evaluation recurses
/// once per level, so this bounds the stack whatever the input.
pub const MAX_DEPTH: usize = 200;
