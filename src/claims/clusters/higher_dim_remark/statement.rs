//! (a) The statement of clusters/higher-dim-remark: L(ε), the bound exponent X(ε, T),
//! and the obligations (the literal claim, expected to fail; L(ε) to its printed
//! digits; the closed-form bound on P₁₂).

use super::*;
use crate::kernel::expr::build::{abs, div, exp, ge, int, le, ln, mul, q, sub, Term};

/// L(ε) = ε e^{−1/(2ε²)} as a term of the obligation language (the one source of
/// the formula: the statement asserts it, tables and figures evaluate it).
pub fn lower_term(eps: &Rational) -> Term {
    let e = || q(eps);
    mul([e(), exp(div(int(-1), mul([int(2), mul([e(), e()])])))])
}

/// X(ε, T) = 2L(ε)² e^{2T} / ln 10, so that P₁₂(T) ≤ exp(−2L²e^{2T}) = 10^{−X}, as a term.
pub fn exponent10_term(eps: &Rational, t: &Rational) -> Term {
    let l = || lower_term(eps);
    div(
        mul([int(2), mul([l(), l()]), exp(mul([int(2), q(t)]))]),
        ln(int(10)),
    )
}

/// L(ε) = ε e^{−1/(2ε²)}, an outward-rounded enclosure (evaluates [`lower_term`]).
pub fn lower_bound(eps: &Rational, prec: u32) -> Interval {
    expr::eval_built(&lower_term(eps), prec, &Default::default()).expect("a well-formed term")
}

/// X(ε, T), an outward-rounded enclosure (evaluates [`exponent10_term`]).
pub fn bound_exponent10(eps: &Rational, t: &Rational, prec: u32) -> Interval {
    expr::eval_built(&exponent10_term(eps, t), prec, &Default::default())
        .expect("a well-formed term")
}

/// The name of the obligation "single cluster" at ε (the spec's `refutes` lists them).
pub fn single_cluster_name(eps: &Rational) -> String {
    format!(
        "single cluster at ε = {}: lim z₁ = lim z₂ (the remark's literal claim)",
        fmt_q(eps)
    )
}

/// The hint key of the printed exponent at ε.
pub(super) fn exponent_hint(eps: &Rational) -> String {
    format!("bound exponent at ε = {eps}")
}

/// The statement. For each ε of the limit table: the remark's literal claim
/// lim z₁ = lim z₂, which implies 2L(ε) ≤ 0 since the limits are 2C(ε) ≥ 2L(ε) apart
/// (module docs) — expected to fail; L(ε) to the printed digits of clusters.md §4;
/// and the closed-form bound P₁₂(T) ≤ 10^{−k} with k the printed exponent (a hint
/// from the run: any k gives a sound obligation X ≥ k).
pub(super) fn statement_of(
    p: &Params,
    claim: &str,
    hints: &Hints,
) -> Result<Statement, StatementError> {
    let mut st = Statement::new(claim);
    for ((eps, _, l_txt), (l_ref, hu)) in p.limits.iter().zip(&p.lower) {
        let l = || lower_term(eps);
        st.state(single_cluster_name(eps), &le(mul([int(2), l()]), int(0)));
        st.state(
            format!(
                "L({}) = {l_txt} to the printed digits (clusters.md §4)",
                fmt_q(eps)
            ),
            &le(abs(sub(l(), q(l_ref))), q(hu)),
        );
        let key = exponent_hint(eps);
        let k_txt = hints.get(&key).ok_or_else(|| StatementError::Hint {
            key: key.clone(),
            reason: format!("hint `{key}` is missing"),
        })?;
        let k = parse_rational(k_txt).map_err(|e| StatementError::Hint {
            key: key.clone(),
            reason: format!("hint `{key}`: {e}"),
        })?;
        st.state(
            format!(
                "closed-form bound at ε = {}: P₁₂({}) ≤ exp(−2L²e^{{2T}}) ≤ 10^−{k_txt}",
                fmt_q(eps),
                fmt_q(&p.bound_t),
            ),
            &ge(exponent10_term(eps, &p.bound_t), q(&k)),
        );
    }
    Ok(st)
}
