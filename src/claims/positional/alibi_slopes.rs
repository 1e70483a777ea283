//! positional/alibi-slopes: the paper's and the official code's ALiBi slope rules.
//!
//! Every slope is m = 2^{−q} with q an exact rational (common::slope_exponents),
//! so rules, geometric structure, ranges and reference lists are compared
//! exactly in ℚ. The official code computes slopes in f64 as `start·ratio^i`;
//! we reproduce those doubles platform-independently with MPFR at 53 bits,
//! round-to-nearest (what a correctly rounded `pow` gives), and certify their
//! distance to 2^{−q} with intervals.

use super::common::{slope_exponents, slope_interval, SlopeRule};
use crate::certificate::Certificate;
use crate::claims::Ctx;
use crate::kernel::{parse_rational, Certainty, Interval};
use crate::outcome::{Outcome, Table};
use crate::spec::{ensure, ensure_each, FieldError};
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

/// Parameters of positional/alibi-slopes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Head counts to check (powers of two and others).
    pub heads: Vec<usize>,
    /// Relative tolerance for the official f64 formula vs 2^{−q} (exact literal).
    pub f64_rel_tol: String,
    /// Reference exponent lists to reproduce exactly.
    pub reference: Vec<Reference>,
}

impl crate::spec::Params for Params {
    fn validate(&self) -> Result<(), FieldError> {
        ensure_each(&self.heads, "heads", |&h| {
            if (1..=4096).contains(&h) {
                Ok(())
            } else {
                Err(format!("{h} heads is out of range: use 1 to 4096"))
            }
        })?;
        let tol = parse_rational(&self.f64_rel_tol)
            .map_err(|e| FieldError::new("f64_rel_tol", e.to_string()))?;
        ensure(tol > 0, "f64_rel_tol", "must be positive")?;
        for (i, r) in self.reference.iter().enumerate() {
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
            for (j, e) in r.exponents.iter().enumerate() {
                parse_rational(e).map_err(|err| {
                    FieldError::new(format!("reference[{i}].exponents[{j}]"), err.to_string())
                })?;
            }
        }
        Ok(())
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

/// Runs the claim.
pub fn run(p: &Params, ctx: &Ctx) -> Outcome {
    let prec = ctx.prec();
    let mut o = Outcome::new();
    let tol = Interval::from_rational(prec, &parse_rational(&p.f64_rel_tol).expect("validated"));
    let mut cert = Certificate::new(&ctx.spec.id, prec);
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
        if h.is_power_of_two() {
            o.checks.certify(
                format!("H = {h}: code rule = paper rule (power of two)"),
                Certainty::exact(agree),
                format!("exponents {}", fmt_q(&paper)),
            );
        } else {
            o.checks.certify(
                format!("H = {h}: code rule ≠ paper rule (documented discrepancy)"),
                Certainty::exact(!agree),
                format!("paper {} | code {}", fmt_q(&paper), fmt_q(&code)),
            );
            // the code's second block is every other element of the 2P list
            let pw = 1usize << (usize::BITS - 1 - h.leading_zeros());
            let two_p = slope_exponents(2 * pw, SlopeRule::Paper);
            let interleaved: Vec<Rational> = two_p.into_iter().step_by(2).take(h - pw).collect();
            o.checks.certify(
                format!(
                    "H = {h}: closed form {{4(2j − 1)/P}} = slopes(2P)[0::2][:H − P], P = {pw}"
                ),
                Certainty::exact(code[pw..] == interleaved[..]),
                fmt_q(&interleaved),
            );
        }
        // paper rule: geometric, first term = ratio ⇔ q_k = k·q_1
        let q1 = paper[0].clone();
        let geometric = paper
            .iter()
            .enumerate()
            .all(|(k, q)| *q == Rational::from(&q1 * (k as i64 + 1)));
        o.checks.certify(
            format!("H = {h}: paper rule geometric with ratio = first term = 2^−{q1}"),
            Certainty::exact(geometric),
            "q_k = k·q_1 for every k (exact rationals)",
        );
        let in_range = paper.iter().chain(&code).all(|q| *q > 0);
        o.checks.certify(
            format!("H = {h}: all slopes in (0, 1)"),
            Certainty::exact(in_range),
            "q > 0 ⇔ 0 < 2^−q < 1",
        );
        // the official f64 values against the exact slopes of the rule the code uses
        let f = official_f64_slopes(h);
        let mut c = Certainty::True;
        let mut max_rel_hi = Interval::zero(prec);
        let mut max_ulps = 0i64;
        let mut exact_all = true;
        for (k, (fv, q)) in f.iter().zip(&code).enumerate() {
            let m = slope_interval(q, prec);
            let fi = Interval::from_endpoints(Float::with_val(prec, fv), Float::with_val(prec, fv));
            let rel = &(&fi - &m).abs() / &m;
            max_rel_hi = max_rel_hi.max(&rel);
            c = c.and(rel.le(&tol));
            let is_exact = m.eq_exact(&fi);
            exact_all &= is_exact == Certainty::True;
            // ulps: distance to the nearest double of 2^{−q}, counted in the double's ulp
            let near = Float::with_val_round(53, m.mid(), Round::Nearest).0;
            let ulp = Float::with_val(prec, 1) << (near.get_exp().unwrap_or(0) - 53);
            let diff = Float::with_val(prec, fv - &near).abs() / &ulp;
            let u = diff.to_f64().round() as i64;
            max_ulps = max_ulps.max(u);
            if k < 2 {
                let frac = fv.to_rational().expect("finite");
                cert.push(
                    format!("H = {h}, head {}: official f64 slope within rel {} of 2^−{q}", k + 1, p.f64_rel_tol),
                    format!(
                        "(<= (abs (- {frac} (exp (* (neg {q}) (ln 2))))) (* {} (exp (* (neg {q}) (ln 2)))))",
                        p.f64_rel_tol
                    ),
                );
            }
        }
        if max_ulps > worst_ulps {
            worst_ulps = max_ulps;
            worst_h = h;
        }
        worst_u = worst_u.max(units_of_u(&max_rel_hi));
        o.checks.certify(
            format!(
                "H = {h}: official f64 slopes within relative {} of 2^−q",
                p.f64_rel_tol
            ),
            c,
            format!("max relative error ≤ {}", max_rel_hi.fmt_hi(3)),
        );
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
    for r in &p.reference {
        let want: Vec<Rational> = r
            .exponents
            .iter()
            .map(|e| parse_rational(e).expect("validated"))
            .collect();
        let got = slope_exponents(r.heads, r.rule);
        o.checks.certify(
            format!(
                "reference: H = {}, {} rule = [{}]",
                r.heads,
                r.rule.as_str(),
                r.exponents.join(", ")
            ),
            Certainty::exact(got == want),
            format!("computed [{}]", fmt_q(&got)),
        );
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
        "The official f64 slopes are reproduced with MPFR at 53 bits, round-to-nearest (a correctly rounded pow); a \
         platform libm that is not correctly rounded may differ by an ulp.",
    );
    if !cert.obligations.is_empty() {
        o.certificate = Some(cert);
    }
    o
}
