//! Claims of Chi, Fan, Rudnicky, Ramadge, "Receptive Field Alignment Enables
//! Transformer Length Extrapolation" (arXiv:2212.10356), with the ALiBi and
//! KERPLE facts it relies on. Shared formulas live in [`common`].

pub mod alibi_slopes;
pub mod alibi_tail_bound;
pub mod alibi_window;
pub mod common;
pub mod length_usage;
pub mod sandwich_head_power_law;
pub mod sandwich_identity;
pub mod sandwich_log_decay;
pub mod shift_invariance;
pub mod toy_receptive_field;
pub mod trained_model_claims;
pub mod windowed_receptive_field;
