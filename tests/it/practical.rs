//! Through the binary: the bugs new users hit (issue 14) exit 2 with `FILE:LINE:`
//! instead of aborting, panicking or staying silent.

use crate::util::root;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_attncheck"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const H: &[u8] = b"%%MatrixMarket matrix coordinate real general\n";

/// Runs `sparse construct` on a target with the given bytes after the header.
fn construct(body: &[u8]) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.mtx");
    std::fs::write(&f, [H, body].concat()).unwrap();
    let o = bin()
        .args(["sparse", "construct", "--k", "1", "--target"])
        .arg(&f)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    (o, dir)
}

#[test]
fn sparse_construct_huge_size_line_exits_2_instead_of_aborting_on_allocation() {
    let (o, dir) = construct(b"1000000000000 1000000000000 1\n1 1 1\n");
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("a.mtx:2: n = 1000000000000 exceeds"), "{e}");
    assert!(!e.contains("memory allocation"), "{e}");
    assert!(!dir.path().join("out").exists());
}

#[test]
fn sparse_construct_size_line_beyond_its_entries_names_the_first_empty_row() {
    let max = attncheck::sparse::target::MAX_N;
    let (o, _dir) = construct(format!("{max} {max} 1\n1 1 1\n").as_bytes());
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("a.mtx:2: row 2 has no nonzero entry"), "{e}");
}

#[test]
fn sparse_construct_non_utf8_target_names_the_line() {
    let (o, _dir) = construct(b"2 2 2\n1 1 1\n2 2 \xff1\n");
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("a.mtx:4: byte 0xff at column 5"), "{e}");
}

#[test]
fn list_reports_a_broken_full_profile() {
    let dir = tempfile::tempdir().unwrap();
    let th = dir.path().join("theorems/positional");
    std::fs::create_dir_all(&th).unwrap();
    let text = std::fs::read_to_string(root().join("theorems/positional/alibi-slopes.toml"))
        .unwrap()
        + "\n[profiles.full]\nheads = [0]\n";
    std::fs::write(th.join("alibi-slopes.toml"), &text).unwrap();
    let line = text.lines().position(|l| l == "heads = [0]").unwrap() + 1;
    for args in [&["list"][..], &["run", "positional/alibi-slopes"][..]] {
        let o = bin().current_dir(dir.path()).args(args).output().unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(
            e.contains(&format!("alibi-slopes.toml:{line}: profiles.full.heads[0]")),
            "{args:?}: {e}"
        );
    }
    assert!(!dir.path().join("reports").exists());
}
