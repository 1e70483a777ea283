//! sparse/row-mass: the τ-mass condition (c) of the project's explicit
//! reconstruction of the Likhosherstov–Choromanski–Weller theorem (sparse.md §3–§5,
//! \[derived\]; which notion the paper uses is unconfirmed).
//!
//! Per instance (n, d, k, random or adversarial support): S from the seed, t*
//! exact, rational logits B_ij = Δ + r_ij with a rational Δ certified to be
//! ≥ ln((n − 1)/τ) + ε, Λ = B G/d exact, and the off-support row mass
//! Σ_{j∉supp_i} M_ij bounded above with MPFR directed rounding
//! (e^{Λ_ij − max Λ_i} enclosures, outward sums): ≤ (n − 1)e^{−(Δ − 2η)} always,
//! and ≤ τ when 2η ≤ ε. The §5 mass-corollary table (γ, d_formula) is reproduced
//! by certified ceilings; d_formula/ln³ n is reported separately as this
//! construction's log³ n growth (never fitted together with sparse/log-dimension).

use super::corollary_dimension::{d_formula_expr, PrintedDecimal, SettingTerms};
use super::ratio_lemma::{seed_for, target_logits, TARGET_KINDS};
use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::StatementError;
use crate::kernel::expr::build::{
    add, and, call, div, exp, ge, le, ln, mul, parse_term, pow, q, sub, var, Term,
};
use crate::kernel::expr::{Datum, SparseRows};
use crate::kernel::{expr, Checked, Interval, SignMatrix, Statement};
use crate::outcome::{Observations, Presentation, Table};
use crate::sparse::construct::{logits_row, t_star};
use crate::sparse::sample::draw_signs;
use crate::spec::exact as rational;
use crate::spec::{check_each, ensure, FieldError};
use rug::{Integer, Rational};
use serde::{Deserialize, Serialize};

/// One row of the §5 mass-corollary table.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MassRow {
    /// n.
    pub n: u64,
    /// Printed γ = ln((n − 1)/τ).
    pub gamma: String,
    /// d_formula.
    pub d: u64,
    /// Printed d_formula / ln³ n.
    pub ratio: String,
}

/// Parameters of sparse/row-mass as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// Seed of S (as in sparse/ratio-lemma).
    pub seed: u64,
    /// Instances (n, d, k).
    pub instances: Vec<[usize; 3]>,
    /// τ (exact literal in (0, 1)).
    pub tau: String,
    /// ε (exact literal > 0).
    pub eps: String,
    /// ρ (exact literal ≥ 0).
    pub rho: String,
    /// Random r_ij = ρ·u/den.
    pub denominator: u64,
    /// Sparsity k of the §5 table.
    pub table_k: u64,
    /// δ of the §5 table (S-expression term).
    pub table_delta: String,
    /// The §5 mass-corollary table.
    pub table: Vec<MassRow>,
}

/// Parameters of sparse/row-mass, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The parameters as written (names and tables quote them).
    pub raw: Raw,
    /// τ, ε and ρ.
    exacts: (Rational, Rational, Rational),
    /// Per row of the table: γ and the ratio as printed.
    printed: Vec<[PrintedDecimal; 2]>,
    /// δ of the §5 table, as a term.
    table_delta: Term,
}

/// Bound on a run's work, Σ over the instances of n·(n + d/64), weighed at the spec's
/// precision ([`crate::claims::shape::Resolving::weigh`]): 2^25. Each instance draws its
/// n × d signs, forms their Gram matrix (n²d/64 words) and encloses the softmax of every row
/// of every target (n² entries at the run's precision). Measured, one core: [4096, 128, 1]
/// took 83 CPU-s and [1024, 131072, 1] 19 CPU-s (about 5 µs an n² unit, 0.1 µs an n·d one).
/// The committed full profile is ≈ 2^22.2; the fields' own limits allowed any number of
/// instances of n = 4096.
pub const MAX_WORK: u128 = 1 << 25;

/// sparse/row-mass.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(raw: Raw, at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        check_each(&raw.instances, "instances", |f, &[n, d, k]| {
            ensure(
                (2..=4096).contains(&n) && (1..=1 << 17).contains(&d) && k >= 1 && k < n,
                f,
                "need 2 ≤ n ≤ 4096, 1 ≤ d ≤ 131072, 1 ≤ k < n",
            )
        })?;
        let work: u128 = raw
            .instances
            .iter()
            .map(|&[n, d, _]| n as u128 * (n as u128 + d as u128 / 64))
            .sum();
        ensure(
            at.weigh(work) <= MAX_WORK,
            "instances",
            format!(
                "Σ n·(n + d/64) is {}, above the bound 2^25 (about two minutes): use fewer or \
                 smaller instances, or a lower precision",
                at.show(work)
            ),
        )?;
        let tau = rational("tau", &raw.tau)?;
        ensure(tau > 0 && tau < 1, "tau", "τ must lie in (0, 1)")?;
        let eps = rational("eps", &raw.eps)?;
        ensure(eps > 0 && eps <= 10, "eps", "ε must lie in (0, 10]")?;
        let rho = rational("rho", &raw.rho)?;
        ensure((0..=100).contains(&rho), "rho", "ρ must lie in [0, 100]")?;
        ensure(
            (1..=1 << 20).contains(&raw.denominator),
            "denominator",
            "must lie in 1..=2^20",
        )?;
        ensure(
            (1..=64).contains(&raw.table_k),
            "table_k",
            "must lie in 1..=64",
        )?;
        let dl = expr::eval(&raw.table_delta, 64)
            .map_err(|e| FieldError::new("table_delta", e.to_string()))?;
        ensure(
            dl.lo_f64() > 0.0 && dl.hi_f64() < 1.0,
            "table_delta",
            "δ must lie in (0, 1)",
        )?;
        let table_delta = parse_term(&raw.table_delta)
            .map_err(|e| FieldError::new("table_delta", e.to_string()))?;
        let mut printed = Vec::with_capacity(raw.table.len());
        for (i, r) in raw.table.iter().enumerate() {
            ensure(
                r.n >= 2 && r.n <= 1 << 40,
                format!("table[{i}].n"),
                "n must lie in 2..=2^40",
            )?;
            let decimal = |f: &str, s: &str| {
                PrintedDecimal::parse(s).ok_or_else(|| {
                    FieldError::new(
                        format!("table[{i}].{f}"),
                        format!("`{s}` is not a plain decimal"),
                    )
                })
            };
            printed.push([decimal("gamma", &r.gamma)?, decimal("ratio", &r.ratio)?]);
        }
        Ok(Params {
            raw,
            exacts: (tau, eps, rho),
            printed,
            table_delta,
        })
    }

    fn statement(
        p: &Params,
        claim: &str,
        _hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        Some(Ok(p.build(claim)))
    }
    type Witness = Vec<String>;
    /// The instances too large for the certificate, decided by the kernel with the
    /// statement's obligations during the run: the obligations (or errors) that were
    /// not proven.
    fn witness(p: &Params, ctx: &Ctx) -> Vec<String> {
        let prec = ctx.prec();
        let mut failed: Vec<String> = Vec::new();
        for (q, &inst) in p.raw.instances.iter().enumerate() {
            if inst[0] * inst[1] > MAX_STATEMENT_ENTRIES {
                let mut st = Statement::new(&ctx.spec.id);
                p.instance(&mut st, q, inst);
                match crate::kernel::check(&st, prec) {
                    Ok(c) if c.as_expected() => {}
                    Ok(c) => failed.extend(c.failures().iter().map(|n| n.to_string())),
                    Err(e) => failed.push(e.to_string()),
                }
            }
        }
        failed
    }
    /// A failure outside the certificate makes the run inconclusive (a kernel
    /// refutation of the statement still wins: `Outcome::verdict`).
    fn observe(
        _: &Params,
        failed: &Vec<String>,
        _: Option<&Checked>,
        _: &Ctx,
        o: &mut Observations,
    ) {
        if !failed.is_empty() {
            o.declare_inconclusive(format!(
                "not proven outside the certificate: {}",
                failed.join(" | ")
            ));
        }
    }
    /// The tables (directed-rounding row masses, shown, not counted), the figure and
    /// the notes.
    fn present(p: &Params, _: &Vec<String>, _: Option<&Checked>, ctx: &Ctx, o: &mut Presentation) {
        let prec = ctx.prec();
        let (tau, eps, rho) = p.exacts();
        let mut inst = Table::new(
            "Off-support row mass, upper bounds with directed rounding",
            &[
                "n",
                "d",
                "k",
                "B",
                "Δ",
                "t*",
                "2η",
                "max mass ≤",
                "(n − 1)e^{−(Δ−2η)}",
                "τ asserted",
                "in the certificate",
            ],
        );
        for &[n, d, k] in &p.raw.instances {
            let delta = margin(n, &tau, &eps, MARGIN_PREC);
            let s = draw_signs(n, d, seed_for(p.raw.seed, n, d));
            let ts = t_star(&s);
            let top = Rational::from(&delta + &rho);
            let eta = Rational::from(&ts * k as u64) * &top;
            let two_eta = Rational::from(2 * &eta);
            for kind in TARGET_KINDS {
                let b = target_logits(kind, &s, k, &delta, &rho, p.raw.denominator, p.raw.seed);
                let mass = max_row_mass(&s, &b, prec);
                let bound = &Interval::from_i64(prec, (n - 1) as i64)
                    * &Interval::from_rational(prec, &Rational::from(&two_eta - &delta)).exp();
                inst.row(vec![
                    n.to_string(),
                    d.to_string(),
                    k.to_string(),
                    kind.into(),
                    delta.to_string(),
                    ts.to_string(),
                    format!("{:.6}", two_eta.to_f64()),
                    format!("{:.4e}", mass.hi_f64()),
                    format!("{:.4e}", bound.lo_f64()),
                    if two_eta <= eps {
                        "yes".into()
                    } else {
                        "no (2η > ε)".into()
                    },
                    if n * d <= MAX_STATEMENT_ENTRIES {
                        "yes".into()
                    } else {
                        "no (decided in the run)".into()
                    },
                ]);
            }
        }
        o.tables.push(inst);
        let mut tab = Table::new(
            "Mass corollary: γ = ln((n − 1)/τ), d_formula (certified ceilings) and d_formula / ln³ n (this construction's log³ n growth)",
            &["n", "γ", "d_formula", "d_formula / ln³ n"],
        );
        let mut last_ratio = 0.0;
        for r in &p.raw.table {
            let rv = expr::eval_built(&ratio_term(r), prec, &Default::default())
                .map(|x| x.mid_f64())
                .unwrap_or(f64::NAN);
            last_ratio = rv;
            tab.row(vec![
                r.n.to_string(),
                r.gamma.clone(),
                r.d.to_string(),
                format!("{rv:.2}"),
            ]);
        }
        o.tables.push(tab);
        o.figure(
            "d_formula / ln³ n at the largest n of the table",
            last_ratio,
            format!(
                "{last_ratio:.2} (the mass version needs d = Θ(log³ n) in this construction; the ratio tends to 16k²/ε² slowly)"
            ),
        );
        o.note("Check of the project's explicit reconstruction of the Likhosherstov–Choromanski–Weller theorem (sparse.md §3–§5, provenance: derived); whether the paper uses the row-mass notion is unconfirmed.");
        o.note(format!("The mass bounds are proven through the exact lemma (b): M_ij ≤ M_ij/M_ij' = e^{{Λ_ij − Λ_ij'}} for j ∉ supp_i, j' ∈ supp_i, so Σ_{{j∉supp_i}} M_ij ≤ (n − 1)·e^{{max (b)}}. Instances with n·d ≤ {MAX_STATEMENT_ENTRIES} carry S and B in the certificate; larger ones are decided by the kernel with the same obligations during the run, not in the certificate. The column \"max mass ≤\" (directed-rounding softmax sums) is shown, not counted."));
    }
}

/// A rational Δ ≥ ln((n − 1)/τ) + ε: the upper end of the enclosure rounded up to
/// 1/1000 (a witness value; the statement proves the inequality).
pub fn margin(n: usize, tau: &Rational, eps: &Rational, prec: u32) -> Rational {
    let x = &Interval::from_rational(prec, &(Rational::from((n - 1) as u64) / tau.clone())).ln()
        + &Interval::from_rational(prec, eps);
    let hi = x.hi().clone() * 1000u32;
    let up = hi
        .ceil()
        .to_integer()
        .unwrap_or_else(|| Integer::from(1_000_000));
    Rational::from((up, 1000))
}

/// Instances whose S has at most this many entries carry their data in the
/// statement (and certificate); larger ones are decided in the run.
pub const MAX_STATEMENT_ENTRIES: usize = 1 << 18;

/// The precision Δ is chosen at (a witness choice; the statement proves Δ's bound).
const MARGIN_PREC: u32 = 128;

impl Params {
    fn exacts(&self) -> (Rational, Rational, Rational) {
        self.exacts.clone()
    }

    /// The obligations of one instance over the data `S{q}`, `B{q}{kind}`: Δ ≥
    /// ln((n − 1)/τ) + ε, and per target kind the mass bound through (b): every
    /// M_ij ≤ M_ij/M_ij' = e^{Λ_ij − Λ_ij'} (j ∉ supp_i, j' ∈ supp_i), so
    /// Σ_{j∉supp_i} M_ij ≤ (n − 1)·e^{max (b)}, with (b) ≤ 2η − Δ, η = t*·k·(Δ + ρ)
    /// (t* = gram-max-abs/cols of S itself), and ≤ τ when 2η ≤ ε.
    fn instance(&self, st: &mut Statement, index: usize, [n, d, k]: [usize; 3]) {
        let (tau, eps, rho) = self.exacts();
        let delta = margin(n, &tau, &eps, MARGIN_PREC);
        let s = draw_signs(n, d, seed_for(self.raw.seed, n, d));
        let ts = t_star(&s);
        let top = Rational::from(&delta + &rho);
        let two_eta = (2 * Rational::from(&ts * k as u64)) * &top;
        let sname = format!("S{index}");
        let n1 = || Term::from(n - 1);
        st.state(
            format!("n = {n}, d = {d}, k = {k}: Δ = {delta} ≥ ln((n − 1)/τ) + ε"),
            &le(add([ln(div(n1(), q(&tau))), q(&eps)]), q(&delta)),
        );
        let eta = || {
            mul([
                div(
                    call("gram-max-abs", [var(&sname)]),
                    call("cols", [var(&sname)]),
                ),
                k.into(),
                q(&top),
            ])
        };
        for kind in TARGET_KINDS {
            let b = target_logits(
                kind,
                &s,
                k,
                &delta,
                &rho,
                self.raw.denominator,
                self.raw.seed,
            );
            let bname = format!("B{index}{kind}");
            let id = format!("n = {n}, d = {d}, k = {k}, {kind}");
            let of_b = |op: &str| call(op, [var(&bname)]);
            let lemma_b = || call("lemma-b", [var(&sname), var(&bname)]);
            st.state(
                format!("{id}: B row-{k}-sparse with entries in [Δ, Δ + ρ]"),
                &and([
                    le(of_b("row-nnz-max"), k.into()),
                    ge(of_b("entry-min"), q(&delta)),
                    le(of_b("entry-max"), q(&top)),
                ]),
            );
            st.state(
                format!(
                    "{id}: Σ_{{j∉supp_i}} M_ij ≤ (n − 1)e^{{max (b)}} ≤ (n − 1)e^{{−(Δ − 2η)}}"
                ),
                &le(lemma_b(), sub(mul([Term::from(2i64), eta()]), q(&delta))),
            );
            if two_eta <= eps {
                st.state(
                    format!(
                        "{id}: Σ_{{j∉supp_i}} M_ij ≤ (n − 1)e^{{max (b)}} ≤ τ = {tau} (2η ≤ ε)"
                    ),
                    &le(mul([n1(), exp(lemma_b())]), q(&tau)),
                );
            }
            st.datum(&bname, Datum::Sparse(b));
        }
        st.datum(&sname, Datum::Signs(s));
    }

    /// The statement: the instances small enough to carry ([`MAX_STATEMENT_ENTRIES`]),
    /// and the §5 mass-corollary table (printed γ, certified d_formula, printed ratio).
    fn build(&self, claim: &str) -> Statement {
        let mut st = Statement::new(claim);
        for (q, &inst) in self.raw.instances.iter().enumerate() {
            if inst[0] * inst[1] <= MAX_STATEMENT_ENTRIES {
                self.instance(&mut st, q, inst);
            }
        }
        let (tau, eps, rho) = self.exacts();
        for (r, [gamma, ratio]) in self.raw.table.iter().zip(&self.printed) {
            let g = ln(div(sub(r.n.into(), Term::from(1i64)), q(&tau)));
            st.state(
                format!("γ(n = {}) = {}", r.n, r.gamma),
                &gamma.formula(g.clone()),
            );
            let s = SettingTerms {
                k: self.raw.table_k,
                eps: q(&eps),
                gamma: g,
                rho: q(&rho),
                delta: self.table_delta.clone(),
            };
            st.state(
                format!("mass d_formula(n = {}) = {}", r.n, r.d),
                &crate::kernel::expr::build::eq(d_formula_expr(r.n, &s), r.d.into()),
            );
            st.state(
                format!("d_formula/ln³ n (n = {}) = {}", r.n, r.ratio),
                &ratio.formula(ratio_term(r)),
            );
        }
        st
    }
}

fn ratio_term(r: &MassRow) -> Term {
    div(r.d.into(), pow(ln(r.n.into()), 3))
}

/// max_i of an upper bound on Σ_{j∉supp_i} M_ij (directed rounding; shown in the
/// table, not evidence).
pub fn max_row_mass(s: &SignMatrix, b: &SparseRows, prec: u32) -> Interval {
    use rayon::prelude::*;
    let masses: Vec<Interval> = b
        .rows
        .par_iter()
        .map(|row| {
            let lam = logits_row(s, row);
            let m = lam.iter().max().cloned().unwrap_or_default();
            let mut out = Interval::zero(prec);
            let mut inn = Interval::zero(prec);
            for (j, l) in lam.iter().enumerate() {
                let z = Interval::from_rational(prec, &Rational::from(l - &m)).exp();
                if row.binary_search_by_key(&j, |(c, _)| *c).is_ok() {
                    inn.add_assign(&z);
                } else {
                    out.add_assign(&z);
                }
            }
            &out / &(&out + &inn)
        })
        .collect();
    masses
        .into_iter()
        .reduce(|a, b| a.max(&b))
        .unwrap_or_else(|| Interval::zero(prec))
}
