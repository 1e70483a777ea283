//! The Boolean limit of one certified instance, re-proven in Coq (issue #39).
//!
//! A certificate of clusters/boolean-limit carries, per witness, a y-layer datum
//! (Q = K = V = [\[1\]], Δt = h) and the lemma's hypotheses at a step K as obligations
//! over `(layer-coord Y 0 K i 0)` (`claims::clusters::boolean_limit::hypotheses`). Beside
//! re-proving those obligations, `verify --coq` writes one more file that, for every
//! witness:
//! 1. proves by reflection (coq/Attncheck.v's `xcheck_sound`, the layer trace computed
//!    in Coq in interval arithmetic) `hyp_form n a b 0 K p q` on the datum: y^K strictly
//!    increasing, y_i^K < −A for i < a and A < y_i^K for b ≤ i < n, with A = p/q;
//! 2. proves (T) for that A with CoqInterval's `interval`;
//! 3. applies coq/BooleanInstance.v (`instance_rows`, and `instance_structure` when one
//!    token lies between, b = a + 1) to state the limit of the instance's own sequence
//!    P^k = yattn n (yiter n h y0 k): rows of the tokens below −A at K converge to e_1,
//!    those above A to e_n, and every entrywise limit P* has rank ≤ 3.
//!
//! a and b are read from the kernel's enclosures of y^K (the tokens certifiably below
//! −A, and above A); they are only what the file claims, and Coq checks every claim: a
//! wrong a or b, a false (T), two tokens in [−A, A] with b = a + 1 stated, are rejected.

use super::translate::data_name;
use crate::certificate::Certificate;
use crate::kernel::expr::{Data, Datum};
use rug::Rational;
use std::fmt::Write;

/// One witness of the lemma in a certificate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    /// The obligation's label (before ": at most one token").
    pub label: String,
    /// The certificate's name of the y-layer datum.
    pub datum: String,
    /// n.
    pub n: usize,
    /// K.
    pub k: usize,
    /// A.
    pub a: Rational,
    /// Tokens 0..low lie below −A at K.
    pub low: usize,
    /// Tokens high..n lie above A at K.
    pub high: usize,
    /// The precision of Coq's evaluation: 53 (primitive floats) or a rung of
    /// [`super::RUNGS`] (`bits_for`).
    pub bits: u32,
}

/// (low, high) from the enclosures of y^K at `prec` bits when they decide the order
/// and the escape of every token but at most one, else `None`.
fn split_at(
    l: &crate::kernel::layer_data::LayerData,
    prec: u32,
    k: usize,
    n: usize,
    a: &Rational,
) -> Option<(usize, usize)> {
    let q = |x: usize| Rational::from(x as u64);
    let y: Vec<_> = (0..n)
        .map(|i| {
            l.coord(prec, &Rational::new(), &q(k), &q(i), &Rational::new())
                .ok()
        })
        .collect::<Option<_>>()?;
    let minus_a = Rational::from(-a);
    let low = y.iter().take_while(|x| *x.hi() < minus_a).count();
    let high = n - y.iter().rev().take_while(|x| *x.lo() > *a).count();
    let ordered = (0..n - 1).all(|i| *y[i].hi() < *y[i + 1].lo());
    (ordered && high <= low + 1).then_some((low, high.max(low)))
}

/// The first precision (53, then [`super::RUNGS`]) at which the attncheck kernel, given
/// [`super::MARGIN_BITS`] fewer bits, decides the hypotheses with the same split: Coq's
/// evaluation is the kernel's step for step, and the margin covers CoqInterval's looser
/// `exp` (as for the layer road's obligations). A wrong choice costs a rejection, never
/// a pass. The last rung when none does.
fn bits_for(
    l: &crate::kernel::layer_data::LayerData,
    k: usize,
    n: usize,
    a: &Rational,
    split: (usize, usize),
) -> u32 {
    std::iter::once(53)
        .chain(super::RUNGS.iter().copied())
        .find(|b| split_at(l, b - super::MARGIN_BITS, k, n, a) == Some(split))
        .unwrap_or(super::RUNGS[super::RUNGS.len() - 1])
}

/// The marker of the escape obligation's name.
const ESCAPE: &str = ": at most one token with |y_i^K| ≤ A = ";

/// The witnesses of a certificate of clusters/boolean-limit: one per escape obligation
/// `(forall i 0 N (> (max (abs (layer-coord Y 0 K i 0)) …) A))`, with low and high read
/// from the kernel's enclosures of y^K at the certificate's precision. Empty for any
/// other certificate.
pub fn witnesses(cert: &Certificate, data: &Data) -> Vec<Witness> {
    if cert.claim != "clusters/boolean-limit" {
        return Vec::new();
    }
    let mut out = Vec::new();
    for o in &cert.obligations {
        let Some((label, _)) = o.name.split_once(ESCAPE) else {
            continue;
        };
        let t: Vec<&str> = o.formula.split_whitespace().collect();
        // (forall i 0 N (> (max (abs (layer-coord Y 0 K i 0)) (abs (layer-coord …))) A))
        if t.len() < 14 || t[0] != "(forall" || t[7] != "(layer-coord" {
            continue;
        }
        let (Ok(n2), Ok(k)) = (t[3].parse::<usize>(), t[10].parse::<usize>()) else {
            continue;
        };
        let Ok(a) = t[t.len() - 1].trim_end_matches(')').parse::<Rational>() else {
            continue;
        };
        let datum = t[8].to_string();
        let Some(Datum::Layer(l)) = data.get(&datum) else {
            continue;
        };
        let n = n2 + 2;
        // the split the certificate's precision gives (Coq is left to reject a wrong one)
        let minus_a = Rational::from(-&a);
        let (low, high) = split_at(l, cert.precision, k, n, &a).unwrap_or_else(|| {
            // not decided: claim the tokens certifiably below −A, the rest above
            let q = |x: usize| Rational::from(x as u64);
            let low = (0..n)
                .take_while(|&i| {
                    l.coord(
                        cert.precision,
                        &Rational::new(),
                        &q(k),
                        &q(i),
                        &Rational::new(),
                    )
                    .is_ok_and(|x| *x.hi() < minus_a)
                })
                .count();
            (low, (low + 1).min(n))
        });
        let bits = bits_for(l, k, n, &a, (low, high));
        out.push(Witness {
            label: label.to_string(),
            datum,
            n,
            k,
            a,
            low,
            high,
            bits,
        });
    }
    out
}

/// The mirror-symmetric case of a witness (the claim's (S)): n = 2c + 1 odd, token c
/// alone between −A and A at K, and y^0_{n−1−j} = −y^0_j exactly. Then `c`; Coq checks
/// every part of it again (`mirror_ok`, computed on the exact data).
fn symmetric_centre(w: &Witness, data: &Data) -> Option<usize> {
    let Some(Datum::Layer(l)) = data.get(&w.datum) else {
        return None;
    };
    let c = w.n / 2;
    let run = l.runs().first()?;
    let y = |i: usize| run.at(i, 0);
    (run.rows == w.n
        && run.cols == 1
        && w.n % 2 == 1
        && w.low == c
        && w.high == c + 1
        && (0..w.n).all(|j| *y(w.n - 1 - j) == Rational::from(-y(j))))
    .then_some(c)
}

/// The Coq theorems of one witness, by the index it has in the file: the limit of its
/// rows; with one token between (b = a + 1) the structure of every limit; for the
/// mirror-symmetric witness, the limit itself (rank 3).
pub fn theorems(w_i: usize, w: &Witness, data: &Data) -> Vec<String> {
    let mut t = vec![format!("rows_{w_i}")];
    if w.high == w.low + 1 {
        t.push(format!("structure_{w_i}"));
    }
    if symmetric_centre(w, data).is_some() {
        t.push(format!("symmetric_{w_i}"));
    }
    t
}

/// The header of an instance file: `data_module` is the Coq module of the
/// certificate's data.
pub fn header(cert: &Certificate, data_module: &str) -> String {
    format!(
        "(* The Boolean limit of witnesses of the certificate of {}, generated by attncheck:\n   \
         the lemma's hypotheses at K by reflection (Attncheck.v's xcheck_sound), (T) by interval,\n   \
         then the theorems of coq/BooleanInstance.v, which rest on coq/BooleanLimit.v. *)\n\
         From Coq Require Import ZArith QArith Qreals Reals Lra Lia List.\n\
         From Interval Require Import Tactic.\n\
         From Attncheck Require Import Attncheck BooleanLimit BooleanInstance {data_module}.\n\
         Import ListNotations.\n\
         Local Open Scope R_scope.\n",
        comment(&cert.claim)
    )
}

/// The Coq file of the witnesses `which` (indices into `ws`, kept as the theorems'
/// suffixes): [`header`], a [`block`] per witness, [`footer`]. `None` when `which` is
/// empty.
pub fn file(
    cert: &Certificate,
    data: &Data,
    ws: &[Witness],
    which: &[usize],
    data_module: &str,
) -> Option<String> {
    if which.is_empty() {
        return None;
    }
    let mut s = header(cert, data_module);
    let mut all = Vec::new();
    for &w_i in which {
        s.push_str(&block(cert, data, ws, w_i));
        all.extend(theorems(w_i, &ws[w_i], data));
    }
    s.push_str(&footer(&all));
    Some(s)
}

/// `Print Assumptions` of the theorems `all` (one conjunction).
pub fn footer(all: &[String]) -> String {
    format!(
        "Definition boolean_instances := ({}).\nPrint Assumptions boolean_instances.\n",
        all.join(", ")
    )
}

/// The lemmas and theorems of witness `w_i`: its hypotheses by reflection (at 53 bits,
/// primitive floats, or `bits` big-integer floats), (T) by `interval`, and the limit
/// theorems ([`theorems`]).
pub fn block(cert: &Certificate, data: &Data, ws: &[Witness], w_i: usize) -> String {
    let mut s = String::new();
    let w = &ws[w_i];
    let d = data_name(cert, &w.datum);
    let (p, q) = (w.a.numer().to_string(), w.a.denom().to_string());
    let (n, k, lo, hi) = (w.n, w.k, w.low, w.high);
    let a = format!("(IZR {p} / IZR {q})");
    let (m, prec) = if w.bits <= 53 {
        ("LP", "(LP.I.F.PtoP 53)".to_string())
    } else {
        ("LB", format!("(LB.I.F.PtoP {})", w.bits))
    };
    let _ = writeln!(
        s,
        "(* {}: n = {n}, K = {k}, A = {}; tokens 0..{lo} below −A and {hi}..{n} above A at K *)\n\
         Lemma hyp_{w_i} : xfden [{d}] [] (hyp_form {n} {lo} {hi} 0%Z {k}%Z {p}%Z {q}%positive).\n\
         Proof.\n  apply ({m}.xcheck_sound {prec} [{d}] [false] _ eq_refl); vm_cast_no_check (eq_refl true).\nQed.\n\
         Lemma unit_{w_i} : unit_layer {d} = true.\nProof. vm_compute. reflexivity. Qed.\n\
         Lemma ntok_{w_i} : ntok {d} 0 = {n}%nat.\nProof. vm_compute. reflexivity. Qed.\n\
         Lemma n2_{w_i} : (2 <= ntok {d} 0)%nat.\nProof. rewrite ntok_{w_i}. lia. Qed.\n\
         Lemma ab_{w_i} : ({lo} <= {hi} <= ntok {d} 0)%nat.\nProof. rewrite ntok_{w_i}. lia. Qed.\n\
         Lemma dt_{w_i} : 0 < Q2R (lq_dt {d}).\n\
         Proof. replace 0 with (Q2R 0) by (unfold Q2R; simpl; field). apply Qlt_Rlt. reflexivity. Qed.\n\
         Lemma a_{w_i} : 0 < {a}.\nProof. apply Rdiv_lt_0_compat; apply IZR_lt; lia. Qed.\n\
         Lemma threshold_{w_i} : 2 * (IZR (Z.of_nat (ntok {d} 0)) - 1) <= {a} ^ 2 * exp ({a} ^ 2 / 2 + 1).\n\
         Proof. rewrite ntok_{w_i}. simpl. interval. Qed.\n\
         Definition hyps_{w_i} := hyp_form_spec {d} {n} {lo} {hi} 0 {k} {p} {q} ltac:(lia) ltac:(lia) hyp_{w_i}.\n",
        comment(&w.label),
        w.a
    );
    let args = format!(
        "{d} 0 {k} {a} {lo} {hi} unit_{w_i} n2_{w_i} ab_{w_i} dt_{w_i} a_{w_i} threshold_{w_i} \
         (proj1 hyps_{w_i}) (proj1 (proj2 hyps_{w_i})) (proj2 (proj2 hyps_{w_i}))"
    );
    let seq =
        format!("let n := ntok {d} 0 in let h := Q2R (lq_dt {d}) in let y0 := yinit {d} 0 in");
    let cv = "Un_cv (fun k => yattn n (yiter n h y0 k) i j)";
    let _ = writeln!(
        s,
        "(* The rows of the tokens below −A at K converge to e_1, those above A to e_n. *)\n\
         Theorem rows_{w_i} : {seq}\n  \
         (forall i j, (i < {lo})%nat -> (j < n)%nat -> {cv} (if Nat.eqb j 0 then 1 else 0)) /\\\n  \
         (forall i j, ({hi} <= i < n)%nat -> (j < n)%nat -> {cv} (if Nat.eqb j (n - 1) then 1 else 0)).\n\
         Proof. exact (instance_rows {args}). Qed.\n"
    );
    if hi == lo + 1 {
        let _ = writeln!(
            s,
            "(* Token {lo} lies between: every entrywise limit P* has rows e_1 (i < {lo}) and e_n\n   \
             (i > {lo}), and its columns other than 1 and n vanish outside row {lo}: rank P* ≤ 3. *)\n\
             Theorem structure_{w_i} : {seq}\n  \
             forall Pstar : nat -> nat -> R,\n  \
             (forall i j, (i < n)%nat -> (j < n)%nat -> {cv} (Pstar i j)) ->\n  \
             (forall i j, (i < {lo})%nat -> (j < n)%nat -> Pstar i j = if Nat.eqb j 0 then 1 else 0) /\\\n  \
             (forall i j, ({lo} < i < n)%nat -> (j < n)%nat -> Pstar i j = if Nat.eqb j (n - 1) then 1 else 0) /\\\n  \
             (forall i j, (i < n)%nat -> (j < n)%nat -> i <> {lo}%nat -> j <> 0%nat -> j <> (n - 1)%nat -> Pstar i j = 0).\n\
             Proof. exact (instance_structure {args} eq_refl). Qed.\n"
        );
    }
    if let Some(c) = symmetric_centre(w, data) {
        let _ = writeln!(
            s,
            "(* Mirror-symmetric (y^0_(n-1-j) = -y^0_j, decided on the exact data): P^k converges,\n   \
             to rows e_1 (i < {c}), (1/n, …, 1/n) (i = {c}) and e_n (i > {c}): rank 3. *)\n\
             Lemma mirror_{w_i} : mirror_ok {d} 0 = true.\nProof. vm_compute. reflexivity. Qed.\n\
             Lemma odd_{w_i} : ntok {d} 0 = (2 * {c} + 1)%nat.\nProof. vm_compute. reflexivity. Qed.\n\
             Theorem symmetric_{w_i} : {seq}\n  \
             forall i j, (i < n)%nat -> (j < n)%nat ->\n  \
             {cv} (if Nat.ltb i {c} then (if Nat.eqb j 0 then 1 else 0)\n  \
             else if Nat.eqb i {c} then / INR n else (if Nat.eqb j (n - 1) then 1 else 0)).\n\
             Proof.\n  exact (instance_symmetric {args} {c} odd_{w_i} ltac:(lia) eq_refl eq_refl\n    \
             (mirror_ok_spec {d} 0 mirror_{w_i})).\nQed.\n"
        );
    }
    s
}

/// `s` inside a Coq comment: no comment delimiter, and no `"` (Coq reads a string
/// inside a comment, so a lone `"` would run the comment to the end of the file).
fn comment(s: &str) -> String {
    s.replace("(*", "( *")
        .replace("*)", "* )")
        .replace('"', "''")
}
