//! The centred Sandwich bias, shared by the kernel's data operation and the claims
//! that present it (one formula): the positional group's data operation.
//!
//! `(sandwich-centred D F r)`, for integer literals D (even, 2 ≤ D ≤ 4096) and F ∈ {0, 1}
//! and a term r that evaluates to an exact integer:
//!
//! ```text
//! B̃(r) = Σ_{i=F}^{F + D/2 − 1} (cos(r·ω_i) − 1),   ω_i = 10000^{−2i/D} = exp(−(2i/D)·ln 10⁴),
//! ```
//!
//! the centred Sandwich bias with index set I from F (positional.md §1). Proof sketch:
//! each ω_i is the outward enclosure exp(−(2i/D)·ln 10000) of the kernel's interval
//! functions; r·ω_i, its cosine and the sum are outward-rounded interval operations, so
//! the result encloses B̃(r). r = 0 gives exactly 0 (cos 0 = 1). The enclosures of ω_i
//! and of B̃(r) are kept for the rest of one formula's evaluation (same precision, same
//! values: a memo, not an approximation). Cost: D/2 cosines per new r (counted in
//! [`super::work`]).
//!
//! The f64 tier (the private module `expr::tier`) evaluates the same formula in [`F64Iv`] arithmetic
//! ([`freqs_f64`], [`centred_f64`]): the same operations in the same order, each nested
//! around its MPFR counterpart at p ≥ 53 bits (`tier`'s argument 2., with sin and cos
//! in [`F64Iv::sin`]), so its enclosure of B̃(r) contains the MPFR one.

use crate::{F64Iv, Interval};
use rug::Rational;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Why (D, F) of `(sandwich-centred D F r)` is out of range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    /// D is odd or outside 2..=4096.
    #[error("d̄ must be even with 2 ≤ d̄ ≤ 4096 (got {0})")]
    Dbar(i64),
    /// F is neither 0 nor 1.
    #[error("the index set starts at 0 or 1 (got {0})")]
    First(i64),
}

/// Validates (D, F) of `(sandwich-centred D F r)`.
pub fn check_args(dbar: i64, first: i64) -> Result<(u32, u32), ArgsError> {
    if !(2..=4096).contains(&dbar) || dbar % 2 != 0 {
        return Err(ArgsError::Dbar(dbar));
    }
    if !(0..=1).contains(&first) {
        return Err(ArgsError::First(first));
    }
    Ok((dbar as u32, first as u32))
}

/// Enclosures of ω_i = exp(−(2i/D)·ln 10⁴) for i = F, …, F + D/2 − 1.
pub fn freqs(dbar: u32, first: u32, prec: u32) -> Vec<Interval> {
    let ln1e4 = Interval::from_i64(prec, 10_000).ln();
    (first..first + dbar / 2)
        .map(|i| {
            let e = Rational::from((2 * i64::from(i), i64::from(dbar)));
            -&(&Interval::from_rational(prec, &e) * &ln1e4)
        })
        .map(|x| x.exp())
        .collect()
}

/// An enclosure of Σ_i (cos(r·ω_i) − 1) from the frequency enclosures.
pub fn centred(r: i64, freqs: &[Interval]) -> Interval {
    let prec = freqs.first().map(Interval::prec).unwrap_or(128);
    let rr = Interval::from_i64(prec, r);
    let one = Interval::one(prec);
    let mut acc = Interval::zero(prec);
    for w in freqs {
        acc.add_assign(&(&(&rr * w).cos() - &one));
    }
    acc
}

/// [`freqs`] in the f64 tier: ω_i = exp(−(2i/D)·ln 10⁴) by the same operations.
pub fn freqs_f64(dbar: u32, first: u32) -> Vec<F64Iv> {
    let ln1e4 = F64Iv::from_f64(10_000.0).ln();
    (first..first + dbar / 2)
        .map(|i| {
            let e = Rational::from((2 * i64::from(i), i64::from(dbar)));
            F64Iv::from_rational(&e).mul(ln1e4).neg().exp()
        })
        .collect()
}

/// [`centred`] in the f64 tier.
pub fn centred_f64(r: i64, freqs: &[F64Iv]) -> F64Iv {
    let rr = F64Iv::from_rational(&Rational::from(r));
    let one = F64Iv::from_f64(1.0);
    freqs.iter().fold(F64Iv::from_f64(0.0), |acc, w| {
        acc.add(rr.mul(*w).cos().sub(one))
    })
}

/// The most B̃ values kept in one memo (bounds its memory).
pub(super) const MEMO_VALUES: usize = 1 << 18;

#[derive(Default)]
pub(super) struct Inner {
    freqs: HashMap<(u32, u32, u32), Arc<Vec<Interval>>>,
    values: HashMap<(u32, u32, u32, i64), Interval>,
    freqs64: HashMap<(u32, u32), Arc<Vec<F64Iv>>>,
    values64: HashMap<(u32, u32, i64), F64Iv>,
}

/// Frequencies and values computed so far, keyed by (d̄, F, precision[, r]); shared
/// by the obligations of one statement (the values are the same whoever computes
/// them, so sharing changes no result).
#[derive(Default)]
pub struct Memo {
    inner: Mutex<Inner>,
}

impl Memo {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn centred(&self, dbar: u32, first: u32, r: i64, prec: u32) -> Interval {
        let f = {
            let mut g = self.lock();
            if let Some(v) = g.values.get(&(dbar, first, prec, r)) {
                return v.clone();
            }
            g.freqs
                .entry((dbar, first, prec))
                .or_insert_with(|| Arc::new(freqs(dbar, first, prec)))
                .clone()
        };
        let v = centred(r, &f);
        let mut g = self.lock();
        if g.values.len() < MEMO_VALUES {
            g.values.insert((dbar, first, prec, r), v.clone());
        }
        v
    }

    /// [`Memo::centred`] in the f64 tier (its own values, at most [`MEMO_VALUES`]).
    pub(super) fn centred_f64(&self, dbar: u32, first: u32, r: i64) -> F64Iv {
        let f = {
            let mut g = self.lock();
            if let Some(v) = g.values64.get(&(dbar, first, r)) {
                return *v;
            }
            g.freqs64
                .entry((dbar, first))
                .or_insert_with(|| Arc::new(freqs_f64(dbar, first)))
                .clone()
        };
        let v = centred_f64(r, &f);
        let mut g = self.lock();
        if g.values64.len() < MEMO_VALUES {
            g.values64.insert((dbar, first, r), v);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cost model charges each value once per statement ([`super::super::cost`]'s
    /// `add_new`), which holds because the memo keeps every value it computes (up to
    /// [`MEMO_VALUES`]): evaluated again, a value is served from the memo.
    #[test]
    fn the_memo_keeps_each_value_it_computes() {
        let m = Memo::default();
        for r in 1..=5 {
            m.centred(16, 0, r, 64);
        }
        assert_eq!(m.lock().values.len(), 5);
        let again = m.centred(16, 0, 3, 64);
        assert_eq!(m.lock().values.len(), 5);
        assert_eq!(again, centred(3, &freqs(16, 0, 64)));
        m.centred(16, 1, 3, 64);
        assert_eq!(m.lock().values.len(), 6);
        // the f64 tier's values: their own map, kept alike
        let v = m.centred_f64(16, 1, 3);
        assert_eq!(m.lock().values64.len(), 1);
        assert_eq!(m.centred_f64(16, 1, 3), v);
        assert_eq!(m.lock().values64.len(), 1);
        assert_eq!(v, centred_f64(3, &freqs_f64(16, 1)));
    }

    /// The f64 formula encloses the 512-bit one (so B̃ itself) and lies around the MPFR
    /// one at every precision from 53 bits (`tier`'s argument 2.), for D from 2 to 4096,
    /// both index sets, and r from small to the edge of binary64's integers.
    #[test]
    fn the_f64_bias_contains_the_mpfr_one_from_53_bits() {
        for (dbar, first) in [(2, 0), (2, 1), (16, 1), (128, 0), (4096, 1)] {
            let f64s = freqs_f64(dbar, first);
            for r in [
                1i64,
                -1,
                2,
                7,
                100,
                -355,
                65_536,
                1 << 40,
                (1 << 53) + 1,
                i64::MAX,
            ] {
                let v = centred_f64(r, &f64s);
                for p in [53, 64, 128, 512] {
                    let m = centred(r, &freqs(dbar, first, p));
                    let fi = v.to_interval(512).expect("defined");
                    assert!(
                        fi.contains(&m),
                        "D={dbar} F={first} r={r} {p} bits: {v:?} vs {m:?}"
                    );
                }
            }
        }
    }
}
