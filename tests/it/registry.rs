//! Every registered claim is named wherever a claim must be named (docs/design.md,
//! "Adding a claim"): its spec, the README's claims table, its paper's notes, and no
//! list names a claim that is not registered. (The committed reports and their
//! snapshot tests have their own check: `reports::every_registered_claim_has_a_committed_report_test`.)

use super::util::root;
use attncheck::claims::REGISTRY;
use std::collections::BTreeSet;

fn registered() -> BTreeSet<String> {
    REGISTRY.iter().map(|c| c.id.to_string()).collect()
}

/// `theorems/<paper>/<claim>.toml` for exactly the registered claims.
#[test]
fn every_registered_claim_has_a_spec_and_every_spec_a_claim() {
    let mut specs = BTreeSet::new();
    for paper in std::fs::read_dir(root().join("theorems")).unwrap() {
        let paper = paper.unwrap().path();
        if !paper.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&paper).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "toml") {
                specs.insert(format!(
                    "{}/{}",
                    paper.file_name().unwrap().to_string_lossy(),
                    f.file_stem().unwrap().to_string_lossy()
                ));
            }
        }
    }
    assert_eq!(specs, registered(), "theorems/ against claims::REGISTRY");
}

/// The README's table of claims links every registered claim's report, and only those.
#[test]
fn the_readme_lists_every_registered_claim() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut linked = BTreeSet::new();
    for part in readme.split("](reports/").skip(1) {
        if let Some(end) = part.find(".md)") {
            let id = &part[..end];
            if id.matches('/').count() == 1 && !id.contains(' ') {
                linked.insert(id.to_string());
            }
        }
    }
    let missing: Vec<_> = registered().difference(&linked).cloned().collect();
    let unknown: Vec<_> = linked.difference(&registered()).cloned().collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "README.md: claims without a row {missing:?}, rows without a claim {unknown:?}"
    );
}

/// Each paper's notes (`docs/papers/<paper>.md`) name each of its claims.
#[test]
fn each_papers_notes_name_its_claims() {
    for id in registered() {
        let (paper, claim) = id.split_once('/').unwrap();
        let notes = std::fs::read_to_string(root().join(format!("docs/papers/{paper}.md")))
            .unwrap_or_else(|e| panic!("docs/papers/{paper}.md: {e}"));
        assert!(
            notes.contains(claim),
            "docs/papers/{paper}.md does not name `{claim}`"
        );
    }
}

/// The Coq lists name registered claims only.
#[test]
fn the_coq_lists_name_registered_claims_only() {
    for (id, _) in attncheck::coq::NOT_IN_CI {
        assert!(registered().contains(*id), "coq::NOT_IN_CI names `{id}`");
    }
}
