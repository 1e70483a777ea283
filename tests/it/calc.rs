//! `attncheck eval` and `attncheck prove` (issue #26, "Computing, not only checking"):
//! reference values, precision escalation, domain edges, hostile input, formula
//! certificates and their `verify` round trip, and properties of the enclosures.

use crate::util::{bin, output_text};
use attncheck::calc::{self, CalcError, EvalOptions, ProveOptions, Value};
use attncheck::kernel::{parse_rational, Certainty};
use proptest::prelude::*;
use rug::Rational;
use std::path::Path;

/// The issue's example: the minimal ALiBi window ⌈ln((e^Δ(1 − ε) + ε)/ε)/m⌉ for
/// m = 2⁻⁵, Δ = 2, ε = 10⁻³.
const ALIBI: &str = "(ceil (/ (ln (/ (+ (* (exp 2) (- 1 1/1000)) 1/1000) 1/1000)) 2^-5))";

/// Runs the binary: (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let o = bin().args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn q(s: &str) -> Rational {
    parse_rational(s).unwrap()
}

fn eval(term: &str) -> calc::Evaluation {
    calc::evaluate(term, &EvalOptions::default()).unwrap_or_else(|e| panic!("{term}: {e}"))
}

fn prove(formula: &str) -> calc::Proof {
    calc::prove(formula, &ProveOptions::default()).unwrap_or_else(|e| panic!("{formula}: {e}"))
}

// ───── reference values ─────

#[test]
fn the_alibi_window_of_the_issue_is_exactly_286() {
    // ln((e²·0.999 + 0.001)/0.001)·32 = 285.0204876872707257…, so the ceiling is 286
    let ev = eval(ALIBI);
    assert_eq!(ev.value, Value::Exact(Rational::from(286)));
    assert!(ev.settled);
    assert_eq!(ev.precision, 128);
    // the same number, bracketed by two proofs about the unrounded value
    let x = "(/ (ln (/ (+ (* (exp 2) (- 1 1/1000)) 1/1000) 1/1000)) 2^-5)";
    assert_eq!(prove(&format!("(< 285 {x})")).result, Certainty::True);
    assert_eq!(prove(&format!("(<= {x} 286)")).result, Certainty::True);
}

#[test]
fn eval_prints_the_exact_window_and_the_precision() {
    let (code, out, err) = run(&["eval", ALIBI]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("286  (exact)\n"), "{out}");
    assert!(out.contains("precision: 128 bits"), "{out}");
}

#[test]
fn e_to_the_minus_two_matches_the_papers_digits() {
    let ev = eval("(exp -2)");
    let Value::Enclosure { lo, hi } = &ev.value else {
        panic!("{:?}", ev.value)
    };
    // the papers print e^{-2} = 0.13533528323661269189…
    assert!(*lo > q("0.13533528323661269189"), "{lo}");
    assert!(*hi < q("0.13533528323661269190"), "{hi}");
    assert!(ev.settled && ev.precision == 128);
    let (code, out, _) = run(&["eval", "(exp -2)"]);
    assert_eq!(code, 0);
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with("0.13533528323661269189") && first.ends_with("(certified digits)"),
        "{out}"
    );
    assert!(out.contains("enclosure: [0.1353352832366126918"), "{out}");
}

#[test]
fn exact_rationals_print_exactly() {
    let ev = eval("(/ (sum k 1 10 (/ 1 k)) 3)");
    assert_eq!(ev.value, Value::Exact(q("7381/7560")));
    let (code, out, _) = run(&["eval", "(/ (sum k 1 10 (/ 1 k)) 3)"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("7381/7560 = 0.976322751322751322")
            && out.contains("(exact; the decimal is truncated)"),
        "{out}"
    );
    let (_, out, _) = run(&["eval", "2^-8"]);
    assert!(out.starts_with("1/256 = 0.00390625  (exact)\n"), "{out}");
    let (_, out, _) = run(&["eval", "-3/4"]);
    assert!(out.starts_with("-3/4 = -0.75  (exact)\n"), "{out}");
    let (code, out, _) = run(&["eval", "--json", "(* 1/3 (pow 2 100))"]);
    assert_eq!(code, 0);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["kind"], "exact");
    assert_eq!(j["value"], "1267650600228229401496703205376/3");
    assert_eq!(j["settled"], true);
}

#[test]
fn eval_json_gives_exact_endpoints() {
    let (code, out, _) = run(&["eval", "--json", "(sqrt 2)"]);
    assert_eq!(code, 0);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["kind"], "enclosure");
    let lo = q(j["lo"].as_str().unwrap());
    let hi = q(j["hi"].as_str().unwrap());
    assert!(lo < hi);
    assert!(Rational::from(&lo * &lo) < 2 && Rational::from(&hi * &hi) > 2);
    assert_eq!(j["precision"], 128);
    assert_eq!(j["exit_code"], 0);
}

// ───── escalation ─────

/// π to 62 decimals, truncated: below π by about 2.3·10⁻⁶³, which 128 bits (38 digits)
/// cannot see and 256 bits can.
const PI_62: &str = "3.14159265358979323846264338327950288419716939937510582097494459";

#[test]
fn a_formula_undecided_at_128_bits_is_decided_higher() {
    let f = format!("(< {PI_62} pi)");
    let at128 = calc::prove(
        &f,
        &ProveOptions {
            precision: 128,
            max_precision: 128,
        },
    )
    .unwrap();
    assert_eq!(at128.result, Certainty::Unknown);
    let p = prove(&f);
    assert_eq!(p.result, Certainty::True);
    assert_eq!(p.precision, 256);
    let (code, out, _) = run(&["prove", &f]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("proven") && out.contains("256 bits"), "{out}");
    // eval climbs until the relative width asked for: π − π₆₂ ≈ 2.3e-63 needs 512 bits
    let ev = eval(&format!("(- pi {PI_62})"));
    let Value::Enclosure { lo, hi } = &ev.value else {
        panic!("{:?}", ev.value)
    };
    assert!(*lo > q("2.3e-63") && *hi < q("2.31e-63"), "[{lo}, {hi}]");
    assert!(ev.precision > 256 && ev.settled, "{}", ev.precision);
}

#[test]
fn past_the_highest_precision_prove_exits_3_with_the_reason() {
    let f = format!("(< {PI_62} pi)");
    let (code, out, _) = run(&["prove", &f, "--max-precision", "128"]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("undecided")
            && out.contains("up to 128 bits")
            && out.contains("--max-precision"),
        "{out}"
    );
    // a point that intervals never pin down: undecided at every precision
    let (code, out, _) = run(&["prove", "(= (sin pi) 0)"]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("up to 4096 bits"), "{out}");
    // eval: not narrow enough at the top, the enclosure shown, exit 3
    let (code, out, _) = run(&["eval", &format!("(- pi {PI_62})"), "--max-precision", "256"]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("enclosure: [") && out.contains("note: not narrow enough"),
        "{out}"
    );
    let (code, out, _) = run(&["eval", "pi", "--digits", "100"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534211706"),
        "{out}"
    );
}

// ───── domain edges ─────

#[test]
fn undefined_terms_are_undefined_never_a_value() {
    for (term, says) in [
        (
            "(ln 0)",
            "ln needs a positive argument, and its argument is exactly 0",
        ),
        ("(/ 1 0)", "division by zero"),
        ("(sqrt -1)", "sqrt needs a non-negative argument"),
        ("(+ 2 (ln (- 1 1)))", "`(ln (- 1 1))` at 1:6"),
        ("(pow 0 -2)", "a negative power of 0"),
        ("(ln (- 0 (exp 1)))", "its argument is in [-2.7"),
        ("(sum k 0 3 (/ 1 k))", "where k = 0"),
        ("(exp (* 0 (ln -5)))", "`(ln -5)` at 1:11"),
    ] {
        let ev = eval(term);
        match &ev.value {
            Value::Undefined(why) => assert!(why.contains(says), "{term}: {why}"),
            v => panic!("{term}: {v:?}"),
        }
        assert!(ev.settled, "{term}: certainly undefined");
        let (code, out, err) = run(&["eval", term]);
        assert_eq!(code, 1, "{term}: {out}{err}");
        assert!(out.starts_with("undefined: "), "{term}: {out}");
        assert!(!out.contains("enclosure"), "{term}: {out}");
    }
}

#[test]
fn a_term_that_may_be_undefined_is_not_given_a_value() {
    // π − π is 0, but its enclosure straddles 0 at every precision: ln of it may be
    // undefined, and eval says so (exit 3) instead of printing a value
    let ev = eval("(ln (- pi pi))");
    match &ev.value {
        Value::Undefined(why) => assert!(why.contains("may be undefined"), "{why}"),
        v => panic!("{v:?}"),
    }
    assert!(!ev.settled && ev.precision == 4096);
    let (code, out, _) = run(&["eval", "(ln (- pi pi))"]);
    assert_eq!(code, 3, "{out}");
    assert!(out.starts_with("undefined: ") && out.contains("note: not shown to be defined"));
    // a comparison on an undefined term is undecided, and prove names the term
    let (code, out, _) = run(&["prove", "(< (ln 0) 1)"]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("`(ln 0)` at 1:4"), "{out}");
}

// ───── hostile input ─────

/// Exit 2, the message naming `at` (line:column) and containing `says`, a caret, and no
/// panic.
fn refused(args: &[&str], at: &str, says: &str) {
    let o = bin().args(args).output().unwrap();
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {text}");
    assert!(!text.contains("panicked"), "{args:?}: {text}");
    assert!(text.contains(&format!(" at {at}: ")), "{args:?}: {text}");
    assert!(text.contains(says), "{args:?}: {text}");
    assert!(text.contains('^'), "{args:?}: no caret: {text}");
}

#[test]
fn bad_terms_and_formulas_exit_2_with_the_position() {
    refused(&["eval", "(+ 1 2"], "1:1", "unclosed parenthesis");
    refused(&["eval", "(+ 1 2))"], "1:8", "trailing text");
    refused(&["eval", "(+ 1 (foo 2))"], "1:6", "unknown operator `foo`");
    refused(
        &["eval", "(+ 1\n   (foo 2))"],
        "2:4",
        "unknown operator `foo`",
    );
    refused(&["eval", "(* 2 x)"], "1:6", "`x`");
    refused(&["eval", ""], "1:1", "empty input");
    refused(&["eval", "   "], "1:1", "empty input");
    refused(
        &["prove", "(<= (+ 1 2) (bar 3))"],
        "1:13",
        "unknown operator `bar`",
    );
    refused(&["prove", "(<= 1 2"], "1:1", "unclosed parenthesis");
    refused(&["prove", "(<= y 2)"], "1:5", "`y`");
    refused(
        &[
            "prove",
            "(forall i 1 50000000 (forall j 1 50000000 (< i j)))",
        ],
        "1:1",
        "limit",
    );
    refused(&["eval", "(sum i 0 60000000 i)"], "1:1", "longer than");
    refused(&["eval", "(+ 1 1e2000000)"], "1:6", "");
    // a formula given to eval, a term given to prove
    refused(&["eval", "(< 1 2)"], "1:1", "attncheck prove");
    refused(&["prove", "(+ 1 2)"], "1:1", "attncheck eval");
    refused(&["prove", "5"], "1:1", "attncheck eval");
}

#[test]
fn deep_nesting_and_huge_literals_are_refused_without_a_crash() {
    // 10^5 levels through the library; through argv as deep as its limit allows
    let deep = format!("{}1{}", "(+ 1 ".repeat(100_000), ")".repeat(100_000));
    match calc::evaluate(&deep, &EvalOptions::default()) {
        Err(CalcError::Input { reason, .. }) => assert!(reason.contains("nested deeper")),
        r => panic!("{:?}", r.map(|e| e.value)),
    }
    match calc::prove(&deep, &ProveOptions::default()) {
        Err(CalcError::Input { reason, .. }) => assert!(reason.contains("nested deeper")),
        r => panic!("{:?}", r.map(|p| p.result)),
    }
    let deep = format!("{}1{}", "(".repeat(60_000), ")".repeat(60_000));
    for cmd in ["eval", "prove"] {
        let o = bin().args([cmd, &deep]).output().unwrap();
        let text = output_text(&o);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{cmd}: {}",
            &text[..200.min(text.len())]
        );
        assert!(text.contains("nested deeper than"), "{cmd}");
        assert!(
            text.len() < 2000,
            "the message quotes a window, not the whole line"
        );
    }
    // a literal over the size limit, through the library (too long for argv)
    let big = format!("(+ 1 1{})", "0".repeat(1_000_001));
    match calc::evaluate(&big, &EvalOptions::default()) {
        Err(CalcError::Input { column, .. }) => assert_eq!(column, 6),
        r => panic!("{:?}", r.map(|e| e.value)),
    }
}

#[test]
fn bad_precisions_are_usage_errors() {
    for args in [
        vec!["eval", "pi", "--precision", "8"],
        vec!["eval", "pi", "--max-precision", "100000"],
        vec!["eval", "pi", "--digits", "5001"],
        vec![
            "prove",
            "(< 3 pi)",
            "--precision",
            "4096",
            "--max-precision",
            "128",
        ],
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
    }
}

// ───── prove: false, certificates, verify, Coq ─────

#[test]
fn a_false_formula_exits_1_and_gets_no_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("f.cert.json");
    // e^{-512m} ≤ ε for m = 2^-8, ε = 10^-3: e^{-2} = 0.135… > 0.001
    let (code, out, err) = run(&[
        "prove",
        "(<= (exp (* -2^-8 512)) 1/1000)",
        "--cert",
        cert.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.starts_with("false: the formula is certifiably false"),
        "{out}"
    );
    assert!(
        err.contains("no certificate written") && err.contains("(not"),
        "{err}"
    );
    assert!(!cert.exists());
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "nothing left behind"
    );
}

/// A true formula with a sum, a forall and exact rationals, quick to decide.
const BASEL: &str = "(and (<= (sum i 1 40 (/ 1 (* i i))) 2) (forall k 1 50 (< (/ k (+ k 1)) 1)))";

fn prove_to(dir: &Path, formula: &str) -> std::path::PathBuf {
    let cert = dir.join("basel.cert.json");
    let (code, out, err) = run(&["prove", formula, "--cert", cert.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("proven: the formula holds"), "{out}");
    assert!(err.contains("wrote "), "{err}");
    cert
}

#[test]
fn a_certificate_of_prove_verifies_and_binds_its_formula() {
    let dir = tempfile::tempdir().unwrap();
    let cert = prove_to(dir.path(), BASEL);
    let c = cert.to_str().unwrap();
    // without --formula: the statement is the formula it carries, and verify prints it
    let (code, out, _) = run(&["verify", c]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("attncheck/formula: certified"), "{out}");
    assert!(
        out.contains(&format!("the formula the certificate carries, {BASEL}")),
        "{out}"
    );
    // with --formula (spacing aside): bound to that formula
    let spaced =
        "(and (<=  (sum i 1 40 (/ 1 (* i i)))  2)\n  (forall k 1 50 (< (/ k (+ k 1)) 1)) )";
    let (code, out, _) = run(&["verify", c, "--formula", spaced]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("the formula given with --formula"), "{out}");
    // another formula: rejected
    let (code, out, err) = run(&["verify", c, "--formula", &BASEL.replace(" 40 ", " 41 ")]);
    assert_eq!(code, 4, "{out}{err}");
    // a malformed --formula is bad input, with its position
    let (code, _, err) = run(&["verify", c, "--formula", "(<= 1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("1:1") && err.contains("unclosed"), "{err}");
    // --formula with --no-spec, --target on a formula certificate: usage errors
    assert_eq!(run(&["verify", c, "--formula", BASEL, "--no-spec"]).0, 2);
    assert_eq!(run(&["verify", c, "--target", "x.mtx"]).0, 2);
    // --formula on a claim's certificate
    let alibi = crate::util::root().join("reports/positional/alibi-window.cert.json");
    let (code, _, err) = run(&["verify", alibi.to_str().unwrap(), "--formula", BASEL]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("prove --cert"), "{err}");
    // JSON
    let (code, out, _) = run(&["verify", c, "--json"]);
    assert_eq!(code, 0);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["claim"], "attncheck/formula");
    assert_eq!(j["result"], "certified");
}

#[test]
fn a_tampered_formula_certificate_is_rejected_against_its_formula() {
    let dir = tempfile::tempdir().unwrap();
    let cert = prove_to(dir.path(), BASEL);
    let c = cert.to_str().unwrap();
    let text = std::fs::read_to_string(&cert).unwrap();
    // the bound lowered to 3/2 (the sum is 1.62…: false)
    let tampered = text.replace("(* i i))) 2)", "(* i i))) 3/2)");
    assert_ne!(tampered, text);
    std::fs::write(&cert, &tampered).unwrap();
    let (code, out, err) = run(&["verify", c, "--formula", BASEL]);
    assert_eq!(code, 4, "{out}{err}");
    assert!(err.contains("rejected"), "{err}");
    // without --formula it checks the formula it carries, and says which: false, exit 1
    let (code, out, _) = run(&["verify", c]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("3/2)"), "{out}");
    // an obligation turned into a refutation: not the statement "the formula holds"
    let flipped = text.replace("\"expect\": \"holds\"", "\"expect\": \"fails\"");
    assert_ne!(flipped, text);
    std::fs::write(&cert, &flipped).unwrap();
    assert_eq!(run(&["verify", c]).0, 4);
    // a precision off prove's ladder
    let off = text.replace("\"precision\": 128", "\"precision\": 200");
    assert_ne!(off, text);
    std::fs::write(&cert, &off).unwrap();
    assert_eq!(run(&["verify", c, "--formula", BASEL]).0, 4);
}

#[test]
fn a_certificate_write_is_atomic_and_needs_a_proof() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("sub").join("u.cert.json");
    let (code, _, err) = run(&[
        "prove",
        &format!("(< pi {PI_62})"),
        "--max-precision",
        "128",
        "--cert",
        cert.to_str().unwrap(),
    ]);
    assert_eq!(code, 3);
    assert!(err.contains("no certificate written"), "{err}");
    assert!(!cert.exists());
}

#[test]
fn prove_coq_re_proves_a_small_true_formula() {
    if !crate::coq::have_coq("prove_coq_re_proves_a_small_true_formula") {
        return;
    }
    let (code, out, err) = run(&["prove", "(<= (exp -2) 1/7)", "--coq"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Coq: proves it too"), "{out}");
    let (code, out, err) = run(&["prove", "(<= (exp -2) 1/8)", "--coq", "--json"]);
    assert_eq!(code, 1, "{out}{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["result"], "false");
    assert_eq!(
        j["coq"]["verdict"], "proven",
        "Coq proves the negation: {out}"
    );
}

#[test]
fn prove_json_names_the_result_and_the_precision() {
    let (code, out, _) = run(&["prove", "--json", "(<= (exp -2) 1/7)"]);
    assert_eq!(code, 0);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["result"], "true");
    assert_eq!(j["precision"], 128);
    assert_eq!(j["formula"], "(<= (exp -2) 1/7)");
    assert_eq!(j["exit_code"], 0);
}

#[test]
fn help_teaches_with_examples() {
    for cmd in ["eval", "prove"] {
        let (code, out, _) = run(&[cmd, "--help"]);
        assert_eq!(code, 0);
        assert!(
            out.contains("Examples:") && out.contains("Exit codes:"),
            "{out}"
        );
    }
    let (_, out, _) = run(&["eval", "--help"]);
    assert!(out.contains("ALiBi window"), "{out}");
}

// ───── properties ─────

/// A random rational arithmetic term: its text and its exact value (`None` when a
/// division by zero makes it undefined). Leaves are literals or (sqrt q²) = |q| (an
/// interval), so both the exact and the interval paths are exercised.
fn arith() -> impl Strategy<Value = (String, Option<Rational>)> {
    let leaf = (-12i32..=12, 1i32..=7, any::<bool>()).prop_map(|(n, d, root)| {
        let v = Rational::from((n, d));
        let text = if root {
            let sq = Rational::from(&v * &v);
            if v < 0 {
                format!("(neg (sqrt {sq}))")
            } else {
                format!("(sqrt {sq})")
            }
        } else {
            v.to_string()
        };
        (text, Some(v))
    });
    leaf.prop_recursive(4, 24, 2, |inner| {
        (inner.clone(), inner, 0..4usize).prop_map(|((a, x), (b, y), op)| {
            let ops = ["+", "-", "*", "/"];
            let v = match (x, y) {
                (Some(x), Some(y)) => match op {
                    0 => Some(x + y),
                    1 => Some(x - y),
                    2 => Some(x * y),
                    _ if y == 0 => None,
                    _ => Some(x / y),
                },
                _ => None,
            };
            (format!("({} {a} {b})", ops[op]), v)
        })
    })
}

/// A random term with transcendental functions, defined everywhere.
fn transcendental() -> impl Strategy<Value = String> {
    let leaf = (-9i32..=9, 1i32..=5).prop_map(|(n, d)| Rational::from((n, d)).to_string());
    leaf.prop_recursive(4, 16, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|a| format!("(exp (/ {a} 4))")),
            inner.clone().prop_map(|a| format!("(sin {a})")),
            inner.clone().prop_map(|a| format!("(cos {a})")),
            inner.clone().prop_map(|a| format!("(ln (+ 1 (abs {a})))")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("(+ {a} (* 1/3 {b}))")),
        ]
    })
}

fn contains(v: &Value, x: &Rational) -> bool {
    match v {
        Value::Exact(q) => q == x,
        Value::Enclosure { lo, hi } => lo <= x && x <= hi,
        _ => false,
    }
}

fn overlap(a: &Value, b: &Value) -> bool {
    let ends = |v: &Value| match v {
        Value::Exact(q) => (q.clone(), q.clone()),
        Value::Enclosure { lo, hi } => (lo.clone(), hi.clone()),
        v => panic!("{v:?}"),
    };
    let ((a0, a1), (b0, b1)) = (ends(a), ends(b));
    a0 <= b1 && b0 <= a1
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// The enclosure (or exact value) contains the exact value; an undefined term
    /// (division by zero) is never given a value.
    #[test]
    fn evaluate_encloses_the_exact_value((text, exact) in arith()) {
        let ev = calc::evaluate(&text, &EvalOptions { precision: 64, max_precision: 256, rel_width: None })
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        match exact {
            Some(x) => prop_assert!(contains(&ev.value, &x), "{text} = {x}: {:?}", ev.value),
            None => prop_assert!(matches!(ev.value, Value::Undefined(_)), "{text}: {:?}", ev.value),
        }
    }

    /// prove never decides a comparison of rational terms against its exact truth: a
    /// decision is the exact one, an undefined side leaves it undecided.
    #[test]
    fn prove_agrees_with_exact_comparison((a, x) in arith(), (b, y) in arith()) {
        let p = calc::prove(&format!("(< {a} {b})"), &ProveOptions { precision: 64, max_precision: 512 })
            .unwrap_or_else(|e| panic!("{a} {b}: {e}"));
        match (x, y) {
            (Some(x), Some(y)) => {
                let truth = if x < y { Certainty::True } else { Certainty::False };
                prop_assert!(p.result == truth || (x == y && p.result == Certainty::Unknown),
                    "(< {a} {b}): {x} < {y} is {truth:?}, prove says {:?}", p.result);
            }
            _ => prop_assert_eq!(p.result, Certainty::Unknown),
        }
    }

    /// Enclosures at p and 2p bits overlap (both contain the true value).
    #[test]
    fn enclosures_at_p_and_2p_overlap(text in transcendental(), p in 24u32..=300) {
        let at = |bits: u32| calc::evaluate(&text, &EvalOptions { precision: bits, max_precision: bits, rel_width: None })
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        let (a, b) = (at(p), at(2 * p));
        prop_assert!(overlap(&a.value, &b.value), "{text}: {:?} at {p}, {:?} at {}", a.value, b.value, 2 * p);
        prop_assert_eq!((a.precision, b.precision), (p, 2 * p));
    }
}

#[test]
fn canonical_text_ignores_spacing_only() {
    let a = calc::canonical_formula("(<=  (exp -2)\n 1/7 )").unwrap();
    assert_eq!(a, "(<= (exp -2) 1/7)");
    assert_ne!(a, calc::canonical_formula("(<= (exp -2) 2/14)").unwrap());
    // positions are 1-based line:column, with a caret under the column
    match calc::prove(
        "(and (< 1 2)\n     (< 1 (qux 3)))",
        &ProveOptions::default(),
    ) {
        Err(CalcError::Input {
            line,
            column,
            excerpt,
            ..
        }) => {
            assert_eq!((line, column), (2, 11));
            assert_eq!(excerpt, "       (< 1 (qux 3)))\n            ^");
        }
        r => panic!("{:?}", r.map(|p| p.result)),
    }
}

// ───── building blocks through prove, verify --formula and eval (issue #38) ─────

/// Bug (issue #38): `prove "(< (alibi-slope 1 8) 1)"` exited 2 ("`#h.0`: names starting
/// with `#` are reserved"): the statement carried the block's expansion, which a
/// written formula may not contain. It carries the formula as written now.
#[test]
fn prove_of_a_building_block_no_longer_refuses_its_own_expansion_names() {
    for f in [
        "(< (alibi-slope 1 8) 1)",
        "(<= (alibi-tail 2^-5 2 400) 1/1000)",
        "(= (alibi-window 2^-5 2 1/1000) 286)",
        "(< (union-bound-dim 100 1/2 1/100) 112)", // ⌈8·ln(10⁶)⌉ = 111
    ] {
        let p = prove(f);
        assert_eq!(p.result, Certainty::True, "{f}: {:?}", p.reason);
        assert_eq!(
            p.formula, f,
            "the certificate carries the formula as written"
        );
        assert!(!p.certificate.obligations[0].formula.contains('#'));
    }
    let (code, out, err) = run(&["prove", "(< (alibi-slope 1 8) 1)"]);
    assert_eq!(code, 0, "{out}{err}");
}

/// Bug (issue #38): `verify --formula "(< (alibi-slope 1 8) 1)" CERT` exited 4 where
/// plain `verify` exited 0 (the formula was rebuilt from its expansion).
#[test]
fn verify_formula_binds_a_building_block_certificate_as_plain_verify_does() {
    let dir = tempfile::tempdir().unwrap();
    let f = "(< (alibi-slope 1 8) 1)";
    let cert = dir.path().join("slope.cert.json");
    let (code, out, err) = run(&["prove", f, "--cert", cert.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let c = cert.to_str().unwrap();
    assert_eq!(run(&["verify", c]).0, 0);
    let (code, out, err) = run(&["verify", c, "--formula", "(<  (alibi-slope 1 8)\n 1)"]);
    assert_eq!(code, 0, "{out}{err}");
    // another block's formula is still another formula
    let (code, out, err) = run(&["verify", c, "--formula", "(< (alibi-slope 2 8) 1)"]);
    assert_eq!(code, 4, "{out}{err}");
}

/// Bug (issue #38): `eval "(alibi-slope 0 8)"` exited 3 ("could not be shown to accept")
/// where the term is undefined (exit 1): the locator did not look under the `let`s of a
/// block's expansion, where its domain guard sits.
#[test]
fn eval_of_a_building_block_outside_its_domain_exits_1_naming_the_guard() {
    for t in [
        "(alibi-slope 0 8)",
        "(alibi-slope 9 8)",
        "(alibi-slope 1/2 8)",
        "(alibi-tail 0 2 5)",
        "(alibi-tail 1 -1 5)",
        "(alibi-window 1 2 1)",
        "(union-bound-dim 0 1/2 1/100)",
    ] {
        let (code, out, err) = run(&["eval", t]);
        assert_eq!(code, 1, "{t}: {out}{err}");
        assert!(out.starts_with("undefined: "), "{t}: {out}");
        assert!(
            out.contains(" is undefined: "),
            "{t}: names the guard: {out}"
        );
        assert!(!out.contains("where #"), "{t}: no expansion names: {out}");
    }
    // inside the domain: a value
    let (code, out, _) = run(&["eval", "(alibi-slope 8 8)"]);
    assert_eq!(code, 0, "{out}");
}
