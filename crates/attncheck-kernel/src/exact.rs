//! Exact parsing of the numeric literals used in specs and certificates.
//!
//! Every exact number the tool reads (certificate formulas and data, spec fields,
//! `.mtx` values, hints, command-line options) goes through [`parse_rational`], so its
//! one size limit ([`MAX_LITERAL_DIGITS`]) holds wherever input enters.

use rug::ops::Pow;
use rug::{Integer, Rational};

/// The largest size of an exact literal, in decimal digits as written: the digits
/// of an integer; of numerator and denominator together for `p/q`; of the
/// mantissa plus |exponent| for a decimal `1.5e-3`; the digits of the base times
/// |exponent| for a power `b^e`. A literal within it has at most about 3.4·10⁶
/// bits and is read in milliseconds; beyond it the literal is refused before any
/// number is formed (GMP would abort, or raise SIGFPE, on `<200000 nines>^1000000`).
/// The largest committed literal is ⌈log₂ 65536!⌉'s 65536!, 287 194 digits.
pub const MAX_LITERAL_DIGITS: u128 = 1_000_000;

/// Why a numeric literal could not be read exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseRationalError {
    /// The offending text (abbreviated when long).
    pub text: String,
    /// What was wrong with it.
    pub reason: &'static str,
    /// Its size in digits ([`MAX_LITERAL_DIGITS`]) when that is what was wrong.
    pub digits: Option<u128>,
}

impl std::fmt::Display for ParseRationalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.digits {
            Some(n) => write!(
                f,
                "`{}` is too large for an exact literal: {n} digits (the digits of a power's base \
                 count once per unit of its exponent); the limit is {MAX_LITERAL_DIGITS}",
                self.text
            ),
            None => write!(
                f,
                "`{}` is not an exact number ({}); write an integer, a fraction like -3/4, a \
                 decimal like 1.5e-3, or a power like 2^-8",
                self.text, self.reason
            ),
        }
    }
}

impl std::error::Error for ParseRationalError {}

impl ParseRationalError {
    /// An error about `text` (shown abbreviated when long).
    pub fn new(text: &str, reason: &'static str) -> ParseRationalError {
        ParseRationalError {
            text: abbreviate_literal(text),
            reason,
            digits: None,
        }
    }
}

/// `s` as an error message shows it: whole when short, else its first and last
/// characters and its length (a refused literal may be megabytes long).
pub fn abbreviate_literal(s: &str) -> String {
    let t = s.trim();
    let n = t.chars().count();
    if n <= 64 {
        return t.to_string();
    }
    let head: String = t.chars().take(24).collect();
    let tail: String = t.chars().skip(n - 16).collect();
    format!("{head}…{tail} ({n} characters)")
}

fn err(text: &str, reason: &'static str) -> ParseRationalError {
    ParseRationalError::new(text, reason)
}

/// The size of `s` in digits as [`MAX_LITERAL_DIGITS`] defines it, counted from the
/// text alone (no number is formed): `None` when `s` does not have the shape of a
/// literal. Saturating; an exponent too long to read counts as beyond any limit.
pub fn literal_digits(s: &str) -> Option<u128> {
    let t = s.trim();
    let t = t.strip_prefix(['-', '+']).unwrap_or(t);
    let digits = |x: &str| x.bytes().filter(u8::is_ascii_digit).count() as u128;
    let exponent = |x: &str| -> u128 {
        let x = x.trim();
        let x = x.strip_prefix(['-', '+']).unwrap_or(x);
        let x = x.trim_start_matches('0');
        if x.len() > 30 {
            u128::MAX
        } else {
            x.parse::<u128>().unwrap_or(0)
        }
    };
    if !t.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    Some(if let Some((base, exp)) = t.split_once('^') {
        digits(base).max(1).saturating_mul(exponent(exp).max(1))
    } else if let Some((n, d)) = t.split_once('/') {
        digits(n).saturating_add(digits(d))
    } else if let Some(i) = t.find(['e', 'E']) {
        digits(&t[..i]).saturating_add(exponent(&t[i + 1..]))
    } else {
        digits(t)
    })
}

/// `Err` when `s` has the shape of a literal and is larger than [`MAX_LITERAL_DIGITS`].
pub fn check_literal_size(s: &str) -> Result<(), ParseRationalError> {
    match literal_digits(s) {
        Some(n) if n > MAX_LITERAL_DIGITS => Err(ParseRationalError {
            text: abbreviate_literal(s),
            reason: "too large",
            digits: Some(n),
        }),
        _ => Ok(()),
    }
}

/// Parses an exact rational from `"7"`, `"-3/4"`, `"0.125"`, `"1.5e-3"` or
/// `"2^-8"` (integer base and exponent; a leading sign negates the power, so
/// `"-2^2"` is −4). Decimal literals are exact: `"0.1"` is
/// 1/10, not the nearest double. A literal larger than [`MAX_LITERAL_DIGITS`] is
/// refused before any number is formed.
pub fn parse_rational(s: &str) -> Result<Rational, ParseRationalError> {
    check_literal_size(s)?;
    let t = s.trim();
    if t.is_empty() {
        return Err(err(s, "empty"));
    }
    if let Some((base, exp)) = t.split_once('^') {
        // A leading sign applies to the power, as in written mathematics:
        // "-2^-8" is −(2^−8), not (−2)^−8 = +1/256.
        let base = base.trim();
        let (neg, base) = match base.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, base.strip_prefix('+').unwrap_or(base)),
        };
        let b = parse_int(base)
            .filter(|_| !base.starts_with(['-', '+']))
            .ok_or_else(|| err(s, "base of a power must be an integer"))?;
        let e: i32 = exp
            .trim()
            .parse()
            .map_err(|_| err(s, "exponent must be a small integer"))?;
        if e.unsigned_abs() > 1_000_000 {
            return Err(err(s, "exponent too large"));
        }
        if b == 0 && e < 0 {
            return Err(err(s, "zero to a negative power"));
        }
        let p = b.pow(e.unsigned_abs());
        let q = if e >= 0 {
            Rational::from(p)
        } else {
            Rational::from((Integer::from(1), p))
        };
        return Ok(if neg { -q } else { q });
    }
    if let Some((n, d)) = t.split_once('/') {
        let n = parse_int(n.trim()).ok_or_else(|| err(s, "numerator must be an integer"))?;
        let d = parse_int(d.trim()).ok_or_else(|| err(s, "denominator must be an integer"))?;
        if d == 0 {
            return Err(err(s, "zero denominator"));
        }
        return Ok(Rational::from((n, d)));
    }
    parse_decimal(t).ok_or_else(|| err(s, "malformed decimal"))
}

fn parse_int(t: &str) -> Option<Integer> {
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Integer::from_str_radix(t.trim_start_matches('+'), 10).ok()
}

fn parse_decimal(t: &str) -> Option<Rational> {
    let (mant, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
        None => (t, 0),
    };
    if exp.unsigned_abs() > 100_000 {
        return None;
    }
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant.strip_prefix('+').unwrap_or(mant)),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = format!("{int}{frac}");
    let mut n = Integer::from_str_radix(&digits, 10).ok()?;
    if neg {
        n = -n;
    }
    let scale = exp - frac.len() as i32;
    let ten = Integer::from(10);
    Some(if scale >= 0 {
        Rational::from(n * ten.clone().pow(scale as u32))
    } else {
        Rational::from((n, ten.pow(scale.unsigned_abs())))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn literals() {
        assert_eq!(parse_rational("0.1").unwrap(), Rational::from((1, 10)));
        assert_eq!(parse_rational("-3/4").unwrap(), Rational::from((-3, 4)));
        assert_eq!(parse_rational("1.5e-3").unwrap(), Rational::from((3, 2000)));
        assert_eq!(parse_rational("2^-8").unwrap(), Rational::from((1, 256)));
        assert_eq!(parse_rational("12").unwrap(), Rational::from(12));
        assert!(parse_rational("1/0").is_err());
        assert!(parse_rational("abc").is_err());
        assert!(parse_rational("").is_err());
        assert!(parse_rational(".").is_err());
    }
}
