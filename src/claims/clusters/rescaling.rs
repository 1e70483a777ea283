//! clusters/rescaling (\[paper\] `e:Rres`, `r:discreterescaling`; clusters.md §3).
//!
//! Claim: x(t) = e^{tV} z(t) with z solving ż_i = Σ_j P_ij V(z_j − z_i); in discrete
//! time x^k = R^k z^k with R = I + ΔtV and
//! z_i^{k+1} = z_i^k + Δt R^{−1}V Σ_j P_ij(R^k z^k)(z_j^k − z_i^k).
//!
//! Proof of the discrete identity: V commutes with R, so with z^k = R^{−k}x^k,
//! R^{−(k+1)} x^{k+1} = R^{−1}(z^k + ΔtV Σ_j P_ij z_j^k), and R^{−1} = I − ΔtR^{−1}V gives
//! z^{k+1}_i = z_i^k + ΔtR^{−1}V(Σ_j P_ij z_j^k − z_i^k); Σ_j P_ij = 1 gives the stated form.
//! P is the same in both because it is evaluated at x^k = R^k z^k.
//!
//! Checks:
//! - (D), supported: x^k by the layer and z^k by the rescaled recursion are computed
//!   independently in outward-rounded intervals; at every k the enclosures of x^k and
//!   R^k z^k must intersect — a consistency reading (disjoint enclosures would certify a
//!   discrepancy, an implementation bug since the identity is exact; overlap proves
//!   nothing, so it never certifies) — and, observed, have width ≤ 2^{−(p−40)} (so the
//!   reading is a meaningful test, not a vacuous one; a property of the computation,
//!   not of the map, hence an observation).
//! - (F), observed: x and z integrated separately in MPFR (adaptive Dormand–Prince 5(4)
//!   at two precisions, and RK4 at two step sizes); max_i ‖x_i(T) − e^{TV}z_i(T)‖ must be
//!   ≤ 10 × the integrators' error estimate.

use super::common::{build_all, fmt_q, Instance, InstanceSpec};
use crate::claims::shape::Ctx;
use crate::dynamics::discrete::{max_width, DiscreteMap, Form};
use crate::dynamics::flow::{self, FlowOptions, FlowResult, Tolerances, Vars};
use crate::kernel::Checked;
use crate::outcome::{Observations, Presentation, Table};
use crate::reading::{Agreement, Reading};
use crate::spec::{ensure, exact, FieldError};
use rug::{Float, Rational};
use serde::{Deserialize, Serialize};

/// Parameters of clusters/rescaling as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// The witnesses (the flow runs to T = steps · Δt).
    pub instances: Vec<InstanceSpec>,
    /// Width budget: enclosures must be narrower than 2^{−(p − width_slack_bits)}.
    pub width_slack_bits: u32,
    /// Relative and absolute tolerance of the adaptive pair (exact literal).
    pub flow_tol: String,
}

/// Parameters of clusters/rescaling, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The witnesses (R = I + Δt·V invertible), exact.
    pub instances: Vec<Instance>,
    /// Width budget: enclosures must be narrower than 2^{−(p − width_slack_bits)}.
    pub width_slack_bits: u32,
    /// Relative and absolute tolerance of the adaptive pair, in (0, 1).
    pub flow_tol: Rational,
}

const MAX_STEPS: usize = 10_000;

/// clusters/rescaling.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(r: Raw, at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        super::common::check_run_work(&[("instances", &r.instances)], MAX_STEPS, at)?;
        let insts = build_all(&r.instances, "instances", MAX_STEPS, at)?;
        for (i, inst) in insts.iter().enumerate() {
            ensure(
                inst.sys.r(&inst.dt).inverse().is_some(),
                format!("instances[{i}].dt"),
                "R = I + Δt·V is singular for this Δt, so z^k = R^{-k} x^k is undefined",
            )?;
        }
        ensure(
            r.width_slack_bits <= 120,
            "width_slack_bits",
            "must be at most 120",
        )?;
        let tol = exact("flow_tol", &r.flow_tol)?;
        ensure(tol > 0 && tol < 1, "flow_tol", "must be in (0, 1)")?;
        Ok(Params {
            instances: insts,
            width_slack_bits: r.width_slack_bits,
            flow_tol: tol,
        })
    }
    type Witness = Vec<Rescaled>;
    /// Both forms of (D) with guard bits, and the flow (F) both ways.
    fn witness(p: &Params, ctx: &Ctx) -> Vec<Rescaled> {
        let tol = p.flow_tol.clone();
        let prec = ctx.prec();
        let budget = -(prec as i32 - p.width_slack_bits as i32);
        p.instances
            .iter()
            .map(|inst| {
                let d = inst.sys.d;
                // Each form runs with guard bits added until its enclosures meet the width
                // budget (naive interval evaluation of the rescaled map loses more bits than
                // the layer: x = R^k z multiplies the widths of z by |R^k| entrywise).
                let budget_f = 2f64.powi(budget);
                let layer_run = with_guard(inst, Form::Layer, prec, budget_f);
                let resc_run = with_guard(inst, Form::Rescaled, prec, budget_f);
                let layer = &layer_run.xs;
                let (resc, g_resc) = (&resc_run.xs, resc_run.guard);
                // The kernel's reading of each pair (b is R^k z^k, computed from z^k in the
                // rescaled form): the first disjoint pair's, else any pair's (not violated).
                let mut agreement = None;
                let mut disjoint_at = None;
                let mut width: f64 = 0.0;
                for (k, (a, b)) in layer.iter().zip(resc).enumerate() {
                    for (x, y) in a.iter().zip(b) {
                        let r = x.agreement(y);
                        if r.violated() && disjoint_at.is_none() {
                            disjoint_at = Some(k + 1);
                            agreement = Some(r);
                        } else if agreement.is_none() {
                            agreement = Some(r);
                        }
                    }
                    width = width.max(max_width(a)).max(max_width(b));
                }
                let agreement = agreement.expect("at least one step and one token");
                let t = Rational::from(&inst.dt * inst.steps as u64);
                let adaptive = [prec, 2 * prec]
                    .into_iter()
                    .map(|pr| (pr, adaptive_pair(inst, &t, &tol, pr)))
                    .collect();
                // RK4 at two step sizes: Richardson's estimate |u_h − u_{h/2}|·16/15 for each variable.
                let h = inst.dt.clone();
                let h2 = Rational::from(&h / 2u32);
                let runs = (
                    rk4_run(inst, &t, &h, Vars::X, prec),
                    rk4_run(inst, &t, &h2, Vars::X, prec),
                    rk4_run(inst, &t, &h, Vars::Z, prec),
                    rk4_run(inst, &t, &h2, Vars::Z, prec),
                );
                let rk4 = if let (Ok(xh), Ok(xh2), Ok(zh), Ok(zh2)) = runs {
                    let rich = |a: &FlowResult, b: &FlowResult| {
                        Float::with_val(prec, max_row_dist(&a.x(), &b.x(), d, prec) * 16u32) / 15u32
                    };
                    let est = Float::with_val(prec, rich(&xh, &xh2) + rich(&zh, &zh2));
                    let gap = max_row_dist(&xh2.x(), &zh2.x(), d, prec);
                    Some((gap, est))
                } else {
                    None
                };
                Rescaled {
                    layer_run,
                    g_resc,
                    agreement,
                    disjoint_at,
                    width,
                    adaptive,
                    rk4,
                }
            })
            .collect()
    }
    /// (D): the two forms' enclosures intersect (consistency) and stay narrow
    /// (observed); (F): the gaps against the error estimates (observed).
    fn observe(
        p: &Params,
        w: &Vec<Rescaled>,
        _: Option<&Checked>,
        ctx: &Ctx,
        out: &mut Observations,
    ) {
        let prec = ctx.prec();
        let budget = -(prec as i32 - p.width_slack_bits as i32);
        let budget_f = 2f64.powi(budget);
        for (inst, r) in p.instances.iter().zip(w) {
            out.set_part(Some("(D) discrete map"));
            let (agreement, disjoint_at, width) = (r.agreement, r.disjoint_at, r.width);
            let (g_layer, g_resc) = (r.layer_run.guard, r.g_resc);
            out.consistency(
                format!(
                    "{}: enclosures of x^k (layer) and R^k z^k (rescaled map) intersect for k = 1..{}",
                    inst.name, inst.steps
                ),
                agreement,
                match disjoint_at {
                    None => {
                        "consistency reading: no pair of enclosures is disjoint (disjoint enclosures \
                             would show a discrepancy; overlap proves nothing; no certificate carries it)"
                            .to_string()
                    }
                    Some(k) => format!("disjoint enclosures at step {k}: the two maps disagree"),
                },
            );
            // The widths are f64 readings of the computation: an observation, deciding nothing certified.
            let within = width <= budget_f;
            out.observe(
                format!("{}: every enclosure is narrower than 2^{budget}", inst.name),
                within,
                format!(
                    "largest width {width:.3e} (rounded up); working precision {} bits (layer), {} bits (rescaled map)",
                    prec + g_layer,
                    prec + g_resc
                ),
            );
            out.set_part(Some("(F) flow"));
            for (pr, fp) in &r.adaptive {
                let pr = *pr;
                match fp {
                    Ok(fp) => {
                        let bound = Float::with_val(pr, &fp.est * 10u32);
                        let ok = fp.gap <= bound;
                        out.observe(
                            format!(
                                "{}: (F) max_i ‖x_i(T) − e^(TV) z_i(T)‖ ≤ 10 × error estimate, Dormand–Prince 5(4) at {pr} bits",
                                inst.name
                            ),
                            ok,
                            format!(
                                "gap {}, estimate {} ({} + {} accepted steps)",
                                sci(&fp.gap),
                                sci(&fp.est),
                                fp.steps.0,
                                fp.steps.1
                            ),
                        );
                    }
                    Err(e) => {
                        out.observe(
                            format!("{}: (F) adaptive run at {pr} bits", inst.name),
                            false,
                            e.to_string(),
                        );
                    }
                }
            }
            let h = inst.dt.clone();
            let h2 = Rational::from(&h / 2u32);
            if let Some((gap, est)) = &r.rk4 {
                let ok = *gap <= Float::with_val(prec, est * 10u32);
                out.observe(
                    format!(
                        "{}: (F) max_i ‖x_i(T) − e^(TV) z_i(T)‖ ≤ 10 × Richardson estimate, RK4 with h = {} and {}",
                        inst.name,
                        fmt_q(&h),
                        fmt_q(&h2)
                    ),
                    ok,
                    format!("gap {} at h = {}, estimate {}", sci(gap), fmt_q(&h2), sci(est)),
                );
            } else {
                out.observe(
                    format!("{}: (F) RK4 runs", inst.name),
                    false,
                    "an RK4 run failed",
                );
            }
        }
    }
    /// The pictures of the layer runs, the (D) and (F) tables, the figure and the note.
    fn present(
        p: &Params,
        w: &Vec<Rescaled>,
        _: Option<&Checked>,
        ctx: &Ctx,
        out: &mut Presentation,
    ) {
        let tol = p.flow_tol.clone();
        let prec = ctx.prec();
        let budget = -(prec as i32 - p.width_slack_bits as i32);
        let mut dtab = Table::new(
            "(D): x^k by the layer against R^k z^k by the rescaled recursion (interval enclosures)",
            &[
                "instance",
                "n",
                "d",
                "Δt",
                "steps",
                "all intersect",
                "largest width",
                "width budget",
                "guard bits (layer, rescaled)",
            ],
        );
        let mut ftab = Table::new(
            "(F): x and z integrated separately; max_i ‖x_i(T) − e^{TV} z_i(T)‖ against the error estimate",
            &["instance", "integrator", "precision", "gap", "error estimate", "gap ≤ 10 × estimate"],
        );
        let mut worst_width: f64 = 0.0;
        for (inst, r) in p.instances.iter().zip(w) {
            let n = inst.n;
            let d = inst.sys.d;
            let layer_run = &r.layer_run;
            let layer = &layer_run.xs;
            let (disjoint_at, width) = (r.disjoint_at, r.width);
            let (g_layer, g_resc) = (layer_run.guard, r.g_resc);
            worst_width = worst_width.max(width);
            {
                // Pictures from the layer run above (midpoints of the enclosures).
                let dt_f = inst.dt.to_f64();
                let times: Vec<f64> = (0..=inst.steps).map(|k| k as f64 * dt_f).collect();
                let states: Vec<Vec<f64>> = std::iter::once(inst.tokens.to_f64())
                    .chain(layer.iter().map(|x| crate::dynamics::discrete::mids(x)))
                    .collect();
                super::common::add_visuals(
                    &mut out.plots,
                    "layer",
                    &inst.name,
                    &times,
                    &states,
                    n,
                    d,
                    &layer_run.p_final,
                );
            }
            dtab.row(vec![
                inst.name.clone(),
                n.to_string(),
                d.to_string(),
                fmt_q(&inst.dt),
                inst.steps.to_string(),
                if disjoint_at.is_none() {
                    "yes".into()
                } else {
                    "no".into()
                },
                format!("{width:.3e}"),
                format!("2^{budget}"),
                format!("{g_layer}, {g_resc}"),
            ]);

            for (pr, fp) in &r.adaptive {
                if let Ok(fp) = fp {
                    let bound = Float::with_val(*pr, &fp.est * 10u32);
                    let ok = fp.gap <= bound;
                    ftab.row(vec![
                        inst.name.clone(),
                        format!("Dormand–Prince 5(4), tol {}", fmt_q(&tol)),
                        format!("{pr}"),
                        sci(&fp.gap),
                        sci(&fp.est),
                        if ok { "yes".into() } else { "no".into() },
                    ]);
                }
            }
            let h = inst.dt.clone();
            let h2 = Rational::from(&h / 2u32);
            if let Some((gap, est)) = &r.rk4 {
                let ok = *gap <= Float::with_val(prec, est * 10u32);
                ftab.row(vec![
                    inst.name.clone(),
                    format!("RK4, h = {} vs {}", fmt_q(&h), fmt_q(&h2)),
                    format!("{prec}"),
                    sci(gap),
                    sci(est),
                    if ok { "yes".into() } else { "no".into() },
                ]);
            }
        }
        out.figure(
            "max_width",
            worst_width,
            format!("largest enclosure width over all steps of (D): {worst_width:.3e}"),
        );
        out.tables.push(dtab);
        out.tables.push(ftab);
        out.note(
            "(D) is supported: the identity x^k = R^k z^k is exact algebra (proof in the module docs); the checks \
             confirm that two independent interval evaluations never certify a disagreement (a consistency reading: \
             observed, it never certifies nor refutes the identity) while staying narrow (observed). \
             (F) is supported: point arithmetic with error estimates, not an enclosure.",
        );
    }
}

/// max_i ‖a_i − b_i‖ over rows of two n × d point states, at `prec`.
fn max_row_dist(a: &[Float], b: &[Float], d: usize, prec: u32) -> Float {
    let mut best = Float::new(prec);
    for (ra, rb) in a.chunks(d).zip(b.chunks(d)) {
        let mut s = Float::new(prec);
        for (x, y) in ra.iter().zip(rb) {
            let t = Float::with_val(prec, x - y);
            s += Float::with_val(prec, &t * &t);
        }
        let s = s.sqrt();
        if s > best {
            best = s;
        }
    }
    best
}

/// Guard bits tried, in order, for each form of (D).
const GUARDS: [u32; 5] = [0, 64, 128, 256, 512];

/// The tokens x^k, k = 1..steps, of one form of (D) (for the rescaled form,
/// R^k z^k), at `prec` + the first guard whose enclosures are narrower than
/// `budget` (the last guard if none is).
fn with_guard(inst: &super::common::Instance, form: Form, prec: u32, budget: f64) -> Guarded {
    let mut last = Guarded {
        xs: Vec::new(),
        p_final: Vec::new(),
        guard: 0,
    };
    for g in GUARDS {
        let mut map = DiscreteMap::new(&inst.sys, inst.n, &inst.dt, form, prec + g)
            .expect("R invertible (validated)");
        let mut s = map.start(&inst.tokens);
        let mut xs = Vec::with_capacity(inst.steps);
        let mut ok = true;
        for _ in 0..inst.steps {
            s = map.step(&s);
            ok &= max_width(&s.x) <= budget;
            xs.push(s.x.clone());
        }
        last = Guarded {
            xs,
            p_final: s.p,
            guard: g,
        };
        if ok {
            break;
        }
    }
    last
}

/// One form of (D) run with guard bits: x^k for k = 1..steps, P at the last step,
/// and the guard used.
struct Guarded {
    xs: Vec<Vec<crate::kernel::Interval>>,
    p_final: Vec<crate::kernel::Interval>,
    guard: u32,
}

/// Frobenius norm of a point matrix.
fn frob(m: &[Float], prec: u32) -> Float {
    let mut s = Float::new(prec);
    for x in m {
        s += Float::with_val(prec, x * x);
    }
    s.sqrt()
}

struct FlowPair {
    gap: Float,
    est: Float,
    steps: (usize, usize),
}

/// x and z integrated separately by the adaptive pair: the gap max‖x − e^{TV}z‖ and
/// the error estimate err_x + ‖e^{TV}‖_F · err_z.
fn adaptive_pair(
    inst: &super::common::Instance,
    t: &Rational,
    tol: &Rational,
    prec: u32,
) -> Result<FlowPair, flow::FlowError> {
    let tols = Tolerances::new(tol.clone(), tol.clone());
    let rx = flow::dopri5(
        &inst.sys,
        &inst.tokens,
        t,
        &FlowOptions::new(prec, Vars::X),
        &tols,
        |_| {},
    )?;
    let rz = flow::dopri5(
        &inst.sys,
        &inst.tokens,
        t,
        &FlowOptions::new(prec, Vars::Z),
        &tols,
        |_| {},
    )?;
    let gap = max_row_dist(&rx.x(), &rz.x(), inst.sys.d, prec);
    let e = frob(rz.etv.as_deref().unwrap_or(&[]), prec);
    let est = Float::with_val(
        prec,
        rx.err_est.as_ref().unwrap() + &(e * rz.err_est.as_ref().unwrap()),
    );
    Ok(FlowPair {
        gap,
        est,
        steps: (rx.steps, rz.steps),
    })
}

fn rk4_run(
    inst: &super::common::Instance,
    t: &Rational,
    h: &Rational,
    vars: Vars,
    prec: u32,
) -> Result<FlowResult, flow::FlowError> {
    flow::rk4(
        &inst.sys,
        &inst.tokens,
        t,
        h,
        &FlowOptions::new(prec, vars),
        |_| {},
    )
}

fn sci(x: &Float) -> String {
    format!("{:.3e}", x.to_f64())
}

/// Runs the claim.
/// One instance's runs: (D) in both forms with their agreement, and (F) by the
/// adaptive pair at two precisions and by RK4 at two step sizes.
pub struct Rescaled {
    layer_run: Guarded,
    g_resc: u32,
    agreement: Reading,
    disjoint_at: Option<usize>,
    width: f64,
    /// Per precision: the adaptive pair, or why it failed.
    adaptive: Vec<(u32, Result<FlowPair, flow::FlowError>)>,
    /// RK4 at h and h/2: the gap and Richardson's estimate, when every run succeeded.
    rk4: Option<(Float, Float)>,
}
