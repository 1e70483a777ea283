//! The authors' largest run made exact (`dynamics::workloads::cupy_workload`):
//! n = d = 128, QᵀK = I, V symmetric sparse, z0 ~ U[−1/2, 1/2] dyadic, RK4 in z with
//! Δt = 1/10 to T = 15 at 128 bits (P recomputed at every stage). Prints one JSON
//! line: wall time, steps, max|z(T)|, max|x(T)| (timed by bench/anchors/run_dynamics.sh).
//!
//! Usage: `flow_cupy [prec] [T as p/q] [h as p/q] [n] [d] [--dd] [--reps R] [--state FILE] [--dump DIR]`.
//! With `--reps R` the run is repeated R times: `wall_s` is the best, `median_s` the median.
//! `--dd` runs the double-double tier (`dynamics::ddflow`, ≈ 106 bits; `prec` is then
//! ignored and printed as 106, with `"tier": "dd"`). With
//! `--dump DIR` it writes DIR/v.txt and DIR/z0.txt (exact fractions) for the numpy
//! anchor and exits. With `--state FILE` it also writes z(T) (one coordinate per line,
//! 40 significant digits) for element-wise comparisons between runs.

use attncheck::dynamics::ddflow::DdFlow;
use attncheck::dynamics::flow::{rk4, FlowOptions, Vars};
use attncheck::dynamics::workloads::{cupy_workload, dump_mat};
use rug::{Float, Rational};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dump = args
        .iter()
        .position(|a| a == "--dump")
        .map(|k| args[k + 1].clone());
    let state_file = args
        .iter()
        .position(|a| a == "--state")
        .map(|k| args[k + 1].clone());
    let pos: Vec<&String> = args.iter().take_while(|a| !a.starts_with("--")).collect();
    let dd = args.iter().any(|a| a == "--dd");
    let prec: u32 = pos.first().map_or(128, |s| s.parse().expect("prec"));
    let t_end: Rational = pos
        .get(1)
        .map_or(Rational::from(15), |s| s.parse().expect("T"));
    let h: Rational = pos
        .get(2)
        .map_or(Rational::from((1, 10)), |s| s.parse().expect("h"));
    let n: usize = pos.get(3).map_or(128, |s| s.parse().expect("n"));
    let d: usize = pos.get(4).map_or(128, |s| s.parse().expect("d"));
    let (sys, z0) = cupy_workload(n, d, 2023);
    if let Some(dir) = dump {
        std::fs::create_dir_all(&dir).expect("dump dir");
        std::fs::write(format!("{dir}/v.txt"), dump_mat(&sys.v)).expect("write v");
        std::fs::write(format!("{dir}/z0.txt"), dump_mat(&z0)).expect("write z0");
        return;
    }
    let reps: usize = args
        .iter()
        .position(|a| a == "--reps")
        .map_or(1, |k| args[k + 1].parse().expect("reps"));
    let opts = FlowOptions::new(prec, Vars::Z);
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..reps.max(1) {
        let t0 = Instant::now();
        let res = if dd {
            DdFlow::new(&sys, opts.clone()).rk4_end(&z0, &t_end, &h)
        } else {
            rk4(&sys, &z0, &t_end, &h, &opts, |_| {})
        }
        .expect("flow");
        times.push(t0.elapsed().as_secs_f64());
        if let Some(prev) = &last {
            let prev: &attncheck::dynamics::flow::FlowResult = prev;
            assert_eq!(prev.state, res.state, "repeated runs differ");
        }
        last = Some(res);
    }
    let res = last.expect("one run");
    times.sort_by(f64::total_cmp);
    let (wall, median) = (times[0], times[times.len() / 2]);
    let prec = res.prec;
    let tier = if dd { "dd" } else { "mpfr" };
    let max_abs = |v: &[Float]| {
        v.iter()
            .map(|x| Float::with_val(prec, x.abs_ref()))
            .fold(Float::new(prec), |a, b| if b > a { b } else { a })
    };
    let mz = max_abs(&res.state);
    let mx = max_abs(&res.x());
    if let Some(f) = state_file {
        let lines: Vec<String> = res
            .state
            .iter()
            .map(|x| x.to_string_radix(10, Some(40)))
            .collect();
        std::fs::write(&f, lines.join("\n") + "\n").expect("write state");
    }
    println!(
        "{{\"tier\": \"{tier}\", \"n\": {n}, \"d\": {d}, \"prec\": {prec}, \"T\": \"{t_end}\", \"h\": \"{h}\", \"threads\": {}, \
         \"steps\": {}, \"rhs_evals\": {}, \"wall_s\": {wall:.3}, \"median_s\": {median:.3}, \"reps\": {}, \"max_abs_z\": \"{}\", \"max_abs_x\": \"{}\"}}",
        rayon::current_num_threads(),
        res.steps,
        res.rhs_evals,
        times.len(),
        mz.to_string_radix(10, Some(20)),
        mx.to_string_radix(10, Some(20)),
    );
}
