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

use crate::certificate::Certificate;
use crate::claims::Ctx;
use crate::dynamics::model::{Mat, MatrixSpec};
use crate::kernel::{expr, Certainty};
use crate::outcome::{Outcome, Table};
use crate::spec::{ensure, ensure_each, exact, FieldError};
use rug::Rational;
use serde::{Deserialize, Serialize};

/// Parameters of clusters/paranormal-proof-gap.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
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

impl Params {
    /// Resolves and validates the instance; errors name the field.
    pub fn instance(&self) -> Result<Instance, FieldError> {
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
        ensure_each(&self.c_values, "c_values", |s| match exact("", s) {
            Ok(c) if c > 0 => Ok(()),
            Ok(_) => Err("C must be positive".into()),
            Err(e) => Err(e.reason),
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

impl crate::spec::Params for Params {
    fn validate(&self) -> Result<(), FieldError> {
        self.instance().map(|_| ())
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

/// ⟨u, w⟩, exactly.
fn dot(u: &[Rational], w: &[Rational]) -> Rational {
    let mut s = Rational::new();
    for (x, y) in u.iter().zip(w) {
        s += Rational::from(x * y);
    }
    s
}

/// x^e for an integer e (x ≠ 0 when e < 0), exactly.
fn pow(x: &Rational, e: i64) -> Rational {
    let mut r = Rational::from(1);
    for _ in 0..e.unsigned_abs() {
        r *= x;
    }
    if e < 0 {
        r.recip_mut();
    }
    r
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

/// The exponent split of `e:boundrj` for the pair (z₁, z₂) at e^t = s:
/// returns (E₂(s), a₂, r₂(s)) with E₂(s) = ⟨A D z₁, A D(z₂ − z₁)⟩, D = e^{tV} = diag(s^{λ₁}, s^{λ₂}),
/// a₂ = ⟨π_ℱ(A z₁), π_ℱ(A(z₂ − z₁))⟩ and r₂ = E₂ − a₂ s^{2λ₁}. The tokens do not move
/// (stationary configuration), so z_i(t) = z_i(0).
pub fn split(inst: &Instance, s: &Rational) -> (Rational, Rational, Rational) {
    let z1 = inst.z.row(0).to_vec();
    let dz: Vec<Rational> = (0..2)
        .map(|c| Rational::from(inst.z.at(1, c) - inst.z.at(0, c)))
        .collect();
    let d = Mat::diag(&[pow(s, inst.lambda1), pow(s, inst.lambda2)]);
    let e = dot(
        &mat_vec(&inst.a, &mat_vec(&d, &z1)),
        &mat_vec(&inst.a, &mat_vec(&d, &dz)),
    );
    // π_ℱ along 𝒢 = ℝe₂ keeps the first coordinate
    let a2 = mat_vec(&inst.a, &z1)[0].clone() * &mat_vec(&inst.a, &dz)[0];
    let r = &e - &a2 * pow(s, 2 * inst.lambda1);
    (e, a2, r)
}

/// The witness time for a constant C: s = e^t = 4C + 5 (clusters.md §3).
pub fn witness_s(c: &Rational) -> Rational {
    4 * c.clone() + 5
}

/// Runs the claim.
pub fn run(p: &Params, ctx: &Ctx) -> Outcome {
    let mut o = Outcome::new();
    let inst = p.instance().expect("validated");
    let expect_a2 = exact("expect_a2", &p.expect_a2).expect("validated");
    let expect_cross = exact("expect_cross", &p.expect_cross).expect("validated");
    let (l1, l2) = (inst.lambda1, inst.lambda2);

    // hypotheses of d:goodmulti, exactly
    let qk = inst.q.transpose().mul(&inst.k);
    let minors = qk.leading_minors();
    let minors_txt: Vec<String> = minors.iter().map(|m| m.to_string()).collect();
    o.checks.certify(
        "hypothesis (i): QᵀK = A² ≻ 0",
        Certainty::exact(
            qk.is_symmetric() && minors.iter().all(|m| *m > 0) && inst.a.mul(&inst.a) == qk,
        ),
        format!(
            "QᵀK = A² = {}; leading minors {} (Sylvester); A = {} (exact rationals)",
            fmt_mat(&qk),
            minors_txt.join(", "),
            fmt_mat(&inst.a)
        ),
    );
    o.checks.certify(
        "hypothesis (ii): ℱ = ℝe₁ and 𝒢 = ℝe₂ are V-invariant, V|_ℱ = λ·Id with λ > 0",
        Certainty::exact(*inst.v.at(1, 0) == 0 && *inst.v.at(0, 1) == 0 && l1 > 0),
        format!(
            "V = {}: V e₁ = {}·e₁, V e₂ = {}·e₂",
            fmt_mat(&inst.v),
            l1,
            l2
        ),
    );
    o.checks.certify(
        "hypothesis (ii): ρ(V|_𝒢) < λ",
        Certainty::exact(l2.abs() < l1),
        format!("ρ(V|_𝒢) = |{l2}| = {} < {l1} = λ", l2.abs()),
    );

    // stationarity
    let dz: Vec<Rational> = (0..2)
        .map(|c| Rational::from(inst.z.at(1, c) - inst.z.at(0, c)))
        .collect();
    let vdz = mat_vec(&inst.v, &dz);
    o.checks.certify(
        "stationary configuration: V(z₂ − z₁) = 0, so ż_i = Σ_j P_ij V(z_j − z_i) = 0 and z(t) = z(0)",
        Certainty::exact(vdz.iter().all(|x| *x == 0)),
        format!(
            "z₁ = {}, z₂ = {}, V(z₂ − z₁) = {}",
            fmt_vec(inst.z.row(0)),
            fmt_vec(inst.z.row(1)),
            fmt_vec(&vdz)
        ),
    );

    // a₂ and the cross term at t = 0
    let one = Rational::from(1);
    let (e0, a2, _) = split(&inst, &one);
    let az1 = mat_vec(&inst.a, inst.z.row(0));
    let adz = mat_vec(&inst.a, &dz);
    o.checks.certify(
        format!("a₂ = ⟨π_ℱ(A z₁), π_ℱ(A(z₂ − z₁))⟩ = {expect_a2}"),
        Certainty::exact(a2 == expect_a2),
        format!(
            "π_ℱ(A z₁) = ({}, 0), π_ℱ(A(z₂ − z₁)) = ({}, 0), a₂ = {a2}",
            az1[0], adz[0]
        ),
    );
    o.checks.certify(
        format!("⟨A z₁, A(z₂ − z₁)⟩ = {expect_cross}"),
        Certainty::exact(e0 == expect_cross),
        format!(
            "A z₁ = {}, A(z₂ − z₁) = {}, inner product {e0}",
            fmt_vec(&az1),
            fmt_vec(&adz)
        ),
    );

    // e:boundrj at s = 4C + 5
    let mut cert = Certificate::new(&ctx.spec.id, ctx.prec());
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
        let (e, a2, r) = split(&inst, &s);
        let abs_r = Rational::from(r.abs_ref());
        let bound = c * pow(&s, l1 + l2.abs());
        let holds = abs_r <= bound;
        o.checks.certify(
            format!("e:boundrj at C = {c_txt}: |r₂(t)| ≤ C e^{{t(λ₁+|λ₂|)}} at t = ln(4C + 5)"),
            Certainty::exact(holds),
            format!(
                "e^t = s = {s}: |r₂| = {abs_r}, C e^{{t(λ₁+|λ₂|)}} = {bound} (exact rationals)"
            ),
        );
        if first_excess.is_none() && !holds {
            first_excess = Some(Rational::from(&abs_r - &bound));
        }
        let a_term = &a2 * pow(&s, 2 * l1);
        // the certificate restates the failure of e:boundrj as a true inequality,
        // with D = diag(s^λ₁, s^λ₂) written out so the evaluator recomputes E₂
        let (z1, a) = (inst.z.row(0), &inst.a);
        let d = [pow(&s, l1), pow(&s, l2)];
        let w = |v: &[Rational], i: usize| {
            format!(
                "(+ (* {} {} {}) (* {} {} {}))",
                a.at(i, 0),
                d[0],
                v[0],
                a.at(i, 1),
                d[1],
                v[1]
            )
        };
        let e_txt = format!(
            "(+ (* {} {}) (* {} {}))",
            w(z1, 0),
            w(&dz, 0),
            w(z1, 1),
            w(&dz, 1)
        );
        let a2_txt = format!(
            "(* (+ (* {} {}) (* {} {})) (+ (* {} {}) (* {} {})))",
            a.at(0, 0),
            z1[0],
            a.at(0, 1),
            z1[1],
            a.at(0, 0),
            dz[0],
            a.at(0, 1),
            dz[1]
        );
        if !holds {
            cert.push(
                format!(
                    "e:boundrj fails at C = {c_txt}, e^t = s = 4C + 5: |E₂ − a₂ s^(2λ₁)| > C s^(λ₁+|λ₂|)"
                ),
                format!(
                    "(> (abs (- {e_txt} (* {a2_txt} (pow {s} {})))) (* {c} (pow {s} {})))",
                    2 * l1,
                    l1 + l2.abs()
                ),
            );
        }
        table.row(vec![
            c_txt.clone(),
            s.to_string(),
            e.to_string(),
            a_term.to_string(),
            abs_r.to_string(),
            bound.to_string(),
            if holds { "holds" } else { "fails" }.into(),
        ]);
    }
    o.tables.push(table);

    // re-check the certificate with the expression evaluator alone
    if !cert.obligations.is_empty() {
        let mut res = Certainty::True;
        let mut errs = Vec::new();
        for ob in &cert.obligations {
            match expr::check(&ob.formula, ctx.prec()) {
                Ok(c) => res = res.and(c),
                Err(e) => {
                    res = Certainty::Unknown;
                    errs.push(format!("{}: {e}", ob.name));
                }
            }
        }
        o.checks.certify(
            "certificate obligations (the failures of e:boundrj) re-checked by the kernel's expression evaluator",
            res,
            if errs.is_empty() {
                format!("{} obligations, exact", cert.obligations.len())
            } else {
                errs.join("; ")
            },
        );
        o.certificate = Some(cert);
    }

    let c0 = inst.cs.first().cloned().unwrap_or_default();
    let c0_txt = p.c_values.first().cloned().unwrap_or_default();
    let s0 = witness_s(&c0);
    let (_, _, r0) = split(&inst, &s0);
    let bound0 = &c0 * pow(&s0, l1 + l2.abs());
    let ratio = Rational::from(r0.abs_ref()) / bound0;
    o.figure(
        format!("|r₂| / (C e^{{t(λ₁+|λ₂|)}}) at C = {c0_txt}, t = ln {s0}"),
        ratio.to_f64(),
        format!("{ratio} (exact; > 1 means e:boundrj fails)"),
    );
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
         every number above is an exact rational, no exponential is evaluated: t = ln s enters only through e^t = s."
    ));
    o
}
