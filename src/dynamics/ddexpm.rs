//! e^{tV} in double-double arithmetic for the flow's dd tier ([`super::ddflow`]):
//! the algorithm of [`super::expm`] (Taylor series with scaling and squaring, from
//! the exact rational matrix tV) with [`DdMat`] products instead of MPFR ones.
//!
//! With `A = tV`, `ν = ‖A‖_∞` (exact) and the least `s ≥ 0` with `ν ≤ 2^{s−4}`,
//! `B = A/2^s` (each entry rounded to the nearest dd) has `‖B‖_∞ ≤ 1/16`, and the
//! Taylor polynomial of degree `K = taylor_terms(110 + s + ⌈log2 d⌉)` is within
//! `2^{−110−s}/d` of `e^B` ([`super::expm`]'s bound). Horner's rule
//! `R ← I + (B·R)·(1/k)` and the `s` squarings use the dd product, whose entries err
//! by ≲ (4d² + 12d)u² of the absolute sums ([`super::ddmat`]; u = 2^−53); squaring
//! multiplies a relative perturbation by at most `2^s e^{ν}`. So the result is accurate
//! to ≈ `2^{s}·d²·2^−104` relative to `e^{ν}` in the worst case: a point computation,
//! not an enclosure (the tests compare it with MPFR's [`super::expm::expm`]).

use super::dd::{add, mul, Dd};
use super::ddmat::DdMat;
use super::expm::taylor_terms;
use super::model::Mat;
use rug::Rational;

/// e^{tV} as a dd matrix (`v` square).
pub fn expm_dd(v: &Mat, t: &Rational) -> DdMat {
    assert!(v.is_square(), "expm_dd: V must be square");
    let d = v.rows;
    let a = v.scale(t);
    let nu = (0..d)
        .map(|r| {
            let mut s = Rational::new();
            for x in a.row(r) {
                s += Rational::from(x.abs_ref());
            }
            s
        })
        .max()
        .unwrap_or_default();
    let identity = DdMat::from_fn(d, d, |i, j| if i == j { Dd::ONE } else { Dd::ZERO });
    if nu == 0 {
        return identity;
    }
    let mut s: u32 = 0;
    let mut bound = Rational::from((1, 16));
    while nu > bound {
        bound *= 2;
        s += 1;
    }
    let log2d = usize::BITS - d.leading_zeros();
    let kmax = taylor_terms(110 + s + log2d);
    let scale: Rational = Rational::from(1) << s;
    let b = DdMat::from_fn(d, d, |i, j| {
        Dd::from_rational(&Rational::from(&a.data[i * d + j] / &scale))
    });
    let mut r = identity;
    for k in (1..=kmax).rev() {
        let inv = Dd::from_rational(&Rational::from((1, k)));
        let br = b.product(&r);
        r = DdMat::from_fn(d, d, |i, j| {
            let x = mul(br.get(i, j), inv);
            if i == j {
                add(x, Dd::ONE)
            } else {
                x
            }
        });
    }
    for _ in 0..s {
        r = r.product(&r);
    }
    r
}
