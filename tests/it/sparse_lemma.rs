//! sparse/ratio-lemma, sparse/corollary-dimension, sparse/row-mass: verdicts, §5
//! reference values, certificates with data re-checked by `attncheck verify`, and
//! checks that fail when they should (checks of the project's reconstruction of the
//! Likhosherstov–Choromanski–Weller theorem, sparse.md).

use crate::util::{figure, run_quick, spec_path, spec_text, verdict};
use attncheck::app;
use attncheck::certificate::{Certificate, DataEntry};
use attncheck::claims;
use attncheck::claims::sparse::corollary_dimension::{d_formula_expr, Setting};
use attncheck::claims::sparse::ratio_lemma::adversarial_logits;
use attncheck::kernel::expr::{self, Data, Datum};
use attncheck::kernel::{Certainty, SignMatrix, Statement};
use attncheck::rng::SplitMix64;
use attncheck::sparse::construct::{self, Target, Witness};
use attncheck::sparse::sample::draw_signs;
use attncheck::spec::{Profile, Spec};
use attncheck::verdict::Verdict;
use rug::Rational;
use std::path::{Path, PathBuf};
use std::process::Command;

const RL: &str = "sparse/ratio-lemma";
const CD: &str = "sparse/corollary-dimension";
const RM: &str = "sparse/row-mass";

fn cert_json(id: &str) -> serde_json::Value {
    let run = run_quick(id);
    let (_, text) = run.certificate.as_ref().expect("a certificate");
    serde_json::from_str(text).unwrap()
}

fn write(dir: &Path, name: &str, v: &serde_json::Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
    p
}

fn verify_cli(p: &Path) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_attncheck"))
        .arg("verify")
        .arg(p)
        .output()
        .unwrap();
    (
        o.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

fn signs_of(v: &serde_json::Value) -> SignMatrix {
    let c: Certificate = serde_json::from_value(v.clone()).unwrap();
    match c.data["S"].to_datum().unwrap() {
        Datum::Signs(s) => s,
        _ => panic!("S is a sign matrix"),
    }
}

/// Flips one sign of S so that the extreme |⟨s_l, s_j⟩| grows by 2 (t* changes).
fn flip_growing_sign(v: &mut serde_json::Value) {
    let s = signs_of(v);
    let (_, (l, j)) = s.max_abs_offdiag().unwrap();
    let g = s.inner(l, j);
    let c = (0..s.d())
        .find(|&c| (s.sign(l, c) * s.sign(j, c) > 0) != (g > 0))
        .expect("a disagreeing coordinate");
    let mut words = s.row(l).to_vec();
    words[c / 64] ^= 1u64 << (c % 64);
    let hex: String = words.iter().map(|w| format!("{w:016x}")).collect();
    v["data"]["S"]["rows"][l] = serde_json::Value::String(hex);
}

#[test]
fn ratio_lemma_is_certified_and_attains_eta_for_k1() {
    let run = run_quick(RL);
    assert_eq!(verdict(&run), Verdict::Certified, "{}", run.markdown);
    // k = 1 adversarial: |E_ij| = η exactly
    assert_eq!(figure(&run, "max |E_ij| / η (best witness)"), 1.0);
    assert!(run.markdown.contains("reconstruction"));
}

#[test]
fn corollary_dimension_reproduces_section5_and_end_to_end() {
    let run = run_quick(CD);
    assert_eq!(verdict(&run), Verdict::Certified, "{}", run.markdown);
    let s = |k, rho: &str| Setting {
        k,
        eps: "1/2".into(),
        gamma: "(ln 10)".into(),
        rho: rho.into(),
        delta: "1/100".into(),
    };
    let d = |n, st: &Setting| {
        let q = expr::eval_exact(
            &d_formula_expr(n, &st.terms().unwrap()).to_string(),
            128,
            &Data::new(),
        )
        .unwrap()
        .expect("certified ceiling");
        q.numer().to_u64().unwrap()
    };
    for (n, v) in [
        (16, 2552),
        (256, 3945),
        (1024, 4642),
        (4096, 5339),
        (65536, 6733),
    ] {
        assert_eq!(d(n, &s(1, "0")), v, "n = {n}");
    }
    assert_eq!(d(1024, &s(1, "(ln 10)")), 15403);
    assert_eq!(d(65536, &s(2, "0")), 26930);
    assert_eq!(d(65536, &s(2, "(ln 10)")), 89359);
    let big = Setting {
        k: 2,
        eps: "1/4".into(),
        gamma: "(ln 100)".into(),
        rho: "(ln 10)".into(),
        delta: "1/100".into(),
    };
    assert_eq!(d(1024, &big), 484447);
    assert_eq!(d(65536, &big), 702635);
    // the end-to-end instance n = 1024, d = 4642: t* ≤ t = 0.0892034
    assert!(run.markdown.contains("n = 1024, d = 4642"));
    let ratio = figure(&run, "t*/t (end-to-end instance)");
    assert!(ratio > 0.5 && ratio <= 1.0, "{ratio}");
    // (iii) the grid: exact d_min of the seeds below d_formula
    let g = figure(&run, "max d_min / d_formula over the grid");
    assert!(g > 0.0 && g <= 1.0, "{g}");
}

#[test]
fn row_mass_is_certified_with_the_mass_table() {
    let run = run_quick(RM);
    assert_eq!(verdict(&run), Verdict::Certified, "{}", run.markdown);
    assert!(run.markdown.contains("| yes |"), "a τ instance is asserted");
    let r = figure(&run, "d_formula / ln³ n at the largest n of the table");
    assert!((r - 164.82).abs() < 0.01, "{r}");
}

#[test]
fn a_threshold_just_below_t_star_is_not_certified() {
    // the corollary's end-to-end seed: t* certified ≤ t, and not ≤ t* − 10^-30
    let s = draw_signs(1024, 4642, 20210607);
    let ts = construct::t_star(&s);
    let mut data = Data::new();
    data.insert("S".into(), Datum::Signs(s));
    let f = |t: &str| {
        expr::check_with(
            &format!("(<= (/ (gram-max-abs S) (cols S)) {t})"),
            128,
            &data,
        )
        .unwrap()
    };
    assert_eq!(f("(/ 1/2 (* 2 1 (+ (ln 10) 1/2 0)))"), Certainty::True);
    assert_eq!(f(&ts.to_string()), Certainty::True);
    assert_eq!(
        f(&format!("(- {ts} 1/1000000000000000000000000000000)")),
        Certainty::False
    );
    // a seed whose t* lies just above the threshold t := t* − 1/(d·10^6)
    let below = &ts - Rational::from((1, 4642u64 * 1_000_000));
    assert_eq!(f(&below.to_string()), Certainty::False);
}

#[test]
fn a_bound_tightened_by_one_unit_is_violated_by_the_adversarial_target() {
    let s = draw_signs(64, 128, 7);
    let top = Rational::from(6);
    let b = adversarial_logits(&s, 1, &top);
    let w = Witness::new(s.clone(), b.clone());
    let eta = Rational::from(&w.t_star * &top);
    let mut data = Data::new();
    data.insert("S".into(), Datum::Signs(s));
    data.insert("B".into(), Datum::Sparse(b));
    let chk = |f: String| expr::check_with(&f, 128, &data).unwrap();
    assert_eq!(chk(format!("(<= (err-max S B) {eta})")), Certainty::True);
    assert_eq!(chk(format!("(= (err-max S B) {eta})")), Certainty::True);
    assert_eq!(
        chk(format!(
            "(<= (err-max S B) (- {eta} 1/1000000000000000000000000000000))"
        )),
        Certainty::False
    );
    // η computed with t* − 1/(d·10^6)
    let t_less = &w.t_star - Rational::from((1, 128 * 1_000_000));
    assert_eq!(
        chk(format!("(<= (err-max S B) (* {t_less} 6))")),
        Certainty::False
    );
    // the whole lemma statement holds
    let mut st = Statement::new("sparse/ratio-lemma");
    construct::assert_lemma(
        &mut st,
        w.s.clone(),
        w.b.clone(),
        &w.t_star,
        &Rational::from(4),
        &Rational::from(2),
        1,
    );
    let c = attncheck::kernel::check(&st, 128).unwrap();
    assert!(c.as_expected());
    assert!(c.decisions().iter().all(|d| d.result() == Certainty::True));
}

#[test]
fn verify_rechecks_ratio_lemma_and_rejects_alterations() {
    let dir = tempfile::tempdir().unwrap();
    let v = cert_json(RL);
    let p = write(dir.path(), "ok.json", &v);
    let (code, out) = verify_cli(&p);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("certified"), "{out}");
    let size = std::fs::metadata(&p).unwrap().len();
    assert!(size < 400_000, "certificate of {size} bytes");

    // one sign of S: S is redrawn from its seed, so the certificate is rejected (exit 4)
    let mut a = v.clone();
    flip_growing_sign(&mut a);
    let (code, out) = verify_cli(&write(dir.path(), "sign.json", &a));
    assert_eq!(code, Some(4), "{out}");
    assert!(
        out.contains("rejected") && out.contains("datum `S`"),
        "{out}"
    );
    // and without the spec, the flipped sign still makes t* = hint false
    let v_ns = app::verify_file(&dir.path().join("sign.json"), None).unwrap();
    assert!(!v_ns.checked.as_expected());

    // one logit: B_00 − 1/1000 (B is rebuilt from S): rejected
    let mut b = v.clone();
    let entry = &mut b["data"]["B"]["rows"][0][0][1];
    let q: Rational = attncheck::kernel::parse_rational(entry.as_str().unwrap()).unwrap();
    *entry = serde_json::Value::String((q - Rational::from((1, 1000))).to_string());
    let (code, out) = verify_cli(&write(dir.path(), "logit.json", &b));
    assert_eq!(code, Some(4), "{out}");

    // t*: the first obligation states it exactly
    let mut c = v.clone();
    let f = c["obligations"][0]["formula"].as_str().unwrap().to_string();
    let ts = f
        .trim_start_matches("(= (/ (gram-max-abs S) (cols S)) ")
        .trim_end_matches(')');
    let q: Rational = attncheck::kernel::parse_rational(ts).unwrap();
    let altered = &q - Rational::from((1, 512));
    c["obligations"][0]["formula"] =
        serde_json::Value::String(format!("(= (/ (gram-max-abs S) (cols S)) {altered})"));
    let (code, out) = verify_cli(&write(dir.path(), "tstar.json", &c));
    assert_eq!(code, Some(4), "{out}");
    // through the library as well
    let v = app::verify_file(&dir.path().join("tstar.json"), None).unwrap();
    assert_eq!(v.checked.decisions()[0].result(), Certainty::False);
}

#[test]
fn verify_rechecks_corollary_and_rejects_an_altered_sign() {
    let dir = tempfile::tempdir().unwrap();
    let v = cert_json(CD);
    let (code, out) = verify_cli(&write(dir.path(), "ok.json", &v));
    assert_eq!(code, Some(0), "{out}");
    let mut a = v.clone();
    flip_growing_sign(&mut a);
    let (code, out) = verify_cli(&write(dir.path(), "sign.json", &a));
    assert_eq!(code, Some(4), "{out}");
    let v_ns = app::verify_file(&dir.path().join("sign.json"), None).unwrap();
    assert!(!v_ns.checked.as_expected());
}

#[test]
fn malformed_certificate_data_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let v = cert_json(RL);
    let err = |v: &serde_json::Value, name: &str| -> String {
        let p = write(dir.path(), name, v);
        let o = Command::new(env!("CARGO_BIN_EXE_attncheck"))
            .arg("verify")
            .arg(&p)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{name}");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let mut a = v.clone();
    a["data"]["S"]["rows"][3] = serde_json::Value::String("zz".repeat(64));
    let e = err(&a, "hex.json");
    assert!(e.contains("data.S.rows[3]") && e.contains("hex"), "{e}");
    let mut b = v.clone();
    b["data"]["S"]["rows"].as_array_mut().unwrap().pop();
    let e = err(&b, "rows.json");
    assert!(e.contains("data.S.rows") && e.contains("n = 256"), "{e}");
    let mut c = v.clone();
    c["data"]["S"]["d"] = serde_json::json!(100);
    let e = err(&c, "d.json");
    assert!(e.contains("data.S.rows[0]") && e.contains("d = 100"), "{e}");
    let mut d = v.clone();
    d["data"]["B"]["n"] = serde_json::json!(255);
    let e = err(&d, "n.json");
    assert!(e.contains("data.B.rows"), "{e}");
    let mut f = v.clone();
    f["data"]["B"]["rows"][2][0][1] = serde_json::Value::String("1/0".into());
    let e = err(&f, "q.json");
    assert!(e.contains("data.B.rows[2][0]"), "{e}");
}

#[test]
fn exact_mode_decides_equalities() {
    let c = |f: &str| expr::check(f, 64).unwrap();
    assert_eq!(c("(= (/ 1 3) (/ 2 6))"), Certainty::True);
    assert_eq!(c("(< (* 3 1/3) 1)"), Certainty::False);
    assert_eq!(c("(<= (* 3 1/3) 1)"), Certainty::True);
    assert_eq!(c("(= (ceil (ln 10)) 3)"), Certainty::True);
    assert_eq!(c("(= (floor -1/2) -1)"), Certainty::True);
    assert_eq!(c("(= (pow 2/3 -2) 9/4)"), Certainty::True);
    assert_eq!(c("(< (sin pi) 0)"), Certainty::Unknown);
    // positional certificates committed in reports/ still verify
    for f in std::fs::read_dir(crate::util::root().join("reports/positional")).unwrap() {
        let p = f.unwrap().path();
        if p.to_string_lossy().ends_with(".cert.json") {
            let v = app::verify_file(&p, Some(&crate::util::root().join("theorems"))).unwrap();
            assert!(v.checked.as_expected(), "{}", p.display());
        }
    }
}

#[test]
fn construction_library_builds_x_and_m() {
    let s = draw_signs(16, 64, 3);
    let mut rng = SplitMix64::new(1);
    let target = Target {
        n: 16,
        rows: (0..16)
            .map(|i| vec![(i, Rational::from(1 + rng.below(5)))])
            .collect(),
    };
    target.validate(1).unwrap();
    let b = construct::logits_from_target(&target, &Rational::from(4), 128);
    assert!(b[0][0].1.contains_rational(&Rational::from(4)));
    let row = vec![(2usize, Rational::from(5)), (7, Rational::from(4))];
    let lam = construct::logits_row(&s, &row);
    // Λ = X W_Q W_Kᵀ Xᵀ: ⟨(B S)_i, s_j⟩/d
    let (bs, _) = construct::input_row(&s, &row, 0);
    for (j, l) in lam.iter().enumerate() {
        let dot: Rational = (0..64).map(|c| Rational::from(&bs[c] * s.sign(j, c))).sum();
        assert_eq!(*l, dot / 64);
    }
    let m = construct::attention_row(&s, &row, 128);
    assert_eq!(m.len(), 16);
    // bad targets
    let mut bad = target.clone();
    bad.rows[3].clear();
    assert_eq!(bad.validate(1).unwrap_err().row, 3);
    let mut bad = target.clone();
    bad.rows[5][0].1 = Rational::from(-1);
    assert_eq!(bad.validate(1).unwrap_err().row, 5);
    let mut bad = target.clone();
    bad.rows[6].push((15, Rational::from(1)));
    assert!(bad.validate(1).unwrap_err().reason.contains("more than k"));
    // the union-bound d and t as certified terms
    let term = |s: &str| attncheck::kernel::expr::build::parse_term(s).unwrap();
    let t = construct::t_expr(1, &term("1/2"), &term("(ln 10)"), &term("0"));
    assert_eq!(
        construct::certified_integer(&construct::d_expr(1024, t, term("1/100")), 128),
        Some(4642)
    );
    let _ = DataEntry::from_signs(&SignMatrix::from_fn(2, 3, |l, c| l == c));
}

fn prepare_err(id: &str, from: &str, to: &str) -> String {
    let text = spec_text(id);
    assert_eq!(text.matches(from).count(), 1, "`{from}` in {id}");
    let text = text.replacen(from, to, 1);
    let spec = match Spec::parse(&spec_path(id), &text) {
        Ok(s) => s,
        Err(e) => return e.to_string(),
    };
    match (claims::find(id).unwrap().prepare)(&spec, Profile::Quick) {
        Ok(_) => panic!("expected an error for {id}: {to}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_params_name_the_field() {
    assert!(prepare_err(RL, "delta = \"4\"", "delta = \"-1\"").contains("delta"));
    assert!(prepare_err(RL, "ks = [1, 2, 4]", "ks = [1, 2, 64]").contains("ks[2]"));
    assert!(prepare_err(
        RL,
        "certificate = [256, 512, 2]",
        "certificate = [4096, 512, 2]"
    )
    .contains("certificate"));
    assert!(
        prepare_err(RL, "end_to_end_max_n = 1024", "end_to_end_max_n = 4096")
            .contains("end_to_end_max_n")
    );
    assert!(prepare_err(
        CD,
        "t = \"0.0892034\"\nseed = 20210607\n\n[params.certificate_instance]",
        "t = \"0,089\"\nseed = 20210607\n\n[params.certificate_instance]"
    )
    .contains("instance.t"));
    assert!(prepare_err(CD, "d = 3249", "d = 9999").contains("certificate_instance.d"));
    assert!(prepare_err(CD, "ns = [16, 32]", "ns = [16, 4096]").contains("grid.ns[1]"));
    assert!(prepare_err(RM, "tau = \"1/100\"", "tau = \"2\"").contains("tau"));
    assert!(prepare_err(RM, "gamma = \"7.31322\"", "gamma = \"7.3e0\"").contains("table[0].gamma"));
}

fn theorems() -> PathBuf {
    crate::util::root().join("theorems")
}

/// verify_file with the committed specs: `Err(reason)` when rejected.
fn verify_lib(dir: &Path, name: &str, v: &serde_json::Value) -> Result<bool, String> {
    let p = write(dir, name, v);
    match app::verify_file(&p, Some(&theorems())) {
        Ok(v) => Ok(v.checked.as_expected()),
        Err(app::Error::Rejected { reason, .. }) => Err(reason),
        Err(e) => panic!("{name}: {e}"),
    }
}

/// Moves the first entry of B's row `i` to a column not in its support (keeping
/// columns increasing).
fn move_support_entry(v: &mut serde_json::Value, i: usize) {
    let row = v["data"]["B"]["rows"][i].as_array().unwrap().clone();
    let cols: Vec<u64> = row.iter().map(|e| e[0].as_u64().unwrap()).collect();
    let n = v["data"]["B"]["n"].as_u64().unwrap();
    let free = (0..n).find(|c| !cols.contains(c)).unwrap();
    let mut moved = row.clone();
    moved[0][0] = serde_json::json!(free);
    moved.sort_by_key(|e| e[0].as_u64().unwrap());
    v["data"]["B"]["rows"][i] = serde_json::Value::Array(moved);
}

fn swap_rows(v: &mut serde_json::Value, datum: &str, i: usize, j: usize) {
    v["data"][datum]["rows"].as_array_mut().unwrap().swap(i, j);
}

/// The tamper classes every certificate must reject: a formula replaced by
/// `(<= 0 1)`, a deleted obligation, a changed bound, a changed datum.
fn assert_tampering_rejected(v: &serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(verify_lib(dir.path(), "ok.json", v), Ok(true));
    let mut a = v.clone();
    a["obligations"][1]["formula"] = "(<= 0 1)".into();
    assert!(verify_lib(dir.path(), "vacuous.json", &a).is_err());
    let mut b = v.clone();
    b["obligations"].as_array_mut().unwrap().pop();
    assert!(verify_lib(dir.path(), "deleted.json", &b).is_err());
    let mut c = v.clone();
    let f = c["obligations"][1]["formula"].as_str().unwrap().to_string();
    // the last integer literal of the formula, plus one
    let mut toks: Vec<String> = f.split(' ').map(str::to_string).collect();
    let q = toks
        .iter()
        .rposition(|t| t.trim_end_matches(')').parse::<i64>().is_ok())
        .expect("an integer literal");
    let lit = toks[q].trim_end_matches(')').to_string();
    let close = &toks[q][lit.len()..];
    toks[q] = format!("{}{close}", lit.parse::<i64>().unwrap() + 1);
    let g = toks.join(" ");
    assert_ne!(f, g, "{f}");
    c["obligations"][1]["formula"] = g.into();
    assert!(verify_lib(dir.path(), "bound.json", &c).is_err());
    let mut d = v.clone();
    flip_growing_sign(&mut d);
    let r = verify_lib(dir.path(), "datum.json", &d).unwrap_err();
    assert!(r.contains("datum `S`"), "{r}");
}

#[test]
fn ratio_lemma_certificate_rejects_a_flipped_sign_and_every_tamper_class() {
    assert_tampering_rejected(&cert_json(RL));
}

#[test]
fn ratio_lemma_rejects_any_single_sign_flip_of_s() {
    // 651 of 656 single flips used to be accepted: S is now redrawn from its seed
    let v = cert_json(RL);
    let dir = tempfile::tempdir().unwrap();
    let s = signs_of(&v);
    for (l, c) in [(0, 0), (1, 5), (s.n() - 1, s.d() - 1), (17, 300)] {
        let mut a = v.clone();
        let mut words = s.row(l).to_vec();
        words[c / 64] ^= 1u64 << (c % 64);
        a["data"]["S"]["rows"][l] =
            serde_json::Value::String(words.iter().map(|w| format!("{w:016x}")).collect());
        let r = verify_lib(dir.path(), "flip.json", &a).unwrap_err();
        assert!(r.contains("datum `S`"), "({l}, {c}): {r}");
    }
}

#[test]
fn ratio_lemma_rejects_a_changed_t_star_hint() {
    let v = cert_json(RL);
    let dir = tempfile::tempdir().unwrap();
    let ts = v["hints"]["t_star"].as_str().unwrap().to_string();
    let q: Rational = attncheck::kernel::parse_rational(&ts).unwrap();
    let other = (q + Rational::from((1, 512))).to_string();
    // the hint alone: the rebuilt statement differs from the certificate's
    let mut a = v.clone();
    a["hints"]["t_star"] = other.clone().into();
    assert!(verify_lib(dir.path(), "hint.json", &a).is_err());
    // hint and formulas changed together: accepted as a statement, but false
    let mut b: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&v).unwrap().replace(&ts, &other)).unwrap();
    b["hints"]["t_star"] = other.into();
    assert_eq!(verify_lib(dir.path(), "hint2.json", &b), Ok(false));
}

#[test]
fn ratio_lemma_rejects_a_moved_b_support_entry() {
    let v = cert_json(RL);
    let dir = tempfile::tempdir().unwrap();
    let mut a = v.clone();
    move_support_entry(&mut a, 0);
    let r = verify_lib(dir.path(), "moved.json", &a).unwrap_err();
    assert!(r.contains("datum `B`"), "{r}");
}

#[test]
fn ratio_lemma_rejects_swapped_rows() {
    let v = cert_json(RL);
    let dir = tempfile::tempdir().unwrap();
    let mut a = v.clone();
    swap_rows(&mut a, "B", 0, 1);
    assert!(verify_lib(dir.path(), "swapb.json", &a).is_err());
    let mut b = v.clone();
    swap_rows(&mut b, "S", 0, 1);
    swap_rows(&mut b, "B", 0, 1);
    assert!(verify_lib(dir.path(), "swapsb.json", &b).is_err());
}

#[test]
fn corollary_dimension_certificate_is_rebuilt_and_tampering_is_rejected() {
    assert_tampering_rejected(&cert_json(CD));
}

#[test]
fn row_mass_writes_a_certificate_and_tampering_is_rejected() {
    let v = cert_json(RM);
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(verify_lib(dir.path(), "ok.json", &v), Ok(true));
    let mut a = v.clone();
    a["obligations"][0]["formula"] = "(<= 0 1)".into();
    assert!(verify_lib(dir.path(), "vacuous.json", &a).is_err());
    let mut b = v.clone();
    b["obligations"].as_array_mut().unwrap().remove(2);
    assert!(verify_lib(dir.path(), "deleted.json", &b).is_err());
    let mut c = v.clone();
    let f = c["obligations"][0]["formula"].as_str().unwrap().to_string();
    c["obligations"][0]["formula"] = f.replacen("1/100", "1/1000", 1).into();
    assert!(verify_lib(dir.path(), "bound.json", &c).is_err());
    let mut d = v.clone();
    let row = d["data"]["S0"]["rows"][0].as_str().unwrap().to_string();
    let flipped = format!(
        "{}{}",
        if row.starts_with('0') { "1" } else { "0" },
        &row[1..]
    );
    d["data"]["S0"]["rows"][0] = flipped.into();
    assert!(verify_lib(dir.path(), "datum.json", &d)
        .unwrap_err()
        .contains("S0"));
}

mod construct_certificates {
    use super::*;
    use attncheck::sparse::target;

    fn construction() -> (Certificate, tempfile::TempDir, PathBuf) {
        let text = "%%MatrixMarket matrix coordinate real general\n6 6 9\n1 1 1\n1 3 2.5\n2 2 1\n3 1 1/3\n3 4 0.125\n4 4 7\n5 5 1\n5 6 2\n6 1 1\n";
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.mtx");
        std::fs::write(&f, text).unwrap();
        let a = target::load(&f, 2).unwrap();
        let p = target::ConstructParams::parse(2, "1/2", "2", "3", "1/100").unwrap();
        let c = target::construct(&a, &p, 3, 64, 128).unwrap();
        (c.certificate, dir, f)
    }

    /// What `verify` does with a construct certificate: rebuild, compare, decide.
    fn verify(cert: &Certificate, target_file: Option<&Path>) -> Result<bool, String> {
        let st = target::rebuild_statement(cert, target_file).map_err(|e| e.to_string())?;
        let expected = Certificate::of(&st, cert.profile, cert.precision, &cert.hints);
        if let Some(d) = cert.statement_difference(&expected) {
            return Err(d);
        }
        Ok(attncheck::kernel::check(&st, cert.precision)
            .map_err(|e| e.to_string())?
            .as_expected())
    }

    fn json(c: &Certificate) -> serde_json::Value {
        serde_json::to_value(c).unwrap()
    }

    fn back(v: serde_json::Value) -> Certificate {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn construct_certificate_is_rebuilt_from_a_and_its_seed() {
        let (c, _dir, f) = construction();
        assert_eq!(c.claim, "sparse/construct");
        for h in ["k", "epsilon", "gamma", "rho", "delta", "seed", "n", "d"] {
            assert!(c.hints.contains_key(h), "{h}");
        }
        assert!(c.data.contains_key("A"));
        assert_eq!(verify(&c, None), Ok(true));
        assert_eq!(verify(&c, Some(&f)), Ok(true));
    }

    #[test]
    fn construct_certificate_rejects_a_flipped_sign() {
        let (c, _dir, _f) = construction();
        let mut v = json(&c);
        flip_growing_sign(&mut v);
        assert!(verify(&back(v), None).unwrap_err().contains("datum `S`"));
        // any sign, not only the growing one
        let s = signs_of(&json(&c));
        for (l, col) in [(0, 0), (5, s.d() - 1), (2, 77)] {
            let mut v = json(&c);
            let mut words = s.row(l).to_vec();
            words[col / 64] ^= 1u64 << (col % 64);
            v["data"]["S"]["rows"][l] =
                serde_json::Value::String(words.iter().map(|w| format!("{w:016x}")).collect());
            assert!(verify(&back(v), None).is_err(), "({l}, {col})");
        }
    }

    #[test]
    fn construct_certificate_rejects_a_moved_support_entry() {
        let (c, _dir, f) = construction();
        let mut v = json(&c);
        move_support_entry(&mut v, 1);
        assert!(verify(&back(v), None).unwrap_err().contains("datum `B`"));
        // moving the entry in A and B together changes A: the target file pins it
        let mut w = json(&c);
        let a_row = w["data"]["A"]["rows"][1].clone();
        let moved_col = if a_row[0][0] == 0 { 2 } else { 0 };
        w["data"]["A"]["rows"][1][0][0] = serde_json::json!(moved_col);
        w["data"]["B"]["rows"][1][0][0] = serde_json::json!(moved_col);
        let w = back(w);
        assert!(verify(&w, Some(&f)).unwrap_err().contains("datum `A`"));
    }

    #[test]
    fn construct_certificate_rejects_swapped_rows() {
        let (c, _dir, f) = construction();
        let mut v = json(&c);
        swap_rows(&mut v, "B", 0, 1);
        assert!(verify(&back(v), None).is_err());
        let mut w = json(&c);
        swap_rows(&mut w, "S", 0, 1);
        assert!(verify(&back(w), None).is_err());
        let mut x = json(&c);
        swap_rows(&mut x, "A", 0, 1);
        swap_rows(&mut x, "B", 0, 1);
        assert!(verify(&back(x), Some(&f)).is_err());
    }

    #[test]
    fn construct_certificate_rejects_tampered_obligations_and_hints() {
        let (c, _dir, _f) = construction();
        let mut v = json(&c);
        v["obligations"][0]["formula"] = "(<= 0 1)".into();
        assert!(verify(&back(v), None).is_err());
        let mut w = json(&c);
        w["obligations"].as_array_mut().unwrap().pop();
        assert!(verify(&back(w), None).is_err());
        let mut x = json(&c);
        x["hints"]["seed"] = "4".into();
        assert!(verify(&back(x), None).is_err());
        let mut y = json(&c);
        y["hints"]["epsilon"] = "1".into();
        assert!(verify(&back(y), None).is_err());
    }
}
