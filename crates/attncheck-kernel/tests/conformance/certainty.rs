//! Three-valued logic, against its truth tables (Kleene's strong logic: `False`
//! dominates a conjunction, `Unknown` is never a pass), and the comparisons of
//! intervals at their boundary cases (touching, equal points, one shared end), each
//! answer written out: a predicate that answered `Unknown` more often, or `True`/`False`
//! at a boundary where the other is right, fails here.

use attncheck_kernel::{Certainty, Interval};
use Certainty::{False, True, Unknown};

const ALL: [Certainty; 3] = [True, False, Unknown];

/// The reference conjunction: `False` if either is, else `True` if both are, else `Unknown`.
fn and_table(a: Certainty, b: Certainty) -> Certainty {
    if a == False || b == False {
        False
    } else if a == True && b == True {
        True
    } else {
        Unknown
    }
}

#[test]
fn certainty_predicates_and_negation_follow_the_truth_table() {
    for (c, is_true, is_false, not) in [
        (True, true, false, False),
        (False, false, true, True),
        (Unknown, false, false, Unknown),
    ] {
        assert_eq!(c.is_true(), is_true, "{c:?}.is_true()");
        assert_eq!(c.is_false(), is_false, "{c:?}.is_false()");
        assert_eq!(!c, not, "!{c:?}");
        assert_eq!(!!c, c, "double negation of {c:?}");
    }
    assert_eq!(Certainty::exact(true), True);
    assert_eq!(Certainty::exact(false), False);
}

#[test]
fn conjunction_follows_the_truth_table_in_both_orders() {
    for a in ALL {
        for b in ALL {
            assert_eq!(a.and(b), and_table(a, b), "{a:?} and {b:?}");
        }
    }
}

/// `all` is the conjunction of every element, `True` for none; a `False` anywhere (also
/// after an `Unknown`, also as the last element) makes it `False`.
#[test]
fn all_is_the_conjunction_of_every_element() {
    assert_eq!(Certainty::all([]), True);
    for a in ALL {
        assert_eq!(Certainty::all([a]), a, "[{a:?}]");
        for b in ALL {
            for c in ALL {
                let want = and_table(and_table(a, b), c);
                assert_eq!(Certainty::all([a, b, c]), want, "[{a:?}, {b:?}, {c:?}]");
            }
        }
    }
    assert_eq!(Certainty::all(vec![True; 1000]), True);
    let mut v = vec![True; 1000];
    v[999] = Unknown;
    assert_eq!(Certainty::all(v.clone()), Unknown);
    v[500] = False;
    assert_eq!(Certainty::all(v), False);
}

/// The serialised names (reports and certificates show them).
#[test]
fn certainty_serialises_in_lower_case() {
    for (c, s) in [
        (True, "\"true\""),
        (False, "\"false\""),
        (Unknown, "\"unknown\""),
    ] {
        assert_eq!(serde_json::to_string(&c).unwrap(), s);
        assert_eq!(serde_json::from_str::<Certainty>(s).unwrap(), c);
    }
}

fn iv(lo: i64, hi: i64) -> Interval {
    Interval::from_i64(53, lo).hull(&Interval::from_i64(53, hi))
}

/// Every comparison at the boundary cases, against the answer written out:
/// `lt` is `True` iff a.hi < b.lo and `False` iff a.lo ≥ b.hi; `le` is `True` iff
/// a.hi ≤ b.lo and `False` iff a.lo > b.hi; `eq_exact` is `True` only for two equal
/// points and `False` iff the enclosures are disjoint.
#[test]
fn comparisons_at_touching_and_equal_ends() {
    // (a, b, lt, le, eq)
    let cases = [
        // disjoint, a below
        ((0, 1), (2, 3), True, True, False),
        // disjoint, a above
        ((2, 3), (0, 1), False, False, False),
        // touching at one point: a.hi = b.lo
        ((0, 1), (1, 2), Unknown, True, Unknown),
        // touching the other way: a.lo = b.hi
        ((1, 2), (0, 1), False, Unknown, Unknown),
        // overlapping
        ((0, 2), (1, 3), Unknown, Unknown, Unknown),
        // equal points
        ((1, 1), (1, 1), False, True, True),
        // distinct points
        ((1, 1), (2, 2), True, True, False),
        ((2, 2), (1, 1), False, False, False),
        // a point at an end of the other
        ((1, 1), (1, 2), Unknown, True, Unknown),
        ((2, 2), (1, 2), False, Unknown, Unknown),
        ((1, 2), (2, 2), Unknown, True, Unknown),
        ((1, 2), (1, 1), False, Unknown, Unknown),
        // equal non-points
        ((1, 2), (1, 2), Unknown, Unknown, Unknown),
        // nested
        ((0, 3), (1, 2), Unknown, Unknown, Unknown),
    ];
    for ((al, ah), (bl, bh), lt, le, eq) in cases {
        let (a, b) = (iv(al, ah), iv(bl, bh));
        let what = format!("[{al}, {ah}] vs [{bl}, {bh}]");
        assert_eq!(a.lt(&b), lt, "lt {what}");
        assert_eq!(a.le(&b), le, "le {what}");
        assert_eq!(b.gt(&a), lt, "gt {what}");
        assert_eq!(b.ge(&a), le, "ge {what}");
        assert_eq!(a.eq_exact(&b), eq, "eq {what}");
        assert_eq!(b.eq_exact(&a), eq, "eq (swapped) {what}");
        // overlaps: they share a point exactly when equality is not refuted
        assert_eq!(a.overlaps(&b), eq != False, "overlaps {what}");
        assert_eq!(b.overlaps(&a), eq != False, "overlaps (swapped) {what}");
    }
}

/// `gt` and `ge` are not `lt` and `le` in disguise: on intervals where `a < b` and
/// `a > b` differ, each gives its own answer.
#[test]
fn gt_and_ge_are_the_converse_relations() {
    let (a, b) = (iv(0, 1), iv(2, 3));
    assert_eq!(a.gt(&b), False);
    assert_eq!(a.ge(&b), False);
    assert_eq!(b.gt(&a), True);
    assert_eq!(b.ge(&a), True);
    let (c, d) = (iv(0, 1), iv(1, 2));
    assert_eq!(c.ge(&d), Unknown);
    assert_eq!(d.ge(&c), True);
    assert_eq!(d.gt(&c), Unknown);
    assert_eq!(c.gt(&d), False);
}
