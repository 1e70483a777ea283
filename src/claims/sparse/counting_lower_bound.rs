//! sparse/counting-lower-bound: with p-bit input entries, a fixed module that
//! realises every permutation pattern (k = 1, margin γ > 0) needs 2^{nDp} ≥ n!
//! inputs, so D·p ≥ ⌈log₂ n!⌉/n ≈ log₂ n − 1/ln 2 (sparse.md §4, [derived]: a check
//! of the project's explicit reconstruction of the Likhosherstov–Choromanski–Weller
//! theorem, not the paper's constants).
//!
//! n! is an exact big integer (GMP); ⌈log₂ x⌉ is the bit length of x unless x is
//! a power of two. Everything real-valued (log₂(n!)/n, log₂ n − 1/ln 2, Stirling's
//! series with Robbins' remainder bounds) is an outward-rounded interval.

use crate::claims::Ctx;
use crate::kernel::{Certainty, Interval};
use crate::outcome::{Outcome, Table};
use crate::spec::{ensure, ensure_each, exact, FieldError};
use rug::ops::Pow;
use rug::{Integer, Rational};
use serde::{Deserialize, Serialize};

/// A §5 reference row.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// n.
    pub n: u32,
    /// ⌈log₂ n!⌉ (exact integer).
    pub ceil_log2_factorial: u64,
    /// log₂(n!)/n as printed (a decimal; checked to its last printed digit).
    pub log2_factorial_per_n: String,
    /// log₂ n − 1/ln 2 as printed.
    pub leading_term: String,
    /// The least integer D·p.
    pub least_dp: u64,
}

/// A reconstruction instance whose width D = 2d at precision p is compared with the bound.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Instance {
    /// n.
    pub n: u32,
    /// The reconstruction's d (so D = 2d).
    pub d: u64,
    /// Bits per input entry.
    pub bits: u64,
}

/// Parameters of sparse/counting-lower-bound.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// §5 reference rows.
    pub reference: Vec<Reference>,
    /// Stirling tolerance in bits for log₂(n!)/n − (log₂ n − 1/ln 2), n ≥ 16 (exact literal).
    pub stirling_tol_bits: String,
    /// Every n in 16..=sweep_max is checked exactly against the tolerance.
    pub sweep_max: u32,
    /// Reconstruction instances (consistency with the bound).
    pub instances: Vec<Instance>,
}

const MAX_N: u32 = 1 << 20;

impl crate::spec::Params for Params {
    fn validate(&self) -> Result<(), FieldError> {
        ensure_each(&self.reference, "reference", |r| {
            if !(3..=MAX_N).contains(&r.n) {
                return Err(format!("n = {} is out of range: use 3 to {MAX_N}", r.n));
            }
            for (f, s) in [
                ("log2_factorial_per_n", &r.log2_factorial_per_n),
                ("leading_term", &r.leading_term),
            ] {
                decimal_places(s).ok_or_else(|| format!("{f}: `{s}` is not a plain decimal"))?;
            }
            Ok(())
        })?;
        let tol = exact("stirling_tol_bits", &self.stirling_tol_bits)?;
        ensure(tol > 0, "stirling_tol_bits", "must be positive")?;
        ensure(
            (16..=1 << 16).contains(&self.sweep_max),
            "sweep_max",
            "out of range: use 16 to 65536",
        )?;
        ensure_each(&self.instances, "instances", |i| {
            if !(3..=MAX_N).contains(&i.n) {
                return Err(format!("n = {} is out of range: use 3 to {MAX_N}", i.n));
            }
            if i.d == 0 || i.bits == 0 {
                return Err("d and bits must be positive".into());
            }
            Ok(())
        })
    }
}

/// The number of digits after the point of a plain decimal like `2.7656338`.
fn decimal_places(s: &str) -> Option<u32> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let ok = !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit());
    ok.then_some(frac.len() as u32)
}

/// ⌈log₂ x⌉ for x ≥ 1, exactly: the bit length, minus one for a power of two.
pub fn ceil_log2(x: &Integer) -> u64 {
    let bits = u64::from(x.significant_bits());
    if x.is_power_of_two() {
        bits - 1
    } else {
        bits
    }
}

/// ⌈log₂ n!⌉ exactly.
pub fn ceil_log2_factorial(n: u32) -> u64 {
    ceil_log2(&Integer::from(Integer::factorial(n)))
}

/// The least integer D·p allowed by the counting bound: ⌈⌈log₂ n!⌉ / n⌉.
pub fn least_dp(n: u32) -> u64 {
    ceil_log2_factorial(n).div_ceil(u64::from(n))
}

/// log₂ x as an interval.
fn log2(x: &Interval, prec: u32) -> Interval {
    &x.ln() / &Interval::ln2(prec)
}

/// Whether x prints as the decimal `s` (k decimals): p − ½·10^−k ≤ x ≤ p + ½·10^−k,
/// three-valued (the ends are exact rationals).
fn prints_as(prec: u32, s: &str, x: &Interval) -> Certainty {
    let k = decimal_places(s).expect("validated");
    let p = exact("", s).expect("validated");
    let half = Rational::from((1, 2 * Integer::from(10).pow(k)));
    let lo = Interval::from_rational(prec, &Rational::from(&p - &half));
    let hi = Interval::from_rational(prec, &Rational::from(&p + &half));
    lo.le(x).and(x.le(&hi))
}

/// log₂ n − 1/ln 2 as an interval.
fn leading(n: u32, prec: u32) -> Interval {
    let ln2 = Interval::ln2(prec);
    &log2(&Interval::from_i64(prec, i64::from(n)), prec) - &(&Interval::one(prec) / &ln2)
}

/// Robbins' bound g(n) = (½·log₂(2πn) + 1/(12n·ln 2))/n on log₂(n!)/n − (log₂ n − 1/ln 2).
fn robbins_gap_bound(n: u32, prec: u32) -> Interval {
    let nn = Interval::from_i64(prec, i64::from(n));
    let two_pi_n = &Interval::pi(prec).mul_i64(2) * &nn;
    let half_log = log2(&two_pi_n, prec).mul_2exp(-1);
    let corr = &Interval::one(prec) / &(&nn.mul_i64(12) * &Interval::ln2(prec));
    &(&half_log + &corr) / &nn
}

/// Runs the claim.
pub fn run(p: &Params, ctx: &Ctx) -> Outcome {
    let prec = ctx.prec();
    let mut o = Outcome::new();
    let tol = Interval::from_rational(prec, &exact("", &p.stirling_tol_bits).expect("validated"));
    let mut table = Table::new(
        "Counting bound (exact n!; intervals outward-rounded)",
        &[
            "n",
            "⌈log₂ n!⌉",
            "log₂(n!)/n",
            "log₂ n − 1/ln 2",
            "least integer D·p",
            "gap log₂(n!)/n − (log₂ n − 1/ln 2)",
        ],
    );
    for r in &p.reference {
        let n = r.n;
        let f = Integer::from(Integer::factorial(n));
        let c = ceil_log2(&f);
        o.checks.certify(
            format!("n = {n}: ⌈log₂ n!⌉ = {}", r.ceil_log2_factorial),
            Certainty::exact(c == r.ceil_log2_factorial),
            format!(
                "exact n! has {} bits (not a power of two: {}); computed {c}",
                f.significant_bits(),
                !f.is_power_of_two()
            ),
        );
        // 2^{c−1} < n! ≤ 2^c, exactly
        let lower = Integer::from(1) << (c as u32 - 1);
        let upper = Integer::from(1) << c as u32;
        o.checks.certify(
            format!("n = {n}: 2^{} < n! ≤ 2^{c}", c - 1),
            Certainty::exact(lower < f && f <= upper),
            "exact big-integer comparison",
        );
        let per_n = &log2(&Interval::from_integer(prec, &f), prec).div_i64(i64::from(n));
        let lead = leading(n, prec);
        o.checks.certify(
            format!("n = {n}: log₂(n!)/n prints as {}", r.log2_factorial_per_n),
            prints_as(prec, &r.log2_factorial_per_n, per_n),
            format!("enclosure {}", per_n.fmt_outward(12)),
        );
        o.checks.certify(
            format!("n = {n}: log₂ n − 1/ln 2 prints as {}", r.leading_term),
            prints_as(prec, &r.leading_term, &lead),
            format!("enclosure {}", lead.fmt_outward(12)),
        );
        let dp = c.div_ceil(u64::from(n));
        o.checks.certify(
            format!("n = {n}: least integer D·p = {}", r.least_dp),
            Certainty::exact(dp == r.least_dp),
            format!("⌈{c}/{n}⌉ = {dp}"),
        );
        let gap = per_n - &lead;
        table.row(vec![
            n.to_string(),
            c.to_string(),
            format!("{:.7}", per_n.mid_f64()),
            format!("{:.6}", lead.mid_f64()),
            dp.to_string(),
            gap.fmt_outward(4),
        ]);
        // Stirling's series with Robbins' explicit remainder:
        // ln n! ∈ n ln n − n + ½ ln(2πn) + (1/(12n+1), 1/(12n)).
        let nn = Interval::from_i64(prec, i64::from(n));
        let base =
            &(&(&nn * &nn.ln()) - &nn) + &(&Interval::pi(prec).mul_i64(2) * &nn).ln().mul_2exp(-1);
        let lo = &base + &(&Interval::one(prec) / &Interval::from_i64(prec, 12 * i64::from(n) + 1));
        let hi = &base + &(&Interval::one(prec) / &nn.mul_i64(12));
        let ln_f = Interval::from_integer(prec, &f).ln();
        o.checks.certify(
            format!("n = {n}: Stirling's series with Robbins' remainder encloses ln n!"),
            lo.lt(&ln_f).and(ln_f.lt(&hi)),
            format!(
                "ln n! ∈ {}, Stirling ∈ ({}, {})",
                ln_f.fmt_outward(10),
                lo.fmt_lo(10),
                hi.fmt_hi(10)
            ),
        );
    }
    // The leading approximation within the tolerance for every n in 16..=sweep_max,
    // from the exact factorials, and for every larger n by Robbins' bound.
    let mut f = Integer::from(Integer::factorial(15));
    let mut worst = (Interval::zero(prec), 16u32);
    let mut all = Certainty::True;
    for n in 16..=p.sweep_max {
        f *= n;
        let per_n = log2(&Interval::from_integer(prec, &f), prec).div_i64(i64::from(n));
        let gap = &per_n - &leading(n, prec);
        all = all.and(Interval::zero(prec).le(&gap)).and(gap.le(&tol));
        if gap.hi() > worst.0.hi() {
            worst = (gap, n);
        }
    }
    o.checks.certify(
        format!(
            "0 ≤ log₂(n!)/n − (log₂ n − 1/ln 2) ≤ {} bits for every n in 16..={} (exact n!)",
            p.stirling_tol_bits, p.sweep_max
        ),
        all,
        format!("largest gap {} at n = {}", worst.0.fmt_outward(6), worst.1),
    );
    let g = robbins_gap_bound(p.sweep_max, prec);
    o.checks.certify(
        format!(
            "for every n ≥ {}: gap ≤ g(n) ≤ g({}) ≤ {} bits (Robbins; g decreasing)",
            p.sweep_max, p.sweep_max, p.stirling_tol_bits
        ),
        g.le(&tol),
        format!(
            "g(n) = (½·log₂(2πn) + 1/(12n·ln 2))/n is decreasing for 2πn > e; g({}) = {}",
            p.sweep_max,
            g.fmt_outward(6)
        ),
    );
    let mut inst = Table::new(
        "The reconstruction's width against the bound (D = 2d)",
        &["n", "d", "bits p", "D·p", "least integer D·p", "satisfied"],
    );
    for i in &p.instances {
        let need = least_dp(i.n);
        let have = 2 * i.d * i.bits;
        let ok = have >= need;
        o.checks.certify(
            format!(
                "n = {}, d = {}, p = {} bits: D·p = {have} ≥ {need}",
                i.n, i.d, i.bits
            ),
            Certainty::exact(ok),
            "exact integers",
        );
        inst.row(vec![
            i.n.to_string(),
            i.d.to_string(),
            i.bits.to_string(),
            have.to_string(),
            need.to_string(),
            if ok { "yes".into() } else { "no".into() },
        ]);
    }
    if let Some(r) = p.reference.iter().max_by_key(|r| r.n) {
        let c = ceil_log2_factorial(r.n);
        o.figure(format!("⌈log₂ n!⌉ at n = {}", r.n), c as f64, c.to_string());
    }
    o.figure(
        "largest Stirling gap (bits, n ≥ 16)",
        worst.0.hi_f64(),
        format!("{} at n = {}", worst.0.fmt_outward(6), worst.1),
    );
    o.tables.push(table);
    o.tables.push(inst);
    o.note(
        "Check of the project's explicit reconstruction of the Likhosherstov–Choromanski–Weller theorem \
         ([derived]; sparse.md §4–§5): the counting argument and its numbers are the project's, not the paper's.",
    );
    o.note(
        "The bound concerns finite-precision inputs only: with unbounded real inputs no Ω(log n) bound holds for \
         support patterns (sparse.md §6, moment-curve remark).",
    );
    o
}
