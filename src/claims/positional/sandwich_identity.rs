//! positional/sandwich-identity: p_mᵀp_n = Σ_i cos((m − n)ω_i), Toeplitz and
//! even; the centred bias B̃(r) = Σ_i (cos(rω_i) − 1) is 0 at r = 0 and < 0 for
//! every other integer r, with −d̄ ≤ B̃ ≤ 0.
//!
//! Everything is decided in intervals:
//! - the explicit sin/cos vectors and the cosine sum are enclosed separately and
//!   their difference is certified below a tolerance (they are equal by
//!   cos(a − b) = sin a sin b + cos a cos b; the check is that the two
//!   computations agree, so a wrong frequency or index set would show);
//! - f64 outputs are exact dyadic numbers, so their distance to the enclosure is
//!   certified too;
//! - B̃(r) < 0: every term cos(rω_i) − 1 is ≤ 0, so B̃(r) ≤ cos(rω_j) − 1 for any
//!   single j, and one term certified < 0 suffices (with I from 0, ω_0 = 1 for
//!   every d̄, so j = 0 works for all of them at once);
//! - the §3 table, the "more digits" values and the minimum over r < 20000 are
//!   reproduced with enclosures compared against the printed decimals.

use super::common::{
    check_dbar, sandwich_centred, sandwich_centred_expr, sandwich_centred_f64,
    sandwich_centred_many, sandwich_freqs, sandwich_freqs_f64, IndexFrom, Printed, SplitMix64,
};
use crate::certificate::Hints;
use crate::claims::shape::StatementError;
use crate::claims::shape::{Ctx, Resolving};
use crate::kernel::expr::build::{
    abs, add, and, cos, div, eq, exp, forall, int, le, ln, lt, mul, q, sin, sub, sum, var, Formula,
    Term,
};
use crate::kernel::{Certainty, Checked, Interval, Statement};
use crate::outcome::{Plot, Presentation, Series, Style, Table};
use crate::spec::exact as check_literal;
use crate::spec::{check_each, ensure, FieldError};
use rayon::prelude::*;
use rug::Rational;
use serde::{Deserialize, Serialize};

/// The §3 table of B̃(r) (d̄ fixed, both conventions), as printed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BTable {
    /// d̄ of the table.
    pub dbar: u32,
    /// The distances r.
    pub r: Vec<i64>,
    /// Printed values with I from 0.
    pub zero: Vec<String>,
    /// Printed values with I from 1.
    pub one: Vec<String>,
    /// Absolute tolerance against the printed values (exact literal).
    pub tolerance: String,
}

/// Reference values printed with more digits (tolerance: half a unit of the last digit).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoreDigits {
    /// d̄.
    pub dbar: u32,
    /// Index convention.
    pub from: IndexFrom,
    /// The distances r.
    pub r: Vec<i64>,
    /// The printed values.
    pub values: Vec<String>,
}

/// The reference minimum of B̃ over 0 ≤ r < `below`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Minimum {
    /// d̄.
    pub dbar: u32,
    /// Index convention.
    pub from: IndexFrom,
    /// Sweep 0 ≤ r < below.
    pub below: i64,
    /// The claimed argmin.
    pub r: i64,
    /// The printed minimum value.
    pub value: String,
}

/// Parameters of positional/sandwich-identity as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// The d̄ values (even).
    pub dbars: Vec<u32>,
    /// Index conventions to check.
    pub conventions: Vec<IndexFrom>,
    /// Positions m, n range over 0..=max_position.
    pub max_position: i64,
    /// Random pairs (m, n) besides the four corners.
    pub pairs: usize,
    /// Seed of the pair sampler.
    pub seed: u64,
    /// Certified bound on |explicit − summed| (exact literal).
    pub identity_tol: String,
    /// f64 outputs within this relative error of d̄/2 = ‖p_m‖² (exact literal).
    pub f64_rel_tol: String,
    /// B̃(r) < 0 certified for 1 ≤ r ≤ negative_up_to.
    pub negative_up_to: i64,
    /// The §3 table.
    pub table: BTable,
    /// Values printed with more digits.
    pub more_digits: MoreDigits,
    /// The minimum over a range.
    pub minimum: Minimum,
}

/// Parameters of positional/sandwich-identity, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The parameters as written (names and tables quote them).
    pub raw: Raw,
    identity_tol: Rational,
    f64_rel_tol: Rational,
    /// The §3 table's tolerance and its values (index from 0, from 1).
    table_tol: Rational,
    table_values: [Vec<Rational>; 2],
    /// The values printed with more digits.
    more_digits: Vec<Printed>,
    /// The printed minimum.
    minimum: Printed,
}

/// positional/sandwich-identity.
pub struct Claim;

/// Bound on the sampled pair checks, (pairs + 4)·|conventions|·|dbars|: 2^14. Each check is
/// three formulas of the statement (identity, Toeplitz, evenness) held in memory at once, about
/// 22 KB each with their presentation (measured: 6024 checks, 390 MB). The committed full
/// profile has 404·2·3 = 2424. `pairs = 100000` with the quick profile's d̄ and conventions
/// (600024 checks) aborted on an allocation under a 6 GiB limit.
pub const MAX_PAIR_CHECKS: u64 = 1 << 14;

/// Bound on the pair checks' trigonometry, (pairs + 4)·|conventions|·Σ d̄, weighed at the
/// spec's precision ([`Resolving::weigh`], as [`MAX_SWEEP_WORK`]): 2^21 (each check
/// evaluates 4 products of d̄/2 sines and cosines and two sums of d̄/2 cosines, at the run's
/// precision and again in the statement). The committed full profile is 404·2·448 ≈ 2^18.5;
/// 1004·2·448 ≈ 2^19.8 took 77 CPU-s, so the bound is a few minutes at 128 bits.
pub const MAX_PAIR_WORK: u128 = 1 << 21;

/// Bound on the minimum's sweep, below·d̄/2 cosines (the witness evaluates all of them before
/// the statement's budget is known): 2^24. The committed sweep is 20000·64 ≈ 2^20.3;
/// 131072·64 = 2^23 ran in 29 CPU-s. `below = 10^6` at d̄ = 4096 (2^31) ran past 200 s.
pub const MAX_SWEEP_WORK: u128 = 1 << 24;

/// The work bounds of a spec, checked once its fields are each in range: no two equal d̄ or
/// conventions (their obligations would share names), the pair checks, their trigonometry
/// and the minimum's sweep (see the constants above; the tables' lengths are bounded as every
/// list's, by `spec::MAX_LIST`).
fn check_work(raw: &Raw, at: Resolving) -> Result<(), FieldError> {
    // a set, not a scan of the prefix: a 128 MB spec holds millions of entries
    let mut seen = std::collections::BTreeSet::new();
    for (i, d) in raw.dbars.iter().enumerate() {
        ensure(
            seen.insert(*d),
            format!("dbars[{i}]"),
            format!("d̄ = {d} is listed twice"),
        )?;
    }
    for (i, c) in raw.conventions.iter().enumerate() {
        ensure(
            !raw.conventions[..i].contains(c),
            format!("conventions[{i}]"),
            format!("{} is listed twice", c.label()),
        )?;
    }
    let sets = raw.conventions.len() as u64;
    let checks = (raw.pairs as u64 + 4) * sets * raw.dbars.len() as u64;
    ensure(
        checks <= MAX_PAIR_CHECKS,
        "pairs",
        format!(
            "(pairs + 4)·|conventions|·|dbars| is {checks} pair checks, above the bound 2^14 \
             (three formulas each, held in memory at once): use fewer pairs or d̄"
        ),
    )?;
    let sum: u64 = raw.dbars.iter().map(|&d| u64::from(d)).sum();
    let work = u128::from((raw.pairs as u64 + 4) * sets * sum);
    ensure(
        at.weigh(work) <= MAX_PAIR_WORK,
        "pairs",
        format!(
            "(pairs + 4)·|conventions|·Σ d̄ is {}, above the bound 2^21 (a few minutes of \
             sines and cosines): use fewer pairs, smaller d̄ or a lower precision",
            at.show(work)
        ),
    )?;
    let mn = &raw.minimum;
    let sweep = u128::from(mn.below as u64 * u64::from(mn.dbar / 2));
    ensure(
        at.weigh(sweep) <= MAX_SWEEP_WORK,
        "minimum.below",
        format!(
            "below·d̄/2 is {} cosines, above the bound 2^24 (about a minute): use a smaller \
             range, a smaller d̄ or a lower precision",
            at.show(sweep)
        ),
    )?;
    Ok(())
}

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(raw: Raw, at: Resolving) -> Result<Params, FieldError> {
        check_each(&raw.dbars, "dbars", |f, &x| check_dbar(f, x))?;
        ensure(
            !raw.conventions.is_empty(),
            "conventions",
            "must not be empty",
        )?;
        ensure(
            (1..=1 << 24).contains(&raw.max_position),
            "max_position",
            "must be between 1 and 2^24",
        )?;
        ensure(raw.pairs <= 100_000, "pairs", "at most 100000")?;
        let identity_tol = check_literal("identity_tol", &raw.identity_tol)?;
        ensure(identity_tol > 0, "identity_tol", "must be positive")?;
        let f64_rel_tol = check_literal("f64_rel_tol", &raw.f64_rel_tol)?;
        ensure(f64_rel_tol > 0, "f64_rel_tol", "must be positive")?;
        ensure(
            (1..=10_000_000).contains(&raw.negative_up_to),
            "negative_up_to",
            "must be between 1 and 10^7",
        )?;
        let t = &raw.table;
        check_dbar("table.dbar", t.dbar)?;
        check_each(&t.r, "table.r", |f, &r| {
            ensure(
                (0..=10_000_000).contains(&r),
                f,
                "r must be between 0 and 10^7",
            )
        })?;
        let mut table_values: [Vec<Rational>; 2] = Default::default();
        for ((name, v), values) in [("zero", &t.zero), ("one", &t.one)]
            .into_iter()
            .zip(&mut table_values)
        {
            ensure(
                v.len() == t.r.len(),
                format!("table.{name}"),
                format!("has {} values for {} distances", v.len(), t.r.len()),
            )?;
            for (i, s) in v.iter().enumerate() {
                values.push(check_literal(&format!("table.{name}[{i}]"), s)?);
            }
        }
        let table_tol = check_literal("table.tolerance", &t.tolerance)?;
        ensure(table_tol > 0, "table.tolerance", "must be positive")?;
        let m = &raw.more_digits;
        check_dbar("more_digits.dbar", m.dbar)?;
        ensure(
            m.values.len() == m.r.len(),
            "more_digits.values",
            format!("has {} values for {} distances", m.values.len(), m.r.len()),
        )?;
        for (i, r) in m.r.iter().enumerate() {
            ensure(
                (0..=10_000_000).contains(r),
                format!("more_digits.r[{i}]"),
                "r must be between 0 and 10^7",
            )?;
        }
        let more_digits = m
            .values
            .iter()
            .enumerate()
            .map(|(i, s)| Printed::parse(&format!("more_digits.values[{i}]"), s))
            .collect::<Result<Vec<_>, _>>()?;
        let mn = &raw.minimum;
        check_dbar("minimum.dbar", mn.dbar)?;
        ensure(
            (1..=1_000_000).contains(&mn.below),
            "minimum.below",
            "must be between 1 and 10^6",
        )?;
        ensure(
            (0..mn.below).contains(&mn.r),
            "minimum.r",
            format!("must lie in 0..{}", mn.below),
        )?;
        let minimum = Printed::parse("minimum.value", &mn.value)?;
        check_work(&raw, at)?;
        Ok(Params {
            raw,
            identity_tol,
            f64_rel_tol,
            table_tol,
            table_values,
            more_digits,
            minimum,
        })
    }
    fn statement(
        p: &Params,
        claim: &str,
        hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        Some(p.build_statement(claim, hints))
    }
    type Witness = Found;
    /// The sweep of B̃ and the negativity searches.
    fn witness(p: &Params, ctx: &Ctx) -> Found {
        let prec = ctx.prec();
        ctx.progress.message(format!(
            "{}: B̃(r) for 0 ≤ r < {}",
            ctx.spec.id, p.raw.minimum.below
        ));
        let mn = &p.raw.minimum;
        let sweep_rs: Vec<i64> = (0..mn.below).collect();
        let sweep = centred_at(&sweep_rs, mn.dbar, mn.from, prec);
        let negativity = negativity_search(p, ctx);
        ctx.progress
            .message(format!("{}: the statement", ctx.spec.id));
        Found { sweep, negativity }
    }
    fn hints(_: &Params, w: &Found) -> Hints {
        w.negativity.iter().filter_map(|n| n.hint.clone()).collect()
    }
    /// The presentation: the minimum's figures, the identity tables, the negativity
    /// search, the §3 table, the plot and the notes (the statement decides).
    fn present(p: &Params, w: &Found, _: Option<&Checked>, ctx: &Ctx, o: &mut Presentation) {
        let prec = ctx.prec();
        let mn = &p.raw.minimum;
        let sweep = &w.sweep;
        minimum_figures(p, sweep, o);

        // ----- identity, Toeplitz, evenness (presentation), f64 on sampled pairs -----
        identity_table(p, ctx, o);

        // ----- B̃(r) < 0 for 1 ≤ r ≤ N: the search for the terms (a hint) -----
        negativity_table(p, &w.negativity, o);

        // ----- the §3 table and the values with more digits (presentation) -----
        value_tables(p, prec, sweep, mn, o);

        // plot: the range of B̃ over consecutive blocks of r (a line through every
        // 10th value would alias the oscillations), and the minimum
        let step = ((mn.below + 1999) / 2000).max(1) as usize;
        let mids: Vec<f64> = sweep.iter().map(Interval::mid_f64).collect();
        let blocks: Vec<(f64, f64, f64)> = mids
            .chunks(step)
            .enumerate()
            .map(|(k, c)| {
                let lo = c.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                ((k * step) as f64, lo, hi)
            })
            .collect();
        let dbar2 = -(mn.dbar as f64) / 2.0;
        o.plots.push(Plot {
            slug: "centred-bias".into(),
            title: format!(
                "Sandwich centred bias B̃(r), d̄ = {}, {}: range over blocks of {step} consecutive r",
                mn.dbar,
                mn.from.label()
            ),
            x_label: "r".into(),
            y_label: "B̃(r)".into(),
            x_log: false,
            y_log: false,
            series: vec![
                Series {
                    name: "block maximum".into(),
                    style: Style::Line,
                    points: blocks.iter().map(|b| (b.0, b.2)).collect(),
                },
                Series {
                    name: "block minimum".into(),
                    style: Style::Line,
                    points: blocks.iter().map(|b| (b.0, b.1)).collect(),
                },
                Series {
                    name: format!("−d̄/2 = {dbar2}"),
                    style: Style::Dashed,
                    points: vec![(0.0, dbar2), (mn.below as f64, dbar2)],
                },
                Series {
                    name: format!("minimum at r = {}", mn.r),
                    style: Style::Points,
                    points: vec![(mn.r as f64, mids[mn.r as usize])],
                },
            ],
            heatmap: None,
            paths: false,
        });
        o.note(
            "The Sandwich construction (index set, centring, d̄) is [unconfirmed]: both index conventions are checked; \
             the identity and the bounds are elementary trigonometry, checked here on enclosures.",
        );
        o.note(
            "B̃(r) < 0 is certified through a single term: every term cos(rω_i) − 1 is ≤ 0 (cos ≤ 1), so \
             B̃(r) ≤ cos(rω_j) − 1 for any j, and one term certified < 0 proves B̃(r) < 0. With I from 0, ω_0 = 1 for \
             every d̄, so the term cos r − 1 covers all d̄ at once.",
        );
    }
}

// ----- the statement: B̃ is the kernel's `sandwich-centred`, every formula written once -----

/// The term ω_i = 10000^{−2i/d̄} with `i` a bound variable.
fn omega_term(i: Term, dbar: u32) -> Term {
    exp(mul([div(mul([int(-2), i]), int(dbar)), ln(int(10000))]))
}

/// The term p_mᵀp_n from the explicit vectors: Σ_i sin(mω_i) sin(nω_i) + cos(mω_i) cos(nω_i).
fn explicit_term(m: i64, n: i64, dbar: u32, from: IndexFrom) -> Term {
    let range = from.range(dbar);
    let w = || omega_term(var("i"), dbar);
    let at = |k: i64| mul([int(k), w()]);
    sum(
        "i",
        *range.start(),
        *range.end(),
        add([mul([sin(at(m)), sin(at(n))]), mul([cos(at(m)), cos(at(n))])]),
    )
}

/// The term Σ_i cos(rω_i) = B̃(r) + |I|.
fn cos_sum_term(r: i64, dbar: u32, from: IndexFrom) -> Term {
    add([sandwich_centred_expr(int(r), dbar, from), int(dbar / 2)])
}

/// |a − b| ≤ tol.
fn within(a: Term, b: Term, tol: &Rational) -> Formula {
    le(abs(sub(a, b)), q(tol))
}

/// The hint key of the negativity runs of one job (found by search).
fn runs_key(from: IndexFrom, dbars: &[u32]) -> String {
    let list: Vec<String> = dbars.iter().map(u32::to_string).collect();
    format!(
        "negative terms ({}, dbar = {})",
        from.label(),
        list.join(",")
    )
}

/// A hint value: runs `lo-hi:i`, comma-separated.
fn runs_hint(runs: &[(i64, i64, u32)]) -> String {
    let v: Vec<String> = runs
        .iter()
        .map(|(lo, hi, i)| format!("{lo}-{hi}:{i}"))
        .collect();
    v.join(",")
}

/// Parses and checks a runs hint: consecutive runs covering 1..=n, indices in I.
fn parse_runs(
    key: &str,
    text: &str,
    n: i64,
    index: std::ops::RangeInclusive<u32>,
) -> Result<Vec<(i64, i64, u32)>, StatementError> {
    let bad = || StatementError::Hint {
        key: key.to_string(),
        reason: format!("hint `{key}` must be runs `lo-hi:i` covering 1..={n} in order, i in I"),
    };
    let mut runs = Vec::new();
    let mut next = 1i64;
    for part in text.split(',') {
        let (range, i) = part.split_once(':').ok_or_else(bad)?;
        let (lo, hi) = range.split_once('-').ok_or_else(bad)?;
        let lo: i64 = lo.trim().parse().map_err(|_| bad())?;
        let hi: i64 = hi.trim().parse().map_err(|_| bad())?;
        let i: u32 = i.trim().parse().map_err(|_| bad())?;
        if lo != next || hi < lo || hi > n || !index.contains(&i) {
            return Err(bad());
        }
        runs.push((lo, hi, i));
        next = hi + 1;
    }
    if next != n + 1 {
        return Err(bad());
    }
    Ok(runs)
}

impl Params {
    /// The negativity jobs: with I from 0, ω_0 = 1 for every d̄, so one job covers them all.
    fn negativity_jobs(&self) -> Vec<(Vec<u32>, IndexFrom)> {
        let mut jobs = Vec::new();
        for &from in &self.raw.conventions {
            match from {
                IndexFrom::Zero => jobs.push((self.raw.dbars.clone(), from)),
                IndexFrom::One => jobs.extend(self.raw.dbars.iter().map(|&d| (vec![d], from))),
            }
        }
        jobs
    }

    fn minimum_label(&self) -> String {
        format!(
            "d̄ = {}, {}",
            self.raw.minimum.dbar,
            self.raw.minimum.from.label()
        )
    }

    fn build_statement(&self, claim: &str, hints: &Hints) -> Result<Statement, StatementError> {
        let mut st = Statement::new(claim);
        // the minimum over 0 ≤ r < below
        let mn = &self.raw.minimum;
        let label = self.minimum_label();
        let b = |r: Term| sandwich_centred_expr(r, mn.dbar, mn.from);
        let last = mn.below - 1;
        st.state(format!("{label}: B̃(0) = 0"), &eq(b(int(0)), int(0)));
        st.state(
            format!("{label}: −d̄ ≤ B̃(r) ≤ 0 for 0 ≤ r < {}", mn.below),
            &forall(
                "r",
                0,
                last,
                and([
                    le(int(-i64::from(mn.dbar)), b(var("r"))),
                    le(b(var("r")), int(0)),
                ]),
            ),
        );
        let star = || b(int(mn.r));
        let mut below = Vec::new();
        if mn.r > 0 {
            below.push(forall("r", 0, mn.r - 1, lt(star(), b(var("r")))));
        }
        if mn.r < last {
            below.push(forall("r", mn.r + 1, last, lt(star(), b(var("r")))));
        }
        if below.is_empty() {
            below.push(eq(int(0), int(0)));
        }
        st.state(
            format!(
                "{label}: the minimum of B̃ over 0 ≤ r < {} is at r = {}",
                mn.below, mn.r
            ),
            &and(below),
        );
        st.state(
            format!(
                "{label}: B̃({}) = {} (to the printed digits)",
                mn.r, mn.value
            ),
            &self.minimum.formula(star()),
        );
        // the identity, Toeplitz and evenness on the sampled pairs
        let pairs = sample_pairs(self.raw.max_position, self.raw.pairs, self.raw.seed);
        let tol = &self.identity_tol;
        for &dbar in &self.raw.dbars {
            for &from in &self.raw.conventions {
                let label = format!("d̄ = {dbar}, {}", from.label());
                let (mut id, mut toe, mut even) = (Vec::new(), Vec::new(), Vec::new());
                for &(m, n, k) in &pairs {
                    let dot = explicit_term(m, n, dbar, from);
                    id.push(within(dot.clone(), cos_sum_term(m - n, dbar, from), tol));
                    toe.push(within(dot, explicit_term(m + k, n + k, dbar, from), tol));
                    even.push(within(
                        cos_sum_term(m - n, dbar, from),
                        cos_sum_term(n - m, dbar, from),
                        tol,
                    ));
                }
                st.state(
                    format!(
                        "{label}: p_mᵀp_n = Σ_i cos((m − n)ω_i) on {} pairs (|difference| ≤ {})",
                        pairs.len(),
                        self.raw.identity_tol
                    ),
                    &and(id),
                );
                st.state(
                    format!(
                        "{label}: Toeplitz, p_mᵀp_n = p_(m+k)ᵀp_(n+k) (|difference| ≤ {})",
                        self.raw.identity_tol
                    ),
                    &and(toe),
                );
                st.state(
                    format!(
                        "{label}: even, Σ cos(rω_i) = Σ cos(−rω_i) (|difference| ≤ {})",
                        self.raw.identity_tol
                    ),
                    &and(even),
                );
            }
        }
        // B̃(r) < 0 for 1 ≤ r ≤ N: a term cos(rω_i) < 1 (the runs are a hint), every other ≤ 0
        let n = self.raw.negative_up_to;
        for (dbars, from) in self.negativity_jobs() {
            let key = runs_key(from, &dbars);
            let text = hints.get(&key).ok_or_else(|| StatementError::Hint {
                key: key.clone(),
                reason: format!("missing hint `{key}`"),
            })?;
            // the index must lie in I for every d̄ of the job
            let common = dbars
                .iter()
                .map(|&d| from.range(d))
                .fold(0..=u32::MAX, |a, r| {
                    (*a.start()).max(*r.start())..=(*a.end()).min(*r.end())
                });
            let runs = parse_runs(&key, text, n, common)?;
            let dlist: Vec<String> = dbars.iter().map(u32::to_string).collect();
            let mut parts = Vec::new();
            for &(lo, hi, i) in &runs {
                // with several d̄ the index is 0 (ω_0 = 1 whatever d̄)
                let arg = if i == 0 {
                    var("r")
                } else {
                    let q_ = Rational::from((-2 * i as i64, dbars[0] as i64));
                    mul([var("r"), exp(mul([q(&q_), ln(int(10000))]))])
                };
                parts.push(forall("r", lo, hi, lt(cos(arg), int(1))));
            }
            if dbars.len() > 1 && runs.iter().any(|r| r.2 != 0) {
                return Err(StatementError::Hint {
                    key: key.clone(),
                    reason: format!("hint `{key}`: a job over several d̄ must use the term i = 0"),
                });
            }
            st.state(
                format!(
                    "{}, d̄ ∈ {{{}}}: B̃(r) < 0 for 1 ≤ r ≤ {n}",
                    from.label(),
                    dlist.join(", ")
                ),
                &and(parts),
            );
        }
        // the §3 table and the values with more digits
        let t = &self.raw.table;
        for (from, refs) in [IndexFrom::Zero, IndexFrom::One]
            .into_iter()
            .zip(&self.table_values)
        {
            let parts = t.r.iter().zip(refs).map(|(&r, v)| {
                within(
                    sandwich_centred_expr(int(r), t.dbar, from),
                    q(v),
                    &self.table_tol,
                )
            });
            st.state(
                format!(
                    "§3 table, d̄ = {}, {}: |B̃(r) − printed| ≤ {} for r ∈ {:?}",
                    t.dbar,
                    from.label(),
                    t.tolerance,
                    t.r
                ),
                &and(parts),
            );
        }
        let md = &self.raw.more_digits;
        for ((&r, v), printed) in md.r.iter().zip(&md.values).zip(&self.more_digits) {
            st.state(
                format!(
                    "d̄ = {}, {}: B̃({r}) = {v} to the printed digits",
                    md.dbar,
                    md.from.label()
                ),
                &printed.formula(sandwich_centred_expr(int(r), md.dbar, md.from)),
            );
        }
        Ok(st)
    }
}

/// Σ_i cos(rω_i) = B̃(r) + |I| in intervals (the uncentred Sandwich product).
fn cos_sum(r: i64, freqs: &[Interval]) -> Interval {
    let p = freqs[0].prec();
    &sandwich_centred(r, freqs) + &Interval::from_i64(p, freqs.len() as i64)
}

/// p_mᵀp_n computed from the explicit vectors p_m = [sin(mω_i), cos(mω_i)]_i.
fn explicit_dot(m: i64, n: i64, freqs: &[Interval]) -> Interval {
    let p = freqs[0].prec();
    let (mm, nn) = (Interval::from_i64(p, m), Interval::from_i64(p, n));
    let mut acc = Interval::zero(p);
    for w in freqs {
        let (a, b) = (&mm * w, &nn * w);
        acc.add_assign(&(&a.sin() * &b.sin()));
        acc.add_assign(&(&a.cos() * &b.cos()));
    }
    acc
}

fn explicit_dot_f64(m: i64, n: i64, freqs: &[f64]) -> f64 {
    freqs
        .iter()
        .map(|w| {
            let (a, b) = (m as f64 * w, n as f64 * w);
            a.sin() * b.sin() + a.cos() * b.cos()
        })
        .sum()
}

/// Certified |a − b| ≤ tol.
fn close(a: &Interval, b: &Interval, tol: &Interval) -> Certainty {
    (a - b).abs().le(tol)
}

/// Results for one pair (m, n) with its shift (m + k, n + k).
struct PairCheck {
    toeplitz: Certainty,
    even: Certainty,
    f64_ok: Certainty,
    max_diff: f64,
    f64_rel: f64,
}

fn check_pair(
    (m, n, k): (i64, i64, i64),
    freqs: &[Interval],
    freqs64: &[f64],
    tol: &Interval,
    rel_tol: &Interval,
) -> PairCheck {
    let p = freqs[0].prec();
    let dot = explicit_dot(m, n, freqs);
    let sum = cos_sum(m - n, freqs);
    let sum_neg = cos_sum(n - m, freqs);
    let shifted = explicit_dot(m + k, n + k, freqs);
    let scale = Interval::from_i64(p, freqs.len() as i64);
    let f_dot = Interval::from_f64(p, explicit_dot_f64(m, n, freqs64));
    let f_sum = Interval::from_f64(p, sandwich_centred_f64((m - n) as f64, freqs64))
        + Interval::from_i64(p, freqs.len() as i64);
    let lim = rel_tol * &scale;
    let rel_dot = &(&f_dot - &sum).abs() / &scale;
    let rel_sum = &(&f_sum - &sum).abs() / &scale;
    PairCheck {
        toeplitz: close(&dot, &shifted, tol),
        even: close(&sum, &sum_neg, tol),
        f64_ok: close(&f_dot, &sum, &lim).and(close(&f_sum, &sum, &lim)),
        max_diff: (&dot - &sum).abs().hi_f64(),
        f64_rel: rel_dot.hi_f64().max(rel_sum.hi_f64()),
    }
}

/// The sampled pairs: the four corners, then `count` seeded random pairs, each
/// with a shift k such that m + k, n + k stay in 0..=max (k ≠ 0 when possible).
pub fn sample_pairs(max: i64, count: usize, seed: u64) -> Vec<(i64, i64, i64)> {
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::new();
    let shift = |m: i64, n: i64, rng: &mut SplitMix64| {
        let lo = -m.min(n);
        let hi = max - m.max(n);
        if lo == hi {
            return 0;
        }
        let k = lo + rng.below((hi - lo + 1) as u64) as i64;
        if k == 0 {
            if hi > 0 {
                1
            } else {
                -1
            }
        } else {
            k
        }
    };
    for (m, n) in [(0, 0), (max, 0), (0, max), (max, max)] {
        let k = shift(m, n, &mut rng);
        out.push((m, n, k));
    }
    for _ in 0..count {
        let m = rng.range(0, max as u64) as i64;
        let n = rng.range(0, max as u64) as i64;
        let k = shift(m, n, &mut rng);
        out.push((m, n, k));
    }
    out
}

/// The outcome of certifying B̃(r) < 0 over a range of r.
#[derive(Debug, Clone)]
pub struct Negativity {
    /// True when every r was certified.
    pub certainty: Certainty,
    /// Runs (r_lo, r_hi, i): cos(rω_i) − 1 < 0 certified for r_lo ≤ r ≤ r_hi.
    pub runs: Vec<(i64, i64, usize)>,
    /// The r for which no term was certified negative (even at twice the precision).
    pub undecided: Vec<i64>,
    /// How many r needed the higher precision.
    pub retried: usize,
}

/// The first index i (in `order`) with cos(rω_i) − 1 certified < 0.
fn negative_term(r: i64, freqs: &[Interval]) -> Option<usize> {
    let p = freqs[0].prec();
    let rr = Interval::from_i64(p, r);
    let one = Interval::one(p);
    freqs
        .iter()
        .position(|w| (&rr * w).cos().lt(&one) == Certainty::True)
}

/// Certifies B̃(r) < 0 for lo ≤ r ≤ hi: a term cos(rω_i) − 1 < 0 is found for
/// each r (every other term is ≤ 0 because cos ≤ 1, so B̃(r) ≤ cos(rω_i) − 1).
/// An r with no certified term is retried at twice the precision; r = 0 has
/// none (B̃(0) = 0), so a range containing 0 is never certified.
pub fn certify_negative(dbar: u32, from: IndexFrom, lo: i64, hi: i64, prec: u32) -> Negativity {
    let freqs = sandwich_freqs(dbar, from, prec);
    let rs: Vec<i64> = (lo..=hi).collect();
    let mut terms: Vec<Option<usize>> = rs
        .par_iter()
        .with_min_len(256)
        .map(|&r| negative_term(r, &freqs))
        .collect();
    let missing: Vec<usize> = (0..rs.len()).filter(|&k| terms[k].is_none()).collect();
    let retried = missing.len();
    if !missing.is_empty() {
        let f2 = sandwich_freqs(dbar, from, 2 * prec);
        for k in missing {
            terms[k] = negative_term(rs[k], &f2);
        }
    }
    let mut runs: Vec<(i64, i64, usize)> = Vec::new();
    let mut undecided = Vec::new();
    for (&r, t) in rs.iter().zip(&terms) {
        match t {
            Some(i) => match runs.last_mut() {
                Some(last) if last.2 == *i && last.1 + 1 == r => last.1 = r,
                _ => runs.push((r, r, *i)),
            },
            None => undecided.push(r),
        }
    }
    let certainty = if undecided.is_empty() {
        Certainty::True
    } else {
        Certainty::Unknown
    };
    Negativity {
        certainty,
        runs,
        undecided,
        retried,
    }
}

/// Certified B̃(r) for every r of `rs` (fresh frequency enclosures at `prec`).
fn centred_at(rs: &[i64], dbar: u32, from: IndexFrom, prec: u32) -> Vec<Interval> {
    sandwich_centred_many(rs, &sandwich_freqs(dbar, from, prec))
}

/// What the search found: B̃(r) for 0 ≤ r < below (the headline minimum), and
/// for every negativity job the certified-negative term of each r (the hints).
#[derive(Debug, Clone)]
pub struct Found {
    /// B̃(r), 0 ≤ r < below, at the minimum's d̄ and convention.
    pub sweep: Vec<Interval>,
    /// The negativity searches, in job order.
    pub negativity: Vec<NegativeSearch>,
}

/// One negativity search (a job of d̄s sharing their terms).
#[derive(Debug, Clone)]
pub struct NegativeSearch {
    /// Its row of the search table.
    pub row: Vec<String>,
    /// Its hint, when every r has a term (an incomplete search leaves it out: the
    /// statement then cannot be built and the claim is inconclusive with that reason).
    pub hint: Option<(String, String)>,
}

fn minimum_figures(p: &Params, sweep: &[Interval], o: &mut Presentation) {
    let mn = &p.raw.minimum;
    // the true argmin (by midpoints; display only: the statement decides the claimed one)
    let (amin, bmin) = sweep
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.mid_f64().total_cmp(&b.1.mid_f64()))
        .expect("non-empty sweep");
    o.figure(
        format!("min of B̃ over 0 ≤ r < {} ({})", mn.below, p.minimum_label()),
        bmin.mid_f64(),
        format!("{} at r = {amin}", bmin.fmt_outward(9)),
    );
}

fn identity_table(p: &Params, ctx: &Ctx, o: &mut Presentation) {
    let prec = ctx.prec();
    let tol = Interval::from_rational(prec, &p.identity_tol);
    let rel = Interval::from_rational(prec, &p.f64_rel_tol);
    let pairs = sample_pairs(p.raw.max_position, p.raw.pairs, p.raw.seed);
    let mut table = Table::new(
        format!(
            "Identity p_mᵀp_n = Σ cos((m − n)ω_i) on {} pairs, 0 ≤ m, n ≤ {} (enclosures; the statement decides)",
            pairs.len(),
            p.raw.max_position
        ),
        &[
            "d̄",
            "convention",
            "max |explicit − summed| (upper bound)",
            "Toeplitz",
            "even",
            "max f64 error / (d̄/2) (upper bound)",
        ],
    );
    let mut f64_off: Vec<String> = Vec::new();
    for &dbar in &p.raw.dbars {
        for &from in &p.raw.conventions {
            ctx.progress.message(format!(
                "{}: identity, d̄ = {dbar}, {}",
                ctx.spec.id,
                from.label()
            ));
            let freqs = sandwich_freqs(dbar, from, prec);
            let freqs64 = sandwich_freqs_f64(dbar, from);
            let res: Vec<PairCheck> = pairs
                .par_iter()
                .map(|&pk| check_pair(pk, &freqs, &freqs64, &tol, &rel))
                .collect();
            let label = format!("d̄ = {dbar}, {}", from.label());
            let all = |f: &dyn Fn(&PairCheck) -> Certainty| Certainty::all(res.iter().map(f));
            let max_diff = res.iter().map(|r| r.max_diff).fold(0.0, f64::max);
            let max_rel = res.iter().map(|r| r.f64_rel).fold(0.0, f64::max);
            let (ct, ce, cf) = (all(&|r| r.toeplitz), all(&|r| r.even), all(&|r| r.f64_ok));
            // our f64 helpers (plots only) against the enclosures: about the
            // implementation, not the claim, so a table entry and not a check
            if cf != Certainty::True {
                f64_off.push(label.clone());
            }
            let word = |c: Certainty| match c {
                Certainty::True => "within the tolerance",
                Certainty::False => "FALSE",
                Certainty::Unknown => "undecided",
            };
            table.row(vec![
                dbar.to_string(),
                from.label().into(),
                format!("{max_diff:.3e}"),
                word(ct).into(),
                word(ce).into(),
                format!("{max_rel:.3e}"),
            ]);
        }
    }
    o.tables.push(table);
    o.note(if f64_off.is_empty() {
        format!(
            "The f64 helpers used for plots agree with the enclosures within {} · d̄/2 on every pair (the last \
             column; this is about our floating-point code and decides nothing about the claim).",
            p.raw.f64_rel_tol
        )
    } else {
        format!(
            "The f64 helpers used for plots are NOT within {} · d̄/2 of the enclosures for {} (the last column; \
             plots may be off; the claim's obligations do not use f64).",
            p.raw.f64_rel_tol,
            f64_off.join("; ")
        )
    });
}

fn negativity_search(p: &Params, ctx: &Ctx) -> Vec<NegativeSearch> {
    let prec = ctx.prec();
    let n = p.raw.negative_up_to;
    let mut found = Vec::new();
    for (dbars, from) in p.negativity_jobs() {
        ctx.progress.message(format!(
            "{}: B̃ < 0, {} d̄ = {dbars:?}",
            ctx.spec.id,
            from.label()
        ));
        let dbar = dbars[0];
        let neg = certify_negative(dbar, from, 1, n, prec);
        let first = *from.range(dbar).start();
        let dlist = dbars
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let runs: Vec<(i64, i64, u32)> = neg
            .runs
            .iter()
            .map(|&(lo, hi, k)| (lo, hi, k as u32 + first))
            .collect();
        let mut terms: Vec<u32> = runs.iter().map(|r| r.2).collect();
        terms.sort_unstable();
        terms.dedup();
        let terms: Vec<String> = terms.iter().map(|i| format!("i = {i}")).collect();
        let row = vec![
            dlist.clone(),
            from.label().into(),
            terms.join(", "),
            neg.retried.to_string(),
            match neg.certainty {
                Certainty::True => "a term for every r".into(),
                _ => format!("{} r without a term", neg.undecided.len()),
            },
        ];
        // an incomplete search leaves the hint out: the statement then cannot be
        // built and the claim is inconclusive with that reason
        let hint = neg
            .undecided
            .is_empty()
            .then(|| (runs_key(from, &dbars), runs_hint(&runs)));
        found.push(NegativeSearch { row, hint });
    }
    found
}

/// The table of the negativity searches.
fn negativity_table(p: &Params, found: &[NegativeSearch], o: &mut Presentation) {
    let n = p.raw.negative_up_to;
    let mut table = Table::new(
        format!("B̃(r) < 0 for 1 ≤ r ≤ {n}: the term certified negative (found by search; the statement decides)"),
        &[
            "d̄",
            "convention",
            "term(s) used",
            "r needing 2× precision",
            "search result",
        ],
    );
    for f in found {
        table.row(f.row.clone());
    }
    o.tables.push(table);
}

fn value_tables(p: &Params, prec: u32, sweep: &[Interval], mn: &Minimum, o: &mut Presentation) {
    let t = &p.raw.table;
    let lookup = |from: IndexFrom| -> Vec<Interval> {
        if from == mn.from && t.dbar == mn.dbar && t.r.iter().all(|&r| r < mn.below) {
            t.r.iter().map(|&r| sweep[r as usize].clone()).collect()
        } else {
            centred_at(&t.r, t.dbar, from, prec)
        }
    };
    let zero = lookup(IndexFrom::Zero);
    let one = lookup(IndexFrom::One);
    let mut table = Table::new(
        format!(
            "Centred bias B̃(r), d̄ = {}, positional.md §3 (printed) vs ours (enclosures)",
            t.dbar
        ),
        &[
            "r",
            "§3, I from 0",
            "ours, I from 0",
            "§3, I from 1",
            "ours, I from 1",
        ],
    );
    for (from, vals) in [(IndexFrom::Zero, &zero), (IndexFrom::One, &one)] {
        for (&r, b) in t.r.iter().zip(vals) {
            o.figure(
                format!("B̃({r}), d̄ = {}, {}", t.dbar, from.label()),
                b.mid_f64(),
                b.fmt_outward(12),
            );
        }
    }
    for (k, &r) in t.r.iter().enumerate() {
        table.row(vec![
            r.to_string(),
            t.zero[k].clone(),
            zero[k].fmt_outward(12),
            t.one[k].clone(),
            one[k].fmt_outward(12),
        ]);
    }
    o.tables.push(table);

    let md = &p.raw.more_digits;
    let vals = centred_at(&md.r, md.dbar, md.from, prec);
    let mut mt = Table::new(
        format!(
            "Values printed with more digits, d̄ = {}, {}",
            md.dbar,
            md.from.label()
        ),
        &[
            "r",
            "printed",
            "ours (enclosure)",
            "tolerance (half a printed unit)",
        ],
    );
    for ((&r, s), b) in md.r.iter().zip(&p.more_digits).zip(&vals) {
        mt.row(vec![
            r.to_string(),
            s.text.clone(),
            b.fmt_outward(18),
            format!("{:e}", s.half_unit.to_f64()),
        ]);
    }
    o.tables.push(mt);
}
