//! Claims of Geshkovski, Letrouit, Polyanskiy, Rigollet, "The emergence of clusters
//! in self-attention dynamics" (clusters.md). Each module owns one claim ID, except the
//! shared `common` and `largest_flow` (a run that clusters/codim-conjecture hosts).
pub mod boolean_limit;
pub mod codim_conjecture;
pub mod collapse;
pub mod common;
pub mod growth_bound;
pub mod higher_dim_remark;
pub mod hyperplanes;
pub mod largest_flow;
pub mod open_problems;
pub mod paranormal;
pub mod paranormal_proof_gap;
pub mod polytope;
pub mod rescaling;
pub mod stability;
