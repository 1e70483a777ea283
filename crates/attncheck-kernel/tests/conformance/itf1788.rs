//! The IEEE Std 1788-2015 test vectors of ITF1788 (github.com/oheim/ITF1788, commit
//! b6ee1e2; Apache-2.0, the licence and notice beside the files in `tests/itf1788/`),
//! run against the kernel's [`Interval`] operations that have a counterpart in the
//! standard. A small reader of the `.itl` format lives below (the vectors only, no code
//! of ITF1788's).
//!
//! Every case runs at 53 bits, the binary64 significand the vectors are written for:
//!
//! - **Containment.** The kernel's result K, rounded outward to binary64 (`RD` of its
//!   lower end, `RU` of its upper end, as MPFR's `get_d` does, with subnormals and
//!   overflow), must contain the standard's result T. Rounding outward keeps every point
//!   of K, so K ⊇ the exact range implies K₆₄ ⊇ T (T is the tightest binary64 hull of the
//!   exact range); in binary64's normal range, at 53 bits, K₆₄ = K and the check is exact.
//!   (MPFR's exponent range is wider than binary64's, so K itself may be tighter than T
//!   where T underflowed to a subnormal or overflowed to ±∞.)
//! - **Tightness.** Where the kernel is documented tight (one correctly rounded MPFR call
//!   per endpoint: + − × ÷ √ exp ln, xⁿ for n ≥ 0, sin, cos, neg, abs, min, max, hull,
//!   ∩, inf, sup, wid), K₆₄ = T exactly; the exceptions are listed in [`LOOSE`] with the
//!   reason.
//! - **Decided only where the standard is.** A result the standard decorates `trv` (the
//!   operation left its domain on part of a `com`/`dac`/`def` input), an empty result, and
//!   NaI never prove a comparison: the kernel's `checked_*` form is `None` and its total
//!   form the whole line, on which every comparison (<, ≤, >, ≥, =) with 0, ±1 and the
//!   standard's bounds is `Unknown`. Where an input is decorated `trv` or `ill` (or is
//!   NaI), the kernel's counterpart is an undefined argument in the certificate language:
//!   the case is evaluated through [`expr::check`] with that argument undefined, and every
//!   comparison on the result is `Unknown`.
//! - **Comparisons.** The kernel's three-valued comparisons are the standard's relations:
//!   `a.le(b)` is `True` exactly when `precedes(a, b)`, `a.lt(b)` is `True` exactly when
//!   `strictPrecedes(a, b)`, `a.eq_exact(b)` is `False` exactly when `disjoint(a, b)` and
//!   `True` only when `equal(a, b)` holds of two points; `b.contains(a)` is `subset(a, b)`.
//!
//! The kernel's semantics differ from the standard's on purpose, and are encoded so:
//! the empty set is not representable (cases with an empty input are counted, not run);
//! an argument enclosure not inside the domain gives the whole line from the total form
//! and `None` from the `checked_*` form (÷ by an interval containing 0, √ below 0, ln at
//! or below 0, xⁿ for n < 0 at 0), where the standard gives the range over the part
//! inside the domain (decorated `trv`); decorations do not exist (an operation is defined
//! or undefined). Functions without a kernel counterpart (fma, pow with a real exponent,
//! tan, the inverse and hyperbolic functions, exp2, exp10, log2, log10, sign, trunc, the
//! roundings, mid, rad, midRad, mig, less, interior, isEmpty, …) are skipped by name.
//!
//! The reader is shared with `f64tier`, which runs the same vectors against the f64 tier.

use crate::common::is_entire;
use attncheck_kernel::{expr, Certainty, Interval};
use rug::float::{Round, Special};
use rug::{Float, Integer};
use std::collections::BTreeMap;

/// The binary64 significand: the precision the vectors are written for.
pub(crate) const P: u32 = 53;

/// The vector files, as committed (verbatim) in `tests/itf1788/`.
pub(crate) const FILES: [(&str, &str); 4] = [
    (
        "libieeep1788_elem.itl",
        include_str!("../itf1788/libieeep1788_elem.itl"),
    ),
    (
        "libieeep1788_set.itl",
        include_str!("../itf1788/libieeep1788_set.itl"),
    ),
    (
        "libieeep1788_bool.itl",
        include_str!("../itf1788/libieeep1788_bool.itl"),
    ),
    (
        "libieeep1788_num.itl",
        include_str!("../itf1788/libieeep1788_num.itl"),
    ),
];

/// Where the kernel's result is sound but wider than the standard's tightest one: the
/// reason, when the case is one of the documented kinds (checked: every other case of
/// an operation the vectors cover is tight).
///
/// - ÷ with an ∞/∞ endpoint quotient (both operands unbounded): the whole line
///   ([`Interval::checked_div`]: "an ∞/∞ endpoint makes the result the whole line");
///   the standard takes the limit, e.g. [−∞, −15] / [−∞, −3] = [0, +∞].
/// - xⁿ for n < 0: 1/x^|n|, two roundings (x^|n| outward, then the quotient outward: a
///   relative error of at most 2·2⁻⁵³ per end), so each end is at most two binary64 ulps
///   beyond the standard's ([`Interval::checked_powi`]).
fn loose(c: &Case, n: Option<i32>, k: &Interval, lo: &Float, hi: &Float) -> Option<&'static str> {
    match c.op.as_str() {
        "div"
            if is_entire(k)
                && c.args.iter().all(
                    |a| matches!(a, Val::Iv(l, h, _) if l.is_infinite() || h.is_infinite()),
                ) =>
        {
            Some("÷ with an ∞/∞ endpoint quotient: the whole line")
        }
        "pown" | "recip" if n.is_none_or(|n| n < 0) => {
            let (klo, khi) = to_binary64(k);
            let (mut below, mut above) = (lo.clone(), hi.clone());
            for _ in 0..2 {
                below.next_down();
                above.next_up();
            }
            (klo >= below && khi <= above).then_some("xⁿ, n < 0: two roundings, two ulps")
        }
        _ => None,
    }
}

// ----- the .itl format -----------------------------------------------------------------

/// A decoration (IEEE 1788 §8.1): `com` ⊃ `dac` ⊃ `def` ⊃ `trv`, and `ill` (NaI).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dec {
    Com,
    Dac,
    Def,
    Trv,
    Ill,
}

/// One literal of a test case.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    /// `[lo, hi]` (`[entire]` is `[−∞, +∞]`), with its decoration in a `_dec` test.
    Iv(Float, Float, Option<Dec>),
    /// `[empty]`, with its decoration (`trv`) in a `_dec` test.
    Empty(Option<Dec>),
    /// `[nai]`.
    Nai,
    Num(Float),
    Bool(bool),
}

impl Val {
    pub(crate) fn dec(&self) -> Option<Dec> {
        match self {
            Val::Iv(_, _, d) | Val::Empty(d) => *d,
            Val::Nai => Some(Dec::Ill),
            _ => None,
        }
    }
}

/// One line `op args = result;` of a test case.
#[derive(Clone, Debug)]
pub(crate) struct Case {
    pub file: &'static str,
    pub testcase: String,
    pub op: String,
    pub args: Vec<Val>,
    pub result: Val,
    pub line: usize,
}

impl std::fmt::Display for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{} ({}) {} {:?} = {:?}",
            self.file, self.line, self.testcase, self.op, self.args, self.result
        )
    }
}

/// A number of the format: a decimal (the nearest binary64, as the C++ literals of the
/// original tests are read), a hexadecimal float (exact), or ±infinity.
fn number(s: &str) -> Float {
    let t = s.trim();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = body.to_ascii_lowercase();
    let x = if lower == "infinity" || lower == "inf" {
        Float::with_val(P, Special::Infinity)
    } else if let Some(hex) = lower.strip_prefix("0x") {
        let (mant, exp) = hex.split_once('p').unwrap_or((hex, "0"));
        let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
        let digits = format!("{int}{frac}");
        let m = Integer::from_str_radix(&digits, 16).unwrap_or_else(|e| panic!("{s}: {e}"));
        let e: i64 = exp.parse().unwrap_or_else(|e| panic!("{s}: {e}"));
        let e = e - 4 * frac.len() as i64;
        let (x, dir) = Float::with_val_round(P, &m, Round::Nearest);
        assert_eq!(
            dir,
            std::cmp::Ordering::Equal,
            "{s} is not a binary64 number"
        );
        x << i32::try_from(e).unwrap()
    } else {
        let v: f64 = lower.parse().unwrap_or_else(|e| panic!("{s}: {e}"));
        Float::with_val(P, v)
    };
    if neg {
        -x
    } else {
        x
    }
}

fn decoration(s: &str) -> Dec {
    match s {
        "com" => Dec::Com,
        "dac" => Dec::Dac,
        "def" => Dec::Def,
        "trv" => Dec::Trv,
        "ill" => Dec::Ill,
        _ => panic!("unknown decoration `{s}`"),
    }
}

/// The literals of one side of `=`.
fn values(s: &str) -> Vec<Val> {
    let mut out = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('[') {
            let close = r.find(']').expect("a closing bracket");
            let inner = r[..close].trim();
            let mut after = &r[close + 1..];
            let dec = after.strip_prefix('_').map(|d| {
                let end = d
                    .find(|c: char| !c.is_ascii_alphabetic())
                    .unwrap_or(d.len());
                after = &d[end..];
                decoration(&d[..end])
            });
            out.push(match inner.to_ascii_lowercase().as_str() {
                "empty" => Val::Empty(dec),
                "nai" => Val::Nai,
                "entire" => Val::Iv(
                    Float::with_val(P, Special::NegInfinity),
                    Float::with_val(P, Special::Infinity),
                    dec,
                ),
                _ => {
                    let (a, b) = inner.split_once(',').unwrap_or((inner, inner));
                    Val::Iv(number(a), number(b), dec)
                }
            });
            rest = after.trim_start();
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let tok = &rest[..end];
            out.push(match tok {
                "true" => Val::Bool(true),
                "false" => Val::Bool(false),
                _ => Val::Num(number(tok)),
            });
            rest = rest[end..].trim_start();
        }
    }
    out
}

/// Removes `/* … */` and `// …` comments, keeping the line breaks (for line numbers).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("/*") {
            let end = r.find("*/").expect("a closed comment");
            out.extend(r[..end].chars().filter(|&c| c == '\n'));
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix("//") {
            let end = r.find('\n').unwrap_or(r.len());
            rest = &r[end..];
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Every case of one file.
pub(crate) fn cases(file: &'static str, text: &str) -> Vec<Case> {
    let text = strip_comments(text);
    let mut out = Vec::new();
    let mut testcase = String::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("testcase ") {
            testcase = name.trim_end_matches('{').trim().to_string();
            continue;
        }
        let Some(stmt) = line.strip_suffix(';') else {
            assert!(line.is_empty() || line == "}", "{file}:{}: {line}", i + 1);
            continue;
        };
        let stmt = stmt.split(" signal ").next().unwrap();
        let (lhs, rhs) = stmt.split_once('=').expect("op args = result");
        let lhs = lhs.trim();
        let (op, args) = lhs.split_once(char::is_whitespace).unwrap_or((lhs, ""));
        let mut result = values(rhs);
        // midRad has two results (no kernel counterpart): the first is kept
        assert!(
            result.len() == 1 || op == "midRad",
            "{file}:{}: one result",
            i + 1
        );
        out.push(Case {
            file,
            testcase: testcase.clone(),
            op: op.to_string(),
            args: values(args),
            result: result.swap_remove(0),
            line: i + 1,
        });
    }
    out
}

// ----- running a case --------------------------------------------------------------------

/// What a case was, once run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    /// Contained, and K₆₄ = T.
    Tight,
    /// Contained, wider than T (allowed only where [`LOOSE`] says why).
    Loose,
    /// The standard's result is empty, `trv` or NaI: the kernel's is undefined (`None`,
    /// the whole line), and no comparison on it is decided.
    Undecided,
    /// An input is decorated `trv`/`ill` (or NaI): through the certificate language with
    /// that argument undefined, no comparison on the result is decided.
    UndefinedArgument,
    /// The standard's result is defined, the kernel's undefined (a documented
    /// difference: the argument touches or crosses the edge of the domain).
    KernelUndefined,
    /// A relation (precedes, …) or a number (inf, wid, …), decided as the standard says.
    Agrees,
    /// An input is empty: not representable in the kernel.
    EmptyInput,
    /// No counterpart in the kernel.
    NoCounterpart,
}

fn interval(lo: &Float, hi: &Float) -> Interval {
    Interval::from_endpoints(lo.clone(), hi.clone())
}

/// `(RD₆₄ lo, RU₆₄ hi)` of an interval: binary64 with subnormals and overflow.
fn to_binary64(k: &Interval) -> (f64, f64) {
    (
        k.lo().to_f64_round(Round::Down),
        k.hi().to_f64_round(Round::Up),
    )
}

/// Every comparison of `k` with 0, ±1 and `extra` is `Unknown`.
fn decides_nothing(k: &Interval, extra: &[&Float]) -> Result<(), String> {
    let mut probes: Vec<Interval> = [-1, 0, 1]
        .iter()
        .map(|&c| Interval::from_i64(P, c))
        .collect();
    probes.extend(
        extra
            .iter()
            .filter(|x| x.is_finite())
            .map(|x| interval(x, x)),
    );
    for c in &probes {
        for r in [
            k.lt(c),
            k.le(c),
            k.gt(c),
            k.ge(c),
            k.eq_exact(c),
            c.lt(k),
            c.le(k),
        ] {
            if r != Certainty::Unknown {
                return Err(format!("{k:?} against {c:?} decides {r:?}"));
            }
        }
    }
    Ok(())
}

/// A defined interval argument, or `None` for `[empty]`.
fn arg(v: &Val) -> Option<Interval> {
    match v {
        Val::Iv(lo, hi, _) => Some(interval(lo, hi)),
        _ => None,
    }
}

/// The kernel's total and checked results of an interval operation (`checked` is `None`
/// where the kernel calls the result undefined; total operations are always `Some`).
pub(crate) fn kernel_op(
    op: &str,
    a: &[Interval],
    n: Option<i32>,
) -> Option<(Interval, Option<Interval>)> {
    let one = Interval::one(P);
    let r = match (op, a) {
        ("neg", [x]) => {
            let r = -x;
            (r.clone(), Some(r))
        }
        ("add", [x, y]) => total(x + y),
        ("sub", [x, y]) => total(x - y),
        ("mul", [x, y]) => total(x * y),
        ("div", [x, y]) => (x / y, x.checked_div(y)),
        ("recip", [x]) => (&one / x, one.checked_div(x)),
        ("sqr", [x]) => (x.powi(2), x.checked_powi(2)),
        ("pown", [x]) => (x.powi(n?), x.checked_powi(n?)),
        ("sqrt", [x]) => (x.sqrt(), x.checked_sqrt()),
        ("exp", [x]) => total(x.exp()),
        ("log", [x]) => (x.ln(), x.checked_ln()),
        ("sin", [x]) => total(x.sin()),
        ("cos", [x]) => total(x.cos()),
        ("abs", [x]) => total(x.abs()),
        ("min", [x, y]) => total(x.min(y)),
        ("max", [x, y]) => total(x.max(y)),
        ("convexHull", [x, y]) => total(x.hull(y)),
        ("intersection", [x, y]) => {
            let r = x.intersect(y);
            (r.clone().unwrap_or_else(|| Interval::entire(P)), r)
        }
        _ => return None,
    };
    Some(r)
}

fn total(r: Interval) -> (Interval, Option<Interval>) {
    (r.clone(), Some(r))
}

/// The operation in the certificate language, on argument terms (`None`: not in it).
fn formula_term(op: &str, t: &[String], n: Option<i32>) -> Option<String> {
    Some(match (op, t) {
        ("neg", [x]) => format!("(neg {x})"),
        ("add", [x, y]) => format!("(+ {x} {y})"),
        ("sub", [x, y]) => format!("(- {x} {y})"),
        ("mul", [x, y]) => format!("(* {x} {y})"),
        ("div", [x, y]) => format!("(/ {x} {y})"),
        ("recip", [x]) => format!("(/ 1 {x})"),
        ("sqr", [x]) => format!("(pow {x} 2)"),
        ("pown", [x]) => format!("(pow {x} {})", n?),
        ("sqrt", [x]) => format!("(sqrt {x})"),
        ("exp", [x]) => format!("(exp {x})"),
        ("log", [x]) => format!("(ln {x})"),
        ("sin", [x]) => format!("(sin {x})"),
        ("cos", [x]) => format!("(cos {x})"),
        ("abs", [x]) => format!("(abs {x})"),
        ("min", [x, y]) => format!("(min {x} {y})"),
        ("max", [x, y]) => format!("(max {x} {y})"),
        _ => return None,
    })
}

/// A term of the certificate language whose value encloses `[lo, hi]`: a literal for a
/// point, else `m + r·U` with U = cos(2^400·π) = [−1, 1] (the enclosure of 2^400·π is
/// wider than 2π); an infinite end is replaced by ±2^2000 (these terms serve the
/// undefined-argument cases only, whose verdict does not depend on the other argument).
fn term_for(lo: &Float, hi: &Float) -> String {
    let big = || rug::Rational::from(Integer::from(1) << 2000u32);
    let end = |x: &Float| {
        x.to_rational()
            .unwrap_or_else(|| if x.is_sign_negative() { -big() } else { big() })
    };
    let (a, b) = (end(lo), end(hi));
    if a == b {
        return a.to_string();
    }
    let m = rug::Rational::from(&a + &b) / 2u32;
    let r = rug::Rational::from(&b - &a) / 2u32;
    format!("(+ {m} (* {r} (cos (* 2^400 pi))))")
}

/// Runs one case; `Err` names what is wrong.
fn run(c: &Case) -> Result<Outcome, String> {
    let args = &c.args;
    if args.iter().any(|a| matches!(a, Val::Empty(_))) {
        return Ok(Outcome::EmptyInput);
    }
    match c.op.as_str() {
        "precedes" | "strictPrecedes" | "disjoint" | "equal" | "subset" => return relation(c),
        "inf" | "sup" | "wid" | "mag" => return number_of(c),
        _ => {}
    }
    // the integer exponent of pown, the last argument
    let (ivs, n): (Vec<&Val>, Option<i32>) = if c.op == "pown" {
        let Some(Val::Num(e)) = args.last() else {
            return Err("pown needs an integer exponent".into());
        };
        let n = e.to_integer().and_then(|i| i.to_i32());
        (args[..args.len() - 1].iter().collect(), n)
    } else {
        (args.iter().collect(), None)
    };
    let inputs: Option<Vec<Interval>> = ivs.iter().map(|v| arg(v)).collect();
    let Some(inputs) = inputs else {
        // NaI inputs (the only other non-interval argument)
        return undefined_argument(c, &ivs, n);
    };
    if ivs
        .iter()
        .any(|v| matches!(v.dec(), Some(Dec::Trv) | Some(Dec::Ill)))
    {
        return undefined_argument(c, &ivs, n);
    }
    let Some((k, checked)) = kernel_op(&c.op, &inputs, n) else {
        return Ok(Outcome::NoCounterpart);
    };
    match &c.result {
        Val::Empty(_) | Val::Nai => {
            // no value exists: undefined, and nothing decided on it
            if checked.is_some() {
                return Err(format!("checked result {checked:?}, want undefined"));
            }
            if !is_entire(&k) {
                return Err(format!("total result {k:?}, want the whole line"));
            }
            decides_nothing(&k, &[])?;
            Ok(Outcome::Undecided)
        }
        Val::Iv(lo, hi, dec) => {
            let (klo, khi) = to_binary64(&k);
            if !(klo <= *lo && *hi <= khi) {
                return Err(format!(
                    "[{klo:e}, {khi:e}] (from {k:?}) does not contain [{}, {}]",
                    lo.to_f64(),
                    hi.to_f64()
                ));
            }
            let set_op = matches!(c.op.as_str(), "intersection" | "convexHull");
            if *dec == Some(Dec::Trv) && !set_op {
                // the operation left its domain on part of a defined input
                if checked.is_some() {
                    return Err(format!("`trv` result, but checked gives {checked:?}"));
                }
                decides_nothing(&k, &[lo, hi])?;
                return Ok(Outcome::Undecided);
            }
            if checked.is_none() {
                if dec.is_some() && !set_op {
                    // the standard calls the operation defined on all of the input
                    return Err(format!("decorated {dec:?}, but the kernel's is undefined"));
                }
                return Ok(Outcome::KernelUndefined);
            }
            if klo == *lo && khi == *hi {
                Ok(Outcome::Tight)
            } else if let Some(why) = loose(c, n, &k, lo, hi) {
                let _ = why;
                Ok(Outcome::Loose)
            } else {
                Err(format!("[{klo:e}, {khi:e}] is wider than the standard's"))
            }
        }
        other => Err(format!("unexpected result {other:?}")),
    }
}

/// A case with an input decorated `trv` or `ill` (or NaI): through the certificate
/// language, that argument undefined (`(ln 0)`), the others enclosed by [`term_for`];
/// every comparison on the result is `Unknown`.
fn undefined_argument(c: &Case, ivs: &[&Val], n: Option<i32>) -> Result<Outcome, String> {
    let terms: Vec<String> = ivs
        .iter()
        .map(|v| match v {
            Val::Iv(lo, hi, d) if !matches!(d, Some(Dec::Trv) | Some(Dec::Ill)) => term_for(lo, hi),
            _ => "(ln 0)".to_string(),
        })
        .collect();
    let Some(t) = formula_term(&c.op, &terms, n) else {
        return Ok(Outcome::NoCounterpart);
    };
    // the standard's result carries `trv` or `ill` here
    match c.result.dec() {
        Some(Dec::Trv) | Some(Dec::Ill) => {}
        d => return Err(format!("an undefined input gives {d:?}")),
    }
    for cmp in ["<", "<=", ">", ">=", "="] {
        for v in ["-1", "0", "1"] {
            let f = format!("({cmp} {t} {v})");
            match expr::check(&f, P) {
                Ok(Certainty::Unknown) => {}
                other => return Err(format!("{f}: {other:?}, want Unknown")),
            }
        }
    }
    Ok(Outcome::UndefinedArgument)
}

/// precedes, strictPrecedes, disjoint, equal, subset: the kernel's relations.
fn relation(c: &Case) -> Result<Outcome, String> {
    let (Some(a), Some(b)) = (arg(&c.args[0]), arg(&c.args[1])) else {
        // NaI: the standard's relations are false; the kernel's counterpart is an
        // undefined term, on which the comparison is undecided
        let cmp = match c.op.as_str() {
            "precedes" => "<=",
            "strictPrecedes" => "<",
            "disjoint" | "equal" => "=",
            _ => return Ok(Outcome::NoCounterpart),
        };
        let t = |v: &Val| match v {
            Val::Iv(lo, hi, _) => term_for(lo, hi),
            _ => "(ln 0)".to_string(),
        };
        let f = format!("({cmp} {} {})", t(&c.args[0]), t(&c.args[1]));
        return match expr::check(&f, P) {
            Ok(Certainty::Unknown) => Ok(Outcome::UndefinedArgument),
            other => Err(format!("{f}: {other:?}, want Unknown")),
        };
    };
    let Val::Bool(want) = c.result else {
        return Err("a boolean result".into());
    };
    let ok = match c.op.as_str() {
        // a.le(b) is True exactly when sup a ≤ inf b, and False only when a is after b
        "precedes" => {
            (a.le(&b) == Certainty::True) == want
                && (a.le(&b) != Certainty::False || !want)
                && (b.ge(&a) == a.le(&b))
        }
        "strictPrecedes" => {
            (a.lt(&b) == Certainty::True) == want
                && (a.lt(&b) != Certainty::False || !want)
                && (b.gt(&a) == a.lt(&b))
        }
        // equality is False exactly on disjoint enclosures
        "disjoint" => (a.eq_exact(&b) == Certainty::False) == want && a.overlaps(&b) != want,
        // True only for two equal points; False only when they cannot be equal
        "equal" => match a.eq_exact(&b) {
            Certainty::True => want && a.is_point(),
            Certainty::False => !want,
            Certainty::Unknown => !(want && a.is_point()),
        },
        "subset" => b.contains(&a) == want,
        _ => unreachable!(),
    };
    if ok {
        Ok(Outcome::Agrees)
    } else {
        Err(format!(
            "le {:?}, lt {:?}, eq {:?}, contains {}",
            a.le(&b),
            a.lt(&b),
            a.eq_exact(&b),
            b.contains(&a)
        ))
    }
}

/// inf, sup, wid (rounded up), mag: the kernel's accessors.
fn number_of(c: &Case) -> Result<Outcome, String> {
    let Some(a) = arg(&c.args[0]) else {
        // NaI: the kernel has no such value
        return Ok(Outcome::NoCounterpart);
    };
    let Val::Num(want) = &c.result else {
        return Err("a number".into());
    };
    let got = match c.op.as_str() {
        "inf" => a.lo().clone(),
        "sup" => a.hi().clone(),
        "wid" => a.width_up(),
        "mag" => a.mag(),
        _ => unreachable!(),
    };
    if got == *want {
        Ok(Outcome::Agrees)
    } else {
        Err(format!("{got} ≠ {want}"))
    }
}

/// Each committed file holds this many cases, of which these many run (a reader that
/// drops cases fails here). Recorded in the README.
const COUNTS: [(&str, usize, usize); 4] = [
    ("libieeep1788_elem.itl", 3818, 942),
    ("libieeep1788_set.itl", 20, 9),
    ("libieeep1788_bool.itl", 392, 141),
    ("libieeep1788_num.itl", 184, 80),
];

#[test]
fn itf1788_vectors_are_contained_and_trv_results_decide_nothing() {
    let mut failures = Vec::new();
    let mut by: BTreeMap<(String, Outcome), usize> = BTreeMap::new();
    let mut loose = Vec::new();
    let mut counts = Vec::new();
    for (file, text) in FILES {
        let all = cases(file, text);
        let mut ran = 0;
        for c in &all {
            match run(c) {
                Ok(o) => {
                    *by.entry((c.op.clone(), o)).or_default() += 1;
                    if o == Outcome::Loose {
                        loose.push(c.to_string());
                    }
                    if !matches!(o, Outcome::NoCounterpart | Outcome::EmptyInput) {
                        ran += 1;
                    }
                }
                Err(e) => failures.push(format!("{c}: {e}")),
            }
        }
        counts.push((file, all.len(), ran));
    }
    let mut summary = String::new();
    for ((op, o), n) in &by {
        summary += &format!("{op:>16} {o:?}: {n}\n");
    }
    eprintln!("{summary}");
    for l in &loose {
        eprintln!("loose: {l}");
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(counts, COUNTS, "{summary}");
}
