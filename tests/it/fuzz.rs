//! Fuzzing the four readers of outside input — the certificate reader, the formula
//! parser and evaluator, the spec loader and the `.mtx` reader — with generated and
//! mutated inputs (issue 23). The property: never a panic, an abort or a hang; every
//! refusal is a clean error. Each case runs on its own thread under a deadline.
//!
//! CI runs a fixed, short budget with a fixed seed: a few hundred cases per test
//! (each test a few CPU-seconds at the test profile, measured: CHANGELOG.md, "Bounded input").
//! `PROPTEST_CASES=<n>` sets every test's case count and `ATTNCHECK_FUZZ_SEED=<n>`
//! explores other inputs, e.g.
//! `PROPTEST_CASES=20000 ATTNCHECK_FUZZ_SEED=7 cargo test --test it fuzz::`.
//! `ATTNCHECK_FUZZ_ALL_SPECS=1` mutates every claim's spec, not only the spec loader's five.
//! Every failure found becomes a regression test below (`found_by_fuzzing_*`).

use crate::util::root;
use attncheck::kernel::expr::{self, Data};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How long one case may take (generous: the machine is shared).
const DEADLINE: Duration = Duration::from_secs(20);

/// Formulas are evaluated only when their cost is at most this many units (at most
/// about 0.1 s); costlier ones are only checked to be refused or admitted cleanly. A
/// case that takes 100 times longer than its cost says fails at [`DEADLINE`].
const EVALUATE_UP_TO: u128 = 1_000_000;

/// A runner of `cases` cases (or `PROPTEST_CASES`) on the random stream `stream`.
fn runner(cases: u32, stream: u8) -> TestRunner {
    let cases: u32 = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(cases);
    let seed: u64 = std::env::var("ATTNCHECK_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut key = [stream; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            // a case that times out takes the deadline at every shrinking step
            max_shrink_iters: 16,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &key),
    )
}

/// Runs `f` on its own thread and fails when it panics or outlives [`DEADLINE`].
fn within_deadline(what: &str, input: &str, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = std::sync::mpsc::channel();
    let start = std::time::Instant::now();
    let handle = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(DEADLINE) {
        Ok(()) => {
            let _ = handle.join();
            if start.elapsed() > Duration::from_secs(2) {
                // not a failure (the machine may be loaded), but worth a look
                eprintln!("{what}: {:?} on {:?}", start.elapsed(), abbreviate(input));
            }
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!(
                "{what}: still running after {DEADLINE:?} on {:?}",
                abbreviate(input)
            )
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            panic!("{what}: panicked on {:?}", abbreviate(input))
        }
    }
}

fn abbreviate(s: &str) -> String {
    if s.len() <= 2000 {
        s.to_string()
    } else {
        let mut end = 2000;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}… ({} bytes)", &s[..end], s.len())
    }
}

// ----- generated formulas -----

fn literal() -> impl Strategy<Value = String> {
    prop_oneof![
        (-20i64..20).prop_map(|v| v.to_string()),
        (-50i64..50, 1i64..9).prop_map(|(p, q)| format!("{p}/{q}")),
        (0u32..99, 0u32..30).prop_map(|(m, e)| format!("{m}.5e-{e}")),
        (-3i32..10, -40i32..40).prop_map(|(b, e)| format!("{b}^{e}")),
        prop::sample::select(vec![
            "9^1000000",
            "10^1000000",
            "7^999999",
            "2^-1000000",
            "1e-100000",
            "1e-100001",
            "1e100000",
            "0^-1",
            "1/0",
            "0/0",
            "-0",
            ".",
            "-.5",
            "1e",
            "1e+",
            "+-1",
            "--1",
            "1/-3",
            "2^+3",
            "2^2^2",
            "1.2.3",
            "99999999999999999999999999999999",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "4294967296",
            "2147483648",
            "-2147483648",
            "1e2147483648",
            "2^4294967297",
            "0.0000000000000000000000000000001",
            "٣",
            "1٣",
        ])
        .prop_map(str::to_string),
    ]
}

fn bound() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (-3i64..12).prop_map(|v| v.to_string()),
        1 => prop::sample::select(vec![
            "50000000", "50000001", "-50000000", "9223372036854775807",
            "-9223372036854775808", "9223372036854775808", "1.5", "x", "(+ 1 1)", "1e3",
        ])
        .prop_map(str::to_string),
    ]
}

/// The bounds of a `forall`/`sum` range: mostly ordered, sometimes anything.
fn range() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        8 => (-3i64..8, 0i64..12).prop_map(|(lo, n)| (lo.to_string(), (lo + n).to_string())),
        1 => (bound(), bound()),
    ]
}

fn var() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["x", "y", "k", "pi", "S", "B", "X", "x_1", "e5", "Q"])
        .prop_map(str::to_string)
}

/// A datum name, mostly one of the kind `good` names.
fn name(good: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(good.to_vec()),
        1 => prop::sample::select(vec!["S", "B", "X", "A", "Q", "x", "(rows S)"]),
    ]
    .prop_map(str::to_string)
}

fn term() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![3 => literal(), 2 => var()];
    leaf.prop_recursive(5, 48, 4, |t| {
        let (signs, sparse, layer): (&[&str], &[&str], &[&str]) = (&["S"], &["B", "B", "A"], &["X"]);
        prop_oneof![
            4 => (prop::sample::select(vec!["+", "*", "-", "/", "min", "max"]), prop::collection::vec(t.clone(), 0..4))
                .prop_map(|(op, a)| format!("({op} {})", a.join(" "))),
            3 => (prop::sample::select(vec!["exp", "ln", "sqrt", "sin", "cos", "abs", "neg", "ceil", "floor", "-"]), t.clone())
                .prop_map(|(op, a)| format!("({op} {a})")),
            2 => (t.clone(), bound()).prop_map(|(a, n)| format!("(pow {a} {n})")),
            1 => (var(), range(), t.clone()).prop_map(|(v, (lo, hi), b)| format!("(sum {v} {lo} {hi} {b})")),
            1 => (prop::sample::select(vec!["rows", "cols", "gram-max-abs"]), name(signs))
                .prop_map(|(op, x)| format!("({op} {x})")),
            1 => (prop::sample::select(vec!["rows", "row-sum-max", "row-nnz-max", "entry-min", "entry-max", "entry-sum"]), name(sparse))
                .prop_map(|(op, x)| format!("({op} {x})")),
            1 => (prop::sample::select(vec!["layer-v-frob2", "layer-qk-frob2", "layer-dt"]), name(layer))
                .prop_map(|(op, x)| format!("({op} {x})")),
            1 => (prop::sample::select(vec!["err-max", "lemma-a", "lemma-b"]), name(signs), name(sparse))
                .prop_map(|(op, s, b)| format!("({op} {s} {b})")),
            1 => (prop::sample::select(vec!["lemma-a-row", "lemma-b-row"]), name(signs), name(sparse), t.clone())
                .prop_map(|(op, s, b, x)| format!("({op} {s} {b} {x})")),
            1 => (prop::sample::select(vec!["band-reach", "band-reach-count"]), t.clone(), t.clone(), t.clone())
                .prop_map(|(op, a, b, c)| format!("({op} {a} {b} {c})")),
            1 => (bound(), bound(), t.clone()).prop_map(|(d, f, r)| format!("(sandwich-centred {d} {f} {r})")),
            1 => (name(layer), t.clone(), t.clone()).prop_map(|(x, r, k)| format!("(layer-max-sqnorm {x} {r} {k})")),
            1 => (name(layer), t.clone(), t.clone(), t.clone())
                .prop_map(|(x, r, s, k)| format!("(layer-max-sqdist {x} {r} {s} {k})")),
        ]
    })
}

fn formula() -> impl Strategy<Value = String> {
    let cmp = (
        prop_oneof![
            10 => prop::sample::select(vec!["<", "<=", ">", ">=", "="]),
            1 => prop::sample::select(vec!["!=", "forall", "+", "(<)"]),
        ],
        term(),
        term(),
    )
        .prop_map(|(op, a, b)| format!("({op} {a} {b})"));
    cmp.prop_recursive(3, 16, 3, |f| {
        prop_oneof![
            (prop::collection::vec(f.clone(), 0..3)).prop_map(|a| format!("(and {})", a.join(" "))),
            f.clone().prop_map(|a| format!("(not {a})")),
            (var(), range(), f.clone())
                .prop_map(|(v, (lo, hi), b)| format!("(forall {v} {lo} {hi} {b})")),
        ]
    })
}

/// Small data of every kind, read through the certificate reader.
fn data() -> Data {
    let c = serde_json::json!({
        "format": attncheck::certificate::FORMAT, "claim": "x/y", "profile": "quick", "precision": 64,
        "obligations": [{"name": "x", "formula": "(< 0 1)", "expect": "holds"}],
        "data": {
            "S": {"kind": "signs", "n": 4, "d": 70, "rows": [
                "00000000000000050000000000000001", "0000000000000003000000000000002a",
                "00000000000000000000000000000000", "ffffffffffffffff0000000000000015"]},
            "B": {"kind": "sparse", "n": 4, "rows": [[[0, "1/3"], [2, "-2"]], [], [[1, "7^-30"]], [[0, "5"], [3, "1.25"]]]},
            "A": {"kind": "sparse", "n": 3, "rows": [[[0, "1"]], [[1, "2"]], [[2, "3"]]]},
            "X": {"kind": "layer", "form": "layer", "n": 3, "d": 2, "dt": "1/8", "steps": 6,
                "q": [["1", "2"], ["0", "1"]], "k": [["1", "0"], ["0", "1"]], "v": [["1", "0"], ["0", "-1/2"]],
                "tokens": [[["1", "0"], ["1/2", "3/2"], ["0", "-1"]], [["0", "1"], ["1", "1"], ["2", "0"]]]}
        }
    });
    let cert = attncheck::certificate::parse(Path::new("fuzz"), &c.to_string()).unwrap();
    cert.statement(Path::new("fuzz")).unwrap().data
}

/// Parses, costs and (when cheap enough) evaluates `f` at `prec` bits.
fn exercise_formula(f: &str, prec: u32, data: &Data) {
    let Ok(e) = expr::parse(f) else { return };
    let w = expr::work_with(&e, data, prec);
    if w <= EVALUATE_UP_TO {
        let _ = expr::check_with(f, prec, data);
        let _ = expr::eval_with(f, prec, data);
    } else if w > expr::MAX_WORK {
        assert!(expr::check_with(f, prec, data).is_err(), "over budget: {f}");
    }
}

#[test]
fn fuzz_the_formula_parser_and_evaluator() {
    let data = Arc::new(data());
    let mut r = runner(500, 1);
    r.run(
        &(formula(), prop::sample::select(vec![24u32, 128, 1024])),
        |(f, prec)| {
            let d = data.clone();
            let g = f.clone();
            within_deadline("formula", &f, move || exercise_formula(&g, prec, &d));
            Ok(())
        },
    )
    .unwrap();
}

// ----- mutated inputs -----

/// Edits of a text: (position, kind, byte) triples applied in order.
fn edits() -> impl Strategy<Value = Vec<(usize, u8, u8)>> {
    prop::collection::vec((any::<usize>(), 0u8..6, any::<u8>()), 1..6)
}

/// Characters that matter to JSON, TOML, S-expressions and literals.
const ALPHABET: &[u8] = b"{}[]()\":,.-+/^eE0123456789 \n\\#=x\t'";

fn mutate(seed: &str, edits: &[(usize, u8, u8)]) -> String {
    let mut b = seed.as_bytes().to_vec();
    for &(pos, kind, c) in edits {
        let c = ALPHABET[usize::from(c) % ALPHABET.len()];
        let at = if b.is_empty() { 0 } else { pos % b.len() };
        match kind {
            0 => b.insert(at, c),
            1 if !b.is_empty() => {
                b.remove(at);
            }
            2 if !b.is_empty() => b[at] = c,
            // repeat a slice (long digit strings, deep nesting)
            3 if !b.is_empty() => {
                let end = (at + 1 + usize::from(c) % 16).min(b.len());
                let piece = b[at..end].to_vec();
                for _ in 0..(1 + usize::from(c) % 7) {
                    b.splice(at..at, piece.iter().copied());
                }
            }
            // put a big literal in
            4 => {
                let lit: &[u8] = match c % 4 {
                    0 => b"9^1000000",
                    1 => b"99999999999999999999999999^1000000",
                    2 => b"1e-100000",
                    _ => b"123456789012345678901234567890",
                };
                b.splice(at..at, lit.iter().copied());
            }
            // cut the text
            _ => b.truncate(at),
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn seed_text(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap()
}

/// Reads a (mutated) certificate, then verifies it with and without the spec when
/// every formula is cheap enough to evaluate.
fn exercise_certificate(text: &str) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.cert.json");
    std::fs::write(&p, text).unwrap();
    let Ok(c) = attncheck::certificate::parse(&p, text) else {
        return;
    };
    let Ok(st) = c.statement(&p) else { return };
    let cheap = st.obligations.iter().all(|o| {
        expr::parse(&o.formula)
            .is_ok_and(|e| expr::work_with(&e, &st.data, c.precision) <= EVALUATE_UP_TO)
    });
    if cheap {
        let _ = attncheck::app::verify_with(&p, None, None);
    }
    let specs = attncheck::spec::SpecSource::Dir(root().join("theorems"));
    if cheap
        && [
            "positional/alibi-window",
            "clusters/growth-bound",
            "sparse/ratio-lemma",
        ]
        .contains(&c.claim.as_str())
    {
        let _ = attncheck::app::verify_with(&p, Some(&specs), None);
    }
}

#[test]
fn fuzz_the_certificate_reader() {
    let seeds: Vec<String> = [
        "reports/positional/alibi-window.cert.json",
        "reports/clusters/growth-bound.cert.json",
        "reports/positional/alibi-tail-bound.cert.json",
    ]
    .iter()
    .map(|p| seed_text(p))
    .collect();
    let seeds = Arc::new(seeds);
    let mut r = runner(200, 2);
    r.run(&(0usize..3, edits()), |(i, e)| {
        let text = mutate(&seeds[i], &e);
        let t = text.clone();
        within_deadline("certificate", &text, move || exercise_certificate(&t));
        Ok(())
    })
    .unwrap();
}

/// Loads a (mutated) spec as `path`, prepares its claim and builds its statement in both
/// profiles.
fn exercise_spec(path: PathBuf, text: &str) {
    use attncheck::spec::{Profile, Spec};
    let Ok(spec) = Spec::parse(&path, text) else {
        return;
    };
    if let Some(def) = attncheck::claims::find(&spec.id) {
        for profile in [Profile::Quick, Profile::Full] {
            let _ = (def.prepare)(&spec, profile);
            // the statement `verify` builds from a spec
            let _ = attncheck::claims::statement_of(
                &spec,
                profile,
                &attncheck::certificate::Hints::new(),
            );
        }
    }
}

#[test]
fn fuzz_the_spec_loader() {
    // these five on CI; every other claim's spec too with ATTNCHECK_FUZZ_ALL_SPECS=1
    let mut ids = vec![
        "positional/alibi-window",
        "clusters/growth-bound",
        "sparse/corollary-dimension",
        "sparse/ratio-lemma",
        "positional/sandwich-log-decay",
    ];
    if std::env::var_os("ATTNCHECK_FUZZ_ALL_SPECS").is_some() {
        ids.extend(
            attncheck::claims::REGISTRY
                .iter()
                .map(|c| c.id)
                .filter(|id| !ids.contains(id))
                .collect::<Vec<_>>(),
        );
    }
    let seeds: Arc<Vec<(PathBuf, String)>> = Arc::new(
        ids.iter()
            .map(|id| (crate::util::spec_path(id), crate::util::spec_text(id)))
            .collect(),
    );
    let mut r = runner(300, 3);
    r.run(&(0usize..ids.len(), edits()), |(i, e)| {
        let text = mutate(&seeds[i].1, &e);
        let (p, t) = (seeds[i].0.clone(), text.clone());
        within_deadline("spec", &text, move || exercise_spec(p, &t));
        Ok(())
    })
    .unwrap();
}

#[test]
fn fuzz_the_mtx_reader() {
    let seed = "%%MatrixMarket matrix coordinate real general\n% a comment\n3 3 4\n1 1 0.5\n1 3 2/3\n2 2 1e-3\n3 1 7\n";
    let mut r = runner(500, 4);
    r.run(&(edits(), 1usize..4), |(e, k)| {
        let text = mutate(seed, &e);
        let t = text.clone();
        within_deadline("mtx", &text, move || {
            let _ = attncheck::sparse::target::parse(&t, k);
        });
        Ok(())
    })
    .unwrap();
}
