//! The Coq translation (`attncheck::coq`): every committed certificate
//! translates; `attncheck verify --coq` re-proves every committed certificate
//! (each report's "independently proven in Coq: k of n obligations" is the k
//! Coq proves here); tampering is caught by Coq itself (the certificate is
//! translated directly, with no spec check).
//!
//! Tests that run `coqc` print a message and pass when it is not installed
//! (`apt-get install coq libcoq-interval`; `make test` and CI install it).
//! Certificates are read by the one reader, `attncheck::certificate`.

use super::util::{bin, output_text, root};
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
fn only(mut c: Certificate, needle: &str) -> Certificate {
    c.obligations.retain(|o| o.name.contains(needle));
    assert!(
        !c.obligations.is_empty(),
        "no obligation matches `{needle}`"
    );
    c
}

fn rejected(c: &Certificate, name: &str) {
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
        "positional/alibi-tail-bound",
        "positional/sandwich-head-power-law",
        "clusters/paranormal-proof-gap",
        "sparse/ratio-lemma",
        "sparse/corollary-dimension",
    ] {
        let (k, n, ko) = coq::coverage(&cert(id));
        assert_eq!(k, n, "{id}: kernel-only {ko:?}");
    }
}

/// A certificate read from JSON text by the one reader.
fn v2(obligations: &str, data: &str) -> Certificate {
    let text = format!(
        r#"{{"format": "attncheck-certificate/3", "claim": "test/v2", "profile": "quick",
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
    assert!(e.contains("expected `attncheck-certificate/3`"), "{e}");
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
        .contains("exists r : Z, (1 <= r <= 5)%Z /\\ 0 <= (cos (IZR r))"));
    if let Some(dir) = coq_dir("v2") {
        let r = coq::check(&c, dir.path()).unwrap();
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
    if let Some(dir) = coq_dir("capture") {
        let r = coq::check(&c, dir.path()).unwrap();
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
    // a layer datum (growth-bound's) has no Coq translation; neither has an
    // operator the translator does not know
    let layer = cert("clusters/growth-bound").data["X0"].clone();
    assert!(matches!(layer, DataEntry::Layer { .. }));
    let c = hand_built(
        &[
            ("a", "(<= (tanh 1) 1)"),
            ("b", "(<= (traj-max X) 1)"),
            ("c", "(<= (gram-max-abs X) 1)"),
            ("d", "(<= (layer-max-sqnorm X 0 1) 1)"),
        ],
        BTreeMap::from([("X".to_string(), layer)]),
    );
    let (k, n, ko) = coq::coverage(&c);
    assert_eq!((k, n), (0, 4));
    assert_eq!(ko[0].1, "operator `tanh` has no Coq translation");
    assert_eq!(ko[1].1, "operator `traj-max` has no Coq translation");
    assert!(ko[2].1.contains("kind `layer`"), "{ko:?}");
    assert_eq!(
        ko[3].1,
        "operator `layer-max-sqnorm` has no Coq translation"
    );
    let f = coq::translate(&c);
    assert!(f
        .data
        .unwrap()
        .contains("X: a datum of kind layer, not translated"));
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

/// `attncheck verify --coq` on every committed certificate, as CI runs it: exit
/// 0, nothing rejected, and Coq proves exactly the obligations the translation
/// sends — the k of each report's "independently proven in Coq: k of n".
#[test]
fn verify_coq_re_proves_every_committed_certificate() {
    if !coq::installed() {
        eprintln!(
            "skipping verify_coq_re_proves_every_committed_certificate: coqc not found, so the committed \
             certificates were NOT re-proven in Coq (install: {}; `make test` and CI install it)",
            coq::INSTALL_HINT
        );
        return;
    }
    let all = committed();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(all.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(p) = all.get(i) else { break };
                if let Err(e) = verify_coq(p) {
                    failures.lock().unwrap().push(e);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// One `verify --coq` run, checked against the translation and the committed report.
fn verify_coq(p: &Path) -> Result<(), String> {
    let c = coq::load(p).map_err(|e| e.to_string())?;
    let tmp = std::env::temp_dir().join(format!(
        "attncheck-coq-test-{}-{}",
        std::process::id(),
        coq::translate(&c).stem
    ));
    let out = bin()
        .env("TMPDIR", &tmp)
        .args(["verify", "--coq"])
        .arg(p)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&tmp);
    let text = output_text(&out);
    let at = format!("{}: verify --coq", p.display());
    if out.status.code() != Some(0) {
        return Err(format!("{at} exited {:?}:\n{text}", out.status.code()));
    }
    let (sent, n, ko) = coq::coverage(&c);
    let summary = format!(
        "{}: {sent} of {n} obligations sent to Coq, {sent} proven, 0 rejected; {} kernel-only",
        c.claim,
        ko.len()
    );
    if !text.contains(&summary) {
        return Err(format!("{at}: expected `{summary}` in:\n{text}"));
    }
    if text.matches("proven by Coq    ").count() != sent {
        return Err(format!(
            "{at}: not every obligation sent was proven:\n{text}"
        ));
    }
    eprintln!("{}: {sent} of {n} obligations proven by Coq", c.claim);
    // the committed report states the same figure (once it carries one)
    let report = p.with_file_name(
        p.file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".cert.json", ".json"),
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).map_err(|e| format!("{at}: {e}"))?)
            .map_err(|e| format!("{at}: {e}"))?;
    if let Some(k) = r.pointer("/coq/sent") {
        if k.as_u64() != Some(sent as u64) || r.pointer("/coq/obligations") != Some(&n.into()) {
            return Err(format!(
                "{at}: {} says {k} of {} obligations are proven in Coq, Coq proved {sent} of {n}",
                report.display(),
                r.pointer("/coq/obligations")
                    .unwrap_or(&serde_json::Value::Null)
            ));
        }
    }
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
/// so the report is the same with or without coqc) and the kernel-only
/// obligations with their reason; the index has a column for the figure. A
/// claim without a certificate has neither.
#[test]
fn reports_state_the_coq_coverage_of_their_certificate() {
    use super::util::run_quick;
    let run = run_quick("positional/alibi-window");
    let c = run
        .report
        .coq
        .as_ref()
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
    assert_eq!((k + 1, n), (6, 6), "{ko:?}");
    let md = &run.markdown;
    assert!(
        md.contains("**Independently proven in Coq: 5 of 6 obligations.**"),
        "{md}"
    );
    assert!(md.contains("`attncheck verify --coq reports/positional/alibi-window.cert.json`"));
    assert!(md.contains("CI re-proves every committed certificate"));
    assert!(md.contains("Kernel-only obligations (1)"));
    assert!(
        md.contains(&format!("- {}: {}", ko[0].1, ko[0].0.trim())),
        "{md}"
    );
    let json = run.report.to_json();
    assert!(json.contains("\"coq\": {\n    \"sent\": 5,\n    \"obligations\": 6,"));

    let none = run_quick("clusters/open-problems");
    assert!(none.certificate.is_none() && none.report.coq.is_none());
    assert!(!none.markdown.contains("proven in Coq"));
    assert!(!none.report.to_json().contains("\"coq\""));

    let index = attncheck::report::index_markdown(&[none.report.clone(), run.report.clone()]);
    assert!(
        index.contains("| profile | proven in Coq | key figure |"),
        "{index}"
    );
    assert!(index.contains("| quick | 5 of 6 |"), "{index}");
    assert!(index.contains("| quick | — |"), "{index}");

    // `run --check` names a change of the figure
    let mut fewer = run.report.clone();
    fewer.coq.as_mut().unwrap().sent = 4;
    assert_eq!(
        attncheck::report::diff(&run.report, &fewer),
        ["Coq coverage changed from 5 of 6 to 4 of 6 obligations"]
    );
}
