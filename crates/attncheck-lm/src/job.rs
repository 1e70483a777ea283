//! One training-and-evaluation job of attncheck's `positional/trained-model-claims`: train a
//! model on a corpus, then measure it at every evaluation length L_ex = k·L_tr.
//!
//! What a job measures (all of it stored in its [`JobResult`], so that a merged report and
//! the certified implicit window never recompute anything):
//! - the training loss per 1/20 of the run and, when asked, the validation loss at evenly
//!   spaced steps ([`Validation`]: the convergence plot);
//! - sliding-window perplexity at every L_ex ([`crate::eval::sliding_nll`]), and at one
//!   L_ex with attention truncated to the last W tokens;
//! - the receptive field RF at every L_ex: the mean cumulative normalised gradient curve of
//!   `rf_sequences` validation sequences, its RF, the RFs of `bootstrap` resamples of the
//!   sequences, and the largest distance with a nonzero gradient;
//! - when asked, the weights that enter a bound on the attention logits, as exact f32 bit
//!   patterns with their SHA-256 ([`AttentionWeights`]).
//!
//! The caller (the claim) decides what a job is: the model's position scheme (its bias
//! formula included), the sizes, the seeds. A job is single-threaded and deterministic: the
//! same job gives the same bytes on every run.

use crate::corpus::Corpus;
use crate::eval::{
    bootstrap_rf, mean_curve, normalised_gradients, receptive_field, sliding_nll, Sliding,
};
use crate::model::{token_nll, tokens, Config, Inference, Model};
use crate::train::{train, TrainConfig};
use crate::{Error, Result};
use candle_core::DType;
use serde::{Deserialize, Serialize};

/// The measurements after training.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// Evaluation lengths as multiples of L_tr (the first is normally 1).
    pub multiples: Vec<usize>,
    /// Sliding-evaluation stride (bytes scored per window).
    pub stride: usize,
    /// Scored validation bytes per evaluation (a multiple of the stride).
    pub targets: usize,
    /// Bytes per forward batch (a memory bound; never changes a number).
    pub batch_tokens: usize,
    /// Truncation windows W as multiples of L_tr (empty: no truncation measurement).
    pub truncations: Vec<usize>,
    /// The truncated perplexities are measured at L_ex = this multiple of L_tr (one of
    /// `multiples` when `truncations` is not empty).
    pub truncation_length: usize,
    /// RF threshold of the cumulative normalised gradient.
    pub rf_threshold: f64,
    /// Validation sequences per receptive-field measurement.
    pub rf_sequences: usize,
    /// Bootstrap resamples of the sequences.
    pub bootstrap: usize,
    /// The resamples at the k-th evaluation length are drawn from seed `bootstrap_seed + k`.
    pub bootstrap_seed: u64,
    /// Steps (after that many optimiser steps, each below the job's steps, increasing) at
    /// which every measurement above is also taken during training ([`Checkpoint`]); the
    /// end of training is always measured.
    pub checkpoints: Vec<usize>,
}

/// The validation-loss curve during training.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Validation {
    /// Number of evaluations, after every ⌊steps/points⌋ steps (and after the last step).
    pub points: usize,
    /// Validation windows of L_tr + 1 bytes, at evenly spaced offsets of the validation data.
    pub sequences: usize,
}

/// One job.
#[derive(Clone, Debug)]
pub struct Job {
    /// Its name (in error messages and the result).
    pub name: String,
    /// The model.
    pub model: Config,
    /// Seed of the initial weights.
    pub seed: u64,
    /// Training (its `length` is L_tr).
    pub train: TrainConfig,
    /// The measurements after training.
    pub eval: Evaluation,
    /// The validation-loss curve, if wanted.
    pub validation: Option<Validation>,
    /// Keep the trained model's weights ([`StoredWeights`], from which the certificate's
    /// [`AttentionWeights`] are read) and measure the content-logit ranges its heads reach
    /// on validation data ([`JobResult::logit_ranges`]).
    pub keep_weights: bool,
}

/// The largest [`Job::work`] a job may have: 2^45 units. The scan's sizing measured
/// 1.4–1.8·10¹⁰ units per CPU-second in training on this project's machine (0.0272,
/// 0.0306 and 0.0427 CPU-s per step at L_tr = 32, 128 and 512 with 1024 training bytes a
/// step, bench/sweeps/trained-scan/README.md), so a job at the bound takes about half an
/// hour on one core, and none an accepted spec can ask for takes hours. The scan's largest
/// job (L_tr = 512 trained 24000 steps, evaluated three times to 8·L_tr) is about 2^44.4.
pub const MAX_JOB_WORK: u128 = 1 << 45;

impl Job {
    /// An upper estimate of the job's work in multiply-adds, saturating at `u128::MAX`.
    /// A byte of context length c costs f(c) = layers·(12·d² + 2·c·d) + 256·d in a
    /// forward pass (the QKV and output projections 4d², the MLP 8d², attention to at most
    /// c keys 2cd, the output layer 256d), a backward pass twice that. Training: steps ·
    /// batch · L · 3f(L). The validation curve: (points + 1) · sequences · L · f(L). Each
    /// measurement round (every checkpoint and the end): at each evaluation length
    /// c = mL, (targets/stride) windows of c bytes (c·f(c) each) and rf_sequences gradients
    /// (3c·f(c) each) plus bootstrap · rf_sequences · c for the resampled means; each
    /// truncation, its windows at the truncation length. The logit ranges, when the
    /// weights are kept: rf_sequences · L · f(L).
    pub fn work(&self) -> u128 {
        work(
            self.model.hidden,
            self.model.layers,
            &self.train,
            &self.eval,
            self.validation,
            self.keep_weights,
        )
    }
}

/// [`Job::work`] from the model's sizes alone, so that a caller can bound a job before it
/// builds the model's position tables (hidden/2 frequencies for a sinusoidal model: 4 GB
/// at hidden = 10⁹).
pub fn work(
    hidden: usize,
    layers: usize,
    train: &TrainConfig,
    ev: &Evaluation,
    validation: Option<Validation>,
    keep_weights: bool,
) -> u128 {
    let m = |a: u128, b: u128| a.saturating_mul(b);
    let u = |x: usize| x as u128;
    let (d, layers) = (u(hidden), u(layers));
    let f =
        |c: u128| m(layers, m(12, m(d, d)).saturating_add(m(2, m(c, d)))).saturating_add(m(256, d));
    let l = u(train.length);
    let training = m(m(u(train.steps), u(train.batch)), m(m(3, l), f(l)));
    let curve = validation.map_or(0, |v| {
        m(m(u(v.points).saturating_add(1), u(v.sequences)), m(l, f(l)))
    });
    let windows = u(ev.targets / ev.stride.max(1));
    let rfs = u(ev.rf_sequences);
    let mut round = 0u128;
    for &k in &ev.multiples {
        let c = m(u(k), l);
        let cf = m(c, f(c));
        round = round
            .saturating_add(m(windows, cf))
            .saturating_add(m(m(3, rfs), cf))
            .saturating_add(m(m(u(ev.bootstrap), rfs), c));
    }
    let tc = m(u(ev.truncation_length), l);
    round = round.saturating_add(m(m(u(ev.truncations.len()), windows), m(tc, f(tc))));
    let rounds = u(ev.checkpoints.len()).saturating_add(1);
    let ranges = if keep_weights { m(m(rfs, l), f(l)) } else { 0 };
    training
        .saturating_add(curve)
        .saturating_add(m(rounds, round))
        .saturating_add(ranges)
}

/// One job as a unit of sharded work stores it: the result, or why the job failed
/// (a unit computed by another shard is neither).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Unit {
    /// The measurements.
    pub result: Option<JobResult>,
    /// The error, when the job failed.
    pub error: Option<String>,
}

impl Unit {
    /// Runs `job` on `corpus` into a unit.
    pub fn run(job: &Job, corpus: &Corpus) -> Unit {
        match run(job, corpus) {
            Ok(r) => Unit {
                result: Some(r),
                error: None,
            },
            Err(e) => Unit {
                result: None,
                error: Some(e.to_string()),
            },
        }
    }
}

/// What one job measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JobResult {
    /// The job's name.
    pub name: String,
    /// Mean training loss per 1/20 of the run (nats/byte).
    pub loss_curve: Vec<f64>,
    /// (steps done, validation loss in nats/byte) during training; empty when not asked.
    #[serde(default)]
    pub val_curve: Vec<(usize, f64)>,
    /// Validation NLL (nats/byte) at each evaluation length.
    pub nll: Vec<f64>,
    /// (W multiple, NLL) with attention truncated to the last W tokens, at the truncation length.
    pub truncated: Vec<(usize, f64)>,
    /// RF of the mean normalised-gradient curve at each evaluation length.
    pub rf: Vec<usize>,
    /// Bootstrap RFs at each evaluation length.
    pub rf_boot: Vec<Vec<usize>>,
    /// The mean normalised-gradient curve (by distance) at each evaluation length.
    pub curves: Vec<Vec<f64>>,
    /// The largest distance with a nonzero mean gradient at each evaluation length.
    pub support: Vec<usize>,
    /// The same measurements at the checkpoints during training, in step order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkpoints: Vec<Checkpoint>,
    /// The trained weights, when asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<StoredWeights>,
    /// Per layer and head, the largest range max_j s_ij − min_j s_ij of the content logits
    /// s_ij = q_i·k_j/√d_h over the keys j a query i sees (its own row; the position bias
    /// is not part of s), over every query of the job's `rf_sequences` validation windows
    /// of L_tr bytes (f64 from the model's f32 q and k); when the weights are kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logit_ranges: Vec<Vec<f64>>,
}

/// The measurements of a job at one point of training.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Measured {
    /// Validation NLL (nats/byte) at each evaluation length.
    pub nll: Vec<f64>,
    /// (W multiple, NLL) with attention truncated to the last W tokens.
    pub truncated: Vec<(usize, f64)>,
    /// RF of the mean normalised-gradient curve at each evaluation length.
    pub rf: Vec<usize>,
    /// Bootstrap RFs at each evaluation length.
    pub rf_boot: Vec<Vec<usize>>,
    /// The mean normalised-gradient curve at each evaluation length.
    pub curves: Vec<Vec<f64>>,
    /// The largest distance with a nonzero mean gradient at each evaluation length.
    pub support: Vec<usize>,
}

/// The measurements after some steps of training (a checkpoint before the end).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    /// Optimiser steps done.
    pub step: usize,
    /// What was measured then.
    pub measured: Measured,
}

impl JobResult {
    /// The measurements at the end of training.
    pub fn last(&self) -> Measured {
        Measured {
            nll: self.nll.clone(),
            truncated: self.truncated.clone(),
            rf: self.rf.clone(),
            rf_boot: self.rf_boot.clone(),
            curves: self.curves.clone(),
            support: self.support.clone(),
        }
    }

    /// This result as it stood at checkpoint `k` (its measurements in place of the final
    /// ones; the curves of training, the weights and the logit ranges are the final run's).
    pub fn as_of(&self, k: usize) -> Option<JobResult> {
        let c = self.checkpoints.get(k)?;
        let m = c.measured.clone();
        Some(JobResult {
            nll: m.nll,
            truncated: m.truncated,
            rf: m.rf,
            rf_boot: m.rf_boot,
            curves: m.curves,
            support: m.support,
            checkpoints: Vec::new(),
            ..self.clone()
        })
    }

    /// The attention weights the certificate carries, read from the stored weights.
    pub fn attention_weights(&self) -> Option<Result<AttentionWeights>> {
        self.weights.as_ref().map(AttentionWeights::from_stored)
    }
}

/// One tensor of [`StoredWeights`]: its shape and its f32 values as 8-hex-digit bit
/// patterns, row-major ([`to_hex`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StoredTensor {
    /// Dimensions.
    pub shape: Vec<usize>,
    /// The values.
    pub values: String,
}

/// Every weight of a trained model, exactly (f32 bit patterns), by the model's names
/// (`emb`, `l0.ln1.w`, `l0.qkv.w`, …, `head.w`), with the layer norms' ε and the number of
/// heads: what a certificate about the model, or a re-evaluation of it, reads.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StoredWeights {
    /// Heads.
    pub heads: usize,
    /// Layers.
    pub layers: usize,
    /// The ε of every layer norm as the model adds it (an f32 bit pattern).
    pub ln_eps: String,
    /// The tensors by name.
    pub tensors: std::collections::BTreeMap<String, StoredTensor>,
}

impl StoredWeights {
    /// Reads them from a model (its weights as f32: exact for an f32 model).
    pub fn of(model: &Model) -> Result<StoredWeights> {
        let mut tensors = std::collections::BTreeMap::new();
        for (name, t) in model.weights() {
            let t = t.to_dtype(DType::F32)?;
            let v: Vec<f32> = t.flatten_all()?.to_vec1::<f32>()?;
            tensors.insert(
                name.clone(),
                StoredTensor {
                    shape: t.dims().to_vec(),
                    values: to_hex(&v),
                },
            );
        }
        Ok(StoredWeights {
            heads: model.cfg.heads,
            layers: model.cfg.layers,
            ln_eps: to_hex(&[crate::model::ln_eps_f32()]),
            tensors,
        })
    }

    /// The model of configuration `cfg` with these weights (in `cfg.dtype`: an f64 model
    /// holds the f32 values exactly); `cfg`'s heads and layers must be these.
    pub fn model(&self, cfg: Config) -> Result<Model> {
        if (cfg.heads, cfg.layers) != (self.heads, self.layers) {
            return Err(Error::Config(format!(
                "the stored weights have {} heads and {} layers, the configuration {} and {}",
                self.heads, self.layers, cfg.heads, cfg.layers
            )));
        }
        let mut map = std::collections::BTreeMap::new();
        for (name, t) in &self.tensors {
            let v = self.get(name, &t.shape)?;
            let t = candle_core::Tensor::from_vec(v, t.shape.clone(), &candle_core::Device::Cpu)?;
            map.insert(name.clone(), t);
        }
        Model::from_tensors(cfg, map, "the stored weights")
    }

    /// The values of tensor `name`, checked to have `shape`.
    pub fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        let t = self
            .tensors
            .get(name)
            .ok_or_else(|| Error::Config(format!("the stored weights have no tensor {name}")))?;
        if t.shape != shape {
            return Err(Error::Config(format!(
                "stored tensor {name} has shape {:?}, expected {shape:?}",
                t.shape
            )));
        }
        let v = from_hex(&t.values).ok_or_else(|| {
            Error::Config(format!("stored tensor {name}: not 8-digit lower-case hex"))
        })?;
        if v.len() != shape.iter().product::<usize>() {
            return Err(Error::Config(format!(
                "stored tensor {name} has {} values, its shape {shape:?} needs {}",
                v.len(),
                shape.iter().product::<usize>()
            )));
        }
        Ok(v)
    }
}

/// The weights of a trained model that enter a bound on its attention logits
/// q_i·k_j over all inputs: per layer the LayerNorm before attention (gain γ, shift β) and
/// the query and key projections with their biases, and (when known) the token embedding E
/// with the layer norms' ε, which make layer 0's logits a function of two bytes. Every
/// value is an f32 (so an exact dyadic rational), written as its IEEE-754 bit pattern in 8
/// hex digits, values concatenated in row-major order: `w_q` and `w_k` are [hidden (in),
/// hidden (out)], head h owning the output columns h·d_h … (h + 1)·d_h − 1 (d_h =
/// hidden/heads), as the model computes q = LN(x)·W_Q + b_Q; `embedding` is [256, hidden].
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct AttentionWeights {
    /// Hidden size.
    pub hidden: usize,
    /// Heads.
    pub heads: usize,
    /// SHA-256 (hex) of the bit patterns of every value, 4 bytes little-endian each, in
    /// the order layer by layer: ln_gain, ln_shift, w_q, b_q, w_k, b_k, then ln_eps and the
    /// embedding when present ([`AttentionWeights::digest`]).
    pub sha256: String,
    /// One entry per layer.
    pub layers: Vec<LayerAttentionWeights>,
    /// The layer norms' ε (one f32 bit pattern), with the embedding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ln_eps: Option<String>,
    /// The token embedding E [256, hidden]: layer 0's input at a position holding byte a
    /// is E\[a\] (a model without position vectors at its input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<String>,
}

/// One layer's [`AttentionWeights`] (hex f32 bit patterns, 8 digits per value).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct LayerAttentionWeights {
    /// LayerNorm gain γ before attention (hidden values).
    pub ln_gain: String,
    /// LayerNorm shift β before attention (hidden values).
    pub ln_shift: String,
    /// Query projection W_Q (hidden × hidden).
    pub w_q: String,
    /// Query bias b_Q (hidden values).
    pub b_q: String,
    /// Key projection W_K (hidden × hidden).
    pub w_k: String,
    /// Key bias b_K (hidden values).
    pub b_k: String,
}

/// f32 values as concatenated 8-hex-digit bit patterns.
pub fn to_hex(v: &[f32]) -> String {
    let mut s = String::with_capacity(8 * v.len());
    for x in v {
        s.push_str(&format!("{:08x}", x.to_bits()));
    }
    s
}

/// The inverse of [`to_hex`]; `None` unless the text is a whole number of 8-digit
/// lower-case hex groups.
pub fn from_hex(s: &str) -> Option<Vec<f32>> {
    if !s.len().is_multiple_of(8)
        || !s
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return None;
    }
    (0..s.len() / 8)
        .map(|i| {
            u32::from_str_radix(&s[8 * i..8 * i + 8], 16)
                .ok()
                .map(f32::from_bits)
        })
        .collect()
}

impl LayerAttentionWeights {
    /// The six tensors in digest order, decoded.
    pub fn parts(&self) -> Option<[Vec<f32>; 6]> {
        Some([
            from_hex(&self.ln_gain)?,
            from_hex(&self.ln_shift)?,
            from_hex(&self.w_q)?,
            from_hex(&self.b_q)?,
            from_hex(&self.w_k)?,
            from_hex(&self.b_k)?,
        ])
    }
}

impl AttentionWeights {
    /// The SHA-256 of the stored values (see the `sha256` field); `None` when a value is
    /// not valid hex.
    pub fn digest(&self) -> Option<String> {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        let mut feed = |part: Vec<f32>| {
            for x in part {
                h.update(x.to_bits().to_le_bytes());
            }
        };
        for l in &self.layers {
            for part in l.parts()? {
                feed(part);
            }
        }
        for extra in [&self.ln_eps, &self.embedding].into_iter().flatten() {
            feed(from_hex(extra)?);
        }
        Some(
            h.finalize()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>(),
        )
    }

    /// Whether every tensor has its size and the hash matches the values.
    pub fn is_consistent(&self) -> bool {
        let d = self.hidden;
        let sized = |s: &Option<String>, n: usize| {
            s.as_deref()
                .is_none_or(|s| from_hex(s).is_some_and(|v| v.len() == n))
        };
        self.heads >= 1
            && d.is_multiple_of(self.heads)
            && self.ln_eps.is_some() == self.embedding.is_some()
            && sized(&self.ln_eps, 1)
            && sized(&self.embedding, crate::model::VOCAB * d)
            && self.layers.iter().all(|l| {
                l.parts().is_some_and(|p| {
                    p[0].len() == d
                        && p[1].len() == d
                        && p[2].len() == d * d
                        && p[3].len() == d
                        && p[4].len() == d * d
                        && p[5].len() == d
                })
            })
            && self.digest().as_deref() == Some(self.sha256.as_str())
    }

    /// Reads them from a model (its weights as f32: exact for an f32 model), the embedding
    /// included.
    pub fn of(model: &Model) -> Result<AttentionWeights> {
        AttentionWeights::from_stored(&StoredWeights::of(model)?)
    }

    /// Reads them from stored weights (names and shapes of [`Model`]), the embedding
    /// included.
    pub fn from_stored(w: &StoredWeights) -> Result<AttentionWeights> {
        let emb = w
            .tensors
            .get("emb")
            .ok_or_else(|| Error::Config("the stored weights have no tensor emb".into()))?;
        let d = match emb.shape[..] {
            [v, d] if v == crate::model::VOCAB => d,
            _ => {
                return Err(Error::Config(format!(
                    "stored tensor emb has shape {:?}, expected [256, hidden]",
                    emb.shape
                )))
            }
        };
        if w.heads == 0 || !d.is_multiple_of(w.heads) {
            return Err(Error::Config(format!(
                "{} heads do not divide hidden {d}",
                w.heads
            )));
        }
        let embedding = w.get("emb", &[crate::model::VOCAB, d])?;
        let ln_eps = from_hex(&w.ln_eps)
            .filter(|v| v.len() == 1)
            .ok_or_else(|| Error::Config("stored ln_eps: not one f32 bit pattern".into()))?;
        let mut layers = Vec::new();
        for l in 0..w.layers {
            let gain = w.get(&format!("l{l}.ln1.w"), &[d])?;
            let shift = w.get(&format!("l{l}.ln1.b"), &[d])?;
            let qkv_w = w.get(&format!("l{l}.qkv.w"), &[d, 3 * d])?;
            let qkv_b = w.get(&format!("l{l}.qkv.b"), &[3 * d])?;
            let cols = |from: usize| -> Vec<f32> {
                qkv_w
                    .chunks_exact(3 * d)
                    .flat_map(|row| row[from..from + d].iter().copied())
                    .collect()
            };
            layers.push(LayerAttentionWeights {
                ln_gain: to_hex(&gain),
                ln_shift: to_hex(&shift),
                w_q: to_hex(&cols(0)),
                b_q: to_hex(&qkv_b[0..d]),
                w_k: to_hex(&cols(d)),
                b_k: to_hex(&qkv_b[d..2 * d]),
            });
        }
        let mut a = AttentionWeights {
            hidden: d,
            heads: w.heads,
            sha256: String::new(),
            layers,
            ln_eps: Some(to_hex(&ln_eps)),
            embedding: Some(to_hex(&embedding)),
        };
        a.sha256 = a.digest().expect("written by to_hex");
        Ok(a)
    }
}

/// Mean next-byte NLL (nats/byte) over `n` windows of `length + 1` bytes at evenly spaced
/// offsets of `data`, every position scored.
pub fn validation_loss(
    model: &Model,
    data: &[u8],
    length: usize,
    n: usize,
    tokens_per_batch: usize,
) -> Result<f64> {
    if n == 0 || data.len() < length + 1 + n {
        return Err(Error::Config(format!(
            "validation data has {} bytes, {n} windows of {} need more",
            data.len(),
            length + 1
        )));
    }
    let gap = (data.len() - length - 1) / n;
    let per = (tokens_per_batch / length).max(1);
    let mut total = 0.0;
    let mut k = 0;
    while k < n {
        let m = per.min(n - k);
        let starts: Vec<usize> = (k..k + m).map(|j| j * gap).collect();
        let xs: Vec<&[u8]> = starts.iter().map(|&a| &data[a..a + length]).collect();
        let ys: Vec<&[u8]> = starts
            .iter()
            .map(|&a| &data[a + 1..a + length + 1])
            .collect();
        let logits = model.forward(&tokens(&xs)?, Inference::default())?;
        let nll = token_nll(&logits, &tokens(&ys)?)?;
        total += nll.to_dtype(DType::F64)?.sum_all()?.to_scalar::<f64>()?;
        k += m;
    }
    Ok(total / (n * length) as f64)
}

/// Every measurement of [`Evaluation`] on `frozen` (a model detached from training).
fn measure(job: &Job, frozen: &Model, corpus: &Corpus) -> Result<Measured> {
    let l = job.train.length;
    let ev = &job.eval;
    let max = l * ev.multiples.iter().copied().max().unwrap_or(1);
    let sl = Sliding {
        stride: ev.stride,
        max_length: max,
        targets: ev.targets,
    };
    let mut nll = Vec::new();
    for &m in &ev.multiples {
        nll.push(sliding_nll(
            frozen,
            &corpus.val,
            m * l,
            sl,
            Inference::default(),
            ev.batch_tokens,
        )?);
    }
    let mut truncated = Vec::new();
    for &w in &ev.truncations {
        let inf = Inference {
            truncate: Some(w * l),
            ..Inference::default()
        };
        let v = sliding_nll(
            frozen,
            &corpus.val,
            ev.truncation_length * l,
            sl,
            inf,
            ev.batch_tokens,
        )?;
        truncated.push((w, v));
    }
    let (mut rf, mut rf_boot, mut curves, mut support) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (k, &m) in ev.multiples.iter().enumerate() {
        let g = normalised_gradients(frozen, &corpus.val, m * l, ev.rf_sequences, ev.batch_tokens)?;
        if g.iter().any(|row| row.iter().any(|x| !x.is_finite())) {
            return Err(Error::Config(format!(
                "a gradient was not finite at L_ex = {}",
                m * l
            )));
        }
        let refs: Vec<&[f64]> = g.iter().map(|v| v.as_slice()).collect();
        let mc = mean_curve(&refs);
        rf.push(receptive_field(&mc, ev.rf_threshold));
        rf_boot.push(bootstrap_rf(
            &g,
            ev.rf_threshold,
            ev.bootstrap,
            ev.bootstrap_seed.wrapping_add(k as u64),
        ));
        support.push(mc.iter().rposition(|&x| x > 0.0).unwrap_or(0));
        curves.push(mc);
    }
    Ok(Measured {
        nll,
        truncated,
        rf,
        rf_boot,
        curves,
        support,
    })
}

/// The largest content-logit range per (layer, head) over the queries of `n` validation
/// windows of `length` bytes at evenly spaced offsets ([`JobResult::logit_ranges`]).
fn observed_logit_ranges(
    model: &Model,
    data: &[u8],
    length: usize,
    n: usize,
    tokens_per_batch: usize,
) -> Result<Vec<Vec<f64>>> {
    if n == 0 || data.len() < length + n {
        return Err(Error::Config(format!(
            "validation data has {} bytes, {n} windows of {length} need more",
            data.len()
        )));
    }
    let gap = (data.len() - length) / n;
    let per = (tokens_per_batch / length).max(1);
    let mut out = vec![vec![0.0f64; model.cfg.heads]; model.cfg.layers];
    let mut k = 0;
    while k < n {
        let m = per.min(n - k);
        let xs: Vec<&[u8]> = (k..k + m)
            .map(|j| &data[j * gap..j * gap + length])
            .collect();
        let r = model.content_logit_ranges(&tokens(&xs)?)?;
        for (o, r) in out.iter_mut().zip(r) {
            for (o, r) in o.iter_mut().zip(r) {
                *o = o.max(r);
            }
        }
        k += m;
    }
    Ok(out)
}

/// Trains and measures one job on `corpus` (training on `corpus.train`, every measurement
/// on `corpus.val`): the validation-loss curve and the checkpoints' measurements during
/// training, the final measurements, and (when asked) the weights and their logit ranges.
pub fn run(job: &Job, corpus: &Corpus) -> Result<JobResult> {
    let named = |e: Error| Error::Config(format!("{}: {e}", job.name));
    let l = job.train.length;
    let ev = &job.eval;
    let steps = job.train.steps;
    if ev.checkpoints.windows(2).any(|w| w[0] >= w[1])
        || ev.checkpoints.iter().any(|&c| c == 0 || c >= steps)
    {
        return Err(named(Error::Config(format!(
            "checkpoints {:?} must increase within 1..{steps}",
            ev.checkpoints
        ))));
    }
    let model = Model::new(job.model.clone(), job.seed).map_err(named)?;
    let mut val_curve = Vec::new();
    let mut checkpoints = Vec::new();
    let mut failed = None;
    let block = job.validation.map(|v| (steps / v.points.max(1)).max(1));
    let log = train(&model, &corpus.train, &job.train, &mut |step| {
        let done = step + 1;
        if failed.is_some() {
            return;
        }
        if let (Some(v), Some(block)) = (job.validation, block) {
            if done % block == 0 || done == steps {
                match validation_loss(
                    &model.frozen(),
                    &corpus.val,
                    l,
                    v.sequences,
                    ev.batch_tokens,
                ) {
                    Ok(x) => val_curve.push((done, x)),
                    Err(e) => failed = Some(e),
                }
            }
        }
        if ev.checkpoints.contains(&done) {
            match measure(job, &model.frozen(), corpus) {
                Ok(m) => checkpoints.push(Checkpoint {
                    step: done,
                    measured: m,
                }),
                Err(e) => failed = Some(e),
            }
        }
    })
    .map_err(named)?;
    if let Some(e) = failed {
        return Err(named(e));
    }
    let frozen = model.frozen();
    let m = measure(job, &frozen, corpus).map_err(named)?;
    let (weights, logit_ranges) = if job.keep_weights {
        (
            Some(StoredWeights::of(&frozen).map_err(named)?),
            observed_logit_ranges(&frozen, &corpus.val, l, ev.rf_sequences, ev.batch_tokens)
                .map_err(named)?,
        )
    } else {
        (None, Vec::new())
    };
    Ok(JobResult {
        name: job.name.clone(),
        loss_curve: log.loss_curve,
        val_curve,
        nll: m.nll,
        truncated: m.truncated,
        rf: m.rf,
        rf_boot: m.rf_boot,
        curves: m.curves,
        support: m.support,
        checkpoints,
        weights,
        logit_ranges,
    })
}

#[cfg(test)]
mod tests {
    use super::{Evaluation, Job, Validation, MAX_JOB_WORK};
    use crate::model::{Config, Position};
    use crate::train::TrainConfig;
    use candle_core::DType;

    /// A small job: d = 8, 2 layers, L = 4, 10 steps of batch 3; validation 2 points of 5
    /// sequences; evaluation at 1·L and 2·L, 8 targets at stride 2, 3 RF sequences, 7
    /// bootstrap resamples, one truncation at 2·L, one checkpoint; the weights kept.
    fn small() -> Job {
        Job {
            name: "small".into(),
            model: Config {
                hidden: 8,
                layers: 2,
                heads: 2,
                position: Position::Window(3),
                dtype: DType::F32,
            },
            seed: 1,
            train: TrainConfig {
                steps: 10,
                batch: 3,
                length: 4,
                lr: 1e-3,
                warmup: 1,
                clip: 1.0,
                weight_decay: 0.0,
                seed: 2,
            },
            eval: Evaluation {
                multiples: vec![1, 2],
                stride: 2,
                targets: 8,
                batch_tokens: 64,
                truncations: vec![1],
                truncation_length: 2,
                rf_threshold: 0.99,
                rf_sequences: 3,
                bootstrap: 7,
                bootstrap_seed: 3,
                checkpoints: vec![5],
            },
            validation: Some(Validation {
                points: 2,
                sequences: 5,
            }),
            keep_weights: true,
        }
    }

    /// The documented sum, by hand: f(c) = 2·(12·64 + 2·8c) + 256·8 = 3584 + 32c, so
    /// f(4) = 3712, f(8) = 3840. Training 10·3·4·3·3712 = 1,336,320; validation
    /// 3·5·4·3712 = 222,720; a round: at c = 4, 4 windows·4·3712 + 9·4·3712 + 7·3·4 =
    /// 59,392 + 133,632 + 84; at c = 8, 4·8·3840 + 9·8·3840 + 7·3·8 = 122,880 + 276,480 +
    /// 168; the truncation at c = 8, 4·8·3840 = 122,880: 715,516 a round, two rounds
    /// 1,431,032; the logit ranges 3·4·3712 = 44,544. In all 3,034,616.
    #[test]
    fn work_is_the_documented_sum() {
        let j = small();
        assert_eq!(j.work(), 3_034_616);
        // each part, by taking it away
        let mut k = j.clone();
        k.keep_weights = false;
        assert_eq!(j.work() - k.work(), 44_544);
        k.validation = None;
        assert_eq!(j.work() - k.work(), 44_544 + 222_720);
        k.eval.checkpoints.clear();
        assert_eq!(j.work() - k.work(), 44_544 + 222_720 + 715_516);
        k.eval.truncations.clear();
        k.eval.multiples.clear();
        assert_eq!(k.work(), 1_336_320);
    }

    /// More of anything is more work; a size no machine holds saturates instead of
    /// wrapping, and is far above the bound.
    #[test]
    fn work_grows_with_every_size_and_saturates() {
        let base = small().work();
        let grow: [fn(&mut Job); 11] = [
            |j| j.model.hidden *= 2,
            |j| j.model.layers += 1,
            |j| j.train.steps += 1,
            |j| j.train.batch += 1,
            |j| j.train.length += 1,
            |j| j.eval.multiples.push(4),
            |j| j.eval.targets *= 2,
            |j| j.eval.rf_sequences += 1,
            |j| j.eval.bootstrap += 1,
            |j| j.eval.checkpoints.push(7),
            |j| {
                j.validation = Some(Validation {
                    points: 3,
                    sequences: 5,
                })
            },
        ];
        for (i, g) in grow.iter().enumerate() {
            let mut j = small();
            g(&mut j);
            assert!(j.work() > base, "change {i}");
        }
        for huge in [usize::MAX, usize::MAX / 3, 1 << 40] {
            let mut j = small();
            j.model.hidden = huge;
            assert!(j.work() > MAX_JOB_WORK, "hidden {huge}");
            let mut j = small();
            j.train.steps = huge;
            j.train.batch = huge;
            assert!(j.work() > MAX_JOB_WORK, "steps {huge}");
            let mut j = small();
            j.eval.multiples = vec![huge];
            assert!(j.work() > MAX_JOB_WORK, "multiple {huge}");
        }
        let mut j = small();
        j.model.hidden = usize::MAX;
        j.train.steps = usize::MAX;
        assert_eq!(j.work(), u128::MAX);
    }
}
