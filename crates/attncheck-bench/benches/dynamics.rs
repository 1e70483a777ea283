//! The flow engine (src/dynamics/flow.rs) at 128 bits: the block dot product against
//! plain MPFR, one right-hand side at n = d = 128 (the authors' largest run made
//! exact, `dynamics::workloads::cupy_workload`), and the full n = 20, d = 2 RK4 run of
//! bench/anchors/run_dynamics.sh. The full n = 128 run (600 right-hand sides) is timed
//! by examples/flow_cupy.rs, not here. Also one interval step of the discrete map (D)
//! at the clusters/polytope full-profile size.

use attncheck::dynamics::dot::{dot, dot_mpfr, BlockRows};
use attncheck::dynamics::flow::{rk4, Flow, FlowOptions, Vars};
use attncheck::dynamics::workloads::{cupy_workload, grid_tokens_2d, identity_system};
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rug::{Float, Rational};

const PREC: u32 = 128;

fn bench(c: &mut Criterion) {
    // dot products of length 128
    let v = |k: u32| -> Vec<Float> {
        (0..128u32)
            .map(|i| Float::with_val(PREC, Rational::from(((i * 37 + k) % 101, 7 + i))) - 7)
            .collect()
    };
    let (a, b) = (v(1), v(2));
    let ab = BlockRows::from_floats(&a, 1, 128, PREC).expect("finite");
    let bb = BlockRows::from_floats(&b, 1, 128, PREC).expect("finite");
    let mut g = c.benchmark_group("dot_128_128bit");
    g.throughput(Throughput::Elements(128));
    g.bench_function("block", |x| {
        x.iter(|| dot(black_box(&ab), 0, black_box(&bb), 0, PREC))
    });
    g.bench_function("mpfr", |x| {
        x.iter(|| dot_mpfr(black_box(&a), black_box(&b), PREC))
    });
    g.finish();

    // one right-hand side at n = d = 128 (z, t = 1; e^{V} computed once, outside the loop)
    let (sys, z0) = cupy_workload(128, 128, 2023);
    let flow = Flow::new(&sys, FlowOptions::new(PREC, Vars::Z)).expect("flow");
    let state = flow.initial_state(&z0).expect("state");
    let prop = flow.prop_at(&Rational::from(1)).expect("e^{V}");
    let mut g = c.benchmark_group("flow_rhs_n128_d128_128bit");
    g.sample_size(10);
    g.bench_function("rhs", |x| {
        x.iter(|| flow.rhs(prop.as_ref(), black_box(&state)).expect("rhs"))
    });
    g.finish();

    // the anchor run: n = 20, d = 2, Q = K = V = I, RK4 h = 1/10 to T = 5
    let sys = identity_system(2);
    let z0 = grid_tokens_2d(20);
    let (t_end, h) = (Rational::from(5), Rational::from((1, 10)));
    let opts = FlowOptions::new(PREC, Vars::Z);
    let mut g = c.benchmark_group("flow_rk4_n20_d2_T5_128bit");
    g.sample_size(10);
    g.bench_function("rk4", |x| {
        x.iter(|| rk4(&sys, black_box(&z0), &t_end, &h, &opts, |_| {}).expect("flow"))
    });
    g.finish();

    // the discrete map (D) in intervals: one step of the layer-rescaled form at the
    // clusters/polytope full-profile size (n = 128, d = 3, V = I, 128 bits); the
    // full run is 150 such steps (`attncheck run clusters/polytope --profile full`).
    let sys = attncheck::dynamics::model::System::new(
        attncheck::dynamics::model::Mat::identity(3),
        attncheck::dynamics::model::Mat::identity(3),
        attncheck::dynamics::model::Mat::identity(3),
    );
    let toks = attncheck::dynamics::model::random_dyadic("tokens", 128, 3, "-5", "5", 7, 20)
        .expect("tokens");
    let dt = Rational::from((1, 10));
    let mut map = attncheck::dynamics::discrete::DiscreteMap::new(
        &sys,
        128,
        &dt,
        attncheck::dynamics::discrete::Form::LayerRescaled,
        PREC,
    )
    .expect("map");
    let s0 = map.start(&toks);
    let mut g = c.benchmark_group("discrete_step_n128_d3_128bit");
    g.sample_size(10);
    g.bench_function("layer_rescaled", |x| x.iter(|| map.step(black_box(&s0))));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
