//! Numerals in Coq's syntax and the kernel's: decimal, or hexadecimal above 64 bits
//! ([`num`]); integers in `Z` ([`z`]); rationals in R syntax ([`q_coq`]) and in the
//! kernel's text ([`q_kernel`]). A leaf: it names no other module of the translator.

use rug::{Integer, Rational};

/// Bits above which an integer is written in hexadecimal: Coq parses a decimal
/// numeral in time quadratic in its length (measured: 1024!, 2640 digits, 12.5 s;
/// in hexadecimal 0.4 s), and small numbers stay decimal so that people can read
/// them.
const HEX_ABOVE_BITS: u32 = 64;

/// An integer numeral (decimal, or `0x…` above [`HEX_ABOVE_BITS`]), valid in
/// Coq's Z, positive, Q and R scopes.
pub(super) fn num(k: &Integer) -> String {
    if k.significant_bits() <= HEX_ABOVE_BITS {
        k.to_string()
    } else if *k < 0 {
        format!(
            "-0x{}",
            Integer::from(-k).to_string_radix(16).to_uppercase()
        )
    } else {
        format!("0x{}", k.to_string_radix(16).to_uppercase())
    }
}

pub(super) fn z(k: &Integer) -> String {
    if *k < 0 {
        format!("({})", num(k))
    } else {
        num(k)
    }
}

pub(super) fn zi(k: i64) -> String {
    z(&Integer::from(k))
}

/// A rational literal in R syntax.
pub(super) fn q_coq(q: &Rational) -> String {
    if *q.denom() == 1 {
        z(q.numer())
    } else {
        format!("({} / {})", z(q.numer()), num(q.denom()))
    }
}

pub(super) fn q_kernel(q: &Rational) -> String {
    q.to_string()
}
