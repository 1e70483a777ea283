//! Reports: the committed `reports/` equal what a fresh quick run writes; JSON
//! reports are insta snapshots; output does not depend on the thread count.

use crate::util::{root, run_quick, run_text, spec_text};
use attncheck::app;
use attncheck::spec::Profile;

fn ids() -> Vec<String> {
    attncheck::claims::REGISTRY
        .iter()
        .map(|c| c.id.to_string())
        .collect()
}

fn regen_hint() -> &'static str {
    "the committed reports differ from a fresh run; regenerate them with `make reports` \
     (cargo run --release -- run --all) and review the diff"
}

/// Everything a claim's fresh quick run must satisfy against the committed files:
/// the same Markdown, JSON, SVG and certificate bytes, the same JSON snapshot, the
/// spec's expected verdict, and no timings in the report.
///
/// One test per claim (not one loop over all claims): four tests used to walk the
/// claims in the same order, sharing `run_quick`'s cache, so on 2 cores one test ran
/// while the other's thread waited for the same claim, and the claims ran one after
/// another on a single test thread for about 20 minutes of CI.
fn committed_report_equals_a_fresh_run(id: &str) {
    let run = run_quick(id);
    let (paper, name) = id.split_once('/').unwrap();
    let dir = root().join("reports").join(paper);
    let read = |f: &str| {
        std::fs::read_to_string(dir.join(f))
            .unwrap_or_else(|_| panic!("missing reports/{paper}/{f}: {}", regen_hint()))
    };
    assert_eq!(
        read(&format!("{name}.md")),
        run.markdown,
        "{id} (md): {}",
        regen_hint()
    );
    assert_eq!(
        read(&format!("{name}.json")),
        run.report.to_json(),
        "{id} (json): {}",
        regen_hint()
    );
    for (f, t) in &run.svgs {
        assert_eq!(&read(f), t, "{id} ({f}): {}", regen_hint());
    }
    if let Some((f, t)) = &run.certificate {
        assert_eq!(&read(f), t, "{id} ({f}): {}", regen_hint());
    }
    insta::assert_snapshot!(id.replace('/', "__"), run.report.to_json());
    assert!(
        run.report.as_expected,
        "{id}: verdict {} but the spec expects {} ({:?})",
        run.report.verdict, run.report.expected, run.report.reason
    );
    for word in [" ms", "elapsed", "seconds", "took "] {
        assert!(
            !run.markdown.contains(word),
            "{id}: report mentions `{word}`"
        );
    }
}

macro_rules! committed_reports {
    ($($test:ident => $id:literal,)*) => {
        mod committed {
            $(#[test]
            fn $test() {
                super::committed_report_equals_a_fresh_run($id);
            })*
        }
        /// The claims that have a test in `committed`.
        const LISTED: &[&str] = &[$($id),*];
    };
}

committed_reports! {
    clusters_boolean_limit => "clusters/boolean-limit",
    clusters_codim_conjecture => "clusters/codim-conjecture",
    clusters_collapse => "clusters/collapse",
    clusters_growth_bound => "clusters/growth-bound",
    clusters_higher_dim_remark => "clusters/higher-dim-remark",
    clusters_hyperplanes => "clusters/hyperplanes",
    clusters_open_problems => "clusters/open-problems",
    clusters_paranormal_proof_gap => "clusters/paranormal-proof-gap",
    clusters_paranormal => "clusters/paranormal",
    clusters_polytope => "clusters/polytope",
    clusters_rescaling => "clusters/rescaling",
    clusters_stability => "clusters/stability",
    positional_alibi_slopes => "positional/alibi-slopes",
    positional_alibi_tail_bound => "positional/alibi-tail-bound",
    positional_alibi_window => "positional/alibi-window",
    positional_length_usage => "positional/length-usage",
    positional_sandwich_head_power_law => "positional/sandwich-head-power-law",
    positional_sandwich_identity => "positional/sandwich-identity",
    positional_sandwich_log_decay => "positional/sandwich-log-decay",
    positional_shift_invariance => "positional/shift-invariance",
    positional_toy_receptive_field => "positional/toy-receptive-field",
    positional_trained_model_claims => "positional/trained-model-claims",
    positional_windowed_receptive_field => "positional/windowed-receptive-field",
    sparse_corollary_dimension => "sparse/corollary-dimension",
    sparse_counting_lower_bound => "sparse/counting-lower-bound",
    sparse_failure_probability => "sparse/failure-probability",
    sparse_log_dimension => "sparse/log-dimension",
    sparse_np_hardness => "sparse/np-hardness",
    sparse_ratio_lemma => "sparse/ratio-lemma",
    sparse_row_mass => "sparse/row-mass",
}

#[test]
fn every_registered_claim_has_a_committed_report_test() {
    let mut listed: Vec<&str> = LISTED.to_vec();
    listed.sort_unstable();
    let mut registered: Vec<String> = ids();
    registered.sort_unstable();
    assert_eq!(
        listed, registered,
        "tests/it/reports.rs: committed_reports! lists every registered claim"
    );
}

/// `reports/README.md` and `reports/index.html` are what `run --all` builds from the
/// committed reports (each of which equals a fresh run, above), and the committed JSON
/// reports are exactly the registered claims'. The same for `reports/full/`.
#[test]
fn committed_indexes_equal_what_the_committed_reports_build() {
    for (dir, registered) in [("reports", true), ("reports/full", false)] {
        let out = root().join(dir);
        let (index, html) = app::render_index(&out, None).unwrap();
        let read = |f: &str| {
            std::fs::read_to_string(out.join(f))
                .unwrap_or_else(|_| panic!("missing {dir}/{f}: {}", regen_hint()))
        };
        assert_eq!(
            read("README.md"),
            index,
            "{dir}/README.md: {}",
            regen_hint()
        );
        assert_eq!(
            read("index.html"),
            html,
            "{dir}/index.html: {}",
            regen_hint()
        );
        if registered {
            let committed: Vec<String> = app::read_reports(&out)
                .unwrap()
                .into_iter()
                .map(|r| r.id)
                .collect();
            let mut all = ids();
            all.sort_unstable();
            assert_eq!(
                committed, all,
                "{dir}: one JSON report per registered claim"
            );
        }
    }
}

#[test]
fn reports_do_not_depend_on_the_thread_count() {
    // claims that parallelise internally, plus a cheap one
    for id in [
        "positional/alibi-slopes",
        "positional/length-usage",
        "positional/sandwich-identity",
    ] {
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let run1 = one.install(|| run_text(id, &spec_text(id), Profile::Quick));
        let run2 = run_quick(id);
        assert_eq!(run1.markdown, run2.markdown, "{id}");
        assert_eq!(run1.report.to_json(), run2.report.to_json(), "{id}");
    }
}

#[test]
fn rendering_is_deterministic_for_the_same_outcome() {
    let run = run_quick("positional/alibi-slopes");
    let spec =
        attncheck::claims::load_spec(&crate::util::spec_path("positional/alibi-slopes")).unwrap();
    let again = app::run_claims(
        &[&spec],
        Profile::Quick,
        &attncheck::progress::Progress::hidden(),
    )
    .unwrap();
    assert_eq!(again[0].markdown, run.markdown);
}

/// Full-profile reports are committed under reports/full/ as evidence (a full sweep
/// takes hours, so no test reruns them). They must still describe what the specs
/// now say: the same merged full-profile parameters, notes and expected verdict.
/// Changing a full profile without rerunning it fails here.
#[test]
fn committed_full_reports_match_their_specs() {
    let dir = root().join("reports/full");
    let reports = attncheck::app::read_reports(&dir).expect("reports/full");
    assert!(!reports.is_empty(), "no reports under reports/full");
    for r in reports {
        let spec = attncheck::claims::load_spec(&crate::util::spec_path(&r.id)).unwrap();
        let stale = format!(
            "reports/full/{}: stale; rerun `attncheck run {} --profile full` and commit reports/full/",
            r.id, r.id
        );
        assert_eq!(r.profile, Profile::Full, "{stale}");
        assert_eq!(
            r.params,
            serde_json::to_value(spec.merged(Profile::Full)).unwrap(),
            "{stale}"
        );
        // the spec's notes come first; the claim may add its own after them
        assert!(r.notes.starts_with(&spec.notes), "{stale}");
        assert!(r.as_expected, "{stale}");
        assert_eq!(r.expected, spec.expected, "{stale}");
    }
}
