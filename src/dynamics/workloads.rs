//! Deterministic workloads for the flow engine's benchmarks and anchors
//! (crates/attncheck-bench/benches/dynamics.rs, examples/flow_*.rs, bench/anchors/dynamics.py): every
//! number is an exact dyadic rational, so the Rust and Python sides read the same
//! data (the examples can dump it as exact fractions).

use super::model::{random_dyadic, Mat, System};
use crate::rng::SplitMix64;
use rug::{Integer, Rational};

/// `v` rounded to the nearest multiple of 2^−g (no ties occur for the data below).
fn round_to_grid(v: &Rational, g: u32) -> Rational {
    let scale = Integer::from(1) << g;
    let m = Rational::from(v * &scale).round().into_numer_denom().0;
    Rational::from((m, scale))
}

/// The n = 20, d = 2 anchor tokens:
/// `z0[i] = ((37i mod 101)/10.1 − 5, (53i mod 97)/9.7 − 5)`, each rounded to the
/// nearest multiple of 2^−20 (a trivially reproducible spread over [−5, 5]²).
pub fn grid_tokens_2d(n: usize) -> Mat {
    let rows = (0..n as i64)
        .map(|i| {
            let a = Rational::from(((i * 37) % 101 * 10, 101)) - 5;
            let b = Rational::from(((i * 53) % 97 * 10, 97)) - 5;
            vec![round_to_grid(&a, 20), round_to_grid(&b, 20)]
        })
        .collect();
    Mat::from_rows(rows)
}

/// Q = K = V = I_d.
pub fn identity_system(d: usize) -> System {
    System::new(Mat::identity(d), Mat::identity(d), Mat::identity(d))
}

/// The authors' largest run (`cupy-Tform.ipynb`: n = d = 128, QᵀK = I, V symmetric
/// sparse with spectrum roughly in [−2.85, −1.01] ∪ [1.01, 2.31]), made exact:
///
/// * V = D + S with D = diag(±u_i), u_i uniform on [1, 2] (grid 2^−20) with a
///   random sign, and S symmetric with zero diagonal, each pair (i < j) present with
///   probability 1/10, entries uniform on [−1/8, 1/8] (grid 2^−20). By Weyl's
///   inequality the spectrum lies in [−2 − ‖S‖, −1 + ‖S‖] ∪ [1 − ‖S‖, 2 + ‖S‖]
///   (‖S‖₂ ≈ 0.4 for d = 128; the anchor script prints the actual spectrum).
/// * z0 uniform on [−1/2, 1/2] (grid 2^−20), n × d.
///
/// All draws come from SplitMix64(seed) in a fixed order (D, then S row by row, then
/// z0 via [`random_dyadic`] with seed + 1).
pub fn cupy_workload(n: usize, d: usize, seed: u64) -> (System, Mat) {
    let mut rng = SplitMix64::new(seed);
    let g = 20u32;
    let scale = Integer::from(1) << g;
    let grid = |m: i64| Rational::from((Integer::from(m), scale.clone()));
    let mut v = Mat::zeros(d, d);
    for i in 0..d {
        let u = (1i64 << g) + rng.below((1 << g) + 1) as i64;
        let s = if rng.below(2) == 0 { 1 } else { -1 };
        v.data[i * d + i] = grid(s * u);
    }
    for i in 0..d {
        for j in i + 1..d {
            if rng.below(10) == 0 {
                let half = 1i64 << (g - 3);
                let m = rng.below(2 * half as u64 + 1) as i64 - half;
                v.data[i * d + j] = grid(m);
                v.data[j * d + i] = grid(m);
            }
        }
    }
    let z0 = random_dyadic("z0", n, d, "-1/2", "1/2", seed + 1, g).expect("valid range");
    let sys = System::new(Mat::identity(d), Mat::identity(d), v);
    (sys, z0)
}

/// Writes a matrix as text: a `rows cols` header line, then one row per line of
/// exact fractions `p/q` (read back with Python's `fractions.Fraction`).
pub fn dump_mat(m: &Mat) -> String {
    let mut s = format!("{} {}\n", m.rows, m.cols);
    for r in 0..m.rows {
        let row: Vec<String> = m.row(r).iter().map(|x| x.to_string()).collect();
        s.push_str(&row.join(" "));
        s.push('\n');
    }
    s
}
