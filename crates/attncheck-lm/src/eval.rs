//! Evaluation: sliding-window perplexity (optionally with truncated attention) and the
//! cumulative normalised gradient receptive field.

use crate::model::{token_nll, tokens, Inference, Model};
use crate::{Error, Result, SplitMix64};
use candle_core::{DType, Var, D};

/// Sliding-window evaluation with a fixed stride S: window k reads the `length` bytes
/// ending just before target block k and scores only the last S predictions, so every
/// scored byte has at least `length` − S bytes of context. The scored bytes are the same
/// for every `length` ≤ `max_length`: `targets` bytes starting at `max_length` − S + 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sliding {
    /// Stride S (bytes scored per window).
    pub stride: usize,
    /// The largest evaluation length of the sweep (fixes where scoring starts).
    pub max_length: usize,
    /// Number of scored bytes (a multiple of the stride).
    pub targets: usize,
}

impl Sliding {
    /// The data length this evaluation needs.
    pub fn needs(&self) -> usize {
        self.max_length - self.stride + 1 + self.targets + 1
    }
}

/// Mean negative log-likelihood (nats/byte) at context `length` under `inf`, over the
/// scored bytes of `s`; windows are batched so that a batch holds ≈ `tokens_per_batch` bytes.
pub fn sliding_nll(
    model: &Model,
    data: &[u8],
    length: usize,
    s: Sliding,
    inf: Inference,
    tokens_per_batch: usize,
) -> Result<f64> {
    if s.stride == 0
        || length < s.stride
        || length > s.max_length
        || !s.targets.is_multiple_of(s.stride)
    {
        return Err(Error::Config(format!(
            "sliding evaluation needs stride ≤ length ≤ max_length and targets a multiple of the stride \
             (stride {}, length {length}, max {}, targets {})",
            s.stride, s.max_length, s.targets
        )));
    }
    if data.len() < s.needs() {
        return Err(Error::Config(format!(
            "validation data has {} bytes, sliding evaluation needs {}",
            data.len(),
            s.needs()
        )));
    }
    let t0 = s.max_length - s.stride + 1;
    let windows = s.targets / s.stride;
    let per = (tokens_per_batch / length).max(1);
    let mut total = 0.0;
    let mut k = 0;
    while k < windows {
        let n = per.min(windows - k);
        let starts: Vec<usize> = (k..k + n)
            .map(|j| t0 + j * s.stride + s.stride - 1 - length)
            .collect();
        let xs: Vec<&[u8]> = starts.iter().map(|&a| &data[a..a + length]).collect();
        let ys: Vec<&[u8]> = starts
            .iter()
            .map(|&a| &data[a + 1..a + length + 1])
            .collect();
        let ys: Vec<&[u8]> = ys.iter().map(|y| &y[length - s.stride..]).collect();
        let inf = Inference {
            last: Some(s.stride),
            ..inf
        };
        let logits = model.forward(&tokens(&xs)?, inf)?;
        let nll = token_nll(&logits, &tokens(&ys)?)?;
        total += nll.to_dtype(DType::F64)?.sum_all()?.to_scalar::<f64>()?;
        k += n;
    }
    Ok(total / s.targets as f64)
}

/// Normalised gradient norms for `n` validation sequences of length `length` at evenly
/// spaced offsets: for each sequence, g_j = ‖∂ℓ/∂e_j‖₂ with ℓ the loss at the last position
/// and e_j the input embedding at position j, normalised to sum 1 and indexed by distance
/// r = length − 1 − j. Sequences are independent, so the gradient of the batch's summed
/// loss is each sequence's own gradient.
pub fn normalised_gradients(
    model: &Model,
    data: &[u8],
    length: usize,
    n: usize,
    tokens_per_batch: usize,
) -> Result<Vec<Vec<f64>>> {
    if data.len() < length + 1 + n {
        return Err(Error::Config(format!(
            "validation data has {} bytes, {n} sequences of {length} need more",
            data.len()
        )));
    }
    let gap = (data.len() - length - 1) / n.max(1);
    let per = (tokens_per_batch / length).max(1);
    let frozen = model.frozen();
    let mut out = Vec::with_capacity(n);
    let mut k = 0;
    while k < n {
        let m = per.min(n - k);
        let starts: Vec<usize> = (k..k + m).map(|j| j * gap).collect();
        let xs: Vec<&[u8]> = starts.iter().map(|&a| &data[a..a + length]).collect();
        let ys: Vec<&[u8]> = starts
            .iter()
            .map(|&a| &data[a + length..a + length + 1])
            .collect();
        let e = frozen.embed(&tokens(&xs)?)?;
        let ev = Var::from_tensor(&e)?;
        let inf = Inference {
            last: Some(1),
            ..Inference::default()
        };
        let logits = frozen.forward_embedded(ev.as_tensor(), inf)?;
        let loss = token_nll(&logits, &tokens(&ys)?)?.sum_all()?;
        let grads = loss.backward()?;
        let g = grads
            .get(ev.as_tensor())
            .ok_or_else(|| Error::Config("no gradient reached the input embeddings".into()))?;
        let norms = g
            .to_dtype(DType::F64)?
            .sqr()?
            .sum(D::Minus1)?
            .sqrt()?
            .to_vec2::<f64>()?;
        for row in norms {
            let s: f64 = row.iter().sum();
            let mut by_distance: Vec<f64> = row.iter().rev().map(|x| x / s).collect();
            if !s.is_finite() || s <= 0.0 {
                by_distance = vec![f64::NAN; length];
            }
            out.push(by_distance);
        }
        k += m;
    }
    Ok(out)
}

/// The mean of curves (all the same length), renormalised to sum 1.
pub fn mean_curve(curves: &[&[f64]]) -> Vec<f64> {
    let l = curves.first().map(|c| c.len()).unwrap_or(0);
    let mut m = vec![0.0; l];
    for c in curves {
        for (a, b) in m.iter_mut().zip(c.iter()) {
            *a += b;
        }
    }
    let s: f64 = m.iter().sum();
    m.iter().map(|x| x / s).collect()
}

/// C(k) = Σ_{r ≤ k} ĝ_r.
pub fn cumulative(curve: &[f64]) -> Vec<f64> {
    let mut acc = 0.0;
    curve
        .iter()
        .map(|x| {
            acc += x;
            acc
        })
        .collect()
}

/// RF = min{k : C(k) ≥ threshold} (the last distance if C never reaches it, which only
/// rounding can cause).
pub fn receptive_field(curve: &[f64], threshold: f64) -> usize {
    cumulative(curve)
        .iter()
        .position(|&c| c >= threshold)
        .unwrap_or(curve.len().saturating_sub(1))
}

/// RF of the mean curve of `resamples` bootstrap resamples of the sequences (drawn with
/// replacement from `seed`).
pub fn bootstrap_rf(
    curves: &[Vec<f64>],
    threshold: f64,
    resamples: usize,
    seed: u64,
) -> Vec<usize> {
    let mut rng = SplitMix64(seed);
    let n = curves.len() as u64;
    (0..resamples)
        .map(|_| {
            let pick: Vec<&[f64]> = (0..n)
                .map(|_| curves[rng.below(n) as usize].as_slice())
                .collect();
            receptive_field(&mean_curve(&pick), threshold)
        })
        .collect()
}
