//! positional/alibi-tail-bound, alibi-window, windowed-receptive-field,
//! shift-invariance and length-usage: §3 reference values, committed verdicts,
//! checks that fail when they should, and spec errors that name the field.

use crate::util::{cell, figure, run_edited, run_quick, run_text, spec_path, spec_text, verdict};
use attncheck::app;
use attncheck::claims;
use attncheck::claims::positional::common::{alibi_tail_inf, Window};
use attncheck::claims::positional::{
    alibi_tail_bound as tb, alibi_window as aw, length_usage as lu, shift_invariance as si,
    windowed_receptive_field as wrf,
};
use attncheck::kernel::{expr, parse_rational, Certainty, Interval};
use attncheck::spec::{Profile, Spec};
use attncheck::verdict::{CheckKind, Verdict};
use rug::Rational;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const TAIL: &str = "positional/alibi-tail-bound";
const WINDOW: &str = "positional/alibi-window";
const WRF: &str = "positional/windowed-receptive-field";
const SHIFT: &str = "positional/shift-invariance";
const USAGE: &str = "positional/length-usage";

fn q(s: &str) -> Rational {
    parse_rational(s).unwrap()
}

/// Runs the committed spec (cached) and prints how long the first run took.
fn timed(id: &str) -> std::sync::Arc<attncheck::app::ClaimRun> {
    let t = Instant::now();
    let run = run_quick(id);
    eprintln!(
        "{id}: quick run {:.2} s (0 if cached)",
        t.elapsed().as_secs_f64()
    );
    run
}

/// Runs the committed spec with several edits (each `from` must occur once).
fn run_with(id: &str, edits: &[(&str, &str)]) -> attncheck::app::ClaimRun {
    let mut text = spec_text(id);
    for (from, to) in edits {
        assert_eq!(
            text.matches(from).count(),
            1,
            "`{from}` must occur once in {id}"
        );
        text = text.replacen(from, to, 1);
    }
    run_text(id, &text, Profile::Quick)
}

fn check<'a>(run: &'a attncheck::app::ClaimRun, prefix: &str) -> &'a attncheck::verdict::Check {
    run.report
        .checks
        .iter()
        .find(|c| c.name.starts_with(prefix))
        .unwrap_or_else(|| panic!("no check starting with `{prefix}`"))
}

// ----- bad inputs ---------------------------------------------------------------

fn prepare_err(id: &str, text: &str) -> String {
    let spec = match Spec::parse(&spec_path(id), text) {
        Ok(s) => s,
        Err(e) => return e.to_string(),
    };
    match (claims::find(id).unwrap().prepare)(&spec, Profile::Quick) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// Edits the committed spec once, prepares it, and checks that the error names
/// `params.<field>` at the line of `to`.
fn assert_names(id: &str, from: &str, to: &str, field: &str) {
    let text = spec_text(id);
    assert_eq!(
        text.matches(from).count(),
        1,
        "`{from}` must occur once in {id}"
    );
    let text = text.replacen(from, to, 1);
    let line = text
        .lines()
        .position(|l| l.contains(to.lines().next().unwrap()))
        .unwrap()
        + 1;
    let e = prepare_err(id, &text);
    let file = Path::new(&spec_path(id))
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    assert!(
        e.contains(&format!("{file}:{line}: {field}")),
        "expected `{file}:{line}: {field}` in: {e}"
    );
}

// ----- alibi-tail-bound ---------------------------------------------------------

#[test]
fn tail_bound_committed_spec_is_supported_with_the_chain_certified() {
    let run = timed(TAIL);
    assert_eq!(
        verdict(&run),
        Verdict::Supported, /* the random-content and ℚ checks are not yet obligations */
        "{:?}",
        run.report.reason
    );
    assert!(figure(&run, "interval instances") >= 16.0);
    assert!(figure(&run, "exact (w, i) pairs") >= 1000.0);
    let r = figure(&run, "largest T_w / T^max(i) (random content)");
    assert!(r > 0.0 && r < 1.0, "{r}");
    // the closed-form chain is the statement: certified, with a certificate
    for name in ["T^max(i) ≤ s·T^∞", "T^∞ ≤ s·e^Δ", "T^max(i + 1) > T^max(i)"] {
        let c = check(&run, name);
        assert_eq!(c.kind, attncheck::verdict::CheckKind::Certified, "{name}");
        assert_eq!(c.result, Certainty::True, "{name}");
    }
    assert!(run.certificate.is_some());
}

#[test]
fn tail_bound_at_delta_0_is_e_minus_512m() {
    // T^∞(w) at Δ = 0 is e^{−mw}: at m = 2^−8, w = 512 it is e^{−2} (§3)
    let m = Interval::from_rational(128, &q("2^-8"));
    let t = alibi_tail_inf(&m, 512, &Interval::one(128));
    let r = Interval::parse_decimal(128, "0.13533528323661269189").unwrap();
    assert!((&(&t - &r).abs() / &r).hi_f64() < 1e-12);
    // and T^max(i) < T^∞ with the difference identity positive
    let e = Interval::one(128);
    let cf = tb::closed_forms(&m, 512, 100_000, &e, &Rational::from(1));
    assert_eq!(cf.margin_max_inf.ge(&Interval::zero(128)), Certainty::True);
    assert_eq!(cf.step_in_i.gt(&Interval::zero(128)), Certainty::True);
    assert!(cf.t_max.overlaps(&t) || cf.t_max.lt(&t) == Certainty::True);
}

#[test]
fn tail_bound_tightened_below_the_truth_is_refuted() {
    let run = run_edited(TAIL, "bound_scale = \"1\"", "bound_scale = \"0.9\"");
    assert_eq!(verdict(&run), Verdict::Refuted);
    assert_eq!(check(&run, "T^max(i) ≤ s·T^∞").result, Certainty::False);
    assert_eq!(check(&run, "ℚ: T^∞ − T^max(i)").result, Certainty::False);
}

#[test]
fn tail_bound_exact_algebra_holds_and_fails_when_tightened() {
    let x = q("15/16");
    let e = q("7");
    let ok = tb::exact_check(&x, &e, &Rational::from(1), 24, 1);
    assert!(ok.first_failure.iter().all(Option::is_none), "{ok:?}");
    assert_eq!(ok.pairs, 24 * 25 / 2);
    // Δ = 0 (E = 1): constant content attains the supremum; still no failure
    let flat = tb::exact_check(&x, &Rational::from(1), &Rational::from(1), 24, 2);
    assert!(flat.first_failure.iter().all(Option::is_none), "{flat:?}");
    // a bound 1% too small fails in ℚ (x = 1/2: T^max(i) reaches 99% of T^∞ by i ≈ 8)
    let bad = tb::exact_check(&q("1/2"), &e, &q("0.99"), 24, 1);
    assert!(bad.first_failure[2].is_some() && bad.first_failure[3].is_some());
    // the supremum claim itself is not scale-dependent
    assert!(bad.first_failure[0].is_none() && bad.first_failure[1].is_none());
}

#[test]
fn tail_bound_random_content_stays_below_the_extremal_one() {
    // one instance directly: a_r ∈ [0, Δ) never beats a_r = Δ beyond w
    let inst = tb::Instance {
        heads: 8,
        rule: attncheck::claims::positional::common::SlopeRule::Paper,
        head: 8,
        q: Rational::from(8),
        i: 3000,
        w: 300,
        delta: Rational::from(4),
        content_seed: 7,
    };
    let r = tb::real_instance(&inst, &Rational::from(1), 128);
    assert_eq!(r.below_max, Certainty::True);
    assert!(r.t_extremal.overlaps(&r.closed.t_max));
    assert_eq!(r.max_le_inf, Certainty::True);
    assert_eq!(r.inf_le_bound, Certainty::True);
    // the extremal tail is not below itself minus a margin: T_w < T^max strictly here
    assert_eq!(r.t_w.lt(&r.closed.t_max), Certainty::True);
}

#[test]
fn tail_bound_bad_inputs_name_the_field() {
    assert_names(
        TAIL,
        "heads = [8, 12, 16]",
        "heads = [8, 0, 16]",
        "params.heads[1]",
    );
    assert_names(
        TAIL,
        "rules = [\"paper\", \"code\"]",
        "rules = []",
        "params.rules",
    );
    assert_names(
        TAIL,
        "max_delta = \"8\"",
        "max_delta = \"-1\"",
        "params.max_delta",
    );
    assert_names(
        TAIL,
        "bound_scale = \"1\"",
        "bound_scale = \"one\"",
        "params.bound_scale",
    );
    assert_names(
        TAIL,
        "exact_bits = 24",
        "exact_bits = 2",
        "params.exact_bits",
    );
}

// ----- alibi-window -------------------------------------------------------------

#[test]
fn window_committed_spec_is_certified_and_reproduces_section_3() {
    let run = timed(WINDOW);
    assert_eq!(verdict(&run), Verdict::Certified, "{:?}", run.report.reason);
    let want = [
        ("2^-1", 10, 18),
        ("2^-4", 74, 138),
        ("2^-6", 295, 551),
        ("2^-7", 590, 1101),
        ("2^-8", 1179, 2201),
    ];
    for (m, w0, w4) in want {
        assert_eq!(figure(&run, &format!("w_ε(m = {m}, Δ = 0)")), w0 as f64);
        assert_eq!(figure(&run, &format!("w_ε(m = {m}, Δ = 4)")), w4 as f64);
        let c = cell(&run, "ALiBi windows", m, "w_ε, Δ = 0: §3 | ours");
        assert_eq!(c, format!("{w0} | {w0}"));
    }
    // the figure's value is stored to 12 digits; its text is the outward enclosure
    let f = run
        .report
        .figures
        .iter()
        .find(|f| f.name == "e^−512m at m = 2^-8")
        .unwrap();
    let (lo, hi) = f.text.trim_matches(['[', ']']).split_once(", ").unwrap();
    let (lo, hi) = (parse_rational(lo).unwrap(), parse_rational(hi).unwrap());
    let reference = parse_rational("0.13533528323661269189").unwrap();
    let tol = Rational::from((1, 1_000_000_000_000i64)) * &reference;
    assert!(
        Rational::from(&lo - &reference).abs() < tol
            && Rational::from(&hi - &reference).abs() < tol,
        "{}",
        f.text
    );
    assert!((f.value - 0.135_335_283_237).abs() < 1e-12);
    // the first figure (README) is the flattest slope's window
    assert_eq!(run.report.figures[0].value, 1179.0);
}

/// Decides one formula of a statement with the kernel's evaluator.
fn decide(f: &attncheck::kernel::expr::build::Formula) -> Certainty {
    expr::check(&f.to_string(), 128).unwrap_or_else(|e| panic!("{f}: {e}"))
}

#[test]
fn window_formula_and_minimality_directly() {
    let eps = q("1/100");
    for (m, w0, w4) in [("2^-1", 10, 18), ("2^-8", 1179, 2201)] {
        let m = q(m);
        for (d, w) in [(Rational::new(), w0), (Rational::from(4), w4)] {
            assert_eq!(decide(&aw::ceil_formula(&m, &d, &eps, w)), Certainty::True);
            assert_eq!(
                decide(&aw::ceil_formula(&m, &d, &eps, w - 1)),
                Certainty::False
            );
            let (at, before) = aw::minimality_formulas(&m, &d, &eps, w);
            assert_eq!(
                (decide(&at), decide(&before)),
                (Certainty::True, Certainty::True)
            );
            // one shorter: T^∞(w − 1) ≤ ε is false
            assert_eq!(
                decide(&aw::minimality_formulas(&m, &d, &eps, w - 1).0),
                Certainty::False
            );
            // one longer: not minimal
            assert_eq!(
                decide(&aw::minimality_formulas(&m, &d, &eps, w + 1).1),
                Certainty::False
            );
        }
    }
    // T^∞ values of §3 at Δ = 0, m = 2^−1: 0.0067379 and 0.011109
    let tail = |w| {
        expr::eval(
            &aw::tail_term(&q("1/2"), &Rational::new(), w).to_string(),
            128,
        )
        .unwrap()
    };
    let t = tail(10).mid_f64();
    assert!((t - 0.0067379).abs() < 5e-8, "{t}");
    let t = tail(9).mid_f64();
    assert!((t - 0.011109).abs() < 5e-7, "{t}");
    // the statement's term is the interval formula of common::alibi_tail_inf
    let direct = alibi_tail_inf(
        &Interval::from_rational(128, &q("1/2")),
        10,
        &Interval::one(128),
    );
    assert!(tail(10).overlaps(&direct));
}

#[test]
fn window_mean_distance_matches_the_summed_one() {
    for (m, printed) in [("2^-1", 1.54149), ("2^-7", 127.501), ("2^-8", 255.5)] {
        let mq = q(m);
        let summed = expr::eval(&aw::summed_mean_term(&mq, 40).to_string(), 128)
            .unwrap()
            .mid_f64();
        let closed = 1.0 / (Interval::from_rational(128, &mq).mid_f64().exp() - 1.0);
        assert!(((summed - closed) / closed).abs() < 1e-9, "{m}");
        assert!((closed - printed).abs() / printed < 1e-5, "{m}: {closed}");
    }
}

#[test]
fn window_one_shorter_than_w_eps_is_refuted() {
    let run = run_edited(WINDOW, "windows = [1179, 2201]", "windows = [1178, 2201]");
    assert_eq!(verdict(&run), Verdict::Refuted);
    assert_eq!(check(&run, "T^∞(w_ε) ≤ ε").result, Certainty::False);
    // and a longer window is not the minimal one
    let run = run_edited(WINDOW, "windows = [10, 18]", "windows = [10, 19]");
    assert_eq!(verdict(&run), Verdict::Refuted);
    assert_eq!(check(&run, "T^∞(w_ε − 1) > ε").result, Certainty::False);
}

#[test]
fn window_wrong_printed_digit_is_refuted() {
    let run = run_edited(WINDOW, "e512 = \"1.266e-14\"", "e512 = \"1.267e-14\"");
    assert_eq!(verdict(&run), Verdict::Refuted);
}

/// The committed spec's certificate of `id`, as JSON and written to a scratch file.
fn cert_of(id: &str) -> (tempfile::TempDir, PathBuf, serde_json::Value) {
    let run = run_quick(id);
    let (name, text) = run.certificate.as_ref().expect("a certificate");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(Path::new(name).file_name().unwrap());
    std::fs::write(&path, text).unwrap();
    (dir, path, serde_json::from_str(text).unwrap())
}

/// Writes `cert` next to the original and runs `attncheck verify` on it from the
/// crate root (so the claim's spec is found under `theorems/`); returns the exit code.
fn verify_bin(dir: &Path, cert: &serde_json::Value, tag: &str) -> (Option<i32>, String) {
    let path = dir.join(format!("{tag}.cert.json"));
    std::fs::write(&path, serde_json::to_string_pretty(cert).unwrap()).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_attncheck"))
        .current_dir(crate::util::root())
        .args(["verify", path.to_str().unwrap()])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    (o.status.code(), text)
}

fn obligations(cert: &mut serde_json::Value) -> &mut Vec<serde_json::Value> {
    cert["obligations"].as_array_mut().unwrap()
}

/// Verifies through the library and asserts the rejection is a statement mismatch.
fn rejected(path: &Path, cert: &serde_json::Value) -> bool {
    std::fs::write(path, serde_json::to_string(cert).unwrap()).unwrap();
    matches!(
        app::verify_file(path, Some(&crate::util::root().join("theorems"))),
        Err(app::Error::Rejected { .. })
    )
}

#[test]
fn window_certificate_is_the_whole_statement_and_verifies() {
    let (dir, path, cert) = cert_of(WINDOW);
    let theorems = crate::util::root().join("theorems");
    let v = app::verify_file(&path, Some(&theorems)).unwrap();
    assert!(v.checked.as_expected());
    // every certified check of the run is an obligation, and nothing else is certified
    let run = run_quick(WINDOW);
    let certified: Vec<&str> = run
        .report
        .checks
        .iter()
        .filter(|c| c.kind == CheckKind::Certified)
        .map(|c| c.name.as_str())
        .collect();
    let names: Vec<&str> = cert["obligations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(certified, names);
    assert_eq!(certified.len(), run.report.checks.len());
    assert!(cert.to_string().contains("1179"));
    // tampered copies are rejected by the library too: a bound changed, one obligation deleted
    let mut bad = cert.clone();
    let o = &mut obligations(&mut bad)[1];
    let f = o["formula"]
        .as_str()
        .unwrap()
        .replacen(" 1179)", " 1178)", 1);
    o["formula"] = f.into();
    assert!(rejected(&dir.path().join("bound.cert.json"), &bad));
    let mut bad = cert.clone();
    obligations(&mut bad).pop();
    assert!(rejected(&dir.path().join("deleted.cert.json"), &bad));
    let mut bad = cert.clone();
    let o = &mut obligations(&mut bad)[3];
    let f = o["formula"]
        .as_str()
        .unwrap()
        .replacen("6.616e-112", "6.617e-112", 1);
    o["formula"] = f.into();
    assert!(rejected(&dir.path().join("digit.cert.json"), &bad));
}

#[test]
fn alibi_window_certificate_with_every_formula_trivial_is_rejected() {
    let (dir, _, mut cert) = cert_of(WINDOW);
    for o in obligations(&mut cert) {
        o["formula"] = "(<= 0 1)".into();
    }
    let (code, text) = verify_bin(dir.path(), &cert, "trivial");
    assert_eq!(code, Some(4), "{text}");
}

#[test]
fn alibi_window_certificate_with_an_obligation_deleted_is_rejected() {
    let (dir, _, mut cert) = cert_of(WINDOW);
    obligations(&mut cert).remove(2);
    let (code, text) = verify_bin(dir.path(), &cert, "deleted");
    assert_eq!(code, Some(4), "{text}");
}

#[test]
fn alibi_window_certificate_with_its_claim_id_changed_is_rejected() {
    let (dir, _, cert) = cert_of(WINDOW);
    for (k, other) in ["positional/alibi-tail-bound", "positional/no-such-claim"]
        .into_iter()
        .enumerate()
    {
        let mut bad = cert.clone();
        bad["claim"] = other.into();
        let (code, text) = verify_bin(dir.path(), &bad, &format!("claim{k}"));
        assert_eq!(code, Some(4), "{other}: {text}");
    }
}

#[test]
fn alibi_window_certificate_with_names_rotated_against_formulas_is_rejected() {
    let (dir, _, mut cert) = cert_of(WINDOW);
    let obs = obligations(&mut cert);
    let names: Vec<serde_json::Value> = obs.iter().map(|o| o["name"].clone()).collect();
    for (k, o) in obs.iter_mut().enumerate() {
        o["name"] = names[(k + 1) % names.len()].clone();
    }
    let (code, text) = verify_bin(dir.path(), &cert, "rotated");
    assert_eq!(code, Some(4), "{text}");
}

#[test]
fn alibi_window_certificate_with_a_range_reversed_is_rejected() {
    let (dir, _, mut cert) = cert_of(WINDOW);
    // the mean-distance sums run over r = 0..=⌈40/m⌉; reverse the first one
    let o = obligations(&mut cert)
        .iter_mut()
        .find(|o| o["formula"].as_str().unwrap().contains("(sum r 0 80 "))
        .expect("the m = 2^-1 sum");
    let f = o["formula"]
        .as_str()
        .unwrap()
        .replacen("(sum r 0 80 ", "(sum r 80 0 ", 1);
    o["formula"] = f.clone().into();
    let (code, text) = verify_bin(dir.path(), &cert, "reversed");
    assert_eq!(code, Some(4), "{text}");
    // and the evaluator alone refuses a reversed (vacuous) range
    assert!(expr::check("(forall r 80 0 (< r 0))", 64).is_err());
    assert!(expr::check(&f, 128).is_err());
}

#[test]
fn alibi_window_certificate_with_a_strict_inequality_weakened_is_rejected() {
    let (dir, _, mut cert) = cert_of(WINDOW);
    // T^∞(w_ε − 1) > ε weakened to ≥
    let o = &mut obligations(&mut cert)[2];
    let f = o["formula"].as_str().unwrap().replace("(> ", "(>= ");
    o["formula"] = f.into();
    let (code, text) = verify_bin(dir.path(), &cert, "weakened");
    assert_eq!(code, Some(4), "{text}");
    // the untampered copy is accepted by the binary (exit 0)
    let (_, _, cert) = cert_of(WINDOW);
    let (code, text) = verify_bin(dir.path(), &cert, "intact");
    assert_eq!(code, Some(0), "{text}");
}

#[test]
fn window_bad_inputs_name_the_field() {
    assert_names(
        WINDOW,
        "epsilon = \"1/100\"",
        "epsilon = \"2\"",
        "params.epsilon",
    );
    assert_names(
        WINDOW,
        "slope = \"2^-4\"",
        "slope = \"0\"",
        "params.rows[1].slope",
    );
    assert_names(
        WINDOW,
        "windows = [74, 138]",
        "windows = [74]",
        "params.rows[1].windows",
    );
    assert_names(
        WINDOW,
        "windows = [295, 551]",
        "windows = [0, 551]",
        "params.rows[2].windows[0]",
    );
    assert_names(
        WINDOW,
        "tail_delta = \"0\"",
        "tail_delta = \"1\"",
        "params.tail_delta",
    );
    assert_names(
        WINDOW,
        "e512 = \"0.01832\"",
        "e512 = \"x\"",
        "params.rows[3].e512",
    );
}

// ----- windowed-receptive-field -------------------------------------------------

#[test]
fn receptive_field_committed_spec_is_certified() {
    let run = timed(WRF);
    assert_eq!(verdict(&run), Verdict::Certified, "{:?}", run.report.reason);
    assert_eq!(
        figure(&run, "largest w fitting 12 layers in L_tr = 512 (W1)"),
        43.0
    );
    assert_eq!(
        figure(&run, "largest w fitting 12 layers in L_tr = 512 (W2)"),
        42.0
    );
}

#[test]
fn receptive_field_supports_match_the_formula() {
    let count = |len: u64, d: u64, l: u64| {
        expr::eval_exact(
            &format!("(band-reach-count {len} {d} {l})"),
            64,
            &Default::default(),
        )
        .unwrap()
        .unwrap()
    };
    for conv in [Window::W1, Window::W2] {
        for w in [1u64, 2, 3, 7, 40, 80] {
            for len in [5u64, 64, 300] {
                let d = conv.max_distance(w);
                for l in 1..=12u64 {
                    let s = wrf::band_reach(len, d, l);
                    assert_eq!(
                        s,
                        wrf::support_formula(conv, w, l, len),
                        "{conv:?} w={w} L={len} ℓ={l}"
                    );
                    // every smaller distance reached
                    assert_eq!(count(len, d, l), s + 1);
                }
            }
        }
    }
    assert_eq!(
        wrf::largest_fitting_window(Window::W1, 12, 512, 100),
        (43, true)
    );
    assert_eq!(
        wrf::largest_fitting_window(Window::W2, 12, 512, 100),
        (42, true)
    );
    // positional.md §3 toy RF uses W1; w = 40: 12·39 = 468 < 511 fits, w = 80 does not
    assert_eq!(wrf::support_formula(Window::W1, 80, 12, 1024), 948);
}

#[test]
fn windowed_receptive_field_certified_without_a_certificate_now_writes_one() {
    let (dir, path, cert) = cert_of(WRF);
    let v = app::verify_file(&path, Some(&crate::util::root().join("theorems"))).unwrap();
    assert!(v.checked.as_expected());
    let run = run_quick(WRF);
    assert!(run
        .report
        .checks
        .iter()
        .all(|c| c.kind == CheckKind::Certified));
    assert!(cert.to_string().contains("band-reach"));
    // `=` weakened to `<=` (through the binary), a bound changed, one obligation deleted
    let mut bad = cert.clone();
    let o = &mut obligations(&mut bad)[0];
    let f = o["formula"].as_str().unwrap().replace("(= ", "(<= ");
    o["formula"] = f.into();
    let (code, text) = verify_bin(dir.path(), &bad, "weakened");
    assert_eq!(code, Some(4), "{text}");
    let mut bad = cert.clone();
    let o = &mut obligations(&mut bad)[1];
    let f = o["formula"].as_str().unwrap().replacen(" 512)", " 513)", 1);
    o["formula"] = f.into();
    assert!(rejected(&dir.path().join("bound.cert.json"), &bad));
    let mut bad = cert.clone();
    obligations(&mut bad).remove(0);
    assert!(rejected(&dir.path().join("deleted.cert.json"), &bad));
    let mut bad = cert.clone();
    for o in obligations(&mut bad) {
        o["formula"] = "(<= 0 1)".into();
    }
    assert!(rejected(&dir.path().join("trivial.cert.json"), &bad));
}

#[test]
fn receptive_field_wrong_threshold_and_pattern_are_refuted() {
    let run = run_edited(WRF, "window = 43", "window = 44");
    assert_eq!(verdict(&run), Verdict::Refuted);
    let run = run_edited(WRF, "distances = [0, 1]\n", "distances = [0, 1, 2]\n");
    assert_eq!(verdict(&run), Verdict::Refuted);
}

#[test]
fn receptive_field_bad_inputs_name_the_field() {
    assert_names(
        WRF,
        "windows = [2, 40, 80]",
        "windows = [2, 0, 80]",
        "params.windows[1]",
    );
    assert_names(
        WRF,
        "lengths = [512, 1024]",
        "lengths = [1, 1024]",
        "params.lengths[0]",
    );
    assert_names(
        WRF,
        "max_layers = 12",
        "max_layers = 0",
        "params.max_layers",
    );
    assert_names(
        WRF,
        "conventions = [\"W1\", \"W2\"]",
        "conventions = [\"W3\"]",
        "params.conventions",
    );
}

// ----- shift-invariance ---------------------------------------------------------

#[test]
fn shift_committed_spec_is_supported_with_a_4096_row() {
    let run = timed(SHIFT);
    assert_eq!(verdict(&run), Verdict::Supported, "{:?}", run.report.reason);
    assert!(cell(&run, "Query rows", "4096", "rows i").starts_with("4095"));
    // every dyadic slope gives an exactly constant shift (an obligation); irrational ones are enclosed
    assert_eq!(
        cell(
            &run,
            "Rows computed both ways",
            "H = 8 paper, head 8: m = 2^−8",
            "exact constant shift"
        ),
        "proven (exact dyadics: the statement's obligation)"
    );
    assert_eq!(check(&run, "ALiBi, dyadic slopes").result, Certainty::True);
    assert!(figure(&run, "largest probability enclosure width") < 1e-30);
}

#[test]
fn shift_invariance_is_not_certified_on_overlapping_enclosures() {
    // irrational slopes (H = 12 paper rule) and Sandwich rest on overlaps: consistency
    // readings, observations that never certify nor refute
    let run = run_quick(SHIFT);
    assert_eq!(verdict(&run), Verdict::Supported);
    for prefix in ["ALiBi, every slope", "Sandwich (d̄"] {
        let c = check(&run, prefix);
        assert_eq!(c.kind, CheckKind::Consistency, "{prefix}");
        assert_eq!(c.result, Certainty::True);
    }
    // the only certified check is the exact dyadic shift, and it has a certificate
    let certified: Vec<_> = run
        .report
        .checks
        .iter()
        .filter(|c| c.kind == CheckKind::Certified)
        .collect();
    assert_eq!(certified.len(), 1);
    assert!(certified[0].name.starts_with("ALiBi, dyadic slopes"));
    let (_dir, path, cert) = cert_of(SHIFT);
    app::verify_file(&path, Some(&crate::util::root().join("theorems"))).unwrap();
    // an irrational slope (2^−(2/3)) never enters an exact obligation
    assert!(!cert.to_string().contains("2/3"));
    assert_eq!(si::dyadic_slope(&q("2/3")), None);
    assert_eq!(si::dyadic_slope(&q("3")), Some(q("1/8")));
    assert_eq!(
        expr::check(&si::shift_formula(&q("1/8"), 4095).to_string(), 128),
        Ok(Certainty::True)
    );
}

#[test]
fn shift_detects_a_non_constant_shift() {
    let p = 128;
    let tol = Interval::parse_decimal(p, "1e-12").unwrap();
    let mw = Interval::parse_decimal(p, "1e-30").unwrap();
    let a: Vec<Interval> = [0i64, 1, 2, 3]
        .iter()
        .map(|&v| Interval::from_i64(p, v))
        .collect();
    let af: Vec<f64> = vec![0.0, 1.0, 2.0, 3.0];
    // b = a + 5 exactly: overlapping enclosures, f64 within tolerance
    let b: Vec<Interval> = a.iter().map(|x| x + &Interval::from_i64(p, 5)).collect();
    let bf: Vec<f64> = af.iter().map(|x| x + 5.0).collect();
    let r = si::compare_rows(&a, &b, &af, &bf, &tol, &mw);
    assert!(!r.overlap.violated());
    assert!(r.f64_ok);
    assert!(r.narrow);
    // perturb one entry by 1/1024: not a constant shift, and the enclosures separate
    let mut b2 = b.clone();
    b2[3] = &b2[3] + &Interval::from_i64(p, 1).mul_2exp(-10);
    let mut bf2 = bf.clone();
    bf2[3] += 1.0 / 1024.0;
    let r = si::compare_rows(&a, &b2, &af, &bf2, &tol, &mw);
    assert!(r.overlap.violated());
    assert!(!r.f64_ok);
    // the exact obligation fails for a row that is not a constant shift
    assert_eq!(
        expr::check("(forall j 0 3 (= (- (+ j 5) j) 5))", 128),
        Ok(Certainty::True)
    );
    assert_eq!(
        expr::check("(and (= (- 5 0) 5) (= (- (+ 8 1/1024) 3) 5))", 128),
        Ok(Certainty::False)
    );
}

#[test]
fn shift_f64_tolerance_below_the_truth_is_inconclusive() {
    // short rows keep this run cheap; the f64 rows are off by ~1e-16, far above 1e-18
    let run = run_with(
        SHIFT,
        &[
            ("lengths = [16, 512, 4096]", "lengths = [16, 32, 64]"),
            ("f64_tol = \"1e-12\"", "f64_tol = \"1e-18\""),
        ],
    );
    // an f64 comparison is an observation: outside its tolerance the claim is
    // inconclusive (an observation never refutes)
    assert_eq!(verdict(&run), Verdict::Inconclusive);
    let c = check(&run, "ALiBi: an f64 log-sum-exp");
    assert_eq!(c.result, Certainty::False);
    assert_eq!(c.kind, CheckKind::Observed);
}

#[test]
fn shift_bad_inputs_name_the_field() {
    // the quick profile sets `rows`, so the error points into [profiles.quick]
    assert_names(
        SHIFT,
        "rows = [16, 2, 1]",
        "rows = [16, 2]",
        "profiles.quick.rows",
    );
    assert_names(
        SHIFT,
        "content_bits = 10",
        "content_bits = 41",
        "params.content_bits",
    );
    assert_names(
        SHIFT,
        "sandwich_dbar = 128",
        "sandwich_dbar = 127",
        "params.sandwich_dbar",
    );
    assert_names(
        SHIFT,
        "lengths = [16, 512, 4096]",
        "lengths = [16, 0, 4096]",
        "params.lengths[1]",
    );
    assert_names(
        SHIFT,
        "f64_tol = \"1e-12\"",
        "f64_tol = \"0\"",
        "params.f64_tol",
    );
}

// ----- length-usage -------------------------------------------------------------

#[test]
fn usage_committed_spec_is_supported_with_certified_parts() {
    let run = timed(USAGE);
    assert_eq!(verdict(&run), Verdict::Supported, "{:?}", run.report.reason);
    use attncheck::verdict::CheckKind;
    let certified = run
        .report
        .checks
        .iter()
        .filter(|c| c.kind == CheckKind::Certified)
        .count();
    assert!(certified >= 7);
    assert!(run.certificate.is_some());
    assert!(run
        .report
        .checks
        .iter()
        .all(|c| c.result == Certainty::True));
    // T_12(16384)/T_12(1024): positional.md §2 says "actual 4.07"; the exact ratio is
    // 4.07532 (4.08 to three figures). 4.07 is the ratio of the rounded §3 entries,
    // 0.5012/0.1230 = 4.0748 (documented in the report's notes).
    let r = figure(&run, "Sandwich h = 12: T(16384)/T(1024)");
    assert!((r - 4.07532).abs() < 1e-5, "{r}");
    assert!((0.5012f64 / 0.1230 - 4.07).abs() < 0.005);
    // 13.5% of the m = 2^−8 head's mass beyond 512
    let m = figure(&run, "ALiBi m = 2^-8: mass beyond 512 at L = 16384");
    assert!((m - 0.135).abs() < 0.0005, "{m}");
}

#[test]
fn usage_reproduces_the_tail_table() {
    let run = run_quick(USAGE);
    let refs: [(&str, [f64; 5]); 3] = [
        (
            "Sandwich h = 12: §3 | ours",
            [0.1230, 0.2290, 0.3227, 0.4096, 0.5012],
        ),
        (
            "Sandwich h = 9: §3 | ours",
            [0.03648, 0.06816, 0.09666, 0.1242, 0.1572],
        ),
        (
            "Sandwich h = 6: §3 | ours",
            [0.001224, 0.002029, 0.002579, 0.002986, 0.003413],
        ),
    ];
    for (col, vals) in refs {
        for (l, v) in ["1024", "2048", "4096", "8192", "16384"].iter().zip(vals) {
            let c = cell(&run, "Tail beyond 512", l, col);
            let ours: f64 = c.split(" | ").nth(1).unwrap().parse().unwrap();
            assert!(
                ((ours - v) / v).abs() < 1e-3,
                "{col} L = {l}: {ours} vs {v}"
            );
        }
    }
    // ALiBi directly: (x^512 − x^L)/(1 − x^L)
    for (m, l, v) in [
        ("2^-8", 1024, 0.1192),
        ("2^-8", 2048, 0.1350),
        ("2^-7", 1024, 0.01799),
    ] {
        let t = lu::alibi_tail(&Interval::from_rational(128, &q(m)), 512, l).mid_f64();
        assert!(((t - v) / v).abs() < 1e-3, "{m} {l}: {t}");
    }
    // bound (ii) tends to 1 as L grows (for h = 12: e^{−16})
    let c = q("8");
    let b1 = lu::sandwich_lower_bound(128, &c, 512, 1 << 20, 128).mid_f64();
    let b2 = lu::sandwich_lower_bound(128, &c, 512, 1 << 40, 128).mid_f64();
    assert!(b1 < b2 && b2 > 0.99, "{b1} {b2}");
}

#[test]
fn usage_wrong_values_are_refuted_and_a_failed_trend_is_inconclusive() {
    // three wrong certified statements in one run (each check must fail on its own)
    let run = run_with(
        USAGE,
        &[
            ("growth_min_ratio = \"3\"", "growth_min_ratio = \"4.1\""),
            ("printed = \"0.135\"", "printed = \"0.136\""),
            ("\"0.1230\"", "\"0.1250\""),
        ],
    );
    assert_eq!(verdict(&run), Verdict::Refuted);
    for prefix in ["Sandwich h = 12: T(16384)/T(1024) ≥", "(iii)", "§3 table"] {
        assert_eq!(check(&run, prefix).result, Certainty::False, "{prefix}");
    }
    // the growth pattern is an observation: failing it is inconclusive, not refuted
    let run = run_edited(USAGE, "growth_min_step = 0.05", "growth_min_step = 0.1");
    assert_eq!(verdict(&run), Verdict::Inconclusive);
}

#[test]
fn usage_bad_inputs_name_the_field() {
    assert_names(
        USAGE,
        "lengths = [1024, 2048, 4096, 8192, 16384]",
        "lengths = [1024, 4096, 2048, 8192, 16384]",
        "params.lengths[2]",
    );
    assert_names(
        USAGE,
        "flat_from = 4096",
        "flat_from = 4000",
        "params.flat_from",
    );
    assert_names(
        USAGE,
        "growth_head = 12",
        "growth_head = 13",
        "params.growth_head",
    );
    assert_names(
        USAGE,
        "values = [\"0.1192\", \"0.1350\", \"0.1353\", \"0.1353\", \"0.1353\"]",
        "values = [\"0.1192\", \"0.1350\"]",
        "params.alibi_reference[0].values",
    );
}
