//! The exact Gram certification max_{l≠j} |⟨s_l, s_j⟩| of a seeded sign matrix
//! (`SignMatrix::max_abs_offdiag`: bit-packed XOR-popcount, blocked, all
//! threads) at n = 2^12, d = 2130, and the nested-prefix scan
//! `sparse::dimension::min_dimension_of` at n = 2^10, t = 1/4 (vector unit and
//! portable scalar build) and at n = 2^12, t = 1/8. Throughput is in
//! 64-bit words XOR-popcounted (n(n−1)/2 · ⌈d/64⌉ per run). bench/anchors/run_gram.sh
//! times the same Gram computation against numpy float32 S @ Sᵀ.

use attncheck::sparse::dimension::{min_dimension_of, min_dimension_of_scalar};
use attncheck::sparse::sample::draw_signs;
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rug::Rational;

fn bench(c: &mut Criterion) {
    let (n, d) = (4096usize, 2130usize);
    let s = draw_signs(n, d, 1);
    let mut g = c.benchmark_group("gram_4096x2130");
    g.throughput(Throughput::Elements(
        (n * (n - 1) / 2 * d.div_ceil(64)) as u64,
    ));
    g.sample_size(10);
    g.bench_function("max_abs_offdiag", |b| {
        b.iter(|| black_box(&s).max_abs_offdiag())
    });
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("thread pool");
    g.bench_function("max_abs_offdiag_1thread", |b| {
        b.iter(|| one.install(|| black_box(&s).max_abs_offdiag()))
    });
    g.finish();

    let (n, d_max) = (1024usize, 720usize);
    let s = draw_signs(n, d_max, 1);
    let t = Rational::from((1, 4));
    let mut g = c.benchmark_group("min_dimension_1024_t1_4");
    g.throughput(Throughput::Elements(
        (n * (n - 1) / 2 * d_max.div_ceil(64)) as u64,
    ));
    g.sample_size(10);
    g.bench_function("min_dimension_of", |b| {
        b.iter(|| min_dimension_of(black_box(&s), &t))
    });
    g.bench_function("min_dimension_of_scalar", |b| {
        b.iter(|| min_dimension_of_scalar(black_box(&s), &t))
    });
    g.finish();

    // a point of the log-dimension sweep: n = 2^12, t = 1/8, d_max = d_ub = 2719
    let (n, d_max) = (4096usize, 2719usize);
    let s = draw_signs(n, d_max, 1);
    let t = Rational::from((1, 8));
    let mut g = c.benchmark_group("min_dimension_4096_t1_8");
    g.throughput(Throughput::Elements(
        (n * (n - 1) / 2 * d_max.div_ceil(64)) as u64,
    ));
    g.sample_size(10);
    g.bench_function("min_dimension_of", |b| {
        b.iter(|| min_dimension_of(black_box(&s), &t))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
