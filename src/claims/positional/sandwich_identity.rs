//! positional/sandwich-identity: p_mᵀp_n = Σ_i cos((m − n)ω_i), Toeplitz and
//! even; the centred bias B̃(r) = Σ_i (cos(rω_i) − 1) is 0 at r = 0 and < 0 for
//! every other integer r, with −d̄ ≤ B̃ ≤ 0.
//!
//! Everything is decided in intervals:
//! - the explicit sin/cos vectors and the cosine sum are enclosed separately and
//!   their difference is certified below a tolerance (they are equal by
//!   cos(a − b) = sin a sin b + cos a cos b; the check is that the two
//!   computations agree, so a wrong frequency or index set would show);
//! - f64 outputs are exact dyadic numbers, so their distance to the enclosure is
//!   certified too;
//! - B̃(r) < 0: every term cos(rω_i) − 1 is ≤ 0, so B̃(r) ≤ cos(rω_j) − 1 for any
//!   single j, and one term certified < 0 suffices (with I from 0, ω_0 = 1 for
//!   every d̄, so j = 0 works for all of them at once);
//! - the §3 table, the "more digits" values and the minimum over r < 20000 are
//!   reproduced with enclosures compared against the printed decimals.

use super::common::{
    check_dbar, printed_half_unit, sandwich_centred, sandwich_centred_expr, sandwich_centred_f64,
    sandwich_centred_many, sandwich_freqs, sandwich_freqs_f64, IndexFrom, SplitMix64,
};
use crate::claims::Ctx;
use crate::kernel::{parse_rational, Certainty, Interval};
use crate::outcome::Draft;
use crate::outcome::{Outcome, Plot, Series, Style, Table};
use crate::spec::exact as check_literal;
use crate::spec::{ensure, ensure_each, FieldError};
use rayon::prelude::*;
use rug::Rational;
use serde::{Deserialize, Serialize};

/// The §3 table of B̃(r) (d̄ fixed, both conventions), as printed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BTable {
    /// d̄ of the table.
    pub dbar: u32,
    /// The distances r.
    pub r: Vec<i64>,
    /// Printed values with I from 0.
    pub zero: Vec<String>,
    /// Printed values with I from 1.
    pub one: Vec<String>,
    /// Absolute tolerance against the printed values (exact literal).
    pub tolerance: String,
}

/// Reference values printed with more digits (tolerance: half a unit of the last digit).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoreDigits {
    /// d̄.
    pub dbar: u32,
    /// Index convention.
    pub from: IndexFrom,
    /// The distances r.
    pub r: Vec<i64>,
    /// The printed values.
    pub values: Vec<String>,
}

/// The reference minimum of B̃ over 0 ≤ r < `below`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Minimum {
    /// d̄.
    pub dbar: u32,
    /// Index convention.
    pub from: IndexFrom,
    /// Sweep 0 ≤ r < below.
    pub below: i64,
    /// The claimed argmin.
    pub r: i64,
    /// The printed minimum value.
    pub value: String,
}

/// Parameters of positional/sandwich-identity.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// The d̄ values (even).
    pub dbars: Vec<u32>,
    /// Index conventions to check.
    pub conventions: Vec<IndexFrom>,
    /// Positions m, n range over 0..=max_position.
    pub max_position: i64,
    /// Random pairs (m, n) besides the four corners.
    pub pairs: usize,
    /// Seed of the pair sampler.
    pub seed: u64,
    /// Certified bound on |explicit − summed| (exact literal).
    pub identity_tol: String,
    /// f64 outputs within this relative error of d̄/2 = ‖p_m‖² (exact literal).
    pub f64_rel_tol: String,
    /// B̃(r) < 0 certified for 1 ≤ r ≤ negative_up_to.
    pub negative_up_to: i64,
    /// The §3 table.
    pub table: BTable,
    /// Values printed with more digits.
    pub more_digits: MoreDigits,
    /// The minimum over a range.
    pub minimum: Minimum,
}

fn check_printed(field: &str, s: &str) -> Result<(), FieldError> {
    printed_half_unit(s)
        .map(|_| ())
        .map_err(|e| FieldError::new(field, e.to_string()))
}

impl crate::spec::Params for Params {
    fn validate(&self) -> Result<(), FieldError> {
        ensure_each(&self.dbars, "dbars", |&d| check_dbar(d))?;
        ensure(
            !self.conventions.is_empty(),
            "conventions",
            "must not be empty",
        )?;
        ensure(
            (1..=1 << 24).contains(&self.max_position),
            "max_position",
            "must be between 1 and 2^24",
        )?;
        ensure(self.pairs <= 100_000, "pairs", "at most 100000")?;
        ensure(
            check_literal("identity_tol", &self.identity_tol)? > 0,
            "identity_tol",
            "must be positive",
        )?;
        ensure(
            check_literal("f64_rel_tol", &self.f64_rel_tol)? > 0,
            "f64_rel_tol",
            "must be positive",
        )?;
        ensure(
            (1..=10_000_000).contains(&self.negative_up_to),
            "negative_up_to",
            "must be between 1 and 10^7",
        )?;
        let t = &self.table;
        check_dbar(t.dbar).map_err(|e| FieldError::new("table.dbar", e))?;
        ensure_each(&t.r, "table.r", |&r| {
            if (0..=10_000_000).contains(&r) {
                Ok(())
            } else {
                Err("r must be between 0 and 10^7".into())
            }
        })?;
        for (name, v) in [("zero", &t.zero), ("one", &t.one)] {
            ensure(
                v.len() == t.r.len(),
                format!("table.{name}"),
                format!("has {} values for {} distances", v.len(), t.r.len()),
            )?;
            for (i, s) in v.iter().enumerate() {
                check_literal(&format!("table.{name}[{i}]"), s)?;
            }
        }
        ensure(
            check_literal("table.tolerance", &t.tolerance)? > 0,
            "table.tolerance",
            "must be positive",
        )?;
        let m = &self.more_digits;
        check_dbar(m.dbar).map_err(|e| FieldError::new("more_digits.dbar", e))?;
        ensure(
            m.values.len() == m.r.len(),
            "more_digits.values",
            format!("has {} values for {} distances", m.values.len(), m.r.len()),
        )?;
        for (i, r) in m.r.iter().enumerate() {
            ensure(
                (0..=10_000_000).contains(r),
                format!("more_digits.r[{i}]"),
                "r must be between 0 and 10^7",
            )?;
        }
        for (i, s) in m.values.iter().enumerate() {
            check_printed(&format!("more_digits.values[{i}]"), s)?;
        }
        let mn = &self.minimum;
        check_dbar(mn.dbar).map_err(|e| FieldError::new("minimum.dbar", e))?;
        ensure(
            (1..=1_000_000).contains(&mn.below),
            "minimum.below",
            "must be between 1 and 10^6",
        )?;
        ensure(
            (0..mn.below).contains(&mn.r),
            "minimum.r",
            format!("must lie in 0..{}", mn.below),
        )?;
        check_printed("minimum.value", &mn.value)
    }
}

/// Σ_i cos(rω_i) = B̃(r) + |I| in intervals (the uncentred Sandwich product).
fn cos_sum(r: i64, freqs: &[Interval]) -> Interval {
    let p = freqs[0].prec();
    &sandwich_centred(r, freqs) + &Interval::from_i64(p, freqs.len() as i64)
}

/// p_mᵀp_n computed from the explicit vectors p_m = [sin(mω_i), cos(mω_i)]_i.
fn explicit_dot(m: i64, n: i64, freqs: &[Interval]) -> Interval {
    let p = freqs[0].prec();
    let (mm, nn) = (Interval::from_i64(p, m), Interval::from_i64(p, n));
    let mut acc = Interval::zero(p);
    for w in freqs {
        let (a, b) = (&mm * w, &nn * w);
        acc.add_assign(&(&a.sin() * &b.sin()));
        acc.add_assign(&(&a.cos() * &b.cos()));
    }
    acc
}

fn explicit_dot_f64(m: i64, n: i64, freqs: &[f64]) -> f64 {
    freqs
        .iter()
        .map(|w| {
            let (a, b) = (m as f64 * w, n as f64 * w);
            a.sin() * b.sin() + a.cos() * b.cos()
        })
        .sum()
}

/// Certified |a − b| ≤ tol.
fn close(a: &Interval, b: &Interval, tol: &Interval) -> Certainty {
    (a - b).abs().le(tol)
}

/// Results for one pair (m, n) with its shift (m + k, n + k).
struct PairCheck {
    identity: Certainty,
    toeplitz: Certainty,
    even: Certainty,
    f64_ok: Certainty,
    max_diff: f64,
    f64_rel: f64,
}

fn check_pair(
    (m, n, k): (i64, i64, i64),
    freqs: &[Interval],
    freqs64: &[f64],
    tol: &Interval,
    rel_tol: &Interval,
) -> PairCheck {
    let p = freqs[0].prec();
    let dot = explicit_dot(m, n, freqs);
    let sum = cos_sum(m - n, freqs);
    let sum_neg = cos_sum(n - m, freqs);
    let shifted = explicit_dot(m + k, n + k, freqs);
    let scale = Interval::from_i64(p, freqs.len() as i64);
    let f_dot = Interval::from_f64(p, explicit_dot_f64(m, n, freqs64));
    let f_sum = Interval::from_f64(p, sandwich_centred_f64((m - n) as f64, freqs64))
        + Interval::from_i64(p, freqs.len() as i64);
    let lim = rel_tol * &scale;
    let rel_dot = &(&f_dot - &sum).abs() / &scale;
    let rel_sum = &(&f_sum - &sum).abs() / &scale;
    PairCheck {
        identity: close(&dot, &sum, tol),
        toeplitz: close(&dot, &shifted, tol),
        even: close(&sum, &sum_neg, tol),
        f64_ok: close(&f_dot, &sum, &lim).and(close(&f_sum, &sum, &lim)),
        max_diff: (&dot - &sum).abs().hi_f64(),
        f64_rel: rel_dot.hi_f64().max(rel_sum.hi_f64()),
    }
}

/// The sampled pairs: the four corners, then `count` seeded random pairs, each
/// with a shift k such that m + k, n + k stay in 0..=max (k ≠ 0 when possible).
pub fn sample_pairs(max: i64, count: usize, seed: u64) -> Vec<(i64, i64, i64)> {
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::new();
    let shift = |m: i64, n: i64, rng: &mut SplitMix64| {
        let lo = -m.min(n);
        let hi = max - m.max(n);
        if lo == hi {
            return 0;
        }
        let k = lo + rng.below((hi - lo + 1) as u64) as i64;
        if k == 0 {
            if hi > 0 {
                1
            } else {
                -1
            }
        } else {
            k
        }
    };
    for (m, n) in [(0, 0), (max, 0), (0, max), (max, max)] {
        let k = shift(m, n, &mut rng);
        out.push((m, n, k));
    }
    for _ in 0..count {
        let m = rng.range(0, max as u64) as i64;
        let n = rng.range(0, max as u64) as i64;
        let k = shift(m, n, &mut rng);
        out.push((m, n, k));
    }
    out
}

/// The outcome of certifying B̃(r) < 0 over a range of r.
#[derive(Debug, Clone)]
pub struct Negativity {
    /// True when every r was certified.
    pub certainty: Certainty,
    /// Runs (r_lo, r_hi, i): cos(rω_i) − 1 < 0 certified for r_lo ≤ r ≤ r_hi.
    pub runs: Vec<(i64, i64, usize)>,
    /// The r for which no term was certified negative (even at twice the precision).
    pub undecided: Vec<i64>,
    /// How many r needed the higher precision.
    pub retried: usize,
}

/// The first index i (in `order`) with cos(rω_i) − 1 certified < 0.
fn negative_term(r: i64, freqs: &[Interval]) -> Option<usize> {
    let p = freqs[0].prec();
    let rr = Interval::from_i64(p, r);
    let one = Interval::one(p);
    freqs
        .iter()
        .position(|w| (&rr * w).cos().lt(&one) == Certainty::True)
}

/// Certifies B̃(r) < 0 for lo ≤ r ≤ hi: a term cos(rω_i) − 1 < 0 is found for
/// each r (every other term is ≤ 0 because cos ≤ 1, so B̃(r) ≤ cos(rω_i) − 1).
/// An r with no certified term is retried at twice the precision; r = 0 has
/// none (B̃(0) = 0), so a range containing 0 is never certified.
pub fn certify_negative(dbar: u32, from: IndexFrom, lo: i64, hi: i64, prec: u32) -> Negativity {
    let freqs = sandwich_freqs(dbar, from, prec);
    let rs: Vec<i64> = (lo..=hi).collect();
    let mut terms: Vec<Option<usize>> = rs
        .par_iter()
        .with_min_len(256)
        .map(|&r| negative_term(r, &freqs))
        .collect();
    let missing: Vec<usize> = (0..rs.len()).filter(|&k| terms[k].is_none()).collect();
    let retried = missing.len();
    if !missing.is_empty() {
        let f2 = sandwich_freqs(dbar, from, 2 * prec);
        for k in missing {
            terms[k] = negative_term(rs[k], &f2);
        }
    }
    let mut runs: Vec<(i64, i64, usize)> = Vec::new();
    let mut undecided = Vec::new();
    for (&r, t) in rs.iter().zip(&terms) {
        match t {
            Some(i) => match runs.last_mut() {
                Some(last) if last.2 == *i && last.1 + 1 == r => last.1 = r,
                _ => runs.push((r, r, *i)),
            },
            None => undecided.push(r),
        }
    }
    let certainty = if undecided.is_empty() {
        Certainty::True
    } else {
        Certainty::Unknown
    };
    Negativity {
        certainty,
        runs,
        undecided,
        retried,
    }
}

/// The S-expression of ω_i = 10000^{−2i/d̄} for index i.
fn omega_expr(i: u32, dbar: u32) -> String {
    if i == 0 {
        return "1".into();
    }
    let q = Rational::from((2 * i as i64, dbar as i64));
    format!("(exp (* -{q} (ln 10000)))")
}

/// Certified B̃(r) for every r of `rs` (fresh frequency enclosures at `prec`).
fn centred_at(rs: &[i64], dbar: u32, from: IndexFrom, prec: u32) -> Vec<Interval> {
    sandwich_centred_many(rs, &sandwich_freqs(dbar, from, prec))
}

fn rat_interval(prec: u32, s: &str) -> Interval {
    Interval::from_rational(prec, &parse_rational(s).expect("validated"))
}

fn half_unit(prec: u32, s: &str) -> Interval {
    Interval::from_rational(prec, &printed_half_unit(s).expect("validated"))
}

/// Runs the claim.
pub fn run(p: &Params, ctx: &Ctx) -> Outcome {
    let prec = ctx.prec();
    let mut o = Outcome::new();
    let mut cert = Draft::default();

    // ----- the minimum over 0 ≤ r < below (the headline figure) -----
    ctx.progress.message(format!(
        "{}: B̃(r) for 0 ≤ r < {}",
        ctx.spec.id, p.minimum.below
    ));
    let mn = &p.minimum;
    let sweep_rs: Vec<i64> = (0..mn.below).collect();
    let sweep = centred_at(&sweep_rs, mn.dbar, mn.from, prec);
    minimum_checks(p, prec, &sweep, &mut o, &mut cert);

    // ----- identity, Toeplitz, evenness, f64 on sampled pairs -----
    identity_checks(p, ctx, &mut o, &mut cert);

    // ----- B̃(r) < 0 for 1 ≤ r ≤ N -----
    negativity_checks(p, ctx, &mut o, &mut cert);

    // ----- the §3 table and the values with more digits -----
    table_checks(p, prec, &sweep, mn, &mut o, &mut cert);

    // plot: the range of B̃ over consecutive blocks of r (a line through every
    // 10th value would alias the oscillations), and the minimum
    let step = ((mn.below + 1999) / 2000).max(1) as usize;
    let mids: Vec<f64> = sweep.iter().map(Interval::mid_f64).collect();
    let blocks: Vec<(f64, f64, f64)> = mids
        .chunks(step)
        .enumerate()
        .map(|(k, c)| {
            let lo = c.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            ((k * step) as f64, lo, hi)
        })
        .collect();
    let dbar2 = -(mn.dbar as f64) / 2.0;
    o.plots.push(Plot {
        slug: "centred-bias".into(),
        title: format!(
            "Sandwich centred bias B̃(r), d̄ = {}, {}: range over blocks of {step} consecutive r",
            mn.dbar,
            mn.from.label()
        ),
        x_label: "r".into(),
        y_label: "B̃(r)".into(),
        x_log: false,
        y_log: false,
        series: vec![
            Series {
                name: "block maximum".into(),
                style: Style::Line,
                points: blocks.iter().map(|b| (b.0, b.2)).collect(),
            },
            Series {
                name: "block minimum".into(),
                style: Style::Line,
                points: blocks.iter().map(|b| (b.0, b.1)).collect(),
            },
            Series {
                name: format!("−d̄/2 = {dbar2}"),
                style: Style::Dashed,
                points: vec![(0.0, dbar2), (mn.below as f64, dbar2)],
            },
            Series {
                name: format!("minimum at r = {}", mn.r),
                style: Style::Points,
                points: vec![(mn.r as f64, mids[mn.r as usize])],
            },
        ],
        heatmap: None,
        paths: false,
    });
    o.note(
        "The Sandwich construction (index set, centring, d̄) is [unconfirmed]: both index conventions are checked; \
         the identity and the bounds are elementary trigonometry, checked here on enclosures.",
    );
    o.note(
        "B̃(r) < 0 is certified through a single term: every term cos(rω_i) − 1 is ≤ 0 (cos ≤ 1), so \
         B̃(r) ≤ cos(rω_j) − 1 for any j, and one term certified < 0 proves B̃(r) < 0. With I from 0, ω_0 = 1 for \
         every d̄, so the term cos r − 1 covers all d̄ at once.",
    );
    cert.record(&mut o);
    o
}

fn minimum_checks(p: &Params, prec: u32, sweep: &[Interval], o: &mut Outcome, cert: &mut Draft) {
    let mn = &p.minimum;
    let label = format!("d̄ = {}, {}", mn.dbar, mn.from.label());
    let zero = Interval::zero(prec);
    o.checks.observe_interval(
        format!("{label}: B̃(0) = 0"),
        sweep[0].eq_exact(&zero),
        format!("B̃(0) = {}", sweep[0].fmt_outward(6)),
    );
    let lower = Interval::from_i64(prec, -(mn.dbar as i64));
    let bounds = Certainty::all(sweep.iter().map(|b| b.ge(&lower).and(b.le(&zero))));
    o.checks.observe_interval(
        format!("{label}: −d̄ ≤ B̃(r) ≤ 0 for 0 ≤ r < {}", mn.below),
        bounds,
        format!("{} enclosures", sweep.len()),
    );
    // argmin: B̃(r*) < B̃(r) for every other r (Unknown pairs retried at 2× precision)
    let rstar = mn.r as usize;
    let bstar = &sweep[rstar];
    let mut unknown: Vec<usize> = Vec::new();
    let mut counter: Option<usize> = None;
    for (r, b) in sweep.iter().enumerate() {
        if r == rstar {
            continue;
        }
        match bstar.lt(b) {
            Certainty::True => {}
            Certainty::False => {
                counter.get_or_insert(r);
            }
            Certainty::Unknown => unknown.push(r),
        }
    }
    let mut still = Vec::new();
    if !unknown.is_empty() {
        let mut rs: Vec<i64> = unknown.iter().map(|&r| r as i64).collect();
        rs.push(mn.r);
        let hi = centred_at(&rs, mn.dbar, mn.from, 2 * prec);
        let b2 = hi.last().expect("pushed");
        for (k, &r) in unknown.iter().enumerate() {
            match b2.lt(&hi[k]) {
                Certainty::True => {}
                Certainty::False => {
                    counter.get_or_insert(r);
                }
                Certainty::Unknown => still.push(r),
            }
        }
    }
    // the true argmin (by midpoints; display only)
    let (amin, bmin) = sweep
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.mid_f64().total_cmp(&b.1.mid_f64()))
        .expect("non-empty sweep");
    let argmin = if counter.is_some() {
        Certainty::False
    } else if still.is_empty() {
        Certainty::True
    } else {
        Certainty::Unknown
    };
    o.checks.observe_interval(
        format!(
            "{label}: the minimum of B̃ over 0 ≤ r < {} is at r = {}",
            mn.below, mn.r
        ),
        argmin,
        match counter {
            Some(r) => format!(
                "counterexample: B̃({r}) = {} ≤ B̃({}) = {}; the smallest value is at r = {amin}",
                sweep[r].fmt_outward(10),
                mn.r,
                bstar.fmt_outward(10)
            ),
            None => format!(
                "B̃({}) = {} < B̃(r) for the other {} r ({} decided at {} bits){}",
                mn.r,
                bstar.fmt_outward(10),
                sweep.len() - 1,
                unknown.len(),
                2 * prec,
                if still.is_empty() {
                    String::new()
                } else {
                    format!("; undecided: {:?}", &still[..still.len().min(5)])
                }
            ),
        },
    );
    let want = rat_interval(prec, &mn.value);
    let tol = half_unit(prec, &mn.value);
    o.checks.observe_interval(
        format!(
            "{label}: B̃({}) = {} (to the printed digits)",
            mn.r, mn.value
        ),
        close(bstar, &want, &tol),
        format!("B̃({}) = {}", mn.r, bstar.fmt_outward(12)),
    );
    o.figure(
        format!("min of B̃ over 0 ≤ r < {} ({label})", mn.below),
        bmin.mid_f64(),
        format!("{} at r = {amin}", bmin.fmt_outward(9)),
    );
    let v = parse_rational(&mn.value).expect("validated");
    let h = printed_half_unit(&mn.value).expect("validated");
    let (lo, hi) = (Rational::from(&v - &h), v + h);
    let e = sandwich_centred_expr(&mn.r.to_string(), mn.dbar, mn.from);
    cert.push(
        format!(
            "B̃({}) ∈ [{lo}, {hi}] (d̄ = {}, {})",
            mn.r,
            mn.dbar,
            mn.from.label()
        ),
        format!("(and (>= {e} {lo}) (<= {e} {hi}))"),
    );
}

fn identity_checks(p: &Params, ctx: &Ctx, o: &mut Outcome, cert: &mut Draft) {
    let prec = ctx.prec();
    let tol = rat_interval(prec, &p.identity_tol);
    let rel = rat_interval(prec, &p.f64_rel_tol);
    let pairs = sample_pairs(p.max_position, p.pairs, p.seed);
    let mut table = Table::new(
        format!(
            "Identity p_mᵀp_n = Σ cos((m − n)ω_i) on {} pairs, 0 ≤ m, n ≤ {} (certified)",
            pairs.len(),
            p.max_position
        ),
        &[
            "d̄",
            "convention",
            "max |explicit − summed| (upper bound)",
            "Toeplitz",
            "even",
            "max f64 error / (d̄/2) (upper bound)",
        ],
    );
    for &dbar in &p.dbars {
        for &from in &p.conventions {
            ctx.progress.message(format!(
                "{}: identity, d̄ = {dbar}, {}",
                ctx.spec.id,
                from.label()
            ));
            let freqs = sandwich_freqs(dbar, from, prec);
            let freqs64 = sandwich_freqs_f64(dbar, from);
            let res: Vec<PairCheck> = pairs
                .par_iter()
                .map(|&pk| check_pair(pk, &freqs, &freqs64, &tol, &rel))
                .collect();
            let label = format!("d̄ = {dbar}, {}", from.label());
            let all = |f: &dyn Fn(&PairCheck) -> Certainty| Certainty::all(res.iter().map(f));
            let max_diff = res.iter().map(|r| r.max_diff).fold(0.0, f64::max);
            let max_rel = res.iter().map(|r| r.f64_rel).fold(0.0, f64::max);
            let (ci, ct, ce, cf) = (
                all(&|r| r.identity),
                all(&|r| r.toeplitz),
                all(&|r| r.even),
                all(&|r| r.f64_ok),
            );
            o.checks.observe_interval(
                format!(
                    "{label}: p_mᵀp_n = Σ_i cos((m − n)ω_i) on {} pairs (|difference| ≤ {})",
                    pairs.len(),
                    p.identity_tol
                ),
                ci,
                format!("max |explicit − summed| ≤ {max_diff:.3e}"),
            );
            o.checks.observe_interval(
                format!(
                    "{label}: Toeplitz, p_mᵀp_n = p_(m+k)ᵀp_(n+k) (|difference| ≤ {})",
                    p.identity_tol
                ),
                ct,
                "shifts k drawn so that m + k, n + k stay in range",
            );
            o.checks.observe_interval(
                format!(
                    "{label}: even, Σ cos(rω_i) = Σ cos(−rω_i) (|difference| ≤ {})",
                    p.identity_tol
                ),
                ce,
                "r = m − n and n − m for every pair",
            );
            o.checks.observe_interval(
                format!(
                    "{label}: f64 explicit and summed forms within {} · d̄/2 of the enclosure",
                    p.f64_rel_tol
                ),
                cf,
                format!("max error / (d̄/2) ≤ {max_rel:.3e}"),
            );
            let word = |c: Certainty| match c {
                Certainty::True => "certified",
                Certainty::False => "FALSE",
                Certainty::Unknown => "undecided",
            };
            table.row(vec![
                dbar.to_string(),
                from.label().into(),
                format!("{max_diff:.3e}"),
                word(ct).into(),
                word(ce).into(),
                format!("{max_rel:.3e}"),
            ]);
            if dbar == p.table.dbar {
                // one pair per convention in the certificate
                let (m, n, _) = pairs[pairs.len().min(5) - 1];
                let range = from.range(dbar);
                let w = format!("(exp (* (/ (* -2 i) {dbar}) (ln 10000)))");
                let expl = format!(
                    "(sum i {a} {b} (+ (* (sin (* {m} {w})) (sin (* {n} {w}))) (* (cos (* {m} {w})) (cos (* {n} {w})))))",
                    a = range.start(),
                    b = range.end()
                );
                let summed = format!(
                    "(sum i {a} {b} (cos (* {r} {w})))",
                    a = range.start(),
                    b = range.end(),
                    r = m - n
                );
                cert.push(
                    format!(
                        "{label}: p_{m}ᵀp_{n} = Σ cos(({m} − {n})ω_i) within {}",
                        p.identity_tol
                    ),
                    format!("(<= (abs (- {expl} {summed})) {})", p.identity_tol),
                );
            }
        }
    }
    o.tables.push(table);
}

fn negativity_checks(p: &Params, ctx: &Ctx, o: &mut Outcome, cert: &mut Draft) {
    let prec = ctx.prec();
    let n = p.negative_up_to;
    let mut table = Table::new(
        format!("B̃(r) < 0 for 1 ≤ r ≤ {n}: the term certified negative"),
        &[
            "d̄",
            "convention",
            "term(s) used",
            "r retried at 2× precision",
            "result",
        ],
    );
    let mut jobs: Vec<(Vec<u32>, IndexFrom)> = Vec::new();
    for &from in &p.conventions {
        match from {
            // ω_0 = 10000^0 = 1 for every d̄: one sweep covers them all
            IndexFrom::Zero => jobs.push((p.dbars.clone(), from)),
            IndexFrom::One => jobs.extend(p.dbars.iter().map(|&d| (vec![d], from))),
        }
    }
    for (dbars, from) in jobs {
        ctx.progress.message(format!(
            "{}: B̃ < 0, {} d̄ = {dbars:?}",
            ctx.spec.id,
            from.label()
        ));
        let dbar = dbars[0];
        let neg = certify_negative(dbar, from, 1, n, prec);
        let first = *from.range(dbar).start();
        let dlist = dbars
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let terms: Vec<String> = {
            let mut t: Vec<usize> = neg.runs.iter().map(|r| r.2).collect();
            t.sort_unstable();
            t.dedup();
            t.iter()
                .map(|&k| format!("i = {}", k as u32 + first))
                .collect()
        };
        o.checks.observe_interval(
            format!(
                "{}, d̄ ∈ {{{dlist}}}: B̃(r) < 0 for 1 ≤ r ≤ {n}",
                from.label()
            ),
            neg.certainty,
            if neg.undecided.is_empty() {
                format!(
                    "a term cos(rω_i) − 1 < 0 certified for every r ({}; {} r retried at {} bits)",
                    terms.join(", "),
                    neg.retried,
                    2 * prec
                )
            } else {
                format!(
                    "no term certified for r = {:?}",
                    &neg.undecided[..neg.undecided.len().min(5)]
                )
            },
        );
        table.row(vec![
            dlist.clone(),
            from.label().into(),
            terms.join(", "),
            neg.retried.to_string(),
            match neg.certainty {
                Certainty::True => "certified".into(),
                _ => format!("{} r undecided", neg.undecided.len()),
            },
        ]);
        for &(lo, hi, k) in &neg.runs {
            let i = k as u32 + first;
            let w = omega_expr(i, dbar);
            let arg = if i == 0 {
                "r".to_string()
            } else {
                format!("(* r {w})")
            };
            cert.push(
                format!(
                    "{}, d̄ ∈ {{{dlist}}}: cos(rω_{i}) < 1 for {lo} ≤ r ≤ {hi}, hence B̃(r) ≤ cos(rω_{i}) − 1 < 0 (every other term is ≤ 0)",
                    from.label()
                ),
                format!("(forall r {lo} {hi} (< (cos {arg}) 1))"),
            );
        }
    }
    o.tables.push(table);
}

fn table_checks(
    p: &Params,
    prec: u32,
    sweep: &[Interval],
    mn: &Minimum,
    o: &mut Outcome,
    cert: &mut Draft,
) {
    let t = &p.table;
    let tol = rat_interval(prec, &t.tolerance);
    let lookup = |from: IndexFrom| -> Vec<Interval> {
        if from == mn.from && t.dbar == mn.dbar && t.r.iter().all(|&r| r < mn.below) {
            t.r.iter().map(|&r| sweep[r as usize].clone()).collect()
        } else {
            centred_at(&t.r, t.dbar, from, prec)
        }
    };
    let zero = lookup(IndexFrom::Zero);
    let one = lookup(IndexFrom::One);
    let mut table = Table::new(
        format!(
            "Centred bias B̃(r), d̄ = {}, positional.md §3 (printed) vs ours (enclosures)",
            t.dbar
        ),
        &[
            "r",
            "§3, I from 0",
            "ours, I from 0",
            "§3, I from 1",
            "ours, I from 1",
        ],
    );
    for (from, vals, refs) in [
        (IndexFrom::Zero, &zero, &t.zero),
        (IndexFrom::One, &one, &t.one),
    ] {
        let mut bad = Vec::new();
        let c = Certainty::all(t.r.iter().zip(vals).zip(refs).map(|((&r, b), s)| {
            let c = close(b, &rat_interval(prec, s), &tol);
            if c != Certainty::True {
                bad.push(format!("r = {r}: {} vs {s}", b.fmt_outward(8)));
            }
            c
        }));
        o.checks.observe_interval(
            format!(
                "§3 table, d̄ = {}, {}: |B̃(r) − printed| ≤ {} for r ∈ {:?}",
                t.dbar,
                from.label(),
                t.tolerance,
                t.r
            ),
            c,
            if bad.is_empty() {
                "every enclosure within the tolerance of the printed value".into()
            } else {
                bad.join("; ")
            },
        );
        for (&r, b) in t.r.iter().zip(vals) {
            o.figure(
                format!("B̃({r}), d̄ = {}, {}", t.dbar, from.label()),
                b.mid_f64(),
                b.fmt_outward(12),
            );
        }
    }
    for (k, &r) in t.r.iter().enumerate() {
        table.row(vec![
            r.to_string(),
            t.zero[k].clone(),
            zero[k].fmt_outward(12),
            t.one[k].clone(),
            one[k].fmt_outward(12),
        ]);
    }
    o.tables.push(table);

    let md = &p.more_digits;
    let vals = centred_at(&md.r, md.dbar, md.from, prec);
    let mut mt = Table::new(
        format!(
            "Values printed with more digits, d̄ = {}, {}",
            md.dbar,
            md.from.label()
        ),
        &[
            "r",
            "printed",
            "ours (enclosure)",
            "tolerance (half a printed unit)",
        ],
    );
    for ((&r, s), b) in md.r.iter().zip(&md.values).zip(&vals) {
        let h = half_unit(prec, s);
        o.checks.observe_interval(
            format!(
                "d̄ = {}, {}: B̃({r}) = {s} to the printed digits",
                md.dbar,
                md.from.label()
            ),
            close(b, &rat_interval(prec, s), &h),
            format!("B̃({r}) = {}", b.fmt_outward(18)),
        );
        mt.row(vec![
            r.to_string(),
            s.clone(),
            b.fmt_outward(18),
            format!("{:e}", printed_half_unit(s).expect("validated").to_f64()),
        ]);
        let q = parse_rational(s).expect("validated");
        let hq = printed_half_unit(s).expect("validated");
        let e = sandwich_centred_expr(&r.to_string(), md.dbar, md.from);
        cert.push(
            format!("B̃({r}) = {s} ± {hq} (d̄ = {}, {})", md.dbar, md.from.label()),
            format!("(<= (abs (- {e} {q})) {hq})"),
        );
    }
    o.tables.push(mt);
}
