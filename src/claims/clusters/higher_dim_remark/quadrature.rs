//! (b) C(ε) by tanh–sinh quadrature in MPFR.

use super::*;

/// C(ε) by tanh–sinh quadrature of I(ε) = ∫_0^∞ ds / (e^{2ε²e^s} − 1) (u = ε²e^s) at
/// `prec` bits (working precision prec + 32): returns (C, |ΔI| between the last two
/// levels, the truncation bound). The integral is cut at S with X = 2ε²e^S =
/// (prec + 20)·ln 2 + 1; for x ≥ ln 2, 1/(e^x − 1) ≤ 2e^{−x}, so the tail is
/// ≤ ∫_S^∞ 2e^{−Xe^{s−S}} ds ≤ 2e^{−X}/X. Levels halve the step from 1/8 until two
/// successive sums agree to 2^{−prec} (at most 2^−10).
pub fn c_quadrature(eps: &Rational, prec: u32) -> (Float, Float, Float) {
    let wp = prec + 32;
    let two_e2 = Float::with_val(wp, 2 * Rational::from(eps * eps));
    let mut x_cut = Float::with_val(wp, Constant::Log2);
    x_cut *= prec + 20;
    x_cut += 1;
    let s_end = Float::with_val(wp, &x_cut / &two_e2).ln();
    let tail = {
        let mut t = Float::with_val(wp, -&x_cut).exp();
        t *= 2;
        t /= &x_cut;
        t
    };
    let pi = Float::with_val(wp, Constant::Pi);
    // τ range: the weights fall below 2^−wp once (π/2)e^{|τ|} > wp·ln 2 + a margin
    let tau_max = ((wp as f64 * std::f64::consts::LN_2 + 40.0) * 2.0 / std::f64::consts::PI)
        .ln()
        .ceil()
        + 1.0;
    let f = |s: &Float| -> Float {
        // 1 / (e^{2ε²e^s} − 1)
        let mut x = Float::with_val(wp, s.exp_ref());
        x *= &two_e2;
        let mut den = x.exp_m1();
        den.recip_mut();
        den
    };
    let level = |k: u32| -> Float {
        let h = Float::with_val(wp, Float::i_exp(1, -(k as i32)));
        let n = (tau_max * f64::from(1u32 << k)).ceil() as i64;
        let mut sum = Float::new(wp);
        for j in -n..=n {
            let tau = Float::with_val(wp, &h * j);
            let u = Float::with_val(wp, tau.sinh_ref()) * &pi / 2u32;
            // x = S/(1 + e^{−2u}), dx/dτ = S·2e^{−2u}/(1 + e^{−2u})² · (π/2)cosh τ
            let em = Float::with_val(wp, -2 * u).exp();
            let one_em = Float::with_val(wp, 1 + &em);
            let x = Float::with_val(wp, &s_end / &one_em);
            let mut w = Float::with_val(wp, &s_end * &em);
            w /= Float::with_val(wp, one_em.square_ref());
            w *= Float::with_val(wp, tau.cosh_ref());
            w *= &pi;
            if w.is_zero() || !w.is_finite() || x.is_zero() {
                continue;
            }
            let fx = f(&x);
            if fx.is_finite() {
                sum += w * fx;
            }
        }
        sum * h
    };
    let mut prev = level(3);
    let mut diff = Float::with_val(wp, rug::float::Special::Infinity);
    for k in 4..=10 {
        let cur = level(k);
        diff = Float::with_val(wp, &cur - &prev).abs();
        prev = cur;
        let mut scale = Float::with_val(wp, prev.abs_ref());
        scale >>= prec;
        if diff <= scale {
            break;
        }
    }
    let mut c = Float::with_val(prec, -&prev).exp();
    c *= Float::with_val(wp, eps);
    (c, diff, tail)
}
