//! One module per claim, grouped by paper. Each module is a [`shape::Claim`]: raw
//! parameters (deserialised from its spec, unknown keys denied) resolved once into
//! typed `Params`, a statement built from them, a witness (the untrusted search),
//! its observations and its presentation, composed by one driver
//! ([`shape::drive`]). The registry ([`REGISTRY`]) names them all; it alone sits on
//! top: the base every claim imports (`Ctx`, `ClaimDef`, `Runner`, the driver) is
//! [`shape`].

use crate::certificate::Hints;
use crate::kernel::Statement;
use crate::spec::{Profile, Spec, SpecError};
use shape::{finish_statement, StatementError};
pub use shape::{
    prepare_with, shard_of, statement_with, unit_key, valid_sweep_name, ClaimDef, Ctx, Runner,
    ShardRecord, StatementFn, Units,
};

pub mod clusters;
pub mod formulas;
pub mod positional;
pub mod rebuild;
pub mod shape;
pub mod sparse;

/// The statement of `spec`'s claim for `profile` and `hints`, with the spec's
/// `refutes` marked as expected to fail; `Ok(None)` for a claim without one.
pub fn statement_of(
    spec: &Spec,
    profile: Profile,
    hints: &Hints,
) -> Result<Option<Statement>, StatementError> {
    statement_of_carrying(spec, profile, hints, &crate::kernel::expr::Data::new())
}

/// [`statement_of`] with the data a certificate carries as input of its statement
/// ([`shape::Claim::statement_carrying`]; ignored by the claims that take none).
pub fn statement_of_carrying(
    spec: &Spec,
    profile: Profile,
    hints: &Hints,
    carried: &crate::kernel::expr::Data,
) -> Result<Option<Statement>, StatementError> {
    let def = def_of(spec).ok_or_else(|| StatementError::UnknownClaim(spec.id.clone()))?;
    let Some(st) = (def.statement)(spec, profile, hints, carried)
        .map_err(|e| StatementError::Spec(Box::new(e)))?
    else {
        return Ok(None);
    };
    finish_statement(spec, st).map(Some)
}

macro_rules! claim {
    ($id:literal, $m:path) => {{
        use $m as m;
        ClaimDef {
            id: $id,
            prepare: prepare_with::<m::Claim>,
            statement: statement_with::<m::Claim>,
        }
    }};
}

/// Every implemented claim.
pub static REGISTRY: &[ClaimDef] = &[
    // clusters
    claim!("clusters/hyperplanes", clusters::hyperplanes),
    claim!("clusters/paranormal", clusters::paranormal),
    claim!("clusters/polytope", clusters::polytope),
    claim!("clusters/codim-conjecture", clusters::codim_conjecture),
    claim!("clusters/open-problems", clusters::open_problems),
    claim!(
        "clusters/paranormal-proof-gap",
        clusters::paranormal_proof_gap
    ),
    claim!("clusters/higher-dim-remark", clusters::higher_dim_remark),
    claim!("clusters/boolean-limit", clusters::boolean_limit),
    claim!("clusters/growth-bound", clusters::growth_bound),
    claim!("clusters/stability", clusters::stability),
    claim!("clusters/collapse", clusters::collapse),
    claim!("clusters/rescaling", clusters::rescaling),
    claim!("positional/alibi-slopes", positional::alibi_slopes),
    claim!("positional/shift-invariance", positional::shift_invariance),
    claim!("positional/alibi-tail-bound", positional::alibi_tail_bound),
    claim!("positional/alibi-window", positional::alibi_window),
    claim!(
        "positional/windowed-receptive-field",
        positional::windowed_receptive_field
    ),
    claim!(
        "positional/sandwich-identity",
        positional::sandwich_identity
    ),
    claim!(
        "positional/sandwich-log-decay",
        positional::sandwich_log_decay
    ),
    claim!(
        "positional/sandwich-head-power-law",
        positional::sandwich_head_power_law
    ),
    claim!("positional/length-usage", positional::length_usage),
    claim!(
        "positional/toy-receptive-field",
        positional::toy_receptive_field
    ),
    claim!(
        "positional/trained-model-claims",
        positional::trained_model_claims
    ),
    claim!("sparse/counting-lower-bound", sparse::counting_lower_bound),
    claim!("sparse/np-hardness", sparse::np_hardness),
    claim!("sparse/failure-probability", sparse::failure_probability),
    claim!("sparse/log-dimension", sparse::log_dimension),
    claim!("sparse/ratio-lemma", sparse::ratio_lemma),
    claim!("sparse/corollary-dimension", sparse::corollary_dimension),
    claim!("sparse/row-mass", sparse::row_mass),
];

/// Reads and parses a spec file. When the spec sits at `<paper>/<claim>.toml`
/// matching its ID and names a registered claim, the parameters of both profiles are
/// validated too, so a broken `[profiles.full]` is reported by `list` and quick runs,
/// not hours later by a full sweep.
pub fn load_spec(path: &std::path::Path) -> Result<Spec, SpecError> {
    let spec = Spec::read(path)?;
    if crate::spec::place_id(path).as_deref() == Some(spec.id.as_str()) {
        validate_profiles(&spec)?;
    }
    Ok(spec)
}

/// Parses and validates the claim parameters of every profile with the claim's own
/// `Params` (through the registry); a no-op for an unregistered ID.
pub fn validate_profiles(spec: &Spec) -> Result<(), SpecError> {
    if let Some(def) = def_of(spec) {
        for profile in [Profile::Quick, Profile::Full] {
            (def.prepare)(spec, profile).map(drop)?;
        }
    }
    Ok(())
}

/// The registry entry that implements `spec`'s claim: the formulas entry for a spec
/// written as formulas, else the module registered under its ID.
pub fn def_of(spec: &Spec) -> Option<&'static ClaimDef> {
    match spec.kind {
        crate::spec::SpecKind::Formulas => Some(&formulas::DEF),
        crate::spec::SpecKind::Module => find(&spec.id),
    }
}

/// The registry entry for an ID.
pub fn find(id: &str) -> Option<&'static ClaimDef> {
    REGISTRY.iter().find(|c| c.id == id)
}

/// The known IDs, comma-separated (for error messages).
pub fn known_ids() -> String {
    REGISTRY.iter().map(|c| c.id).collect::<Vec<_>>().join(", ")
}
