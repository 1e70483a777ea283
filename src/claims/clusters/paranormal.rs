//! clusters/paranormal (\[paper\] `d:goodmulti`, `t:multiplicity`; clusters.md §3).
//!
//! Claim: for a good triple with multiplicity (QᵀK ≻ 0; ℝ^d = ℱ ⊕ 𝒢, both V-invariant,
//! V|_ℱ = λ Id with λ > 0, ρ(V|_𝒢) < λ) there is a bounded convex polytope 𝒦 ⊂ ℱ with
//! dist(z_i(t), (∂𝒦 ∪ {0}) × 𝒢) → 0 for every i.
//!
//! Checks (diagonal V, so ℱ and 𝒢 are spanned by coordinate axes and π_ℱ keeps the
//! ℱ-coordinates; the hypotheses are decided exactly by `dynamics::spectrum::paranormal`):
//! - per step (F2 with π_ℱ, a theorem of the map): for each ℱ-coordinate c,
//!   z_{i,c}^{k+1} = (1 − β) z_{i,c}^k + β Σ_j P_ij z_{j,c}^k with β = Δtλ/(1 + Δtλ) — proof: the c-th row
//!   of R^{−1}V is λ/(1 + Δtλ) e_cᵀ. So max_j and min_j of every ℱ-coordinate are monotone (the
//!   π_ℱ-hull's bounding box is nonincreasing; for dim ℱ = 1 it is the π_ℱ-hull). Proven in Coq
//!   for every instance and step (coq/HullMonotone.v, `coordinate_max_min`); on the run a
//!   consistency reading, which checks that the implementation agrees;
//! - at T (observed, two precisions; dim ℱ = 1): every ℱ-part within τ = 10·diam·e^{−λT} of
//!   {a_T, b_T, 0}; the 𝒢-part's spread is reported (free by the theorem).
//!
//! Gap case (report only): QᵀK not respecting ℱ ⊕ 𝒢 (clusters/paranormal-proof-gap).

use super::common::{build_all, Instance, InstanceSpec};
use super::hyperplanes::{
    count_levels, diameter, first_figure, horizon, hull_invariants, level_cells, levels,
    plane_plot, run_map, RunData,
};
use super::hyperplanes::{mat_lits, qk_terms, spd_formula};
use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::StatementError;
use crate::dynamics::observe::{Invariant, Record};
use crate::dynamics::spectrum::{self, Paranormal};
use crate::kernel::expr::build::{abs, and, eq, gt, int, lt};
use crate::kernel::{Checked, Interval, Statement};
use crate::outcome::{Observations, Presentation, Table};
use crate::spec::FieldError;
use serde::{Deserialize, Serialize};

/// Parameters of clusters/paranormal as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// The witnesses (diagonal V satisfying `d:goodmulti`).
    pub instances: Vec<InstanceSpec>,
    /// The gap case (report only; QᵀK need not respect ℱ ⊕ 𝒢).
    #[serde(default)]
    pub gap_cases: Vec<InstanceSpec>,
    /// The factor c in τ = c·diam(z(0))·e^{−λT} (clusters.md: 10).
    #[serde(default = "default_tau_factor")]
    pub tau_factor: f64,
}

fn default_tau_factor() -> f64 {
    10.0
}

/// Parameters of clusters/paranormal, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The witnesses, exact, each with its paranormal structure (dim ℱ = 1).
    pub instances: Vec<(Instance, Paranormal)>,
    /// The gap cases, exact.
    pub gap_cases: Vec<Instance>,
    /// The factor c in τ = c·diam(z(0))·e^{−λT}.
    pub tau_factor: f64,
}

const MAX_STEPS: usize = super::hyperplanes::MAX_STEPS;

/// clusters/paranormal.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(r: Raw, at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        super::common::check_run_work(
            &[("instances", &r.instances), ("gap_cases", &r.gap_cases)],
            MAX_STEPS,
            at,
        )?;
        let insts = build_all(&r.instances, "instances", MAX_STEPS, at)?;
        let mut instances = Vec::with_capacity(insts.len());
        for (i, inst) in insts.into_iter().enumerate() {
            let s = spectrum::paranormal(&inst.sys.qk, &inst.sys.v)
                .map_err(|(f, e)| FieldError::new(format!("instances[{i}].{f}"), e))?;
            if s.f_axes.len() != 1 {
                return Err(FieldError::new(
                    format!("instances[{i}].v"),
                    "the limit-structure check needs dim ℱ = 1 (one maximal diagonal entry)",
                ));
            }
            instances.push((inst, s));
        }
        let gap_cases = r
            .gap_cases
            .iter()
            .enumerate()
            .map(|(i, g)| g.build(&format!("gap_cases[{i}]"), MAX_STEPS, at))
            .collect::<Result<Vec<_>, _>>()?;
        if !(r.tau_factor.is_finite() && r.tau_factor > 0.0) {
            return Err(FieldError::new("tau_factor", "must be positive and finite"));
        }
        Ok(Params {
            instances,
            gap_cases,
            tau_factor: r.tau_factor,
        })
    }
    fn statement(
        p: &Params,
        claim: &str,
        _hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        Some(Ok(statement_of(
            p.instances.iter().map(|(inst, _)| inst),
            claim,
        )))
    }
    type Witness = Found;
    /// Every instance's run at two precisions, and the gap cases' runs.
    fn witness(p: &Params, ctx: &Ctx) -> Found {
        let prec = ctx.prec();
        let levels = p
            .instances
            .iter()
            .map(|(inst, par)| {
                let (n, d) = (inst.n, inst.sys.d);
                let fc = par.f_axes[0];
                let w = axis(d, fc, prec);
                let mut invs: Vec<_> = hull_invariants(&inst.name, "π_ℱ", &w).into_iter().collect();
                let every = (inst.steps / 60).max(1);
                let data = run_map(inst, prec, &mut invs, every);
                let records = invs.iter().map(Invariant::record).collect();
                drop(invs);
                let lam = par.lambda.to_f64();
                let t_end = inst.steps as f64 * inst.dt.to_f64();
                let tau = p.tau_factor * diameter(inst) * (-lam * t_end).exp();
                let z = data.states.last().expect("final");
                let levels = levels(&coord(z, n, d, fc), tau);
                let hi = run_map(inst, 2 * prec, &mut [], inst.steps);
                let zh: Vec<f64> = hi.last.u.iter().map(Interval::mid_f64).collect();
                let hi = super::hyperplanes::levels(&coord(&zh, n, d, fc), tau);
                let g_spread = |z: &[f64]| {
                    par.g_axes
                        .iter()
                        .map(|&c| spread(&coord(z, n, d, c)))
                        .fold(0.0, f64::max)
                };
                Levels {
                    g_spread: (g_spread(&data.states[0]), g_spread(z)),
                    records,
                    data,
                    tau,
                    levels,
                    hi,
                }
            })
            .collect();
        let gaps = p.gap_cases.iter().map(|g| gap_case(g, p, prec)).collect();
        Found { levels, gaps }
    }
    /// The hull monotonicity (consistency) and the ℱ-structure at T at two precisions
    /// (observed). Nothing when the statement was not decided.
    fn observe(p: &Params, w: &Found, proof: Option<&Checked>, ctx: &Ctx, out: &mut Observations) {
        if proof.is_none() {
            return;
        }
        let prec = ctx.prec();
        for ((inst, _), r) in p.instances.iter().zip(&w.levels) {
            for rec in &r.records {
                rec.consistency_into(out);
            }
            let tau = r.tau;
            let (a, b, ref labels, worst) = r.levels;
            let (ah, bh, ref lh, wh) = r.hi;
            out.observe(
                format!("{}: every ℱ-part π_ℱ(z_i(T)) within τ of {{a_T, b_T, 0}}", inst.name),
                labels.iter().all(|l| *l != "none"),
                format!(
                    "T = {}, τ = 10·diam·e^(−λT) = {tau:.3e}, a_T = {a:.10}, b_T = {b:.10}, largest distance {worst:.3e}",
                    horizon(inst)
                ),
            );
            out.observe(
                format!("{}: same ℱ-structure at {} and {} bits", inst.name, prec, 2 * prec),
                lh == labels && (ah - a).abs() <= tau && (bh - b).abs() <= tau,
                format!(
                    "at {} bits: a_T = {ah:.10}, b_T = {bh:.10}, largest distance {wh:.3e}; labels equal: {}",
                    2 * prec,
                    lh == labels
                ),
            );
        }
    }
    /// The ℱ-parts table, the plots, the first witness's figure, the gap cases and
    /// the note. Nothing when the statement was not decided.
    fn present(p: &Params, w: &Found, proof: Option<&Checked>, _: &Ctx, out: &mut Presentation) {
        if proof.is_none() {
            return;
        }
        let mut table = Table::new(
            "ℱ-parts at T: π_ℱ(z_i(T)) ∈ {a_T, b_T, 0}; the 𝒢-part is free (tokens numbered from 1)",
            &[
                "instance",
                "λ, ρ(V|_𝒢)",
                "T",
                "τ",
                "a_T",
                "b_T",
                "max dist",
                "tokens at a_T",
                "tokens at b_T",
                "tokens at 0",
                "off all three",
                "𝒢-spread at 0 → T",
            ],
        );
        let mut first = None;
        for (idx, ((inst, par), r)) in p.instances.iter().zip(&w.levels).enumerate() {
            let (n, d) = (inst.n, inst.sys.d);
            let fc = par.f_axes[0];
            let data = &r.data;
            let tau = r.tau;
            let (a, b, _, worst) = r.levels;
            let (g_spread0, g_spread) = r.g_spread;
            first.get_or_insert((worst, tau));
            let mut row = vec![
                inst.name.clone(),
                format!(
                    "{}, {} (ℱ = axes {:?}, 𝒢 = axes {:?})",
                    par.lambda,
                    par.rho_g,
                    par.f_axes.iter().map(|c| c + 1).collect::<Vec<_>>(),
                    par.g_axes.iter().map(|c| c + 1).collect::<Vec<_>>()
                ),
                horizon(inst),
            ];
            row.extend(level_cells(tau, &r.levels));
            row.push(format!("{g_spread0:.4} → {g_spread:.4}"));
            table.row(row);
            let slug = format!("w{}", idx + 1);
            if d == 2 {
                let mut e_fc = [0.0; 2];
                e_fc[fc] = 1.0;
                out.plots
                    .push(plane_plot(&slug, &inst.name, data, &e_fc, "π_ℱ", a, b));
            }
            data.visuals(&mut out.plots, &slug, &inst.name, n, d);
        }
        first_figure(
            out,
            "max_dist_to_levels",
            "the ℱ-parts to {a_T, b_T, 0}",
            first,
        );
        out.tables.push(table);
        gap_cases(p, &w.gaps, out);
        out.note(
            "The dynamics are the discrete map (a residual attention layer with tied weights) with z^k = R^(−k) x^k. \
             The monotonicity of the ℱ-coordinates' max and min is a theorem of the map (F2 with π_ℱ; proven in Coq, \
             coq/HullMonotone.v, coordinate_max_min), recorded as a consistency reading (observed: it never certifies nor refutes); the hypotheses of d:goodmulti are the claim's \
             statement, decided exactly by the kernel; the limit structure at T is an observation with the tolerance guide of clusters.md.",
        );
    }
}

/// The statement: the hypotheses of d:goodmulti for each witness, decided exactly over
/// the spec's literals — V diagonal (so ℱ and 𝒢 are spanned by coordinate axes and
/// both are V-invariant), QᵀK symmetric positive definite (Sylvester), and
/// V|_ℱ = λ Id with λ > 0 and ρ(V|_𝒢) < λ. ℱ is the span of the axes whose diagonal
/// entry is the largest (the builder's choice; the formula checks it).
fn statement_of<'a>(insts: impl Iterator<Item = &'a Instance>, claim: &str) -> Statement {
    let mut st = Statement::new(claim);
    for inst in insts {
        let v = mat_lits(&inst.sys.v);
        let d = inst.sys.d;
        let mut off = Vec::new();
        for (i, row) in v.iter().enumerate() {
            for (j, x) in row.iter().enumerate() {
                if i != j {
                    off.push(eq(x.clone(), int(0)));
                }
            }
        }
        st.state(
            format!(
                "{}: V is diagonal, so ℱ and 𝒢 (spanned by coordinate axes) are V-invariant",
                inst.name
            ),
            &and(off),
        );
        st.state(
            format!("{}: QᵀK ≻ 0 (symmetric, leading minors > 0)", inst.name),
            &spd_formula(&qk_terms(&inst.sys.q, &inst.sys.k)),
        );
        let lam = (0..d)
            .max_by(|&a, &b| inst.sys.v.at(a, a).cmp(inst.sys.v.at(b, b)))
            .expect("d ≥ 1");
        let top = || v[lam][lam].clone();
        let mut parts = vec![gt(top(), int(0))];
        for i in (0..d).filter(|&i| i != lam) {
            if *inst.sys.v.at(i, i) == *inst.sys.v.at(lam, lam) {
                parts.push(eq(v[i][i].clone(), top()));
            } else {
                parts.push(lt(abs(v[i][i].clone()), top()));
            }
        }
        st.state(
            format!("{}: V|_ℱ = λ Id with λ > 0 and ρ(V|_𝒢) < λ", inst.name),
            &and(parts),
        );
    }
    st
}

fn axis(d: usize, c: usize, prec: u32) -> Vec<Interval> {
    (0..d)
        .map(|j| {
            if j == c {
                Interval::one(prec)
            } else {
                Interval::zero(prec)
            }
        })
        .collect()
}

fn coord(z: &[f64], n: usize, d: usize, c: usize) -> Vec<f64> {
    (0..n).map(|i| z[i * d + c]).collect()
}

fn spread(v: &[f64]) -> f64 {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    hi - lo
}

/// What the search found: every instance's run, and the gap cases' runs.
pub struct Found {
    /// Per instance.
    levels: Vec<Levels>,
    /// Per gap case.
    gaps: Vec<GapCase>,
}

/// One instance's run: the invariants' records, the sampled run, τ, the ℱ-levels
/// at T, and the same at twice the precision.
pub struct Levels {
    records: Vec<Record>,
    data: RunData,
    tau: f64,
    levels: (f64, f64, Vec<&'static str>, f64),
    hi: (f64, f64, Vec<&'static str>, f64),
    /// The largest 𝒢-spread at 0 and at T.
    g_spread: (f64, f64),
}

/// One gap case's run (report only): whether the hypotheses hold, the sampled
/// run, and the structure of the ℱ-part at T.
struct GapCase {
    /// The hypotheses of d:goodmulti, decided exactly (or why they fail).
    hyp: String,
    /// The run, sampled 60 times.
    data: RunData,
    /// τ-levels of the ℱ-part at T.
    levels: usize,
    /// Tokens whose ℱ-part is within τ of {a_T, b_T, 0}.
    near: usize,
    /// The largest distance to {a_T, b_T, 0}.
    worst: f64,
    /// The 𝒢-spread at 0 and at T.
    g_spread: (f64, f64),
}

/// Runs gap case `inst` (ℱ = axis 1, 𝒢 = axis 2; τ = c·diam·e^(−T), λ = 1).
fn gap_case(inst: &Instance, p: &Params, prec: u32) -> GapCase {
    let (n, d) = (inst.n, inst.sys.d);
    let hyp = match spectrum::paranormal(&inst.sys.qk, &inst.sys.v) {
        Ok(s) => format!("hold (λ = {}, ρ(V|_𝒢) = {})", s.lambda, s.rho_g),
        Err((_, e)) => e,
    };
    let data = run_map(inst, prec, &mut [], (inst.steps / 60).max(1));
    let z = data.states.last().expect("final");
    let f = coord(z, n, d, 0);
    let tau = p.tau_factor * diameter(inst) * (-(inst.steps as f64) * inst.dt.to_f64()).exp();
    let (_, _, labels, worst) = levels(&f, tau);
    GapCase {
        hyp,
        levels: count_levels(&f, tau),
        near: labels.iter().filter(|l| **l != "none").count(),
        worst,
        g_spread: (
            spread(&coord(&data.states[0], n, d, 1)),
            spread(&coord(z, n, d, 1)),
        ),
        data,
    }
}

/// The gap cases' table, plots and note (nothing when there are none).
fn gap_cases(p: &Params, runs: &[GapCase], out: &mut Presentation) {
    if runs.is_empty() {
        return;
    }
    let mut t = Table::new(
        "Gap case (report only, nothing asserted): QᵀK = [[1, 1/2], [1/2, 1]] does not respect ℱ ⊕ 𝒢 \
         (see clusters/paranormal-proof-gap)",
        &[
            "instance",
            "hypotheses d:goodmulti (exact)",
            "T",
            "τ-levels of the ℱ-part",
            "ℱ-parts within τ of {a_T, b_T, 0}",
            "max dist",
            "𝒢-spread at 0 → T",
        ],
    );
    for (i, (inst, g)) in p.gap_cases.iter().zip(runs).enumerate() {
        let (g0, gt) = g.g_spread;
        t.row(vec![
            inst.name.clone(),
            g.hyp.clone(),
            horizon(inst),
            g.levels.to_string(),
            format!("{}/{}", g.near, inst.n),
            format!("{:.2e}", g.worst),
            format!("{g0:.4} → {gt:.4}"),
        ]);
        out.plots.push(crate::dynamics::plots::trajectories(
            &format!("gap{}-tokens", i + 1),
            &format!("gap case {}: token trajectories (z)", inst.name),
            &g.data.times,
            &g.data.states,
            inst.n,
            inst.sys.d,
        ));
    }
    out.tables.push(t);
    out.note(
        "The gap cases are report only: no check is recorded for them. The theorem's hypotheses hold there \
         (QᵀK ≻ 0), but the proof's bound e:boundrj fails when A = (QᵀK)^(1/2) does not map ℱ → ℱ and 𝒢 → 𝒢 \
         (clusters/paranormal-proof-gap); the table shows what the dynamics do. τ = 10·diam·e^(−T) with λ = 1.",
    );
}
