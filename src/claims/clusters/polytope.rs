//! clusters/polytope (\[paper\] `t:Idcase11int`, full form `t:Idcase11`, `p:noninc`,
//! `c:theziunifbdd`; clusters.md §3).
//!
//! Claim: for V = I_d and QᵀK ≻ 0 there is a convex polytope 𝒦 with vertices
//! v_1..v_m such that Cx{z_i(t)} → 𝒦, the set 𝒮 = {x ∈ 𝒦 : ‖Ax‖² = max_j ⟨Ax, Av_j⟩}
//! (A = (QᵀK)^{1/2}) is finite with {v_j} ⊆ 𝒮 ⊆ ∂𝒦 ∪ {0}, and every z_i(t) converges
//! to a point of 𝒮. ‖Ax‖² = xᵀ(QᵀK)x and ⟨Ax, Ay⟩ = xᵀ(QᵀK)y, so no square root of QᵀK
//! is ever formed.
//!
//! Checks, on the discrete map (D) with V = I (z^k = R^{−k} x^k, R = (1 + Δt)I),
//! in outward-rounded intervals:
//! - per step (a consistency reading, never certified; F1: z_i^{k+1} = (1 − α)z_i^k +
//!   α Σ_j P_ij z_j^k with α = Δt/(1 + Δt), a convex combination, so the hull is
//!   nonincreasing): for every fixed direction u, max_i ⟨u, z_i^{k+1}⟩ ≤ max_j ⟨u, z_j^k⟩
//!   — a theorem of the map, proven in Coq (coq/HullMonotone.v, `support_max_min`,
//!   `hull_step`), recorded as "no step certifiably violates it" (where the
//!   tokens have converged the two sides are equal up to rounding, so the enclosures
//!   cannot prove the margin ≥ 0 and a tally would be undecided);
//! - at T (observed, tolerance τ = c·diam(z(0))·e^{−T} from clusters.md): hull vertices
//!   v_j of z(T) (exact hull of the enclosure midpoints, [`hull`]); for every i either
//!   ‖z_i‖ ≤ τ, or z_i is within τ of ∂Cx and |‖Az_i‖² − max_j ⟨Az_i, Av_j⟩| ≤ L·τ with
//!   L = 3‖QᵀK‖R0 the Lipschitz constant of that residual on B(0, R0), R0 = max_i ‖z_i(0)‖
//!   (the residual is quadratic in z; see `gap_lipschitz`);
//!   max_i ‖ż_i‖ (as ‖z^{k+1} − z^k‖/Δt) decreasing over the last time unit; the same
//!   leaders, limit-point count and classification at twice the precision.
//!
//! Hypothesis ablations (report only, nothing asserted): the same tokens with QᵀK
//! indefinite or only semidefinite.

use super::common::{build_all, fmt_q, Instance, InstanceSpec};
use crate::claims::shape::Ctx;
use crate::dynamics::discrete::{mids, DiscreteMap, Form, State};
use crate::dynamics::hull::{self, Hull, PointSet};
use crate::dynamics::model::Mat;
use crate::dynamics::observe::{functional, max_all, sq_norms, Tally};
use crate::kernel::{Checked, Interval};
use crate::outcome::{Observations, Plot, Presentation, Series, Style, Table};
use crate::spec::{ensure, exact, FieldError};
use rug::{Integer, Rational};
use serde::{Deserialize, Serialize};

/// Parameters of clusters/polytope as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// The witnesses: V = I and QᵀK symmetric positive definite are required; d ∈ {2, 3}.
    pub instances: Vec<InstanceSpec>,
    /// Witnesses added by a profile (e.g. the large full-profile run); same rules.
    #[serde(default)]
    pub extra_instances: Vec<InstanceSpec>,
    /// Hypothesis ablations (report only): V = I, d ∈ {2, 3}, QᵀK arbitrary.
    #[serde(default)]
    pub ablations: Vec<InstanceSpec>,
    /// Number of fixed directions u for the support-function check (≥ 4).
    pub directions: usize,
    /// c in τ = c·diam(z(0))·e^{−T} (clusters.md: 10).
    pub tau_factor: String,
}

const MAX_STEPS: usize = 2_000;

/// Runs double their precision until the enclosures at T are this narrow (≤ 8×).
const RESOLVED_WIDTH: f64 = 1e-20;

/// Directions are integer vectors on a grid of 2^DIR_BITS (only their direction matters).
const DIR_BITS: i32 = 16;

fn check_instance(inst: &Instance, field: &str, need_spd: bool) -> Result<(), FieldError> {
    let d = inst.sys.d;
    ensure(
        d == 2 || d == 3,
        format!("{field}.d"),
        "convex hulls are implemented for d = 2 and d = 3",
    )?;
    ensure(
        inst.sys.v == Mat::identity(d),
        format!("{field}.v"),
        "this claim is the case V = I_d (use v = \"I\")",
    )?;
    if need_spd {
        let minors: Vec<String> = inst.sys.qk.leading_minors().iter().map(fmt_q).collect();
        ensure(
            inst.sys.qk.is_positive_definite(),
            format!("{field}.q"),
            format!(
                "hypothesis QᵀK ≻ 0 fails: QᵀK must be symmetric positive definite (symmetric: {}, \
                 leading minors {}); indefinite QᵀK belongs under `ablations`",
                inst.sys.qk.is_symmetric(),
                minors.join(", ")
            ),
        )?;
    }
    let unit = unit_steps(&inst.dt);
    ensure(
        inst.steps > unit,
        format!("{field}.steps"),
        "the horizon must exceed one time unit (the speed is compared over the last one)",
    )
}

/// Steps per time unit, ⌈1/Δt⌉.
fn unit_steps(dt: &Rational) -> usize {
    Rational::from(dt.recip_ref())
        .ceil()
        .numer()
        .to_usize()
        .unwrap_or(usize::MAX)
}

/// Parameters of clusters/polytope, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The witnesses (`instances`, then `extra_instances`), exact and checked.
    pub main: Vec<Instance>,
    /// The ablations, exact.
    pub ablations: Vec<Instance>,
    /// Number of fixed directions u for the support-function check.
    pub directions: usize,
    /// c in τ = c·diam(z(0))·e^{−T}, positive.
    pub tau_factor: Rational,
}

struct Witnesses {
    main: Vec<Instance>,
    ablations: Vec<Instance>,
}

fn build(p: &Raw, at: crate::claims::shape::Resolving) -> Result<Witnesses, FieldError> {
    let mut main = build_all(&p.instances, "instances", MAX_STEPS, at)?;
    for (i, inst) in main.iter().enumerate() {
        check_instance(inst, &format!("instances[{i}]"), true)?;
    }
    for (i, s) in p.extra_instances.iter().enumerate() {
        let field = format!("extra_instances[{i}]");
        let inst = s.build(&field, MAX_STEPS, at)?;
        check_instance(&inst, &field, true)?;
        main.push(inst);
    }
    let mut ablations = Vec::new();
    for (i, s) in p.ablations.iter().enumerate() {
        let field = format!("ablations[{i}]");
        let inst = s.build(&field, MAX_STEPS, at)?;
        check_instance(&inst, &field, false)?;
        ablations.push(inst);
    }
    Ok(Witnesses { main, ablations })
}

/// clusters/polytope.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(r: Raw, at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        super::common::check_run_work(
            &[
                ("instances", &r.instances),
                ("extra_instances", &r.extra_instances),
                ("ablations", &r.ablations),
            ],
            MAX_STEPS,
            at,
        )?;
        let w = build(&r, at)?;
        ensure(
            (4..=1024).contains(&r.directions),
            "directions",
            "must be between 4 and 1024",
        )?;
        let c = exact("tau_factor", &r.tau_factor)?;
        ensure(c > 0, "tau_factor", "must be positive")?;
        Ok(Params {
            main: w.main,
            ablations: w.ablations,
            directions: r.directions,
            tau_factor: c,
        })
    }
    type Witness = Found;
    /// Every instance's run at two precisions and its structure at T.
    fn witness(p: &Params, ctx: &Ctx) -> Found {
        let c = &p.tau_factor;
        let prec = ctx.prec();
        let limits = p
            .main
            .iter()
            .map(|inst| {
                let dirs = directions(inst.sys.d, p.directions);
                let (a, bits) = simulate_resolved(inst, &dirs, prec);
                let b = simulate(inst, &dirs, 2 * bits, false);
                let tau = tau_for(inst, c, bits);
                let structure = match (
                    analyse(inst, &a.last.u, &tau),
                    analyse(inst, &b.last.u, &tau.with_prec(2 * bits)),
                ) {
                    (Ok(x), Ok(y)) => Ok((x, y)),
                    (Err(e), _) | (_, Err(e)) => Err(e),
                };
                // the Hausdorff distance of the hull vertices one time unit apart
                let haus = structure.as_ref().ok().map(|(sa, _)| {
                    let prev = PointSet::from_midpoints(inst.sys.d, &a.unit_before)?;
                    let hp = hull::hull(&prev);
                    Ok(hull::hausdorff(
                        &prev.subset(&hp.vertices),
                        &sa.ps.subset(&sa.hull.vertices),
                        prec,
                    ))
                });
                Limit {
                    speeds: speeds(&a),
                    outline: outline(inst, &a),
                    a,
                    bits,
                    tau,
                    structure,
                    haus,
                }
            })
            .collect();
        let ablations = p
            .ablations
            .iter()
            .map(|inst| {
                let dirs = directions(inst.sys.d, p.directions);
                let (a, bits) = simulate_resolved(inst, &dirs, prec);
                let structure = analyse(inst, &a.last.u, &tau_for(inst, c, bits));
                let (n, d) = (inst.n, inst.sys.d);
                let m = mids(&a.last.u);
                let max_norm = (0..n)
                    .map(|i| {
                        m[i * d..(i + 1) * d]
                            .iter()
                            .map(|x| x * x)
                            .sum::<f64>()
                            .sqrt()
                    })
                    .fold(0.0, f64::max);
                Ablation {
                    max_norm,
                    outline: outline(inst, &a),
                    a,
                    bits,
                    structure,
                }
            })
            .collect();
        Found { limits, ablations }
    }
    /// The hull monotonicity (consistency), and the structure at T, the speeds and the
    /// two precisions (observed).
    fn observe(p: &Params, w: &Found, _: Option<&Checked>, _: &Ctx, out: &mut Observations) {
        let c = &p.tau_factor;
        for (inst, l) in p.main.iter().zip(&w.limits) {
            let n = inst.n;
            let (a, bits, tau) = (&l.a, l.bits, &l.tau);
            let name = &inst.name;
            out.consistency(
                format!(
                    "{name}: support function h(u) = max_i ⟨u, z_i⟩ nonincreasing on every step of (D) \
                     for {} fixed directions (F1; a theorem of the map, no step certifiably violates it)",
                    p.directions
                ),
                a.support.consistency(),
                a.support.consistency_summary(),
            );
            let t_end = Rational::from(&inst.dt * inst.steps as u32);
            let (sa, sb) = match &l.structure {
                Ok((x, y)) => (x, y),
                Err(e) => {
                    out.observe(format!("{name}: hull of z(T)"), false, e.to_string());
                    continue;
                }
            };
            let open: Vec<usize> = (0..n).filter(|&i| sa.roles[i] == Role::Open).collect();
            out.observe(
                format!(
                    "{name}: at T = {}, every z_i has ‖z_i‖ ≤ τ, or is within τ of ∂Cx with \
                     |‖Az_i‖² − max_j ⟨Az_i, Av_j⟩| ≤ L·τ (τ = {}·diam(z(0))·e^{{−T}}, L = 3‖QᵀK‖_F·max‖z(0)‖)",
                    fmt_q(&t_end),
                    fmt_q(c)
                ),
                open.is_empty(),
                format!(
                    "τ ∈ {}; L·τ ∈ {}; worst residual ÷ tolerance ≤ {:.3e}; max_i |‖Az_i‖² − max_j ⟨Az_i, Av_j⟩| / τ \
                     ≤ {:.3e} (the literal reading, which compares a quadratic quantity with a length); tokens not \
                     within tolerance of 𝒮: {:?}; enclosure width ≤ {:.1e}",
                    tau.fmt_outward(6),
                    sa.tau_gap.fmt_outward(6),
                    sa.worst,
                    sa.gap_over_tau,
                    open,
                    a.width
                ),
            );
            let (dec, first_speed, last_speed) = &l.speeds;
            out.observe(
                format!("{name}: max_i ‖ż_i‖ (as ‖z^{{k+1}} − z^k‖/Δt) strictly decreasing over the last time unit"),
                *dec,
                format!(
                    "from {} to {} over {} steps",
                    first_speed.fmt_outward(4),
                    last_speed.fmt_outward(4),
                    a.speeds.len()
                ),
            );
            let same = same(sa, sb);
            out.observe(
                format!(
                    "{name}: the same leaders, limit-point count and token roles at the run's precision and at twice it"
                ),
                same,
                format!(
                    "{bits} vs {} bits: leaders {{{}}} vs {{{}}}; limit points {} vs {}",
                    2 * bits,
                    leaders(sa),
                    leaders(sb),
                    sa.limit_points,
                    sb.limit_points
                ),
            );
        }
    }
    /// The summary and token tables, the snapshots, the pictures of the first
    /// instance, the figures, the ablations and the notes.
    fn present(p: &Params, w: &Found, _: Option<&Checked>, _: &Ctx, out: &mut Presentation) {
        let mut summary = Table::new(
            "Polytope limit at T: hull vertices (leaders), limit points and residuals",
            &[
                "instance",
                "n, d",
                "QᵀK",
                "T",
                "precision (bits)",
                "τ",
                "leaders (hull vertices)",
                "τ-distinct limit points",
                "near 0",
                "worst residual ÷ tolerance",
                "max‖ż‖ at T−1 → T",
                "Hausdorff(vertices T−1, T)",
                "same at 2× precision",
            ],
        );
        let mut worst_all: f64 = 0.0;
        let mut first_limit_points = 0usize;
        let mut lp_figs = Vec::new();
        for (idx, (inst, l)) in p.main.iter().zip(&w.limits).enumerate() {
            let (n, d) = (inst.n, inst.sys.d);
            let (a, bits, tau) = (&l.a, l.bits, &l.tau);
            let name = &inst.name;
            let t_end = Rational::from(&inst.dt * inst.steps as u32);
            let Ok((sa, sb)) = &l.structure else {
                continue;
            };
            let (_, first_speed, last_speed) = &l.speeds;
            let same = same(sa, sb);
            let haus = match &l.haus {
                Some(Ok(h)) => h.fmt_hi(3),
                Some(Err(e)) => e.to_string(),
                None => String::new(),
            };
            worst_all = worst_all.max(sa.worst);
            if idx == 0 {
                first_limit_points = sa.limit_points;
            }
            lp_figs.push((
                format!("limit_points_{idx}"),
                sa.limit_points as f64,
                format!(
                    "{name}: {} τ-distinct limit points, {} leaders",
                    sa.limit_points,
                    sa.hull.vertices.len()
                ),
            ));
            summary.row(vec![
                name.clone(),
                format!("{n}, {d}"),
                qk_text(&inst.sys.qk),
                fmt_q(&t_end),
                bits.to_string(),
                tau.fmt_outward(4),
                leaders(sa),
                sa.limit_points.to_string(),
                sa.roles
                    .iter()
                    .filter(|r| **r == Role::Zero)
                    .count()
                    .to_string(),
                format!("{:.3e}", sa.worst),
                format!("{} → {}", first_speed.fmt_hi(3), last_speed.fmt_hi(3)),
                haus,
                if same { "yes".into() } else { "no".into() },
            ]);
            if n <= 32 {
                let mut t = Table::new(
                    format!("{name}: tokens at T (roles relative to the hull of z(T))"),
                    &[
                        "i",
                        "z_i(T)",
                        "‖z_i‖",
                        "distance to ∂Cx",
                        "‖Az_i‖² − max_j ⟨Az_i, Av_j⟩",
                        "role",
                    ],
                );
                for i in 0..n {
                    let z: Vec<String> = a.last.u[i * d..(i + 1) * d]
                        .iter()
                        .map(|x| x.fmt_mid(6))
                        .collect();
                    t.row(vec![
                        (i + 1).to_string(),
                        format!("({})", z.join(", ")),
                        sa.norms[i].fmt_hi(3),
                        sa.bdist[i].fmt_outward(3),
                        sa.gaps[i].fmt_outward(3),
                        sa.roles[i].as_str().into(),
                    ]);
                }
                out.tables.push(t);
            }
            out.plots.push(snapshot_plot(
                &slugify(idx, "snapshots-"),
                inst,
                a,
                l.outline.as_deref(),
            ));
            if idx == 0 {
                let (times, states): (Vec<f64>, Vec<Vec<f64>>) = a.samples.iter().cloned().unzip();
                super::common::add_visuals(
                    &mut out.plots,
                    "run",
                    name,
                    &times,
                    &states,
                    n,
                    d,
                    &a.last.p,
                );
            }
        }
        out.tables.insert(0, summary);
        out.figure(
            "worst_residual_over_tau",
            worst_all,
            format!(
                "largest max_i min(‖z_i‖/τ, max(dist(z_i, ∂Cx)/τ, |‖Az_i‖² − max_j⟨Az_i, Av_j⟩|/(Lτ))) over the \
                 witnesses at T: {worst_all:.3e} (≤ 1 is the asserted structure); first witness: \
                 {first_limit_points} limit points"
            ),
        );
        for (name, v, text) in lp_figs {
            out.figure(name, v, text);
        }
        ablations(out, p, &w.ablations);
        out.note(
            "No convergence rate is stated in the paper; τ = 10·diam(z(0))·e^{−T} is the derived tolerance guide of \
             clusters.md (after P reaches hardmax, max_i ‖ż_i‖ decays like e^{−t}). The hull of z(T) is the exact hull \
             of the enclosure midpoints; the distances and residuals are interval enclosures; the structure at T is \
             an observation, so the verdict is at most supported.",
        );
        out.note(
            "The residual g(z_i) = ‖Az_i‖² − max_j ⟨Az_i, Av_j⟩ is quadratic in z, so its tolerance is L·τ with \
             L = 3‖QᵀK‖_F·max_i ‖z_i(0)‖, the Lipschitz constant of g on Cx z(0) ⊂ B(0, R0) [derived]: z_i within τ \
             of a point s of 𝒮 (g(s) = 0) gives |g(z_i)| ≤ Lτ. clusters.md writes τ itself; that literal ratio \
             max_i |g(z_i)|/τ is printed in each check's evidence.",
        );
        out.note(
            "Δt = 1/10 matches the authors' step (their \"RK4\" is forward Euler on z with Δt = 0.1, clusters.md §6); \
             on (D) the hull is nonincreasing for every Δt ≥ 0 (F1; proven in Coq, coq/HullMonotone.v, hull_step).",
        );
    }
}

/// The fixed directions as exact integer vectors: in 2-D the angles 2πk/m; in 3-D
/// the Fibonacci points z_k = 1 − (2k+1)/m, φ_k = kπ(3 − √5) on the sphere. Each
/// coordinate is the MPFR midpoint (correctly rounded, so identical on every machine)
/// times 2^16, rounded to an integer.
fn directions(d: usize, m: usize) -> Vec<Vec<Integer>> {
    let prec = 128;
    let round =
        |x: Interval| -> Integer { x.mul_2exp(DIR_BITS).mid().to_integer().unwrap_or_default() };
    let pi = Interval::pi(prec);
    (0..m)
        .map(|k| {
            if d == 2 {
                let th = (&pi * &Interval::from_i64(prec, 2 * k as i64)).div_i64(m as i64);
                vec![round(th.cos()), round(th.sin())]
            } else {
                let z = Interval::one(prec)
                    - Interval::from_i64(prec, 2 * k as i64 + 1).div_i64(m as i64);
                let r = (Interval::one(prec) - z.powi(2)).sqrt();
                let golden =
                    &pi * &(Interval::from_i64(prec, 3) - Interval::from_i64(prec, 5).sqrt());
                let ph = golden.mul_i64(k as i64);
                vec![round(&r * &ph.cos()), round(&r * &ph.sin()), round(z)]
            }
        })
        .collect()
}

/// One run of (D): the final state, the state one time unit earlier, the speeds
/// over the last time unit, sampled states for pictures, and (when `certify`) the
/// support-function tally.
struct Run {
    last: State,
    unit_before: Vec<Interval>,
    speeds: Vec<(f64, Interval)>,
    samples: Vec<(f64, Vec<f64>)>,
    support: Tally,
    width: f64,
}

fn simulate(inst: &Instance, dirs: &[Vec<Integer>], prec: u32, certify: bool) -> Run {
    let (n, d) = (inst.n, inst.sys.d);
    let mut map = DiscreteMap::new(&inst.sys, n, &inst.dt, Form::LayerRescaled, prec)
        .expect("R = (1 + Δt)I is invertible");
    let dirs: Vec<Vec<Interval>> = dirs
        .iter()
        .map(|u| u.iter().map(|c| Interval::from_integer(prec, c)).collect())
        .collect();
    let support = |u: &[Interval]| -> Vec<Interval> {
        dirs.iter()
            .map(|w| max_all(&functional(u, n, d, w)))
            .collect()
    };
    let dt = inst.dt.to_f64();
    let dt_i = Interval::from_rational(prec, &inst.dt);
    let steps = inst.steps;
    let unit = unit_steps(&inst.dt).min(steps);
    let sample_every = (steps / 60).max(1);
    let mut s = map.start(&inst.tokens);
    let mut h_prev = if certify { support(&s.u) } else { Vec::new() };
    let mut run = Run {
        last: s.clone(),
        unit_before: Vec::new(),
        speeds: Vec::new(),
        samples: vec![(0.0, mids(&s.u))],
        support: Tally::default(),
        width: 0.0,
    };
    for _ in 0..steps {
        let next = map.step(&s);
        if certify {
            let h = support(&next.u);
            // margin = min_u (h_k(u) − h_{k+1}(u)) ≥ 0 iff every support value is nonincreasing.
            let margin = h_prev
                .iter()
                .zip(&h)
                .map(|(a, b)| a - b)
                .reduce(|m, x| m.min(&x))
                .expect("at least one direction");
            run.support.record(next.k, &margin);
            h_prev = h;
        }
        if next.k + unit == steps {
            run.unit_before = next.u.clone();
        }
        if next.k + unit >= steps {
            let diff: Vec<Interval> = next.u.iter().zip(&s.u).map(|(a, b)| a - b).collect();
            let v = max_all(&sq_norms(&diff, n, d)).sqrt() / &dt_i;
            run.speeds.push((next.k as f64 * dt, v));
        }
        if next.k.is_multiple_of(sample_every) || next.k == steps {
            run.samples.push((next.k as f64 * dt, mids(&next.u)));
        }
        s = next;
    }
    run.width = crate::dynamics::discrete::max_width(&s.u);
    run.last = s;
    run
}

/// [`simulate`] with the support-function tally, at the spec precision or, when the
/// enclosures at T are wider than [`RESOLVED_WIDTH`], at 2×, 4×, 8× it: widths grow
/// exponentially where the attention is not yet saturated (differences of logits of
/// size e^{2t}‖z‖² amplify them), more so for many tokens or without QᵀK ≻ 0. The
/// enclosures are valid at every precision; only their usefulness changes.
/// The width only picks the precision (the trigger); what the run then decides rests
/// on its enclosures, at whatever precision it ended.
fn simulate_resolved(inst: &Instance, dirs: &[Vec<Integer>], prec: u32) -> (Run, u32) {
    crate::escalate::escalate(
        crate::escalate::Ladder::new(prec, 3),
        |bits| simulate(inst, dirs, bits, true),
        |a| !a.width.is_nan() && a.width < RESOLVED_WIDTH,
    )
    .into_parts()
}

/// The role of a token at T.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// A hull vertex (a leader); also within τ of the boundary with a small residual.
    Leader,
    /// ‖z_i‖ ≤ τ.
    Zero,
    /// Within τ of ∂Cx with |‖Az_i‖² − max_j ⟨Az_i, Av_j⟩| ≤ L·τ.
    Boundary,
    /// Neither (not yet at a point of 𝒮 within τ).
    Open,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::Leader => "vertex (leader)",
            Role::Zero => "near 0",
            Role::Boundary => "on ∂Cx, in 𝒮",
            Role::Open => "not within τ of 𝒮",
        }
    }
}

/// The structure at T: hull, per-token quantities, roles, limit points.
struct Structure {
    ps: PointSet,
    hull: Hull,
    norms: Vec<Interval>,
    bdist: Vec<Interval>,
    gaps: Vec<Interval>,
    roles: Vec<Role>,
    /// max_i min(‖z_i‖/τ, max(|dist|/τ, |gap|/(Lτ))) (upper ends).
    worst: f64,
    /// The residual tolerance L·τ.
    tau_gap: Interval,
    /// max_i |gap_i| / τ (upper ends; the literal reading of clusters.md).
    gap_over_tau: f64,
    limit_points: usize,
}

/// zᵢᵀ M w for an interval row z and interval vector w, M exact (d × d).
fn bilinear(m: &Mat, z: &[Interval], w: &[Interval]) -> Interval {
    let prec = z[0].prec();
    let mut s = Interval::zero(prec);
    for (a, za) in z.iter().enumerate() {
        for (b, wb) in w.iter().enumerate() {
            if *m.at(a, b) != 0 {
                let c = Interval::from_rational(prec, m.at(a, b));
                s.add_assign(&(&(&c * za) * wb));
            }
        }
    }
    s
}

/// The tolerance for the residual g(z_i) = ‖Az_i‖² − max_j ⟨Az_i, Av_j⟩ implied by
/// "z_i within τ of a point s ∈ 𝒮" [derived]: every z_i(t), s and v_j lie in
/// Cx z(0) ⊂ B(0, R0) (F1), g(s) = 0 and, with M = QᵀK,
/// |xᵀMx − sᵀMs| = |(x − s)ᵀM(x + s)| ≤ 2‖M‖R0‖x − s‖ and
/// |max_j xᵀMv_j − max_j sᵀMv_j| ≤ ‖M‖R0‖x − s‖, so |g(z_i)| ≤ L·τ with L = 3‖M‖R0
/// (‖M‖ bounded by the Frobenius norm). g is quadratic in z, so a length tolerance
/// τ cannot be applied to it directly.
fn gap_lipschitz(inst: &Instance, m: &Mat, prec: u32) -> Interval {
    let (n, d) = (inst.n, inst.sys.d);
    let r0 = max_all(&sq_norms(&inst.tokens.to_intervals(prec), n, d)).sqrt();
    &m.frobenius(prec).mul_i64(3) * &r0
}

/// The symmetric part of QᵀK (equal to it under the hypothesis; used for the ablations).
fn sym_qk(inst: &Instance) -> Mat {
    inst.sys
        .qk
        .add(&inst.sys.qk.transpose())
        .scale(&Rational::from((1, 2)))
}

fn analyse(inst: &Instance, u: &[Interval], tau: &Interval) -> Result<Structure, hull::HullError> {
    let (n, d) = (inst.n, inst.sys.d);
    let ps = PointSet::from_midpoints(d, u)?;
    let hull = hull::hull(&ps);
    let row = |i: usize| &u[i * d..(i + 1) * d];
    let m = sym_qk(inst);
    let tau_gap = tau * &gap_lipschitz(inst, &m, tau.prec());
    let norms: Vec<Interval> = sq_norms(u, n, d).iter().map(Interval::sqrt).collect();
    let mut bdist = Vec::with_capacity(n);
    let mut gaps = Vec::with_capacity(n);
    let mut roles = Vec::with_capacity(n);
    let mut worst: f64 = 0.0;
    let mut gap_over_tau: f64 = 0.0;
    let tau_f = tau.lo_f64();
    for (i, norm) in norms.iter().enumerate() {
        let bd = hull
            .boundary_distance(&ps, row(i))
            .unwrap_or_else(|| Interval::entire(tau.prec()));
        let q = bilinear(&m, row(i), row(i));
        let best = max_all(
            &hull
                .vertices
                .iter()
                .map(|&j| bilinear(&m, row(i), row(j)))
                .collect::<Vec<_>>(),
        );
        let gap = &q - &best;
        let zero = norm.le(tau).is_true();
        let bnd = bd.abs().le(tau).is_true() && gap.abs().le(&tau_gap).is_true();
        let role = if hull.vertices.contains(&i) && bnd {
            Role::Leader
        } else if zero {
            Role::Zero
        } else if bnd {
            Role::Boundary
        } else {
            Role::Open
        };
        let resid = (norm.hi_f64() / tau_f)
            .min((bd.abs().hi_f64() / tau_f).max(gap.abs().hi_f64() / tau_gap.lo_f64()));
        worst = worst.max(resid);
        gap_over_tau = gap_over_tau.max(gap.abs().hi_f64() / tau_f);
        bdist.push(bd);
        gaps.push(gap);
        roles.push(role);
    }
    // τ-distinct limit points: greedy grouping of the midpoints in index order.
    let mut centres: Vec<Vec<f64>> = Vec::new();
    let mid = mids(u);
    let tau2 = tau.mid_f64().powi(2);
    for i in 0..n {
        let p = &mid[i * d..(i + 1) * d];
        let near = centres
            .iter()
            .any(|c| c.iter().zip(p).map(|(a, b)| (a - b).powi(2)).sum::<f64>() <= tau2);
        if !near {
            centres.push(p.to_vec());
        }
    }
    Ok(Structure {
        ps,
        hull,
        norms,
        bdist,
        gaps,
        roles,
        worst,
        tau_gap,
        gap_over_tau,
        limit_points: centres.len(),
    })
}

/// diam(z(0)) enclosed: the square root of the exact max squared pairwise distance.
fn diameter(tokens: &Mat, prec: u32) -> Interval {
    let mut best = Rational::new();
    for i in 0..tokens.rows {
        for j in i + 1..tokens.rows {
            let mut s = Rational::new();
            for (a, b) in tokens.row(i).iter().zip(tokens.row(j)) {
                s += Rational::from(a - b).square();
            }
            if s > best {
                best = s;
            }
        }
    }
    Interval::from_rational(prec, &best).sqrt()
}

fn tau_for(inst: &Instance, c: &Rational, prec: u32) -> Interval {
    let t = Rational::from(&inst.dt * inst.steps as u32);
    let decay = (-Interval::from_rational(prec, &t)).exp();
    &(&Interval::from_rational(prec, c) * &diameter(&inst.tokens, prec)) * &decay
}

fn leaders(s: &Structure) -> String {
    s.hull
        .vertices
        .iter()
        .map(|i| (i + 1).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Token snapshots at t = 0, 1/2, 3/2 and T (the tokens reach their limit points
/// within a few time units, so early times show the motion) and the final hull as a
/// closed polyline (d = 3: projected to the first two coordinates, with the hull of
/// the projection, `outline`).
fn snapshot_plot(slug: &str, inst: &Instance, run: &Run, outline: Option<&[(f64, f64)]>) -> Plot {
    let (n, d) = (inst.n, inst.sys.d);
    let t_end = run.samples.last().map_or(0.0, |s| s.0);
    let mut series = Vec::new();
    for target in [0.0, 0.5, 1.5, t_end] {
        let (t, x) = run
            .samples
            .iter()
            .min_by(|a, b| (a.0 - target).abs().total_cmp(&(b.0 - target).abs()))
            .expect("samples");
        series.push(Series {
            name: format!("tokens at t = {t:.1}"),
            style: Style::Points,
            points: (0..n).map(|i| (x[i * d], x[i * d + 1])).collect(),
        });
    }
    if let Some(pts) = outline {
        series.push(Series {
            name: format!("hull of z(T){}", if d == 3 { " (projected)" } else { "" }),
            style: Style::Line,
            points: pts.to_vec(),
        });
    }
    Plot {
        slug: slug.into(),
        title: format!(
            "{}: tokens z at four times and the hull at T{}",
            inst.name,
            if d == 3 {
                " (projection to z₁, z₂)"
            } else {
                ""
            }
        ),
        x_label: "z₁".into(),
        y_label: "z₂".into(),
        x_log: false,
        y_log: false,
        series,
        heatmap: None,
        paths: false,
    }
}

/// The hull of z(T) (d = 3: of its projection to the first two coordinates) as a
/// closed polyline of midpoints; `None` when the hull cannot be formed.
fn outline(inst: &Instance, run: &Run) -> Option<Vec<(f64, f64)>> {
    let (n, d) = (inst.n, inst.sys.d);
    let proj: Vec<Interval> = (0..n)
        .flat_map(|i| run.last.u[i * d..i * d + 2].to_vec())
        .collect();
    let ps = PointSet::from_midpoints(2, &proj).ok()?;
    let h = hull::hull(&ps);
    let x = mids(&proj);
    let mut pts: Vec<(f64, f64)> = h
        .polygon
        .iter()
        .map(|&i| (x[2 * i], x[2 * i + 1]))
        .collect();
    if let Some(first) = pts.first().copied() {
        pts.push(first);
    }
    Some(pts)
}

fn qk_text(m: &Mat) -> String {
    let rows: Vec<String> = (0..m.rows)
        .map(|i| {
            let r: Vec<String> = m.row(i).iter().map(fmt_q).collect();
            format!("[{}]", r.join(", "))
        })
        .collect();
    format!("[{}]", rows.join(", "))
}

fn slugify(i: usize, prefix: &str) -> String {
    format!("{prefix}{i}")
}

/// What the search found: every instance's limit, and the ablations' runs.
pub struct Found {
    /// Per instance.
    limits: Vec<Limit>,
    /// Per ablation.
    ablations: Vec<Ablation>,
}

/// One instance's limit: its run (at the resolved precision and at twice it), τ,
/// and the structure at T at both (or why the hull could not be formed).
pub struct Limit {
    a: Run,
    bits: u32,
    tau: Interval,
    structure: Result<(Structure, Structure), hull::HullError>,
    /// The Hausdorff distance of the hull vertices one time unit apart (`None`
    /// when the structure at T could not be formed).
    haus: Option<Result<Interval, hull::HullError>>,
    /// The speeds over the last time unit: strictly decreasing, first, last.
    speeds: (bool, Interval, Interval),
    /// The (projected) hull of z(T), for the snapshot plot.
    outline: Option<Vec<(f64, f64)>>,
}

/// One ablation's run (report only): its run at the resolved precision, and the
/// structure at T (or why the hull could not be formed).
struct Ablation {
    a: Run,
    bits: u32,
    structure: Result<Structure, hull::HullError>,
    /// max_i ‖z_i(T)‖ of the midpoints.
    max_norm: f64,
    /// The (projected) hull of z(T), for the snapshot plot.
    outline: Option<Vec<(f64, f64)>>,
}

/// The speeds over the last time unit: strictly decreasing, first, last.
fn speeds(a: &Run) -> (bool, Interval, Interval) {
    let dec = a.speeds.windows(2).all(|x| x[1].1.lt(&x[0].1).is_true());
    (
        dec,
        a.speeds.first().expect("speeds").1.clone(),
        a.speeds.last().expect("speeds").1.clone(),
    )
}

/// The same structure at both precisions.
fn same(sa: &Structure, sb: &Structure) -> bool {
    sa.hull.vertices == sb.hull.vertices
        && sa.limit_points == sb.limit_points
        && sa.roles == sb.roles
}

/// The hypothesis ablations: same tokens, one hypothesis dropped; a table and a
/// picture, nothing asserted.
fn ablations(out: &mut Presentation, p: &Params, runs: &[Ablation]) {
    if runs.is_empty() {
        return;
    }
    let mut t = Table::new(
        "Hypothesis ablations (report only, nothing asserted): QᵀK ≻ 0 dropped",
        &[
            "instance",
            "QᵀK",
            "hull vertices at T",
            "τ-distinct limit points",
            "near 0",
            "within τ of 𝒮 (as defined with QᵀK)",
            "max‖z_i(T)‖ (midpoints)",
            "enclosure width at T (precision)",
            "hull nonincreasing (F1 needs only P ≥ 0)",
        ],
    );
    for (idx, (inst, r)) in p.ablations.iter().zip(runs).enumerate() {
        let n = inst.n;
        let (a, bits) = (&r.a, r.bits);
        let row = match &r.structure {
            Ok(s) => vec![
                inst.name.clone(),
                qk_text(&inst.sys.qk),
                s.hull.vertices.len().to_string(),
                s.limit_points.to_string(),
                s.roles
                    .iter()
                    .filter(|r| **r == Role::Zero)
                    .count()
                    .to_string(),
                format!(
                    "{}/{n}",
                    s.roles.iter().filter(|r| **r != Role::Open).count()
                ),
                format!("{:.4}", r.max_norm),
                format!("{:.1e} ({bits} bits)", a.width),
                if a.support.violated() == 0 {
                    "yes".into()
                } else {
                    "no".into()
                },
            ],
            Err(e) => {
                let mut r = vec![inst.name.clone(), qk_text(&inst.sys.qk), e.to_string()];
                r.resize(9, String::new());
                r
            }
        };
        t.row(row);
        out.plots.push(snapshot_plot(
            &slugify(idx, "ablation-"),
            inst,
            a,
            r.outline.as_deref(),
        ));
    }
    out.tables.push(t);
    out.note(
        "Ablations are report-only: the same tokens with QᵀK indefinite or singular, where the theorem makes no \
         claim. The hull is still nonincreasing (F1 uses only P ≥ 0), but 𝒮 is no longer defined by a norm; the \
         columns show what the dynamics do, not a check.",
    );
}
