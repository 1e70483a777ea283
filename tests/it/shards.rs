//! Sharded sweeps (issue 14): `run --shard i/N` computes one share of a claim's
//! independent units and `merge` joins the shares into the report an unsharded run
//! writes, byte for byte — run by GNU parallel, the engine the README shows.

use crate::util::{files_below, root};
use crate::util::{output_text as text, run_in};

use std::process::Command;

/// A scratch project with `id`'s spec, edited to a small size by `edits`.
fn scratch(id: &str, edits: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let (paper, name) = id.split_once('/').unwrap();
    let th = dir.path().join("theorems").join(paper);
    std::fs::create_dir_all(&th).unwrap();
    let mut t =
        std::fs::read_to_string(root().join("theorems").join(format!("{id}.toml"))).unwrap();
    for (from, to) in edits {
        assert_eq!(t.matches(from).count(), 1, "{id}: `{from}`");
        t = t.replacen(from, to, 1);
    }
    std::fs::write(th.join(format!("{name}.toml")), t).unwrap();
    dir
}

/// Runs `id` unsharded into `whole/` and in `n` shards (by GNU parallel when it
/// is installed, else one after the other) merged into `merged/`, and requires
/// every written file to be byte-identical.
fn shards_merge_to_the_unsharded_report(id: &str, edits: &[(&str, &str)], n: u64) {
    let d = scratch(id, edits);
    // the verdict of a shrunken spec does not matter here (exit 0 or 1), only that
    // the merged run writes the same bytes
    let o = run_in(d.path(), &["run", id, "--out", "whole"]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
    let whole_code = o.status.code();
    let exe = env!("CARGO_BIN_EXE_attncheck");
    let parallel = Command::new("parallel").arg("--version").output().is_ok();
    if parallel {
        let o = Command::new("parallel")
            .current_dir(d.path())
            .args(["--halt", "now,fail=1", "--jobs", "2"])
            .arg(format!(
                "{exe} run {id} --shard {{}}/{n} --threads 1 --out shards"
            ))
            .arg(":::")
            .args((1..=n).map(|i| i.to_string()))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "parallel: {}", text(&o));
    } else {
        eprintln!("GNU parallel is not installed; running the {n} shards one after the other");
        for i in 1..=n {
            let o = run_in(
                d.path(),
                &["run", id, "--shard", &format!("{i}/{n}"), "--out", "shards"],
            );
            assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        }
    }
    let o = run_in(d.path(), &["merge", "shards", "--out", "merged"]);
    assert_eq!(o.status.code(), whole_code, "{}", text(&o));
    let (paper, name) = id.split_once('/').unwrap();
    let whole = d.path().join("whole").join(paper);
    let mut compared = 0;
    for f in std::fs::read_dir(&whole).unwrap() {
        let f = f.unwrap().path();
        let fname = f.file_name().unwrap().to_string_lossy().into_owned();
        if !fname.starts_with(name) {
            continue;
        }
        let merged = d.path().join("merged").join(paper).join(&fname);
        assert_eq!(
            std::fs::read(&f).unwrap(),
            std::fs::read(&merged).unwrap_or_default(),
            "{id}: {fname} differs between the unsharded and the merged run"
        );
        compared += 1;
    }
    assert!(compared >= 2, "{id}: compared {compared} files");
    // a missing shard is an error naming it, not a smaller report
    std::fs::remove_file(
        d.path()
            .join("shards")
            .join(paper)
            .join(format!("{name}.shard-2-of-{n}.json")),
    )
    .unwrap();
    let o = run_in(d.path(), &["merge", "shards", "--out", "merged2"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("shard 2 of {n} is missing")),
        "{}",
        text(&o)
    );
}

#[test]
fn log_dimension_shards_merge_byte_for_byte() {
    shards_merge_to_the_unsharded_report(
        "sparse/log-dimension",
        &[
            (
                "log2_n = [4, 5, 6, 7, 8, 9, 10, 11, 12]",
                "log2_n = [4, 5, 6, 7, 8]",
            ),
            ("seeds = 1024", "seeds = 48"),
            ("min_seeds = 256", "min_seeds = 16"),
            ("bootstrap = 1000", "bootstrap = 200"),
        ],
        3,
    );
}

#[test]
fn failure_probability_shards_merge_byte_for_byte() {
    shards_merge_to_the_unsharded_report(
        "sparse/failure-probability",
        &[("seeds = 200", "seeds = 40")],
        3,
    );
}

#[test]
fn codim_conjecture_shards_merge_byte_for_byte() {
    // a clusters claim: each (V, seed) flow is a unit, the first seed's plot included
    shards_merge_to_the_unsharded_report(
        "clusters/codim-conjecture",
        &[("t_end = \"12\"", "t_end = \"2\"")],
        2,
    );
}

/// The README's GNU parallel script (`scripts/cluster/sweep-parallel.sh`) runs
/// the shards, records each one's wall and CPU time with `TIMES=1`, skips a
/// shard already written (an interrupted sweep resumes), and merges to the
/// unsharded report.
#[test]
fn the_parallel_sweep_script_times_resumes_and_merges() {
    let have = |c: &str| Command::new(c).arg("--version").output().is_ok();
    if !have("parallel") || !std::path::Path::new("/usr/bin/time").exists() {
        eprintln!("GNU parallel or GNU time is not installed; the script is not run");
        return;
    }
    let id = "sparse/failure-probability";
    let d = scratch(id, &[("seeds = 200", "seeds = 40")]);
    let o = run_in(d.path(), &["run", id, "--out", "whole"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let script = root().join("scripts/cluster/sweep-parallel.sh");
    let run = || {
        Command::new("bash")
            .current_dir(d.path())
            .arg(&script)
            .args([id, "3", "quick"])
            .env("ATTNCHECK", env!("CARGO_BIN_EXE_attncheck"))
            .env("TIMES", "1")
            .env("JOBS", "2")
            .env("REPORTS", "merged")
            .output()
            .unwrap()
    };
    let o = run();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for i in 1..=3 {
        let t = std::fs::read_to_string(d.path().join(format!("shards/times/{i}.txt"))).unwrap();
        assert!(
            t.starts_with(&format!("shard {i}/3 wall ")) && t.contains(" user "),
            "{t}"
        );
    }
    let name = "sparse/failure-probability.json";
    let whole = std::fs::read(d.path().join("whole").join(name)).unwrap();
    assert_eq!(
        whole,
        std::fs::read(d.path().join("merged").join(name)).unwrap()
    );
    // a second run finds every shard written: nothing is run again, the merge is the same
    std::fs::remove_dir_all(d.path().join("shards/times")).unwrap();
    let o = run();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!d.path().join("shards/times/1.txt").exists());
    assert_eq!(
        whole,
        std::fs::read(d.path().join("merged").join(name)).unwrap()
    );
}

#[test]
fn shard_arguments_are_checked() {
    let d = scratch("sparse/log-dimension", &[]);
    for bad in ["0/3", "4/3", "3", "a/b", "1/0"] {
        let o = run_in(d.path(), &["run", "sparse/log-dimension", "--shard", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        assert!(text(&o).contains("--shard takes i/N"), "{}", text(&o));
    }
}

#[test]
fn a_claim_without_independent_units_refuses_to_shard() {
    let d = scratch("positional/alibi-slopes", &[]);
    let o = run_in(
        d.path(),
        &["run", "positional/alibi-slopes", "--shard", "1/2"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no independent units"), "{}", text(&o));
}

/// `merge` refuses a tampered, truncated, foreign or duplicated shard with exit 2,
/// an error naming the file (and, for a field, its line), and writes nothing.
/// Regression tests for two bugs: a shard index at or above its count panicked
/// (exit 101, an index out of bounds), and a huge count aborted on allocating a
/// flag per shard (exit 134).
#[test]
fn tampered_shards_are_refused_with_exit_2_and_nothing_written() {
    let id = "sparse/failure-probability";
    let d = scratch(id, &[("seeds = 200", "seeds = 40")]);
    for i in 1..=2 {
        let o = run_in(
            d.path(),
            &["run", id, "--shard", &format!("{i}/2"), "--out", "shards"],
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    }
    let dir = d.path().join("shards/sparse");
    let name = |i: u32| format!("failure-probability.shard-{i}-of-2.json");
    let orig = |i: u32| std::fs::read_to_string(dir.join(name(i))).unwrap();
    let line_of = |t: &str, needle: &str| t.lines().position(|l| l.contains(needle)).unwrap() + 1;
    // a result moved from shard 1 to shard 2, where it is not at home
    let moved = {
        let mut a: serde_json::Value = serde_json::from_str(&orig(1)).unwrap();
        let mut b: serde_json::Value = serde_json::from_str(&orig(2)).unwrap();
        let res = a["record"]["results"].as_object_mut().unwrap();
        let k = res.keys().next().unwrap().clone();
        let v = res.remove(&k).unwrap();
        b["record"]["results"]
            .as_object_mut()
            .unwrap()
            .insert(k.clone(), v);
        (k, serde_json::to_string_pretty(&b).unwrap())
    };
    // a result that is not of the claim's type
    let garbled = {
        let mut a: serde_json::Value = serde_json::from_str(&orig(1)).unwrap();
        let res = a["record"]["results"].as_object_mut().unwrap();
        let k = res.keys().next().unwrap().clone();
        res.insert(k, serde_json::json!("not a result"));
        serde_json::to_string_pretty(&a).unwrap()
    };
    let one = orig(1);
    // (what is done, the files replaced or added, what the error must say)
    type Case = (&'static str, Vec<(String, String)>, String);
    let cases: Vec<Case> = vec![
        (
            "shard index at its count",
            vec![(name(1), one.replacen("\"shard\": 0,", "\"shard\": 2,", 1))],
            format!(
                "{}:{}: shard: 2 is not below `of` = 2",
                name(1),
                line_of(&one, "\"shard\"")
            ),
        ),
        (
            "huge shard count",
            vec![(
                name(1),
                one.replacen("\"of\": 2,", "\"of\": 1000000000000000,", 1),
            )],
            format!(
                "{}:{}: of: 1000000000000000 shards; a run splits into 1 to 100000",
                name(1),
                line_of(&one, "\"of\"")
            ),
        ),
        (
            "zero shard count",
            vec![(name(1), one.replacen("\"of\": 2,", "\"of\": 0,", 1))],
            format!("{}:{}: of: 0 shards", name(1), line_of(&one, "\"of\"")),
        ),
        (
            "another format",
            vec![(
                name(1),
                one.replacen("attncheck-shard/1", "attncheck-shard/0", 1),
            )],
            format!("{}:2: format: `attncheck-shard/0`", name(1)),
        ),
        (
            "truncated",
            vec![(name(1), one[..one.len() / 2].to_string())],
            "not a shard file".to_string(),
        ),
        (
            "duplicated",
            vec![(
                "failure-probability.shard-1-of-2.copy.json".to_string(),
                one.clone(),
            )],
            "shard 1 of 2 appears twice".to_string(),
        ),
        (
            "other parameters",
            vec![(
                name(2),
                orig(2).replacen("\"seeds\": 40", "\"seeds\": 41", 1),
            )],
            "was run with other parameters".to_string(),
        ),
        (
            "a unit moved to another shard",
            vec![(name(2), moved.1.clone())],
            format!("holds unit `{}`, which is not its own", moved.0),
        ),
        (
            "a result the claim cannot read",
            vec![(name(1), garbled)],
            "is not a value the claim computes".to_string(),
        ),
        (
            "another split",
            vec![(name(2), orig(2).replacen("\"of\": 2,", "\"of\": 3,", 1))],
            "shard of 3".to_string(),
        ),
    ];
    for (what, files, needle) in cases {
        let t = tempfile::tempdir().unwrap();
        let sh = t.path().join("shards");
        std::fs::create_dir_all(&sh).unwrap();
        for i in 1..=2 {
            std::fs::write(sh.join(name(i)), orig(i)).unwrap();
        }
        for (f, body) in &files {
            std::fs::write(sh.join(f), body).unwrap();
        }
        let th = d.path().join("theorems");
        let o = run_in(
            t.path(),
            &[
                "merge",
                "shards",
                "--out",
                "merged",
                "--theorems",
                th.to_str().unwrap(),
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{what}: {}", text(&o));
        assert!(
            text(&o).contains(&needle),
            "{what}: expected {needle:?} in {}",
            text(&o)
        );
        assert!(!text(&o).contains("panicked"), "{what}: {}", text(&o));
        assert!(!t.path().join("merged").exists(), "{what}: wrote reports");
    }
}

/// The committed full log-dimension report had gone stale: it was written before the
/// statement/trust rework and migrated by hand, so it still called `d_min ≤ d_ub` a
/// certified check (now an observation), had no statement, trust section or
/// certificate, and no test noticed, since a full sweep is hours of CPU. Every measured
/// sweep keeps its shards in `bench/sweeps/<sweep>/shards/` (the 16 of log-dimension, the
/// 72 of the trained-model L_tr scan), and merging them takes seconds: `reports/full/` must
/// be exactly what the complete sweeps merge to with today's code, file for file and byte
/// for byte (a sweep with shards still missing is left out, as `bench/sweeps/merge-stored.sh`
/// does, and its report is not committed yet).
#[test]
fn the_committed_full_report_is_what_the_stored_shards_merge_to() {
    let sweeps = root().join("bench/sweeps");
    let d = tempfile::tempdir().unwrap();
    let shards = d.path().join("shards");
    std::fs::create_dir_all(&shards).unwrap();
    let mut dirs: Vec<_> = std::fs::read_dir(&sweeps)
        .unwrap()
        .map(|e| e.unwrap().path().join("shards"))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut complete = Vec::new();
    for dir in dirs {
        let mut gz: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
            .collect();
        gz.sort();
        let Some(first) = gz.first() else { continue };
        let name = first.file_name().unwrap().to_string_lossy().into_owned();
        let n: usize = name
            .rsplit_once("-of-")
            .and_then(|(_, t)| t.strip_suffix(".json.gz"))
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("{name}: not <claim>.shard-i-of-N.json.gz"));
        if gz.len() != n {
            eprintln!(
                "{}: {} of {n} shards stored, left out",
                dir.display(),
                gz.len()
            );
            continue;
        }
        for f in &gz {
            let plain = f.file_name().unwrap().to_string_lossy().replace(".gz", "");
            std::fs::write(shards.join(plain), crate::util::gunzip(f)).unwrap();
        }
        complete.push(dir);
    }
    assert!(
        complete
            .iter()
            .any(|d| d.to_string_lossy().contains("log-dimension-16")),
        "the log-dimension sweep is stored whole"
    );
    let merged = d.path().join("merged");
    let o = run_in(
        &root(),
        &[
            "merge",
            shards.to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let committed = root().join("reports/full");
    let hint =
        "reports/full/ is stale: regenerate it with `bench/sweeps/<sweep>/resume.sh --write` \
                (it merges the stored shards) and commit the result";
    assert_eq!(files_below(&merged), files_below(&committed), "{hint}");
    for f in files_below(&merged) {
        assert!(
            std::fs::read(merged.join(&f)).unwrap() == std::fs::read(committed.join(&f)).unwrap(),
            "reports/full/{}: {hint}",
            f.display()
        );
    }
}
