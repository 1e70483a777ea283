//! positional/sandwich-identity, sandwich-log-decay, sandwich-head-power-law and
//! toy-receptive-field: the reference numbers of positional.md §3, the committed
//! specs' verdicts, perturbations that must not certify, and bad inputs.

use crate::util::{figure, run_quick, run_text, spec_path, spec_text, verdict};
use attncheck::app::ClaimRun;
use attncheck::claims;
use attncheck::claims::positional::common::{
    line_fit, sandwich_centred, sandwich_centred_f64, sandwich_freqs, sandwich_freqs_f64, IndexFrom,
};
use attncheck::claims::positional::sandwich_head_power_law::alpha;
use attncheck::claims::positional::sandwich_identity::{certify_negative, sample_pairs};
use attncheck::claims::positional::sandwich_log_decay::{decide_steps, kerple_fit, kerple_r2};
use attncheck::kernel::{parse_rational, Certainty, Interval};
use attncheck::spec::{Profile, Spec};
use attncheck::verdict::Verdict;

const IDENTITY: &str = "positional/sandwich-identity";
const LOG_DECAY: &str = "positional/sandwich-log-decay";
const POWER_LAW: &str = "positional/sandwich-head-power-law";

/// Moved from src/claims/positional/common.rs's unit tests (the library is compiled
/// once for the tests).
#[test]
fn sandwich_reference() {
    let f = sandwich_freqs(128, IndexFrom::Zero, 128);
    let b1 = sandwich_centred(1, &f);
    assert!(
        b1.contains_rational(&parse_rational("-1.90631619423238").unwrap()) || {
            let m = b1.mid_f64();
            (m + 1.90631619423238).abs() < 1e-13
        }
    );
    let b512 = sandwich_centred(512, &f).mid_f64();
    assert!((b512 + 49.9568401561533).abs() < 1e-12);
}
const TOY: &str = "positional/toy-receptive-field";

/// The committed spec text with several exact edits (each `from` must occur once).
fn edited(id: &str, edits: &[(&str, &str)]) -> String {
    let mut text = spec_text(id);
    for (from, to) in edits {
        assert_eq!(
            text.matches(from).count(),
            1,
            "`{from}` must occur once in {id}"
        );
        text = text.replacen(from, to, 1);
    }
    text
}

fn run_with(id: &str, edits: &[(&str, &str)]) -> ClaimRun {
    run_text(id, &edited(id, edits), Profile::Quick)
}

/// A cheap instance of the identity claim: the minimum over r < 300 (at r = 265,
/// B̃ = −50.1351270070983…, computed independently with mpmath at 30 digits),
/// negativity up to 2000, two random pairs.
const SMALL_IDENTITY: [(&str, &str); 5] = [
    ("below = 20000", "below = 300"),
    ("\nr = 17156", "\nr = 265"),
    ("value = \"-81.9356\"", "value = \"-50.1351\""),
    ("negative_up_to = 100000", "negative_up_to = 2000"),
    (
        "[profiles.quick]\npairs = 24",
        "[profiles.quick]\npairs = 2",
    ),
];

fn small_identity(extra: &[(&str, &str)]) -> ClaimRun {
    let mut e: Vec<(&str, &str)> = SMALL_IDENTITY.to_vec();
    e.extend_from_slice(extra);
    run_with(IDENTITY, &e)
}

fn check<'a>(run: &'a ClaimRun, prefix: &str) -> &'a attncheck::verdict::Check {
    run.report
        .checks
        .iter()
        .find(|c| c.name.starts_with(prefix))
        .unwrap_or_else(|| panic!("no check starting with `{prefix}`"))
}

/// Re-checks a run's certificate with the kernel alone, as `attncheck verify` does:
/// with the statement rebuilt from the committed spec when the claim has a statement
/// builder (`with_spec`), else the certificate's own obligations.
fn certificate_holds(run: &ClaimRun, with_spec: bool) {
    let (file, text) = run.certificate.as_ref().expect("a certificate");
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join(std::path::Path::new(file).file_name().unwrap());
    std::fs::write(&path, text).unwrap();
    let theorems = crate::util::root().join("theorems");
    let v = attncheck::app::verify_file(&path, with_spec.then_some(theorems.as_path()))
        .unwrap_or_else(|e| panic!("{e}"));
    for d in v.checked.decisions() {
        assert_eq!(d.result(), Certainty::True, "{}", d.name());
    }
}

// ----- sandwich-identity -----

#[test]
fn identity_committed_spec_is_certified() {
    let t = std::time::Instant::now();
    let run = run_quick(IDENTITY);
    eprintln!("{IDENTITY}: quick run {:.1?}", t.elapsed());
    assert_eq!(verdict(&run), Verdict::Certified, "{:?}", run.report.reason);
    // every check is an obligation of the statement, which verify rebuilds from the spec
    assert!(run
        .report
        .checks
        .iter()
        .all(|c| c.kind == attncheck::verdict::CheckKind::Certified));
    certificate_holds(&run, true);
}

#[test]
fn identity_b_table_reproduces_section_3_in_both_conventions() {
    // positional.md §3, d̄ = 128, printed to 3 decimals
    let r = [
        0i64, 1, 2, 5, 10, 50, 100, 200, 512, 1000, 2000, 10000, 16384,
    ];
    let zero = [
        0.0, -1.906, -6.618, -16.815, -21.180, -29.045, -33.457, -44.436, -49.957, -53.822,
        -62.138, -65.785, -73.106,
    ];
    let one = [
        0.0, -1.447, -5.202, -16.099, -19.341, -29.010, -33.319, -43.923, -47.961, -53.390,
        -60.790, -64.293, -72.345,
    ];
    for (from, want) in [(IndexFrom::Zero, zero), (IndexFrom::One, one)] {
        let f = sandwich_freqs(128, from, 128);
        let f64s = sandwich_freqs_f64(128, from);
        for (&r, &w) in r.iter().zip(&want) {
            let b = sandwich_centred(r, &f);
            assert!(
                (b.mid_f64() - w).abs() <= 5e-4,
                "{from:?} r = {r}: {}",
                b.mid_f64()
            );
            // the f64 formula agrees with the enclosure to 1e−9 absolute
            assert!((sandwich_centred_f64(r as f64, &f64s) - b.mid_f64()).abs() < 1e-9);
            assert!(b.width_up() < 1e-30);
        }
    }
}

#[test]
fn identity_more_digits_and_minimum_reproduce_section_3() {
    let f = sandwich_freqs(128, IndexFrom::Zero, 128);
    for (r, v, tol) in [
        (1, "-1.90631619423238", 5e-15),
        (512, "-49.9568401561533", 5e-14),
        (11, "-21.6556767823", 5e-11),
        (12, "-21.6186137031", 5e-11),
        (17156, "-81.9356", 5e-5),
    ] {
        let b = sandwich_centred(r, &f);
        let want = Interval::from_rational(128, &parse_rational(v).unwrap());
        let d = (&b - &want).abs();
        assert!(d.hi_f64() <= tol, "B̃({r}) = {} vs {v}", b.fmt_outward(18));
    }
    let run = run_quick(IDENTITY);
    let m = figure(&run, "min of B̃ over 0 ≤ r < 20000 (d̄ = 128, I from 0)");
    assert!((m + 81.9356).abs() <= 5e-5, "{m}");
    let text = &run.report.figures[0].text;
    assert!(text.ends_with("at r = 17156"), "{text}");
    assert_eq!(
        check(&run, "d̄ = 128, I from 0: the minimum of B̃").result,
        Certainty::True
    );
    // snapshot of the table's figures (check_tolerance 1e−9 in --check)
    assert!((figure(&run, "B̃(512), d̄ = 128, I from 1") + 47.9613171989).abs() < 1e-9);
}

#[test]
fn identity_negativity_is_certified_through_one_term_and_fails_at_r_0() {
    let n = certify_negative(128, IndexFrom::One, 1, 3000, 128);
    assert_eq!(n.certainty, Certainty::True);
    assert_eq!(n.runs, vec![(1, 3000, 0)]); // term i = 1 (index 0 of I from 1)
    let z = certify_negative(64, IndexFrom::Zero, 1, 3000, 128);
    assert_eq!(z.certainty, Certainty::True);
    // B̃(0) = 0: no term is negative, so a range containing 0 is never certified
    let bad = certify_negative(128, IndexFrom::Zero, 0, 10, 128);
    assert_ne!(bad.certainty, Certainty::True);
    assert_eq!(bad.undecided, vec![0]);
}

#[test]
fn identity_sampled_pairs_stay_in_range_and_shift_inside() {
    let p = sample_pairs(16384, 50, 7);
    assert_eq!(p.len(), 54);
    assert_eq!(
        &p[..4].iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
        &[(0, 0), (16384, 0), (0, 16384), (16384, 16384)]
    );
    for &(m, n, k) in &p {
        for x in [m, n, m + k, n + k] {
            assert!((0..=16384).contains(&x));
        }
    }
    assert_eq!(p, sample_pairs(16384, 50, 7), "deterministic");
}

#[test]
fn identity_small_instance_is_certified() {
    let run = small_identity(&[]);
    assert_eq!(verdict(&run), Verdict::Certified, "{:?}", run.report.reason);
    certificate_holds(&run, false);
}

#[test]
fn identity_perturbed_table_value_is_refuted() {
    let run = small_identity(&[("\"-1.906\"", "\"-1.916\"")]);
    assert_eq!(verdict(&run), Verdict::Refuted);
    assert_eq!(
        check(&run, "§3 table, d̄ = 128, I from 0").result,
        Certainty::False
    );
    assert_eq!(
        check(&run, "§3 table, d̄ = 128, I from 1").result,
        Certainty::True
    );
}

#[test]
fn identity_wrong_argmin_and_extra_digit_are_refuted() {
    // B̃(264) > B̃(265): claiming the minimum at 264 is a certified counterexample
    let run = small_identity(&[("\nr = 265", "\nr = 264")]);
    assert_eq!(verdict(&run), Verdict::Refuted);
    assert_eq!(
        check(&run, "d̄ = 128, I from 0: the minimum of B̃").result,
        Certainty::False
    );
    // one unit off in the last printed digit
    let run = small_identity(&[("\"-21.6556767823\"", "\"-21.6556767824\"")]);
    assert_eq!(verdict(&run), Verdict::Refuted);
}

#[test]
fn identity_f64_tolerance_grades_the_plots_not_the_claim() {
    // the f64 forms are ~5e−14·d̄/2 off at m, n ≈ 16384: a tighter tolerance is
    // reported (our plotting code), and the claim's obligations, which use no f64, stand
    let run = small_identity(&[("f64_rel_tol = \"1e-12\"", "f64_rel_tol = \"1e-15\"")]);
    assert_eq!(verdict(&run), Verdict::Certified);
    assert!(run
        .report
        .notes
        .iter()
        .any(|n| n.contains("f64 helpers used for plots are NOT within 1e-15")));
}

#[test]
fn identity_negativity_hint_must_cover_every_r() {
    // a wrong or partial hint cannot certify: the statement builder rejects it
    use attncheck::claims::statement_of;
    let spec = attncheck::claims::load_spec(&crate::util::spec_path(IDENTITY)).unwrap();
    let good = |text: &str| {
        let mut h = attncheck::certificate::Hints::new();
        for key in [
            "negative terms (I from 0, dbar = 64,128,256)",
            "negative terms (I from 1, dbar = 64)",
            "negative terms (I from 1, dbar = 128)",
            "negative terms (I from 1, dbar = 256)",
        ] {
            let t = if key.contains("I from 0") {
                "1-100000:0"
            } else {
                text
            };
            h.insert(key.into(), t.into());
        }
        statement_of(&spec, Profile::Quick, &h)
    };
    assert!(good("1-100000:1").unwrap().is_some());
    for bad in [
        "1-99999:1",
        "2-100000:1",
        "1-50000:1,50002-100000:1",
        "1-100000:0",
        "1-100000:99",
        "x",
    ] {
        assert!(good(bad).is_err(), "{bad}");
    }
}

// ----- sandwich-log-decay -----

#[test]
fn log_decay_committed_spec_is_supported_with_certified_counts() {
    let t = std::time::Instant::now();
    let run = run_quick(LOG_DECAY);
    eprintln!("{LOG_DECAY}: quick run {:.1?}", t.elapsed());
    assert_eq!(verdict(&run), Verdict::Supported, "{:?}", run.report.reason);
    assert_eq!(
        figure(&run, "increases of B̃ over r = 1..2000 (d̄ = 128, I from 0)"),
        972.0
    );
    for name in [
        "d̄ = 64, I from 0: 989 increases",
        "d̄ = 128, I from 0: 972 increases",
        "d̄ = 256, I from 0: 923 increases",
        "d̄ = 128, I from 0: the first increase is B̃(12) > B̃(11)",
        "d̄ = 128, I from 1: the first increase is B̃(14) > B̃(13)",
        "d̄ = 128, I from 0: B̃(12) − B̃(11) = 0.037",
    ] {
        let c = check(&run, name);
        assert_eq!(c.result, Certainty::True, "{name}");
        assert_eq!(c.kind, attncheck::verdict::CheckKind::Certified);
    }
    let gap = figure(&run, "gap B̃(12) − B̃(11) (d̄ = 128)");
    assert!((gap - (-21.6186137031 + 21.6556767823)).abs() < 1e-10);
    certificate_holds(&run, true);
}

#[test]
fn log_decay_steps_reproduce_first_increases_and_counts() {
    for (dbar, from, first, count, min_step) in [
        (64, IndexFrom::Zero, 6, Some(989), Some(1.9e-4)),
        (128, IndexFrom::Zero, 12, Some(972), Some(4.2e-5)),
        (256, IndexFrom::Zero, 25, Some(923), Some(1.4e-3)),
        (128, IndexFrom::One, 14, None, None),
    ] {
        let f = sandwich_freqs(dbar, from, 128);
        let n = if count.is_some() { 2000 } else { 20 };
        let b: Vec<Interval> = (0..=n).map(|r| sandwich_centred(r, &f)).collect();
        let s = decide_steps(&b, dbar, from);
        assert_eq!(s.first_increase(), Some(first), "d̄ = {dbar}");
        if let Some(c) = count {
            assert_eq!(s.count(), Some(c), "d̄ = {dbar}");
            let m = s.min_step.0.mid_f64();
            let want: f64 = min_step.unwrap();
            // printed to 2 significant digits
            assert!((m - want).abs() <= want * 0.03, "d̄ = {dbar}: {m}");
        }
    }
}

#[test]
fn log_decay_fit_table_reproduces_its_printed_digits() {
    // positional.md §3: (a, c, R²) on [1, 512] and [32, 2048]; a_pred = −d̄/(2 ln 10⁴)
    let table = [
        (
            64,
            -3.4744,
            [(-3.5108, -2.322, 0.7052), (-3.4214, -2.806, 0.5305)],
        ),
        (
            128,
            -6.9487,
            [(-6.9546, -4.435, 0.8575), (-6.9906, -4.255, 0.7406)],
        ),
        (
            256,
            -13.8974,
            [(-14.0417, -7.799, 0.9470), (-13.8782, -8.617, 0.8768)],
        ),
    ];
    for (dbar, a_pred, fits) in table {
        assert!((-(dbar as f64) / (2.0 * 1e4f64.ln()) - a_pred).abs() <= 5e-5);
        let f = sandwich_freqs_f64(dbar, IndexFrom::Zero);
        for ((lo, hi), (a, c, r2)) in [(1i64, 512i64), (32, 2048)].into_iter().zip(fits) {
            let x: Vec<f64> = (lo..=hi).map(|r| (r as f64).ln()).collect();
            let y: Vec<f64> = (lo..=hi)
                .map(|r| sandwich_centred_f64(r as f64, &f))
                .collect();
            let fit = line_fit(&x, &y).unwrap();
            assert!(
                (fit.slope - a).abs() <= 5e-5,
                "d̄ = {dbar} [{lo}, {hi}]: a = {}",
                fit.slope
            );
            assert!(
                (fit.intercept - c).abs() <= 5e-4,
                "d̄ = {dbar}: c = {}",
                fit.intercept
            );
            assert!((fit.r2 - r2).abs() <= 5e-5, "d̄ = {dbar}: R² = {}", fit.r2);
            assert!((fit.slope - a_pred).abs() / a_pred.abs() <= 0.05);
        }
    }
}

#[test]
fn log_decay_kerple_fit_reproduces_r2_and_a_flat_optimum() {
    let f = sandwich_freqs_f64(128, IndexFrom::Zero);
    let rs: Vec<f64> = (0..=512).map(|r| r as f64).collect();
    let ys: Vec<f64> = rs.iter().map(|&r| sandwich_centred_f64(r, &f)).collect();
    let (r1, r2, r2sq) = kerple_fit(&rs, &ys);
    assert!((r2sq - 0.8645).abs() <= 5e-5, "{r2sq}");
    assert!(r2sq >= 0.8);
    // (r1, r2) reported, not asserted tightly: the optimum is flat
    assert!(
        (r1 - 7.035).abs() < 0.01 && (r2 - 1.758).abs() < 0.01,
        "{r1} {r2}"
    );
    assert!((kerple_r2(&rs[1..], &ys[1..], r1, r2) - 0.8563).abs() <= 5e-5);
    assert!((kerple_r2(&rs, &ys, 7.16, 1.58) - 0.8643).abs() <= 5e-5);
}

#[test]
fn log_decay_wrong_count_is_refuted() {
    let run = run_with(LOG_DECAY, &[("count = 972", "count = 973")]);
    assert_eq!(verdict(&run), Verdict::Refuted);
    assert_eq!(
        check(&run, "d̄ = 128, I from 0: 973 increases").result,
        Certainty::False
    );
}

// ----- sandwich-head-power-law -----

#[test]
fn power_law_committed_spec_is_supported() {
    let t = std::time::Instant::now();
    let run = run_quick(POWER_LAW);
    eprintln!("{POWER_LAW}: quick run {:.1?}", t.elapsed());
    assert_eq!(verdict(&run), Verdict::Supported, "{:?}", run.report.reason);
    // 0.60% at d̄ = 128 (the fit table's −6.9906 vs −6.9487)
    let e = figure(
        &run,
        "worst relative error of the fitted exponent (d̄ = 128, H = 12)",
    );
    assert!((100.0 * e - 0.60).abs() <= 0.005, "{e}");
    for (prefix, ok) in [
        ("d̄ = 64: relative error of the fitted exponent = 1.5%", true),
        (
            "d̄ = 256: relative error of the fitted exponent = 0.14%",
            true,
        ),
        ("H = 12, d̄ = 128: α_h < 1 exactly for h ∈ [11, 12]", true),
        ("H = 8, d̄ = 128: α_h < 1 exactly for h ∈ [7, 8]", true),
        ("ALiBi, H ∈ [12, 8], both slope rules", true),
    ] {
        assert_eq!(
            check(&run, prefix).result == Certainty::True,
            ok,
            "{prefix}"
        );
    }
}

#[test]
fn power_law_alpha_tables_reproduce_section_3() {
    let h12 = [
        10.42, 5.21, 3.47, 2.61, 2.08, 1.74, 1.49, 1.30, 1.158, 1.042, 0.948, 0.869,
    ];
    let digits = [2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3];
    for (h, (&v, &d)) in h12.iter().zip(&digits).enumerate() {
        let a = alpha(128, 12, h + 1, 128).mid_f64();
        assert!(
            (a - v).abs() <= 0.5 * 10f64.powi(-d) + 1e-12,
            "h = {}: {a}",
            h + 1
        );
    }
    assert!((alpha(128, 12, 1, 128).mid_f64() - 10.4231).abs() <= 5e-5);
    assert!((alpha(128, 8, 1, 128).mid_f64() - 6.9487).abs() <= 5e-5);
    assert!((alpha(128, 8, 7, 128).mid_f64() - 0.993).abs() <= 5e-4);
    assert!((alpha(128, 8, 8, 128).mid_f64() - 0.869).abs() <= 5e-4);
    let one = Interval::one(128);
    let below: Vec<usize> = (1..=12)
        .filter(|&h| alpha(128, 12, h, 128).lt(&one).is_true())
        .collect();
    assert_eq!(below, vec![11, 12]);
}

// ----- toy-receptive-field -----

/// (model, L) → "ours" and "§3" cells of the RF table.
fn rf_rows(run: &ClaimRun) -> Vec<(String, String, String, String)> {
    let t = run
        .report
        .tables
        .iter()
        .find(|t| t.title.starts_with("Toy RF99"))
        .expect("RF table");
    t.rows
        .iter()
        .map(|r| (r[0].clone(), r[1].clone(), r[2].clone(), r[3].clone()))
        .collect()
}

#[test]
fn toy_committed_spec_is_supported_and_reproduces_the_rf_table() {
    let t = std::time::Instant::now();
    let run = run_quick(TOY);
    eprintln!("{TOY}: quick run {:.1?}", t.elapsed());
    assert_eq!(verdict(&run), Verdict::Supported, "{:?}", run.report.reason);
    let rows = rf_rows(&run);
    assert_eq!(rows.len(), 26);
    // positional.md §3, residual / no residual; every value is expected exactly
    let want = [
        ("window w = 40", "4096", "227 / 326"),
        ("window w = 80", "512", "458 / 511"),
        ("window w = 80", "1024", "458 / 658"),
        ("ALiBi code slopes", "2048", "1318 / 1772"),
        ("ALiBi code slopes", "4096", "1329 / 1844"),
        ("ALiBi paper slopes", "4096", "1456 / 2052"),
        ("Sandwich", "512", "504 / 511"),
        ("Sandwich", "4096", "3969 / 4064"),
        ("window w = 40 (W2)", "1024", "233 / 334"),
        ("window w = 80 (W2)", "4096", "464 / 666"),
    ];
    for (m, l, v) in want {
        let r = rows.iter().find(|r| r.0 == m && r.1 == l).expect("row");
        assert_eq!(r.2, v, "{m} at L = {l}");
    }
    for r in &rows {
        assert_eq!(r.2, r.3, "{} at L = {}", r.0, r.1);
    }
    assert_eq!(figure(&run, "RF99 values matching §3 exactly"), 52.0);
    let change = figure(
        &run,
        "RF99 change ALiBi code slopes (residual), L = 2048 → 4096",
    );
    assert!(change <= 0.02 && (change - 11.0 / 1318.0).abs() < 1e-12);
    assert!(figure(&run, "RF99 ratio Sandwich (residual), L = 4096 / 2048") >= 1.8);
    // the 128-bit run decides RF99 at L = 512 and agrees with f64
    assert_eq!(
        check(&run, "L = 512: RF99 of every model").result,
        Certainty::True
    );
}

#[test]
fn toy_wrong_reference_is_not_supported() {
    let run = run_with(
        TOY,
        &[(
            "residual = [511, 985, 1318, 1329]",
            "residual = [511, 985, 1318, 1333]",
        )],
    );
    assert_eq!(verdict(&run), Verdict::Inconclusive);
    assert!(check(&run, "ALiBi code slopes: RF99 reproduces")
        .detail
        .contains("1329 vs 1333"));
}

#[test]
fn toy_receptive_field_reference_227_changed_to_228_fails_run_at_tolerance_0() {
    // the README's "exactly": every RF99 value must match, not within ±1
    assert!(spec_text(TOY).contains("rf_tolerance = 0"));
    let run = run_with(
        TOY,
        &[(
            "residual = [227, 227, 227, 227]",
            "residual = [227, 227, 227, 228]",
        )],
    );
    assert_ne!(verdict(&run), Verdict::Supported);
    let c = check(&run, "window w = 40: RF99 reproduces");
    assert_eq!(c.result, Certainty::False);
    assert!(c.detail.contains("227 vs 228"), "{}", c.detail);
}

/// The committed run's certificate is its whole statement (every certified check an
/// obligation, the same names), `verify` accepts it, and tampered copies are rejected:
/// every formula trivial, one obligation deleted, a literal (bound) changed, a hint changed.
pub fn certificate_is_the_statement_and_tampers_are_rejected(id: &str, bound: (&str, &str)) {
    use attncheck::app;
    let run = run_quick(id);
    let (file, text) = run.certificate.as_ref().expect("a certificate");
    let cert: serde_json::Value = serde_json::from_str(text).unwrap();
    let certified: Vec<&str> = run
        .report
        .checks
        .iter()
        .filter(|c| c.kind == attncheck::verdict::CheckKind::Certified)
        .map(|c| c.name.as_str())
        .collect();
    let names: Vec<&str> = cert["obligations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(certified, names, "{id}");
    let dir = tempfile::tempdir().unwrap();
    let theorems = crate::util::root().join("theorems");
    let path = dir
        .path()
        .join(std::path::Path::new(file).file_name().unwrap());
    let verify = |c: &serde_json::Value| {
        std::fs::write(&path, serde_json::to_string(c).unwrap()).unwrap();
        app::verify_file(&path, Some(&theorems))
    };
    assert!(verify(&cert).unwrap().checked.as_expected(), "{id}");
    let rejected = |c: &serde_json::Value| matches!(verify(c), Err(app::Error::Rejected { .. }));
    let mut bad = cert.clone();
    for o in bad["obligations"].as_array_mut().unwrap() {
        o["formula"] = "(<= 0 1)".into();
    }
    assert!(rejected(&bad), "{id}: trivial formulas");
    let mut bad = cert.clone();
    bad["obligations"].as_array_mut().unwrap().pop();
    assert!(rejected(&bad), "{id}: an obligation deleted");
    let mut bad = cert.clone();
    let o = bad["obligations"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|o| o["formula"].as_str().unwrap().contains(bound.0))
        .unwrap_or_else(|| panic!("{id}: no formula with `{}`", bound.0));
    let f = o["formula"].as_str().unwrap().replacen(bound.0, bound.1, 1);
    o["formula"] = f.into();
    assert!(rejected(&bad), "{id}: a bound changed");
    if let Some(h) = cert.get("hints").and_then(|h| h.as_object()) {
        let key = h.keys().next().unwrap().clone();
        let mut bad = cert.clone();
        let v = bad["hints"][&key].as_str().unwrap().to_string();
        bad["hints"][&key] = format!("{v}1").into();
        assert!(
            !matches!(verify(&bad), Ok(v) if v.checked.as_expected()),
            "{id}: a hint changed"
        );
    }
}

#[test]
fn head_power_law_formulas_written_twice_now_come_from_one_statement() {
    let id = "positional/sandwich-head-power-law";
    certificate_is_the_statement_and_tampers_are_rejected(id, ("(ln 10000)", "(ln 10001)"));
    // Coq-translatable: exact literals and exp/ln only, no abs, no data
    let run = run_quick(id);
    let text = &run.certificate.as_ref().unwrap().1;
    for op in [
        "(abs", "(sqrt", "(sin", "(pow", "(min", "(max", "(floor", "(ceil", "\"data\"",
    ] {
        assert!(!text.contains(op), "{op} in the certificate");
    }
}

// ----- bad inputs name the field and the line -----

fn prepare_err(id: &str, text: &str) -> String {
    let spec = match Spec::parse(&spec_path(id), text) {
        Ok(s) => s,
        Err(e) => return e.to_string(),
    };
    match (claims::find(id).unwrap().prepare)(&spec, Profile::Quick) {
        Ok(_) => panic!("expected an error for {id}"),
        Err(e) => e.to_string(),
    }
}

/// The 1-based line of the `n`-th (0-based) line containing `needle`.
fn line_of(text: &str, needle: &str, n: usize) -> usize {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .nth(n)
        .map(|(i, _)| i + 1)
        .expect("needle")
}

fn assert_names(id: &str, edits: &[(&str, &str)], field: &str, needle: &str, nth: usize) {
    let text = edited(id, edits);
    let e = prepare_err(id, &text);
    let file = id.split('/').nth(1).unwrap();
    let line = line_of(&text, needle, nth);
    assert!(
        e.contains(&format!("{file}.toml:{line}: {field}")),
        "expected `{file}.toml:{line}: {field}` in: {e}"
    );
}

#[test]
fn identity_bad_inputs_name_the_field() {
    assert_names(
        IDENTITY,
        &[("dbars = [64, 128, 256]", "dbars = [64, 127, 256]")],
        "params.dbars[1]",
        "dbars = [64, 127",
        0,
    );
    assert_names(
        IDENTITY,
        &[("\nr = 17156", "\nr = 20000")],
        "params.minimum.r",
        "r = 20000",
        0,
    );
    assert_names(
        IDENTITY,
        &[("\"-49.9568401561533\"", "\"abc\"")],
        "params.more_digits.values[1]",
        "\"abc\"",
        0,
    );
    assert_names(
        IDENTITY,
        &[("tolerance = \"5e-4\"", "tolerance = \"-5e-4\"")],
        "params.table.tolerance",
        "tolerance = \"-5e-4\"",
        0,
    );
    assert_names(
        IDENTITY,
        &[("negative_up_to = 100000", "negative_up_to = 0")],
        "params.negative_up_to",
        "negative_up_to = 0",
        0,
    );
    let e = prepare_err(IDENTITY, &edited(IDENTITY, &[("\"-73.106\"]", "]")]));
    assert!(
        e.contains("params.table.zero") && e.contains("12 values for 13"),
        "{e}"
    );
}

#[test]
fn log_decay_bad_inputs_name_the_field() {
    assert_names(
        LOG_DECAY,
        &[("first = 12", "first = 0")],
        "params.increases[1].first",
        "first = 0",
        0,
    );
    assert_names(
        LOG_DECAY,
        &[("fit_ranges = [[1, 512]", "fit_ranges = [[0, 512]")],
        "params.fit_ranges[0]",
        "fit_ranges",
        0,
    );
    assert_names(
        LOG_DECAY,
        &[("r2_dbar = 128", "r2_dbar = 100")],
        "params.r2_dbar",
        "r2_dbar = 100",
        0,
    );
    assert_names(
        LOG_DECAY,
        &[("min_step = \"4.2e-5\"", "min_step = \"4.2/5\"")],
        "params.increases[1].min_step",
        "4.2/5",
        0,
    );
}

#[test]
fn power_law_bad_inputs_name_the_field() {
    assert_names(
        POWER_LAW,
        &[("fit_range = [32, 2048]", "fit_range = [30, 2048]")],
        "params.fit_range",
        "fit_range",
        0,
    );
    assert_names(
        POWER_LAW,
        &[("plot_heads = [3, 6, 9, 12]", "plot_heads = [3, 6, 9, 13]")],
        "params.plot_heads[3]",
        "plot_heads",
        0,
    );
    assert_names(
        POWER_LAW,
        &[("first_head = 7", "first_head = 8")],
        "params.alpha_reference[1].first_head",
        "first_head = 8",
        0,
    );
}

#[test]
fn toy_bad_inputs_name_the_field() {
    assert_names(
        TOY,
        &[("w = 40\nconvention = \"W1\"", "w = 0\nconvention = \"W1\"")],
        "params.models[0].w",
        "w = 0",
        0,
    );
    assert_names(
        TOY,
        &[("kind = \"alibi\"\nrule = \"code\"\n", "kind = \"alibi\"\n")],
        "params.models[2].rule",
        "[[params.models]]",
        2,
    );
    assert_names(
        TOY,
        &[("threshold = \"0.99\"", "threshold = \"1.5\"")],
        "params.threshold",
        "threshold",
        0,
    );
    assert_names(
        TOY,
        &[("model = \"Sandwich\"", "model = \"Sandwhich\"")],
        "params.growth[0].model",
        "Sandwhich",
        0,
    );
    assert_names(
        TOY,
        &[(
            "residual = [227, 227, 227, 227]",
            "residual = [227, 227, 227]",
        )],
        "params.models[0].residual",
        "residual = [227, 227, 227]",
        0,
    );
}
