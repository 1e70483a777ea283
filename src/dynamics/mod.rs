//! The particle system of self-attention dynamics (clusters.md §1–§2).
//!
//! Two objects, kept distinct:
//! - **(D)** the exact discrete map — a residual attention layer with tied weights,
//!   x^{k+1} = x^k + Δt Σ_j P_ij V x_j^k, and its rescaled form z^k = R^{−k} x^k with
//!   R = I + ΔtV — evaluated in outward-rounded intervals ([`discrete`]), so per-step
//!   invariants ([`observe`]) are certified;
//! - **(F)** the flow ẋ_i = Σ_j P_ij V x_j (or its rescaled form ż_i = Σ_j P_ij V(z_j − z_i)),
//!   integrated in MPFR point arithmetic ([`flow`]) or in double-double ([`ddflow`]) as the first
//!   rung of a ladder whose rungs confirm each other ([`tiered`]); only `supported` verdicts rest on it.
//!
//! [`model`] holds the exact system (Q, K, V as rationals) and the spec types that
//! describe matrices and initial tokens.

pub mod dd;
pub mod ddexpm;
pub mod ddflow;
pub mod ddmat;
pub mod discrete;
pub mod dot;
pub mod expm;
pub mod flow;
pub mod hull;
pub use crate::kernel::layer_data;
pub mod model;
pub mod observe;
pub mod plots;
pub mod spectrum;
pub mod tiered;
pub mod variants;
pub mod workloads;
