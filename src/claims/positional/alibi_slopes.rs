//! positional/alibi-slopes: the paper's and the official code's ALiBi slope rules.
//!
//! Every slope is m = 2^{−q} with q an exact rational (common::slope_exponents),
//! so rules, geometric structure, ranges and reference lists are compared
//! exactly in ℚ. The official code computes slopes in f64 as `start·ratio^i`;
//! we reproduce those doubles platform-independently with MPFR at 53 bits,
//! round-to-nearest (what a correctly rounded `pow` gives). The statement states
//! both rules as formulas in the head index k and each double's distance to
//! 2^{−q} (every head of every H), decided by the kernel.

use super::common::{slope_exponents, slope_interval, SlopeRule};
use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::{Exact, StatementError};
use crate::kernel::expr::build::{
    abs, add, and, div, eq, exp, forall, int, le, ln, mul, neg, not, pow, q, sub, var, Term,
};
use crate::kernel::{parse_rational, Certainty, Checked, Interval, Statement};
use crate::outcome::{Presentation, Table};
use crate::spec::{check_each, ensure, FieldError};
use rug::float::Round;
use rug::ops::Pow;
use rug::{Float, Rational};
use serde::{Deserialize, Serialize};

/// A reference exponent list −log2 m by head (positional.md §3).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// H.
    pub heads: usize,
    /// Which rule.
    pub rule: SlopeRule,
    /// The exponents q_1..q_H as exact literals.
    pub exponents: Vec<String>,
}

/// Parameters of positional/alibi-slopes as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// Head counts to check (powers of two and others).
    pub heads: Vec<usize>,
    /// Relative tolerance for the official f64 formula vs 2^{−q} (exact literal).
    pub f64_rel_tol: String,
    /// Reference exponent lists to reproduce exactly.
    pub reference: Vec<Reference>,
}

/// A reference exponent list, resolved.
#[derive(Debug, Clone)]
pub struct ExactReference {
    /// H.
    pub heads: usize,
    /// Which rule.
    pub rule: SlopeRule,
    /// The exponents q_1..q_H.
    pub exponents: Vec<Rational>,
    /// The exponents as written.
    pub exponents_text: Vec<String>,
}

/// Parameters of positional/alibi-slopes, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// Head counts to check.
    pub heads: Vec<usize>,
    /// Relative tolerance for the official f64 formula vs 2^{−q}, positive.
    pub f64_rel_tol: Exact,
    /// Reference exponent lists to reproduce exactly.
    pub reference: Vec<ExactReference>,
}

/// positional/alibi-slopes.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(raw: Raw, _at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        let r0 = &raw;
        check_each(&r0.heads, "heads", |f, &h| {
            ensure(
                (1..=4096).contains(&h),
                f,
                format!("{h} heads is out of range: use 1 to 4096"),
            )
        })?;
        let tol = parse_rational(&r0.f64_rel_tol)
            .map_err(|e| FieldError::new("f64_rel_tol", e.to_string()))?;
        ensure(tol > 0, "f64_rel_tol", "must be positive")?;
        let mut reference = Vec::with_capacity(r0.reference.len());
        for (i, r) in r0.reference.iter().enumerate() {
            ensure(
                (1..=4096).contains(&r.heads),
                format!("reference[{i}].heads"),
                "out of range: use 1 to 4096",
            )?;
            ensure(
                r.exponents.len() == r.heads,
                format!("reference[{i}].exponents"),
                format!("has {} entries for {} heads", r.exponents.len(), r.heads),
            )?;
            let mut exponents = Vec::with_capacity(r.exponents.len());
            for (j, e) in r.exponents.iter().enumerate() {
                exponents.push(parse_rational(e).map_err(|err| {
                    FieldError::new(format!("reference[{i}].exponents[{j}]"), err.to_string())
                })?);
            }
            reference.push(ExactReference {
                heads: r.heads,
                rule: r.rule,
                exponents,
                exponents_text: r.exponents.clone(),
            });
        }
        Ok(Params {
            heads: raw.heads,
            f64_rel_tol: Exact {
                value: tol,
                text: raw.f64_rel_tol,
            },
            reference,
        })
    }
    fn statement(
        p: &Params,
        claim: &str,
        _hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        Some(Ok(p.build_statement(claim)))
    }
    type Witness = ();
    fn witness(_: &Params, _: &Ctx) {}
    /// The presentation: the statement decides the claim; tables, plots and notes
    /// show its terms.
    fn present(p: &Params, _: &(), _: Option<&Checked>, ctx: &Ctx, o: &mut Presentation) {
        let prec = ctx.prec();
        let mut table = Table::new(
            "Slopes by head count (−log2 m, exact)",
            &["H", "paper rule", "code rule", "rules agree"],
        );
        let mut ftab = Table::new(
            "Official f64 slopes against 2^−q",
            &[
                "H",
                "rule used by the code",
                "max relative error (upper bound)",
                "in units of u = 2^−53",
                "max ulps of the slope",
                "exact",
            ],
        );
        let mut worst_ulps = 0i64;
        let mut worst_h = 0usize;
        let mut worst_u = 0f64;
        for &h in &p.heads {
            let paper = slope_exponents(h, SlopeRule::Paper);
            let code = slope_exponents(h, SlopeRule::Code);
            let agree = paper == code;
            table.row(vec![
                h.to_string(),
                fmt_q(&paper),
                fmt_q(&code),
                if agree {
                    "yes".into()
                } else {
                    "no (documented discrepancy)".into()
                },
            ]);
            // the official f64 values against the exact slopes of the rule the code uses
            let f = official_f64_slopes(h);
            let mut max_rel_hi = Interval::zero(prec);
            let mut max_ulps = 0i64;
            let mut exact_all = true;
            for (fv, q) in f.iter().zip(&code) {
                let m = slope_interval(q, prec);
                let fi =
                    Interval::from_endpoints(Float::with_val(prec, fv), Float::with_val(prec, fv));
                let rel = &(&fi - &m).abs() / &m;
                max_rel_hi = max_rel_hi.max(&rel);
                let is_exact = m.eq_exact(&fi);
                exact_all &= is_exact == Certainty::True;
                // ulps: distance to the nearest double of 2^{−q}, counted in the double's ulp
                let near = Float::with_val_round(53, m.mid(), Round::Nearest).0;
                let ulp = Float::with_val(prec, 1) << (near.get_exp().unwrap_or(0) - 53);
                let diff = Float::with_val(prec, fv - &near).abs() / &ulp;
                let u = diff.to_f64().round() as i64;
                max_ulps = max_ulps.max(u);
            }
            if max_ulps > worst_ulps {
                worst_ulps = max_ulps;
                worst_h = h;
            }
            worst_u = worst_u.max(units_of_u(&max_rel_hi));
            ftab.row(vec![
                h.to_string(),
                if h.is_power_of_two() {
                    "paper (= code)".into()
                } else {
                    "code".into()
                },
                max_rel_hi.fmt_hi(3),
                format!("{:.2}", units_of_u(&max_rel_hi)),
                max_ulps.to_string(),
                if exact_all { "yes".into() } else { "no".into() },
            ]);
        }
        o.figure(
            "max relative error of the official f64 slopes / 2^−53",
            (worst_u * 100.0).round() / 100.0,
            format!("{worst_u:.2} (reference: 14 at H = 32); {worst_ulps} ulps of the slope itself (at H = {worst_h})"),
        );
        o.figure(
            "head counts checked",
            p.heads.len() as f64,
            p.heads.len().to_string(),
        );
        o.tables.push(table);
        o.tables.push(ftab);
        o.note(
            "For H not a power of two (3, 6, 12, 24) the paper's rule 2^{−8k/H} and the official code's interleaved rule give \
             different slopes. H = 12 is the head count of the authors' own gpt-neox setup; which rule the Sandwich \
             experiments used is [unconfirmed] (running the authors' code gives the code rule).",
        );
        o.note(
            "The paper rule q_k = 8k/H is geometric with ratio = first term (q_k = k·q_1) and every slope lies in (0, 1) \
             (q_k > 0) by its form, for every H: these are not checks (a check that cannot fail proves nothing).",
        );
        o.note(
            "The official f64 slopes are reproduced with MPFR at 53 bits, round-to-nearest (a correctly rounded pow); a \
             platform libm that is not correctly rounded may differ by an ulp.",
        );
    }
}

// ----- the statement: the two rules as formulas in the head index k -----

/// The paper rule's exponent q_k = 8k/H as a term in `k`.
fn paper_q(k: Term, h: usize) -> Term {
    div(mul([int(8), k]), h.into())
}

/// The official code's exponent of slope k of `get_slopes_power_of_2(n)`, as a term:
/// start = 2^(−2^(−(log2 n − 3))) and slope k = start^k, so q = k·2^(3 − log2 n).
fn pow2_code_q(k: Term, n: usize) -> Term {
    let log2 = n.trailing_zeros() as i32;
    mul([k, pow(int(2), 3 - log2)])
}

/// The official code's exponent of head k (1-based) for H heads, as a term: for a
/// power of two, `get_slopes_power_of_2(H)`; otherwise, with P = 2^⌊log2 H⌋, head
/// k ≤ P of slopes(P) and head k > P element 2(k − P) − 1 (1-based) of slopes(2P).
/// `k` lies on the side of P the caller states (`second`).
fn code_q(k: Term, h: usize, second: bool) -> Term {
    let p = pow2_below(h);
    if second {
        pow2_code_q(sub(mul([int(2), sub(k, p.into())]), int(1)), 2 * p)
    } else {
        pow2_code_q(k, p)
    }
}

/// 2^{−q} as a term.
fn slope_term(q_: &Rational) -> Term {
    exp(mul([neg(q(q_)), ln(int(2))]))
}

/// The largest power of two ≤ h.
fn pow2_below(h: usize) -> usize {
    1usize << (usize::BITS - 1 - h.leading_zeros())
}

impl Params {
    /// The obligations, f64 slopes first (one per H), then the rules per H, then the
    /// references.
    fn build_statement(&self, claim: &str) -> Statement {
        let mut st = Statement::new(claim);
        let tol = &self.f64_rel_tol.value;
        for &h in &self.heads {
            // the official doubles (MPFR emulation of the Python code, re-derived here)
            // against 2^{−q} of the code rule
            let f = official_f64_slopes(h);
            let code = slope_exponents(h, SlopeRule::Code);
            let parts = f.iter().zip(&code).map(|(fv, q_)| {
                let frac = fv.to_rational().expect("finite");
                let m = slope_term(q_);
                le(abs(sub(q(&frac), m.clone())), mul([q(tol), m]))
            });
            st.state(self.f64_name(h), &and(parts));
        }
        let k = || var("k");
        for &h in &self.heads {
            let p = pow2_below(h);
            if p == h {
                st.state(
                    format!("H = {h}: code rule = paper rule (power of two)"),
                    &forall("k", 1, h as i64, eq(code_q(k(), h, false), paper_q(k(), h))),
                );
            } else {
                let first = forall("k", 1, p as i64, eq(code_q(k(), h, false), paper_q(k(), h)));
                let second = forall(
                    "k",
                    p as i64 + 1,
                    h as i64,
                    eq(code_q(k(), h, true), paper_q(k(), h)),
                );
                st.state(
                    format!("H = {h}: code rule ≠ paper rule (documented discrepancy)"),
                    &not(and([first, second])),
                );
                // the closed form of the second block against the code's construction
                let j = || var("j");
                st.state(
                    format!(
                        "H = {h}: closed form {{4(2j − 1)/P}} = slopes(2P)[0::2][:H − P], P = {p}"
                    ),
                    &forall(
                        "j",
                        1,
                        (h - p) as i64,
                        eq(
                            div(mul([int(4), sub(mul([int(2), j()]), int(1))]), p.into()),
                            code_q(add([j(), p.into()]), h, true),
                        ),
                    ),
                );
            }
        }
        for r in &self.reference {
            let h = r.heads;
            let p = pow2_below(h);
            let parts = r.exponents.iter().enumerate().map(|(i, e)| {
                let k = Term::from(i + 1);
                let q_ = match r.rule {
                    SlopeRule::Paper => paper_q(k, h),
                    SlopeRule::Code => code_q(k, h, i >= p),
                };
                eq(q_, q(e))
            });
            st.state(
                format!(
                    "reference: H = {}, {} rule = [{}]",
                    r.heads,
                    r.rule.as_str(),
                    r.exponents_text.join(", ")
                ),
                &and(parts),
            );
        }
        st
    }

    fn f64_name(&self, h: usize) -> String {
        format!(
            "H = {h}: official f64 slopes within relative {} of 2^−q",
            self.f64_rel_tol
        )
    }
}

/// The official code's f64 slopes (`get_slopes` in ofirpress/attention_with_linear_biases):
/// for a power of two n, start = 2^(−2^(−(log2 n − 3))), slopes = [start·start^i];
/// otherwise slopes(P) + slopes(2P)[0::2][:H − P], P = 2^⌊log2 H⌋. Each Python float
/// operation is emulated by MPFR at 53 bits, round-to-nearest.
pub fn official_f64_slopes(heads: usize) -> Vec<Float> {
    fn pow2(n: usize) -> Vec<Float> {
        let k = n.trailing_zeros() as i32; // log2 n, exact for a power of two
        let inner =
            Float::with_val_round(53, Float::with_val(53, 2).pow(-(k - 3)), Round::Nearest).0;
        let start = Float::with_val_round(53, Float::with_val(53, 2).pow(-inner), Round::Nearest).0;
        (0..n)
            .map(|i| {
                let r = Float::with_val_round(53, start.clone().pow(i as i32), Round::Nearest).0;
                Float::with_val_round(53, &start * &r, Round::Nearest).0
            })
            .collect()
    }
    if heads.is_power_of_two() {
        return pow2(heads);
    }
    let p = 1usize << (usize::BITS - 1 - heads.leading_zeros());
    let mut v = pow2(p);
    v.extend(pow2(2 * p).into_iter().step_by(2).take(heads - p));
    v
}

/// An upper bound of the relative error in units of u = 2^−53 (display).
fn units_of_u(rel: &Interval) -> f64 {
    rel.hi_f64() * 2f64.powi(53)
}

fn fmt_q(v: &[Rational]) -> String {
    v.iter()
        .map(|q| q.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
