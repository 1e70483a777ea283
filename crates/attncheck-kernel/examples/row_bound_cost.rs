//! CPU cost of `attn-row-logit-range`'s exact quantities (bounds 5 and 6 of
//! `attncheck_kernel::weights`, computed on first use for every layer and head) on the
//! trained models a certificate carries, one datum at a time, one thread:
//!
//!     cargo run --release -p attncheck-kernel --example row_bound_cost -- \
//!         reports/full/positional/trained-model-claims.cert.json
//!
//! Prints, per datum, the CPU seconds of reading it and of the first row-range evaluation,
//! and the eight layer-1 bounds. A measurement, not a test: it decides nothing.

use attncheck_kernel::weights::{AttnWeights, InputHex, LayerHex, PARTS};
use rug::Rational;
use std::time::Instant;

fn cpu() -> f64 {
    // the process's CPU time (user + system), from /proc/self/stat (clock ticks of 1/100 s)
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let f: Vec<&str> = s
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let t = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (t(11) + t(12)) / 100.0
}

fn main() {
    let path = std::env::args().nth(1).expect("a certificate path");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for (name, e) in v["data"].as_object().unwrap() {
        if e["kind"] != "attn-weights" {
            continue;
        }
        let layers: Vec<LayerHex> = e["layers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| std::array::from_fn(|i| l[PARTS[i]].as_str().unwrap().to_string()))
            .collect();
        let input = e["embedding"].as_str().map(|emb| InputHex {
            ln_eps: e["ln_eps"].as_str().unwrap().to_string(),
            embedding: emb.to_string(),
        });
        let (c0, w0) = (cpu(), Instant::now());
        let w = AttnWeights::new(
            e["hidden"].as_u64().unwrap() as usize,
            e["heads"].as_u64().unwrap() as usize,
            e["sha256"].as_str().unwrap(),
            layers,
            input,
        )
        .unwrap();
        let (c1, w1) = (cpu(), Instant::now());
        let first = w
            .row_logit_range(128, &Rational::from(1), &Rational::from(0))
            .unwrap();
        let (c2, w2) = (cpu(), Instant::now());
        let rest: Vec<String> = (0..w.heads())
            .map(|h| {
                let r = w
                    .row_logit_range(128, &Rational::from(1), &Rational::from(h))
                    .unwrap();
                format!("{:.2}", r.hi_f64())
            })
            .collect();
        println!(
            "{name}: read {:.2} CPU-s ({:.2} s wall); row sums, every layer and head {:.2} CPU-s ({:.2} s wall); layer 1: {} (head 0 {:.4})",
            c1 - c0,
            (w1 - w0).as_secs_f64(),
            c2 - c1,
            (w2 - w1).as_secs_f64(),
            rest.join(" "),
            first.hi_f64()
        );
    }
}
