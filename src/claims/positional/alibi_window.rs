//! positional/alibi-window: the minimal ALiBi window w_ε.
//!
//! With T^∞(w) = e^Δ e^{−mw} / (1 − e^{−mw} + e^Δ e^{−mw}) = 1 / (1 + (e^{mw} − 1)/e^Δ)
//! (common::alibi_tail_inf, strictly decreasing in w), the smallest w with T^∞(w) ≤ ε is
//! w_ε = ⌈y⌉, y = (1/m)·ln((e^Δ(1 − ε) + ε)/ε). For every slope and Δ of the spec we
//! state, as obligations of the claim's statement (decided by the kernel, carried
//! whole by the certificate): the ceiling of y equals the claimed window,
//! T^∞(w) ≤ ε and T^∞(w − 1) > ε (so, T^∞ being decreasing, w is minimal), the
//! printed §3 reference digits, e^{−512m}, and the mean attended distance
//! Σ r e^{−mr} / Σ e^{−mr} = 1/(e^m − 1) against its truncated sum. Tables and the
//! plot evaluate the same terms with `kernel::expr`.

use super::common::{alibi_tail_inf_expr, Printed};
use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::StatementError;
use crate::kernel::expr::build::{
    abs, add, and, div, exp, gt, int, le, ln, mul, neg, q, sub, sum, var, Formula, Term,
};
use crate::kernel::{expr, Certainty, Checked, Interval, Statement};
use crate::outcome::{Plot, Presentation, Series, Style, Table};
use crate::spec::exact as rational;
use crate::spec::{check_each, ensure, FieldError};
use rug::Rational;
use serde::{Deserialize, Serialize};

/// One slope's row of the §3 table.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlopeRow {
    /// The slope m (exact literal, e.g. `"2^-8"`).
    pub slope: String,
    /// Printed e^{−512m}.
    pub e512: String,
    /// Printed 1/(e^m − 1).
    pub mean_distance: String,
    /// The claimed windows w_ε, one per entry of `deltas`.
    pub windows: Vec<u64>,
    /// Printed T^∞(w_ε) and T^∞(w_ε − 1) at Δ = `tail_delta`.
    pub tails: Vec<String>,
}

/// A reference value with many digits and a relative tolerance.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreciseE512 {
    /// The slope m.
    pub slope: String,
    /// e^{−512m} to many digits.
    pub value: String,
    /// Relative tolerance (exact literal).
    pub rel_tol: String,
}

/// Parameters of positional/alibi-window as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// The tail mass ε (exact literal in (0, 1)).
    pub epsilon: String,
    /// The content ranges Δ (exact literals ≥ 0).
    pub deltas: Vec<String>,
    /// The Δ at which the reference T^∞ values are printed (one of `deltas`).
    pub tail_delta: String,
    /// The §3 table, one row per slope.
    pub rows: Vec<SlopeRow>,
    /// e^{−512m} to many digits.
    pub e512_precise: PreciseE512,
    /// Relative tolerance between 1/(e^m − 1) and the summed mean distance.
    pub mean_rel_tol: String,
    /// The mean distance is summed over r ≤ ⌈cutoff/m⌉ (neglected mass ≈ e^{−cutoff}).
    pub mean_cutoff: u32,
}

/// The printed values of one row of the §3 table, resolved.
#[derive(Debug, Clone)]
struct RowPrinted {
    e512: Printed,
    mean_distance: Printed,
    tails: Vec<Printed>,
}

/// Parameters of positional/alibi-window, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The parameters as written (names and tables quote them).
    pub raw: Raw,
    parsed: Parsed,
    /// The index of `tail_delta` in `deltas`.
    tail_index: usize,
    mean_rel_tol: Rational,
    /// e^{−512m} to many digits: (m, value, relative tolerance).
    e512_precise: [Rational; 3],
    printed: Vec<RowPrinted>,
}

/// positional/alibi-window.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(raw: Raw, _at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        let eps = rational("epsilon", &raw.epsilon)?;
        ensure(eps > 0 && eps < 1, "epsilon", "must lie in (0, 1)")?;
        ensure(!raw.deltas.is_empty(), "deltas", "must not be empty")?;
        let mut ds = Vec::new();
        for (i, d) in raw.deltas.iter().enumerate() {
            let f = format!("deltas[{i}]");
            let q = rational(&f, d)?;
            ensure((0..=64).contains(&q), f, "Δ must lie in [0, 64]")?;
            ds.push(q);
        }
        let td = rational("tail_delta", &raw.tail_delta)?;
        let Some(tail_index) = ds.iter().position(|d| *d == td) else {
            return Err(FieldError::new("tail_delta", "must be one of `deltas`"));
        };
        let mut slopes = Vec::new();
        let mut printed = Vec::new();
        check_each(&raw.rows, "rows", |_, _| Ok(()))?;
        for (i, r) in raw.rows.iter().enumerate() {
            let f = format!("rows[{i}].slope");
            let m = rational(&f, &r.slope)?;
            ensure(
                m >= Rational::from((1, 4096)) && m <= 8,
                f,
                "slope must lie in [2^-12, 8] (ALiBi slopes lie in (0, 1))",
            )?;
            slopes.push(m);
            let e512 = Printed::parse(&format!("rows[{i}].e512"), &r.e512)?;
            let mean_distance =
                Printed::parse(&format!("rows[{i}].mean_distance"), &r.mean_distance)?;
            ensure(
                r.windows.len() == raw.deltas.len(),
                format!("rows[{i}].windows"),
                format!(
                    "has {} entries for {} deltas",
                    r.windows.len(),
                    raw.deltas.len()
                ),
            )?;
            for (j, &w) in r.windows.iter().enumerate() {
                ensure(
                    (1..=100_000_000).contains(&w),
                    format!("rows[{i}].windows[{j}]"),
                    "window must lie in 1..=100000000",
                )?;
            }
            ensure(
                r.tails.len() == 2,
                format!("rows[{i}].tails"),
                "give T^∞(w_ε) and T^∞(w_ε − 1)",
            )?;
            let tails = r
                .tails
                .iter()
                .enumerate()
                .map(|(j, t)| Printed::parse(&format!("rows[{i}].tails[{j}]"), t))
                .collect::<Result<Vec<_>, _>>()?;
            printed.push(RowPrinted {
                e512,
                mean_distance,
                tails,
            });
        }
        let m = rational("e512_precise.slope", &raw.e512_precise.slope)?;
        ensure(m > 0, "e512_precise.slope", "must be positive")?;
        let v = rational("e512_precise.value", &raw.e512_precise.value)?;
        ensure(v > 0, "e512_precise.value", "must be positive")?;
        let pt = rational("e512_precise.rel_tol", &raw.e512_precise.rel_tol)?;
        ensure(pt > 0, "e512_precise.rel_tol", "must be positive")?;
        let t = rational("mean_rel_tol", &raw.mean_rel_tol)?;
        ensure(t > 0, "mean_rel_tol", "must be positive")?;
        ensure(
            (1..=200).contains(&raw.mean_cutoff),
            "mean_cutoff",
            "must lie in 1..=200",
        )?;
        Ok(Params {
            parsed: Parsed {
                eps,
                deltas: ds,
                tail_delta: td,
                slopes,
            },
            tail_index,
            mean_rel_tol: t,
            e512_precise: [m, v, pt],
            printed,
            raw,
        })
    }
    fn statement(
        p: &Params,
        claim: &str,
        _hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        Some(Ok(p.build_statement(claim)))
    }
    type Witness = ();
    fn witness(_: &Params, _: &Ctx) {}
    /// The presentation: the statement decides the claim; tables, plots and notes
    /// show its terms.
    fn present(p: &Params, _: &(), checked: Option<&Checked>, ctx: &Ctx, o: &mut Presentation) {
        let prec = ctx.prec();
        let Parsed {
            eps,
            deltas,
            tail_delta,
            slopes,
        } = p.parsed();

        let mut cols: Vec<String> = vec![
            "m".into(),
            "e^−512m: §3 | ours".into(),
            "1/(e^m − 1): §3 | ours".into(),
            "summed mean distance".into(),
        ];
        for d in &p.raw.deltas {
            cols.push(format!("w_ε, Δ = {d}: §3 | ours"));
        }
        cols.push(format!("T^∞(w_ε), Δ = {}: §3 | ours", p.raw.tail_delta));
        cols.push(format!("T^∞(w_ε − 1), Δ = {}: §3 | ours", p.raw.tail_delta));
        let col_refs: Vec<&str> = cols.iter().map(String::as_str).collect();
        let mut table = Table::new(
            format!(
                "ALiBi windows (ε = {}; §3 reference vs certified enclosures)",
                p.raw.epsilon
            ),
            &col_refs,
        );
        let mut ytab = Table::new(
            "w_ε = ⌈y⌉, y = (1/m)·ln((e^Δ(1 − ε) + ε)/ε): enclosure of y and of T^∞ at w_ε, w_ε − 1",
            &["m", "Δ", "y", "w_ε (claimed)", "T^∞(w_ε)", "T^∞(w_ε − 1)"],
        );
        let mut plot = Plot {
            slug: "tail-vs-window".into(),
            title: format!("T^∞(w) against the window w, with ε = {}", p.raw.epsilon),
            x_label: "window w".into(),
            y_label: "T^∞(w)".into(),
            x_log: true,
            y_log: true,
            series: Vec::new(),
            heatmap: None,
            paths: false,
        };
        let summed: Vec<Interval> = {
            use rayon::prelude::*;
            slopes
                .par_iter()
                .map(|m| ev(&summed_mean_term(m, p.raw.mean_cutoff), prec))
                .collect()
        };
        for ((row, m), summed) in p.raw.rows.iter().zip(&slopes).zip(summed) {
            let mut cells = vec![row.slope.clone()];
            for (term, text) in [
                (e512_term(m), &row.e512),
                (mean_term(m), &row.mean_distance),
            ] {
                cells.push(format!("{text} | {}", ev(&term, prec).fmt_outward(7)));
            }
            cells.push(summed.fmt_outward(12));
            for (d, &w) in deltas.iter().zip(&row.windows) {
                let y = ev(&y_term(m, d, &eps), prec);
                ytab.row(vec![
                    row.slope.clone(),
                    d.to_string(),
                    y.fmt_outward(14),
                    w.to_string(),
                    ev(&tail_term(m, d, w), prec).fmt_outward(10),
                    ev(&tail_term(m, d, w - 1), prec).fmt_outward(10),
                ]);
                let is_ceil =
                    expr::check_built(&ceil_formula(m, d, &eps, w), prec, &Default::default());
                cells.push(if is_ceil == Ok(Certainty::True) {
                    format!("{w} | {w}")
                } else {
                    format!("{w} | ⌈{}⌉", y.fmt_outward(10))
                });
            }
            if let Some(j) = deltas.iter().position(|d| *d == tail_delta) {
                let w = row.windows[j];
                for (ww, text) in [w, w - 1].into_iter().zip(&row.tails) {
                    let t = ev(&tail_term(m, &tail_delta, ww), prec);
                    cells.push(format!("{text} | {}", t.fmt_outward(6)));
                }
            }
            table.row(cells);
            // plot: T^∞(w) on a log grid, per Δ (64-bit enclosures of the same term)
            for (j, d) in deltas.iter().enumerate() {
                let top = (row.windows[j] as f64 * 2.5).max(10.0) as u64;
                let mut pts = Vec::new();
                let mut w = 1u64;
                while w <= top {
                    let t = ev(&tail_term(m, d, w), 64).mid_f64();
                    if t > 1e-6 {
                        pts.push((w as f64, t));
                    }
                    w = (w + 1).max((w as f64 * 1.15) as u64);
                }
                plot.series.push(Series {
                    name: format!("m = {}, Δ = {d}", row.slope),
                    style: if j == 0 { Style::Line } else { Style::Dashed },
                    points: pts,
                });
            }
        }
        let eps_f = Interval::from_rational(64, &eps).mid_f64();
        let wmax = p
            .raw
            .rows
            .iter()
            .flat_map(|r| r.windows.iter().copied())
            .max()
            .unwrap_or(10) as f64
            * 2.5;
        plot.series.push(Series {
            name: format!("ε = {}", p.raw.epsilon),
            style: Style::Dashed,
            points: vec![(1.0, eps_f), (wmax, eps_f)],
        });

        // key figures: the flattest slope's window first (shown in reports/README.md)
        if let Some(last) = p.raw.rows.last() {
            o.figure(
                format!("w_ε(m = {}, Δ = {})", last.slope, p.raw.deltas[0]),
                last.windows[0] as f64,
                format!("{} (ε = {})", last.windows[0], p.raw.epsilon),
            );
        }
        for (i, row) in p.raw.rows.iter().enumerate() {
            for (j, d) in p.raw.deltas.iter().enumerate() {
                if i + 1 == p.raw.rows.len() && j == 0 {
                    continue; // already the first figure
                }
                o.figure(
                    format!("w_ε(m = {}, Δ = {d})", row.slope),
                    row.windows[j] as f64,
                    row.windows[j].to_string(),
                );
            }
        }
        let pm = p.e512_precise[0].clone();
        let pe = ev(&e512_term(&pm), prec);
        o.figure(
            format!("e^−512m at m = {}", p.raw.e512_precise.slope),
            pe.mid_f64(),
            pe.fmt_outward(21),
        );
        o.tables.push(table);
        o.tables.push(ytab);
        o.plots.push(plot);
        o.note(
            "T^∞(w) = 1/(1 + (e^{mw} − 1)/e^Δ) is strictly decreasing in w, so T^∞(w_ε) ≤ ε < T^∞(w_ε − 1) \
             proves that w_ε is the minimal window; the ceiling of the closed form is a separate obligation.",
        );
        o.note(
            "The mean distance 1/(e^m − 1) is the Δ = 0, i → ∞ limit; the certified comparison is with a truncated \
             sum whose neglected mass is about e^{−cutoff}.",
        );
        if let Some(c) = &checked {
            o.note(format!(
                "Every certified check is an obligation of the statement ({} obligations, decided at {} bits); the \
                 certificate carries the whole statement, and `attncheck verify` rebuilds it from this spec.",
                c.decisions().len(),
                c.prec()
            ));
        }
    }
}

// ----- the statement: every formula written once -----

/// The term T^∞(w) for exact m, Δ and a window w.
pub fn tail_term(m: &Rational, delta: &Rational, w: u64) -> Term {
    alibi_tail_inf_expr(q(m), w.into(), q(delta))
}

/// The term y = (1/m)·ln((e^Δ(1 − ε) + ε)/ε), whose ceiling is the minimal window.
pub fn y_term(m: &Rational, delta: &Rational, eps: &Rational) -> Term {
    div(
        ln(div(
            add([mul([exp(q(delta)), sub(int(1), q(eps))]), q(eps)]),
            q(eps),
        )),
        q(m),
    )
}

/// The formula w − 1 < y ≤ w, i.e. w = ⌈y⌉.
pub fn ceil_formula(m: &Rational, delta: &Rational, eps: &Rational, w: u64) -> Formula {
    let y = y_term(m, delta, eps);
    and([gt(y.clone(), int(i128::from(w) - 1)), le(y, w.into())])
}

/// The minimality formulas of a claimed window: (T^∞(w) ≤ ε, T^∞(w − 1) > ε). With
/// T^∞ strictly decreasing in w they say that w is the minimal window (w ≥ 1: validated).
pub fn minimality_formulas(
    m: &Rational,
    delta: &Rational,
    eps: &Rational,
    w: u64,
) -> (Formula, Formula) {
    (
        le(tail_term(m, delta, w), q(eps)),
        gt(tail_term(m, delta, w.saturating_sub(1)), q(eps)),
    )
}

/// The term 1/(e^m − 1), the Δ = 0, i → ∞ mean attended distance.
pub fn mean_term(m: &Rational) -> Term {
    div(int(1), sub(exp(q(m)), int(1)))
}

/// The term Σ_{r=0}^{R} r e^{−mr} / Σ_{r=0}^{R} e^{−mr}, R = ⌈cutoff/m⌉.
pub fn summed_mean_term(m: &Rational, cutoff: u32) -> Term {
    // R ≤ 200·2^12 (mean_cutoff ≤ 200, m ≥ 2^−12: validated)
    let r_max = (Rational::from(cutoff) / m)
        .ceil()
        .numer()
        .to_i128()
        .unwrap_or(i128::MAX);
    let decay = || exp(neg(mul([q(m), var("r")])));
    div(
        sum("r", 0, r_max, mul([var("r"), decay()])),
        sum("r", 0, r_max, decay()),
    )
}

/// The term e^{−512m}.
pub fn e512_term(m: &Rational) -> Term {
    exp(neg(mul([int(512), q(m)])))
}

/// The obligation names (stable: they are the check names `--check` compares).
const CEIL: &str = "claimed windows = ⌈(1/m)·ln((e^Δ(1 − ε) + ε)/ε)⌉ (the §3 w_ε columns)";
const AT: &str = "T^∞(w_ε) ≤ ε for every claimed window";
const BEFORE: &str =
    "T^∞(w_ε − 1) > ε for every claimed window (minimality: T^∞ is decreasing in w)";
const DIGITS: &str = "§3 printed digits reproduced (e^−512m, 1/(e^m − 1), T^∞ values): |ours − printed| ≤ ½ unit in the last digit";

/// The parsed parameters the statement and the presentation share.
#[derive(Debug, Clone)]
struct Parsed {
    eps: Rational,
    deltas: Vec<Rational>,
    tail_delta: Rational,
    slopes: Vec<Rational>,
}

impl Params {
    fn parsed(&self) -> Parsed {
        self.parsed.clone()
    }

    /// The statement: per group of the §3 table one obligation, the conjunction of
    /// that group's formulas over every (m, Δ).
    fn build_statement(&self, claim: &str) -> Statement {
        let Parsed {
            eps,
            deltas,
            tail_delta,
            slopes,
        } = self.parsed();
        let mut st = Statement::new(claim);
        let (mut ceil, mut at, mut before, mut digits, mut mean) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let tol = &self.mean_rel_tol;
        for ((row, m), pr) in self.raw.rows.iter().zip(&slopes).zip(&self.printed) {
            digits.push(pr.e512.formula(e512_term(m)));
            digits.push(pr.mean_distance.formula(mean_term(m)));
            for (d, &w) in deltas.iter().zip(&row.windows) {
                ceil.push(ceil_formula(m, d, &eps, w));
                let (a, b) = minimality_formulas(m, d, &eps, w);
                at.push(a);
                before.push(b);
            }
            let w = row.windows[self.tail_index];
            for (ww, printed) in [w, w - 1].into_iter().zip(&pr.tails) {
                digits.push(printed.formula(tail_term(m, &tail_delta, ww)));
            }
            let c = mean_term(m);
            mean.push(le(
                abs(sub(summed_mean_term(m, self.raw.mean_cutoff), c.clone())),
                mul([q(tol), c]),
            ));
        }
        st.state(CEIL, &and(ceil));
        st.state(AT, &and(at));
        st.state(BEFORE, &and(before));
        st.state(DIGITS, &and(digits));
        st.state(self.mean_name(), &and(mean));
        let [pm, pv, pt] = &self.e512_precise;
        st.state(
            self.e512_name(),
            &le(abs(sub(e512_term(pm), q(pv))), mul([q(pv), q(pt)])),
        );
        st
    }

    fn mean_name(&self) -> String {
        format!(
            "mean attended distance at Δ = 0: truncated Σ r e^−mr / Σ e^−mr (r ≤ ⌈{}/m⌉) within relative {} of 1/(e^m − 1)",
            self.raw.mean_cutoff, self.raw.mean_rel_tol
        )
    }

    fn e512_name(&self) -> String {
        format!(
            "e^−512m at m = {} equals {} to relative {}",
            self.raw.e512_precise.slope, self.raw.e512_precise.value, self.raw.e512_precise.rel_tol
        )
    }
}

/// Evaluates a term of the statement for presentation (never decides anything).
fn ev(term: &Term, prec: u32) -> Interval {
    expr::eval_built(term, prec, &Default::default()).expect("the statement's own term")
}
