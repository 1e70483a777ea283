//! Unit tests of the certificate language (the conformance suite is
//! crates/attncheck-kernel/tests/).

use super::*;
use crate::SignMatrix;

#[test]
fn decides() {
    assert_eq!(
        check("(<= (exp (* -1/256 1179)) 1/100)", 128),
        Ok(Certainty::True)
    );
    assert_eq!(
        check("(> (exp (* -1/256 1179)) 1/100)", 128),
        Ok(Certainty::False)
    );
    assert_eq!(
        check("(< (exp -2) 0.13533528323661269190)", 128),
        Ok(Certainty::True)
    );
    assert_eq!(check("(= (sum i 1 4 i) 10)", 64), Ok(Certainty::True));
    assert_eq!(
        check("(forall r 1 50 (< (- (cos r) 1) 0))", 64),
        Ok(Certainty::True)
    );
    assert_eq!(check("(< (sin pi) 0)", 64), Ok(Certainty::Unknown));
    assert!(check("(< 1", 64).is_err());
    assert!(check("(foo 1 2)", 64).is_err());
    assert!(check("(< x 2)", 64).is_err());
}

/// The data operations against a naive exact computation (G by ±1 sums,
/// Λ = B G / d, E by its definition) on small random instances.
#[test]
#[allow(clippy::needless_range_loop)] // naive index loops are the point
fn data_operations_match_naive_definitions() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for trial in 0..6 {
        let (n, d) = (5 + trial, 50 + 17 * trial);
        let signs: Vec<bool> = (0..n * d).map(|_| next() % 2 == 1).collect();
        let s = SignMatrix::from_fn(n, d, |l, c| signs[l * d + c]);
        let g = |l: usize, j: usize| -> i64 { (0..d).map(|c| s.sign(l, c) * s.sign(j, c)).sum() };
        let rows: Vec<Vec<(usize, Rational)>> = (0..n)
            .map(|i| {
                let k = 1 + (next() % 3) as usize;
                let mut cols: Vec<usize> = (0..n).filter(|_| next() % 2 == 0).take(k).collect();
                if cols.is_empty() {
                    cols.push(i % n);
                }
                cols.into_iter()
                    .map(|c| {
                        (
                            c,
                            Rational::from(((next() % 40) as i64 - 10, 1 + (next() % 7) as i64)),
                        )
                    })
                    .collect()
            })
            .collect();
        let b = SparseRows {
            n,
            rows: rows.clone(),
        };
        b.validate().unwrap();
        let lam = |i: usize, j: usize| -> Rational {
            rows[i]
                .iter()
                .map(|(l, v)| Rational::from(v * g(*l, j)))
                .sum::<Rational>()
                / d as i64
        };
        let e = |i: usize, j: usize| -> Rational {
            rows[i]
                .iter()
                .filter(|(l, _)| *l != j)
                .map(|(l, v)| Rational::from(v * g(*l, j)))
                .sum::<Rational>()
                / d as i64
        };
        let supp = |i: usize| rows[i].iter().map(|(c, _)| *c).collect::<Vec<_>>();
        let t = Rational::from((1, 7));
        let mut gm = 0;
        let (mut em, mut am, mut bm) = (Rational::new(), None::<Rational>, None::<Rational>);
        let (mut ar, mut br) = (None::<Rational>, None::<Rational>);
        for l in 0..n {
            for j in 0..n {
                if l != j {
                    gm = gm.max(g(l, j).abs());
                }
            }
        }
        for i in 0..n {
            let sp = supp(i);
            let rs: Rational = rows[i].iter().map(|(_, v)| v.clone()).sum();
            let slack = Rational::from(2 * &t) * &rs;
            for j in 0..n {
                em = em.max(e(i, j).abs());
            }
            let mut a_i = Rational::new();
            for &j in &sp {
                for &jj in &sp {
                    a_i = a_i.max((e(i, j) - e(i, jj)).abs());
                }
            }
            am = Some(am.map_or(a_i.clone(), |m: Rational| m.max(a_i.clone())));
            ar = Some(ar.map_or(Rational::from(&a_i - &slack), |m: Rational| {
                m.max(Rational::from(&a_i - &slack))
            }));
            for j in (0..n).filter(|j| !sp.contains(j)) {
                for &jj in &sp {
                    let v = lam(i, j) - lam(i, jj);
                    let vr = Rational::from(&v - &slack);
                    bm = Some(bm.map_or(v.clone(), |m: Rational| m.max(v.clone())));
                    br = Some(br.map_or(vr.clone(), |m: Rational| m.max(vr.clone())));
                }
            }
        }
        let mut data = Data::new();
        data.insert("S".into(), Datum::Signs(s.clone()));
        data.insert("B".into(), Datum::Sparse(b));
        let ev = |f: &str| eval_exact(f, 64, &data).unwrap().unwrap();
        assert_eq!(ev("(gram-max-abs S)"), gm);
        assert_eq!(ev("(err-max S B)"), em);
        assert_eq!(ev("(lemma-a S B)"), am.unwrap());
        assert_eq!(ev("(lemma-a-row S B 1/7)"), ar.unwrap());
        if let Some(bm) = bm {
            assert_eq!(ev("(lemma-b S B)"), bm);
            assert_eq!(ev("(lemma-b-row S B 1/7)"), br.unwrap());
        }
        let all: Vec<Rational> = rows.iter().flatten().map(|(_, v)| v.clone()).collect();
        assert_eq!(ev("(entry-sum B)"), all.iter().cloned().sum::<Rational>());
        assert_eq!(ev("(entry-min B)"), all.iter().min().unwrap().clone());
        assert_eq!(ev("(entry-max B)"), all.iter().max().unwrap().clone());
        assert_eq!(ev("(cols S)"), d as i64);
        assert_eq!(ev("(rows B)"), n as i64);
        assert_eq!(
            check_with("(= (lemma-a S B) (lemma-a S B))", 64, &data),
            Ok(Certainty::True)
        );
        assert!(check_with("(< (gram-max-abs B) 1)", 64, &data).is_err());
        assert!(check_with("(< (gram-max-abs Q) 1)", 64, &data).is_err());
    }
}

#[test]
fn sandwich_centred_is_the_plain_sum() {
    for (d, f) in [(2u32, 0u32), (64, 0), (128, 1)] {
        for r in [-7i64, 1, 12, 17156] {
            let plain = format!(
                "(sum i {f} {} (- (cos (* {r} (exp (* (/ (* -2 i) {d}) (ln 10000))))) 1))",
                f + d / 2 - 1
            );
            let a = eval(&format!("(sandwich-centred {d} {f} {r})"), 128).unwrap();
            let b = eval(&plain, 128).unwrap();
            assert!(a.overlaps(&b), "d̄ = {d}, F = {f}, r = {r}");
            assert!(a.width_up() < 1e-25 && b.width_up() < 1e-25);
        }
    }
    // exactly 0 at r = 0, so `=` decides it
    assert_eq!(
        check("(= (sandwich-centred 128 0 0) 0)", 64),
        Ok(Certainty::True)
    );
    assert_eq!(
        check("(< (sandwich-centred 128 1 1) 0)", 64),
        Ok(Certainty::True)
    );
    // a bound variable as r, and the memo shared across a forall
    assert_eq!(
        check("(forall r 1 300 (and (<= -128 (sandwich-centred 256 0 r)) (< (sandwich-centred 256 0 r) 0)))", 64),
        Ok(Certainty::True)
    );
}

#[test]
fn sandwich_centred_rejects_bad_arguments() {
    for bad in [
        "(< (sandwich-centred 127 0 1) 0)",
        "(< (sandwich-centred 0 0 1) 0)",
        "(< (sandwich-centred 8192 0 1) 0)",
        "(< (sandwich-centred 128 2 1) 0)",
        "(< (sandwich-centred 128 0 1/2) 0)",
        "(< (sandwich-centred 128 0 pi) 0)",
        "(< (sandwich-centred (+ 64 64) 0 1) 0)",
        "(< (sandwich-centred 128 0) 0)",
    ] {
        assert!(check(bad, 64).is_err(), "{bad}");
    }
    // its cost counts against the work budget: d̄/2 terms per value of r, each a
    // product, a cosine and a difference
    let c = |op: &str| ops::lookup(op).unwrap().charge;
    let full = 1 + 2048 * (c("*") + c("cos") + c("-"));
    let one = "(forall r 1 1000 (< (sandwich-centred 4096 0 r) 0))";
    let once = work(&parse(one).unwrap());
    assert!(once >= 1000 * full, "{once}");
    // the statement's memo computes each value once: a repeated range pays lookups
    let rep = "(forall a 1 1000 (forall r 1 1000 (< (sandwich-centred 4096 0 r) 0)))";
    let rep = work(&parse(rep).unwrap());
    assert!(rep >= 1000 * full && rep < once + 1000 * 1000 * 16, "{rep}");
    // and so does a second obligation over the same values, but not over others
    let (e, other) = (
        parse(one).unwrap(),
        parse("(forall r 1001 2000 (< (sandwich-centred 4096 0 r) 0))").unwrap(),
    );
    let t = work_of_all([&e, &e, &other], &Data::new(), 128);
    assert!(t[1] - t[0] < 1000 * 16, "{t:?}");
    assert!(t[2] - t[1] >= 1000 * full, "{t:?}");
    // an r whose range the cost model does not know, or a range beyond the memo's
    // capacity, pays in full at every call
    let unknown = "(forall r 1 1000 (< (sandwich-centred 4096 0 (floor (* r pi))) 0))";
    assert!(work(&parse(unknown).unwrap()) >= 1000 * full);
    let beyond = "(forall a 1 100 (forall r 1 300000 (< (sandwich-centred 4096 0 r) 0)))";
    assert!(work(&parse(beyond).unwrap()) >= 100 * 300_000 * full);
    assert!(check(beyond, 64).is_err());
}

/// The ranges of `sandwich-centred` values counted: a value is new once, whatever the
/// order and overlap of the ranges that reach it.
#[test]
fn sandwich_values_are_counted_once_across_overlapping_ranges() {
    let mut seen = Vec::new();
    assert_eq!(cost::add_new(&mut seen, 5, 9), 5);
    assert_eq!(cost::add_new(&mut seen, 1, 3), 3);
    assert_eq!(cost::add_new(&mut seen, 2, 7), 1); // 4 only
    assert_eq!(seen, vec![(1, 9)]);
    assert_eq!(cost::add_new(&mut seen, 11, 12), 2);
    assert_eq!(cost::add_new(&mut seen, 10, 10), 1);
    assert_eq!(seen, vec![(1, 12)]);
    assert_eq!(cost::add_new(&mut seen, 0, 20), 9);
    assert_eq!(cost::add_new(&mut seen, 3, 2), 0);
    assert_eq!(cost::add_new(&mut seen, -5, -3), 3);
    assert_eq!(seen, vec![(-5, -3), (0, 20)]);
}

mod lemma_rows {
    use super::data::{lemma_row_big, lemma_row_small};
    use crate::SignMatrix;
    use proptest::prelude::*;
    use rug::{Integer, Rational};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// The i128 path of `lemma_row` gives the `Integer` path's three rationals,
        /// whenever it answers (it must for i64 numerators of this size).
        #[test]
        fn lemma_row_small_is_the_integer_path(
            n in 1usize..40,
            d in 1usize..200,
            seed in any::<u64>(),
            entries in proptest::collection::btree_map(0usize..40, (-(1i64 << 40)..(1i64 << 40), 1i64..50), 0..6),
        ) {
            let mut x = seed;
            let s = SignMatrix::from_fn(n, d, |_, _| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                x >> 63 == 1
            });
            let row: Vec<(usize, Rational)> = entries
                .into_iter()
                .filter(|(c, _)| *c < n)
                .map(|(c, (p, q))| (c, Rational::from((p, q))))
                .collect();
            prop_assume!(!row.is_empty());
            let mut den = Integer::from(1);
            for (_, v) in &row {
                den.lcm_mut(v.denom());
            }
            let nums: Vec<Integer> = row
                .iter()
                .map(|(_, v)| v.numer() * Integer::from(&den / v.denom()))
                .collect();
            let scale = Integer::from(&den * d as i64);
            let big = lemma_row_big(&s, &row, &nums, d as i64, scale.clone());
            let a: Option<Vec<i64>> = nums.iter().map(|a| a.to_i64()).collect();
            if let Some(a) = a {
                let small = lemma_row_small(&s, &row, &a, d as i64, &scale);
                prop_assert_eq!(small, Some(big));
            }
        }
    }
}
