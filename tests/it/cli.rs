//! The binary: exit codes, atomic report writes, --check, verify, --help.

use crate::util::root;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_attncheck"))
}

/// A scratch project with two fast specs, one of them not checkable.
fn scratch() -> tempfile::TempDir {
    crate::util::project(&["positional/alibi-slopes", "sparse/np-hardness"])
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin().current_dir(dir).args(args).output().unwrap()
}

/// Everything the command printed: results (stdout) and diagnostics (stderr).
fn stderr(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn report(dir: &Path) -> PathBuf {
    dir.join("reports/positional/alibi-slopes.json")
}

#[test]
fn run_writes_reports_and_index() {
    let d = scratch();
    let o = run_in(d.path(), &["run", "--all"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for f in [
        "positional/alibi-slopes.md",
        "positional/alibi-slopes.json",
        "positional/alibi-slopes.cert.json",
        "sparse/np-hardness.md",
    ] {
        assert!(d.path().join("reports").join(f).exists(), "{f}");
    }
    let index = std::fs::read_to_string(d.path().join("reports/README.md")).unwrap();
    assert!(index.contains("positional/alibi-slopes") && index.contains("not-checkable"));
    // no temporary files are left behind
    let leftovers: Vec<_> = std::fs::read_dir(d.path().join("reports/positional"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn full_profile_writes_to_reports_full_and_leaves_quick_reports_alone() {
    let d = scratch();
    let o = run_in(d.path(), &["run", "--all"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let quick = std::fs::read_to_string(report(d.path())).unwrap();
    let index = std::fs::read_to_string(d.path().join("reports/README.md")).unwrap();
    let full_run = ["run", "positional/alibi-slopes", "--profile", "full"];
    let o = run_in(d.path(), &full_run);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("reports/full"), "{}", stderr(&o));
    let full = d.path().join("reports/full");
    assert!(full.join("positional/alibi-slopes.json").exists());
    assert!(std::fs::read_to_string(full.join("README.md"))
        .unwrap()
        .contains("positional/alibi-slopes"));
    assert_eq!(std::fs::read_to_string(report(d.path())).unwrap(), quick);
    // --check in the full profile compares against reports/full
    let o = run_in(d.path(), &[&full_run[..], &["--check"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // the quick index does not pick up the full reports
    let o = run_in(d.path(), &["run", "--all"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(d.path().join("reports/README.md")).unwrap(),
        index
    );
}

#[test]
fn bad_spec_exits_2_names_file_line_field_and_leaves_reports_intact() {
    let d = scratch();
    assert_eq!(run_in(d.path(), &["run", "--all"]).status.code(), Some(0));
    let before = std::fs::read(report(d.path())).unwrap();
    let spec = d.path().join("theorems/positional/alibi-slopes.toml");
    let text =
        std::fs::read_to_string(&spec)
            .unwrap()
            .replacen("heads = [1, 2,", "heads = [0, 2,", 1);
    std::fs::write(&spec, text).unwrap();
    let o = run_in(d.path(), &["run", "--all"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("alibi-slopes.toml:") && e.contains("params.heads[0]"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(report(d.path())).unwrap(),
        before,
        "reports must be untouched"
    );
}

#[test]
fn unknown_claim_exits_2() {
    let d = scratch();
    let o = run_in(d.path(), &["run", "positional/no-such-claim"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown claim `positional/no-such-claim`"),
        "{}",
        stderr(&o)
    );
    // a spec for a claim no module implements is an error too
    std::fs::write(
        d.path().join("theorems/positional/nope.toml"),
        std::fs::read_to_string(root().join("theorems/positional/alibi-slopes.toml"))
            .unwrap()
            .replacen("positional/alibi-slopes", "positional/nope", 1),
    )
    .unwrap();
    let o = run_in(d.path(), &["list"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("nope.toml:1: unknown claim `positional/nope`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn usage_errors_exit_2() {
    let d = scratch();
    assert_eq!(run_in(d.path(), &["run"]).status.code(), Some(2));
    assert_eq!(
        run_in(d.path(), &["run", "--profile", "huge", "--all"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(run_in(d.path(), &["frobnicate"]).status.code(), Some(2));
}

#[test]
fn check_detects_changed_verdicts_and_figures() {
    let d = scratch();
    assert_eq!(run_in(d.path(), &["run", "--all"]).status.code(), Some(0));
    let o = run_in(d.path(), &["run", "--all", "--check"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let path = report(d.path());
    let text = std::fs::read_to_string(&path).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let fig = &mut v["figures"][0]["value"];
    *fig = serde_json::json!(fig.as_f64().unwrap() + 1.0);
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let o = run_in(d.path(), &["run", "--all", "--check"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("moved"), "{}", stderr(&o));
    // --check does not write
    assert_ne!(std::fs::read_to_string(&path).unwrap(), text);
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["verdict"] = serde_json::json!("supported");
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let o = run_in(d.path(), &["run", "positional/alibi-slopes", "--check"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("verdict changed"), "{}", stderr(&o));
}

#[test]
fn unexpected_verdict_exits_1() {
    let d = scratch();
    let spec = d.path().join("theorems/positional/alibi-slopes.toml");
    // claim the reference list for H = 8 is different: a certified counterexample
    let text = std::fs::read_to_string(&spec).unwrap().replacen(
        "exponents = [\"1\", \"2\", \"3\", \"4\", \"5\", \"6\", \"7\", \"8\"]",
        "exponents = [\"1\", \"2\", \"3\", \"4\", \"5\", \"6\", \"7\", \"9\"]",
        1,
    );
    std::fs::write(&spec, text).unwrap();
    let o = run_in(d.path(), &["run", "positional/alibi-slopes"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report(d.path())).unwrap()).unwrap();
    assert_eq!(j["verdict"], "refuted");
}

#[test]
fn verify_accepts_the_certificate_and_rejects_a_tampered_one() {
    let d = scratch();
    assert_eq!(
        run_in(d.path(), &["run", "positional/alibi-slopes"])
            .status
            .code(),
        Some(0)
    );
    let cert = d.path().join("reports/positional/alibi-slopes.cert.json");
    let o = run_in(d.path(), &["verify", cert.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("certified"));
    // alter one literal: the f64 slope 1/256 becomes 1/255. Against the spec the
    // certificate no longer states the claim (exit 4); on its own formulas the
    // altered obligation is disproven (exit 1).
    let text = std::fs::read_to_string(&cert).unwrap();
    assert!(text.contains("(- 1/256 "));
    std::fs::write(&cert, text.replacen("(- 1/256 ", "(- 1/255 ", 1)).unwrap();
    let o = run_in(d.path(), &["verify", cert.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("rejected"), "{}", stderr(&o));
    let o = run_in(d.path(), &["verify", "--no-spec", cert.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("CONTRARY"));
    // a malformed certificate is bad input: exit 2 with the field
    std::fs::write(
        &cert,
        text.replacen("\"precision\": 128", "\"precision\": \"lots\"", 1),
    )
    .unwrap();
    let o = run_in(d.path(), &["verify", cert.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("precision"), "{}", stderr(&o));
    // an unknown operator: against the spec it is not the statement (4); on its own
    // formulas it does not evaluate (2, naming the obligation)
    std::fs::write(&cert, text.replacen("(<= (abs", "(<= (abz", 1)).unwrap();
    let o = run_in(d.path(), &["verify", cert.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let o = run_in(d.path(), &["verify", "--no-spec", cert.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("obligations[0].formula"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn help_teaches_verdicts_and_profiles() {
    let o = bin().arg("--help").output().unwrap();
    let s = String::from_utf8_lossy(&o.stdout);
    for w in [
        "certified",
        "supported",
        "refuted",
        "inconclusive",
        "not-checkable",
        "quick",
        "full",
        "EXIT CODES",
    ] {
        assert!(s.contains(w), "--help lacks {w}");
    }
}

#[test]
fn list_shows_every_claim_and_json() {
    let o = bin()
        .current_dir(root())
        .args(["list", "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v.as_array().unwrap().len(),
        attncheck::claims::REGISTRY.len()
    );
}

#[test]
fn clusters_spec_with_a_wrong_matrix_shape_exits_2_naming_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let th = dir.path().join("theorems/clusters");
    std::fs::create_dir_all(&th).unwrap();
    let text = std::fs::read_to_string(root().join("theorems/clusters/stability.toml"))
        .unwrap()
        .replacen(
            "n = 10\nd = 3\ntokens",
            "n = 10\nd = 3\nv = [[\"1\", \"0\"], [\"0\", \"1\"], [\"0\", \"0\"]]\ntokens",
            1,
        );
    std::fs::write(th.join("stability.toml"), text).unwrap();
    let o = run_in(dir.path(), &["run", "--all"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("stability.toml:") && e.contains("params.instances[1].v[0]"),
        "{e}"
    );
    assert!(!dir.path().join("reports/clusters/stability.json").exists());
}
