//! One module per claim, grouped by paper. Each module is a [`shape::Claim`]: raw
//! parameters (deserialised from its spec, unknown keys denied) resolved once into
//! typed `Params`, a statement built from them, a witness (the untrusted search),
//! its observations and its presentation, composed by one driver
//! ([`shape::drive`]). The registry ([`REGISTRY`]) names them all.

use crate::certificate::{Certificate, Hints};
use crate::kernel::{Checked, Statement};
use crate::outcome::Outcome;
use crate::spec::{Profile, Spec, SpecError};
use shape::{Claim, StatementError};

pub mod clusters;
pub mod formulas;
pub mod positional;
pub mod rebuild;
pub mod shape;
pub mod sparse;

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
        /// Every unit key the run asked for, and the results of this shard's units.
        record: std::sync::Mutex<ShardRecord>,
    },
    /// Take every unit's result from the shards; a key they do not hold is recorded
    /// in `missing` (the merge then fails with it).
    Merge {
        /// The joined results.
        results: std::collections::BTreeMap<String, serde_json::Value>,
        /// Keys asked for but absent.
        missing: std::sync::Mutex<Vec<String>>,
    },
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
        let key = format!("{key} @{}", self.prec());
        match self.units {
            Units::All => compute(),
            Units::Shard {
                index,
                count,
                record,
            } => {
                record
                    .lock()
                    .expect("shard record")
                    .keys
                    .insert(key.clone());
                if shard_of(&key, *count) != *index {
                    return T::default();
                }
                let v = compute();
                let j = serde_json::to_value(&v).expect("unit results serialise");
                record.lock().expect("shard record").results.insert(key, j);
                v
            }
            Units::Merge { results, missing } => {
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
        }
    }

    /// Builds the claim's statement with the registry's builder (the one
    /// `attncheck verify` calls), with the data the certificate carries and the
    /// statement is built from ([`statement_of_carrying`]; empty for most claims), decides
    /// it with the kernel at the working precision, records every decision as a certified
    /// check, and keeps the certificate. So the run evaluates exactly the objects it
    /// serialises, and `verify` rebuilds the statement from the same data, read back from
    /// the certificate. `None` for a claim without a statement (nothing recorded), or
    /// with the outcome declared inconclusive and the reason when the statement cannot
    /// be built or evaluated. Only the driver, [`shape::drive`], calls it: the one road
    /// by which a run records certified checks.
    pub(crate) fn prove_stated(
        &self,
        out: &mut Outcome,
        hints: Hints,
        carried: &crate::kernel::expr::Data,
    ) -> Option<Checked> {
        let st = match statement_of_carrying(self.spec, self.profile, &hints, carried) {
            Ok(Some(st)) => st,
            Ok(None) => return None,
            Err(e) => {
                out.declare_inconclusive(format!("the statement could not be built: {e}"));
                return None;
            }
        };
        match crate::kernel::check(&st, self.prec()) {
            Ok(checked) => {
                out.checks.prove(&checked);
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
    let Some(mut st) = (def.statement)(spec, profile, hints, carried)
        .map_err(|e| StatementError::Spec(Box::new(e)))?
    else {
        return Ok(None);
    };
    st.expect_fails(&spec.refutes)
        .map_err(|e| StatementError::Names(e.to_string()))?;
    if let Some(n) = st.duplicate_name() {
        return Err(StatementError::Names(format!(
            "two obligations are named `{n}`"
        )));
    }
    Ok(Some(st))
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
    let p = shape::resolve::<C>(spec, profile)?;
    C::statement_carrying(&p, &spec.id, hints, carried)
        .transpose()
        .map_err(|e| statement_error(spec, e))
}

/// A claim ready to run: parameters resolved.
pub type Runner = Box<dyn Fn(&Ctx) -> Outcome + Send + Sync>;

/// A claim's statement builder: the spec, the profile, the hints and the data the
/// certificate carries as input ([`statement_of_carrying`]).
pub type StatementFn =
    fn(&Spec, Profile, &Hints, &crate::kernel::expr::Data) -> Result<Option<Statement>, SpecError>;

/// A registry entry.
pub struct ClaimDef {
    /// `<paper>/<claim>`.
    pub id: &'static str,
    /// Resolves the parameters for a profile.
    pub prepare: fn(&Spec, Profile) -> Result<Runner, SpecError>,
    /// Builds the claim's statement from the spec and hints (see [`statement_of`]).
    pub statement: StatementFn,
}

/// Resolves `C`'s parameters from the spec and binds them to the driver.
pub fn prepare_with<C: Claim>(spec: &Spec, profile: Profile) -> Result<Runner, SpecError> {
    let p = shape::resolve::<C>(spec, profile)?;
    Ok(Box::new(move |ctx| shape::drive::<C>(&p, ctx)))
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
