//! A pre-LayerNorm decoder-only Transformer over bytes (vocabulary 256) with a choice of
//! position scheme.
//!
//! Per layer: x ← x + Attn(LN(x)), x ← x + MLP(LN(x)); MLP = W₂ ReLU(W₁ x), width 4·hidden
//! (ReLU, as fairseq's `transformer_lm` that the ALiBi and Sandwich models were trained with;
//! it is also cheaper than GELU's tanh, which took a fifth of a training step);
//! a final LN and an untied output projection. Attention per head h, query i, key j ≤ i,
//! distance r = i − j: S_h[i, j] = q_i·k_j/√d_head + b_h(r), −∞ for j > i, P_h = softmax
//! (positional.md §1: the bias is added after the 1/√d scaling and is not scaled).
//!
//! Attention (reading the fused q/k/v projection, RoPE included, [`crate::attn`]), each
//! linear layer (bias and ReLU included, [`crate::mm::Linear`]), layer norm and the training
//! loss ([`crate::ops`]) are single operations with their own backward passes, in the
//! model's type (f32 for training); the embedding, residual additions and sinusoidal
//! positions are candle operations. Every weight and the input embeddings get exact
//! reverse-mode gradients (checked against finite differences in f64).

use crate::attn::{attention, Attention, Rope};
use crate::mm::{linear, mm};
use crate::ops::{LayerNorm, MeanNll};
use crate::{Error, Result, SplitMix64};
use candle_core::{DType, Device, Tensor, Var, D};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// A per-head additive bias b(h, r), h = 0..H − 1 (head h + 1 in the papers' numbering),
/// distance r ≥ 0.
pub type BiasFn = Arc<dyn Fn(usize, usize) -> f64 + Send + Sync>;

/// How the model knows positions.
#[derive(Clone)]
pub enum Position {
    /// An additive bias b_h(r) on the attention logits and nothing else (ALiBi: −m_h·r;
    /// Sandwich: p_mᵀp_n / c_h). The caller supplies the formula.
    Bias(BiasFn),
    /// Sinusoidal absolute embeddings added to the input, p_m = [sin(m ω_i)]_i ++ [cos(m ω_i)]_i
    /// with the given frequencies (hidden/2 of them).
    Sinusoidal(Vec<f64>),
    /// Rotary embeddings on queries and keys (GPT-NeoX halves layout), θ_i = base^{−2i/d_head}.
    Rope(f64),
    /// A hard window: key j is visible to query i iff 0 ≤ i − j ≤ max_distance (convention W1
    /// with w = max_distance + 1); no other position information.
    Window(usize),
}

impl std::fmt::Debug for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Position::Bias(_) => write!(f, "Bias(..)"),
            Position::Sinusoidal(w) => write!(f, "Sinusoidal({} freqs)", w.len()),
            Position::Rope(b) => write!(f, "Rope({b})"),
            Position::Window(d) => write!(f, "Window(max distance {d})"),
        }
    }
}

/// Model shape and position scheme.
#[derive(Clone, Debug)]
pub struct Config {
    /// Hidden size (a multiple of `heads`).
    pub hidden: usize,
    /// Number of layers.
    pub layers: usize,
    /// Number of heads.
    pub heads: usize,
    /// The position scheme.
    pub position: Position,
    /// Floating-point type (F32 for training; F64 for the gradient tests).
    pub dtype: DType,
}

/// Vocabulary size: bytes.
pub const VOCAB: usize = 256;

/// The ε of every layer norm, (x − μ)/√(σ² + ε): 10⁻⁵ as written, rounded to the model's
/// type when it is applied (f32: [`ln_eps_f32`]).
pub const LN_EPS: f64 = 1e-5;

/// The ε an f32 model's layer norms add, exactly: [`LN_EPS`] rounded to f32.
pub fn ln_eps_f32() -> f32 {
    LN_EPS as f32
}

/// What a forward pass may change at inference time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inference {
    /// Attend only to the last `W` tokens (0 ≤ r ≤ W − 1) in every layer.
    pub truncate: Option<usize>,
    /// Compute the logits of the last `n` positions only (the others' outputs are not
    /// needed: their last-layer rows are skipped); the same model, equal to the full pass up
    /// to the rounding of the matrix products.
    pub last: Option<usize>,
}

/// A model: its configuration and named weights. A trainable model keeps the weights as
/// candle `Var`s; [`Model::frozen`] gives a copy whose forward passes record no graph.
pub struct Model {
    /// The configuration.
    pub cfg: Config,
    w: BTreeMap<String, Tensor>,
    vars: Vec<Var>,
    /// The bias and RoPE tables by length (computing Sandwich's bias, 64 cosines per entry,
    /// took a noticeable part of a step); the same numbers as computing them afresh.
    tables: Mutex<HashMap<usize, Tables>>,
}

type Tables = (Arc<Vec<Vec<f64>>>, Option<Arc<Rope>>);

fn init_weights(cfg: &Config, seed: u64) -> Vec<(String, Vec<usize>, Vec<f64>)> {
    let d = cfg.hidden;
    let mut rng = SplitMix64(seed);
    let mut out = Vec::new();
    let mut normal = |name: String, shape: Vec<usize>, std: f64, out: &mut Vec<_>| {
        let n: usize = shape.iter().product();
        let v: Vec<f64> = (0..n).map(|_| std * rng.normal()).collect();
        out.push((name, shape, v));
    };
    let resid = 0.02 / ((2 * cfg.layers) as f64).sqrt();
    normal("emb".into(), vec![VOCAB, d], 0.02, &mut out);
    for l in 0..cfg.layers {
        normal(format!("l{l}.qkv.w"), vec![d, 3 * d], 0.02, &mut out);
        normal(format!("l{l}.o.w"), vec![d, d], resid, &mut out);
        normal(format!("l{l}.fc1.w"), vec![d, 4 * d], 0.02, &mut out);
        normal(format!("l{l}.fc2.w"), vec![4 * d, d], resid, &mut out);
    }
    normal("head.w".into(), vec![d, VOCAB], 0.02, &mut out);
    let mut konst = |name: String, n: usize, c: f64| out.push((name, vec![n], vec![c; n]));
    for l in 0..cfg.layers {
        konst(format!("l{l}.qkv.b"), 3 * d, 0.0);
        konst(format!("l{l}.o.b"), d, 0.0);
        konst(format!("l{l}.fc1.b"), 4 * d, 0.0);
        konst(format!("l{l}.fc2.b"), d, 0.0);
        konst(format!("l{l}.ln1.w"), d, 1.0);
        konst(format!("l{l}.ln1.b"), d, 0.0);
        konst(format!("l{l}.ln2.w"), d, 1.0);
        konst(format!("l{l}.ln2.b"), d, 0.0);
    }
    konst("lnf.w".into(), d, 1.0);
    konst("lnf.b".into(), d, 0.0);
    out
}

impl Model {
    /// A freshly initialised trainable model: N(0, 0.02²) weights, the residual output
    /// projections scaled by 1/√(2·layers) (GPT-2), LayerNorm gains 1, biases 0; every
    /// number drawn from `seed`.
    pub fn new(cfg: Config, seed: u64) -> Result<Model> {
        crate::configure();
        if cfg.hidden == 0 || cfg.heads == 0 || !cfg.hidden.is_multiple_of(cfg.heads) {
            return Err(Error::Config(format!(
                "hidden {} must be a positive multiple of heads {}",
                cfg.hidden, cfg.heads
            )));
        }
        if (cfg.hidden / cfg.heads) % 2 == 1 && matches!(cfg.position, Position::Rope(_)) {
            return Err(Error::Config("RoPE needs an even head dimension".into()));
        }
        if let Position::Sinusoidal(f) = &cfg.position {
            if 2 * f.len() != cfg.hidden {
                return Err(Error::Config(format!(
                    "sinusoidal embeddings need hidden/2 = {} frequencies, got {}",
                    cfg.hidden / 2,
                    f.len()
                )));
            }
        }
        let dev = Device::Cpu;
        let mut w = BTreeMap::new();
        let mut vars = Vec::new();
        for (name, shape, v) in init_weights(&cfg, seed) {
            let t = Tensor::from_vec(v, shape, &dev)?.to_dtype(cfg.dtype)?;
            let var = Var::from_tensor(&t)?;
            w.insert(name, var.as_tensor().clone());
            vars.push(var);
        }
        Ok(Model {
            cfg,
            w,
            vars,
            tables: Mutex::default(),
        })
    }

    /// The trainable variables, in creation order.
    pub fn vars(&self) -> &[Var] {
        &self.vars
    }

    /// The weights by name (name order).
    pub fn weights(&self) -> &BTreeMap<String, Tensor> {
        &self.w
    }

    /// A copy for inference: the same numbers, detached from any gradient graph.
    pub fn frozen(&self) -> Model {
        Model {
            cfg: self.cfg.clone(),
            w: self
                .w
                .iter()
                .map(|(k, t)| (k.clone(), t.detach()))
                .collect(),
            vars: Vec::new(),
            tables: Mutex::default(),
        }
    }

    /// Number of trainable numbers.
    pub fn parameter_count(&self) -> usize {
        self.w.values().map(|t| t.elem_count()).sum()
    }

    /// Writes the weights to a safetensors file.
    pub fn save(&self, path: &std::path::Path) -> Result<()> {
        let map: std::collections::HashMap<String, Tensor> = self
            .w
            .iter()
            .map(|(k, t)| (k.clone(), t.detach()))
            .collect();
        candle_core::safetensors::save(&map, path)?;
        Ok(())
    }

    /// Reads weights written by [`Model::save`] into a trainable model of configuration `cfg`;
    /// every expected weight must be present with its shape.
    pub fn load(cfg: Config, path: &std::path::Path) -> Result<Model> {
        let map = candle_core::safetensors::load(path, &Device::Cpu)?;
        Model::from_tensors(cfg, map.into_iter().collect(), &path.display().to_string())
    }

    /// A trainable model of configuration `cfg` with the weights `map` (by the model's names,
    /// converted to `cfg.dtype`); every expected weight must be present with its shape, and
    /// an error names `origin` and the weight.
    pub fn from_tensors(
        cfg: Config,
        mut map: BTreeMap<String, Tensor>,
        origin: &str,
    ) -> Result<Model> {
        let fresh = Model::new(cfg.clone(), 0)?;
        let mut w = BTreeMap::new();
        let mut vars = Vec::new();
        for (name, t0) in fresh.w {
            let t = map
                .remove(&name)
                .ok_or_else(|| Error::Config(format!("{origin}: no weight {name}")))?;
            if t.dims() != t0.dims() {
                return Err(Error::Config(format!(
                    "{origin}: weight {name} has shape {:?}, expected {:?}",
                    t.dims(),
                    t0.dims()
                )));
            }
            let var = Var::from_tensor(&t.to_dtype(cfg.dtype)?)?;
            w.insert(name, var.as_tensor().clone());
            vars.push(var);
        }
        Ok(Model {
            cfg,
            w,
            vars,
            tables: Mutex::default(),
        })
    }

    fn t(&self, name: &str) -> &Tensor {
        &self.w[name]
    }

    /// The token embeddings of `tokens` ([B, L] u32) → [B, L, hidden].
    pub fn embed(&self, tokens: &Tensor) -> Result<Tensor> {
        let (b, l) = tokens.dims2()?;
        let flat = tokens.flatten_all()?;
        Ok(self
            .t("emb")
            .index_select(&flat, 0)?
            .reshape((b, l, self.cfg.hidden))?)
    }

    /// Logits [B, L, 256] for `tokens` [B, L].
    pub fn forward(&self, tokens: &Tensor, inf: Inference) -> Result<Tensor> {
        let x = self.embed(tokens)?;
        self.forward_embedded(&x, inf)
    }

    /// The bias by distance for length L, b_h(r) for r = 0..L − 1: one row per head for the
    /// bias schemes, a single row of zeros otherwise.
    pub fn bias_table(&self, l: usize) -> Vec<Vec<f64>> {
        match &self.cfg.position {
            Position::Bias(f) => (0..self.cfg.heads)
                .map(|h| (0..l).map(|r| f(h, r)).collect())
                .collect(),
            _ => vec![vec![0.0; l]],
        }
    }

    /// The largest visible distance i − j under `inf`: the window's, the truncation's
    /// (W − 1), or unlimited.
    pub fn visible_limit(&self, inf: Inference) -> usize {
        match (&self.cfg.position, inf.truncate) {
            (Position::Window(m), Some(w)) => (*m).min(w.saturating_sub(1)),
            (Position::Window(m), None) => *m,
            (_, Some(w)) => w.saturating_sub(1),
            (_, None) => usize::MAX,
        }
    }

    /// Layer norm over the last dimension (population variance, ε = 10⁻⁵), one operation.
    fn layer_norm(&self, x: &Tensor, name: &str) -> Result<Tensor> {
        Ok(x.contiguous()?.apply_op3(
            self.t(&format!("{name}.w")),
            self.t(&format!("{name}.b")),
            LayerNorm { eps: LN_EPS },
        )?)
    }

    fn linear(&self, x2: &Tensor, name: &str, relu: bool) -> Result<Tensor> {
        Ok(linear(
            x2,
            self.t(&format!("{name}.w")),
            self.t(&format!("{name}.b")),
            relu,
        )?)
    }

    fn rope_tables(&self, l: usize, base: f64) -> Rope {
        let dh = self.cfg.hidden / self.cfg.heads;
        let half = dh / 2;
        let mut cos = Vec::with_capacity(l * dh);
        let mut sin = Vec::with_capacity(l * dh);
        for m in 0..l {
            for k in 0..dh {
                let theta = base.powf(-2.0 * (k % half) as f64 / dh as f64);
                cos.push((m as f64 * theta).cos());
                sin.push((m as f64 * theta).sin());
            }
        }
        Rope { cos, sin }
    }

    /// The bias and RoPE tables for length L, computed once per length.
    fn tables(&self, l: usize) -> Tables {
        let mut cache = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(l)
            .or_insert_with(|| {
                let rope = match self.cfg.position {
                    Position::Rope(base) => Some(Arc::new(self.rope_tables(l, base))),
                    _ => None,
                };
                (Arc::new(self.bias_table(l)), rope)
            })
            .clone()
    }

    /// Logits [B, L, 256] (or [B, n, 256] for the last n positions, [`Inference::last`])
    /// from input embeddings `x` [B, L, hidden] (for the gradient with
    /// respect to the inputs, pass a `Var`'s tensor). Sinusoidal position vectors are added
    /// here, so ∂loss/∂x is the gradient with respect to the token embeddings.
    pub fn forward_embedded(&self, x: &Tensor, inf: Inference) -> Result<Tensor> {
        self.forward_observed(x, inf, &mut |_, _| Ok(()))
    }

    /// Per layer and head, the largest range max_j s_ij − min_j s_ij of the content logits
    /// s_ij = q_i·k_j/√d_h over the keys j that query i sees (the position bias is not part
    /// of s), over every query of `tokens` [B, L]: computed in f64 from the model's q and k.
    /// Not for RoPE models (their q and k are rotated inside the attention).
    pub fn content_logit_ranges(&self, tokens: &Tensor) -> Result<Vec<Vec<f64>>> {
        if matches!(self.cfg.position, Position::Rope(_)) {
            return Err(Error::Config(
                "content-logit ranges are not measured for RoPE models".into(),
            ));
        }
        let (h, d) = (self.cfg.heads, self.cfg.hidden);
        let dh = d / h;
        let limit = self.visible_limit(Inference::default());
        let scale = 1.0 / (dh as f64).sqrt();
        let mut out = vec![vec![0.0f64; h]; self.cfg.layers];
        let x = self.embed(tokens)?;
        self.forward_observed(&x, Inference::default(), &mut |layer, qkv| {
            let (b, l, _) = qkv.dims3()?;
            let v: Vec<f64> = qkv.to_dtype(DType::F64)?.flatten_all()?.to_vec1::<f64>()?;
            for bi in 0..b {
                let row = |i: usize| &v[(bi * l + i) * 3 * d..(bi * l + i + 1) * 3 * d];
                for (hh, o) in out[layer].iter_mut().enumerate() {
                    for i in 0..l {
                        let q = &row(i)[hh * dh..(hh + 1) * dh];
                        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
                        for j in i.saturating_sub(limit)..=i {
                            let k = &row(j)[d + hh * dh..d + (hh + 1) * dh];
                            let s = scale * q.iter().zip(k).map(|(a, b)| a * b).sum::<f64>();
                            lo = lo.min(s);
                            hi = hi.max(s);
                        }
                        *o = o.max(hi - lo);
                    }
                }
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// [`Model::forward_embedded`], calling `observe(layer, qkv)` with each layer's fused
    /// q/k/v projection [B, L, 3·hidden] before its attention.
    fn forward_observed(
        &self,
        x: &Tensor,
        inf: Inference,
        observe: &mut dyn FnMut(usize, &Tensor) -> Result<()>,
    ) -> Result<Tensor> {
        let (b, l, d) = x.dims3()?;
        let h = self.cfg.heads;
        let dh = d / h;
        let mut x = x.clone();
        if let Position::Sinusoidal(freqs) = &self.cfg.position {
            let mut p = vec![0.0; l * d];
            for m in 0..l {
                for (i, w) in freqs.iter().enumerate() {
                    p[m * d + i] = (m as f64 * w).sin();
                    p[m * d + d / 2 + i] = (m as f64 * w).cos();
                }
            }
            let p = Tensor::from_vec(p, (1, l, d), &Device::Cpu)?.to_dtype(self.cfg.dtype)?;
            x = x.broadcast_add(&p)?;
        }
        let (bias, rope) = self.tables(l);
        let op = Attention {
            heads: h,
            bias,
            limit: self.visible_limit(inf),
            scale: 1.0 / (dh as f64).sqrt(),
            last: l,
            rope,
        };
        for layer in 0..self.cfg.layers {
            let p = format!("l{layer}");
            let y = self.layer_norm(&x, &format!("{p}.ln1"))?;
            let qkv = self
                .linear(&y.reshape((b * l, d))?, &format!("{p}.qkv"), false)?
                .reshape((b, l, 3 * d))?;
            observe(layer, &qkv)?;
            // the last layer computes only the positions whose outputs are asked for
            let n = match inf.last {
                Some(n) if layer + 1 == self.cfg.layers && n < l => {
                    x = x.narrow(1, l - n, n)?;
                    n
                }
                _ => l,
            };
            let o = attention(
                &qkv,
                Attention {
                    last: n,
                    ..op.clone()
                },
            )?
            .reshape((b * n, d))?;
            let o = self
                .linear(&o, &format!("{p}.o"), false)?
                .reshape((b, n, d))?;
            x = (x + o)?;
            let y = self
                .layer_norm(&x, &format!("{p}.ln2"))?
                .reshape((b * n, d))?;
            let y = self.linear(
                &self.linear(&y, &format!("{p}.fc1"), true)?,
                &format!("{p}.fc2"),
                false,
            )?;
            x = (x + y.reshape((b, n, d))?)?;
        }
        let n = x.dim(1)?;
        let y = self.layer_norm(&x, "lnf")?.reshape((b * n, d))?;
        Ok(mm(&y, self.t("head.w"))?.reshape((b, n, VOCAB))?)
    }
}

/// Mean next-token cross-entropy (nats) of `logits` [B, L, 256] against `targets` [B, L]:
/// one operation ([`MeanNll`]) on the CPU, candle-nn's elsewhere.
pub fn mean_nll(logits: &Tensor, targets: &Tensor) -> Result<Tensor> {
    let (b, l, v) = logits.dims3()?;
    let (x, t) = (logits.reshape((b * l, v))?, targets.reshape(b * l)?);
    if !logits.device().is_cpu() {
        return Ok(candle_nn::loss::cross_entropy(&x, &t)?);
    }
    Ok(x.contiguous()?.apply_op2(&t.contiguous()?, MeanNll)?)
}

/// Per-token negative log-likelihoods [B, L] (nats).
pub fn token_nll(logits: &Tensor, targets: &Tensor) -> Result<Tensor> {
    let lsm = candle_nn::ops::log_softmax(logits, D::Minus1)?;
    Ok(lsm
        .gather(&targets.unsqueeze(D::Minus1)?, D::Minus1)?
        .squeeze(D::Minus1)?
        .neg()?)
}

/// `[B, L]` u32 tokens from byte rows.
pub fn tokens(rows: &[&[u8]]) -> Result<Tensor> {
    let l = rows.first().map(|r| r.len()).unwrap_or(0);
    let v: Vec<u32> = rows
        .iter()
        .flat_map(|r| r.iter().map(|&b| b as u32))
        .collect();
    Ok(Tensor::from_vec(v, (rows.len(), l), &Device::Cpu)?)
}
