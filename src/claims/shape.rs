//! The shape of a claim: raw spec parameters, resolved once into typed values, and
//! the functions that take them.
//!
//! A claim's spec holds its parameters as written (`[params]` overlaid with
//! `[profiles.<profile>]`). They are deserialised into the claim's [`Claim::Raw`]
//! (unknown keys denied) by [`Spec::params`](crate::spec::Spec::params), which only
//! parses, and then [`Claim::resolve`]d, once, into the claim's typed
//! [`Claim::Params`]: exact rationals, typed enums, ranges checked. A bad field is a
//! [`FieldError`], reported at the spec's file, line and field ([`resolve`]). The
//! statement and the run take the resolved value and never parse again.
//!
//! [`Claim::statement`] builds the obligations from the resolved parameters (and the
//! certificate's hints): trusted, pure and small, and it never formats a report.
//! [`Claim::run`] is the untrusted rest: the witness search, the observed and
//! consistency checks, and the presentation (tables, plots, notes), which never
//! decides a check.

use crate::certificate::Hints;
use crate::claims::Ctx;
use crate::kernel::Statement;
use crate::outcome::Outcome;
use crate::spec::{FieldError, Profile, Spec, SpecError};
use serde::de::DeserializeOwned;

/// Why a claim's statement could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatementError {
    /// A parameter the statement needs is out of its domain (normally caught when
    /// the parameters are resolved).
    #[error("{0}")]
    Field(#[from] FieldError),
    /// A hint of the certificate is missing or malformed.
    #[error("{reason}")]
    Hint {
        /// The hint's key.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// A datum or formula of the statement could not be formed from the parameters.
    #[error("{0}")]
    Build(String),
    /// The spec's `refutes` names no obligation of the statement, or two obligations
    /// share a name.
    #[error("{0}")]
    Names(String),
    /// No claim of the registry has this ID.
    #[error("unknown claim `{0}`")]
    UnknownClaim(String),
    /// The spec's parameters do not resolve.
    #[error("{0}")]
    Spec(Box<SpecError>),
}

impl StatementError {
    /// The hint `key` is missing or malformed: `reason` says how.
    pub fn hint(key: &str, reason: impl Into<String>) -> Self {
        StatementError::Hint {
            key: key.to_string(),
            reason: reason.into(),
        }
    }

    /// A datum or formula that could not be formed, with the lower layer's message.
    pub fn build(reason: impl std::fmt::Display) -> Self {
        StatementError::Build(reason.to_string())
    }
}

/// A claim: its parameters (raw and resolved), its statement and its run.
pub trait Claim: 'static {
    /// The parameters as written in the spec (serde, unknown keys denied).
    type Raw: DeserializeOwned;
    /// The parameters resolved into typed, range-checked values.
    type Params: Send + Sync + 'static;
    /// Resolves the raw parameters, once: every range and consistency check, every
    /// exact literal parsed. The [`FieldError`]'s path is relative to `params`.
    fn resolve(raw: Self::Raw) -> Result<Self::Params, FieldError>;
    /// The claim's statement for these parameters: the obligations that say, in
    /// formulas, what the claim asserts (docs/design.md, "The trust boundary").
    /// Trusted: pure, small, built from the parameters and the `hints` alone, and
    /// sound for every hint value. `None` for claims that certify nothing by
    /// statement.
    fn statement(
        p: &Self::Params,
        claim: &str,
        hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        let _ = (p, claim, hints);
        None
    }
    /// Runs the claim: witness search, observed and consistency checks, and the
    /// presentation.
    fn run(p: &Self::Params, ctx: &Ctx) -> Outcome;
}

/// The resolved parameters of claim `C` for `profile`: deserialised from the spec
/// (unknown keys are errors) and resolved; errors name the file, the line and the
/// field.
pub fn resolve<C: Claim>(spec: &Spec, profile: Profile) -> Result<C::Params, SpecError> {
    let raw: C::Raw = spec.params(profile)?;
    C::resolve(raw).map_err(|fe| spec.param_error(profile, &fe.field, fe.reason))
}

/// An exact literal of a spec (`"2^-8"`, `"1/100"`), resolved: its value, and the
/// text it was written as (reports quote the spec's own spelling).
#[derive(Debug, Clone, PartialEq)]
pub struct Exact {
    /// The exact value.
    pub value: rug::Rational,
    /// The literal as written.
    pub text: String,
}

impl Exact {
    /// Parses the literal `text` of the field `field` (see [`crate::spec::exact`]).
    pub fn parse(field: &str, text: &str) -> Result<Exact, FieldError> {
        Ok(Exact {
            value: crate::spec::exact(field, text)?,
            text: text.to_string(),
        })
    }
}

impl std::ops::Deref for Exact {
    type Target = rug::Rational;
    fn deref(&self) -> &rug::Rational {
        &self.value
    }
}

impl std::fmt::Display for Exact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}
