//! Unit tests of the kept walk ([`super::LayerData`]'s "One walk per precision"): one
//! walk per precision, answers equal to separate walks', no answer across precisions or
//! data, and the budget at its edge. `WALKS` counts the walks of the test's thread.

use super::*;
use std::cell::Cell;

thread_local! {
    /// Walks of the layer map on this thread (each test runs on its own).
    pub(super) static WALKS: Cell<usize> = const { Cell::new(0) };
}

fn walks() -> usize {
    WALKS.with(Cell::get)
}

fn q(s: &str) -> Rational {
    s.parse().unwrap()
}

/// A 3-token, d = 2 datum with a non-symmetric QᵀK, two runs; `shift` moves one token
/// of the second run (another datum).
fn datum(shift: &str) -> LayerData {
    let m = |v: [&str; 4]| Mat::from_rows(vec![vec![q(v[0]), q(v[1])], vec![q(v[2]), q(v[3])]]);
    let x = |a: &str| {
        Mat::from_rows(vec![
            vec![q("1"), q("-1/2")],
            vec![q(a), q("3/4")],
            vec![q("-1"), q("1/3")],
        ])
    };
    LayerData::new(
        m(["1", "1/2", "0", "1"]),
        m(["1", "0", "-1/3", "1"]),
        m(["-1", "1/4", "0", "-1/2"]),
        q("1/10"),
        6,
        vec![x("0"), x(shift)],
    )
    .unwrap()
}

/// Every quantity at `prec`, asked in the order given by `order` (0: norms,
/// 1: distances, 2: partition sums, 3: coordinates), all steps and runs.
fn answers(l: &LayerData, prec: u32, order: &[u8]) -> Vec<Interval> {
    let r = |i: usize| Rational::from(i);
    let mut out = Vec::new();
    for &what in order {
        for k in 0..=l.steps() {
            for run in 0..2 {
                out.push(
                    match what {
                        0 => l.max_sqnorm(prec, &r(run), &r(k)),
                        1 => l.max_sqdist(prec, &r(run), &r(1 - run), &r(k)),
                        2 => l.partition(prec, &r(run), &r(k)),
                        _ => l.coord(prec, &r(run), &r(k), &r(2), &r(1)),
                    }
                    .unwrap(),
                );
            }
        }
    }
    out
}

/// Quantity `what` (as in [`answers`]) of run 0 at step `k`, at `prec`.
fn answers_at(l: &LayerData, prec: u32, what: u8, k: usize) -> Interval {
    let (z, k) = (Rational::new(), Rational::from(k));
    match what {
        0 => l.max_sqnorm(prec, &z, &k),
        _ => l.partition(prec, &z, &k),
    }
    .unwrap()
}

/// One walk answers every quantity at its precision, in any order, with exactly the
/// enclosures separate walks give (a fresh datum per quantity).
#[test]
fn one_walk_per_precision_answers_as_separate_walks() {
    let fresh: Vec<Vec<Interval>> = (0..4u8).map(|w| answers(&datum("1/2"), 96, &[w])).collect();
    for order in [[0u8, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]] {
        let l = datum("1/2");
        let before = walks();
        let got = answers(&l, 96, &order);
        assert_eq!(walks() - before, 1, "{order:?}: one walk");
        let want: Vec<Interval> = order
            .iter()
            .flat_map(|&w| fresh[w as usize].clone())
            .collect();
        assert_eq!(got, want, "{order:?}");
    }
}

/// Hostile: the kept walk is at one precision, the question at another. Asked at 64
/// bits (kept), then 128 (kept, replacing it), then 64 again, every answer is the one
/// a fresh datum gives at the precision asked, at that precision, and the 64-bit
/// quantities not yet asked walk again; a datum with other tokens, asked after this
/// one, answers for its own tokens (the caches are per datum; clones share them).
#[test]
fn a_kept_walk_answers_only_its_own_precision_and_datum() {
    let l = datum("1/2");
    let at64 = answers(&l, 64, &[2]);
    let before = walks();
    let at128 = answers(&l, 128, &[0, 2]);
    assert_eq!(walks() - before, 1);
    let again64 = answers(&l.clone(), 64, &[0, 1, 3]);
    assert_eq!(walks() - before, 2, "the 64-bit walk is not kept any more");
    assert_eq!(at64, answers(&datum("1/2"), 64, &[2]));
    assert_eq!(at128, answers(&datum("1/2"), 128, &[0, 2]));
    assert_eq!(again64, answers(&datum("1/2"), 64, &[0, 1, 3]));
    assert!(at128.iter().all(|i| i.prec() == 128));
    assert!(again64.iter().all(|i| i.prec() == 64));
    let other = datum("2/3");
    let theirs = answers(&other, 128, &[0, 1, 2, 3]);
    assert_eq!(theirs, answers(&datum("2/3"), 128, &[0, 1, 2, 3]));
    assert_ne!(theirs, answers(&l, 128, &[0, 1, 2, 3]));
}

/// The kept-walk budget at its edge: n = 1, d = 8, four runs, at 512 bits, K = 4095
/// takes (K + 1)·4·8·2·(512 + 512) = 2^28 bits exactly and is kept (norms and
/// partition sums from one walk); K = 4096 is over, not kept, and each quantity walks.
#[test]
fn the_kept_walk_budget_at_its_edge() {
    assert_eq!(MAX_KEPT_BITS, 1 << 28);
    let x = |a: i32| {
        Mat::from_rows(vec![(0..8)
            .map(|c| Rational::from((a + c) % 3) / 4)
            .collect()])
    };
    let row = || Mat::from_rows(vec![(0..8).map(|c| Rational::from(c % 2)).collect()]);
    let minus_i = Mat::identity(8).scale(&Rational::from(-1));
    let l = |steps| {
        LayerData::new(
            row(),
            row(),
            minus_i.clone(),
            q("1/64"),
            steps,
            (0..4).map(x).collect(),
        )
        .unwrap()
    };
    let z = Rational::new();
    let fresh = |steps, what| answers_at(&l(steps), 512, what, steps);
    for (steps, want) in [(4095, 1), (4096, 2)] {
        let l = l(steps);
        let before = walks();
        let k = Rational::from(steps);
        let a = l.max_sqnorm(512, &z, &k).unwrap();
        let b = l.partition(512, &z, &k).unwrap();
        assert_eq!(walks() - before, want, "K = {steps}");
        assert_eq!((a, b), (fresh(steps, 0), fresh(steps, 2)), "K = {steps}");
    }
}

/// `visit_iterates` shows x^0, …, x^K of every run in order, and its walk is the one the
/// queries at that precision then read (on the datum and its clones): no second walk, the
/// same answers as a fresh datum's; at another precision the queries walk again.
#[test]
fn visit_iterates_is_the_walk_the_queries_read() {
    let fresh = answers(&datum("1/2"), 96, &[0, 1, 2, 3]);
    let l = datum("1/2");
    let before = walks();
    let mut seen = Vec::new();
    l.visit_iterates(96, |k, xs| {
        assert_eq!(xs.len(), 2);
        assert!(xs.iter().all(|x| x.len() == 3 * 2));
        seen.push(k);
    })
    .unwrap();
    assert_eq!(seen, (0..=l.steps()).collect::<Vec<_>>());
    assert_eq!(walks() - before, 1);
    let got = answers(&l.clone(), 96, &[0, 1, 2, 3]);
    assert_eq!(walks() - before, 1, "the queries read the visited walk");
    assert_eq!(got, fresh);
    // the coordinates the visitor saw are the ones `coord` answers (token 2, coordinate 1)
    let mut last = None;
    l.visit_iterates(96, |k, xs| {
        if k == l.steps() {
            last = Some(xs[1][2 * 2 + 1].clone());
        }
    })
    .unwrap();
    let (r1, kk) = (Rational::from(1), Rational::from(l.steps()));
    let c = l
        .coord(96, &r1, &kk, &Rational::from(2), &Rational::from(1))
        .unwrap();
    assert_eq!(last, Some(c));
    assert_eq!(walks() - before, 1);
    answers(&l, 64, &[0]);
    assert_eq!(walks() - before, 2, "another precision walks again");
}
