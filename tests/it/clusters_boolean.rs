//! clusters/boolean-limit: the A_n thresholds of clusters.md §4, the symmetric
//! witness (S), the per-step invariants (observed), the leaders, a horizon too short
//! for the limit structure, and bad input.

use crate::util::{cell, figure, line_of, prepare_err, run_edited, run_quick, spec_text, verdict};
use attncheck::claims::clusters::boolean_limit::hypotheses::{lemma_a, PART};
use attncheck::claims::clusters::boolean_limit::{threshold_a, FLOW_PART};
use attncheck::kernel::Certainty;
use attncheck::kernel::Expect;
use attncheck::verdict::{CheckKind, Verdict};

const ID: &str = "clusters/boolean-limit";

fn check<'a>(
    run: &'a attncheck::app::ClaimRun,
    prefix: &str,
) -> Vec<&'a attncheck::verdict::Check> {
    let v: Vec<_> = run
        .report
        .checks
        .iter()
        .filter(|c| c.name.starts_with(prefix))
        .collect();
    assert!(!v.is_empty(), "no check starting with `{prefix}`");
    v
}

/// clusters.md §4: A_n with A² = n² e^{−A²}, to relative 1e−11.
#[test]
fn thresholds_reproduce_reference_values() {
    let refs = [
        (2, 1.09643416273),
        (3, 1.29576865983),
        (5, 1.53627811789),
        (8, 1.74507527142),
        (10, 1.84000819028),
        (20, 2.11888710165),
    ];
    for (n, r) in refs {
        let a = threshold_a(n, 128);
        assert!(a.width_up().to_f64() < 1e-30, "A_{n} enclosure too wide");
        let mid = a.mid_f64();
        assert!(
            ((mid - r) / r).abs() < 1e-11,
            "A_{n} = {mid}, reference {r}"
        );
        // and it solves A² = n² e^{−A²}: u e^u − n² changes sign across the enclosure
        let (lo, hi) = (a.lo_f64().powi(2), a.hi_f64().powi(2));
        let n2 = f64::from(n * n);
        assert!(lo * lo.exp() <= n2 * (1.0 + 1e-12) && hi * hi.exp() >= n2 * (1.0 - 1e-12));
    }
    // n = 1: W(1) = Ω = 0.5671432904097838, A_1 = √Ω
    let a1 = threshold_a(1, 128).mid_f64();
    assert!(
        (a1 - 0.567_143_290_409_783_8f64.sqrt()).abs() < 1e-15,
        "{a1}"
    );
}

#[test]
fn quick_run_is_supported_with_thresholds_in_report() {
    let run = run_quick(ID);
    assert_eq!(verdict(&run), Verdict::Supported, "{}", run.markdown);
    for c in &run.report.checks {
        assert_ne!(c.result, Certainty::False, "{}: {}", c.name, c.detail);
        assert_ne!(c.result, Certainty::Unknown, "{}: {}", c.name, c.detail);
    }
    let a8 = cell(&run, "Threshold A_n", "8", "reference (clusters.md §4)");
    assert_eq!(a8, "1.74507527142");
    assert!((figure(&run, "A_8") - 1.74507527142).abs() < 1e-11);
    for c in check(&run, "A_") {
        assert_eq!(c.kind, CheckKind::Certified);
        assert_eq!(c.result, Certainty::True, "{}", c.detail);
    }
}

#[test]
/// Proven on every step by the claim's own enclosures; observations since issue #24
/// (no certificate carries them), so they can never certify or refute the claim.
fn order_gap_and_row_bound_invariants_are_proven_on_every_step() {
    let run = run_quick(ID);
    // the (G) tallies pool the 4 seeds of the quick profile: 4 × 140 steps
    for (prefix, steps) in [
        ("(G) (V, QK) = (1, 1)", 560),
        ("(G) (V, QK) = (1/2, 4)", 560),
        ("(S)", 140),
    ] {
        for name in ["order kept and gaps nondecreasing", "pointwise row bound"] {
            let cs = check(&run, &format!("{prefix}: {name}"));
            assert_eq!(cs.len(), 1);
            let c = cs[0];
            assert_eq!(c.kind, CheckKind::Observed);
            assert_eq!(c.result, Certainty::True, "{}: {}", c.name, c.detail);
            assert!(
                c.detail
                    .contains(&format!("proven on {steps}/{steps} steps")),
                "{}",
                c.detail
            );
        }
    }
    // (S): the middle token is skipped by the row bound on every state 0..140
    let t = "Per-step invariants: per-run details";
    assert_eq!(
        cell(&run, t, "(S)", "row bound: token-states checked"),
        "282"
    );
    assert_eq!(
        cell(
            &run,
            t,
            "(S)",
            "row bound: token-states skipped (enclosure contains 0)"
        ),
        "141"
    );
    // the rescaling cross-check is a consistency reading: it holds and certifies nothing
    let c = check(&run, "(G) (V, QK) = (1/2, 4): rescaling")[0];
    assert_eq!(
        (c.kind, c.result),
        (CheckKind::Consistency, Certainty::True),
        "{}",
        c.detail
    );
    for prefix in ["(G) (V, QK) = (1, 1)", "(G) (V, QK) = (1/2, 4)", "(S)"] {
        let c = check(
            &run,
            &format!("{prefix}: the enclosures at T decide the structure"),
        )[0];
        assert_eq!((c.kind, c.result), (CheckKind::Observed, Certainty::True));
    }
}

#[test]
fn symmetric_triple_keeps_its_middle_token_at_zero_and_attains_rank_three() {
    let run = run_quick(ID);
    let c = check(&run, "(S): y_2 ≡ 0 and row 2 ≡ (1/3")[0];
    assert_eq!(
        (c.kind, c.result),
        (CheckKind::Consistency, Certainty::True),
        "{}",
        c.detail
    );
    let c = check(&run, "(S): the enclosures of y_2 and row 2 stay narrower")[0];
    assert_eq!(
        (c.kind, c.result),
        (CheckKind::Observed, Certainty::True),
        "{}",
        c.detail
    );
    let c = check(&run, "(S): rank P(T) ≥ 3")[0];
    assert_eq!((c.kind, c.result), (CheckKind::Observed, Certainty::True));
    let c = check(&run, "(S): every token y_i^0 ≠ 0 moves away from 0")[0];
    assert_eq!(c.result, Certainty::True, "{}", c.detail);
    for p in [
        "(S): (i)",
        "(S): (ii)",
        "(S): (iii)",
        "(S): the same structure",
    ] {
        let c = check(&run, p)[0];
        assert_eq!(c.result, Certainty::True, "{}: {}", c.name, c.detail);
    }
    assert_eq!(cell(&run, "Symmetric witness (S)", "1", "class"), "e_1");
    assert_eq!(cell(&run, "Symmetric witness (S)", "2", "class"), "free");
    assert_eq!(cell(&run, "Symmetric witness (S)", "3", "class"), "e_3");
    // the free row is 1/3 in every entry
    let row = cell(
        &run,
        "Symmetric witness (S)",
        "2",
        "row i of P(T) (enclosures)",
    );
    assert_eq!(row.matches("0.3333").count(), 3, "{row}");
    // det [[1,0,0],[1/3,1/3,1/3],[0,0,1]] = 1/3
    assert!(
        (figure(&run, "(S) determinant of the rank-3 minor of P(T)") - 1.0 / 3.0).abs() < 1e-12
    );
}

#[test]
fn leaders_are_the_extreme_tokens() {
    let run = run_quick(ID);
    let t = run
        .report
        .tables
        .iter()
        .find(|t| t.title.starts_with("Generic witnesses (G)"))
        .unwrap();
    let lead = t
        .columns
        .iter()
        .position(|c| c.starts_with("leaders"))
        .unwrap();
    let status = t.columns.iter().position(|c| c == "status").unwrap();
    assert_eq!(t.rows.len(), 8);
    for r in &t.rows {
        assert!(["1, 8", "1", "8"].contains(&r[lead].as_str()), "{r:?}");
        assert_eq!(r[status], "limit structure at T", "{r:?}");
    }
    assert!(t.rows.iter().any(|r| r[lead] == "1, 8"));
    for c in check(&run, "(G)") {
        assert_eq!(c.result, Certainty::True, "{}: {}", c.name, c.detail);
    }
    assert_eq!(
        figure(&run, "generic runs with the limit structure at T"),
        8.0
    );
}

/// A horizon far too short: the rows are not yet within 1e−30 of e_1/e_n, so every
/// seed is "inconclusive (extend T)" and the verdict is inconclusive — not refuted,
/// and the certified A_n obligations and the observed per-step invariants still hold.
#[test]
fn short_horizon_is_inconclusive_not_refuted() {
    let run = run_edited(ID, "steps = 140", "steps = 10");
    assert_eq!(verdict(&run), Verdict::Inconclusive, "{}", run.markdown);
    let c = check(&run, "(G) (V, QK) = (1, 1): (i)")[0];
    assert_eq!((c.kind, c.result), (CheckKind::Observed, Certainty::False));
    assert!(c.detail.contains("seed 1"), "{}", c.detail);
    for c in &run.report.checks {
        if c.kind == CheckKind::Certified || c.name.ends_with("every step") {
            assert_eq!(c.result, Certainty::True, "{}: {}", c.name, c.detail);
        }
    }
    assert_eq!(
        cell(&run, "Generic witnesses (G)", "(V, QK) = (1, 1)", "status"),
        "inconclusive (extend T)"
    );
}

/// A wrong reference value fails the certified A_n check.
#[test]
fn wrong_threshold_reference_is_refuted() {
    let run = run_edited(
        ID,
        "reference = \"1.74507527142\"",
        "reference = \"1.74507527242\"",
    );
    assert_eq!(verdict(&run), Verdict::Refuted);
    let c = check(&run, "A_8 matches")[0];
    assert_eq!(c.result, Certainty::False);
}

fn edited(from: &str, to: &str) -> String {
    let text = spec_text(ID);
    assert_eq!(text.matches(from).count(), 1, "`{from}`");
    text.replacen(from, to, 1)
}

#[test]
fn negative_v_is_rejected_naming_the_field() {
    let text = edited("v = [[\"1/2\"]]", "v = [[\"-1\"]]");
    let e = prepare_err(ID, &text);
    let line = line_of(&text, "v = [[\"-1\"]]");
    assert!(
        e.contains(&format!("boolean-limit.toml:{line}: params.systems[1].v")),
        "{e}"
    );
    assert!(e.contains("must be positive"), "{e}");
}

#[test]
fn non_positive_or_non_square_qk_is_rejected() {
    let text = edited("q = [[\"2\"]]", "q = [[\"-2\"]]");
    let e = prepare_err(ID, &text);
    assert!(e.contains("params.systems[1].q"), "{e}");
    assert!(e.contains("QᵀK = -4 must be positive"), "{e}");
    let e = prepare_err(ID, &edited("q = [[\"2\"]]", "q = [[\"3\"]]"));
    assert!(
        e.contains("QᵀK = 6 must be the square of a rational"),
        "{e}"
    );
    // Q with two columns: not a d = 1 system
    let e = prepare_err(ID, &edited("q = [[\"2\"]]", "q = [[\"2\", \"1\"]]"));
    assert!(e.contains("params.systems[1].q"), "{e}");
}

#[test]
fn equal_tokens_are_rejected() {
    let text = edited(
        "symmetric = [\"-1\", \"0\", \"1\"]",
        "symmetric = [\"-1\", \"0\", \"0\", \"1\"]",
    );
    let e = prepare_err(ID, &text);
    assert!(e.contains("params.symmetric[2]"), "{e}");
    assert!(e.contains("pairwise distinct"), "{e}");
    // a grid of 2^-1 in [-1, 1] has 5 points: 8 draws must coincide
    let e = prepare_err(ID, &edited("grid_bits = 20", "grid_bits = 1"));
    // the quick profile sets the seeds, so the error points there
    assert!(e.contains("profiles.quick.seeds[0]"), "{e}");
    assert!(e.contains("coincide"), "{e}");
    let e = prepare_err(
        ID,
        &edited(
            "symmetric = [\"-1\", \"0\", \"1\"]",
            "symmetric = [\"-1\", \"0\", \"2\"]",
        ),
    );
    assert!(
        e.contains("params.symmetric: must be symmetric about 0"),
        "{e}"
    );
}

/// Too few bits: the enclosures cannot resolve the structure, so the runner raises
/// the precision and, still undecided, the verdict is inconclusive — never refuted.
#[test]
fn low_precision_is_undecided_not_refuted() {
    let run = run_edited(ID, "precision = 128", "precision = 24");
    assert_eq!(verdict(&run), Verdict::Inconclusive, "{}", run.markdown);
    assert!(run.markdown.contains("undecided"), "{}", run.markdown);
    for c in &run.report.checks {
        if c.kind == CheckKind::Certified {
            assert_ne!(c.result, Certainty::False, "{}: {}", c.name, c.detail);
        }
    }
}

/// Issue 13 (≈ l. 1043): "the rescaled enclosures overlap" was recorded as certified
/// True; overlap can only refute, so it is a consistency reading now.
#[test]
fn boolean_limit_rescaled_enclosure_overlap_is_a_consistency_reading() {
    let run = run_quick(ID);
    let cs = check(&run, "(G) (V, QK) = (1, 1): rescaling");
    assert_eq!(cs.len(), 1);
    for c in run
        .report
        .checks
        .iter()
        .filter(|c| c.name.contains("rescaling e:Idnonresca"))
    {
        assert_eq!(
            (c.kind, c.result),
            (CheckKind::Consistency, Certainty::True),
            "{}",
            c.name
        );
    }
}

/// Issue 13 (≈ l. 1121): an f64 comparison of widths decided the certified (S) symmetry
/// check. The containment is now a consistency reading and the width an observation.
#[test]
fn boolean_limit_symmetry_check_is_not_decided_by_f64() {
    let run = run_quick(ID);
    let c = check(&run, "(S): y_2 ≡ 0 and row 2")[0];
    assert_eq!(c.kind, CheckKind::Consistency);
    let c = check(&run, "(S): the enclosures of y_2 and row 2 stay narrower")[0];
    assert_eq!(c.kind, CheckKind::Observed);
    assert!(c.detail.contains("(f64)"), "{}", c.detail);
}

/// Issue 13 (≈ l. 1159): "1/m ≠ 0" counted as evidence for rank P* = 3. The tautology
/// is gone; what is certified are the statement's A_n obligations, nothing else; the
/// rank minor at T (det ≥ 1/6 > 0, a one-step tally) is observed (issue #24).
#[test]
fn boolean_limit_counts_no_tautology_as_evidence() {
    let run = run_quick(ID);
    for c in &run.report.checks {
        assert!(
            !c.name.contains("linearly independent"),
            "tautology: {}",
            c.name
        );
        assert!(!c.name.contains("≠ 0)"), "tautology: {}", c.name);
    }
    let n_stmt = run
        .report
        .checks
        .iter()
        .filter(|c| c.kind == CheckKind::Certified && c.detail.starts_with("statement obligation"))
        .count();
    let lemma = PART;
    let n_lemma = run
        .report
        .checks
        .iter()
        .filter(|c| c.part.as_deref() == Some(lemma))
        .count();
    // (T) for n = 8 and n = 3, and two hypotheses per witness: 4 seeds × 2 systems and (S)
    assert_eq!(n_lemma, 2 + 2 * 9);
    assert_eq!(
        n_stmt,
        6 + n_lemma,
        "one obligation per A_n reference, and the lemma's"
    );
    assert!(run.report.checks.iter().all(|c| c.expect == Expect::Holds));
    let n_certified = run
        .report
        .checks
        .iter()
        .filter(|c| c.kind == CheckKind::Certified)
        .count();
    assert_eq!(
        n_certified, n_stmt,
        "only the statement's obligations are certified"
    );
    let c = check(&run, "(S): rank P(T) ≥ 3")[0];
    assert_eq!((c.kind, c.result), (CheckKind::Observed, Certainty::True));
    assert!(c.detail.contains("proven on 1/1 steps"), "{}", c.detail);
}

#[test]
fn boolean_limit_certificate_verifies_and_tampering_is_rejected() {
    let run = run_quick(ID);
    // the relative tolerance 1e-11 of the A_n references becomes 1e-9
    let tol = attncheck::kernel::parse_rational("1e-11")
        .unwrap()
        .to_string();
    let loose = attncheck::kernel::parse_rational("1e-9")
        .unwrap()
        .to_string();
    crate::clusters_remark::certificate_verifies_and_tampering_is_rejected(
        &run,
        (&format!("(- 1 {tol})"), &format!("(- 1 {loose})")),
    );
}

/// Issue 39: the discrete map's part is certified — the kernel decides the lemma's
/// hypotheses at K for every witness, and coq/BooleanLimit.v (named by the spec, listed
/// in the trust base with its Print Assumptions) gives the limit from them; the flow's
/// part keeps its own verdict (supported), and so does the claim as a whole.
#[test]
fn the_discrete_maps_limit_is_certified_by_the_coq_lemma_and_the_flow_stays_supported() {
    let run = run_quick(ID);
    let parts = Verdict::by_part(
        &run.report.checks,
        run.report.rigour,
        run.report.lemma.as_ref().map(|l| l.part.as_str()),
    );
    assert_eq!(
        parts,
        vec![
            (FLOW_PART.to_string(), Verdict::Supported),
            (PART.to_string(), Verdict::Certified)
        ],
        "{}",
        run.markdown
    );
    assert_eq!(verdict(&run), Verdict::Supported);
    for c in run
        .report
        .checks
        .iter()
        .filter(|c| c.part.as_deref() == Some(PART))
    {
        assert_eq!(
            (c.kind, c.result),
            (CheckKind::Certified, Certainty::True),
            "{}",
            c.name
        );
    }
    let l = run.report.lemma.as_ref().expect("the spec names the lemma");
    assert_eq!(l.file, "coq/BooleanLimit.v");
    assert_eq!(l.assumptions, attncheck::coq::LEMMA_ASSUMPTIONS);
    assert!(
        run.markdown.contains(&format!(
            "By part: {FLOW_PART}: **supported** · {PART}: **certified**"
        )),
        "{}",
        run.markdown
    );
    assert!(
        run.markdown.contains("`coq/BooleanLimit.v`")
            && run.markdown.contains("`Classical_Prop.classic`")
    );
    // A is exact and satisfies (T) with the next smaller grid value failing it:
    // 2·7 ≤ A² e^{A²/2+1} at A = 23/16, not at 22/16 (A² e^{A²/2+1} ≈ 13.06 < 14)
    assert_eq!(lemma_a(8).to_string(), "23/16");
    // 2·2 ≤ A² e^{A²/2+1} at A = 1 (e^{3/2} ≈ 4.48), not at 15/16 (≈ 3.71)
    assert_eq!(lemma_a(3).to_string(), "1");
    // (S) has its hypotheses after one step: y_1 < −1 = −A, y_3 > 1 = A
    let k = cell(&run, "(D) The lemma's hypotheses", "(S)", "K");
    assert_eq!(k, "1");
}

/// The cap on asymptotic claims lifts only for a claim whose spec names a Coq lemma:
/// without `[lemma]` the same certified obligations leave the discrete part `supported`.
#[test]
fn without_a_named_coq_lemma_the_discrete_part_stays_capped_at_supported() {
    let text = spec_text(ID);
    let a = text.find("[lemma]").unwrap();
    let b = text.find("[params]").unwrap();
    let cut = format!("{}{}", &text[..a], &text[b..]);
    let run = crate::util::run_text(ID, &cut, attncheck::spec::Profile::Quick);
    assert!(run.report.lemma.is_none());
    let parts = Verdict::by_part(&run.report.checks, run.report.rigour, None);
    assert_eq!(parts[1], (PART.to_string(), Verdict::Supported));
    assert!(
        run.markdown.contains(&format!("{PART}: **supported**")),
        "{}",
        run.markdown
    );
    // a lemma the tool does not ship, or a theorem the file does not state, is bad input
    for (from, to, why) in [
        (
            "file = \"coq/BooleanLimit.v\"",
            "file = \"coq/Mine.v\"",
            "is not a lemma file shipped",
        ),
        (
            "theorems = [\"boolean_limit_rate\"",
            "theorems = [\"boolean_limit_everything\"",
            "is not a Theorem or Lemma of coq/BooleanLimit.v",
        ),
    ] {
        let e = prepare_err(ID, &edited(from, to));
        assert!(e.contains(why), "{e}");
    }
}

/// Regression (helper-14's note on #39): `[lemma]` checked only that the file and its
/// theorems exist, so a spec could name coq/HullMonotone.v (a per-step monotonicity, no
/// limit) and lift the cap of an asymptotic claim. A lemma now lifts it only for the
/// claims whose limit it gives (`lemmas::LIMIT_LEMMAS`): HullMonotone for polytope, and
/// BooleanLimit for any claim but boolean-limit, are bad input naming `lemma.file`.
#[test]
fn a_lemma_that_gives_no_limit_lifts_no_cap() {
    let hull = edited(
        "file = \"coq/BooleanLimit.v\"",
        "file = \"coq/HullMonotone.v\"",
    )
    .replace(
        "theorems = [\"boolean_limit_rate\"",
        "theorems = [\"convex_step_max_min\"",
    );
    let e = prepare_err(ID, &hull);
    assert!(
        e.contains("lemma.file")
            && e.contains("gives the limit of no part of `clusters/boolean-limit`"),
        "{e}"
    );
    let polytope = spec_text("clusters/polytope");
    let lemma = "[lemma]\npart = \"the limit\"\nfile = \"coq/HullMonotone.v\"\ntheorems = [\"support_max_min\"]\n\n[params]";
    for (file, theorem) in [
        ("coq/HullMonotone.v", "support_max_min"),
        ("coq/BooleanLimit.v", "boolean_limit_rate"),
    ] {
        let with = polytope.replacen(
            "[params]",
            &lemma
                .replace("coq/HullMonotone.v", file)
                .replace("support_max_min", theorem),
            1,
        );
        let e = prepare_err("clusters/polytope", &with);
        assert!(
            e.contains("gives the limit of no part of `clusters/polytope`"),
            "{file}: {e}"
        );
    }
}

/// A witness whose hypotheses are not decided by the last step sought (tokens still
/// escaping together) gets no obligation: it is reported with its reason and makes the
/// discrete part inconclusive — never certified, never refuted.
#[test]
fn a_witness_without_its_hypotheses_is_reported_never_certified() {
    let run = run_edited(ID, "hypotheses_max_steps = 560", "hypotheses_max_steps = 2");
    let parts = Verdict::by_part(&run.report.checks, run.report.rigour, Some(PART));
    assert_eq!(
        parts[1],
        (PART.to_string(), Verdict::Inconclusive),
        "{}",
        run.markdown
    );
    assert_ne!(verdict(&run), Verdict::Refuted);
    let c = check(
        &run,
        "(G) (V, QK) = (1, 1) seed 1: the lemma's hypotheses hold",
    )[0];
    assert_eq!((c.kind, c.result), (CheckKind::Observed, Certainty::False));
    assert!(c.detail.contains("escaping together"), "{}", c.detail);
    assert!(!run
        .report
        .checks
        .iter()
        .any(|c| c.kind == CheckKind::Certified
            && c.name.starts_with("(G) (V, QK) = (1, 1) seed 1:")));
    // (S) still has its hypotheses at K = 1
    assert!(check(&run, "(S): y^K strictly increasing at K = 1")[0]
        .result
        .is_true());
}

/// `verify` rejects (exit 4) a certificate whose K, A or initial state is not the one
/// the spec gives, even where the tampered statement would still hold.
#[test]
fn verify_rejects_a_tampered_k_a_or_initial_state() {
    let run = run_quick(ID);
    let theorems = crate::util::root().join("theorems");
    let (dir, path) = crate::clusters_remark::write_cert(&run);
    let text = std::fs::read_to_string(&path).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ob = json["obligations"].as_array().unwrap();
    let s_order = ob
        .iter()
        .position(|o| {
            o["name"]
                .as_str()
                .unwrap()
                .starts_with("(S): y^K strictly increasing")
        })
        .unwrap();
    let f = ob[s_order]["formula"].as_str().unwrap().to_string();
    // (forall i 0 1 (< (layer-coord Y8 0 1 i 0) …
    let datum = f.split_whitespace().nth(6).unwrap().to_string();
    assert!(datum.starts_with('Y'), "{f}");
    let mut tampered: Vec<(&str, serde_json::Value)> = Vec::new();
    // K = 1 → 2 in the formula and the datum's steps (the hypotheses hold there as well)
    let mut t = json.clone();
    t["obligations"][s_order]["formula"] = f
        .replace(&format!("{datum} 0 1 "), &format!("{datum} 0 2 "))
        .into();
    t["data"][&datum]["steps"] = serde_json::json!(2);
    tampered.push(("K changed", t));
    // A = 1 → 1/2 in (S)'s escape obligation (still true there)
    let s_escape = ob
        .iter()
        .position(|o| {
            o["name"]
                .as_str()
                .unwrap()
                .starts_with("(S): at most one token")
        })
        .unwrap();
    let g = ob[s_escape]["formula"].as_str().unwrap();
    assert_eq!(g.matches(")) 1))").count(), 1, "{g}");
    let mut t = json.clone();
    t["obligations"][s_escape]["formula"] = g.replace(")) 1))", ")) 1/2))").into();
    tampered.push(("A changed", t));
    // the initial state: (S)'s first token −1 → −2 (still ordered and escaped)
    let mut t = json.clone();
    let shown = t["data"][&datum].to_string();
    let tokens = &mut t["data"][&datum]["tokens"][0][0][0];
    assert_eq!(tokens.as_str(), Some("-1"), "{shown}");
    *tokens = "-2".into();
    tampered.push(("initial state changed", t));
    for (what, t) in tampered {
        let p = dir.path().join("tampered.cert.json");
        std::fs::write(&p, t.to_string()).unwrap();
        match attncheck::app::verify_file(&p, Some(&theorems)) {
            Err(e @ attncheck::app::Error::Rejected { .. }) => {
                assert_eq!(e.exit_code(), 4, "{what}")
            }
            other => panic!("{what}: {:?}", other.map(|v| v.checked)),
        }
    }
}
