//! Times certified softmax of one row of n logits at 128 bits, for the
//! side-by-side comparison in `bench/anchors/run_softmax.sh`; prints one JSON line.
//!
//! The row is `z_j = ((j·2654435761) mod 2^32)/2^28 − 8`: dyadic, so every tool
//! reads the same exact numbers. Each rate is reported from the best and from the
//! median of `reps` wall-clock runs (the best is the least disturbed run on a
//! shared machine; the median shows the noise). The time includes building and
//! dropping the output intervals. Usage: `softmax_bench [n] [reps] [--no-mpfr]`.
//!
//! The f64 tier (`kernel::softmax_f64_into`, issue #41) is timed on the same row as
//! binary64 points (exact: the z_j are dyadic with 32 significant bits), writing into
//! two output slices allocated once outside the timing (the API's caller-owned
//! storage), 20 times as many runs as the others (as the anchors time numpy: a run
//! takes under a millisecond); its widest relative output width `(hi − lo)/lo` is
//! printed beside.

use attncheck::fast::softmax_fast;
use attncheck::kernel::{softmax, softmax_f64_into, Interval};
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

/// Entries per second of `f` on `n` entries: (from the best run, from the median).
fn rates(n: usize, reps: usize, mut f: impl FnMut()) -> (f64, f64) {
    let mut t: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (n as f64 / t[0], n as f64 / t[t.len() / 2])
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (n, reps) = (num(0, 65_536), num(1, 9));
    let z = row(n);
    softmax_fast(&z, PREC); // warm-up: tables, thread pool
    let fast = rates(n, reps, || {
        drop(std::hint::black_box(softmax_fast(&z, PREC)))
    });
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("thread pool");
    let fast1 = rates(n, reps, || {
        one_thread.install(|| drop(std::hint::black_box(softmax_fast(&z, PREC))))
    });
    // the f64 tier: the same row as binary64 points, outputs into caller-owned slices
    let z64: Vec<f64> = z.iter().map(|x| x.lo().to_f64()).collect();
    assert!(
        z.iter().zip(&z64).all(|(x, &y)| *x.lo() == y),
        "the row is exact in binary64"
    );
    let (mut p_lo, mut p_hi) = (vec![0.0; n], vec![0.0; n]);
    let mut tier = || {
        softmax_f64_into(&z64, &z64, f64::INFINITY, &mut p_lo, &mut p_hi)
            .expect("the f64 tier takes the row")
    };
    // warm-up, and the widest relative width (hi − lo)/lo
    let f64_width = tier();
    // 20× the runs, as the anchors give numpy: a run takes under a millisecond
    let f64_rate = rates(n, reps * 20, || {
        std::hint::black_box(tier());
    });
    let f64_1 = rates(n, reps * 20, || {
        one_thread.install(|| std::hint::black_box(tier()));
    });
    // the f64 enclosures contain the 128-bit ones (a check of the run, outside the timing)
    tier();
    let fast_out = softmax_fast(&z, PREC);
    assert!(fast_out
        .iter()
        .zip(p_lo.iter().zip(&p_hi))
        .all(|(p, (&l, &h))| *p.lo() >= l && *p.hi() <= h));
    let mpfr = if args.iter().any(|a| a == "--no-mpfr") {
        (0.0, 0.0)
    } else {
        rates(n, reps.min(3), || drop(std::hint::black_box(softmax(&z))))
    };
    // the widest relative width (hi − lo)/lo of an output, log2, outside the timing
    let widest = softmax_fast(&z, PREC)
        .iter()
        .map(|p| {
            (Float::with_val(64, p.hi() - p.lo()) / p.lo())
                .to_f64()
                .log2()
        })
        .fold(f64::NEG_INFINITY, f64::max);
    println!(
        "{{\"n\": {n}, \"prec\": {PREC}, \"threads\": {}, \
         \"fast\": [{:.0}, {:.0}], \"fast_1thread\": [{:.0}, {:.0}], \"mpfr\": [{:.0}, {:.0}], \
         \"max_log2_rel_width\": {widest:.2}, \
         \"f64\": [{:.0}, {:.0}], \"f64_1thread\": [{:.0}, {:.0}], \
         \"f64_max_rel_width\": {f64_width:.3e}, \"f64_max_log2_rel_width\": {:.2}}}",
        rayon::current_num_threads(),
        fast.0,
        fast.1,
        fast1.0,
        fast1.1,
        mpfr.0,
        mpfr.1,
        f64_rate.0,
        f64_rate.1,
        f64_1.0,
        f64_1.1,
        f64_width.log2(),
    );
}
