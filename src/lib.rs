//! attncheck: machine-checked verdicts for published theorems about self-attention.
#![forbid(unsafe_code)]
pub mod kernel;
