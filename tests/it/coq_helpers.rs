//! The Coq runner's own helpers, which need no `coqc`: the allowed axioms' printed
//! names (as the generated files state them), the cache key of the compiled library,
//! the private run directories and the ownership checks on the cache, and the line of
//! Coq's error. Moved from `src/coq/mod.rs`'s unit tests, so that `cargo test`
//! compiles the library once (no unit-test build of it); the private helpers they
//! call are `#[doc(hidden)] pub` for these tests only.

use attncheck::coq::{self, axiom_allowed, ALLOWED_AXIOMS};
use std::path::Path;

/// The `(printed name, fully qualified name)` pairs of the axiom identity checks at
/// the end of a generated Coq file (`Definition attncheck_axiom_k := (eq_refl : @P = @F).`).
fn identity_checks(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| l.starts_with("Definition attncheck_axiom_"))
        .map(|l| {
            let eq = l
                .split_once("(eq_refl : @")
                .and_then(|(_, r)| r.strip_suffix(")."))
                .unwrap_or_else(|| panic!("not an identity check: {l}"));
            let (printed, full) = eq.split_once(" = @").expect("P = @F");
            (printed.to_string(), full.to_string())
        })
        .collect()
}

#[test]
fn every_allowed_axiom_has_one_printed_name() {
    // the printed names as a generated file states them: the translation of a
    // one-obligation certificate ends with the identity check of every allowed axiom
    let text = format!(
        r#"{{"format": "{}", "claim": "x/y", "profile": "quick", "precision": 128,
            "obligations": [{{"name": "x", "formula": "(= 1 1)", "expect": "holds"}}]}}"#,
        attncheck::certificate::FORMAT
    );
    let cert = attncheck::certificate::parse(Path::new("c"), &text).unwrap();
    let f = coq::translate(&cert);
    assert_eq!(f.sent.len(), 1, "the obligation goes to Coq");
    let checks = identity_checks(&f.text);
    assert_eq!(
        f.text.matches("Definition attncheck_axiom_").count(),
        ALLOWED_AXIOMS.len()
    );
    assert_eq!(checks.len(), ALLOWED_AXIOMS.len());
    assert!(checks
        .iter()
        .map(|(_, full)| full.as_str())
        .eq(ALLOWED_AXIOMS.iter().copied()));
    let mut names: Vec<String> = checks.iter().map(|(p, _)| p.clone()).collect();
    assert!(names.iter().all(|n| axiom_allowed(n)));
    names.sort();
    names.dedup();
    assert_eq!(names.len(), ALLOWED_AXIOMS.len());
    assert!(checks.contains(&(
        "PrimFloat.Leibniz.eqb".to_string(),
        "Coq.Floats.PrimFloat.Leibniz.eqb".to_string()
    )));
}

#[test]
fn the_library_key_depends_on_coqc() {
    assert_ne!(coq::library_key("8.16.1"), coq::library_key("8.17.0"));
    assert_eq!(coq::library_key("8.16.1"), coq::library_key("8.16.1"));
    assert_eq!(coq::library_key("x").len(), 32);
}

#[cfg(unix)]
#[test]
fn a_run_directory_is_fresh_and_private() {
    use std::os::unix::fs::PermissionsExt;
    let a = coq::private_dir().unwrap();
    let b = coq::private_dir().unwrap();
    assert_ne!(a.path(), b.path());
    let mode = std::fs::metadata(a.path()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    let p = a.path().to_path_buf();
    drop(a);
    assert!(!p.exists());
}

#[cfg(unix)]
#[test]
fn shared_or_linked_places_are_not_private() {
    use attncheck::coq::{owned_file, owned_private_dir, owner_of};
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let uid = owner_of(d.path());
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(owned_private_dir(d.path(), uid).is_err());
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    assert!(owned_private_dir(d.path(), uid).is_ok());
    assert!(owned_private_dir(d.path(), uid.map(|u| u + 1)).is_err());
    let link = d.path().join("link");
    std::os::unix::fs::symlink(d.path(), &link).unwrap();
    assert!(owned_private_dir(&link, uid).is_err());
    let f = d.path().join("f");
    std::fs::write(&f, "x").unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(owned_file(&f, uid).is_ok());
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert!(owned_file(&f, uid).is_err());
    let flink = d.path().join("flink");
    std::os::unix::fs::symlink(&f, &flink).unwrap();
    assert!(owned_file(&flink, uid).is_err());
}

#[test]
fn the_error_line_is_the_errors_not_a_warnings() {
    let out = "File \"./c.v\", line 3, characters 0-10:\nWarning: large nat\n\
               File \"./c.v\", line 9, characters 0-5:\nError: No applicable tactic.\n";
    assert_eq!(coq::error_line(out), Some(9));
    assert_eq!(
        coq::error_line("File \"./c.v\", line 4, characters 0-1:\n"),
        Some(4)
    );
}
