//! Exact literals ([`parse_rational`]) and their size limit ([`literal_digits`],
//! [`check_literal_size`], [`MAX_LITERAL_DIGITS`]): every form against its exact value,
//! every refusal with its reason, and the limit at its edge (the largest literal
//! accepted, the smallest refused), counted as the documentation defines it.

use attncheck_kernel::{
    abbreviate_literal, check_literal_size, literal_digits, parse_rational, MAX_LITERAL_DIGITS,
};
use rug::ops::Pow;
use rug::{Integer, Rational};

fn r(n: i64, d: i64) -> Rational {
    Rational::from((n, d))
}

#[test]
fn every_form_reads_its_exact_value() {
    for (s, want) in [
        ("7", r(7, 1)),
        ("-7", r(-7, 1)),
        ("+7", r(7, 1)),
        ("0", r(0, 1)),
        ("-3/4", r(-3, 4)),
        ("3/-4", r(-3, 4)),
        ("+3/4", r(3, 4)),
        (" 6 / 8 ", r(3, 4)),
        ("0.125", r(1, 8)),
        ("-0.125", r(-1, 8)),
        ("+.5", r(1, 2)),
        ("5.", r(5, 1)),
        ("1.25e1", r(25, 2)),
        ("12.5e-1", r(5, 4)),
        ("1.5E-3", r(3, 2000)),
        ("1e+2", r(100, 1)),
        ("0.001", r(1, 1000)),
        ("2^10", r(1024, 1)),
        ("2^-8", r(1, 256)),
        ("-2^-8", r(-1, 256)),
        ("-2^3", r(-8, 1)),
        ("+2^2", r(4, 1)),
        ("10^0", r(1, 1)),
        ("0^0", r(1, 1)),
        ("0^3", r(0, 1)),
        ("3^ 2", r(9, 1)),
        (" 7 ", r(7, 1)),
    ] {
        assert_eq!(parse_rational(s), Ok(want.clone()), "{s:?}");
    }
    // large exponents, at the edges of what is read
    assert_eq!(
        parse_rational("1e100000").unwrap(),
        Rational::from(Integer::from(10).pow(100_000u32))
    );
    assert_eq!(
        parse_rational("1e-100000").unwrap(),
        Rational::from((Integer::from(1), Integer::from(10).pow(100_000u32)))
    );
    assert_eq!(
        parse_rational("2^1000000").unwrap(),
        Rational::from(Integer::from(1) << 1_000_000u32)
    );
    assert_eq!(
        parse_rational("-1^-1000000").unwrap(),
        Rational::from(-1),
        "−(1^−10⁶)"
    );
}

#[test]
fn malformed_literals_are_refused_with_their_reason() {
    for (s, reason) in [
        ("", "empty"),
        ("   ", "empty"),
        ("2^x", "exponent must be a small integer"),
        ("2^1.5", "exponent must be a small integer"),
        ("2^", "exponent must be a small integer"),
        ("x^2", "base of a power must be an integer"),
        ("--2^2", "base of a power must be an integer"),
        ("-+2^2", "base of a power must be an integer"),
        ("1.5^2", "base of a power must be an integer"),
        ("0^-1", "zero to a negative power"),
        ("-0^-3", "zero to a negative power"),
        ("x/2", "numerator must be an integer"),
        ("1/x", "denominator must be an integer"),
        ("1/", "denominator must be an integer"),
        ("/2", "numerator must be an integer"),
        ("1/0", "zero denominator"),
        ("1/-0", "zero denominator"),
        ("1.2.3", "malformed decimal"),
        ("1e100001", "malformed decimal"),
        ("1e-100001", "malformed decimal"),
        ("1e", "malformed decimal"),
        (".", "malformed decimal"),
        ("-", "malformed decimal"),
        ("abc", "malformed decimal"),
        ("1_000", "malformed decimal"),
        ("0x10", "malformed decimal"),
        ("--1", "malformed decimal"),
        ("+-1", "malformed decimal"),
        // a numerator or denominator is digits after at most one sign
        ("1_000/3", "numerator must be an integer"),
        ("++1/2", "numerator must be an integer"),
        ("+-1/2", "numerator must be an integer"),
        ("-+1/2", "numerator must be an integer"),
        ("-/2", "numerator must be an integer"),
        ("3/1_000", "denominator must be an integer"),
        ("1/++2", "denominator must be an integer"),
        ("1/+-2", "denominator must be an integer"),
        ("1_0^2", "base of a power must be an integer"),
    ] {
        let e = parse_rational(s).expect_err(s);
        assert_eq!(e.reason, reason, "{s:?}");
        assert_eq!(e.digits, None, "{s:?}");
        assert_eq!(e.text, s.trim(), "{s:?}");
        let msg = e.to_string();
        assert!(
            msg.contains(reason) && msg.contains("not an exact number"),
            "{msg}"
        );
    }
}

/// The size of a literal in digits, as [`MAX_LITERAL_DIGITS`] defines it.
#[test]
fn literal_digits_counts_as_documented() {
    for (s, want) in [
        ("123", Some(3)),
        ("-123", Some(3)),
        ("+12", Some(2)),
        ("  7  ", Some(1)),
        (".5", Some(1)),
        ("1/23", Some(3)),
        ("-10/7", Some(3)),
        ("1.5e-3", Some(5)),
        ("1.5E3", Some(5)),
        ("12e+0004", Some(6)),
        ("1e", Some(1)),
        ("2^10", Some(10)),
        ("10^3", Some(6)),
        ("-10^-3", Some(6)),
        ("2^0", Some(1)),
        ("2^-1", Some(1)),
        ("abc", None),
        ("-x", None),
        ("", None),
        ("e5", None),
    ] {
        assert_eq!(literal_digits(s), want, "{s:?}");
    }
    // an exponent of more than 30 digits counts as beyond any limit; the product saturates
    assert_eq!(
        literal_digits(&format!("2^{}", "9".repeat(31))),
        Some(u128::MAX)
    );
    assert_eq!(
        literal_digits(&format!("2^{}", "9".repeat(30))),
        Some(10u128.pow(30) - 1)
    );
    assert_eq!(
        literal_digits(&format!("99^{}", "9".repeat(30))),
        Some(2 * (10u128.pow(30) - 1))
    );
    assert_eq!(
        literal_digits(&format!("1e{}", "9".repeat(31))),
        Some(u128::MAX)
    );
    assert_eq!(
        literal_digits(&format!("2^000{}", "9".repeat(30))),
        Some(10u128.pow(30) - 1)
    );
}

/// The limit's edge: exactly [`MAX_LITERAL_DIGITS`] digits is read, one more refused
/// before any number is formed, with its size in the error.
#[test]
fn the_limit_admits_its_edge_and_refuses_beyond() {
    assert_eq!(MAX_LITERAL_DIGITS, 1_000_000);
    let at = "1".repeat(1_000_000);
    assert_eq!(literal_digits(&at), Some(MAX_LITERAL_DIGITS));
    assert!(check_literal_size(&at).is_ok());
    assert!(parse_rational(&at).is_ok());
    let beyond = "1".repeat(1_000_001);
    let e = check_literal_size(&beyond).unwrap_err();
    assert_eq!(e.digits, Some(MAX_LITERAL_DIGITS + 1));
    assert_eq!(e.reason, "too large");
    assert!(e.text.ends_with("(1000001 characters)"), "{}", e.text);
    assert!(e.to_string().contains("1000001 digits"), "{e}");
    assert_eq!(parse_rational(&beyond).unwrap_err(), e);
    // a power's base digits count once per unit of its exponent
    assert!(check_literal_size("3^1000000").is_ok());
    let e = check_literal_size("3^1000001").unwrap_err();
    assert_eq!(e.digits, Some(1_000_001));
    let e = parse_rational("10^500001").unwrap_err();
    assert_eq!(e.digits, Some(1_000_002));
    // a fraction's numerator and denominator count together
    let half = "1".repeat(500_000);
    assert!(check_literal_size(&format!("{half}/{half}")).is_ok());
    assert!(check_literal_size(&format!("{half}/{half}1")).is_err());
    // what is not a literal is not measured
    assert!(check_literal_size("x^9999999999").is_ok());
}

#[test]
fn long_literals_are_abbreviated_in_messages() {
    let s64 = "7".repeat(64);
    assert_eq!(abbreviate_literal(&s64), s64);
    assert_eq!(abbreviate_literal(&format!("  {s64}  ")), s64);
    let s65 = format!("{}{}", "1".repeat(24), "2".repeat(41));
    assert_eq!(
        abbreviate_literal(&s65),
        format!("{}…{} (65 characters)", "1".repeat(24), "2".repeat(16))
    );
    let e = parse_rational(&format!("{}x", "9".repeat(100))).unwrap_err();
    assert_eq!(
        e.text,
        format!("{}…{}x (101 characters)", "9".repeat(24), "9".repeat(15))
    );
}
