//! The claim's adapter to the model crate (built with the `lm` feature) and its witness:
//! the models and jobs of the resolved parameters, the corpus with its hash checked, one
//! unit of work per job (sharded by `Ctx::unit`), and the search for the windows of the
//! trained ALiBi models, whose weights the certificate carries (the statement is
//! `window.rs`'s, proven by the driver). Training and evaluation themselves are
//! `attncheck_lm::job::run`. The observations (`observe.rs`, `parts.rs`) and the
//! presentation (`report.rs` and its sections) read one `View` (`view.rs`) of a scan of any
//! size: the quick profile's is one length and one seed without checkpoints.

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
    let (train, eval, validation) = lm_parts(job, p);
    attncheck_lm::job::Job {
        name: job.name(),
        model: model_config(job.scheme, p, attncheck_lm::DType::F32),
        seed: job.seed,
        train,
        eval,
        validation,
        keep_weights: super::window::keeps_weights(p, job),
    }
}

/// [`attncheck_lm::job::Job::work`] of `job`, without building its model (whose position
/// tables grow with the hidden size a spec asks for).
pub fn lm_job_work(job: &Job, p: &Params) -> u128 {
    let (train, eval, validation) = lm_parts(job, p);
    attncheck_lm::job::work(
        p.hidden,
        p.layers,
        &train,
        &eval,
        validation,
        super::window::keeps_weights(p, job),
    )
}

/// A job's training, measurements and validation curve, as the model crate takes them.
fn lm_parts(job: &Job, p: &Params) -> (TrainConfig, Evaluation, Option<Validation>) {
    let plan = plan_of(p, job);
    let l = plan.train_length;
    let steps = job.steps.unwrap_or(plan.steps);
    let train = TrainConfig {
        steps,
        batch: plan.batch,
        length: l,
        lr: p.lr,
        warmup: plan.warmup,
        clip: p.clip,
        weight_decay: 0.0,
        seed: job.seed ^ 0x5EED_BA7C,
    };
    let eval = Evaluation {
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
        checkpoints: p
            .scan
            .as_ref()
            .map(|s| {
                s.criteria
                    .checkpoints
                    .iter()
                    .map(|&c| steps * c / 100)
                    .collect()
            })
            .unwrap_or_default(),
    };
    let validation = p.scan.as_ref().map(|s| Validation {
        points: s.validation_points,
        sequences: s.validation_bytes / l,
    });
    (train, eval, validation)
}

/// What the witness computed: the corpus, every job's result in job order, and (for the
/// scan) the windows' search, or why it failed.
pub struct Trained {
    /// The corpus, its hash checked.
    pub corpus: attncheck_lm::corpus::Corpus,
    /// Every job's result, in the order of [`jobs`].
    pub results: Vec<(Job, JobResult)>,
    /// The arms trained longer ([`longer_jobs`]), in that order: `None` without the sweep
    /// or when this run does not have it (a merge without its shards).
    pub longer: Option<Vec<(Job, JobResult)>>,
    /// The scan's windows (`None` without a scan), or why they could not be searched
    /// (the run is then inconclusive with the reason and certifies nothing).
    pub windows: Option<Result<Windows, String>>,
}

/// The windows of the trained ALiBi models: the search's, the hints it gives the
/// statement, and the models' weights the certificate carries.
pub struct Windows {
    /// Per model of [`super::window::window_jobs`], its heads' windows.
    pub found: Vec<(Job, Vec<super::window::HeadWindow>)>,
    /// The windows as the statement's hints.
    pub hints: crate::certificate::Hints,
    /// The models' weights, by [`super::window::datum_name`].
    pub data: crate::kernel::expr::Data,
}

/// The scan's windows, when the witness has them.
fn windows(w: &Found) -> Option<&Windows> {
    w.as_ref().ok()?.windows.as_ref()?.as_ref().ok()
}

/// The statement's hints: the scan's windows (none without a scan, or when the search
/// failed; then the statement cannot be built, and `observe` says why).
pub fn hints(w: &Found) -> crate::certificate::Hints {
    windows(w).map(|x| x.hints.clone()).unwrap_or_default()
}

/// The data the certificate carries: the weights the scan's windows are certified from.
pub fn carried(w: &Found) -> crate::kernel::expr::Data {
    windows(w).map(|x| x.data.clone()).unwrap_or_default()
}

/// Runs every job of `p` (each a unit of work, side by side on rayon's pool) and, for the
/// scan, searches the windows of its ALiBi models; `Err` with the reason when the corpus
/// is missing, a job failed, or (in a sharded run) a job is another shard's.
pub fn witness(r: &Resolved, ctx: &Ctx) -> Found {
    let p = &r.params;
    attncheck_lm::configure();
    let c = corpus(p).map_err(|e| format!("the corpus is not available: {e}"))?;
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
    // the arms trained longer: a further sweep, sharded and merged on its own, so that the
    // scan's shards stored before it stay whole
    let more = longer_jobs(p);
    let more_keys = longer_keys(&more, ctx.prec());
    let more_units: Vec<Option<Unit>> = more
        .par_iter()
        .zip(more_keys.par_iter())
        .map(|(job, key)| {
            let u = ctx.unit_in(LONGER, key, || Unit::run(&lm_job(job, p), &c));
            if u.as_ref().is_some_and(|u| *u != Unit::default()) {
                ctx.progress.message(format!("{} done", job.long_name()));
            }
            u
        })
        .collect();
    let results = job_results(&all, units)?;
    let longer = match more_units.into_iter().collect::<Option<Vec<Unit>>>() {
        Some(us) if !more.is_empty() => Some(job_results(&more, us)?),
        _ => None,
    };
    let windows = r
        .scan()
        .map(|(_, eps)| search_windows(p, eps, ctx, &results));
    Ok(Trained {
        corpus: c,
        results,
        longer,
        windows,
    })
}

/// The jobs' results, or why not: a job failed, or (a sharded run) it is another shard's.
fn job_results(jobs: &[Job], units: Vec<Unit>) -> Result<Vec<(Job, JobResult)>, String> {
    let mut results = Vec::new();
    for (job, u) in jobs.iter().zip(units) {
        match (u.result, u.error) {
            (Some(r), None) => results.push((*job, r)),
            (_, Some(e)) => return Err(format!("a job failed: {e}")),
            // a share computed by another shard (the outcome is discarded)
            (None, None) => {
                return Err(format!("{}: computed by another shard", job.long_name()));
            }
        }
    }
    Ok(results)
}

/// What the observations and the presentation read: one view for a scan of any size (the
/// quick profile's is one length and one seed, without checkpoints).
fn view<'a>(r: &'a Resolved, t: &'a Trained, ctx: &'a Ctx) -> super::view::View<'a> {
    super::view::View {
        p: &r.params,
        scan: r.scan(),
        ctx,
        c: &t.corpus,
        results: &t.results,
        longer: t.longer.as_deref(),
        windows: match &t.windows {
            Some(Ok(w)) => &w.found[..],
            _ => &[],
        },
    }
}

/// The observed checks: one part per finding (and training length), and the reason when
/// the scan's windows could not be searched.
pub fn observe(r: &Resolved, t: &Trained, ctx: &Ctx, obs: &mut Observations) {
    super::observe::observe(&view(r, t, ctx), obs);
    if let Some(Err(why)) = &t.windows {
        obs.declare_inconclusive(why.clone());
    }
}

/// The figures, tables, plots and notes.
pub fn present(r: &Resolved, t: &Trained, ctx: &Ctx, pr: &mut Presentation) {
    super::report::present(&view(r, t, ctx), pr);
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

/// The windows of every ALiBi model of the scan, searched with the models' weights as
/// the kernel's data (the hints of the statement, [`super::window`], which the driver
/// proves with the same weights as the certificate's data). On a missing or malformed
/// datum, or a failed search, the reason: then nothing is certified.
pub fn search_windows(
    p: &Params,
    eps: &rug::Rational,
    ctx: &Ctx,
    results: &[(Job, JobResult)],
) -> Result<Windows, String> {
    let mut data = crate::kernel::expr::Data::new();
    let mut hints = crate::certificate::Hints::new();
    let mut found = Vec::new();
    for j in super::window::window_jobs(p) {
        let w = results
            .iter()
            .find(|(x, _)| *x == j)
            .and_then(|(_, r)| r.attention_weights())
            .ok_or_else(|| format!("{}: no stored weights", j.long_name()))?
            .map_err(|e| format!("{}: stored weights: {e}", j.long_name()))?;
        let d = weights_datum(&w).map_err(|e| format!("{}: stored weights: {e}", j.long_name()))?;
        data.insert(super::window::datum_name(&j), d);
        let ws = super::window::search(p, &j, eps, &data, ctx.prec())
            .map_err(|e| format!("{}: window search: {e}", j.long_name()))?;
        hints.insert(super::window::hint_key(&j), super::window::hint_of(&ws));
        found.push((j, ws));
    }
    Ok(Windows { found, hints, data })
}
