//! clusters/hyperplanes (\[paper\] `d:good`, `l:3hyperplanes11`, `l:fj`, `l:nottoofassst`;
//! clusters.md §3).
//!
//! Claim: for a good triple (λ1 real, positive, simple, λ1 > |λ_k|, ⟨Qφ1, Kφ1⟩ > 0),
//! φ1*(z_i(t)) → {0, a, b} with a = lim min_j φ1*(z_j), b = lim max_j φ1*(z_j): every token
//! approaches one of at most three parallel hyperplanes {φ1* = 0, a, b}.
//!
//! Checks on the discrete map (D), z^k = R^{−k} x^k with R = I + ΔtV (`Form::LayerRescaled`):
//! - the hypotheses, certified by `dynamics::spectrum` (isolating interval for λ1, deflation
//!   for dominance, adjugate eigenvectors with residual enclosures, ⟨Qφ1, Kφ1⟩ > 0);
//! - per step (F2, a theorem of the map): φ1*(z_i^{k+1}) = (1 − β)φ1*(z_i^k) + β Σ_j P_ij φ1*(z_j^k)
//!   with β = Δtλ1/(1 + Δtλ1) ∈ (0, 1) — proof: φ1* R^{−1} V = λ1/(1 + Δtλ1) φ1*. Hence
//!   max_j φ1*(z_j) is nonincreasing and min_j nondecreasing (proven in Coq for every instance and
//!   step, coq/HullMonotone.v `functional_max_min`; on the run a consistency reading);
//! - per step (certified: obligations of the certificate over each instance's `layer` datum, issue
//!   #24): the discrete Grönwall bound max_j |φ_k*(x_j^k)| ≤ M_0 (1 + Δt|λ_k|)^k for each real λ_k —
//!   proof: φ_k*(x_i^{k+1}) = φ_k*(x_i^k) + Δtλ_k Σ_j P_ij φ_k*(x_j^k). φ_k* is row i of adj(V − λI)
//!   over λ's exact bracket (`layer-dual-sup`/`-inf`, see `gronwall_obligations`), with a sign-change
//!   obligation for every real λ_k's bracket and a non-vacuity obligation (φ_k* ≠ 0 on the tokens);
//! - at T (observed, two precisions): every φ1*(z_i(T)) within τ = 10·diam·e^{−λ1 T} of
//!   {0, a_T, b_T} (clusters.md tolerance guide).
//!
//! Ablations (report only, no checks): the same dynamics with one hypothesis dropped.

use super::common::{build_all, fmt_q, layer_datum, Instance, InstanceSpec};
use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::StatementError;
use crate::dynamics::discrete::{mids, DiscreteMap, Form, State, StepView};
use crate::dynamics::model::Mat;
use crate::dynamics::observe::{functional, max_all, min_all, Invariant, Record};
use crate::dynamics::spectrum::{self, Leading, Other};
use crate::kernel::expr::build::{
    abs, add, and, call, div, eq, exp, forall, gt, int, le, lit, ln, lt, max, min, mul, neg, pow,
    q, sub, var, Formula, Term,
};
use crate::kernel::{Checked, Interval, Statement};
use crate::outcome::{Observations, Plot, Presentation, Series, Style, Table};
use crate::reading::{Agreement, Reading};
use crate::spec::FieldError;
use rug::Rational;
use serde::{Deserialize, Serialize};

/// Parameters of clusters/hyperplanes as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// The witnesses (each must be a good triple).
    pub instances: Vec<InstanceSpec>,
    /// Hypothesis ablations (report only; no hypothesis is required).
    #[serde(default)]
    pub ablations: Vec<InstanceSpec>,
    /// The factor c in τ = c·diam(z(0))·e^{−λ1 T} (clusters.md: 10).
    #[serde(default = "default_tau_factor")]
    pub tau_factor: f64,
}

fn default_tau_factor() -> f64 {
    10.0
}

/// Parameters of clusters/hyperplanes, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The witnesses (good triples), exact.
    pub instances: Vec<Instance>,
    /// Hypothesis ablations, exact.
    pub ablations: Vec<Instance>,
    /// The factor c in τ = c·diam(z(0))·e^{−λ1 T}.
    pub tau_factor: f64,
}

/// The most steps an instance may ask for.
pub const MAX_STEPS: usize = 5_000;

/// The precision at which the hypotheses are certified during validation.
const VALIDATION_PREC: u32 = 128;

/// Validates the good-triple hypotheses of one instance; the error names the field
/// (`v`, or `q` for ⟨Qφ1, Kφ1⟩ > 0) and the hypothesis.
pub fn check_good(inst: &Instance, prefix: &str) -> Result<(), FieldError> {
    match spectrum::good_triple(&inst.sys.qk, &inst.sys.v, VALIDATION_PREC) {
        Ok(_) => Ok(()),
        Err(e) => Err(FieldError::new(
            format!("{prefix}.{}", e.field()),
            e.to_string(),
        )),
    }
}

/// clusters/hyperplanes.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(r: Raw, at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        super::common::check_run_work(
            &[("instances", &r.instances), ("ablations", &r.ablations)],
            MAX_STEPS,
            at,
        )?;
        let instances = build_all(&r.instances, "instances", MAX_STEPS, at)?;
        for (i, inst) in instances.iter().enumerate() {
            check_good(inst, &format!("instances[{i}]"))?;
        }
        let ablations = r
            .ablations
            .iter()
            .enumerate()
            .map(|(i, a)| a.build(&format!("ablations[{i}]"), MAX_STEPS, at))
            .collect::<Result<Vec<_>, _>>()?;
        if !(r.tau_factor.is_finite() && r.tau_factor > 0.0) {
            return Err(FieldError::new("tau_factor", "must be positive and finite"));
        }
        Ok(Params {
            instances,
            ablations,
            tau_factor: r.tau_factor,
        })
    }
    fn statement(
        p: &Params,
        claim: &str,
        hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        Some(statement_of(&p.instances, claim, hints))
    }
    type Witness = Found;
    /// The leading eigenvalues, and each instance's run with its invariants.
    fn witness(p: &Params, ctx: &Ctx) -> Found {
        let insts = &p.instances;
        let prec = ctx.prec();
        // witness search: the leading eigenvalue of each V (its isolating interval is a hint)
        let leads: Vec<_> = insts
            .iter()
            .map(|inst| spectrum::good_triple(&inst.sys.qk, &inst.sys.v, prec))
            .collect();
        let hints = insts
            .iter()
            .zip(&leads)
            .enumerate()
            .filter_map(|(idx, (inst, l))| Some(dual_hints(idx, inst, &l.as_ref().ok()?.0, prec)))
            .flatten()
            .collect();
        let mut runs = Vec::new();
        for (inst, l) in insts.iter().zip(leads) {
            let (n, d) = (inst.n, inst.sys.d);
            let Ok((lead, g)) = l else {
                runs.push(None);
                continue;
            };
            let phi = lead.left.clone();
            let mut invs: Vec<Invariant> = hull_invariants(&inst.name, "φ1*", &phi)
                .into_iter()
                .collect();
            let every = (inst.steps / 60).max(1);
            let data = run_map(inst, prec, &mut invs, every);
            let records = invs.iter().map(Invariant::record).collect();
            drop(invs);
            // The structure at T, at two precisions.
            let t_end = inst.steps as f64 * inst.dt.to_f64();
            let lam1 = lead.lambda.mid_f64();
            let tau = p.tau_factor * diameter(inst) * (-lam1 * t_end).exp();
            let vals = final_values(&data.last, n, d, &phi);
            let levels = levels(&vals, tau);
            let hi = analyse(inst, 2 * prec, &phi, tau);
            runs.push(Some(Structure {
                op_norm: spectrum::op_norm(&inst.sys.v, prec),
                lead,
                g,
                records,
                data,
                tau,
                levels,
                hi,
            }));
        }
        let ablations = p.ablations.iter().map(|a| ablation(a, p, prec)).collect();
        Found {
            hints,
            runs,
            ablations,
        }
    }
    /// The brackets and adjugate rows found (`dual_hints`).
    fn hints(_: &Params, w: &Found) -> Hints {
        w.hints.clone()
    }
    /// The eigenvector enclosures (consistency), the invariants, and the structure at
    /// T at two precisions (observed). Nothing when the statement was not decided.
    fn observe(p: &Params, w: &Found, proof: Option<&Checked>, ctx: &Ctx, out: &mut Observations) {
        if proof.is_none() {
            return;
        }
        let prec = ctx.prec();
        for (inst, r) in p.instances.iter().zip(&w.runs) {
            let Some(r) = r else {
                continue;
            };
            let (lead, g) = (&r.lead, &r.g);
            out.consistency(
                format!(
                    "{}: the eigenvector enclosures are consistent: (V − λ1 I)φ1 and φ1*(V − λ1 I) contain 0",
                    inst.name
                ),
                residual_reading(&inst.sys.v, lead),
                describe_lead(lead, g),
            );
            for rec in &r.records {
                rec.consistency_into(out);
            }
            let tau = r.tau;
            let (a, b, ref labels, worst) = r.levels;
            let hi = &r.hi;
            let on_all = labels.iter().all(|l| *l != "none");
            out.observe(
                format!(
                    "{}: every φ1*(z_i(T)) within τ = 10·diam·e^(−λ1 T) of {{0, a_T, b_T}}",
                    inst.name
                ),
                on_all,
                format!(
                    "T = {}, τ = {tau:.3e}, a_T = {a:.10}, b_T = {b:.10}, largest distance to the nearest \
                     level {worst:.3e}",
                    horizon(inst)
                ),
            );
            let same = hi.labels == *labels && (hi.a - a).abs() <= tau && (hi.b - b).abs() <= tau;
            out.observe(
                format!(
                    "{}: same three-level structure at {} and {} bits",
                    inst.name,
                    prec,
                    2 * prec
                ),
                same,
                format!(
                    "at {} bits: a_T = {:.10}, b_T = {:.10}, largest distance {:.3e}; labels equal: {}",
                    2 * prec,
                    hi.a,
                    hi.b,
                    hi.worst,
                    hi.labels == *labels
                ),
            );
        }
    }
    /// The spectra and the three hyperplanes, the plots, the first witness's figure,
    /// the ablations and the note. Nothing when the statement was not decided.
    fn present(p: &Params, w: &Found, proof: Option<&Checked>, _: &Ctx, out: &mut Presentation) {
        if proof.is_none() {
            return;
        }
        let insts = &p.instances;
        let mut spectra = Table::new(
            "Certified spectra of the value matrices (good-triple hypotheses)",
            &[
                "instance",
                "λ1",
                "other eigenvalues",
                "φ1* (sum 1)",
                "⟨Qφ1, Kφ1⟩",
                "‖V‖_op",
            ],
        );
        let mut planes = Table::new(
            "The three hyperplanes at T: φ1*(z_i(T)) ∈ {0, a_T, b_T} (tokens numbered from 1)",
            &[
                "instance",
                "T",
                "τ",
                "a_T",
                "b_T",
                "max dist to {0,a,b}",
                "tokens on φ1* = a",
                "tokens on φ1* = b",
                "tokens on φ1* = 0",
                "off all three",
            ],
        );
        let mut first_worst = None;
        for (idx, (inst, r)) in insts.iter().zip(&w.runs).enumerate() {
            let (n, d) = (inst.n, inst.sys.d);
            let Some(r) = r else {
                continue;
            };
            let (lead, g) = (&r.lead, &r.g);
            spectra.row(vec![
                inst.name.clone(),
                lead.lambda.fmt_outward(10),
                lead.others
                    .iter()
                    .map(|o| o.describe(10))
                    .collect::<Vec<_>>()
                    .join("; "),
                lead.left
                    .iter()
                    .map(|x| format!("{:.10}", x.mid_f64()))
                    .collect::<Vec<_>>()
                    .join(", "),
                g.fmt_outward(6),
                r.op_norm
                    .as_ref()
                    .map(|x| x.fmt_outward(10))
                    .unwrap_or_else(|e| format!("— ({e})")),
            ]);
            let phi = lead.left.clone();
            let data = &r.data;
            let tau = r.tau;
            let (a, b, _, worst) = r.levels;
            first_worst.get_or_insert((worst, tau));
            let mut row = vec![inst.name.clone(), horizon(inst)];
            row.extend(level_cells(tau, &r.levels));
            planes.row(row);
            let slug = format!("w{}", idx + 1);
            let phi_f: Vec<f64> = phi.iter().map(Interval::mid_f64).collect();
            out.plots
                .push(phi_plot(&slug, &inst.name, data, n, d, &phi_f, a, b));
            if d == 2 {
                out.plots
                    .push(plane_plot(&slug, &inst.name, data, &phi_f, "φ1*", a, b));
            }
            if idx == 0 {
                data.visuals(&mut out.plots, &slug, &inst.name, n, d);
            }
        }
        first_figure(
            out,
            "max_dist_to_hyperplanes",
            "φ1*(z_i(T)) to {0, a_T, b_T}",
            first_worst,
        );
        out.tables.push(spectra);
        out.tables.push(planes);
        ablations(p, &w.ablations, out);
        out.note(
            "All dynamics are the discrete map (a residual attention layer with tied weights) with z^k = R^(−k) x^k, \
             R = I + ΔtV. The good-triple hypotheses are the claim's statement (exact rational obligations over V, \
             Q, K and the isolating interval of λ1), decided by the kernel. The hull monotonicity of φ1* is a theorem \
             of the map (F2; proven in Coq, coq/HullMonotone.v, functional_max_min), recorded as a consistency reading (observed: it never certifies nor refutes); the discrete Grönwall \
             bound of every real eigenvalue is an obligation of the certificate over the instance's `layer` datum \
             (φ* = a row of adj(V − λI) over the eigenvalue's exact bracket, the kernel iterating the map itself), so \
             it is certified; the limit structure at T is an observation with the tolerance guide of clusters.md.",
        );
    }
}

/// The hint key of instance `idx`'s isolating interval for λ1 ("lo hi", exact).
fn bracket_hint(idx: usize) -> String {
    format!("instances[{idx}].lambda1_bracket")
}

/// The hint key of instance `idx`'s isolating interval for its other real eigenvalue
/// λ_j (j ≥ 2; "lo hi", exact).
fn other_bracket_hint(idx: usize, j: usize) -> String {
    format!("instances[{idx}].lambda{j}_bracket")
}

/// The hint key of the row i of adj(V − λ_j I) used as φ_j* for instance `idx`.
fn row_hint(idx: usize, j: usize) -> String {
    format!("instances[{idx}].lambda{j}_row")
}

/// The row i of adj(V − λI) of largest norm at the midpoint of [lo, hi] (the witness's
/// choice of φ* for the Grönwall obligations; any row whose dual is nonzero serves).
fn best_row(v: &Mat, lo: &Rational, hi: &Rational, prec: u32) -> usize {
    let mid = Interval::from_rational(prec, &(Rational::from(lo + hi) / 2u32));
    let norm = |i: usize| -> f64 {
        crate::kernel::layer_dual::adj_row(v, &mid, i, prec)
            .iter()
            .map(|a| a.mid_f64().powi(2))
            .sum()
    };
    (0..v.rows).fold(0, |best, i| if norm(i) > norm(best) { i } else { best })
}

/// The hints of instance `idx` (witness search): λ1's isolating interval, each other
/// real eigenvalue's (from its `spectrum` enclosure, rounded outward to dyadic
/// rationals, kept only when det(xI − V) changes sign on it and it is apart from λ1's),
/// and the adjugate row of each.
fn dual_hints(idx: usize, inst: &Instance, lead: &Leading, prec: u32) -> Vec<(String, String)> {
    let v = &inst.sys.v;
    let mut out = Vec::new();
    if v.rows > 1 {
        out.push((bracket_hint(idx), format!("{} {}", lead.lo, lead.hi)));
    }
    let lam1 = if v.rows == 1 {
        (v.at(0, 0).clone(), v.at(0, 0).clone())
    } else {
        (lead.lo.clone(), lead.hi.clone())
    };
    out.push((
        row_hint(idx, 1),
        best_row(v, &lam1.0, &lam1.1, prec).to_string(),
    ));
    for (k, o) in lead.others.iter().enumerate() {
        let Other::Real(mu) = o else {
            continue;
        };
        let (Some(lo), Some(hi)) = (mu.lo().to_rational(), mu.hi().to_rational()) else {
            continue;
        };
        let p = spectrum::char_poly(v);
        let sign_change = (spectrum::eval_exact(&p, &lo) * spectrum::eval_exact(&p, &hi)) < 0;
        let apart = hi < lead.lo || lead.hi < lo;
        if lo < hi && sign_change && apart {
            let j = k + 2;
            let row = best_row(v, &lo, &hi, prec);
            out.push((other_bracket_hint(idx, j), format!("{lo} {hi}")));
            out.push((row_hint(idx, j), row.to_string()));
        }
    }
    out
}

/// An exact lower bound of 1 + Δt|λ| over λ ∈ [lo, hi], as a term: 1 + Δt·lo when
/// lo > 0, 1 − Δt·hi when hi < 0, 1 when the bracket contains 0.
fn growth_lower(dt: &Rational, lo: &Rational, hi: &Rational) -> Term {
    if *lo > 0 {
        add([int(1), mul([q(dt), q(lo)])])
    } else if *hi < 0 {
        sub(int(1), mul([q(dt), q(hi)]))
    } else {
        int(1)
    }
}

/// A row hint: an integer in 0..d.
fn parse_row(hints: &Hints, key: &str, d: usize) -> Result<usize, StatementError> {
    let e = |reason: String| StatementError::Hint {
        key: key.to_string(),
        reason,
    };
    let h = hints
        .get(key)
        .ok_or_else(|| e(format!("hint `{key}` is missing (the adjugate row of φ*)")))?;
    h.parse::<usize>().ok().filter(|&i| i < d).ok_or_else(|| {
        e(format!(
            "hint `{key}`: expected a row index in 0..{d}, got `{h}`"
        ))
    })
}

/// λ1's bracket as (lo, hi) texts and values: V itself when d = 1, else the hint
/// `bracket_hint(idx)` (its absence is an error).
fn lambda1_bracket(
    inst: &Instance,
    idx: usize,
    hints: &Hints,
) -> Result<(String, String, Rational, Rational), StatementError> {
    if inst.sys.d == 1 {
        let l = inst.sys.v.at(0, 0);
        return Ok((l.to_string(), l.to_string(), l.clone(), l.clone()));
    }
    let key = bracket_hint(idx);
    let h = hints.get(&key).ok_or_else(|| StatementError::Hint {
        key: key.clone(),
        reason: format!("hint `{key}` is missing (no isolating interval for λ1)"),
    })?;
    parse_bracket(h, &key)
}

/// A bracket hint "lo hi": two exact rationals with lo < hi.
fn parse_bracket(
    h: &str,
    key: &str,
) -> Result<(String, String, Rational, Rational), StatementError> {
    let e = |reason: String| StatementError::Hint {
        key: key.to_string(),
        reason,
    };
    let (lo, hi) = h
        .split_once(' ')
        .ok_or_else(|| e(format!("hint `{key}`: expected \"lo hi\"")))?;
    let lo_q = crate::kernel::parse_rational(lo).map_err(|x| e(format!("hint `{key}`: {x}")))?;
    let hi_q = crate::kernel::parse_rational(hi).map_err(|x| e(format!("hint `{key}`: {x}")))?;
    Ok((lo.to_string(), hi.to_string(), lo_q, hi_q))
}

/// det(xI − V) at the exact `x` (a literal), as a term over the spec's literals of V.
fn char_poly_at(v: &[Vec<Term>], x: &Term) -> Term {
    let m: Vec<Vec<Term>> = v
        .iter()
        .enumerate()
        .map(|(i, r)| {
            r.iter()
                .enumerate()
                .map(|(j, e)| {
                    if i == j {
                        sub(x.clone(), e.clone())
                    } else {
                        neg(e.clone())
                    }
                })
                .collect()
        })
        .collect();
    det_term(&m)
}

/// The statement: the good-triple hypotheses (d:good) of every witness as exact
/// rational obligations over the literals of V, Q, K and the isolating interval
/// [lo, hi] of λ1 found by the run (a hint; any [lo, hi] gives a sound statement):
/// - λ1 real and positive: lo > 0 and det(xI − V) changes sign on [lo, hi], so V has a
///   real eigenvalue λ1 ∈ (lo, hi);
/// - every other eigenvalue μ has |μ| < λ1 (so λ1 is also simple and dominant). For
///   d = 2, μ = tr V − λ1, and max(|tr V − lo|, |tr V − hi|) < lo suffices. For d = 3
///   the other two are the roots of x² + bx + c with b = λ1 − tr V, c = det V / λ1; by
///   Jury's test they lie in |μ| < λ1 iff |c| < λ1² and |b|λ1 < λ1² + c, which follow
///   on all of [lo, hi] from |det V| < lo³ and max(|lo − tr V|, |hi − tr V|)·hi² < lo³ + det V;
/// - ⟨Qφ1, Kφ1⟩ > 0 for the (real, nonzero) eigenvector φ1: the symmetric part of QᵀK
///   is positive definite.
fn statement_of(
    insts: &[Instance],
    claim: &str,
    hints: &Hints,
) -> Result<Statement, StatementError> {
    let mut st = Statement::new(claim);
    for (idx, inst) in insts.iter().enumerate() {
        let name = &inst.name;
        let v = mat_lits(&inst.sys.v);
        let d = inst.sys.d;
        let lambda1 = lambda1_bracket(inst, idx, hints)?;
        if d == 1 {
            st.state(format!("{name}: λ1 = V > 0"), &gt(v[0][0].clone(), int(0)));
        } else {
            // the bracket's ends as the hint writes them
            let (lo, hi) = (|| lit(lambda1.0.as_str()), || lit(lambda1.1.as_str()));
            st.state(
                format!("{name}: λ1 is a real eigenvalue in (lo, hi) with lo > 0 (det(xI − V) changes sign)"),
                &and([
                    gt(lo(), int(0)),
                    lt(lo(), hi()),
                    lt(
                        mul([char_poly_at(&v, &lo()), char_poly_at(&v, &hi())]),
                        int(0),
                    ),
                ]),
            );
            let tr = || add((0..d).map(|i| v[i][i].clone()));
            let dev = || max(abs(sub(lo(), tr())), abs(sub(hi(), tr())));
            let others = match d {
                2 => lt(dev(), lo()),
                3 => {
                    let det = || det_term(&v);
                    and([
                        lt(abs(det()), pow(lo(), 3)),
                        lt(mul([dev(), pow(hi(), 2)]), add([pow(lo(), 3), det()])),
                    ])
                }
                _ => {
                    return Err(StatementError::Build(format!(
                        "{name}: the spectral statement is implemented for d ≤ 3"
                    )))
                }
            };
            st.state(
                format!("{name}: every other eigenvalue μ has |μ| < λ1 (λ1 simple and dominant)"),
                &others,
            );
        }
        let m = qk_terms(&inst.sys.q, &inst.sys.k);
        let sym: Vec<Vec<Term>> = (0..d)
            .map(|i| {
                (0..d)
                    .map(|j| div(add([m[i][j].clone(), m[j][i].clone()]), int(2)))
                    .collect()
            })
            .collect();
        st.state(
            format!("{name}: ⟨Qφ1, Kφ1⟩ > 0 for every real φ1 ≠ 0 (the symmetric part of QᵀK is positive definite)"),
            &minors_positive(&sym),
        );
        gronwall_obligations(&mut st, idx, inst, lambda1, hints)?;
    }
    Ok(st)
}

/// The discrete Grönwall bound of every real eigenvalue λ_j with a bracket, over the
/// instance's `layer` datum X{idx} (issue #24: the per-step fact is an obligation).
///
/// For every λ in a bracket (lo, hi), a_i(λ) = row i of adj(V − λI) satisfies
/// a_i(λ)(V − λI) = det(V − λI)·e_i, so at the eigenvalue λ* ∈ (lo, hi), φ* = a_i(λ*) is a
/// left eigenvector or 0, and φ*(x_i^{k+1}) = φ*(x_i^k) + Δtλ* Σ_j P_ij φ*(x_j^k) gives
/// max_j |φ*(x_j^k)| ≤ max_j |φ*(x_j^0)|·(1 + Δt|λ*|)^k. The obligations:
/// - for each other real eigenvalue λ_j (j ≥ 2) with a hint: (lo_j, hi_j) holds a root
///   of det(xI − V) (sign change) and is apart from λ1's bracket (min(hi, hi1) < max(lo, lo1):
///   disjoint closed intervals, so λ_j ≠ λ1);
/// - Grönwall, k = 1..K: sup_{[lo,hi]} max_j |a_i·x_j^k| ≤ inf_{[lo,hi]} max_j |a_i·x_j^0|·g^k with
///   g ≤ 1 + Δt|λ| on the bracket; at λ* this is the bound above (sup ≥ the value at λ*,
///   inf ≤ the value at λ*, g ≤ 1 + Δt|λ*|);
/// - non-vacuity: inf_{[lo,hi]} max_j |a_i·x_j^0| > 0, so φ* ≠ 0 and some token has
///   φ*(x_j^0) ≠ 0.
///
/// The row i of each is a hint (any row gives a sound statement).
fn gronwall_obligations(
    st: &mut Statement,
    idx: usize,
    inst: &Instance,
    lambda1: (String, String, Rational, Rational),
    hints: &Hints,
) -> Result<(), StatementError> {
    let name = &inst.name;
    let d = inst.sys.d;
    let v = mat_lits(&inst.sys.v);
    // (j, lo, hi, lo_q, hi_q)
    let (lo1, hi1, lo1_q, hi1_q) = lambda1;
    let mut brackets = vec![(1, lo1, hi1, lo1_q, hi1_q)];
    if d > 1 {
        for j in 2..=d {
            let key = other_bracket_hint(idx, j);
            let Some(h) = hints.get(&key) else {
                continue;
            };
            let (lo, hi, lo_q, hi_q) = parse_bracket(h, &key)?;
            let (lo1, hi1) = (lit(brackets[0].1.as_str()), lit(brackets[0].2.as_str()));
            let (lo_t, hi_t) = (lit(lo.as_str()), lit(hi.as_str()));
            st.state(
                format!(
                    "{name}: λ{j} is a real eigenvalue in (lo, hi), apart from λ1's interval (det(xI − V) changes sign)"
                ),
                &and([
                    lt(lo_t.clone(), hi_t.clone()),
                    lt(min(hi_t.clone(), hi1), max(lo_t.clone(), lo1)),
                    lt(
                        mul([char_poly_at(&v, &lo_t), char_poly_at(&v, &hi_t)]),
                        int(0),
                    ),
                ]),
            );
            brackets.push((j, lo, hi, lo_q, hi_q));
        }
    }
    let x = format!("X{idx}");
    st.datum(&x, layer_datum(inst, Vec::new())?);
    for (j, lo, hi, lo_q, hi_q) in brackets {
        let i = parse_row(hints, &row_hint(idx, j), d)?;
        let g = growth_lower(&inst.dt, &lo_q, &hi_q);
        let dual = |op: &str, k: Term| {
            call(
                op,
                [
                    var(&x),
                    int(0),
                    k,
                    lit(lo.as_str()),
                    lit(hi.as_str()),
                    i.into(),
                ],
            )
        };
        let inf0 = || dual("layer-dual-inf", int(0));
        st.state(
            format!(
                "{name}: max_j |φ{j}*(x_j^k)| ≤ max_j |φ{j}*(x_j^0)|·(1 + Δt|λ|)^k (discrete Grönwall)"
            ),
            &forall(
                "k",
                1,
                inst.steps as u64,
                le(
                    dual("layer-dual-sup", var("k")),
                    mul([inf0(), exp(mul([var("k"), ln(g)]))]),
                ),
            ),
        );
        st.state(
            format!(
                "{name}: φ{j}* = row {i} of adj(V − λ{j} I) is nonzero and not orthogonal to every token (max_j |φ{j}*(x_j^0)| > 0)"
            ),
            &gt(inf0(), int(0)),
        );
    }
    Ok(())
}

/// The consistency reading of the eigenvector enclosures: the residual enclosures
/// (V − λ1 I)φ1 and φ1*(V − λ1 I) contain 0 (violated iff one excludes 0).
fn residual_reading(v: &Mat, lead: &Leading) -> Reading {
    let d = v.rows;
    let prec = lead.lambda.prec();
    let m = spectrum::shifted(v, &lead.lambda, prec);
    let zero = Interval::zero(prec);
    let mut reading = zero.agreement(&zero);
    for i in 0..d {
        let mut s = Interval::zero(prec);
        let mut t = Interval::zero(prec);
        for j in 0..d {
            s.add_assign(&(&m[i * d + j] * &lead.right[j]));
            t.add_assign(&(&lead.left[j] * &m[j * d + i]));
        }
        for x in [s, t] {
            let r = x.agreement(&zero);
            if r.violated() && !reading.violated() {
                reading = r;
            }
        }
    }
    reading
}

/// What one run of (D) leaves behind.
pub struct RunData {
    /// Sample times t = kΔt.
    pub times: Vec<f64>,
    /// z^k midpoints (n × d) at each sample.
    pub states: Vec<Vec<f64>>,
    /// The final state.
    pub last: State,
}

/// A per-step monotonicity pair (max nonincreasing, min nondecreasing) of a linear
/// functional w of z, recorded as certified consistency (F2).
pub fn hull_invariants<'a>(who: &str, label: &str, w: &'a [Interval]) -> [Invariant<'a>; 2] {
    [
        Invariant::new(
            format!("{who}: max_j {label}(z_j^k) is nonincreasing"),
            move |v| {
                let b = max_all(&functional(&v.before.u, v.n, v.d, w));
                let a = max_all(&functional(&v.after.u, v.n, v.d, w));
                &b - &a
            },
        ),
        Invariant::new(
            format!("{who}: min_j {label}(z_j^k) is nondecreasing"),
            move |v| {
                let b = min_all(&functional(&v.before.u, v.n, v.d, w));
                let a = min_all(&functional(&v.after.u, v.n, v.d, w));
                &a - &b
            },
        ),
    ]
}

/// Runs (D) in the layer-rescaled form, checking `invs` on every step and sampling
/// z every `every` steps.
pub fn run_map(inst: &Instance, prec: u32, invs: &mut [Invariant<'_>], every: usize) -> RunData {
    let mut map = DiscreteMap::new(&inst.sys, inst.n, &inst.dt, Form::LayerRescaled, prec)
        .expect("R = I + ΔtV invertible (λ1 > 0 dominant, Δt > 0)");
    sample(&mut map, inst, invs, every, |s| &s.u)
}

/// Runs `map` from the instance's tokens over its steps, checking `invs` on every
/// step and sampling `pick` of the state (z or x) every `every` steps and at the last.
pub fn sample(
    map: &mut DiscreteMap,
    inst: &Instance,
    invs: &mut [Invariant<'_>],
    every: usize,
    pick: fn(&State) -> &[Interval],
) -> RunData {
    let dt = inst.dt.to_f64();
    let mut times = Vec::new();
    let mut states = Vec::new();
    let each_step = |v: &StepView| invs.iter_mut().for_each(|i| i.check(v));
    let last = map.run(&inst.tokens, inst.steps, each_step, |s| {
        if s.k % every.max(1) == 0 || s.k == inst.steps {
            times.push(s.k as f64 * dt);
            states.push(mids(pick(s)));
        }
    });
    RunData {
        times,
        states,
        last,
    }
}

impl RunData {
    /// The run's token trajectories and its final attention matrix, as plots
    /// `{slug}-tokens` and `{slug}-attention` (see [`super::common::add_visuals`]).
    pub fn visuals(&self, into: &mut Vec<Plot>, slug: &str, name: &str, n: usize, d: usize) {
        super::common::add_visuals(
            into,
            slug,
            name,
            &self.times,
            &self.states,
            n,
            d,
            &self.last.p,
        );
    }
}

/// T = steps·Δt, printed exactly.
pub fn horizon(inst: &Instance) -> String {
    fmt_q(&rug::Rational::from(
        &inst.dt * rug::Integer::from(inst.steps),
    ))
}

/// The diameter of the initial tokens (f64; for the tolerance only).
pub fn diameter(inst: &Instance) -> f64 {
    let x = inst.tokens.to_f64();
    let (n, d) = (inst.n, inst.sys.d);
    let mut m = 0.0f64;
    for i in 0..n {
        for j in 0..i {
            let s: f64 = (0..d).map(|c| (x[i * d + c] - x[j * d + c]).powi(2)).sum();
            m = m.max(s.sqrt());
        }
    }
    m
}

/// Level sets at T: a = min, b = max of the values; each value's label
/// ("0", "a", "b", or "none") by its nearest level within τ, and the largest
/// distance to the nearest level.
pub fn levels(vals: &[f64], tau: f64) -> (f64, f64, Vec<&'static str>, f64) {
    let a = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let b = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut worst = 0.0f64;
    let labels = vals
        .iter()
        .map(|&v| {
            let cands = [("0", v.abs()), ("a", (v - a).abs()), ("b", (v - b).abs())];
            let (l, dist) = cands
                .iter()
                .copied()
                .min_by(|x, y| x.1.total_cmp(&y.1))
                .expect("three");
            worst = worst.max(dist);
            if dist <= tau {
                l
            } else {
                "none"
            }
        })
        .collect();
    (a, b, labels, worst)
}

/// The table cells of a structure at T (τ, a_T, b_T, the largest distance, and the
/// tokens at a_T, b_T, 0 and off all three), shared with paranormal.
pub(super) fn level_cells(tau: f64, levels: &(f64, f64, Vec<&'static str>, f64)) -> Vec<String> {
    let (a, b, ref labels, worst) = *levels;
    vec![
        format!("{tau:.2e}"),
        format!("{a:.8}"),
        format!("{b:.8}"),
        format!("{worst:.2e}"),
        members(labels, "a"),
        members(labels, "b"),
        members(labels, "0"),
        members(labels, "none"),
    ]
}

/// The first witness's largest distance to its levels (`what`: of what, to which
/// levels) and its τ, as the report's first figure `name` (shared with paranormal).
pub(super) fn first_figure(
    out: &mut Presentation,
    name: &str,
    what: &str,
    first: Option<(f64, f64)>,
) {
    if let Some((w, tau)) = first {
        out.figures.insert(
            0,
            crate::outcome::Figure {
                name: name.into(),
                value: w,
                text: format!(
                    "first witness: largest distance of {what} = {w:.3e} (τ = {tau:.3e})"
                ),
            },
        );
    }
}

/// Tokens (1-based) carrying each label, as text.
pub fn members(labels: &[&str], l: &str) -> String {
    let v: Vec<String> = labels
        .iter()
        .enumerate()
        .filter(|(_, x)| **x == l)
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    if v.is_empty() {
        "—".into()
    } else {
        v.join(" ")
    }
}

fn describe_lead(l: &Leading, g: &Interval) -> String {
    let others: Vec<String> = l.others.iter().map(|o| o.describe(10)).collect();
    format!(
        "λ1 ∈ {} (isolating interval with an exact sign change; p'(λ1) ∈ {} ≠ 0, so simple); \
         other eigenvalues: {}; all of modulus < λ1 (certified); φ1* = ({}) (sum 1), \
         residual |φ1*(V − λ1 I)| ≤ {:.1e}, |(V − λ1 I)φ1| ≤ {:.1e} (enclosures contain 0: {}); \
         ⟨Qφ1, Kφ1⟩ ∈ {} > 0 (consistency reading: observed, it never certifies nor refutes; the hypotheses \
         themselves are the statement's obligations)",
        l.lambda.fmt_outward(12),
        l.dp.fmt_outward(4),
        others.join(", "),
        l.left
            .iter()
            .map(|x| x.fmt_outward(10))
            .collect::<Vec<_>>()
            .join(", "),
        l.left_residual,
        l.right_residual,
        l.residuals_contain_zero,
        g.fmt_outward(6),
    )
}

/// φ(z_i(T)) midpoints for a functional.
fn final_values(s: &State, n: usize, d: usize, w: &[Interval]) -> Vec<f64> {
    functional(&s.u, n, d, w)
        .iter()
        .map(Interval::mid_f64)
        .collect()
}

struct Analysed {
    a: f64,
    b: f64,
    labels: Vec<&'static str>,
    worst: f64,
}

fn analyse(inst: &Instance, prec: u32, phi: &[Interval], tau: f64) -> Analysed {
    let w: Vec<Interval> = phi.iter().map(|x| x.with_prec(prec)).collect();
    let data = run_map(inst, prec, &mut [], inst.steps);
    let vals = final_values(&data.last, inst.n, inst.sys.d, &w);
    let (a, b, labels, worst) = levels(&vals, tau);
    Analysed {
        a,
        b,
        labels,
        worst,
    }
}

/// Runs the claim.
/// One instance's run: its leading eigenvalue, the invariants' records, the
/// sampled run and the structure at T at two precisions.
pub struct Structure {
    /// The leading eigenvalue and ⟨Qφ1, Kφ1⟩.
    lead: Leading,
    g: Interval,
    /// ‖V‖_op (for the spectra table).
    op_norm: Result<Interval, spectrum::SpectrumError>,
    /// The invariants, in order (the first two are theorems of the map).
    records: Vec<Record>,
    /// The sampled run.
    data: RunData,
    /// The tolerance τ at T.
    tau: f64,
    /// The levels a_T, b_T, each token's label and the largest distance.
    levels: (f64, f64, Vec<&'static str>, f64),
    /// The same at twice the precision.
    hi: Analysed,
}

/// What the search found: the leading eigenvalue of each V (its isolating
/// interval is a hint), and each instance's run (`None` when V has no good triple).
pub struct Found {
    /// The hints found (key, value): per instance the isolating interval of λ1 and of
    /// every other real eigenvalue, and the row of the adjugate for each.
    hints: Hints,
    /// Per instance.
    runs: Vec<Option<Structure>>,
    /// The ablations' runs, in order.
    ablations: Vec<Ablation>,
}

#[allow(clippy::too_many_arguments)]
fn phi_plot(
    slug: &str,
    name: &str,
    data: &RunData,
    n: usize,
    d: usize,
    phi: &[f64],
    a: f64,
    b: f64,
) -> Plot {
    let mut series: Vec<Series> = (0..n)
        .map(|i| Series {
            name: format!("token {}", i + 1),
            style: Style::Line,
            points: data
                .times
                .iter()
                .zip(&data.states)
                .map(|(&t, z)| (t, (0..d).map(|c| phi[c] * z[i * d + c]).sum()))
                .collect(),
        })
        .collect();
    let t_end = data.times.last().copied().unwrap_or(0.0);
    for (lab, y) in [("φ1* = a_T", a), ("φ1* = b_T", b), ("φ1* = 0", 0.0)] {
        series.push(Series {
            name: lab.into(),
            style: Style::Dashed,
            points: vec![(0.0, y), (t_end, y)],
        });
    }
    Plot {
        slug: format!("{slug}-phi"),
        title: format!("{name}: φ1*(z_i(t)) against t, with the levels 0, a_T, b_T"),
        x_label: "t".into(),
        y_label: "φ1*(z_i)".into(),
        x_log: false,
        y_log: false,
        series,
        heatmap: None,
        paths: false,
    }
}

/// The d = 2 picture shared with `paranormal`: tokens z at four times and the three lines
/// `sym` = a_T, b_T, 0, where `sym` is the linear form z ↦ ⟨phi, z⟩ (phi ≠ 0), clipped to
/// the box of the plotted tokens.
pub(super) fn plane_plot(
    slug: &str,
    name: &str,
    data: &RunData,
    phi: &[f64],
    sym: &str,
    a: f64,
    b: f64,
) -> Plot {
    let k = data.states.len();
    let mut series = Vec::new();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for s in [0, k / 4, k / 2, k - 1] {
        let z = &data.states[s];
        let pts: Vec<(f64, f64)> = z.chunks_exact(2).map(|c| (c[0], c[1])).collect();
        for (x, y) in &pts {
            lo = lo.min(x.min(*y));
            hi = hi.max(x.max(*y));
        }
        series.push(Series {
            name: format!("z(t = {:.1})", data.times[s]),
            style: Style::Points,
            points: pts,
        });
    }
    // Lines φ0 x + φ1 y = c, clipped to the x-range [lo, hi] (vertical when φ1 = 0).
    for (lab, c) in [("a_T", a), ("b_T", b), ("0", 0.0)] {
        let line = if phi[1].abs() > 1e-12 {
            vec![
                (lo, (c - phi[0] * lo) / phi[1]),
                (hi, (c - phi[0] * hi) / phi[1]),
            ]
        } else {
            vec![(c / phi[0], lo), (c / phi[0], hi)]
        };
        series.push(Series {
            name: format!("{sym} = {lab}"),
            style: Style::Dashed,
            points: line,
        });
    }
    Plot {
        slug: format!("{slug}-plane"),
        title: format!("{name}: tokens z at four times and the lines {sym} = a_T, b_T, 0"),
        x_label: "z_1".into(),
        y_label: "z_2".into(),
        x_log: false,
        y_log: false,
        series,
        heatmap: None,
        paths: false,
    }
}

/// Number of τ-distinct values (sorted gaps > τ).
pub fn count_levels(vals: &[f64], tau: f64) -> usize {
    let mut v = vals.to_vec();
    v.sort_by(f64::total_cmp);
    1 + v.windows(2).filter(|w| w[1] - w[0] > tau).count()
}

/// One ablation's run (report only): why it is not a good triple, its eigenvalues,
/// its sampled run, and the structure at T.
struct Ablation {
    /// The hypothesis dropped, in the certifier's words.
    why: String,
    /// The eigenvalues of V (f64).
    eig: Vec<spectrum::C64>,
    /// The run, sampled once per time unit.
    data: RunData,
    /// τ-levels of z·e1 at T.
    levels: usize,
    /// τ-distinct points z_i(T).
    points: usize,
    /// max_i |z_i(T) − z_i(T − 1)|.
    moving: f64,
}

/// Runs ablation `inst`: the same dynamics, no hypothesis required; τ is
/// 10·diam·e^(−T) (there is no λ1 to use).
fn ablation(inst: &Instance, p: &Params, prec: u32) -> Ablation {
    let (n, d) = (inst.n, inst.sys.d);
    let why = match spectrum::good_triple(&inst.sys.qk, &inst.sys.v, prec) {
        Ok(_) => "none (a good triple)".to_string(),
        Err(e) => e.to_string(),
    };
    let eig = spectrum::roots_f64(&spectrum::char_poly(&inst.sys.v));
    let every = (1.0 / inst.dt.to_f64()).round().max(1.0) as usize;
    let data = run_map(inst, prec, &mut [], every);
    let t_end = inst.steps as f64 * inst.dt.to_f64();
    let tau = p.tau_factor * diameter(inst) * (-t_end).exp();
    let z = data.states.last().expect("final");
    let zprev = &data.states[data.states.len().saturating_sub(2)];
    let e1: Vec<f64> = (0..n).map(|j| z[j * d]).collect();
    let dist = |a: &[f64], i: usize, b: &[f64], j: usize| {
        (0..d)
            .map(|c| (a[i * d + c] - b[j * d + c]).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    let points = (0..n)
        .filter(|&j| !(0..j).any(|l| dist(z, j, z, l) <= tau))
        .count();
    let moving = (0..n).map(|j| dist(z, j, zprev, j)).fold(0.0f64, f64::max);
    Ablation {
        why,
        eig,
        levels: count_levels(&e1, tau),
        points,
        moving,
        data,
    }
}

/// The ablations' table, plots and note (nothing when there are none).
fn ablations(p: &Params, runs: &[Ablation], out: &mut Presentation) {
    if runs.is_empty() {
        return;
    }
    let mut t = Table::new(
        "Hypothesis ablations (report only, nothing asserted): the same dynamics with one hypothesis dropped",
        &[
            "instance",
            "hypothesis dropped (certifier's words)",
            "eigenvalues (f64)",
            "T",
            "τ-levels of z·e1",
            "τ-distinct points z_i(T)",
            "max_i |z_i(T) − z_i(T − 1)|",
        ],
    );
    for (i, (inst, a)) in p.ablations.iter().zip(runs).enumerate() {
        let eig: Vec<String> = a
            .eig
            .iter()
            .map(|z| {
                if z.im == 0.0 {
                    format!("{:.4}", z.re)
                } else {
                    format!("{:.4}{:+.4}i", z.re, z.im)
                }
            })
            .collect();
        t.row(vec![
            inst.name.clone(),
            a.why.clone(),
            eig.join(", "),
            horizon(inst),
            a.levels.to_string(),
            a.points.to_string(),
            format!("{:.3e}", a.moving),
        ]);
        out.plots.push(crate::dynamics::plots::trajectories(
            &format!("ablation{}-tokens", i + 1),
            &format!("ablation {}: token trajectories (z)", inst.name),
            &a.data.times,
            &a.data.states,
            inst.n,
            inst.sys.d,
        ));
    }
    out.tables.push(t);
    out.note(
        "Ablations are report only: no check is recorded for them. τ there is 10·diam·e^(−T) (there is no λ1 \
         to use). With a complex leading eigenvalue there is no real dual functional, and with a repeated λ1 \
         the dual space is more than one-dimensional (the polytope case): the three-hyperplane picture is \
         not claimed.",
    );
}

// ----- exact terms shared by the clusters statements -----------------

/// The entries of an exact matrix as literals.
pub fn mat_lits(m: &Mat) -> Vec<Vec<Term>> {
    (0..m.rows)
        .map(|i| m.row(i).iter().map(q).collect())
        .collect()
}

/// The entries of QᵀK as terms over the literals of Q and K:
/// (QᵀK)_ij = Σ_l Q_li K_lj.
pub fn qk_terms(q_: &Mat, k: &Mat) -> Vec<Vec<Term>> {
    (0..q_.cols)
        .map(|i| {
            (0..k.cols)
                .map(|j| add((0..q_.rows).map(|l| mul([q(q_.at(l, i)), q(k.at(l, j))]))))
                .collect()
        })
        .collect()
}

/// det of a square matrix of terms, by Laplace expansion along the first row.
pub fn det_term(m: &[Vec<Term>]) -> Term {
    match m.len() {
        0 => int(1),
        1 => m[0][0].clone(),
        2 => sub(
            mul([m[0][0].clone(), m[1][1].clone()]),
            mul([m[0][1].clone(), m[1][0].clone()]),
        ),
        d => add((0..d).map(|j| {
            let minor: Vec<Vec<Term>> = m[1..]
                .iter()
                .map(|r| {
                    r.iter()
                        .enumerate()
                        .filter(|(c, _)| *c != j)
                        .map(|(_, x)| x.clone())
                        .collect()
                })
                .collect();
            let p = mul([m[0][j].clone(), det_term(&minor)]);
            if j % 2 == 0 {
                p
            } else {
                neg(p)
            }
        })),
    }
}

/// "M is symmetric positive definite" (Sylvester: M = Mᵀ and every leading
/// principal minor > 0), as a formula over the terms of M.
pub fn spd_formula(m: &[Vec<Term>]) -> Formula {
    let mut parts = Vec::new();
    for (i, row) in m.iter().enumerate() {
        for (j, x) in row.iter().enumerate().skip(i + 1) {
            parts.push(eq(x.clone(), m[j][i].clone()));
        }
    }
    parts.push(minors_positive(m));
    and(parts)
}

/// "Every leading principal minor of M is > 0" (for a symmetric M: positive definite).
pub fn minors_positive(m: &[Vec<Term>]) -> Formula {
    and((1..=m.len()).map(|k| {
        let lead: Vec<Vec<Term>> = m[..k].iter().map(|r| r[..k].to_vec()).collect();
        gt(det_term(&lead), int(0))
    }))
}
