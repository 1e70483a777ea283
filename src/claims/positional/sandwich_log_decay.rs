//! positional/sandwich-log-decay: B̃(r) decreases roughly like −(d̄/(2 ln 10⁴))·ln r
//! for 1 ≪ r ≪ 10⁴ ("the same logarithmic decaying temporal bias pattern" as
//! KERPLE-log), but not monotonically.
//!
//! Exact sub-claims, obligations of the statement (B̃ written once, as
//! `common::sandwich_centred_expr`): every step B̃(r) vs B̃(r − 1) for r = 1..N
//! (the increasing steps, found by an interval search, are a hint), so the first
//! increase and the number of increases are exact integers; the smallest step
//! (its place a hint), the gap of the first increase, −d̄ ≤ B̃ ≤ 0 and the predicted
//! slope a_pred = −d̄/(2 ln 10⁴) against the printed references.
//! The logarithmic trend is a heuristic: least-squares fits in f64 are
//! observations, and the claim is `supported` at most.

use super::common::{
    check_dbar, line_fit, log_plot_points, sandwich_centred_expr, sandwich_centred_f64,
    sandwich_centred_many, sandwich_freqs, sandwich_freqs_f64, IndexFrom, LineFit, Printed,
};
use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::StatementError;
use crate::kernel::expr::build::{
    abs, add, and, div, eq, forall, ge, gt, int, le, ln, mul, neg, q, sub, var, Formula, Term,
};
use crate::kernel::{parse_rational, Certainty, Checked, Interval, Statement};
use crate::outcome::{Observations, Plot, Presentation, Series, Style, Table};
use crate::spec::{check_each, ensure, FieldError};
use serde::{Deserialize, Serialize};

/// The non-monotonicity reference for one (d̄, convention).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Increases {
    /// d̄.
    pub dbar: u32,
    /// Index convention.
    pub from: IndexFrom,
    /// The first r with B̃(r) > B̃(r − 1).
    pub first: i64,
    /// The number of r in 1..=steps_to with B̃(r) > B̃(r − 1), if stated.
    #[serde(default)]
    pub count: Option<u64>,
    /// The smallest |B̃(r) − B̃(r − 1)| over those steps, as printed, if stated.
    #[serde(default)]
    pub min_step: Option<String>,
}

/// The gap of one increase, as printed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gap {
    /// d̄.
    pub dbar: u32,
    /// Index convention.
    pub from: IndexFrom,
    /// The step r − 1 → r.
    pub r: i64,
    /// B̃(r) − B̃(r − 1), as printed.
    pub value: String,
}

/// One row of the printed fit table: a_pred and (a, c, R²) per fit range.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitReference {
    /// d̄.
    pub dbar: u32,
    /// a_pred = −d̄/(2 ln 10⁴), as printed.
    pub a_pred: String,
    /// [a, c, R²] as printed, one triple per entry of `fit_ranges`.
    pub fits: Vec<[String; 3]>,
}

/// The KERPLE-log fit −r1·ln(1 + r2·r) (no intercept).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kerple {
    /// d̄ (I from 0).
    pub dbar: u32,
    /// Fit over r ∈ [range\[0\], range\[1\]].
    pub range: [i64; 2],
    /// Asserted: R² ≥ r2_min.
    pub r2_min: f64,
    /// The printed optimum (r1, r2): reported next to ours, never asserted (the optimum is flat).
    pub optimum: [String; 2],
    /// The printed R² at the optimum.
    pub r2: String,
    /// The printed R² of the same (r1, r2) over {1..range\[1\]}.
    pub r2_from_one: String,
    /// A nearby point (r1, r2) and its printed R² (the optimum is flat).
    pub nearby: [String; 2],
    /// The printed R² at the nearby point.
    pub nearby_r2: String,
}

/// Parameters of positional/sandwich-log-decay as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// Steps r − 1 → r are decided for r = 1..=steps_to.
    pub steps_to: i64,
    /// The non-monotonicity references.
    pub increases: Vec<Increases>,
    /// The gap of the first increase.
    pub gap: Gap,
    /// d̄ values of the ln r fits (I from 0).
    pub fit_dbars: Vec<u32>,
    /// Fit ranges [lo, hi] (integers r, lo ≥ 1).
    pub fit_ranges: Vec<[i64; 2]>,
    /// Asserted: |a − a_pred|/|a_pred| ≤ slope_rel_tol on every fit.
    pub slope_rel_tol: f64,
    /// Asserted: R² ≥ r2_min for (r2_dbar, r2_range).
    pub r2_min: f64,
    /// d̄ of the R² assertion.
    pub r2_dbar: u32,
    /// Range of the R² assertion (must be one of `fit_ranges`).
    pub r2_range: [i64; 2],
    /// The printed fit table.
    pub fit_reference: Vec<FitReference>,
    /// The KERPLE-log fit.
    pub kerple: Kerple,
    /// Largest |f64 − enclosure midpoint| of B̃ accepted as agreement of the two precisions.
    pub f64_agreement: f64,
}

/// Parameters of positional/sandwich-log-decay, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The parameters as written (names and tables quote them).
    pub raw: Raw,
    /// Per `increases` entry: the printed smallest step, when given.
    min_step: Vec<Option<Printed>>,
    /// The printed gap.
    gap_value: Printed,
    /// Per fit reference: a_pred and, per fit range, the printed (a, c, R²).
    fit_printed: Vec<(Printed, Vec<[Printed; 3]>)>,
    /// KERPLE's printed R² (the whole range, from 1, at the nearby point).
    kerple_r2: [Printed; 3],
    /// KERPLE's nearby point.
    kerple_nearby: [f64; 2],
}

/// positional/sandwich-log-decay.
pub struct Claim;

/// Bound on a run's work, horizon·(Σ d̄/2 over the (d̄, convention) pairs enclosed + |increases| +
/// |fit_dbars|·|fit_ranges|), the horizon being the largest r any part uses, weighed at the spec's
/// precision ([`crate::claims::shape::Resolving::weigh`]): 2^24. Every B̃(r) up to the horizon is
/// enclosed at the run's precision before the statement's budget is known. The committed spec is
/// 2048·(288 + 4 + 6) ≈ 2^19.2 (1.7 CPU-s); a horizon of 100000 (2^24.8) took 83 CPU-s to end
/// inconclusive over the certificate's budget, and the fields' own limits (10^6) allowed ten times
/// that for each d̄ listed.
pub const MAX_WORK: u128 = 1 << 24;

/// At most this many entries in `increases`, `fit_dbars`, `fit_ranges` and `fit_reference`
/// (the committed spec has 4, 3, 2 and 3): each is obligations of the statement, and the
/// checks of `fit_reference` against `fit_dbars` are quadratic.
pub const MAX_LIST: usize = 64;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(raw: Raw, at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        // first: the lists' lengths enter the work, and the checks below are linear in them
        raw.check_work(at)?;
        ensure(
            (1..=1_000_000).contains(&raw.steps_to),
            "steps_to",
            "must be between 1 and 10^6",
        )?;
        ensure(!raw.increases.is_empty(), "increases", "must not be empty")?;
        let mut min_step = Vec::with_capacity(raw.increases.len());
        for (i, inc) in raw.increases.iter().enumerate() {
            check_dbar(&format!("increases[{i}].dbar"), inc.dbar)?;
            ensure(
                (1..=raw.steps_to).contains(&inc.first),
                format!("increases[{i}].first"),
                format!("must lie in 1..={}", raw.steps_to),
            )?;
            min_step.push(match &inc.min_step {
                Some(s) => Some(printed(&format!("increases[{i}].min_step"), s)?),
                None => None,
            });
        }
        check_dbar("gap.dbar", raw.gap.dbar)?;
        ensure(
            (1..=1_000_000).contains(&raw.gap.r),
            "gap.r",
            "must be between 1 and 10^6",
        )?;
        let gap_value = printed("gap.value", &raw.gap.value)?;
        check_each(&raw.fit_dbars, "fit_dbars", |f, &x| check_dbar(f, x))?;
        check_each(&raw.fit_ranges, "fit_ranges", |f, r| {
            ensure(
                1 <= r[0] && r[0] < r[1] && r[1] <= 1_000_000,
                f,
                "need 1 ≤ lo < hi ≤ 10^6",
            )
        })?;
        ensure(
            raw.slope_rel_tol > 0.0 && raw.slope_rel_tol < 1.0,
            "slope_rel_tol",
            "must be in (0, 1)",
        )?;
        ensure(
            (0.0..=1.0).contains(&raw.r2_min),
            "r2_min",
            "must be in [0, 1]",
        )?;
        ensure(
            raw.fit_dbars.contains(&raw.r2_dbar),
            "r2_dbar",
            "must be one of fit_dbars",
        )?;
        ensure(
            raw.fit_ranges.contains(&raw.r2_range),
            "r2_range",
            "must be one of fit_ranges",
        )?;
        let mut fit_printed = Vec::with_capacity(raw.fit_reference.len());
        for (i, f) in raw.fit_reference.iter().enumerate() {
            ensure(
                raw.fit_dbars.contains(&f.dbar),
                format!("fit_reference[{i}].dbar"),
                "must be one of fit_dbars",
            )?;
            let a_pred = printed(&format!("fit_reference[{i}].a_pred"), &f.a_pred)?;
            ensure(
                f.fits.len() == raw.fit_ranges.len(),
                format!("fit_reference[{i}].fits"),
                format!(
                    "has {} triples for {} fit ranges",
                    f.fits.len(),
                    raw.fit_ranges.len()
                ),
            )?;
            let mut fits = Vec::with_capacity(f.fits.len());
            for (j, t) in f.fits.iter().enumerate() {
                let one = |k: usize| printed(&format!("fit_reference[{i}].fits[{j}][{k}]"), &t[k]);
                fits.push([one(0)?, one(1)?, one(2)?]);
            }
            fit_printed.push((a_pred, fits));
        }
        let k = &raw.kerple;
        check_dbar("kerple.dbar", k.dbar)?;
        ensure(
            0 <= k.range[0] && k.range[0] < k.range[1] && k.range[1] <= 1_000_000,
            "kerple.range",
            "need 0 ≤ lo < hi ≤ 10^6",
        )?;
        ensure(
            (0.0..=1.0).contains(&k.r2_min),
            "kerple.r2_min",
            "must be in [0, 1]",
        )?;
        let r2 = printed("kerple.r2", &k.r2)?;
        for (j, s) in k.optimum.iter().enumerate() {
            printed(&format!("kerple.optimum[{j}]"), s)?;
        }
        let r2_from_one = printed("kerple.r2_from_one", &k.r2_from_one)?;
        let nearby_r2 = printed("kerple.nearby_r2", &k.nearby_r2)?;
        let mut kerple_nearby = [0.0; 2];
        for ((j, s), x) in k.nearby.iter().enumerate().zip(&mut kerple_nearby) {
            let q = parse_rational(s)
                .map_err(|e| FieldError::new(format!("kerple.nearby[{j}]"), e.to_string()))?;
            ensure(q > 0, format!("kerple.nearby[{j}]"), "must be positive")?;
            *x = q.to_f64();
        }
        ensure(
            raw.f64_agreement > 0.0 && raw.f64_agreement.is_finite(),
            "f64_agreement",
            "must be positive",
        )?;
        Ok(Params {
            raw,
            min_step,
            gap_value,
            fit_printed,
            kerple_r2: [r2, r2_from_one, nearby_r2],
            kerple_nearby,
        })
    }
    fn statement(
        p: &Params,
        claim: &str,
        hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        Some(p.build_statement(claim, hints))
    }
    type Witness = Found;
    /// The enclosures of B̃, every step decided (a search: the statement decides the
    /// counts it finds), f64 B̃ against them, and the fits (f64).
    fn witness(p: &Params, ctx: &Ctx) -> Found {
        let prec = ctx.prec();
        let n = p.horizon();
        let uniq = p.keys();
        let mut encl: Vec<((u32, IndexFrom), Vec<Interval>)> = Vec::new();
        for &(d, f) in &uniq {
            ctx.progress.message(format!(
                "{}: B̃(r), r ≤ {n}, d̄ = {d}, {}",
                ctx.spec.id,
                f.label()
            ));
            encl.push(((d, f), enclosures(d, f, n, prec)));
        }
        let get = |d: u32, f: IndexFrom| -> &Vec<Interval> {
            &encl.iter().find(|(k, _)| *k == (d, f)).expect("computed").1
        };
        let steps: Vec<(Steps, Interval)> = p
            .raw
            .increases
            .iter()
            .map(|inc| {
                let b = &get(inc.dbar, inc.from)[..=p.raw.steps_to as usize];
                (decide_steps(b, inc.dbar, inc.from), min_step_enclosure(b))
            })
            .collect();
        // ----- two precisions: f64 B̃ against the enclosures -----
        let mut max_dev = 0f64;
        for (key, b) in &encl {
            let f64s = sandwich_freqs_f64(key.0, key.1);
            for (r, x) in b.iter().enumerate() {
                let v = sandwich_centred_f64(r as f64, &f64s);
                max_dev = max_dev.max((v - x.mid_f64()).abs());
            }
        }
        // ----- fits (on the enclosure midpoints) -----
        let fits: Vec<DbarFits> = p
            .raw
            .fit_dbars
            .iter()
            .map(|&d| {
                let b: Vec<f64> = get(d, IndexFrom::Zero)
                    .iter()
                    .map(Interval::mid_f64)
                    .collect();
                let ap =
                    crate::kernel::expr::eval_built(&a_pred_term(d), prec, &Default::default())
                        .expect("a closed term")
                        .mid_f64();
                let fits = p
                    .raw
                    .fit_ranges
                    .iter()
                    .map(|range| fit_on(&b, range[0], range[1]))
                    .collect();
                DbarFits { b, ap, fits }
            })
            .collect();
        // ----- KERPLE-log fit -----
        let k = &p.raw.kerple;
        let b: Vec<f64> = get(k.dbar, IndexFrom::Zero)
            .iter()
            .map(Interval::mid_f64)
            .collect();
        let rs: Vec<f64> = (k.range[0]..=k.range[1]).map(|r| r as f64).collect();
        let ys: Vec<f64> = (k.range[0]..=k.range[1]).map(|r| b[r as usize]).collect();
        let (r1, r2, r2sq) = kerple_fit(&rs, &ys);
        let from_one: Vec<usize> = (0..rs.len()).filter(|&i| rs[i] >= 1.0).collect();
        let rs1: Vec<f64> = from_one.iter().map(|&i| rs[i]).collect();
        let ys1: Vec<f64> = from_one.iter().map(|&i| ys[i]).collect();
        let r2_one = kerple_r2(&rs1, &ys1, r1, r2);
        let nb = p.kerple_nearby;
        let r2_near = kerple_r2(&rs, &ys, nb[0], nb[1]);
        Found {
            encl,
            steps,
            max_dev,
            fits,
            kerple: [r1, r2, r2sq, r2_one, r2_near],
        }
    }
    /// The hints: the increases found and the r of the smallest step.
    fn hints(p: &Params, w: &Found) -> Hints {
        let mut hints = Hints::new();
        for (inc, (steps, _)) in p.raw.increases.iter().zip(&w.steps) {
            if inc.count.is_some() {
                let list: Vec<String> = steps
                    .up
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c == Certainty::True)
                    .map(|(k, _)| (k + 1).to_string())
                    .collect();
                hints.insert(increases_key(inc.dbar, inc.from), list.join(","));
            }
            if inc.min_step.is_some() {
                hints.insert(
                    min_step_key(inc.dbar, inc.from),
                    steps.min_step.1.to_string(),
                );
            }
        }
        hints
    }
    /// Two precisions, the fits against the §3 fit table and a_pred, and the
    /// KERPLE-log fit (observations).
    fn observe(p: &Params, w: &Found, _: Option<&Checked>, _: &Ctx, o: &mut Observations) {
        let n = p.horizon();
        let max_dev = w.max_dev;
        o.observe(
            format!(
                "two precisions: f64 B̃(r) within {:e} of the 128-bit enclosures (r ≤ {n})",
                p.raw.f64_agreement
            ),
            max_dev <= p.raw.f64_agreement,
            format!("max |f64 − midpoint| = {max_dev:.3e}"),
        );
        let mut all_slopes_ok = true;
        let mut slope_detail = Vec::new();
        for (&d, df) in p.raw.fit_dbars.iter().zip(&w.fits) {
            let ap = df.ap;
            let reference = p
                .raw
                .fit_reference
                .iter()
                .zip(&p.fit_printed)
                .find(|(f, _)| f.dbar == d);
            let mut printed_ok = true;
            let mut printed_detail = Vec::new();
            for (j, (range, fit)) in p.raw.fit_ranges.iter().zip(&df.fits).enumerate() {
                let rel = (fit.slope - ap).abs() / ap.abs();
                all_slopes_ok &= rel <= p.raw.slope_rel_tol;
                slope_detail.push(format!(
                    "d̄ = {d} [{}, {}]: {:.2}%",
                    range[0],
                    range[1],
                    100.0 * rel
                ));
                let refs = reference.map(|(_, (_, fits))| &fits[j]);
                if let Some(t) = refs {
                    for (k, (x, name)) in [(fit.slope, "a"), (fit.intercept, "c"), (fit.r2, "R²")]
                        .into_iter()
                        .enumerate()
                    {
                        if !within_printed(x, &t[k]) {
                            printed_ok = false;
                            printed_detail.push(format!(
                                "[{}, {}] {name} = {x:.6} vs {}",
                                range[0], range[1], t[k]
                            ));
                        }
                    }
                }
                if d == p.raw.r2_dbar && *range == p.raw.r2_range {
                    o.observe(
                        format!(
                            "d̄ = {d}: R² ≥ {} for a·ln r + c on [{}, {}]",
                            p.raw.r2_min, range[0], range[1]
                        ),
                        fit.r2 >= p.raw.r2_min,
                        format!("R² = {:.4}", fit.r2),
                    );
                }
            }
            if reference.is_some() {
                o.observe(
                    format!(
                        "d̄ = {d}: fits reproduce the §3 fit table (a, c, R²) to its printed digits"
                    ),
                    printed_ok,
                    if printed_ok {
                        "every value within half a unit of its last printed digit".into()
                    } else {
                        printed_detail.join("; ")
                    },
                );
            }
        }
        o.observe(
            format!(
                "|a − a_pred|/|a_pred| ≤ {} for every d̄ and fit range",
                p.raw.slope_rel_tol
            ),
            all_slopes_ok,
            slope_detail.join(", "),
        );
        let k = &p.raw.kerple;
        let [r1, r2, r2sq, r2_one, r2_near] = w.kerple;
        o.observe(
            format!(
                "d̄ = {}: KERPLE-log fit −r1·ln(1 + r2·r) on [{}, {}] has R² ≥ {}",
                k.dbar, k.range[0], k.range[1], k.r2_min
            ),
            r2sq >= k.r2_min,
            format!("R² = {r2sq:.4} at r1 = {r1:.3}, r2 = {r2:.3}"),
        );
        let [k_r2, k_r2_one, k_r2_near] = &p.kerple_r2;
        let kerple_ok = within_printed(r2sq, k_r2)
            && within_printed(r2_one, k_r2_one)
            && within_printed(r2_near, k_r2_near);
        o.observe(
            "KERPLE-log R² values reproduce §3 to their printed digits".to_string(),
            kerple_ok,
            format!(
                "optimum {r2sq:.5} (§3 {}), same (r1, r2) on [1, {}] {r2_one:.5} (§3 {}), at ({}, {}) {r2_near:.5} (§3 {})",
                k.r2, k.range[1], k.r2_from_one, k.nearby[0], k.nearby[1], k.nearby_r2
            ),
        );
    }
    /// The steps table and its figures, the fit tables, the plot and the notes.
    fn present(p: &Params, w: &Found, _: Option<&Checked>, _: &Ctx, o: &mut Presentation) {
        let fit_max = p.raw.fit_ranges.iter().map(|r| r[1]).max().unwrap_or(1);
        let mut steps_table = Table::new(
            format!(
                "Non-monotonicity: steps r − 1 → r with B̃(r) > B̃(r − 1), r = 1..{} (certified)",
                p.raw.steps_to
            ),
            &[
                "d̄",
                "convention",
                "first increase (§3)",
                "first increase (ours)",
                "increases (§3)",
                "increases (ours)",
                "smallest |step| (§3)",
                "smallest |step| (ours)",
                "steps retried at 2× precision",
            ],
        );
        let mut headline: Option<(u64, String)> = None;
        for (inc, (steps, min_enc)) in p.raw.increases.iter().zip(&w.steps) {
            let label = format!("d̄ = {}, {}", inc.dbar, inc.from.label());
            let first = steps.first_increase();
            let count = steps.count();
            if inc.count.is_some() && inc.dbar == p.raw.gap.dbar && inc.from == p.raw.gap.from {
                headline = Some((count.unwrap_or(0), label.clone()));
            }
            steps_table.row(vec![
                inc.dbar.to_string(),
                inc.from.label().into(),
                format!("{} → {}", inc.first - 1, inc.first),
                first
                    .map(|r| format!("{} → {r}", r - 1))
                    .unwrap_or_else(|| "none".into()),
                inc.count
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "—".into()),
                count
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "undecided".into()),
                inc.min_step.clone().unwrap_or_else(|| "—".into()),
                format!("{} (r = {})", min_enc.fmt_outward(4), steps.min_step.1),
                steps.retried.to_string(),
            ]);
        }
        if let Some((c, label)) = headline {
            o.figures.insert(
                0,
                crate::outcome::Figure {
                    name: format!("increases of B̃ over r = 1..{} ({label})", p.raw.steps_to),
                    value: c as f64,
                    text: c.to_string(),
                },
            );
        }
        {
            let g = &p.raw.gap;
            let b = w.get(g.dbar, g.from);
            let d = &b[g.r as usize] - &b[g.r as usize - 1];
            o.figure(
                format!("gap B̃({}) − B̃({}) (d̄ = {})", g.r, g.r - 1, g.dbar),
                d.mid_f64(),
                d.fmt_outward(10),
            );
        }
        o.tables.push(steps_table);
        let mut fit_table = Table::new(
            "Fits of B̃(r) ≈ a·ln r + c, I from 0 (f64 least squares on the enclosure midpoints; §3 values in parentheses)",
            &["d̄", "a_pred", "range", "a", "c", "R²", "|a − a_pred|/|a_pred|"],
        );
        let mut plot_series: Vec<Series> = Vec::new();
        for (&d, df) in p.raw.fit_dbars.iter().zip(&w.fits) {
            let (b, ap) = (&df.b, df.ap);
            let reference = p
                .raw
                .fit_reference
                .iter()
                .zip(&p.fit_printed)
                .find(|(f, _)| f.dbar == d);
            for (j, (range, fit)) in p.raw.fit_ranges.iter().zip(&df.fits).enumerate() {
                let rel = (fit.slope - ap).abs() / ap.abs();
                let refs = reference.map(|(_, (_, fits))| &fits[j]);
                let cellf = |x: f64, digits: usize, k: usize| match refs {
                    Some(t) => format!("{x:.digits$} ({})", t[k]),
                    None => format!("{x:.digits$}"),
                };
                fit_table.row(vec![
                    d.to_string(),
                    format!("{ap:.4}"),
                    format!("[{}, {}]", range[0], range[1]),
                    cellf(fit.slope, 4, 0),
                    cellf(fit.intercept, 3, 1),
                    cellf(fit.r2, 4, 2),
                    format!("{:.2}%", 100.0 * rel),
                ]);
                if d == p.raw.r2_dbar && *range == p.raw.r2_range {
                    o.figure(
                        format!("fitted slope a on [{}, {}] (d̄ = {d})", range[0], range[1]),
                        fit.slope,
                        format!("{:.4} (a_pred = {ap:.4})", fit.slope),
                    );
                }
                if j == 0 {
                    let pts = log_plot_points(range[0].max(1), fit_max);
                    plot_series.push(Series {
                        name: format!("B̃, d̄ = {d}"),
                        style: Style::Line,
                        points: pts.iter().map(|&r| (r as f64, b[r as usize])).collect(),
                    });
                    plot_series.push(Series {
                        name: format!(
                            "{:.3}·ln r {:+.3} (fit on [{}, {}])",
                            fit.slope, fit.intercept, range[0], range[1]
                        ),
                        style: Style::Dashed,
                        points: [range[0].max(1), fit_max]
                            .iter()
                            .map(|&r| (r as f64, fit.slope * (r as f64).ln() + fit.intercept))
                            .collect(),
                    });
                }
            }
        }
        o.tables.push(fit_table);
        let k = &p.raw.kerple;
        let [r1, r2, r2sq, r2_one, r2_near] = w.kerple;
        o.figure(
            format!(
                "KERPLE-log fit R² on [{}, {}] (d̄ = {})",
                k.range[0], k.range[1], k.dbar
            ),
            (r2sq * 1e6).round() / 1e6,
            format!("{r2sq:.4} (r1 = {r1:.3}, r2 = {r2:.3}; not asserted: the optimum is flat)"),
        );
        let mut kt = Table::new(
            format!(
                "KERPLE-log fit B̃(r) ≈ −r1·ln(1 + r2·r), d̄ = {}, I from 0 (f64 least squares)",
                k.dbar
            ),
            &["point", "r1", "r2", "R² (ours)", "R² (§3)"],
        );
        kt.row(vec![
            format!("optimum on [{}, {}]", k.range[0], k.range[1]),
            format!("{r1:.4} (§3 {})", k.optimum[0]),
            format!("{r2:.4} (§3 {})", k.optimum[1]),
            format!("{r2sq:.4}"),
            k.r2.clone(),
        ]);
        kt.row(vec![
            format!("same (r1, r2) on [1, {}]", k.range[1]),
            format!("{r1:.3}"),
            format!("{r2:.3}"),
            format!("{r2_one:.4}"),
            k.r2_from_one.clone(),
        ]);
        kt.row(vec![
            "nearby point".into(),
            k.nearby[0].clone(),
            k.nearby[1].clone(),
            format!("{r2_near:.4}"),
            k.nearby_r2.clone(),
        ]);
        o.tables.push(kt);
        let pts = log_plot_points(1, fit_max);
        plot_series.push(Series {
            name: format!("−{r1:.2}·ln(1 + {r2:.2} r) (KERPLE-log, d̄ = {})", k.dbar),
            style: Style::Dashed,
            points: pts
                .iter()
                .map(|&r| (r as f64, -r1 * (r2 * r as f64).ln_1p()))
                .collect(),
        });
        o.plots.push(Plot {
            slug: "log-fit".into(),
            title: "Sandwich B̃(r) against ln r with least-squares fits (I from 0)".into(),
            x_label: "r (log scale)".into(),
            y_label: "B̃(r)".into(),
            x_log: true,
            y_log: false,
            series: plot_series,
            heatmap: None,
            paths: false,
        });
        o.note(
            "Rigour: the logarithmic trend is a heuristic over 1 ≪ r ≪ 10⁴ (f64 least-squares fits are observations), so \
             this claim is `supported` at most. Its exact sub-claims appear above as certified checks: every step \
             B̃(r) vs B̃(r − 1) is decided with 128-bit enclosures (undecided steps are retried at 256 bits), so the first \
             increase and the increase counts are exact integers, and the gap, the smallest step, the bounds −d̄ ≤ B̃ ≤ 0 \
             and a_pred are enclosures compared with the printed references.",
        );
        o.note(
            "The fitted KERPLE-log parameters (r1, r2) are reported, not asserted: the least-squares optimum is flat \
             (positional.md §5).",
        );
    }
}

/// Enclosures of B̃(r) for r = 0..=n (witness search and presentation; the statement decides).
/// A printed reference value of the field `field`, resolved.
fn printed(field: &str, s: &str) -> Result<Printed, FieldError> {
    Printed::parse(field, s)
}

fn enclosures(dbar: u32, from: IndexFrom, n: i64, prec: u32) -> Vec<Interval> {
    let rs: Vec<i64> = (0..=n).collect();
    sandwich_centred_many(&rs, &sandwich_freqs(dbar, from, prec))
}

/// The decided steps B̃(r) > B̃(r − 1) for r = 1..=n.
#[derive(Debug, Clone)]
pub struct Steps {
    /// Per step r (index r − 1): increase (True), not (False), undecided (Unknown).
    pub up: Vec<Certainty>,
    /// The smallest |B̃(r) − B̃(r − 1)| (enclosure) and the r where it occurs.
    pub min_step: (Interval, i64),
    /// How many steps needed twice the precision.
    pub retried: usize,
}

impl Steps {
    /// The first r with a certified increase.
    pub fn first_increase(&self) -> Option<i64> {
        self.up
            .iter()
            .position(|c| *c == Certainty::True)
            .map(|k| k as i64 + 1)
    }
    /// The number of increases, when every step is decided.
    pub fn count(&self) -> Option<u64> {
        if self.up.contains(&Certainty::Unknown) {
            None
        } else {
            Some(self.up.iter().filter(|c| **c == Certainty::True).count() as u64)
        }
    }
}

/// Decides every step of `b` (B̃(0..=n)); undecided steps are recomputed at twice the precision.
pub fn decide_steps(b: &[Interval], dbar: u32, from: IndexFrom) -> Steps {
    let prec = b[0].prec();
    let mut up: Vec<Certainty> = b.windows(2).map(|w| w[1].gt(&w[0])).collect();
    let undecided: Vec<usize> = (0..up.len())
        .filter(|&k| up[k] == Certainty::Unknown)
        .collect();
    let retried = undecided.len();
    if !undecided.is_empty() {
        let mut rs: Vec<i64> = Vec::new();
        for &k in &undecided {
            rs.push(k as i64);
            rs.push(k as i64 + 1);
        }
        let hi = sandwich_centred_many(&rs, &sandwich_freqs(dbar, from, 2 * prec));
        for (j, &k) in undecided.iter().enumerate() {
            up[k] = hi[2 * j + 1].gt(&hi[2 * j]);
        }
    }
    let mut best: Option<(Interval, i64)> = None;
    for (k, w) in b.windows(2).enumerate() {
        let d = (&w[1] - &w[0]).abs();
        let better = match &best {
            None => true,
            Some((m, _)) => d.mid_f64() < m.mid_f64(),
        };
        if better {
            best = Some((d, k as i64 + 1));
        }
    }
    Steps {
        up,
        min_step: best.unwrap_or((Interval::zero(prec), 0)),
        retried,
    }
}

/// The certified minimum of |B̃(r) − B̃(r − 1)| over the steps: min of the enclosures.
fn min_step_enclosure(b: &[Interval]) -> Interval {
    let mut it = b.windows(2).map(|w| (&w[1] - &w[0]).abs());
    let first = it.next().expect("at least one step");
    it.fold(first, |m, d| m.min(&d))
}

/// Fits B̃(r) ≈ −r1·ln(1 + r2·r) over the points by least squares: for fixed r2
/// the best r1 is closed-form, and r2 is found by a log-grid scan refined by
/// golden-section search (f64; an observation). Returns (r1, r2, R²).
pub fn kerple_fit(rs: &[f64], y: &[f64]) -> (f64, f64, f64) {
    let sse_at = |r2: f64| -> (f64, f64) {
        let (mut sfy, mut sff) = (0.0, 0.0);
        for (r, v) in rs.iter().zip(y) {
            let f = (r2 * r).ln_1p();
            sfy += f * v;
            sff += f * f;
        }
        let r1 = -sfy / sff;
        let sse: f64 = rs
            .iter()
            .zip(y)
            .map(|(r, v)| (v + r1 * (r2 * r).ln_1p()).powi(2))
            .sum();
        (sse, r1)
    };
    // scan t = ln r2 over [ln 1e-4, ln 1e4]
    let (lo, hi, n) = (-4.0 * 10f64.ln(), 4.0 * 10f64.ln(), 400);
    let t_at = |k: usize| lo + (hi - lo) * k as f64 / n as f64;
    let best = (0..=n)
        .min_by(|&a, &b| sse_at(t_at(a).exp()).0.total_cmp(&sse_at(t_at(b).exp()).0))
        .unwrap_or(0);
    let (mut a, mut b) = (t_at(best.saturating_sub(1)), t_at((best + 1).min(n)));
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..200 {
        let c = b - g * (b - a);
        let d = a + g * (b - a);
        if sse_at(c.exp()).0 < sse_at(d.exp()).0 {
            b = d;
        } else {
            a = c;
        }
    }
    let r2 = ((a + b) / 2.0).exp();
    let (sse, r1) = sse_at(r2);
    (r1, r2, r_squared(y, sse))
}

/// R² = 1 − SSE/SST (SST about the mean).
fn r_squared(y: &[f64], sse: f64) -> f64 {
    let m = y.iter().sum::<f64>() / y.len() as f64;
    let sst: f64 = y.iter().map(|v| (v - m).powi(2)).sum();
    1.0 - sse / sst
}

/// R² of the model −r1·ln(1 + r2·r) on the points.
pub fn kerple_r2(rs: &[f64], y: &[f64], r1: f64, r2: f64) -> f64 {
    let sse: f64 = rs
        .iter()
        .zip(y)
        .map(|(r, v)| (v + r1 * (r2 * r).ln_1p()).powi(2))
        .sum();
    r_squared(y, sse)
}

fn within_printed(x: f64, s: &Printed) -> bool {
    let v = s.value.to_f64();
    let h = s.half_unit.to_f64();
    (x - v).abs() <= h * (1.0 + 1e-9)
}

fn fit_on(b: &[f64], lo: i64, hi: i64) -> LineFit {
    let x: Vec<f64> = (lo..=hi).map(|r| (r as f64).ln()).collect();
    let y: Vec<f64> = (lo..=hi).map(|r| b[r as usize]).collect();
    line_fit(&x, &y).expect("at least two distinct x")
}

// ----- the statement: B̃ as `common::sandwich_centred_expr`, every formula written once -----

/// The hint key listing the increasing steps of one (d̄, convention) (found by search).
fn increases_key(dbar: u32, from: IndexFrom) -> String {
    format!("increasing steps (dbar = {dbar}, {})", from.label())
}

/// The hint key of the step where |B̃(r) − B̃(r − 1)| is smallest (found by search).
fn min_step_key(dbar: u32, from: IndexFrom) -> String {
    format!("smallest step (dbar = {dbar}, {})", from.label())
}

/// |x − v| ≤ ½ unit in the last printed digit of `v`.
fn printed_formula(x: Term, v: &Printed) -> Formula {
    le(abs(sub(x, q(&v.value))), q(&v.half_unit))
}

impl Raw {
    /// The largest r any part of the run uses.
    fn horizon(&self) -> i64 {
        let fit_max = self.fit_ranges.iter().map(|r| r[1]).max().unwrap_or(1);
        self.steps_to
            .max(fit_max)
            .max(self.gap.r)
            .max(self.kerple.range[1])
    }

    /// Every (d̄, convention) the run needs, in order, once each.
    fn keys(&self) -> Vec<(u32, IndexFrom)> {
        let mut keys: Vec<(u32, IndexFrom)> =
            self.increases.iter().map(|i| (i.dbar, i.from)).collect();
        keys.extend(self.fit_dbars.iter().map(|&d| (d, IndexFrom::Zero)));
        keys.push((self.gap.dbar, self.gap.from));
        keys.push((self.kerple.dbar, IndexFrom::Zero));
        // a set beside the list: a 128 MB spec can list millions of entries
        let mut seen = std::collections::BTreeSet::new();
        let mut uniq: Vec<(u32, IndexFrom)> = Vec::new();
        for k in keys {
            if seen.insert((k.0, k.1 == IndexFrom::One)) {
                uniq.push(k);
            }
        }
        uniq
    }

    /// The lists hold at most [`MAX_LIST`] entries, and the run's work, horizon·(Σ over
    /// [`Self::keys`] of d̄/2 + |increases| + |fit_dbars|·|fit_ranges|), is at most
    /// [`MAX_WORK`]; an error names the list, or the field that sets the horizon.
    fn check_work(&self, at: crate::claims::shape::Resolving) -> Result<(), FieldError> {
        let raw = self;
        for (field, len) in [
            ("increases", raw.increases.len()),
            ("fit_dbars", raw.fit_dbars.len()),
            ("fit_ranges", raw.fit_ranges.len()),
            ("fit_reference", raw.fit_reference.len()),
        ] {
            ensure(
                len <= MAX_LIST,
                field,
                format!("{len} entries, above the bound {MAX_LIST}"),
            )?;
        }
        let n = self.horizon().max(0);
        let cosines: u64 = self.keys().iter().map(|k| u64::from(k.0 / 2)).sum();
        let per_r = cosines
            + raw.increases.len() as u64
            + raw.fit_dbars.len() as u64 * raw.fit_ranges.len() as u64;
        let work = u128::from(n as u64) * u128::from(per_r);
        let field = if raw.steps_to == n {
            "steps_to".to_string()
        } else if raw.gap.r == n {
            "gap.r".to_string()
        } else if raw.kerple.range[1] == n {
            "kerple.range".to_string()
        } else {
            let i = raw.fit_ranges.iter().position(|r| r[1] == n).unwrap_or(0);
            format!("fit_ranges[{i}]")
        };
        ensure(
            at.weigh(work) <= MAX_WORK,
            field,
            format!(
                "the run encloses B̃(r) up to r = {n}: r·(Σ d̄/2 + |increases| + \
                 |fit_dbars|·|fit_ranges|) is {}, above the bound 2^24 (about a minute): \
                 use a smaller range, fewer d̄ or a lower precision",
                at.show(work)
            ),
        )
    }
}

impl Params {
    /// The largest r any part of the run uses.
    fn horizon(&self) -> i64 {
        self.raw.horizon()
    }

    /// Every (d̄, convention) the run needs, in order, once each.
    fn keys(&self) -> Vec<(u32, IndexFrom)> {
        self.raw.keys()
    }

    fn build_statement(&self, claim: &str, hints: &Hints) -> Result<Statement, StatementError> {
        let mut st = Statement::new(claim);
        let n = self.horizon();
        let hint = |key: &str| {
            hints
                .get(key)
                .ok_or_else(|| StatementError::hint(key, format!("missing hint `{key}`")))
        };
        for (d, f) in self.keys() {
            let b = || sandwich_centred_expr(var("r"), d, f);
            st.state(
                format!("d̄ = {d}, {}: −d̄ ≤ B̃(r) ≤ 0 for 0 ≤ r ≤ {n}", f.label()),
                &forall(
                    "r",
                    0,
                    n,
                    and([le(int(-i64::from(d)), b()), le(b(), int(0))]),
                ),
            );
        }
        for (inc, min_step) in self.raw.increases.iter().zip(&self.min_step) {
            let label = format!("d̄ = {}, {}", inc.dbar, inc.from.label());
            let b_at = |r: Term| sandwich_centred_expr(r, inc.dbar, inc.from);
            let r_minus_1 = || sub(var("r"), int(1));
            let down =
                |lo: i64, hi: i64| forall("r", lo, hi, le(b_at(var("r")), b_at(r_minus_1())));
            let up = |r: i64| gt(b_at(int(r)), b_at(int(r - 1)));
            let before = if inc.first > 1 {
                down(1, inc.first - 1)
            } else {
                eq(int(0), int(0))
            };
            st.state(
                format!(
                    "{label}: the first increase is B̃({}) > B̃({})",
                    inc.first,
                    inc.first - 1
                ),
                &and([before, up(inc.first)]),
            );
            if let Some(want) = inc.count {
                // the increasing steps are listed by the hint; the obligation states that
                // exactly those steps of 1..N increase and that there are `want` of them
                let key = increases_key(inc.dbar, inc.from);
                let listed: Vec<i64> = hint(&key)?
                    .split(',')
                    .filter(|t| !t.is_empty())
                    .map(|t| t.trim().parse::<i64>())
                    .collect::<Result<_, _>>()
                    .map_err(|_| {
                        StatementError::hint(&key, format!("hint `{key}` is not a list of steps"))
                    })?;
                if listed.windows(2).any(|w| w[0] >= w[1])
                    || listed
                        .iter()
                        .any(|&r| !(1..=self.raw.steps_to).contains(&r))
                {
                    return Err(StatementError::hint(
                        &key,
                        format!(
                            "hint `{key}` must be increasing steps in 1..={}",
                            self.raw.steps_to
                        ),
                    ));
                }
                let mut parts = vec![eq(listed.len().into(), want.into())];
                let mut next = 1;
                for &r in &listed {
                    if next < r {
                        parts.push(down(next, r - 1));
                    }
                    parts.push(up(r));
                    next = r + 1;
                }
                if next <= self.raw.steps_to {
                    parts.push(down(next, self.raw.steps_to));
                }
                st.state(
                    format!(
                        "{label}: {want} increases among the steps r = 1..{}",
                        self.raw.steps_to
                    ),
                    &and(parts),
                );
            }
            if let Some(v) = min_step {
                let key = min_step_key(inc.dbar, inc.from);
                let r_star: i64 = hint(&key)?.parse().map_err(|_| {
                    StatementError::hint(&key, format!("hint `{key}` is not a step"))
                })?;
                if !(1..=self.raw.steps_to).contains(&r_star) {
                    return Err(StatementError::hint(
                        &key,
                        format!("hint `{key}` must lie in 1..={}", self.raw.steps_to),
                    ));
                }
                let (hu, value) = (|| q(&v.half_unit), || q(&v.value));
                let step = |r: Term, r1: Term| abs(sub(b_at(r), b_at(r1)));
                st.state(
                    format!(
                        "{label}: smallest |B̃(r) − B̃(r − 1)| over r = 1..{} is {v} (to the printed digits)",
                        self.raw.steps_to
                    ),
                    &and([
                        forall(
                            "r",
                            1,
                            self.raw.steps_to,
                            ge(step(var("r"), r_minus_1()), sub(value(), hu())),
                        ),
                        le(step(int(r_star), int(r_star - 1)), add([value(), hu()])),
                    ]),
                );
            }
        }
        let g = &self.raw.gap;
        st.state(
            format!(
                "d̄ = {}, {}: B̃({}) − B̃({}) = {} (to the printed digits)",
                g.dbar,
                g.from.label(),
                g.r,
                g.r - 1,
                g.value
            ),
            &printed_formula(gap_term(g), &self.gap_value),
        );
        for (fr, (a_pred, _)) in self.raw.fit_reference.iter().zip(&self.fit_printed) {
            st.state(
                format!("d̄ = {}: a_pred = −d̄/(2 ln 10⁴) = {}", fr.dbar, fr.a_pred),
                &printed_formula(a_pred_term(fr.dbar), a_pred),
            );
        }
        Ok(st)
    }
}

/// The term B̃(r) − B̃(r − 1) of the gap.
fn gap_term(g: &Gap) -> Term {
    sub(
        sandwich_centred_expr(int(g.r), g.dbar, g.from),
        sandwich_centred_expr(int(g.r - 1), g.dbar, g.from),
    )
}

/// The term a_pred = −d̄/(2 ln 10⁴).
fn a_pred_term(dbar: u32) -> Term {
    neg(div(int(dbar), mul([int(2), ln(int(10000))])))
}

/// One d̄ of the fits: the enclosure midpoints, a_pred, and the fit on each range.
pub struct DbarFits {
    /// B̃(r) (enclosure midpoints), I from 0.
    b: Vec<f64>,
    /// The predicted slope a_pred.
    ap: f64,
    /// The fit on each of the spec's ranges.
    fits: Vec<LineFit>,
}

/// What the run computed: the enclosures of B̃, the decided steps (whose counts
/// and smallest steps are the hints), the f64 distance to the enclosures, and the
/// fits.
pub struct Found {
    /// B̃(r), r ≤ the horizon, per (d̄, convention).
    encl: Vec<((u32, IndexFrom), Vec<Interval>)>,
    /// Per `increases` entry: the decided steps and the smallest |step| enclosure.
    steps: Vec<(Steps, Interval)>,
    /// max |f64 B̃ − midpoint|.
    max_dev: f64,
    /// Per fitted d̄.
    fits: Vec<DbarFits>,
    /// KERPLE-log: r1, r2, R² at the optimum, R² from r = 1, R² at the nearby point.
    kerple: [f64; 5],
}

impl Found {
    fn get(&self, d: u32, f: IndexFrom) -> &[Interval] {
        self.encl
            .iter()
            .find(|(k, _)| *k == (d, f))
            .map_or(&[], |(_, v)| v)
    }
}
