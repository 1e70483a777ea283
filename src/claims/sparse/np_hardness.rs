//! sparse/np-hardness: "deciding whether a given pattern can be approximated is
//! NP-hard for fixed d > 1" (AAAI version). No finite computation decides an
//! NP-hardness statement, so the verdict is declared not-checkable. What is
//! checked instead are sanity instances of the project's reconstruction
//! (\[derived\], sparse.md §4), in exact rationals, for k = 1 argmax patterns
//! σ : \[n\] → \[n\] with margin γ > 0 (row i must have its logit at σ(i) at least γ
//! above every other logit of the row):
//!
//! - d = 1: logits Λ_ij = u_i·v_j (+ a row offset, which cancels). A strict row
//!   argmax of u_i·v_j is the unique argmax of v (u_i > 0) or the unique argmin
//!   (u_i < 0); u_i = 0 has none. So σ is realisable iff |σ(\[n\])| ≤ 2, and there are
//!   n + C(n, 2)(2^n − 2) such maps. Realisable maps get an explicit witness whose
//!   margins are verified exactly; the others are certified unrealisable by
//!   exhibiting three rows with distinct images.
//! - d = 2: every σ is realisable with distinct rational points b_j on the unit
//!   circle (Pythagorean parametrisation) and a_i = c·b_{σ(i)}.

use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::StatementError;
use crate::kernel::expr::build::{add, div, eq, int, mul, pow, sub, Term};
use crate::kernel::{Checked, Statement};
use crate::outcome::{Observations, Presentation, Table};
use crate::spec::{check_each, ensure, exact, FieldError};
use rug::Rational;
use serde::{Deserialize, Serialize};

/// The expected count of d = 1 realisable maps for one n (sparse.md §4).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Count {
    /// n.
    pub n: usize,
    /// Realisable maps with d = 1.
    pub realisable: u64,
    /// All maps, n^n.
    pub total: u64,
}

/// Parameters of sparse/np-hardness as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// The margin γ > 0 (exact literal).
    pub gamma: String,
    /// The counts to reproduce; every σ : \[n\] → \[n\] is enumerated for each n.
    pub counts: Vec<Count>,
}

/// Parameters of sparse/np-hardness, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The margin γ > 0.
    pub gamma: Rational,
    /// The counts to reproduce; every σ : \[n\] → \[n\] is enumerated for each n.
    pub counts: Vec<Count>,
}

/// sparse/np-hardness.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    /// The exact counts: n^n maps, and the reference count of d = 1 realisable
    /// maps equals n + C(n,2)(2^n − 2) (the enumeration itself is an observation).
    fn statement(
        p: &Params,
        claim: &str,
        _hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        let mut st = Statement::new(claim);
        for c in &p.counts {
            let n = c.n;
            let nt = || Term::from(n);
            st.state(
                format!("n = {n}: n^n = {} maps", c.total),
                &eq(pow(nt(), n as u64), c.total.into()),
            );
            st.state(
                format!(
                    "n = {n}: count formula n + C(n,2)(2^n − 2) = {} (reference)",
                    c.realisable
                ),
                &eq(
                    add([
                        nt(),
                        mul([
                            div(mul([nt(), sub(nt(), int(1))]), int(2)),
                            sub(pow(int(2), n as u64), int(2)),
                        ]),
                    ]),
                    c.realisable.into(),
                ),
            );
        }
        Some(Ok(st))
    }

    fn resolve(r: Raw, _at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        let gamma = exact("gamma", &r.gamma)?;
        ensure(gamma > 0, "gamma", "must be positive")?;
        check_each(&r.counts, "counts", |f, c| {
            ensure(
                (2..=6).contains(&c.n),
                f,
                format!(
                    "n = {} is out of range: use 2 to 6 (n^n maps are enumerated)",
                    c.n
                ),
            )
        })?;
        Ok(Params {
            gamma,
            counts: r.counts,
        })
    }
    type Witness = Vec<NCount>;
    /// The enumeration of every σ : \[n\] → \[n\] for each n of the spec.
    fn witness(p: &Params, _: &Ctx) -> Vec<NCount> {
        let gamma = p.gamma.clone();
        let mut counts = Vec::new();
        for c in &p.counts {
            let n = c.n;
            let total = n.pow(n as u32) as u64;
            let formula = n as u64 + (n * (n - 1) / 2) as u64 * ((1u64 << n) - 2);
            let mut realisable = 0u64;
            let mut witnesses_ok = true;
            let mut unrealisable_ok = true;
            let mut unrealisable = 0u64;
            // d = 2 points, fixed for n
            let pts: Vec<_> = (0..n).map(circle_point).collect();
            let unit = pts
                .iter()
                .all(|(x, y)| Rational::from(x * x) + Rational::from(y * y) == 1);
            let distinct = (0..n).all(|i| (0..i).all(|j| pts[i] != pts[j]));
            let dot = |i: usize, j: usize| {
                Rational::from(&pts[i].0 * &pts[j].0) + Rational::from(&pts[i].1 * &pts[j].1)
            };
            let mut max_cos = Rational::from(-1);
            for i in 0..n {
                for j in 0..n {
                    if i != j && dot(i, j) > max_cos {
                        max_cos = dot(i, j);
                    }
                }
            }
            // c = γ / (1 − max cos) makes every margin ≥ γ
            let scale = &gamma / Rational::from(1 - &max_cos);
            let mut d2_ok = unit && distinct && max_cos < 1;
            let mut d2_min: Option<Rational> = None;
            for sigma in all_maps(n) {
                match rank_one_witness(&sigma, &gamma) {
                    Some((u, v)) => {
                        realisable += 1;
                        let logits: Vec<Vec<Rational>> = u
                            .iter()
                            .map(|ui| v.iter().map(|vj| Rational::from(ui * vj)).collect())
                            .collect();
                        witnesses_ok &= margin(&logits, &sigma) >= gamma;
                    }
                    None => {
                        unrealisable += 1;
                        // three rows with pairwise distinct images: impossible for rank one
                        let mut seen: Vec<usize> = Vec::new();
                        for &s in &sigma {
                            if !seen.contains(&s) {
                                seen.push(s);
                            }
                        }
                        unrealisable_ok &= seen.len() >= 3;
                    }
                }
                // d = 2: a_i = c·b_{σ(i)}, Λ_ij = ⟨a_i, b_j⟩
                let logits: Vec<Vec<Rational>> = sigma
                    .iter()
                    .map(|&s| (0..n).map(|j| &scale * dot(s, j)).collect())
                    .collect();
                let m = margin(&logits, &sigma);
                d2_ok &= m >= gamma;
                if d2_min.as_ref().is_none_or(|x| m < *x) {
                    d2_min = Some(m);
                }
            }
            counts.push(NCount {
                n,
                total,
                formula,
                realisable,
                witnesses_ok,
                unrealisable,
                unrealisable_ok,
                scale,
                d2_ok,
                d2_min: d2_min.unwrap_or_default(),
            });
        }
        counts
    }
    /// The enumerations against the reference counts (observed), and the declared
    /// verdict: NP-hardness is not checkable by a finite computation.
    fn observe(p: &Params, w: &Vec<NCount>, _: Option<&Checked>, _: &Ctx, o: &mut Observations) {
        let gamma = &p.gamma;
        for (c, r) in p.counts.iter().zip(w) {
            let NCount {
                n,
                total,
                formula,
                realisable,
                witnesses_ok,
                unrealisable,
                unrealisable_ok,
                ref scale,
                d2_ok,
                ref d2_min,
            } = *r;
            o.observe(
                format!(
                    "n = {n}: {realisable} of {total} maps realisable with d = 1 (reference {} of {}; count formula {formula})",
                    c.realisable, c.total
                ),
                realisable == c.realisable && total == c.total && formula == realisable,
                format!("enumerated all {total} maps (exact, untrusted enumeration); criterion |σ([n])| ≤ 2"),
            );
            o.observe(
                format!("n = {n}: every d = 1 witness (u, v) has margin ≥ γ = {gamma}"),
                witnesses_ok,
                "Λ_ij = u_i·v_j in exact rationals",
            );
            o.observe(
                format!(
                    "n = {n}: every other map has three rows with distinct images (no rank-1 witness)"
                ),
                unrealisable_ok && unrealisable + realisable == total,
                "a strict row argmax of u_i·v_j is the unique argmax or the unique argmin of v",
            );
            o.observe(
                format!("n = {n}: all {total} maps realisable with d = 2, margin ≥ γ"),
                d2_ok,
                format!(
                    "b_j rational points on the unit circle, a_i = c·b_σ(i), c = {scale}; smallest margin {d2_min}"
                ),
            );
        }
        o.declare_not_checkable(
            "NP-hardness of deciding approximability for fixed d > 1 is a statement about all instances and a reduction; \
             no finite computation decides it. The d = 1 and d = 2 sanity instances above are verified in exact rationals.",
        );
    }
    /// The table, the figure and the notes.
    fn present(p: &Params, w: &Vec<NCount>, _: Option<&Checked>, _: &Ctx, o: &mut Presentation) {
        let mut table = Table::new(
            "Argmax patterns σ : [n] → [n] with margin γ (exact rationals)",
            &[
                "n",
                "maps n^n",
                "d = 1 realisable (enumerated)",
                "n + C(n,2)(2^n − 2)",
                "d = 1 witnesses verified",
                "d = 1 unrealisable (three distinct images)",
                "d = 2 realisable (verified)",
                "smallest d = 2 margin",
            ],
        );
        for r in w {
            let NCount {
                n,
                total,
                formula,
                realisable,
                witnesses_ok,
                unrealisable,
                d2_ok,
                ref d2_min,
                ..
            } = *r;
            table.row(vec![
                n.to_string(),
                total.to_string(),
                realisable.to_string(),
                formula.to_string(),
                if witnesses_ok {
                    "all".into()
                } else {
                    "no".into()
                },
                unrealisable.to_string(),
                if d2_ok {
                    total.to_string()
                } else {
                    "no".into()
                },
                d2_min.to_string(),
            ]);
        }
        if let Some(c) = p.counts.last() {
            o.figure(
                format!("d = 1 realisable maps at n = {}", c.n),
                p.counts.last().map_or(0.0, |c| c.realisable as f64),
                format!("{} of {}", c.realisable, c.total),
            );
        }
        o.tables.push(table);
        o.note(
            "Sanity instances of the project's explicit reconstruction of the Likhosherstov–Choromanski–Weller theorem \
             ([derived]). The decision problem and the reduction behind the paper's NP-hardness statement are \
             [unconfirmed]; a link to sign-rank (deciding sign-rank ≤ 3 is reported NP-hard) is a guess. Nothing about \
             NP-hardness follows from these checks.",
        );
        o.note(
            "d = 1 criterion: with Λ_ij = u_i·v_j + c_i, row i has a strict argmax only if u_i ≠ 0, and then it is the \
             unique argmax of v (u_i > 0) or the unique argmin of v (u_i < 0): at most two columns can be any row's \
             argmax, so |σ([n])| ≤ 2 is necessary; the witness v = +1 / −1 at the two image columns, u_i = ±γ, shows it \
             is sufficient. As in the clusters paper, rank-1 logits let each row attend to one of at most two leaders.",
        );
        o.note(
            "d = 2: query vectors a_i = W_Qᵀx_i and key vectors b_i = W_Kᵀx_i can be set independently when D ≥ 2d and \
             [W_Q W_K] has full rank (as in the reconstruction's W_Q = (1/d)[I; 0], W_K = [0; I]).",
        );
    }
}

/// Every σ : [n] → [n], as digit vectors in base n, in lexicographic order.
fn all_maps(n: usize) -> impl Iterator<Item = Vec<usize>> {
    let total = n.pow(n as u32);
    (0..total).map(move |mut code| {
        let mut s = vec![0; n];
        for x in s.iter_mut().rev() {
            *x = code % n;
            code /= n;
        }
        s
    })
}

/// The smallest margin min_i (Λ_{i,σ(i)} − max_{j≠σ(i)} Λ_ij) of a logit matrix, exactly.
fn margin(logits: &[Vec<Rational>], sigma: &[usize]) -> Rational {
    let mut m: Option<Rational> = None;
    for (row, &s) in logits.iter().zip(sigma) {
        for (j, x) in row.iter().enumerate() {
            if j != s {
                let gap = Rational::from(&row[s] - x);
                if m.as_ref().is_none_or(|m| gap < *m) {
                    m = Some(gap);
                }
            }
        }
    }
    m.expect("n ≥ 2")
}

/// The d = 1 witness for a map with at most two image values a, b:
/// v = +1 at a, −1 at b, 0 elsewhere; u_i = γ if σ(i) = a, −γ if σ(i) = b.
pub fn rank_one_witness(
    sigma: &[usize],
    gamma: &Rational,
) -> Option<(Vec<Rational>, Vec<Rational>)> {
    let n = sigma.len();
    let a = sigma[0];
    let b = sigma.iter().copied().find(|&x| x != a);
    if sigma.iter().any(|&x| x != a && Some(x) != b) {
        return None;
    }
    let mut v = vec![Rational::new(); n];
    v[a] = Rational::from(1);
    if let Some(b) = b {
        v[b] = Rational::from(-1);
    }
    let u = sigma
        .iter()
        .map(|&s| {
            if s == a {
                gamma.clone()
            } else {
                Rational::from(-gamma)
            }
        })
        .collect();
    Some((u, v))
}

/// The j-th rational point on the unit circle: ((1 − m²)/(1 + m²), 2m/(1 + m²)) with
/// m = j/2 (a Pythagorean triple; m ↦ point is injective, so distinct j give distinct points).
pub fn circle_point(j: usize) -> (Rational, Rational) {
    let m = Rational::from((j as i64, 2));
    let m2 = Rational::from(&m * &m);
    let den = Rational::from(1 + &m2);
    (Rational::from(1 - &m2) / &den, (2 * m) / den)
}

/// One n's enumeration (exact rationals).
#[derive(Debug, Clone)]
pub struct NCount {
    /// n.
    pub n: usize,
    /// n^n.
    pub total: u64,
    /// n + C(n,2)(2^n − 2).
    pub formula: u64,
    /// Maps with a d = 1 witness.
    pub realisable: u64,
    /// Every d = 1 witness has margin ≥ γ.
    pub witnesses_ok: bool,
    /// Maps without one.
    pub unrealisable: u64,
    /// Every map without one has three rows with distinct images.
    pub unrealisable_ok: bool,
    /// The scale c of the d = 2 witnesses.
    pub scale: Rational,
    /// Every map is realised with d = 2 and margin ≥ γ.
    pub d2_ok: bool,
    /// The smallest d = 2 margin.
    pub d2_min: Rational,
}
