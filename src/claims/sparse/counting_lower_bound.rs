//! sparse/counting-lower-bound: with p-bit input entries, a fixed module that
//! realises every permutation pattern (k = 1, margin γ > 0) needs 2^{nDp} ≥ n!
//! inputs, so D·p ≥ ⌈log₂ n!⌉/n ≈ log₂ n − 1/ln 2 (sparse.md §4, \[derived\]: a check
//! of the project's explicit reconstruction of the Likhosherstov–Choromanski–Weller
//! theorem, not the paper's constants).
//!
//! Every decision is an obligation of the claim's statement (`statement` of [`Claim`]),
//! decided by the kernel: ⌈log₂ n!⌉ = c as the exact integer bracketing
//! 2^{c−1} < n! ≤ 2^c (n! an exact GMP literal), the least D·p = ⌈c/n⌉ and
//! D·p = 2·d·p ≥ ⌈c/n⌉ in exact (unbounded) integers, and the real-valued facts
//! (log₂(n!)/n and log₂ n − 1/ln 2 to their printed digits, Stirling's series with
//! Robbins' remainder against ln n! = Σ_{i=2}^{n} ln i at the reference n, the
//! tolerance sweep by Robbins' bound g(n) for every n of the sweep and g(sweep_max)
//! beyond it) in outward-rounded intervals.

use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::StatementError;
use crate::kernel::expr::build::{
    abs, add, and, ceil, div, eq, forall, ge, int, le, lit, ln, lt, mul, neg, pi, pow, q, sub, sum,
    var, Formula, Term,
};
use crate::kernel::{Checked, Interval, Statement};
use crate::outcome::{Presentation, Table};
use crate::spec::{check_each, ensure, exact, FieldError};
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

/// Parameters of sparse/counting-lower-bound as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
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

/// A printed decimal reference, resolved: its value and half a unit in its last digit.
#[derive(Debug, Clone)]
struct Decimal {
    value: Rational,
    half: Rational,
}

impl Decimal {
    /// `s` as a plain decimal, or `None`.
    fn parse(s: &str) -> Option<Decimal> {
        let k = decimal_places(s)?;
        let value = crate::kernel::parse_rational(s).ok()?;
        let half = Rational::from((1, 2 * Integer::from(10).pow(k)));
        Some(Decimal { value, half })
    }
}

/// Parameters of sparse/counting-lower-bound, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The parameters as written (names and tables quote them).
    pub raw: Raw,
    /// The Stirling tolerance in bits, positive.
    tol: Rational,
    /// Per reference row: log₂(n!)/n and log₂ n − 1/ln 2 as printed.
    printed: Vec<[Decimal; 2]>,
}

/// sparse/counting-lower-bound.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(raw: Raw, _at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        check_each(&raw.reference, "reference", |at, r| {
            ensure(
                (3..=MAX_N).contains(&r.n),
                at,
                format!("n = {} is out of range: use 3 to {MAX_N}", r.n),
            )?;
            ensure(
                r.ceil_log2_factorial <= 1 << 26,
                at,
                "ceil_log2_factorial exceeds 2^26 (log₂ n! < 2^25 for n ≤ 2^20)",
            )?;
            for (f, s) in [
                ("log2_factorial_per_n", &r.log2_factorial_per_n),
                ("leading_term", &r.leading_term),
            ] {
                decimal_places(s).ok_or_else(|| {
                    FieldError::new(at, format!("{f}: `{s}` is not a plain decimal"))
                })?;
            }
            Ok(())
        })?;
        let tol = exact("stirling_tol_bits", &raw.stirling_tol_bits)?;
        ensure(tol > 0, "stirling_tol_bits", "must be positive")?;
        ensure(
            (16..=1 << 16).contains(&raw.sweep_max),
            "sweep_max",
            "out of range: use 16 to 65536",
        )?;
        check_each(&raw.instances, "instances", |f, i| {
            ensure(
                (3..=MAX_N).contains(&i.n),
                f,
                format!("n = {} is out of range: use 3 to {MAX_N}", i.n),
            )?;
            ensure(i.d != 0 && i.bits != 0, f, "d and bits must be positive")
        })?;
        let mut printed = Vec::with_capacity(raw.reference.len());
        for (i, r) in raw.reference.iter().enumerate() {
            let parse = |f: &str, s: &str| {
                Decimal::parse(s).ok_or_else(|| {
                    FieldError::new(
                        format!("reference[{i}]"),
                        format!("{f}: `{s}` is not a plain decimal"),
                    )
                })
            };
            printed.push([
                parse("log2_factorial_per_n", &r.log2_factorial_per_n)?,
                parse("leading_term", &r.leading_term)?,
            ]);
        }
        Ok(Params { raw, tol, printed })
    }
    /// The statement: every decision of the claim, as exact integer facts or
    /// interval formulas over ln n! = Σ ln i (see the module doc).
    fn statement(
        p: &Params,
        claim: &str,
        _hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        let mut st = Statement::new(claim);
        let tol = || q(&p.tol);
        for (r, [per_n, lead]) in p.raw.reference.iter().zip(&p.printed) {
            let n = r.n;
            st.state(
                ceil_log2_name(n, r.ceil_log2_factorial),
                &ceil_log2_factorial_formula(n, r.ceil_log2_factorial),
            );
            st.state(
                format!("n = {n}: log₂(n!)/n prints as {}", r.log2_factorial_per_n),
                &prints_as(per_n_term(n), per_n),
            );
            st.state(
                format!("n = {n}: log₂ n − 1/ln 2 prints as {}", r.leading_term),
                &prints_as(leading_term(n), lead),
            );
            st.state(
                format!(
                    "n = {n}: least integer D·p = ⌈{}/{n}⌉ = {}",
                    r.ceil_log2_factorial, r.least_dp
                ),
                &eq(
                    ceil(div(r.ceil_log2_factorial.into(), n.into())),
                    r.least_dp.into(),
                ),
            );
            // Stirling's series with Robbins' explicit remainder:
            // ln n! ∈ (s + 1/(12n+1), s + 1/(12n)), s = n ln n − n + ½ ln(2πn),
            // stated as |ln n! − centre| < half-width (one evaluation of the sum).
            let lo = Rational::from((1, 12 * u64::from(n) + 1));
            let hi = Rational::from((1, 12 * u64::from(n)));
            let centre = Rational::from(&lo + &hi) / 2u32;
            let half = Rational::from(&hi - &lo) / 2u32;
            let stirling = add([
                mul([n.into(), ln(n.into())]),
                neg(n.into()),
                mul([lit("1/2"), ln(mul([int(2), pi(), n.into()]))]),
                q(&centre),
            ]);
            st.state(
                format!("n = {n}: Stirling's series with Robbins' remainder encloses ln n!"),
                &lt(abs(sub(ln_factorial_term(n), stirling)), q(&half)),
            );
        }
        // the gap over the sweep, by Robbins' remainder (gap(n) ≤ g(n) for every
        // n ≥ 1; the reference rows check the enclosure itself against ln n!)
        st.state(
            format!(
                "for every n in 16..={}: log₂(n!)/n − (log₂ n − 1/ln 2) ≤ g(n) ≤ {} bits (Robbins)",
                p.raw.sweep_max, p.raw.stirling_tol_bits
            ),
            &forall("n", 16, p.raw.sweep_max, le(robbins_gap_term_var(), tol())),
        );
        st.state(
            format!(
                "for every n ≥ {m}: gap ≤ g(n) ≤ g({m}) ≤ {} bits (Robbins; g decreasing)",
                p.raw.stirling_tol_bits,
                m = p.raw.sweep_max
            ),
            &le(robbins_gap_term(p.raw.sweep_max), tol()),
        );
        let mut bracketed: Vec<u32> = p.raw.reference.iter().map(|r| r.n).collect();
        for i in &p.raw.instances {
            let c = ceil_log2_factorial(i.n);
            if !bracketed.contains(&i.n) {
                bracketed.push(i.n);
                st.state(ceil_log2_name(i.n, c), &ceil_log2_factorial_formula(i.n, c));
            }
            st.state(
                format!(
                    "n = {}, d = {}, p = {} bits: D·p = 2·d·p ≥ ⌈⌈log₂ n!⌉/n⌉ = ⌈{c}/{}⌉",
                    i.n, i.d, i.bits, i.n
                ),
                &ge(
                    mul([int(2), i.d.into(), i.bits.into()]),
                    ceil(div(c.into(), i.n.into())),
                ),
            );
        }
        Some(Ok(st))
    }
    type Witness = Tables;
    /// The tables' numbers, from the exact n! (untrusted; the statement is the
    /// whole claim).
    fn witness(p: &Params, ctx: &Ctx) -> Tables {
        let prec = ctx.prec();
        let reference = p
            .raw
            .reference
            .iter()
            .map(|r| {
                let n = r.n;
                let f = Integer::from(Integer::factorial(n));
                let ln2 = Interval::ln2(prec);
                let per_n = (&Interval::from_integer(prec, &f).ln() / &ln2).div_i64(i64::from(n));
                RefRow {
                    n,
                    ceil_log2_factorial: ceil_log2_factorial(n),
                    per_n: per_n.mid_f64(),
                    lead: crate::kernel::expr::eval_built(
                        &leading_term(n),
                        prec,
                        &Default::default(),
                    )
                    .ok()
                    .map(|x| x.mid_f64()),
                    least_dp: least_dp(n),
                    gap: gap_of(&f, n, prec),
                }
            })
            .collect();
        // the largest gap over the sweep, for the key figure
        let mut f = Integer::from(Integer::factorial(15));
        let mut worst = (Interval::zero(prec), 16u32);
        for n in 16..=p.raw.sweep_max {
            f *= n;
            let gap = gap_of(&f, n, prec);
            if gap.hi() > worst.0.hi() {
                worst = (gap, n);
            }
        }
        let instances = p
            .raw
            .instances
            .iter()
            .map(|i| (Integer::from(i.d) * 2u32 * i.bits, least_dp(i.n)))
            .collect();
        let largest = p
            .raw
            .reference
            .iter()
            .max_by_key(|r| r.n)
            .map(|r| (r.n, ceil_log2_factorial(r.n)));
        Tables {
            reference,
            worst,
            instances,
            largest,
        }
    }
    /// The tables, the figures and the note.
    fn present(p: &Params, w: &Tables, _: Option<&Checked>, _: &Ctx, o: &mut Presentation) {
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
        for r in &w.reference {
            table.row(vec![
                r.n.to_string(),
                r.ceil_log2_factorial.to_string(),
                format!("{:.7}", r.per_n),
                r.lead.map_or("—".into(), |x| format!("{x:.6}")),
                r.least_dp.to_string(),
                r.gap.fmt_outward(4),
            ]);
        }
        let mut inst = Table::new(
            "The reconstruction's width against the bound (D = 2d)",
            &["n", "d", "bits p", "D·p", "least integer D·p", "satisfied"],
        );
        for (i, (have, need)) in p.raw.instances.iter().zip(&w.instances) {
            inst.row(vec![
                i.n.to_string(),
                i.d.to_string(),
                i.bits.to_string(),
                have.to_string(),
                need.to_string(),
                if *have >= *need {
                    "yes".into()
                } else {
                    "no".into()
                },
            ]);
        }
        if let Some((n, c)) = w.largest {
            o.figure(format!("⌈log₂ n!⌉ at n = {n}"), c as f64, c.to_string());
        }
        let (gap, n) = &w.worst;
        o.figure(
            "largest Stirling gap (bits, n ≥ 16)",
            gap.hi_f64(),
            format!("{} at n = {n}", gap.fmt_outward(6)),
        );
        o.tables.push(table);
        o.tables.push(inst);
        o.note(
            "The bound concerns finite-precision inputs only: with unbounded real inputs no Ω(log n) bound holds for \
             support patterns (sparse.md §6, moment-curve remark).",
        );
    }
}

/// The numbers of the tables and figures, from the exact n! (untrusted).
pub struct Tables {
    /// Per reference row.
    reference: Vec<RefRow>,
    /// The largest gap over the sweep, and its n.
    worst: (Interval, u32),
    /// Per reconstruction instance: D·p = 2·d·p and the least integer D·p.
    instances: Vec<(Integer, u64)>,
    /// The largest reference n and its ⌈log₂ n!⌉.
    largest: Option<(u32, u64)>,
}

/// One reference row, computed.
struct RefRow {
    n: u32,
    ceil_log2_factorial: u64,
    /// log₂(n!)/n (midpoint).
    per_n: f64,
    /// log₂ n − 1/ln 2 (midpoint), when evaluated.
    lead: Option<f64>,
    least_dp: u64,
    /// log₂(n!)/n − (log₂ n − 1/ln 2).
    gap: Interval,
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

/// ln n! = Σ_{i=2}^{n} ln i, as a term (n ≥ 2).
fn ln_factorial_term(n: u32) -> Term {
    sum("i", 2, n, ln(var("i")))
}

/// log₂(n!)/n as a term.
fn per_n_term(n: u32) -> Term {
    div(ln_factorial_term(n), mul([n.into(), ln(int(2))]))
}

/// log₂ n − 1/ln 2 as a term.
fn leading_term(n: u32) -> Term {
    div(sub(ln(n.into()), int(1)), ln(int(2)))
}

/// "x prints as the decimal s": |x − s| ≤ ½·10^−k (k decimals of s).
fn prints_as(term: Term, s: &Decimal) -> Formula {
    le(abs(sub(term, q(&s.value))), q(&s.half))
}

/// Robbins' bound g(n) = (½·log₂(2πn) + 1/(12n·ln 2))/n on the gap, as a term in
/// `n` (a literal or the bound variable `n`).
fn robbins_gap_term_of(n: impl Fn() -> Term) -> Term {
    div(
        add([
            div(ln(mul([int(2), pi(), n()])), mul([int(2), ln(int(2))])),
            div(int(1), mul([int(12), n(), ln(int(2))])),
        ]),
        n(),
    )
}

fn robbins_gap_term(n: u32) -> Term {
    robbins_gap_term_of(|| n.into())
}

fn robbins_gap_term_var() -> Term {
    robbins_gap_term_of(|| var("n"))
}

/// "⌈log₂ n!⌉ = c": the exact bracketing 2^{c−1} < n! ≤ 2^c, n! an exact literal.
fn ceil_log2_factorial_formula(n: u32, c: u64) -> Formula {
    let f = || q(&Rational::from(Integer::factorial(n)));
    and([
        lt(pow(int(2), c.saturating_sub(1)), f()),
        le(f(), pow(int(2), c)),
    ])
}

fn ceil_log2_name(n: u32, c: u64) -> String {
    format!(
        "n = {n}: ⌈log₂ n!⌉ = {c} (2^{} < n! ≤ 2^{c}, exact integers)",
        c.saturating_sub(1)
    )
}

/// log₂(n!)/n − (log₂ n − 1/ln 2) from the exact n! (presentation only: the
/// statement decides the sweep).
fn gap_of(f: &Integer, n: u32, prec: u32) -> Interval {
    let ln2 = Interval::ln2(prec);
    let per_n = (&Interval::from_integer(prec, f).ln() / &ln2).div_i64(i64::from(n));
    let lead = &(&Interval::from_i64(prec, i64::from(n)).ln() - &Interval::one(prec)) / &ln2;
    &per_n - &lead
}
