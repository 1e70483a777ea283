//! The kernel's conformance suite, run by `cargo test -p attncheck-kernel`: every
//! operation of the crate through its public API, against exact rationals, MPFR at
//! higher precision, naive definitions and reference values (the README's conformance
//! table names each test). One test binary, so that the crate's tests link once.
#![allow(dead_code)]
mod arith;
mod band;
mod blocks;
mod budget;
mod certainty;
mod certificate;
mod common;
mod compare;
mod domain;
mod elementary;
mod ellipsoid;
mod f64tier;
mod grammar;
mod interval_api;
mod itf1788;
mod layer;
mod layer_dual;
mod layer_reductions;
mod lemma;
mod literals;
mod mat;
mod regressions;
mod signs;
mod softmax;
mod softmax64;
mod statement;
mod terms;
mod tiers;
mod weights;
mod weights_model;
