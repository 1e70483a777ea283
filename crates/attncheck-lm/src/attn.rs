//! Causal attention as one operation with its own backward pass.
//!
//! For every batch b and head h, with keys and values k, v ∈ ℝ^{L×d} and queries for the
//! last L_q ≤ L positions (query row i is position a = i + L − L_q):
//! S[i, j] = scale·q_i·k_j + b_h(a − j) for max(0, a − limit) ≤ j ≤ a (every other key is
//! masked), P = row-softmax(S), O = P·V. Evaluation needs only the last positions' outputs
//! from the last layer (the scored bytes, the last position's loss), so L_q < L there. Composed of candle operations this is seven
//! passes over a [B, H, L, L] tensor (scale, bias, max, subtract, exp, sum, divide), each
//! allocating it, and the masked half is computed and thrown away; the quick profile's
//! evaluation at L = 512 spent most of its time there. Here each row is one loop over its
//! visible keys, in f64 whatever the tensor type, and nothing of size L² is stored: the
//! backward pass recomputes P row by row (as FlashAttention does) and applies
//! dV = PᵀdO, dP = dO·Vᵀ, dS = P ⊙ (dP − rowsum(P ⊙ dP)), dQ = scale·dS·K, dK = scale·dSᵀQ.
//! The sum order of every entry is fixed, so results do not depend on any thread count.
//! `tests/it/trained_models.rs` checks these gradients against finite differences.

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp3, DType, Layout, Result, Shape, Tensor};
use std::sync::Arc;

/// The attention operation: bias by distance and the visible range.
#[derive(Clone, Debug)]
pub struct Attention {
    /// b_h(r) for r = 0..L − 1, one row per head (a single row: shared by every head).
    pub bias: Arc<Vec<Vec<f64>>>,
    /// Keys at distance r ≤ limit are visible.
    pub limit: usize,
    /// The logit scale (1/√d).
    pub scale: f64,
}

#[derive(Clone, Copy)]
struct Dims {
    b: usize,
    h: usize,
    l: usize,
    d: usize,
}

fn dims(l: &Layout) -> Result<Dims> {
    match l.dims() {
        &[b, h, len, d] => Ok(Dims { b, h, l: len, d }),
        other => candle_core::bail!("attention: expected [B, H, L, d], got {other:?}"),
    }
}

fn as_f64(s: &CpuStorage, l: &Layout) -> Result<Vec<f64>> {
    let Some((a, b)) = l.contiguous_offsets() else {
        candle_core::bail!("attention: inputs must be contiguous")
    };
    Ok(match s {
        CpuStorage::F32(v) => v[a..b].iter().map(|&x| x as f64).collect(),
        CpuStorage::F64(v) => v[a..b].to_vec(),
        _ => candle_core::bail!("attention: f32 or f64 operands"),
    })
}

fn storage(v: Vec<f64>, dtype: DType) -> Result<CpuStorage> {
    Ok(match dtype {
        DType::F32 => CpuStorage::F32(v.into_iter().map(|x| x as f32).collect()),
        DType::F64 => CpuStorage::F64(v),
        other => candle_core::bail!("attention: unsupported dtype {other:?}"),
    })
}

impl Attention {
    fn bias_row(&self, h: usize) -> &[f64] {
        if self.bias.len() == 1 {
            &self.bias[0]
        } else {
            &self.bias[h]
        }
    }

    /// The row of P of the query `qi` at position a, for one (batch, head): the visible
    /// keys' probabilities, from key `lo` (returned) to a.
    fn probs(&self, qi: &[f64], k: &[f64], bias: &[f64], a: usize, p: &mut Vec<f64>) -> usize {
        let d = qi.len();
        let lo = a.saturating_sub(self.limit);
        p.clear();
        let mut max = f64::NEG_INFINITY;
        for j in lo..=a {
            let kj = &k[j * d..(j + 1) * d];
            let mut s = 0.0;
            for t in 0..d {
                s += qi[t] * kj[t];
            }
            let s = self.scale * s + bias[a - j];
            max = max.max(s);
            p.push(s);
        }
        let mut z = 0.0;
        for x in p.iter_mut() {
            *x = (*x - max).exp();
            z += *x;
        }
        for x in p.iter_mut() {
            *x /= z;
        }
        lo
    }

    fn check(&self, dq: &Dims, dk: &Dims, dv: &Dims) -> Result<()> {
        let same = |a: &Dims, b: &Dims| a.b == b.b && a.h == b.h && a.l == b.l && a.d == b.d;
        if !same(dk, dv) || dq.b != dk.b || dq.h != dk.h || dq.d != dk.d || dq.l > dk.l {
            candle_core::bail!("attention: k and v must have one shape, q the same but L_q ≤ L");
        }
        if !(self.bias.len() == 1 || self.bias.len() == dq.h) {
            candle_core::bail!(
                "attention: {} bias rows for {} heads",
                self.bias.len(),
                dq.h
            );
        }
        if self.bias.iter().any(|r| r.len() < dk.l) {
            candle_core::bail!("attention: bias rows shorter than L = {}", dk.l);
        }
        Ok(())
    }

    fn forward(&self, q: &[f64], k: &[f64], v: &[f64], nq: Dims, nk: Dims) -> Vec<f64> {
        let (lq, l, d) = (nq.l, nk.l, nk.d);
        let mut out = vec![0.0; q.len()];
        let mut p = Vec::with_capacity(l);
        for bh in 0..nk.b * nk.h {
            let (oq, ok) = (bh * lq * d, bh * l * d);
            let (k, v) = (&k[ok..ok + l * d], &v[ok..ok + l * d]);
            let bias = self.bias_row(bh % nk.h);
            for i in 0..lq {
                let qi = &q[oq + i * d..oq + (i + 1) * d];
                let lo = self.probs(qi, k, bias, i + l - lq, &mut p);
                let o = &mut out[oq + i * d..oq + (i + 1) * d];
                for (jj, &pj) in p.iter().enumerate() {
                    let vj = &v[(lo + jj) * d..(lo + jj + 1) * d];
                    for t in 0..d {
                        o[t] += pj * vj[t];
                    }
                }
            }
        }
        out
    }

    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn backward(
        &self,
        q: &[f64],
        k: &[f64],
        v: &[f64],
        g: &[f64],
        nq: Dims,
        nk: Dims,
    ) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let (lq, l, d) = (nq.l, nk.l, nk.d);
        let (mut gq, mut gk, mut gv) = (vec![0.0; q.len()], vec![0.0; k.len()], vec![0.0; v.len()]);
        let mut p = Vec::with_capacity(l);
        let mut dp = Vec::with_capacity(l);
        for bh in 0..nk.b * nk.h {
            let (oq, ok) = (bh * lq * d, bh * l * d);
            let rk = ok..ok + l * d;
            let (k, v) = (&k[rk.clone()], &v[rk.clone()]);
            let (gk, gv) = (&mut gk[rk.clone()], &mut gv[rk]);
            let bias = self.bias_row(bh % nk.h);
            for i in 0..lq {
                let qi = &q[oq + i * d..oq + (i + 1) * d];
                let lo = self.probs(qi, k, bias, i + l - lq, &mut p);
                let gi = &g[oq + i * d..oq + (i + 1) * d];
                dp.clear();
                let mut dot = 0.0;
                for (jj, &pj) in p.iter().enumerate() {
                    let j = lo + jj;
                    let vj = &v[j * d..(j + 1) * d];
                    let mut s = 0.0;
                    for t in 0..d {
                        s += gi[t] * vj[t];
                        gv[j * d + t] += pj * gi[t];
                    }
                    dp.push(s);
                    dot += pj * s;
                }
                let gqi = &mut gq[oq + i * d..oq + (i + 1) * d];
                for (jj, &pj) in p.iter().enumerate() {
                    let j = lo + jj;
                    let ds = self.scale * pj * (dp[jj] - dot);
                    for t in 0..d {
                        gqi[t] += ds * k[j * d + t];
                        gk[j * d + t] += ds * qi[t];
                    }
                }
            }
        }
        (gq, gk, gv)
    }
}

impl CustomOp3 for Attention {
    fn name(&self) -> &'static str {
        "attncheck-attention"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let (nq, nk, nv) = (dims(l1)?, dims(l2)?, dims(l3)?);
        self.check(&nq, &nk, &nv)?;
        let (q, k, v) = (as_f64(s1, l1)?, as_f64(s2, l2)?, as_f64(s3, l3)?);
        let out = self.forward(&q, &k, &v, nq, nk);
        Ok((storage(out, s1.dtype())?, l1.shape().clone()))
    }

    fn bwd(
        &self,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        _res: &Tensor,
        g: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let flat = |t: &Tensor| -> Result<Vec<f64>> {
            t.contiguous()?
                .to_dtype(DType::F64)?
                .flatten_all()?
                .to_vec1::<f64>()
        };
        let (b, h, lq, d) = q.dims4()?;
        let l = k.dim(2)?;
        let (nq, nk) = (Dims { b, h, l: lq, d }, Dims { b, h, l, d });
        let (gq, gk, gv) = self.backward(&flat(q)?, &flat(k)?, &flat(v)?, &flat(g)?, nq, nk);
        let back = |x: Vec<f64>, len: usize| -> Result<Tensor> {
            Tensor::from_vec(x, (b, h, len, d), q.device())?.to_dtype(q.dtype())
        };
        Ok((Some(back(gq, lq)?), Some(back(gk, l)?), Some(back(gv, l)?)))
    }
}

/// softmax(scale·QKᵀ + bias, masked to 0 ≤ a − j ≤ limit)·V for k, v [B, H, L, d] and q
/// [B, H, L_q, d] (the last L_q positions), on the CPU.
pub fn attention(q: &Tensor, k: &Tensor, v: &Tensor, op: Attention) -> Result<Tensor> {
    q.contiguous()?
        .apply_op3(&k.contiguous()?, &v.contiguous()?, op)
}
