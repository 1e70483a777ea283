//! Claims written as formulas (issue #26): `attncheck new`, `run FILE.toml`,
//! `verify --spec`, the verdict rule, the report, and hostile specs (every error names
//! the file, the line, the obligation and the column; exit 2; no panic, no hang).

use crate::util::{output_text, run_in};
use attncheck::claims::formulas;
use attncheck::spec::{Profile, Spec};
use proptest::prelude::*;
use std::path::Path;

/// A scratch directory holding `attncheck new mine/my-bound`'s spec.
fn scaffolded() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), &["new", "mine/my-bound"]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    dir
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A formulas spec with `params`/`defs` TOML bodies and obligations (name, formula).
fn spec_text(id: &str, extra: &str, obligations: &[(&str, &str)]) -> String {
    let mut s = format!(
        "id = \"{id}\"\nkind = \"formulas\"\ntitle = \"t\"\nstatement = \"s\"\nsource = \"me\"\n\
         provenance = [\"derived\"]\nrigour = \"certified\"\nexpected = \"certified\"\n{extra}\n"
    );
    for (n, f) in obligations {
        s.push_str(&format!(
            "\n[[obligations]]\nname = \"{n}\"\nformula = \"{f}\"\n"
        ));
    }
    s
}

/// `attncheck run FILE` in `dir` on `text`: (exit code, everything printed).
fn run_spec(dir: &Path, rel: &str, text: &str) -> (Option<i32>, String) {
    write(dir, rel, text);
    let o = run_in(dir, &["run", rel]);
    (o.status.code(), output_text(&o))
}

/// Bug (session 22): the claims' shared driver built every statement through
/// `shape::resolve`, which a formulas spec does not use, so every formulas run was
/// inconclusive ("the statement could not be built: … a formulas claim is resolved from
/// its whole spec"). The driver takes the claim's own builder, the one `verify` uses.
#[test]
fn a_formulas_run_builds_its_statement_with_the_builder_verify_uses() {
    use attncheck::claims::shape::Claim;
    let run: attncheck::claims::shape::StatementFn =
        <attncheck::claims::formulas::Formulas as Claim>::statement_fn();
    let verify: attncheck::claims::shape::StatementFn = attncheck::claims::formulas::statement;
    assert!(std::ptr::fn_addr_eq(run, verify));
    let dir = scaffolded();
    let o = run_in(dir.path(), &["run", "mine/my-bound.toml"]);
    let t = output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(!t.contains("could not be built"), "{t}");
}

#[test]
fn the_scaffold_certifies_and_verifies_against_its_spec() {
    let dir = scaffolded();
    let d = dir.path();
    let o = run_in(d, &["run", "mine/my-bound.toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    assert!(output_text(&o).contains("certified"));
    let cert = "reports/mine/my-bound.cert.json";
    let o = run_in(d, &["verify", cert, "--spec", "mine/my-bound.toml"]);
    let t = output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("certified (2 obligations"), "{t}");
    assert!(
        t.contains("statement rebuilt from mine/my-bound.toml and matched"),
        "{t}"
    );
    // the spec placed in a spec directory is found by ID too
    let o = run_in(d, &["verify", cert, "--theorems", "."]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    // without the spec the statement cannot be rebuilt: rejected, and told what to pass
    let o = run_in(d, &["verify", cert]);
    let t = output_text(&o);
    assert_eq!(o.status.code(), Some(4), "{t}");
    assert!(t.contains("pass --spec FILE"), "{t}");
    // --no-spec evaluates the formulas and says the statement was not checked
    let o = run_in(d, &["verify", cert, "--no-spec"]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    // --check against the reports just written: nothing regressed
    let o = run_in(d, &["run", "mine/my-bound.toml", "--check"]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
}

#[test]
fn a_formulas_report_is_byte_identical_from_run_to_run_and_matches_its_snapshot() {
    let dir = scaffolded();
    let d = dir.path();
    let read = || {
        let o = run_in(d, &["run", "mine/my-bound.toml"]);
        assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
        (
            std::fs::read_to_string(d.join("reports/mine/my-bound.md")).unwrap(),
            std::fs::read_to_string(d.join("reports/mine/my-bound.json")).unwrap(),
            std::fs::read_to_string(d.join("reports/mine/my-bound.cert.json")).unwrap(),
        )
    };
    let first = read();
    assert_eq!(first, read());
    insta::assert_snapshot!("formulas_scaffold_report", first.0);
    assert!(first.1.contains("\"spec_file\": \"mine/my-bound.toml\""));
}

#[test]
fn a_tampered_formulas_certificate_is_rejected_with_exit_4() {
    let dir = scaffolded();
    let d = dir.path();
    assert_eq!(
        run_in(d, &["run", "mine/my-bound.toml"]).status.code(),
        Some(0)
    );
    let cert = d.join("reports/mine/my-bound.cert.json");
    let text = std::fs::read_to_string(&cert).unwrap();
    for (from, to, why) in [
        (" 1/1000)", " 1/100)", "a weaker bound"),
        ("(* 2^-5 286)", "(* 2^-5 2860)", "a longer window"),
        (
            "\"precision\": 128,",
            "\"precision\": 128, \"hints\": {\"w\": \"1\"},",
            "a hint",
        ),
    ] {
        assert!(text.contains(from), "{from} not in the certificate");
        let tampered = d.join("tampered.cert.json");
        std::fs::write(&tampered, text.replacen(from, to, 1)).unwrap();
        let o = run_in(
            d,
            &[
                "verify",
                "tampered.cert.json",
                "--spec",
                "mine/my-bound.toml",
            ],
        );
        let t = output_text(&o);
        assert_eq!(o.status.code(), Some(4), "{why}: {t}");
        assert!(t.contains("rejected"), "{why}: {t}");
    }
    // a spec edited after the run no longer matches its certificate
    let spec = d.join("mine/my-bound.toml");
    let s = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(&spec, s.replace("eps = \"1/1000\"", "eps = \"1/999\"")).unwrap();
    let o = run_in(
        d,
        &[
            "verify",
            "reports/mine/my-bound.cert.json",
            "--spec",
            "mine/my-bound.toml",
        ],
    );
    assert_eq!(o.status.code(), Some(4), "{}", output_text(&o));
}

#[test]
fn a_false_obligation_is_refuted_with_exit_1_and_as_expected_when_the_spec_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let obs = [
        ("e is below 3", "(< (exp 1) 3)"),
        ("pi is below 3", "(< pi 3)"),
    ];
    let (code, t) = run_spec(d, "mine/pi.toml", &spec_text("mine/pi", "", &obs));
    assert_eq!(code, Some(1), "{t}");
    assert!(t.contains("BAD") && t.contains("refuted"), "{t}");
    let refuting = spec_text("mine/pi", "", &obs).replace(
        "expected = \"certified\"",
        "expected = \"refuted\"\nrefutes = [\"pi is below 3\"]",
    );
    let (code, t) = run_spec(d, "mine/pi.toml", &refuting);
    assert_eq!(code, Some(0), "{t}");
    let o = run_in(
        d,
        &[
            "verify",
            "reports/mine/pi.cert.json",
            "--spec",
            "mine/pi.toml",
        ],
    );
    let t = output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("refuted, as the statement asserts"), "{t}");
}

#[test]
fn a_formulas_certificate_is_re_proven_in_coq() {
    if !crate::coq::have_coq("a_formulas_certificate_is_re_proven_in_coq") {
        return;
    }
    let dir = scaffolded();
    let d = dir.path();
    assert_eq!(
        run_in(d, &["run", "mine/my-bound.toml"]).status.code(),
        Some(0)
    );
    let o = run_in(
        d,
        &[
            "verify",
            "reports/mine/my-bound.cert.json",
            "--spec",
            "mine/my-bound.toml",
            "--coq",
        ],
    );
    let t = output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("2 proven by Coq and the kernel, 0 by the kernel only"),
        "{t}"
    );
}

#[test]
fn new_refuses_to_overwrite_a_foreign_id_or_a_bad_one() {
    let dir = scaffolded();
    let d = dir.path();
    for (args, needle) in [
        (&["new", "mine/my-bound"][..], "never overwrites"),
        (
            &["new", "positional/alibi-window"][..],
            "is a claim of this tool",
        ),
        (&["new", "Mine/x"][..], "<group>/<name>"),
        (&["new", "mine"][..], "<group>/<name>"),
        (&["new", "mine/../x"][..], "<group>/<name>"),
    ] {
        let o = run_in(d, args);
        let t = output_text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
        assert!(t.contains(needle), "{args:?}: {t}");
    }
}

/// Each hostile spec: exit 2, the message names the file and line, the field, and
/// what is wrong; nothing is written.
#[test]
fn hostile_formulas_specs_are_errors_at_their_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = "[params]\nw = 3\neps = \"1/100\"\n[defs]\nsq = \"(* {w} {w})\"";
    let deep = format!("(<= {}1{} 2)", "(+ ".repeat(100_000), ")".repeat(100_000));
    let blowup = {
        let mut s = String::from("[defs]\na0 = \"(+ 1 1)\"\n");
        for i in 1..30 {
            s.push_str(&format!("a{i} = \"(+ {{a{}}} {{a{}}})\"\n", i - 1, i - 1));
        }
        s
    };
    // (the spec's [params]/[defs], its obligations, what the message must say)
    type Case<'a> = (String, Vec<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case> = vec![
        (p.into(), vec![("a", "(<= {x} 1)")], "unbound name `x`"),
        (p.into(), vec![("a", "(<= {sq} 1")], "unclosed parenthesis"),
        (
            p.into(),
            vec![("a", "(<= (exq {w}) 1)")],
            "unknown operator `exq`",
        ),
        (p.into(), vec![("a", "(<= {w 1)")], "without its `}`"),
        (p.into(), vec![("a", "(<= w} 1)")], "without its `{`"),
        (p.into(), vec![("a", "(<= { w } 1)")], "is not a reference"),
        (
            p.into(),
            vec![("a", "(forall k 0 1000000000 (<= k {sq}))")],
            "limit is 1000000000",
        ),
        (p.into(), vec![("a", "(forall k 5 1 (<= k {sq}))")], "empty"),
        (p.into(), vec![("a", "(<= k 1)")], "k"),
        (
            p.into(),
            vec![("a", "(+ 1 2)")],
            "unknown operator `+` in a formula",
        ),
        (p.into(), vec![("a", "")], ""),
        (
            p.into(),
            vec![("a", "(< 1 2)"), ("a", "(< 1 3)")],
            "two obligations are named `a`",
        ),
        (p.into(), vec![("", "(< 1 2)")], "must not be empty"),
        (
            "[params]\nw = 0.5".into(),
            vec![("a", "(< {w} 1)")],
            "a TOML float is not exact",
        ),
        (
            "[params]\nw = \"9^100000000\"".into(),
            vec![("a", "(< {w} 1)")],
            "exponent",
        ),
        (
            "[params]\n\"w-1\" = 2".into(),
            vec![("a", "(< 1 2)")],
            "cannot be written as {w-1}",
        ),
        (
            "[params]\nw = 2\n[defs]\nw = \"3\"".into(),
            vec![("a", "(< {w} 4)")],
            "both a parameter and a definition",
        ),
        (
            "[defs]\na = \"(+ {b} 1)\"\nb = \"(* {a} 2)\"".into(),
            vec![("x", "(< {a} 4)")],
            "refers to itself",
        ),
        (
            "[defs]\na = \"(+ 1 2\"".into(),
            vec![("x", "(< {a} 4)")],
            "a `(` without its `)`",
        ),
        (
            "[defs]\na = 3".into(),
            vec![("x", "(< {a} 4)")],
            "written as a string",
        ),
        (blowup, vec![("x", "(< {a29} 4)")], "expands to more than"),
        (
            String::new(),
            vec![("x", deep.as_str())],
            "nested deeper than 200",
        ),
        (String::new(), vec![], "at least one [[obligations]]"),
        ("[params]\nw = 2".into(), vec![("a", "(< (ln 0) {w})")], ""),
    ];
    for (i, (extra, obs, needle)) in cases.iter().enumerate() {
        let text = spec_text(&format!("mine/c{i}"), extra, obs);
        let rel = format!("mine/c{i}.toml");
        let t0 = std::time::Instant::now();
        let (code, t) = run_spec(d, &rel, &text);
        assert!(
            t0.elapsed().as_secs() < 60,
            "case {i} took {:?}",
            t0.elapsed()
        );
        if extra.contains("(ln 0)") || obs.iter().any(|(_, f)| f.contains("(ln 0)")) {
            // a partial function at its domain edge: undecided, never a verdict
            assert_eq!(code, Some(1), "case {i}: {t}");
            assert!(t.contains("inconclusive"), "case {i}: {t}");
            continue;
        }
        assert_eq!(code, Some(2), "case {i} ({needle}): {t}");
        assert!(t.contains(&rel), "case {i}: the file is not named: {t}");
        assert!(t.contains(needle), "case {i}: `{needle}` not in {t}");
        assert!(!t.contains("panicked"), "case {i}: {t}");
        assert!(
            !d.join(format!("reports/mine/c{i}.md")).exists(),
            "case {i} wrote a report"
        );
    }
}

#[test]
fn a_formula_error_names_the_line_the_obligation_and_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let text = spec_text(
        "mine/where",
        "[params]\nw = 3",
        &[("fine", "(< 1 2)"), ("the second", "(<= (exq {w}) 1)")],
    );
    let (code, t) = run_spec(dir.path(), "mine/where.toml", &text);
    assert_eq!(code, Some(2), "{t}");
    let line = crate::util::line_of(&text, "(exq");
    assert!(
        t.contains(&format!("mine/where.toml:{line}: obligations[1].formula")),
        "{t}"
    );
    assert!(t.contains("obligation `the second`: column 5"), "{t}");
    // the caret sits under the fault
    let caret = t.lines().find(|l| l.trim() == "^").expect("a caret line");
    assert_eq!(caret.find('^'), Some(2 + 4), "{t}");
}

#[test]
fn a_spec_of_the_tool_cannot_carry_obligations_nor_a_formulas_spec_take_a_tool_id() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let own = spec_text("positional/alibi-window", "", &[("a", "(< 1 2)")]);
    let (code, t) = run_spec(d, "x.toml", &own);
    assert_eq!(code, Some(2), "{t}");
    assert!(t.contains("is a claim of this tool"), "{t}");
    let no_kind = spec_text("mine/x", "", &[("a", "(< 1 2)")]).replace("kind = \"formulas\"\n", "");
    let (code, t) = run_spec(d, "x.toml", &no_kind);
    assert_eq!(code, Some(2), "{t}");
    assert!(
        t.contains("kind = \\\"formulas\\\"") || t.contains("kind = \"formulas\""),
        "{t}"
    );
    let bad_kind =
        spec_text("mine/x", "", &[("a", "(< 1 2)")]).replace("\"formulas\"", "\"module\"");
    let (code, t) = run_spec(d, "x.toml", &bad_kind);
    assert_eq!(code, Some(2), "{t}");
    assert!(t.contains("kind"), "{t}");
}

#[test]
fn a_formulas_claim_has_no_units_to_shard() {
    let dir = scaffolded();
    let o = run_in(dir.path(), &["run", "mine/my-bound.toml", "--shard", "1/2"]);
    let t = output_text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
}

fn statement_of(text: &str) -> Result<Vec<String>, String> {
    let spec = Spec::parse(Path::new("mine/p.toml"), text).map_err(|e| e.to_string())?;
    let r = formulas::resolve(&spec, Profile::Quick).map_err(|e| e.to_string())?;
    Ok(r.obligations.into_iter().map(|o| o.formula).collect())
}

#[test]
fn profiles_override_parameters_and_definitions_paste_as_written() {
    let text = spec_text(
        "mine/p",
        "[params]\nw = 3\n[profiles.full]\nw = 7\n[defs]\nsq = \"(* {w} r)\"",
        &[("a", "(forall r 1 2 (<= {sq} 100))")],
    );
    assert_eq!(
        statement_of(&text).unwrap(),
        vec!["(forall r 1 2 (<= (* 3 r) 100))".to_string()]
    );
    let spec = Spec::parse(Path::new("mine/p.toml"), &text).unwrap();
    let full = formulas::resolve(&spec, Profile::Full).unwrap();
    assert_eq!(
        full.obligations[0].formula,
        "(forall r 1 2 (<= (* 7 r) 100))"
    );
}

fn rational() -> impl Strategy<Value = (i64, u32)> {
    (-1000i64..1000, 1u32..50)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Checker agreement: with exact parameters a and b, `(<= {a} {b})` is decided
    /// exactly as GMP orders the two rationals, and `(= (+ {a} {b}) S)` holds for
    /// their exact sum S written out.
    #[test]
    fn parameters_are_pasted_exactly((an, ad) in rational(), (bn, bd) in rational()) {
        let a = rug::Rational::from((an, ad));
        let b = rug::Rational::from((bn, bd));
        let sum = rug::Rational::from(&a + &b);
        let text = spec_text(
            "mine/p",
            &format!("[params]\na = \"{an}/{ad}\"\nb = \"{bn}/{bd}\""),
            &[("le", "(<= {a} {b})"), ("sum", &format!("(= (+ {{a}} {{b}}) {sum})"))],
        );
        let formulas = statement_of(&text).unwrap();
        let le = attncheck::kernel::expr::check(&formulas[0], 64).unwrap();
        prop_assert_eq!(le == attncheck::kernel::Certainty::True, a <= b);
        prop_assert_eq!(le == attncheck::kernel::Certainty::False, a > b);
        let eq = attncheck::kernel::expr::check(&formulas[1], 64).unwrap();
        prop_assert_eq!(eq, attncheck::kernel::Certainty::True);
    }
}

/// A layer datum (the clusters paper's discrete map) for the data tests: two tokens at
/// ±1/2 in one dimension, Q = K = V = 1, Δt = 1/10, 3 steps.
const LAYER: &str = "[data.x]\nkind = \"layer\"\nform = \"layer\"\nn = 2\nd = 1\ndt = \"1/10\"\n\
                     steps = 3\nq = [[\"1\"]]\nk = [[\"1\"]]\nv = [[\"1\"]]\n\
                     tokens = [[[\"1/2\"], [\"-1/2\"]]]\n";

/// Issue #26's "the discrete map's quantities": a formulas spec declares a datum
/// (`[data.NAME]`, the certificate's data kinds and fields) and its obligations apply
/// the data operations to it. It certifies, shows the datum in the report, carries it
/// in the certificate, verifies against the spec, and a changed datum — in the
/// certificate or in the spec — is rejected with exit 4.
#[test]
fn a_formulas_spec_states_the_discrete_maps_quantities_with_a_layer_datum() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // with V = 1 the tokens move apart, and ‖x^{k+1}‖ ≤ (1 + Δt)‖x^k‖ (P x is a convex
    // combination): max ‖x_i^3‖² ≤ (1/4)(11/10)^6
    let text = spec_text(
        "mine/layer",
        &format!("[params]\nK = 3\n{LAYER}"),
        &[
            (
                "the tokens move apart",
                "(> (layer-max-sqnorm x 0 {K}) (layer-max-sqnorm x 0 0))",
            ),
            (
                "Gronwall per step",
                "(forall k 0 2 (<= (layer-max-sqnorm x 0 (+ k 1)) (* (pow (+ 1 (layer-dt x)) 2) (layer-max-sqnorm x 0 k))))",
            ),
            (
                "the whole bound",
                "(<= (layer-max-sqnorm x 0 {K}) (* 1/4 (pow 11/10 6)))",
            ),
        ],
    );
    let (code, t) = run_spec(d, "mine/layer.toml", &text);
    assert_eq!(code, Some(0), "{t}");
    assert!(t.contains("certified"), "{t}");
    let md = std::fs::read_to_string(d.join("reports/mine/layer.md")).unwrap();
    assert!(
        md.contains("| `x` | layer | the discrete map: 2 tokens in dimension 1"),
        "{md}"
    );
    let cert = std::fs::read_to_string(d.join("reports/mine/layer.cert.json")).unwrap();
    assert!(cert.contains("\"kind\": \"layer\""), "{cert}");
    let verify = |c: &str| {
        let o = run_in(d, &["verify", c, "--spec", "mine/layer.toml"]);
        (o.status.code(), output_text(&o))
    };
    let (code, t) = verify("reports/mine/layer.cert.json");
    assert_eq!(code, Some(0), "{t}");
    assert!(t.contains("certified (3 obligations"), "{t}");
    // the datum changed in the certificate: the tokens further apart make the bound
    // false, and a statement about other data is not the spec's
    let tampered = cert.replacen("\"-1/2\"", "\"-3/2\"", 1);
    assert_ne!(tampered, cert);
    std::fs::write(d.join("t.cert.json"), tampered).unwrap();
    let (code, t) = verify("t.cert.json");
    assert_eq!(code, Some(4), "{t}");
    assert!(t.contains("datum `x`"), "{t}");
    // the spec's datum changed after the run
    std::fs::write(
        d.join("mine/layer.toml"),
        text.replace("dt = \"1/10\"", "dt = \"1/20\""),
    )
    .unwrap();
    let (code, t) = verify("reports/mine/layer.cert.json");
    assert_eq!(code, Some(4), "{t}");
    assert!(t.contains("datum `x`"), "{t}");
}

/// Hostile data in a formulas spec: each is an error (exit 2) naming the file and the
/// field under `data.`, and writes nothing.
#[test]
fn hostile_data_in_a_formulas_spec_are_errors_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ob = [("a", "(<= (layer-max-sqnorm x 0 1) 10)")];
    let cases: Vec<(String, &str)> = vec![
        (
            LAYER.replace("kind = \"layer\"", "kind = \"matrix\""),
            "data.x: not a datum of the certificate's kinds",
        ),
        (LAYER.replace("steps = 3\n", ""), "missing field `steps`"),
        (
            LAYER.replace("n = 2\n", "n = 2\nm = 5\n"),
            "unknown field `m`",
        ),
        (LAYER.replace("\"1/10\"", "\"1/0\""), "data.x.dt"),
        (LAYER.replace("\"1/10\"", "0.1"), "data.x"),
        (
            LAYER.replace("[[\"1/2\"], [\"-1/2\"]]", "[[\"1/2\", \"0\"], [\"-1/2\"]]"),
            "data.x.tokens[0][0]",
        ),
        (LAYER.replace("steps = 3", "steps = 100000000"), "data.x"),
        (LAYER.replace("n = 2", "n = 0"), "data.x.n"),
        ("[data]\nx = 3".into(), "a datum is a table"),
        (
            format!("[params]\nx = 2\n{LAYER}"),
            "both a datum and a parameter",
        ),
        (
            LAYER.replace("[data.x]", "[data.\"x-1\"]"),
            "cannot name a datum",
        ),
        (LAYER.replace("[data.x]", "[data.y]"), "no datum named `x`"),
        (
            LAYER.replace("kind = \"layer\"", "kind = \"signs\""),
            "data.x",
        ),
    ];
    for (i, (extra, needle)) in cases.iter().enumerate() {
        let text = spec_text(&format!("mine/d{i}"), extra, &ob);
        let rel = format!("mine/d{i}.toml");
        let (code, t) = run_spec(d, &rel, &text);
        assert_eq!(code, Some(2), "case {i} ({needle}): {t}");
        assert!(t.contains(&rel), "case {i}: the file is not named: {t}");
        assert!(t.contains(needle), "case {i}: `{needle}` not in {t}");
        assert!(!t.contains("panicked"), "case {i}: {t}");
        assert!(
            !d.join(format!("reports/mine/d{i}.md")).exists(),
            "case {i} wrote a report"
        );
    }
    // the data of a tool's claim come from its module: a spec of the tool cannot carry any
    let own = spec_text("mine/x", LAYER, &[]).replace("kind = \"formulas\"\n", "");
    let (code, t) = run_spec(d, "x.toml", &own);
    assert_eq!(code, Some(2), "{t}");
    assert!(
        t.contains("data: belongs to a claim written as formulas"),
        "{t}"
    );
}

/// `attncheck diff` between two report sets of a formulas claim names the obligation
/// whose result changed.
#[test]
fn diff_names_the_obligation_of_a_formulas_claim_that_changed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = spec_text(
        "mine/dif",
        "[params]\nb = \"1/7\"",
        &[
            ("e^-2 is below b", "(<= (exp -2) {b})"),
            ("other", "(< 1 2)"),
        ],
    );
    let (code, t) = run_spec(d, "mine/dif.toml", &text);
    assert_eq!(code, Some(0), "{t}");
    std::fs::rename(d.join("reports"), d.join("old")).unwrap();
    let (code, t) = run_spec(d, "mine/dif.toml", &text.replace("1/7", "1/8"));
    assert_eq!(code, Some(1), "{t}");
    let o = run_in(d, &["diff", "old", "reports"]);
    let t = output_text(&o);
    assert!(t.contains("mine/dif"), "{t}");
    assert!(t.contains("e^-2 is below b"), "{t}");
    assert!(!t.contains("other"), "{t}");
}
