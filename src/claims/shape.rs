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
//! A claim then has four parts, each with its own trust and its own output:
//!
//! - [`Claim::statement`]: the obligations, built from the resolved parameters (and
//!   the certificate's hints). Trusted, pure and small; it never formats a report.
//! - [`Claim::witness`]: the untrusted search (enumerations, sweeps, fits, f64
//!   integration). Its value carries whatever [`Claim::hints`], [`Claim::observe`]
//!   and [`Claim::present`] need; it records nothing.
//! - [`Claim::observe`]: the observed and consistency checks, and a declared
//!   verdict (inconclusive, not checkable, report only) with its reason, through an
//!   [`Observations`] that cannot record a certified check.
//! - [`Claim::present`]: tables, plots, figures and notes, into a [`Presentation`]
//!   that holds nothing else. `present` never decides: it has no way to record or
//!   change a check or a verdict.
//!
//! One driver, [`drive`], composes them for every claim: the witness, then the
//! kernel's decision of the statement (with the witness's hints and carried data) as
//! the certified checks and the certificate, then the observations, then the
//! presentation, into the [`Outcome`]. So a report lists the certified checks, then
//! the observed ones in the order `observe` records them (the other way round for a
//! claim with [`Claim::CERTIFIED_LAST`]); tables, figures, plots and notes keep the
//! order `present` adds them in.
//!
//! Data the witness produces and the statement is built from (a trained model's
//! attention weights) go through [`Claim::carried`]: the certificate carries them, the
//! kernel reads them back (sizes, finiteness, hash), and the statement
//! ([`Claim::statement_carrying`]) must be sound for every value of them, as for hints.
//!
//! The trait has no way to run a claim whole: every claim is composed by [`drive`],
//! so none can record its parts in an order of its own.

use crate::certificate::Hints;
use crate::claims::Ctx;
use crate::kernel::{Checked, Statement};
use crate::outcome::{Observations, Outcome, Presentation};
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

/// A claim: its parameters (raw and resolved), its statement, its witness, its
/// observations and its presentation (see the module's documentation).
pub trait Claim: 'static {
    /// The parameters as written in the spec (serde, unknown keys denied).
    type Raw: DeserializeOwned;
    /// The parameters resolved into typed, range-checked values.
    type Params: Send + Sync + 'static;
    /// What the untrusted search ([`Claim::witness`]) found.
    type Witness: Send;
    /// Whether the report lists the certified checks after the observed ones
    /// (claims whose reports were laid out so before the split keep their order;
    /// their `observe` then sees only its own checks in [`Observations::checks`]).
    const CERTIFIED_LAST: bool = false;
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
    /// [`Claim::statement`] for a claim whose certificate carries input data that the
    /// statement is built from (the attention weights of a trained model): `carried`
    /// holds the certificate's data of such kinds, validated by the kernel (sizes,
    /// finiteness, hash). The statement must be sound for every value of them, as for
    /// hints. By default the carried data are ignored.
    fn statement_carrying(
        p: &Self::Params,
        claim: &str,
        hints: &Hints,
        carried: &crate::kernel::expr::Data,
    ) -> Option<Result<Statement, StatementError>> {
        let _ = carried;
        Self::statement(p, claim, hints)
    }
    /// The untrusted search: everything the claim computes outside the statement
    /// (witnesses, sweeps, enclosures it reads, fits), for [`Claim::hints`],
    /// [`Claim::observe`] and [`Claim::present`]. Records nothing.
    fn witness(p: &Self::Params, ctx: &Ctx) -> Self::Witness;
    /// The certificate's hints, from the witness (a `t*`, a window): the statement
    /// must be sound for every value of them. None by default.
    fn hints(p: &Self::Params, w: &Self::Witness) -> Hints {
        let _ = (p, w);
        Hints::new()
    }
    /// The data the certificate carries as input of the statement, from the witness
    /// (the attention weights of a trained model): [`Claim::statement_carrying`] is
    /// built from them, in the run and in `verify` alike. None by default.
    fn carried(p: &Self::Params, w: &Self::Witness) -> crate::kernel::expr::Data {
        let _ = (p, w);
        crate::kernel::expr::Data::new()
    }
    /// The observed and consistency checks, in report order, and a declared verdict
    /// with its reason. `proof` is the kernel's decision of the statement (`None`
    /// when the claim has none, or it could not be built or evaluated; the outcome
    /// is then already inconclusive with the reason). Nothing by default.
    fn observe(
        p: &Self::Params,
        w: &Self::Witness,
        proof: Option<&Checked>,
        ctx: &Ctx,
        obs: &mut Observations,
    ) {
        let _ = (p, w, proof, ctx, obs);
    }
    /// The presentation, in report order: tables, plots, figures, notes. It can
    /// show the proof's decisions, never make one. Nothing by default.
    fn present(
        p: &Self::Params,
        w: &Self::Witness,
        proof: Option<&Checked>,
        ctx: &Ctx,
        pr: &mut Presentation,
    ) {
        let _ = (p, w, proof, ctx, pr);
    }
}

/// Runs claim `C` with resolved parameters `p`: its witness, the kernel's decision
/// of its statement (with [`Claim::hints`] and [`Claim::carried`] from the witness;
/// skipped for a claim without a statement) as certified checks and the certificate, then
/// [`Claim::observe`], then [`Claim::present`]. The one composition of every
/// claim's parts; no claim has its own.
pub fn drive<C: Claim + ?Sized>(p: &C::Params, ctx: &Ctx) -> Outcome {
    let w = C::witness(p, ctx);
    let mut out = Outcome::new();
    let mut proved = Outcome::new();
    let first = if C::CERTIFIED_LAST {
        &mut proved
    } else {
        &mut out
    };
    let proof = ctx.prove_stated(first, C::hints(p, &w), &C::carried(p, &w));
    C::observe(p, &w, proof.as_ref(), ctx, &mut Observations::new(&mut out));
    // the certified checks after the observed ones (empty unless CERTIFIED_LAST)
    out.append(proved);
    let mut pr = Presentation::default();
    C::present(p, &w, proof.as_ref(), ctx, &mut pr);
    out.present(pr);
    out
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
