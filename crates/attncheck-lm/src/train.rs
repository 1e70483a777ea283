//! Training: AdamW (β = (0.9, 0.999), ε = 1e−8, as the authors' KERPLE configs), linear
//! warm-up then cosine decay to a tenth of the peak rate, global gradient-norm clipping,
//! batches of random windows drawn from a seed.

use crate::model::{mean_nll, tokens, Model};
use crate::ops::{wide, with_data, Wide};
use crate::{Error, Result, SplitMix64};
use candle_core::DType;
use candle_core::{backprop::GradStore, Tensor};

/// Optimiser and schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainConfig {
    /// Optimiser steps.
    pub steps: usize,
    /// Sequences per batch.
    pub batch: usize,
    /// Training length L_tr.
    pub length: usize,
    /// Peak learning rate.
    pub lr: f64,
    /// Warm-up steps (linear from 0).
    pub warmup: usize,
    /// Global gradient-norm clip (0 = none).
    pub clip: f64,
    /// AdamW weight decay.
    pub weight_decay: f64,
    /// Seed of the batch sampler.
    pub seed: u64,
}

/// What training leaves behind besides the weights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrainLog {
    /// Mean training loss (nats/byte) over each block of `steps/20` steps.
    pub loss_curve: Vec<f64>,
}

/// The learning rate at `step` (0-based).
pub fn learning_rate(c: &TrainConfig, step: usize) -> f64 {
    if step < c.warmup {
        return c.lr * (step + 1) as f64 / c.warmup as f64;
    }
    let span = (c.steps - c.warmup).max(1) as f64;
    let t = (step - c.warmup) as f64 / span;
    let floor = 0.1 * c.lr;
    floor + (c.lr - floor) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos())
}

/// One batch of `batch` windows of `length + 1` bytes at seeded offsets: inputs and targets.
pub fn batch(
    data: &[u8],
    batch: usize,
    length: usize,
    rng: &mut SplitMix64,
) -> Result<(candle_core::Tensor, candle_core::Tensor)> {
    if data.len() < length + 2 {
        return Err(Error::Config(format!(
            "training data of {} bytes is shorter than a window of {}",
            data.len(),
            length + 1
        )));
    }
    let span = (data.len() - length - 1) as u64;
    let offs: Vec<usize> = (0..batch).map(|_| rng.below(span) as usize).collect();
    let xs: Vec<&[u8]> = offs.iter().map(|&o| &data[o..o + length]).collect();
    let ys: Vec<&[u8]> = offs.iter().map(|&o| &data[o + 1..o + length + 1]).collect();
    Ok((tokens(&xs)?, tokens(&ys)?))
}

/// Trains `model` on `data`; `progress(step)` is called after every step.
pub fn train(
    model: &Model,
    data: &[u8],
    c: &TrainConfig,
    progress: &mut dyn FnMut(usize),
) -> Result<TrainLog> {
    if c.steps == 0 || c.batch == 0 || c.length == 0 {
        return Err(Error::Config("steps, batch and length must be ≥ 1".into()));
    }
    let mut opt = Adam::new(model, c.weight_decay)?;
    let mut rng = SplitMix64(c.seed);
    let block = (c.steps / 20).max(1);
    let mut log = TrainLog::default();
    let mut acc = 0.0;
    for step in 0..c.steps {
        let (x, y) = batch(data, c.batch, c.length, &mut rng)?;
        let loss = mean_nll(&model.forward(&x, Default::default())?, &y)?;
        let grads = loss.backward()?;
        opt.step(model, &grads, learning_rate(c, step), c.clip)?;
        acc += loss.to_dtype(DType::F64)?.to_scalar::<f64>()?;
        if (step + 1) % block == 0 {
            log.loss_curve.push(acc / block as f64);
            acc = 0.0;
        }
        progress(step);
    }
    Ok(log)
}

/// AdamW on plain vectors: the moments live in `Vec<f64>` and each weight is written back
/// once per step (candle's `AdamW` issues a dozen tensor operations per weight, which
/// dominates a step of these small models). Update (Loshchilov & Hutter): with the clipped
/// gradient g, m ← β₁m + (1 − β₁)g, v ← β₂v + (1 − β₂)g², θ ← θ(1 − lr·λ) − lr·m̂/(√v̂ + ε).
struct Adam {
    m: Vec<Vec<f64>>,
    v: Vec<Vec<f64>>,
    t: i32,
    weight_decay: f64,
}

impl Adam {
    fn new(model: &Model, weight_decay: f64) -> Result<Adam> {
        let sizes: Vec<usize> = model.vars().iter().map(|v| v.elem_count()).collect();
        Ok(Adam {
            m: sizes.iter().map(|&n| vec![0.0; n]).collect(),
            v: sizes.iter().map(|&n| vec![0.0; n]).collect(),
            t: 0,
            weight_decay,
        })
    }

    fn step(&mut self, model: &Model, grads: &GradStore, lr: f64, clip: f64) -> Result<()> {
        self.t += 1;
        let mut gs: Vec<Option<Vec<f64>>> = Vec::with_capacity(model.vars().len());
        let mut sq = 0.0;
        for var in model.vars() {
            let g = match grads.get(var.as_tensor()) {
                Some(g) => Some(as_f64(g)?),
                None => None,
            };
            if let Some(g) = &g {
                sq += g.iter().map(|x| x * x).sum::<f64>();
            }
            gs.push(g);
        }
        let scale = if clip > 0.0 && sq.sqrt() > clip {
            clip / sq.sqrt()
        } else {
            1.0
        };
        let c1 = 1.0 - B1.powi(self.t);
        let c2 = 1.0 - B2.powi(self.t);
        for (i, var) in model.vars().iter().enumerate() {
            let Some(g) = &gs[i] else { continue };
            let mut th = as_f64(var.as_tensor())?;
            wide(Update {
                th: &mut th,
                g,
                m: &mut self.m[i],
                v: &mut self.v[i],
                scale,
                c1,
                c2,
                lr,
                decay: 1.0 - lr * self.weight_decay,
            });
            let t = if var.dtype() == DType::F32 {
                // as candle's f64 → f32 conversion: `as f32` (round to nearest)
                let th: Vec<f32> = th.iter().map(|&x| x as f32).collect();
                Tensor::from_vec(th, var.shape(), var.device())?
            } else {
                Tensor::from_vec(th, var.shape(), var.device())?.to_dtype(var.dtype())?
            };
            var.set(&t)?;
        }
        Ok(())
    }
}

const B1: f64 = 0.9;
const B2: f64 = 0.999;
const EPS: f64 = 1e-8;

/// The values of `t` as f64, row-major (exact from f32; without the intermediate f64
/// tensor of `to_dtype` for the f32 weights and gradients of training).
fn as_f64(t: &Tensor) -> Result<Vec<f64>> {
    if t.dtype() == DType::F32 {
        Ok(with_data::<f32, _>(t, |v| {
            Ok(v.iter().map(|&x| f64::from(x)).collect())
        })?)
    } else {
        Ok(t.to_dtype(DType::F64)?.flatten_all()?.to_vec1::<f64>()?)
    }
}

/// One AdamW update of one weight tensor (the formula in [`Adam`]'s doc), run through
/// [`wide`]: each element's operations are the same IEEE ones in the same order (no fused
/// multiply-add), so the same bits as the scalar loop, several elements per instruction.
struct Update<'a> {
    th: &'a mut [f64],
    g: &'a [f64],
    m: &'a mut [f64],
    v: &'a mut [f64],
    scale: f64,
    c1: f64,
    c2: f64,
    lr: f64,
    /// 1 − lr·λ.
    decay: f64,
}

impl Wide for Update<'_> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        let Update {
            th,
            g,
            m,
            v,
            scale,
            c1,
            c2,
            lr,
            decay,
        } = self;
        for (((th, &g), m), v) in th.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
            let gk = g * scale;
            *m = B1 * *m + (1.0 - B1) * gk;
            *v = B2 * *v + (1.0 - B2) * gk * gk;
            let upd = (*m / c1) / ((*v / c2).sqrt() + EPS);
            *th = *th * decay - lr * upd;
        }
    }
}
