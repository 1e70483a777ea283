//! The scan's reading of the theory and of the paper: the bias-alone windows and tails
//! (kernel enclosures), ALiBi's receptive field against L_tr, the former convergence
//! reading (the scan's), and the paper's findings beside this run's outcome at each L_tr
//! (and checkpoint), with the findings it contradicts said in plain words.

use super::parts::part_outcomes;
use super::sig;
use super::view::{alibi, as_of, ats, gradient_mass_beyond, mean, share, View};
use crate::claims::positional::common::{slope_exponents, slope_expr, SlopeRule};
use crate::kernel::expr::build::{self, Term};
use crate::kernel::{expr, Interval};
use crate::outcome::{round_sig, Presentation, Table};
use attncheck_lm::job::JobResult;
use rug::Rational;

/// The scan's reading of the theory: the bias-alone windows and tails, ALiBi's receptive
/// field against L_tr, and the former convergence reading (none without a scan: the
/// quick profile has no prediction ε, no trend L_ex and no validation curves).
pub(super) fn theory(v: &View, o: &mut Presentation) {
    let View {
        p, ctx, results, ..
    } = *v;
    let Some((s, eps)) = v.scan else { return };
    let plans = p.plans();
    let cr = &p.criteria;
    let sc = &s.criteria;
    let prec = ctx.prec();
    let ats = ats(&plans, results);
    let beyond = gradient_mass_beyond(&ats, sc);

    // theory: the bias-alone windows and tails
    let eps = eps.clone();
    let qs = slope_exponents(p.heads, SlopeRule::Paper);
    let mut cols: Vec<String> = vec![
        "head".into(),
        "slope m".into(),
        format!("bias-alone window w(ε = {}), Δ = 0", sc.prediction_epsilon),
    ];
    cols.extend(
        plans
            .iter()
            .map(|x| format!("e^(−m·{}) (mass beyond L_tr)", x.train_length)),
    );
    let colrefs: Vec<&str> = cols.iter().map(String::as_str).collect();
    let mut t = Table::new(
        "Theory: what ALiBi's bias alone (content-free, Δ = 0) does — the smallest window w with e^(−m·w) ≤ ε, and the mass e^(−m·L_tr) it leaves at distances ≥ L_tr (kernel enclosures; positional/alibi-window's formula)",
        &colrefs,
    );
    for (h, q) in qs.iter().enumerate() {
        let mut row = vec![
            (h + 1).to_string(),
            slope_expr(q).to_string(),
            bias_alone_window(q, &eps, prec)
                .map(|w| w.to_string())
                .unwrap_or_else(|| "undecided".into()),
        ];
        row.extend(
            plans
                .iter()
                .map(|x| tail_at(q, x.train_length, prec).fmt_outward(4)),
        );
        t.row(row);
    }
    o.tables.push(t);

    let mut t = Table::new(
        format!(
            "ALiBi's receptive field against L_tr: does RF99 stay below L_tr at every L_ex ≥ {}·L_tr (in ≥ {} of resamples)?",
            sc.alibi_rf_from, cr.bootstrap_share
        ),
        &[
            "L_tr",
            "heads whose bias alone windows within L_tr (ε as above)",
            "flattest head e^(−L_tr/256)",
            "seeds where RF99 < L_tr throughout",
            "gradient mass beyond L_tr at the trend L_ex (seed mean)",
        ],
    );
    for (i, at) in ats.iter().enumerate() {
        let l = at.l();
        let ks = at.from(sc.alibi_rf_from);
        let rows = at.of(alibi);
        let yes: Vec<String> = rows
            .iter()
            .filter(|(_, r)| {
                ks.iter()
                    .all(|&k| share(&r.rf_boot[k], |x| x < l) >= cr.bootstrap_share)
            })
            .map(|(j, _)| j.seed.to_string())
            .collect();
        let windowed = qs
            .iter()
            .filter(|q| bias_alone_window(q, &eps, prec).is_some_and(|w| w as usize <= l))
            .count();
        t.row(vec![
            l.to_string(),
            format!("{windowed} of {}", qs.len()),
            tail_at(&Rational::from(8), l, prec).fmt_outward(4),
            format!(
                "{} of {}{}",
                yes.len(),
                rows.len(),
                if yes.is_empty() {
                    String::new()
                } else {
                    format!(" (seeds {})", yes.join(", "))
                }
            ),
            sig(beyond[i].1),
        ]);
    }
    o.tables.push(t);

    let mut t = Table::new(
        format!(
            "Validation loss (nats/byte; {} scored bytes, in windows of L_tr + 1 bytes) at {}% of the steps and at the end, and its fall over the last {}% — the former convergence criterion (fall ≤ 2%), now a figure and not a gate (the criterion is the stability of the conclusion, above)",
            s.validation_bytes,
            round_sig(100.0 * (1.0 - s.loss_fall_tail), 6),
            round_sig(100.0 * s.loss_fall_tail, 6)
        ),
        &[
            "L_tr",
            "model",
            "seed",
            "final train loss",
            "val loss, tail start",
            "val loss, end",
            "fall",
        ],
    );
    for at in &ats {
        for (j, r) in &at.results {
            let (a, b, d) = loss_fall(r, at.plan.steps, s.loss_fall_tail).unwrap_or((
                f64::NAN,
                f64::NAN,
                f64::NAN,
            ));
            t.row(vec![
                at.l().to_string(),
                j.scheme.label(),
                j.seed.to_string(),
                r.loss_curve.last().map(|&x| sig(x)).unwrap_or_default(),
                sig(a),
                sig(b),
                format!("{}%", sig(100.0 * d)),
            ]);
        }
    }
    o.tables.push(t);
}

/// The former convergence reading of one job, now a figure: (validation loss at the
/// start of the last `tail` of the steps, at the end, relative fall), or `None` without a
/// curve.
fn loss_fall(r: &JobResult, steps: usize, tail: f64) -> Option<(f64, f64, f64)> {
    let end = r.val_curve.last()?.1;
    let cut = ((1.0 - tail) * steps as f64).floor() as usize;
    let start = r
        .val_curve
        .iter()
        .rev()
        .find(|(s, _)| *s <= cut)
        .or(r.val_curve.first())?
        .1;
    Some((start, end, (start - end) / end))
}

/// The bias-alone window of slope 2^{−q} (Δ = 0): the smallest w with e^{−m·w} ≤ ε,
/// ⌈(1/m)·ln(1/ε)⌉ (alibi-window's formula at Δ = 0), from a kernel enclosure of y;
/// `None` when the enclosure straddles an integer.
pub(super) fn bias_alone_window(q: &Rational, eps: &Rational, prec: u32) -> Option<u64> {
    let y = expr::eval_built(&y_term(slope_expr(q), eps), prec, &Default::default()).ok()?;
    let (lo, hi) = (y.lo_f64().ceil(), y.hi_f64().ceil());
    (lo == hi && lo >= 1.0).then_some(lo as u64)
}

/// alibi-window's y term with the slope as a term (`2^-8`) and Δ = 0.
fn y_term(m: Term, eps: &Rational) -> Term {
    let e = || build::q(eps);
    build::div(
        build::ln(build::div(
            build::add([
                build::mul([build::exp(build::int(0)), build::sub(build::int(1), e())]),
                e(),
            ]),
            e(),
        )),
        m,
    )
}

/// e^{−m·l} for the slope 2^{−q}, enclosed.
fn tail_at(q: &Rational, l: usize, prec: u32) -> Interval {
    let t = build::exp(build::neg(build::mul([slope_expr(q), l.into()])));
    expr::eval_built(&t, prec, &Default::default()).expect("a closed term")
}

/// The paper's findings (one per part of each L_tr), as the paper states them and at the
/// scale it measured them, beside the scan's outcome at each L_tr at the end of training;
/// a finding that fails at every L_tr and at every checkpoint is said to be contradicted,
/// in plain words (with ALiBi's receptive field in numbers).
pub(super) fn findings(v: &View, o: &mut Presentation) {
    let View { p, results, .. } = *v;
    let plans = p.plans();
    let ats = ats(&plans, results);
    const PAPER: [(&str, &str); 5] = [
        (
            "ALiBi extrapolates",
            "ALiBi's perplexity does not blow up beyond L_tr (Press et al.; Chi et al. at L_tr = 512, 12 layers, hidden 768)",
        ),
        (
            "ALiBi uses no tokens beyond L_tr",
            "a trained ALiBi model's receptive field stays within L_tr: it uses no tokens beyond the training length (Chi et al., L_tr = 512)",
        ),
        (
            "windowed attention extrapolates iff layers·(w − 1) ≤ L_tr",
            "windowed attention extrapolates exactly when its multi-layer reach is covered by L_tr (Chi et al., L_tr = 512)",
        ),
        (
            "Sandwich uses tokens beyond L_tr and extrapolates",
            "Sandwich uses information beyond L_tr and still extrapolates (Chi et al., L_tr = 512)",
        ),
        (
            "efficient windowed inference",
            "ALiBi truncated to the last L_tr tokens, and Sandwich to 2·L_tr, lose no perplexity (Chi et al., L_tr = 512)",
        ),
    ];
    let cps = v.checkpoints();
    let fin = part_outcomes(v, results);
    let at_cps: Vec<Option<Vec<(String, bool)>>> = (0..cps.len())
        .map(|c| as_of(results, c).map(|r| part_outcomes(v, &r)))
        .collect();
    let outcome = |x: &[(String, bool)], name: &str| x.iter().find(|(n, _)| n == name).map(|x| x.1);
    let at_checkpoints = cps
        .iter()
        .map(|c| format!("{c}%"))
        .collect::<Vec<_>>()
        .join(" and ");
    let mut cols: Vec<String> = vec![
        "finding".into(),
        "the paper (and where it measured it)".into(),
    ];
    cols.extend(ats.iter().map(|at| format!("L_tr = {} (100%)", at.l())));
    if !cps.is_empty() {
        cols.push(format!("the same at {at_checkpoints} of training"));
    }
    let colrefs: Vec<&str> = cols.iter().map(String::as_str).collect();
    let mut t = Table::new(
        format!(
            "The paper's findings and this {}'s ({} layers, hidden {}, byte-level): the outcome of each part at each L_tr, by the criteria fixed before the {}",
            v.noun(), p.layers, p.hidden, v.noun()
        ),
        &colrefs,
    );
    for (finding, paper) in PAPER {
        let names: Vec<String> = ats.iter().map(|at| v.part(finding, at.l())).collect();
        let finals: Vec<Option<bool>> = names.iter().map(|n| outcome(&fin, n)).collect();
        let same = at_cps.iter().all(|x| {
            x.as_ref()
                .is_some_and(|x| names.iter().zip(&finals).all(|(n, f)| outcome(x, n) == *f))
        });
        let mut row = vec![finding.to_string(), paper.to_string()];
        row.extend(finals.iter().map(|f| match f {
            Some(true) => "reproduced".to_string(),
            Some(false) => "not reproduced".to_string(),
            None => "—".to_string(),
        }));
        if !cps.is_empty() {
            row.push(if same { "yes" } else { "no: it moved" }.into());
        }
        t.row(row);
        let contradicted = finals.iter().all(|f| *f == Some(false))
            && at_cps.iter().all(|x| {
                x.as_ref()
                    .is_some_and(|x| names.iter().all(|n| outcome(x, n) == Some(false)))
            });
        if !contradicted {
            continue;
        }
        let lengths = ats
            .iter()
            .map(|at| at.l().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let lengths = if v.several_lengths() {
            format!("every L_tr ({lengths})")
        } else {
            format!("L_tr = {lengths}")
        };
        let everywhere = if cps.is_empty() {
            format!(
                "{lengths}, at the end of training (the {} has no checkpoints)",
                v.noun()
            )
        } else {
            format!("{lengths} and every checkpoint")
        };
        if finding == "ALiBi uses no tokens beyond L_tr" {
            let rf: Vec<String> = ats
                .iter()
                .map(|at| {
                    let k = at.plan.eval_multiples.len() - 1;
                    let x: Vec<f64> = at.of(alibi).iter().map(|(_, r)| r.rf[k] as f64).collect();
                    format!(
                        "{:.0} at L_tr = {} (L_ex = {})",
                        mean(&x),
                        at.l(),
                        at.plan.eval_multiples[k] * at.l()
                    )
                })
                .collect();
            o.note(format!(
                "Contradicted at {everywhere}: ALiBi's receptive field is not bounded by L_tr at this scale. Its RF99 at the largest L_ex is {} ({}, end of training), so the paper's 'no tokens beyond L_tr' (measured at L_tr = 512 with 12 layers) is not reproduced by these models.",
                rf.join(", "),
                if v.several_seeds() {
                    "mean over seeds".to_string()
                } else {
                    format!("seed {}", p.seeds[0])
                }
            ));
        } else {
            o.note(format!(
                "Contradicted at {everywhere}: {paper} — not reproduced at this scale ('{finding}' fails by its criterion at each L_tr, at the end of training{}).",
                if cps.is_empty() {
                    String::new()
                } else {
                    format!(" and at {at_checkpoints} of it")
                }
            ));
        }
    }
    o.tables.push(t);
}
