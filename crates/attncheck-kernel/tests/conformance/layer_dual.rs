//! The dual functionals of the `layer` datum (`layer-dual-sup`, `layer-dual-inf`:
//! sup/inf over λ ∈ [lo, hi] of max_j |a_i(λ)·x_j^k|, a_i(λ) = row i of adj(V − λI)):
//! the adjugate row against cofactors, containment of the exact values with uniform
//! attention, bad arguments, and precision overlap.

use crate::common::{q, random, uniform_attention_step};
use attncheck_kernel::expr::{check_with, eval_with, Data, Datum};
use attncheck_kernel::layer_data::LayerData;
use attncheck_kernel::layer_dual::adj_row;
use attncheck_kernel::{Interval, Mat};
use proptest::prelude::*;
use rug::Rational;

/// A `layer` datum named X from exact data.
pub(crate) fn layer(qm: Mat, km: Mat, v: Mat, dt: &str, steps: usize, runs: Vec<Mat>) -> Data {
    let mut data = Data::new();
    let l = LayerData::new(qm, km, v, q(dt), steps, runs).unwrap();
    data.insert("X".into(), Datum::Layer(l));
    data
}

/// det of a square exact matrix (1 for 0 × 0).
fn det(m: &Mat) -> Rational {
    m.leading_minors()
        .pop()
        .unwrap_or_else(|| Rational::from(1))
}

/// The exact adjugate by cofactors: adj(A)_ij = (−1)^{i+j} det(A without row j, column i).
fn adj_exact(a: &Mat) -> Mat {
    let d = a.rows;
    let mut out = Mat::zeros(d, d);
    for i in 0..d {
        for j in 0..d {
            let rows: Vec<Vec<Rational>> = (0..d)
                .filter(|&r| r != j)
                .map(|r| {
                    (0..d)
                        .filter(|&c| c != i)
                        .map(|c| a.at(r, c).clone())
                        .collect()
                })
                .collect();
            let minor = if d == 1 {
                Rational::from(1)
            } else {
                det(&Mat::from_rows(rows))
            };
            out.data[i * d + j] = if (i + j) % 2 == 0 { minor } else { -minor };
        }
    }
    out
}

fn shifted(v: &Mat, lam: &Rational) -> Mat {
    v.add(&Mat::identity(v.rows).scale(&Rational::from(-lam)))
}

/// The kernel's adjugate row (Faddeev–LeVerrier in intervals) contains the exact
/// adjugate by cofactors, for d = 1..5 and rational λ; and a_i(λ)(V − λI) = det·e_i.
#[test]
#[allow(clippy::needless_range_loop)] // naive index loops are the point
fn adj_row_is_the_adjugate() {
    for d in 1..=5 {
        let v = random(40 + d as u64, d, d);
        for lam in ["0", "1/3", "-7/5"] {
            let lam = q(lam);
            let a = shifted(&v, &lam);
            let adj = adj_exact(&a);
            let dt = det(&a);
            for i in 0..d {
                let row = adj_row(&v, &Interval::from_rational(128, &lam), i, 128);
                for j in 0..d {
                    assert!(
                        row[j].contains_rational(adj.at(i, j)),
                        "d = {d}, λ = {lam}, adj[{i}][{j}] = {} not in {:?}",
                        adj.at(i, j),
                        row[j]
                    );
                    // and tight: rational data at 128 bits, a few dozen roundings
                    let width = row[j].width_up().to_f64();
                    let size = adj.at(i, j).to_f64().abs().max(1.0);
                    assert!(
                        width <= 1e-25 * size,
                        "d = {d}, λ = {lam}, adj[{i}][{j}]: {:?} is {width} wide",
                        row[j]
                    );
                    // the test's own adjugate: adj(A)·A = det(A)·I
                    let s: Rational = (0..d)
                        .map(|c| Rational::from(adj.at(i, c) * a.at(c, j)))
                        .sum();
                    assert_eq!(s, if i == j { dt.clone() } else { Rational::new() });
                }
            }
        }
    }
}

/// With Q = 0 the attention is exactly uniform and the map linear, so the iterates are
/// rational; V has rational eigenvalues, so every a_i(λ)·x_j^k is an exact rational:
/// the operations' enclosures at the point bracket [λ, λ] contain max_j |a_i(λ)·x_j^k|,
/// and a bracket around λ keeps it between inf.lo and sup.hi.
#[test]
#[allow(clippy::needless_range_loop)]
fn dual_operations_contain_the_exact_values_with_uniform_attention() {
    let (n, d, steps) = (4, 3, 10);
    let v = Mat::from_rows(vec![
        vec![q("1/2"), q("1/4"), q("0")],
        vec![q("0"), q("-1/2"), q("1/8")],
        vec![q("0"), q("0"), q("1/4")],
    ]);
    let x0 = random(51, n, d);
    let data = layer(
        Mat::zeros(d, d),
        Mat::identity(d),
        v.clone(),
        "1/8",
        steps,
        vec![x0.clone()],
    );
    let step = |x: &Mat| uniform_attention_step(x, &v);
    let value = |a: &[Rational], x: &Mat| -> Rational {
        (0..n)
            .map(|j| {
                let s: Rational = (0..d).map(|c| Rational::from(&a[c] * x.at(j, c))).sum();
                s.abs()
            })
            .max()
            .unwrap()
    };
    let eigen = ["1/2", "-1/2", "1/4"];
    let adjs: Vec<Mat> = eigen
        .iter()
        .map(|l| adj_exact(&shifted(&v, &q(l))))
        .collect();
    // at an eigenvalue, every row of the adjugate is a left eigenvector or 0
    for (l, adj) in eigen.iter().zip(&adjs) {
        let s = shifted(&v, &q(l));
        for i in 0..d {
            for c in 0..d {
                let t: Rational = (0..d)
                    .map(|r| Rational::from(adj.at(i, r) * s.at(r, c)))
                    .sum();
                assert_eq!(t, 0, "λ = {l}, row {i}");
            }
        }
    }
    let mut x = x0;
    for k in 0..=steps {
        for (l, adj) in eigen.iter().zip(&adjs) {
            for i in 0..d {
                let exact = value(adj.row(i), &x);
                for op in ["layer-dual-sup", "layer-dual-inf"] {
                    let t = format!("({op} X 0 {k} {l} {l} {i})");
                    let iv = eval_with(&t, 96, &data).unwrap();
                    assert!(iv.contains_rational(&exact), "{t}: {exact} not in {iv:?}");
                }
            }
        }
        // a bracket of width 1/32 around λ = 1/2, row 0
        let exact = value(adjs[0].row(0), &x);
        let sup = eval_with(
            &format!("(layer-dual-sup X 0 {k} 31/64 33/64 0)"),
            96,
            &data,
        )
        .unwrap();
        let inf = eval_with(
            &format!("(layer-dual-inf X 0 {k} 31/64 33/64 0)"),
            96,
            &data,
        )
        .unwrap();
        assert!(sup.hi_f64() >= exact.to_f64() && inf.lo_f64() <= exact.to_f64());
        x = step(&x);
    }
}

/// Bad brackets, rows, runs, steps and arities are evaluation errors naming the
/// problem, never panics.
#[test]
fn dual_operations_reject_bad_arguments_without_panicking() {
    let d = 2;
    let data = layer(
        Mat::identity(d),
        Mat::identity(d),
        Mat::identity(d),
        "1/10",
        3,
        vec![random(1, 3, d)],
    );
    for (f, needle) in [
        ("(<= (layer-dual-sup X 0 0 1 0 0) 1)", "lo ≤ hi"),
        ("(<= (layer-dual-inf X 0 0 1/2 1/3 0) 1)", "lo ≤ hi"),
        (
            "(<= (layer-dual-sup X 0 0 (sqrt 2) 2 0) 1)",
            "lo (an exact rational) must be exact",
        ),
        (
            "(<= (layer-dual-sup X 0 0 0 (exp 1) 0) 1)",
            "hi (an exact rational) must be exact",
        ),
        (
            "(<= (layer-dual-sup X 0 0 0 1 (sqrt 2)) 1)",
            "row i (an exact integer) must be exact",
        ),
        (
            "(<= (layer-dual-sup X 0 0 0 1 2) 1)",
            "row 2 is not an integer in 0..2",
        ),
        ("(<= (layer-dual-inf X 0 0 0 1 -1) 1)", "row -1"),
        ("(<= (layer-dual-inf X 0 0 0 1 1/2) 1)", "row 1/2"),
        ("(<= (layer-dual-sup X 1 0 0 1 0) 1)", "run 1"),
        ("(<= (layer-dual-sup X 0 4 0 1 0) 1)", "step 4"),
        ("(<= (layer-dual-inf X 0 1/2 0 1 0) 1)", "step 1/2"),
        ("(<= (layer-dual-sup X 0 0 0 1) 1)", "takes 6 argument"),
        ("(<= (layer-dual-inf Y 0 0 0 1 0) 1)", "no datum named `Y`"),
    ] {
        let e = check_with(f, 64, &data).unwrap_err();
        assert!(e.reason.contains(needle), "{f}: {}", e.reason);
    }
    // d above the dual operations' limit
    let big = 17;
    let data = layer(
        Mat::identity(big),
        Mat::identity(big),
        Mat::identity(big),
        "1/10",
        1,
        vec![random(2, 1, big)],
    );
    let e = check_with("(<= (layer-dual-sup X 0 0 0 1 0) 1)", 64, &data).unwrap_err();
    assert!(e.reason.contains("d ≤ 16"), "{}", e.reason);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]
    /// For random Q, K, V and brackets: sup.hi ≥ inf.lo (sup ≥ inf), and the
    /// enclosures at p and p + 64 bits overlap.
    #[test]
    fn dual_enclosures_are_consistent_and_overlap_across_precisions(
        seed in 0u64..1000, lo in -64i32..64, w in 0u32..8,
    ) {
        let (n, d) = (5, 3);
        let data = layer(random(seed, d, d), random(seed + 1, d, d), random(seed + 2, d, d), "1/10", 8,
            vec![random(seed + 3, n, d)]);
        let (lo, hi) = (format!("{lo}/32"), format!("{}/32", lo + w as i32));
        for i in 0..d {
            for k in [0, 4, 8] {
                let t = |op: &str| format!("({op} X 0 {k} {lo} {hi} {i})");
                let (sup, inf) = (t("layer-dual-sup"), t("layer-dual-inf"));
                let s96 = eval_with(&sup, 96, &data).unwrap();
                let i96 = eval_with(&inf, 96, &data).unwrap();
                prop_assert!(s96.hi_f64() >= i96.lo_f64(), "{} {:?} {:?}", sup, s96, i96);
                let s160 = eval_with(&sup, 160, &data).unwrap();
                let i160 = eval_with(&inf, 160, &data).unwrap();
                prop_assert!(s96.overlaps(&s160), "{}", sup);
                prop_assert!(i96.overlaps(&i160), "{}", inf);
            }
        }
    }
}
