//! positional/shift-invariance: softmax(s + c𝟙) = softmax(s), hence ALiBi's bias
//! −m(i − j) equals the official code's +m·j after the causal mask, and Sandwich gives
//! the same attention with or without centring.
//!
//! The identity is algebra (e^{s_j + c} / Σ_k e^{s_k + c} = e^{s_j} / Σ_k e^{s_k}); what a
//! computation can prove about it is one obligation of the statement:
//! - for dyadic slopes (integer q), the two ALiBi bias rows −m(i − j) and +m·j are exact
//!   dyadics and differ by exactly the constant m·i in every entry j ≤ i of every query
//!   row (exact arithmetic), so with any content the two logit rows have identical
//!   softmax by the identity.
//!
//! The rest are readings, observations that never certify nor refute:
//! - for every slope (including the irrational ones of the H = 12 paper rule) and for
//!   Sandwich centred vs uncentred, the softmax enclosures of the two rows overlap
//!   entrywise (consistency: disjoint enclosures would contradict the identity), and
//!   they are narrow (observed), so the overlap test is sharp;
//! - a plain f64 log-sum-exp softmax, computed both ways, lies within `f64_tol` of the
//!   enclosures and of itself (observed).

use super::alibi_tail_bound::fmt_slope;
use super::common::{
    check_dbar, check_heads, compression_ratio, sandwich_centred_f64, sandwich_centred_many,
    sandwich_freqs, sandwich_freqs_f64, slope_exponents, slope_interval, IndexFrom, SlopeRule,
    SplitMix64,
};
use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::{Exact, StatementError};
use crate::kernel::expr::build::{and, eq, forall, mul, neg, q, sub, var, Formula};
use crate::kernel::{softmax, Certainty, Checked, Interval, Statement};
use crate::outcome::{Observations, Presentation, Table};
use crate::reading::{Agreement, Reading};
use crate::spec::{check_each, ensure, FieldError};
use rayon::prelude::*;
use rug::Rational;
use serde::{Deserialize, Serialize};

/// Parameters of positional/shift-invariance as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
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

/// Parameters of positional/shift-invariance, resolved: the raw ones (every other field
/// needs no resolution beyond its type and range) and the two exact literals.
#[derive(Debug, Clone)]
pub struct Params {
    /// The parameters as written.
    pub raw: Raw,
    /// Tolerance of the f64 log-sum-exp rows, positive.
    pub f64_tol: Exact,
    /// Certified bound on every enclosure's width, positive.
    pub max_width: Exact,
}

/// positional/shift-invariance.
pub struct Claim;

/// Bound on a run's work, (Σ_H H·|rules| + sandwich_heads)·Σ_k rows_k·L_k + max L·d̄/2: every query
/// row of every length is computed both ways, in enclosures and in f64, once per ALiBi slope and
/// per Sandwich head, after the cosines of B̃(r) for r below the longest length, weighed at the
/// spec's precision ([`crate::claims::shape::Resolving::weigh`]): 2^24. The committed quick profile
/// is 52·5376 + 4096·64 ≈ 2^18.9 (3 CPU-s) and the full one ≈ 2^21.1; 256 rows at L = 4096 (2^25.7)
/// took 195 CPU-s, and the fields' own limits allowed 65536 rows of length 65536 for every slope
/// (weeks).
pub const MAX_WORK: u128 = 1 << 24;

/// The work [`MAX_WORK`] bounds, saturating.
fn work(raw: &Raw) -> u64 {
    let slopes: u64 = raw
        .heads
        .iter()
        .map(|&h| (h as u64).saturating_mul(raw.rules.len() as u64))
        .fold(raw.sandwich_heads as u64, u64::saturating_add);
    let entries = raw
        .rows
        .iter()
        .zip(&raw.lengths)
        .map(|(&r, &l)| r.saturating_mul(l))
        .fold(0, u64::saturating_add);
    let lmax = raw.lengths.iter().copied().max().unwrap_or(1);
    slopes
        .saturating_mul(entries)
        .saturating_add(lmax.saturating_mul(u64::from(raw.sandwich_dbar / 2)))
}

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(raw: Raw, at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        let this = &raw;
        check_each(&this.heads, "heads", |f, &x| check_heads(f, x))?;
        check_each(&this.rules, "rules", |_, _| Ok(()))?;
        check_each(&this.lengths, "lengths", |f, &l| {
            ensure((1..=65_536).contains(&l), f, "length must lie in 1..=65536")
        })?;
        ensure(
            this.rows.len() == this.lengths.len(),
            "rows",
            format!(
                "give one row count per length ({} lengths, {} counts)",
                this.lengths.len(),
                this.rows.len()
            ),
        )?;
        for (k, (&r, &l)) in this.rows.iter().zip(&this.lengths).enumerate() {
            ensure(
                r >= 1 && r <= l,
                format!("rows[{k}]"),
                format!("must lie in 1..={l} (the length)"),
            )?;
        }
        ensure(
            (0..=40).contains(&this.content_bits),
            "content_bits",
            "must lie in 0..=40",
        )?;
        let f64_tol = Exact::parse("f64_tol", &this.f64_tol)?;
        ensure(*f64_tol > 0, "f64_tol", "must be positive")?;
        let max_width = Exact::parse("max_width", &this.max_width)?;
        ensure(*max_width > 0, "max_width", "must be positive")?;
        check_dbar("sandwich_dbar", this.sandwich_dbar)?;
        check_heads("sandwich_heads", this.sandwich_heads)?;
        let w = u128::from(work(this));
        ensure(
            at.weigh(w) <= MAX_WORK,
            "rows",
            format!(
                "(Σ heads·|rules| + sandwich_heads)·Σ rows·L + max L·d̄/2 is {}, above the \
                 bound 2^24 (about a minute): use fewer rows, shorter lengths, fewer heads or \
                 a lower precision",
                at.show(w)
            ),
        )?;
        Ok(Params {
            raw,
            f64_tol,
            max_width,
        })
    }
    fn statement(
        p: &Params,
        claim: &str,
        _hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        let mut st = Statement::new(claim);
        let rows: Vec<u64> = p.query_rows().into_iter().map(|(_, i)| i).collect();
        let mut parts = Vec::new();
        for (_, q_) in p.slopes() {
            if let Some(m) = dyadic_slope(&q_) {
                parts.extend(rows.iter().map(|&i| shift_formula(&m, i)));
            }
        }
        if parts.is_empty() {
            return None;
        }
        st.state(EXACT_SHIFT, &and(parts));
        Some(Ok(st))
    }
    type Witness = Found;
    /// Both ways of every row, in enclosures and in f64.
    fn witness(p: &Params, ctx: &Ctx) -> Found {
        let prec = ctx.prec();
        let tol = Interval::from_rational(prec, &p.f64_tol);
        let max_width = Interval::from_rational(prec, &p.max_width);
        let lmax = p.raw.lengths.iter().copied().max().unwrap_or(1) as usize;
        // content logits k/2^bits ∈ [−8, 8], one vector shared by every row and head
        let (content_k, rows) = p.draw();
        let cbits = p.raw.content_bits as i32;
        let content: Vec<Interval> = content_k
            .iter()
            .map(|&k| Interval::from_i64(prec, k).mul_2exp(-cbits))
            .collect();
        let content_f: Vec<f64> = content_k
            .iter()
            .map(|&k| k as f64 / (1u64 << p.raw.content_bits) as f64)
            .collect();
        ctx.progress.message(format!("{}: ALiBi rows", ctx.spec.id));

        // ----- ALiBi: −m(i − j) vs +m·j -----
        let slopes = p.slopes();
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
                        (n, compare_rows(&a, &b, &af, &bf, &tol, &max_width))
                    })
                    .collect();
                summarise(
                    format!("{label}: m = {}", fmt_slope(q)),
                    dyadic_slope(q).is_some(),
                    &rs,
                )
            })
            .collect();

        // ----- Sandwich: centred vs uncentred -----
        ctx.progress
            .message(format!("{}: Sandwich rows", ctx.spec.id));
        let freqs = sandwich_freqs(p.raw.sandwich_dbar, p.raw.sandwich_index, prec);
        let freqs_f = sandwich_freqs_f64(p.raw.sandwich_dbar, p.raw.sandwich_index);
        let rs_all: Vec<i64> = (0..lmax as i64).collect();
        let bt = sandwich_centred_many(&rs_all, &freqs);
        let bt_f: Vec<f64> = rs_all
            .iter()
            .map(|&r| sandwich_centred_f64(r as f64, &freqs_f))
            .collect();
        let half = i64::from(p.raw.sandwich_dbar / 2); // |I| = d̄/2 terms
        let sandwich: Vec<Group> = (1..=p.raw.sandwich_heads)
            .into_par_iter()
            .map(|h| {
                let c = Interval::from_rational(prec, &compression_ratio(h, p.raw.sandwich_heads));
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
                        (n, compare_rows(&a, &b, &af, &bf, &tol, &max_width))
                    })
                    .collect();
                summarise(
                    format!(
                        "Sandwich h = {h}: c_h = {}",
                        compression_ratio(h, p.raw.sandwich_heads)
                    ),
                    false,
                    &rs,
                )
            })
            .collect();

        Found {
            rows,
            alibi,
            sandwich,
        }
    }
    /// The overlap readings (consistency), the widths and the f64 agreement (observed).
    fn observe(p: &Params, w: &Found, _: Option<&Checked>, _: &Ctx, o: &mut Observations) {
        let (rows, alibi, sandwich) = (&w.rows, &w.alibi, &w.sandwich);
        let n_rows = rows.len();
        let lengths_txt = format!(
            "L ∈ {:?}, {n_rows} query rows (incl. i = L − 1)",
            p.raw.lengths
        );
        let dyadic = alibi.iter().filter(|g| g.dyadic).count();
        let irr = alibi.len() - dyadic;
        let all = |v: &[Group]| first_violated(v.iter().map(|g| g.overlap)).expect("a group");
        o.consistency(
            "ALiBi, every slope: the softmax enclosures of the two rows overlap entrywise (consistency with the \
             identity: disjoint enclosures would contradict it; overlap proves nothing)",
            all(alibi),
            format!(
                "consistency reading over {} slopes ({dyadic} dyadic, proven exactly above; {irr} irrational, enclosed) \
                 × {lengths_txt}; non-overlapping: {}",
                alibi.len(),
                groups(alibi, &|g| !g.overlap.violated())
            ),
        );
        let w_alibi = alibi.iter().map(|g| g.width).fold(0.0, f64::max);
        o.observe(
            format!(
                "ALiBi: every probability enclosure is narrower than {} (the overlap reading is sharp)",
                p.max_width
            ),
            alibi.iter().all(|g| g.narrow),
            format!("largest width ≤ {w_alibi:.3e}"),
        );
        let d_alibi = alibi.iter().map(|g| g.f64_dev).fold(0.0, f64::max);
        o.observe(
            format!(
                "ALiBi: an f64 log-sum-exp softmax, both ways, lies within {} of the enclosures and of itself",
                p.f64_tol
            ),
            alibi.iter().all(|g| g.f64_ok),
            format!("largest |p_f64 − mid| ≈ {d_alibi:.3e}"),
        );
        o.consistency(
            format!(
                "Sandwich (d̄ = {}, {}, H = {}): centred and uncentred (B̃ + d̄/2) rows have overlapping softmax enclosures \
                 for every head (consistency)",
                p.raw.sandwich_dbar,
                p.raw.sandwich_index.label(),
                p.raw.sandwich_heads
            ),
            all(sandwich),
            format!(
                "consistency reading over {} heads × {lengths_txt}; non-overlapping: {}",
                sandwich.len(),
                groups(sandwich, &|g| !g.overlap.violated())
            ),
        );
        let w_s = sandwich.iter().map(|g| g.width).fold(0.0, f64::max);
        o.observe(
            format!(
                "Sandwich: every probability enclosure is narrower than {}",
                p.max_width
            ),
            sandwich.iter().all(|g| g.narrow),
            format!("largest width ≤ {w_s:.3e}"),
        );
        let d_s = sandwich.iter().map(|g| g.f64_dev).fold(0.0, f64::max);
        o.observe(
            format!(
                "Sandwich: an f64 log-sum-exp softmax, both ways, lies within {} of the enclosures and of itself",
                p.f64_tol
            ),
            sandwich.iter().all(|g| g.f64_ok),
            format!("largest |p_f64 − mid| ≈ {d_s:.3e}"),
        );
    }
    /// The figures, the tables of rows and the notes.
    fn present(p: &Params, w: &Found, _: Option<&Checked>, _: &Ctx, o: &mut Presentation) {
        let (rows, alibi, sandwich) = (&w.rows, &w.alibi, &w.sandwich);
        let n_rows = rows.len();
        let lmax = p.raw.lengths.iter().copied().max().unwrap_or(1) as usize;
        let w_alibi = alibi.iter().map(|g| g.width).fold(0.0, f64::max);
        let w_s = sandwich.iter().map(|g| g.width).fold(0.0, f64::max);
        let entries: usize = alibi.iter().chain(sandwich).map(|g| g.entries).sum();
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
        for g in alibi.iter().chain(sandwich) {
            t.row(vec![
                g.label.clone(),
                g.rows.to_string(),
                g.entries.to_string(),
                if g.dyadic {
                    "proven (exact dyadics: the statement's obligation)".into()
                } else if g.label.starts_with("Sandwich") {
                    "n/a (B̃ enclosed)".into()
                } else {
                    "n/a (irrational slope; enclosed)".into()
                },
                if g.overlap.violated() { "NO" } else { "yes" }.into(),
                format!("{:.2e}", g.width),
                format!("{:.2e}", g.f64_dev),
            ]);
        }
        o.tables.push(t);
        let mut rt = Table::new("Query rows", &["L", "rows i"]);
        for &l in &p.raw.lengths {
            let is: Vec<String> = rows
                .iter()
                .filter(|(ll, _)| *ll == l)
                .map(|(_, i)| i.to_string())
                .collect();
            rt.row(vec![l.to_string(), is.join(", ")]);
        }
        o.tables.push(rt);
        o.note(
            "What is certified. softmax(s + c𝟙) = softmax(s) is an algebraic identity. For dyadic slopes the statement \
             proves, in exact arithmetic, that the two ALiBi bias rows differ by exactly the constant m·i, so the identity \
             applies verbatim. For irrational slopes and for Sandwich the logits are enclosures: the two softmax \
             enclosures overlap (a consistency reading: observed, it neither refutes nor proves the identity) and are \
             narrow (observed). So the claim is supported, not certified.",
        );
        o.note(
            "Sandwich's uncentred bias is formed as B̃(r) + d̄/2 (= Σ_i cos(r ω_i), since |I| = d̄/2) from the certified \
             centred values; each row is divided by c_h before the content is added.",
        );
    }
}

/// The obligation name of the exact shift (stable: `--check` compares it).
pub const EXACT_SHIFT: &str = "ALiBi, dyadic slopes: the bias rows −m(i − j) and +m·j are exact dyadics differing \
     by exactly m·i in every entry j ≤ i of every query row (so with any content the two logit rows have equal \
     softmax by softmax(s + c𝟙) = softmax(s))";

/// The slope 2^{−q} as an exact rational when q is an integer (a dyadic slope).
pub fn dyadic_slope(q: &Rational) -> Option<Rational> {
    if q.denom() != &1 {
        return None;
    }
    let e = q.numer().to_i32()?;
    let two = Rational::from(2);
    Some(if e >= 0 {
        Rational::from(rug::ops::Pow::pow(&two.recip(), e.unsigned_abs()))
    } else {
        Rational::from(rug::ops::Pow::pow(&two, e.unsigned_abs()))
    })
}

/// The formula (+m·j) − (−m(i − j)) = m·i for every j ∈ 0..=i, exact for a rational m.
pub fn shift_formula(m: &Rational, i: u64) -> Formula {
    let j = || var("j");
    forall(
        "j",
        0,
        i,
        eq(
            sub(mul([q(m), j()]), neg(mul([q(m), sub(i.into(), j())]))),
            mul([q(m), i.into()]),
        ),
    )
}

impl Params {
    /// Every ALiBi slope checked: (label, exponent q of m = 2^{−q}).
    fn slopes(&self) -> Vec<(String, Rational)> {
        let mut slopes = Vec::new();
        for &h in &self.raw.heads {
            for &rule in &self.raw.rules {
                for (k, q) in slope_exponents(h, rule).into_iter().enumerate() {
                    slopes.push((format!("H = {h} {}, head {}", rule.as_str(), k + 1), q));
                }
            }
        }
        slopes
    }

    /// The content exponents k_j (content k_j/2^bits ∈ [−8, 8]) and the query rows
    /// (L, i), both drawn from the seed in this order.
    fn draw(&self) -> (Vec<i64>, Vec<(u64, u64)>) {
        let mut rng = SplitMix64::new(self.raw.seed);
        let lmax = self.raw.lengths.iter().copied().max().unwrap_or(1) as usize;
        let span = 16u64 << self.raw.content_bits;
        let content_k: Vec<i64> = (0..lmax)
            .map(|_| rng.range(0, span) as i64 - (8i64 << self.raw.content_bits))
            .collect();
        let rows = self
            .raw
            .lengths
            .iter()
            .zip(&self.raw.rows)
            .flat_map(|(&l, &n)| query_rows(l, n, &mut rng).into_iter().map(move |i| (l, i)))
            .collect();
        (content_k, rows)
    }

    /// The query rows (L, i), re-derived from the seed.
    fn query_rows(&self) -> Vec<(u64, u64)> {
        self.draw().1
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
    /// The softmax enclosures overlap entrywise: a consistency reading (violated iff
    /// some entry's two enclosures are disjoint).
    pub overlap: Reading,
    /// Every enclosure's width ≤ max_width (observed: a property of the evidence).
    pub narrow: bool,
    /// The f64 rows lie within tol of the enclosures and of each other (observed).
    pub f64_ok: bool,
    /// max over entries of the enclosures' width (upper bound, display).
    pub width: f64,
    /// max over entries of |p_f64 − mid| (display).
    pub f64_dev: f64,
}

/// Compares two logit rows that should differ by a constant: `a`, `b` in intervals,
/// `af`, `bf` the same rows in f64.
pub fn compare_rows(
    a: &[Interval],
    b: &[Interval],
    af: &[f64],
    bf: &[f64],
    tol: &Interval,
    max_width: &Interval,
) -> RowResult {
    let prec = tol.prec();
    let pa = softmax(a);
    let pb = softmax(b);
    let fa = softmax_f64(af);
    let fb = softmax_f64(bf);
    let mut overlap: Option<Reading> = None;
    let mut narrow = true;
    let mut f64_ok = Certainty::True;
    let mut width = 0f64;
    let mut dev = 0f64;
    for k in 0..pa.len() {
        let r = pa[k].agreement(&pb[k]);
        if overlap.is_none_or(|o| !o.violated()) {
            overlap = Some(r);
        }
        for p in [&pa[k], &pb[k]] {
            let w = Interval::from_endpoints(p.width_up(), p.width_up());
            narrow &= w.le(max_width) == Certainty::True;
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
        overlap: overlap.unwrap_or_else(|| pa[0].agreement(&pa[0])),
        narrow,
        f64_ok: f64_ok == Certainty::True,
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
    dyadic: bool,
    overlap: Reading,
    narrow: bool,
    f64_ok: bool,
    width: f64,
    f64_dev: f64,
}

/// The first violated reading of a list, else its first (a group's overlap reading).
fn first_violated(rs: impl Iterator<Item = Reading>) -> Option<Reading> {
    let mut first = None;
    for r in rs {
        if r.violated() {
            return Some(r);
        }
        first.get_or_insert(r);
    }
    first
}

fn summarise(label: String, dyadic: bool, rs: &[(usize, RowResult)]) -> Group {
    Group {
        label,
        rows: rs.len(),
        entries: rs.iter().map(|(n, _)| n).sum(),
        dyadic,
        overlap: first_violated(rs.iter().map(|(_, r)| r.overlap)).expect("at least one row"),
        narrow: rs.iter().all(|(_, r)| r.narrow),
        f64_ok: rs.iter().all(|(_, r)| r.f64_ok),
        width: rs.iter().map(|(_, r)| r.width).fold(0.0, f64::max),
        f64_dev: rs.iter().map(|(_, r)| r.f64_dev).fold(0.0, f64::max),
    }
}

/// The rows computed both ways, per ALiBi slope and per Sandwich head.
pub struct Found {
    /// The query rows (L, i).
    rows: Vec<(u64, u64)>,
    /// Per ALiBi slope.
    alibi: Vec<Group>,
    /// Per Sandwich head.
    sandwich: Vec<Group>,
}

/// The rows of a group that are not `f`, or "none".
fn groups(v: &[Group], f: &dyn Fn(&Group) -> bool) -> String {
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
}
