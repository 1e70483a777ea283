//! Precision escalation, written once: an explicit trigger and an explicit bound.
//!
//! Interval enclosures are valid at every precision; only their usefulness changes. A
//! computation that comes out too wide to decide something is therefore repeated at a
//! higher precision, never trusted at a lower one. Every such retry in attncheck goes
//! through [`escalate`]: a [`Ladder`] of precisions (a start and a number of doublings,
//! so the top rung is known before the first run), the computation as a function of the
//! precision, and the trigger as a predicate on its result (`settled`). When the top rung
//! is reached unsettled the caller gets [`Escalated::Exhausted`] with the last result, and
//! says `inconclusive` (or, for a constant whose settling is a theorem, states why it
//! cannot happen).

/// The precisions `start`, 2·`start`, …, 2^`doublings`·`start` bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ladder {
    start: u32,
    doublings: u32,
}

/// MPFR's largest precision on every platform attncheck builds for (`MPFR_PREC_MAX` is
/// at least 2³¹ − 257 bits); a ladder never climbs above it.
pub const TOP_BITS: u32 = (1 << 31) - 257;

impl Ladder {
    /// The ladder from `start` bits, doubled at most `doublings` times, cut at
    /// [`TOP_BITS`] (a rung above it is left out, never wrapped).
    pub fn new(start: u32, doublings: u32) -> Ladder {
        Ladder {
            start: start.max(1),
            doublings,
        }
    }

    /// The rungs, lowest first; never empty.
    pub fn precisions(&self) -> Vec<u32> {
        let mut out = vec![self.start.min(TOP_BITS)];
        let mut p = u64::from(self.start);
        for _ in 0..self.doublings {
            p *= 2;
            if p > u64::from(TOP_BITS) {
                break;
            }
            out.push(p as u32);
        }
        out
    }

    /// The top rung.
    pub fn top(&self) -> u32 {
        *self.precisions().last().expect("a ladder has a rung")
    }
}

/// The result of climbing a [`Ladder`].
#[derive(Clone, Debug, PartialEq)]
pub enum Escalated<T> {
    /// `settled` held for `value`, computed at `bits`, the lowest rung where it held.
    Settled {
        /// The settled result.
        value: T,
        /// The precision it was computed at.
        bits: u32,
    },
    /// `settled` failed on every rung; `value` is the top rung's result.
    Exhausted {
        /// The top rung's result.
        value: T,
        /// The top rung.
        bits: u32,
    },
}

impl<T> Escalated<T> {
    /// The last result and its precision, settled or not.
    pub fn into_parts(self) -> (T, u32) {
        match self {
            Escalated::Settled { value, bits } | Escalated::Exhausted { value, bits } => {
                (value, bits)
            }
        }
    }

    /// The settled result, `None` when the ladder ran out.
    pub fn settled(self) -> Option<(T, u32)> {
        match self {
            Escalated::Settled { value, bits } => Some((value, bits)),
            Escalated::Exhausted { .. } => None,
        }
    }

    /// Whether the ladder ran out before `settled` held.
    pub fn is_exhausted(&self) -> bool {
        matches!(self, Escalated::Exhausted { .. })
    }
}

/// Computes `compute(bits)` on each rung of `ladder`, lowest first, and stops at the
/// first result for which `settled` holds. `compute` runs at most
/// `ladder.precisions().len()` times.
pub fn escalate<T>(
    ladder: Ladder,
    mut compute: impl FnMut(u32) -> T,
    settled: impl Fn(&T) -> bool,
) -> Escalated<T> {
    let rungs = ladder.precisions();
    let mut last = None;
    for &bits in &rungs {
        let value = compute(bits);
        if settled(&value) {
            return Escalated::Settled { value, bits };
        }
        last = Some((value, bits));
    }
    let (value, bits) = last.expect("a ladder has a rung");
    Escalated::Exhausted { value, bits }
}
