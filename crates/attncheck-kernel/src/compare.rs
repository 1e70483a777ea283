//! Three-valued comparisons, as in Arb: a predicate on intervals is
//! `True` when it holds for every pair of points, `False` when it fails for
//! every pair, and `Unknown` otherwise. An `Unknown` never becomes a pass.

use super::Interval;
use serde::{Deserialize, Serialize};

/// The answer of a predicate on enclosures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Certainty {
    /// Proven for every point of the enclosures.
    True,
    /// Proven false for every point of the enclosures.
    False,
    /// The enclosures do not decide it.
    Unknown,
}

impl Certainty {
    /// `True` or `False` from an exactly decided boolean.
    pub fn exact(b: bool) -> Self {
        if b {
            Certainty::True
        } else {
            Certainty::False
        }
    }
    /// Whether this is a proof (`True`). `Unknown` is never a pass.
    pub fn is_true(self) -> bool {
        self == Certainty::True
    }
    /// Whether this is a disproof (`False`).
    pub fn is_false(self) -> bool {
        self == Certainty::False
    }
    /// Three-valued conjunction: `False` dominates, then `Unknown`.
    pub fn and(self, other: Certainty) -> Certainty {
        use Certainty::*;
        match (self, other) {
            (False, _) | (_, False) => False,
            (True, True) => True,
            _ => Unknown,
        }
    }
    /// Conjunction over an iterator (`True` for an empty one).
    pub fn all<I: IntoIterator<Item = Certainty>>(it: I) -> Certainty {
        let mut acc = Certainty::True;
        for c in it {
            acc = acc.and(c);
            if acc == Certainty::False {
                break;
            }
        }
        acc
    }
}

impl std::ops::Not for Certainty {
    type Output = Certainty;
    /// Three-valued negation (`Unknown` stays `Unknown`).
    fn not(self) -> Certainty {
        match self {
            Certainty::True => Certainty::False,
            Certainty::False => Certainty::True,
            Certainty::Unknown => Certainty::Unknown,
        }
    }
}

impl Interval {
    /// `self < other` for all points: `hi < other.lo`; false when `lo ≥ other.hi`.
    ///
    /// ```
    /// use attncheck_kernel::{Certainty, Interval};
    /// let third = Interval::parse_decimal(64, "1/3").unwrap();
    /// let half = Interval::parse_decimal(64, "1/2").unwrap();
    /// assert_eq!(third.lt(&half), Certainty::True);
    /// assert_eq!(half.lt(&third), Certainty::False);
    /// assert_eq!(third.lt(&third), Certainty::Unknown); // overlapping: never a pass
    /// ```
    pub fn lt(&self, other: &Interval) -> Certainty {
        if self.hi() < other.lo() {
            Certainty::True
        } else if self.lo() >= other.hi() {
            Certainty::False
        } else {
            Certainty::Unknown
        }
    }
    /// `self ≤ other` for all points: `hi ≤ other.lo`; false when `lo > other.hi`.
    pub fn le(&self, other: &Interval) -> Certainty {
        if self.hi() <= other.lo() {
            Certainty::True
        } else if self.lo() > other.hi() {
            Certainty::False
        } else {
            Certainty::Unknown
        }
    }
    /// `self > other`, i.e. `other < self`.
    pub fn gt(&self, other: &Interval) -> Certainty {
        other.lt(self)
    }
    /// `self ≥ other`, i.e. `other ≤ self`.
    pub fn ge(&self, other: &Interval) -> Certainty {
        other.le(self)
    }
    /// Equality of the enclosed reals: `True` only for two equal points;
    /// `False` when the enclosures are disjoint.
    pub fn eq_exact(&self, other: &Interval) -> Certainty {
        if self.is_point() && other.is_point() && self.lo() == other.lo() {
            Certainty::True
        } else if self.hi() < other.lo() || other.hi() < self.lo() {
            Certainty::False
        } else {
            Certainty::Unknown
        }
    }
    /// Whether the two enclosures share a point (so that the two computed values
    /// may be equal). This is consistency, not a proof of equality.
    pub fn overlaps(&self, other: &Interval) -> bool {
        self.lo() <= other.hi() && other.lo() <= self.hi()
    }
}
