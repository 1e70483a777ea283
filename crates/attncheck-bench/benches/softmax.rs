//! Certified softmax of one row of 65,536 logits at 128 bits: the MPFR reference
//! (`kernel::softmax`, one correctly rounded exp per entry) against the fast path
//! (`kernel::softmax_fast`: fixed-point exp, exact sums, all threads). Throughput
//! is reported in entries per second. The anchors in `bench/anchors/` time the
//! same row in python-flint, mpmath and numpy.

use attncheck::fast::softmax_fast;
use attncheck::kernel::{softmax, Interval};
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
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
