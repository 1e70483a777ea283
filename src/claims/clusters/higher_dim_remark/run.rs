//! The run of clusters/higher-dim-remark (the claim's `Claim` impl): the quadratures,
//! the flows and the reduced ODE (the witness, in parallel), the observations against
//! clusters.md §4, and the presentation.

use super::*;
use crate::kernel::Checked;
use crate::outcome::{Observations, Presentation};

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(r: Raw, _at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        r.parsed()
    }
    fn statement(
        p: &Params,
        claim: &str,
        hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        Some(statement_of(p, claim, hints))
    }
    type Witness = Found;
    /// The flow runs (c), the quadratures (b) and the reduced ODE, and the printed
    /// exponents k for the statement.
    fn witness(p: &Params, ctx: &Ctx) -> Found {
        let prec = ctx.prec();
        let configs = configs(p);
        let p0 = p.precisions[0];
        let ref_times: Vec<Rational> = p.reference.iter().map(|r| r[0].clone()).collect();
        // the flow runs (c), the quadratures (b) and the reduced ODE are independent: run
        // them in parallel and combine the results in a fixed order
        let ((runs, quads), red) = rayon::join(
            || {
                rayon::join(
                    || {
                        configs
                            .par_iter()
                            .map(|(h, pr, cen)| trajectory(p, h, *pr, *cen))
                            .collect::<Vec<_>>()
                    },
                    || {
                        p.limits
                            .par_iter()
                            .map(|(e, _, _)| c_quadrature(e, prec))
                            .collect::<Vec<_>>()
                    },
                )
            },
            || reduced(&p.eps, &p.t_end, &p.reduced_step, &ref_times, p0),
        );

        let hints = p
            .limits
            .iter()
            .map(|(eps, _, _)| {
                (
                    exponent_hint(eps),
                    bound_exponent10(eps, &p.bound_t, prec).fmt_lo(8),
                )
            })
            .collect();
        Found {
            hints,
            runs,
            quads,
            red,
        }
    }
    /// The printed exponents (a sound obligation for any value).
    fn hints(_: &Params, w: &Found) -> Hints {
        w.hints.iter().cloned().collect()
    }
    /// (b) the quadratures against §4 and the lower bound; (c) the flows against §4, at
    /// two steps and two precisions, the reduced ODE, and the limit against the
    /// quadrature (observations). Nothing when the statement was not decided.
    fn observe(p: &Params, w: &Found, proof: Option<&Checked>, ctx: &Ctx, o: &mut Observations) {
        if proof.is_none() {
            return;
        }
        let prec = ctx.prec();
        let p0 = p.precisions[0];
        let quads = &w.quads;
        for (k, (eps, c_ref, _)) in p.limits.iter().enumerate() {
            let l = lower_bound(eps, prec);
            let (c_q, d_i, tail) = &quads[k];
            let dev_q = rel(c_q, c_ref);
            let tol = Float::with_val(prec, &p.c_rel_tol);
            o.observe(
                format!("C({}) by quadrature = {} (clusters.md §4) within rel {}", fmt_q(eps), fmt_f(&Float::with_val(64, c_ref), 12), fmt_q(&p.c_rel_tol)),
                dev_q <= tol,
                format!(
                    "C = {} (tanh–sinh, ΔI = {} between the last two levels, tail ≤ {}), rel. deviation {}",
                    fmt_f(c_q, 20),
                    fmt_f(d_i, 3),
                    fmt_f(tail, 3),
                    fmt_f(&dev_q, 3)
                ),
            );
            o.observe(
                format!(
                    "C({}) ≥ L({}) (consistent with the proof of the lower bound)",
                    fmt_q(eps),
                    fmt_q(eps)
                ),
                Float::with_val(prec, l.lo()) <= *c_q,
                format!("C = {}, L ∈ {}", fmt_f(c_q, 12), l.fmt_outward(8)),
            );
        }
        // (c) the flow
        let tol = p.rel_tol.clone();
        for (r, (h, pr, cen)) in w.runs.iter().zip(&configs(p)) {
            if let Err(e) = r {
                o.observe(
                    format!(
                        "flow run h = {h}, {pr} bits{} completes",
                        if *cen { "" } else { " (uncentered)" }
                    ),
                    false,
                    e.to_string(),
                );
            }
        }
        let Some([main, h2, p2, _]) = completed(w) else {
            return;
        };
        let eps_txt = fmt_q(&p.eps);
        for (k, r) in p.reference.iter().enumerate() {
            let v = &main.at_ref[k];
            let devs: Vec<Float> = (0..3).map(|q| rel(&v[q], &r[q + 1])).collect();
            let ok = devs.iter().all(|d| *d <= tol);
            o.observe(
                format!(
                    "t = {}: b, e^{{−t}}b and P₁₂ within rel {} of clusters.md §4",
                    fmt_q(&r[0]),
                    fmt_q(&tol)
                ),
                ok,
                format!(
                    "b = {}, e^{{−t}}b = {}, P₁₂ = {} (rel. deviations {}, {}, {})",
                    fmt_f(&v[0], 10),
                    fmt_f(&v[1], 10),
                    fmt_f(&v[2], 10),
                    fmt_f(&devs[0], 2),
                    fmt_f(&devs[1], 2),
                    fmt_f(&devs[2], 2)
                ),
            );
        }
        for (other, what) in [
            (h2, format!("step h = {} vs {}", h2.h, main.h)),
            (p2, format!("precision {} vs {} bits", p2.prec, main.prec)),
        ] {
            let mut worst = Float::new(64);
            for (a, b) in main.at_ref.iter().zip(&other.at_ref) {
                for q in 0..3 {
                    let d = rel_f(&b[q], &a[q]);
                    if d > worst {
                        worst = Float::with_val(64, &d);
                    }
                }
            }
            o.observe(
                format!(
                    "{what}: b, e^{{−t}}b and P₁₂ agree within rel {} at every reference time",
                    fmt_q(&tol)
                ),
                worst <= Float::with_val(64, &tol),
                format!("largest relative difference {}", fmt_f(&worst, 3)),
            );
        }
        // reduced ODE cross-check
        let (red_at, red_end) = &w.red;
        let mut worst = Float::new(64);
        for (a, c) in main.at_ref.iter().zip(red_at) {
            let d = rel_f(c, &a[1]);
            if d > worst {
                worst = Float::with_val(64, &d);
            }
        }
        o.observe(
                format!(
                    "reduced ODE ḃ = tanh(b²)b (scalar RK4, h = {}, {} bits) agrees with the full flow within rel {}",
                    p.reduced_step, p0, fmt_q(&tol)
                ),
                worst <= Float::with_val(64, &tol),
                format!("largest relative difference of e^{{−t}}b at the reference times {}", fmt_f(&worst, 3)),
            );
        // the flow's limit against the quadrature
        if let Some(k) = p.limits.iter().position(|l| l.0 == p.eps) {
            let c_q = &quads[k].0;
            let d = rel_f(&main.c_end, c_q);
            let dr = rel_f(red_end, c_q);
            o.observe(
                format!(
                    "e^{{−T}}b(T) at T = {} matches C({eps_txt}) by quadrature within rel {}",
                    fmt_q(&p.t_end),
                    fmt_q(&tol)
                ),
                d <= Float::with_val(64, &tol) && dr <= Float::with_val(64, &tol),
                format!(
                    "flow {} (rel. {}), reduced ODE {} (rel. {}), quadrature {}",
                    fmt_f(&main.c_end, 12),
                    fmt_f(&d, 2),
                    fmt_f(red_end, 12),
                    fmt_f(&dr, 2),
                    fmt_f(c_q, 12)
                ),
            );
        }
    }
    /// The limits table and its figures, the trajectory and demonstration tables, the
    /// plot and the notes. Nothing when the statement was not decided.
    fn present(p: &Params, w: &Found, proof: Option<&Checked>, ctx: &Ctx, o: &mut Presentation) {
        if proof.is_none() {
            return;
        }
        let prec = ctx.prec();
        let quads = &w.quads;
        let bound_col = format!("P₁₂({}) ≤ 10^−X: X ≥", fmt_q(&p.bound_t));
        let mut limits_table = Table::new(
            format!("Limits z₁,₂(t) → (1, ±C(ε)) (precision {prec} bits)"),
            &[
                "ε",
                "L(ε) = ε e^{−1/(2ε²)} (certified)",
                "§4 L(ε)",
                "C(ε) by quadrature",
                "§4 C(ε)",
                "rel. deviation",
                "quadrature ΔI (last level)",
                &bound_col,
            ],
        );
        for (k, (eps, c_ref, l_txt)) in p.limits.iter().enumerate() {
            let l = lower_bound(eps, prec);
            let sep = l.mul_i64(2);
            let x = bound_exponent10(eps, &p.bound_t, prec);
            let (c_q, d_i, _) = &quads[k];
            let dev_q = rel(c_q, c_ref);
            limits_table.row(vec![
                fmt_q(eps),
                l.fmt_outward(8),
                l_txt.clone(),
                fmt_f(c_q, 15),
                fmt_f(&Float::with_val(prec, c_ref), 12),
                fmt_f(&dev_q, 3),
                fmt_f(d_i, 3),
                x.fmt_lo(8),
            ]);
            if k + 1 == p.limits.len() {
                o.figure(
                    format!("C(ε) at ε = {} (quadrature)", fmt_q(eps)),
                    c_q.to_f64(),
                    fmt_f(c_q, 12),
                );
                o.figure(
                    format!(
                        "certified separation 2L(ε) of the two limits at ε = {}",
                        fmt_q(eps)
                    ),
                    sep.lo_f64(),
                    format!("≥ {}", sep.fmt_lo(6)),
                );
                o.figure(
                    format!(
                        "P₁₂({}) ≤ 10^−X at ε = {}: certified X",
                        fmt_q(&p.bound_t),
                        fmt_q(eps)
                    ),
                    x.lo_f64(),
                    format!("X ≥ {}", x.fmt_lo(8)),
                );
            }
        }
        o.tables.push(limits_table);
        if let Some([main, _, _, demo]) = completed(w) {
            let eps_txt = fmt_q(&p.eps);
            let mut traj = Table::new(
                format!(
                    "Trajectory at ε = {eps_txt}: flow engine RK4 in z, h = {}, {} bits, against clusters.md §4",
                    main.h, main.prec
                ),
                &[
                    "t",
                    "b(t)",
                    "§4 b",
                    "e^{−t}b(t)",
                    "§4 e^{−t}b",
                    "P₁₂(t)",
                    "§4 P₁₂",
                    "max rel. deviation",
                ],
            );
            for (k, r) in p.reference.iter().enumerate() {
                let v = &main.at_ref[k];
                let devs: Vec<Float> = (0..3).map(|q| rel(&v[q], &r[q + 1])).collect();
                let worst = devs
                    .iter()
                    .max_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal))
                    .cloned()
                    .unwrap_or_else(|| Float::new(64));
                traj.row(vec![
                    fmt_q(&r[0]),
                    fmt_f(&v[0], 10),
                    self_txt(p, k, 1),
                    fmt_f(&v[1], 10),
                    self_txt(p, k, 2),
                    fmt_f(&v[2], 10),
                    self_txt(p, k, 3),
                    fmt_f(&worst, 2),
                ]);
            }
            o.tables.push(traj);
            if let Some(last) = main.at_ref.last() {
                let t_last = &p.reference[p.reference.len() - 1][0];
                o.figure(
                    format!(
                        "log₁₀ P₁₂({}) at ε = {eps_txt} (flow, {} bits)",
                        fmt_q(t_last),
                        main.prec
                    ),
                    log10_f64(&last[2]),
                    format!(
                        "{} (P₁₂ = {})",
                        fmt_f(&Float::with_val(64, last[2].log10_ref()), 9),
                        fmt_f(&last[2], 8)
                    ),
                );
            }

            // demonstration at low precision
            let mut demo_t = Table::new(
                format!(
                    "Demonstration (not asserted): the same flow at {} bits with textbook logits e^{{2t}}(1 ± c²) vs {} bits",
                    demo.prec, main.prec
                ),
                &[
                    "t",
                    &format!("P₁₂ ({} bits)", demo.prec),
                    &format!("P₁₂ ({} bits)", main.prec),
                    &format!("z₁ second coordinate ({} bits)", demo.prec),
                    &format!("z₁ second coordinate ({} bits)", main.prec),
                ],
            );
            let show: Vec<Rational> = [0, 10, 15, 17, 18, 20, 30, 40, 48, 50, 52, 55, 60]
                .iter()
                .map(|&x| Rational::from(x))
                .filter(|t| *t <= p.t_end && divides(&p.sample, t))
                .collect();
            for t in &show {
                let a = demo.samples.iter().find(|s| s.0 == *t);
                let b = main.samples.iter().find(|s| s.0 == *t);
                if let (Some(a), Some(b)) = (a, b) {
                    demo_t.row(vec![
                        fmt_q(t),
                        fmt_f(&a.2, 10),
                        fmt_f(&b.2, 10),
                        fmt_f(&a.1, 8),
                        fmt_f(&b.1, 8),
                    ]);
                }
            }
            o.tables.push(demo_t);
            match (&demo.first_tie, &demo.tie_from) {
                (Some(t0), Some(t)) => o.note(format!(
                    "Demonstration at {} bits (uncentered logits e^{{2t}}(1 ± c²), as a plain implementation computes them, \
                     RK4 with h = {}): the two logits of a row first round to the same value at t = {} (c² < 2^−{}), and \
                     from t = {} on P₁₂ = 1/2 exactly at every step; both tokens then drift to (1, 0): z₁'s second \
                     coordinate ends at {} instead of C(ε) = {}. Such a run sees one cluster.",
                    demo.prec,
                    demo.h,
                    fmt_q(t0),
                    demo.prec,
                    fmt_q(t),
                    fmt_f(&demo.c_end, 4),
                    fmt_f(&main.c_end, 6)
                )),
                _ => o.note(format!(
                    "Demonstration at {} bits: P₁₂ was not exactly 1/2 at the end (no tie of the logits).",
                    demo.prec
                )),
            }
            let series = |tr: &Trajectory, name: String| Series {
                name,
                style: Style::Line,
                points: tr
                    .samples
                    .iter()
                    .map(|(t, c, _)| (t.to_f64(), c.to_f64().abs()))
                    .filter(|(_, y)| *y > 0.0 && y.is_finite())
                    .collect(),
            };
            let t_max = p.t_end.to_f64();
            let c_lim = main.c_end.to_f64();
            let thr = 2f64.powf(-(demo.prec as f64) / 2.0);
            o.plots.push(Plot {
                slug: "precision".into(),
                title: format!(
                    "z₁'s second coordinate c(t), ε = {eps_txt}: {} vs {} bits",
                    main.prec, demo.prec
                ),
                x_label: "t".into(),
                y_label: "|z₁,₂(t)| (log scale)".into(),
                x_log: false,
                y_log: true,
                series: vec![
                    series(main, format!("{} bits", main.prec)),
                    series(demo, format!("{} bits", demo.prec)),
                    Series {
                        name: "C(ε)".into(),
                        style: Style::Dashed,
                        points: vec![(0.0, c_lim), (t_max, c_lim)],
                    },
                    Series {
                        name: format!("c² = 2^−{}", demo.prec),
                        style: Style::Dashed,
                        points: vec![(0.0, thr), (t_max, thr)],
                    },
                ],
                heatmap: None,
                paths: false,
            });
        }

        o.note(format!(
            "Rigour: (a) is the claim's statement (one obligation per ε and quantity, listed with its formula under \
             Trust), decided by the kernel in outward-rounded intervals; the step from the formulas to the remark is the \
             proof in the module documentation (e^{{2u}} − 1 ≥ 2u ⇒ ∫_{{ε²}}^∞ du/(u(e^{{2u}} − 1)) ≤ 1/(2ε²); e^{{−t}}b \
             decreases to C, so b(t) ≥ C e^t). (b) and (c) are observations against clusters.md §4: tanh–sinh \
             quadrature in MPFR (rel {}), and the flow engine's RK4 in point arithmetic (P₁₂ taken from the engine's \
             attention matrix, centered logits; rel {}), at two step sizes and two precisions ({} and {} bits).",
            fmt_q(&p.c_rel_tol), fmt_q(&p.rel_tol), p.precisions[0], p.precisions[1]
        ));
    }
}

/// What the run computed, in a fixed order.
pub struct Found {
    /// The hints: the printed exponent X(ε, T) at each ε of the limit table.
    hints: Vec<(String, String)>,
    /// The flow runs (main, h/2, 2× precision, low-precision demonstration).
    runs: Vec<Result<Trajectory, flow::FlowError>>,
    /// (C, ΔI, tail) per ε of the limit table.
    quads: Vec<(Float, Float, Float)>,
    /// The reduced ODE: e^{−t}b at the reference times, and at T.
    red: (Vec<Float>, Float),
}

/// The flow configurations: (step, precision, centered logits).
fn configs(p: &Params) -> Vec<(Rational, u32, bool)> {
    let p0 = p.precisions[0];
    let mut configs: Vec<(Rational, u32, bool)> = vec![(p.steps[0].clone(), p0, true)];
    configs.push((p.steps[1].clone(), p0, true));
    configs.push((p.steps[0].clone(), p.precisions[1], true));
    configs.push((p.demo_step.clone(), p.demo_precision, false));
    configs
}

/// The four flow runs, when all completed.
fn completed(w: &Found) -> Option<[&Trajectory; 4]> {
    match &w.runs[..] {
        [Ok(a), Ok(b), Ok(c), Ok(d)] => Some([a, b, c, d]),
        _ => None,
    }
}
