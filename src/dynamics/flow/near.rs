//! Round-to-nearest e^t at two nearby arguments from one MPFR `exp` (a pure cost cut
//! for the flow's softmax on tiny systems: the results are the bits MPFR's own `exp`
//! gives, or nothing).
//!
//! The two-token runs of clusters/higher-dim-remark (n = d = 2, 240 and 320 bits) spend
//! half their time in MPFR's `exp`: every softmax row has one argument 0 (its max) and
//! one other, and the two rows' other arguments are the same logit difference computed
//! two ways (`ℓ₁₂ − ℓ₁₁` and `ℓ₂₁ − ℓ₂₂` of the symmetric pair), a few ulps apart.
//! [`exp_two_near`] gives both exponentials from one `exp` at q = p + [`GUARD`] bits.
//!
//! Proof sketch. Let t ≤ u be p-bit arguments, Y = RD_q(e^t) (MPFR, correctly rounded)
//! and Y⁺ = Y when MPFR reports it exact, else the next q-bit float above Y; then
//! Y ≤ e^t ≤ Y⁺. Let δ = u − t, computed at q bits and required exact (else `None`),
//! with 0 ≤ δ ≤ 2^{−(⌈q/2⌉+2)} < 1. For 0 ≤ δ ≤ 1, 1 + δ ≤ e^δ ≤ 1 + δ + δ² (the series
//! e^δ − 1 − δ = δ²(1/2 + δ/6 + …) ≤ δ²(e − 2)), so e^u = e^t·e^δ ∈ [L, U] with
//! L = RD(Y + RD(Y·δ)) ≤ Y(1 + δ) and U = RU(Y⁺ + RU(Y⁺·RU(δ + RU(δ²)))) ≥ Y⁺(1 + δ + δ²)
//! (each operation rounded towards the side it bounds). RN_p (to nearest, ties to even)
//! is nondecreasing, so when RN_p(Y) = RN_p(Y⁺) that value is RN_p(e^t), and when
//! RN_p(L) = RN_p(U) that value is RN_p(e^u): the correctly rounded results, the same
//! bits MPFR's `exp` at p bits returns (correct rounding has one answer). Otherwise, and
//! whenever Y or Y⁺ is not a finite nonzero number (overflow, underflow), the answer is
//! `false` and the arguments are left as they were. The enclosures are about 2^{2−q}
//! wide relative, so a `false` for arguments that qualify comes about once in
//! 2^{GUARD−3} calls.

use rug::float::Round;
use rug::ops::{AddAssignRound, AssignRound, MulAssignRound};
use rug::{Assign, Float};
use std::cmp::Ordering;

/// The guard bits: the one `exp` is taken at p + GUARD bits (240 + 16 = 256 bits fill
/// the same four limbs as 240).
pub const GUARD: u32 = 16;

/// Temporaries of [`exp_two_near`] for one precision p.
pub struct NearWork {
    prec: u32,
    y: Float,
    y_up: Float,
    delta: Float,
    s: Float,
    lower: Float,
    upper: Float,
    out_t: Float,
    out_u: Float,
    check: Float,
}

impl NearWork {
    /// Temporaries for p-bit arguments.
    pub fn new(prec: u32) -> NearWork {
        let q = prec + GUARD;
        NearWork {
            prec,
            y: Float::new(q),
            y_up: Float::new(q),
            delta: Float::new(q),
            s: Float::new(q),
            lower: Float::new(q),
            upper: Float::new(q),
            out_t: Float::new(prec),
            out_u: Float::new(prec),
            check: Float::new(prec),
        }
    }

    /// The precision p these temporaries serve.
    pub fn prec(&self) -> u32 {
        self.prec
    }
}

/// Replaces `a` and `b` (finite, of precision `w.prec()`) by RN_p(e^a) and RN_p(e^b)
/// when one `exp` at p + [`GUARD`] bits decides both (module doc), returning `true`;
/// else leaves them unchanged and returns `false` (the caller then calls MPFR per
/// argument).
pub fn exp_two_near(a: &mut Float, b: &mut Float, w: &mut NearWork) -> bool {
    let p = w.prec;
    if a.prec() != p || b.prec() != p || !a.is_finite() || !b.is_finite() {
        return false;
    }
    let swapped = *b < *a;
    let (t, u): (&Float, &Float) = if swapped { (b, a) } else { (a, b) };
    let q = p + GUARD;
    let NearWork {
        y,
        y_up,
        delta,
        s,
        lower,
        upper,
        out_t,
        out_u,
        check,
        ..
    } = w;
    // δ = u − t exactly, 0 ≤ δ ≤ 2^{−(⌈q/2⌉+2)}
    if delta.assign_round(u - t, Round::Down) != Ordering::Equal {
        return false;
    }
    if !delta.is_zero()
        && delta
            .get_exp()
            .is_none_or(|e| e > -(q.div_ceil(2) as i32) - 2)
    {
        return false;
    }
    // Y ≤ e^t ≤ Y⁺ (t has p ≤ q bits: the assignment is exact)
    y.assign(t);
    let ord = y.exp_round(Round::Down);
    y_up.assign(&*y);
    if ord != Ordering::Equal {
        y_up.next_up();
    }
    if !y.is_normal() || !y_up.is_normal() {
        return false;
    }
    // e^t: RN_p(Y) = RN_p(Y⁺)
    out_t.assign_round(&*y, Round::Nearest);
    check.assign_round(&*y_up, Round::Nearest);
    if *out_t != *check {
        return false;
    }
    // e^u ∈ [L, U]
    lower.assign_round(&*y * &*delta, Round::Down);
    lower.add_assign_round(&*y, Round::Down);
    s.assign_round(delta.square_ref(), Round::Up);
    s.add_assign_round(&*delta, Round::Up);
    s.mul_assign_round(&*y_up, Round::Up);
    upper.assign_round(&*s + &*y_up, Round::Up);
    out_u.assign_round(&*lower, Round::Nearest);
    check.assign_round(&*upper, Round::Nearest);
    if *out_u != *check || !out_u.is_normal() {
        return false;
    }
    let (rt, ru) = (&*out_t, &*out_u);
    if swapped {
        b.assign(rt);
        a.assign(ru);
    } else {
        a.assign(rt);
        b.assign(ru);
    }
    true
}
