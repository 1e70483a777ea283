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

use crate::certificate::{Certificate, Hints};
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
    /// exact literal parsed, every work bound (weighed by [`Resolving::weigh`] at the
    /// spec's precision). The [`FieldError`]'s path is relative to `params`.
    fn resolve(raw: Self::Raw, at: Resolving) -> Result<Self::Params, FieldError>;
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
    /// The report part of the statement's obligations that have one, by name (the
    /// report shows each part's verdict); presentation, which the kernel does not hold.
    /// None by default.
    fn parts(p: &Self::Params) -> crate::verdict::Parts {
        let _ = p;
        crate::verdict::Parts::new()
    }
    /// The statement builder the run and `verify` share (the registry's `statement`
    /// entry): [`statement_with`] by default, which resolves the parameters from the
    /// spec; a claim resolved another way (formulas) names its own.
    fn statement_fn() -> StatementFn
    where
        Self: Sized,
    {
        statement_with::<Self>
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
pub fn drive<C: Claim>(p: &C::Params, ctx: &Ctx) -> Outcome {
    let w = C::witness(p, ctx);
    let mut out = Outcome::new();
    let mut proved = Outcome::new();
    let first = if C::CERTIFIED_LAST {
        &mut proved
    } else {
        &mut out
    };
    let proof = ctx.prove_stated(
        C::statement_fn(),
        first,
        C::hints(p, &w),
        &C::carried(p, &w),
        &C::parts(p),
    );
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
    let at = Resolving {
        precision: spec.precision,
    };
    C::resolve(raw, at).map_err(|fe| spec.param_error(profile, &fe.field, fe.reason))
}

/// What resolving a claim's parameters knows besides them: the spec's working precision,
/// which weighs every work bound. The bounds are calibrated at 128 bits; at p bits a run's
/// arithmetic costs up to [`Resolving::cost_factor`] times as much. Measured on the quick
/// profiles, one core: clusters/growth-bound 0.73, 2.52 and 20.1 CPU-s at 128, 1024 and
/// 4096 bits (3.5× and 27.5×; the factor is 24 and 192), positional/sandwich-identity 7.3,
/// 29.0 and 294 CPU-s (4.0× and 40×). Unweighed, a clusters instance at its bound (about
/// 20 minutes at 128 bits) would run for about 9 hours at 4096 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolving {
    /// The spec's working precision, in bits.
    pub precision: u32,
}

impl Resolving {
    /// The default precision's (128 bits): what the unit tests of a claim resolve at.
    pub const DEFAULT: Resolving = Resolving { precision: 128 };

    /// The kernel's own cost model of a precision against 128 bits,
    /// [`crate::kernel::expr::precision_factor`]: q·⌈√q⌉ with q = ⌈precision/128⌉ (1 at
    /// 128 bits, 4 at 160 and 256, 24 at 1024, 192 at 4096), an upper estimate of the
    /// measurements above, as of the certificates' budget.
    pub fn cost_factor(self) -> u128 {
        crate::kernel::expr::precision_factor(self.precision)
    }

    /// `work` (counted at 128 bits) weighed at this precision, saturating.
    pub fn weigh(self, work: u128) -> u128 {
        work.saturating_mul(self.cost_factor())
    }

    /// `work` as an error states it: the count, and above 128 bits its weight.
    pub fn show(self, work: u128) -> String {
        match self.cost_factor() {
            1 => work.to_string(),
            f => format!(
                "{work} at 128 bits, weighed {f}× at {} bits: {}",
                self.precision,
                self.weigh(work)
            ),
        }
    }
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

/// What a claim's parts get besides its parameters.
pub struct Ctx<'a> {
    /// The spec (statement, precision, tolerances).
    pub spec: &'a Spec,
    /// The profile being run.
    pub profile: Profile,
    /// Progress reporting (a no-op when stderr is not a terminal).
    pub progress: &'a crate::progress::Progress,
    /// Independent units of work: all computed here, one shard's share, or
    /// taken from the shards being merged ([`Ctx::unit`]).
    pub units: &'a Units,
}

/// How [`Ctx::unit`] treats a claim's independent units of work (seeds,
/// instances, cells), so that a sweep can be split over a cluster's job array
/// (`run --shard i/N`) and joined (`merge`) into the report an unsharded run writes.
#[derive(Debug, Default)]
pub enum Units {
    /// Compute every unit (a normal run).
    #[default]
    All,
    /// Compute only the units whose key hashes to `index` mod `count`; record their
    /// results and every key seen. The run's outcome is discarded.
    Shard {
        /// This shard, 0-based.
        index: u64,
        /// The number of shards.
        count: u64,
        /// The sweep being sharded: `None` for the claim's units ([`Ctx::unit`]), or the
        /// name of one of its further sweeps ([`Ctx::unit_in`]). Only that sweep's units
        /// are recorded and may be computed here.
        sweep: Option<String>,
        /// Every unit key of the sweep the run asked for, and the results of this shard's
        /// units.
        record: std::sync::Mutex<ShardRecord>,
    },
    /// Take every unit's result from the shards; a key they do not hold is recorded
    /// in `missing` (the merge then fails with it).
    Merge {
        /// The joined results.
        results: std::collections::BTreeMap<String, serde_json::Value>,
        /// Keys asked for but absent.
        missing: std::sync::Mutex<Vec<String>>,
        /// The further sweeps whose shards are merged (each of them complete): a unit of
        /// another further sweep is absent ([`Ctx::unit_in`] gives `None`).
        sweeps: std::collections::BTreeSet<String>,
    },
}

/// The key by which [`Ctx::unit`] (`sweep` = `None`) and [`Ctx::unit_in`] record a unit:
/// `key @precision`, or `sweep: key @precision` for a further sweep, so that the sweeps'
/// keys never meet and a shard's key says which sweep it belongs to.
pub fn unit_key(sweep: Option<&str>, key: &str, prec: u32) -> String {
    match sweep {
        None => format!("{key} @{prec}"),
        Some(s) => format!("{s}: {key} @{prec}"),
    }
}

/// Whether `name` may name a further sweep (`run --shard i/N --sweep NAME`): a lower-case
/// letter, then lower-case letters, digits and hyphens, at most 32 in all (it is part of
/// file names and keys).
pub fn valid_sweep_name(name: &str) -> bool {
    let mut c = name.chars();
    name.len() <= 32
        && c.next().is_some_and(|x| x.is_ascii_lowercase())
        && c.all(|x| x.is_ascii_lowercase() || x.is_ascii_digit() || x == '-')
}

/// What one shard computed.
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ShardRecord {
    /// Every unit key the claim's run asked for (all shards see the same list).
    pub keys: std::collections::BTreeSet<String>,
    /// This shard's results, by key.
    pub results: std::collections::BTreeMap<String, serde_json::Value>,
}

/// The shard a unit key belongs to: FNV-1a of the key, mod `count` (stable across
/// machines and thread counts).
pub fn shard_of(key: &str, count: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h % count.max(1)
}

impl Ctx<'_> {
    /// The working precision in bits.
    pub fn prec(&self) -> u32 {
        self.spec.precision
    }

    /// One independent unit of work, named by a key unique within the claim's run
    /// (the precision is added to it). Normally `compute()`; in a sharded run only
    /// this shard's units are computed (the others give `T::default()`, and the
    /// outcome is discarded); in a merge the result comes from the shards. `T` must
    /// survive a JSON round trip exactly (integers, strings, exact rationals as text).
    pub fn unit<T>(&self, key: &str, compute: impl FnOnce() -> T) -> T
    where
        T: serde::Serialize + serde::de::DeserializeOwned + Default,
    {
        let key = unit_key(None, key, self.prec());
        match self.units {
            Units::All => compute(),
            Units::Shard {
                index,
                count,
                sweep,
                record,
            } => {
                if sweep.is_some() {
                    // another sweep's shard: this unit is none of its business
                    return T::default();
                }
                Self::shard_unit(&key, *index, *count, record, compute)
            }
            Units::Merge {
                results, missing, ..
            } => Self::merged_unit(key, results, missing),
        }
    }

    /// One independent unit of work of the further sweep `sweep` (a valid
    /// [`valid_sweep_name`]): work a claim adds to a sweep that already ran, sharded and
    /// merged on its own (`run --shard i/N --sweep NAME`), so that the shards stored
    /// before it stay whole. `None` when this run does not have the sweep: a shard of
    /// another sweep, or a merge without the sweep's shards (the claim must then say that
    /// the sweep's results are absent, never treat them as computed). Otherwise as
    /// [`Ctx::unit`]: `Some(compute())`, `Some(T::default())` for another shard's unit, or
    /// the merged result. The claim must compute its other units without any parameter
    /// of the sweep (`merge` compares those shards' parameters without the `sweeps`
    /// tables).
    pub fn unit_in<T>(&self, sweep: &str, key: &str, compute: impl FnOnce() -> T) -> Option<T>
    where
        T: serde::Serialize + serde::de::DeserializeOwned + Default,
    {
        let full = unit_key(Some(sweep), key, self.prec());
        match self.units {
            Units::All => Some(compute()),
            Units::Shard {
                index,
                count,
                sweep: s,
                record,
            } => (s.as_deref() == Some(sweep))
                .then(|| Self::shard_unit(&full, *index, *count, record, compute)),
            Units::Merge {
                results,
                missing,
                sweeps,
            } => sweeps
                .contains(sweep)
                .then(|| Self::merged_unit(full, results, missing)),
        }
    }

    /// A unit of the sweep being sharded: its key recorded, computed when it is this
    /// shard's, else `T::default()`.
    fn shard_unit<T>(
        key: &str,
        index: u64,
        count: u64,
        record: &std::sync::Mutex<ShardRecord>,
        compute: impl FnOnce() -> T,
    ) -> T
    where
        T: serde::Serialize,
        T: Default,
    {
        record
            .lock()
            .expect("shard record")
            .keys
            .insert(key.to_string());
        if shard_of(key, count) != index {
            return T::default();
        }
        let v = compute();
        let j = serde_json::to_value(&v).expect("unit results serialise");
        record
            .lock()
            .expect("shard record")
            .results
            .insert(key.to_string(), j);
        v
    }

    /// A unit's result from the merged shards, or `T::default()` with its key recorded
    /// as missing.
    fn merged_unit<T>(
        key: String,
        results: &std::collections::BTreeMap<String, serde_json::Value>,
        missing: &std::sync::Mutex<Vec<String>>,
    ) -> T
    where
        T: serde::de::DeserializeOwned + Default,
    {
        match results
            .get(&key)
            .and_then(|j| serde_json::from_value(j.clone()).ok())
        {
            Some(v) => v,
            None => {
                missing.lock().expect("missing list").push(key);
                T::default()
            }
        }
    }

    /// Builds the claim's statement with its builder `statement` (the one the registry
    /// holds and `attncheck verify` calls), with the data the certificate carries and the
    /// statement is built from (empty for most claims), and the spec's `refutes` marked
    /// ([`finish_statement`], as `claims::statement_of_carrying` does); decides
    /// it with the kernel at the working precision, records every decision as a certified
    /// check, and keeps the certificate. So the run evaluates exactly the objects it
    /// serialises, and `verify` rebuilds the statement from the same data, read back from
    /// the certificate. `None` for a claim without a statement (nothing recorded), or
    /// with the outcome declared inconclusive and the reason when the statement cannot
    /// be built or evaluated. Only the driver, [`drive`], calls it: the one road
    /// by which a run records certified checks.
    pub(crate) fn prove_stated(
        &self,
        statement: StatementFn,
        out: &mut Outcome,
        hints: Hints,
        carried: &crate::kernel::expr::Data,
        parts: &crate::verdict::Parts,
    ) -> Option<Checked> {
        let built = statement(self.spec, self.profile, &hints, carried)
            .map_err(|e| StatementError::Spec(Box::new(e)))
            .and_then(|st| st.map(|st| finish_statement(self.spec, st)).transpose());
        let st = match built {
            Ok(Some(st)) => st,
            Ok(None) => return None,
            Err(e) => {
                out.declare_inconclusive(format!("the statement could not be built: {e}"));
                return None;
            }
        };
        match crate::kernel::check(&st, self.prec()) {
            Ok(checked) => {
                out.checks.prove_in_parts(&checked, parts);
                out.certificate = Some(Certificate::of(&st, self.profile, self.prec(), &hints));
                Some(checked)
            }
            Err(e) => {
                out.declare_inconclusive(format!("the statement could not be evaluated: {e}"));
                None
            }
        }
    }
}

/// A statement error as a spec error (the registry's `statement` entry).
fn statement_error(spec: &Spec, e: StatementError) -> SpecError {
    SpecError::Field {
        file: spec.path.clone(),
        line: None,
        field: "statement".into(),
        reason: e.to_string(),
    }
}

/// Resolves `C`'s parameters from the spec and builds its statement.
pub fn statement_with<C: Claim>(
    spec: &Spec,
    profile: Profile,
    hints: &Hints,
    carried: &crate::kernel::expr::Data,
) -> Result<Option<Statement>, SpecError> {
    let p = resolve::<C>(spec, profile)?;
    C::statement_carrying(&p, &spec.id, hints, carried)
        .transpose()
        .map_err(|e| statement_error(spec, e))
}

/// A claim ready to run: parameters resolved.
pub type Runner = Box<dyn Fn(&Ctx) -> Outcome + Send + Sync>;

/// A claim's statement builder: the spec, the profile, the hints and the data the
/// certificate carries as input (`claims::statement_of_carrying`).
pub type StatementFn =
    fn(&Spec, Profile, &Hints, &crate::kernel::expr::Data) -> Result<Option<Statement>, SpecError>;

/// A registry entry.
pub struct ClaimDef {
    /// `<paper>/<claim>`.
    pub id: &'static str,
    /// Resolves the parameters for a profile.
    pub prepare: fn(&Spec, Profile) -> Result<Runner, SpecError>,
    /// Builds the claim's statement from the spec and hints (see `claims::statement_of`).
    pub statement: StatementFn,
}

/// Resolves `C`'s parameters from the spec and binds them to the driver.
pub fn prepare_with<C: Claim>(spec: &Spec, profile: Profile) -> Result<Runner, SpecError> {
    let p = resolve::<C>(spec, profile)?;
    Ok(Box::new(move |ctx| drive::<C>(&p, ctx)))
}

/// A built statement made ready to decide: the spec's `refutes` marked as expected to
/// fail, and its obligation names checked to be distinct.
pub fn finish_statement(spec: &Spec, mut st: Statement) -> Result<Statement, StatementError> {
    st.expect_fails(&spec.refutes)
        .map_err(|e| StatementError::Names(e.to_string()))?;
    if let Some(n) = st.duplicate_name() {
        return Err(StatementError::Names(format!(
            "two obligations are named `{n}`"
        )));
    }
    Ok(st)
}
