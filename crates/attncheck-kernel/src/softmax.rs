//! Certified softmax, log-sum-exp, dot products and matrix–vector products.

use super::Interval;
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
    let mut t = Float::new(prec);
    let mut lo_e = Vec::with_capacity(z.len());
    let mut hi_e = Vec::with_capacity(z.len());
    let mut s_lo = Float::with_val(prec, 0);
    let mut s_hi = Float::with_val(prec, 0);
    for zi in z {
        let l = exp_shift(zi.lo(), &m, prec, &mut t);
        let h = if zi.is_point() {
            l.clone()
        } else {
            exp_shift(zi.hi(), &m, prec, &mut t)
        };
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
