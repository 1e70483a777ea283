//! clusters/paranormal-proof-gap: the intermediate inequality `e:boundrj` in the
//! proof of `t:multiplicity` (paranormal V, clusters.md §3) fails when A does not
//! map ℱ → ℱ and 𝒢 → 𝒢. This is a **gap in a proof step**, not a counterexample
//! to the theorem.
//!
//! The proof splits the exponent
//! E_j(t) = ⟨A e^{tV} z_i, A e^{tV}(z_j − z_i)⟩ = a_j e^{2λ₁t} + r_j(t) with
//! a_j = ⟨π_ℱ(A z_i), π_ℱ(A(z_j − z_i))⟩ and asserts |r_j(t)| ≤ C e^{t(λ₁ + |λ₂|)}.
//! The cross-term expansion behind it silently uses π_ℱ(A e^{tV} z) = e^{λ₁t} π_ℱ(A z),
//! which holds when A respects ℱ ⊕ 𝒢 but not in general.
//!
//! Witness (exact rationals throughout, no exp): d = n = 2, V = diag(λ₁, λ₂) with
//! integer entries (so that e^{tV} = diag(s^{λ₁}, s^{λ₂}) is exact at s = e^t),
//! ℱ = ℝe₁, 𝒢 = ℝe₂, π_ℱ(w) = (w₁, 0). The committed instance has V = diag(1, 0) and
//! A = Q = K = [[1, 1/2], [1/2, 1]], so QᵀK = A² ≻ 0 (leading minors 5/4 and 9/16).
//! With z₁ = (0, 1), z₂ = (0, 2): V(z₂ − z₁) = 0, so ż_i = Σ_j P_ij V(z_j − z_i) = 0
//! and the configuration is stationary, z(t) = z(0). Then
//! E₂ = ⟨(1/2, 1), (1/2, 1)⟩ = 5/4 for all t, a₂ = (1/2)(1/2) = 1/4, and
//! r₂(t) = 5/4 − e^{2t}/4. For any C > 0 put s = 4C + 5 (t = ln s ≥ 0):
//! |r₂| = (s² − 5)/4 = 4C² + 10C + 5 > 4C² + 5C = C·s, so `e:boundrj` fails at t = ln s.
//!
//! The theorem `t:multiplicity` is not refuted: here π_ℱ z_i = 0 ∈ ∂𝒦 ∪ {0}, which is
//! what the theorem allows, and its proof goes through when A maps ℱ → ℱ and 𝒢 → 𝒢
//! (e.g. Q = K = I). The general-A case rests on a step that needs repair.

use super::hyperplanes::{mat_lits, qk_terms, spd_formula};
use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::{Exact, StatementError};
use crate::dynamics::model::{Mat, MatrixSpec};
use crate::kernel::expr::build::{abs, add, and, div, eq, gt, int, le, lt, mul, pow, q, sub, Term};
use crate::kernel::{expr, Certainty, Checked, Statement};
use crate::outcome::{Presentation, Table};
use crate::spec::{check_each, ensure, exact, FieldError};
use rug::Rational;
use serde::{Deserialize, Serialize};

/// Parameters of clusters/paranormal-proof-gap as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// Q (2 × 2).
    pub q: MatrixSpec,
    /// K (2 × 2).
    pub k: MatrixSpec,
    /// A = (QᵀK)^{1/2}: symmetric positive definite with A² = QᵀK.
    pub a: MatrixSpec,
    /// V = diag(λ₁, λ₂), integer entries, λ₁ > |λ₂| (ℱ = ℝe₁, 𝒢 = ℝe₂).
    pub v: MatrixSpec,
    /// The two tokens z₁, z₂ (rows), with V(z₂ − z₁) = 0 (a stationary configuration).
    pub tokens: MatrixSpec,
    /// The constants C > 0 of `e:boundrj` to test (exact literals).
    pub c_values: Vec<String>,
    /// Reference a₂ = ⟨π_ℱ(A z₁), π_ℱ(A(z₂ − z₁))⟩ (clusters.md §3: 1/4).
    pub expect_a2: String,
    /// Reference ⟨A z₁, A(z₂ − z₁)⟩ (clusters.md §3: 5/4).
    pub expect_cross: String,
}

/// Parameters of clusters/paranormal-proof-gap, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The exact instance.
    pub instance: Instance,
    /// The constants C as written (for names and tables), in the order of `instance.cs`.
    pub c_values: Vec<String>,
    /// Reference a₂.
    pub expect_a2: Exact,
    /// Reference ⟨A z₁, A(z₂ − z₁)⟩.
    pub expect_cross: Exact,
}

/// The resolved exact instance.
#[derive(Debug, Clone)]
pub struct Instance {
    /// Q.
    pub q: Mat,
    /// K.
    pub k: Mat,
    /// A.
    pub a: Mat,
    /// V.
    pub v: Mat,
    /// Tokens (2 × 2, rows z₁, z₂).
    pub z: Mat,
    /// λ₁ = V₁₁ (the eigenvalue on ℱ).
    pub lambda1: i64,
    /// λ₂ = V₂₂ (the eigenvalue on 𝒢).
    pub lambda2: i64,
    /// The constants C.
    pub cs: Vec<Rational>,
}

/// An integer-valued rational as i64 (|x| ≤ 64 so that s^{λ} stays small).
fn small_int(q: &Rational) -> Option<i64> {
    if *q.denom() != 1 {
        return None;
    }
    q.numer().to_i64().filter(|x| x.abs() <= 64)
}

impl Raw {
    /// Resolves and validates the instance; errors name the field.
    fn instance(&self) -> Result<Instance, FieldError> {
        let q = self.q.resolve("q", Some(2), 2)?;
        let k = self.k.resolve("k", Some(2), 2)?;
        let a = self.a.resolve("a", Some(2), 2)?;
        let v = self.v.resolve("v", Some(2), 2)?;
        let z = self.tokens.resolve("tokens", Some(2), 2)?;
        ensure(
            a.is_symmetric(),
            "a",
            "A must be symmetric (A = (QᵀK)^{1/2})",
        )?;
        ensure(
            a.is_positive_definite(),
            "a",
            "A must be positive definite (leading minors > 0)",
        )?;
        let qk = q.transpose().mul(&k);
        ensure(
            qk.is_positive_definite(),
            "k",
            "hypothesis (i) of d:goodmulti needs QᵀK symmetric positive definite",
        )?;
        ensure(
            a.mul(&a) == qk,
            "a",
            format!(
                "A² must equal QᵀK exactly (A is the SPD square root of QᵀK); QᵀK = {}",
                fmt_mat(&qk)
            ),
        )?;
        ensure(
            *v.at(1, 0) == 0,
            "v[1][0]",
            "ℱ = ℝe₁ must be V-invariant (V₂₁ = 0)",
        )?;
        ensure(
            *v.at(0, 1) == 0,
            "v[0][1]",
            "𝒢 = ℝe₂ must be V-invariant (V₁₂ = 0)",
        )?;
        let lambda1 = small_int(v.at(0, 0)).ok_or_else(|| {
            FieldError::new(
                "v[0][0]",
                "λ₁ = V₁₁ must be an integer in [−64, 64] so that e^{tV} is exact at e^t = s",
            )
        })?;
        let lambda2 = small_int(v.at(1, 1)).ok_or_else(|| {
            FieldError::new(
                "v[1][1]",
                "λ₂ = V₂₂ must be an integer in [−64, 64] so that e^{tV} is exact at e^t = s",
            )
        })?;
        ensure(lambda1 > 0, "v[0][0]", "V|_ℱ = λ·Id needs λ > 0")?;
        ensure(
            lambda2.abs() < lambda1,
            "v[1][1]",
            "ρ(V|_𝒢) = |λ₂| must be < λ₁",
        )?;
        let dz: Vec<Rational> = (0..2)
            .map(|c| Rational::from(z.at(1, c) - z.at(0, c)))
            .collect();
        ensure(
            mat_vec(&v, &dz).iter().all(|x| *x == 0),
            "tokens",
            "the configuration must be stationary: V(z₂ − z₁) = 0",
        )?;
        check_each(&self.c_values, "c_values", |f, s| {
            ensure(exact(f, s)? > 0, f, "C must be positive")
        })?;
        let cs = self
            .c_values
            .iter()
            .map(|s| exact("c_values", s))
            .collect::<Result<Vec<_>, _>>()?;
        exact("expect_a2", &self.expect_a2)?;
        exact("expect_cross", &self.expect_cross)?;
        Ok(Instance {
            q,
            k,
            a,
            v,
            z,
            lambda1,
            lambda2,
            cs,
        })
    }
}

/// clusters/paranormal-proof-gap.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(r: Raw, _at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        let instance = r.instance()?;
        Ok(Params {
            instance,
            expect_a2: Exact::parse("expect_a2", &r.expect_a2)?,
            expect_cross: Exact::parse("expect_cross", &r.expect_cross)?,
            c_values: r.c_values,
        })
    }
    fn statement(
        p: &Params,
        claim: &str,
        _hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        Some(Ok(statement_of(p, &p.instance, claim)))
    }
    type Witness = ();
    fn witness(_: &Params, _: &Ctx) {}
    /// The presentation: the statement decides the claim; tables, plots and notes
    /// show its terms.
    fn present(p: &Params, _: &(), checked: Option<&Checked>, _: &Ctx, o: &mut Presentation) {
        let inst = &p.instance;
        let (l1, l2) = (inst.lambda1, inst.lambda2);
        let Some(checked) = checked else {
            return;
        };

        // presentation: the hypotheses with their exact values
        let qk = inst.q.transpose().mul(&inst.k);
        let minors: Vec<String> = qk.leading_minors().iter().map(|m| m.to_string()).collect();
        let one = Rational::from(1);
        let (e0, a2, _) = split(inst, &one);
        let dz: Vec<Rational> = (0..2)
            .map(|c| Rational::from(inst.z.at(1, c) - inst.z.at(0, c)))
            .collect();
        let mut hyp = Table::new(
            "The statement's hypotheses and reference values, with their exact values",
            &["obligation", "values (exact rationals)"],
        );
        let values = [
            format!(
                "QᵀK = A² = {}; leading minors {} (Sylvester); A = {}",
                fmt_mat(&qk),
                minors.join(", "),
                fmt_mat(&inst.a)
            ),
            format!("V = {}: V e₁ = {l1}·e₁, V e₂ = {l2}·e₂", fmt_mat(&inst.v)),
            format!("ρ(V|_𝒢) = |{l2}| = {} < {l1} = λ", l2.abs()),
            format!(
                "z₁ = {}, z₂ = {}, V(z₂ − z₁) = {}",
                fmt_vec(inst.z.row(0)),
                fmt_vec(inst.z.row(1)),
                fmt_vec(&mat_vec(&inst.v, &dz))
            ),
            format!("a₂ = {a2}"),
            format!("⟨A z₁, A(z₂ − z₁)⟩ = {e0}"),
        ];
        for (d, v) in checked.decisions().iter().zip(values) {
            hyp.row(vec![d.name().to_string(), v]);
        }
        o.tables.push(hyp);

        // e:boundrj at s = 4C + 5, from the statement's terms
        let mut table = Table::new(
            "e:boundrj at t = ln s, s = 4C + 5 (exact rationals)",
            &[
                "C",
                "s = e^t",
                "E₂(t) = ⟨A e^{tV}z₁, A e^{tV}(z₂ − z₁)⟩",
                "a₂ e^{2λ₁t}",
                "|r₂(t)|",
                "C e^{t(λ₁+|λ₂|)}",
                "|r₂| ≤ C e^{t(λ₁+|λ₂|)}",
            ],
        );
        let mut first_excess: Option<Rational> = None;
        for (c, c_txt) in inst.cs.iter().zip(&p.c_values) {
            let s = witness_s(c);
            let t = split_terms(inst, &s_term(c));
            let abs_r = eval_q(&abs(t.r));
            let bound = eval_q(&bound_term(inst, c));
            let name = boundrj_name(c_txt);
            let result = checked
                .decisions()
                .iter()
                .find(|d| d.name() == name)
                .map(|d| d.result());
            if first_excess.is_none() && result == Some(Certainty::False) {
                first_excess = Some(Rational::from(&abs_r - &bound));
            }
            table.row(vec![
                c_txt.clone(),
                s.to_string(),
                eval_q(&t.e).to_string(),
                eval_q(&t.a_term).to_string(),
                abs_r.to_string(),
                bound.to_string(),
                match result {
                    Some(Certainty::True) => "holds",
                    Some(Certainty::False) => "fails",
                    _ => "undecided",
                }
                .into(),
            ]);
        }
        o.tables.push(table);

        if let (Some(c0), Some(c0_txt)) = (inst.cs.first(), p.c_values.first()) {
            let s0 = witness_s(c0);
            let t = split_terms(inst, &s_term(c0));
            let ratio = eval_q(&div(abs(t.r), bound_term(inst, c0)));
            o.figure(
                format!("|r₂| / (C e^{{t(λ₁+|λ₂|)}}) at C = {c0_txt}, t = ln {s0}"),
                ratio.to_f64(),
                format!("{ratio} (exact; > 1 means e:boundrj fails)"),
            );
        }
        if let Some(x) = first_excess {
            o.figure(
                "excess |r₂| − C e^{t(λ₁+|λ₂|)} at the first failing C",
                x.to_f64(),
                x.to_string(),
            );
        }
        o.note(
            "This is a GAP IN A PROOF STEP, not a refutation of the theorem t:multiplicity. The refuted statement is the \
             intermediate inequality e:boundrj, |r_j(t)| ≤ C e^{t(λ₁+|λ₂|)}: the cross-term expansion in the proof silently \
             uses π_ℱ(A e^{tV} z) = e^{λ₁t} π_ℱ(A z), which fails when A does not map ℱ → ℱ and 𝒢 → 𝒢. Here π_ℱ z_i = 0 \
             ∈ ∂𝒦 ∪ {0}, which the theorem allows; the theorem is unaffected when A respects ℱ ⊕ 𝒢 (e.g. Q = K = I). Its \
             general-A case rests on a step that needs repair (clusters.md §5).",
        );
        o.note(format!(
            "Why s = 4C + 5 works for the committed instance: r₂(t) = 5/4 − s²/4 with s = e^t, so |r₂| = (s² − 5)/4 = \
             4C² + 10C + 5 > 4C² + 5C = C·s for every C > 0; e:boundrj fails for every constant C. (λ₁, λ₂) = ({l1}, {l2}); \
             every obligation is an exact rational identity or inequality over the spec's literals, no exponential is \
             evaluated: t = ln s enters only through e^t = s."
        ));
    }
}

/// M·w, exactly.
fn mat_vec(m: &Mat, w: &[Rational]) -> Vec<Rational> {
    (0..m.rows)
        .map(|i| {
            let mut s = Rational::new();
            for (j, x) in w.iter().enumerate() {
                s += Rational::from(m.at(i, j) * x);
            }
            s
        })
        .collect()
}

fn fmt_mat(m: &Mat) -> String {
    let rows: Vec<String> = (0..m.rows)
        .map(|i| {
            let r: Vec<String> = m.row(i).iter().map(|x| x.to_string()).collect();
            format!("[{}]", r.join(", "))
        })
        .collect();
    format!("[{}]", rows.join(", "))
}

fn fmt_vec(w: &[Rational]) -> String {
    let r: Vec<String> = w.iter().map(|x| x.to_string()).collect();
    format!("({})", r.join(", "))
}

/// The terms of the exponent split for the pair (z₁, z₂) at e^t = `s` (a term), over
/// the literals of the spec: E₂(s) = ⟨A D z₁, A D(z₂ − z₁)⟩ with D = e^{tV} =
/// diag(s^{λ₁}, s^{λ₂}), a₂ = ⟨π_ℱ(A z₁), π_ℱ(A(z₂ − z₁))⟩ (π_ℱ keeps the first
/// coordinate) and r₂(s) = E₂(s) − a₂ s^{2λ₁}. The tokens do not move (stationary
/// configuration), so z_i(t) = z_i(0). The one source of these formulas: the
/// statement asserts them and the tables evaluate them.
pub struct SplitTerms {
    /// E₂(s).
    pub e: Term,
    /// a₂.
    pub a2: Term,
    /// a₂ s^{2λ₁}.
    pub a_term: Term,
    /// r₂(s).
    pub r: Term,
}

/// z₂ − z₁, coordinate by coordinate, as terms over the spec's literals.
fn dz_terms(inst: &Instance) -> Vec<Term> {
    (0..2)
        .map(|c| sub(q(inst.z.at(1, c)), q(inst.z.at(0, c))))
        .collect()
}

fn split_terms(inst: &Instance, s: &Term) -> SplitTerms {
    let z1: Vec<Term> = inst.z.row(0).iter().map(q).collect();
    let dz = dz_terms(inst);
    let a = |i: usize, j: usize| q(inst.a.at(i, j));
    // (A D w)_i and (A w)_i
    let adw = |w: &[Term], i: usize, d: bool| {
        let scale = |c: usize, l: i64| {
            if d {
                mul([pow(s.clone(), l), w[c].clone()])
            } else {
                w[c].clone()
            }
        };
        add([
            mul([a(i, 0), scale(0, inst.lambda1)]),
            mul([a(i, 1), scale(1, inst.lambda2)]),
        ])
    };
    let e = add([
        mul([adw(&z1, 0, true), adw(&dz, 0, true)]),
        mul([adw(&z1, 1, true), adw(&dz, 1, true)]),
    ]);
    let a2 = mul([adw(&z1, 0, false), adw(&dz, 0, false)]);
    let a_term = mul([a2.clone(), pow(s.clone(), 2 * inst.lambda1)]);
    let r = sub(e.clone(), a_term.clone());
    SplitTerms { e, a2, a_term, r }
}

/// The witness time for a constant C, as a term: s = e^t = 4C + 5 (clusters.md §3).
fn s_term(c: &Rational) -> Term {
    add([mul([int(4), q(c)]), int(5)])
}

/// C e^{t(λ₁+|λ₂|)} = C s^{λ₁+|λ₂|} at s = 4C + 5, as a term.
fn bound_term(inst: &Instance, c: &Rational) -> Term {
    mul([q(c), pow(s_term(c), inst.lambda1 + inst.lambda2.abs())])
}

/// The name of the e:boundrj obligation at one constant (listed in the spec's `refutes`).
fn boundrj_name(c_txt: &str) -> String {
    format!("e:boundrj at C = {c_txt}: |r₂(t)| ≤ C e^{{t(λ₁+|λ₂|)}} at t = ln(4C + 5)")
}

fn eval_q(term: &Term) -> Rational {
    expr::eval_built_exact(term, 64, &expr::Data::new())
        .ok()
        .flatten()
        .expect("a rational term of the statement")
}

/// The exponent split at e^t = s, exactly: (E₂(s), a₂, r₂(s)), evaluated from the
/// statement's terms.
pub fn split(inst: &Instance, s: &Rational) -> (Rational, Rational, Rational) {
    let t = split_terms(inst, &q(s));
    (eval_q(&t.e), eval_q(&t.a2), eval_q(&t.r))
}

/// The witness time for a constant C: s = e^t = 4C + 5 (clusters.md §3).
pub fn witness_s(c: &Rational) -> Rational {
    eval_q(&s_term(c))
}

/// The statement: the hypotheses of d:goodmulti, the stationarity of the witness, the
/// reference values a₂ and ⟨A z₁, A(z₂ − z₁)⟩ (all exact identities of the spec's
/// literals), and e:boundrj at t = ln(4C + 5) for each C — the obligations the spec's
/// `refutes` names as failing.
fn statement_of(p: &Params, inst: &Instance, claim: &str) -> Statement {
    let mut st = Statement::new(claim);
    let qk = qk_terms(&inst.q, &inst.k);
    let a = mat_lits(&inst.a);
    let a_sq: Vec<Vec<Term>> = (0..2)
        .map(|i| {
            (0..2)
                .map(|j| {
                    add([
                        mul([a[i][0].clone(), a[0][j].clone()]),
                        mul([a[i][1].clone(), a[1][j].clone()]),
                    ])
                })
                .collect()
        })
        .collect();
    let mut hyp = vec![spd_formula(&qk), spd_formula(&a)];
    for i in 0..2 {
        for j in 0..2 {
            hyp.push(eq(qk[i][j].clone(), a_sq[i][j].clone()));
        }
    }
    st.state("hypothesis (i): QᵀK = A² ≻ 0", &and(hyp));
    let v = mat_lits(&inst.v);
    let v_ = |i: usize, j: usize| v[i][j].clone();
    st.state(
        "hypothesis (ii): ℱ = ℝe₁ and 𝒢 = ℝe₂ are V-invariant, V|_ℱ = λ·Id with λ > 0",
        &and([
            eq(v_(1, 0), int(0)),
            eq(v_(0, 1), int(0)),
            gt(v_(0, 0), int(0)),
            eq(v_(0, 0), inst.lambda1.into()),
            eq(v_(1, 1), inst.lambda2.into()),
        ]),
    );
    st.state("hypothesis (ii): ρ(V|_𝒢) < λ", &lt(abs(v_(1, 1)), v_(0, 0)));
    let dz = dz_terms(inst);
    let row = |i: usize| {
        eq(
            add([
                mul([v_(i, 0), dz[0].clone()]),
                mul([v_(i, 1), dz[1].clone()]),
            ]),
            int(0),
        )
    };
    st.state(
        "stationary configuration: V(z₂ − z₁) = 0, so ż_i = Σ_j P_ij V(z_j − z_i) = 0 and z(t) = z(0)",
        &and([row(0), row(1)]),
    );
    let at0 = split_terms(inst, &int(1));
    st.state(
        format!("a₂ = ⟨π_ℱ(A z₁), π_ℱ(A(z₂ − z₁))⟩ = {}", p.expect_a2),
        &eq(at0.a2, q(&p.expect_a2)),
    );
    st.state(
        format!("⟨A z₁, A(z₂ − z₁)⟩ = {}", p.expect_cross),
        &eq(at0.e, q(&p.expect_cross)),
    );
    for (c, c_txt) in inst.cs.iter().zip(&p.c_values) {
        let t = split_terms(inst, &s_term(c));
        st.state(boundrj_name(c_txt), &le(abs(t.r), bound_term(inst, c)));
    }
    st
}
