//! "There are no import circles, even inside one folder" (issue #38). registry.rs
//! orders the top-level modules of src/ in layers; this scan looks one level down, at
//! every folder of every crate: two modules with the same parent (coq/translate/ast.rs
//! and coq/translate/cost.rs, say) may not name each other, directly or around a
//! longer circle. A module naming its own parent or child is not a circle between
//! siblings, and is not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The module path of a file below a crate's src/: `a/b.rs` and `a/b/mod.rs` are
/// [a, b]; lib.rs and main.rs are the root [].
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        parts.clear();
    }
    parts
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The code of `text` with `//` comments (line and doc) removed; string literals are
/// kept, which can only add edges (a path named in a string), never hide one.
fn code_of(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path of a `use` tree (`a::b::{c, d::{e, f}}` gives a::b::c, a::b::d::e and
/// a::b::d::f), each as its segments, pushed onto `out` after `prefix`.
fn use_paths(tree: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = tree[..open]
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let mut base = prefix.to_vec();
        base.extend(head);
        let close = tree.rfind('}').filter(|&c| c > open).unwrap_or(tree.len());
        let inner = &tree[open + 1..close];
        // split at the commas of this level only
        let (mut depth, mut start) = (0usize, 0usize);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    use_paths(&inner[start..i], &base, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        use_paths(&inner[start..], &base, out);
    } else {
        let path: Vec<String> = tree
            .split(" as ")
            .next()
            .unwrap_or("")
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        if !path.is_empty() {
            let mut p = prefix.to_vec();
            p.extend(path);
            out.push(p);
        }
    }
}

/// The paths the code of module `module` names that start at `crate`, `super` or
/// `self`, resolved to absolute module paths (segments below the crate root).
fn named_paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    let mut raw: Vec<Vec<String>> = Vec::new();
    // `use` statements, which may span lines and hold nested groups: a line that starts
    // (after its indentation and a visibility) with `use ` (a "use " inside a string or
    // a sentence is not one)
    for (k, line) in code.lines().enumerate() {
        let mut l = line.trim_start();
        if let Some(r) = l.strip_prefix("pub") {
            l = match r.strip_prefix('(') {
                Some(r) => r.split_once(')').map_or("", |(_, r)| r),
                None => r,
            }
            .trim_start();
        }
        let Some(after) = l.strip_prefix("use ") else {
            continue;
        };
        let whole: String = std::iter::once(after)
            .chain(code.lines().skip(k + 1))
            .collect::<Vec<_>>()
            .join("\n");
        if let Some(end) = whole.find(';') {
            use_paths(&whole[..end], &[], &mut raw);
        }
    }
    // paths written inline: crate::a::f(), super::super::b::T
    for head in ["crate::", "super::", "self::"] {
        for (pos, _) in code.match_indices(head) {
            let prev = code[..pos].chars().last();
            if prev.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue; // inside a longer path or a name
            }
            let mut segs = Vec::new();
            let mut s = &code[pos..];
            loop {
                let id = ident(s);
                if id.is_empty() {
                    break;
                }
                segs.push(id.to_string());
                s = &s[id.len()..];
                match s.strip_prefix("::") {
                    Some(r) => s = r,
                    None => break,
                }
            }
            raw.push(segs);
        }
    }
    raw.into_iter()
        .filter_map(|p| {
            let mut base: Vec<String> = match p.first().map(String::as_str) {
                Some("crate") => Vec::new(),
                Some("self") => module.to_vec(),
                Some("super") => module[..module.len().saturating_sub(1)].to_vec(),
                _ => return None,
            };
            let mut segs = &p[1..];
            while segs.first().is_some_and(|s| s == "super") {
                base.pop();
                segs = &segs[1..];
            }
            base.extend(segs.iter().cloned());
            Some(base)
        })
        .collect()
}

/// The sibling edges of one crate's modules, as (from, to, file) with `from` and `to`
/// children of one parent: an import from module m to module t becomes an edge between
/// their ancestors just below the longest prefix they share.
fn sibling_edges(
    files: &[(String, String)],
) -> BTreeMap<Vec<String>, BTreeMap<Vec<String>, String>> {
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(rel, _)| module_of(rel)).collect();
    let mut edges: BTreeMap<Vec<String>, BTreeMap<Vec<String>, String>> = BTreeMap::new();
    for (rel, text) in files {
        let m = module_of(rel);
        for path in named_paths(&m, &code_of(text)) {
            // the longest prefix of the path that is a module of the crate
            let Some(t) = (0..=path.len())
                .rev()
                .map(|k| path[..k].to_vec())
                .find(|p| modules.contains(p))
            else {
                continue;
            };
            let common = m.iter().zip(&t).take_while(|(a, b)| a == b).count();
            if common >= m.len() || common >= t.len() {
                continue; // the same module, its parent or its child
            }
            edges
                .entry(m[..=common].to_vec())
                .or_default()
                .entry(t[..=common].to_vec())
                .or_insert_with(|| rel.clone());
        }
    }
    edges
}

/// The circles of a graph: its strongly connected components of two or more modules.
fn circles(edges: &BTreeMap<Vec<String>, BTreeMap<Vec<String>, String>>) -> Vec<Vec<Vec<String>>> {
    // Kosaraju: finishing order on the graph, then components on the reversed graph
    let nodes: BTreeSet<&Vec<String>> = edges
        .iter()
        .flat_map(|(a, ts)| std::iter::once(a).chain(ts.keys()))
        .collect();
    let mut order = Vec::new();
    let mut seen = BTreeSet::new();
    for &start in &nodes {
        if !seen.insert(start) {
            continue;
        }
        let mut stack: Vec<(&Vec<String>, Vec<&Vec<String>>)> = vec![(
            start,
            edges.get(start).map_or(Vec::new(), |t| t.keys().collect()),
        )];
        while let Some((v, next)) = stack.last_mut() {
            match next.pop() {
                Some(w) => {
                    if seen.insert(w) {
                        let ws = edges.get(w).map_or(Vec::new(), |t| t.keys().collect());
                        stack.push((w, ws));
                    }
                }
                None => {
                    order.push(*v);
                    stack.pop();
                }
            }
        }
    }
    let mut reverse: BTreeMap<&Vec<String>, Vec<&Vec<String>>> = BTreeMap::new();
    for (a, ts) in edges {
        for b in ts.keys() {
            reverse.entry(b).or_default().push(a);
        }
    }
    let mut assigned = BTreeSet::new();
    let mut out = Vec::new();
    for &v in order.iter().rev() {
        if !assigned.insert(v) {
            continue;
        }
        let mut comp = vec![v.clone()];
        let mut stack = vec![v];
        while let Some(x) = stack.pop() {
            for &y in reverse.get(x).map_or(&[][..], |v| v.as_slice()) {
                if assigned.insert(y) {
                    comp.push(y.clone());
                    stack.push(y);
                }
            }
        }
        if comp.len() > 1 {
            comp.sort();
            out.push(comp);
        }
    }
    out
}

/// The .rs files below `src` as (path relative to it, text).
fn sources(src: &Path) -> Vec<(String, String)> {
    crate::util::files_under(src, ".rs")
        .into_iter()
        .map(|f| {
            let rel = f
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(&f).unwrap())
        })
        .collect()
}

fn show(
    circle: &[Vec<String>],
    edges: &BTreeMap<Vec<String>, BTreeMap<Vec<String>, String>>,
) -> String {
    let name = |m: &Vec<String>| m.join("::");
    let mut lines = vec![circle.iter().map(name).collect::<Vec<_>>().join(", ")];
    for a in circle {
        for (b, file) in edges.get(a).into_iter().flatten() {
            if circle.contains(b) {
                lines.push(format!("  {} → {} (in {file})", name(a), name(b)));
            }
        }
    }
    lines.join("\n")
}

#[test]
fn no_two_modules_of_one_folder_import_each_other() {
    let root = crate::util::root();
    let mut crates = vec![root.join("src")];
    for e in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = e.unwrap().path().join("src");
        if src.is_dir() {
            crates.push(src);
        }
    }
    let mut found = Vec::new();
    let mut scanned = 0;
    for src in &crates {
        let files = sources(src);
        let edges = sibling_edges(&files);
        scanned += edges.values().map(BTreeMap::len).sum::<usize>();
        found.extend(
            circles(&edges)
                .iter()
                .map(|c| format!("{}: {}", src.display(), show(c, &edges))),
        );
    }
    assert!(
        scanned > 50,
        "the scan found only {scanned} sibling imports: it is broken"
    );
    assert!(
        found.is_empty(),
        "modules of one folder import each other:\n{}",
        found.join("\n")
    );
}

/// The scan finds planted circles, through `use super::` groups spanning lines, inline
/// `super::` paths and `crate::` paths, and counts no parent–child import as one.
#[test]
fn the_folder_scan_finds_a_planted_circle() {
    let file = |rel: &str, text: &str| (rel.to_string(), text.to_string());
    let m = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
    // a → b by a multi-line group, b → a inline: one circle
    let files = vec![
        file("lib.rs", "pub mod t;"),
        file("t/mod.rs", "mod a; mod b; use self::a::X;"),
        file("t/a.rs", "use super::{\n    b::{Y,\n Z},\n};\n"),
        file("t/b.rs", "fn f() { super::a::g() } // super::c::h()\n"),
        file("t/c.rs", "use crate::t::a::X;"),
    ];
    let edges = sibling_edges(&files);
    assert_eq!(circles(&edges), vec![vec![m("t::a"), m("t::b")]]);
    // c → a alone is no circle, and a comment names nothing
    assert!(edges[&m("t::c")].contains_key(&m("t::a")));
    assert!(!edges[&m("t::b")].contains_key(&m("t::c")));
    // the parent naming its child is not a sibling edge
    assert!(!edges.contains_key(&m("t")));
    // a longer circle, through crate:: paths
    let files = vec![
        file("x/p.rs", "use crate::x::q::A;"),
        file("x/q.rs", "fn g() -> crate::x::r::B { todo!() }"),
        file("x/r.rs", "use super::p as pp;"),
        file("x/mod.rs", ""),
    ];
    assert_eq!(
        circles(&sibling_edges(&files)),
        vec![vec![m("x::p"), m("x::q"), m("x::r")]]
    );
    // a `pub(crate) use` is a use; "use " in a string is not (a message "use {A} to {B}"
    // once made the scan slice a group backwards and panic)
    let files = vec![
        file("y/mod.rs", ""),
        file("y/p.rs", "pub(crate) use super::q::A;"),
        file(
            "y/q.rs",
            "fn f() -> String { format!(\"use {MIN} to {MAX}\") }",
        ),
    ];
    let edges = sibling_edges(&files);
    assert!(edges[&m("y::p")].contains_key(&m("y::q")));
    assert!(circles(&edges).is_empty());
}

/// The packages of a Cargo.lock that have no `source` (the path crates), each with
/// the names of its dependencies (a `name version` entry read as its name).
fn path_crates_of(lock: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for block in lock.split("[[package]]").skip(1) {
        let field = |key: &str| {
            block
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.trim().trim_matches('"').to_string())
        };
        if field("source = ").is_some() {
            continue;
        }
        let Some(name) = field("name = ") else {
            continue;
        };
        let deps = block
            .split_once("dependencies = [")
            .map(|(_, rest)| rest.split(']').next().unwrap_or(""))
            .unwrap_or("")
            .lines()
            .map(|l| l.trim().trim_end_matches(',').trim_matches('"'))
            .filter(|l| !l.is_empty())
            .map(|l| l.split(' ').next().unwrap_or(l).to_string())
            .collect();
        out.insert(name, deps);
    }
    out
}

/// Regression (CI stop 44): the gram merge gave the kernel a dependency (pulp) and
/// updated the workspace's Cargo.lock, but not the Python wheel's, which is its own
/// workspace; `make python` builds with `--locked` and failed after 17 minutes of CI.
/// Every path crate that both lock files list must list the same dependencies.
#[test]
fn the_python_wheels_lock_file_agrees_with_the_workspace_on_every_path_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).expect(p);
    let main = path_crates_of(&read("Cargo.lock"));
    let py = path_crates_of(&read("crates/attncheck-py/Cargo.lock"));
    assert!(main.contains_key("attncheck-kernel") && py.contains_key("attncheck-kernel"));
    // The wheel's workspace sees the other crates as plain path dependencies, whose
    // dev-dependencies it does not lock: those are left out of the comparison.
    let dev_only = |name: &str| -> BTreeSet<String> {
        let manifest = if name == "attncheck" {
            "Cargo.toml".to_string()
        } else {
            format!("crates/{name}/Cargo.toml")
        };
        let value: toml::Value = read(&manifest).parse().expect(&manifest);
        let keys = |table: &str| -> BTreeSet<String> {
            value
                .get(table)
                .and_then(toml::Value::as_table)
                .map(|t| t.keys().cloned().collect())
                .unwrap_or_default()
        };
        let normal = keys("dependencies");
        keys("dev-dependencies")
            .difference(&normal)
            .cloned()
            .collect()
    };
    let mut stale = Vec::new();
    for (name, deps) in &py {
        if let Some(want) = main.get(name) {
            let want: BTreeSet<String> = want.difference(&dev_only(name)).cloned().collect();
            let want = &want;
            if want != deps {
                let missing: Vec<_> = want.difference(deps).collect();
                let extra: Vec<_> = deps.difference(want).collect();
                stale.push(format!("{name}: missing {missing:?}, extra {extra:?}"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "crates/attncheck-py/Cargo.lock is stale (run `cargo update --offline -w` in \
         crates/attncheck-py): {stale:?}"
    );
}

/// The lock reader sees a path crate's dependencies and skips registry packages.
#[test]
fn the_lock_reader_reads_path_crates_only() {
    let lock = "[[package]]\nname = \"a\"\nversion = \"0.1.0\"\ndependencies = [\n \"b\",\n \"thiserror 1.0.69\",\n]\n\n[[package]]\nname = \"b\"\nversion = \"1.0.0\"\nsource = \"registry+https://x\"\n";
    let got = path_crates_of(lock);
    assert_eq!(got.len(), 1);
    assert_eq!(
        got["a"],
        ["b", "thiserror"].iter().map(|s| s.to_string()).collect()
    );
}
