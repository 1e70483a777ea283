//! Exact convex hulls (src/dynamics/hull.rs) and the claim clusters/polytope.

use crate::util::{prepare_err, run_edited, run_quick, spec_text, verdict};
use attncheck::dynamics::hull::{hausdorff_sq, hull, PointSet};
use attncheck::kernel::Interval;
use attncheck::verdict::Verdict;
use proptest::prelude::*;
use rug::{Integer, Rational};

const ID: &str = "clusters/polytope";

fn points(d: usize, xs: &[i64]) -> PointSet {
    let q: Vec<Rational> = xs.iter().map(|&x| Rational::from(x)).collect();
    PointSet::from_rationals(d, &q).unwrap()
}

fn ints(v: &[i64]) -> Vec<Rational> {
    v.iter().map(|&x| Rational::from(x)).collect()
}

#[test]
fn square_with_interior_edge_and_duplicate_points() {
    // 0..3 corners, 4 interior, 5 on an edge, 6 a duplicate of corner 2.
    let ps = points(2, &[0, 0, 2, 0, 2, 2, 0, 2, 1, 1, 1, 0, 2, 2]);
    let h = hull(&ps);
    assert_eq!(h.dim, 2);
    assert_eq!(h.vertices, vec![0, 1, 2, 3]);
    assert_eq!(
        h.polygon,
        vec![0, 1, 2, 3],
        "counter-clockwise from the lowest-leftmost"
    );
    assert_eq!(h.facets.len(), 4);
    let prec = 64;
    let at =
        |x: &[i64]| -> Vec<Interval> { x.iter().map(|&c| Interval::from_i64(prec, c)).collect() };
    let centre = h.boundary_distance(&ps, &at(&[1, 1])).unwrap();
    assert!(centre.contains_rational(&Rational::from(1)), "{centre:?}");
    let corner = h.boundary_distance(&ps, &at(&[2, 2])).unwrap();
    assert!(corner.contains_zero());
    let outside = h.boundary_distance(&ps, &at(&[3, 1])).unwrap();
    assert!(
        outside.contains_rational(&Rational::from(-1)),
        "{outside:?}"
    );
}

#[test]
fn cube_with_face_centres_and_interior_points() {
    let mut xs = Vec::new();
    for c in 0..8i64 {
        xs.extend([2 * (c & 1), 2 * ((c >> 1) & 1), 2 * ((c >> 2) & 1)]);
    }
    xs.extend([1, 1, 0, 1, 1, 1, 2, 1, 1, 1, 2, 2]);
    let ps = points(3, &xs);
    let h = hull(&ps);
    assert_eq!(h.dim, 3);
    assert_eq!(h.vertices, (0..8).collect::<Vec<_>>());
    assert_eq!(h.facets.len(), 6);
    for f in &h.facets {
        assert_eq!(f.vertices.len(), 4);
    }
}

#[test]
fn degenerate_hulls_have_the_right_dimension() {
    assert_eq!(hull(&points(2, &[1, 1, 1, 1])).dim, 0);
    let seg = hull(&points(2, &[0, 0, 1, 1, 3, 3, 2, 2]));
    assert_eq!((seg.dim, seg.vertices.clone()), (1, vec![0, 2]));
    let flat = hull(&points(3, &[0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0]));
    assert_eq!((flat.dim, flat.vertices.clone()), (2, vec![0, 1, 2, 3]));
    let line = hull(&points(3, &[0, 0, 0, 1, 1, 1, 2, 2, 2]));
    assert_eq!((line.dim, line.vertices.clone()), (1, vec![0, 2]));
}

#[test]
fn rational_and_midpoint_inputs_agree() {
    let q: Vec<Rational> = ["1/3", "-2/7", "5", "1/2", "0", "0"]
        .iter()
        .map(|s| attncheck::kernel::parse_rational(s).unwrap())
        .collect();
    let ps = PointSet::from_rationals(2, &q).unwrap();
    for i in 0..3 {
        assert_eq!(ps.rational(i), q[2 * i..2 * i + 2].to_vec());
    }
    let iv: Vec<Interval> = ["0.5", "-0.25", "3", "1"]
        .iter()
        .map(|s| Interval::parse_decimal(64, s).unwrap())
        .collect();
    let pm = PointSet::from_midpoints(2, &iv).unwrap();
    assert_eq!(
        pm.rational(0),
        vec![Rational::from((1, 2)), Rational::from((-1, 4))]
    );
    assert!(PointSet::from_rationals(4, &q[..4]).is_err());
}

fn coords(d: usize) -> impl Strategy<Value = Vec<i64>> {
    (1usize..13).prop_flat_map(move |n| proptest::collection::vec(-3i64..=3, n * d))
}

fn check_hull(d: usize, xs: &[i64], u: &[i64]) -> Result<(), TestCaseError> {
    let ps = points(d, xs);
    let n = ps.len();
    let h = hull(&ps);
    // Hull vertices are input points (indices), without duplicates.
    prop_assert!(!h.vertices.is_empty());
    prop_assert!(h.vertices.iter().all(|&v| v < n));
    prop_assert!(h.vertices.windows(2).all(|w| w[0] < w[1]));
    // Every input point is inside or on the hull.
    for i in 0..n {
        prop_assert!(h.contains(&ps, &ps.rational(i)), "point {} outside", i);
    }
    // The support function of the hull equals that of the points.
    let uq = ints(u);
    prop_assert_eq!(
        h.support(&ps, &uq),
        attncheck::dynamics::hull::support(&ps, &uq)
    );
    if h.dim == d {
        let prec = 64;
        for i in 0..n {
            let x: Vec<Interval> = ps
                .rational(i)
                .iter()
                .map(|c| Interval::from_rational(prec, c))
                .collect();
            let bd = h.boundary_distance(&ps, &x).unwrap();
            // Inside or on: the signed distance is not certainly negative; 0 at vertices.
            prop_assert!(!bd.hi().is_sign_negative() || bd.hi().is_zero(), "{:?}", bd);
            if h.vertices.contains(&i) {
                prop_assert!(bd.contains_zero(), "{:?}", bd);
            }
        }
        // Every vertex lies on at least d facets and is strictly extreme in the
        // direction of the sum of their normals (an independent vertex test).
        for &v in &h.vertices {
            let on: Vec<_> = h
                .facets
                .iter()
                .filter(|f| f.vertices.contains(&v))
                .collect();
            prop_assert!(on.len() >= d, "vertex {} on {} facets", v, on.len());
            let mut w = vec![Integer::new(); d];
            for f in &on {
                for (a, b) in w.iter_mut().zip(&f.normal) {
                    *a += b;
                }
            }
            let wq: Vec<Rational> = w.iter().map(|x| Rational::from(x.clone())).collect();
            let top = ps.dot(v, &wq);
            for i in 0..n {
                if ps.point(i) != ps.point(v) {
                    prop_assert!(
                        ps.dot(i, &wq) < top,
                        "vertex {} not extreme against {}",
                        v,
                        i
                    );
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn hull_2d_properties(xs in coords(2), u in proptest::collection::vec(-5i64..=5, 2)) {
        check_hull(2, &xs, &u)?;
    }

    #[test]
    fn hull_3d_properties(xs in coords(3), u in proptest::collection::vec(-5i64..=5, 3)) {
        check_hull(3, &xs, &u)?;
    }

    #[test]
    fn hausdorff_is_zero_on_the_diagonal_and_symmetric(a in coords(2), b in coords(2)) {
        let (pa, pb) = (points(2, &a), points(2, &b));
        prop_assert_eq!(hausdorff_sq(&pa, &pa), Rational::new());
        prop_assert_eq!(hausdorff_sq(&pa, &pb), hausdorff_sq(&pb, &pa));
        // A translate by (1, 0) is at Hausdorff distance at most 1.
        let shifted: Vec<i64> = a.iter().enumerate().map(|(k, x)| if k % 2 == 0 { x + 1 } else { *x }).collect();
        prop_assert!(hausdorff_sq(&pa, &points(2, &shifted)) <= 1);
    }
}

#[test]
fn polytope_is_supported() {
    let r = run_quick(ID);
    assert_eq!(verdict(&r), Verdict::Supported, "{:?}", r.report.reason);
    // 3 witnesses × (support monotonicity, structure at T, speed, two precisions).
    assert_eq!(r.report.checks.len(), 12);
    let worst = crate::util::figure(&r, "worst_residual_over_tau");
    assert!(worst > 0.0 && worst <= 1.0, "{worst}");
    let abl = r
        .report
        .tables
        .iter()
        .find(|t| t.title.starts_with("Hypothesis ablations"))
        .expect("ablation table");
    assert_eq!(abl.rows.len(), 2);
}

#[test]
fn a_qk_that_is_not_positive_definite_is_rejected() {
    let text = spec_text(ID).replacen(
        "tokens = { uniform = [\"-5\", \"5\"], seed = 5003 }",
        "q = { diag = [\"1\", \"1\", \"-1\"] }\ntokens = { uniform = [\"-5\", \"5\"], seed = 5003 }",
        1,
    );
    let e = prepare_err(ID, &text);
    assert!(e.contains("instances[2].q"), "{e}");
    assert!(e.contains("QᵀK ≻ 0"), "{e}");
    assert!(e.contains("polytope.toml:"), "{e}");
}

#[test]
fn a_v_other_than_the_identity_is_rejected() {
    let text = spec_text(ID).replacen(
        "tokens = { uniform = [\"-5\", \"5\"], seed = 5003 }",
        "v = { diag = [\"1\", \"1\", \"1/2\"] }\ntokens = { uniform = [\"-5\", \"5\"], seed = 5003 }",
        1,
    );
    let e = prepare_err(ID, &text);
    assert!(e.contains("instances[2].v"), "{e}");
}

#[test]
fn a_tolerance_far_too_small_is_inconclusive() {
    let r = run_edited(ID, "tau_factor = \"10\"", "tau_factor = \"1/1000\"");
    assert_eq!(verdict(&r), Verdict::Inconclusive, "{:?}", r.report.reason);
}

/// Finding (issue 13): F1's support-function monotonicity is a theorem of the map that
/// the enclosures cannot prove once tokens converge; it must be a consistency reading
/// (observed: never certify nor refute), and no check of the claim may be certified.
#[test]
fn polytope_support_function_check_is_a_consistency_reading_not_certified() {
    use attncheck::verdict::CheckKind;
    let r = run_quick(ID);
    let support: Vec<_> = r
        .report
        .checks
        .iter()
        .filter(|c| c.name.contains("support function"))
        .collect();
    assert_eq!(support.len(), 3);
    for c in support {
        assert_eq!(c.kind, CheckKind::Consistency, "{}", c.name);
        assert!(c.detail.contains("consistency reading"), "{}", c.detail);
    }
    assert!(r
        .report
        .checks
        .iter()
        .all(|c| c.kind != CheckKind::Certified));
    assert!(r.certificate.is_none());
}
