//! The units of the work budget ([`MAX_WORK`]) and the sizes they are counted in.

use super::syntax::ExprError;
use rug::Rational;

/// The most work one certificate may cost, in units ([`super::cost::work_with`]): every obligation
/// and every datum together ([`super::cost::work_of_all`]), each `forall`/`sum` body counted once
/// per value of its range (nested ranges multiply). Checked before anything is
/// evaluated, so no certificate runs without bound (issue #38: it bounded one formula
/// until then, and a certificate of 10,000 obligations each under it would have run
/// for months). One formula alone (`eval`, `prove`) is held to it too.
pub const MAX_WORK: u128 = 1_000_000_000;

// ----- the work budget -----
//
// `work_with` bounds what evaluating a formula costs, before anything is evaluated, in
// units of about one term evaluation: each node costs 1 per evaluation, a `forall`/
// `sum` body once per value of its range, each data operation its own cost per
// evaluation (below, from the sizes of its data), and, once per formula, reading each
// literal and the cached computations of a layer datum. The sizes are counted in
// machine words (64-bit words of a sign row, limbs of a rational), WORDS_PER_UNIT
// words to a unit; a bound of a big-integer product is the product of the sizes
// (schoolbook multiplication, which GMP only beats). Calibrated on this machine: a
// unit is about 0.1 µs, the cost of one interval operation at 128 bits.

/// 64-bit words handled (popcounts, limb operations) per unit of work.
pub const WORDS_PER_UNIT: u128 = 64;
/// Pairs of sign rows compared per unit of work (the per-pair overhead of
/// `gram-max-abs`, besides its words).
pub const PAIRS_PER_UNIT: u128 = 8;
/// The overhead of one inner product ⟨s_l, s_j⟩ of the lemma operations, in words.
pub(super) const INNER_PRODUCT_WORDS: u128 = 64;
/// Digits of a literal read per unit of work (GMP reads a million-digit power in
/// about 15 ms).
pub const LITERAL_DIGITS_PER_UNIT: u128 = 8;

/// What one term evaluation at `prec` bits costs relative to one at 128 bits:
/// q·⌈√q⌉ with q = ⌈p/128⌉ (1 at 128 bits, 24 at 1024, 1536 at 16384), an upper bound
/// of what `verify` measures (MPFR's exp and cos grow like p^1.5; 6× at 1024 bits and
/// 50× at 4096 on the committed certificates).
pub fn precision_factor(prec: u32) -> u128 {
    let q = u128::from(prec.div_ceil(128).max(1));
    let mut r = 1u128;
    while r * r < q {
        r += 1;
    }
    q * r
}

/// The size of a rational in limbs: 1 + (bits of numerator and denominator)/64.
pub(super) fn limbs(q: &Rational) -> u128 {
    1 + u128::from(q.numer().significant_bits() + q.denom().significant_bits()) / 64
}

pub(super) fn units(words: u128) -> u128 {
    words.div_ceil(WORDS_PER_UNIT)
}

pub(super) fn budget_error(w: u128) -> ExprError {
    ExprError {
        offset: 0,
        reason: format!(
            "the formula would cost {w} evaluations (nested ranges multiply; data operations count \
             at their size); the limit is {MAX_WORK}"
        ),
    }
}

/// An exact rational whose numerator and denominator together exceed this many
/// bits is demoted to its outward interval (keeps exact mode from blowing up).
pub const MAX_EXACT_BITS: u32 = 1 << 16;
