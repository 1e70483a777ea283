//! positional/length-usage: how much attention mass lies beyond the training length,
//! at the formula level (uniform content, query at the last position).
//!
//! T(L) = Σ_{r≥w} b_r / Σ_{r<L} b_r with b_r the bias weight at distance r and w = L_tr.
//! - ALiBi, b_r = e^{−mr}: T(L) = (x^w − x^L)/(1 − x^L), x = e^{−m}, bounded uniformly in L
//!   and → e^{−wm}: certified |T(L_max) − T(L_flat)| ≤ tol and |T(L_max) − e^{−wm}| ≤ tol.
//! - Sandwich, b_r = e^{B̃(r)/c_h}: since −d̄ ≤ B̃ ≤ 0 the weights lie in [e^{−d̄/c_h}, 1], so
//!   T(L) ≥ (L − w)e^{−d̄/c_h} / (w + (L − w)e^{−d̄/c_h}) → 1 (bound (ii), certified at every
//!   L and head); T is strictly increasing over the lengths for the flat heads and the
//!   flattest head's tail grows by a certified factor.
//! - The §3 table is reproduced (certified, relative tolerance against its printed
//!   digits), and the flattest ALiBi head's 13.5% beyond 512 is certified.
//! - The growth pattern itself (Sandwich keeps growing while ALiBi has saturated) is a
//!   finite-size observation of an asymptotic statement: observed, not certified.

use super::alibi_tail_bound::fmt_slope;
use super::common::{
    check_dbar, check_heads, compression_ratio, printed_half_unit, sandwich_centred_many,
    sandwich_freqs, slope_exponents, slope_interval, IndexFrom, SlopeRule,
};
use crate::claims::Ctx;
use crate::kernel::{parse_rational, Certainty, Interval};
use crate::outcome::{Outcome, Plot, Series, Style, Table};
use crate::spec::exact as rat;
use crate::spec::{ensure, ensure_each, FieldError};
use rayon::prelude::*;
use rug::{Integer, Rational};
use serde::{Deserialize, Serialize};

/// A Sandwich column of the §3 table.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandwichRef {
    /// Head h (1-based).
    pub head: usize,
    /// Printed T(L), one per length.
    pub values: Vec<String>,
}

/// An ALiBi column of the §3 table.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlibiRef {
    /// The slope m (exact literal).
    pub slope: String,
    /// Printed T(L), one per length.
    pub values: Vec<String>,
}

/// The "x% of the flattest head's mass lies beyond w" figure.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MassBeyond {
    /// The slope m.
    pub slope: String,
    /// The printed fraction (e.g. `"0.135"` for 13.5%), at the largest length.
    pub printed: String,
}

/// Parameters of positional/length-usage.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// The training length w = L_tr (tail beyond it).
    pub train_length: u64,
    /// Evaluation lengths L (increasing).
    pub lengths: Vec<u64>,
    /// ALiBi heads H (every slope of the rule is checked for (i)).
    pub alibi_heads: usize,
    /// ALiBi slope rule.
    pub alibi_rule: SlopeRule,
    /// |T(L_max) − T(flat_from)| and |T(L_max) − e^{−wm}| must be ≤ this (exact literal).
    pub alibi_flat_tol: String,
    /// The length from which ALiBi's tail is flat (one of `lengths`).
    pub flat_from: u64,
    /// Sandwich d̄.
    pub sandwich_dbar: u32,
    /// Sandwich heads H.
    pub sandwich_heads: usize,
    /// Sandwich index convention.
    pub sandwich_index: IndexFrom,
    /// Heads whose T must be strictly increasing over `lengths`.
    pub increasing_heads: Vec<usize>,
    /// The head whose tail must grow by `growth_min_ratio` from the first to the last length.
    pub growth_head: usize,
    /// Certified lower bound of T_h(L_max)/T_h(L_min) for `growth_head` (exact literal).
    pub growth_min_ratio: String,
    /// Observation: each step of `lengths` must add at least this to T_{growth_head}.
    pub growth_min_step: f64,
    /// Relative tolerance against the printed §3 digits (exact literal).
    pub reference_rel_tol: String,
    /// §3 Sandwich columns.
    pub sandwich_reference: Vec<SandwichRef>,
    /// §3 ALiBi columns.
    pub alibi_reference: Vec<AlibiRef>,
    /// The flattest head's mass beyond w at the largest length.
    pub mass_beyond: MassBeyond,
}

impl crate::spec::Params for Params {
    fn validate(&self) -> Result<(), FieldError> {
        ensure(
            (1..=1 << 20).contains(&self.train_length),
            "train_length",
            "must lie in 1..=1048576",
        )?;
        ensure_each(&self.lengths, "lengths", |&l| {
            if l > self.train_length && l <= 1 << 20 {
                Ok(())
            } else {
                Err(format!(
                    "length must exceed train_length ({}) and be ≤ 1048576",
                    self.train_length
                ))
            }
        })?;
        for k in 1..self.lengths.len() {
            ensure(
                self.lengths[k] > self.lengths[k - 1],
                format!("lengths[{k}]"),
                "lengths must be strictly increasing",
            )?;
        }
        ensure(
            (1..=64).contains(&self.alibi_heads),
            "alibi_heads",
            "must lie in 1..=64",
        )?;
        let t = rat("alibi_flat_tol", &self.alibi_flat_tol)?;
        ensure(t > 0, "alibi_flat_tol", "must be positive")?;
        ensure(
            self.lengths.contains(&self.flat_from),
            "flat_from",
            "must be one of `lengths`",
        )?;
        check_dbar(self.sandwich_dbar).map_err(|r| FieldError::new("sandwich_dbar", r))?;
        check_heads(self.sandwich_heads).map_err(|r| FieldError::new("sandwich_heads", r))?;
        let head_ok = |h: usize| {
            if (1..=self.sandwich_heads).contains(&h) {
                Ok(())
            } else {
                Err(format!("head must lie in 1..={}", self.sandwich_heads))
            }
        };
        ensure_each(&self.increasing_heads, "increasing_heads", |&h| head_ok(h))?;
        head_ok(self.growth_head).map_err(|r| FieldError::new("growth_head", r))?;
        let g = rat("growth_min_ratio", &self.growth_min_ratio)?;
        ensure(g > 0, "growth_min_ratio", "must be positive")?;
        ensure(
            self.growth_min_step.is_finite() && self.growth_min_step >= 0.0,
            "growth_min_step",
            "must be a finite number ≥ 0",
        )?;
        let t = rat("reference_rel_tol", &self.reference_rel_tol)?;
        ensure(t > 0, "reference_rel_tol", "must be positive")?;
        let n = self.lengths.len();
        for (i, r) in self.sandwich_reference.iter().enumerate() {
            head_ok(r.head)
                .map_err(|e| FieldError::new(format!("sandwich_reference[{i}].head"), e))?;
            ensure(
                r.values.len() == n,
                format!("sandwich_reference[{i}].values"),
                format!("has {} entries for {n} lengths", r.values.len()),
            )?;
            for (j, v) in r.values.iter().enumerate() {
                rat(&format!("sandwich_reference[{i}].values[{j}]"), v)?;
            }
        }
        for (i, r) in self.alibi_reference.iter().enumerate() {
            let f = format!("alibi_reference[{i}].slope");
            let m = rat(&f, &r.slope)?;
            ensure(m > 0, f, "slope must be positive")?;
            ensure(
                r.values.len() == n,
                format!("alibi_reference[{i}].values"),
                format!("has {} entries for {n} lengths", r.values.len()),
            )?;
            for (j, v) in r.values.iter().enumerate() {
                rat(&format!("alibi_reference[{i}].values[{j}]"), v)?;
            }
        }
        let m = rat("mass_beyond.slope", &self.mass_beyond.slope)?;
        ensure(m > 0, "mass_beyond.slope", "slope must be positive")?;
        printed_half_unit(&self.mass_beyond.printed)
            .map_err(|e| FieldError::new("mass_beyond.printed", e.to_string()))?;
        Ok(())
    }
}

/// ALiBi's tail beyond w with uniform content: (x^w − x^L)/(1 − x^L), x = e^{−m}.
pub fn alibi_tail(m: &Interval, w: u64, len: u64) -> Interval {
    let p = m.prec();
    let xk = |k: u64| (-(m * &Interval::from_integer(p, &Integer::from(k)))).exp();
    let xl = xk(len);
    &(&xk(w) - &xl) / &(&Interval::one(p) - &xl)
}

/// Prefix sums S[k] = Σ_{r<k} b_r of certified weights.
fn prefix(weights: &[Interval]) -> Vec<Interval> {
    let p = weights.first().map(Interval::prec).unwrap_or(128);
    let mut out = Vec::with_capacity(weights.len() + 1);
    let mut acc = Interval::zero(p);
    out.push(acc.clone());
    for b in weights {
        acc.add_assign(b);
        out.push(acc.clone());
    }
    out
}

/// T(L) = (S[L] − S[w]) / S[L] from prefix sums, as 1/(1 + S[w]/(S[L] − S[w])) with the
/// tail summed on its own (no cancellation of enclosures).
fn tail_from_weights(weights: &[Interval], w: usize, len: usize) -> Interval {
    let p = weights[0].prec();
    let mut head = Interval::zero(p);
    for b in &weights[..w] {
        head.add_assign(b);
    }
    let mut tail = Interval::zero(p);
    for b in &weights[w..len] {
        tail.add_assign(b);
    }
    let one = Interval::one(p);
    &one / &(&one + &(&head / &tail))
}

/// Sandwich bound (ii): (L − w)e^{−d̄/c} / (w + (L − w)e^{−d̄/c}).
pub fn sandwich_lower_bound(dbar: u32, c: &Rational, w: u64, len: u64, prec: u32) -> Interval {
    let e =
        (-(&Interval::from_i64(prec, i64::from(dbar)) / &Interval::from_rational(prec, c))).exp();
    let lw = &Interval::from_integer(prec, &Integer::from(len - w)) * &e;
    &lw / &(&Interval::from_integer(prec, &Integer::from(w)) + &lw)
}

/// |x − printed| ≤ tol·|printed| (certified).
fn within_rel(x: &Interval, printed: &Rational, tol: &Rational) -> Certainty {
    let p = x.prec();
    let r = Interval::from_rational(p, printed);
    (x - &r).abs().le(&Interval::from_rational(
        p,
        &Rational::from(printed * tol).abs(),
    ))
}

/// Runs the claim.
pub fn run(p: &Params, ctx: &Ctx) -> Outcome {
    let prec = ctx.prec();
    let mut o = Outcome::new();
    let w = p.train_length;
    let lens = &p.lengths;
    let lmax = *lens.last().expect("validated");
    let flat_tol = parse_rational(&p.alibi_flat_tol).expect("validated");
    let ref_tol = parse_rational(&p.reference_rel_tol).expect("validated");

    // ----- ALiBi (i) -----
    let qs = slope_exponents(p.alibi_heads, p.alibi_rule);
    let mut flat_c = Certainty::True;
    let mut limit_c = Certainty::True;
    let mut flat_detail = Vec::new();
    let kf = lens
        .iter()
        .position(|&l| l == p.flat_from)
        .expect("validated");
    let alibi_rows: Vec<(Rational, Vec<Interval>, Interval)> = qs
        .iter()
        .map(|q| {
            let m = slope_interval(q, prec);
            let ts: Vec<Interval> = lens.iter().map(|&l| alibi_tail(&m, w, l)).collect();
            let lim = (-(&m * &Interval::from_integer(prec, &Integer::from(w)))).exp();
            (q.clone(), ts, lim)
        })
        .collect();
    let tol_i = Interval::from_rational(prec, &flat_tol);
    for (q, ts, lim) in &alibi_rows {
        let last = ts.last().expect("lengths non-empty");
        let d1 = (last - &ts[kf]).abs();
        let d2 = (last - lim).abs();
        flat_c = flat_c.and(d1.le(&tol_i));
        limit_c = limit_c.and(d2.le(&tol_i));
        flat_detail.push(format!(
            "m = {}: |ΔT| ≤ {}, |T − e^(−{w}m)| ≤ {}",
            fmt_slope(q),
            d1.fmt_hi(2),
            d2.fmt_hi(2)
        ));
    }
    o.checks.observe_interval(
        format!(
            "(i) ALiBi ({} rule, H = {}): |T({lmax}) − T({})| ≤ {} for every head",
            p.alibi_rule.as_str(),
            p.alibi_heads,
            p.flat_from,
            p.alibi_flat_tol
        ),
        flat_c,
        flat_detail.join("; "),
    );
    o.checks.observe_interval(
        format!(
            "(i) ALiBi: T({lmax}) within {} of its limit e^(−{w}m) for every head",
            p.alibi_flat_tol
        ),
        limit_c,
        "T(L) = (x^w − x^L)/(1 − x^L) → x^w, x = e^(−m)",
    );

    // ----- Sandwich (ii) -----
    ctx.progress
        .message(format!("{}: Sandwich B̃(r), r < {lmax}", ctx.spec.id));
    let freqs = sandwich_freqs(p.sandwich_dbar, p.sandwich_index, prec);
    let rs: Vec<i64> = (0..lmax as i64).collect();
    let bt = sandwich_centred_many(&rs, &freqs);
    let heads: Vec<usize> = (1..=p.sandwich_heads).collect();
    // the weights e^{B̃(r)/c_h}, once per head, reused for every L and the plot
    let weights: Vec<Vec<Interval>> = heads
        .par_iter()
        .map(|&h| {
            let c = Interval::from_rational(prec, &compression_ratio(h, p.sandwich_heads));
            bt.iter().map(|b| (b / &c).exp()).collect()
        })
        .collect();
    let sand: Vec<Vec<Interval>> = weights
        .par_iter()
        .map(|wt| {
            lens.iter()
                .map(|&l| tail_from_weights(wt, w as usize, l as usize))
                .collect()
        })
        .collect();
    let plot_heads: Vec<usize> = p.increasing_heads.clone();
    let plot_prefix: Vec<Vec<Interval>> = plot_heads
        .iter()
        .map(|&h| prefix(&weights[h - 1]))
        .collect();
    let mut bound_c = Certainty::True;
    let mut bound_worst = String::new();
    for (k, &h) in heads.iter().enumerate() {
        let c = compression_ratio(h, p.sandwich_heads);
        for (j, &l) in lens.iter().enumerate() {
            let b = sandwich_lower_bound(p.sandwich_dbar, &c, w, l, prec);
            bound_c = bound_c.and(b.le(&sand[k][j]));
            if h == p.sandwich_heads && l == lmax {
                bound_worst = format!(
                    "e.g. h = {h}, L = {l}: T ∈ {} ≥ bound {}",
                    sand[k][j].fmt_outward(6),
                    b.fmt_outward(6)
                );
            }
        }
    }
    o.checks.observe_interval(
        format!(
            "(ii) Sandwich (d̄ = {}, {}, H = {}): T(L) ≥ (L − w)e^(−d̄/c_h)/(w + (L − w)e^(−d̄/c_h)) for every head and L",
            p.sandwich_dbar,
            p.sandwich_index.label(),
            p.sandwich_heads
        ),
        bound_c,
        format!("{} heads × {} lengths; {bound_worst}", heads.len(), lens.len()),
    );
    let mut inc_c = Certainty::True;
    let mut inc_detail = Vec::new();
    for &h in &p.increasing_heads {
        let t = &sand[h - 1];
        let c = Certainty::all(t.windows(2).map(|v| v[1].gt(&v[0])));
        inc_c = inc_c.and(c);
        inc_detail.push(format!(
            "h = {h}: {}",
            t.iter()
                .map(|x| x.fmt_mid(4))
                .collect::<Vec<_>>()
                .join(" < ")
        ));
    }
    o.checks.observe_interval(
        format!(
            "Sandwich: T strictly increasing over L ∈ {lens:?} for h ∈ {:?}",
            p.increasing_heads
        ),
        inc_c,
        inc_detail.join("; "),
    );
    let g = &sand[p.growth_head - 1];
    let ratio = &g[lens.len() - 1] / &g[0];
    let gmin = parse_rational(&p.growth_min_ratio).expect("validated");
    o.checks.observe_interval(
        format!(
            "Sandwich h = {}: T({lmax})/T({}) ≥ {}",
            p.growth_head, lens[0], p.growth_min_ratio
        ),
        ratio.ge(&Interval::from_rational(prec, &gmin)),
        format!("ratio ∈ {}", ratio.fmt_outward(6)),
    );

    // ----- (iii) mass beyond w of the flattest head -----
    let mq = parse_rational(&p.mass_beyond.slope).expect("validated");
    let mm = Interval::from_rational(prec, &mq);
    let mass = alibi_tail(&mm, w, lmax);
    let pr = parse_rational(&p.mass_beyond.printed).expect("validated");
    let hu = printed_half_unit(&p.mass_beyond.printed).expect("validated");
    o.checks.observe_interval(
        format!(
            "(iii) ALiBi m = {}: the mass beyond {w} at L = {lmax} rounds to {} (bias alone does not confine ALiBi to L_tr)",
            p.mass_beyond.slope, p.mass_beyond.printed
        ),
        (&mass - &Interval::from_rational(prec, &pr))
            .abs()
            .le(&Interval::from_rational(prec, &hu)),
        format!("T ∈ {}", mass.fmt_outward(8)),
    );

    // ----- §3 table -----
    let mut ref_c = Certainty::True;
    let mut ref_bad = Vec::new();
    let mut cols = vec!["L".to_string()];
    for r in &p.sandwich_reference {
        cols.push(format!("Sandwich h = {}: §3 | ours", r.head));
    }
    for r in &p.alibi_reference {
        cols.push(format!("ALiBi m = {}: §3 | ours", r.slope));
    }
    cols.push(format!("bound (ii), h = {}", p.sandwich_heads));
    let col_refs: Vec<&str> = cols.iter().map(String::as_str).collect();
    let mut table = Table::new(
        format!(
            "Tail beyond {w} vs L (uniform content, query at L − 1; Sandwich d̄ = {}, H = {}, {})",
            p.sandwich_dbar,
            p.sandwich_heads,
            p.sandwich_index.label()
        ),
        &col_refs,
    );
    let alibi_ref_t: Vec<Vec<Interval>> = p
        .alibi_reference
        .iter()
        .map(|r| {
            let m = Interval::from_rational(prec, &parse_rational(&r.slope).expect("validated"));
            lens.iter().map(|&l| alibi_tail(&m, w, l)).collect()
        })
        .collect();
    for (j, &l) in lens.iter().enumerate() {
        let mut row = vec![l.to_string()];
        for r in &p.sandwich_reference {
            let t = &sand[r.head - 1][j];
            let v = parse_rational(&r.values[j]).expect("validated");
            let c = within_rel(t, &v, &ref_tol);
            if c != Certainty::True {
                ref_bad.push(format!(
                    "Sandwich h = {}, L = {l}: {} vs {}",
                    r.head,
                    t.fmt_outward(6),
                    r.values[j]
                ));
            }
            ref_c = ref_c.and(c);
            row.push(format!("{} | {}", r.values[j], t.fmt_mid(6)));
        }
        for (r, ts) in p.alibi_reference.iter().zip(&alibi_ref_t) {
            let v = parse_rational(&r.values[j]).expect("validated");
            let c = within_rel(&ts[j], &v, &ref_tol);
            if c != Certainty::True {
                ref_bad.push(format!(
                    "ALiBi m = {}, L = {l}: {} vs {}",
                    r.slope,
                    ts[j].fmt_outward(6),
                    r.values[j]
                ));
            }
            ref_c = ref_c.and(c);
            row.push(format!("{} | {}", r.values[j], ts[j].fmt_mid(6)));
        }
        let c = compression_ratio(p.sandwich_heads, p.sandwich_heads);
        row.push(sandwich_lower_bound(p.sandwich_dbar, &c, w, l, prec).fmt_mid(4));
        table.row(row);
    }
    o.checks.observe_interval(
        format!(
            "§3 table (tail beyond {w} vs L) reproduced to relative {} of the printed digits",
            p.reference_rel_tol
        ),
        ref_c,
        if ref_bad.is_empty() {
            format!(
                "{} values",
                lens.len() * (p.sandwich_reference.len() + p.alibi_reference.len())
            )
        } else {
            ref_bad.join("; ")
        },
    );

    // ----- the growth pattern (observation) -----
    let gm: Vec<f64> = g.iter().map(Interval::mid_f64).collect();
    let min_step = gm
        .windows(2)
        .map(|v| v[1] - v[0])
        .fold(f64::INFINITY, f64::min);
    let flat = alibi_rows
        .last()
        .map(|(_, ts, _)| (ts[ts.len() - 1].mid_f64() - ts[kf].mid_f64()).abs())
        .unwrap_or(0.0);
    let flat_tol_f = Interval::from_rational(53, &flat_tol).mid_f64();
    o.checks.observe(
        format!(
            "growth pattern: Sandwich h = {} gains ≥ {} at every step of L (no saturation up to {lmax}) while the \
             flattest ALiBi head has saturated (change < {} beyond {})",
            p.growth_head, p.growth_min_step, p.alibi_flat_tol, p.flat_from
        ),
        min_step >= p.growth_min_step && flat < flat_tol_f,
        format!("smallest Sandwich step {min_step:.4}; ALiBi change {flat:.2e}"),
    );

    // ----- report -----
    o.figure(
        format!("Sandwich h = {}: T({lmax})/T({})", p.growth_head, lens[0]),
        ratio.mid_f64(),
        ratio.fmt_outward(5),
    );
    o.figure(
        format!(
            "ALiBi m = {}: mass beyond {w} at L = {lmax}",
            p.mass_beyond.slope
        ),
        mass.mid_f64(),
        mass.fmt_outward(6),
    );
    o.figure(
        format!("Sandwich h = {}: T({lmax})", p.growth_head),
        g[lens.len() - 1].mid_f64(),
        g[lens.len() - 1].fmt_outward(6),
    );
    o.tables.push(table);
    let mut at = Table::new(
        format!(
            "ALiBi tail beyond {w} ({} rule, H = {}), certified enclosures",
            p.alibi_rule.as_str(),
            p.alibi_heads
        ),
        &{
            let mut c = vec!["m".to_string()];
            c.extend(lens.iter().map(|l| format!("L = {l}")));
            c.push(format!("e^(−{w}m)"));
            c
        }
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>(),
    );
    for (q, ts, lim) in &alibi_rows {
        let mut row = vec![fmt_slope(q)];
        row.extend(ts.iter().map(|t| t.fmt_outward(5)));
        row.push(lim.fmt_outward(5));
        at.row(row);
    }
    o.tables.push(at);
    // plot T(L) for the Sandwich heads and the ALiBi reference slopes
    let grid: Vec<u64> = {
        let mut v = Vec::new();
        let mut l = (w + 1) as f64;
        while (l as u64) < lmax {
            v.push(l as u64);
            l *= 1.1;
        }
        v.push(lmax);
        v.dedup();
        v
    };
    let mut series = Vec::new();
    for (h, pre) in plot_heads.iter().zip(&plot_prefix) {
        let pts = grid
            .iter()
            .map(|&l| {
                let s_l = &pre[l as usize];
                let t = &(s_l - &pre[w as usize]) / s_l;
                (l as f64, t.mid_f64())
            })
            .collect();
        series.push(Series {
            name: format!("Sandwich h = {h}"),
            style: Style::Line,
            points: pts,
        });
    }
    for r in &p.alibi_reference {
        let m = Interval::from_rational(prec, &parse_rational(&r.slope).expect("validated"));
        series.push(Series {
            name: format!("ALiBi m = {}", r.slope),
            style: Style::Dashed,
            points: grid
                .iter()
                .map(|&l| (l as f64, alibi_tail(&m, w, l).mid_f64()))
                .collect(),
        });
    }
    let c = compression_ratio(p.sandwich_heads, p.sandwich_heads);
    series.push(Series {
        name: format!("bound (ii), h = {}", p.sandwich_heads),
        style: Style::Points,
        points: lens
            .iter()
            .map(|&l| {
                (
                    l as f64,
                    sandwich_lower_bound(p.sandwich_dbar, &c, w, l, prec).mid_f64(),
                )
            })
            .collect(),
    });
    o.plots.push(Plot {
        slug: "tail-vs-length".into(),
        title: format!("Attention mass beyond {w} against the evaluation length (uniform content)"),
        x_label: "evaluation length L".into(),
        y_label: format!("tail beyond {w}"),
        x_log: true,
        y_log: false,
        series,
        heatmap: None,
        paths: false,
    });
    o.note(
        "Rigour. (i), (ii), the §3 table, the certified growth factor and (iii) are certified finite statements; \
         the claim's growth pattern (Sandwich keeps using more context as L grows, ALiBi does not) is asymptotic \
         and is only observed here, so the spec seeks `supported`.",
    );
    o.note(format!(
        "positional.md §2 gives T_{}({lmax})/T_{}({}) as \"actual 4.07\"; the certified ratio is {} (4.08 to three \
         figures). 4.07 matches the ratio of the rounded §3 entries (0.5012/0.1230 = 4.0748); the certified check \
         only asserts ≥ {}.",
        p.growth_head,
        p.growth_head,
        lens[0],
        ratio.fmt_outward(6),
        p.growth_min_ratio
    ));
    o.note(
        "With flat content 13.5% of the m = 2^−8 head's mass lies beyond 512, so \"ALiBi uses no tokens beyond \
         L_tr\" is a property of trained content logits (positional/trained-model-claims), not of the bias alone.",
    );
    o
}
