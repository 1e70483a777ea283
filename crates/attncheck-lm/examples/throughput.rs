//! Training throughput of the quick-profile model (bench/anchors/lm_train.py is the same
//! model in PyTorch). `cargo run --release -p attncheck-lm --example throughput -- [hidden layers length batch steps]`
//! prints wall steps/s and CPU time (user + sys) per step of the timed loop.
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
    let c = cpu_seconds();
    pool.install(|| train(&model, &data, &tc, &mut |_| {}))
        .expect("train");
    let s = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - c;
    println!(
        "candle 0.11.1 + attncheck-lm (1 worker): hidden {hidden}, layers {layers}, heads 8, length {length}, batch {batch}: {steps} steps in {s:.2} s = {:.2} steps/s, {:.0} tokens/s, CPU (user+sys) {:.1} ms/step ({} parameters)",
        steps as f64 / s,
        (steps * batch * length) as f64 / s,
        1000.0 * cpu / steps as f64,
        model.parameter_count()
    );
}

/// The process's CPU time (user + system) in seconds, from /proc/self/stat (clock ticks of
/// 1/100 s, Linux's USER_HZ); NaN where it cannot be read.
fn cpu_seconds() -> f64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
        return f64::NAN;
    };
    // fields after the parenthesised command name: state is field 3, utime 14, stime 15
    let rest = s.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| {
        f.get(i)
            .and_then(|x| x.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    (tick(11) + tick(12)) / 100.0
}
