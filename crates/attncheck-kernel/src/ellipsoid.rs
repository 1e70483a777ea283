//! The largest value of a quadratic over an ellipsoid, bounded by a Lagrangian dual whose
//! multiplier is checked in exact integers (TRUSTED: part of the certificate evaluator;
//! bound 6 of [`crate::weights`], the S-lemma's dual of a query's row range).
//!
//! **The problem.** For symmetric n × n matrices Q and K, a row vector c and r² ≥ 0,
//!
//! ```text
//! T := sup { f(v) : vQvᵀ ≤ r² },   f(v) = (c + vQ) K (c + vQ)ᵀ.
//! ```
//!
//! **The bound, with its proof.** Let λ > 0 with N := λQ − QKQ positive definite, and
//! b := cKQ. For every v with vQvᵀ ≤ r²,
//!
//! ```text
//! f(v) = cKcᵀ + 2 v bᵀ + vQKQvᵀ                                (QKcᵀ = bᵀ: Q, K symmetric)
//!      ≤ f(v) + λ(r² − vQvᵀ) = λr² + cKcᵀ + 2 v bᵀ − vNvᵀ
//!      = λr² + cKcᵀ + bN⁻¹bᵀ − (v − bN⁻¹) N (v − bN⁻¹)ᵀ
//!      ≤ λr² + cKcᵀ + bN⁻¹bᵀ =: U(λ)                          (N ≻ 0)
//! ```
//!
//! so **T ≤ U(λ) for every admissible λ** (weak duality; the S-lemma makes the best λ tight
//! when the constraint is strictly feasible, but nothing here relies on that). A λ that is
//! not admissible is **rejected** ([`bound_at`] returns `None`): nothing else about λ
//! matters for soundness, so λ may come from anywhere. [`propose`] finds one with f64
//! arithmetic (untrusted: a bisection for the smallest admissible λ, then a golden-section
//! search of the convex U on the admissible half-line); [`bound`] checks it exactly.
//!
//! **Exact check, in integers.** The data are integers at common scales: Q = A/s, K = B/s
//! (A, B integer, s > 0), c = C/t (t > 0), λ = m/e (m, e > 0 integers; an f64 is a
//! dyadic). Then e·s³·N = m·s²·A − e·ABA =: M (an integer matrix), b = y/(t·s²) with
//! y = C·B·A, and N⁻¹ = e·s³·M⁻¹, so
//!
//! ```text
//! U(λ) = m·r²/e + (C·B·Cᵀ + e·(y M⁻¹ yᵀ)) / (t²·s).
//! ```
//!
//! M is positive definite iff its leading principal minors are all positive (Sylvester's
//! criterion, M symmetric: checked entry by entry). The bordered matrix
//! M⁺ = [[M, yᵀ], [y, 0]] has det M⁺ = det M · (0 − y M⁻¹ yᵀ) (Schur complement), so
//! y M⁻¹ yᵀ = −det M⁺ / det M. Fraction-free Gaussian elimination (Bareiss) on M⁺ produces
//! as its pivots exactly the leading principal minors of M⁺ — those of M first, det M⁺
//! last — with every division exact; no pivot of M is zero once each is checked > 0, so
//! no pivoting is needed. Everything is an exact integer until the one rational U(λ).
//!
//! **Cost.** n ≤ 64 (a head's dimension): three n³ integer matrix products, then (n + 1)³
//! Bareiss steps whose k-th entries are (k + 1)-order minors, i.e. at most (k + 1) times the
//! bits of M⁺'s entries plus a Hadamard term; [`crate::weights`] charges them
//! (`row_words`). λ is confined to [2⁻²⁰⁰, 2²⁰⁰] so that m and e have at most 260 bits.

use rug::{Integer, Rational};

/// The exact data of one problem (see the module documentation): Q = A/s, K = B/s,
/// c = C/t, and r².
pub struct Problem<'a> {
    /// A (n × n, symmetric).
    pub a: &'a [Vec<Integer>],
    /// B (n × n, symmetric).
    pub b: &'a [Vec<Integer>],
    /// C (n).
    pub c: &'a [Integer],
    /// The scale s > 0 of A and B.
    pub s: &'a Integer,
    /// The scale t > 0 of C.
    pub t: &'a Integer,
    /// r² ≥ 0.
    pub r2: &'a Integer,
}

/// The largest n accepted.
pub const MAX_N: usize = 64;

/// The bits λ's exponent may span either way (λ ∈ [2⁻²⁰⁰, 2²⁰⁰]).
pub const LAMBDA_EXP: i32 = 200;

fn well_formed(p: &Problem) -> bool {
    let n = p.c.len();
    let square = |m: &[Vec<Integer>]| m.len() == n && m.iter().all(|r| r.len() == n);
    let sym = |m: &[Vec<Integer>]| (0..n).all(|i| (0..i).all(|j| m[i][j] == m[j][i]));
    (1..=MAX_N).contains(&n)
        && square(p.a)
        && square(p.b)
        && sym(p.a)
        && sym(p.b)
        && *p.s > 0
        && *p.t > 0
        && *p.r2 >= 0
}

/// The exact product of two n × n integer matrices (n = `x.len()`).
pub(crate) fn mul(x: &[Vec<Integer>], y: &[Vec<Integer>]) -> Vec<Vec<Integer>> {
    let n = x.len();
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    let mut acc = Integer::new();
                    for k in 0..n {
                        acc += Integer::from(&x[i][k] * &y[k][j]);
                    }
                    acc
                })
                .collect()
        })
        .collect()
}

/// U(λ) for an admissible λ (an exact rational upper bound on T), `None` if λ is not
/// admissible (λ ∉ [2⁻²⁰⁰, 2²⁰⁰], or λQ − QKQ not positive definite) or the problem is
/// malformed (sizes, symmetry, scales).
pub fn bound_at(p: &Problem, lambda: &Rational) -> Option<Rational> {
    let cap = Integer::from(1) << LAMBDA_EXP as u32;
    if !well_formed(p) || *lambda < Rational::from((1, cap.clone())) || *lambda > cap {
        return None;
    }
    let n = p.c.len();
    let (m, e) = (lambda.numer(), lambda.denom());
    let ba = mul(p.b, p.a);
    let aba = mul(p.a, &ba);
    let s2m = Integer::from(p.s * p.s) * m;
    // M⁺ = [[m·s²·A − e·ABA, yᵀ], [y, 0]], y = C·B·A
    let mut x: Vec<Vec<Integer>> = (0..=n)
        .map(|i| {
            (0..=n)
                .map(|j| match (i < n, j < n) {
                    (true, true) => {
                        Integer::from(&s2m * &p.a[i][j]) - Integer::from(e * &aba[i][j])
                    }
                    (true, false) => (0..n).map(|k| Integer::from(&p.c[k] * &ba[k][i])).sum(),
                    (false, true) => (0..n).map(|k| Integer::from(&p.c[k] * &ba[k][j])).sum(),
                    (false, false) => Integer::new(),
                })
                .collect()
        })
        .collect();
    // Bareiss: after step k, x[k][k] is the leading (k + 1)-minor
    let mut prev = Integer::from(1);
    for k in 0..n {
        if x[k][k] <= 0 {
            return None;
        }
        for i in k + 1..=n {
            for j in k + 1..=n {
                let v = Integer::from(&x[i][j] * &x[k][k]) - Integer::from(&x[i][k] * &x[k][j]);
                x[i][j] = v.div_exact(&prev);
            }
        }
        prev = x[k][k].clone();
    }
    let (det_m, det_plus) = (&x[n - 1][n - 1], &x[n][n]);
    let cbc: Integer = (0..n)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .map(|(i, j)| Integer::from(&p.c[i] * &p.b[i][j]) * &p.c[j])
        .sum();
    // y M⁻¹ yᵀ = −det M⁺ / det M
    let ymy = Rational::from((Integer::from(-det_plus), det_m.clone()));
    let tail = (Rational::from(cbc) + ymy * e) / Rational::from(Integer::from(p.t * p.t) * p.s);
    Some(Rational::from(m * p.r2) / e + tail)
}

/// Cholesky of a symmetric f64 matrix: `None` unless every pivot is positive and finite.
fn chol(m: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = m.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let mut s = m[i][j];
            for (x, y) in l[i][..j].iter().zip(&l[j][..j]) {
                s -= x * y;
            }
            if i == j {
                if !(s > 0.0 && s.is_finite()) {
                    return None;
                }
                l[i][i] = s.sqrt();
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    }
    Some(l)
}

/// An untrusted f64 search for an admissible λ near the minimiser of U (a pure function
/// of the data: plain f64 operations in a fixed order). `None` when it finds none; what it
/// returns decides nothing until [`bound_at`] checks it.
pub fn propose(p: &Problem) -> Option<Rational> {
    if !well_formed(p) {
        return None;
    }
    let n = p.c.len();
    let f = |x: &Integer, s: &Integer| Rational::from((x.clone(), s.clone())).to_f64();
    let q: Vec<Vec<f64>> =
        p.a.iter()
            .map(|r| r.iter().map(|x| f(x, p.s)).collect())
            .collect();
    let k: Vec<Vec<f64>> =
        p.b.iter()
            .map(|r| r.iter().map(|x| f(x, p.s)).collect())
            .collect();
    let c: Vec<f64> = p.c.iter().map(|x| f(x, p.t)).collect();
    let r2 = p.r2.to_f64();
    let mm = |x: &[Vec<f64>], y: &[Vec<f64>]| -> Vec<Vec<f64>> {
        (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| (0..n).map(|t| x[i][t] * y[t][j]).sum())
                    .collect()
            })
            .collect()
    };
    let kq = mm(&k, &q);
    let qkq = mm(&q, &kq);
    let kc: Vec<f64> = (0..n)
        .map(|i| (0..n).map(|j| k[i][j] * c[j]).sum())
        .collect();
    let ckc: f64 = (0..n).map(|i| c[i] * kc[i]).sum();
    let b: Vec<f64> = (0..n)
        .map(|j| (0..n).map(|i| c[i] * kq[i][j]).sum())
        .collect();
    // U(λ), +∞ where λQ − QKQ has no Cholesky factor
    let u = |lam: f64| -> f64 {
        let nm: Vec<Vec<f64>> = (0..n)
            .map(|i| (0..n).map(|j| lam * q[i][j] - qkq[i][j]).collect())
            .collect();
        let Some(l) = chol(&nm) else {
            return f64::INFINITY;
        };
        // ‖L⁻¹bᵀ‖² = bN⁻¹bᵀ
        let mut z = vec![0.0; n];
        for i in 0..n {
            let mut s = b[i];
            for t in 0..i {
                s -= l[i][t] * z[t];
            }
            z[i] = s / l[i][i];
        }
        lam * r2 + ckc + z.iter().map(|v| v * v).sum::<f64>()
    };
    let (lo_cap, hi_cap) = (2f64.powi(-LAMBDA_EXP + 1), 2f64.powi(LAMBDA_EXP - 1));
    // an admissible λ, then the edge of the admissible half-line by bisection
    let mut hi = 1.0;
    while !u(hi).is_finite() {
        hi *= 2.0;
        if hi > hi_cap {
            return None;
        }
    }
    let mut lo = hi;
    while lo > lo_cap && u(lo / 2.0).is_finite() {
        lo /= 2.0;
    }
    let (mut a, mut z) = (lo / 2.0, lo);
    for _ in 0..80 {
        let mid = 0.5 * (a + z);
        if u(mid).is_finite() {
            z = mid;
        } else {
            a = mid;
        }
    }
    // U is convex on the half-line and U(λ) ≥ λr², so its minimiser is ≤ U(z)/r²
    let top = if r2 > 0.0 { (u(z) / r2).max(z) } else { z };
    let (mut x0, mut x1) = (z, top.min(hi_cap));
    let g = 0.618_033_988_749_894_9;
    for _ in 0..200 {
        let (m1, m2) = (x1 - g * (x1 - x0), x0 + g * (x1 - x0));
        if u(m1) <= u(m2) {
            x1 = m2;
        } else {
            x0 = m1;
        }
    }
    let best = [x0, x1, z]
        .into_iter()
        .filter(|v| u(*v).is_finite())
        .min_by(|v, w| u(*v).total_cmp(&u(*w)))?;
    Rational::from_f64(best)
}

/// The checked bound: [`propose`]'s λ raised by 2⁻²⁰ of itself (f64 rounding may put the
/// proposal a hair outside the admissible set; U moves by about as little), or failing
/// that by 2⁻⁸, the first that [`bound_at`] admits. `None` if neither is admitted (then no
/// bound: the caller keeps its others).
pub fn bound(p: &Problem) -> Option<Rational> {
    let lam = propose(p)?;
    [20u32, 8].iter().find_map(|&k| {
        let f = Rational::from(1) + Rational::from((1, Integer::from(1) << k));
        bound_at(p, &Rational::from(&lam * &f))
    })
}

#[cfg(test)]
mod tests {
    use super::{bound, bound_at, propose, Problem};
    use proptest::prelude::*;
    use rug::{Integer, Rational};

    /// Runs `f` on the hand example: Q = I, K = diag(4, 1), c = (1, 0), s = t = r² = 1.
    fn with_hand<R>(f: impl FnOnce(&Problem) -> R) -> R {
        let (a, b) = (ints(&[&[1, 0], &[0, 1]]), ints(&[&[4, 0], &[0, 1]]));
        let c = [Integer::from(1), Integer::from(0)];
        let one = Integer::from(1);
        f(&Problem {
            a: &a,
            b: &b,
            c: &c,
            s: &one,
            t: &one,
            r2: &one,
        })
    }

    fn ints(m: &[&[i64]]) -> Vec<Vec<Integer>> {
        m.iter()
            .map(|r| r.iter().map(|&x| Integer::from(x)).collect())
            .collect()
    }

    /// f(v) = (c + vQ)K(c + vQ)ᵀ and vQvᵀ, exactly.
    fn f_and_norm(p: &Problem, v: &[Rational]) -> (Rational, Rational) {
        let n = p.c.len();
        let q = |i: usize, j: usize| Rational::from((p.a[i][j].clone(), p.s.clone()));
        let k = |i: usize, j: usize| Rational::from((p.b[i][j].clone(), p.s.clone()));
        let vq: Vec<Rational> = (0..n)
            .map(|j| (0..n).map(|i| Rational::from(&v[i] * &q(i, j))).sum())
            .collect();
        let x: Vec<Rational> = (0..n)
            .map(|j| Rational::from((p.c[j].clone(), p.t.clone())) + &vq[j])
            .collect();
        let f = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .map(|(i, j)| Rational::from(&x[i] * &k(i, j)) * &x[j])
            .sum();
        let nv = (0..n).map(|i| Rational::from(&vq[i] * &v[i])).sum();
        (f, nv)
    }

    /// Q = I, K = diag(4, 1), c = (1, 0), r² = 1: T = max 4(1 + v₁)² + v₂² over the unit
    /// disc = 16 at v = (1, 0); the checked bound is at least 16 and within 10⁻⁹ of it.
    #[test]
    fn a_hand_example_is_bounded_tightly() {
        with_hand(|p| {
            let u = bound(p).expect("an admissible λ");
            assert!(
                u >= 16 && u <= Rational::from(16) * Rational::from((1_000_000_001, 1_000_000_000)),
                "{u}"
            );
            // U(λ) = λ + 4 + 16/(λ − 4) for λ > 4 (N = diag(λ − 4, λ − 1)): U(8) = 16, U(5) = 25
            assert_eq!(bound_at(p, &Rational::from(8)), Some(Rational::from(16)));
            assert_eq!(bound_at(p, &Rational::from(5)), Some(Rational::from(25)));
        });
    }

    /// A wrong dual witness is rejected, not believed: λ at or below the edge of the
    /// admissible set (here λ ≤ 4: λQ − QKQ = diag(λ − 4, λ − 1) is not positive
    /// definite), λ ≤ 0, λ beyond 2^±200, and malformed data (asymmetric, wrong sizes,
    /// zero scale) give no bound. A witness U(λ) below T cannot exist: U(λ) ≥ T for every
    /// admissible λ, which the property below tests.
    #[test]
    fn a_wrong_multiplier_is_rejected() {
        with_hand(|p| {
            for lam in [
                Rational::from(4),
                Rational::from(3),
                Rational::from((7, 2)),
                Rational::from(0),
                Rational::from(-9),
            ] {
                assert_eq!(bound_at(p, &lam), None, "λ = {lam}");
            }
            let huge = Rational::from(Integer::from(1) << 201u32);
            assert_eq!(bound_at(p, &huge), None);
            let skew = ints(&[&[1, 1], &[0, 1]]);
            let zero = Integer::new();
            let bad = [
                Problem { a: &skew, ..*p },
                Problem { c: &p.c[..1], ..*p },
                Problem { s: &zero, ..*p },
            ];
            for p in &bad {
                assert_eq!(bound_at(p, &Rational::from(8)), None);
                assert_eq!(propose(p), None);
            }
        });
    }

    fn psd(g: &[i64], n: usize) -> Vec<Vec<Integer>> {
        // GᵀG for an n × n integer G
        (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        Integer::from((0..n).map(|k| g[k * n + i] * g[k * n + j]).sum::<i64>())
                    })
                    .collect()
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// For random positive semi-definite Q, K, any c and r², every point of the
        /// ellipsoid (random directions scaled exactly inside it) has f(v) ≤ the checked
        /// bound, and so does every other admissible multiplier's U(λ) (larger λ).
        #[test]
        fn the_bound_is_above_every_point_of_the_ellipsoid(
            n in 1usize..4,
            g in proptest::collection::vec(-6i64..7, 16),
            h in proptest::collection::vec(-6i64..7, 16),
            c in proptest::collection::vec(-20i64..21, 4),
            r2 in 1i64..50,
            vs in proptest::collection::vec(proptest::collection::vec(-9i64..10, 4), 12),
            bump in 1i64..40,
        ) {
            let (a, b) = (psd(&g, n), psd(&h, n));
            let c: Vec<Integer> = c[..n].iter().map(|&x| Integer::from(x)).collect();
            let (s, t, r2) = (Integer::from(3), Integer::from(5), Integer::from(r2));
            let p = Problem { a: &a, b: &b, c: &c, s: &s, t: &t, r2: &r2 };
            let Some(u) = bound(&p) else {
                // a singular Q has no admissible λ: nothing is claimed
                return Ok(());
            };
            let lam = propose(&p).unwrap();
            let other = bound_at(&p, &(lam * Rational::from((bump + 40, 40))));
            for v in &vs {
                let v: Vec<Rational> = v[..n].iter().map(|&x| Rational::from(x)).collect();
                let (_, nv) = f_and_norm(&p, &v);
                if nv == 0 { continue; }
                // scale v by ρ = a rational just below √(r²/vQvᵀ), onto (or inside) the boundary
                let target = Rational::from(&r2 / &nv).to_f64().sqrt() * (1.0 - 1e-12);
                let rho = Rational::from_f64(target).unwrap();
                let w: Vec<Rational> = v.iter().map(|x| Rational::from(x * &rho)).collect();
                let (fw, nw) = f_and_norm(&p, &w);
                if nw > r2 { continue; }
                prop_assert!(fw <= u, "f = {} > U = {}", fw.to_f64(), u.to_f64());
                if let Some(o) = &other {
                    prop_assert!(fw <= *o);
                }
            }
        }
    }
}
