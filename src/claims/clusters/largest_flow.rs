//! The authors' largest configuration (`cupy-Tform.ipynb`, clusters.md §6: n = d = 128,
//! T = 15, Δt = 0.1, QᵀK = I, V symmetric sparse with its small eigenvalues pushed out to
//! ±[1, 2]) made exact ([`crate::dynamics::workloads::cupy_workload`]), at a size the
//! spec chooses, run on the flow's tier ladder ([`crate::dynamics::tiered`]): the
//! double-double RK4 first, confirmed by the MPFR RK4 at the spec's precision, climbing
//! to (p, 2p) when the two disagree. Report only, like the claim that hosts it
//! (clusters/codim-conjecture: V has eigenvalues of both signs).
//!
//! The figures read off z(T) (each computed from the run's end state, rounded to f64):
//! max_i ‖z_i(T)‖, diam z(T), the τ-clusters of z(T) for τ = ρ·diam z(0) at the host's
//! ρ, and the number of rows of P(T) whose diagonal entry exceeds 1 − 2⁻²⁰ (tokens
//! attending only to themselves). The two-precision comparison: the two real figures
//! agree within the spec's `check_tolerance` (relative) and the counts are equal. The
//! figures shown are the lower rung's of the first agreeing pair
//! ([`crate::dynamics::tiered`]), with the largest relative deviation of the two end
//! states (max_i |Δz_i| / max_i |z_i|, in MPFR at 128 bits).

use super::common::fmt_q;
use crate::dynamics::flow::{FlowOptions, FlowResult, Vars};
use crate::dynamics::tiered::{rk4_tiered, within_rel, Rung};
use crate::dynamics::variants::{diameter, eigenvalues_f64, max_norm, rows_f64, tau_clusters};
use crate::dynamics::workloads::cupy_workload;
use crate::outcome::{Presentation, Table};
use crate::spec::{exact, FieldError};
use rug::{Float, Rational};
use serde::{Deserialize, Serialize};

/// One largest-configuration run as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LargestSpec {
    /// Label for tables.
    pub name: String,
    /// Number of tokens.
    pub n: usize,
    /// Dimension.
    pub d: usize,
    /// The workload's seed (V, then z(0) from seed + 1).
    pub seed: u64,
    /// End time T (exact).
    pub t_end: String,
    /// RK4 step h (exact; T/h an integer).
    pub h: String,
    /// How often the MPFR precision may be doubled past the spec's (default 1).
    #[serde(default)]
    pub doublings: Option<u32>,
}

/// One largest-configuration run, resolved.
#[derive(Debug, Clone)]
pub struct Largest {
    /// Label for tables.
    pub name: String,
    /// Number of tokens.
    pub n: usize,
    /// Dimension.
    pub d: usize,
    /// The workload's seed.
    pub seed: u64,
    /// End time T.
    pub t_end: Rational,
    /// RK4 step h.
    pub h: Rational,
    /// MPFR doublings past the spec's precision.
    pub doublings: u32,
}

/// Sizes accepted (the dd tier's products are n²d per right-hand side).
const MAX_SIZE: usize = 1024;
/// At most this many RK4 steps.
const MAX_STEPS: usize = 20_000;
/// The work of a whole entry, n²·d·steps·2^(doublings + 1) (each RK4 step's products are
/// n²d, and the MPFR rungs at p, 2p, …, 2^k·p cost at most 2^(k+1) times the first): at
/// most 2^34. The authors' configuration at n = d = 256, T = 15, h = 1/10 with one
/// doubling is 1.0·10¹⁰ (its 128-bit run took 341 CPU-s, bench/anchors/RESULTS.md), so
/// no accepted entry runs for hours; the sizes and steps alone would admit days. Weighed at
/// the spec's precision ([`crate::claims::shape::Resolving::weigh`]).
const MAX_WORK: u128 = 1 << 34;

/// Resolves `largest[i]`.
pub fn resolve(
    specs: &[LargestSpec],
    at: crate::claims::shape::Resolving,
) -> Result<Vec<Largest>, FieldError> {
    let mut out = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        let pre = format!("largest[{i}]");
        for (v, f) in [(s.n, "n"), (s.d, "d")] {
            if !(2..=MAX_SIZE).contains(&v) {
                return Err(FieldError::new(
                    format!("{pre}.{f}"),
                    format!("must be between 2 and {MAX_SIZE}"),
                ));
            }
        }
        let t_end = exact(&format!("{pre}.t_end"), &s.t_end)?;
        let h = exact(&format!("{pre}.h"), &s.h)?;
        if t_end <= 0 || h <= 0 {
            return Err(FieldError::new(
                format!("{pre}.h"),
                "t_end and h must be positive",
            ));
        }
        let ratio = Rational::from(&t_end / &h);
        if *ratio.denom() != 1 || ratio > MAX_STEPS as u32 {
            return Err(FieldError::new(
                format!("{pre}.h"),
                format!("t_end/h must be an integer of at most {MAX_STEPS}"),
            ));
        }
        let doublings = s.doublings.unwrap_or(1);
        if doublings > 3 {
            return Err(FieldError::new(
                format!("{pre}.doublings"),
                "must be at most 3",
            ));
        }
        let steps = u128::from(ratio.numer().to_u32().unwrap_or(u32::MAX));
        let work = ((s.n as u128).pow(2) * s.d as u128 * steps) << (doublings + 1);
        if at.weigh(work) > MAX_WORK {
            return Err(FieldError::new(
                format!("{pre}.n"),
                format!(
                    "n²·d·(t_end/h)·2^(doublings + 1) is {}, above the bound 2^34 (the authors' \
                     n = d = 256 run is 1.0·10¹⁰ at 128 bits)",
                    at.show(work)
                ),
            ));
        }
        out.push(Largest {
            name: s.name.clone(),
            n: s.n,
            d: s.d,
            seed: s.seed,
            t_end,
            h,
            doublings,
        });
    }
    Ok(out)
}

/// The figures of one run's end state (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    /// max_i ‖z_i(T)‖.
    pub max_norm: f64,
    /// diam z(T).
    pub diam: f64,
    /// τ-clusters of z(T) per ρ.
    pub clusters: Vec<usize>,
    /// Rows of P(T) with P_ii > 1 − 2⁻²⁰.
    pub self_rows: usize,
}

/// The figures of `res` with τ = ρ·`diam0` for each ρ in `taus`.
pub fn figures(res: &FlowResult, taus: &[f64], diam0: f64) -> Figures {
    let z = rows_f64(&res.state, res.d);
    let n = res.n;
    let self_rows = (0..n)
        .filter(|&i| res.p[i * n + i].to_f64() > 1.0 - 2f64.powi(-20))
        .count();
    Figures {
        max_norm: max_norm(&z),
        diam: diameter(&z),
        clusters: taus.iter().map(|t| tau_clusters(&z, t * diam0)).collect(),
        self_rows,
    }
}

/// The two-precision comparison (module docs).
pub fn agree(a: &Figures, b: &Figures, tol: f64) -> bool {
    within_rel(a.max_norm, b.max_norm, tol)
        && within_rel(a.diam, b.diam, tol)
        && a.clusters == b.clusters
        && a.self_rows == b.self_rows
}

/// max_i |a_i − b_i| / max_i |b_i| of two end states, at 128 bits.
pub fn state_deviation(a: &FlowResult, b: &FlowResult) -> f64 {
    let mut num = Float::new(128);
    let mut den = Float::new(128);
    for (x, y) in a.state.iter().zip(&b.state) {
        let dxy = Float::with_val(128, x - y).abs();
        if dxy > num {
            num = dxy;
        }
        let ay = Float::with_val(128, y.abs_ref());
        if ay > den {
            den = ay;
        }
    }
    Float::with_val(53, &num / &den).to_f64()
}

/// What one run found (strings and counts, so that a shard's JSON round trip is exact).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct LargestRun {
    /// The row of the table after the name (or the failure).
    pub cells: Vec<String>,
    /// Whether a pair agreed.
    pub settled: bool,
    /// The presented max‖z(T)‖, as text (17 significant digits).
    pub max_norm: String,
}

/// Runs `l` on the tier ladder from `prec` bits; `taus` are the host's ρ, `tol` the
/// spec's `check_tolerance`.
pub fn run(l: &Largest, prec: u32, taus: &[Rational], tol: f64) -> LargestRun {
    let (sys, z0) = cupy_workload(l.n, l.d, l.seed);
    let taus_f: Vec<f64> = taus.iter().map(Rational::to_f64).collect();
    let diam0 = diameter(&rows_f64(
        &crate::dynamics::variants::to_floats(&z0, 128),
        l.d,
    ));
    let k = eigenvalues_f64(&sys.v).iter().filter(|e| e.0 > 0.0).count();
    let tr = rk4_tiered(
        &sys,
        &z0,
        &l.t_end,
        &l.h,
        &FlowOptions::new(prec, Vars::Z),
        l.doublings,
        |r| figures(r, &taus_f, diam0),
        |a, b| agree(a, b, tol),
    );
    let fail = |r: &Rung<Figures>| match &r.run {
        Ok(_) => String::new(),
        Err(e) => format!("{}: {e}", r.tier.label()),
    };
    let mut cells = vec![
        format!("{}, {}", l.n, l.d),
        k.to_string(),
        format!("{}, {}", fmt_q(&l.t_end), fmt_q(&l.h)),
        tr.lower.tier.label(),
        tr.upper.tier.label(),
    ];
    let mut max_text = String::new();
    match (&tr.lower.run, &tr.lower.figures, &tr.upper.run) {
        (Ok(a), Some(f), Ok(b)) => {
            max_text = format!("{:.17e}", f.max_norm);
            cells.push(if tr.settled {
                "yes".into()
            } else {
                "no (top pair)".into()
            });
            cells.push(format!("{:.1e}", state_deviation(a, b)));
            cells.push(format!("{:.6e}", f.max_norm));
            cells.push(format!("{:.6e}", f.diam));
            cells.extend(f.clusters.iter().map(usize::to_string));
            cells.push(format!("{}/{}", f.self_rows, l.n));
        }
        _ => {
            let why = [fail(&tr.lower), fail(&tr.upper)]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("; ");
            cells.push(format!("no ({why})"));
        }
    }
    LargestRun {
        cells,
        settled: tr.settled,
        max_norm: max_text,
    }
}

/// The table, a figure and the notes for the runs (nothing when there are none).
pub fn present(
    out: &mut Presentation,
    ls: &[Largest],
    runs: &[LargestRun],
    taus: &[Rational],
    tol: f64,
) {
    if ls.is_empty() {
        return;
    }
    let mut cols: Vec<String> = [
        "run",
        "n, d",
        "k (eigenvalues of V > 0)",
        "T, h",
        "figures from",
        "confirmed by",
        "figures agree",
        "max|Δz(T)| / max|z(T)|",
        "max‖z(T)‖",
        "diam z(T)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for t in taus {
        cols.push(format!("τ-clusters of z(T), τ = {}·diam z(0)", fmt_q(t)));
    }
    cols.push("rows of P(T) with P_ii > 1 − 2⁻²⁰".into());
    let refs: Vec<&str> = cols.iter().map(String::as_str).collect();
    let mut t = Table::new(
        "The authors' largest configuration made exact (cupy-Tform.ipynb: QᵀK = I, V symmetric sparse), RK4 in z \
         on the flow's tier ladder",
        &refs,
    );
    for (l, r) in ls.iter().zip(runs) {
        let mut row = vec![l.name.clone()];
        row.extend(r.cells.iter().cloned());
        row.resize(cols.len(), "—".into());
        t.row(row);
    }
    out.tables.push(t);
    if let (Some(l), Some(r)) = (ls.last(), runs.last()) {
        if let Ok(v) = r.max_norm.parse::<f64>() {
            out.figure(
                "largest_max_norm",
                v,
                format!(
                    "max‖z(T)‖ = {v:.6e} of the largest configuration run (n = {}, d = {})",
                    l.n, l.d
                ),
            );
        }
    }
    out.note(format!(
        "The largest-configuration runs integrate ż_i = Σ_j P_ij V(z_j − z_i) by RK4 on the flow's tier ladder \
         (dynamics::tiered): the double-double tier (≈ 106 bits) first, confirmed by the MPFR RK4 at the spec's \
         precision; when the two runs' figures (max‖z(T)‖ and diam z(T) within check_tolerance = {tol:e} relative, \
         the counts equal) disagree, the ladder climbs to the MPFR pair (p, 2p). Both tiers are point arithmetic, \
         not certified: the table is an observation (report only), and the double-double figures are shown only \
         where the MPFR run agrees with them. V and z(0) are dynamics::workloads::cupy_workload (exact dyadic \
         rationals), the same workload as bench/anchors/run_dynamics.sh; run times are in \
         bench/anchors/RESULTS.md."
    ));
}
