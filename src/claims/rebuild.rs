//! How `verify` rebuilds the statement of a certificate, by the certificate's claim
//! ID: the one registry every certificate goes through.
//!
//! A claim of [`REGISTRY`](super::REGISTRY) is rebuilt from its spec (theorems/,
//! at the certificate's profile and hints). A certificate that a command makes from
//! the user's own input (`sparse construct` from a target matrix) is rebuilt from
//! its hints and that input; its entry is in [`INPUTS`]. `verify` asks
//! [`rebuild_of`] and never compares claim IDs itself.

use super::{ClaimDef, StatementError};
use crate::certificate::Certificate;
use crate::kernel::Statement;
use std::path::Path;

/// A certificate kind rebuilt from an input the user supplies, not from a spec.
pub struct InputDef {
    /// The certificate's claim ID.
    pub id: &'static str,
    /// What the statement is rebuilt from when no input file is given (for people).
    pub pinned: &'static str,
    /// Rebuilds the statement from the certificate's hints and the input file (or the
    /// input the certificate pins, without one).
    pub rebuild: fn(&Certificate, Option<&Path>) -> Result<Statement, StatementError>,
    /// The precisions the command decides this certificate at (from its hints).
    pub precisions: fn(&Certificate) -> Vec<u32>,
}

/// Every certificate kind rebuilt from an input.
pub static INPUTS: &[InputDef] = &[InputDef {
    id: crate::sparse::target::CONSTRUCT_CLAIM,
    pinned: "the target A it pins (pass --target FILE to bind it to your file)",
    rebuild: construct_statement,
    precisions: construct_precisions,
}];

/// How a certificate of claim `id` is rebuilt.
#[derive(Clone, Copy)]
pub enum Rebuild {
    /// From the claim's spec.
    Spec(&'static ClaimDef),
    /// From the certificate's hints and an input file.
    Input(&'static InputDef),
}

/// The rebuild of claim `id`'s certificates; `None` for an ID no entry names.
pub fn rebuild_of(id: &str) -> Option<Rebuild> {
    super::find(id)
        .map(Rebuild::Spec)
        .or_else(|| INPUTS.iter().find(|d| d.id == id).map(Rebuild::Input))
}

/// Every ID a certificate may carry, comma-separated (for error messages).
pub fn known_ids() -> String {
    std::iter::once(super::known_ids())
        .chain(INPUTS.iter().map(|d| d.id.to_string()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn construct_statement(
    cert: &Certificate,
    target: Option<&Path>,
) -> Result<Statement, StatementError> {
    crate::sparse::target::rebuild_statement(cert, target).map_err(StatementError::build)
}

/// `sparse construct` decides at the precision of its logits, its hint
/// `logit_precision` (none when the hint is missing or malformed: then every
/// precision is refused).
fn construct_precisions(cert: &Certificate) -> Vec<u32> {
    cert.hints
        .get("logit_precision")
        .and_then(|p| p.parse().ok())
        .into_iter()
        .collect()
}
