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

/// The layers of src/ from the bottom up (docs/design.md, "Layers"): a module may name
/// only modules before it. A strict order, so the top-level module graph has no cycle.
/// `certificate` re-exports the kernel's format; `main.rs` (the binary) and `lib.rs`
/// (the root that declares the modules) are above every layer.
const LAYERS: &[&str] = &[
    "kernel",
    "certificate",
    "escalate",
    "calc",
    "explain",
    "fast",
    "rng",
    "progress",
    "stdio",
    "reading",
    "verdict",
    "outcome",
    "lemmas",
    "spec",
    "dynamics",
    "sparse",
    "model_window",
    "claims",
    "coq",
    "report",
    "app",
];

/// The top-level modules that the file `rel` (a path below src/) names with
/// `crate::<module>` or a `super::` chain that climbs to the crate root, as (line,
/// from, to) for `from` ≠ `to`; macros (`crate::errln!`) and comments are skipped.
fn edges_in(rel: &str, text: &str) -> Vec<(usize, String, String)> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let parts: Vec<&str> = rel.trim_end_matches(".rs").split('/').collect();
    let from = parts[0].to_string();
    // the module path of the file below the crate root: `a/b.rs` and `a/b/mod.rs` are a::b
    let depth_of_file = parts.len() - usize::from(parts.last() == Some(&"mod"));
    let mut edges = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut targets = Vec::new();
        for (pos, _) in code.match_indices("crate::") {
            let rest = &code[pos + "crate::".len()..];
            let name = ident(rest);
            if !name.is_empty() && !rest[name.len()..].starts_with('!') {
                targets.push(name);
            }
        }
        // `super::` chains at the start of a path: climb from the file's module
        for (pos, _) in code.match_indices("super::") {
            if pos >= 2 && &code.as_bytes()[pos - 2..pos] == b"::" {
                continue; // the inner link of a chain, counted from its start
            }
            let mut rest = &code[pos..];
            let mut depth = depth_of_file;
            while let Some(r) = rest.strip_prefix("super::") {
                depth = depth.saturating_sub(1);
                rest = r;
            }
            if depth == 0 {
                let name = ident(rest);
                if !name.is_empty() {
                    targets.push(name);
                }
            }
        }
        for to in targets {
            if to != from && LAYERS.contains(&to.as_str()) {
                edges.push((i + 1, from.clone(), to));
            }
        }
    }
    edges
}

/// [`edges_in`] over every file of src/ but main.rs and lib.rs, as (file, line, from, to).
fn module_edges() -> Vec<(String, usize, String, String)> {
    let src = crate::util::root().join("src");
    let mut edges = Vec::new();
    for f in crate::util::files_under(&src, ".rs") {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "main.rs" || rel == "lib.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (line, from, to) in edges_in(&rel, &text) {
            edges.push((rel.clone(), line, from, to));
        }
    }
    edges
}

fn is_upward(from: &str, to: &str) -> bool {
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m).unwrap();
    rank(to) > rank(from)
}

/// The scan behind [`no_module_names_a_layer_above_it`] finds planted upward imports
/// (the two this session removed, through `crate::` and through a `super::` chain),
/// and skips macros, comments and downward imports.
#[test]
fn the_layer_scan_finds_a_planted_upward_import() {
    let up = |rel: &str, text: &str| -> Vec<(String, String)> {
        edges_in(rel, text)
            .into_iter()
            .filter(|(_, f, t)| is_upward(f, t))
            .map(|(_, f, t)| (f, t))
            .collect()
    };
    let pair = |a: &str, b: &str| vec![(a.to_string(), b.to_string())];
    assert_eq!(
        up("spec.rs", "let d = crate::claims::find(id);"),
        pair("spec", "claims")
    );
    assert_eq!(
        up(
            "sparse/target.rs",
            "fn f() -> Result<(), super::super::app::Error> {"
        ),
        pair("sparse", "app")
    );
    assert_eq!(
        up("sparse/mod.rs", "use super::app::Error;"),
        pair("sparse", "app")
    );
    // one `super::` from sparse/target.rs stays inside sparse
    assert!(edges_in("sparse/target.rs", "use super::Error;").is_empty());
    assert!(up("spec.rs", "crate::errln!(\"x\"); // crate::claims::find").is_empty());
    assert!(up("claims/mod.rs", "use crate::spec::Spec;").is_empty());
    assert_eq!(edges_in("claims/mod.rs", "use crate::spec::Spec;").len(), 1);
}

/// Issue #24 ("a house with no circles"): every top-level module of src/ is in
/// [`LAYERS`], and names only modules below it — so there is no cycle among them and
/// no import from a lower layer to a higher one (spec → claims and sparse → app were
/// the last two, removed in session 15).
#[test]
fn no_module_names_a_layer_above_it() {
    let src = crate::util::root().join("src");
    for e in std::fs::read_dir(&src).unwrap() {
        let name = e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if name != "main" && name != "lib" {
            assert!(
                LAYERS.contains(&name.as_str()),
                "src/{name} is in no layer of LAYERS"
            );
        }
    }
    let edges = module_edges();
    assert!(
        edges
            .iter()
            .any(|(_, _, f, t)| f == "claims" && t == "spec"),
        "the scan found no claims → spec import: it is broken"
    );
    let upward: Vec<String> = edges
        .iter()
        .filter(|(_, _, from, to)| is_upward(from, to))
        .map(|(file, line, from, to)| format!("src/{file}:{line}: {from} → {to}"))
        .collect();
    assert!(
        upward.is_empty(),
        "imports from a lower layer to a higher one:\n{}",
        upward.join("\n")
    );
}

/// The 1-based lines of `text` that re-parse a parameter its resolution already
/// checked (`expect("validated…")`), comments aside.
fn reparses(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let code = l.split("//").next().unwrap_or("");
            code.contains("expect(\"validated")
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// Parameters are resolved once, into typed values (`claims::shape::Claim::resolve`):
/// no claim module parses a validated parameter again (`expect("validated…")`), and
/// every registered claim's statement and run take the resolved value (the registry's
/// `claim!` accepts nothing else).
#[test]
fn no_claim_module_reparses_a_validated_parameter() {
    let claims = root().join("src").join("claims");
    let mut found = Vec::new();
    for f in crate::util::files_under(&claims, ".rs") {
        let text = std::fs::read_to_string(&f).unwrap();
        let rel = f.strip_prefix(root()).unwrap().display().to_string();
        found.extend(reparses(&text).into_iter().map(|l| format!("{rel}:{l}")));
    }
    assert!(
        found.is_empty(),
        "a claim re-parses a parameter its resolution already checked; keep the resolved \
         value in its `Params` instead:\n{}",
        found.join("\n")
    );
}

/// The scan behind [`no_claim_module_reparses_a_validated_parameter`] finds a planted
/// re-parse, and not one in a comment.
#[test]
fn the_reparse_scan_finds_a_planted_expect() {
    let planted = "fn run(p: &Params) {\n    // expect(\"validated\") in a comment\n    \
                   let t = exact(\"t\", &p.t).expect(\"validated\");\n}\n";
    assert_eq!(reparses(planted), vec![3]);
}

/// Regression (issue #24): `verify` special-cased `sparse/construct` by comparing
/// the certificate's claim ID in app.rs. Every certificate kind is now rebuilt
/// through the one registry: a spec claim from its spec, `sparse/construct` from its
/// input, an unknown ID not at all.
#[test]
fn verify_rebuilds_every_certificate_kind_through_the_registry() {
    use attncheck::claims::rebuild::{rebuild_of, Rebuild};
    for id in registered() {
        assert!(
            matches!(rebuild_of(&id), Some(Rebuild::Spec(d)) if d.id == id),
            "{id}"
        );
    }
    match rebuild_of("sparse/construct") {
        Some(Rebuild::Input(d)) => assert_eq!(d.id, "sparse/construct"),
        _ => panic!("sparse/construct is not registered as an input certificate"),
    }
    match rebuild_of("attncheck/formula") {
        Some(Rebuild::Input(d)) => assert_eq!(d.option, "--formula"),
        _ => panic!("attncheck/formula is not registered as an input certificate"),
    }
    assert!(rebuild_of("sparse/Construct").is_none());
    assert!(rebuild_of("").is_none());
    let app = std::fs::read_to_string(root().join("src/app.rs")).unwrap();
    assert!(
        !app.contains("CONSTRUCT_CLAIM") && !app.contains("\"sparse/construct\""),
        "src/app.rs names a certificate kind instead of asking the registry"
    );
}

/// The bodies of the functions named `present…` in `text` (a claim's
/// `Claim::present` and the helpers it calls), as (1-based first line, lines). A
/// body ends at the first line that is a `}` at the indentation of its `fn` line
/// (rustfmt's layout).
fn present_bodies(text: &str) -> Vec<(usize, Vec<&str>)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let code = l.split("//").next().unwrap_or("");
        if !code.contains("fn present") {
            continue;
        }
        let indent = l.len() - l.trim_start().len();
        let closing = format!("{}}}", " ".repeat(indent));
        let end = lines[i..]
            .iter()
            .position(|x| *x == closing)
            .map_or(lines.len(), |k| i + k);
        out.push((i + 1, lines[i..end].to_vec()));
    }
    out
}

/// The 1-based lines of `text` where a presentation (a `fn present…` body) records
/// a check or a verdict, comments aside.
fn presentation_decisions(text: &str) -> Vec<usize> {
    const DECIDING: &[&str] = &[
        ".observe(",
        "observe_interval(",
        "observe_tally(",
        "consistency(",
        "declare_",
        ".prove(",
        "checks.extend(",
        "set_part(",
    ];
    let mut found = Vec::new();
    for (first, body) in present_bodies(text) {
        for (k, l) in body.iter().enumerate() {
            let code = l.split("//").next().unwrap_or("");
            if DECIDING.iter().any(|d| code.contains(d)) {
                found.push(first + k);
            }
        }
    }
    found
}

/// `present` never decides (issue #24, docs/design.md "The life of a claim"): its
/// `Presentation` has no way to record a check or a verdict, and no claim module's
/// `fn present…` calls one (an `Outcome` smuggled in, a `Checks` passed along).
#[test]
fn no_claim_presentation_records_a_check() {
    let claims = root().join("src").join("claims");
    let mut found = Vec::new();
    let mut bodies = 0;
    for f in crate::util::files_under(&claims, ".rs") {
        let text = std::fs::read_to_string(&f).unwrap();
        let rel = f.strip_prefix(root()).unwrap().display().to_string();
        bodies += present_bodies(&text).len();
        found.extend(
            presentation_decisions(&text)
                .into_iter()
                .map(|l| format!("{rel}:{l}")),
        );
    }
    assert!(bodies > 0, "the scan found no `fn present`: it is broken");
    assert!(
        found.is_empty(),
        "a claim's presentation records a check or a verdict; move it into `observe`:\n{}",
        found.join("\n")
    );
}

/// The scan behind [`no_claim_presentation_records_a_check`] finds a planted
/// observation inside a `present`, and none in `observe`, in a comment or after the
/// body.
#[test]
fn the_presentation_scan_finds_a_planted_check() {
    let planted = "pub fn observe(o: &mut Observations) {\n    o.observe(\"a\", true, \"\");\n}\n\
                   \n\
                   pub fn present(o: &mut Presentation, out: &mut Outcome) {\n    \
                   // out.checks.observe(\"in a comment\", true, \"\")\n    \
                   o.note(\"fine\");\n    \
                   if true {\n        out.checks.observe(\"b\", false, \"\");\n    }\n    \
                   out.declare_inconclusive(\"c\");\n\
                   }\n\
                   fn after(o: &mut Observations) {\n    o.observe(\"d\", true, \"\");\n}\n";
    assert_eq!(presentation_decisions(planted), vec![9, 11]);
}

/// The lines of `text` (Rust source) that build statement text instead of terms
/// (issue #38): a call of `.assert(` (the text road of `Statement`), or a string
/// literal that opens an S-expression, `"(` followed by an operator of the kernel's
/// language and a space or `)`, or by a pasted `{…}` and a space (an operator given
/// by name). A comment, or a parenthesis that opens words (`"(i) ALiBi …"`, a tuple
/// `"({})"`), is not statement text. Also a built term or formula handed to the
/// kernel as its text (`expr::eval(&t.to_string(), …)`: `eval_built`, `check_built`
/// take the tree).
fn statement_text(text: &str) -> Vec<usize> {
    use attncheck::kernel::expr::OPS;
    let opens_sexp = |rest: &str| {
        if let Some(inner) = rest.strip_prefix('{') {
            return inner
                .find('}')
                .is_some_and(|e| inner[e + 1..].starts_with(' '));
        }
        let end = rest.find([' ', ')', '"']).unwrap_or(rest.len());
        let (op, after) = rest.split_at(end);
        OPS.iter().any(|o| o.name == op) && (after.starts_with(' ') || after.starts_with(')'))
    };
    // the first argument of a call, up to its `,` or `)` at depth 0
    fn first_arg(rest: &str) -> &str {
        let mut depth = 0usize;
        for (i, c) in rest.char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => return &rest[..i],
                ')' => depth -= 1,
                ',' if depth == 0 => return &rest[..i],
                _ => {}
            }
        }
        rest
    }
    let reparses = |code: &str| {
        [
            "eval(&",
            "eval_with(&",
            "eval_exact(&",
            "check_with(&",
            "expr::check(&",
        ]
        .iter()
        .any(|p| {
            code.match_indices(p).any(|(i, _)| {
                first_arg(&code[i + p.len()..])
                    .trim_end()
                    .ends_with(".to_string()")
            })
        })
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let code = l.split("//").next().unwrap_or("");
            code.contains(".assert(")
                || reparses(code)
                || code
                    .match_indices("\"(")
                    .any(|(i, _)| opens_sexp(&code[i + 2..]))
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// The files of statement builders: every claim module except `claims/formulas.rs`
/// (the user's own formulas, text by nature), and `sparse/construct.rs` and
/// `sparse/target.rs` (the lemma's obligations and `sparse construct`'s statement).
fn statement_builders() -> Vec<std::path::PathBuf> {
    let mut files = crate::util::files_under(&root().join("src").join("claims"), ".rs");
    files.retain(|f| !f.ends_with("claims/formulas.rs"));
    files.push(root().join("src/sparse/construct.rs"));
    files.push(root().join("src/sparse/target.rs"));
    files
}

/// Issue #38: statement builders build typed terms (`kernel::expr::build`) and state
/// them (`Statement::state`); none pastes S-expression text or asserts text, so the
/// kernel never re-parses what a claim built.
#[test]
fn no_statement_builder_pastes_s_expression_text() {
    let mut found = Vec::new();
    for f in statement_builders() {
        let text = std::fs::read_to_string(&f).unwrap();
        let rel = f.strip_prefix(root()).unwrap().display().to_string();
        found.extend(
            statement_text(&text)
                .into_iter()
                .map(|l| format!("{rel}:{l}")),
        );
    }
    assert!(
        found.is_empty(),
        "a statement builder pastes S-expression text; build the formula with \
         kernel::expr::build and `Statement::state` instead:\n{}",
        found.join("\n")
    );
}

/// The scan behind [`no_statement_builder_pastes_s_expression_text`] finds each planted
/// kind of statement text and a built term handed over as text, and neither prose in
/// parentheses, a comment, an error's text nor a spec's own text.
#[test]
fn the_statement_text_scan_finds_a_planted_twin() {
    let planted = "fn statement(st: &mut Statement, x: &str, op: &str) {\n\
                   \x20   st.assert(\"bound\", \"(< 1 2)\".to_string());\n\
                   \x20   let f = format!(\"(<= {x} 1)\");\n\
                   \x20   let g = format!(\"({op} {x} 1)\");\n\
                   \x20   let h = format!(\"(and {f} {g})\");\n\
                   \x20   let c = format!(\"(layer-dt {x})\");\n\
                   \x20   let z = \"(sum i 1 3 i)\";\n\
                   \x20   // st.assert(\"in a comment\", format!(\"(<= {x} 1)\"));\n\
                   \x20   let name = format!(\"(i) ALiBi ({x} rule)\");\n\
                   \x20   let cell = format!(\"({})\", x);\n\
                   \x20   let label = format!(\"(G) {name}: (ii) at most one\");\n\
                   \x20   let neg = format!(\"(b) for A: Δ − 2η* ≥ γ = {x}\");\n\
                   \x20   let v = expr::eval(&y_term(slope(q), eps).to_string(), prec);\n\
                   \x20   let ok = crate::kernel::check(&st, prec).map_err(|e| e.to_string());\n\
                   \x20   let u = check_with(&f.to_string(), prec, data);\n\
                   \x20   let w = expr::eval(&raw.table_delta, 64);\n\
                   }\n";
    assert_eq!(statement_text(planted), vec![2, 3, 4, 5, 6, 7, 13, 15]);
}

/// Issue #38: every committed certificate's statement, rebuilt through the registry
/// from its spec (as `attncheck verify` rebuilds it), is the one the certificate
/// carries, text for text, and every obligation of it was built by a statement
/// builder (`Obligation::is_built`): the kernel decides the tree the claim built and
/// parses no text of it.
#[test]
fn every_committed_certificate_is_rebuilt_from_built_obligations() {
    use attncheck::certificate::Certificate;
    use attncheck::claims::rebuild::{rebuild_of, Rebuild};
    use attncheck::spec::SpecSource;
    let theorems = SpecSource::Dir(root().join("theorems"));
    let mut certs = crate::util::files_under(&root().join("reports"), ".cert.json");
    certs.sort();
    assert!(certs.len() >= 20, "{} committed certificates", certs.len());
    let mut problems = Vec::new();
    for path in &certs {
        let rel = path.strip_prefix(root()).unwrap().display().to_string();
        let text = std::fs::read_to_string(path).unwrap();
        let cert = attncheck::certificate::parse(path, &text).unwrap();
        assert!(
            matches!(rebuild_of(&cert.claim), Some(Rebuild::Spec(_))),
            "{rel}: `{}` is not rebuilt from a spec",
            cert.claim
        );
        let spec = attncheck::app::find_spec(&theorems, &cert.claim)
            .unwrap()
            .unwrap_or_else(|| panic!("{rel}: no spec for `{}`", cert.claim));
        let carried = attncheck::app::carried_data(path, &cert).unwrap();
        let st =
            attncheck::claims::statement_of_carrying(&spec, cert.profile, &cert.hints, &carried)
                .unwrap_or_else(|e| panic!("{rel}: {e}"))
                .unwrap_or_else(|| panic!("{rel}: `{}` has no statement", cert.claim));
        let expected = Certificate::of(&st, cert.profile, cert.precision, &cert.hints);
        if let Some(d) = cert.statement_difference(&expected) {
            problems.push(format!("{rel}: {d}"));
        }
        for o in st.obligations.iter().filter(|o| !o.is_built()) {
            problems.push(format!("{rel}: `{}` is text, not built", o.name));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
