//! `attncheck._attncheck`: the Rust side of attncheck's Python module (docs/python.md).
//!
//! Each function does its work in [`work`] with the GIL released and behind
//! `catch_unwind`, and returns JSON text (or raises one of the exceptions of
//! `attncheck._errors`, carrying the message the command-line tool prints); the thin
//! Python layer (python/attncheck/__init__.py) turns the JSON into dicts, `Fraction`s
//! and report objects.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod formula;
pub mod work;

use crate::work::{Failure, Kind};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

/// Runs `f` without the GIL, and turns both its error and a panic into a Python
/// exception: nothing unwinds into the interpreter.
fn guarded<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    F: FnOnce() -> Result<T, Failure> + Send,
    T: Send,
{
    match py.detach(move || work::catching(f)) {
        Ok(v) => Ok(v),
        Err(fail) => Err(raise(py, &fail)),
    }
}

/// The exception of `attncheck._errors` for a failure.
fn raise(py: Python<'_>, f: &Failure) -> PyErr {
    let make = || -> PyResult<PyErr> {
        let errors = py.import("attncheck._errors")?;
        let class = errors.getattr(f.kind.class_name())?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("exit_code", f.exit_code)?;
        if let (Kind::Formula, Some(p)) = (f.kind, &f.position) {
            kwargs.set_item("offset", p.offset)?;
            kwargs.set_item("line", p.line)?;
            kwargs.set_item("column", p.column)?;
        }
        Ok(PyErr::from_value(
            class.call((f.message.clone(),), Some(&kwargs))?,
        ))
    };
    make().unwrap_or_else(|e| e)
}

/// `run(target, profile, theorems, out)`: see [`work::run`].
#[pyfunction]
#[pyo3(signature = (target, profile = "quick".to_string(), theorems = None, out = None))]
fn run(
    py: Python<'_>,
    target: String,
    profile: String,
    theorems: Option<PathBuf>,
    out: Option<PathBuf>,
) -> PyResult<String> {
    guarded(py, move || {
        work::run(&target, &profile, theorems, out.as_deref())
    })
}

/// `verify(path, coq, theorems, no_spec, target, …)`: see [`work::verify`].
#[pyfunction]
#[pyo3(signature = (path, coq = false, theorems = None, no_spec = false, target = None,
                    formula = None, coq_cpu_limit = None, coq_memory_limit = None, spec = None,
                    model = None, config = None))]
#[allow(clippy::too_many_arguments)]
fn verify(
    py: Python<'_>,
    path: PathBuf,
    coq: bool,
    theorems: Option<PathBuf>,
    no_spec: bool,
    target: Option<PathBuf>,
    formula: Option<String>,
    coq_cpu_limit: Option<u64>,
    coq_memory_limit: Option<u64>,
    spec: Option<PathBuf>,
    model: Option<PathBuf>,
    config: Option<PathBuf>,
) -> PyResult<String> {
    let mut limits = attncheck::coq::Limits::DEFAULT;
    if let Some(s) = coq_cpu_limit {
        limits.cpu_seconds = s;
    }
    if let Some(m) = coq_memory_limit {
        limits.memory_mib = m;
    }
    guarded(py, move || {
        work::verify(
            &path,
            coq,
            theorems,
            spec,
            no_spec,
            target.as_deref(),
            formula.as_deref(),
            model.as_deref().zip(config.as_deref()),
            &limits,
        )
    })
}

/// `window(model, config, epsilon, precision, out)`: see [`work::window`].
#[pyfunction]
#[pyo3(signature = (model, config, epsilon = "1/1000".to_string(), precision = 128, out = PathBuf::from("window")))]
fn window(
    py: Python<'_>,
    model: PathBuf,
    config: PathBuf,
    epsilon: String,
    precision: u32,
    out: PathBuf,
) -> PyResult<String> {
    guarded(py, move || {
        work::window(&model, &config, &epsilon, precision, &out)
    })
}

/// `eval(term, precision, max_precision, digits)`: see [`formula::evaluate`].
#[pyfunction]
#[pyo3(signature = (term, precision = 128, max_precision = 4096, digits = None))]
fn eval(
    py: Python<'_>,
    term: String,
    precision: u32,
    max_precision: u32,
    digits: Option<u32>,
) -> PyResult<String> {
    guarded(py, move || {
        formula::evaluate(&term, precision, max_precision, digits)
    })
}

/// `prove(formula, precision, max_precision)`: see [`formula::prove`].
#[pyfunction]
#[pyo3(signature = (formula, precision = 128, max_precision = 4096))]
fn prove(py: Python<'_>, formula: String, precision: u32, max_precision: u32) -> PyResult<String> {
    guarded(py, move || {
        formula::prove(&formula, precision, max_precision)
    })
}

/// `_panic_for_tests()`: panics inside the border, so that the tests can see a panic
/// become `attncheck.InternalError` instead of aborting the interpreter.
#[pyfunction]
fn _panic_for_tests(py: Python<'_>) -> PyResult<String> {
    guarded(py, || -> Result<String, Failure> {
        panic!("a deliberate panic (attncheck's tests)")
    })
}

/// The module.
#[pymodule]
fn _attncheck(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(eval, m)?)?;
    m.add_function(wrap_pyfunction!(prove, m)?)?;
    m.add_function(wrap_pyfunction!(window, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("TOOL", attncheck::report::tool())?;
    m.add("LM", cfg!(feature = "lm"))?;
    Ok(())
}
