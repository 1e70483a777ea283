#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub mod certificate;
mod compare;
mod elementary;
pub mod ellipsoid;
mod exact;
mod exp_near;
pub mod expr;
pub mod f64iv;
mod format;
mod interval;
pub mod layer_data;
pub mod layer_dual;
pub mod layer_map;
mod mat;
mod signs;
mod softmax;
pub mod softmax64;
pub mod statement;
pub mod weights;

pub use compare::Certainty;
pub use exact::{
    abbreviate_literal, check_literal_size, literal_digits, parse_rational, ParseRationalError,
    MAX_LITERAL_DIGITS,
};
pub use expr::Tiers;
pub use f64iv::F64Iv;
pub use interval::{checked_prec, Interval};
pub use mat::Mat;
#[cfg(target_arch = "x86_64")]
pub use signs::V4Popcnt;
pub use signs::{GramBuild, GramScan, SignMatrix};
pub use softmax::{dot, log_sum_exp, mat_vec, softmax, softmax_into};
pub use softmax64::{softmax_f64, softmax_f64_into};
pub use statement::{check, check_with, Checked, Decision, Expect, Obligation, Statement};
