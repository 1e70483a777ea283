//! A pilot training run for sizing the trained-model L_tr scan: trains the scan's model
//! (2 layers, hidden 64, 8 heads, ALiBi slopes 2^−1 … 2^−8) on the claim's corpus and prints
//! the validation loss every STEPS/20 steps (16384 scored bytes, as the spec's
//! `validation_bytes`, in windows of L_tr + 1 bytes), the quantity the
//! scan's convergence criterion reads, and the CPU seconds per step. Nothing else is measured.
//! `cargo run --release -p attncheck-lm --example scan_pilot -- L_TR BATCH STEPS WARMUP [LR]`

use attncheck_lm::corpus::{load, registry_dirs, Package};
use attncheck_lm::job::validation_loss;
use attncheck_lm::model::{Config, Model, Position};
use attncheck_lm::train::{train, TrainConfig};
use attncheck_lm::DType;
use std::sync::Arc;

/// The spec's `[profiles.full.scan] validation_bytes`.
const VALIDATION_BYTES: usize = 16384;

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
    let a: Vec<String> = std::env::args().skip(1).collect();
    let n = |i: usize| -> usize { a[i].parse().expect("integer") };
    let (l, batch, steps, warmup) = (n(0), n(1), n(2), n(3));
    let lr: f64 = a.get(4).map(|s| s.parse().expect("lr")).unwrap_or(3e-3);
    let packages: Vec<Package> = [
        ("serde", "1.0.229"),
        ("serde_json", "1.0.154"),
        ("rayon", "1.12.0"),
        ("rayon-core", "1.13.0"),
        ("clap_builder", "4.6.7"),
        ("anyhow", "1.0.105"),
        ("indexmap", "2.14.2"),
        ("toml_edit", "0.22.27"),
    ]
    .iter()
    .map(|(n, v)| Package {
        name: n.to_string(),
        version: v.to_string(),
    })
    .collect();
    let c = load(&packages, 10, &registry_dirs()).expect("corpus");
    attncheck_lm::configure();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    pool.install(|| {
        let cfg = Config {
            hidden: 64,
            layers: 2,
            heads: 8,
            position: Position::Bias(Arc::new(|h, r| -(r as f64) / (2u64 << h) as f64)),
            dtype: DType::F32,
        };
        let model = Model::new(cfg, 1).expect("model");
        let tc = TrainConfig {
            steps,
            batch,
            length: l,
            lr,
            warmup,
            clip: 1.0,
            weight_decay: 0.0,
            seed: 1 ^ 0x5EED_BA7C,
        };
        let block = (steps / 20).max(1);
        let t0 = cpu();
        let mut val_cpu = 0.0;
        train(&model, &c.train, &tc, &mut |step| {
            if (step + 1) % block == 0 {
                let t = cpu();
                let v = validation_loss(&model.frozen(), &c.val, l, VALIDATION_BYTES / l, 8192).expect("val");
                val_cpu += cpu() - t;
                println!("step {:>6}: validation loss {v:.4}", step + 1);
            }
        })
        .expect("train");
        let s = cpu() - t0 - val_cpu;
        println!(
            "L_tr {l} batch {batch}: {:.4} CPU-s per step, {:.1} µs per byte, {:.0} s training, {val_cpu:.0} s validation",
            s / steps as f64,
            1e6 * s / (steps * batch * l) as f64,
            s
        );
    });
}
