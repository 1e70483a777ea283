//! The hull monotonicity proven once and for all in Coq (coq/HullMonotone.v, issue #39
//! "Beyond"): for the discrete map clusters/polytope, clusters/paranormal and
//! clusters/hyperplanes run (the layer x^{k+1} = x^k + hVPx^k with softmax attention, and
//! z^k with R^k z^k = x^k, R = I + hV), every left eigenvector φ of V with eigenvalue
//! λ ≥ 0 has max_i φ(z_i^k) nonincreasing and min_i nondecreasing, for every h ≥ 0 and
//! every step. Hostile: Coq rejects the core lemma with weights not required
//! nonnegative or summing to at most 1, the functional lemma without λ ≥ 0 (each false:
//! counterexamples below), and an `Admitted`. A run of the claims' own map
//! (`DiscreteMap`, `Form::LayerRescaled`) agrees with the lemma's map.

use crate::coq::have_coq;
use attncheck::coq;
use attncheck::dynamics::discrete::{DiscreteMap, Form};
use attncheck::dynamics::model::{Mat, System};
use attncheck::kernel::Interval;
use rug::Rational;

fn text() -> &'static str {
    coq::LEMMAS
        .iter()
        .find(|(n, _)| *n == "HullMonotone")
        .map(|(_, t)| *t)
        .expect("the lemma is shipped")
}

/// What Coq's `Print Assumptions` lists for coq/HullMonotone.v (sorted): the axioms of
/// Coq's standard reals it rests on, nothing else.
const HULL_ASSUMPTIONS: &[&str] = &[
    "ClassicalDedekindReals.sig_forall_dec",
    "ClassicalDedekindReals.sig_not_dec",
    "FunctionalExtensionality.functional_extensionality_dep",
];

/// The statements the notes of the three specs and docs/papers/clusters.md cite: Coq
/// checks that each theorem has exactly this type.
const STATEMENTS: &[(&str, &str)] = &[
    (
        "convex_step_max_min",
        r"forall (n : nat) (w : nat -> nat -> R) (a b : nat -> R),
           (1 <= n)%nat ->
           ((forall i j, (i < n)%nat -> (j < n)%nat -> 0 <= w i j) /\
            (forall i, (i < n)%nat -> hsum n (w i) = 1)) ->
           (forall i, (i < n)%nat -> b i = hsum n (fun j => w i j * a j)) ->
           tmax n b <= tmax n a /\ tmin n a <= tmin n b",
    ),
    (
        "functional_step",
        r"forall (n d : nat) (M V : nat -> nat -> R) (h lam : R) (phi : nat -> R)
             (x0 : nat -> nat -> R) (z : nat -> nat -> nat -> R),
           0 <= h -> 0 <= lam ->
           (forall b, (b < d)%nat -> hsum d (fun a => phi a * V a b) = lam * phi b) ->
           (forall k i a, (i < n)%nat -> (a < d)%nat ->
              Nat.iter k (mv d (fun a b => eye a b + h * V a b)) (z k i) a
              = Nat.iter k (lstep n d M V h) x0 i a) ->
           forall k i, (i < n)%nat ->
             fval d phi (z (S k) i) =
             (fval d phi (z k i) + h * lam * hsum n (fun j =>
                attn n d M (Nat.iter k (lstep n d M V h) x0) i j * fval d phi (z k j)))
             / (1 + h * lam)",
    ),
    (
        "functional_antitone",
        r"forall (n d : nat) (M V : nat -> nat -> R) (h lam : R) (phi : nat -> R)
             (x0 : nat -> nat -> R) (z : nat -> nat -> nat -> R),
           (1 <= n)%nat -> 0 <= h -> 0 <= lam -> left_eigen d V lam phi -> rescaled n d M V h x0 z ->
           forall k l, (k <= l)%nat ->
             tmax n (fun i => fval d phi (z l i)) <= tmax n (fun i => fval d phi (z k i)) /\
             tmin n (fun i => fval d phi (z k i)) <= tmin n (fun i => fval d phi (z l i))",
    ),
    (
        "coordinate_max_min",
        r"forall (n d : nat) (M V : nat -> nat -> R) (h lam : R) (c : nat)
             (x0 : nat -> nat -> R) (z : nat -> nat -> nat -> R),
           (1 <= n)%nat -> 0 <= h -> 0 <= lam -> (c < d)%nat ->
           (forall b, (b < d)%nat -> V c b = lam * eye c b) -> rescaled n d M V h x0 z ->
           forall k,
             tmax n (fun i => z (S k) i c) <= tmax n (fun i => z k i c) /\
             tmin n (fun i => z k i c) <= tmin n (fun i => z (S k) i c)",
    ),
    (
        "support_max_min",
        r"forall (n d : nat) (M : nat -> nat -> R) (h : R) (u : nat -> R)
             (x0 : nat -> nat -> R) (z : nat -> nat -> nat -> R),
           (1 <= n)%nat -> 0 <= h -> rescaled n d M eye h x0 z ->
           forall k,
             tmax n (fun i => fval d u (z (S k) i)) <= tmax n (fun i => fval d u (z k i)) /\
             tmin n (fun i => fval d u (z k i)) <= tmin n (fun i => fval d u (z (S k) i))",
    ),
    (
        "hull_step",
        r"forall (n d : nat) (M : nat -> nat -> R) (h : R)
             (x0 : nat -> nat -> R) (z : nat -> nat -> nat -> R),
           (1 <= n)%nat -> 0 <= h -> rescaled n d M eye h x0 z ->
           forall k i, (i < n)%nat ->
             exists w : nat -> R, (forall j, (j < n)%nat -> 0 <= w j) /\ hsum n w = 1 /\
               forall a, (a < d)%nat -> z (S k) i a = hsum n (fun j => w j * z k j a)",
    ),
];

/// `text` with `from` replaced by `to` inside the item starting at `item` (up to the next
/// `Qed.`), which must contain `from` exactly once.
fn weaken(text: &str, item: &str, from: &str, to: &str) -> String {
    let a = text.find(item).unwrap_or_else(|| panic!("{item}"));
    let b = a + text[a..].find("Qed.").unwrap_or(text.len() - a);
    assert_eq!(text[a..b].matches(from).count(), 1, "{item}: {from}");
    format!(
        "{}{}{}",
        &text[..a],
        text[a..b].replacen(from, to, 1),
        &text[b..]
    )
}

#[test]
fn the_hull_monotone_lemma_is_proven_in_coq() {
    let text = text();
    assert!(!text.contains("Admitted") && !text.contains("Axiom"));
    // the map, as src/dynamics/discrete.rs runs it, and one Print Assumptions for all
    for part in [
        "Definition attn (n d : nat) (M : nat -> nat -> R) (x : nat -> nat -> R) (i j : nat) : R :=\n  exp (logit d M x i j) / hsum n (fun l => exp (logit d M x i l)).",
        "Definition lstep (n d : nat) (M V : nat -> nat -> R) (h : R) (x : nat -> nat -> R) : nat -> nat -> R :=\n  fun i a => x i a + h * mv d V (fun b => hsum n (fun j => attn n d M x i j * x j b)) a.",
        "Definition rmat (h : R) (V : nat -> nat -> R) (a b : nat) : R := eye a b + h * V a b.",
        "forall k i a, (i < n)%nat -> (a < d)%nat -> rpow d h V k (z k i) a = liter n d M V h x0 k i a.",
        "Print Assumptions hull_monotone_lemmas.",
    ] {
        assert!(text.contains(part), "{part}");
    }
    if !have_coq("hull monotone") {
        return;
    }
    let limits = coq::Limits::DEFAULT;
    let mut documented = text.to_string();
    for (k, (name, statement)) in STATEMENTS.iter().enumerate() {
        documented.push_str(&format!(
            "\nDefinition documented_{k} : {statement} := {name}.\n"
        ));
    }
    let done = coq::check_lemmas(&[("HullMonotone", &documented)], &limits)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut axioms = done[0].1.clone();
    axioms.sort();
    assert_eq!(axioms, HULL_ASSUMPTIONS, "{axioms:?}");
    assert!(axioms.iter().all(|a| coq::axiom_allowed(a)));
    // a statement other than the documented one does not check: the max nondecreasing
    let (_, support) = STATEMENTS[4];
    let wrong = format!(
        "{text}\nDefinition documented_wrong : {} := support_max_min.\n",
        support.replacen(
            "tmax n (fun i => fval d u (z (S k) i)) <= tmax n (fun i => fval d u (z k i))",
            "tmax n (fun i => fval d u (z k i)) <= tmax n (fun i => fval d u (z (S k) i))",
            1
        )
    );
    let e = coq::check_lemmas(&[("HullMonotone", &wrong)], &limits).unwrap_err();
    assert!(matches!(e, coq::CoqError::Coq { .. }), "{e}");
    // weights not required nonnegative: false (w = (2, −1), a = (1, 0): b = 2 > 1 = max a)
    let nonneg = weaken(
        text,
        "Definition convex_weights",
        "(forall i j, (i < n)%nat -> (j < n)%nat -> 0 <= w i j)",
        "True",
    );
    let e = coq::check_lemmas(&[("HullMonotone", &nonneg)], &limits).unwrap_err();
    assert!(matches!(e, coq::CoqError::Coq { .. }), "{e}");
    // weights summing to at most 1: false (w = (1/2, 0), a = (−1, −1): b = −1/2 > −1)
    let sum = weaken(
        text,
        "Definition convex_weights",
        "hsum n (w i) = 1",
        "hsum n (w i) <= 1",
    );
    let e = coq::check_lemmas(&[("HullMonotone", &sum)], &limits).unwrap_err();
    assert!(matches!(e, coq::CoqError::Coq { .. }), "{e}");
    // without λ ≥ 0: false (n = 2, d = 1, V = −1/2, h = 1, M = 0, z = (0, 1): the new z_1
    // is 2·1 − 1/2 = 3/2 > 1; the_weakened_hull_lemmas_are_false)
    // (the proof's intros follow, so that it stops where λ ≥ 0 is used: hλ ≥ 0)
    let item = "Theorem functional_max_min";
    let negative = weaken(
        &weaken(
            text,
            item,
            "(1 <= n)%nat -> 0 <= h -> 0 <= lam -> left_eigen",
            "(1 <= n)%nat -> 0 <= h -> left_eigen",
        ),
        item,
        "Hn Hh Hl He Hz k.",
        "Hn Hh He Hz k.",
    );
    let e = coq::check_lemmas(&[("HullMonotone", &negative)], &limits).unwrap_err();
    assert!(matches!(e, coq::CoqError::Coq { .. }), "{e}");
    // an admitted step is caught by the axiom check
    let p = text.find("Theorem functional_step").unwrap();
    let (a, b) = (
        p + text[p..].find("Proof.").unwrap(),
        p + text[p..].find("Qed.").unwrap(),
    );
    let admitted = format!("{}Admitted.{}", &text[..a], &text[b + 4..]);
    let e = coq::check_lemmas(&[("HullMonotone", &admitted)], &limits).unwrap_err();
    assert!(e.to_string().contains("beyond the standard reals"), "{e}");
    assert!(e.to_string().contains("functional_step"), "{e}");
}

/// The counterexamples the hostile cases above cite, in exact rationals: each weakened
/// statement is false, so its rejection is Coq's judgement, not a broken script alone.
#[test]
fn the_weakened_hull_lemmas_are_false() {
    let q = |n: i32, d: u32| Rational::from((n, d));
    // weights (2, −1) sum to 1 but one is negative: b = 2·1 − 1·0 = 2 > max a = 1
    let b = q(2, 1) * q(1, 1) + q(-1, 1) * q(0, 1);
    assert!(b > q(1, 1));
    // weights (1/2, 0) are nonnegative but sum to 1/2: b = −1/2 > max a = −1
    let b = q(1, 2) * q(-1, 1) + q(0, 1) * q(-1, 1);
    assert!(b > q(-1, 1));
    // λ = −1/2, h = 1, M = 0 (P = 1/2 everywhere), z = (0, 1):
    // z_1' = (z_1 + hλ Σ_j P_1j z_j) / (1 + hλ) = (1 − 1/4) / (1/2) = 3/2 > 1
    let (h, lam) = (q(1, 1), q(-1, 2));
    let c = h.clone() * lam.clone();
    let z1 = (q(1, 1) + c.clone() * (q(1, 2) * q(0, 1) + q(1, 2) * q(1, 1))) / (q(1, 1) + c);
    assert_eq!(z1, q(3, 2));
}

/// The lemma's map is the claims' map: on a run of `DiscreteMap` in `Form::LayerRescaled`
/// (the form clusters/polytope, clusters/paranormal and clusters/hyperplanes iterate),
/// every coordinate c of a diagonal V (row c = λ_c e_cᵀ) satisfies
/// z_{i,c}^{k+1} = (z_{i,c}^k + hλ_c Σ_j P_ij^k z_{j,c}^k)/(1 + hλ_c) with the state's own P
/// (functional_step; the identity holds for any λ_c with 1 + hλ_c ≠ 0, the convexity
/// needs λ_c ≥ 0): the enclosures of both sides intersect at every step, and those of
/// Euler on z (z + hλ_c Σ_j P_ij (z_j − z_i)), a different map, are disjoint at some step.
#[test]
fn the_claims_map_is_the_lemmas_map() {
    let prec = 256;
    let (n, d, steps) = (5, 2, 30);
    let lams = [Rational::from(1), Rational::from((-1, 2))];
    let sys = System::new(Mat::identity(d), Mat::identity(d), Mat::diag(&lams));
    let tokens = Mat::from_rows(vec![
        vec![Rational::from((-3, 1)), Rational::from((1, 2))],
        vec![Rational::from((2, 1)), Rational::from((-1, 1))],
        vec![Rational::from((1, 4)), Rational::from((3, 1))],
        vec![Rational::from((-1, 2)), Rational::from((-2, 1))],
        vec![Rational::from((4, 1)), Rational::from((1, 1))],
    ]);
    let h = Rational::from((1, 10));
    let mut map = DiscreteMap::new(&sys, n, &h, Form::LayerRescaled, prec).unwrap();
    let iv = |r: &Rational| Interval::from_rational(prec, r);
    let one = iv(&Rational::from(1));
    let mut euler_apart = false;
    map.run(
        &tokens,
        steps,
        |v| {
            for (c, lam) in lams.iter().enumerate() {
                let hl = iv(&(h.clone() * lam));
                let z = |s: &attncheck::dynamics::discrete::State, i: usize| s.u[i * d + c].clone();
                for i in 0..n {
                    let mut avg = Interval::zero(prec);
                    let mut drift = Interval::zero(prec);
                    for j in 0..n {
                        let p = &v.before.p[i * n + j];
                        avg.add_assign(&(p * &z(v.before, j)));
                        drift.add_assign(&(p * &(&z(v.before, j) - &z(v.before, i))));
                    }
                    let lemma = &(&z(v.before, i) + &(&hl * &avg)) / &(&one + &hl);
                    let after = z(v.after, i);
                    assert!(
                        after.overlaps(&lemma),
                        "step {}, token {i}, coordinate {c}: {after:?} vs {lemma:?}",
                        v.before.k
                    );
                    let euler = &z(v.before, i) + &(&hl * &drift);
                    euler_apart |= !after.overlaps(&euler);
                }
            }
        },
        |_| {},
    );
    assert!(euler_apart, "Euler on z is a different map");
}
