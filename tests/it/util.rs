//! Shared helpers for the integration tests: run a claim from its committed spec
//! (cached per process, so several tests can inspect one run), or from edited
//! spec text (to show that a check fails when it should).

use attncheck::app::{self, ClaimRun};
use attncheck::progress::Progress;
use attncheck::spec::{Profile, Spec};
use attncheck::verdict::Verdict;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The crate root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file below `dir` (recursively) whose name ends with `suffix`, sorted.
pub fn files_under(dir: &std::path::Path, suffix: &str) -> Vec<PathBuf> {
    fn walk(dir: &std::path::Path, suffix: &str, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, suffix, out);
            } else if p.to_string_lossy().ends_with(suffix) {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, suffix, &mut out);
    out.sort();
    out
}

/// The path of a claim's committed spec.
pub fn spec_path(id: &str) -> PathBuf {
    root().join("theorems").join(format!("{id}.toml"))
}

/// The committed spec text of a claim.
pub fn spec_text(id: &str) -> String {
    std::fs::read_to_string(spec_path(id)).unwrap_or_else(|e| panic!("{id}: {e}"))
}

/// Runs a spec given as text (parsed as if it were the claim's file).
pub fn run_text(id: &str, text: &str, profile: Profile) -> ClaimRun {
    let spec = Spec::parse(&spec_path(id), text).unwrap_or_else(|e| panic!("{e}"));
    let runs =
        app::run_claims(&[&spec], profile, &Progress::hidden()).unwrap_or_else(|e| panic!("{e}"));
    runs.into_iter().next().expect("one run")
}

/// Runs the committed spec in the quick profile, once per test process.
pub fn run_quick(id: &str) -> Arc<ClaimRun> {
    type Slot = Arc<OnceLock<Arc<ClaimRun>>>;
    static CACHE: OnceLock<Mutex<HashMap<String, Slot>>> = OnceLock::new();
    let slot = {
        let mut m = CACHE.get_or_init(Default::default).lock().unwrap();
        m.entry(id.to_string()).or_default().clone()
    };
    slot.get_or_init(|| Arc::new(run_text(id, &spec_text(id), Profile::Quick)))
        .clone()
}

/// Replaces exactly one occurrence of `from` by `to` in the claim's spec text
/// and runs it (panics if `from` does not occur exactly once).
pub fn run_edited(id: &str, from: &str, to: &str) -> ClaimRun {
    let text = spec_text(id);
    assert_eq!(
        text.matches(from).count(),
        1,
        "`{from}` must occur once in {id}'s spec"
    );
    run_text(id, &text.replacen(from, to, 1), Profile::Quick)
}

/// The verdict of a run.
pub fn verdict(run: &ClaimRun) -> Verdict {
    run.report.verdict
}

/// The first check whose name contains `needle`.
pub fn check<'a>(run: &'a ClaimRun, needle: &str) -> &'a attncheck::verdict::Check {
    run.report
        .checks
        .iter()
        .find(|c| c.name.contains(needle))
        .unwrap_or_else(|| panic!("{}: no check named like {needle:?}", run.report.id))
}

/// The value of a named key figure.
pub fn figure(run: &ClaimRun, name: &str) -> f64 {
    run.report
        .figures
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("{}: no figure `{name}`", run.report.id))
        .value
}

/// Finds a table cell: the row whose first cell equals `row`, column `col`.
pub fn cell<'a>(run: &'a ClaimRun, table_prefix: &str, row: &str, col: &str) -> &'a str {
    let t = run
        .report
        .tables
        .iter()
        .find(|t| t.title.starts_with(table_prefix))
        .unwrap_or_else(|| panic!("no table starting with `{table_prefix}`"));
    let c = t
        .columns
        .iter()
        .position(|c| c == col)
        .unwrap_or_else(|| panic!("no column `{col}`"));
    let r = t
        .rows
        .iter()
        .find(|r| r[0] == row)
        .unwrap_or_else(|| panic!("no row `{row}`"));
    &r[c]
}

/// Whether a path exists relative to the crate root.
pub fn exists(p: &str) -> bool {
    Path::new(&root()).join(p).exists()
}

/// The error message of preparing a claim's spec given as text: a parse error
/// or a parameter error (panics if the spec is accepted).
pub fn prepare_err(id: &str, text: &str) -> String {
    let spec = match Spec::parse(&spec_path(id), text) {
        Ok(s) => s,
        Err(e) => return e.to_string(),
    };
    match (attncheck::claims::find(id).unwrap().prepare)(&spec, Profile::Quick) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// [`prepare_err`] on the committed spec with exactly one occurrence of `from`
/// replaced by `to`.
pub fn edited_err(id: &str, from: &str, to: &str) -> String {
    let text = spec_text(id);
    assert_eq!(
        text.matches(from).count(),
        1,
        "`{from}` must occur once in {id}'s spec"
    );
    prepare_err(id, &text.replacen(from, to, 1))
}

/// The 1-based line of the first line of `text` containing `needle`.
pub fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle")
        + 1
}

/// The `attncheck` binary built for these tests.
pub fn bin() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_attncheck"))
}

/// Runs the binary in `dir` with `args`.
pub fn run_in(dir: &Path, args: &[&str]) -> std::process::Output {
    bin().current_dir(dir).args(args).output().unwrap()
}

/// Everything a command printed: stdout, then stderr.
pub fn output_text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A scratch project holding the committed specs of `ids` under `<tmp>/theorems`.
/// Keep to fast claims: every `run --all` in it runs them all (it once held
/// trained-model-claims, which trains eight models per run).
pub fn project(ids: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for id in ids {
        let to = dir.path().join("theorems").join(format!("{id}.toml"));
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(spec_path(id), to).unwrap();
    }
    dir
}

/// All files below `dir`, as paths relative to it, sorted.
pub fn files_below(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// positional/trained-model-claims' full profile (the scan), resolved from the spec file.
pub fn trained_model_claims_full() -> attncheck::claims::positional::trained_model_claims::Resolved
{
    use attncheck::claims::positional::trained_model_claims as tmc;
    let spec =
        attncheck::claims::load_spec(&root().join("theorems/positional/trained-model-claims.toml"))
            .unwrap();
    attncheck::claims::shape::resolve::<tmc::Claim>(&spec, Profile::Full).unwrap()
}

/// The decompressed bytes of a `.gz` file (the stored shards), by the system's `gunzip`.
pub fn gunzip(path: &Path) -> Vec<u8> {
    let o = std::process::Command::new("gunzip")
        .arg("-c")
        .arg(path)
        .output()
        .expect("gunzip (gzip) is installed");
    assert!(
        o.status.success(),
        "gunzip {}: {}",
        path.display(),
        output_text(&o)
    );
    o.stdout
}
