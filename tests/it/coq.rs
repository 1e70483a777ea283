//! The Coq translation (`attncheck::coq`): every committed certificate
//! translates; `attncheck verify --coq` re-proves every committed certificate
//! but the few of `coq::NOT_IN_CI` (`make coq` re-proves those; each report's
//! "independently proven in Coq: k of n obligations" is the k Coq proves);
//! tampering is caught by Coq itself (these tests hand the tampered certificate
//! to `coq::check` directly, past the statement check that `verify --coq` does
//! first: tests/it/coq_soundness.rs).
//!
//! Tests that run `coqc` print a message and pass when it is not installed
//! (`apt-get install coq libcoq-interval`; `make test` and CI install it).
//! Certificates are read by the one reader, `attncheck::certificate`.

use super::util::{bin, files_below, output_text, root};
use attncheck::certificate::{self, Certificate, DataEntry, Obligation};
use attncheck::coq::{self, CoqVerdict};
use attncheck::kernel::expr::Datum;
use attncheck::kernel::{Expect, SignMatrix};
use attncheck::spec::Profile;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn cert_path(id: &str) -> PathBuf {
    root().join("reports").join(format!("{id}.cert.json"))
}

fn cert(id: &str) -> Certificate {
    coq::load(&cert_path(id)).unwrap_or_else(|e| panic!("{id}: {e}"))
}

fn committed() -> Vec<PathBuf> {
    let reports = root().join("reports");
    files_below(&reports)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".cert.json"))
        .map(|p| reports.join(p))
        .collect()
}

/// Whether Coq is installed (with a message when it is not: the test then
/// checks only what needs no coqc).
pub(crate) fn have_coq(name: &str) -> bool {
    if !coq::installed() {
        eprintln!(
            "skipping {name}: coqc not found (install: {})",
            coq::INSTALL_HINT
        );
        return false;
    }
    true
}

/// The kernel on the certificate's own formulas, then Coq (`None` without coqc).
pub(crate) fn coq_check(c: &Certificate, name: &str) -> Option<coq::CoqReport> {
    if !have_coq(name) {
        return None;
    }
    let kernel = coq::kernel_decisions(c).unwrap_or_else(|e| panic!("{name}: {e}"));
    Some(coq::check(c, &kernel, &coq::Limits::DEFAULT).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// Only the obligations whose name contains `needle` (to keep Coq runs short).
fn only(mut c: Certificate, needle: &str) -> Certificate {
    c.obligations.retain(|o| o.name.contains(needle));
    assert!(
        !c.obligations.is_empty(),
        "no obligation matches `{needle}`"
    );
    c
}

fn rejected(c: &Certificate, name: &str) {
    let Some(r) = coq_check(c, name) else {
        return;
    };
    assert!(
        r.results
            .iter()
            .all(|(_, v)| matches!(v, CoqVerdict::Rejected(_))),
        "{name}: Coq accepted a tampered obligation: {:?}",
        r.results
    );
    assert!(!r.accepted());
}

#[test]
fn every_committed_certificate_translates() {
    let all = committed();
    assert!(all.len() >= 9, "{all:?}");
    for p in all {
        let c = coq::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let f = coq::translate(&c);
        assert_eq!(
            f.sent.len() + f.kernel_only.len(),
            c.obligations.len(),
            "{}",
            p.display()
        );
        assert_eq!(f.text.matches("\nLemma o_").count(), f.sent.len());
        assert!(!f.text.contains("Admitted"));
        assert!(!f
            .text
            .lines()
            .any(|l| ["Axiom", "Parameter", "Conjecture", "Hypothesis"]
                .iter()
                .any(|k| l.trim_start().starts_with(k))));
        if !f.sent.is_empty() {
            assert!(f.text.contains("Print Assumptions attncheck_all."));
        }
        for (name, why) in &f.kernel_only {
            assert!(!why.is_empty(), "{name}");
        }
        let (k, n, _) = coq::coverage(&c);
        assert_eq!((k, n), (f.sent.len(), c.obligations.len()));
    }
}

#[test]
fn coverage_of_the_required_certificates_is_complete() {
    // alibi-window's mean-distance sums (223835 terms unrolled) go to Coq in
    // closed form (sumZ_exp_lin, sumZ_lin_exp_lin)
    for id in [
        "positional/alibi-window",
        "positional/alibi-slopes",
        "positional/alibi-tail-bound",
        "positional/sandwich-head-power-law",
        "clusters/paranormal-proof-gap",
        "sparse/ratio-lemma",
        "sparse/corollary-dimension",
        "sparse/counting-lower-bound",
    ] {
        let (k, n, ko) = coq::coverage(&cert(id));
        assert_eq!(k, n, "{id}: kernel-only {ko:?}");
    }
}

/// A certificate read from JSON text by the one reader.
fn v2(obligations: &str, data: &str) -> Certificate {
    let text = format!(
        r#"{{"format": "attncheck-certificate/6", "claim": "test/v2", "profile": "quick",
            "precision": 128, "hints": {{"t_star": "1/8"}},
            "obligations": [{obligations}]{data}}}"#
    );
    certificate::parse(Path::new("test.cert.json"), &text).unwrap_or_else(|e| panic!("{e}"))
}

/// A certificate built in memory, past the reader (which rejects an unknown
/// operator): what the translator does with formulas it cannot translate.
fn hand_built(obligations: &[(&str, &str)], data: BTreeMap<String, DataEntry>) -> Certificate {
    Certificate {
        format: certificate::FORMAT.into(),
        claim: "test/hand-built".into(),
        profile: Profile::Quick,
        precision: 128,
        hints: BTreeMap::new(),
        obligations: obligations
            .iter()
            .map(|(name, formula)| Obligation {
                name: name.to_string(),
                formula: formula.to_string(),
                expect: Expect::Holds,
            })
            .collect(),
        data,
    }
}

#[test]
fn coq_reads_certificates_with_the_one_reader() {
    // the reader's own messages: a format-1 file, an unknown field
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("old.cert.json");
    std::fs::write(
        &p,
        r#"{"format": "attncheck-certificate/1", "claim": "x", "precision": 64,
            "obligations": [{"name": "a", "formula": "(< 1 2)"}]}"#,
    )
    .unwrap();
    let e = coq::load(&p).unwrap_err().to_string();
    assert!(e.contains("expected `attncheck-certificate/6`"), "{e}");
    let text = std::fs::read_to_string(cert_path("clusters/paranormal"))
        .unwrap()
        .replacen("\"precision\"", "\"extra\": 1, \"precision\"", 1);
    std::fs::write(&p, text).unwrap();
    let e = coq::load(&p).unwrap_err().to_string();
    assert!(e.contains("extra"), "{e}");
    // a committed certificate reads the same through coq::load and the reader
    let p = cert_path("sparse/ratio-lemma");
    let text = std::fs::read_to_string(&p).unwrap();
    assert_eq!(
        coq::load(&p).unwrap(),
        certificate::parse(&p, &text).unwrap()
    );
}

#[test]
fn format_2_expect_fails_is_translated_as_the_negation() {
    let c = v2(
        r#"{"name": "T∞(1178) ≤ 1/100 is false", "formula": "(<= (exp (* -1/256 1178)) 1/100)", "expect": "fails"},
           {"name": "and", "formula": "(and (< 1 2) (<= 3 2))", "expect": "fails"},
           {"name": "forall", "formula": "(forall r 1 5 (< (cos r) 0))", "expect": "fails"}"#,
        "",
    );
    assert_eq!(c.obligations[0].expect, Expect::Fails);
    assert_eq!(c.hints["t_star"], "1/8");
    let f = coq::translate(&c);
    assert_eq!(f.sent.len(), 3, "{:?}", f.kernel_only);
    assert!(
        f.text.contains("(1 / 100) < (exp (((-1) / 256) * 1178))"),
        "{}",
        f.text
    );
    assert!(f.text.contains("(2 <= 1) \\/ (2 < 3)"), "{}", f.text);
    assert!(f
        .text
        .contains("exists v0 : Z, (1 <= v0 <= 5)%Z /\\ 0 <= (cos (IZR v0))"));
    assert!(f
        .text
        .contains("(* binders (Coq name = the certificate's): v0 = r *)"));
    if let Some(r) = coq_check(&c, "v2") {
        assert!(r.accepted() && r.proven() == 3, "{:?}", r.results);
    }
}

#[test]
fn sandwich_centred_summation_variable_never_captures_the_argument() {
    // regression: the Coq expansion of (sandwich-centred D F r) sums over its own
    // variable; a certificate binding r to that very name must still mean
    // cos(r·ω_0) − 1 < 0 for r = 1..3 (true), not cos(i·ω_i) − 1 at i = 0 (false)
    let c = v2(
        r#"{"name": "capture", "formula": "(forall sandwichI 1 3 (< (sandwich-centred 2 0 sandwichI) 0))", "expect": "holds"},
           {"name": "sum inside", "formula": "(forall sandwichI 1 2 (< (+ (sandwich-centred 4 1 sandwichI) (sum sandwichIx 0 0 (sandwich-centred 2 0 sandwichI))) 0))", "expect": "holds"},
           {"name": "zero", "formula": "(= (sandwich-centred 4 0 0) 0)", "expect": "holds"}"#,
        "",
    );
    let f = coq::translate(&c);
    assert_eq!(f.sent.len(), 3, "{:?}", f.kernel_only);
    if let Some(r) = coq_check(&c, "capture") {
        assert!(r.accepted() && r.proven() == 3, "{:?}", r.results);
    }
    // and B̃(0) = 0 exactly: claiming B̃(0) < 0 is rejected by Coq itself
    let bad = v2(
        r#"{"name": "zero", "formula": "(< (sandwich-centred 2 0 0) 0)", "expect": "holds"}"#,
        "",
    );
    rejected(&bad, "sandwich-zero");
}

#[test]
fn unknown_operators_and_data_kinds_are_listed_never_dropped() {
    // the layer map's dual functionals have no Coq translation, with the reason; an
    // operator the translator does not know has no Coq translation
    let layer = cert("clusters/growth-bound").data["X0"].clone();
    assert!(matches!(layer, DataEntry::Layer { .. }));
    let c = hand_built(
        &[
            ("a", "(<= (tanh 1) 1)"),
            ("b", "(<= (traj-max X) 1)"),
            ("c", "(<= (gram-max-abs X) 1)"),
            ("d", "(<= (layer-dual-sup X 0 1 0 1 0) 1)"),
        ],
        BTreeMap::from([("X".to_string(), layer)]),
    );
    let (k, n, ko) = coq::coverage(&c);
    assert_eq!((k, n), (0, 4));
    // what the kernel rejects (an unknown operator, a datum of the wrong kind)
    // is rejected by its own validation before the translator reads it
    assert_eq!(
        ko[0].1,
        "the kernel rejects the formula: at offset 4: unknown operator `tanh` in a term"
    );
    assert_eq!(
        ko[1].1,
        "the kernel rejects the formula: at offset 4: unknown operator `traj-max` in a term"
    );
    assert_eq!(
        ko[2].1,
        "the kernel rejects the formula: at offset 18: expected a sign matrix"
    );
    assert!(
        ko[3]
            .1
            .starts_with("`layer-dual-sup` has no Coq translation"),
        "{}",
        ko[3].1
    );
    // the datum itself is in the data file, as exact rationals
    let f = coq::translate(&c);
    assert!(f
        .data
        .unwrap()
        .contains("Definition data_0 : layerQ := LayerQ"));
}

/// The translator has no reader of the S-expressions of its own: it reads the typed
/// tree the kernel's validation builds (`expr::read`), which accepts and rejects
/// exactly what `expr::validate` does, so a formula the kernel rejects never reaches
/// Coq and every binder, range and literal is the one the kernel read.
#[test]
fn coq_reads_the_tree_the_kernels_validation_builds() {
    use attncheck::kernel::expr::{self, tree};
    let data = expr::Data::new();
    let e = expr::parse("(forall x 1 3 (not (<= (sum i 0 4 (* i x 1/2)) (neg pi))))").unwrap();
    let f = expr::read(&e, &data).unwrap();
    let tree::Formula::Forall(b, body) = &f else {
        panic!("{f:?}")
    };
    assert_eq!((b.var, b.lo, b.hi), ("x", 1, 3));
    let tree::Formula::Not(cmp) = &**body else {
        panic!("{body:?}")
    };
    let tree::Formula::Cmp(tree::Cmp::Le, tree::Term::Sum(s, t), tree::Term::Neg(p)) = &**cmp
    else {
        panic!("{cmp:?}")
    };
    assert_eq!((s.var, s.lo, s.hi), ("i", 0, 4));
    assert!(matches!(&**p, tree::Term::Pi));
    assert!(matches!(&**t, tree::Term::Mul(ts)
        if matches!(ts[..], [tree::Term::Var("i"), tree::Term::Var("x"), tree::Term::Lit("1/2")])));
    // what validation rejects, the tree reader rejects with the same error
    for bad in [
        "(forall x 3 2 (< x 1))",
        "(< (tanh 1) 2)",
        "(< y 1)",
        "(< (sum i 0 1) 1)",
        "(< (pow 2 99999999999) 1)",
        "(< (sandwich-centred 3 0 1) 1)",
    ] {
        let e = expr::parse(bad).unwrap();
        let want = expr::validate(&e, &data).unwrap_err();
        assert_eq!(expr::read(&e, &data).unwrap_err(), want, "{bad}");
        let c = hand_built(&[("a", bad)], BTreeMap::new());
        let (_, _, ko) = coq::coverage(&c);
        assert_eq!(
            ko[0].1,
            format!("the kernel rejects the formula: {want}"),
            "{bad}"
        );
    }
    // a layer operation with no Coq definition is named, never dropped
    let layer = cert("clusters/growth-bound").data["X0"].clone();
    let c = hand_built(
        &[("a", "(<= (layer-dual-inf X 0 1 0 1 0) 1)")],
        BTreeMap::from([("X".to_string(), layer)]),
    );
    let (k, _, ko) = coq::coverage(&c);
    assert_eq!(k, 0);
    assert!(
        ko[0]
            .1
            .starts_with("`layer-dual-inf` has no Coq translation"),
        "{}",
        ko[0].1
    );
}

#[test]
fn large_exact_sums_are_computed() {
    // (reversed ranges, which the kernel rejects, are never translated:
    // coq_soundness::reversed_ranges_never_reach_coq)
    let c = v2(
        r#"{"name": "big exact sum", "formula": "(= (sum i 1 100000 (pow i 2)) 333338333350000)", "expect": "holds"},
           {"name": "exact forall", "formula": "(forall n 1 3000 (>= (* n n) (- (* 2 n) 1)))", "expect": "holds"},
           {"name": "ceil and floor", "formula": "(and (= (ceil (/ 2552 7)) 365) (= (floor (ln 10)) 2) (= (ceil (* 8 (ln 10))) 19))", "expect": "holds"}"#,
        "",
    );
    let f = coq::translate(&c);
    assert_eq!(f.sent.len(), 3, "{:?}", f.kernel_only);
    assert!(
        f.text
            .contains("(sumZ 1 100000 (fun v0 => ((IZR v0) ^ 2)))"),
        "{}",
        f.text
    );
    if let Some(r) = coq_check(&c, "ranges") {
        assert!(r.accepted() && r.proven() == 3, "{:?}", r.results);
    }
}

#[test]
fn nested_forall_with_transcendental_body_is_not_rejected() {
    // regression: `unroll_forall` applied `Forall_rangeZ lo hi` leaving P to
    // unification, which failed when the body is itself a ∀ ("Unable to unify …
    // Forall P (rangeZ 1 2)"); and it took the list apart with `constructor`,
    // which also turned a body a ≤ b (a < b ∨ a = b) into a < b, so that
    // cos 0 ≤ 1 was rejected. Both were safe (rejected, never a false pass).
    let c = v2(
        r#"{"name": "nested", "formula": "(forall i 1 2 (forall j 1 3 (< (exp (neg (* i j))) 1)))", "expect": "holds"},
           {"name": "non-strict at equality", "formula": "(forall r 0 2 (<= (cos r) 1))", "expect": "holds"},
           {"name": "nested, refuted", "formula": "(forall i 1 2 (forall j 1 2 (< (exp (neg (* i j))) 1/5)))", "expect": "fails"}"#,
        "",
    );
    let f = coq::translate(&c);
    assert_eq!(f.sent.len(), 3, "{:?}", f.kernel_only);
    assert!(
        f.text.contains("unroll_forall; (unroll_forall;"),
        "{}",
        f.text
    );
    if let Some(r) = coq_check(&c, "nested-forall") {
        assert!(r.accepted() && r.proven() == 3, "{:?}", r.results);
    }
    // and a false nested bound is still rejected by Coq
    let bad = v2(
        r#"{"name": "nested, false", "formula": "(forall i 1 2 (forall j 1 2 (< (exp (neg (* i j))) 1/5)))", "expect": "holds"}"#,
        "",
    );
    rejected(&bad, "nested-forall-false");
}

#[test]
fn geometric_sums_go_to_coq_in_closed_form_proven_by_coq() {
    // Σ e^{ck} and Σ k·e^{ck} are replaced by their closed form through the
    // lemmas sumZ_exp_lin and sumZ_lin_exp_lin, which Coq applies to the sum as
    // stated (exponent c·k up to ring laws, c ≠ 0 by interval), so 100001 terms
    // are no longer beyond the budget; also with a negative lower end, e·k
    // order and a coefficient fixed by an enclosing forall
    let c = v2(
        r#"{"name": "plain", "formula": "(<= (abs (- (sum r 0 100000 (exp (neg (* 1/64 r)))) (/ 1 (- 1 (exp -1/64))))) 1/1000000)", "expect": "holds"},
           {"name": "weighted", "formula": "(forall m 1 2 (<= (abs (- (sum r -3 4000 (* (exp (/ (neg (* m r)) 8)) r)) (- (/ (exp (/ (neg m) 8)) (pow (- 1 (exp (/ (neg m) 8))) 2)) (+ (exp (/ m 8)) (* 2 (exp (/ (* 2 m) 8))) (* 3 (exp (/ (* 3 m) 8))))))) 1/1000000))", "expect": "holds"},
           {"name": "weighted, false", "formula": "(> (sum r 0 60000 (* r (exp (* r -1/64)))) 4100)", "expect": "fails"},
           {"name": "c = 0: unrolled", "formula": "(< (sum r 1 3 (exp (* 0 r))) 4)", "expect": "holds"}"#,
        "",
    );
    let f = coq::translate(&c);
    assert_eq!(f.sent.len(), 4, "{:?}", f.kernel_only);
    // one closed form per sum: plain, weighted at m = 1 and m = 2, weighted
    // false; none for c = 0
    assert_eq!(f.text.matches("apply (sumZ_").count(), 4, "{}", f.text);
    assert!(f
        .text
        .contains("sumZ 0 100000 (fun v0 => (exp (- ((1 / 64) * (IZR v0)))))"));
    assert!(f
        .text
        .contains("apply (sumZ_exp_lin 0 100000 100001 (- (1 / 64)))"));
    assert!(f.text.contains("apply (sumZ_lin_exp_lin (-3) 4000 4001"));
    if let Some(r) = coq_check(&c, "geometric") {
        assert!(r.accepted() && r.proven() == 4, "{:?}", r.results);
    }
    // a false bound on such a sum is rejected by Coq
    let bad = v2(
        r#"{"name": "weighted, false", "formula": "(> (sum r 0 60000 (* r (exp (* r -1/64)))) 4100)", "expect": "holds"}"#,
        "",
    );
    assert_eq!(coq::translate(&bad).sent.len(), 1);
    rejected(&bad, "geometric-false");
}

#[test]
fn tampered_mean_distance_bound_is_rejected_by_coq() {
    // The truncated mean Σ r e^−mr / Σ e^−mr is within relative ~1e-16 of
    // 1/(e^m − 1), not 1e-30: the closed forms must not let Coq prove it.
    let mut c = only(cert("positional/alibi-window"), "mean attended distance");
    let f = &mut c.obligations[0].formula;
    assert_eq!(f.matches("(* 1/1000000000 ").count(), 5, "{f}");
    *f = f.replace("(* 1/1000000000 ", "(* 1/1000000000000000000000000000000 ");
    assert_eq!(coq::coverage(&c).0, 1);
    rejected(&c, "tamper-mean");
}

/// The ALiBi tail bound proven once and for all (coq/AlibiTailBound.v): for all
/// m > 0, Δ ≥ 0, w ≥ 1, every query position i and all content within Δ,
/// T_w ≤ T^∞(w) ≤ e^Δ e^{−mw}, resting only on the standard reals.
#[test]
fn the_alibi_tail_bound_lemma_is_proven_in_coq() {
    let (_, text) = coq::LEMMAS
        .iter()
        .find(|(n, _)| *n == "AlibiTailBound")
        .expect("the lemma is shipped");
    assert!(!text.contains("Admitted") && !text.contains("Axiom"));
    // the statement: hypotheses and the bound T^∞(w), as the report states them
    for part in [
        "Theorem alibi_tail_bound : forall (m D c : R) (w i : Z) (a : Z -> R),",
        "0 < m -> 0 <= D -> (1 <= w)%Z ->",
        "(forall r, (0 <= r <= i)%Z -> c <= a r <= c + D) ->",
        "sumZ w i (fun r => exp (a r - m * IZR r) / sumZ 0 i (fun s => exp (a s - m * IZR s)))",
        "<= exp D * exp (- m * IZR w) / (1 - exp (- m * IZR w) + exp D * exp (- m * IZR w)).",
        "Print Assumptions alibi_tail_bounds.",
    ] {
        assert!(text.contains(part), "{part}");
    }
    if !have_coq("lemmas") {
        return;
    }
    let limits = coq::Limits::DEFAULT;
    let done = coq::check_lemmas(coq::LEMMAS, &limits).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(done.len(), coq::LEMMAS.len());
    for (name, axioms) in &done {
        assert!(
            axioms.iter().all(|a| coq::axiom_allowed(a)),
            "{name}: {axioms:?}"
        );
        assert!(axioms.contains(&"ClassicalDedekindReals.sig_forall_dec".to_string()));
        // what a report whose claim rests on a lemma states in its trust base
        // (coq::LEMMA_ASSUMPTIONS, clusters/boolean-limit's `[lemma]`) is exactly what
        // Coq prints for the lemma files
        if name.starts_with("Boolean") {
            let mut have = axioms.clone();
            have.sort();
            let mut want: Vec<String> = coq::LEMMA_ASSUMPTIONS
                .iter()
                .map(|a| a.to_string())
                .collect();
            want.sort();
            assert_eq!(have, want, "{name}");
        }
    }
    // a false, tighter bound (e^Δ x^w / (1 + e^Δ x^w): at Δ = 0 the tail tends
    // to x^w) does not compile, and an admitted step is caught by the axiom check
    let tighter = text.replace(
        "<= exp D * exp (- m * IZR w) / (1 - exp (- m * IZR w) + exp D * exp (- m * IZR w)).\nProof.",
        "<= exp D * exp (- m * IZR w) / (1 + exp D * exp (- m * IZR w)).\nProof.",
    );
    assert_ne!(&tighter, text);
    let e = coq::check_lemmas(&[("AlibiTailBound", &tighter)], &limits).unwrap_err();
    assert!(matches!(e, coq::CoqError::Coq { .. }), "{e}");
    let (a, b) = (text.find("Proof.").unwrap(), text.find("Qed.").unwrap());
    let admitted = format!("{}Admitted.{}", &text[..a], &text[b + 4..]);
    let e = coq::check_lemmas(&[("AlibiTailBound", &admitted)], &limits).unwrap_err();
    assert!(e.to_string().contains("beyond the standard reals"), "{e}");
}

/// The Boolean limit's statements, as docs/coq.md and docs/papers/clusters.md document them
/// (coq/BooleanLimit.v, issue 39): Coq checks that each theorem has exactly this type.
const BOOLEAN_LIMIT_STATEMENTS: &[(&str, &str)] = &[
    (
        "order_and_gaps",
        r"forall (n : nat) (h : R) (y : nat -> R), 0 <= h ->
           (forall i, (S i < n)%nat -> y i <= y (S i)) ->
           forall k i, (S i < n)%nat ->
             yiter n h y k i <= yiter n h y k (S i) /\
             y (S i) - y i <= yiter n h y k (S i) - yiter n h y k i /\
             yiter n h y k (S i) - yiter n h y k i <= yiter n h y (S k) (S i) - yiter n h y (S k) i",
    ),
    (
        "boolean_limit_rate",
        r"forall (n : nat) (h A : R) (y : nat -> R),
           (2 <= n)%nat -> 0 <= h -> 0 < A -> 2 * (INR n - 1) <= A ^ 2 * exp (A ^ 2 / 2 + 1) ->
           (forall i, (S i < n)%nat -> y i < y (S i)) ->
           forall i j k, (i < n)%nat -> (j < n)%nat ->
             (A < y i ->
                Rabs (yattn n (yiter n h y k) i j - (if Nat.eqb j (n - 1) then 1 else 0))
                <= (INR n - 1) * exp (- ((1 + h / 2) ^ k * y i * (y (n - 1)%nat - y (n - 2)%nat)))) /\
             (y i < - A ->
                Rabs (yattn n (yiter n h y k) i j - (if Nat.eqb j 0 then 1 else 0))
                <= (INR n - 1) * exp (- ((1 + h / 2) ^ k * (- y i) * (y 1%nat - y 0%nat))))",
    ),
    (
        "boolean_limit_structure",
        r"forall (n : nat) (h A : R) (y : nat -> R) (m : nat) (Pstar : nat -> nat -> R),
           (2 <= n)%nat -> 0 < h -> 0 < A -> 2 * (INR n - 1) <= A ^ 2 * exp (A ^ 2 / 2 + 1) ->
           (forall i, (S i < n)%nat -> y i < y (S i)) ->
           (forall i, (i < n)%nat -> i <> m -> y i < - A \/ A < y i) ->
           (forall i j, (i < n)%nat -> (j < n)%nat ->
              Un_cv (fun k => yattn n (yiter n h y k) i j) (Pstar i j)) ->
           (forall i j, (i < n)%nat -> (j < n)%nat -> y i < - A ->
              Pstar i j = if Nat.eqb j 0 then 1 else 0) /\
           (forall i j, (i < n)%nat -> (j < n)%nat -> A < y i ->
              Pstar i j = if Nat.eqb j (n - 1) then 1 else 0) /\
           (forall i, (i < n)%nat ->
              (forall j, (j < n)%nat -> Pstar i j = if Nat.eqb j 0 then 1 else 0) \/
              (forall j, (j < n)%nat -> Pstar i j = if Nat.eqb j (n - 1) then 1 else 0) \/
              (forall j, (j < n)%nat -> Pstar i j = Pstar m j)) /\
           (forall i j, (i < n)%nat -> (j < n)%nat -> i <> m -> j <> 0%nat -> j <> (n - 1)%nat ->
              Pstar i j = 0) /\
           (forall i l, (i < n)%nat -> (l < n)%nat -> y i < - A -> - A <= y l -> (i < l)%nat) /\
           (forall i l, (i < n)%nat -> (l < n)%nat -> y i <= A -> A < y l -> (i < l)%nat)",
    ),
    (
        "boolean_limit_symmetric",
        r"forall (n c : nat) (h A : R) (y : nat -> R),
           n = (2 * c + 1)%nat -> (1 <= c)%nat ->
           0 < h -> 0 < A -> 2 * (INR n - 1) <= A ^ 2 * exp (A ^ 2 / 2 + 1) ->
           (forall i, (S i < n)%nat -> y i < y (S i)) ->
           (forall j, (j < n)%nat -> y (n - 1 - j)%nat = - y j) ->
           (forall i, (i < n)%nat -> i <> c -> y i < - A \/ A < y i) ->
           (forall k, yiter n h y k c = 0 /\
              forall j, (j < n)%nat -> yattn n (yiter n h y k) c j = / INR n) /\
           (forall i j, (i < n)%nat -> (j < n)%nat ->
              Un_cv (fun k => yattn n (yiter n h y k) i j)
                (if Nat.ltb i c then (if Nat.eqb j 0 then 1 else 0)
                 else if Nat.eqb i c then / INR n
                 else (if Nat.eqb j (n - 1) then 1 else 0)))",
    ),
    (
        "layer_iter_unit",
        r"forall (h : R) (n : nat) (y : nat -> R) (k : nat), (0 < n)%nat ->
           Nat.iter k (layer_stepR [[1]] [[1]] [[1]] h) (map (fun b => [b]) (yvals n y))
           = map (fun b => [b]) (yvals n (yiter n h y k))",
    ),
];

/// The Boolean limit for the discrete map the claim runs, proven once and for all
/// (coq/BooleanLimit.v): order kept and gaps nondecreasing for every h ≥ 0; above the
/// threshold A (0 < A, 2(n − 1) ≤ A² e^{A²/2+1}) a row converges to e_1 or e_n within
/// (n − 1) exp(−(1 + h/2)^k |y_i| g); the limit's rows are e_1, e_n and at most one other.
#[test]
fn the_boolean_limit_lemma_is_proven_in_coq() {
    let (_, text) = coq::LEMMAS
        .iter()
        .find(|(n, _)| *n == "BooleanLimit")
        .expect("the lemma is shipped");
    assert!(!text.contains("Admitted") && !text.contains("Axiom"));
    // the map, as the claim runs it (Q = K = V = 1, step h), and one Print Assumptions
    // for every theorem
    for part in [
        "Definition ypart (n : nat) (y : nat -> R) (s : R) : R := bsum n (fun l => exp (s * y l)).",
        "Definition yattn (n : nat) (y : nat -> R) (i j : nat) : R := exp (y i * y j) / ypart n y (y i).",
        "Definition ystep (n : nat) (h : R) (y : nat -> R) (i : nat) : R :=\n  y i + h * bsum n (fun j => yattn n y i j * y j).",
        "Definition yiter (n : nat) (h : R) (y : nat -> R) (k : nat) : nat -> R := Nat.iter k (ystep n h) y.",
        "(order_and_gaps, boolean_limit_rate, boolean_limit_rows, boolean_limit_structure,\n   boolean_limit_escaped, boolean_limit_symmetric, symmetric_limit_rank3,\n   threshold_sqrt_2ln, yiter_plus, layer_iter_unit, layer_iter_rescaled).",
        "Print Assumptions boolean_limit_lemmas.",
    ] {
        assert!(text.contains(part), "{part}");
    }
    if !have_coq("boolean limit") {
        return;
    }
    let limits = coq::Limits::DEFAULT;
    // each theorem has the documented statement: a definition typed by it must check
    let mut documented = text.to_string();
    for (k, (name, statement)) in BOOLEAN_LIMIT_STATEMENTS.iter().enumerate() {
        documented.push_str(&format!(
            "\nDefinition documented_{k} : {statement} := {name}.\n"
        ));
    }
    let done = coq::check_lemmas(&[("BooleanLimit", &documented)], &limits)
        .unwrap_or_else(|e| panic!("{e}"));
    let axioms = &done[0].1;
    assert!(axioms.iter().all(|a| coq::axiom_allowed(a)), "{axioms:?}");
    assert!(axioms.contains(&"ClassicalDedekindReals.sig_forall_dec".to_string()));
    // a statement other than the documented one does not check: the rate with 1 + h
    let (_, rate) = BOOLEAN_LIMIT_STATEMENTS[1];
    let faster = format!(
        "{text}\nDefinition documented_faster : {} := boolean_limit_rate.\n",
        rate.replace("(1 + h / 2) ^ k", "(1 + h) ^ k")
    );
    let e = coq::check_lemmas(&[("BooleanLimit", &faster)], &limits).unwrap_err();
    assert!(matches!(e, coq::CoqError::Coq { .. }), "{e}");
    // a smaller A is false: with 100 A² e^{A²/2+1} ≥ 2(n − 1), A = 1/8 and n = 3 qualify,
    // but from y = (−2, 0.13, 1) (h = 1/10) token 1's row tends to e_1, not e_n
    // (docs/papers/clusters.md); the proof does not go through
    let threshold = "2 * (INR n - 1) <= A ^ 2 * exp (A ^ 2 / 2 + 1)";
    assert_eq!(text.matches(threshold).count(), 8);
    let smaller = text.replace(
        threshold,
        "2 * (INR n - 1) <= 100 * A ^ 2 * exp (A ^ 2 / 2 + 1)",
    );
    let e = coq::check_lemmas(&[("BooleanLimit", &smaller)], &limits).unwrap_err();
    assert!(matches!(e, coq::CoqError::Coq { .. }), "{e}");
    // without the order the rows theorem is false (y = (1, 2, −3): row 0 tends to e at
    // index 1, the largest token, not at index n − 1); it does not compile
    let (a, b) = (
        text.find("Theorem boolean_limit_rows").unwrap(),
        text.find("Theorem boolean_limit_structure").unwrap(),
    );
    let order = "  (forall i, (S i < n)%nat -> y i < y (S i)) ->\n";
    assert_eq!(text[a..b].matches(order).count(), 1);
    let unordered = format!(
        "{}{}{}",
        &text[..a],
        text[a..b].replace(order, ""),
        &text[b..]
    );
    let e = coq::check_lemmas(&[("BooleanLimit", &unordered)], &limits).unwrap_err();
    assert!(matches!(e, coq::CoqError::Coq { .. }), "{e}");
    // an admitted step is caught by the axiom check
    let p = text.find("Theorem boolean_limit_rate").unwrap();
    let (a, b) = (
        p + text[p..].find("Proof.").unwrap(),
        p + text[p..].find("Qed.").unwrap(),
    );
    let admitted = format!("{}Admitted.{}", &text[..a], &text[b + 4..]);
    let e = coq::check_lemmas(&[("BooleanLimit", &admitted)], &limits).unwrap_err();
    assert!(e.to_string().contains("beyond the standard reals"), "{e}");
    assert!(e.to_string().contains("boolean_limit_rate"), "{e}");
}

/// The numbers docs/papers/clusters.md gives beside coq/BooleanLimit.v (f64 readings of
/// documentation, not certificates): the least thresholds A_n^D = √(2 W((n − 1)/e)), where
/// φ(A) = A² e^{A²/2+1} − 2(n − 1), increasing for A > 0, changes sign; and the weakened
/// threshold's counterexample, y = (−2, 0.13, 1) with h = 1/10, whose middle token is below
/// −1.2 < −A_3^D after 11 steps (from there the lemma sends its row to e_1).
#[test]
fn the_boolean_limit_threshold_numbers_are_as_documented() {
    for (n, a) in [
        (2.0, 0.746276815613),
        (3.0, 0.962346625043),
        (5.0, 1.19818572224),
        (8.0, 1.39509050091),
        (10.0, 1.48391576397),
        (20.0, 1.74554113692),
    ] {
        let phi = |a: f64| a * a * (a * a / 2.0 + 1.0).exp() - 2.0 * (n - 1.0);
        assert!(phi(a * (1.0 - 1e-10)) < 0.0, "n = {n}");
        assert!(phi(a * (1.0 + 1e-10)) > 0.0, "n = {n}");
    }
    // the weakened condition 2(n − 1) ≤ 100 A² e^{A²/2+1} admits A = 1/8 at n = 3
    let a: f64 = 0.125;
    assert!(100.0 * a * a * (a * a / 2.0 + 1.0).exp() >= 4.0);
    let mut y = [-2.0f64, 0.13, 1.0];
    for _ in 0..11 {
        let next: Vec<f64> = y
            .iter()
            .map(|&s| {
                let top = y.iter().map(|&v| s * v).fold(f64::MIN, f64::max);
                let w: Vec<f64> = y.iter().map(|&v| (s * v - top).exp()).collect();
                let z: f64 = w.iter().sum();
                s + 0.1 * w.iter().zip(&y).map(|(w, v)| w * v).sum::<f64>() / z
            })
            .collect();
        y.copy_from_slice(&next);
    }
    assert!(y[0] < y[1] && y[1] < y[2], "{y:?}");
    assert!(y[1] < -1.2 && y[1] > -1.3, "{y:?}");
}

/// A long sum of logarithms (ln n! beyond 4096 terms) goes to Coq as the sum of
/// the logarithms of block products that Coq computes itself (`sumZ_ln_blocks`):
/// a few hundred terms for `interval` instead of one per i. A false bound is
/// rejected by Coq.
#[test]
fn long_sums_of_logarithms_go_to_coq_by_blocks() {
    // ln 5000! = 37591.14350887677…
    let c = v2(
        r#"{"name": "ln 5000! from below", "formula": "(< 37591143/1000 (sum i 2 5000 (ln i)))", "expect": "holds"},
           {"name": "ln 5000! from above", "formula": "(< (sum i 1 5000 (ln i)) 37591144/1000)", "expect": "holds"}"#,
        "",
    );
    let f = coq::translate(&c);
    assert_eq!(f.sent.len(), 2, "{:?}", f.kernel_only);
    // 5000 < 2^13: blocks of ⌊256/13⌋ = 19 factors
    assert!(f.text.contains("(sumZ_ln_blocks 2 5000 19)"), "{}", f.text);
    assert!(f.text.contains("(sumZ_ln_blocks 1 5000 19)"));
    if let Some(r) = coq_check(&c, "ln-blocks") {
        assert!(r.accepted() && r.proven() == 2, "{:?}", r.results);
    }
    let tight = v2(
        r#"{"name": "ln 5000! too small", "formula": "(< (sum i 2 5000 (ln i)) 37591143/1000)", "expect": "holds"}"#,
        "",
    );
    assert!(coq::translate(&tight).text.contains("sumZ_ln_blocks"));
    rejected(&tight, "ln-blocks-false");
}

/// A sum of logarithms beyond 1024 blocks is split into chunks of 100 blocks
/// (`sumZ_split2`), each enclosed by `interval_intro` and named (`ln_chunk`),
/// so Coq's time grows linearly; beyond 8192 blocks it stays kernel-only with
/// the reason. (Coq itself proves such chunks for ln 65536! in `make coq`:
/// sparse/counting-lower-bound.)
#[test]
fn longer_sums_of_logarithms_go_to_coq_in_chunks() {
    let c = v2(
        r#"{"name": "ln 20000!", "formula": "(< (abs (- (sum i 2 20000 (ln i)) 178075622/1000)) 1/1000)", "expect": "holds"}"#,
        "",
    );
    let f = coq::translate(&c);
    assert_eq!(f.sent.len(), 1, "{:?}", f.kernel_only);
    // 1177 blocks of 17 factors (20000 < 2^15), 12 chunks of 1700 integers
    assert_eq!(f.text.matches("(ln_chunk ").count(), 12, "{}", f.text);
    assert!(f
        .text
        .contains("(rewrite (sumZ_split2 2 1701 1702 20000) by"));
    assert!(f
        .text
        .contains("(rewrite (sumZ_split2 17002 18701 18702 20000) by"));
    assert!(f.text.contains("(ln_chunk 18702%Z 20000%Z 17%Z lnc_0_12)"));
    let big = v2(
        r#"{"name": "ln 200000!", "formula": "(< (sum i 2 200000 (ln i)) 10000000)", "expect": "holds"}"#,
        "",
    );
    let f = coq::translate(&big);
    assert_eq!(f.sent.len(), 0);
    assert_eq!(
        f.kernel_only[0].1,
        "the sum of ln i for i = 2..200000 in blocks is 14286 logarithms for interval, beyond the Coq budget (8192)"
    );
}

/// Integers above 64 bits are written in hexadecimal (Coq parses a decimal
/// numeral in quadratic time) and those above 4096 bits are named once
/// (`Definition big_k_j`), however often the formula writes them.
#[test]
fn big_numbers_are_written_in_hex_and_named_once() {
    let n = "141246703213942603683520966701614733366889617518454111681368808585711816984270751255808912631671152637335603208431366082764203838069979338335971185726639923431051777851865399011877999645131707069373498212631323752553111215372844035950900535954860733418453405575566736801565587405464699640499050849699472357900905617571376618228216434213181520991556677126498651782204174061830939239176861341383294018240225838692725596147005144243281075275629495339093813198966735633606329691023842454125835888656873133981287240980008838073668221804264432910894030789020219440578198488267339768238872279902157420307247570510423845868872596735891805818727796435753018518086641356012851302546726823009250218328018251907340245449863183265637987862198511046362985461949587281119139907228004385942880953958816554567625296086916885774828934449941362416588675326940332561103664556982622206834474219811081872404929503481991376740379825998791411879802717583885498575115299471743469241117070230398103378615232793710290992656444842895511830355733152020804157920090041811951880456705515468349446182731742327685989277607620709525878318766488368348965015474997864119765441433356928012344111765735336393557879214937004347568208665958717764059293592887514292843557047089164876483116615691886203812997555690171892169733755224469032475078797830901321579940127337210694377283439922280274060798234786740434893458120198341101033812506720046609891160700284002100980452964039788704335302619337597862052192280371481132164147186514169090917191909377";
    let c = v2(
        &format!(
            r#"{{"name": "2^5000 < 2^5000 + 1 <= 2^5001", "formula": "(and (< (pow 2 5000) {n}) (<= {n} (pow 2 5001)))", "expect": "holds"}},
               {{"name": "2^70", "formula": "(= (pow 2 70) 1180591620717411303424)", "expect": "holds"}}"#
        ),
        "",
    );
    let f = coq::translate(&c);
    assert_eq!(f.sent.len(), 2, "{:?}", f.kernel_only);
    let hex = format!("0x1{}1", "0".repeat(1249));
    assert_eq!(
        f.text.matches(&hex).count(),
        1,
        "the 5001-bit literal is written once"
    );
    assert!(f
        .text
        .contains(&format!("Definition big_1_1 : Z := {hex}.")));
    assert!(f.text.contains("(IZR big_1_1)") && f.text.contains("big_1_1%Z"));
    assert!(f.text.contains("0x400000000000000000") && f.text.contains("(2 ^ 70)"));
    if let Some(r) = coq_check(&c, "big-numbers") {
        assert!(r.accepted() && r.proven() == 2, "{:?}", r.results);
    }
    let flipped = v2(
        &format!(r#"{{"name": "flipped", "formula": "(< {n} (pow 2 5000))", "expect": "holds"}}"#),
        "",
    );
    rejected(&flipped, "big-numbers-flipped");
}

/// The claim id of a committed certificate path (`reports/<paper>/<claim>.cert.json`).
fn claim_of(p: &Path) -> String {
    let rel = p.strip_prefix(root().join("reports")).unwrap();
    rel.to_string_lossy()
        .trim_end_matches(".cert.json")
        .replace('\\', "/")
}

#[test]
fn the_ci_subset_is_fixed_and_named() {
    // every certificate CI leaves to `make coq` is a committed one, named once
    // with the measured reason
    let ids: Vec<String> = committed().iter().map(|p| claim_of(p)).collect();
    assert!(!coq::NOT_IN_CI.is_empty());
    for (i, (id, why)) in coq::NOT_IN_CI.iter().enumerate() {
        assert!(
            ids.iter().any(|c| c == id),
            "{id} is not a committed certificate"
        );
        assert!(
            why.contains(" s "),
            "{id}: the reason states the measured time: {why}"
        );
        assert!(!coq::in_ci(id));
        assert!(
            coq::NOT_IN_CI[..i].iter().all(|(o, _)| o != id),
            "{id} twice"
        );
    }
    // the certificates the issue requires to be fully proven in Coq stay in CI,
    // except counting-lower-bound (its Coq time alone is half CI's budget)
    for id in [
        "positional/alibi-window",
        "positional/alibi-slopes",
        "positional/alibi-tail-bound",
        "positional/sandwich-head-power-law",
        "clusters/paranormal-proof-gap",
        "sparse/ratio-lemma",
        "sparse/corollary-dimension",
    ] {
        assert!(coq::in_ci(id), "{id}");
    }
}

/// Every committed report states the Coq coverage of its certificate: the
/// "k of n" of the committed report is the translation's, for every committed
/// certificate (without running Coq).
#[test]
fn every_committed_report_states_its_certificates_coq_coverage() {
    for p in committed() {
        let c = coq::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let (sent, n, ko) = coq::coverage(&c);
        let report = p.with_file_name(
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .replace(".cert.json", ".json"),
        );
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(
            (r.pointer("/coq/sent"), r.pointer("/coq/obligations")),
            (Some(&sent.into()), Some(&n.into())),
            "{}: the committed report's Coq figure is not the translation's {sent} of {n}",
            report.display()
        );
        // and the kernel-only obligations with their reasons
        let listed: Vec<(String, String)> = r
            .pointer("/coq/kernel_only")
            .and_then(|k| k.as_array())
            .map(|k| {
                k.iter()
                    .map(|x| {
                        (
                            x["name"].as_str().unwrap_or_default().to_string(),
                            x["reason"].as_str().unwrap_or_default().to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(listed, ko, "{}", report.display());
    }
}

/// `attncheck verify --coq` on every committed certificate CI re-proves (all
/// but [`coq::NOT_IN_CI`], which `make coq` re-proves), as CI runs it: the
/// statement rebuilt from the spec and matched, exit 0, nothing rejected, and Coq
/// proves exactly the obligations the translation sends — the k of each report's
/// "independently proven in Coq: k of n". The compiled library is cached in a
/// fresh cache directory shared by the threads: the first certificate is re-proven
/// alone, so that its run compiles and stores the library and every other run reuses
/// it (started together, each thread compiled it: 5 CPU-s more, bench/ci-time.md
/// session 33).
#[test]
fn verify_coq_re_proves_the_ci_subset() {
    if !coq::installed() {
        eprintln!(
            "skipping verify_coq_re_proves_the_ci_subset: coqc not found, so the committed \
             certificates were NOT re-proven in Coq (install: {}; `make test` and CI install it)",
            coq::INSTALL_HINT
        );
        return;
    }
    let all: Vec<PathBuf> = committed()
        .into_iter()
        .filter(|p| coq::in_ci(&claim_of(p)))
        .collect();
    assert_eq!(
        all.len() + coq::NOT_IN_CI.len(),
        committed().len(),
        "{all:?}"
    );
    for (id, why) in coq::NOT_IN_CI {
        eprintln!("{id}: not re-proven in Coq here ({why}); `make coq` re-proves it");
    }
    let cache = tempfile::tempdir().unwrap();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(all.len());
    let failures = std::sync::Mutex::new(Vec::new());
    if let Err(e) = verify_coq(&all[0], cache.path()) {
        failures.lock().unwrap().push(e);
    }
    let next = std::sync::atomic::AtomicUsize::new(1);
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(p) = all.get(i) else { break };
                if let Err(e) = verify_coq(p, cache.path()) {
                    failures.lock().unwrap().push(e);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The committed certificate whose `verify --coq` the CI subset reads as JSON
/// (the others as text): it has obligations of both checkers, Coq-proven and
/// kernel-only, so the JSON's per-obligation `checker` and `coq` fields are
/// checked for both. (This replaced a separate JSON test that re-proved
/// positional/alibi-window, 14 CPU-s of Coq, already re-proven here.)
const JSON_CHECKED: &str = "positional/length-usage";

/// One `verify --coq` run (statement checked against the committed spec), checked
/// against the translation: the text summary, or for [`JSON_CHECKED`] the JSON
/// fields of every obligation.
fn verify_coq(p: &Path, cache: &Path) -> Result<(), String> {
    let c = coq::load(p).map_err(|e| e.to_string())?;
    let json = c.claim == JSON_CHECKED;
    let out = bin()
        .env("XDG_CACHE_HOME", cache)
        .args(["verify", "--coq"])
        .args(json.then_some("--json"))
        .arg(p)
        .output()
        .unwrap();
    let text = output_text(&out);
    let at = format!("{}: verify --coq", p.display());
    if out.status.code() != Some(0) {
        return Err(format!("{at} exited {:?}:\n{text}", out.status.code()));
    }
    let (sent, n, ko) = coq::coverage(&c);
    if json {
        return verify_coq_json(&c, &text, sent, &ko).map_err(|e| format!("{at} --json: {e}"));
    }
    let summary = format!(
        " ({n} obligations at {} bits: {sent} proven by Coq and the kernel, {} by the kernel only, \
         0 rejected by Coq; statement rebuilt from ",
        c.precision,
        ko.len()
    );
    if !text.contains(&summary) || !text.contains(&format!("{}: ", c.claim)) {
        return Err(format!("{at}: expected `{summary}` in:\n{text}"));
    }
    if text.matches(" Coq + kernel  ").count() != sent {
        return Err(format!(
            "{at}: not every obligation sent was proven:\n{text}"
        ));
    }
    // clusters/boolean-limit: the limit of every witness, a Coq theorem from
    // coq/BooleanLimit.v (issue 39)
    let st = c.statement(p).map_err(|e| e.to_string())?;
    let witnesses = coq::instance::witnesses(&c, &st.data).len();
    let proven = text
        .matches("proven   Coq          the Boolean limit of ")
        .count();
    if proven != witnesses {
        return Err(format!(
            "{at}: the Boolean limit of {proven} of {witnesses} witnesses proven in Coq:\n{text}"
        ));
    }
    eprintln!("{}: {sent} of {n} obligations proven by Coq", c.claim);
    Ok(())
}

/// `verify --coq --json` names the checker of every obligation: `Coq + kernel` for
/// each one the translation sends, `kernel only` with the translation's reason for
/// the others.
fn verify_coq_json(
    c: &attncheck::certificate::Certificate,
    text: &str,
    sent: usize,
    kernel_only: &[(String, String)],
) -> Result<(), String> {
    let j: serde_json::Value = serde_json::from_str(&text[..text.rfind('}').unwrap_or(0) + 1])
        .map_err(|e| format!("not JSON ({e}):\n{text}"))?;
    let want = |field: &str, v: serde_json::Value| {
        if j[field] == v {
            Ok(())
        } else {
            Err(format!("`{field}` is {} (expected {v}):\n{text}", j[field]))
        }
    };
    want("claim", c.claim.clone().into())?;
    want("statement_checked", true.into())?;
    want("exit_code", 0.into())?;
    want("proven_by_coq", sent.into())?;
    want("kernel_only", kernel_only.len().into())?;
    want("rejected_by_coq", 0.into())?;
    let obligations = j["obligations"].as_array().ok_or("no obligations")?;
    if obligations.len() != c.obligations.len() || sent == 0 || kernel_only.is_empty() {
        return Err(format!(
            "{} obligations in the JSON, {} in the certificate, {sent} sent: this check needs both checkers",
            obligations.len(),
            c.obligations.len()
        ));
    }
    for (o, ob) in obligations.iter().zip(&c.obligations) {
        let reason = kernel_only.iter().find(|(name, _)| *name == ob.name);
        let (checker, coq) = match reason {
            Some(_) => ("kernel only", "kernel-only"),
            None => ("Coq + kernel", "proven"),
        };
        if o["name"] != ob.name.as_str()
            || o["checker"] != checker
            || o["coq"] != coq
            || o["as_expected"] != true
            || reason.is_some_and(|(_, why)| o["coq_reason"] != why.as_str())
        {
            return Err(format!(
                "obligation `{}`: expected checker `{checker}`, coq `{coq}`, reason {:?}, got {o}",
                ob.name,
                reason.map(|r| &r.1)
            ));
        }
    }
    eprintln!(
        "{}: {sent} of {} obligations proven by Coq (JSON)",
        c.claim,
        c.obligations.len()
    );
    Ok(())
}

#[test]
fn verify_coq_without_coqc_says_how_to_install_it() {
    let empty = tempfile::tempdir().unwrap();
    let out = bin()
        .env("PATH", empty.path())
        .args(["verify", "--coq"])
        .arg(cert_path("clusters/paranormal"))
        .output()
        .unwrap();
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains(coq::INSTALL_HINT), "{text}");
}

#[test]
fn tampered_bound_is_rejected_by_coq() {
    // T^∞(1178) ≤ 1/100 is false: the window is 1179.
    let mut c = only(
        cert("positional/alibi-window"),
        "T^∞(w_ε) ≤ ε for every claimed window",
    );
    assert!(c.obligations[0].formula.contains("1179"));
    c.obligations[0].formula = c.obligations[0].formula.replace("1179", "1178");
    rejected(&c, "tamper-bound");
}

#[test]
fn tampered_expectation_is_rejected_by_coq() {
    // A true bound claimed to fail: Coq must not prove the negation.
    let mut c = only(
        cert("positional/alibi-window"),
        "e^−512m at m = 2^-8 equals",
    );
    c.obligations[0].expect = Expect::Fails;
    rejected(&c, "tamper-expect");
}

#[test]
fn tampered_t_star_is_rejected_by_coq() {
    let mut c = only(cert("sparse/ratio-lemma"), "t* = max");
    assert!(c.obligations[0].formula.contains("49/256"));
    c.obligations[0].formula = c.obligations[0].formula.replace("49/256", "48/256");
    rejected(&c, "tamper-tstar");
}

#[test]
fn flipped_sign_in_s_is_rejected_by_coq() {
    let mut c = only(cert("sparse/ratio-lemma"), "t* = max");
    let entry = c.data.get_mut("S").expect("no S");
    let Ok(Datum::Signs(s)) = entry.to_datum() else {
        panic!("S is not a sign matrix")
    };
    let (n, d) = (s.n(), s.d());
    let (m, (l, j)) = s.max_abs_offdiag().unwrap();
    // flip one sign of row l where s_l·s_j disagrees with G_lj: |G_lj| grows by 2
    let g = s.inner(l, j);
    let col = (0..d)
        .find(|&col| (s.sign(l, col) * s.sign(j, col) > 0) != (g > 0))
        .unwrap();
    let mut words: Vec<u64> = (0..n).flat_map(|r| s.row(r).to_vec()).collect();
    words[l * d.div_ceil(64) + col / 64] ^= 1 << (col % 64);
    *entry = DataEntry::from_signs(&SignMatrix::from_words(n, d, words).unwrap());
    assert_eq!(m, 98);
    rejected(&c, "tamper-sign");
}

/// Each report with a certificate states "independently proven in Coq: k of n
/// obligations" (k from the translation of the certificate the run produced,
/// so the report is the same with or without coqc), the kernel-only
/// obligations with their reason and whether CI re-proves the certificate; the
/// index has a column for the figure. A claim without a certificate has
/// neither.
#[test]
fn reports_state_the_coq_coverage_of_their_certificate() {
    use super::util::run_quick;
    let coverage_of = |run: &attncheck::app::ClaimRun| {
        let c = run
            .report
            .coq
            .clone()
            .expect("a certified claim has a Coq figure");
        let cert: Certificate =
            serde_json::from_str(&run.certificate.as_ref().expect("a certificate").1).unwrap();
        let (k, n, ko) = coq::coverage(&cert);
        assert_eq!((c.sent, c.obligations), (k, n));
        assert_eq!(
            c.kernel_only
                .iter()
                .map(|x| (x.name.clone(), x.reason.clone()))
                .collect::<Vec<_>>(),
            ko
        );
        (k, n, ko)
    };
    let run = run_quick("positional/alibi-window");
    let (k, n, ko) = coverage_of(&run);
    assert_eq!((k, n), (6, 6), "{ko:?}");
    let md = &run.markdown;
    assert!(
        md.contains("**Independently proven in Coq: 6 of 6 obligations.**"),
        "{md}"
    );
    assert!(md.contains("`attncheck verify --coq reports/positional/alibi-window.cert.json`"));
    assert!(md.contains("; CI re-proves this certificate)"), "{md}");
    assert!(md.contains("Kernel-only obligations: none."), "{md}");
    let json = run.report.to_json();
    assert!(json.contains("\"coq\": {\n    \"sent\": 6,\n    \"obligations\": 6,"));

    // a certificate CI leaves to `make coq` (fully proven there since the eighth session)
    let counting = run_quick("sparse/counting-lower-bound");
    let (k, n, ko) = coverage_of(&counting);
    assert_eq!((k, n, ko.len()), (26, 26, 0), "{ko:?}");
    assert!(!coq::in_ci("sparse/counting-lower-bound"));
    let md = &counting.markdown;
    assert!(
        md.contains("**Independently proven in Coq: 26 of 26 obligations.**"),
        "{md}"
    );
    assert!(
        md.contains("; `make coq` re-proves this certificate; CI does not"),
        "{md}"
    );
    assert!(md.contains("Kernel-only obligations: none."), "{md}");

    let none = run_quick("clusters/open-problems");
    assert!(none.certificate.is_none() && none.report.coq.is_none());
    assert!(!none.markdown.contains("proven in Coq"));
    assert!(!none.report.to_json().contains("\"coq\""));

    let index = attncheck::report::index_markdown(&[
        none.report.clone(),
        run.report.clone(),
        counting.report.clone(),
    ]);
    assert!(
        index.contains("| profile | proven in Coq | key figure |"),
        "{index}"
    );
    assert!(index.contains("| quick | 6 of 6 |"), "{index}");
    assert!(index.contains("| quick | 26 of 26 |"), "{index}");
    assert!(index.contains("| quick | — |"), "{index}");

    // `run --check` names a change of the figure
    let mut fewer = run.report.clone();
    fewer.coq.as_mut().unwrap().sent = 5;
    assert_eq!(
        attncheck::report::diff(&run.report, &fewer),
        ["Coq coverage changed from 6 of 6 to 5 of 6 obligations"]
    );
}
