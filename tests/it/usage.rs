//! Issue 14 (practical use): results on stdout, `--json`, `diff`, a closed pipe,
//! specs built into the binary, and usage errors that say what is wrong. Each test
//! is named after what it broke.

use crate::util::{bin, root, run_in};

use std::process::{Command, Output, Stdio};

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch project with one fast spec.
fn scratch() -> tempfile::TempDir {
    crate::util::project(&["positional/alibi-slopes"])
}

#[test]
fn run_results_go_to_stdout_so_that_redirecting_them_captures_something() {
    let d = scratch();
    let o = run_in(d.path(), &["run", "--all"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        out(&o).contains("ok  positional/alibi-slopes"),
        "stdout: {}",
        out(&o)
    );
    assert!(!err(&o).contains("ok  positional/alibi-slopes"));
}

#[test]
fn a_closed_pipe_ends_the_program_quietly_instead_of_panicking() {
    let d = scratch();
    for _ in 0..3 {
        let mut child = bin()
            .current_dir(d.path())
            .args(["list", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader goes away, like `| head -1`
        let o = child.wait_with_output().unwrap();
        assert_ne!(o.status.code(), Some(101), "panicked: {}", err(&o));
        assert!(!err(&o).contains("panicked"), "{}", err(&o));
    }
}

#[test]
fn run_json_prints_one_document_of_the_documented_shape() {
    let d = scratch();
    let o = run_in(d.path(), &["run", "--all", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_str(&out(&o)).expect("one JSON document");
    assert_eq!(v["format"], "attncheck-run/1");
    assert_eq!(v["exit_code"], 0);
    let c = &v["claims"][0];
    assert_eq!(c["id"], "positional/alibi-slopes");
    assert_eq!(c["verdict"], "certified");
    assert_eq!(c["as_expected"], true);
    assert!(c["checks"].as_array().unwrap().len() > 3);
    for k in ["name", "kind", "result", "expect"] {
        assert!(c["checks"][0].get(k).is_some(), "{k}");
    }
    assert!(c["report"].as_str().unwrap().ends_with("alibi-slopes.md"));
    assert!(v["regressions"].is_null());
    let o = run_in(d.path(), &["run", "--all", "--json", "--check"]);
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["regressions"], serde_json::json!([]));
}

#[test]
fn a_failing_claims_line_says_which_check_failed() {
    let d = scratch();
    let spec = d.path().join("theorems/positional/alibi-slopes.toml");
    let t = std::fs::read_to_string(&spec).unwrap().replacen(
        "exponents = [\"1\", \"2\", \"3\", \"4\", \"5\", \"6\", \"7\", \"8\"]",
        "exponents = [\"1\", \"2\", \"3\", \"4\", \"5\", \"6\", \"7\", \"9\"]",
        1,
    );
    std::fs::write(&spec, t).unwrap();
    let o = run_in(d.path(), &["run", "--all"]);
    assert_eq!(o.status.code(), Some(1));
    let line = out(&o)
        .lines()
        .find(|l| l.starts_with("BAD"))
        .unwrap()
        .to_string();
    assert!(line.contains("check not as expected: `"), "{line}");
}

#[test]
fn diff_compares_two_report_sets_check_by_check() {
    let d = scratch();
    assert_eq!(run_in(d.path(), &["run", "--all"]).status.code(), Some(0));
    let o = run_in(d.path(), &["run", "--all", "--out", "again"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let o = run_in(d.path(), &["diff", "reports", "again"]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(out(&o).contains("0 difference(s)"));
    let p = d.path().join("again/positional/alibi-slopes.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    v["checks"][0]["result"] = serde_json::json!("unknown");
    v["params"]["f64_rel_tol"] = serde_json::json!("1e-13");
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let o = run_in(d.path(), &["diff", "reports", "again"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        out(&o).contains("positional/alibi-slopes: check `"),
        "{}",
        out(&o)
    );
    assert!(
        out(&o).contains("params.f64_rel_tol loosened"),
        "{}",
        out(&o)
    );
}

#[test]
fn the_binary_lists_runs_and_verifies_outside_the_checkout_with_built_in_specs() {
    let d = tempfile::tempdir().unwrap();
    let o = run_in(d.path(), &["list"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        out(&o).lines().count(),
        1 + attncheck::claims::REGISTRY.len(),
        "{}",
        out(&o)
    );
    let cert = root().join("reports/positional/alibi-window.cert.json");
    let o = run_in(d.path(), &["verify", cert.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    assert!(out(&o).contains("<built-in>"), "{}", out(&o));
    let o = run_in(d.path(), &["run", "positional/alibi-slopes"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(d.path().join("reports/positional/alibi-slopes.md").exists());
    // a wrong --theorems still says what to do
    let o = run_in(d.path(), &["list", "--theorems", "nowhere"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("built into the binary"), "{}", err(&o));
}

#[test]
fn all_together_with_claim_names_is_a_usage_error_not_a_silent_full_run() {
    let d = scratch();
    let o = run_in(d.path(), &["run", "--all", "positional"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--all"), "{}", err(&o));
}

#[test]
fn an_id_that_does_not_match_its_files_place_says_so_instead_of_unknown_claim() {
    let d = scratch();
    let th = d.path().join("theorems/positional");
    std::fs::rename(th.join("alibi-slopes.toml"), th.join("alibi-slope.toml")).unwrap();
    let o = run_in(d.path(), &["list"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("does not match the file's place"),
        "{}",
        err(&o)
    );
    assert!(
        err(&o).contains(":1:") || err(&o).contains(":1: id"),
        "{}",
        err(&o)
    );
}

#[test]
fn the_line_of_a_key_matches_the_whole_key_not_a_prefix() {
    let d = scratch();
    let p = d.path().join("theorems/positional/alibi-slopes.toml");
    let t = std::fs::read_to_string(&p).unwrap();
    // a key `idx` before `id` used to be reported as the id's line
    std::fs::write(
        &p,
        format!(
            "# comment\n{}",
            t.replacen(
                "id = \"positional/alibi-slopes\"",
                "id = \"positional/other\"",
                1
            )
        ),
    )
    .unwrap();
    let o = run_in(d.path(), &["list"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("alibi-slopes.toml:2"), "{}", err(&o));
}

#[test]
fn index_html_is_one_self_contained_page_that_a_headless_browser_renders() {
    let d = scratch();
    let o = run_in(d.path(), &["run", "--all"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let page = d.path().join("reports/index.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains(&attncheck::report::tool()));
    assert!(html.contains("id=\"positional-alibi-slopes\""));
    // nothing is fetched: no relative src/href other than in-page anchors and data URIs
    for attr in ["src=\"", "href=\""] {
        for part in html.split(attr).skip(1) {
            let v = &part[..part.find('"').unwrap()];
            assert!(
                v.starts_with('#')
                    || v.starts_with("data:image/svg+xml;base64,")
                    || v.starts_with("http"),
                "external reference {v}"
            );
        }
    }
    // deterministic without --stamp; the stamp goes into the page only when asked
    let again = run_in(d.path(), &["run", "--all"]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&page).unwrap(), html);
    let o = run_in(
        d.path(),
        &["run", "--all", "--stamp", "abc1234, 2026-12-01"],
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .contains("abc1234, 2026-12-01"));
    assert!(!std::fs::read_to_string(d.path().join("reports/README.md"))
        .unwrap()
        .contains("abc1234"));

    let Some(chromium) = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|c| Command::new(c).arg("--version").output().is_ok())
    else {
        eprintln!("index_html test: no chromium on PATH, browser check skipped (CI installs it)");
        return;
    };
    let shot = d.path().join("shot.png");
    let o = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,4000",
            &format!("--screenshot={}", shot.display()),
            &format!("file://{}", page.display()),
        ])
        .output()
        .unwrap();
    let log = err(&o);
    assert!(
        shot.exists() && std::fs::metadata(&shot).unwrap().len() > 10_000,
        "{log}"
    );
    for bad in [
        "Uncaught",
        "ERR_FILE_NOT_FOUND",
        "Failed to load resource",
        "Not allowed to load",
    ] {
        assert!(!log.contains(bad), "console: {bad}\n{log}");
    }
}

/// On a fresh machine that had only built attncheck, some packages the trained-model
/// claim reads as its corpus were not downloaded, so `make reports` wrote a different
/// report ("the corpus is not available"). The quick start fetches every package of
/// Cargo.lock first.
#[test]
fn quick_start_fetches_the_trained_model_corpus() {
    let have_make = Command::new("make").arg("--version").output().is_ok();
    if !have_make {
        eprintln!("make is not installed; the Makefile is not inspected");
        return;
    }
    let o = Command::new("make")
        .current_dir(root())
        .args(["-n", "reports", "test"])
        .output()
        .unwrap();
    let plan = out(&o);
    let fetch = plan
        .find("fetch --locked")
        .expect("make fetches Cargo.lock's packages");
    for step in ["run --release -- run --all", "cargo test"] {
        let at = plan.find(step).unwrap_or_else(|| panic!("{step}:\n{plan}"));
        assert!(fetch < at, "the fetch comes before `{step}`:\n{plan}");
    }
}

/// The README and Cargo.toml promised Rust ≥ 1.80, but the locked dependencies need more
/// (zip 9.8 through candle declares 1.89, proptest 1.12 declares 1.88), so a user on
/// 1.80 met a build error instead of the promised build. The declared minimum must be
/// at least every `rust-version` in the locked graph for Linux, and the README must say
/// the same version. (`incompatible_msrv` in clippy then checks our own std use.)
#[test]
fn declared_rust_version_covers_every_locked_dependency() {
    let o = Command::new(env!("CARGO"))
        .current_dir(root())
        .args([
            "metadata",
            "--format-version=1",
            "--locked",
            "--offline",
            "--filter-platform=x86_64-unknown-linux-gnu",
        ])
        .output()
        .unwrap();
    if !o.status.success() {
        eprintln!("cargo metadata failed offline; not checked: {}", err(&o));
        return;
    }
    let meta: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let version = |s: &str| -> Vec<u64> {
        s.split('.')
            .map(|x| x.parse().unwrap_or_else(|_| panic!("version {s}")))
            .collect()
    };
    let in_graph: std::collections::HashSet<&str> = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    let mut ours = None;
    let mut needed = (vec![0], String::new());
    for p in meta["packages"].as_array().unwrap() {
        let Some(rv) = p["rust_version"].as_str() else {
            continue;
        };
        if p["name"] == "attncheck" {
            ours = Some(rv.to_string());
        } else if in_graph.contains(p["id"].as_str().unwrap()) && version(rv) > needed.0 {
            needed = (
                version(rv),
                format!("{} {} needs {rv}", p["name"], p["version"]),
            );
        }
    }
    let ours = ours.expect("Cargo.toml declares rust-version");
    assert!(
        version(&ours) >= needed.0,
        "Cargo.toml says rust-version {ours}, but {}",
        needed.1
    );
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("Rust ≥ {ours}")),
        "the README states the minimum Rust version of Cargo.toml ({ours})"
    );
}
