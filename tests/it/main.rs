//! The one integration-test crate: claims, reports, CLI, Coq, verify. The kernel's own
//! conformance suite lives in the kernel crate (crates/attncheck-kernel/tests/conformance).
#![allow(dead_code)]
mod attn_window;
mod blocks;
mod bounded_input;
mod budget;
mod calc;
mod cli;
mod clusters_boolean;
mod clusters_dynamics;
mod clusters_explore;
mod clusters_polytope;
mod clusters_remark;
mod clusters_spectra;
mod clusters_tiered;
mod coq;
mod coq_boolean;
mod coq_helpers;
mod coq_hull;
mod coq_layer_prefix;
mod coq_soundness;
mod dynamics_dd;
mod dynamics_flow;
mod dynamics_small_flow;
mod escalate;
mod fast_softmax;
mod formulas;
mod fuzz;
mod house;
mod layer_dual;
mod model_window;
mod positional_alibi;
mod positional_sandwich;
mod positional_slopes;
mod practical;
mod reading;
mod registry;
mod report_html;
mod report_svg;
mod reports;
mod shards;
mod sparse_claims;
mod sparse_gram;
mod sparse_lemma;
mod spec_errors;
#[cfg(feature = "lm")]
mod trained_models;
#[cfg(feature = "lm")]
mod trained_models_attained;
mod trust;
mod tutorial;
mod usage;
mod util;
mod what_if;
// the `attn-weights` model helpers of the kernel's suite, shared with attn_window.rs
#[path = "../../crates/attncheck-kernel/tests/conformance/weights_model.rs"]
mod weights_model;
