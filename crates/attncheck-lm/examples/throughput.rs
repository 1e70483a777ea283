//! Training throughput of the quick-profile model (bench/anchors/lm_train.py is the same
//! model in PyTorch). `cargo run --release -p attncheck-lm --example throughput -- [hidden layers length batch steps]`
//!
//! The bias is all zeros: its values do not change the cost (it is one [H, L, L] tensor
//! added to the logits either way).

use attncheck_lm::model::{Config, Model, Position};
use attncheck_lm::train::{train, TrainConfig};
use attncheck_lm::DType;
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let a: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().expect("integer"))
        .collect();
    let arg = |i: usize, d: usize| a.get(i).copied().unwrap_or(d);
    let (hidden, layers, length, batch, steps) =
        (arg(0, 64), arg(1, 2), arg(2, 32), arg(3, 16), arg(4, 200));
    let cfg = Config {
        hidden,
        layers,
        heads: 8,
        position: Position::Bias(Arc::new(|_, _| 0.0)),
        dtype: DType::F32,
    };
    let model = Model::new(cfg, 1).expect("model");
    let mut rng = attncheck_lm::SplitMix64(7);
    let data: Vec<u8> = (0..1 << 20).map(|_| (rng.below(96) + 32) as u8).collect();
    let tc = TrainConfig {
        steps,
        batch,
        length,
        lr: 1e-3,
        warmup: 10,
        clip: 1.0,
        weight_decay: 0.0,
        seed: 3,
    };
    // warm-up run, then the timed one
    let warm = TrainConfig {
        steps: 5,
        ..tc.clone()
    };
    train(&model, &data, &warm, &mut |_| {}).expect("train");
    // one worker: candle's kernels run in the current rayon pool
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let t = Instant::now();
    pool.install(|| train(&model, &data, &tc, &mut |_| {}))
        .expect("train");
    let s = t.elapsed().as_secs_f64();
    println!(
        "candle 0.11.1 (1 worker): hidden {hidden}, layers {layers}, heads 8, length {length}, batch {batch}: {steps} steps in {s:.2} s = {:.1} steps/s, {:.0} tokens/s ({} parameters)",
        steps as f64 / s,
        (steps * batch * length) as f64 / s,
        model.parameter_count()
    );
}
