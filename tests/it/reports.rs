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

#[test]
fn committed_reports_equal_a_fresh_run() {
    let mut fresh = Vec::new();
    for id in ids() {
        let run = run_quick(&id);
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
        fresh.push(run.report.clone());
    }
    fresh.sort_by(|a, b| a.id.cmp(&b.id));
    let index =
        std::fs::read_to_string(root().join("reports/README.md")).expect("reports/README.md");
    assert_eq!(
        index,
        attncheck::report::index_markdown(&fresh),
        "index: {}",
        regen_hint()
    );
}

#[test]
fn json_reports_snapshots() {
    for id in ids() {
        let run = run_quick(&id);
        let name = id.replace('/', "__");
        insta::assert_snapshot!(name, run.report.to_json());
    }
}

#[test]
fn every_committed_claim_gives_its_expected_verdict() {
    for id in ids() {
        let run = run_quick(&id);
        assert!(
            run.report.as_expected,
            "{id}: verdict {} but the spec expects {} ({:?})",
            run.report.verdict, run.report.expected, run.report.reason
        );
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
        attncheck::spec::Spec::load(&crate::util::spec_path("positional/alibi-slopes")).unwrap();
    let again = app::run_claims(
        &[&spec],
        Profile::Quick,
        &attncheck::progress::Progress::hidden(),
    )
    .unwrap();
    assert_eq!(again[0].markdown, run.markdown);
}

#[test]
fn reports_contain_no_timings() {
    for id in ids() {
        let run = run_quick(&id);
        for word in [" ms", "elapsed", "seconds", "took "] {
            assert!(
                !run.markdown.contains(word),
                "{id}: report mentions `{word}`"
            );
        }
    }
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
        let spec = attncheck::spec::Spec::load(&crate::util::spec_path(&r.id)).unwrap();
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
