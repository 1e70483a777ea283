//! sparse/corollary-dimension: the ratio-version corollary of the project's
//! explicit reconstruction of the Likhosherstov–Choromanski–Weller theorem
//! (sparse.md §3–§5, \[derived\]; not the paper's constants).
//!
//! (i) With Δ = γ + ε and t = ε/(2k(γ + ε + ρ)), η = t·k·(Δ + ρ) = ε/2: exact for
//! rational γ, ρ; within 10^−30 in intervals when γ = ln 10. (ii) The §5 table
//! d_formula = ⌈8k²(γ + ε + ρ)² ln(n²/δ)/ε²⌉ reproduced by certified ceilings, and
//! the printed t digits. (iii) Grid consistency: for each setting, n and seed,
//! the exact d_min (crate::sparse::dimension::min_dimension) ≤ d_formula. (iv) One
//! instance end to end: S drawn from the seed at n, d = d_formula, and t* ≤ t
//! certified, which by the lemma certifies the (ε, γ)-approximation of every
//! admissible A. The statement (and certificate) carries (i), (ii) and a smaller
//! instance's S redrawn from its seed (the n = 1024 one would be > 1 MB); (iii)
//! and (iv) are decided in the run, shown, and make it inconclusive if they fail.

use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::StatementError;
use crate::kernel::expr::build::{
    abs, add, and, call, ceil, div, eq, int, le, lit, ln, mul, parse_term, pow, q, sub, var,
    Formula, Term,
};
use crate::kernel::expr::ExprError;
use crate::kernel::{expr, parse_rational, Certainty, Checked, Interval, Statement};
use crate::outcome::{Observations, Presentation, Table};
use crate::sparse::construct::{d_expr, t_expr, t_of, t_star};
use crate::sparse::sample::draw_signs;
use crate::spec::{check_each, ensure, FieldError};
use rug::Rational;
use serde::{Deserialize, Serialize};

/// One parameter set (γ, ρ, ε, δ are S-expression terms, e.g. `"(ln 10)"`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Setting {
    /// Row sparsity k.
    pub k: u64,
    /// ε.
    pub eps: String,
    /// γ.
    pub gamma: String,
    /// ρ.
    pub rho: String,
    /// δ.
    pub delta: String,
}

impl Setting {
    /// Its terms, each read once from the spec's text ([`parse_term`]).
    pub fn terms(&self) -> Result<SettingTerms, ExprError> {
        Ok(SettingTerms {
            k: self.k,
            eps: parse_term(&self.eps)?,
            gamma: parse_term(&self.gamma)?,
            rho: parse_term(&self.rho)?,
            delta: parse_term(&self.delta)?,
        })
    }
}

/// A setting resolved: γ, ρ, ε and δ as terms of the statement.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingTerms {
    /// Row sparsity k.
    pub k: u64,
    /// ε.
    pub eps: Term,
    /// γ.
    pub gamma: Term,
    /// ρ.
    pub rho: Term,
    /// δ.
    pub delta: Term,
}

impl SettingTerms {
    /// t = ε/(2k(γ + ε + ρ)).
    fn t(&self) -> Term {
        t_expr(self.k, &self.eps, &self.gamma, &self.rho)
    }
}

/// One row of the §5 d_formula table.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormulaRow {
    /// The setting.
    pub setting: Setting,
    /// Printed t (may be empty: not printed in §5).
    pub t: String,
    /// (n, d_formula) pairs from §5.
    pub d: Vec<(u64, u64)>,
}

/// The end-to-end instance.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Instance {
    /// n.
    pub n: u64,
    /// The setting.
    pub setting: Setting,
    /// The claimed d (= d_formula).
    pub d: u64,
    /// Printed t.
    pub t: String,
    /// Seed of S.
    pub seed: u64,
}

/// The grid of (iii): every combination of the lists, at each n and seed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grid {
    /// Sequence lengths n.
    pub ns: Vec<usize>,
    /// Seeds of S.
    pub seeds: Vec<u64>,
    /// Row sparsities k.
    pub ks: Vec<u64>,
    /// ε values (S-expression terms).
    pub eps: Vec<String>,
    /// γ values (S-expression terms).
    pub gammas: Vec<String>,
    /// ρ values (S-expression terms).
    pub rhos: Vec<String>,
    /// δ (S-expression term).
    pub delta: String,
}

/// Parameters of sparse/corollary-dimension as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// Settings for the identity η = ε/2.
    pub identities: Vec<Setting>,
    /// The §5 table.
    pub table: Vec<FormulaRow>,
    /// The end-to-end instance checked in the run.
    pub instance: Instance,
    /// The smaller instance written to the certificate (n ≤ 256, d ≤ 4096).
    pub certificate_instance: Instance,
    /// The grid consistency d_min ≤ d_formula.
    pub grid: Grid,
}

fn positive_term(field: &str, s: &str) -> Result<(), FieldError> {
    let v = expr::eval(s, 64).map_err(|e| FieldError::new(field, format!("`{s}`: {e}")))?;
    ensure(
        v.is_finite() && v.lo_f64() > 0.0,
        field,
        format!("`{s}` must be a positive number"),
    )
}

fn setting_ok(f: &str, s: &Setting) -> Result<SettingTerms, FieldError> {
    ensure(
        (1..=1024).contains(&s.k),
        format!("{f}.k"),
        "k must lie in 1..=1024",
    )?;
    positive_term(&format!("{f}.eps"), &s.eps)?;
    positive_term(&format!("{f}.gamma"), &s.gamma)?;
    positive_term(&format!("{f}.delta"), &s.delta)?;
    let r =
        expr::eval(&s.rho, 64).map_err(|e| FieldError::new(format!("{f}.rho"), e.to_string()))?;
    ensure(
        r.is_finite() && r.lo_f64() >= 0.0,
        format!("{f}.rho"),
        "ρ must be ≥ 0",
    )?;
    let d = expr::eval(&s.delta, 64).expect("checked");
    ensure(
        d.hi_f64() < 1.0,
        format!("{f}.delta"),
        "δ must lie in (0, 1)",
    )?;
    s.terms().map_err(|e| FieldError::new(f, e.to_string()))
}

fn instance_ok(f: &str, i: &Instance, max_n: u64, max_d: u64) -> Result<SettingTerms, FieldError> {
    let terms = setting_ok(&format!("{f}.setting"), &i.setting)?;
    ensure(
        (2..=max_n).contains(&i.n),
        format!("{f}.n"),
        format!("n must lie in 2..={max_n}"),
    )?;
    ensure(
        (1..=max_d).contains(&i.d),
        format!("{f}.d"),
        format!("d must lie in 1..={max_d}"),
    )?;
    printed_ok(&format!("{f}.t"), &i.t)?;
    Ok(terms)
}

fn printed_ok(f: &str, s: &str) -> Result<(), FieldError> {
    if s.is_empty() {
        return Ok(());
    }
    half_unit(s).map(|_| ()).ok_or_else(|| {
        FieldError::new(f, format!("`{s}` is not a plain decimal such as 0.0892034"))
    })
}

/// A printed t that must be given.
fn printed_t(f: &str, s: &str) -> Result<PrintedDecimal, FieldError> {
    PrintedDecimal::parse(s).ok_or_else(|| {
        FieldError::new(f, format!("`{s}` is not a plain decimal such as 0.0892034"))
    })
}

/// Parameters of sparse/corollary-dimension, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The parameters as written (the settings are terms of the statement).
    pub raw: Raw,
    /// The printed t of each table row, when given.
    table_t: Vec<Option<PrintedDecimal>>,
    /// The printed t of the end-to-end instance.
    instance_t: PrintedDecimal,
    /// The printed t of the certificate instance.
    certificate_t: PrintedDecimal,
    /// The settings' terms: the identities', the table rows', the end-to-end and the
    /// certificate instance's, in order.
    identities: Vec<SettingTerms>,
    table_terms: Vec<SettingTerms>,
    instance_terms: SettingTerms,
    certificate_terms: SettingTerms,
    /// The grid's ε, γ, ρ and δ as terms.
    grid_terms: GridTerms,
}

/// The grid's lists as terms.
#[derive(Debug, Clone)]
struct GridTerms {
    eps: Vec<Term>,
    gammas: Vec<Term>,
    rhos: Vec<Term>,
    delta: Term,
}

/// sparse/corollary-dimension.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(raw: Raw, at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        check_each(&raw.identities, "identities", |_, _| Ok(()))?;
        let identities = raw
            .identities
            .iter()
            .enumerate()
            .map(|(i, s)| setting_ok(&format!("identities[{i}]"), s))
            .collect::<Result<Vec<_>, _>>()?;
        check_each(&raw.table, "table", |f, r| {
            ensure(!r.d.is_empty(), f, "give at least one (n, d) pair")
        })?;
        let mut table_terms = Vec::with_capacity(raw.table.len());
        for (i, r) in raw.table.iter().enumerate() {
            table_terms.push(setting_ok(&format!("table[{i}].setting"), &r.setting)?);
            printed_ok(&format!("table[{i}].t"), &r.t)?;
            for (q, &(n, d)) in r.d.iter().enumerate() {
                ensure(
                    (2..=1 << 40).contains(&n) && d >= 1,
                    format!("table[{i}].d[{q}]"),
                    "need 2 ≤ n ≤ 2^40 and d ≥ 1",
                )?;
            }
        }
        let g = &raw.grid;
        check_each(&g.ns, "grid.ns", |f, &n| {
            ensure((2..=1024).contains(&n), f, "n must lie in 2..=1024")
        })?;
        check_each(&g.seeds, "grid.seeds", |_, _| Ok(()))?;
        check_each(&g.ks, "grid.ks", |f, &k| {
            ensure((1..=8).contains(&k), f, "k must lie in 1..=8")
        })?;
        check_each(&g.eps, "grid.eps", |_, _| Ok(()))?;
        check_each(&g.gammas, "grid.gammas", |_, _| Ok(()))?;
        check_each(&g.rhos, "grid.rhos", |_, _| Ok(()))?;
        for (ie, e) in g.eps.iter().enumerate() {
            positive_term(&format!("grid.eps[{ie}]"), e)?;
            let v = expr::eval(e, 64).expect("checked");
            ensure(
                v.lo_f64() >= 0.1,
                format!("grid.eps[{ie}]"),
                "ε ≥ 1/10 keeps d_formula small enough to scan",
            )?;
        }
        for (ig, x) in g.gammas.iter().enumerate() {
            positive_term(&format!("grid.gammas[{ig}]"), x)?;
        }
        for (ir, x) in g.rhos.iter().enumerate() {
            let r = expr::eval(x, 64)
                .map_err(|e| FieldError::new(format!("grid.rhos[{ir}]"), e.to_string()))?;
            ensure(
                r.is_finite() && r.lo_f64() >= 0.0 && r.hi_f64() <= 10.0,
                format!("grid.rhos[{ir}]"),
                "ρ must lie in [0, 10]",
            )?;
        }
        positive_term("grid.delta", &g.delta)?;
        let terms = |f: &str, xs: &[String]| {
            xs.iter()
                .enumerate()
                .map(|(i, x)| {
                    parse_term(x).map_err(|e| FieldError::new(format!("{f}[{i}]"), e.to_string()))
                })
                .collect::<Result<Vec<_>, _>>()
        };
        let grid_terms = GridTerms {
            eps: terms("grid.eps", &g.eps)?,
            gammas: terms("grid.gammas", &g.gammas)?,
            rhos: terms("grid.rhos", &g.rhos)?,
            delta: parse_term(&g.delta)
                .map_err(|e| FieldError::new("grid.delta", e.to_string()))?,
        };
        check_grid_work(g, &grid_terms, at)?;
        let instance_terms = instance_ok("instance", &raw.instance, 4096, 20_000)?;
        let certificate_terms =
            instance_ok("certificate_instance", &raw.certificate_instance, 256, 4096)?;
        let table_t = raw
            .table
            .iter()
            .map(|r| PrintedDecimal::parse(&r.t))
            .collect();
        Ok(Params {
            table_t,
            instance_t: printed_t("instance.t", &raw.instance.t)?,
            certificate_t: printed_t("certificate_instance.t", &raw.certificate_instance.t)?,
            identities,
            table_terms,
            instance_terms,
            certificate_terms,
            grid_terms,
            raw,
        })
    }

    fn statement(
        p: &Params,
        claim: &str,
        hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        Some(p.build(claim, hints))
    }
    type Witness = Witness;
    /// (iii) the grid, and (iv) the end-to-end instance, decided in the run with the
    /// statement's obligations (its S would make the certificate megabytes).
    fn witness(p: &Params, ctx: &Ctx) -> Witness {
        let prec = ctx.prec();
        let ci = &p.raw.certificate_instance;
        let cs = draw_signs(ci.n as usize, ci.d as usize, ci.seed);
        let cert_t_star = t_star(&cs);
        drop(cs);
        let mut failed: Vec<String> = Vec::new();
        let grid = grid(p, prec);
        if !grid.all {
            failed.push("(iii) a grid cell has no d_min ≤ d_formula".into());
        }
        // (iv) the end-to-end instance, decided in the run with the same obligations
        let i = &p.raw.instance;
        let s = draw_signs(i.n as usize, i.d as usize, i.seed);
        let ts = t_star(&s);
        let mut st = Statement::new(&ctx.spec.id);
        st.datum("S", expr::Datum::Signs(s));
        for (name, f) in instance_obligations(i, &p.instance_terms) {
            st.state(name, &f);
        }
        st.state(
            format!("t = {} printed", i.t),
            &p.instance_t.formula(p.instance_terms.t()),
        );
        match crate::kernel::check(&st, prec) {
            Ok(c) if c.as_expected() => {}
            Ok(c) => failed.extend(c.failures().iter().map(|n| format!("end to end: {n}"))),
            Err(e) => failed.push(format!("end to end: {e}")),
        }
        Witness {
            cert_t_star,
            grid,
            t_star: ts,
            failed,
        }
    }
    /// The hint `t_star`: t* of the certificate instance.
    fn hints(_: &Params, w: &Witness) -> Hints {
        Hints::from([("t_star".to_string(), w.cert_t_star.to_string())])
    }
    /// A failure outside the certificate makes the run inconclusive (a kernel
    /// refutation of the statement still wins: `Outcome::verdict`).
    fn observe(_: &Params, w: &Witness, _: Option<&Checked>, _: &Ctx, o: &mut Observations) {
        if !w.failed.is_empty() {
            o.declare_inconclusive(format!(
                "not proven outside the certificate: {}",
                w.failed.join(" | ")
            ));
        }
    }
    /// (ii) with the kernel's decisions, the grid, the end-to-end figure and the notes.
    fn present(
        p: &Params,
        w: &Witness,
        checked: Option<&Checked>,
        ctx: &Ctx,
        o: &mut Presentation,
    ) {
        let prec = ctx.prec();
        o.note("Check of the project's explicit reconstruction of the Likhosherstov–Choromanski–Weller theorem (sparse.md §3–§5, provenance: derived); d_formula and t are the reconstruction's constants, not the paper's.");
        let ci = &p.raw.certificate_instance;
        let result = |name: &str| {
            checked
                .and_then(|c| c.decisions().iter().find(|d| d.name() == name))
                .map_or("—".to_string(), |d| format!("{:?}", d.result()))
        };
        // (ii), shown
        let mut table = Table::new(
            "d_formula = ⌈8k²(γ + ε + ρ)² ln(n²/δ)/ε²⌉ (certified ceilings) against sparse.md §5",
            &["setting", "t", "n", "§5", "certified"],
        );
        for (r, terms) in p.raw.table.iter().zip(&p.table_terms) {
            let s = &r.setting;
            let tv = expr::eval_built(&terms.t(), prec, &Default::default())
                .map(|x| format!("{:.9}", x.mid_f64()))
                .unwrap_or_default();
            for &(n, d) in &r.d {
                table.row(vec![
                    describe(s),
                    tv.clone(),
                    n.to_string(),
                    d.to_string(),
                    result(&format!("d_formula(n = {n}) = {d} at {}", describe(s))),
                ]);
            }
        }
        o.tables.push(table);
        present_grid(p, &w.grid, o);
        let failed = &w.failed;
        let i = &p.raw.instance;
        let ts = &w.t_star;
        let tv = expr::eval_built(&p.instance_terms.t(), prec, &Default::default())
            .unwrap_or_else(|_| Interval::entire(prec));
        o.figure(
            "t*/t (end-to-end instance)",
            ts.to_f64() / tv.mid_f64(),
            format!(
                "t* = {ts} against t = ε/(2k(γ + ε + ρ)) at n = {}, d = {}",
                i.n, i.d
            ),
        );
        o.note(format!(
            "The statement (and certificate) carries S for the smaller instance n = {}, d = {} (the n = {} instance's S would exceed 1 MB); the end-to-end instance n = {}, d = {}, seed {} (t* = {ts} ≤ t, d = d_formula, so every admissible A is (ε, γ)-approximated) is decided by the kernel with the same obligations during the run{}, but is not part of the certificate.",
            ci.n, ci.d, i.n, i.n, i.d, i.seed,
            if failed.iter().any(|f| f.starts_with("end to end")) { " and FAILED" } else { "" }
        ));
    }
}

/// For a plain decimal `s`, (its value, half a unit in its last digit).
pub fn half_unit(s: &str) -> Option<(Rational, Rational)> {
    let body = s.strip_prefix('-').unwrap_or(s);
    if body.is_empty()
        || !body.chars().all(|c| c.is_ascii_digit() || c == '.')
        || body.matches('.').count() > 1
    {
        return None;
    }
    let decimals = body.split_once('.').map_or(0, |(_, f)| f.len());
    let v = parse_rational(s).ok()?;
    let unit = Rational::from((
        1,
        rug::Integer::from(rug::Integer::u_pow_u(10, decimals as u32)),
    ));
    Some((v, unit / 2))
}

/// The formula |x − printed| ≤ ½ unit in the last printed digit (x an
/// S-expression term; `printed` validated by [`half_unit`]).
/// A printed decimal, resolved: its value and half a unit in its last digit ([`half_unit`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PrintedDecimal {
    /// The value.
    pub value: Rational,
    /// Half a unit in the last printed digit.
    pub half: Rational,
}

impl PrintedDecimal {
    /// `s` as a printed decimal, or `None` when it is not a plain decimal.
    pub fn parse(s: &str) -> Option<PrintedDecimal> {
        half_unit(s).map(|(value, half)| PrintedDecimal { value, half })
    }

    /// |term − value| ≤ half: `term` prints as this decimal.
    pub fn formula(&self, term: Term) -> Formula {
        le(abs(sub(term, q(&self.value))), q(&self.half))
    }
}

fn eta_identity(s: &SettingTerms) -> (Formula, bool) {
    let big_delta = add([s.gamma.clone(), s.eps.clone()]);
    let eta = mul([s.t(), s.k.into(), add([big_delta, s.rho.clone()])]);
    let exact = expr::eval_built_exact(&eta, 64, &Default::default())
        .ok()
        .flatten()
        .is_some();
    let half_eps = div(s.eps.clone(), int(2));
    if exact {
        (eq(eta, half_eps), true)
    } else {
        (
            le(
                abs(sub(eta, half_eps)),
                lit("1/1000000000000000000000000000000"),
            ),
            false,
        )
    }
}

/// The d_formula term ⌈8k²(γ + ε + ρ)² ln(n²/δ)/ε²⌉.
pub fn d_formula_expr(n: u64, s: &SettingTerms) -> Term {
    ceil(div(
        mul([
            int(8),
            pow(s.k.into(), 2),
            pow(add([s.gamma.clone(), s.eps.clone(), s.rho.clone()]), 2),
            ln(div(mul([n.into(), n.into()]), s.delta.clone())),
        ]),
        pow(s.eps.clone(), 2),
    ))
}

fn describe(s: &Setting) -> String {
    format!(
        "k = {}, ε = {}, γ = {}, ρ = {}, δ = {}",
        s.k, s.eps, s.gamma, s.rho, s.delta
    )
}

/// The obligations of one end-to-end instance over a sign matrix named `S`:
/// S has n rows and d columns, d = d_formula (certified ceiling; the union-bound
/// form ⌈(2/t²) ln(n²/δ)⌉ too), and t* = max|G|/d ≤ t.
pub fn instance_obligations(i: &Instance, s: &SettingTerms) -> Vec<(String, Formula)> {
    let of_s = |op: &str| call(op, [var("S")]);
    vec![
        (
            format!("S is {} × {}", i.n, i.d),
            and([eq(of_s("rows"), i.n.into()), eq(of_s("cols"), i.d.into())]),
        ),
        (
            format!("d = d_formula({}) ({})", i.n, describe(&i.setting)),
            eq(of_s("cols"), d_formula_expr(i.n, s)),
        ),
        (
            "d = ⌈(2/t²) ln(n²/δ)⌉".into(),
            eq(of_s("cols"), d_expr(i.n, s.t(), s.delta.clone())),
        ),
        (
            "t* = max_{l≠j}|⟨s_l, s_j⟩|/d ≤ t = ε/(2k(γ + ε + ρ))".into(),
            le(t_of(var("S")), s.t()),
        ),
    ]
}

/// Bound on the grid's cells, |ks|·|eps|·|gammas|·|rhos|·|ns|: 4096 (the committed full
/// profile has 4·2·2·2·2 = 64, each for 4 seeds). A cell's d_formula is evaluated before its
/// scan, so the count is bounded first.
pub const MAX_GRID_CELLS: u128 = 4096;

/// Bound on the grid scan's work, Σ over the cells and seeds of n²·d_formula/64 (the words
/// of the Gram scan over an n × d_formula sign matrix, drawn whole), weighed at the spec's
/// precision: 2^36 (≈ 30 s at the scan's 2·10⁹ words a second); and on one cell's sign matrix,
/// n·d_formula ≤ 2^31 bits (256 MB). Measured: n = 1024, k = 8, ε = 1/8, γ = ln 100, ρ = ln 10
/// took 126 CPU-s and 7.8 GB; γ = 100000 at n = 16 aborted on a 6.6 PB allocation.
pub const MAX_GRID_WORK: u128 = 1 << 36;

/// The most sign bits one cell of the grid may draw, n·d_formula.
pub const MAX_GRID_BITS: u128 = 1 << 31;

/// Checks [`MAX_GRID_CELLS`], then every cell's d_formula against [`MAX_GRID_BITS`] and their
/// sum against [`MAX_GRID_WORK`] (d_formula evaluated exactly, as the scan does; a cell
/// where it cannot be is left to the scan, which marks it unknown).
fn check_grid_work(
    g: &Grid,
    terms: &GridTerms,
    at: crate::claims::shape::Resolving,
) -> Result<(), FieldError> {
    let cells = [
        g.ks.len(),
        g.eps.len(),
        g.gammas.len(),
        g.rhos.len(),
        g.ns.len(),
    ]
    .iter()
    .fold(1u128, |a, &l| a * l as u128);
    ensure(
        cells <= MAX_GRID_CELLS,
        "grid",
        format!("|ks|·|eps|·|gammas|·|rhos|·|ns| is {cells} cells, above the bound 4096"),
    )?;
    let mut work = 0u128;
    for &k in &g.ks {
        for et in &terms.eps {
            for gmt in &terms.gammas {
                for rt in &terms.rhos {
                    let st = SettingTerms {
                        k,
                        eps: et.clone(),
                        gamma: gmt.clone(),
                        rho: rt.clone(),
                        delta: terms.delta.clone(),
                    };
                    for (i, &n) in g.ns.iter().enumerate() {
                        let df = expr::eval_built_exact(
                            &d_formula_expr(n as u64, &st),
                            64,
                            &Default::default(),
                        )
                        .ok()
                        .flatten();
                        let Some(df) = df else { continue };
                        let df = df.numer().to_u128().unwrap_or(u128::MAX);
                        let bits = (n as u128).saturating_mul(df);
                        ensure(
                            bits <= MAX_GRID_BITS,
                            format!("grid.ns[{i}]"),
                            format!(
                                "n·d_formula is {bits} sign bits at k = {k}, above the bound \
                                 2^31 of one cell: use a smaller n, a larger ε or a smaller γ, ρ"
                            ),
                        )?;
                        work = work.saturating_add(
                            (n as u128 * bits / 64).saturating_mul(g.seeds.len() as u128),
                        );
                    }
                }
            }
        }
    }
    ensure(
        at.weigh(work) <= MAX_GRID_WORK,
        "grid",
        format!(
            "Σ n²·d_formula/64 over the cells and seeds is {}, above the bound 2^36 (about \
             half a minute of the Gram scan): use fewer or smaller cells",
            at.show(work)
        ),
    )
}

/// (iii): for every grid setting, n and seed, d_min (exact, by nested prefixes of
/// one S with d_max = d_formula) ≤ d_formula. t is irrational when γ is, so the
/// scan uses a rational t_lo ≤ t (the enclosure's lower end): C(t_lo) implies
/// C(t), hence d_min(t) ≤ d_min(t_lo).
fn grid(p: &Params, prec: u32) -> GridScan {
    use crate::sparse::dimension::min_dimension;
    let g = &p.raw.grid;
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut all = Certainty::True;
    let mut count = 0usize;
    let mut worst = 0.0f64;
    let gt_ = &p.grid_terms;
    for &k in &g.ks {
        for (e, et) in g.eps.iter().zip(&gt_.eps) {
            for (gm, gmt) in g.gammas.iter().zip(&gt_.gammas) {
                for (r, rt) in g.rhos.iter().zip(&gt_.rhos) {
                    let st = SettingTerms {
                        k,
                        eps: et.clone(),
                        gamma: gmt.clone(),
                        rho: rt.clone(),
                        delta: gt_.delta.clone(),
                    };
                    let t = expr::eval_built(&st.t(), prec, &Default::default())
                        .unwrap_or_else(|_| Interval::entire(prec));
                    let t_lo = t.lo().to_rational().unwrap_or_default();
                    for &n in &g.ns {
                        let df = expr::eval_built_exact(
                            &d_formula_expr(n as u64, &st),
                            prec,
                            &Default::default(),
                        )
                        .ok()
                        .flatten()
                        .and_then(|q| q.numer().to_usize());
                        let Some(df) = df else {
                            all = all.and(Certainty::Unknown);
                            continue;
                        };
                        let mut dmax = Some(0usize);
                        for &seed in &g.seeds {
                            let dm = if t_lo > 0 {
                                min_dimension(n, &t_lo, seed, df)
                            } else {
                                None
                            };
                            dmax = match (dmax, dm) {
                                (Some(a), Some(b)) => Some(a.max(b)),
                                _ => None,
                            };
                        }
                        count += 1;
                        let ok = dmax.is_some();
                        all = all.and(Certainty::exact(ok));
                        if let Some(dm) = dmax {
                            worst = worst.max(dm as f64 / df as f64);
                        }
                        rows.push(vec![
                            k.to_string(),
                            e.clone(),
                            gm.clone(),
                            r.clone(),
                            n.to_string(),
                            format!("{:.9}", t_lo.to_f64()),
                            dmax.map_or("> d_formula".into(), |d| d.to_string()),
                            df.to_string(),
                        ]);
                    }
                }
            }
        }
    }
    GridScan {
        rows,
        all: all.is_true(),
        count,
        worst,
    }
}

/// The grid's cells, for the table, its figure and its note.
#[derive(Debug, Clone)]
pub struct GridScan {
    /// The table's rows.
    pub rows: Vec<Vec<String>>,
    /// Every cell has d_min ≤ d_formula.
    pub all: bool,
    /// (setting, n) cells.
    pub count: usize,
    /// The largest d_min / d_formula.
    pub worst: f64,
}

/// The grid's table, figure and note.
fn present_grid(p: &Params, w: &GridScan, o: &mut Presentation) {
    let g = &p.raw.grid;
    let mut table = Table::new(
        "Grid consistency: exact d_min(n, t) (worst seed) against d_formula",
        &[
            "k",
            "ε",
            "γ",
            "ρ",
            "n",
            "t_lo",
            "d_min (max over seeds)",
            "d_formula",
        ],
    );
    for row in &w.rows {
        table.row(row.clone());
    }
    let (count, worst) = (w.count, w.worst);
    o.figure(
        "max d_min / d_formula over the grid",
        worst,
        format!("{worst:.4} (the exact minimal d of the committed seeds is at most this fraction of d_formula)"),
    );
    o.note(format!("(iii) is a consistency check for the committed seeds ({count} (setting, n) cells × {} seeds, exact integer scans): each seed's d_min is exact, but d_formula only promises C(t) with probability ≥ 1 − δ, so a failing seed would not refute the corollary. It is shown, not counted as evidence; a cell without d_min ≤ d_formula makes the run inconclusive.", g.seeds.len()));
    o.tables.push(table);
}

impl Params {
    /// The statement: (i) the identities η = ε/2, (ii) the §5 ceilings and printed
    /// t, and the certificate instance (S redrawn from its seed, t* from the hint
    /// `t_star`): its shape, d = d_formula, and t* ≤ t.
    fn build(&self, claim: &str, hints: &Hints) -> Result<Statement, StatementError> {
        let mut st = Statement::new(claim);
        for (s, terms) in self.raw.identities.iter().zip(&self.identities) {
            st.state(
                format!("η = t·k·(Δ + ρ) = ε/2 at {}", describe(s)),
                &eta_identity(terms).0,
            );
        }
        for ((r, printed), terms) in self
            .raw
            .table
            .iter()
            .zip(&self.table_t)
            .zip(&self.table_terms)
        {
            let s = &r.setting;
            if let Some(printed) = printed {
                st.state(
                    format!("t = {} at {}", r.t, describe(s)),
                    &printed.formula(terms.t()),
                );
            }
            for &(n, d) in &r.d {
                st.state(
                    format!("d_formula(n = {n}) = {d} at {}", describe(s)),
                    &eq(d_formula_expr(n, terms), d.into()),
                );
            }
        }
        let ci = &self.raw.certificate_instance;
        let t_star = super::hint_rational(hints, "t_star")?;
        st.datum(
            "S",
            expr::Datum::Signs(draw_signs(ci.n as usize, ci.d as usize, ci.seed)),
        );
        st.state(
            "certificate instance: t* (exact) of S",
            &eq(t_of(var("S")), q(&t_star)),
        );
        for (name, f) in instance_obligations(ci, &self.certificate_terms) {
            st.state(format!("certificate instance: {name}"), &f);
        }
        st.state(
            format!("certificate instance: t = {} printed", ci.t),
            &self.certificate_t.formula(self.certificate_terms.t()),
        );
        Ok(st)
    }
}

/// What the run found: t* of the certificate instance (the hint), the grid, and the
/// end-to-end instance decided by the kernel with the same obligations.
#[derive(Debug, Clone)]
pub struct Witness {
    /// t* of the certificate instance's S.
    pub cert_t_star: Rational,
    /// (iii), the grid.
    pub grid: GridScan,
    /// t* of the end-to-end instance.
    pub t_star: Rational,
    /// What was not proven outside the certificate.
    pub failed: Vec<String>,
}
