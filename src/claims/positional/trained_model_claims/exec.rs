//! The claim's adapter to the model crate (built with the `lm` feature): the models and
//! jobs of the resolved parameters, the corpus with its hash checked, one unit of work per
//! job (sharded by `Ctx::unit`), and the windows of the trained ALiBi models proven with
//! their weights as the certificate's data. Training and evaluation themselves are
//! `attncheck_lm::job::run`.

use super::*;
use attncheck_lm::job::{Evaluation, JobResult, Unit, Validation};
use attncheck_lm::model::{Config, Position};
use attncheck_lm::train::TrainConfig;

/// The model configuration of a scheme.
pub fn model_config(scheme: Scheme, p: &Params, dtype: attncheck_lm::DType) -> Config {
    let position = match scheme {
        Scheme::Alibi(_) | Scheme::Sandwich => {
            Position::Bias(bias_fn(scheme, p).expect("bias scheme").to_fn())
        }
        Scheme::Sinusoidal => {
            Position::Sinusoidal(sandwich_freqs_f64(p.hidden as u32, IndexFrom::Zero))
        }
        Scheme::Rope => Position::Rope(p.rope_base),
        Scheme::Window(w) => Position::Window(w - 1),
    };
    Config {
        hidden: p.hidden,
        layers: p.layers,
        heads: p.heads,
        position,
        dtype,
    }
}

/// Loads the corpus named by `p`, its hash checked against the spec's.
pub fn corpus(p: &Params) -> Result<attncheck_lm::corpus::Corpus, attncheck_lm::Error> {
    let pk: Vec<attncheck_lm::corpus::Package> = p
        .corpus
        .iter()
        .map(|c| attncheck_lm::corpus::Package {
            name: c.name.clone(),
            version: c.version.clone(),
        })
        .collect();
    attncheck_lm::corpus::load_pinned(
        &pk,
        p.val_every,
        &attncheck_lm::corpus::registry_dirs(),
        &p.corpus_hash,
    )
}

/// The plan of `job`'s training length.
pub fn plan_of(p: &Params, job: &Job) -> Plan {
    p.plans()
        .into_iter()
        .find(|x| x.train_length == job.train_length)
        .expect("a job of p")
}

/// The model crate's description of one job: its model, training and measurements.
pub fn lm_job(job: &Job, p: &Params) -> attncheck_lm::job::Job {
    let plan = plan_of(p, job);
    let l = plan.train_length;
    attncheck_lm::job::Job {
        name: job.name(),
        model: model_config(job.scheme, p, attncheck_lm::DType::F32),
        seed: job.seed,
        train: TrainConfig {
            steps: plan.steps,
            batch: plan.batch,
            length: l,
            lr: p.lr,
            warmup: plan.warmup,
            clip: p.clip,
            weight_decay: 0.0,
            seed: job.seed ^ 0x5EED_BA7C,
        },
        eval: Evaluation {
            multiples: plan.eval_multiples.clone(),
            stride: plan.eval_stride,
            targets: plan.eval_targets,
            batch_tokens: plan.eval_batch_tokens,
            truncations: if matches!(job.scheme, Scheme::Alibi(_) | Scheme::Sandwich) {
                p.truncation_multiples.clone()
            } else {
                Vec::new()
            },
            truncation_length: p.criteria.truncation_length,
            rf_threshold: p.rf_threshold,
            rf_sequences: p.rf_sequences,
            bootstrap: p.bootstrap,
            bootstrap_seed: 0xB007 + 1000 * job.seed,
        },
        validation: p.scan.as_ref().map(|s| Validation {
            points: s.validation_points,
            sequences: s.validation_bytes / l,
        }),
        keep_attention_weights: super::window::keeps_weights(p, job),
    }
}

/// Runs every job of `p` (each a unit of work, side by side on rayon's pool) and
/// presents the results.
pub fn run(r: &Resolved, ctx: &Ctx, o: &mut Outcome) {
    let p = &r.params;
    attncheck_lm::configure();
    let c = match corpus(p) {
        Ok(c) => c,
        Err(e) => {
            o.declare_inconclusive(format!("the corpus is not available: {e}"));
            return;
        }
    };
    let all = jobs(p);
    let keys = unit_keys(p, &all, ctx.prec());
    // One unit per job: `run --shard i/N` trains only its share and `merge` joins them.
    // Each job is single-threaded (mm.rs, attn.rs, CANDLE_NUM_THREADS=1), so jobs run
    // side by side on rayon's pool and give the same numbers in any order.
    let units: Vec<Unit> = all
        .par_iter()
        .zip(keys.par_iter())
        .map(|(job, key)| {
            let u = ctx.unit(key, || Unit::run(&lm_job(job, p), &c));
            if u != Unit::default() {
                ctx.progress.message(format!("{} done", job.long_name()));
            }
            u
        })
        .collect();
    let mut results = Vec::new();
    for (job, u) in all.iter().zip(units) {
        match (u.result, u.error) {
            (Some(r), None) => results.push((*job, r)),
            (_, Some(e)) => {
                o.declare_inconclusive(format!("a job failed: {e}"));
                return;
            }
            // a share computed by another shard (the outcome is discarded)
            (None, None) => {
                o.declare_inconclusive(format!("{}: computed by another shard", job.long_name()));
                return;
            }
        }
    }
    match r.scan() {
        None => super::present::present(p, &p.plans()[0], ctx, &c, &results, o),
        Some((s, eps)) => {
            let windows = prove_windows(p, eps, ctx, &results, o);
            super::scan::present(p, s, eps, ctx, &c, &results, &windows, o)
        }
    }
}

/// Why a job's stored weights are not a kernel datum.
#[derive(Debug, thiserror::Error)]
pub enum WeightsDatumError {
    /// They do not read as an `attn-weights` data entry.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// The kernel refuses the entry (the field and why).
    #[error("{0}: {1}")]
    Refused(String, String),
}

/// The kernel datum of a job's stored weights (read as a certificate reads it).
pub fn weights_datum(
    w: &attncheck_lm::job::AttentionWeights,
) -> Result<crate::kernel::expr::Datum, WeightsDatumError> {
    let mut v = serde_json::to_value(w)?;
    v["kind"] = "attn-weights".into();
    let e: crate::certificate::DataEntry = serde_json::from_value(v)?;
    e.to_datum()
        .map_err(|(f, r)| WeightsDatumError::Refused(f, r))
}

/// The windows of every ALiBi model, searched, then certified by the statement
/// ([`super::window`]) with the models' weights as the certificate's data; by model
/// long name. On a missing or malformed datum the outcome is inconclusive with the
/// reason and nothing is certified.
pub fn prove_windows(
    p: &Params,
    eps: &rug::Rational,
    ctx: &Ctx,
    results: &[(Job, JobResult)],
    o: &mut Outcome,
) -> Vec<(Job, Vec<super::window::HeadWindow>)> {
    let mut data = crate::kernel::expr::Data::new();
    let mut hints = crate::certificate::Hints::new();
    let mut out = Vec::new();
    for j in super::window::window_jobs(p) {
        let found = results
            .iter()
            .find(|(x, _)| *x == j)
            .and_then(|(_, r)| r.attention_weights.as_ref());
        let Some(w) = found else {
            o.declare_inconclusive(format!("{}: no stored attention weights", j.long_name()));
            return Vec::new();
        };
        let d = match weights_datum(w) {
            Ok(d) => d,
            Err(e) => {
                o.declare_inconclusive(format!("{}: stored weights: {e}", j.long_name()));
                return Vec::new();
            }
        };
        data.insert(super::window::datum_name(&j), d);
        match super::window::search(p, &j, eps, &data, ctx.prec()) {
            Ok(ws) => {
                hints.insert(super::window::hint_key(&j), super::window::hint_of(&ws));
                out.push((j, ws));
            }
            Err(e) => {
                o.declare_inconclusive(format!("{}: window search: {e}", j.long_name()));
                return Vec::new();
            }
        }
    }
    ctx.prove_carrying(o, hints, &data);
    out
}
