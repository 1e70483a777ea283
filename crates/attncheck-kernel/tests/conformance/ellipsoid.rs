//! Bound 6's dual check (crates/attncheck-kernel/src/ellipsoid.rs) at the edges of what it
//! admits: the ends of the multiplier's range and the problems it refuses as malformed.
//! (Its tightness and soundness on random ellipsoids are the module's own unit tests.)

use attncheck_kernel::ellipsoid::{bound_at, propose, Problem};
use rug::{Integer, Rational};

fn ints(m: &[&[i64]]) -> Vec<Vec<Integer>> {
    m.iter()
        .map(|r| r.iter().map(|&x| Integer::from(x)).collect())
        .collect()
}

/// The ends of the admissible set are in it: λ = 2^±200 are admitted where λQ − QKQ is
/// positive definite (with K = 0 every λ > 0 is), one step beyond either end is refused;
/// t = 0, r² < 0 and a matrix of n rows whose rows are not n long are malformed (r² = 0,
/// a point, is not).
#[test]
fn the_ends_of_the_admissible_set_and_of_a_well_formed_problem() {
    // the hand example: Q = I, K = diag(4, 1), c = (1, 0), s = t = r² = 1
    let (a, b) = (ints(&[&[1, 0], &[0, 1]]), ints(&[&[4, 0], &[0, 1]]));
    let c = [Integer::from(1), Integer::from(0)];
    let one = Integer::from(1);
    let p = Problem {
        a: &a,
        b: &b,
        c: &c,
        s: &one,
        t: &one,
        r2: &one,
    };
    let cap = Integer::from(1) << 200u32;
    let (lo, hi) = (Rational::from((1, cap.clone())), Rational::from(cap));
    assert!(bound_at(&p, &hi).is_some(), "λ = 2^200 is admissible");
    assert_eq!(bound_at(&p, &Rational::from(&hi * 2u32)), None);
    // K = 0: U(λ) = λ·r² + 0, admitted down to 2^-200, not below
    let zero_k = ints(&[&[0, 0], &[0, 0]]);
    let flat = Problem { b: &zero_k, ..p };
    assert_eq!(bound_at(&flat, &lo), Some(lo.clone()));
    assert_eq!(bound_at(&flat, &Rational::from(&lo / 2u32)), None);
    let (zero, minus) = (Integer::new(), Integer::from(-1));
    let ragged = vec![
        vec![Integer::from(1), Integer::new(), Integer::new()],
        vec![Integer::new(), Integer::from(1)],
    ];
    for bad in [
        Problem { t: &zero, ..p },
        Problem { r2: &minus, ..p },
        Problem { a: &ragged, ..p },
        Problem { b: &ragged, ..p },
    ] {
        assert_eq!(bound_at(&bad, &Rational::from(8)), None);
        assert_eq!(propose(&bad), None);
    }
    // r² = 0: the ball is the point v = 0, T = f(0) = cKcᵀ = 4, and
    // U(8) = 8·0 + cKcᵀ + bN⁻¹bᵀ = 0 + 4 + 16/4 = 8 ≥ T
    let point = Problem { r2: &zero, ..p };
    assert_eq!(
        bound_at(&point, &Rational::from(8)),
        Some(Rational::from(8))
    );
}

/// Q = I, K = κI, c = (1, 0), r² = 1 (scales s, t = 1): T = max κ|c + v|² over |v| ≤ 1 = 4κ,
/// attained by the dual at λ = 2κ (U(λ) = λ + κ + κ²/(λ − κ)).
fn scaled_identity(kappa_num: &Integer, s: &Integer, f: impl FnOnce(&Problem)) {
    let id = |x: &Integer| {
        vec![
            vec![x.clone(), Integer::new()],
            vec![Integer::new(), x.clone()],
        ]
    };
    let (a, b) = (id(s), id(kappa_num));
    let c = [Integer::from(1), Integer::from(0)];
    let one = Integer::from(1);
    f(&Problem {
        a: &a,
        b: &b,
        c: &c,
        s,
        t: &one,
        r2: &one,
    });
}

/// The untrusted search finds the dual's minimiser far below λ = 1 (it halves down from
/// its first admissible λ; κ = 2⁻¹², so λ* = 2⁻¹¹ and U* = T = 2⁻¹⁰, within 10⁻⁹), and
/// still proposes an admissible λ when the admissible set starts just below 2^199, the
/// largest λ its doubling tries (κ = 1.5·2^198: the bound is then not tight, but exists,
/// and is ≥ T).
#[test]
fn the_search_reaches_multipliers_far_below_and_far_above_one() {
    let s = Integer::from(1) << 12u32;
    scaled_identity(&Integer::from(1), &s, |p| {
        let u = attncheck_kernel::ellipsoid::bound(p).expect("an admissible λ");
        let t = Rational::from((1, 1024));
        let tol = Rational::from((1_000_000_001, 1_000_000_000));
        assert!(u >= t && u <= Rational::from(&t * &tol), "{u}");
    });
    let kappa = Integer::from(3) << 197u32;
    scaled_identity(&kappa, &Integer::from(1), |p| {
        let u = attncheck_kernel::ellipsoid::bound(p).expect("an admissible λ below 2^200");
        let t = Integer::from(&kappa * 4u32);
        assert!(u >= t, "U below T: {u}");
    });
}

/// The search proposes within [2⁻²⁰⁰, 2¹⁹⁹], so that `bound`'s raise of its λ by at most
/// 2⁻⁸ stays inside `bound_at`'s range: with the admissible set starting far below 2⁻²⁰⁰
/// (κ = 2⁻²⁵⁰) it still proposes λ ≥ 2⁻²⁰⁰ and a bound exists (≥ T, not tight); with it
/// starting above 2¹⁹⁹ (κ = 1.5·2¹⁹⁹) it proposes nothing.
#[test]
fn the_search_proposes_within_the_range_the_check_admits() {
    let s = Integer::from(1) << 250u32;
    scaled_identity(&Integer::from(1), &s, |p| {
        let lam = propose(p).expect("a proposal");
        assert!(
            lam >= Rational::from((1, Integer::from(1) << 200u32)),
            "{lam}"
        );
        let u = attncheck_kernel::ellipsoid::bound(p).expect("an admissible λ");
        assert!(u >= Rational::from((4, s.clone())), "U below T: {u}");
    });
    let kappa = Integer::from(3) << 198u32;
    scaled_identity(&kappa, &Integer::from(1), |p| {
        assert_eq!(propose(p), None);
        assert_eq!(attncheck_kernel::ellipsoid::bound(p), None);
    });
}

/// The search's bisection finds the admissible set's edge, not the power of two above it:
/// with c = 0, U(λ) = λ·r² is least at the edge itself (K = ¾I, Q = I, r² = 1: T = ¾,
/// U(λ) = λ for λ > ¾), which lies between the halving's last two powers of two (½ and 1),
/// so the bound is ¾ raised by at most 2⁻¹⁹ of itself, not 1.
#[test]
fn the_search_finds_the_edge_between_two_powers_of_two() {
    let (a, b) = (ints(&[&[4, 0], &[0, 4]]), ints(&[&[3, 0], &[0, 3]]));
    let c = [Integer::new(), Integer::new()];
    let (four, one) = (Integer::from(4), Integer::from(1));
    let p = Problem {
        a: &a,
        b: &b,
        c: &c,
        s: &four,
        t: &one,
        r2: &one,
    };
    let u = attncheck_kernel::ellipsoid::bound(&p).expect("an admissible λ");
    let t = Rational::from((3, 4));
    let tol = Rational::from(1) + Rational::from((1, Integer::from(1) << 19u32));
    assert!(u >= t && u <= Rational::from(&t * &tol), "{u}");
}

/// The golden-section search runs over [edge, U(edge)/r²] — an upper end that holds the
/// minimiser (U ≥ λr²) and keeps the interval short when r² is large. Q = I,
/// K = diag(4, 1), c = (0, 2⁵²), r² = 2¹⁰⁰: U(λ) = λ·2¹⁰⁰ + 2¹⁰⁴ + 2¹⁰⁴/(λ − 1) on λ > 4,
/// least at λ* = 5 inside the set, U* = T = 25·2¹⁰⁰ (the S-lemma is exact here), while the
/// edge gives U(4) = 25⅓·2¹⁰⁰. Searched up to 2¹⁹⁹ instead, 200 golden steps would leave a
/// bracket about 2⁶⁰ wide and the best candidate the edge.
#[test]
fn the_search_finds_an_interior_minimiser_when_the_radius_is_large() {
    let (a, b) = (ints(&[&[1, 0], &[0, 1]]), ints(&[&[4, 0], &[0, 1]]));
    let c = [Integer::new(), Integer::from(1) << 52u32];
    let one = Integer::from(1);
    let r2 = Integer::from(1) << 100u32;
    let p = Problem {
        a: &a,
        b: &b,
        c: &c,
        s: &one,
        t: &one,
        r2: &r2,
    };
    let u = attncheck_kernel::ellipsoid::bound(&p).expect("an admissible λ");
    let t = Rational::from(Integer::from(25) << 100u32);
    let tol = Rational::from((1_000_001, 1_000_000));
    assert!(u >= t && u <= Rational::from(&t * &tol), "{u}");
}
