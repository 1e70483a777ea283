//! Claims of Likhosherstov, Choromanski, Weller, "On the Expressive Power of
//! Self-Attention Matrices" (arXiv:2106.03764; AAAI 2023). The paper's body could
//! not be read: every check here is a check of the project's explicit
//! reconstruction of the theorem (sparse.md), never of the paper's constants.

pub mod corollary_dimension;
pub mod counting_lower_bound;
pub mod failure_probability;
pub mod log_dimension;
pub mod np_hardness;
pub mod ratio_lemma;
pub mod row_mass;

use crate::certificate::Hints;
use crate::claims::shape::StatementError;
use rug::Rational;

/// The exact rational hint `key` (a witness value found by search), or why not.
pub(crate) fn hint_rational(hints: &Hints, key: &str) -> Result<Rational, StatementError> {
    let error = |reason: String| StatementError::Hint {
        key: key.to_string(),
        reason,
    };
    let v = hints
        .get(key)
        .ok_or_else(|| error(format!("the hint `{key}` is missing")))?;
    crate::kernel::parse_rational(v).map_err(|e| error(format!("hint `{key}`: {e}")))
}
