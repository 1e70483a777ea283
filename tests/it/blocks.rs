//! `let` and the papers' building blocks (issue #26) in Coq: translated, re-proven by
//! `verify --coq`, a tampered one refused. The blocks themselves (reference values,
//! `let` against the written-out term, scoping, limits, domain edges) are tested in the
//! kernel crate (crates/attncheck-kernel/tests/conformance/blocks.rs).

use attncheck::certificate::{self, Certificate};
use attncheck::coq;
use attncheck::kernel::expr;
use attncheck::kernel::{Certainty, Expect};
use std::path::{Path, PathBuf};

fn decide(f: &str) -> Certainty {
    expr::check(f, 128).unwrap_or_else(|e| panic!("{f}: {e}"))
}

// ------------------------------------------------------------ Coq

fn cert_of(formulas: &[(&str, Expect)]) -> Certificate {
    let obligations: Vec<serde_json::Value> = formulas
        .iter()
        .enumerate()
        .map(|(i, (f, e))| {
            serde_json::json!({"name": format!("o{i}"), "formula": f,
                "expect": if *e == Expect::Holds { "holds" } else { "fails" }})
        })
        .collect();
    let text = serde_json::json!({"format": certificate::FORMAT, "claim": "test/blocks",
        "profile": "quick", "precision": 128, "obligations": obligations})
    .to_string();
    certificate::parse(Path::new("blocks.cert.json"), &text).unwrap_or_else(|e| panic!("{e}"))
}

/// The formulas of the Coq test: a `let`, each block, `min` and `max`.
const COQ_FORMULAS: [&str; 9] = [
    "(let x (+ 1/3 1/6) (= (* x x) 1/4))",
    "(let e (exp 1) (let f (* e e) (< (- f (exp 2)) 10^-20)))",
    "(< (abs (- (alibi-slope 1 8) 1/2)) 10^-20)",
    "(<= (alibi-tail 2^-4 0 74) 1/100)",
    "(= (alibi-window 2^-4 4 1/100) 138)",
    "(= (union-bound-dim 256 1/4 1/100) 503)",
    "(and (= (min 3 (max 1 2)) 2) (< (max 1/3 (min 1/2 2)) (min (max -1 1) 2)))",
    "(forall k 1 3 (let w (alibi-window (/ 1 (* 2 k)) 0 1/100) (< (alibi-tail (/ 1 (* 2 k)) 0 w) 1/100)))",
    // min and max of transcendental terms: rewritten by the absolute value for Coq
    "(< (max (exp 1) (sqrt 7)) (min 3 (exp 2)))",
];

fn write_cert(dir: &Path, formulas: &[&str]) -> PathBuf {
    let obligations: Vec<serde_json::Value> = formulas
        .iter()
        .enumerate()
        .map(|(i, f)| serde_json::json!({"name": format!("o{i}"), "formula": f, "expect": "holds"}))
        .collect();
    let text = serde_json::json!({"format": certificate::FORMAT, "claim": "test/blocks",
        "profile": "quick", "precision": 128, "obligations": obligations});
    let p = dir.join("blocks.cert.json");
    std::fs::write(&p, serde_json::to_string_pretty(&text).unwrap()).unwrap();
    p
}

use crate::coq_soundness::verify;

/// A let chain that doubles its term at each step: the Coq translation, which writes
/// the lets out, stops at its node limit with a reason instead of blowing up; a chain
/// of 12 writes out within the limit and is sent. (The kernel evaluates it once per
/// step: `a_doubling_let_chain_of_depth_60_is_fast` in the kernel's conformance suite.)
#[test]
fn a_doubling_let_chain_of_depth_60_stops_at_the_coq_node_limit() {
    let chain = |n: u32, value: u64| {
        let mut f = format!("(= x{n} {value})");
        for k in (1..=n).rev() {
            f = format!("(let x{k} (+ x{} x{}) {f})", k - 1, k - 1);
        }
        format!("(let x0 1 {f})")
    };
    let f = chain(60, 1 << 60);
    let c = cert_of(&[(f.as_str(), Expect::Holds)]);
    let (sent, n, ko) = coq::coverage(&c);
    assert_eq!((sent, n), (0, 1));
    assert!(ko[0].1.contains("writing out its `let`s"), "{ko:?}");
    let c = cert_of(&[(chain(12, 4096).as_str(), Expect::Holds)]);
    assert_eq!(coq::coverage(&c).0, 1);
}

/// Every formula is translated (no kernel-only), and the statement Coq is given
/// carries the blocks' domain conditions.
#[test]
fn blocks_and_let_are_translated_for_coq() {
    let formulas: Vec<(&str, Expect)> = COQ_FORMULAS.iter().map(|f| (*f, Expect::Holds)).collect();
    let c = cert_of(&formulas);
    let (sent, n, ko) = coq::coverage(&c);
    assert_eq!(
        (sent, n),
        (COQ_FORMULAS.len(), COQ_FORMULAS.len()),
        "{ko:?}"
    );
    let text = coq::translate(&c).text;
    // min and max of transcendental terms under a forall or sum binder are translated
    // too (rewritten by the absolute value once the binder is unrolled)
    let f = "(forall k 1 5 (<= (min (exp k) (* 3 k)) (* 3 k)))";
    let c = cert_of(&[(f, Expect::Holds)]);
    assert_eq!(decide(f), Certainty::True);
    let (sent, _, ko) = coq::coverage(&c);
    assert_eq!(sent, 1, "{ko:?}");
    assert!(
        coq::translate(&c)
            .text
            .contains("unroll_sums; attn_extrema"),
        "{}",
        coq::translate(&c).text
    );
    // the guard of alibi-window: 0 < 1 − ε stated (and proven)
    assert!(
        text.contains("ln (1 - 1 / 100)") || text.contains("ln (1 - (1 / 100))"),
        "{text}"
    );
}

/// `verify --coq` re-proves a certificate with `let`, each block, `min` and `max`
/// (exit 0, every obligation `Coq + kernel`); a tampered number is refused (exit 1).
#[test]
fn verify_coq_re_proves_let_and_the_blocks_and_rejects_a_tampered_one() {
    let dir = tempfile::tempdir().unwrap();
    // the compiled library's cache shared with coq_soundness's tests (as XDG_CACHE_HOME)
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("coq-cache");
    std::fs::create_dir_all(&cache).unwrap();
    let p = write_cert(dir.path(), &COQ_FORMULAS);
    let (code, out) = verify(&["--no-spec"], &p, &cache);
    assert_eq!(code, Some(0), "{out}");
    if !crate::coq::have_coq("verify_coq_re_proves_let_and_the_blocks") {
        return;
    }
    let (code, out) = verify(&["--coq", "--no-spec"], &p, &cache);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        out.matches("Coq + kernel").count(),
        COQ_FORMULAS.len(),
        "{out}"
    );
    // the window one less: the kernel finds it contrary, and so does Coq's check
    let tampered: Vec<String> = COQ_FORMULAS
        .iter()
        .map(|f| f.replace("138)", "137)"))
        .collect();
    let tampered: Vec<&str> = tampered.iter().map(String::as_str).collect();
    let p = write_cert(dir.path(), &tampered);
    let (code, out) = verify(&["--coq", "--no-spec"], &p, &cache);
    assert_eq!(code, Some(1), "{out}");
}

/// Regression (session 20): the first translation of non-rational `min`/`max` rewrote
/// them under a `forall` too, where the body is proven per value and the rewritten
/// text no longer matched the goal: Coq *rejected* this true formula (a false
/// counterexample from the independent checker). Session 20 kept such an extremum
/// kernel-only; since session 21 every extremum is rewritten in the proof's last step
/// (`attn_extrema`: the side the enclosures decide, else the absolute-value form),
/// after the forall and the sums are unrolled, where no binder hides it: Coq proves
/// the true formulas (under a forall, a sum, a ceiling, nested, in a domain condition,
/// and tight ones such as min(e^k, 3k) ≤ 3k, which the absolute-value form alone could
/// not give `interval`) and rejects the false ones.
#[test]
fn min_under_a_forall_that_coq_rejected_is_kept_kernel_only() {
    let true_ones = [
        "(forall k 1 5 (<= (min (exp k) (* 3 k)) (* 3 k)))",
        "(forall k 1 4 (> (max (exp k) (* 3 k)) 2))",
        "(<= (sum k 1 6 (min (exp k) 20)) 91)",
        "(forall j 1 3 (< (sum k 1 3 (max (ln (+ k j)) (/ k 3))) 6))",
        "(forall k 1 3 (<= (ceil (min (exp k) 21/2)) 11))",
        "(forall k 1 3 (<= (min (max (cos k) (sin k)) (exp (- k))) 1))",
        "(forall k 1 4 (< (ln (min (exp k) 30)) 4))",
    ];
    for f in true_ones {
        assert_eq!(decide(f), Certainty::True, "{f}");
    }
    let false_ones = [
        "(forall k 1 5 (< (min (exp k) (* 3 k)) (* 3 k)))",
        "(<= (sum k 1 6 (min (exp k) 20)) 90)",
    ];
    for f in false_ones {
        assert_eq!(decide(f), Certainty::False, "{f}");
    }
    let all: Vec<(&str, Expect)> = true_ones.iter().map(|f| (*f, Expect::Holds)).collect();
    let (sent, _, ko) = coq::coverage(&cert_of(&all));
    assert_eq!(sent, true_ones.len(), "{ko:?}");
    // closed, the same
    let closed = "(<= (min (exp 1) 3) 3)";
    assert_eq!(coq::coverage(&cert_of(&[(closed, Expect::Holds)])).0, 1);
    if !crate::coq::have_coq("min_under_a_forall") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("coq-cache");
    std::fs::create_dir_all(&cache).unwrap();
    let p = write_cert(dir.path(), &true_ones);
    let (code, out) = verify(&["--coq", "--no-spec"], &p, &cache);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        out.matches("Coq + kernel").count(),
        true_ones.len(),
        "{out}"
    );
    // a false one stated as holding: the kernel refutes it, and Coq's check with it
    let p = write_cert(dir.path(), &false_ones[..1]);
    let (code, out) = verify(&["--coq", "--no-spec"], &p, &cache);
    assert_eq!(code, Some(1), "{out}");
}
