//! ALiBi's slopes and the tail bound of its window as terms of the formula language: one
//! source for the positional claims (re-exported by `claims::positional::common`) and for
//! `attncheck window` on a model the user brings.

use crate::kernel::expr::build::{add, div, exp, int, lit, ln, mul, neg, q, sub, Term};
use rug::Rational;
use serde::{Deserialize, Serialize};

/// Which slope rule (positional.md §1, "ALiBi").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SlopeRule {
    /// ALiBi §3: m_k = 2^{−8k/H}, k = 1..H.
    Paper,
    /// Official `get_slopes`: the paper rule for powers of two; otherwise
    /// slopes(P) then every other element of slopes(2P), P = 2^⌊log2 H⌋.
    Code,
}

impl SlopeRule {
    /// `"paper"` or `"code"`.
    pub fn as_str(self) -> &'static str {
        match self {
            SlopeRule::Paper => "paper",
            SlopeRule::Code => "code",
        }
    }
}

/// The exact exponents q_1..q_H (slope m = 2^{−q}) of `rule` for H heads.
///
/// Paper: q_k = 8k/H. Code: if H is a power of two, the paper rule; else with
/// P = 2^⌊log2 H⌋: {8k/P}_{k=1..P} followed by {4(2j − 1)/P}_{j=1..H−P}
/// (every other element of the 2P list, starting with its first).
pub fn slope_exponents(heads: usize, rule: SlopeRule) -> Vec<Rational> {
    let h = heads as i64;
    match rule {
        SlopeRule::Paper => (1..=h).map(|k| Rational::from((8 * k, h))).collect(),
        SlopeRule::Code => {
            if heads.is_power_of_two() {
                return slope_exponents(heads, SlopeRule::Paper);
            }
            let p = 1i64 << (63 - (h as u64).leading_zeros());
            let mut q: Vec<Rational> = (1..=p).map(|k| Rational::from((8 * k, p))).collect();
            q.extend((1..=h - p).map(|j| Rational::from((4 * (2 * j - 1), p))));
            q
        }
    }
}

/// The slope m = 2^{−q} as a term: the exact literal `2^-q` when q is an integer,
/// else `exp(−q ln 2)`.
pub fn slope_expr(q_: &Rational) -> Term {
    if q_.denom() == &1 {
        lit(format!("2^-{}", q_.numer()))
    } else {
        exp(mul([neg(q(q_)), ln(int(2))]))
    }
}

/// The term T^∞(w) = 1/(1 + (e^{mw} − 1)/e^Δ) (`claims::positional::common::alibi_tail_inf` in intervals) with `m`, `w`
/// and `delta` any terms (exact literals or bound variables).
pub fn alibi_tail_inf_expr(m: Term, w: Term, delta: Term) -> Term {
    div(
        int(1),
        add([int(1), div(sub(exp(mul([m, w])), int(1)), exp(delta))]),
    )
}
