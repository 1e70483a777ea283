//! positional/alibi-tail-bound: ALiBi attention beyond distance w is bounded
//! uniformly in the query position.
//!
//! Query i, logits s_r = a_r − m r (r = 0..i) with content a_r ∈ [0, Δ]. With
//! x = e^{−m}, E = e^Δ, h = 1 − x^w and g = x^w − x^{i+1}, the supremum over content
//! of the tail T_w = Σ_{r≥w} p_r is T^max(i) = E g / (h + E g), attained by a_r = Δ for
//! r ≥ w and 0 below; T^max(i) increases in i to T^∞ = E x^w / (h + E x^w) ≤ E x^w.
//!
//! Two independent checks:
//! - intervals (MPFR, outward): random slopes from the ALiBi slope lists, i up to
//!   `max_i`, w ≤ i, Δ ∈ (0, max_Δ] and random content; T_w from two certified
//!   log-sum-exps (log space: the weights underflow any f64), the closed forms,
//!   and the inequalities through their exact difference identities
//!   (T^∞ − T^max(i) = E h x^{i+1} / ((h + E x^w)(h + E g)), …), which stay decidable
//!   when the two sides agree to far more digits than the precision holds;
//! - exact rationals: with x and E rational, every quantity is a rational function;
//!   for every 1 ≤ w ≤ i ≤ `exact_max_i` the geometric-sum closed form equals the
//!   summed extremal tail, the difference identities hold, and all inequalities
//!   (including monotonicity in i) are decided exactly.

use super::common::{
    alibi_tail_inf, check_heads, slope_exponents, slope_expr, slope_interval, SlopeRule, SplitMix64,
};
use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::{Exact, StatementError};
use crate::kernel::expr::build::{add, and, div, exp, ge, gt, int, mul, neg, q, sub, Formula};
use crate::kernel::{log_sum_exp, parse_rational, Certainty, Checked, Interval, Statement};
use crate::outcome::{Observations, Plot, Presentation, Series, Style, Table};
use crate::reading::{Agreement, Reading};
use crate::spec::{check_each, ensure, FieldError};
use rayon::prelude::*;
use rug::{Integer, Rational};
use serde::{Deserialize, Serialize};

/// Parameters of positional/alibi-tail-bound as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// Head counts whose slope lists the random slopes are drawn from.
    pub heads: Vec<usize>,
    /// Slope rules drawn from.
    pub rules: Vec<SlopeRule>,
    /// Number of interval instances.
    pub instances: usize,
    /// The largest query position i (the first instance uses it).
    pub max_i: u64,
    /// The largest content range Δ (exact literal).
    pub max_delta: String,
    /// Seed of the instance generator.
    pub seed: u64,
    /// Factor multiplying both upper bounds T^∞ and e^Δ e^{−mw} (exact literal; 1 is the
    /// claim, a value below 1 tightens the bounds below the truth).
    pub bound_scale: String,
    /// Number of exact-rational instances.
    pub exact_instances: usize,
    /// Every 1 ≤ w ≤ i ≤ exact_max_i is checked in ℚ.
    pub exact_max_i: u64,
    /// x ≈ e^{−m} and E ≈ e^Δ are rounded to this many fractional bits in ℚ.
    pub exact_bits: u32,
}

/// Parameters of positional/alibi-tail-bound, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// Head counts whose slope lists the random slopes are drawn from.
    pub heads: Vec<usize>,
    /// Slope rules drawn from.
    pub rules: Vec<SlopeRule>,
    /// Number of interval instances.
    pub instances: usize,
    /// The largest query position i.
    pub max_i: u64,
    /// The largest content range Δ, in (0, 64].
    pub max_delta: Exact,
    /// Seed of the instance generator.
    pub seed: u64,
    /// Factor multiplying both upper bounds, positive.
    pub bound_scale: Exact,
    /// Number of exact-rational instances.
    pub exact_instances: usize,
    /// Every 1 ≤ w ≤ i ≤ exact_max_i is checked in ℚ.
    pub exact_max_i: u64,
    /// Fractional bits of x ≈ e^{−m} and E ≈ e^Δ in ℚ.
    pub exact_bits: u32,
}

/// positional/alibi-tail-bound.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(raw: Raw, _at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        check_each(&raw.heads, "heads", |f, &x| check_heads(f, x))?;
        check_each(&raw.rules, "rules", |_, _| Ok(()))?;
        ensure(
            (1..=10_000).contains(&raw.instances),
            "instances",
            "must lie in 1..=10000",
        )?;
        ensure(
            (1..=10_000_000).contains(&raw.max_i),
            "max_i",
            "must lie in 1..=10000000",
        )?;
        let d = parse_rational(&raw.max_delta)
            .map_err(|e| FieldError::new("max_delta", e.to_string()))?;
        ensure(d > 0 && d <= 64, "max_delta", "Δ_max must lie in (0, 64]")?;
        let s = parse_rational(&raw.bound_scale)
            .map_err(|e| FieldError::new("bound_scale", e.to_string()))?;
        ensure(s > 0, "bound_scale", "must be positive")?;
        ensure(
            raw.exact_instances <= 1000,
            "exact_instances",
            "must lie in 0..=1000",
        )?;
        ensure(
            (1..=2000).contains(&raw.exact_max_i),
            "exact_max_i",
            "must lie in 1..=2000",
        )?;
        ensure(
            (4..=256).contains(&raw.exact_bits),
            "exact_bits",
            "must lie in 4..=256",
        )?;
        Ok(Params {
            max_delta: Exact {
                value: d,
                text: raw.max_delta,
            },
            bound_scale: Exact {
                value: s,
                text: raw.bound_scale,
            },
            heads: raw.heads,
            rules: raw.rules,
            instances: raw.instances,
            max_i: raw.max_i,
            seed: raw.seed,
            exact_instances: raw.exact_instances,
            exact_max_i: raw.exact_max_i,
            exact_bits: raw.exact_bits,
        })
    }
    fn statement(
        p: &Params,
        claim: &str,
        _hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        Some(Ok(p.build_statement(claim)))
    }
    type Witness = Found;
    const CERTIFIED_LAST: bool = true;
    /// The interval instances (random content, enclosures) and the exact-rational ones.
    fn witness(p: &Params, ctx: &Ctx) -> Found {
        let prec = ctx.prec();
        let s = p.bound_scale.value.clone();
        let insts = instances(p);
        ctx.progress.message(format!(
            "{}: {} interval instances",
            ctx.spec.id,
            insts.len()
        ));
        let results: Vec<RealResult> = insts
            .par_iter()
            .map(|inst| real_instance(inst, &s, prec))
            .collect();

        // exact ℚ instances: x ≈ e^{−m}, E ≈ e^Δ (the first with Δ = 0, E = 1)
        let mut rng = SplitMix64::new(p.seed ^ 0x5151_5151_5151_5151);
        let max_delta = p.max_delta.value.clone();
        let exact_specs: Vec<(Rational, Rational, String, u64)> = (0..p.exact_instances)
            .map(|n| {
                let (heads, rule, head, q) = pick_slope(p, &mut rng);
                let delta = if n == 0 {
                    Rational::new()
                } else {
                    &max_delta * Rational::from((rng.range(1, 256) as i64, 256))
                };
                let x = dyadic(&slope_interval(&q, prec).neg_exp(), p.exact_bits);
                let e = if delta == 0 {
                    Rational::from(1)
                } else {
                    dyadic(&Interval::from_rational(prec, &delta).exp(), p.exact_bits)
                        .max(Rational::from(1))
                };
                let label = format!(
                    "H = {heads} {}, head {head}: m = {}, Δ = {delta}",
                    rule.as_str(),
                    fmt_slope(&q)
                );
                (x, e, label, rng.next_u64())
            })
            .collect();
        ctx.progress.message(format!(
            "{}: {} exact instances",
            ctx.spec.id, p.exact_instances
        ));
        let exact: Vec<ExactResult> = exact_specs
            .par_iter()
            .map(|(x, e, label, seed)| {
                let mut r = exact_check(x, e, &s, p.exact_max_i, *seed);
                r.label = label.clone();
                r
            })
            .collect();

        ctx.progress
            .message(format!("{}: the statement", ctx.spec.id));
        Found {
            insts,
            results,
            exact,
        }
    }
    /// T_w ≤ T^max(i) on the interval instances (observed: the claim's own
    /// enclosures), the extremal content's consistency, and the exact-rational checks.
    fn observe(p: &Params, w: &Found, _: Option<&Checked>, ctx: &Ctx, o: &mut Observations) {
        let prec = ctx.prec();
        let (insts, results, exact) = (&w.insts, &w.results, &w.exact);
        let fmt_inst = |k: usize| fmt_inst(insts, k);
        let agg = |f: &dyn Fn(&RealResult) -> Certainty| aggregate(insts, results, f);
        let n = results.len();
        let retried = results.iter().filter(|r| r.prec > prec).count();
        let detail = |bad: Vec<String>, ok: String| {
            if bad.is_empty() {
                ok
            } else {
                bad.join("; ")
            }
        };
        let (c, bad) = agg(&|r| r.below_max);
        let worst_ratio = worst_ratio(results);
        o.observe_interval(
            format!("T_w ≤ T^max(i) for random content a_r ∈ [0, Δ) ({n} interval instances)"),
            c,
            detail(
                bad,
                format!("largest T_w/T^max(i) ≤ {worst_ratio:.6}; {retried} instance(s) retried at 2× precision"),
            ),
        );
        let overlap: Vec<usize> = results
            .iter()
            .enumerate()
            .filter(|(_, r)| r.t_extremal.agreement(&r.closed.t_max).violated())
            .map(|(k, _)| k)
            .collect();
        o.consistency(
            "extremal content (a_r = Δ for r ≥ w, 0 below): summed T_w and closed-form T^max(i) enclosures overlap \
             (consistency; disjoint enclosures would disprove attainment — the identity itself is checked in ℚ below)",
            Reading::all(results.iter().map(|r| r.t_extremal.agreement(&r.closed.t_max))),
            if overlap.is_empty() {
                format!("all {n} instances overlap")
            } else {
                overlap.iter().map(|&k| fmt_inst(k)).collect::<Vec<_>>().join("; ")
            },
        );
        // exact
        let pairs: u64 = exact.iter().map(|r| r.pairs).sum();
        let ex_detail = |k: usize| {
            let bad: Vec<String> = exact
                .iter()
                .filter_map(|r| {
                    r.first_failure[k]
                        .as_ref()
                        .map(|f| format!("{}: {f}", r.label))
                })
                .take(3)
                .collect();
            if bad.is_empty() {
                format!(
                    "{} instance(s), {pairs} (w, i) pairs, 1 ≤ w ≤ i ≤ {}, x and E with {} fractional bits",
                    exact.len(),
                    p.exact_max_i,
                    p.exact_bits
                )
            } else {
                bad.join("; ")
            }
        };
        if !exact.is_empty() {
            for (k, name) in EXACT_CHECKS.into_iter().enumerate() {
                let name = if name.contains("s·") {
                    format!("{name} (s = {})", p.bound_scale)
                } else {
                    name.to_string()
                };
                o.observe_interval(
                    name,
                    Certainty::exact(exact.iter().all(|r| r.first_failure[k].is_none())),
                    ex_detail(k),
                );
            }
        }
    }
    /// The figures, the tables of instances, the plot of T^max and the notes.
    fn present(p: &Params, w: &Found, _: Option<&Checked>, ctx: &Ctx, o: &mut Presentation) {
        let prec = ctx.prec();
        let (insts, results, exact) = (&w.insts, &w.results, &w.exact);
        let n = results.len();
        let pairs: u64 = exact.iter().map(|r| r.pairs).sum();
        let worst_ratio = worst_ratio(results);
        o.figure(
            "interval instances",
            n as f64,
            format!(
                "{n} random instances (i ≤ {}, w ≤ i, Δ ≤ {}) + {pairs} exact (w, i) pairs",
                p.max_i, p.max_delta
            ),
        );
        o.figure("exact (w, i) pairs", pairs as f64, pairs.to_string());
        o.figure(
            "largest T_w / T^max(i) (random content)",
            worst_ratio,
            format!("{worst_ratio:.6}"),
        );
        let mut t = Table::new(
            "Interval instances (outward-rounded enclosures; the naive f64 column sums e^{s_r} directly)",
            &[
                "#", "slope list", "m", "i", "w", "Δ", "T_w (random content)", "T^max(i)", "T^∞", "e^Δ e^−mw",
                "naive f64 T_w",
            ],
        );
        for (k, (inst, r)) in insts.iter().zip(results).enumerate().take(20) {
            t.row(vec![
                (k + 1).to_string(),
                format!(
                    "H = {} {}, head {}",
                    inst.heads,
                    inst.rule.as_str(),
                    inst.head
                ),
                fmt_slope(&inst.q),
                inst.i.to_string(),
                inst.w.to_string(),
                inst.delta.to_string(),
                r.t_w.fmt_outward(6),
                r.closed.t_max.fmt_outward(6),
                r.closed.t_inf.fmt_outward(6),
                r.closed.bound.fmt_outward(6),
                format!("{:.6e}", r.naive_f64),
            ]);
        }
        o.tables.push(t);
        let mut et = Table::new(
            "Exact-rational instances (x ≈ e^−m, E ≈ e^Δ as dyadic rationals)",
            &["slope and Δ", "x", "E", "(w, i) pairs", "all exact checks"],
        );
        for r in exact {
            et.row(vec![
                r.label.clone(),
                format!("{:.12}", r.x.to_f64()),
                format!("{:.12}", r.e.to_f64()),
                r.pairs.to_string(),
                {
                    let f: Vec<&str> = r
                        .first_failure
                        .iter()
                        .flatten()
                        .map(String::as_str)
                        .collect();
                    if f.is_empty() {
                        "hold".into()
                    } else {
                        f.join("; ")
                    }
                },
            ]);
        }
        o.tables.push(et);
        o.plots.push(plot_t_max(prec));
        let underflow = results
            .iter()
            .filter(|r| r.naive_f64 == 0.0 || r.naive_f64.is_nan())
            .count();
        o.note(format!(
            "Naive f64 (summing e^(a_r − m r) directly) underflows once m·w exceeds about 745 (e^−745 is below the \
             smallest double) and then returns a tail of 0; here that happened for {underflow} of the {n} instances. \
             The certified check works in log space (log-sum-exp over MPFR intervals) and is not affected."
        ));
        o.note(
            "Random Δ is drawn in (0, Δ_max] so that random content stays strictly below the extremal one; Δ = 0 \
             (content constant, T_w = T^max(i)) is covered by the exact-rational instances (E = 1).",
        );
        o.note(
            "T^max(i) and T^∞ agree to e^{−m(i+1−w)} relative, far below 2^−128 for large i; the inequalities are \
             therefore decided through exact difference identities (verified in ℚ) whose every factor is positive.",
        );
    }
}

impl Params {
    /// The statement: the closed-form chain T^max(i) ≤ s·T^∞ ≤ … and T^max(i + 1) >
    /// T^max(i) at every seeded interval instance, through the difference identities
    /// (see [`obligations`]); one obligation per link, the conjunction over instances.
    fn build_statement(&self, claim: &str) -> Statement {
        let s = self.bound_scale.value.clone();
        let insts = instances(self);
        let n = insts.len();
        let mut links: [Vec<Formula>; 3] = Default::default();
        for inst in &insts {
            for (k, f) in obligations(inst, &s).into_iter().enumerate() {
                links[k].push(f);
            }
        }
        let mut st = Statement::new(claim);
        for (name, fs) in chain_names(&self.bound_scale.text, n)
            .into_iter()
            .zip(links)
        {
            st.state(name, &and(fs));
        }
        st
    }
}

/// The names of the chain's three links over `n` instances.
fn chain_names(scale: &str, n: usize) -> [String; 3] {
    [
        format!(
            "T^max(i) ≤ s·T^∞ (s = {scale}), via (s − 1)T^∞ + E h x^(i+1)/((h + E x^w)(h + E g)) ≥ 0 ({n} instances)"
        ),
        format!(
            "T^∞ ≤ s·e^Δ e^(−mw) (s = {scale}), via E x^w((s − 1) + (E − 1)x^w/(h + E x^w)) ≥ 0 ({n} instances)"
        ),
        format!("T^max(i + 1) > T^max(i) at each instance's i ({n} instances)"),
    ]
}

/// One random instance: a slope 2^{−q} of an ALiBi slope list, a query position, a
/// window, a content range and a seed for the content.
#[derive(Clone, Debug)]
pub struct Instance {
    /// H.
    pub heads: usize,
    /// The rule.
    pub rule: SlopeRule,
    /// 1-based head index.
    pub head: usize,
    /// The exponent q (m = 2^{−q}).
    pub q: Rational,
    /// The query position i.
    pub i: u64,
    /// The window w ≤ i.
    pub w: u64,
    /// The content range Δ (a_r ∈ [0, Δ]).
    pub delta: Rational,
    /// Seed of the content a_r.
    pub content_seed: u64,
}

/// Content resolution: a_r = Δ·k_r/2^CONTENT_BITS with k_r ∈ [0, 2^CONTENT_BITS).
const CONTENT_BITS: i32 = 20;

fn pick_slope(p: &Params, rng: &mut SplitMix64) -> (usize, SlopeRule, usize, Rational) {
    let heads = p.heads[rng.below(p.heads.len() as u64) as usize];
    let rule = p.rules[rng.below(p.rules.len() as u64) as usize];
    let list = slope_exponents(heads, rule);
    let k = rng.below(list.len() as u64) as usize;
    (heads, rule, k + 1, list[k].clone())
}

/// The seeded instances (the first one at i = max_i).
pub fn instances(p: &Params) -> Vec<Instance> {
    let mut rng = SplitMix64::new(p.seed);
    let max_delta = p.max_delta.value.clone();
    (0..p.instances)
        .map(|n| {
            let (heads, rule, head, q) = pick_slope(p, &mut rng);
            let i = if n == 0 {
                p.max_i
            } else {
                rng.log_uniform(p.max_i)
            };
            let w = rng.log_uniform(i);
            // Δ ∈ (0, Δ_max] in steps of Δ_max/256: Δ > 0 keeps random content strictly
            // below the extremal one (Δ = 0 is covered exactly in ℚ)
            let delta = &max_delta * Rational::from((rng.range(1, 256) as i64, 256));
            Instance {
                heads,
                rule,
                head,
                q,
                i,
                w,
                delta,
                content_seed: rng.next_u64(),
            }
        })
        .collect()
}

/// The content a_r ∈ [0, Δ) of an instance, as integers k_r (a_r = Δ·k_r/2^20).
fn content(inst: &Instance) -> impl Iterator<Item = i64> {
    let mut rng = SplitMix64::new(inst.content_seed);
    (0..=inst.i).map(move |_| rng.below(1 << CONTENT_BITS) as i64)
}

/// Certified closed forms of one instance: T^max(i), T^∞, e^Δ e^{−mw} and the
/// margins that decide the chain of inequalities.
pub struct ClosedForms {
    /// T^max(i) = E g / (h + E g).
    pub t_max: Interval,
    /// T^∞ = E x^w / (h + E x^w).
    pub t_inf: Interval,
    /// E x^w = e^Δ e^{−mw}.
    pub bound: Interval,
    /// s·T^∞ − T^max(i) = (s − 1)T^∞ + E h x^{i+1}/((h + E x^w)(h + E g)).
    pub margin_max_inf: Interval,
    /// s·E x^w − T^∞ = E x^w·((s − 1) + (E − 1)x^w/(h + E x^w)).
    pub margin_inf_bound: Interval,
    /// T^max(i + 1) − T^max(i) = E h x^{i+1}(1 − x) / ((h + E g)(h + E g')).
    pub step_in_i: Interval,
}

/// The closed forms for slope m, window w, position i, E = e^Δ and scale s.
pub fn closed_forms(m: &Interval, w: u64, i: u64, e: &Interval, s: &Rational) -> ClosedForms {
    let p = m.prec();
    let one = Interval::one(p);
    let xk = |k: u64| (-(m * &Interval::from_integer(p, &Integer::from(k)))).exp();
    let xw = xk(w);
    let xi1 = xk(i + 1);
    let x = xk(1);
    let h = &one - &xw;
    let g = &xw * &(&one - &xk(i + 1 - w));
    let eg = e * &g;
    let exw = e * &xw;
    let t_max = &eg / &(&h + &eg);
    let t_inf = alibi_tail_inf(m, w, e);
    let sm1 = Interval::from_rational(p, &Rational::from(s - 1u32));
    let d = &(&(e * &h) * &xi1) / &(&(&h + &exw) * &(&h + &eg));
    let margin_max_inf = &(&sm1 * &t_inf) + &d;
    let em1 = e - &one;
    let margin_inf_bound = &exw * &(&sm1 + &(&(&em1 * &xw) / &(&h + &exw)));
    let dg = &xi1 * &(&one - &x);
    let eg2 = e * &(&g + &dg);
    let step_in_i = &(&(e * &h) * &dg) / &(&(&h + &eg) * &(&h + &eg2));
    ClosedForms {
        t_max,
        t_inf,
        bound: exw,
        margin_max_inf,
        margin_inf_bound,
        step_in_i,
    }
}

/// T_w = 1/(1 + e^{lse(head) − lse(tail)}) from two certified log-sum-exps.
pub fn tail_from_logits(head: &[Interval], tail: &[Interval]) -> Interval {
    let p = head
        .iter()
        .chain(tail)
        .map(Interval::prec)
        .max()
        .unwrap_or(53);
    let one = Interval::one(p);
    &one / &(&one + &(&log_sum_exp(head) - &log_sum_exp(tail)).exp())
}

/// The interval results of one instance.
pub struct RealResult {
    /// T_w with the random content.
    pub t_w: Interval,
    /// T_w with the extremal content (Δ beyond w, 0 below).
    pub t_extremal: Interval,
    /// The closed forms.
    pub closed: ClosedForms,
    /// T_w ≤ T^max(i).
    pub below_max: Certainty,
    /// s·T^∞ − T^max(i) ≥ 0.
    pub max_le_inf: Certainty,
    /// s·e^Δ e^{−mw} − T^∞ ≥ 0.
    pub inf_le_bound: Certainty,
    /// T^max(i + 1) − T^max(i) > 0.
    pub increasing: Certainty,
    /// Naive f64 T_w (sum of e^{s_r} in f64; for the report only).
    pub naive_f64: f64,
    /// The precision used (doubled once if something was undecided).
    pub prec: u32,
}

fn real_at(inst: &Instance, s: &Rational, prec: u32) -> RealResult {
    let m = slope_interval(&inst.q, prec);
    let delta = Interval::from_rational(prec, &inst.delta);
    let e = delta.exp();
    let zero = Interval::zero(prec);
    let logit = |a: &Interval, r: u64| a - &(&m * &Interval::from_integer(prec, &Integer::from(r)));
    let w = inst.w as usize;
    let mut head = Vec::with_capacity(w);
    let mut tail = Vec::with_capacity((inst.i + 1) as usize - w);
    let mut ex_head = Vec::with_capacity(w);
    let mut ex_tail = Vec::with_capacity((inst.i + 1) as usize - w);
    let md = inst.q.to_f64();
    let mf = 2f64.powf(-md);
    let (mut naive_all, mut naive_tail) = (0f64, 0f64);
    for (r, k) in content(inst).enumerate() {
        let a = (&delta * &Interval::from_i64(prec, k)).mul_2exp(-CONTENT_BITS);
        let z = logit(&a, r as u64);
        let dk = Interval::from_rational(53, &inst.delta).mid_f64() * k as f64
            / (1u64 << CONTENT_BITS) as f64;
        let wf = (dk - mf * r as f64).exp();
        naive_all += wf;
        if r < w {
            head.push(z);
            ex_head.push(logit(&zero, r as u64));
        } else {
            naive_tail += wf;
            tail.push(z);
            ex_tail.push(logit(&delta, r as u64));
        }
    }
    let t_w = tail_from_logits(&head, &tail);
    let t_extremal = tail_from_logits(&ex_head, &ex_tail);
    let closed = closed_forms(&m, inst.w, inst.i, &e, s);
    let zero = Interval::zero(prec);
    RealResult {
        below_max: t_w.le(&closed.t_max),
        max_le_inf: closed.margin_max_inf.ge(&zero),
        inf_le_bound: closed.margin_inf_bound.ge(&zero),
        increasing: closed.step_in_i.gt(&zero),
        t_w,
        t_extremal,
        closed,
        naive_f64: naive_tail / naive_all,
        prec,
    }
}

/// Runs one instance at `prec`, and at 2·prec if an inequality was undecided.
pub fn real_instance(inst: &Instance, s: &Rational, prec: u32) -> RealResult {
    let r = real_at(inst, s, prec);
    let undecided =
        [r.below_max, r.max_le_inf, r.inf_le_bound, r.increasing].contains(&Certainty::Unknown);
    if undecided {
        real_at(inst, s, 2 * prec)
    } else {
        r
    }
}

/// What the exact-rational check found for one (x, E).
#[derive(Clone, Debug)]
pub struct ExactResult {
    /// x ≈ e^{−m} (rational).
    pub x: Rational,
    /// E ≈ e^Δ (rational, ≥ 1).
    pub e: Rational,
    /// The slope exponent and Δ it came from (display).
    pub label: String,
    /// Number of (w, i) pairs.
    pub pairs: u64,
    /// The first failing pair of each exact check, if any, in the order
    /// [`EXACT_CHECKS`].
    pub first_failure: [Option<String>; 5],
}

/// What the exact check decides for every pair, in the order of
/// [`ExactResult::first_failure`].
pub const EXACT_CHECKS: [&str; 5] = [
    "ℚ: summed extremal tail = E·G(w, i)/(G(0, w − 1) + E·G(w, i)) exactly (the supremum is attained)",
    "ℚ: random content c_r ∈ [1, E]: T_w ≤ T^max(i)",
    "ℚ: T^∞ − T^max(i) = E h x^(i+1)/((h + E x^w)(h + E g)) > 0 and T^max(i) ≤ s·T^∞",
    "ℚ: E x^w − T^∞ = E(E − 1)x^(2w)/(h + E x^w) and T^∞ ≤ s·E x^w",
    "ℚ: T^max(i) < T^max(i + 1) for every i < n",
];

/// The exact check: every 1 ≤ w ≤ i ≤ n with x, E, s rational; content weights
/// c_r = 1 + (E − 1)·k_r/2^16 ∈ [1, E) from `seed` (c_r = e^{a_r} in the real model).
pub fn exact_check(x: &Rational, e: &Rational, s: &Rational, n: u64, seed: u64) -> ExactResult {
    let n = n as usize;
    let one = Rational::from(1);
    let mut pw = Vec::with_capacity(n + 3);
    pw.push(one.clone());
    for k in 1..n + 3 {
        pw.push(Rational::from(&pw[k - 1] * x));
    }
    let mut rng = SplitMix64::new(seed);
    let em1 = Rational::from(e - 1u32);
    // prefix sums S[k] = Σ_{t<k} x^t and C[k] = Σ_{t<k} c_t x^t
    let mut sx = vec![Rational::new(); n + 2];
    let mut cx = vec![Rational::new(); n + 2];
    for k in 1..n + 2 {
        let c = &one + (&em1 * Rational::from((rng.below(1 << 16) as i64, 1 << 16)));
        sx[k] = Rational::from(&sx[k - 1] + &pw[k - 1]);
        cx[k] = &cx[k - 1] + Rational::from(&c * &pw[k - 1]);
    }
    let one_minus_x = Rational::from(&one - x);
    let geo = |a: usize, b: usize| Rational::from(&pw[a] - &pw[b + 1]) / &one_minus_x;
    let mut res = ExactResult {
        x: x.clone(),
        e: e.clone(),
        label: String::new(),
        pairs: 0,
        first_failure: Default::default(),
    };
    let fail = |res: &mut ExactResult, k: usize, what: &str, w: usize, i: usize| {
        if res.first_failure[k].is_none() {
            res.first_failure[k] = Some(format!("{what} at w = {w}, i = {i}"));
        }
    };
    for w in 1..=n {
        let h = Rational::from(&one - &pw[w]);
        let exw = Rational::from(e * &pw[w]);
        let t_inf = &exw / Rational::from(&h + &exw);
        // E x^w − T^∞ = E x^w (E − 1) x^w / (h + E x^w)
        let gap = Rational::from(&exw * &em1) * &pw[w] / Rational::from(&h + &exw);
        let ok = Rational::from(&exw - &t_inf) == gap && t_inf <= Rational::from(s * &exw);
        if !ok {
            fail(&mut res, 3, "T^∞ ≤ s·E x^w", w, w);
        }
        let mut prev: Option<Rational> = None;
        for i in w..=n {
            res.pairs += 1;
            let eg = e * geo(w, i);
            let t_max = &eg / (geo(0, w - 1) + &eg);
            let tail_sum = e * Rational::from(&sx[i + 1] - &sx[w]);
            let t_sum = &tail_sum / Rational::from(&sx[w] + &tail_sum);
            if t_sum != t_max {
                fail(&mut res, 0, "summed extremal tail ≠ closed form", w, i);
            }
            let t_w = Rational::from(&cx[i + 1] - &cx[w]) / &cx[i + 1];
            if t_w > t_max {
                fail(&mut res, 1, "T_w > T^max(i)", w, i);
            }
            let g = Rational::from(&pw[w] - &pw[i + 1]);
            let hg = &h + Rational::from(e * &g);
            let d = Rational::from(e * &h) * &pw[i + 1] / (Rational::from(&h + &exw) * hg);
            let ok = Rational::from(&t_inf - &t_max) == d
                && d > 0
                && t_max <= Rational::from(s * &t_inf);
            if !ok {
                fail(&mut res, 2, "T^max(i) ≤ s·T^∞ (or its identity)", w, i);
            }
            if let Some(pv) = &prev {
                if *pv >= t_max {
                    fail(&mut res, 4, "T^max not increasing", w, i);
                }
            }
            prev = Some(t_max);
        }
    }
    res
}

/// Rounds a positive enclosure's midpoint to a dyadic with `bits` fractional bits.
fn dyadic(x: &Interval, bits: u32) -> Rational {
    let scaled = x.mid() << bits as i32;
    let n = scaled.to_integer().unwrap_or_default();
    Rational::from((n, Integer::from(1) << bits))
}

/// `2^−q` for display, parenthesised when q is not an integer.
pub fn fmt_slope(q: &Rational) -> String {
    if q.denom() == &1 {
        format!("2^−{q}")
    } else {
        format!("2^(−{q})")
    }
}

/// The chain's obligations for one instance (margins ≥ 0, step > 0).
fn obligations(inst: &Instance, s: &Rational) -> [Formula; 3] {
    let m = slope_expr(&inst.q);
    let xk = |k: u64| exp(neg(mul([m.clone(), k.into()])));
    let e = || exp(q(&inst.delta));
    let xw = || xk(inst.w);
    let xi1 = || xk(inst.i + 1);
    let h = || sub(int(1), xw());
    let g = || mul([xw(), sub(int(1), xk(inst.i + 1 - inst.w))]);
    let exw = || mul([e(), xw()]);
    let eg = || mul([e(), g()]);
    let t_inf = div(exw(), add([h(), exw()]));
    let d = div(
        mul([e(), h(), xi1()]),
        mul([add([h(), exw()]), add([h(), eg()])]),
    );
    let sm1 = || q(&Rational::from(s - 1u32));
    let dg = || mul([xi1(), sub(int(1), xk(1))]);
    // each margin equals the link's difference by an algebraic identity in x, E and s
    // (module docs; verified in ℚ by the exact part): T^∞ − T^max(i) = E h x^(i+1)/((h + E x^w)(h + E g)),
    // E x^w − T^∞ = E(E − 1)x^(2w)/(h + E x^w), T^max(i + 1) − T^max(i) = E h x^(i+1)(1 − x)/((h + E g)(h + E g'))
    [
        ge(add([mul([sm1(), t_inf]), d]), int(0)),
        ge(
            mul([
                exw(),
                add([sm1(), div(mul([sub(e(), int(1)), xw()]), add([h(), exw()]))]),
            ]),
            int(0),
        ),
        gt(
            div(
                mul([e(), h(), dg()]),
                mul([add([h(), eg()]), add([h(), mul([e(), add([g(), dg()])])])]),
            ),
            int(0),
        ),
    ]
}

/// What the run computed: the interval instances and their enclosures, and the
/// exact-rational instances.
pub struct Found {
    /// The interval instances.
    pub insts: Vec<Instance>,
    /// Their results, in order.
    pub results: Vec<RealResult>,
    /// The exact-rational instances' results.
    pub exact: Vec<ExactResult>,
}

/// The aggregate of an interval check over the instances, and the first five
/// instances where it is not `True`.
fn aggregate(
    insts: &[Instance],
    results: &[RealResult],
    f: &dyn Fn(&RealResult) -> Certainty,
) -> (Certainty, Vec<String>) {
    let c = Certainty::all(results.iter().map(f));
    let bad: Vec<String> = results
        .iter()
        .enumerate()
        .filter(|(_, r)| f(r) != Certainty::True)
        .map(|(k, r)| format!("{}: {:?}", fmt_inst(insts, k), f(r)))
        .take(5)
        .collect();
    (c, bad)
}

/// One interval instance, as the checks' details name it.
fn fmt_inst(insts: &[Instance], k: usize) -> String {
    let i = &insts[k];
    format!(
        "#{} (H = {} {}, m = {}, i = {}, w = {}, Δ = {})",
        k + 1,
        i.heads,
        i.rule.as_str(),
        fmt_slope(&i.q),
        i.i,
        i.w,
        i.delta
    )
}

/// The largest T_w/T^max(i) over the random-content instances.
fn worst_ratio(results: &[RealResult]) -> f64 {
    results
        .iter()
        .map(|r| (&r.t_w / &r.closed.t_max).hi_f64())
        .fold(0f64, f64::max)
}

/// T^max(i) against i for the flattest paper slope at a few (w, Δ), with T^∞.
fn plot_t_max(prec: u32) -> Plot {
    let q = Rational::from(8);
    let m = slope_interval(&q, prec);
    let one = Rational::from(1);
    let mut series = Vec::new();
    for (w, d) in [(256u64, 0i64), (256, 4), (1179, 0)] {
        let e = Interval::from_i64(prec, d).exp();
        let mut pts = Vec::new();
        let mut i = w;
        while i <= 100_000 {
            pts.push((i as f64, closed_forms(&m, w, i, &e, &one).t_max.mid_f64()));
            i = (i + 1).max((i as f64 * 1.12) as u64);
        }
        let inf = alibi_tail_inf(&m, w, &e).mid_f64();
        series.push(Series {
            name: format!("T^max(i), w = {w}, Δ = {d}"),
            style: Style::Line,
            points: pts,
        });
        series.push(Series {
            name: format!("T^∞, w = {w}, Δ = {d}"),
            style: Style::Dashed,
            points: vec![(w as f64, inf), (100_000.0, inf)],
        });
    }
    Plot {
        slug: "t-max-vs-i".into(),
        title: "T^max(i) increases to T^∞ (m = 2^−8)".into(),
        x_label: "query position i".into(),
        y_label: "tail mass beyond w".into(),
        x_log: true,
        y_log: false,
        series,
        heatmap: None,
        paths: false,
    }
}
