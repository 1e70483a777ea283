//! Band reachability (`band-reach`, `band-reach-count`; expr/band.rs): the receptive
//! field of the last query after l layers of causal attention with a window of d + 1
//! tokens, against its closed form, at the bitset's word boundaries, and the
//! operation's domain and work bound at their edges.

use attncheck_kernel::expr::{self, Data};
use rug::Rational;

fn reach(len: i64, d: i64, layers: i64) -> Result<(Rational, Rational), String> {
    let one = |op: &str| {
        expr::eval_exact(&format!("({op} {len} {d} {layers})"), 64, &Data::new())
            .map(|v| v.expect("an exact integer"))
            .map_err(|e| e.to_string())
    };
    Ok((one("band-reach")?, one("band-reach-count")?))
}

/// e_{L−1} Aˡ with A[i][j] = 1 iff 0 ≤ i − j ≤ d is the contiguous run of the
/// positions L − 1 − min(l·d, L − 1) … L − 1: the reach is min(l·d, L − 1) and the
/// count one more. Lengths on either side of the 64-bit words of the bitset.
#[test]
fn band_reach_is_min_of_l_times_d_and_l_minus_1() {
    for len in [1i64, 2, 3, 63, 64, 65, 127, 128, 129, 191, 192, 193, 1000] {
        for d in [0i64, 1, 2, 5, 31, 63, 64, 65, 130, 999, 1000, 5000] {
            for layers in [1i64, 2, 3, 7, 16] {
                let r = (layers * d).min(len - 1);
                assert_eq!(
                    reach(len, d, layers),
                    Ok((Rational::from(r), Rational::from(r + 1))),
                    "L = {len}, d = {d}, l = {layers}"
                );
            }
        }
    }
}

/// 1 ≤ L ≤ 65536, d ≥ 0, 1 ≤ l ≤ 256: accepted at each bound, refused beyond it,
/// with the reason naming the operation.
#[test]
fn band_reach_domain_is_refused_beyond_its_bounds() {
    assert_eq!(reach(1, 0, 1), Ok((0.into(), 1.into())));
    assert_eq!(reach(65_536, 0, 256), Ok((0.into(), 1.into())));
    assert_eq!(reach(65_536, 1, 256), Ok((256.into(), 257.into())));
    for (len, d, layers) in [
        (0i64, 1i64, 1i64),
        (-5, 1, 1),
        (65_537, 1, 1),
        (10, -1, 1),
        (10, -1, 256),
        (10, -7, 3),
        (10, 1, 0),
        (10, 1, -1),
        (10, 1, 257),
    ] {
        for op in ["band-reach", "band-reach-count"] {
            let e = expr::eval_exact(&format!("({op} {len} {d} {layers})"), 64, &Data::new())
                .expect_err(&format!("({op} {len} {d} {layers})"));
            assert!(
                e.reason.contains(op) && e.reason.contains("needs 1 ≤ L ≤ 65536"),
                "({op} {len} {d} {layers}): {e}"
            );
        }
    }
}

/// The work bound l·L·min(d + 1, L) ≤ 2^32: exactly 2^32 is accepted (and computed),
/// one window more is refused before anything runs.
#[test]
fn band_reach_work_bound_admits_its_edge_and_refuses_beyond() {
    // l = 1, L = 2^16, min(d + 1, L) = 2^16: exactly 2^32 (d = L − 1, and d past L)
    for d in [65_535i64, 65_536, 1 << 40] {
        assert_eq!(
            reach(65_536, d, 1),
            Ok((65_535.into(), 65_536.into())),
            "d = {d}"
        );
    }
    // l = 2, L = 2^16: d + 1 = 2^15 + 1 is over by one window
    for (len, d, layers) in [
        (65_536i64, 32_768i64, 2i64),
        (65_536, 65_535, 2),
        (32_768, 1 << 40, 5),
    ] {
        let e = reach(len, d, layers).unwrap_err();
        assert!(
            e.contains("exceeds 2^32"),
            "L = {len}, d = {d}, l = {layers}: {e}"
        );
    }
}

/// L, d and l are exact integers: a fraction, written or computed (`(/ 7 2)`), and an
/// enclosure (`(sqrt 4)`, not exact) are refused naming the operation, in every
/// argument (data.rs's guard `q.denom() == 1` could be dropped and no test saw it: 7/2
/// was read as its numerator 7).
#[test]
fn band_reach_takes_exact_integers_only() {
    for args in [
        "7/2 1 1",
        "(/ 7 2) 1 1",
        "10 1/2 1",
        "10 (/ 3 2) 1",
        "10 1 (/ 5 2)",
        "(sqrt 4) 1 1",
    ] {
        for op in ["band-reach", "band-reach-count"] {
            let f = format!("({op} {args})");
            let e = expr::eval_exact(&f, 64, &Data::new()).expect_err(&f);
            assert!(
                e.reason.contains(op) && e.reason.contains("exact integers"),
                "{f}: {e}"
            );
        }
    }
    // the same values as integers are accepted
    assert_eq!(reach(7, 1, 1), Ok((1.into(), 2.into())));
}
