//! attncheck: machine-checked verdicts for published theorems about self-attention.
//!
//! The pipeline (docs/design.md): a claim spec (`theorems/<paper>/<claim>.toml`) is
//! parsed and validated ([`spec`]); the claim's module ([`claims`]) builds
//! witnesses and records checks, deciding the certified ones with the trusted
//! [`kernel`] only; the verdict follows from the checks by one rule
//! ([`verdict::Verdict::from_checks`]); [`report`] writes Markdown, JSON and SVG;
//! certificates ([`certificate`]) can be re-checked by the kernel alone.
#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod app;
pub mod calc;
pub mod certificate;
pub mod claims;
pub mod coq;
pub mod dynamics;
pub mod escalate;
pub mod explain;
pub mod fast;
pub mod lemmas;
pub mod model_window;
/// The trusted kernel: the `attncheck-kernel` crate (crates/attncheck-kernel/README.md).
pub use attncheck_kernel as kernel;
pub mod outcome;
pub mod progress;
pub mod reading;
pub mod report;
pub mod rng;
pub mod sparse;
pub mod spec;
pub mod stdio;
pub mod verdict;
