//! The certificate language's evaluator (expr/eval.rs) on its own operators: the
//! comparisons on exact values against the rationals' order and on enclosures against
//! values known to lie apart, the three-valued connectives, `min`/`max`, `floor`/`ceil`
//! of an enclosure, and exact powers up to [`expr::MAX_EXACT_BITS`].

use attncheck_kernel::expr::{self, Data};
use attncheck_kernel::Certainty::{self, False, True, Unknown};
use rug::ops::Pow;
use rug::{Integer, Rational};

fn decide(f: &str) -> Certainty {
    expr::check(f, 128).unwrap_or_else(|e| panic!("{f}: {e}"))
}

fn exact(t: &str) -> Option<Rational> {
    expr::eval_exact(t, 128, &Data::new()).unwrap_or_else(|e| panic!("{t}: {e}"))
}

const OPS: [&str; 5] = ["<", "<=", ">", ">=", "="];

fn holds(op: &str, a: &Rational, b: &Rational) -> bool {
    match op {
        "<" => a < b,
        "<=" => a <= b,
        ">" => a > b,
        ">=" => a >= b,
        _ => a == b,
    }
}

/// Exact operands: every comparison is decided, as the rationals' order says (equal
/// operands, neighbours, signs, values past any float's precision).
#[test]
fn comparisons_of_exact_values_follow_the_rationals() {
    let values = [
        "-3",
        "-1/2",
        "0",
        "1/3",
        "2/6",
        "1/2",
        "2",
        "10^30",
        "(+ 10^30 1/7)",
    ];
    let read = |t: &str| exact(t).unwrap();
    for a in values {
        for b in values {
            for op in OPS {
                let want = Certainty::exact(holds(op, &read(a), &read(b)));
                assert_eq!(decide(&format!("({op} {a} {b})")), want, "({op} {a} {b})");
            }
        }
    }
}

/// Enclosures (√2, √3, π, and a rational beside them): decided when they lie apart,
/// as the reals' order says; an enclosure is never `=` to anything, nor to itself
/// (`Unknown`), since it does not say which point it holds.
#[test]
fn comparisons_of_enclosures_follow_the_reals_when_apart() {
    // (term, its value to a few digits: they lie apart by more than that)
    let values = [
        ("(sqrt 2)", std::f64::consts::SQRT_2),
        ("(sqrt 3)", 1.732050808),
        ("pi", std::f64::consts::PI),
        ("(neg (sqrt 3))", -1.732050808),
        ("3/2", 1.5),
    ];
    for (a, x) in values {
        for (b, y) in values {
            for op in OPS {
                let f = format!("({op} {a} {b})");
                let got = decide(&f);
                if a == b {
                    let want = match op {
                        "<=" | ">=" if a == "3/2" => True,
                        "=" if a == "3/2" => True,
                        "<" | ">" if a == "3/2" => False,
                        _ => Unknown,
                    };
                    assert_eq!(got, want, "{f}");
                    continue;
                }
                let want = match op {
                    "<" | "<=" => x < y,
                    ">" | ">=" => x > y,
                    _ => false,
                };
                assert_eq!(got, Certainty::exact(want), "{f}");
            }
        }
    }
}

/// A comparison with an undefined side is `Unknown`, whatever the other side.
#[test]
fn comparisons_with_an_undefined_side_decide_nothing() {
    for u in ["(ln 0)", "(sqrt -1)", "(/ 1 0)", "(ln (- pi pi))"] {
        for v in [
            "0",
            "-10^9",
            "10^9",
            "pi",
            "(exp 10000)",
            "(neg (exp 10000))",
            u,
        ] {
            for op in OPS {
                for f in [format!("({op} {u} {v})"), format!("({op} {v} {u})")] {
                    assert_eq!(decide(&f), Unknown, "{f}");
                }
            }
        }
    }
}

/// `and`, `not` and `forall` are Kleene's: `and` is false as soon as one part is,
/// true only when every part is.
#[test]
fn connectives_are_three_valued() {
    let (t, f, u) = ("(< 1 2)", "(< 2 1)", "(< (ln 0) 1)");
    let cases = [
        (vec![t], True),
        (vec![f], False),
        (vec![u], Unknown),
        (vec![t, t], True),
        (vec![t, f], False),
        (vec![f, t], False),
        (vec![t, u], Unknown),
        (vec![u, t], Unknown),
        (vec![u, f], False),
        (vec![f, u], False),
        (vec![t, t, f], False),
        (vec![t, t, t, t], True),
        (vec![t, u, t], Unknown),
    ];
    for (parts, want) in cases {
        let f = format!("(and {})", parts.join(" "));
        assert_eq!(decide(&f), want, "{f}");
        assert_eq!(decide(&format!("(not {f})")), !want, "(not {f})");
    }
    for (f, want) in [
        ("(forall k 1 9 (< k 10))", True),
        ("(forall k 1 10 (< k 10))", False),
        ("(forall k 1 9 (< k 5))", False),
        ("(forall k 5 9 (< (* k (sqrt 2)) 13))", True),
        ("(forall k 1 9 (< (/ 1 (- k 5)) 2))", Unknown),
        ("(forall k 1 9 (< (/ 1 (- k 5)) 0))", False),
    ] {
        assert_eq!(decide(f), want, "{f}");
    }
}

/// `min` and `max` of exact values are the exact smaller and larger; of enclosures,
/// enclosures of them.
#[test]
fn min_and_max_pick_the_smaller_and_the_larger() {
    let values = ["-3", "-1/2", "0", "1/3", "2/6", "2"];
    for a in values {
        for b in values {
            let (x, y) = (exact(a).unwrap(), exact(b).unwrap());
            let (lo, hi) = if x < y { (x, y) } else { (y, x) };
            assert_eq!(
                exact(&format!("(min {a} {b})")),
                Some(lo.clone()),
                "(min {a} {b})"
            );
            assert_eq!(
                exact(&format!("(max {a} {b})")),
                Some(hi.clone()),
                "(max {a} {b})"
            );
        }
    }
    for (a, b) in [
        ("(sqrt 2)", "(sqrt 3)"),
        ("(sqrt 3)", "(sqrt 2)"),
        ("(sqrt 2)", "3/2"),
        ("3/2", "(sqrt 2)"),
    ] {
        assert_eq!(
            decide(&format!("(< (min {a} {b}) 1.4143)")),
            True,
            "(min {a} {b})"
        );
        assert_eq!(
            decide(&format!("(> (min {a} {b}) 1.4142)")),
            True,
            "(min {a} {b})"
        );
        assert_eq!(
            decide(&format!("(> (max {a} {b}) 1.49)")),
            True,
            "(max {a} {b})"
        );
    }
    assert_eq!(decide("(> (max (sqrt 2) (sqrt 3)) 1.7320)"), True);
    assert_eq!(decide("(< (max (sqrt 2) (sqrt 3)) 1.7321)"), True);
}

/// ⌊x⌋ and ⌈x⌉ of an enclosure are exact when both ends round to one integer, and
/// decide nothing about the integer when the enclosure straddles one.
#[test]
fn floor_and_ceil_of_an_enclosure_straddling_an_integer_decide_nothing() {
    assert_eq!(exact("(floor pi)"), Some(3.into()));
    assert_eq!(exact("(ceil pi)"), Some(4.into()));
    assert_eq!(exact("(floor (neg pi))"), Some((-4).into()));
    // (- e e) encloses 0 with ends on both sides of it
    let zero = "(- (exp 1) (exp 1))";
    assert_eq!(exact(&format!("(floor {zero})")), None);
    assert_eq!(exact(&format!("(ceil {zero})")), None);
    for k in ["-1", "0", "1"] {
        for op in ["floor", "ceil"] {
            let f = format!("(= ({op} {zero}) {k})");
            let want = match (op, k) {
                ("floor", "1") | ("ceil", "-1") => False,
                _ => Unknown,
            };
            assert_eq!(decide(&f), want, "{f}");
        }
    }
}

/// `(pow q n)` of an exact q is exact while n·(bits of q's numerator and denominator)
/// is at most MAX_EXACT_BITS, and an enclosure of it beyond (never a number of
/// millions of digits, never slow); both contain qⁿ.
#[test]
fn exact_powers_stay_exact_up_to_the_bound_and_enclosures_beyond() {
    let m = expr::MAX_EXACT_BITS as i64;
    // 3 = 0b11 over 1: 3 bits per factor
    let edge = m / 3;
    for (n, is_exact) in [
        (edge, true),
        (edge + 1, false),
        (-edge, true),
        (-(edge + 1), false),
    ] {
        let t = format!("(pow 3 {n})");
        let want = if n >= 0 {
            Rational::from(Integer::from(3).pow(n as u32))
        } else {
            Rational::from((Integer::from(1), Integer::from(3).pow((-n) as u32)))
        };
        assert_eq!(exact(&t).is_some(), is_exact, "{t}");
        if is_exact {
            assert_eq!(exact(&t), Some(want), "{t}");
        } else {
            let i = expr::eval(&t, 128).unwrap();
            assert!(i.contains_rational(&want), "{t}: {i:?}");
        }
    }
    // 1/3 = 0b1 over 0b11: also 3 bits per factor
    assert!(exact(&format!("(pow 1/3 {edge})")).is_some());
    assert!(exact(&format!("(pow 1/3 {})", edge + 1)).is_none());
    // a power of a billion digits is an enclosure at once
    assert_eq!(decide("(< 10^400 (pow 3 1000000000))"), True);
    assert_eq!(decide("(= (pow 1/9 2) 1/81)"), True);
}

/// An exact result stays exact while its numerator and denominator together have at
/// most MAX_EXACT_BITS bits, and becomes an enclosure of itself beyond.
#[test]
fn exact_results_are_demoted_to_enclosures_past_max_exact_bits() {
    let m = expr::MAX_EXACT_BITS;
    assert_eq!(m, 1 << 16);
    // 2^k has k + 1 bits over a denominator of 1 bit: k + 2 in all
    for (a, b, is_exact) in [
        (32_767u32, 32_767u32, true), // 2^65534: 65,536 bits
        (32_767, 32_768, false),      // 2^65535: 65,537
        (30_000, 30_000, true),
        (40_000, 40_000, false),
    ] {
        let t = format!("(* 2^{a} 2^{b})");
        let want = Rational::from(Integer::from(1) << (a + b));
        match exact(&t) {
            Some(q) => {
                assert!(is_exact, "{t} stayed exact");
                assert_eq!(q, want, "{t}");
            }
            None => {
                assert!(!is_exact, "{t} was demoted");
                assert!(expr::eval(&t, 128).unwrap().contains_rational(&want), "{t}");
            }
        }
        // and over a denominator: 1/2^k has 1 + (k + 1) bits too
        let t = format!("(/ 1 (* 2^{a} 2^{b}))");
        assert_eq!(exact(&t).is_some(), is_exact, "{t}");
    }
}
