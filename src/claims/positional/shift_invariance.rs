//! positional/shift-invariance: softmax(s + c𝟙) = softmax(s), hence ALiBi's bias
//! −m(i − j) equals the official code's +m·j after the causal mask, and Sandwich gives
//! the same attention with or without centring.
//!
//! The identity is algebra (e^{s_j + c} / Σ_k e^{s_k + c} = e^{s_j} / Σ_k e^{s_k}); what a
//! computation can certify about it is:
//! - for dyadic slopes (integer q), the two ALiBi logit rows c_j − m(i − j) and c_j + m·j
//!   are exact dyadics and differ by exactly the constant m·i, entry by entry (exact
//!   arithmetic: every interval involved is a point), so the two rows have identical
//!   softmax by the identity;
//! - for every slope (including the irrational ones of the H = 12 paper rule) and for
//!   Sandwich centred vs uncentred, the certified softmax enclosures of the two rows
//!   overlap entrywise — consistency, no contradiction with the identity — and are
//!   narrow (a width bound is certified), so the overlap test is sharp;
//! - a plain f64 log-sum-exp softmax, computed both ways, lies within `f64_tol` of the
//!   certified enclosures and of itself (the kernel decides these distances between
//!   concrete doubles and enclosures).

use super::alibi_tail_bound::fmt_slope;
use super::common::{
    check_dbar, check_heads, compression_ratio, sandwich_centred_f64, sandwich_centred_many,
    sandwich_freqs, sandwich_freqs_f64, slope_exponents, slope_interval, IndexFrom, SlopeRule,
    SplitMix64,
};
use crate::claims::Ctx;
use crate::kernel::{parse_rational, softmax, Certainty, Interval};
use crate::outcome::{Outcome, Table};
use crate::spec::{ensure, ensure_each, FieldError};
use rayon::prelude::*;
use rug::Rational;
use serde::{Deserialize, Serialize};

/// Parameters of positional/shift-invariance.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// ALiBi head counts (every slope of each is checked).
    pub heads: Vec<usize>,
    /// Slope rules.
    pub rules: Vec<SlopeRule>,
    /// Sequence lengths L.
    pub lengths: Vec<u64>,
    /// Query rows per length (the last row i = L − 1 is always included), one per length.
    pub rows: Vec<u64>,
    /// Content logits are k/2^content_bits ∈ [−8, 8].
    pub content_bits: u32,
    /// Seed of the content and of the rows.
    pub seed: u64,
    /// Tolerance of the f64 log-sum-exp rows (exact literal).
    pub f64_tol: String,
    /// Sandwich d̄.
    pub sandwich_dbar: u32,
    /// Sandwich heads H (c_h = 8h/H, h = 1..H).
    pub sandwich_heads: usize,
    /// Sandwich index convention.
    pub sandwich_index: IndexFrom,
    /// Certified bound on every enclosure's width (exact literal): keeps the overlap
    /// test sharp.
    pub max_width: String,
}

impl crate::spec::Params for Params {
    fn validate(&self) -> Result<(), FieldError> {
        ensure_each(&self.heads, "heads", |&h| check_heads(h))?;
        ensure_each(&self.rules, "rules", |_| Ok(()))?;
        ensure_each(&self.lengths, "lengths", |&l| {
            if (1..=65_536).contains(&l) {
                Ok(())
            } else {
                Err("length must lie in 1..=65536".into())
            }
        })?;
        ensure(
            self.rows.len() == self.lengths.len(),
            "rows",
            format!(
                "give one row count per length ({} lengths, {} counts)",
                self.lengths.len(),
                self.rows.len()
            ),
        )?;
        for (k, (&r, &l)) in self.rows.iter().zip(&self.lengths).enumerate() {
            ensure(
                r >= 1 && r <= l,
                format!("rows[{k}]"),
                format!("must lie in 1..={l} (the length)"),
            )?;
        }
        ensure(
            (0..=40).contains(&self.content_bits),
            "content_bits",
            "must lie in 0..=40",
        )?;
        let t =
            parse_rational(&self.f64_tol).map_err(|e| FieldError::new("f64_tol", e.to_string()))?;
        ensure(t > 0, "f64_tol", "must be positive")?;
        let t = parse_rational(&self.max_width)
            .map_err(|e| FieldError::new("max_width", e.to_string()))?;
        ensure(t > 0, "max_width", "must be positive")?;
        check_dbar(self.sandwich_dbar).map_err(|r| FieldError::new("sandwich_dbar", r))?;
        check_heads(self.sandwich_heads).map_err(|r| FieldError::new("sandwich_heads", r))?;
        Ok(())
    }
}

/// A plain f64 softmax by log-sum-exp: p_j = exp(z_j − (M + ln Σ_k exp(z_k − M))).
pub fn softmax_f64(z: &[f64]) -> Vec<f64> {
    let m = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let s: f64 = z.iter().map(|x| (x - m).exp()).sum();
    let lse = m + s.ln();
    z.iter().map(|x| (x - lse).exp()).collect()
}

/// What one pair of rows (computed both ways) gave.
#[derive(Clone, Debug)]
pub struct RowResult {
    /// For exact rows: every logit difference is the point `shift` (None when the
    /// logits are not exact points).
    pub exact_shift: Option<bool>,
    /// The certified softmax enclosures overlap entrywise.
    pub overlap: bool,
    /// Every enclosure's width ≤ max_width.
    pub narrow: Certainty,
    /// The f64 rows lie within tol of the enclosures and of each other.
    pub f64_ok: Certainty,
    /// max over entries of the enclosures' width (upper bound, display).
    pub width: f64,
    /// max over entries of |p_f64 − mid| (display).
    pub f64_dev: f64,
}

/// Compares two logit rows that should differ by a constant: `a`, `b` in intervals,
/// `af`, `bf` the same rows in f64; `shift` the exact constant if the rows are exact.
pub fn compare_rows(
    a: &[Interval],
    b: &[Interval],
    af: &[f64],
    bf: &[f64],
    shift: Option<&Interval>,
    tol: &Interval,
    max_width: &Interval,
) -> RowResult {
    let prec = tol.prec();
    let exact_shift = shift.map(|c| {
        a.iter()
            .zip(b)
            .all(|(x, y)| (y - x).eq_exact(c) == Certainty::True)
    });
    let pa = softmax(a);
    let pb = softmax(b);
    let fa = softmax_f64(af);
    let fb = softmax_f64(bf);
    let mut overlap = true;
    let mut narrow = Certainty::True;
    let mut f64_ok = Certainty::True;
    let mut width = 0f64;
    let mut dev = 0f64;
    for k in 0..pa.len() {
        overlap &= pa[k].overlaps(&pb[k]);
        for p in [&pa[k], &pb[k]] {
            let w = Interval::from_endpoints(p.width_up(), p.width_up());
            narrow = narrow.and(w.le(max_width));
            width = width.max(w.hi_f64());
        }
        let xa = Interval::from_f64(prec, fa[k]);
        let xb = Interval::from_f64(prec, fb[k]);
        f64_ok = f64_ok
            .and((&xa - &pa[k]).abs().le(tol))
            .and((&xb - &pb[k]).abs().le(tol))
            .and((&xa - &xb).abs().le(tol));
        dev = dev
            .max((fa[k] - pa[k].mid_f64()).abs())
            .max((fb[k] - pb[k].mid_f64()).abs());
    }
    RowResult {
        exact_shift,
        overlap,
        narrow,
        f64_ok,
        width,
        f64_dev: dev,
    }
}

/// The query rows of a length: the last one, then distinct random ones.
fn query_rows(len: u64, count: u64, rng: &mut SplitMix64) -> Vec<u64> {
    let mut rows = vec![len - 1];
    while (rows.len() as u64) < count {
        let i = rng.below(len);
        if !rows.contains(&i) {
            rows.push(i);
        }
    }
    rows
}

/// One group of rows (a slope or a Sandwich head) summarised.
struct Group {
    label: String,
    rows: usize,
    entries: usize,
    exact: Option<bool>,
    overlap: bool,
    narrow: Certainty,
    f64_ok: Certainty,
    width: f64,
    f64_dev: f64,
}

fn summarise(label: String, rs: &[(usize, RowResult)]) -> Group {
    let exact = if rs.iter().all(|(_, r)| r.exact_shift.is_some()) {
        Some(rs.iter().all(|(_, r)| r.exact_shift == Some(true)))
    } else {
        None
    };
    Group {
        label,
        rows: rs.len(),
        entries: rs.iter().map(|(n, _)| n).sum(),
        exact,
        overlap: rs.iter().all(|(_, r)| r.overlap),
        narrow: Certainty::all(rs.iter().map(|(_, r)| r.narrow)),
        f64_ok: Certainty::all(rs.iter().map(|(_, r)| r.f64_ok)),
        width: rs.iter().map(|(_, r)| r.width).fold(0.0, f64::max),
        f64_dev: rs.iter().map(|(_, r)| r.f64_dev).fold(0.0, f64::max),
    }
}

/// Runs the claim.
pub fn run(p: &Params, ctx: &Ctx) -> Outcome {
    let prec = ctx.prec();
    let mut o = Outcome::new();
    let tol = Interval::from_rational(prec, &parse_rational(&p.f64_tol).expect("validated"));
    let max_width =
        Interval::from_rational(prec, &parse_rational(&p.max_width).expect("validated"));
    let mut rng = SplitMix64::new(p.seed);
    let lmax = p.lengths.iter().copied().max().unwrap_or(1) as usize;
    // content logits k/2^bits ∈ [−8, 8], one vector shared by every row and head
    let span = 16u64 << p.content_bits;
    let content_k: Vec<i64> = (0..lmax)
        .map(|_| rng.range(0, span) as i64 - (8i64 << p.content_bits))
        .collect();
    let cbits = p.content_bits as i32;
    let content: Vec<Interval> = content_k
        .iter()
        .map(|&k| Interval::from_i64(prec, k).mul_2exp(-cbits))
        .collect();
    let content_f: Vec<f64> = content_k
        .iter()
        .map(|&k| k as f64 / (1u64 << p.content_bits) as f64)
        .collect();
    let rows: Vec<(u64, u64)> = p
        .lengths
        .iter()
        .zip(&p.rows)
        .flat_map(|(&l, &n)| query_rows(l, n, &mut rng).into_iter().map(move |i| (l, i)))
        .collect();
    ctx.progress.message(format!("{}: ALiBi rows", ctx.spec.id));

    // ----- ALiBi: −m(i − j) vs +m·j -----
    let mut slopes: Vec<(String, Rational)> = Vec::new();
    for &h in &p.heads {
        for &rule in &p.rules {
            for (k, q) in slope_exponents(h, rule).into_iter().enumerate() {
                slopes.push((format!("H = {h} {}, head {}", rule.as_str(), k + 1), q));
            }
        }
    }
    let alibi: Vec<Group> = slopes
        .par_iter()
        .map(|(label, q)| {
            let m = slope_interval(q, prec);
            let mf = 2f64.powf(-q.to_f64());
            let rs: Vec<(usize, RowResult)> = rows
                .iter()
                .map(|&(_, i)| {
                    let n = i as usize + 1;
                    let mut a = Vec::with_capacity(n);
                    let mut b = Vec::with_capacity(n);
                    let mut af = Vec::with_capacity(n);
                    let mut bf = Vec::with_capacity(n);
                    for j in 0..n {
                        let r = (i as usize - j) as i64;
                        a.push(&content[j] - &m.mul_i64(r));
                        b.push(&content[j] + &m.mul_i64(j as i64));
                        af.push(content_f[j] - mf * r as f64);
                        bf.push(content_f[j] + mf * j as f64);
                    }
                    let shift = m.mul_i64(i as i64);
                    let exact = m.is_point();
                    (
                        n,
                        compare_rows(&a, &b, &af, &bf, exact.then_some(&shift), &tol, &max_width),
                    )
                })
                .collect();
            summarise(format!("{label}: m = {}", fmt_slope(q)), &rs)
        })
        .collect();

    // ----- Sandwich: centred vs uncentred -----
    ctx.progress
        .message(format!("{}: Sandwich rows", ctx.spec.id));
    let freqs = sandwich_freqs(p.sandwich_dbar, p.sandwich_index, prec);
    let freqs_f = sandwich_freqs_f64(p.sandwich_dbar, p.sandwich_index);
    let rs_all: Vec<i64> = (0..lmax as i64).collect();
    let bt = sandwich_centred_many(&rs_all, &freqs);
    let bt_f: Vec<f64> = rs_all
        .iter()
        .map(|&r| sandwich_centred_f64(r as f64, &freqs_f))
        .collect();
    let half = i64::from(p.sandwich_dbar / 2); // |I| = d̄/2 terms
    let sandwich: Vec<Group> = (1..=p.sandwich_heads)
        .into_par_iter()
        .map(|h| {
            let c = Interval::from_rational(prec, &compression_ratio(h, p.sandwich_heads));
            let cf = c.mid_f64();
            let rs: Vec<(usize, RowResult)> = rows
                .iter()
                .map(|&(_, i)| {
                    let n = i as usize + 1;
                    let mut a = Vec::with_capacity(n);
                    let mut b = Vec::with_capacity(n);
                    let mut af = Vec::with_capacity(n);
                    let mut bf = Vec::with_capacity(n);
                    for j in 0..n {
                        let r = i as usize - j;
                        let un = &bt[r] + &Interval::from_i64(prec, half);
                        a.push(&content[j] + &(&bt[r] / &c));
                        b.push(&content[j] + &(&un / &c));
                        af.push(content_f[j] + bt_f[r] / cf);
                        bf.push(content_f[j] + (bt_f[r] + half as f64) / cf);
                    }
                    (n, compare_rows(&a, &b, &af, &bf, None, &tol, &max_width))
                })
                .collect();
            summarise(
                format!(
                    "Sandwich h = {h}: c_h = {}",
                    compression_ratio(h, p.sandwich_heads)
                ),
                &rs,
            )
        })
        .collect();

    // ----- checks -----
    let n_rows = rows.len();
    let lengths_txt = format!("L ∈ {:?}, {n_rows} query rows (incl. i = L − 1)", p.lengths);
    let groups = |v: &[Group], f: &dyn Fn(&Group) -> bool| -> String {
        let bad: Vec<&str> = v
            .iter()
            .filter(|g| !f(g))
            .map(|g| g.label.as_str())
            .collect();
        if bad.is_empty() {
            "none".into()
        } else {
            bad.join(", ")
        }
    };
    let dyadic: Vec<&Group> = alibi.iter().filter(|g| g.exact.is_some()).collect();
    let irr = alibi.len() - dyadic.len();
    o.checks.certify(
        "ALiBi, dyadic slopes: the logit rows c_j − m(i − j) and c_j + m·j are exact dyadics differing by exactly m·i \
         in every entry (so their softmaxes are equal by softmax(s + c𝟙) = softmax(s))",
        Certainty::exact(dyadic.iter().all(|g| g.exact == Some(true))),
        format!(
            "{} dyadic slopes × {lengths_txt}; failures: {}",
            dyadic.len(),
            groups(&alibi, &|g| g.exact != Some(false))
        ),
    );
    o.checks.certify(
        "ALiBi, every slope: certified softmax enclosures of the two rows overlap entrywise (consistency with the \
         identity; disjoint enclosures would refute it)",
        Certainty::exact(alibi.iter().all(|g| g.overlap)),
        format!(
            "{} slopes ({irr} irrational, enclosed) × {lengths_txt}; non-overlapping: {}",
            alibi.len(),
            groups(&alibi, &|g| g.overlap)
        ),
    );
    let w_alibi = alibi.iter().map(|g| g.width).fold(0.0, f64::max);
    o.checks.certify(
        format!(
            "ALiBi: every probability enclosure is narrower than {} (the overlap test is sharp)",
            p.max_width
        ),
        Certainty::all(alibi.iter().map(|g| g.narrow)),
        format!("largest width ≤ {w_alibi:.3e}"),
    );
    let d_alibi = alibi.iter().map(|g| g.f64_dev).fold(0.0, f64::max);
    o.checks.certify(
        format!(
            "ALiBi: an f64 log-sum-exp softmax, both ways, lies within {} of the certified enclosures and of itself",
            p.f64_tol
        ),
        Certainty::all(alibi.iter().map(|g| g.f64_ok)),
        format!("largest |p_f64 − mid| ≈ {d_alibi:.3e}"),
    );
    o.checks.certify(
        format!(
            "Sandwich (d̄ = {}, {}, H = {}): centred and uncentred (B̃ + d̄/2) rows have overlapping softmax enclosures \
             for every head (consistency)",
            p.sandwich_dbar,
            p.sandwich_index.label(),
            p.sandwich_heads
        ),
        Certainty::exact(sandwich.iter().all(|g| g.overlap)),
        format!(
            "{} heads × {lengths_txt}; non-overlapping: {}",
            sandwich.len(),
            groups(&sandwich, &|g| g.overlap)
        ),
    );
    let w_s = sandwich.iter().map(|g| g.width).fold(0.0, f64::max);
    o.checks.certify(
        format!(
            "Sandwich: every probability enclosure is narrower than {}",
            p.max_width
        ),
        Certainty::all(sandwich.iter().map(|g| g.narrow)),
        format!("largest width ≤ {w_s:.3e}"),
    );
    let d_s = sandwich.iter().map(|g| g.f64_dev).fold(0.0, f64::max);
    o.checks.certify(
        format!(
            "Sandwich: an f64 log-sum-exp softmax, both ways, lies within {} of the certified enclosures and of itself",
            p.f64_tol
        ),
        Certainty::all(sandwich.iter().map(|g| g.f64_ok)),
        format!("largest |p_f64 − mid| ≈ {d_s:.3e}"),
    );

    // ----- report -----
    let entries: usize = alibi.iter().chain(&sandwich).map(|g| g.entries).sum();
    o.figure(
        "softmax entries compared both ways",
        entries as f64,
        format!(
            "{entries} ({} ALiBi slopes + {} Sandwich heads, {n_rows} rows, L up to {lmax})",
            alibi.len(),
            sandwich.len()
        ),
    );
    o.figure(
        "largest probability enclosure width",
        f64::max(w_alibi, w_s),
        format!("{:.3e}", f64::max(w_alibi, w_s)),
    );
    let mut t = Table::new(
        "Rows computed both ways (ALiBi: −m(i − j) vs +m·j; Sandwich: centred vs uncentred)",
        &[
            "slope / head",
            "rows",
            "entries",
            "exact constant shift",
            "enclosures overlap",
            "max width",
            "max |p_f64 − mid|",
        ],
    );
    for g in alibi.iter().chain(&sandwich) {
        t.row(vec![
            g.label.clone(),
            g.rows.to_string(),
            g.entries.to_string(),
            match g.exact {
                Some(true) => "yes (exact dyadics)".into(),
                Some(false) => "NO".into(),
                None if g.label.starts_with("Sandwich") => "n/a (B̃ enclosed)".into(),
                None => "n/a (irrational slope; enclosed)".into(),
            },
            if g.overlap { "yes" } else { "NO" }.into(),
            format!("{:.2e}", g.width),
            format!("{:.2e}", g.f64_dev),
        ]);
    }
    o.tables.push(t);
    let mut rt = Table::new("Query rows", &["L", "rows i"]);
    for &l in &p.lengths {
        let is: Vec<String> = rows
            .iter()
            .filter(|(ll, _)| *ll == l)
            .map(|(_, i)| i.to_string())
            .collect();
        rt.row(vec![l.to_string(), is.join(", ")]);
    }
    o.tables.push(rt);
    o.note(
        "What is certified. softmax(s + c𝟙) = softmax(s) is an algebraic identity. For dyadic slopes the run proves, \
         in exact arithmetic, that the two ALiBi logit rows differ by exactly the constant m·i, so the identity applies \
         verbatim. For irrational slopes and for Sandwich the logits are enclosures, and the run certifies only that \
         the two softmax enclosures overlap (no contradiction) and are narrow; it is not a numerical proof of \
         equality, which needs the identity.",
    );
    o.note(
        "Sandwich's uncentred bias is formed as B̃(r) + d̄/2 (= Σ_i cos(r ω_i), since |I| = d̄/2) from the certified \
         centred values; each row is divided by c_h before the content is added.",
    );
    o
}
