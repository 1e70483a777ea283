//! Fused CPU operations with their own backward passes: layer norm and the mean
//! cross-entropy, plus the numeric helpers every kernel of this crate shares (an `e^x` that
//! vectorises, a sum in a fixed order).
//!
//! Composed of candle operations, a layer norm is eight passes over its input, each
//! allocating a tensor, and its backward pass about as many again; the cross-entropy's
//! log-softmax over 256 logits per token is the largest tensor of a training step. Here each
//! is one loop over rows in the tensor's own type (f32 for training, f64 for the gradient
//! tests), and the backward pass recomputes the row statistics instead of storing them.
//! Every sum runs in an order fixed by the shapes alone (never by a thread count), so a
//! result is the same bytes on every run.

use candle_core::{CpuStorage, CustomOp2, CustomOp3, Layout, Result, Shape, Storage, Tensor};

/// The float types the kernels run in: f32 (training, evaluation) and f64 (tests).
pub trait Real: candle_core::WithDType {
    /// −∞.
    const NEG_INF: Self;
    /// √x.
    fn sqrt_(self) -> Self;
    /// The larger of two numbers (the first if either is NaN).
    #[inline(always)]
    fn max_(self, o: Self) -> Self {
        if o > self {
            o
        } else {
            self
        }
    }
    /// e^x in place for every x ≤ 0 (−∞ gives 0). f32: [`exp_nonpos_f32`] (a fixed
    /// polynomial, relative error below 32·2⁻²⁴, the same bits on every machine and
    /// vectorised); f64: the standard library's `exp` (the reference the tests compare with).
    fn exp_nonpos(xs: &mut [Self]);
}

impl Real for f32 {
    const NEG_INF: f32 = f32::NEG_INFINITY;
    fn sqrt_(self) -> f32 {
        self.sqrt()
    }
    #[inline(always)]
    fn exp_nonpos(xs: &mut [f32]) {
        for x in xs.iter_mut() {
            *x = exp_nonpos_f32(*x);
        }
    }
}

impl Real for f64 {
    const NEG_INF: f64 = f64::NEG_INFINITY;
    fn sqrt_(self) -> f64 {
        self.sqrt()
    }
    fn exp_nonpos(xs: &mut [f64]) {
        for x in xs.iter_mut() {
            *x = x.exp();
        }
    }
}

/// e^x for x ≤ 0 in f32, without the C library (whose `expf` is a call per element, picks
/// an FMA variant by CPU, and was a third of a training step at L = 512).
///
/// x < −87 gives 0 (e^−87 ≈ 1.6·10⁻³⁸, at the bottom of f32's normal range). Otherwise
/// x = n·ln 2 + r with n = ⌊x·log₂e + ½⌋ and r = (x − n·C₁) − n·C₂ (Cody–Waite: C₁ = 355/512
/// has 9 bits, so n·C₁ is exact for |n| ≤ 126), |r| ≤ 0.35; e^r is the degree-7 Taylor
/// polynomial by Horner (truncation ≤ 0.35⁸/8!·e^0.35 < 0.2·2⁻²⁴ relative), and 2ⁿ is put
/// into the exponent bits. Rounding: Horner with 7 rounded coefficients and 14 operations
/// stays within γ₁₅·e^0.35/e^−0.35 < 31·2⁻²⁴ relative, so the total is below 32·2⁻²⁴
/// (checked over 2·10⁶ points by `exp_nonpos_f32_is_within_its_stated_bound`). Only +, −, ×,
/// floor and bit moves, no fused multiply-add: the same bits on every IEEE machine.
#[inline(always)]
pub fn exp_nonpos_f32(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const C1: f32 = 0.693_359_4; // 355/512
    const C2: f32 = -2.121_944_4e-4; // ln 2 − 355/512
    let xc = if x < -87.0 { -87.0 } else { x };
    let n = (xc * LOG2E + 0.5).floor();
    let r = (xc - n * C1) - n * C2;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0
                    + r * (1.0 / 24.0
                        + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    // 2ⁿ from n's bits without a float-to-integer conversion (whose saturating semantics
    // keep the loop from vectorising): m = 2²³ + (n + 127) is exact for the n here (−126 ≤ n
    // ≤ 0 when x ≤ 0), and its low mantissa bits are the integer n + 127, the exponent field
    // of 2ⁿ; the same bits as ((n as i32 + 127) as u32) << 23
    // (`exp_nonpos_f32_bits_are_those_of_the_integer_conversion` checks every x ≤ 0)
    let m = (n + 127.0) + 8_388_608.0;
    let two_n = f32::from_bits(m.to_bits().wrapping_sub(0x4B00_0000) << 23);
    if x < -87.0 {
        0.0
    } else {
        p * two_n
    }
}

/// A loop nest to run through [`wide`]: `run` must be `#[inline(always)]`, so that its body
/// is compiled inside `wide`'s target-feature functions (a closure would stay a call).
pub(crate) trait Wide {
    /// What the loops return.
    type Out;
    /// The loops.
    fn run(self) -> Self::Out;
}

/// Runs `k` compiled for the CPU's widest vector instructions (AVX-512F, else AVX2, on
/// x86-64; the crate itself is built for x86-64-v2, four f32 lanes). Speed only: the same IEEE
/// operations on each element in the same order, more elements per instruction, so the same
/// bits. No fused multiply-add appears (rustc never contracts a product and a sum), and the
/// loops' order cannot depend on the vector width (the compiler may not reassociate floating
/// point; sums go through [`sum_fixed`]).
#[inline(always)]
pub(crate) fn wide<K: Wide>(k: K) -> K::Out {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F
            return unsafe { wide_avx512(k) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2
            return unsafe { wide_avx2(k) };
        }
    }
    k.run()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn wide_avx512<K: Wide>(k: K) -> K::Out {
    k.run()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn wide_avx2<K: Wide>(k: K) -> K::Out {
    k.run()
}

/// The largest of xs (−∞ for none; NaN is never taken, as [`Real::max_`]), over 16 lanes
/// (which vectorises) combined in order. The maximum of a set does not depend on the order
/// of comparison except for the sign of a zero maximum (+0 and −0 compare equal), which no
/// caller can see: each subtracts it from values it bounds (x − (±0) = x for x ≠ 0, and
/// e^{±0} = 1).
#[inline(always)]
pub fn max_lanes<T: Real>(xs: &[T]) -> T {
    let mut acc = [T::NEG_INF; 16];
    let chunks = xs.chunks_exact(16);
    let rest = chunks.remainder();
    for c in chunks {
        for k in 0..16 {
            acc[k] = acc[k].max_(c[k]);
        }
    }
    let mut m = T::NEG_INF;
    for &a in acc.iter().chain(rest) {
        m = m.max_(a);
    }
    m
}

/// Σ xs in a fixed order: eight running sums over the indices mod 8 (which vectorises),
/// combined pairwise, then the remainder left to right. The order depends on the length only.
#[inline(always)]
pub fn sum_fixed<T: Real>(xs: &[T]) -> T {
    let mut acc = [T::zero(); 8];
    let chunks = xs.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for k in 0..8 {
            acc[k] += c[k];
        }
    }
    let mut s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for &x in rest {
        s += x;
    }
    s
}

/// The contiguous data of a CPU storage.
pub(crate) fn slice<'a, T: Real>(s: &'a CpuStorage, l: &Layout) -> Result<&'a [T]> {
    let Some((a, b)) = l.contiguous_offsets() else {
        candle_core::bail!("fused op: inputs must be contiguous")
    };
    Ok(&T::cpu_storage_as_slice(s)?[a..b])
}

/// Runs `f` on the contiguous CPU data of `t`.
pub(crate) fn with_data<T: Real, R>(t: &Tensor, f: impl FnOnce(&[T]) -> Result<R>) -> Result<R> {
    let t = t.contiguous()?;
    let (s, l) = t.storage_and_layout();
    let Storage::Cpu(c) = &*s else {
        candle_core::bail!("fused op: CPU tensors only")
    };
    f(slice::<T>(c, l)?)
}

/// A tensor from a vector, with the shape of `like` (or `shape`) and its device.
pub(crate) fn tensor<T: Real>(v: Vec<T>, shape: impl Into<Shape>, like: &Tensor) -> Result<Tensor> {
    Tensor::from_vec(v, shape, like.device())
}

/// Layer norm over the last dimension: y = (x − mean)/√(var + eps)·w + b, with the
/// population variance, for x [..., d], w and b \[d\].
#[derive(Clone, Copy, Debug)]
pub struct LayerNorm {
    /// Added to the variance.
    pub eps: f64,
}

impl LayerNorm {
    /// (mean, 1/√(var + eps)) of one row.
    #[inline(always)]
    fn stats<T: Real>(&self, x: &[T]) -> (T, T) {
        let d = T::from_f64(x.len() as f64);
        let mean = sum_fixed(x) / d;
        let mut sq = [T::zero(); 8];
        let chunks = x.chunks_exact(8);
        let rest = chunks.remainder();
        for c in chunks {
            for k in 0..8 {
                let e = c[k] - mean;
                sq[k] += e * e;
            }
        }
        let mut s = ((sq[0] + sq[1]) + (sq[2] + sq[3])) + ((sq[4] + sq[5]) + (sq[6] + sq[7]));
        for &v in rest {
            let e = v - mean;
            s += e * e;
        }
        let var = s / d;
        (mean, T::one() / (var + T::from_f64(self.eps)).sqrt_())
    }

    #[inline(always)]
    fn fwd<T: Real>(&self, x: &[T], w: &[T], b: &[T]) -> Vec<T> {
        let d = w.len();
        let mut y = vec![T::zero(); x.len()];
        for (xr, yr) in x.chunks_exact(d).zip(y.chunks_exact_mut(d)) {
            let (mean, inv) = self.stats(xr);
            for k in 0..d {
                yr[k] = (xr[k] - mean) * inv * w[k] + b[k];
            }
        }
        y
    }

    /// (dx, dw, db) for the upstream gradient g.
    #[inline(always)]
    fn bwd<T: Real>(&self, x: &[T], w: &[T], g: &[T]) -> (Vec<T>, Vec<T>, Vec<T>) {
        let d = w.len();
        let dt = T::from_f64(d as f64);
        let mut dx = vec![T::zero(); x.len()];
        let (mut dw, mut db) = (vec![T::zero(); d], vec![T::zero(); d]);
        let (mut xh, mut gy) = (vec![T::zero(); d], vec![T::zero(); d]);
        let mut prod = vec![T::zero(); d];
        for ((xr, gr), dxr) in x
            .chunks_exact(d)
            .zip(g.chunks_exact(d))
            .zip(dx.chunks_exact_mut(d))
        {
            let (mean, inv) = self.stats(xr);
            for k in 0..d {
                xh[k] = (xr[k] - mean) * inv;
                gy[k] = gr[k] * w[k];
                prod[k] = gy[k] * xh[k];
                dw[k] += gr[k] * xh[k];
                db[k] += gr[k];
            }
            let mg = sum_fixed(&gy) / dt;
            let mp = sum_fixed(&prod) / dt;
            for k in 0..d {
                dxr[k] = inv * (gy[k] - mg - xh[k] * mp);
            }
        }
        (dx, dw, db)
    }
}

struct LnFwd<'a, T>(&'a LayerNorm, &'a [T], &'a [T], &'a [T]);

impl<T: Real> Wide for LnFwd<'_, T> {
    type Out = Vec<T>;
    #[inline(always)]
    fn run(self) -> Vec<T> {
        self.0.fwd(self.1, self.2, self.3)
    }
}

struct LnBwd<'a, T>(&'a LayerNorm, &'a [T], &'a [T], &'a [T]);

impl<T: Real> Wide for LnBwd<'_, T> {
    type Out = (Vec<T>, Vec<T>, Vec<T>);
    #[inline(always)]
    fn run(self) -> (Vec<T>, Vec<T>, Vec<T>) {
        self.0.bwd(self.1, self.2, self.3)
    }
}

impl CustomOp3 for LayerNorm {
    fn name(&self) -> &'static str {
        "attncheck-layer-norm"
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
        let d = l2.shape().elem_count();
        if l1.dims().last() != Some(&d) || l3.shape().elem_count() != d {
            candle_core::bail!(
                "layer norm: x {:?}, w {:?}, b {:?}",
                l1.dims(),
                l2.dims(),
                l3.dims()
            );
        }
        let out = match s1 {
            CpuStorage::F32(_) => CpuStorage::F32(wide(LnFwd(
                self,
                slice(s1, l1)?,
                slice(s2, l2)?,
                slice(s3, l3)?,
            ))),
            CpuStorage::F64(_) => CpuStorage::F64(wide(LnFwd(
                self,
                slice(s1, l1)?,
                slice(s2, l2)?,
                slice(s3, l3)?,
            ))),
            _ => candle_core::bail!("layer norm: f32 or f64"),
        };
        Ok((out, l1.shape().clone()))
    }

    fn bwd(
        &self,
        x: &Tensor,
        w: &Tensor,
        _b: &Tensor,
        _res: &Tensor,
        g: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        fn go<T: Real>(
            op: &LayerNorm,
            x: &Tensor,
            w: &Tensor,
            g: &Tensor,
        ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
            let (dx, dw, db) = with_data::<T, _>(x, |xs| {
                with_data::<T, _>(w, |ws| {
                    with_data::<T, _>(g, |gs| Ok(wide(LnBwd(op, xs, ws, gs))))
                })
            })?;
            Ok((
                Some(tensor(dx, x.shape(), x)?),
                Some(tensor(dw, w.shape(), w)?),
                Some(tensor(db, w.shape(), w)?),
            ))
        }
        match x.dtype() {
            candle_core::DType::F32 => go::<f32>(self, x, w, g),
            candle_core::DType::F64 => go::<f64>(self, x, w, g),
            other => candle_core::bail!("layer norm: unsupported dtype {other:?}"),
        }
    }
}

/// The mean next-token cross-entropy (nats) of logits [N, V] against u32 targets \[N\], as a
/// scalar: (1/N)·Σ_r (log Σ_j e^{x_rj} − x_{r,t_r}). Each row's log-sum-exp is taken around
/// its maximum in the tensor's type; the N row losses are summed in f64, in row order.
#[derive(Clone, Copy, Debug)]
pub struct MeanNll;

impl MeanNll {
    #[inline(always)]
    fn fwd<T: Real>(x: &[T], t: &[u32], v: usize) -> Result<f64> {
        let mut e = vec![T::zero(); v];
        let mut total = 0.0f64;
        for (row, &ti) in x.chunks_exact(v).zip(t) {
            let ti = ti as usize;
            if ti >= v {
                candle_core::bail!("cross-entropy: target {ti} outside the vocabulary of {v}");
            }
            let m = row.iter().fold(T::NEG_INF, |a, &b| a.max_(b));
            for (ek, &xk) in e.iter_mut().zip(row) {
                *ek = xk - m;
            }
            T::exp_nonpos(&mut e);
            let z = sum_fixed(&e).to_f64();
            total += m.to_f64() + z.ln() - row[ti].to_f64();
        }
        Ok(total / t.len() as f64)
    }

    /// (g/N)·(softmax(x_r) − onehot(t_r)) per row.
    #[inline(always)]
    fn bwd<T: Real>(x: &[T], t: &[u32], v: usize, g: f64) -> Vec<T> {
        let mut out = vec![T::zero(); x.len()];
        let c = T::from_f64(g / t.len() as f64);
        for ((row, o), &ti) in x.chunks_exact(v).zip(out.chunks_exact_mut(v)).zip(t) {
            let m = row.iter().fold(T::NEG_INF, |a, &b| a.max_(b));
            for (ok, &xk) in o.iter_mut().zip(row) {
                *ok = xk - m;
            }
            T::exp_nonpos(o);
            let z = sum_fixed(o);
            for ok in o.iter_mut() {
                *ok = *ok / z * c;
            }
            o[ti as usize] -= c;
        }
        out
    }
}

struct NllFwd<'a, T>(&'a [T], &'a [u32], usize);

impl<T: Real> Wide for NllFwd<'_, T> {
    type Out = Result<f64>;
    #[inline(always)]
    fn run(self) -> Result<f64> {
        MeanNll::fwd(self.0, self.1, self.2)
    }
}

struct NllBwd<'a, T>(&'a [T], &'a [u32], usize, f64);

impl<T: Real> Wide for NllBwd<'_, T> {
    type Out = Vec<T>;
    #[inline(always)]
    fn run(self) -> Vec<T> {
        MeanNll::bwd(self.0, self.1, self.2, self.3)
    }
}

fn nll_dims(l1: &Layout, l2: &Layout) -> Result<(usize, usize)> {
    match (l1.dims(), l2.dims()) {
        (&[n, v], &[n2]) if n == n2 && n > 0 && v > 0 => Ok((n, v)),
        (a, b) => candle_core::bail!("cross-entropy: logits {a:?}, targets {b:?}"),
    }
}

impl CustomOp2 for MeanNll {
    fn name(&self) -> &'static str {
        "attncheck-mean-nll"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let (_, v) = nll_dims(l1, l2)?;
        let Some((a, b)) = l2.contiguous_offsets() else {
            candle_core::bail!("cross-entropy: targets must be contiguous")
        };
        let t = &<u32 as candle_core::WithDType>::cpu_storage_as_slice(s2)?[a..b];
        let out = match s1 {
            CpuStorage::F32(_) => {
                CpuStorage::F32(vec![wide(NllFwd(slice::<f32>(s1, l1)?, t, v))? as f32])
            }
            CpuStorage::F64(_) => CpuStorage::F64(vec![wide(NllFwd(slice::<f64>(s1, l1)?, t, v))?]),
            _ => candle_core::bail!("cross-entropy: f32 or f64 logits"),
        };
        Ok((out, Shape::from(())))
    }

    fn bwd(
        &self,
        x: &Tensor,
        t: &Tensor,
        _res: &Tensor,
        g: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let v = x.dim(1)?;
        let gs = g.to_dtype(candle_core::DType::F64)?.to_scalar::<f64>()?;
        let ts: Vec<u32> = t.flatten_all()?.to_vec1::<u32>()?;
        let dx = match x.dtype() {
            candle_core::DType::F32 => tensor(
                with_data::<f32, _>(x, |xs| Ok(wide(NllBwd(xs, &ts, v, gs))))?,
                x.shape(),
                x,
            )?,
            candle_core::DType::F64 => tensor(
                with_data::<f64, _>(x, |xs| Ok(wide(NllBwd(xs, &ts, v, gs))))?,
                x.shape(),
                x,
            )?,
            other => candle_core::bail!("cross-entropy: unsupported dtype {other:?}"),
        };
        Ok((Some(dx), None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_nonpos_f32_is_within_its_stated_bound() {
        // the bound stated on exp_nonpos_f32: relative error < 32·2⁻²⁴ on [−87, 0], against
        // the f64 exponential (whose own error, ~2⁻⁵³, is far below)
        let bound = 32.0 * f64::powi(2.0, -24);
        let n = 2_000_000;
        for i in 0..=n {
            let x = -87.0f32 * (i as f32 / n as f32);
            let got = exp_nonpos_f32(x) as f64;
            let want = (x as f64).exp();
            let rel = (got - want).abs() / want;
            assert!(rel < bound, "x = {x}: {got} vs {want}, relative {rel}");
        }
        assert_eq!(exp_nonpos_f32(0.0), 1.0);
        assert_eq!(exp_nonpos_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_nonpos_f32(-88.0), 0.0);
    }

    /// exp_nonpos_f32 as the trained scan computed it (2ⁿ by an integer conversion).
    fn exp_nonpos_f32_scan(x: f32) -> f32 {
        const LOG2E: f32 = std::f32::consts::LOG2_E;
        const C1: f32 = 0.693_359_4;
        const C2: f32 = -2.121_944_4e-4;
        let xc = if x < -87.0 { -87.0 } else { x };
        let n = (xc * LOG2E + 0.5).floor();
        let r = (xc - n * C1) - n * C2;
        let p = 1.0
            + r * (1.0
                + r * (0.5
                    + r * (1.0 / 6.0
                        + r * (1.0 / 24.0
                            + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
        let two_n = f32::from_bits(((n as i32 + 127) as u32) << 23);
        if x < -87.0 {
            0.0
        } else {
            p * two_n
        }
    }

    #[test]
    fn exp_nonpos_f32_bits_are_those_of_the_integer_conversion() {
        // f32s with the sign bit set (−0, the negative numbers, −∞ and the negative NaNs),
        // +0, and the positive NaNs, through the vectorised slice path; NaNs compare as NaNs
        // (their payloads are the hardware's). Every 97th bit pattern, or every one with
        // ATTNCHECK_LM_EXHAUSTIVE set (2.2·10⁹ patterns, a few CPU-minutes; run once when the
        // 2ⁿ construction changed, and passed)
        let step = if std::env::var_os("ATTNCHECK_LM_EXHAUSTIVE").is_some() {
            1
        } else {
            97
        };
        let mut xs: Vec<f32> = Vec::with_capacity(1 << 20);
        let check = |xs: &mut Vec<f32>| {
            let want: Vec<f32> = xs.iter().map(|&x| exp_nonpos_f32_scan(x)).collect();
            f32::exp_nonpos(xs);
            for (g, w) in xs.iter().zip(&want) {
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "{g} vs {w}"
                );
            }
            xs.clear();
        };
        let tops = (0x8000_0000u32..=u32::MAX)
            .step_by(step)
            .chain([u32::MAX, 0x8000_0000, 0xC2AE_0000, 0xC2AE_0001, 0])
            .chain((0x7F80_0001..0x8000_0000).step_by(step));
        for bits in tops {
            xs.push(f32::from_bits(bits));
            if xs.len() == 1 << 20 {
                check(&mut xs);
            }
        }
        check(&mut xs);
    }

    #[test]
    fn max_lanes_is_the_maximum() {
        for n in 0..50 {
            let v: Vec<f64> = (0..n).map(|k| ((k * 37) % 23) as f64 - 5.0).collect();
            let want = v.iter().fold(f64::NEG_INFINITY, |a, &b| a.max_(b));
            assert_eq!(max_lanes(&v), want, "n = {n}");
        }
        assert_eq!(max_lanes(&[f64::NAN, -1.0, f64::NAN]), -1.0);
    }

    #[test]
    fn sum_fixed_adds_every_element() {
        for n in 0..40 {
            let v: Vec<f64> = (0..n).map(|k| k as f64).collect();
            assert_eq!(sum_fixed(&v), (n * (n.max(1) - 1) / 2) as f64, "n = {n}");
        }
    }
}
