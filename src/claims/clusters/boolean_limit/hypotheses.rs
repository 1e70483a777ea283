//! The hypotheses of the Boolean-limit lemma at a step K, stated for the kernel (issue #39).
//!
//! `coq/BooleanLimit.v` proves, once and for every h > 0, that for the map the claim runs
//! (y_i^{k+1} = y_i^k + h Σ_j P_ij^k y_j^k, P^k = softmax_j(y_i^k y_j^k)) the hypotheses
//! at one step K
//! - (T) 0 < A and 2(n − 1) ≤ A² e^{A²/2 + 1},
//! - y^K strictly increasing,
//! - every token but at most one with |y_i^K| > A,
//!
//! give the limit: the rows of the tokens below −A converge to e_1, those above A to
//! e_n, at the rate (n − 1) exp(−(1 + h/2)^k |y_i| g) (`boolean_limit_rows`,
//! `boolean_limit_rate`); the one possible other row lies between them and every limit
//! P* has rank ≤ 3 (`boolean_limit_structure`; `boolean_limit_symmetric` for (S)).
//!
//! The statement carries, per witness, the y-layer (Q = K = V = [\[1\]], Δt = h, from y^0
//! = √(QK)·x^0, an exact identity: see the module above) as a `layer` datum with K
//! steps, and two obligations over `(layer-coord Y 0 K i 0)`:
//! - order: ∀ i < n − 1: y_i^K < y_{i+1}^K;
//! - at most one token in [−A, A]: ∀ i < n − 1: max(|y_i^K|, |y_{i+1}^K|) > A, i.e.
//!   |y_i^K| > A or |y_{i+1}^K| > A. Proof that this is the lemma's hypothesis: with y^K
//!   increasing, {i : |y_i^K| ≤ A} is a run of consecutive indices ([−A, A] is an
//!   interval), so it has at most one element iff no two consecutive indices both lie
//!   in it.
//!
//! and one obligation (T) per number of tokens n, for the exact rational A of [`lemma_a`].
//! h > 0 and Q = K = V = [\[1\]] are the datum's exact entries (validated: `Raw::setup`, the
//! layer datum's reader).
//!
//! **K** is the first step k ∈ 1..=`hypotheses_max_steps` at which the kernel's
//! enclosures of y^k, at [`SEARCH_PREC`] bits, decide both hypotheses (the statement
//! builder searches; `verify` rebuilds the statement by the same deterministic search,
//! so a certificate with another K, another A or another y^0 is not the claim's). A
//! witness whose hypotheses are not decided by then (tokens escaping together) has no
//! obligations: it is reported with its reason and never counted as certified.

use super::{fmt_q, Params};
use crate::dynamics::layer_data::LayerData;
use crate::dynamics::model::Mat;
use crate::kernel::expr::build::{
    abs, add, and, call, div, exp, forall, gt, int, le, lt, max, mul, pow, q, sub, var, Formula,
    Term,
};
use crate::kernel::expr::{Data, Datum};
use crate::kernel::{Certainty, Statement};
use rug::Rational;

/// The precision of the search for K (the kernel decides the obligations at the run's).
pub const SEARCH_PREC: u32 = 128;

/// The grid of A: the smallest multiple of 1/A_GRID for which (T) is decided.
const A_GRID: u32 = 16;

/// The part of the claim the lemma's obligations belong to (the spec's `lemma.part`).
pub const PART: &str = "(D) discrete map: the limit by the Coq lemma";

/// One witness of the lemma: a (G) seed of one system, or (S), in y = √(QK)·x.
pub struct Witness {
    /// "(G) (V, QK) = (1, 1) seed 3" or "(S)".
    pub label: String,
    /// y^0, sorted.
    pub y0: Vec<Rational>,
}

/// A witness at its step K: the first step at which its hypotheses are decided, or why
/// there is none.
pub struct AtK {
    /// The witness.
    pub label: String,
    /// n.
    pub n: usize,
    /// K, or the reason none was found.
    pub k: Result<usize, String>,
    /// The witness's y-layer with K steps (its datum), when K was found.
    layer: Option<LayerData>,
}

/// (T) for n tokens and A, as a formula:
/// `(and (> A 0) (<= (* 2 (- n 1)) (* (pow A 2) (exp (+ (/ (pow A 2) 2) 1)))))`.
pub fn threshold_formula(n: usize, a: &Rational) -> Formula {
    let n = n as i128;
    and([
        gt(q(a), int(0)),
        le(
            mul([int(2), sub(int(n), int(1))]),
            mul([pow(q(a), 2), exp(add([div(pow(q(a), 2), int(2)), int(1)]))]),
        ),
    ])
}

/// The A of the lemma for n tokens: the smallest j/16 (j ≥ 1) for which the kernel
/// decides (T) at [`SEARCH_PREC`] bits (A² e^{A²/2+1} is increasing in A > 0, so every
/// larger A satisfies (T) as well; j ≤ 16·8 suffices for n ≤ 10⁶, far above the
/// claim's MAX_N).
pub fn lemma_a(n: usize) -> Rational {
    (1..=A_GRID * 64)
        .map(|j| Rational::from((j, A_GRID)))
        .find(|a| {
            crate::kernel::expr::check_built(&threshold_formula(n, a), SEARCH_PREC, &Data::new())
                == Ok(Certainty::True)
        })
        .expect("A = 64 satisfies (T) for every n ≤ MAX_N")
}

/// The witnesses in order: every seed of every system (G), then (S).
pub fn witnesses(s: &Params) -> Vec<Witness> {
    let mut out = Vec::new();
    for sysd in &s.systems {
        for (seed, x0) in &s.generic {
            out.push(Witness {
                label: format!(
                    "(G) (V, QK) = ({}, {}) seed {seed}",
                    fmt_q(&sysd.v),
                    fmt_q(&sysd.qk)
                ),
                y0: x0.iter().map(|x| Rational::from(x * &sysd.a)).collect(),
            });
        }
    }
    out.push(Witness {
        label: "(S)".into(),
        y0: s.symmetric.clone(),
    });
    out
}

/// The y-layer of a witness with `steps` steps: Q = K = V = [[1]], Δt = h.
fn y_layer(y0: &[Rational], h: &Rational, steps: usize) -> Result<LayerData, String> {
    let one = || Mat::identity(1);
    let tokens = Mat::from_rows(y0.iter().map(|y| vec![y.clone()]).collect());
    LayerData::new(one(), one(), one(), h.clone(), steps, vec![tokens])
        .map_err(|(f, r)| format!("layer datum: {f}: {r}"))
}

/// Whether the kernel's enclosures of y^k decide both hypotheses (order; no two
/// consecutive tokens in [−A, A]), and else which pair is in the way.
fn decided_at(l: &LayerData, k: usize, n: usize, a: &Rational) -> Result<bool, String> {
    let q = |x: usize| Rational::from(x as u64);
    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        y.push(
            l.coord(
                SEARCH_PREC,
                &Rational::new(),
                &q(k),
                &q(i),
                &Rational::new(),
            )
            .map_err(|e| e.to_string())?,
        );
    }
    let outside = |x: &crate::kernel::Interval| {
        let m = x.abs();
        *m.lo() > *a
    };
    Ok((0..n - 1).all(|i| *y[i].hi() < *y[i + 1].lo() && (outside(&y[i]) || outside(&y[i + 1]))))
}

/// The first step K ≤ max_k of every witness at which its hypotheses are decided.
pub fn search(s: &Params) -> Vec<AtK> {
    witnesses(s)
        .into_iter()
        .map(|w| {
            let n = w.y0.len();
            let a = lemma_a(n);
            let k = y_layer(&w.y0, &s.h, s.max_k).and_then(|l| {
                for k in 1..=s.max_k {
                    if decided_at(&l, k, n, &a)? {
                        return Ok(k);
                    }
                }
                Err(format!(
                    "the enclosures of y^k at {SEARCH_PREC} bits do not decide the hypotheses at any \
                     step k ≤ {} (two consecutive tokens not certifiably outside [−A, A], A = {}: \
                     tokens escaping together); not counted as certified",
                    s.max_k,
                    fmt_q(&a)
                ))
            });
            // the datum of the statement: the same map with K steps
            let at = k.and_then(|k| y_layer(&w.y0, &s.h, k).map(|l| (k, l)));
            let (k, layer) = match at {
                Ok((k, l)) => (Ok(k), Some(l)),
                Err(why) => (Err(why), None),
            };
            AtK {
                label: w.label,
                n,
                k,
                layer,
            }
        })
        .collect()
}

/// The name of the order obligation of a witness at K.
pub fn order_name(label: &str, k: usize) -> String {
    format!("{label}: y^K strictly increasing at K = {k}")
}

/// The name of the escape obligation of a witness at K.
pub fn escape_name(label: &str, k: usize, a: &Rational) -> String {
    format!(
        "{label}: at most one token with |y_i^K| ≤ A = {} at K = {k}",
        fmt_q(a)
    )
}

/// `(layer-coord x 0 k i 0)`: coordinate 0 of token i of y^k, run 0 of datum `x`.
fn coord(x: &str, k: usize, i: Term) -> Term {
    call("layer-coord", [var(x), int(0), int(k as i128), i, int(0)])
}

/// y^K strictly increasing, over the y-layer datum `x` of n tokens:
/// `(forall i 0 n−2 (< (layer-coord x 0 K i 0) (layer-coord x 0 K (+ i 1) 0)))`.
pub fn order_formula(x: &str, k: usize, n: usize) -> Formula {
    let next = add([var("i"), int(1)]);
    forall(
        "i",
        0,
        n as i128 - 2,
        lt(coord(x, k, var("i")), coord(x, k, next)),
    )
}

/// No two consecutive tokens of y^K in [−A, A], over the y-layer datum `x` of n tokens:
/// `(forall i 0 n−2 (> (max (abs y_i) (abs y_{i+1})) A))`.
pub fn escape_formula(x: &str, k: usize, n: usize, a: &Rational) -> Formula {
    let next = add([var("i"), int(1)]);
    forall(
        "i",
        0,
        n as i128 - 2,
        gt(
            max(abs(coord(x, k, var("i"))), abs(coord(x, k, next))),
            q(a),
        ),
    )
}

/// The name of (T) for n.
pub fn threshold_name(n: usize, a: &Rational) -> String {
    format!(
        "(T) A = {} > 0 and 2(n − 1) ≤ A² e^(A²/2 + 1) for n = {n}",
        fmt_q(a)
    )
}

/// Adds the lemma's obligations to `st` (the report puts them in [`PART`]): (T) per n, then per witness with
/// a K its datum `Y<w>` and the two hypotheses at K. Returns the witnesses at K.
pub fn state(s: &Params, st: &mut Statement) -> Vec<AtK> {
    let mut found = search(s);
    let mut ns: Vec<usize> = found.iter().filter(|w| w.k.is_ok()).map(|w| w.n).collect();
    ns.sort_unstable();
    ns.dedup();
    for n in ns {
        let a = lemma_a(n);
        st.state(threshold_name(n, &a), &threshold_formula(n, &a));
    }
    for (wi, at) in found.iter_mut().enumerate() {
        let (Ok(k), Some(l)) = (&at.k, at.layer.take()) else {
            continue;
        };
        let (k, n) = (*k, at.n);
        let w = &at.label;
        let x = format!("Y{wi}");
        st.datum(&x, Datum::Layer(l));
        st.state(order_name(w, k), &order_formula(&x, k, n));
        st.state(
            escape_name(w, k, &lemma_a(n)),
            &escape_formula(&x, k, n, &lemma_a(n)),
        );
    }
    found
}
