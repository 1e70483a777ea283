//! Times the exact Gram certification max_{l≠j} |⟨s_l, s_j⟩| of a seeded n × d
//! sign matrix (`SignMatrix::max_abs_offdiag`), for the side-by-side comparison
//! in `bench/anchors/run_gram.sh`; prints one JSON line.
//!
//! S is `sparse::sample::draw_signs(n, d, seed)` (bench/anchors/gram.py draws the
//! same S with its own SplitMix64, so both sides must report the same maximum).
//! Times are wall clock, best and median of `reps` runs, on the current rayon
//! pool (2 threads unless RAYON_NUM_THREADS says otherwise) and on a 1-thread
//! pool. "Popcounts" are 64-bit words XOR-popcounted: n(n−1)/2 · ⌈d/64⌉.
//! Usage: `gram_bench [n] [d] [reps] [seed]`.
//!
//! `gram_bench dim n d_max [seed] [t_num t_den]` instead times
//! `sparse::dimension::min_dimension_of` (default t = 1/4) once, dispatched to
//! the vector unit and as the portable scalar build, and prints d_min.
//!
//! `gram_bench quick [seeds] [stride] [build] [e_min]` runs the scans of
//! sparse/log-dimension's quick profile (t = 1/4 and 1/8, n = 2^e_min … 2^12,
//! default e_min = 4; d_max = d_ub(n) at δ = 1/100) for seeds 0, stride,
//! 2·stride, … below `seeds` (default 1024, stride 1) on one thread, and prints
//! one line per (t, n, seed) with its d_min, then the wall time per (t, n): a
//! baseline to diff a new scan against. build: an index into
//! `sparse::dimension::Build::ALL` (0 = the best this CPU has, the default; 1 =
//! AVX-512, 2 = AVX2, 3 = portable scalar, 4 = AVX-512 with VPOPCNTDQ).
//!
//! `gram_bench dimcpu n d_max [seed] [t_num t_den] [build]` times one
//! `min_dimension_of` on a 1-thread pool (build as for `quick`) and prints its
//! wall time and the process's CPU time (the sum over its threads of
//! /proc/self/task/*/schedstat, Linux), with words per wall second and per CPU
//! second: on a shared machine the CPU time is what the scan costs, the wall
//! time also holds the time other processes had the core.
//!
//! `gram_bench clock` prints the core clock this process gets, from a chain of
//! dependent one-cycle integer operations (rotate, add: 2 cycles per step; best
//! of 7 runs of 3·10⁸ steps, each timed in CPU time where /proc has it): the
//! VPOPCNTDQ bound is 8 words per cycle per core
//! at this clock (one 512-bit VPOPCNTQ per cycle).

use attncheck::sparse::sample::draw_signs;
use std::time::Instant;

fn times(reps: usize, mut f: impl FnMut()) -> (f64, f64) {
    let mut t: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[0], t[t.len() / 2])
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("dim") {
        return dim();
    }
    if std::env::args().nth(1).as_deref() == Some("quick") {
        return quick();
    }
    if std::env::args().nth(1).as_deref() == Some("clock") {
        return clock();
    }
    if std::env::args().nth(1).as_deref() == Some("dimcpu") {
        return dimcpu();
    }
    let a: Vec<u64> = std::env::args()
        .skip(1)
        .map(|s| s.parse().expect("integer argument"))
        .collect();
    let n = *a.first().unwrap_or(&16384) as usize;
    let d = *a.get(1).unwrap_or(&2485) as usize;
    let reps = *a.get(2).unwrap_or(&5) as usize;
    let seed = *a.get(3).unwrap_or(&1);
    let s = draw_signs(n, d, seed);
    let (m, (l, j)) = s.max_abs_offdiag().expect("n ≥ 2");
    let words = (n * (n - 1) / 2) as f64 * d.div_ceil(64) as f64;
    let threads = rayon::current_num_threads();
    let (best, median) = times(reps, || {
        std::hint::black_box(s.max_abs_offdiag());
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let (best1, median1) = pool.install(|| {
        times(reps.div_ceil(2), || {
            std::hint::black_box(s.max_abs_offdiag());
        })
    });
    assert_eq!(pool.install(|| s.max_abs_offdiag()), Some((m, (l, j))));
    println!(
        "{{\"n\": {n}, \"d\": {d}, \"seed\": {seed}, \"max\": {m}, \"pair\": [{l}, {j}], \
         \"threads\": {threads}, \"best_s\": {best:.6}, \"median_s\": {median:.6}, \
         \"best_1t_s\": {best1:.6}, \"median_1t_s\": {median1:.6}, \
         \"popcounts_per_s\": {:.4e}, \"popcounts_per_s_1t\": {:.4e}}}",
        words / best,
        words / best1
    );
}

fn dim() {
    let a: Vec<u64> = std::env::args()
        .skip(2)
        .map(|s| s.parse().expect("integer argument"))
        .collect();
    let n = *a.first().unwrap_or(&4096) as usize;
    let d_max = *a.get(1).unwrap_or(&816) as usize;
    let seed = *a.get(2).unwrap_or(&1);
    let t = rug::Rational::from((*a.get(3).unwrap_or(&1), *a.get(4).unwrap_or(&4)));
    let s = draw_signs(n, d_max, seed);
    let start = Instant::now();
    let d = attncheck::sparse::dimension::min_dimension_of(&s, &t);
    let secs = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let d_scalar = attncheck::sparse::dimension::min_dimension_of_scalar(&s, &t);
    let secs_scalar = start.elapsed().as_secs_f64();
    assert_eq!(d, d_scalar, "vector and scalar scans disagree");
    let words = (n * (n - 1) / 2) as f64 * d_max.div_ceil(64) as f64;
    println!(
        "{{\"n\": {n}, \"d_max\": {d_max}, \"seed\": {seed}, \"t\": \"{t}\", \"d_min\": {}, \
         \"threads\": {}, \"seconds\": {secs:.3}, \"popcounts_per_s\": {:.4e}, \
         \"scalar_seconds\": {secs_scalar:.3}, \"scalar_popcounts_per_s\": {:.4e}}}",
        d.map_or("null".to_string(), |d| d.to_string()),
        rayon::current_num_threads(),
        words / secs,
        words / secs_scalar
    );
}

fn quick() {
    use attncheck::sparse::dimension::{min_dimension_of_build, union_bound_dimension, Build};
    let a: Vec<u64> = std::env::args()
        .skip(2)
        .map(|s| s.parse().expect("integer argument"))
        .collect();
    let seeds = *a.first().unwrap_or(&1024);
    let stride = (*a.get(1).unwrap_or(&1)).max(1);
    let build = Build::ALL[*a.get(2).unwrap_or(&0) as usize];
    let e_min = *a.get(3).unwrap_or(&4) as u32;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let delta = rug::Rational::from((1, 100));
    let mut total = 0.0;
    let mut lines = Vec::new();
    for t in [rug::Rational::from((1, 4)), rug::Rational::from((1, 8))] {
        for e in e_min..=12u32 {
            let n = 1usize << e;
            let d_max = union_bound_dimension(n as u64, &t, &delta).expect("d_ub") as usize;
            let start = Instant::now();
            for seed in (0..seeds).step_by(stride as usize) {
                // as sparse::dimension::min_dimension, with the build chosen
                let s = draw_signs(n, d_max, seed);
                let d = pool
                    .install(|| min_dimension_of_build(&s, &t, build))
                    .expect("this CPU runs the build");
                println!("t={t} n={n} seed={seed} d={d:?}");
            }
            let secs = start.elapsed().as_secs_f64();
            total += secs;
            lines.push(format!("# t={t} n={n} d_max={d_max} seconds={secs:.3}"));
        }
    }
    for l in lines {
        println!("{l}");
    }
    println!("# total seconds={total:.3}");
}

/// CPU seconds of this process so far: the sum over its threads of the first
/// field of /proc/self/task/*/schedstat (nanoseconds on a CPU); 0 where that
/// does not exist.
fn cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let ns: u64 = tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    ns as f64 * 1e-9
}

fn dimcpu() {
    use attncheck::sparse::dimension::{min_dimension_of_build, Build};
    let a: Vec<u64> = std::env::args()
        .skip(2)
        .map(|s| s.parse().expect("integer argument"))
        .collect();
    let n = *a.first().unwrap_or(&16384) as usize;
    let d_max = *a.get(1).unwrap_or(&3074) as usize;
    let seed = *a.get(2).unwrap_or(&0);
    let t = rug::Rational::from((*a.get(3).unwrap_or(&1), *a.get(4).unwrap_or(&8)));
    let build = Build::ALL[*a.get(5).unwrap_or(&0) as usize];
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let s = draw_signs(n, d_max, seed);
    let (cpu, start) = (cpu_seconds(), Instant::now());
    let d = pool
        .install(|| min_dimension_of_build(&s, &t, build))
        .expect("this CPU runs the build");
    let (secs, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    let words = (n * (n - 1) / 2) as f64 * d_max.div_ceil(64) as f64;
    println!(
        "{{\"n\": {n}, \"d_max\": {d_max}, \"seed\": {seed}, \"t\": \"{t}\", \"build\": \"{build:?}\", \
         \"d_min\": {}, \"seconds\": {secs:.3}, \"cpu_seconds\": {cpu:.3}, \
         \"words_per_s\": {:.4e}, \"words_per_cpu_s\": {:.4e}}}",
        d.map_or("null".to_string(), |d| d.to_string()),
        words / secs,
        words / cpu
    );
}

fn clock() {
    let steps = 300_000_000u64;
    let best = (0..7)
        .map(|_| {
            let mut x = std::hint::black_box(1u64);
            let (t, cpu) = (Instant::now(), cpu_seconds());
            for _ in 0..steps {
                x = x.rotate_left(13).wrapping_add(0x5555_5555);
            }
            std::hint::black_box(x);
            // CPU time where /proc has it (a loaded machine's wall time holds
            // other processes' turns on the core), else wall time
            let cpu = cpu_seconds() - cpu;
            if cpu > 0.0 {
                cpu
            } else {
                t.elapsed().as_secs_f64()
            }
        })
        .fold(f64::MAX, f64::min);
    let hz = 2.0 * steps as f64 / best;
    println!(
        "{{\"clock_hz\": {hz:.4e}, \"vpopcntdq_bound_words_per_s_per_core\": {:.4e}}}",
        8.0 * hz
    );
}
