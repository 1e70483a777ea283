//! positional/sandwich-head-power-law: with uniform content, head h's Sandwich
//! weights e^{B_h(r)}, B_h = B̃/c_h, c_h = 8h/H, behave like C·r^{−α_h} for
//! 1 ≪ r ≪ 10⁴ with α_h = d̄/(2c_h ln 10⁴) = d̄H/(16h ln 10⁴); heads with α_h < 1
//! have partial sums growing like r^{1−α_h} there, while ALiBi's weights e^{−mr}
//! are always summable.
//!
//! Certified (obligations of the statement, each formula written once): the
//! exponents α_h against the printed table, which heads have α_h < 1, and the
//! geometric-series bound Σ_r e^{−mr} = 1/(1 − e^{−m}) ≤ 1 + 1/m for every ALiBi
//! slope. Observed (f64): the log-log slope fits, the
//! growth of dyadic block sums, and the agreement of f64 and 128-bit B̃.

use super::common::{
    check_dbar, compression_ratio, line_fit, log_plot_points, sandwich_centred_f64,
    sandwich_centred_many, sandwich_freqs, sandwich_freqs_f64, slope_exponents, IndexFrom, Printed,
    SlopeRule,
};
use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::StatementError;
use crate::kernel::expr::build::{
    add, and, cmp, div, exp, int, le, ln, mul, q, sub, Formula, Rel, Term,
};
use crate::kernel::{expr, Certainty, Checked, Interval, Statement};
use crate::outcome::{Observations, Plot, Presentation, Series, Style, Table};
use crate::spec::{check_each, ensure, FieldError};
use serde::{Deserialize, Serialize};

/// Printed exponents α_h for a head count (positional.md §3).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlphaReference {
    /// H.
    pub heads: usize,
    /// d̄.
    pub dbar: u32,
    /// The printed constant K in α_h = K/h.
    pub constant: String,
    /// The first head h of `values`.
    pub first_head: usize,
    /// Printed α_h for h = first_head, first_head + 1, …
    pub values: Vec<String>,
}

/// A printed relative error of the fitted exponent (in percent).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorReference {
    /// d̄.
    pub dbar: u32,
    /// |α_fit − α_h|/α_h in percent, as printed.
    pub percent: String,
}

/// Parameters of positional/sandwich-head-power-law as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// d̄ values (I from 0).
    pub dbars: Vec<u32>,
    /// Head counts H.
    pub heads: Vec<usize>,
    /// The log-log fit uses every integer r in [fit_range\[0\], fit_range\[1\]].
    pub fit_range: [i64; 2],
    /// Asserted: relative error of the fitted exponent ≤ rel_tol.
    pub rel_tol: f64,
    /// Printed α_h tables.
    pub alpha_reference: Vec<AlphaReference>,
    /// Printed relative errors.
    pub error_reference: Vec<ErrorReference>,
    /// d̄ and H of the detailed table and the plot.
    pub detail: [usize; 2],
    /// d̄ values where the block-sum growth of the α_h < 1 heads is asserted (reported for every d̄).
    pub growth_dbars: Vec<u32>,
    /// Heads drawn in the plot.
    pub plot_heads: Vec<usize>,
    /// Every `two_precision_stride`-th r of the fit range is also enclosed at 128 bits.
    pub two_precision_stride: usize,
    /// Largest |f64 − enclosure midpoint| of B̃ accepted as agreement.
    pub f64_agreement: f64,
}

/// Parameters of positional/sandwich-head-power-law, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The parameters as written (names and tables quote them).
    pub raw: Raw,
    /// Per alpha reference: the constant and the values, as printed.
    alpha_printed: Vec<(Printed, Vec<Printed>)>,
    /// Per error reference: the percent as printed.
    error_printed: Vec<Printed>,
}

/// positional/sandwich-head-power-law.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(raw: Raw, _at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        let mut alpha_printed = Vec::new();
        let mut error_printed = Vec::new();
        check_each(&raw.dbars, "dbars", |f, &x| check_dbar(f, x))?;
        check_each(&raw.heads, "heads", |f, &h| {
            ensure(
                (1..=256).contains(&h),
                f,
                format!("{h} heads is out of range: use 1 to 256"),
            )
        })?;
        let [lo, hi] = raw.fit_range;
        ensure(
            1 <= lo && lo < hi && hi <= 1_000_000,
            "fit_range",
            "need 1 ≤ lo < hi ≤ 10^6",
        )?;
        ensure(
            lo.count_ones() == 1 && hi.count_ones() == 1,
            "fit_range",
            "both ends must be powers of two (the block sums use dyadic blocks)",
        )?;
        ensure(
            raw.rel_tol > 0.0 && raw.rel_tol < 1.0,
            "rel_tol",
            "must be in (0, 1)",
        )?;
        for (i, a) in raw.alpha_reference.iter().enumerate() {
            check_dbar(&format!("alpha_reference[{i}].dbar"), a.dbar)?;
            ensure(
                (1..=256).contains(&a.heads),
                format!("alpha_reference[{i}].heads"),
                "out of range: use 1 to 256",
            )?;
            let constant = Printed::parse(&format!("alpha_reference[{i}].constant"), &a.constant)?;
            ensure(
                a.first_head >= 1 && a.first_head + a.values.len() - 1 <= a.heads,
                format!("alpha_reference[{i}].first_head"),
                format!("heads {}.. must stay within 1..={}", a.first_head, a.heads),
            )?;
            let values = a
                .values
                .iter()
                .enumerate()
                .map(|(j, s)| Printed::parse(&format!("alpha_reference[{i}].values[{j}]"), s))
                .collect::<Result<Vec<_>, _>>()?;
            alpha_printed.push((constant, values));
        }
        for (i, e) in raw.error_reference.iter().enumerate() {
            ensure(
                raw.dbars.contains(&e.dbar),
                format!("error_reference[{i}].dbar"),
                "must be one of dbars",
            )?;
            error_printed.push(Printed::parse(
                &format!("error_reference[{i}].percent"),
                &e.percent,
            )?);
        }
        ensure(
            raw.dbars.contains(&(raw.detail[0] as u32)),
            "detail",
            "detail[0] must be one of dbars",
        )?;
        ensure(
            raw.heads.contains(&raw.detail[1]),
            "detail",
            "detail[1] must be one of heads",
        )?;
        check_each(&raw.growth_dbars, "growth_dbars", |f, d| {
            ensure(
                raw.dbars.contains(d),
                f,
                format!("d̄ = {d} is not one of dbars"),
            )
        })?;
        check_each(&raw.plot_heads, "plot_heads", |f, &h| {
            ensure(
                (1..=raw.detail[1]).contains(&h),
                f,
                format!("head {h} is not in 1..={}", raw.detail[1]),
            )
        })?;
        ensure(
            raw.two_precision_stride >= 1,
            "two_precision_stride",
            "must be ≥ 1",
        )?;
        ensure(
            raw.f64_agreement > 0.0 && raw.f64_agreement.is_finite(),
            "f64_agreement",
            "must be positive",
        )?;
        Ok(Params {
            raw,
            alpha_printed,
            error_printed,
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
    /// The first head with α_h < 1 per (H, d̄) (a search; the statement decides), f64
    /// B̃ with its two-precision sample, and the exponent fits and block growth.
    fn witness(p: &Params, ctx: &Ctx) -> Found {
        let prec = ctx.prec();
        let [lo, hi] = p.raw.fit_range;
        let one = Interval::one(prec);
        let mut hints = Vec::new();
        for &heads in &p.raw.heads {
            for &d in &p.raw.dbars {
                let h_star = (1..=heads)
                    .find(|&h| alpha(d, heads, h, prec).lt(&one) == Certainty::True)
                    .unwrap_or(heads + 1);
                hints.push((h_star_key(heads, d), h_star.to_string()));
            }
        }
        let mut series_b: Vec<(u32, Vec<f64>)> = Vec::new();
        let mut max_dev = 0f64;
        for &d in &p.raw.dbars {
            let f = sandwich_freqs_f64(d, IndexFrom::Zero);
            let b: Vec<f64> = (0..=hi)
                .map(|r| sandwich_centred_f64(r as f64, &f))
                .collect();
            let rs: Vec<i64> = (lo..=hi).step_by(p.raw.two_precision_stride).collect();
            let enc = sandwich_centred_many(&rs, &sandwich_freqs(d, IndexFrom::Zero, prec));
            for (r, e) in rs.iter().zip(&enc) {
                max_dev = max_dev.max((b[*r as usize] - e.mid_f64()).abs());
            }
            series_b.push((d, b));
        }
        let mut groups = Vec::new();
        for (d, b) in &series_b {
            let d = *d;
            for &heads in &p.raw.heads {
                let mut worst = 0f64;
                let mut fits = Vec::new();
                for h in 1..=heads {
                    let c = compression_ratio(h, heads).to_f64();
                    let a_true = alpha(d, heads, h, prec);
                    let at = a_true.mid_f64();
                    let (af, _intercept) = fitted_alpha(b, lo, hi, c);
                    let rel = (af - at).abs() / at;
                    worst = worst.max(rel);
                    let lt1 = a_true.lt(&one) == Certainty::True;
                    let growth = block_growth(b, lo, hi, c);
                    let growth_err = ((1.0 - growth) - at).abs() / at;
                    fits.push(HeadFit {
                        h,
                        c,
                        a_true,
                        af,
                        rel,
                        lt1,
                        growth,
                        growth_err,
                    });
                }
                groups.push(Group {
                    d,
                    heads,
                    worst,
                    fits,
                });
            }
        }
        Found {
            hints,
            series_b,
            max_dev,
            groups,
        }
    }
    /// The hints `h_star`.
    fn hints(_: &Params, w: &Found) -> Hints {
        w.hints.iter().cloned().collect()
    }
    /// The two-precision check, the printed relative errors, and the fits and block
    /// growth against α_h (f64 observations).
    fn observe(p: &Params, w: &Found, _: Option<&Checked>, _: &Ctx, o: &mut Observations) {
        let [lo, hi] = p.raw.fit_range;
        let max_dev = w.max_dev;
        o.observe(
            format!(
                "two precisions: f64 B̃(r) within {:e} of 128-bit enclosures (every {}th r of [{lo}, {hi}])",
                p.raw.f64_agreement, p.raw.two_precision_stride
            ),
            max_dev <= p.raw.f64_agreement,
            format!("max |f64 − midpoint| = {max_dev:.3e}"),
        );
        let mut all_ok = true;
        let mut growth_ok = true;
        let mut growth_detail = Vec::new();
        for g in &w.groups {
            let (d, heads, worst) = (g.d, g.heads, g.worst);
            for f in &g.fits {
                let (h, growth) = (f.h, f.growth);
                let at = f.a_true.mid_f64();
                let asserted = f.lt1 && p.raw.growth_dbars.contains(&d);
                if asserted {
                    growth_ok &= growth > 0.0 && f.growth_err <= p.raw.rel_tol;
                    growth_detail.push(format!(
                        "d̄ = {d}, H = {heads}, h = {h}: exponent {growth:.4} vs 1 − α_h = {:.4}",
                        1.0 - at
                    ));
                }
            }
            all_ok &= worst <= p.raw.rel_tol;
            if heads == p.raw.detail[1] {
                if let Some((e, percent)) = p
                    .raw
                    .error_reference
                    .iter()
                    .zip(&p.error_printed)
                    .find(|(e, _)| e.dbar == d)
                {
                    o.observe(
                        format!("d̄ = {d}: relative error of the fitted exponent = {}% (to the printed digits)", e.percent),
                        within_printed(100.0 * worst, percent),
                        format!("{:.4}%", 100.0 * worst),
                    );
                }
            }
        }
        o.observe(
            format!(
                "every head, d̄ ∈ {:?}, H ∈ {:?}: |α_fit − α_h|/α_h ≤ {} over r ∈ [{lo}, {hi}]",
                p.raw.dbars, p.raw.heads, p.raw.rel_tol
            ),
            all_ok,
            "see the tables",
        );
        o.observe(
            format!(
                "d̄ ∈ {:?}, heads with α_h < 1: dyadic block sums of e^{{B_h}} grow, with exponent within {} · α_h of 1 − α_h",
                p.raw.growth_dbars, p.raw.rel_tol
            ),
            growth_ok,
            growth_detail.join("; "),
        );
    }
    /// The tables of the fits and the block growth, the plot of the detail heads, the
    /// headline figure and the notes.
    fn present(p: &Params, w: &Found, _: Option<&Checked>, _: &Ctx, o: &mut Presentation) {
        let [lo, hi] = p.raw.fit_range;
        let mut summary = Table::new(
            format!(
                "Log-log slope of e^{{B_h}} over r ∈ [{lo}, {hi}] vs α_h: worst relative error over heads (f64 fits)"
            ),
            &["d̄", "H", "worst |α_fit − α_h|/α_h", "§3"],
        );
        let mut detail = Table::new(
            format!(
                "Heads for d̄ = {}, H = {} (α_h certified; fits and block sums f64 over [{lo}, {hi}])",
                p.raw.detail[0], p.raw.detail[1]
            ),
            &[
                "h",
                "c_h",
                "α_h (enclosure)",
                "α_h (§3)",
                "α_fit",
                "relative error",
                "block-sum growth exponent",
                "1 − α_h",
            ],
        );
        let mut plot = Plot {
            slug: "head-weights".into(),
            title: format!(
                "Sandwich head weights e^{{B_h(r)}} (d̄ = {}, H = {}, I from 0) and C·r^(−α_h) (dashed)",
                p.raw.detail[0], p.raw.detail[1]
            ),
            x_label: "r".into(),
            y_label: "e^{B_h(r)}".into(),
            x_log: true,
            y_log: true,
            series: Vec::new(),
            heatmap: None,
            paths: false,
        };
        let mut growth_table = Table::new(
            format!(
                "Dyadic block sums D_k = Σ_{{2^k ≤ r < 2^(k+1)}} e^{{B_h(r)}} over [{lo}, {hi}): growth exponent (slope of log2 D_k in k) vs 1 − α_h, heads with α_h < 1.5 (f64)"
            ),
            &[
                "d̄",
                "H",
                "h",
                "α_h",
                "growth exponent",
                "1 − α_h",
                "|(1 − exponent) − α_h|/α_h",
                "asserted",
            ],
        );
        for g in &w.groups {
            let (d, heads, worst) = (g.d, g.heads, g.worst);
            let b: &[f64] = w
                .series_b
                .iter()
                .find(|(x, _)| *x == d)
                .map_or(&[], |(_, b)| b);
            for f in &g.fits {
                let HeadFit {
                    h,
                    c,
                    ref a_true,
                    af,
                    rel,
                    lt1,
                    growth,
                    growth_err,
                } = *f;
                let at = a_true.mid_f64();
                let asserted = lt1 && p.raw.growth_dbars.contains(&d);
                if at < 1.5 {
                    growth_table.row(vec![
                        d.to_string(),
                        heads.to_string(),
                        h.to_string(),
                        a_true.fmt_outward(5),
                        format!("{growth:.4}"),
                        format!("{:.4}", 1.0 - at),
                        format!("{:.2}%", 100.0 * growth_err),
                        if asserted {
                            "yes".into()
                        } else if lt1 {
                            "reported".into()
                        } else {
                            "— (α_h > 1)".into()
                        },
                    ]);
                }
                if d as usize == p.raw.detail[0] && heads == p.raw.detail[1] {
                    let printed = p
                        .raw
                        .alpha_reference
                        .iter()
                        .find(|a| a.heads == heads && a.dbar == d)
                        .and_then(|a| {
                            h.checked_sub(a.first_head)
                                .and_then(|j| a.values.get(j))
                                .cloned()
                        })
                        .unwrap_or_else(|| "—".into());
                    detail.row(vec![
                        h.to_string(),
                        compression_ratio(h, heads).to_string(),
                        a_true.fmt_outward(6),
                        printed,
                        format!("{af:.4}"),
                        format!("{:.2}%", 100.0 * rel),
                        format!("{growth:.4}"),
                        format!("{:.4}", 1.0 - at),
                    ]);
                    if p.raw.plot_heads.contains(&h) {
                        plot.series.push(Series {
                            name: format!("h = {h} (α = {at:.3})"),
                            style: Style::Line,
                            points: log_plot_points(1, hi)
                                .iter()
                                .map(|&r| (r as f64, (b[r as usize] / c).exp()))
                                .collect(),
                        });
                        // C from the fit at the slope −α_h: mean of y + α_h·x over the range
                        let n = (hi - lo + 1) as f64;
                        let logc = (lo..=hi)
                            .map(|r| b[r as usize] / c + at * (r as f64).ln())
                            .sum::<f64>()
                            / n;
                        plot.series.push(Series {
                            name: format!("C·r^−{at:.3}"),
                            style: Style::Dashed,
                            points: [lo, hi]
                                .iter()
                                .map(|&r| (r as f64, (logc - at * (r as f64).ln()).exp()))
                                .collect(),
                        });
                    }
                }
            }
            let printed = p
                .raw
                .error_reference
                .iter()
                .find(|e| e.dbar == d)
                .map(|e| format!("{}%", e.percent))
                .unwrap_or_else(|| "—".into());
            summary.row(vec![
                d.to_string(),
                heads.to_string(),
                format!("{:.2}%", 100.0 * worst),
                printed,
            ]);
            if heads == p.raw.detail[1] && d as usize == p.raw.detail[0] {
                o.figures.insert(
                    0,
                    crate::outcome::Figure {
                        name: format!(
                            "worst relative error of the fitted exponent (d̄ = {d}, H = {heads})"
                        ),
                        value: (worst * 1e8).round() / 1e8,
                        text: format!("{:.2}%", 100.0 * worst),
                    },
                );
            }
        }
        o.tables.push(summary);
        o.tables.push(detail);
        o.tables.push(growth_table);
        o.plots.push(plot);
        o.note(
            "With c_h, B_h = B̃/c_h, so the log-log slope of e^{B_h} is a/c_h where a is the slope of B̃ against ln r; the \
             relative error |α_fit − α_h|/α_h = |a − a_pred|/|a_pred| is the same for every head (and for the uncentred \
             bias, which differs by a constant). The printed 0.60% / 1.5% / 0.14% are those of the [32, 2048] fits of \
             positional-log-decay (−6.9906 vs −6.9487 at d̄ = 128).",
        );
        o.note(
            "Over all r ≥ 0 no Sandwich head is summable: −d̄ ≤ B̃ gives e^{B_h(r)} ≥ e^{−d̄/c_h} > 0. The α_h < 1 statement \
             is about the growth over 1 ≪ r ≪ 10⁴ (a heuristic, hence `supported`), the formal counterpart of \"uses \
             information beyond L_tr\"; ALiBi's weights are summable for every slope (certified bound 1 + 1/m).",
        );
    }
}

// ----- the statement (Coq-translatable: exact literals, exp/ln, + − × ÷, <, ≤, and) -----

/// The term α_h = d̄H/(16h ln 10⁴).
pub fn alpha_term(dbar: u32, heads: usize, h: usize) -> Term {
    div(
        (dbar as usize * heads).into(),
        mul([(16 * h).into(), ln(int(10000))]),
    )
}

/// α_h in intervals: the statement's term, evaluated (presentation and witness search).
pub fn alpha(dbar: u32, heads: usize, h: usize, prec: u32) -> Interval {
    expr::eval_built(&alpha_term(dbar, heads, h), prec, &Default::default()).expect("a closed term")
}

/// v − ½u ≤ x ≤ v + ½u for a printed v with last-digit unit u (no `abs`, for the Coq translation).
fn printed_formula(x: Term, p: &Printed) -> Formula {
    let (v, hu) = (|| q(&p.value), || q(&p.half_unit));
    and([le(sub(v(), hu()), x.clone()), le(x, add([v(), hu()]))])
}

/// The hint key of the first head with α_h < 1 (found by search; any value gives a
/// sound statement, a wrong one a false obligation).
fn h_star_key(heads: usize, dbar: u32) -> String {
    format!("first head with alpha < 1 (H = {heads}, dbar = {dbar})")
}

impl Params {
    fn build_statement(&self, claim: &str, hints: &Hints) -> Result<Statement, StatementError> {
        let mut st = Statement::new(claim);
        for (a, (constant, values)) in self.raw.alpha_reference.iter().zip(&self.alpha_printed) {
            st.state(
                format!(
                    "H = {}, d̄ = {}: α_h = {}/h (d̄H/(16 ln 10⁴) to the printed digits)",
                    a.heads, a.dbar, a.constant
                ),
                &printed_formula(alpha_term(a.dbar, a.heads, 1), constant),
            );
            let parts = values
                .iter()
                .enumerate()
                .map(|(j, v)| printed_formula(alpha_term(a.dbar, a.heads, a.first_head + j), v));
            st.state(
                format!(
                    "H = {}, d̄ = {}: α_h for h = {}..{} reproduce the printed values",
                    a.heads,
                    a.dbar,
                    a.first_head,
                    a.first_head + a.values.len() - 1
                ),
                &and(parts),
            );
        }
        for &heads in &self.raw.heads {
            for &d in &self.raw.dbars {
                let key = h_star_key(heads, d);
                let hint_error = |reason: String| StatementError::Hint {
                    key: key.clone(),
                    reason,
                };
                let h_star: usize = hints
                    .get(&key)
                    .ok_or_else(|| hint_error(format!("missing hint `{key}`")))?
                    .parse()
                    .map_err(|_| hint_error(format!("hint `{key}` is not a head index")))?;
                if !(1..=heads + 1).contains(&h_star) {
                    return Err(hint_error(format!(
                        "hint `{key}` = {h_star} is not in 1..={}",
                        heads + 1
                    )));
                }
                let parts = (1..=heads).map(|h| {
                    let rel = if h < h_star { Rel::Ge } else { Rel::Lt };
                    cmp(rel, alpha_term(d, heads, h), int(1))
                });
                let below: Vec<usize> = (h_star..=heads).collect();
                st.state(
                    format!("H = {heads}, d̄ = {d}: α_h < 1 exactly for h ∈ {below:?}"),
                    &and(parts),
                );
            }
        }
        let mut parts = Vec::new();
        for &heads in &self.raw.heads {
            for rule in [SlopeRule::Paper, SlopeRule::Code] {
                for q_ in slope_exponents(heads, rule) {
                    let m = || exp(mul([q(&-q_.clone()), ln(int(2))]));
                    parts.push(le(
                        div(int(1), sub(int(1), exp(sub(int(0), m())))),
                        add([int(1), div(int(1), m())]),
                    ));
                }
            }
        }
        st.state(
            format!(
                "ALiBi, H ∈ {:?}, both slope rules: Σ_r e^{{−mr}} = 1/(1 − e^{{−m}}) ≤ 1 + 1/m < ∞ (summable)",
                self.raw.heads
            ),
            &and(parts),
        );
        Ok(st)
    }
}

/// Fitted exponent α = −slope of B_h(r) = B̃(r)/c_h against ln r over the range (f64).
fn fitted_alpha(b: &[f64], lo: i64, hi: i64, c: f64) -> (f64, f64) {
    let x: Vec<f64> = (lo..=hi).map(|r| (r as f64).ln()).collect();
    let y: Vec<f64> = (lo..=hi).map(|r| b[r as usize] / c).collect();
    let f = line_fit(&x, &y).expect("at least two distinct x");
    (-f.slope, f.intercept)
}

/// The slope of log2 D_k against k, D_k = Σ_{2^k ≤ r < 2^{k+1}} e^{B_h(r)} over the
/// dyadic blocks of [lo, hi) (f64). For weights ≈ C·r^{−α} it is ≈ 1 − α, so a
/// positive slope means the partial sums keep growing (like r^{1−α}).
pub fn block_growth(b: &[f64], lo: i64, hi: i64, c: f64) -> f64 {
    let mut ks = Vec::new();
    let mut ds = Vec::new();
    let mut start = lo;
    while start < hi {
        let end = 2 * start;
        let d: f64 = (start..end).map(|r| (b[r as usize] / c).exp()).sum();
        ks.push(start.trailing_zeros() as f64);
        ds.push(d.log2());
        start = end;
    }
    line_fit(&ks, &ds).map(|f| f.slope).unwrap_or(f64::NAN)
}

fn within_printed(x: f64, s: &Printed) -> bool {
    let v = s.value.to_f64();
    let h = s.half_unit.to_f64();
    (x - v).abs() <= h * (1.0 + 1e-9)
}

/// One head's fit (f64) against its certified α_h.
#[derive(Debug, Clone)]
pub struct HeadFit {
    /// The head.
    pub h: usize,
    /// Its compression ratio c_h.
    pub c: f64,
    /// α_h, certified enclosure.
    pub a_true: Interval,
    /// The fitted exponent and intercept.
    pub af: f64,
    /// |α_fit − α_h|/α_h.
    pub rel: f64,
    /// α_h < 1, certified.
    pub lt1: bool,
    /// The dyadic block sums' growth exponent.
    pub growth: f64,
    /// |(1 − growth) − α_h|/α_h.
    pub growth_err: f64,
}

/// The heads of one (d̄, H).
#[derive(Debug, Clone)]
pub struct Group {
    /// d̄.
    pub d: u32,
    /// H.
    pub heads: usize,
    /// The worst relative error of the fitted exponent over the heads.
    pub worst: f64,
    /// Every head, h = 1..=H.
    pub fits: Vec<HeadFit>,
}

/// What the run found: the first head with α_h < 1 (the hints), f64 B̃ and its
/// distance to the enclosures, and every head's fits.
#[derive(Debug, Clone)]
pub struct Found {
    /// The hints `h_star`.
    pub hints: Vec<(String, String)>,
    /// f64 B̃(r), 0 ≤ r ≤ hi, per d̄.
    pub series_b: Vec<(u32, Vec<f64>)>,
    /// The largest |f64 − midpoint| over the two-precision sample.
    pub max_dev: f64,
    /// Per (d̄, H), in order.
    pub groups: Vec<Group>,
}
