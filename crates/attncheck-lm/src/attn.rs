//! Causal multi-head attention as one operation with its own backward pass, reading the
//! fused q/k/v projection directly.
//!
//! Input: qkv [B, L, 3·d] (d = H·d_h; queries, keys and values side by side, head h in
//! columns h·d_h..(h + 1)·d_h of each third), output [B, n, d] for the last n ≤ L positions
//! (evaluation needs only the scored positions of the last layer). For batch b, head h and
//! query position a: S[a, j] = scale·q_a·k_j + b_h(a − j) for max(0, a − limit) ≤ j ≤ a (every
//! other key is masked), P = row-softmax(S), O = P·V. With RoPE the operation rotates q and
//! k itself (and rotates their gradients back), so no [B, H, L, d_h] copy of q, k or v exists
//! outside it.
//!
//! Everything runs in the tensor's type (f32 for training and evaluation, f64 for the
//! gradient tests), FlashAttention-style: per (b, h), queries in blocks of [`BLOCK`] rows;
//! a block's logits Q·Kᵀ over the keys it can see are one `gemm` call, each row is biased,
//! masked and normalised in place (e^x by [`crate::ops::exp_nonpos_f32`] in f32, the
//! row sum by [`crate::ops::sum_fixed`]), and P·V is a second call. Nothing of size L² is
//! kept: the backward pass recomputes P block by block (by the same code, so the same bits)
//! and applies dV = PᵀdO, dP = dO·Vᵀ, dS = P ⊙ (dP − rowsum(dO ⊙ O)), dQ = scale·dS·K,
//! dK = scale·dSᵀQ, accumulating dK and dV over the blocks in order. Every sum's order is
//! fixed by the shapes, so results do not depend on any thread count.
//! `tests/it/trained_models.rs` checks the f64 operation against candle's composed
//! operations and finite differences, and the f32 one against the f64 one within a derived
//! bound.

use crate::mm::{gemm_into, View};
use crate::ops::{max_lanes, sum_fixed, wide, with_data, Real, Wide};
use candle_core::{CpuStorage, CustomOp1, DType, Layout, Result, Shape, Tensor};
use std::sync::Arc;

/// Query rows per block.
pub const BLOCK: usize = 64;

/// RoPE tables for positions 0..L: cos and sin of m·θ_k, [L × d_h] row-major, halves layout
/// (column k and k + d_h/2 share θ).
#[derive(Clone, Debug)]
pub struct Rope {
    /// cos(m·θ_{k mod d_h/2}).
    pub cos: Vec<f64>,
    /// sin(m·θ_{k mod d_h/2}).
    pub sin: Vec<f64>,
}

/// The attention operation: heads, bias by distance, the visible range, RoPE.
#[derive(Clone, Debug)]
pub struct Attention {
    /// Number of heads H.
    pub heads: usize,
    /// b_h(r) for r = 0..L − 1, one row per head (a single row: shared by every head).
    pub bias: Arc<Vec<Vec<f64>>>,
    /// Keys at distance r ≤ limit are visible.
    pub limit: usize,
    /// The logit scale (1/√d_h).
    pub scale: f64,
    /// Outputs for the last `last` positions (L for all).
    pub last: usize,
    /// Rotary embeddings applied to q and k, if any.
    pub rope: Option<Arc<Rope>>,
}

#[derive(Clone, Copy, Debug)]
struct Dims {
    b: usize,
    l: usize,
    d: usize,
    h: usize,
    dh: usize,
    n: usize,
}

/// The operation's constants in type T.
struct Ctx<T> {
    /// Per head, the bias reversed: rev[L − 1 − r] = b_h(r), so that keys j = lo..=a of
    /// query a read rev[L − 1 − a + lo ..= L − 1] in order.
    rev: Vec<Vec<T>>,
    cos: Vec<T>,
    sin: Vec<T>,
    scale: T,
}

/// Bias, mask and softmax of a block of logits in place: rows of width w for query positions
/// a0, a0 + 1, …, keys lo.., with the bias reversed (`rev`, as [`Ctx::rev`]).
struct Normalise<'a, T> {
    p: &'a mut [T],
    w: usize,
    a0: usize,
    lo: usize,
    limit: usize,
    rev: &'a [T],
    scale: T,
}

impl<T: Real> Wide for Normalise<'_, T> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        let (lo, l) = (self.lo, self.rev.len());
        for (r, row) in self.p.chunks_exact_mut(self.w).enumerate() {
            let a = self.a0 + r;
            let vlo = lo.max(a.saturating_sub(self.limit));
            row[..vlo - lo].fill(T::zero());
            row[a + 1 - lo..].fill(T::zero());
            let vis = &mut row[vlo - lo..a + 1 - lo];
            let bias = &self.rev[l - 1 - a + vlo..];
            for (s, &bb) in vis.iter_mut().zip(bias) {
                *s = self.scale * *s + bb;
            }
            let m = max_lanes(vis);
            for s in vis.iter_mut() {
                *s -= m;
            }
            T::exp_nonpos(vis);
            let zsum = sum_fixed(vis);
            for s in vis.iter_mut() {
                *s /= zsum;
            }
        }
    }
}

/// dS = scale·P ⊙ (dP − δ) in place over rows of width w (ds holds dP).
struct ScoreGrad<'a, T> {
    ds: &'a mut [T],
    p: &'a [T],
    w: usize,
    delta: &'a [T],
    scale: T,
}

impl<T: Real> Wide for ScoreGrad<'_, T> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        for ((dr, pr), &dl) in self
            .ds
            .chunks_exact_mut(self.w)
            .zip(self.p.chunks_exact(self.w))
            .zip(self.delta)
        {
            for (x, &pp) in dr.iter_mut().zip(pr) {
                *x = self.scale * (pp * (*x - dl));
            }
        }
    }
}

impl Attention {
    fn dims(&self, l: &Layout) -> Result<Dims> {
        let &[b, len, three_d] = l.dims() else {
            candle_core::bail!("attention: expected qkv [B, L, 3d], got {:?}", l.dims())
        };
        let h = self.heads;
        if h == 0 || !three_d.is_multiple_of(3 * h) || three_d == 0 {
            candle_core::bail!("attention: 3d = {three_d} for {h} heads");
        }
        let d = three_d / 3;
        let dh = d / h;
        if self.last > len {
            candle_core::bail!("attention: {} last positions of L = {len}", self.last);
        }
        if !(self.bias.len() == 1 || self.bias.len() == h) {
            candle_core::bail!("attention: {} bias rows for {h} heads", self.bias.len());
        }
        if self.bias.iter().any(|r| r.len() < len) {
            candle_core::bail!("attention: bias rows shorter than L = {len}");
        }
        if let Some(r) = &self.rope {
            if dh % 2 == 1 || r.cos.len() < len * dh || r.sin.len() < len * dh {
                candle_core::bail!("attention: RoPE tables for d_h = {dh}, L = {len}");
            }
        }
        Ok(Dims {
            b,
            l: len,
            d,
            h,
            dh,
            n: self.last,
        })
    }

    fn ctx<T: Real>(&self, z: Dims) -> Ctx<T> {
        let rev = self
            .bias
            .iter()
            .map(|row| (0..z.l).rev().map(|r| T::from_f64(row[r])).collect())
            .collect();
        let conv = |v: &[f64]| v[..z.l * z.dh].iter().map(|&x| T::from_f64(x)).collect();
        let (cos, sin) = match &self.rope {
            Some(r) => (conv(&r.cos), conv(&r.sin)),
            None => (Vec::new(), Vec::new()),
        };
        Ctx {
            rev,
            cos,
            sin,
            scale: T::from_f64(self.scale),
        }
    }

    /// Copies head h of part `part` (0 = q, 1 = k, 2 = v) of batch row b, positions
    /// from..L, into `dst` [(L − from) × d_h], rotated when `rotate` (positions from RoPE).
    #[allow(clippy::too_many_arguments)]
    fn gather<T: Real>(
        c: &Ctx<T>,
        z: Dims,
        qkv: &[T],
        b: usize,
        h: usize,
        part: usize,
        from: usize,
        rotate: bool,
        dst: &mut [T],
    ) {
        let (dh, half) = (z.dh, z.dh / 2);
        for (i, row) in dst.chunks_exact_mut(dh).enumerate() {
            let pos = from + i;
            let src = &qkv[(b * z.l + pos) * 3 * z.d + part * z.d + h * dh..][..dh];
            if rotate && !c.cos.is_empty() {
                let (cs, sn) = (&c.cos[pos * dh..][..dh], &c.sin[pos * dh..][..dh]);
                for k in 0..half {
                    let (x1, x2) = (src[k], src[k + half]);
                    row[k] = x1 * cs[k] - x2 * sn[k];
                    row[k + half] = x2 * cs[k + half] + x1 * sn[k + half];
                }
            } else {
                row.copy_from_slice(src);
            }
        }
    }

    /// Adds `src` [(L − from) × d_h], the gradient with respect to the rotated head, into
    /// the gradient of qkv, rotated back (Rᵀ) when `rotate`.
    #[allow(clippy::too_many_arguments)]
    fn scatter<T: Real>(
        c: &Ctx<T>,
        z: Dims,
        dqkv: &mut [T],
        b: usize,
        h: usize,
        part: usize,
        from: usize,
        rotate: bool,
        src: &[T],
    ) {
        let (dh, half) = (z.dh, z.dh / 2);
        for (i, row) in src.chunks_exact(dh).enumerate() {
            let pos = from + i;
            let dst = &mut dqkv[(b * z.l + pos) * 3 * z.d + part * z.d + h * dh..][..dh];
            if rotate && !c.cos.is_empty() {
                let (cs, sn) = (&c.cos[pos * dh..][..dh], &c.sin[pos * dh..][..dh]);
                for k in 0..half {
                    let (g1, g2) = (row[k], row[k + half]);
                    dst[k] = g1 * cs[k] + g2 * sn[k + half];
                    dst[k + half] = g2 * cs[k + half] - g1 * sn[k];
                }
            } else {
                dst.copy_from_slice(row);
            }
        }
    }

    /// The rows of P for queries i0..i1 (of the n; position a = i + L − n) over keys lo..hi,
    /// into p [(i1 − i0) × (hi − lo)]; entries outside each row's visible range are 0.
    #[allow(clippy::too_many_arguments)]
    fn probs<T: Real>(
        &self,
        c: &Ctx<T>,
        z: Dims,
        q: &[T],
        k: &[T],
        rev: &[T],
        i0: usize,
        i1: usize,
        (lo, hi): (usize, usize),
        p: &mut [T],
    ) {
        let (dh, w) = (z.dh, hi - lo);
        let rows = i1 - i0;
        gemm_into(
            rows,
            w,
            dh,
            p,
            w,
            false,
            View {
                data: &q[i0 * dh..i1 * dh],
                rs: dh,
                cs: 1,
            },
            View {
                data: &k[lo * dh..hi * dh],
                rs: 1,
                cs: dh,
            },
        );
        wide(Normalise {
            p: &mut p[..rows * w],
            w,
            a0: i0 + z.l - z.n,
            lo,
            limit: self.limit,
            rev: &rev[..z.l],
            scale: c.scale,
        });
    }

    /// The key range lo..hi that queries i0..i1 can see.
    fn keys(&self, z: Dims, i0: usize, i1: usize) -> (usize, usize) {
        let a0 = i0 + z.l - z.n;
        (a0.saturating_sub(self.limit), i1 + z.l - z.n)
    }

    fn forward<T: Real>(&self, qkv: &[T], z: Dims) -> Vec<T> {
        let c = self.ctx::<T>(z);
        let (l, n, dh, d) = (z.l, z.n, z.dh, z.d);
        let mut out = vec![T::zero(); z.b * n * d];
        let (mut q, mut k, mut v) = (
            vec![T::zero(); n * dh],
            vec![T::zero(); l * dh],
            vec![T::zero(); l * dh],
        );
        let mut p = vec![T::zero(); BLOCK.min(n) * l];
        for b in 0..z.b {
            for h in 0..z.h {
                Self::gather(&c, z, qkv, b, h, 0, l - n, true, &mut q);
                Self::gather(&c, z, qkv, b, h, 1, 0, true, &mut k);
                Self::gather(&c, z, qkv, b, h, 2, 0, false, &mut v);
                let rev = &c.rev[if c.rev.len() == 1 { 0 } else { h }];
                for i0 in (0..n).step_by(BLOCK) {
                    let i1 = (i0 + BLOCK).min(n);
                    let (lo, hi) = self.keys(z, i0, i1);
                    self.probs(&c, z, &q, &k, rev, i0, i1, (lo, hi), &mut p);
                    let w = hi - lo;
                    gemm_into(
                        i1 - i0,
                        dh,
                        w,
                        &mut out[(b * n + i0) * d + h * dh..],
                        d,
                        false,
                        View {
                            data: &p,
                            rs: w,
                            cs: 1,
                        },
                        View {
                            data: &v[lo * dh..hi * dh],
                            rs: dh,
                            cs: 1,
                        },
                    );
                }
            }
        }
        out
    }

    fn backward<T: Real>(&self, qkv: &[T], o: &[T], g: &[T], z: Dims) -> Vec<T> {
        let c = self.ctx::<T>(z);
        let (l, n, dh, d) = (z.l, z.n, z.dh, z.d);
        let mut dqkv = vec![T::zero(); qkv.len()];
        let zeros = |len: usize| vec![T::zero(); len];
        let (mut q, mut k, mut v) = (zeros(n * dh), zeros(l * dh), zeros(l * dh));
        let (mut go, mut oo) = (zeros(n * dh), zeros(n * dh));
        let (mut dq, mut dk, mut dv) = (zeros(n * dh), zeros(l * dh), zeros(l * dh));
        let mut delta = zeros(n);
        let (mut p, mut ds) = (zeros(BLOCK.min(n) * l), zeros(BLOCK.min(n) * l));
        for b in 0..z.b {
            for h in 0..z.h {
                Self::gather(&c, z, qkv, b, h, 0, l - n, true, &mut q);
                Self::gather(&c, z, qkv, b, h, 1, 0, true, &mut k);
                Self::gather(&c, z, qkv, b, h, 2, 0, false, &mut v);
                for i in 0..n {
                    let at = (b * n + i) * d + h * dh;
                    go[i * dh..(i + 1) * dh].copy_from_slice(&g[at..at + dh]);
                    oo[i * dh..(i + 1) * dh].copy_from_slice(&o[at..at + dh]);
                    let mut s = T::zero();
                    for t in 0..dh {
                        s += go[i * dh + t] * oo[i * dh + t];
                    }
                    delta[i] = s;
                }
                dk.fill(T::zero());
                dv.fill(T::zero());
                let rev = &c.rev[if c.rev.len() == 1 { 0 } else { h }];
                for i0 in (0..n).step_by(BLOCK) {
                    let i1 = (i0 + BLOCK).min(n);
                    let rows = i1 - i0;
                    let (lo, hi) = self.keys(z, i0, i1);
                    let w = hi - lo;
                    self.probs(&c, z, &q, &k, rev, i0, i1, (lo, hi), &mut p);
                    let gblk = View {
                        data: &go[i0 * dh..i1 * dh],
                        rs: dh,
                        cs: 1,
                    };
                    // dP = dO·Vᵀ, then dS = scale·P ⊙ (dP − δ) in place (0 where P is 0)
                    gemm_into(
                        rows,
                        w,
                        dh,
                        &mut ds,
                        w,
                        false,
                        gblk,
                        View {
                            data: &v[lo * dh..hi * dh],
                            rs: 1,
                            cs: dh,
                        },
                    );
                    wide(ScoreGrad {
                        ds: &mut ds[..rows * w],
                        p: &p[..rows * w],
                        w,
                        delta: &delta[i0..i1],
                        scale: c.scale,
                    });
                    // dQ = dS·K, dK += dSᵀ·Q, dV += Pᵀ·dO
                    gemm_into(
                        rows,
                        dh,
                        w,
                        &mut dq[i0 * dh..i1 * dh],
                        dh,
                        false,
                        View {
                            data: &ds,
                            rs: w,
                            cs: 1,
                        },
                        View {
                            data: &k[lo * dh..hi * dh],
                            rs: dh,
                            cs: 1,
                        },
                    );
                    gemm_into(
                        w,
                        dh,
                        rows,
                        &mut dk[lo * dh..hi * dh],
                        dh,
                        true,
                        View {
                            data: &ds,
                            rs: 1,
                            cs: w,
                        },
                        View {
                            data: &q[i0 * dh..i1 * dh],
                            rs: dh,
                            cs: 1,
                        },
                    );
                    gemm_into(
                        w,
                        dh,
                        rows,
                        &mut dv[lo * dh..hi * dh],
                        dh,
                        true,
                        View {
                            data: &p,
                            rs: 1,
                            cs: w,
                        },
                        gblk,
                    );
                }
                Self::scatter(&c, z, &mut dqkv, b, h, 0, l - n, true, &dq);
                Self::scatter(&c, z, &mut dqkv, b, h, 1, 0, true, &dk);
                Self::scatter(&c, z, &mut dqkv, b, h, 2, 0, false, &dv);
            }
        }
        dqkv
    }
}

impl CustomOp1 for Attention {
    fn name(&self) -> &'static str {
        "attncheck-attention"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let z = self.dims(l)?;
        let out = match s {
            CpuStorage::F32(_) => CpuStorage::F32(self.forward::<f32>(crate::ops::slice(s, l)?, z)),
            CpuStorage::F64(_) => CpuStorage::F64(self.forward::<f64>(crate::ops::slice(s, l)?, z)),
            _ => candle_core::bail!("attention: f32 or f64"),
        };
        Ok((out, Shape::from((z.b, z.n, z.d))))
    }

    fn bwd(&self, qkv: &Tensor, res: &Tensor, g: &Tensor) -> Result<Option<Tensor>> {
        fn go<T: Real>(op: &Attention, qkv: &Tensor, res: &Tensor, g: &Tensor) -> Result<Tensor> {
            let z = op.dims(qkv.layout())?;
            let d = with_data::<T, _>(qkv, |x| {
                with_data::<T, _>(res, |o| {
                    with_data::<T, _>(g, |gg| Ok(op.backward(x, o, gg, z)))
                })
            })?;
            Tensor::from_vec(d, qkv.shape(), qkv.device())
        }
        Ok(Some(match qkv.dtype() {
            DType::F32 => go::<f32>(self, qkv, res, g)?,
            DType::F64 => go::<f64>(self, qkv, res, g)?,
            other => candle_core::bail!("attention: unsupported dtype {other:?}"),
        }))
    }
}

/// softmax(scale·QKᵀ + bias, masked to 0 ≤ a − j ≤ limit)·V per head, from the fused
/// projection qkv [B, L, 3d], for the last `op.last` positions: [B, last, d]. CPU only.
pub fn attention(qkv: &Tensor, op: Attention) -> Result<Tensor> {
    qkv.contiguous()?.apply_op1(op)
}
