//! Enclosure reasoning of clusters/boolean-limit: decided margins, the threshold
//! A_n by certified bisection, and row distances. The row tightening (Σ_j P_ij = 1)
//! and the mirror symmetry of (S) are the kernel's (`kernel::layer_map`:
//! `attention_stochastic`, `rest_mass`, `MirrorRun`), each beside its proof.

use super::*;

/// The sign of an enclosure x as a margin: x when its lower end is > 0, else −x. A
/// step tally of these records "proven" exactly when the sign of x is decided
/// (x > 0, or x ≤ 0), "undecided" when the enclosure straddles 0, and never a
/// violation: the reading of "the enclosures decide every comparison".
pub(super) fn decided(x: Interval) -> Interval {
    if x.lo().is_sign_positive() && !x.lo().is_zero() {
        x
    } else {
        -x
    }
}

/// A certified enclosure of A_n = √W(n²), the threshold of `l:auxiliary`
/// (A² = n² e^{−A²}), by bisection on φ(u) = u e^u − n² (see the module docs).
/// The enclosure is as tight as the signs of φ can be certified at `prec` bits.
pub fn threshold_a(n: u32, prec: u32) -> Interval {
    let n2 = Interval::from_i64(prec, i64::from(n) * i64::from(n));
    let phi = |u: &Float| {
        let u = Interval::from_endpoints(u.clone(), u.clone());
        &(&u * &u.exp()) - &n2
    };
    let zero = Interval::zero(prec);
    // φ(0) = −n² < 0; φ(2 + 2 ln n) ≥ 2e²n² − n² > 0
    let mut lo = Float::with_val(prec, 0);
    let mut hi = Float::with_val(prec, 2 + 2 * (32 - n.leading_zeros()));
    if !phi(&hi).gt(&zero).is_true() {
        // cannot happen above a few bits of precision; never return an unproven bracket
        return Interval::from_endpoints(lo, Float::with_val(prec, rug::float::Special::Infinity))
            .sqrt();
    }
    for _ in 0..prec + 16 {
        let mut mid = Float::with_val(prec + 2, &lo + &hi);
        mid /= 2;
        let mid = Float::with_val(prec, &mid);
        if mid <= lo || mid >= hi {
            break;
        }
        match phi(&mid).gt(&zero) {
            Certainty::True => hi = mid,
            Certainty::False => lo = mid,
            Certainty::Unknown => break,
        }
    }
    Interval::from_endpoints(lo, hi).sqrt()
}

/// Upper end of max_l |P_rl − P_sl| over two rows.
pub(super) fn row_distance(a: &[Interval], b: &[Interval]) -> Float {
    let mut m = Float::with_val(a[0].prec(), 0);
    for (x, y) in a.iter().zip(b) {
        let d = (x - y).abs();
        if *d.hi() > m {
            m = d.hi().clone();
        }
    }
    m
}
