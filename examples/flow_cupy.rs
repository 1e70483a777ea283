//! The authors' largest run made exact (`dynamics::workloads::cupy_workload`):
//! n = d = 128, QᵀK = I, V symmetric sparse, z0 ~ U[−1/2, 1/2] dyadic, RK4 in z with
//! Δt = 1/10 to T = 15 at 128 bits (P recomputed at every stage). Prints one JSON
//! line: wall time, steps, max|z(T)|, max|x(T)| (timed by bench/anchors/run_dynamics.sh).
//!
//! Usage: `flow_cupy [prec] [T as p/q] [h as p/q] [n] [d] [--dump DIR]`. With
//! `--dump DIR` it writes DIR/v.txt and DIR/z0.txt (exact fractions) for the numpy
//! anchor and exits.

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
    let pos: Vec<&String> = args.iter().take_while(|a| *a != "--dump").collect();
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
    let t0 = Instant::now();
    let res = rk4(
        &sys,
        &z0,
        &t_end,
        &h,
        &FlowOptions::new(prec, Vars::Z),
        |_| {},
    )
    .expect("flow");
    let wall = t0.elapsed().as_secs_f64();
    let max_abs = |v: &[Float]| {
        v.iter()
            .map(|x| Float::with_val(prec, x.abs_ref()))
            .fold(Float::new(prec), |a, b| if b > a { b } else { a })
    };
    let mz = max_abs(&res.state);
    let mx = max_abs(&res.x());
    println!(
        "{{\"n\": {n}, \"d\": {d}, \"prec\": {prec}, \"T\": \"{t_end}\", \"h\": \"{h}\", \"threads\": {}, \
         \"steps\": {}, \"rhs_evals\": {}, \"wall_s\": {wall:.3}, \"max_abs_z\": \"{}\", \"max_abs_x\": \"{}\"}}",
        rayon::current_num_threads(),
        res.steps,
        res.rhs_evals,
        mz.to_string_radix(10, Some(20)),
        mx.to_string_radix(10, Some(20)),
    );
}
