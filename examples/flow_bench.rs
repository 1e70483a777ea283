//! Times the anchor workload of bench/anchors/run_dynamics.sh: n = 20 tokens in
//! d = 2 (`dynamics::workloads::grid_tokens_2d`), Q = K = V = I, RK4 in z with
//! Δt = 1/10 to T = 5 at 128 bits (P recomputed at every stage). Prints one JSON
//! line: best and median wall time over `reps` runs on the current rayon pool and on
//! a 1-thread pool, and the final z (20 significant digits) for the anchor script
//! to compare with mpmath.
//!
//! Usage: `flow_bench [reps] [prec]`.

use attncheck::dynamics::flow::{rk4, FlowOptions, FlowResult, Vars};
use attncheck::dynamics::workloads::{grid_tokens_2d, identity_system};
use rug::Rational;
use std::time::Instant;

fn times(reps: usize, mut f: impl FnMut() -> FlowResult) -> (f64, f64, FlowResult) {
    let mut last = None;
    let mut t: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let t = Instant::now();
            last = Some(f());
            t.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[0], t[t.len() / 2], last.expect("at least one run"))
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let reps: usize = a.first().map_or(9, |s| s.parse().expect("reps"));
    let prec: u32 = a.get(1).map_or(128, |s| s.parse().expect("prec"));
    let sys = identity_system(2);
    let z0 = grid_tokens_2d(20);
    let (t_end, h) = (Rational::from(5), Rational::from((1, 10)));
    let opts = FlowOptions::new(prec, Vars::Z);
    let run = || rk4(&sys, &z0, &t_end, &h, &opts, |_| {}).expect("flow");
    let (best, median, res) = times(reps, run);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let (best1, median1, _) = times(reps, || one.install(run));
    let z: Vec<String> = res
        .state
        .iter()
        .map(|x| format!("\"{}\"", x.to_string_radix(10, Some(45))))
        .collect();
    println!(
        "{{\"workload\": \"n20_d2_T5\", \"prec\": {prec}, \"threads\": {}, \"reps\": {reps}, \
         \"best_s\": {best:.6}, \"median_s\": {median:.6}, \"best_1thread_s\": {best1:.6}, \
         \"median_1thread_s\": {median1:.6}, \"rhs_evals\": {}, \"z\": [{}]}}",
        rayon::current_num_threads(),
        res.rhs_evals,
        z.join(", ")
    );
}
