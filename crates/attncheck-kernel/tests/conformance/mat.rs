//! Dense exact matrices ([`Mat`]) against naive definitions (cofactor determinants,
//! sums of products).

#![allow(clippy::needless_range_loop)] // index loops mirror the definitions

use crate::common::{q, random};
use attncheck_kernel::{Interval, Mat};
use proptest::prelude::*;
use rug::Rational;

fn m(rows: &[&[&str]]) -> Mat {
    Mat::from_rows(
        rows.iter()
            .map(|r| r.iter().map(|s| q(s)).collect())
            .collect(),
    )
}

/// The determinant by cofactor expansion along the first row (the textbook definition).
fn det(a: &Mat) -> Rational {
    let n = a.rows;
    if n == 0 {
        return Rational::from(1);
    }
    let mut s = Rational::new();
    for j in 0..n {
        let minor: Vec<Vec<Rational>> = (1..n)
            .map(|r| {
                (0..n)
                    .filter(|&c| c != j)
                    .map(|c| a.at(r, c).clone())
                    .collect()
            })
            .collect();
        let t: Rational = a.at(0, j) * det(&Mat::from_rows(minor));
        if j % 2 == 0 {
            s += t;
        } else {
            s -= t;
        }
    }
    s
}

/// The leading k × k block.
fn lead(a: &Mat, k: usize) -> Mat {
    Mat::from_rows((0..k).map(|i| a.row(i)[..k].to_vec()).collect())
}

/// Small integer-valued matrices (many zeros, so pivots vanish).
fn small(n: usize) -> impl Strategy<Value = Mat> {
    proptest::collection::vec(-2i64..=2, n * n).prop_map(move |v| Mat {
        rows: n,
        cols: n,
        data: v.into_iter().map(Rational::from).collect(),
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The product is Σ_l a_il b_lj; the transpose swaps indices; + and scale are
    /// entrywise.
    #[test]
    fn products_sums_and_transposes_match_their_definitions(seed in 0u64..1000, r in 1usize..4, c in 1usize..4, k in 1usize..4) {
        let (a, b) = (random(seed, r, k), random(seed + 1, k, c));
        let p = a.mul(&b);
        prop_assert_eq!((p.rows, p.cols), (r, c));
        for i in 0..r {
            for j in 0..c {
                let s: Rational = (0..k).map(|l| Rational::from(a.at(i, l) * b.at(l, j))).sum();
                prop_assert_eq!(p.at(i, j), &s);
            }
        }
        let t = a.transpose();
        prop_assert_eq!((t.rows, t.cols), (k, r));
        for i in 0..r {
            for l in 0..k {
                prop_assert_eq!(t.at(l, i), a.at(i, l));
            }
        }
        let a2 = random(seed + 2, r, k);
        let s = a.add(&a2);
        let x = q("-3/7");
        let sc = a.scale(&x);
        for i in 0..r {
            for l in 0..k {
                prop_assert_eq!(s.at(i, l).clone(), Rational::from(a.at(i, l) + a2.at(i, l)));
                prop_assert_eq!(sc.at(i, l).clone(), Rational::from(a.at(i, l) * &x));
            }
        }
    }

    /// leading_minors are the determinants of the leading blocks (0s after a zero
    /// pivot, as documented: elimination without pivoting stops there); the inverse
    /// exists exactly when det ≠ 0 and satisfies A·A⁻¹ = A⁻¹·A = I.
    #[test]
    fn minors_and_inverses_match_cofactor_determinants(a in (1usize..5).prop_flat_map(small)) {
        let d = a.rows;
        let minors = a.leading_minors();
        prop_assert_eq!(minors.len(), d);
        let mut zero_seen = false;
        for k in 1..=d {
            let want = det(&lead(&a, k));
            if zero_seen {
                prop_assert_eq!(&minors[k - 1], &Rational::new());
            } else {
                prop_assert_eq!(&minors[k - 1], &want, "k = {}", k);
                zero_seen = want == 0;
            }
        }
        match a.inverse() {
            Some(inv) => {
                prop_assert!(det(&a) != 0);
                prop_assert_eq!(a.mul(&inv), Mat::identity(d));
                prop_assert_eq!(inv.mul(&a), Mat::identity(d));
            }
            None => prop_assert_eq!(det(&a), Rational::new()),
        }
    }
}

#[test]
fn constructors_and_accessors() {
    let i3 = Mat::identity(3);
    assert_eq!(
        i3,
        m(&[&["1", "0", "0"], &["0", "1", "0"], &["0", "0", "1"]])
    );
    assert_eq!(Mat::zeros(2, 3).data, vec![Rational::new(); 6]);
    assert_eq!((Mat::zeros(2, 3).rows, Mat::zeros(2, 3).cols), (2, 3));
    let d = Mat::diag(&[q("2"), q("-1/2")]);
    assert_eq!(d, m(&[&["2", "0"], &["0", "-1/2"]]));
    let a = m(&[&["1", "2", "3"], &["4", "5", "6"]]);
    assert_eq!(a.at(1, 0), &q("4"));
    assert_eq!(a.row(1), &[q("4"), q("5"), q("6")][..]);
    assert!(!a.is_square() && i3.is_square());
    assert_eq!(Mat::from_rows(vec![]).rows, 0);
    assert_eq!(a.to_f64(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let third = m(&[&["1/3"]]).to_intervals(53);
    assert!(third[0].contains_rational(&q("1/3")) && !third[0].is_point());
    assert!(m(&[&["1/4"]]).to_intervals(53)[0].is_point());
    // Frobenius: Σ a², and its root enclosed
    assert_eq!(a.frobenius_sq(), q("91"));
    let f = m(&[&["3", "0"], &["0", "-4"]]).frobenius(53);
    assert!(f.is_point() && *f.lo() == 5);
    assert!(a
        .frobenius(64)
        .contains(&Interval::from_i64(200, 91).sqrt()));
}

#[test]
fn symmetry_definiteness_and_equal_rows() {
    let s = m(&[&["2", "1"], &["1", "2"]]);
    assert!(s.is_symmetric() && s.is_positive_definite());
    let ns = m(&[&["2", "1"], &["0", "2"]]);
    assert!(
        !ns.is_symmetric() && !ns.is_positive_definite(),
        "not symmetric"
    );
    let ns = m(&[&["2", "0"], &["1", "2"]]);
    assert!(!ns.is_symmetric(), "lower triangle differs");
    // symmetric, indefinite (second minor negative), semidefinite (a zero minor)
    assert!(!m(&[&["1", "2"], &["2", "1"]]).is_positive_definite());
    assert!(!m(&[&["1", "1"], &["1", "1"]]).is_positive_definite());
    assert!(!m(&[&["-1", "0"], &["0", "-1"]]).is_positive_definite());
    assert!(
        !m(&[&["1", "2", "3"], &["2", "1", "0"]]).is_symmetric(),
        "not square"
    );
    // the inverse needs a row swap when the first pivot is 0
    let p = m(&[&["0", "1"], &["1", "0"]]);
    assert_eq!(p.inverse().unwrap(), p);
    let a = m(&[&["0", "2", "1"], &["1", "1", "0"], &["3", "0", "1"]]);
    assert_eq!(a.mul(&a.inverse().unwrap()), Mat::identity(3));
    assert_eq!(m(&[&["1", "2"], &["2", "4"]]).inverse(), None);
    // equal rows: the first pair (i < j)
    let e = m(&[&["1", "2"], &["3", "4"], &["1", "2"], &["3", "4"]]);
    assert_eq!(e.equal_rows(), Some((0, 2)));
    let e = m(&[&["1", "2"], &["3", "4"], &["3", "4"]]);
    assert_eq!(e.equal_rows(), Some((1, 2)));
    assert_eq!(m(&[&["1", "2"], &["2", "1"]]).equal_rows(), None);
}
