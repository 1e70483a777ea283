//! Certified softmax of one row of 65,536 logits at 128 bits: the MPFR reference
//! (`kernel::softmax`, one correctly rounded exp per entry) against the fast path
//! (`kernel::softmax_fast`: fixed-point exp, exact sums, all threads), and the f64
//! tier (`kernel::softmax_f64_into`, issue #41: binary64 ends rounded outward, outputs
//! into two slices allocated once). Throughput is reported in entries per second. The
//! anchors in `bench/anchors/` time the same row in python-flint, mpmath and numpy.

use attncheck::fast::softmax_fast;
use attncheck::kernel::{softmax, softmax_f64_into, Interval};
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rug::Float;

const N: usize = 65_536;
const PREC: u32 = 128;

/// `z_j = ((j·2654435761) mod 2^32)/2^28 − 8`: dyadic, the anchors' row.
fn row(n: usize) -> Vec<Interval> {
    (0..n as u64)
        .map(|j| {
            let m = (j * 2_654_435_761) % (1 << 32);
            let z: Float = Float::with_val(PREC, m) / (1u64 << 28) - 8;
            Interval::from_endpoints(z.clone(), z)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let z = row(N);
    let mut g = c.benchmark_group("softmax_65536_128bit");
    g.throughput(Throughput::Elements(N as u64));
    g.sample_size(10);
    g.bench_function("kernel_mpfr", |b| b.iter(|| softmax(black_box(&z))));
    g.bench_function("fast", |b| b.iter(|| softmax_fast(black_box(&z), PREC)));
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("thread pool");
    g.bench_function("fast_1thread", |b| {
        b.iter(|| one.install(|| softmax_fast(black_box(&z), PREC)))
    });
    // the same row as binary64 points (exact: dyadic with 32 significant bits)
    let z64: Vec<f64> = z.iter().map(|x| x.lo().to_f64()).collect();
    let (mut lo, mut hi) = (vec![0.0; N], vec![0.0; N]);
    g.bench_function("f64_tier", |b| {
        b.iter(|| softmax_f64_into(black_box(&z64), &z64, f64::INFINITY, &mut lo, &mut hi))
    });
    g.bench_function("f64_tier_1thread", |b| {
        b.iter(|| {
            one.install(|| softmax_f64_into(black_box(&z64), &z64, f64::INFINITY, &mut lo, &mut hi))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
