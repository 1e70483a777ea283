//! Certified softmax, log-sum-exp, dot products and matrix–vector products.

use super::Interval;
use crate::exp_near::{exp_near, near};
use rug::float::{Round, Special};
use rug::ops::{AddAssignRound, DivAssignRound, SubAssignRound};
use rug::Float;

/// `RD(e^x)` and `RU(e^x)` with one MPFR call when the rounded value is exact or
/// its neighbour is the other bound (MPFR's ternary value tells which side the
/// rounded result landed on).
fn exp_both(x: &Float, prec: u32) -> (Float, Float) {
    let mut lo = Float::with_val(prec, x);
    let ord = lo.exp_round(Round::Down);
    let mut hi = lo.clone();
    if ord != std::cmp::Ordering::Equal {
        hi.next_up();
    }
    (lo, hi)
}

/// `RD(e^{x−M})` and `RU(e^{x−M})` for an endpoint x. When `x − M` is exact (the
/// usual case) one exp call gives both; otherwise each bound uses its own
/// directed argument.
fn exp_shift(x: &Float, m: &Float, prec: u32, t: &mut Float) -> (Float, Float) {
    let ord = t.assign_round_sub(x, m, Round::Down);
    if ord == std::cmp::Ordering::Equal {
        exp_both(t, prec)
    } else {
        let mut lo = t.clone();
        lo.exp_round(Round::Down);
        t.assign_round_sub(x, m, Round::Up);
        let mut hi = t.clone();
        hi.exp_round(Round::Up);
        (lo, hi)
    }
}

/// RD(x − M) and RU(x − M) (equal when the difference is exact), and whether it is.
fn shifted(x: &Float, m: &Float, prec: u32) -> (Float, Float, bool) {
    let mut d = Float::new(prec);
    if d.assign_round_sub(x, m, Round::Down) == std::cmp::Ordering::Equal {
        return (d.clone(), d, true);
    }
    let mut u = Float::new(prec);
    u.assign_round_sub(x, m, Round::Up);
    (d, u, false)
}

/// [`exp_shift`]'s pair `(RD(e^{RD(x−M)}), RU(e^{RU(x−M)}))` from the two arguments
/// ([`shifted`]): one MPFR call when they are equal (as there), else one at
/// p + [`GUARD`](crate::exp_near::GUARD) bits when [`exp_near`] can decide both, else
/// the two calls of [`exp_shift`]. The same values in every case (the values are the
/// correctly rounded ones; `exp_near`'s module doc).
fn exp_pair(d: &Float, u: &Float, exact: bool, prec: u32) -> (Float, Float) {
    if exact {
        return exp_both(d, prec);
    }
    if let Some([lo, hi]) = exp_near([d, u], [Round::Down, Round::Up], prec) {
        return (lo, hi);
    }
    let mut lo = d.clone();
    lo.exp_round(Round::Down);
    let mut hi = u.clone();
    hi.exp_round(Round::Up);
    (lo, hi)
}

/// For one logit enclosure z = [lo, hi]: `(exp_shift(lo), exp_shift(hi))` (the second a
/// copy of the first for a point), the same values, from one MPFR `exp` at
/// p + [`GUARD`](crate::exp_near::GUARD) bits when the four arguments RD(lo − M) ≤
/// RU(lo − M) ≤ RD(hi − M) ≤ RU(hi − M) are close ([`near`]) and [`exp_near`] decides
/// them, else one endpoint at a time ([`exp_pair`]).
fn exp_entry(z: &Interval, m: &Float, prec: u32) -> ((Float, Float), (Float, Float)) {
    let (ld, lu, l_exact) = shifted(z.lo(), m, prec);
    if z.is_point() {
        let l = exp_pair(&ld, &lu, l_exact, prec);
        return (l.clone(), l);
    }
    let (hd, hu, h_exact) = shifted(z.hi(), m, prec);
    if near(&ld, &hu, prec) {
        let dirs = [Round::Down, Round::Up, Round::Down, Round::Up];
        if let Some([a, b, c, d]) = exp_near([&ld, &lu, &hd, &hu], dirs, prec) {
            return ((a, b), (c, d));
        }
    }
    (
        exp_pair(&ld, &lu, l_exact, prec),
        exp_pair(&hd, &hu, h_exact, prec),
    )
}

trait AssignSub {
    fn assign_round_sub(&mut self, a: &Float, b: &Float, r: Round) -> std::cmp::Ordering;
}
impl AssignSub for Float {
    fn assign_round_sub(&mut self, a: &Float, b: &Float, r: Round) -> std::cmp::Ordering {
        use rug::ops::AssignRound;
        self.assign_round(a - b, r)
    }
}

/// Certified log-sum-exp `ln Σ e^{z_j}`.
///
/// With the exact shift M = max hi_j: `lse = M + ln Σ e^{z_j − M}`, increasing in
/// every z_j, so the lower end uses the lo_j rounded down throughout and the
/// upper end the hi_j rounded up. An empty row gives `[−∞, −∞]`'s enclosure
/// `[−∞, +∞]` (no information).
pub fn log_sum_exp(z: &[Interval]) -> Interval {
    let prec = z.iter().map(Interval::prec).max().unwrap_or(53);
    if z.is_empty() {
        return Interval::entire(prec);
    }
    let m = z
        .iter()
        .map(Interval::hi)
        .fold(Float::with_val(prec, Special::NegInfinity), |a, b| {
            if *b > a {
                Float::with_val(prec, b)
            } else {
                a
            }
        });
    if !m.is_finite() {
        return Interval::entire(prec);
    }
    let mut s_lo = Float::with_val(prec, 0);
    let mut s_hi = Float::with_val(prec, 0);
    let mut t = Float::new(prec);
    for zi in z {
        let (l, _) = exp_shift(zi.lo(), &m, prec, &mut t);
        let (_, h) = exp_shift(zi.hi(), &m, prec, &mut t);
        s_lo.add_assign_round(&l, Round::Down);
        s_hi.add_assign_round(&h, Round::Up);
    }
    s_lo.ln_round(Round::Down);
    s_hi.ln_round(Round::Up);
    s_lo.add_assign_round(&m, Round::Down);
    s_hi.add_assign_round(&m, Round::Up);
    Interval::from_raw(s_lo, s_hi)
}

/// Certified softmax of an interval row, `p_i = e^{z_i} / Σ_j e^{z_j}`.
///
/// Proof sketch. Write a = e^{z_i − M} and R = Σ_{j≠i} e^{z_j − M}; then
/// p_i = a / (a + R), increasing in a and decreasing in R. Hence
/// p_i ≥ a⁻/(a⁻ + R⁺) and p_i ≤ a⁺/(a⁺ + R⁻), where a⁻ = RD(e^{lo_i − M}),
/// a⁺ = RU(e^{hi_i − M}), R⁺ = RU(S⁺ − RD(e^{hi_i − M})) with S⁺ ≥ Σ_j e^{hi_j − M},
/// and R⁻ = max(0, RD(S⁻ − RU(e^{lo_i − M}))) with S⁻ ≤ Σ_j e^{lo_j − M}.
/// Denominators are rounded against the bound (up for the lower, down for the
/// upper) and the quotient in its own direction. This costs O(n) and never
/// suffers the dependency blow-up of the naive e^{z_i}/Σe^{z_j} (the same z_i in
/// the numerator and the denominator).
pub fn softmax(z: &[Interval]) -> Vec<Interval> {
    let prec = z.iter().map(Interval::prec).max().unwrap_or(53);
    let mut out = Vec::with_capacity(z.len());
    softmax_into(z, prec, &mut out);
    out
}

/// [`softmax`] writing into `out` (cleared first), at precision `prec` (raised
/// to the kernel's minimum, like every constructor).
pub fn softmax_into(z: &[Interval], prec: u32, out: &mut Vec<Interval>) {
    let prec = super::interval::checked_prec(prec);
    out.clear();
    if z.is_empty() {
        return;
    }
    let unit = || Interval::from_raw(Float::with_val(prec, 0), Float::with_val(prec, 1));
    let m = z
        .iter()
        .map(Interval::hi)
        .fold(Float::with_val(prec, Special::NegInfinity), |a, b| {
            if *b > a {
                Float::with_val(prec, b)
            } else {
                a
            }
        });
    if !m.is_finite() {
        out.extend((0..z.len()).map(|_| unit()));
        return;
    }
    // e^{lo_j − M} and e^{hi_j − M}, each enclosed both ways.
    let mut lo_e = Vec::with_capacity(z.len());
    let mut hi_e = Vec::with_capacity(z.len());
    let mut s_lo = Float::with_val(prec, 0);
    let mut s_hi = Float::with_val(prec, 0);
    for zi in z {
        let (l, h) = exp_entry(zi, &m, prec);
        s_lo.add_assign_round(&l.0, Round::Down);
        s_hi.add_assign_round(&h.1, Round::Up);
        lo_e.push(l);
        hi_e.push(h);
    }
    let mut r = Float::new(prec);
    let mut den = Float::new(prec);
    for i in 0..z.len() {
        // lower bound: a⁻ / (a⁻ + R⁺)
        let a_lo = &lo_e[i].0;
        r.clone_from(&s_hi);
        r.sub_assign_round(&hi_e[i].0, Round::Up);
        if r < 0 {
            r = Float::with_val(prec, 0);
        }
        den.clone_from(a_lo);
        den.add_assign_round(&r, Round::Up);
        let mut lo = a_lo.clone();
        if den.is_zero() {
            lo = Float::with_val(prec, 0);
        } else {
            lo.div_assign_round(&den, Round::Down);
        }
        // upper bound: a⁺ / (a⁺ + R⁻)
        let a_hi = &hi_e[i].1;
        r.clone_from(&s_lo);
        r.sub_assign_round(&lo_e[i].1, Round::Down);
        if r < 0 {
            r = Float::with_val(prec, 0);
        }
        den.clone_from(a_hi);
        den.add_assign_round(&r, Round::Down);
        let mut hi = a_hi.clone();
        if den.is_zero() || !den.is_finite() {
            hi = Float::with_val(prec, 1);
        } else {
            hi.div_assign_round(&den, Round::Up);
        }
        if hi > 1 {
            hi = Float::with_val(prec, 1);
        }
        if lo.is_nan() || lo < 0 {
            lo = Float::with_val(prec, 0);
        }
        out.push(Interval::from_raw(lo, hi));
    }
}

/// Certified dot product `Σ a_i b_i`, accumulated in place with outward rounding.
pub fn dot(a: &[Interval], b: &[Interval]) -> Interval {
    assert_eq!(a.len(), b.len(), "dot: length mismatch");
    let prec = a.iter().chain(b).map(Interval::prec).max().unwrap_or(53);
    let mut acc = Interval::zero(prec);
    for (x, y) in a.iter().zip(b) {
        acc.add_assign(&(x * y));
    }
    acc
}

/// Certified matrix–vector product; `m` is a list of rows.
pub fn mat_vec(m: &[Vec<Interval>], v: &[Interval]) -> Vec<Interval> {
    m.iter().map(|row| dot(row, v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// [`exp_entry`] gives [`exp_shift`]'s pairs for both ends (a copy for a
        /// point), bit for bit: points, one-ulp, narrow and wide logit enclosures.
        #[test]
        fn exp_entry_is_exp_shift_per_end(
            prec in prop_oneof![24u32..70, 128u32..129, 250u32..260, 512u32..513],
            m in -1.0e3f64..1.0e3,
            below in prop_oneof![Just(0.0f64), 0.0f64..80.0],
            third in 1u32..9,
            width in prop_oneof![Just(None), (0u32..4).prop_map(Some), (60u32..600).prop_map(Some)],
        ) {
            let m = Float::with_val(prec, m);
            let hi: Float = Float::with_val(prec, &m - below) / third;
            let hi = if hi > m { m.clone() } else { hi };
            let lo = match width {
                None => hi.clone(),
                Some(w) if w < 4 => {
                    let mut l = hi.clone();
                    (0..w).for_each(|_| l.next_down());
                    l
                }
                Some(w) => Float::with_val_round(prec, &hi - (Float::with_val(prec, 3) >> w), Round::Down).0,
            };
            let z = Interval::from_endpoints(lo, hi);
            let mut t = Float::new(prec);
            let l = exp_shift(z.lo(), &m, prec, &mut t);
            let h = if z.is_point() { l.clone() } else { exp_shift(z.hi(), &m, prec, &mut t) };
            let (l2, h2) = exp_entry(&z, &m, prec);
            for (a, b) in [(&l.0, &l2.0), (&l.1, &l2.1), (&h.0, &h2.0), (&h.1, &h2.1)] {
                prop_assert_eq!(a, b);
                prop_assert_eq!(a.prec(), b.prec());
            }
        }
    }
}
