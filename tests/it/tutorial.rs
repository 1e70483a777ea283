//! docs/your-own-claims.md runs as written: in an empty directory, every
//! ```` ```toml file=PATH ```` block is written to PATH and every ```` ```console ````
//! block's `$ attncheck …` command is run, in order; its stdout must be the lines the
//! block shows (a line ending in `…` matches any line that begins so), and its exit
//! code the block's `exit=N` (0 when not given).

use crate::util::{bin, root};

/// One fenced block of the tutorial.
enum Block {
    File {
        path: String,
        text: String,
    },
    Command {
        args: Vec<String>,
        out: Vec<String>,
        exit: i32,
    },
}

/// Splits a command line into words: spaces separate, double quotes group.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            _ => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

fn blocks(doc: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = doc.lines();
    while let Some(l) = lines.next() {
        let Some(info) = l.strip_prefix("```") else {
            continue;
        };
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        let mut info = info.split_whitespace();
        match info.next() {
            Some("toml") => {
                if let Some(path) = info.find_map(|w| w.strip_prefix("file=")) {
                    out.push(Block::File {
                        path: path.to_string(),
                        text: body.join("\n") + "\n",
                    });
                }
            }
            Some("console") => {
                let exit = info
                    .find_map(|w| w.strip_prefix("exit="))
                    .map_or(0, |n| n.parse().expect("exit=N"));
                let cmd = body[0]
                    .strip_prefix("$ attncheck ")
                    .expect("a `$ attncheck` line");
                out.push(Block::Command {
                    args: words(cmd),
                    out: body[1..].iter().map(|s| s.to_string()).collect(),
                    exit,
                });
            }
            _ => {}
        }
    }
    out
}

#[test]
fn the_tutorial_runs_as_written() {
    let doc = std::fs::read_to_string(root().join("docs/your-own-claims.md")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let have_coq = crate::coq::have_coq("the_tutorial_runs_as_written (its --coq step)");
    let mut commands = 0;
    for b in blocks(&doc) {
        match b {
            Block::File { path, text } => {
                let p = dir.path().join(&path);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, text).unwrap();
            }
            Block::Command { args, out, exit } => {
                if args.iter().any(|a| a == "--coq") && !have_coq {
                    continue;
                }
                commands += 1;
                let o = bin().current_dir(dir.path()).args(&args).output().unwrap();
                let stdout = String::from_utf8_lossy(&o.stdout);
                let stderr = String::from_utf8_lossy(&o.stderr);
                assert_eq!(
                    o.status.code(),
                    Some(exit),
                    "attncheck {args:?}:\n{stdout}{stderr}"
                );
                let got: Vec<&str> = stdout.lines().collect();
                assert_eq!(
                    got.len(),
                    out.len(),
                    "attncheck {args:?}: the tutorial shows\n{}\nit printed\n{stdout}",
                    out.join("\n")
                );
                for (g, want) in got.iter().zip(&out) {
                    let ok = match want.strip_suffix('…') {
                        Some(prefix) => g.starts_with(prefix),
                        None => g == want,
                    };
                    assert!(
                        ok,
                        "attncheck {args:?}: printed\n{g}\nthe tutorial shows\n{want}"
                    );
                }
            }
        }
    }
    assert!(commands >= 3, "the tutorial's commands were not found");
}

#[test]
fn the_tutorial_reader_splits_quoted_words() {
    assert_eq!(
        words(r#"eval "(+ 1 2)" --digits 5"#),
        vec!["eval", "(+ 1 2)", "--digits", "5"]
    );
}
