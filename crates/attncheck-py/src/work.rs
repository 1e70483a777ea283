//! The binding's work, without Python: each function returns JSON text for the Python
//! layer, or a [`Failure`] naming the exception to raise. Tested without an interpreter
//! (tests at the end of this file).

use attncheck::app;
use attncheck::progress::Progress;
use attncheck::spec::{Profile, Spec, SpecSource};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Which exception of `attncheck._errors` a failure raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `BadInput` (exit 2).
    BadInput,
    /// `FormulaError` (exit 2), with the position.
    Formula,
    /// `CertificateRejected` (exit 4).
    Rejected,
    /// `CoqNotFound` (exit 2).
    CoqNotFound,
    /// `InternalError`: a panic, stopped at the border.
    Internal,
}

impl Kind {
    /// The exception class's name in `attncheck._errors`.
    pub fn class_name(self) -> &'static str {
        match self {
            Kind::BadInput => "BadInput",
            Kind::Formula => "FormulaError",
            Kind::Rejected => "CertificateRejected",
            Kind::CoqNotFound => "CoqNotFound",
            Kind::Internal => "InternalError",
        }
    }
}

/// Where in a formula an error is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    /// Byte offset.
    pub offset: usize,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
}

/// An error on its way to Python.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The exception.
    pub kind: Kind,
    /// The message, as the command-line tool prints it after `attncheck: error: `.
    pub message: String,
    /// The command-line tool's exit code for it.
    pub exit_code: u8,
    /// For a formula error: where.
    pub position: Option<Position>,
}

impl Failure {
    fn bad_input(message: impl Into<String>) -> Failure {
        Failure {
            kind: Kind::BadInput,
            message: message.into(),
            exit_code: 2,
            position: None,
        }
    }
}

impl From<app::Error> for Failure {
    fn from(e: app::Error) -> Failure {
        Failure {
            kind: if e.exit_code() == 4 {
                Kind::Rejected
            } else {
                Kind::BadInput
            },
            message: e.to_string(),
            exit_code: e.exit_code(),
            position: None,
        }
    }
}

/// Runs `f`; a panic inside it becomes a [`Kind::Internal`] failure instead of
/// unwinding further (into Python, where it would end the interpreter's call with a
/// `PanicException`, or abort it).
pub fn catching<T>(f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            Err(Failure {
                kind: Kind::Internal,
                message: format!("internal error (a bug in attncheck; please report it): {what}"),
                exit_code: 101,
                position: None,
            })
        }
    }
}

fn profile_of(name: &str) -> Result<Profile, Failure> {
    match name {
        "quick" => Ok(Profile::Quick),
        "full" => Ok(Profile::Full),
        other => Err(Failure::bad_input(format!(
            "unknown profile `{other}`: quick or full"
        ))),
    }
}

/// `attncheck.run`: runs a claim (an ID such as `positional/alibi-window`), every claim
/// of a paper (`positional`), or the spec file at a path ending in `.toml`
/// (wherever it sits; a claim written as formulas, `docs/your-own-claims.md`), as `attncheck run` does, and returns
/// `{"profile", "claims": [{"report", "unexpected", "markdown", "certificate",
/// "files"}], "exit_code"}`: `report` is the report JSON the CLI writes
/// (reports/<paper>/<claim>.json), `certificate` the certificate's JSON (or null).
/// Nothing is written unless `out` is given; then the reports go there as with
/// `attncheck run --out`.
pub fn run(
    target: &str,
    profile: &str,
    theorems: Option<PathBuf>,
    out: Option<&Path>,
) -> Result<String, Failure> {
    let profile = profile_of(profile)?;
    let specs: Vec<Spec> = if target.ends_with(".toml") {
        // a spec file wherever it sits: a claim of the user's own (written as formulas)
        // or a copy of one of the thirty, as `attncheck run FILE.toml`
        vec![app::load_spec_file(Path::new(target))?]
    } else {
        let all = app::load_specs_from(&SpecSource::choose(theorems))?;
        app::select(&all, &[target.to_string()], false)?
            .into_iter()
            .cloned()
            .collect()
    };
    let chosen: Vec<&Spec> = specs.iter().collect();
    let runs = app::run_claims(&chosen, profile, &Progress::hidden())?;
    if let Some(out) = out {
        app::write_reports(out, &runs)?;
    }
    let mut code = 0;
    let claims: Vec<Value> = runs
        .iter()
        .map(|r| {
            if !r.report.as_expected {
                code = 1;
            }
            let files = out.map(|o| {
                let dir = o.join(&r.report.paper);
                let name = r.report.stem();
                json!({
                    "report": dir.join(format!("{name}.md")),
                    "json": dir.join(format!("{name}.json")),
                    "certificate": r.certificate.as_ref().map(|(f, _)| dir.join(f)),
                })
            });
            json!({
                "report": serde_json::to_value(&r.report).unwrap_or(Value::Null),
                "unexpected": r.report.unexpected(),
                "markdown": r.markdown,
                "certificate": r.certificate.as_ref()
                    .and_then(|(_, t)| serde_json::from_str::<Value>(t).ok()),
                "files": files,
            })
        })
        .collect();
    Ok(json!({"profile": profile, "claims": claims, "exit_code": code}).to_string())
}

/// `attncheck.window`: the document of `attncheck window --json` with its `exit_code`
/// (0; 3 when an obligation is not decided at the precision: then nothing is written and
/// `undecided` names them), the files written to `out`.
pub fn window(
    model: &Path,
    config: &Path,
    epsilon: &str,
    precision: u32,
    out: &Path,
) -> Result<String, Failure> {
    let r = app::window(model, config, epsilon, precision, out)?;
    let mut doc = r.doc;
    let undecided = &r.windows.undecided;
    doc["exit_code"] = json!(if undecided.is_empty() { 0 } else { 3 });
    doc["undecided"] = json!(undecided);
    doc["files"] = if undecided.is_empty() {
        json!({"windows": r.doc_path, "certificate": r.cert_path})
    } else {
        Value::Null
    };
    Ok(doc.to_string())
}

/// `attncheck.verify`: the document of `attncheck verify --json` (`target` and `formula`
/// as `--target` and `--formula`) (with `coq`, of
/// `verify --coq --json`). A rejected certificate is a [`Kind::Rejected`] failure (the
/// CLI's exit 4); a disproven or undecided one is a result (`exit_code` 1 or 3).
#[allow(clippy::too_many_arguments)]
pub fn verify(
    path: &Path,
    coq: bool,
    theorems: Option<PathBuf>,
    spec: Option<PathBuf>,
    no_spec: bool,
    target: Option<&Path>,
    formula: Option<&str>,
    model: Option<(&Path, &Path)>,
    limits: &attncheck::coq::Limits,
) -> Result<String, Failure> {
    let source = SpecSource::file_or(spec, theorems);
    // the model is read and checked first: bad input, not a rejection
    let model = match model {
        Some((m, c)) => {
            Some(attncheck::model_window::ModelInput::read(m, c).map_err(app::Error::from)?)
        }
        None => None,
    };
    let inputs = attncheck::claims::rebuild::Inputs {
        target,
        formula,
        model: model.as_ref(),
    };
    let v = app::verify_inputs(path, (!no_spec).then_some(&source), &inputs)?;
    let doc = if coq {
        match app::verify_coq(&v, limits) {
            Ok(r) => app::verify_coq_json(&v, &r),
            Err(e @ attncheck::coq::CoqError::NotInstalled { .. }) => {
                return Err(Failure {
                    kind: Kind::CoqNotFound,
                    message: e.to_string(),
                    exit_code: 2,
                    position: None,
                })
            }
            Err(e) => return Err(Failure::bad_input(e.to_string())),
        }
    } else {
        app::verify_json(&v)
    };
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_internal_failure() {
        let r: Result<(), Failure> = catching(|| panic!("boom {}", 1));
        let f = r.unwrap_err();
        assert_eq!(f.kind, Kind::Internal);
        assert!(f.message.contains("boom 1"), "{}", f.message);
    }

    #[test]
    fn an_unknown_profile_is_bad_input() {
        let f = run("positional/alibi-window", "fast", None, None).unwrap_err();
        assert_eq!((f.kind, f.exit_code), (Kind::BadInput, 2));
        assert!(f.message.contains("unknown profile `fast`"));
    }

    #[test]
    fn a_rejected_certificate_keeps_exit_4() {
        let e = app::Error::Rejected {
            path: "x.cert.json".into(),
            reason: "changed".into(),
        };
        let f = Failure::from(e);
        assert_eq!((f.kind, f.exit_code), (Kind::Rejected, 4));
        assert_eq!(f.message, "x.cert.json: rejected: changed");
    }
}
