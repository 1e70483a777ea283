//! Exact parsing of the numeric literals used in specs and certificates.

use rug::ops::Pow;
use rug::{Integer, Rational};

/// Why a numeric literal could not be read exactly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not an exact number ({reason}); write an integer, a fraction like -3/4, a decimal like 1.5e-3, or a power like 2^-8")]
pub struct ParseRationalError {
    /// The offending text.
    pub text: String,
    /// What was wrong with it.
    pub reason: &'static str,
}

fn err(text: &str, reason: &'static str) -> ParseRationalError {
    ParseRationalError {
        text: text.to_string(),
        reason,
    }
}

/// Parses an exact rational from `"7"`, `"-3/4"`, `"0.125"`, `"1.5e-3"` or
/// `"2^-8"` (integer base and exponent; a leading sign negates the power, so
/// `"-2^2"` is −4). Decimal literals are exact: `"0.1"` is
/// 1/10, not the nearest double.
pub fn parse_rational(s: &str) -> Result<Rational, ParseRationalError> {
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
