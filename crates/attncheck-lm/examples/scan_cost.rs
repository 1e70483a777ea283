//! What one job of the trained-model L_tr scan costs, by phase, to size the scan's steps and
//! batches (theorems/positional/trained-model-claims.toml, `[profiles.full]`):
//! `cargo run --release -p attncheck-lm --example scan_cost -- L_TR BATCH STEPS [MULTIPLES…]`
//! prints the CPU seconds per training step and, at each L_ex = m·L_tr, the seconds of the
//! sliding-window perplexity (stride L_tr/2, 8192 scored bytes) and of the receptive field
//! (64 sequences). One thread; the data are seeded random bytes (the cost does not depend on
//! them); the model is the scan's (2 layers, hidden 64, 8 heads) with a zero bias.

use attncheck_lm::eval::{normalised_gradients, sliding_nll, Sliding};
use attncheck_lm::model::{Config, Inference, Model, Position};
use attncheck_lm::train::{train, TrainConfig};
use attncheck_lm::DType;
use std::sync::Arc;

/// CPU seconds of this process so far (user + system): the cost, whatever else the
/// machine runs.
fn cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn main() {
    let a: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().expect("integer"))
        .collect();
    let (l, batch, steps) = (a[0], a[1], a[2]);
    let multiples: Vec<usize> = if a.len() > 3 {
        a[3..].to_vec()
    } else {
        vec![1, 2, 4, 8]
    };
    let hidden: usize = std::env::var("HIDDEN")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    let window: Option<usize> = std::env::var("WINDOW").ok().and_then(|s| s.parse().ok());
    attncheck_lm::configure();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    pool.install(|| {
        let cfg = Config {
            hidden,
            layers: 2,
            heads: 8,
            position: match window {
                Some(w) => Position::Window(w - 1),
                None => Position::Bias(Arc::new(|h, r| -(r as f64) / (2u64 << h) as f64)),
            },
            dtype: DType::F32,
        };
        let model = Model::new(cfg, 1).expect("model");
        let mut rng = attncheck_lm::SplitMix64(7);
        let data: Vec<u8> = (0..1 << 22).map(|_| (rng.below(96) + 32) as u8).collect();
        let val: Vec<u8> = (0..230_000).map(|_| (rng.below(96) + 32) as u8).collect();
        let tc = TrainConfig {
            steps,
            batch,
            length: l,
            lr: 1e-3,
            warmup: 1,
            clip: 1.0,
            weight_decay: 0.0,
            seed: 3,
        };
        let t = cpu();
        train(&model, &data, &tc, &mut |_| {}).expect("train");
        let s = cpu() - t;
        println!(
            "L_tr {l} batch {batch}: {:.4} s per training step ({steps} steps), {:.1} µs per training byte",
            s / steps as f64,
            1e6 * s / (steps * batch * l) as f64
        );
        let frozen = model.frozen();
        let max = l * multiples.iter().max().copied().unwrap_or(1);
        let sl = Sliding {
            stride: l / 2,
            max_length: max,
            targets: 8192,
        };
        for &m in &multiples {
            let t = cpu();
            sliding_nll(&frozen, &val, m * l, sl, Inference::default(), 8192).expect("nll");
            let p = cpu() - t;
            let t = cpu();
            normalised_gradients(&frozen, &val, m * l, 64, 8192).expect("rf");
            let g = cpu() - t;
            println!("  L_ex {}: perplexity {p:.1} s, receptive field (64 sequences) {g:.1} s", m * l);
        }
    });
}
