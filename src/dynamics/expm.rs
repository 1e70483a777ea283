//! The matrix exponential e^{tV} in MPFR point arithmetic: Taylor series with
//! scaling and squaring, from the exact rational matrix tV.
//!
//! # Algorithm and truncation bound
//!
//! Let `A = tV` (exact rationals) and `ν = ‖A‖_∞ = max_r Σ_c |a_rc|` (exact; the
//! ∞-operator norm is submultiplicative). Pick the least `s ≥ 0` with `ν ≤ 2^{s−4}`,
//! so `B = A/2^s` has `‖B‖_∞ ≤ β = 1/16`. The Taylor polynomial
//! `T_K(B) = Σ_{k≤K} B^k/k!` (evaluated by Horner, `R ← I + B·R/k`) satisfies
//!
//! ```text
//! ‖e^B − T_K(B)‖_∞ ≤ Σ_{k>K} β^k/k! ≤ β^{K+1}/(K+1)! · 1/(1 − β/(K+2)) ≤ 2·β^{K+1}/(K+1)!,
//! ```
//!
//! and `K` is the least integer making this `≤ 2^{−wp}`, where the working precision
//! is `wp = prec + s + ⌈log2(d)⌉ + 32`. Then `e^A = (e^B)^{2^s}` by `s` squarings.
//! A perturbation `F` of `e^B` with `‖F‖ ≤ ε` grows under squaring to at most
//! `(‖e^B‖ + ε)^{2^s} − ‖e^B‖^{2^s} ≤ 2^s ε e^{ν}(1 + 2^s ε)^{2^s}`, so truncation and
//! the `O(d·2^{−wp})` rounding of each product (see [`super::dot`]) contribute a
//! relative error `≈ 2^{s + log2 d − wp} ≤ 2^{−prec − 32}` against `e^{ν}`; the result
//! is finally rounded to `prec` bits. This is a point computation (not an
//! enclosure): the bound documents its accuracy, it is not certified.

use super::dot::{
    mat_mul, mat_mul_block, mat_mul_blocks_into, BlockRows, NonFinite, Scratch, SEQUENTIAL_WORK,
};
use super::model::Mat;
use rug::{Assign, Float, Rational};

/// e^{tV} as `d × d` floats (row-major) at `prec` bits; `v` must be square.
pub fn expm(v: &Mat, t: &Rational, prec: u32) -> Vec<Float> {
    assert!(v.is_square(), "expm: V must be square");
    let d = v.rows;
    let a = v.scale(t);
    // ν = ‖A‖_∞, exactly
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
    let identity = |p: u32| -> Vec<Float> {
        let mut m = vec![Float::new(p); d * d];
        for i in 0..d {
            m[i * d + i] = Float::with_val(p, 1);
        }
        m
    };
    if nu == 0 {
        return identity(prec);
    }
    // least s ≥ 0 with ν ≤ 2^{s−4}
    let mut s: u32 = 0;
    let mut bound = Rational::from((1, 16));
    while nu > bound {
        bound *= 2;
        s += 1;
    }
    let log2d = usize::BITS - d.leading_zeros();
    let wp = prec + s + log2d + 32;
    let kmax = taylor_terms(wp);
    // B = A/2^s at wp bits
    let b: Vec<Float> = a
        .data
        .iter()
        .map(|x| {
            let mut f = Float::with_val(wp, x);
            f >>= s;
            f
        })
        .collect();
    let id = identity(wp);
    let mut r = id.clone();
    // B converted once for every Horner step (the same products as `mat_mul`)
    let b_rows = BlockRows::from_floats(&b, d, d, wp);
    // small d: the products into reused buffers (`horner_product`), the same floats
    let small = d * d * d < SEQUENTIAL_WORK;
    let (mut rt, mut br, mut scr) = (BlockRows::empty(), Vec::new(), Scratch::new());
    for k in (1..=kmax).rev() {
        // R ← I + B·R/k
        match &b_rows {
            Ok(b_rows) if small => horner_product(b_rows, &r, d, wp, &mut rt, &mut br, &mut scr),
            Ok(b_rows) => {
                br = mat_mul_block(b_rows, &r, d, wp, wp)
                    .unwrap_or_else(|_| vec![Float::with_val(wp, rug::float::Special::Nan); d * d])
            }
            Err(_) => br = mat_mul_checked(&b, &r, d, wp),
        }
        for ((ri, bri), ii) in r.iter_mut().zip(&br).zip(&id) {
            ri.assign(bri / k);
            *ri += ii;
        }
    }
    for _ in 0..s {
        r = mat_mul_checked(&r, &r, d, wp);
    }
    r.into_iter().map(|x| Float::with_val(prec, x)).collect()
}

/// e^{tV} applied to each row of `x` (`x.len()` a multiple of d): rows `e^{tV} x_i`
/// at `prec` bits.
pub fn expm_vec(v: &Mat, t: &Rational, x: &[Float], prec: u32) -> Vec<Float> {
    let d = v.rows;
    assert!(
        d > 0 && x.len().is_multiple_of(d),
        "expm_vec: length not a multiple of d"
    );
    let e = expm(v, t, prec + 16);
    let n = x.len() / d;
    // rows: (X Eᵀ)_i = E x_i
    let et = transpose(&e, d);
    mat_mul(x, &et, n, d, d, prec)
        .unwrap_or_else(|_| vec![Float::with_val(prec, rug::float::Special::Nan); n * d])
}

/// The least K with `2·(1/16)^{K+1}/(K+1)! ≤ 2^{−wp}` (the truncation bound above).
pub fn taylor_terms(wp: u32) -> u32 {
    // log2 of the bound: 1 − 4(K+1) − log2((K+1)!), with log2(m!) accumulated exactly
    // from below by integer bit lengths (floor(log2 m) ≤ log2 m).
    let mut k: u32 = 0;
    let mut log2_fact: u64 = 0; // lower bound of log2((K+1)!)
    loop {
        let m = u64::from(k + 1);
        log2_fact += u64::from(63 - m.leading_zeros());
        let neg_log2_bound = 4 * u64::from(k + 1) + log2_fact;
        if neg_log2_bound > u64::from(wp) {
            return k.max(1);
        }
        k += 1;
    }
}

/// `out = B·R` (d × d, entries at `wp` bits; NaN when R is not finite) as
/// `mat_mul_block(b_rows, r, d, wp, wp)` computes it — R's columns converted by
/// `assign_floats_transposed` (`from_floats_transposed` bit for bit), the products by
/// [`mat_mul_blocks_into`] — into reused buffers (`rt`, `out`, `scr`).
fn horner_product(
    b_rows: &BlockRows,
    r: &[Float],
    d: usize,
    wp: u32,
    rt: &mut BlockRows,
    out: &mut Vec<Float>,
    scr: &mut Scratch,
) {
    if rt.assign_floats_transposed(r, d, d, wp).is_err() {
        *out = vec![Float::with_val(wp, rug::float::Special::Nan); d * d];
        return;
    }
    mat_mul_blocks_into(b_rows, rt, wp, out, scr);
}

fn mat_mul_checked(a: &[Float], b: &[Float], d: usize, wp: u32) -> Vec<Float> {
    match mat_mul(a, b, d, d, d, wp) {
        Ok(m) => m,
        Err(NonFinite { .. }) => vec![Float::with_val(wp, rug::float::Special::Nan); d * d],
    }
}

/// The transpose of a `d × d` row-major float matrix.
pub fn transpose(m: &[Float], d: usize) -> Vec<Float> {
    let mut t = m.to_vec();
    for i in 0..d {
        for j in 0..d {
            t[j * d + i] = m[i * d + j].clone();
        }
    }
    t
}
