//! The Coq translation (`attncheck::coq`): every committed certificate
//! translates; Coq proves the committed certificates; tampering is caught by
//! Coq itself (the certificate is translated directly, with no spec check).
//!
//! Tests that run `coqc` print a message and pass when it is not installed
//! (`apt-get install coq libcoq-interval`; CI installs it). The Coq tests cover
//! the fixed subset alibi-window, alibi-slopes,
//! sandwich-head-power-law, paranormal-proof-gap, corollary-dimension and
//! ratio-lemma; `attncheck verify --coq FILE` checks any other certificate.

use super::util::root;
use attncheck::coq::{self, Cert, CoqVerdict, Expect};
use std::path::PathBuf;

fn cert_path(id: &str) -> PathBuf {
    root().join("reports").join(format!("{id}.cert.json"))
}

fn cert(id: &str) -> Cert {
    coq::load(&cert_path(id)).unwrap_or_else(|e| panic!("{id}: {e}"))
}

fn committed() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root().join("reports")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(".cert.json") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `Some(dir)` to run coqc in, or `None` (with a message) when Coq is absent.
fn coq_dir(name: &str) -> Option<tempfile::TempDir> {
    if !coq::installed() {
        eprintln!(
            "skipping {name}: coqc not found (install: {})",
            coq::INSTALL_HINT
        );
        return None;
    }
    Some(
        tempfile::Builder::new()
            .prefix(&format!("attncheck-coq-{name}-"))
            .tempdir()
            .unwrap(),
    )
}

/// Only the obligations whose name contains `needle` (to keep Coq runs short).
fn only(mut c: Cert, needle: &str) -> Cert {
    c.obligations.retain(|o| o.name.contains(needle));
    assert!(
        !c.obligations.is_empty(),
        "no obligation matches `{needle}`"
    );
    c
}

fn proven_all(id: &str) {
    let Some(dir) = coq_dir(&id.replace('/', "-")) else {
        return;
    };
    let c = cert(id);
    let r = coq::check(&c, dir.path()).unwrap_or_else(|e| panic!("{id}: {e}"));
    eprintln!(
        "{id}: {} of {} proven by Coq, {} kernel-only, {:.1} s",
        r.proven(),
        r.results.len(),
        r.kernel_only(),
        r.seconds
    );
    for (name, v) in &r.results {
        assert!(
            !matches!(v, CoqVerdict::Rejected(_)),
            "{id}: Coq rejected `{name}`: {v:?}"
        );
    }
    assert_eq!(r.proven(), coq::coverage(&c).0, "{id}");
}

fn rejected(c: &Cert, name: &str) {
    let Some(dir) = coq_dir(name) else {
        return;
    };
    let r = coq::check(c, dir.path()).unwrap_or_else(|e| panic!("{name}: {e}"));
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
        assert!(!f.text.contains("Admitted") && !f.text.contains("Axiom"));
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
    // alibi-window's mean-distance sum (223835 unrolled interval terms) stays
    // kernel-only with its reason; every other obligation of it goes to Coq
    let (k, n, ko) = coq::coverage(&cert("positional/alibi-window"));
    assert_eq!((k + 1, ko.len()), (n, 1), "{ko:?}");
    assert!(ko[0].0.contains("mean attended distance") && ko[0].1.contains("budget"));
    for id in [
        "positional/alibi-slopes",
        "positional/sandwich-head-power-law",
        "clusters/paranormal-proof-gap",
        "sparse/ratio-lemma",
        "sparse/corollary-dimension",
    ] {
        let (k, n, ko) = coq::coverage(&cert(id));
        assert_eq!(k, n, "{id}: kernel-only {ko:?}");
    }
}

fn v2(obligations: &str, data: &str) -> Cert {
    let text = format!(
        r#"{{"format": "attncheck-certificate/2", "claim": "test/v2", "profile": "quick",
            "precision": 128, "hints": {{"t_star": "1/8"}},
            "obligations": [{obligations}]{data}}}"#
    );
    Cert::parse(&text).unwrap_or_else(|e| panic!("{e}"))
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
        .contains("exists r : Z, (1 <= r <= 5)%Z /\\ 0 <= (cos (IZR r))"));
    if let Some(dir) = coq_dir("v2") {
        let r = coq::check(&c, dir.path()).unwrap();
        assert!(r.accepted() && r.proven() == 3, "{:?}", r.results);
    }
}

#[test]
fn unknown_operators_and_data_kinds_are_listed_never_dropped() {
    let c = v2(
        r#"{"name": "a", "formula": "(<= (tanh 1) 1)", "expect": "holds"},
           {"name": "b", "formula": "(<= (traj-max X) 1)", "expect": "holds"},
           {"name": "c", "formula": "(<= (gram-max-abs X) 1)", "expect": "holds"}"#,
        r#", "data": {"X": {"kind": "trajectory", "steps": 3}}"#,
    );
    let (k, n, ko) = coq::coverage(&c);
    assert_eq!((k, n), (0, 3));
    assert_eq!(ko[0].1, "operator `tanh` has no Coq translation");
    assert_eq!(ko[1].1, "operator `traj-max` has no Coq translation");
    assert!(ko[2].1.contains("kind `trajectory`"), "{ko:?}");
}

#[test]
fn reversed_ranges_are_vacuous_and_large_exact_sums_are_computed() {
    let c = v2(
        r#"{"name": "vacuous forall", "formula": "(forall r 5 1 (< 1 0))", "expect": "holds"},
           {"name": "empty sum", "formula": "(= (sum i 3 2 (exp i)) 0)", "expect": "holds"},
           {"name": "big exact sum", "formula": "(= (sum i 1 100000 (pow i 2)) 333338333350000)", "expect": "holds"},
           {"name": "exact forall", "formula": "(forall n 1 3000 (>= (* n n) (- (* 2 n) 1)))", "expect": "holds"},
           {"name": "ceil and floor", "formula": "(and (= (ceil (/ 2552 7)) 365) (= (floor (ln 10)) 2) (= (ceil (* 8 (ln 10))) 19))", "expect": "holds"}"#,
        "",
    );
    let f = coq::translate(&c);
    assert_eq!(f.sent.len(), 5, "{:?}", f.kernel_only);
    assert!(f.text.contains("forall r : Z, (5 <= r <= 1)%Z -> 1 < 0"));
    assert!(f.text.contains("sumZ 3 2 (fun i => (exp (IZR i)))"));
    if let Some(dir) = coq_dir("ranges") {
        let r = coq::check(&c, dir.path()).unwrap();
        assert!(r.accepted() && r.proven() == 5, "{:?}", r.results);
    }
}

#[test]
fn coq_proves_alibi_window() {
    proven_all("positional/alibi-window");
}

#[test]
fn coq_proves_alibi_slopes() {
    proven_all("positional/alibi-slopes");
}

#[test]
fn coq_proves_sandwich_head_power_law() {
    proven_all("positional/sandwich-head-power-law");
}

#[test]
fn coq_proves_paranormal_proof_gap() {
    proven_all("clusters/paranormal-proof-gap");
}

#[test]
fn coq_proves_corollary_dimension() {
    proven_all("sparse/corollary-dimension");
}

#[test]
fn coq_proves_ratio_lemma_data_obligations() {
    proven_all("sparse/ratio-lemma");
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
    use attncheck::coq::CertDatum;
    let mut c = only(cert("sparse/ratio-lemma"), "t* = max");
    let Some(CertDatum::Signs { n, d, rows }) = c.data.get_mut("S") else {
        panic!("no S")
    };
    let (n, d) = (*n, *d);
    let words: Vec<u64> = rows.iter().flatten().copied().collect();
    let s = attncheck::kernel::SignMatrix::from_words(n, d, words).unwrap();
    let (m, (l, j)) = s.max_abs_offdiag().unwrap();
    // flip one sign of row l where s_l·s_j disagrees with G_lj: |G_lj| grows by 2
    let g = s.inner(l, j);
    let col = (0..d)
        .find(|&col| (s.sign(l, col) * s.sign(j, col) > 0) != (g > 0))
        .unwrap();
    rows[l][col / 64] ^= 1 << (col % 64);
    assert_eq!(m, 98);
    rejected(&c, "tamper-sign");
}
