//! Times certified softmax of one row of n logits at 128 bits, for the
//! side-by-side comparison in `bench/anchors/run_softmax.sh`; prints JSON.
//!
//! The row is `z_j = ((j·2654435761) mod 2^32)/2^28 − 8`: dyadic, so every tool
//! reads the same exact numbers. Usage: `softmax_bench [n] [reps] [--no-mpfr]`.

use attncheck::kernel::{softmax, softmax_fast, Interval};
use rug::Float;
use std::time::Instant;

const PREC: u32 = 128;

fn row(n: usize) -> Vec<Interval> {
    (0..n as u64)
        .map(|j| {
            let m = (j * 2_654_435_761) % (1 << 32);
            let z: Float = Float::with_val(PREC, m) / (1u64 << 28) - 8;
            Interval::from_endpoints(z.clone(), z)
        })
        .collect()
}

/// The best of `reps` wall-clock times, in seconds (the least disturbed run).
fn best_of(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (n, reps) = (num(0, 65_536), num(1, 7));
    let z = row(n);
    let fast = best_of(reps, || {
        std::hint::black_box(softmax_fast(&z, PREC));
    });
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("thread pool");
    let fast1 = best_of(reps, || {
        one_thread.install(|| std::hint::black_box(softmax_fast(&z, PREC)));
    });
    let mpfr = if args.iter().any(|a| a == "--no-mpfr") {
        f64::NAN
    } else {
        best_of(reps.min(3), || {
            std::hint::black_box(softmax(&z));
        })
    };
    let rate = |t: f64| if t.is_finite() { n as f64 / t } else { 0.0 };
    println!(
        "{{\"n\": {n}, \"prec\": {PREC}, \"threads\": {}, \"fast_entries_per_s\": {:.0}, \
         \"fast_1thread_entries_per_s\": {:.0}, \"mpfr_entries_per_s\": {:.0}}}",
        rayon::current_num_threads(),
        rate(fast),
        rate(fast1),
        rate(mpfr)
    );
}
