//! The one integration-test crate: kernel properties, claims, reports, CLI.
#![allow(dead_code)]
mod bounded_input;
mod cli;
mod clusters_boolean;
mod clusters_dynamics;
mod clusters_explore;
mod clusters_polytope;
mod clusters_remark;
mod clusters_spectra;
mod coq;
mod coq_soundness;
mod dynamics_flow;
mod fast_softmax;
mod fuzz;
mod kernel;
mod kernel_arith;
mod kernel_compare;
mod kernel_domain;
mod kernel_elementary;
mod kernel_softmax;
mod positional_alibi;
mod positional_sandwich;
mod positional_slopes;
mod practical;
mod registry;
mod report_svg;
mod reports;
mod shards;
mod sparse_claims;
mod sparse_gram;
mod sparse_lemma;
mod spec_errors;
#[cfg(feature = "lm")]
mod trained_models;
mod trust;
mod usage;
mod util;
