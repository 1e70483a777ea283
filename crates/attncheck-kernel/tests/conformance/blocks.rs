//! `let` and the papers' building blocks as terms of the certificate language (issue
//! #26): reference values from the papers' tables, `let` against the written-out term,
//! scoping, capture, limits, and the blocks at their domain edges. (Their translation
//! for Coq is tested in the application's tests/it/blocks.rs.)

use attncheck_kernel::expr::{self, Data};
use attncheck_kernel::Certainty;
use proptest::prelude::*;
use std::time::Instant;

fn decide(f: &str) -> Certainty {
    expr::check(f, 128).unwrap_or_else(|e| panic!("{f}: {e}"))
}

fn value(t: &str) -> (f64, f64) {
    let i = expr::eval(t, 128).unwrap_or_else(|e| panic!("{t}: {e}"));
    (i.lo_f64(), i.hi_f64())
}

// ------------------------------------------------------------ reference values

/// positional.md §3: the minimal windows w_ε (ε = 1/100, Δ = 0 and 4) and the tails
/// T^∞(w_ε), T^∞(w_ε − 1) at Δ = 0, for m = 2^−1, 2^−4, 2^−6, 2^−7, 2^−8.
const WINDOWS: [(i32, i64, i64, f64, f64); 5] = [
    (1, 10, 18, 0.0067379, 0.011109),
    (4, 74, 138, 0.0098037, 0.010436),
    (6, 295, 551, 0.009958, 0.010115),
    (7, 590, 1101, 0.009958, 0.010036),
    (8, 1179, 2201, 0.009997, 0.010036),
];

#[test]
fn alibi_window_and_tail_reproduce_the_papers_table() {
    for (k, w0, w4, t_at, t_before) in WINDOWS {
        let m = format!("2^-{k}");
        assert_eq!(
            decide(&format!("(= (alibi-window {m} 0 1/100) {w0})")),
            Certainty::True,
            "m = {m}"
        );
        assert_eq!(
            decide(&format!("(= (alibi-window {m} 4 1/100) {w4})")),
            Certainty::True,
            "m = {m}, Δ = 4"
        );
        // minimality, certified: T^∞(w_ε) ≤ ε < T^∞(w_ε − 1), for both Δ
        for (d, w) in [(0, w0), (4, w4)] {
            let f = format!(
                "(let w (alibi-window {m} {d} 1/100) (and (<= (alibi-tail {m} {d} w) 1/100) \
                 (< 1/100 (alibi-tail {m} {d} (- w 1)))))"
            );
            assert_eq!(decide(&f), Certainty::True, "{f}");
            assert_eq!(
                decide(&format!("(<= (alibi-tail {m} {d} {}) 1/100)", w - 1)),
                Certainty::False
            );
        }
        // the table's digits (5 significant)
        for (w, want) in [(w0, t_at), (w0 - 1, t_before)] {
            let (lo, hi) = value(&format!("(alibi-tail {m} 0 {w})"));
            assert!(hi - lo < 1e-15, "m = {m}, w = {w}: [{lo}, {hi}]");
            assert!(
                ((lo - want) / want).abs() < 5e-5,
                "m = {m}, w = {w}: {lo} vs {want}"
            );
        }
    }
}

/// The blocks mean their documented expansion: the same values as the formulas
/// written out by hand (positional.md's T^∞ and w_ε, sparse.md's d_ub).
#[test]
fn blocks_equal_their_formulas_written_out() {
    for (block, plain) in WRITTEN_OUT {
        let (a, b) = (value(block), value(plain));
        assert!(a.0 <= b.1 && b.0 <= a.1, "{block}: {a:?} vs {plain}: {b:?}");
        assert!(a.1 - a.0 <= 1e-12 * a.1.abs().max(1.0), "{block}: {a:?}");
        // at 128 bits: within 10⁻³⁰ of each other (or the same integer)
        assert_eq!(
            decide(&format!("(< (abs (- {block} {plain})) 10^-30)")),
            Certainty::True,
            "{block}"
        );
    }
    // the example: the window for m = 2^−5, Δ = 2, ε = 10⁻³
    assert_eq!(
        expr::eval_exact("(alibi-window 2^-5 2 1/1000)", 128, &Data::new()).unwrap(),
        Some(286.into())
    );
}

#[test]
fn alibi_slopes_are_two_to_the_minus_8h_over_h() {
    // positional.md §3: −log₂ m by head, H = 8: 1..8; H = 16: 0.5, 1, …, 8; H = 12
    // (paper rule): 2/3, 4/3, …, 8
    for (heads, step) in [(8i64, 1.0f64), (16, 0.5), (12, 2.0 / 3.0)] {
        for h in 1..=heads {
            let (lo, hi) = value(&format!("(/ (ln (alibi-slope {h} {heads})) (ln 2))"));
            let want = -(h as f64) * step;
            assert!(
                lo <= want + 1e-12 && want - 1e-12 <= hi && hi - lo < 1e-12,
                "h = {h}, H = {heads}: [{lo}, {hi}] vs {want}"
            );
        }
    }
    // exactly: 2^−1 is inside the enclosure of m_1 for H = 8, and m_h decreases in h
    assert_eq!(
        decide("(< (abs (- (alibi-slope 1 8) 1/2)) 10^-35)"),
        Certainty::True
    );
    assert_eq!(
        decide("(forall h 1 11 (> (alibi-slope h 12) (alibi-slope (+ h 1) 12)))"),
        Certainty::True
    );
}

#[test]
fn union_bound_dimension_reproduces_sparse_table() {
    // sparse.md §5: d_ub = ⌈(2/t²) ln(n²/δ)⌉, δ = 0.01
    for (n, q, r) in [
        (16, 325, 1300),
        (256, 503, 2010),
        (4096, 680, 2719),
        (65536, 858, 3429),
    ] {
        for (t, d) in [("1/4", q), ("1/8", r)] {
            let f = format!("(= (union-bound-dim {n} {t} 0.01) {d})");
            assert_eq!(decide(&f), Certainty::True, "{f}");
        }
    }
    // sparse/failure-probability's setting: n = 256, t = 1/4, d = 406 is below d_ub
    assert_eq!(
        decide("(< 406 (union-bound-dim 256 1/4 1/100))"),
        Certainty::True
    );
}

// ------------------------------------------------------------ let

/// A random term over the variable `x` (and `y`, bound by an enclosing `forall`), of
/// the rational and elementary operators, as text.
fn gen_term(seed: &mut u64, depth: u32, vars: &[&str]) -> String {
    let mut next = || {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    };
    let r = next();
    if depth == 0 || r % 7 == 0 {
        return match next() % 4 {
            0 | 1 if !vars.is_empty() => vars[(next() % vars.len() as u64) as usize].to_string(),
            2 => format!("{}/{}", (next() % 19) as i64 - 9, 1 + next() % 5),
            _ => format!("{}", (next() % 7) as i64 - 3),
        };
    }
    let sub = |s: &mut u64| gen_term(s, depth - 1, vars);
    match r % 13 {
        0 => format!("(+ {} {})", sub(seed), sub(seed)),
        1 => format!("(* {} {})", sub(seed), sub(seed)),
        2 => format!("(- {} {})", sub(seed), sub(seed)),
        3 => format!("(/ {} {})", sub(seed), sub(seed)),
        4 => format!("(neg {})", sub(seed)),
        5 => format!("(abs {})", sub(seed)),
        6 => format!("(min {} {})", sub(seed), sub(seed)),
        7 => format!("(max {} {})", sub(seed), sub(seed)),
        8 => format!("(exp (/ {} 8))", sub(seed)),
        9 => format!("(ln {})", sub(seed)),
        10 => format!("(sqrt {})", sub(seed)),
        11 => format!("(pow {} {})", sub(seed), (r >> 8) % 5),
        _ => format!("(floor {})", sub(seed)),
    }
}

/// `body` with every atom `x` replaced by `(t)`, textually (the test's bodies bind no
/// `x` of their own).
fn substitute(body: &str, x: &str, t: &str) -> String {
    let mut out = String::new();
    let mut atom = String::new();
    let flush = |atom: &mut String, out: &mut String| {
        if atom == x {
            out.push_str(t);
        } else {
            out.push_str(atom);
        }
        atom.clear();
    };
    for c in body.chars() {
        if c == '(' || c == ')' || c.is_whitespace() {
            flush(&mut atom, &mut out);
            out.push(c);
        } else {
            atom.push(c);
        }
    }
    flush(&mut atom, &mut out);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// `(let x t body)` evaluates to exactly what `body` with t written out in place
    /// of x does: the same exact rational, the same enclosure (the same operations on
    /// the same values), undefined where it is; and inside a `forall` over y.
    #[test]
    fn let_equals_the_written_out_term(seed in any::<u64>()) {
        let mut s = seed | 1;
        let t = gen_term(&mut s, 3, &["y"]);
        let body = gen_term(&mut s, 3, &["x", "y"]);
        let with_let = format!("(let x {t} {body})");
        let plain = substitute(&body, "x", &t);
        for y in [-2i64, 0, 3] {
            let bind = |e: &str| substitute(e, "y", &y.to_string());
            let a = expr::eval(&bind(&with_let), 128);
            let b = expr::eval(&bind(&plain), 128);
            match (a, b) {
                (Ok(a), Ok(b)) => prop_assert_eq!(&a, &b, "{} vs {}", with_let, plain),
                (a, b) => prop_assert!(a.is_err() && b.is_err(), "{}: {:?} vs {:?}", with_let, a, b),
            }
            let ea = expr::eval_exact(&bind(&with_let), 128, &Data::new()).ok().flatten();
            let eb = expr::eval_exact(&bind(&plain), 128, &Data::new()).ok().flatten();
            prop_assert_eq!(ea, eb);
        }
        // as a formula under a forall over y: the same decision
        let fa = format!("(forall y -2 3 (< {with_let} 5))");
        let fb = format!("(forall y -2 3 (< {plain} 5))");
        prop_assert_eq!(expr::check(&fa, 128).ok(), expr::check(&fb, 128).ok(), "{}", fa);
    }
}

#[test]
fn let_shadows_and_is_shadowed_like_forall_and_sum() {
    for f in [
        "(let x 1 (let x (+ x 1) (= x 2)))",
        "(let x 5 (= (sum x 1 3 x) 6))",
        "(forall x 1 3 (let x 7 (= x 7)))",
        "(forall x 1 3 (let y x (forall x 10 12 (< y x))))",
        "(let x 2 (and (= x 2) (let x 3 (= x 3)) (= x 2)))",
        "(= (let x 1/3 (+ x x x)) 1)",
        // a formula as the body, an enclosure as the value
        "(let e (exp 1) (and (< 2.718 e) (< e 2.719)))",
        // undefined where its term is: comparisons on it are undecided
        "(not (let u (ln 0) (< 2 3)))",
    ] {
        let want = if f.starts_with("(not") {
            Certainty::False
        } else {
            Certainty::True
        };
        assert_eq!(decide(f), want, "{f}");
    }
    assert_eq!(decide("(let u (ln 0) (< u 3))"), Certainty::Unknown);
}

/// The brief's capture case: the y of x's term is the forall's y, not the sum's.
#[test]
fn let_does_not_capture() {
    assert_eq!(
        decide("(forall y 1 5 (= (let x (+ y 1) (sum y 0 3 x)) (* 4 (+ y 1))))"),
        Certainty::True
    );
    // and a block's argument named like the block's own names is not captured
    assert_eq!(
        decide("(forall m 1 3 (let d 2 (= (alibi-window (/ 1 (* 32 m)) d 1/1000) (alibi-window (/ 1 (* 32 m)) 2 1/1000))))"),
        Certainty::True
    );
}

#[test]
fn let_errors_name_the_offset() {
    // the variable outside its scope
    let f = "(< (+ (let x 1 x) x) 3)";
    let e = expr::check(f, 128).unwrap_err();
    assert_eq!(e.offset, f.rfind(" x)").unwrap() + 1, "{e}");
    assert!(e.reason.contains("`x` is neither"), "{e}");
    for (f, needle) in [
        ("(let pi 1 (< pi 2))", "`let` binds a variable name"),
        ("(let exp 1 (< exp 2))", "operator's name"),
        ("(let alibi-tail 1 (< alibi-tail 2))", "operator's name"),
        ("(let let 1 (< let 2))", "operator's name"),
        ("(let 3 1 (< 3 2))", "`let` binds a variable name"),
        ("(let (x) 1 (< 1 2))", "`let` binds a variable name"),
        ("(let x 1 (< x 2) 3)", "`let` takes"),
        ("(let x 1)", "`let` takes"),
        (
            "(< (let x 1) 2)",
            "`let` takes a variable, a term and a formula",
        ),
        ("(let #x 1 (< #x 2))", "reserved"),
        ("(< #0 2)", "reserved"),
    ] {
        let e = expr::check(f, 128).unwrap_err();
        assert!(e.to_string().contains(needle), "{f}: {e}");
    }
    let f = "(< 1 (let exp 1 exp))";
    assert_eq!(
        expr::check(f, 128).unwrap_err().offset,
        f.find("exp").unwrap()
    );
}

/// A let chain that doubles its term at each step: evaluated once per step, so fast;
/// its cost counts each let-bound term once. (Its Coq translation, which writes the
/// lets out, is tested in the application's tests/it/blocks.rs.)
#[test]
fn a_doubling_let_chain_of_depth_60_is_fast() {
    let mut f = String::from("(= x60 1152921504606846976)");
    for k in (1..=60).rev() {
        f = format!("(let x{k} (+ x{} x{}) {f})", k - 1, k - 1);
    }
    let f = format!("(let x0 1 {f})");
    let start = Instant::now();
    assert_eq!(decide(&f), Certainty::True);
    let e = expr::parse(&f).unwrap();
    assert!(expr::work(&e) < 1000, "{}", expr::work(&e));
    assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
}

/// The work budget counts a let-bound term once per evaluation of its let.
#[test]
fn the_budget_counts_a_let_bound_term_once_per_evaluation() {
    let sum = "(sum i 1 100000 (exp (/ i 100000)))";
    let once = expr::work(&expr::parse(&format!("(< {sum} 0)")).unwrap());
    let shared = expr::work(&expr::parse(&format!("(let s {sum} (< (+ s s s s) 0))")).unwrap());
    assert!(shared < once + 20, "{shared} vs {once}");
    let inside =
        expr::work(&expr::parse(&format!("(forall r 1 100 (let s {sum} (< s r)))")).unwrap());
    assert!(inside > 100 * once - 1000, "{inside} vs {once}");
    // and over the budget it is an error before anything runs
    let e = expr::check(&format!("(forall r 1 20000 (let s {sum} (< s r)))"), 128).unwrap_err();
    assert!(e.reason.contains("the limit is"), "{e}");
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    // lets nested 300 deep
    let mut f = String::from("(< x 1)");
    for _ in 0..300 {
        f = format!("(let x 0 {f})");
    }
    assert!(expr::check(&f, 128)
        .unwrap_err()
        .reason
        .contains("nested deeper"));
    // a block whose expansion passes the limit though its text does not
    let mut t = String::from("(alibi-window 1/2 0 1/100)");
    for _ in 0..195 {
        t = format!("(neg {t})");
    }
    let f = format!("(< {t} 0)");
    let e = expr::check(&f, 128).unwrap_err();
    assert!(
        e.reason.contains("once its building blocks are expanded"),
        "{e}"
    );
    // blocks nested in each other's arguments, 60 deep: the text's limit
    let mut t = String::from("1");
    for _ in 0..60 {
        t = format!("(alibi-tail 1 0 (alibi-window 1 0 (/ 1 (+ 2 {t}))))");
    }
    assert!(expr::check(&format!("(< {t} 1)"), 128).is_err());
}

// ------------------------------------------------------------ domain edges

/// Outside its domain (or with an argument whose enclosure is not inside it) a block
/// is undefined — every comparison on it undecided — or an error; never a value.
#[test]
fn blocks_at_their_domain_edges_are_undefined_never_a_value() {
    let undefined = [
        // h, H integers with 1 ≤ h ≤ H
        "(alibi-slope 0 8)",
        "(alibi-slope 9 8)",
        "(alibi-slope -1 8)",
        "(alibi-slope 1/2 8)",
        "(alibi-slope 1 15/2)",
        "(alibi-slope 0 0)",
        "(alibi-slope 1 0)",
        "(alibi-slope pi 8)",
        // m > 0, Δ ≥ 0, an integer w ≥ 0
        "(alibi-tail 0 0 10)",
        "(alibi-tail -1/2 0 10)",
        "(alibi-tail 1/2 -1 10)",
        "(alibi-tail 1/2 0 -1)",
        "(alibi-tail 1/2 0 1/2)",
        "(alibi-tail (- (exp 1) (exp 1)) 0 10)",
        "(alibi-tail (ln 0) 0 10)",
        // m > 0, Δ ≥ 0, 0 < ε < 1
        "(alibi-window 0 0 1/100)",
        "(alibi-window -1 0 1/100)",
        "(alibi-window 1/2 -1 1/100)",
        "(alibi-window 1/2 0 0)",
        "(alibi-window 1/2 0 1)",
        "(alibi-window 1/2 0 -1/100)",
        "(alibi-window 1/2 0 2)",
        // an integer n ≥ 1, t > 0, 0 < δ < 1
        "(union-bound-dim 0 1/4 1/100)",
        "(union-bound-dim 3/2 1/4 1/100)",
        "(union-bound-dim 16 0 1/100)",
        "(union-bound-dim 16 -1/4 1/100)",
        "(union-bound-dim 16 1/4 0)",
        "(union-bound-dim 16 1/4 1)",
    ];
    for t in undefined {
        for f in [
            format!("(< {t} 10^9)"),
            format!("(> {t} -10^9)"),
            format!("(= {t} {t})"),
        ] {
            assert_eq!(decide(&f), Certainty::Unknown, "{f}");
        }
    }
    // at the edges inside the domain: values
    for f in [
        "(< 0 (alibi-slope 8 8))",
        "(< (abs (- (alibi-slope 1 1) 1/256)) 10^-30)",
        "(< (alibi-tail 1/2 0 0) 1.0001)",
        "(< 0 (alibi-tail 1/2 0 0))",
        "(= (union-bound-dim 1 1 1/2) 2)",
    ] {
        assert_eq!(decide(f), Certainty::True, "{f}");
    }
    // wrong arities and kinds are errors, never a panic
    for f in [
        "(< (alibi-slope 1) 1)",
        "(< (alibi-tail 1 2) 1)",
        "(< (alibi-window 1 2 3 4) 1)",
        "(< (union-bound-dim) 1)",
        "(< (alibi-window 1 0 S) 1)",
        "(alibi-slope 1 8)",
    ] {
        assert!(expr::check(f, 128).is_err(), "{f}");
    }
}

/// A call of each block inside its domain, and its formula written out by hand.
const WRITTEN_OUT: [(&str, &str); 4] = [
    (
        "(alibi-tail 1/32 2 100)",
        "(/ (* (exp 2) (exp (* -1/32 100))) (+ (- 1 (exp (* -1/32 100))) (* (exp 2) (exp (* -1/32 100)))))",
    ),
    ("(alibi-slope 3 12)", "(exp (neg (* 2 (ln 2))))"),
    (
        "(alibi-window 1/32 2 1/1000)",
        "(ceil (* 32 (ln (/ (+ (* (exp 2) (- 1 1/1000)) 1/1000) 1/1000))))",
    ),
    (
        "(union-bound-dim 1024 1/8 1/100)",
        "(ceil (* 128 (ln (/ (* 1024 1024) 1/100))))",
    ),
];

/// Formulas with several expansions: blocks side by side (every pair, a block beside
/// itself), nested in each other's arguments, after padding that moves their offsets.
fn several_blocks() -> Vec<String> {
    let mut out = Vec::new();
    for (a, _) in WRITTEN_OUT {
        for (b, _) in WRITTEN_OUT {
            out.push(format!("(< (+ {a} {b}) 10^9)"));
        }
    }
    for pad in 0..24 {
        let sp = " ".repeat(pad);
        out.push(format!(
            "(<{sp}(+ 7 (alibi-slope 3 12) 5 (union-bound-dim 16 1/4 1/100) 11 13 17 19 23 29 31 37) 10^9)"
        ));
        out.push(format!(
            "(<{sp}(alibi-tail (alibi-slope 1 8) (alibi-window 1/2 (alibi-slope 2 8) 1/100) (union-bound-dim 4 1 1/2)) 3)"
        ));
    }
    out
}

/// Every literal atom of `e` (a number as written: a digit first) with its offset.
fn literals(e: &expr::Sexp, out: &mut Vec<(String, usize)>) {
    match e {
        expr::Sexp::Atom(a, o) => {
            if a.starts_with(|c: char| c.is_ascii_digit()) {
                out.push((a.clone(), *o))
            }
        }
        expr::Sexp::List(items, _) => items.iter().for_each(|x| literals(x, out)),
    }
}

/// The evaluator reads every literal once, into a table by offset: an expansion's
/// literals must never share an offset with another literal of different text (its
/// own, another expansion's, or one the user wrote), or one of them would be read as
/// the other.
#[test]
fn no_two_literals_of_different_text_share_an_offset_after_expansion() {
    for f in several_blocks() {
        let e = expr::parse(&f).unwrap_or_else(|e| panic!("{f}: {e}"));
        let mut lits = Vec::new();
        literals(&e, &mut lits);
        let mut by_offset = std::collections::BTreeMap::new();
        for (x, o) in &lits {
            if let Some(y) = by_offset.insert(*o, x) {
                assert_eq!(y, x, "{f}: `{y}` and `{x}` at offset {o}");
            }
        }
        // and the user's own literals are where they are written
        let written = expr::parse_written(&f).unwrap();
        let mut mine = Vec::new();
        literals(&written, &mut mine);
        for (x, o) in mine {
            assert_eq!(by_offset[&o], &x, "{f}");
        }
    }
}

/// Several blocks in one formula mean the sum of their written-out formulas: each
/// expansion reads its own literals and binds its own arguments.
#[test]
fn several_blocks_in_one_formula_mean_their_written_out_formulas() {
    for (a, pa) in WRITTEN_OUT {
        for (b, pb) in WRITTEN_OUT {
            let f = format!("(< (abs (- (+ {a} 1/3 {b}) (+ {pa} 1/3 {pb}))) 10^-30)");
            assert_eq!(decide(&f), Certainty::True, "{f}");
        }
    }
    // nested: the tail at m = m_1 (H = 8), Δ = 0, w = d_ub(4, 1, 1/2) = ⌈2 ln 32⌉ = 7
    let f = "(< (abs (- (alibi-tail (alibi-slope 1 8) 0 (union-bound-dim 4 1 1/2)) \
             (alibi-tail 1/2 0 7))) 10^-30)";
    assert_eq!(decide(f), Certainty::True, "{f}");
}

/// Each expansion binds fresh names, as the module promises (a reader of the expanded
/// tree, such as the Coq translation, may take a `#` name to have one binding): in a
/// formula with several expansions every `#` name is bound by exactly one `let`, and
/// every `#` atom lies inside the `let` that binds it.
#[test]
fn each_expansion_binds_names_no_other_expansion_binds() {
    fn walk<'a>(e: &'a expr::Sexp, scope: &mut Vec<&'a str>, bound: &mut Vec<&'a str>, f: &str) {
        match e {
            expr::Sexp::Atom(a, _) => {
                assert!(
                    !a.starts_with('#') || scope.contains(&a.as_str()),
                    "{f}: `{a}` free"
                );
            }
            expr::Sexp::List(items, _) => match &items[..] {
                [expr::Sexp::Atom(op, _), expr::Sexp::Atom(x, _), t, body] if op == "let" => {
                    walk(t, scope, bound, f);
                    if x.starts_with('#') {
                        bound.push(x);
                    }
                    scope.push(x);
                    walk(body, scope, bound, f);
                    scope.pop();
                }
                _ => items.iter().for_each(|x| walk(x, scope, bound, f)),
            },
        }
    }
    for f in several_blocks() {
        let e = expr::parse(&f).unwrap();
        let mut bound = Vec::new();
        walk(&e, &mut Vec::new(), &mut bound, &f);
        let n = bound.len();
        bound.sort();
        bound.dedup();
        assert_eq!(bound.len(), n, "{f}: a `#` name bound twice");
        assert!(n >= 4, "{f}");
    }
}
