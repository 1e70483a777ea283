//! The flow's tiers as one ladder: the double-double RK4 ([`super::ddflow`], ≈ 106 bits)
//! as the first rung, then the MPFR RK4 ([`super::flow::rk4`]) at the spec's precision
//! p, 2p, 4p, … ([`crate::escalate::Ladder`]). Both tiers integrate the same right-hand
//! side with the same exact step h to the same exact T (ddflow's module docs), so the
//! rungs differ only in their rounding.
//!
//! # What is compared with what
//!
//! A claim hands in its *figures* (what it reads off the end state, e.g. max‖z_i(T)‖,
//! diam z(T), τ-cluster counts) and its own two-precision comparison `agree` on two
//! sets of figures. The ladder climbs pair by pair:
//!
//! ```text
//! (dd, p), (p, 2p), (2p, 4p), …
//! ```
//!
//! and settles at the first pair whose figures agree: the figures presented are the
//! lower rung's, the upper rung's run is the confirmation (for the first pair: the
//! dd run confirmed by the MPFR run at the spec's precision, so the presented figures
//! agree with that run's by construction). A failed run (e.g. a dd overflow) agrees
//! with nothing, so the ladder climbs past it. The escalation goes through
//! [`crate::escalate::escalate`] over the MPFR rungs, each computation pairing the new
//! rung with the one below; `agree` is the trigger. When the top pair still disagrees
//! the result says so ([`TieredRun::settled`] false) and holds the top pair.
//!
//! # What it may support
//!
//! Neither tier is certified: both are point arithmetic, and their agreement is an
//! observation, not an enclosure. A claim may rest at most a `supported` verdict (or a
//! report-only table) on a settled run, exactly as on the MPFR flow alone. The dd
//! tier's figures are never presented as more than the MPFR run that confirms them.
//!
//! # Determinism
//!
//! Both tiers are bit-identical for every thread count (ddflow's and flow's module
//! docs), so which pair settles, and every figure, is too.

use super::ddflow::DdFlow;
use super::flow::{rk4, FlowError, FlowOptions, FlowResult};
use super::model::{Mat, System};
use crate::escalate::{escalate, Ladder};
use rug::Rational;

/// One rung's tier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// The double-double RK4 (≈ 106 bits, f64's exponent range).
    Dd,
    /// The MPFR RK4 at this many bits.
    Mpfr(u32),
}

impl Tier {
    /// A short label for tables: `double-double (≈ 106 bits)` or `MPFR 128 bits`.
    pub fn label(self) -> String {
        match self {
            Tier::Dd => "double-double (≈ 106 bits)".into(),
            Tier::Mpfr(b) => format!("MPFR {b} bits"),
        }
    }
}

/// One rung's run and, when it succeeded, its figures.
#[derive(Clone, Debug)]
pub struct Rung<F> {
    /// The tier.
    pub tier: Tier,
    /// The end state, or why the run failed.
    pub run: Result<FlowResult, FlowError>,
    /// The claim's figures of a successful run.
    pub figures: Option<F>,
}

/// The pair the ladder stopped at.
#[derive(Clone, Debug)]
pub struct TieredRun<F> {
    /// The lower rung: its figures are the ones presented.
    pub lower: Rung<F>,
    /// The upper rung: the confirmation.
    pub upper: Rung<F>,
    /// Whether `agree` held for the pair (false: the top pair, still disagreeing).
    pub settled: bool,
    /// How many pairs were compared (1: dd agreed with the spec's precision).
    pub pairs: usize,
}

/// The tiers of the ladder from the spec's precision `prec`, doubled at most
/// `doublings` times: dd first, then the MPFR rungs.
pub fn tiers(prec: u32, doublings: u32) -> Vec<Tier> {
    std::iter::once(Tier::Dd)
        .chain(
            Ladder::new(prec, doublings)
                .precisions()
                .into_iter()
                .map(Tier::Mpfr),
        )
        .collect()
}

/// Runs one tier: RK4 with step `h` from the exact tokens `x0` to `t_end`, end state
/// only. `opts.prec` is replaced by the tier's.
pub fn run_tier(
    tier: Tier,
    sys: &System,
    x0: &Mat,
    t_end: &Rational,
    h: &Rational,
    opts: &FlowOptions,
) -> Result<FlowResult, FlowError> {
    match tier {
        Tier::Dd => DdFlow::new(sys, opts.clone()).rk4_end(x0, t_end, h),
        Tier::Mpfr(bits) => {
            let mut o = opts.clone();
            o.prec = bits;
            rk4(sys, x0, t_end, h, &o, |_| {})
        }
    }
}

/// The ladder (module docs): pairs (dd, p), (p, 2p), … with `p = opts.prec`, at most
/// `doublings` doublings, settled at the first pair whose `figures` `agree` (lower
/// first, upper second).
#[allow(clippy::too_many_arguments)]
pub fn rk4_tiered<F: Clone>(
    sys: &System,
    x0: &Mat,
    t_end: &Rational,
    h: &Rational,
    opts: &FlowOptions,
    doublings: u32,
    figures: impl Fn(&FlowResult) -> F,
    agree: impl Fn(&F, &F) -> bool,
) -> TieredRun<F> {
    let rung = |tier: Tier| {
        let run = run_tier(tier, sys, x0, t_end, h, opts);
        let figures = run.as_ref().ok().map(&figures);
        Rung { tier, run, figures }
    };
    let mut below = Some(rung(Tier::Dd));
    let mut pairs = 0usize;
    let climbed = escalate(
        Ladder::new(opts.prec, doublings),
        |bits| {
            let upper = rung(Tier::Mpfr(bits));
            let lower = below.replace(upper.clone()).expect("a rung below");
            pairs += 1;
            (lower, upper)
        },
        |(lower, upper)| match (&lower.figures, &upper.figures) {
            (Some(a), Some(b)) => agree(a, b),
            _ => false,
        },
    );
    let settled = !climbed.is_exhausted();
    let ((lower, upper), _) = climbed.into_parts();
    TieredRun {
        lower,
        upper,
        settled,
        pairs,
    }
}

/// |a − b| ≤ tol·max(|a|, |b|) (both finite), or both equal: the relative comparison of
/// one figure at two rungs (`check_tolerance`, relative, as `report::diff` reads it).
pub fn within_rel(a: f64, b: f64, tol: f64) -> bool {
    a == b || (a.is_finite() && b.is_finite() && (a - b).abs() <= tol * a.abs().max(b.abs()))
}
