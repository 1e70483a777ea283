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

/// The inputs `verify` may be given for a certificate rebuilt from input (each
/// certificate kind takes one of them, its [`InputDef::option`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Inputs<'a> {
    /// `--target FILE`: the target matrix of a `sparse construct` certificate.
    pub target: Option<&'a Path>,
    /// `--formula TEXT`: the formula a `prove --cert` certificate must state.
    pub formula: Option<&'a str>,
    /// `--model FILE --config FILE`: the model an `attncheck window` certificate must be
    /// about, read and checked.
    pub model: Option<&'a crate::model_window::ModelInput>,
}

impl Inputs<'_> {
    /// The options given, as `verify` spells them.
    pub fn given(&self) -> Vec<&'static str> {
        [
            (self.target.is_some(), "--target"),
            (self.formula.is_some(), "--formula"),
            (self.model.is_some(), "--model"),
        ]
        .into_iter()
        .filter_map(|(g, o)| g.then_some(o))
        .collect()
    }
}

/// A certificate kind rebuilt from an input the user supplies, not from a spec.
pub struct InputDef {
    /// The certificate's claim ID.
    pub id: &'static str,
    /// The option of `verify` that gives the input (`--target`, `--formula`).
    pub option: &'static str,
    /// What the statement is rebuilt from when no input is given (for people).
    pub pinned: fn(&Certificate) -> String,
    /// What the statement is rebuilt from when the input is given (for people;
    /// `None` when it is not given).
    pub given: fn(&Inputs) -> Option<String>,
    /// Rebuilds the statement from the certificate's hints and the input (or the
    /// input the certificate pins, without one).
    pub rebuild: fn(&Certificate, &Inputs) -> Result<Statement, StatementError>,
    /// The precisions the command decides this certificate at (from its hints).
    pub precisions: fn(&Certificate) -> Vec<u32>,
}

/// Every certificate kind rebuilt from an input.
pub static INPUTS: &[InputDef] = &[
    InputDef {
        id: crate::sparse::target::CONSTRUCT_CLAIM,
        option: "--target",
        pinned: |_| "the target A it pins (pass --target FILE to bind it to your file)".into(),
        given: |i| i.target.map(|t| t.display().to_string()),
        rebuild: construct_statement,
        precisions: construct_precisions,
    },
    InputDef {
        id: crate::calc::FORMULA_CLAIM,
        option: "--formula",
        pinned: formula_pinned,
        given: |i| {
            i.formula
                .map(|_| "the formula given with --formula".to_string())
        },
        rebuild: formula_statement,
        precisions: crate::calc::certificate_precisions,
    },
    InputDef {
        id: crate::model_window::WINDOW_CLAIM,
        option: "--model",
        pinned: |_| {
            "the weights and slopes it pins (pass --model FILE --config FILE to bind it to your model)"
                .into()
        },
        given: |i| i.model.map(|m| m.model.display().to_string()),
        rebuild: window_statement,
        precisions: crate::model_window::precisions,
    },
];

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

fn construct_statement(cert: &Certificate, input: &Inputs) -> Result<Statement, StatementError> {
    crate::sparse::target::rebuild_statement(cert, input.target).map_err(StatementError::build)
}

/// A formula certificate (`prove --cert`) states "this formula holds": rebuilt from
/// `--formula` when given (so it must state exactly that formula), else from the one
/// formula it carries (and `verify` says so, printing it).
fn formula_statement(cert: &Certificate, input: &Inputs) -> Result<Statement, StatementError> {
    crate::calc::rebuild(cert, input.formula).map_err(StatementError::Build)
}

/// A `window` certificate: rebuilt from the model given with `--model` and `--config`
/// (so it must be about exactly those weights and slopes), else from those it pins.
fn window_statement(cert: &Certificate, input: &Inputs) -> Result<Statement, StatementError> {
    crate::model_window::rebuild(cert, input.model).map_err(StatementError::Build)
}

fn formula_pinned(cert: &Certificate) -> String {
    let carried = match cert.obligations.as_slice() {
        [o] => o.formula.as_str(),
        // not in parentheses: that would read as the formula `(not one formula)`
        _ => "none: it carries more or fewer than one",
    };
    format!(
        "the formula the certificate carries, {carried} (pass --formula TEXT to bind it to yours)"
    )
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
