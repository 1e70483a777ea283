//! Dual functionals of the `layer` datum (TRUSTED: part of the certificate evaluator;
//! the operations `layer-dual-sup` and `layer-dual-inf`, [`crate::layer_data::Traced::Dual`]).
//!
//! For λ real, a_i(λ) is row i of adj(V − λI). Since adj(A)·A = det(A)·I, a_i(λ)(V − λI)
//! = det(V − λI)·e_iᵀ, so at an eigenvalue λ* of V, a_i(λ*) is a left eigenvector
//! (a_i(λ*)V = λ* a_i(λ*)) or 0. The kernel encloses, for exact rationals lo ≤ hi, a row
//! i and tokens x_j (n × d),
//!
//! ```text
//! f(λ) = max_j |a_i(λ)·x_j|,   sup_{λ∈[lo,hi]} f(λ)   and   inf_{λ∈[lo,hi]} f(λ)
//! ```
//!
//! (f is continuous, [lo, hi] compact: both are well-defined reals).
//!
//! **Guarantee.** [`adj_row`] evaluates a_i with the Faddeev–LeVerrier recursion in
//! outward-rounded intervals: every operation (+, −, ×, division by an integer k ≥ 1)
//! is inclusion-monotone, so for an interval Λ the result contains a_i(λ) for every
//! λ ∈ Λ, exactly as for any V in the enclosure of the exact V. [`dual_max_abs`] takes
//! |·| and the max over j of inclusion-monotone dot products, so F(Λ, X) ∋ f(λ) for all
//! λ ∈ Λ when X contains the exact tokens. Hence, with F_int = F([lo, hi], X) and
//! F_pt = F([lo, lo], X) (the latter contains f(lo)):
//! - sup f ≤ F_int.hi (every f(λ) ∈ F_int) and sup f ≥ f(lo) ≥ F_pt.lo, so
//!   [F_pt.lo, F_int.hi] ∋ sup f;
//! - inf f ≥ F_int.lo and inf f ≤ f(lo) ≤ F_pt.hi, so [F_int.lo, F_pt.hi] ∋ inf f.
//!
//! Both endpoints pairs are ordered (F_pt.lo ≤ f(lo) ≤ F_int.hi, F_int.lo ≤ f(lo) ≤
//! F_pt.hi), so [`dual_bounds`] never builds an empty interval.
//!
//! **Faddeev–LeVerrier.** With A = V − λI (d × d): M_1 = I, and for k = 1..d−1,
//! M_{k+1} = A·M_k + c·I with c = −tr(A·M_k)/k. Then M_d = (−1)^{d−1} adj(A) (the
//! c's are the coefficients of det(xI − A); Cayley–Hamilton gives A·M_d = (−1)^{d−1}
//! det(A)·I, a polynomial identity in the entries of A, so it holds for singular A
//! too). Cost: d − 1 products of d × d interval matrices, d ≤ [`MAX_DUAL_D`].

use crate::{Interval, Mat};

/// The largest dimension d for which the dual operations are defined (d⁴ work).
pub const MAX_DUAL_D: usize = 16;

/// Row i of adj(V − ΛI), enclosed for every λ in the interval `lam` (d = V's size,
/// 1 ≤ d ≤ [`MAX_DUAL_D`], i < d; the caller checks both).
pub fn adj_row(v: &Mat, lam: &Interval, i: usize, prec: u32) -> Vec<Interval> {
    let d = v.rows;
    let mut a = v.to_intervals(prec);
    for c in 0..d {
        a[c * d + c] = &a[c * d + c] - lam;
    }
    let mut m: Vec<Interval> = (0..d * d)
        .map(|e| {
            if e / d == e % d {
                Interval::one(prec)
            } else {
                Interval::zero(prec)
            }
        })
        .collect();
    for k in 1..d {
        let mut am = vec![Interval::zero(prec); d * d];
        for r in 0..d {
            for c in 0..d {
                let mut s = &a[r * d] * &m[c];
                for l in 1..d {
                    s.add_assign(&(&a[r * d + l] * &m[l * d + c]));
                }
                am[r * d + c] = s;
            }
        }
        let mut tr = Interval::zero(prec);
        for c in 0..d {
            tr.add_assign(&am[c * d + c]);
        }
        let c = -&tr.div_i64(k as i64);
        for r in 0..d {
            am[r * d + r].add_assign(&c);
        }
        m = am;
    }
    // adj(A) = (−1)^{d−1} M_d
    let row = m[i * d..(i + 1) * d].to_vec();
    if d.is_multiple_of(2) {
        row.iter().map(|x| -x).collect()
    } else {
        row
    }
}

/// An enclosure of max_j |a·x_j| for the n × d tokens `x` (row-major, n ≥ 1).
pub fn dual_max_abs(a: &[Interval], x: &[Interval], n: usize, d: usize) -> Interval {
    let vals: Vec<Interval> = (0..n)
        .map(|j| {
            let xj = &x[j * d..(j + 1) * d];
            let mut s = &a[0] * &xj[0];
            for c in 1..d {
                s.add_assign(&(&a[c] * &xj[c]));
            }
            s.abs()
        })
        .collect();
    crate::layer_map::max_all(&vals)
}

/// (sup, inf) enclosures from F_int = F([lo, hi], X) and F_pt = F([lo, lo], X) (module
/// doc): ([F_pt.lo, F_int.hi], [F_int.lo, F_pt.hi]).
pub fn dual_bounds(f_int: &Interval, f_pt: &Interval) -> (Interval, Interval) {
    (
        Interval::from_endpoints(f_pt.lo().clone(), f_int.hi().clone()),
        Interval::from_endpoints(f_int.lo().clone(), f_pt.hi().clone()),
    )
}
