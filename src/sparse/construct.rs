//! The construction of sparse.md §3 as a library (untrusted: what it builds is
//! certified by the kernel through the obligations of [`assert_lemma`], which the
//! statement builders rebuild for `attncheck verify`).
//!
//! Objects: a sign matrix S ∈ {±1}^{n×d} ([`crate::sparse::sample::draw_signs`]),
//! fixed W_Q = (1/d)·[I_d; 0] and W_K = [0; I_d] (D = 2d), a target A (row-k-sparse,
//! positive on its support) or directly its logits B (exact rationals, the form
//! the claims use: B_ij = Δ + r_ij), the input X = [B S, S] and the attention
//! M = row-softmax(Λ), Λ = X W_Q W_Kᵀ Xᵀ = B S Sᵀ / d. Λ is computed row by row
//! (Λ_i· = (1/d) Σ_{l ∈ supp_i} B_il ⟨s_l, ·⟩, O(k·n·d/64) word operations per
//! row): no n × n matrix is ever stored.

use crate::fast::softmax_fast;
use crate::kernel::expr::build::{
    add, call, ceil, div, eq, ge, int, le, ln, minus, mul, pow, q, sub, var, Term,
};
use crate::kernel::expr::{Datum, SparseRows};
use crate::kernel::{Interval, SignMatrix, Statement};
use rug::Rational;

/// A target A: n × n, each row a list of (column, positive rational weight) with
/// strictly increasing columns; the listed columns are the row's support.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// Size.
    pub n: usize,
    /// The rows.
    pub rows: Vec<Vec<(usize, Rational)>>,
}

/// A malformed target, naming the row.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("row {row}: {reason}")]
pub struct TargetError {
    /// 0-based row.
    pub row: usize,
    /// What is wrong.
    pub reason: String,
}

impl Target {
    /// Checks: n rows, nonempty supports of at most k columns < n, strictly
    /// increasing, positive weights.
    pub fn validate(&self, k: usize) -> Result<(), TargetError> {
        let e = |row: usize, reason: String| Err(TargetError { row, reason });
        if self.rows.len() != self.n {
            return e(self.rows.len(), format!("expected {} rows", self.n));
        }
        for (i, r) in self.rows.iter().enumerate() {
            if r.is_empty() {
                return e(i, "the row is all zeros (empty support)".into());
            }
            if r.len() > k {
                return e(i, format!("{} nonzeros, more than k = {k}", r.len()));
            }
            for (q, (c, v)) in r.iter().enumerate() {
                if *c >= self.n {
                    return e(i, format!("column {c} is not below n = {}", self.n));
                }
                if q > 0 && r[q - 1].0 >= *c {
                    return e(i, "columns must be strictly increasing".into());
                }
                if *v <= 0 {
                    return e(i, format!("weight {v} at column {c} is not positive"));
                }
            }
        }
        Ok(())
    }
}

/// Logits B_ij = Δ + ln(A_ij / min_{supp_i} A) as outward enclosures (ln of a
/// rational is not rational); exact when every ratio is 1.
pub fn logits_from_target(a: &Target, delta: &Rational, prec: u32) -> Vec<Vec<(usize, Interval)>> {
    let dl = Interval::from_rational(prec, delta);
    a.rows
        .iter()
        .map(|r| {
            let m = r.iter().map(|(_, v)| v).min().cloned().unwrap_or_default();
            r.iter()
                .map(|(c, v)| {
                    let ratio = Rational::from(v / &m);
                    let x = if ratio == 1 {
                        dl.clone()
                    } else {
                        &dl + &Interval::from_rational(prec, &ratio).ln()
                    };
                    (*c, x)
                })
                .collect()
        })
        .collect()
}

/// The corollary's t = ε/(2k(γ + ε + ρ)) as a term (γ, ρ, ε are terms, e.g. `(ln 10)`).
pub fn t_expr(k: u64, eps: &Term, gamma: &Term, rho: &Term) -> Term {
    div(
        eps.clone(),
        mul([
            int(2),
            k.into(),
            add([gamma.clone(), eps.clone(), rho.clone()]),
        ]),
    )
}

/// d = ⌈(2/t²)·ln(n²/δ)⌉ as a term (certified ceil when evaluated).
pub fn d_expr(n: u64, t: Term, delta: Term) -> Term {
    ceil(mul([
        div(int(2), pow(t, 2)),
        ln(div(mul([n.into(), n.into()]), delta)),
    ]))
}

/// t* = max_{l≠j} |⟨s_l, s_j⟩| / d of the sign-matrix datum `s`, as a term.
pub fn t_of(s: Term) -> Term {
    div(call("gram-max-abs", [s.clone()]), call("cols", [s]))
}

/// Evaluates a term built by [`t_expr`]/[`d_expr`] to an exact integer, `None`
/// when the precision does not decide the ceiling.
pub fn certified_integer(term: &Term, prec: u32) -> Option<u64> {
    let q = crate::kernel::expr::eval_built_exact(term, prec, &Default::default()).ok()??;
    if *q.denom() != 1 {
        return None;
    }
    q.numer().to_u64()
}

/// Row i of Λ = B S Sᵀ / d, exactly (length n).
pub fn logits_row(s: &SignMatrix, b_row: &[(usize, Rational)]) -> Vec<Rational> {
    let d = s.d() as i64;
    (0..s.n())
        .map(|j| {
            let mut acc = Rational::new();
            for (l, v) in b_row {
                acc += Rational::from(v * s.inner(*l, j));
            }
            acc / d
        })
        .collect()
}

/// Row i of the input X = [B S, S]: (B_i· S, s_i).
pub fn input_row(
    s: &SignMatrix,
    b_row: &[(usize, Rational)],
    i: usize,
) -> (Vec<Rational>, Vec<i64>) {
    let bs = (0..s.d())
        .map(|c| {
            b_row.iter().fold(Rational::new(), |acc, (l, v)| {
                acc + Rational::from(v * s.sign(*l, c))
            })
        })
        .collect();
    (bs, (0..s.d()).map(|c| s.sign(i, c)).collect())
}

/// W_Q (2d × d) entry (r, c): 1/d on the top diagonal, else 0.
pub fn w_q(d: usize, r: usize, c: usize) -> Rational {
    if r == c && r < d {
        Rational::from((1, d))
    } else {
        Rational::new()
    }
}

/// W_K (2d × d) entry (r, c): 1 on the bottom diagonal, else 0.
pub fn w_k(d: usize, r: usize, c: usize) -> Rational {
    if r == d + c {
        Rational::from(1)
    } else {
        Rational::new()
    }
}

/// Certified enclosures of row i of M = row-softmax(Λ) (fast::softmax_fast).
pub fn attention_row(s: &SignMatrix, b_row: &[(usize, Rational)], prec: u32) -> Vec<Interval> {
    let z: Vec<Interval> = logits_row(s, b_row)
        .iter()
        .map(|q| Interval::from_rational(prec, q))
        .collect();
    softmax_fast(&z, prec)
}

/// A witness: the sign matrix, rational logits B (row-sparse) and the exact
/// t* = max_{l≠j} |⟨s_l, s_j⟩| / d.
#[derive(Clone, Debug)]
pub struct Witness {
    /// S.
    pub s: SignMatrix,
    /// B.
    pub b: SparseRows,
    /// t*.
    pub t_star: Rational,
    /// d.
    pub d: usize,
}

/// Exact t* of S (0 when n < 2).
pub fn t_star(s: &SignMatrix) -> Rational {
    Rational::from((s.max_abs_offdiag().map_or(0, |(m, _)| m), s.d() as i64))
}

impl Witness {
    /// Builds the witness (computes t* exactly).
    pub fn new(s: SignMatrix, b: SparseRows) -> Witness {
        let t = t_star(&s);
        let d = s.d();
        Witness { s, b, t_star: t, d }
    }
}

/// Adds to `st` the data S, B and the obligations of the deterministic lemma for
/// them with margin Δ, range ρ, sparsity k and the threshold `t` (a hint: t* found
/// by search; a wrong value makes the first obligation false): t* = t exactly, B's
/// shape (≤ k entries per row, entries in [Δ, Δ + ρ], row sums ≤ k(Δ + ρ)),
/// |E_ij| ≤ η, (a) with 2η, (b) with Δ − 2η (η = t·k·(Δ + ρ)), and the per-row
/// forms with η_i = t·Σ_l B_il. These formulas are the lemma's one source: the
/// claims' statements, `sparse construct` and the run's tables all take them from here.
pub fn assert_lemma(
    st: &mut Statement,
    s: SignMatrix,
    b: SparseRows,
    t: &Rational,
    delta: &Rational,
    rho: &Rational,
    k: usize,
) {
    st.datum("S", Datum::Signs(s));
    st.datum("B", Datum::Sparse(b));
    let (s_, b_) = (|| var("S"), || var("B"));
    let of_b = |op: &str| call(op, [b_()]);
    let of_sb = |op: &str| call(op, [s_(), b_()]);
    let delta_plus_rho = || add([q(delta), q(rho)]);
    let eta = || mul([q(t), k.into(), delta_plus_rho()]);
    st.state("t* = max_{l≠j} |⟨s_l, s_j⟩| / d", &eq(t_of(s_()), q(t)));
    st.state(
        format!("rows of B have ≤ k = {k} entries"),
        &le(of_b("row-nnz-max"), k.into()),
    );
    st.state(
        format!("B ≥ Δ = {delta} on the supports"),
        &ge(of_b("entry-min"), q(delta)),
    );
    st.state(
        format!("B ≤ Δ + ρ = {delta} + {rho}"),
        &le(of_b("entry-max"), delta_plus_rho()),
    );
    st.state(
        "max_i Σ_l B_il ≤ k·(Δ + ρ) (so η_i ≤ η)",
        &le(of_b("row-sum-max"), mul([k.into(), delta_plus_rho()])),
    );
    st.state(
        "max |E_ij| ≤ η = t*·k·(Δ + ρ)",
        &le(of_sb("err-max"), eta()),
    );
    st.state(
        "(a): |E_ij − E_ij'| ≤ 2η on supports",
        &le(of_sb("lemma-a"), mul([int(2), eta()])),
    );
    st.state(
        "(b): Λ_ij − Λ_ij' ≤ −(Δ − 2η) off/on support",
        &le(of_sb("lemma-b"), sub(mul([int(2), eta()]), q(delta))),
    );
    st.state(
        "(a) per row with 2η_i",
        &le(call("lemma-a-row", [s_(), b_(), q(t)]), int(0)),
    );
    st.state(
        "(b) per row with Δ − 2η_i",
        &le(call("lemma-b-row", [s_(), b_(), q(t)]), minus(q(delta))),
    );
}
