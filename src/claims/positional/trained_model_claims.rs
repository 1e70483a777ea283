//! positional/trained-model-claims: the paper's four findings about trained language
//! models, reproduced at small scale with the candle models of `crates/attncheck-lm`.
//!
//! Each (training length, scheme, seed) is one job, run by the model crate
//! (`attncheck_lm::job`): train on the byte-level corpus, then measure (i) sliding-window
//! perplexity at L_ex = k·L_tr, (ii) the cumulative normalised gradient receptive field at
//! each L_ex with a bootstrap over sequences, (iii) perplexity with attention truncated to
//! the last W tokens. The ALiBi and Sandwich biases and the sinusoidal frequencies come
//! from `common.rs` ([`bias_fn`]), the formulas the other positional claims certify. One
//! part per finding, each judged by the criterion written in the spec before the runs; a
//! part that does not reproduce is `inconclusive` with its data.
//!
//! This file holds the parameters, the jobs and the claim's parts; `exec.rs` is the
//! witness (training and evaluation by the model crate, and the scan's window search);
//! one presentation serves a scan of any size (the quick profile is one length, one seed,
//! no checkpoints; the full profile the L_tr scan): `view.rs` is what it reads,
//! `observe.rs` and `parts.rs` the checks, `report.rs` the presentation with its sections
//! (`tables.rs`, `theory.rs`, `certified.rs`, `plots.rs`); `window.rs` states the certified
//! implicit windows.

use super::common::{
    alibi_bias, alibi_bias_f64, compression_ratio, sandwich_bias, sandwich_bias_f64,
    sandwich_freqs, sandwich_freqs_f64, slope_exponents, slopes_f64, IndexFrom, SlopeRule,
};
use crate::claims::shape::Ctx;
use crate::kernel::{Checked, Interval};
use crate::outcome::{Observations, Presentation};
use crate::spec::{check_each, ensure, FieldError};
#[cfg(feature = "lm")]
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// A published number quoted for the record.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    /// Where it comes from.
    pub source: String,
    /// Model / positional scheme.
    pub model: String,
    /// Evaluation length.
    pub length: u32,
    /// Reported perplexity.
    pub perplexity: f64,
}

/// The longest input a `scan.probes` entry may hold, in bytes.
pub const MAX_PROBE: usize = 4096;

/// One crate of the corpus, exactly as `Cargo.lock` pins it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CorpusPackage {
    /// Crate name.
    pub name: String,
    /// Exact version.
    pub version: String,
}

/// The decision rules, fixed in the spec before any run (see its comments for why).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Criteria {
    /// "Extrapolates": ppl(k·L_tr) ≤ ratio · ppl(L_tr) at this k.
    pub extrapolation_multiple: usize,
    /// … and this ratio.
    pub extrapolation_ratio: f64,
    /// Sinusoidal control: ppl(k·L_tr) ≥ ratio · ppl(L_tr) at this k.
    pub sinusoidal_multiple: usize,
    /// … and this ratio.
    pub sinusoidal_ratio: f64,
    /// A bootstrap statement holds when it holds in at least this share of the resamples.
    pub bootstrap_share: f64,
    /// Sandwich's RF99 must exceed L_tr at every L_ex ≥ this multiple of L_tr.
    pub sandwich_rf_from: usize,
    /// The truncation test runs at L_ex = this multiple of L_tr.
    pub truncation_length: usize,
    /// ALiBi truncated to W = this multiple of L_tr …
    pub alibi_window: usize,
    /// Sandwich truncated to W = this multiple of L_tr …
    pub sandwich_window: usize,
    /// … changes perplexity by less than this relative amount.
    pub truncation_tolerance: f64,
    /// The trained biases must lie within this absolute distance of the kernel's enclosure.
    pub bias_tolerance: f64,
}

/// One training length of the scan (`[[profiles.full.scan.lengths]]`): everything that
/// depends on L_tr.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanLength {
    /// Training length L_tr.
    pub train_length: usize,
    /// Windows w (convention W1) of the windowed-attention grid at this L_tr.
    pub windows: Vec<usize>,
    /// Optimiser steps.
    pub steps: usize,
    /// Sequences per batch.
    pub batch: usize,
    /// Warm-up steps.
    pub warmup: usize,
    /// Evaluation lengths as multiples of L_tr (default: the top-level `eval_multiples`).
    #[serde(default)]
    pub eval_multiples: Option<Vec<usize>>,
    /// Sliding-evaluation stride.
    pub eval_stride: usize,
    /// Scored validation bytes per evaluation.
    pub eval_targets: usize,
    /// Bytes per forward batch in evaluation.
    pub eval_batch_tokens: usize,
}

/// The scan's own decision rules, besides the [`Criteria`] it shares with the quick
/// profile (fixed in the spec before any scan run; see its comments for why).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanCriteria {
    /// The checkpoints, in percent of the steps (increasing, below 100): every measurement
    /// is taken there too, and the conclusion must be the same there as at the end.
    pub checkpoints: Vec<usize>,
    /// "ALiBi uses no tokens beyond L_tr": RF99 < L_tr at every L_ex ≥ this multiple of L_tr.
    pub alibi_rf_from: usize,
    /// The paper's explanation, trend: the gradient mass beyond L_tr is compared across L_tr
    /// at L_ex = this multiple of L_tr.
    pub trend_multiple: usize,
    /// The ε of the bias-alone windows w_h(ε) (Δ = 0) that the report certifies as predictions.
    pub prediction_epsilon: String,
}

/// The L_tr scan (issue 25): several training lengths, each with its own sizes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scan {
    /// The training lengths, in increasing order.
    pub lengths: Vec<ScanLength>,
    /// Validation-loss evaluations during training.
    pub validation_points: usize,
    /// Validation bytes scored per evaluation: validation_bytes/L_tr windows of L_tr + 1
    /// bytes (the same number of bytes at every L_tr).
    pub validation_bytes: usize,
    /// The former convergence reading, reported as a figure (no criterion): the fall of the
    /// validation loss over this last share of the steps, relative to its final value.
    pub loss_fall_tail: f64,
    /// The SHA-256 of every certified model's weights (the `attn-weights` datum's hash), by
    /// the datum's name (`W_L128_alibi-paper-s1`): written once the scan's weights exist,
    /// so that a certificate is bound to these weights and no others. A `pins` table is no
    /// part of a shard's identity (it checks what the shards produced).
    #[serde(default)]
    pub pins: std::collections::BTreeMap<String, String>,
    /// Inputs found by an untrusted search (`attncheck_lm::probe`,
    /// bench/sweeps/trained-scan/logit-search/) that make a head's content-logit range large,
    /// by the datum's name: per head of every layer ≥ 1 (layer-major), the bytes in lower-case
    /// hex. The report re-evaluates each with the model's forward pass in f64 and prints its
    /// range beside the certified Δ̄_ℓh (a lower bound on the worst case that Δ̄_ℓh bounds
    /// from above). No part of a shard's identity (they read what the shards produced).
    #[serde(default)]
    pub probes: std::collections::BTreeMap<String, Vec<String>>,
    /// The scan's decision rules.
    pub criteria: ScanCriteria,
    /// Further sweeps, added after the scan ran (each sharded and merged on its own:
    /// `run --shard i/N --sweep NAME`).
    #[serde(default)]
    pub sweeps: ScanSweeps,
}

/// The scan's further sweeps (`[profiles.full.scan.sweeps]`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanSweeps {
    /// The arms whose conclusion moved between the checkpoints, trained longer
    /// (`sweeps.longer`; issue #40's remedy, fixed before any of its runs).
    #[serde(default)]
    pub longer: Option<Longer>,
}

/// The arms trained longer: each (L_tr, scheme) with every seed, for more steps than the
/// scan's budget at that L_tr, measured at the same percentages of its steps.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Longer {
    /// The arms.
    pub arms: Vec<LongerArm>,
}

/// One arm trained longer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LongerArm {
    /// Its training length (one of the scan's).
    pub train_length: usize,
    /// Its scheme's label at that length (`sandwich`, `window-384`, `alibi-paper`, …).
    pub scheme: String,
    /// Its steps (more than the scan's at that length).
    pub steps: usize,
}

/// The reproduction's configuration. The quick profile sets one training length at the
/// top level (`train_length`, `windows`, `steps`, …); the scan (`scan`) sets them per
/// training length instead.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Crates whose `.rs` files form the corpus, in order.
    pub corpus: Vec<CorpusPackage>,
    /// File k goes to validation when k mod val_every = val_every − 1.
    pub val_every: usize,
    /// Expected FNV-1a 64 content hash of the corpus (16 hex digits).
    pub corpus_hash: String,
    /// Training length L_tr (one-length profiles).
    #[serde(default)]
    pub train_length: Option<usize>,
    /// Layers.
    pub layers: usize,
    /// Hidden size.
    pub hidden: usize,
    /// Heads (a power of two keeps the ALiBi slope rules equal).
    pub heads: usize,
    /// Sandwich d̄.
    pub dbar: u32,
    /// Sandwich index set.
    pub from: IndexFrom,
    /// Windows w (convention W1: 0 ≤ r ≤ w − 1) of the windowed-attention grid.
    #[serde(default)]
    pub windows: Option<Vec<usize>>,
    /// RoPE base.
    pub rope_base: f64,
    /// Seeds; every scheme is trained once per seed (and training length).
    pub seeds: Vec<u64>,
    /// Optimiser steps.
    #[serde(default)]
    pub steps: Option<usize>,
    /// Sequences per batch.
    #[serde(default)]
    pub batch: Option<usize>,
    /// Peak learning rate.
    pub lr: f64,
    /// Warm-up steps.
    #[serde(default)]
    pub warmup: Option<usize>,
    /// Gradient-norm clip.
    pub clip: f64,
    /// Evaluation lengths as multiples of L_tr.
    pub eval_multiples: Vec<usize>,
    /// Sliding-evaluation stride (bytes scored per window).
    #[serde(default)]
    pub eval_stride: Option<usize>,
    /// Scored validation bytes per evaluation (a multiple of the stride).
    #[serde(default)]
    pub eval_targets: Option<usize>,
    /// Truncation windows W as multiples of L_tr.
    pub truncation_multiples: Vec<usize>,
    /// RF threshold of the cumulative normalised gradient.
    pub rf_threshold: f64,
    /// Validation sequences per receptive-field measurement.
    pub rf_sequences: usize,
    /// Bootstrap resamples.
    pub bootstrap: usize,
    /// Bytes per forward batch in evaluation (memory bound).
    #[serde(default)]
    pub eval_batch_tokens: Option<usize>,
    /// The decision rules.
    pub criteria: Criteria,
    /// The L_tr scan, instead of the one-length fields.
    #[serde(default)]
    pub scan: Option<Scan>,
    /// Published numbers, reported only.
    #[serde(default)]
    pub fixture: Vec<Fixture>,
}

/// Everything that depends on the training length, resolved from the one-length fields
/// or from one entry of the scan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Training length L_tr.
    pub train_length: usize,
    /// Windows w of the windowed-attention grid.
    pub windows: Vec<usize>,
    /// Optimiser steps.
    pub steps: usize,
    /// Sequences per batch.
    pub batch: usize,
    /// Warm-up steps.
    pub warmup: usize,
    /// Evaluation lengths as multiples of L_tr.
    pub eval_multiples: Vec<usize>,
    /// Sliding-evaluation stride.
    pub eval_stride: usize,
    /// Scored validation bytes per evaluation.
    pub eval_targets: usize,
    /// Bytes per forward batch in evaluation.
    pub eval_batch_tokens: usize,
}

impl Params {
    /// The training lengths' plans: the one-length fields, or one per scan entry
    /// (validated: every field present where it is needed).
    pub fn plans(&self) -> Vec<Plan> {
        match &self.scan {
            Some(s) => s
                .lengths
                .iter()
                .map(|x| Plan {
                    train_length: x.train_length,
                    windows: x.windows.clone(),
                    steps: x.steps,
                    batch: x.batch,
                    warmup: x.warmup,
                    eval_multiples: x
                        .eval_multiples
                        .clone()
                        .unwrap_or_else(|| self.eval_multiples.clone()),
                    eval_stride: x.eval_stride,
                    eval_targets: x.eval_targets,
                    eval_batch_tokens: x.eval_batch_tokens,
                })
                .collect(),
            None => vec![Plan {
                train_length: self.train_length.unwrap_or(0),
                windows: self.windows.clone().unwrap_or_default(),
                steps: self.steps.unwrap_or(0),
                batch: self.batch.unwrap_or(0),
                warmup: self.warmup.unwrap_or(0),
                eval_multiples: self.eval_multiples.clone(),
                eval_stride: self.eval_stride.unwrap_or(0),
                eval_targets: self.eval_targets.unwrap_or(0),
                eval_batch_tokens: self.eval_batch_tokens.unwrap_or(0),
            }],
        }
    }

    /// The one-length fields, by name, and whether each is set.
    fn one_length_fields(&self) -> [(&'static str, bool); 8] {
        [
            ("train_length", self.train_length.is_some()),
            ("windows", self.windows.is_some()),
            ("steps", self.steps.is_some()),
            ("batch", self.batch.is_some()),
            ("warmup", self.warmup.is_some()),
            ("eval_stride", self.eval_stride.is_some()),
            ("eval_targets", self.eval_targets.is_some()),
            ("eval_batch_tokens", self.eval_batch_tokens.is_some()),
        ]
    }
}

fn positive(field: &str, v: usize) -> Result<(), FieldError> {
    ensure(v >= 1, field, "must be ≥ 1")
}

/// The checks of one plan; `at` prefixes its fields' names (`""` for the one-length
/// fields, `scan.lengths[i].` for a scan entry).
fn validate_plan(p: &Params, plan: &Plan, at: &str) -> Result<(), FieldError> {
    let f = |name: &str| format!("{at}{name}");
    ensure(
        (2..=4096).contains(&plan.train_length),
        f("train_length"),
        "use 2 to 4096",
    )?;
    check_each(&plan.windows, &f("windows"), |f, &w| {
        ensure(w >= 1, f, "must be ≥ 1")
    })?;
    positive(&f("steps"), plan.steps)?;
    positive(&f("batch"), plan.batch)?;
    ensure(plan.warmup < plan.steps, f("warmup"), "must be < steps")?;
    let em = if at.is_empty() || p.scan.as_ref().is_none() {
        "eval_multiples".to_string()
    } else {
        f("eval_multiples")
    };
    check_each(&plan.eval_multiples, &em, |f, &m| {
        ensure(m >= 1, f, "must be ≥ 1")
    })?;
    ensure(
        plan.eval_multiples.windows(2).all(|w| w[0] < w[1]) && plan.eval_multiples[0] == 1,
        em.as_str(),
        "must start at 1 and increase",
    )?;
    ensure(
        plan.eval_stride >= 1 && plan.eval_stride <= plan.train_length,
        f("eval_stride"),
        "must lie in 1..=train_length",
    )?;
    ensure(
        plan.eval_targets >= plan.eval_stride && plan.eval_targets.is_multiple_of(plan.eval_stride),
        f("eval_targets"),
        "must be a positive multiple of eval_stride",
    )?;
    ensure(
        plan.eval_batch_tokens >= plan.train_length,
        f("eval_batch_tokens"),
        "must be ≥ train_length",
    )?;
    let c = &p.criteria;
    let of = if at.is_empty() {
        "must be one of eval_multiples".to_string()
    } else {
        format!("must be one of {em}")
    };
    let has = |m: usize| plan.eval_multiples.contains(&m);
    ensure(
        has(c.extrapolation_multiple),
        "criteria.extrapolation_multiple",
        of.as_str(),
    )?;
    ensure(
        has(c.sinusoidal_multiple),
        "criteria.sinusoidal_multiple",
        of.as_str(),
    )?;
    ensure(
        has(c.truncation_length),
        "criteria.truncation_length",
        of.as_str(),
    )?;
    ensure(
        c.sandwich_rf_from <= *plan.eval_multiples.last().unwrap_or(&0) && c.sandwich_rf_from >= 1,
        "criteria.sandwich_rf_from",
        "must lie within eval_multiples",
    )?;
    if let Some(s) = &p.scan {
        ensure(
            has(s.criteria.trend_multiple),
            "scan.criteria.trend_multiple",
            of.as_str(),
        )?;
        ensure(
            s.criteria.alibi_rf_from >= 1
                && s.criteria.alibi_rf_from <= *plan.eval_multiples.last().unwrap_or(&0),
            "scan.criteria.alibi_rf_from",
            "must lie within eval_multiples",
        )?;
    }
    Ok(())
}

/// Parameters of positional/trained-model-claims, resolved: the configuration and
/// the scan's prediction ε, exact.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The configuration (checked).
    pub params: Params,
    /// The scan's prediction ε, when there is a scan.
    pub scan_epsilon: Option<rug::Rational>,
}

impl Resolved {
    /// The scan and its prediction ε, when there is a scan.
    pub fn scan(&self) -> Option<(&Scan, &rug::Rational)> {
        self.params.scan.as_ref().zip(self.scan_epsilon.as_ref())
    }
}

/// What the witness found: every job's result (and, for the scan, the windows'
/// search), or why there is none (`observe` declares the run inconclusive with it).
pub type Found = Result<Trained, String>;

pub use exec::Trained;
#[cfg(feature = "lm")]
pub use exec::Windows;

/// positional/trained-model-claims.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Params;
    type Params = Resolved;
    type Witness = Found;
    fn resolve(raw: Params, _at: crate::claims::shape::Resolving) -> Result<Resolved, FieldError> {
        let scan_epsilon = raw.check()?;
        Ok(Resolved {
            params: raw,
            scan_epsilon,
        })
    }
    fn witness(p: &Resolved, ctx: &Ctx) -> Found {
        exec::witness(p, ctx)
    }
    fn hints(_: &Resolved, w: &Found) -> crate::certificate::Hints {
        exec::hints(w)
    }
    fn carried(_: &Resolved, w: &Found) -> crate::kernel::expr::Data {
        exec::carried(w)
    }
    fn observe(p: &Resolved, w: &Found, _: Option<&Checked>, ctx: &Ctx, obs: &mut Observations) {
        match w {
            Ok(t) => exec::observe(p, t, ctx, obs),
            Err(why) => obs.declare_inconclusive(why.clone()),
        }
    }
    fn present(p: &Resolved, w: &Found, _: Option<&Checked>, ctx: &Ctx, pr: &mut Presentation) {
        if let Ok(t) = w {
            exec::present(p, t, ctx, pr);
        }
    }
    fn statement_carrying(
        p: &Resolved,
        claim: &str,
        hints: &crate::certificate::Hints,
        carried: &crate::kernel::expr::Data,
    ) -> Option<Result<crate::kernel::Statement, crate::claims::shape::StatementError>> {
        window::statement(p, claim, hints, carried)
    }
}

impl Params {
    /// Range and consistency checks; the scan's prediction ε, exact.
    fn check(&self) -> Result<Option<rug::Rational>, FieldError> {
        let mut scan_epsilon = None;
        check_each(&self.corpus, "corpus", |f, c| {
            ensure(
                !(c.name.is_empty()
                    || c.version.is_empty()
                    || c.name.contains('/')
                    || c.version.contains('/')),
                f,
                "name and version must be non-empty, without '/'",
            )
        })?;
        ensure(self.val_every >= 2, "val_every", "must be ≥ 2")?;
        ensure(
            self.corpus_hash.len() == 16 && self.corpus_hash.chars().all(|c| c.is_ascii_hexdigit()),
            "corpus_hash",
            "must be 16 hex digits",
        )?;
        match &self.scan {
            None => {
                for (name, set) in self.one_length_fields() {
                    ensure(
                        set,
                        name,
                        "missing (or give the training lengths in `scan`)",
                    )?;
                }
            }
            Some(s) => {
                for (name, set) in self.one_length_fields() {
                    ensure(
                        !set,
                        name,
                        "set per training length in `scan.lengths`, not here",
                    )?;
                }
                check_each(&s.lengths, "scan.lengths", |_, _| Ok(()))?;
                ensure(
                    s.lengths
                        .windows(2)
                        .all(|w| w[0].train_length < w[1].train_length),
                    "scan.lengths",
                    "training lengths must increase",
                )?;
                positive("scan.validation_points", s.validation_points)?;
                ensure(
                    s.validation_points <= s.lengths.iter().map(|x| x.steps).min().unwrap_or(0),
                    "scan.validation_points",
                    "must be ≤ every length's steps",
                )?;
                ensure(
                    s.lengths
                        .iter()
                        .all(|x| s.validation_bytes >= x.train_length && s.validation_bytes % x.train_length == 0),
                    "scan.validation_bytes",
                    "must be a positive multiple of every training length (the report states the scored bytes)",
                )?;
                let c = &s.criteria;
                ensure(
                    s.loss_fall_tail > 0.0 && s.loss_fall_tail < 1.0,
                    "scan.loss_fall_tail",
                    "must lie in (0, 1)",
                )?;
                ensure(
                    !c.checkpoints.is_empty()
                        && c.checkpoints.windows(2).all(|w| w[0] < w[1])
                        && c.checkpoints.iter().all(|&x| (1..100).contains(&x)),
                    "scan.criteria.checkpoints",
                    "must list increasing percentages in 1..=99",
                )?;
                ensure(
                    s.lengths
                        .iter()
                        .all(|x| c.checkpoints.iter().all(|&k| (x.steps * k).is_multiple_of(100))),
                    "scan.criteria.checkpoints",
                    "every checkpoint must fall on a whole step of every length (steps·percent a multiple of 100)",
                )?;
                let names: Vec<String> = window::window_jobs(self)
                    .iter()
                    .map(window::datum_name)
                    .collect();
                for (k, v) in &s.pins {
                    let f = format!("scan.pins.{k}");
                    ensure(
                        names.contains(k),
                        f.as_str(),
                        "names no certified model of the scan (W_L<L_tr>_alibi-paper-s<seed>)",
                    )?;
                    ensure(
                        v.len() == 64
                            && v.bytes()
                                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
                        f.as_str(),
                        "must be 64 lower-case hex digits (a SHA-256)",
                    )?;
                }
                for (k, v) in &s.probes {
                    let f = format!("scan.probes.{k}");
                    ensure(
                        names.contains(k),
                        f.as_str(),
                        "names no certified model of the scan (W_L<L_tr>_alibi-paper-s<seed>)",
                    )?;
                    ensure(
                        v.len() == self.layers.saturating_sub(1) * self.heads,
                        f.as_str(),
                        "must list one input per head of every layer ≥ 1 ((layers − 1)·heads)",
                    )?;
                    ensure(
                        v.iter().all(|x| {
                            !x.is_empty()
                                && x.len() <= 2 * MAX_PROBE
                                && x.len().is_multiple_of(2)
                                && x.bytes()
                                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
                        }),
                        f.as_str(),
                        "every input must be 1 to 4096 bytes in lower-case hex",
                    )?;
                }
                if let Some(lg) = &s.sweeps.longer {
                    let plans = self.plans();
                    ensure(
                        !lg.arms.is_empty(),
                        "scan.sweeps.longer.arms",
                        "must list at least one arm",
                    )?;
                    for (i, a) in lg.arms.iter().enumerate() {
                        let at = |f: &str| format!("scan.sweeps.longer.arms[{i}].{f}");
                        let plan = plans.iter().find(|x| x.train_length == a.train_length);
                        ensure(
                            plan.is_some(),
                            at("train_length").as_str(),
                            "must be one of the scan's training lengths",
                        )?;
                        let plan = plan.expect("checked");
                        let labels: Vec<String> =
                            schemes(self, plan).iter().map(|x| x.label()).collect();
                        ensure(
                            labels.contains(&a.scheme),
                            at("scheme").as_str(),
                            format!(
                                "must be one of this length's schemes: {}",
                                labels.join(", ")
                            ),
                        )?;
                        ensure(
                            a.steps > plan.steps
                                && c.checkpoints.iter().all(|&k| (a.steps * k).is_multiple_of(100)),
                            at("steps").as_str(),
                            format!(
                                "must exceed the scan's {} steps at this length, and every checkpoint must fall on a whole step",
                                plan.steps
                            ),
                        )?;
                        ensure(
                            !lg.arms[..i]
                                .iter()
                                .any(|b| b.train_length == a.train_length && b.scheme == a.scheme),
                            at("scheme").as_str(),
                            "names an arm listed before",
                        )?;
                    }
                }
                let eps =
                    crate::spec::exact("scan.criteria.prediction_epsilon", &c.prediction_epsilon)?;
                ensure(
                    eps > 0 && eps < 1,
                    "scan.criteria.prediction_epsilon",
                    "must lie in (0, 1)",
                )?;
                scan_epsilon = Some(eps);
            }
        }
        for (i, plan) in self.plans().iter().enumerate() {
            let at = if self.scan.is_some() {
                format!("scan.lengths[{i}].")
            } else {
                String::new()
            };
            validate_plan(self, plan, &at)?;
        }
        ensure((1..=48).contains(&self.layers), "layers", "use 1 to 48")?;
        ensure(
            self.heads.is_power_of_two() && self.heads <= 64,
            "heads",
            "must be a power of two ≤ 64",
        )?;
        ensure(
            self.hidden >= self.heads && self.hidden.is_multiple_of(2 * self.heads),
            "hidden",
            "must be a multiple of 2·heads (even head dimension for RoPE)",
        )?;
        super::common::check_dbar("dbar", self.dbar)?;
        ensure(
            self.rope_base > 1.0 && self.rope_base.is_finite(),
            "rope_base",
            "must be > 1",
        )?;
        check_each(&self.seeds, "seeds", |_, _| Ok(()))?;
        ensure(self.lr > 0.0 && self.lr < 1.0, "lr", "must lie in (0, 1)")?;
        ensure(
            self.clip >= 0.0 && self.clip.is_finite(),
            "clip",
            "must be ≥ 0",
        )?;
        check_each(
            &self.truncation_multiples,
            "truncation_multiples",
            |f, &m| ensure(m >= 1, f, "must be ≥ 1"),
        )?;
        ensure(
            self.rf_threshold > 0.0 && self.rf_threshold < 1.0,
            "rf_threshold",
            "must lie in (0, 1)",
        )?;
        ensure(self.rf_sequences >= 2, "rf_sequences", "must be ≥ 2")?;
        positive("bootstrap", self.bootstrap)?;
        let c = &self.criteria;
        ensure(
            self.truncation_multiples.contains(&c.alibi_window),
            "criteria.alibi_window",
            "must be one of truncation_multiples",
        )?;
        ensure(
            self.truncation_multiples.contains(&c.sandwich_window),
            "criteria.sandwich_window",
            "must be one of truncation_multiples",
        )?;
        ensure(
            c.extrapolation_ratio > 1.0,
            "criteria.extrapolation_ratio",
            "must be > 1",
        )?;
        ensure(
            c.sinusoidal_ratio > 1.0,
            "criteria.sinusoidal_ratio",
            "must be > 1",
        )?;
        ensure(
            c.bootstrap_share > 0.5 && c.bootstrap_share <= 1.0,
            "criteria.bootstrap_share",
            "must lie in (0.5, 1]",
        )?;
        ensure(
            c.truncation_tolerance > 0.0 && c.truncation_tolerance < 1.0,
            "criteria.truncation_tolerance",
            "must lie in (0, 1)",
        )?;
        ensure(
            c.bias_tolerance > 0.0,
            "criteria.bias_tolerance",
            "must be > 0",
        )?;
        for (i, f) in self.fixture.iter().enumerate() {
            ensure(
                f.perplexity.is_finite() && f.perplexity > 0.0,
                format!("fixture[{i}].perplexity"),
                "must be > 0",
            )?;
        }
        self.check_work()?;
        Ok(scan_epsilon)
    }

    /// Every job, the arms trained longer included, within [`attncheck_lm::job::MAX_JOB_WORK`]
    /// ([`attncheck_lm::job::Job::work`]): sizes, steps and evaluation lengths that pass
    /// each field's own check could still ask for days, or for more memory than exists.
    /// The error names the steps of the largest job. (Without the `lm` feature nothing
    /// is trained.)
    #[cfg(feature = "lm")]
    fn check_work(&self) -> Result<(), FieldError> {
        let Some((work, job)) = largest_job(self) else {
            return Ok(());
        };
        if work <= attncheck_lm::job::MAX_JOB_WORK {
            return Ok(());
        }
        let field = match (job.steps, self.scan.as_ref()) {
            (Some(n), Some(s)) => {
                let arms = s.sweeps.longer.as_ref().map_or(&[][..], |lg| &lg.arms[..]);
                let i = arms
                    .iter()
                    .position(|a| a.train_length == job.train_length && a.steps == n)
                    .unwrap_or(0);
                format!("scan.sweeps.longer.arms[{i}].steps")
            }
            (None, Some(_)) => {
                let i = self
                    .plans()
                    .iter()
                    .position(|x| x.train_length == job.train_length)
                    .unwrap_or(0);
                format!("scan.lengths[{i}].steps")
            }
            _ => "steps".to_string(),
        };
        Err(FieldError::new(
            field,
            format!(
                "job {} would do about {work:.3e} multiply-adds (training, validation and \
                 every evaluation round), above the bound 2^45 ≈ 3.5e13 (about half an hour \
                 on one core): use fewer steps, a smaller batch, model, training length, \
                 evaluation or bootstrap",
                job.long_name()
            ),
        ))
    }

    #[cfg(not(feature = "lm"))]
    fn check_work(&self) -> Result<(), FieldError> {
        Ok(())
    }
}

/// The largest [`attncheck_lm::job::Job::work`] among `p`'s jobs and the arms trained
/// longer, with its job (the first of the largest); `None` without jobs.
#[cfg(feature = "lm")]
pub fn largest_job(p: &Params) -> Option<(u128, Job)> {
    let mut best: Option<(u128, Job)> = None;
    for job in jobs(p).into_iter().chain(longer_jobs(p)) {
        let w = exec::lm_job_work(&job, p);
        if best.as_ref().is_none_or(|(b, _)| w > *b) {
            best = Some((w, job));
        }
    }
    best
}

/// A position scheme of the reproduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Scheme {
    /// ALiBi with the given slope rule.
    Alibi(SlopeRule),
    /// Sandwich (d̄, c_h = 8h/H, centred form).
    Sandwich,
    /// Sinusoidal absolute embeddings.
    Sinusoidal,
    /// Rotary embeddings.
    Rope,
    /// A hard window w (W1), no other position information.
    Window(usize),
}

impl Scheme {
    /// The label in tables and file names.
    pub fn label(self) -> String {
        match self {
            Scheme::Alibi(r) => format!("alibi-{}", r.as_str()),
            Scheme::Sandwich => "sandwich".into(),
            Scheme::Sinusoidal => "sinusoidal".into(),
            Scheme::Rope => "rope".into(),
            Scheme::Window(w) => format!("window-{w}"),
        }
    }
}

/// One training-and-evaluation job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// The training length L_tr.
    pub train_length: usize,
    /// The scheme.
    pub scheme: Scheme,
    /// The seed (weights and batches).
    pub seed: u64,
    /// Its steps when other than its training length's (an arm trained longer,
    /// [`longer_jobs`]); `None` for the scan's budget.
    pub steps: Option<usize>,
}

impl Job {
    /// `scheme-sSEED`.
    pub fn name(&self) -> String {
        format!("{}-s{}", self.scheme.label(), self.seed)
    }

    /// `L<L_tr> scheme-sSEED`, and ` (S steps)` for an arm trained longer.
    pub fn long_name(&self) -> String {
        match self.steps {
            None => format!("L{} {}", self.train_length, self.name()),
            Some(n) => format!("L{} {} ({n} steps)", self.train_length, self.name()),
        }
    }
}

/// The name of the sweep of the arms trained longer (`run --shard i/N --sweep longer`).
pub const LONGER: &str = "longer";

/// The jobs of the arms trained longer ([`Longer`]): per arm, every seed; none without
/// the sweep.
pub fn longer_jobs(p: &Params) -> Vec<Job> {
    let Some(lg) = p.scan.as_ref().and_then(|s| s.sweeps.longer.as_ref()) else {
        return Vec::new();
    };
    let plans = p.plans();
    let mut out = Vec::new();
    for a in &lg.arms {
        let Some(plan) = plans.iter().find(|x| x.train_length == a.train_length) else {
            continue;
        };
        let Some(scheme) = schemes(p, plan).into_iter().find(|x| x.label() == a.scheme) else {
            continue;
        };
        for &seed in &p.seeds {
            out.push(Job {
                train_length: a.train_length,
                scheme,
                seed,
                steps: Some(a.steps),
            });
        }
    }
    out
}

/// The unit keys of the arms trained longer, as [`unit_keys`] makes the scan's: job k's
/// key falls to shard k of the sweep's jobs.len() (`--shard k+1/N --sweep longer`).
pub fn longer_keys(jobs: &[Job], prec: u32) -> Vec<String> {
    let n = jobs.len() as u64;
    jobs.iter()
        .enumerate()
        .map(|(k, j)| {
            (0u64..)
                .map(|s| format!("{} #{s}", j.long_name()))
                .find(|key| {
                    crate::claims::shape::shard_of(
                        &crate::claims::unit_key(Some(LONGER), key, prec),
                        n,
                    ) == k as u64
                })
                .expect("some suffix hashes to every shard")
        })
        .collect()
}

/// The schemes of `p` at `plan`: ALiBi once when the two slope rules give the same slopes
/// (H a power of two), else once per rule; Sandwich; sinusoidal; RoPE; every window.
pub fn schemes(p: &Params, plan: &Plan) -> Vec<Scheme> {
    let mut s = vec![Scheme::Alibi(SlopeRule::Paper)];
    if slope_exponents(p.heads, SlopeRule::Paper) != slope_exponents(p.heads, SlopeRule::Code) {
        s.push(Scheme::Alibi(SlopeRule::Code));
    }
    s.extend([Scheme::Sandwich, Scheme::Sinusoidal, Scheme::Rope]);
    s.extend(plan.windows.iter().map(|&w| Scheme::Window(w)));
    s
}

/// Every job of `p`: by training length, then (one-length profiles) scheme-major, or
/// (the scan) seed-major, so that the scan's first shards give one seed of every scheme.
pub fn jobs(p: &Params) -> Vec<Job> {
    let mut out = Vec::new();
    for plan in p.plans() {
        let l = plan.train_length;
        let ss = schemes(p, &plan);
        if p.scan.is_some() {
            for &seed in &p.seeds {
                for &scheme in &ss {
                    out.push(Job {
                        train_length: l,
                        scheme,
                        seed,
                        steps: None,
                    });
                }
            }
        } else {
            for &scheme in &ss {
                for &seed in &p.seeds {
                    out.push(Job {
                        train_length: l,
                        scheme,
                        seed,
                        steps: None,
                    });
                }
            }
        }
    }
    out
}

/// The unit keys of `jobs` (see [`Ctx::unit`]). For the scan, job k's key carries the
/// smallest suffix ` #n` that makes it fall to shard k of jobs.len() ([`crate::claims::shape::shard_of`]
/// of the key as `Ctx::unit` completes it, with ` @precision`), so that
/// `run --shard k+1/N` with N the number of jobs runs exactly job k: one shard per
/// (scheme, L_tr, seed), as the sweep's resume script assumes. Elsewhere the key is the
/// job's long name.
pub fn unit_keys(p: &Params, jobs: &[Job], prec: u32) -> Vec<String> {
    let n = jobs.len() as u64;
    jobs.iter()
        .enumerate()
        .map(|(k, j)| {
            if p.scan.is_none() {
                return j.long_name();
            }
            (0u64..)
                .map(|s| format!("{} #{s}", j.long_name()))
                .find(|key| {
                    crate::claims::shape::shard_of(&format!("{key} @{prec}"), n) == k as u64
                })
                .expect("some suffix hashes to every shard")
        })
        .collect()
}

/// A per-head additive attention bias b(h, r) (h = 0..H − 1, distance r ≥ 0), as the
/// models compute it in f64: the formulas of `common.rs` whose properties the other
/// positional claims certify.
#[derive(Clone, Debug, PartialEq)]
pub enum Bias {
    /// ALiBi: b(h, r) = −m_h·r ([`alibi_bias_f64`], slopes [`slopes_f64`]).
    Alibi {
        /// m_h, one per head.
        slopes: Vec<f64>,
    },
    /// Sandwich: b(h, r) = B̃(r)/c_h ([`sandwich_bias_f64`]).
    Sandwich {
        /// The frequencies ω_i of B̃.
        freqs: Vec<f64>,
        /// c_h, one per head.
        ratios: Vec<f64>,
    },
}

impl Bias {
    /// b(h, r).
    pub fn at(&self, h: usize, r: usize) -> f64 {
        match self {
            Bias::Alibi { slopes } => alibi_bias_f64(slopes[h], r),
            Bias::Sandwich { freqs, ratios } => sandwich_bias_f64(r, freqs, ratios[h]),
        }
    }

    /// The model crate's bias function.
    #[cfg(feature = "lm")]
    pub fn to_fn(&self) -> attncheck_lm::model::BiasFn {
        let b = self.clone();
        std::sync::Arc::new(move |h, r| b.at(h, r))
    }
}

/// The model's bias for the bias schemes (ALiBi, Sandwich).
pub fn bias_fn(scheme: Scheme, p: &Params) -> Option<Bias> {
    match scheme {
        Scheme::Alibi(rule) => Some(Bias::Alibi {
            slopes: slopes_f64(p.heads, rule),
        }),
        Scheme::Sandwich => Some(Bias::Sandwich {
            freqs: sandwich_freqs_f64(p.dbar, p.from),
            ratios: (1..=p.heads)
                .map(|h| compression_ratio(h, p.heads).to_f64())
                .collect(),
        }),
        _ => None,
    }
}

/// The kernel's enclosure of the bias b(h, r) that [`bias_fn`] computes in f64
/// ([`alibi_bias`], [`sandwich_bias`] of `common.rs`).
pub fn bias_enclosure(scheme: Scheme, p: &Params, h: usize, r: i64, prec: u32) -> Option<Interval> {
    match scheme {
        Scheme::Alibi(rule) => Some(alibi_bias(&slope_exponents(p.heads, rule)[h], r, prec)),
        Scheme::Sandwich => Some(sandwich_bias(
            r,
            &sandwich_freqs(p.dbar, p.from, prec),
            &compression_ratio(h + 1, p.heads),
            prec,
        )),
        _ => None,
    }
}

/// `x` to 4 significant digits (reports: coarse enough to be machine-stable in print).
// used by the `lm` feature's presentation only (the Python wheel builds without it)
#[cfg_attr(not(feature = "lm"), allow(dead_code))]
fn sig(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let r = crate::outcome::round_sig(x, 4);
    if r == 0.0 {
        return "0".into();
    }
    if r.abs() >= 1e5 || (r != 0.0 && r.abs() < 1e-3) {
        format!("{r:.3e}")
    } else {
        let digits = (3 - r.abs().log10().floor() as i32).clamp(0, 6) as usize;
        format!("{r:.digits$}")
    }
}

#[cfg(feature = "lm")]
mod exec;

/// Without the `lm` feature nothing is trained: the witness is the reason, and the
/// claim is inconclusive with it.
#[cfg(not(feature = "lm"))]
mod exec {
    use super::{Ctx, Found, Observations, Presentation, Resolved};

    /// No trained model: there is none without the `lm` feature.
    pub enum Trained {}

    pub fn witness(_: &Resolved, _: &Ctx) -> Found {
        Err("attncheck was built without the `lm` feature (the candle models of crates/attncheck-lm)".into())
    }

    pub fn hints(_: &Found) -> crate::certificate::Hints {
        crate::certificate::Hints::new()
    }

    pub fn carried(_: &Found) -> crate::kernel::expr::Data {
        crate::kernel::expr::Data::new()
    }

    pub fn observe(_: &Resolved, t: &Trained, _: &Ctx, _: &mut Observations) {
        match *t {}
    }

    pub fn present(_: &Resolved, t: &Trained, _: &Ctx, _: &mut Presentation) {
        match *t {}
    }
}

#[cfg(feature = "lm")]
pub use exec::{corpus, lm_job, model_config, weights_datum};

#[cfg(feature = "lm")]
pub mod attained;
#[cfg(feature = "lm")]
mod certified;
#[cfg(feature = "lm")]
mod observe;
#[cfg(feature = "lm")]
mod parts;
#[cfg(feature = "lm")]
mod plots;
#[cfg(feature = "lm")]
mod report;
#[cfg(feature = "lm")]
mod tables;
#[cfg(feature = "lm")]
mod theory;
#[cfg(feature = "lm")]
mod view;
pub mod window;
