//! Single-threaded matrix products on the CPU, with a backward pass.
//!
//! candle's CPU matmul hands every product to `gemm` with rayon parallelism whenever the
//! machine has more than one core; for the tiny products of these models (32 × 8 × 32 per
//! head) the fork/join costs more than the arithmetic (the quick model trains 2× faster
//! with it off). Here each product is one sequential `gemm` call, and parallelism comes
//! from running independent models side by side. The sum order of every entry is fixed
//! by `gemm`'s blocking, so results do not depend on any thread count. Other devices use
//! candle's own matmul.

use crate::ops::{slice, tensor, wide, with_data, Real, Wide};
use candle_core::{
    CpuStorage, CustomOp2, CustomOp3, DType, Layout, Result, Shape, Storage, Tensor, D,
};

/// A matrix view: `rows × cols` entries of `data`, entry (i, j) at `i·rs + j·cs`.
#[derive(Clone, Copy)]
pub(crate) struct View<'a, T> {
    pub data: &'a [T],
    pub rs: usize,
    pub cs: usize,
}

/// The largest index a `rows × cols` view with strides (rs, cs) reads, plus one.
fn extent(rows: usize, cols: usize, rs: usize, cs: usize) -> usize {
    if rows == 0 || cols == 0 {
        0
    } else {
        (rows - 1) * rs + (cols - 1) * cs + 1
    }
}

/// dst[m × n] (row stride `drs`, column stride 1) = a[m × k]·b[k × n], plus dst's old
/// value when `acc`; one sequential `gemm` call (its blocking fixes every entry's sum order),
/// bounds checked here so that callers need no `unsafe`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_into<T: Real>(
    m: usize,
    n: usize,
    k: usize,
    dst: &mut [T],
    drs: usize,
    acc: bool,
    a: View<'_, T>,
    b: View<'_, T>,
) {
    assert!(
        extent(m, n, drs, 1) <= dst.len()
            && extent(m, k, a.rs, a.cs) <= a.data.len()
            && extent(k, n, b.rs, b.cs) <= b.data.len(),
        "gemm_into: a view exceeds its slice"
    );
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !acc {
            for i in 0..m {
                dst[i * drs..i * drs + n].fill(T::zero());
            }
        }
        return;
    }
    // SAFETY: the assertion above keeps every index gemm touches (i·rs + j·cs over the
    // stated shapes) inside the three slices; dst is borrowed mutably, so it aliases neither
    // input.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            drs as isize,
            acc,
            a.data.as_ptr(),
            a.cs as isize,
            a.rs as isize,
            b.data.as_ptr(),
            b.cs as isize,
            b.rs as isize,
            T::one(),
            T::one(),
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

struct Mm;

fn dims(l: &Layout) -> Result<(usize, usize, usize)> {
    let d = l.dims();
    if d.len() < 2 {
        candle_core::bail!("mm: rank {} < 2", d.len());
    }
    let (r, c) = (d[d.len() - 2], d[d.len() - 1]);
    Ok((l.shape().elem_count() / (r * c).max(1), r, c))
}

fn run<T: Real>(a: &[T], la: &Layout, b: &[T], lb: &Layout) -> Result<(Vec<T>, Shape)> {
    let (ba, m, k) = dims(la)?;
    let (bb, k2, n) = dims(lb)?;
    if k != k2 || !(bb == ba || bb == 1) {
        candle_core::bail!("mm: shapes {:?} × {:?}", la.dims(), lb.dims());
    }
    let mut dst = vec![T::zero(); ba * m * n];
    for s in 0..ba {
        let a = &a[s * m * k..(s + 1) * m * k];
        let b = if bb == 1 {
            b
        } else {
            &b[s * k * n..(s + 1) * k * n]
        };
        gemm_into(
            m,
            n,
            k,
            &mut dst[s * m * n..(s + 1) * m * n],
            n,
            false,
            View {
                data: a,
                rs: k,
                cs: 1,
            },
            View {
                data: b,
                rs: n,
                cs: 1,
            },
        );
    }
    let mut shape = la.dims().to_vec();
    let last = shape.len() - 1;
    shape[last] = n;
    Ok((dst, Shape::from(shape)))
}

impl CustomOp2 for Mm {
    fn name(&self) -> &'static str {
        "attncheck-mm"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        match (s1, s2) {
            (CpuStorage::F32(_), CpuStorage::F32(_)) => {
                let (v, s) = run::<f32>(slice(s1, l1)?, l1, slice(s2, l2)?, l2)?;
                Ok((CpuStorage::F32(v), s))
            }
            (CpuStorage::F64(_), CpuStorage::F64(_)) => {
                let (v, s) = run::<f64>(slice(s1, l1)?, l1, slice(s2, l2)?, l2)?;
                Ok((CpuStorage::F64(v), s))
            }
            _ => candle_core::bail!("mm: f32 or f64 operands of one type"),
        }
    }

    fn bwd(
        &self,
        a: &Tensor,
        b: &Tensor,
        _res: &Tensor,
        g: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        if b.rank() == 2 {
            // a [..., k] as rows × k: the same products as a linear layer without bias
            let (da, db, _) = linear_bwd(a, b, None, g, false)?;
            return Ok((Some(da), db));
        }
        let ga = mm(g, &b.transpose(D::Minus2, D::Minus1)?)?;
        let gb = mm(&a.transpose(D::Minus2, D::Minus1)?, g)?;
        Ok((Some(ga), Some(gb)))
    }
}

/// a · b for a [..., m, k] and b [..., k, n] (the same leading dims) or [k, n]; on the CPU one
/// sequential `gemm` per product, elsewhere candle's matmul.
pub fn mm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if !a.device().is_cpu() {
        return if b.rank() == 2 && a.rank() > 2 {
            a.broadcast_matmul(b)
        } else {
            a.matmul(b)
        };
    }
    a.contiguous()?.apply_op2(&b.contiguous()?, Mm)
}

/// A linear layer y = x·W + b (optionally ReLU(x·W + b)) for x [..., k], W [k, n], b \[n\], as
/// one operation: the bias is the product's starting value and the ReLU is applied in
/// place, so the layer allocates one tensor forward and three backward (candle's broadcast
/// add and ReLU each add a pass and a tensor, and their backward passes several).
#[derive(Clone, Copy, Debug)]
pub struct Linear {
    /// Apply ReLU to the output.
    pub relu: bool,
}

/// x > 0 (false for NaN: ReLU and its gradient send NaN to 0).
fn positive<T: Real>(x: T) -> bool {
    x.partial_cmp(&T::zero()) == Some(std::cmp::Ordering::Greater)
}

fn linear_fwd<T: Real>(x: &[T], w: &[T], b: &[T], k: usize, n: usize, relu: bool) -> Vec<T> {
    let rows = x.len() / k;
    let mut y = Vec::with_capacity(rows * n);
    for _ in 0..rows {
        y.extend_from_slice(b);
    }
    gemm_into(
        rows,
        n,
        k,
        &mut y,
        n,
        true,
        View {
            data: x,
            rs: k,
            cs: 1,
        },
        View {
            data: w,
            rs: n,
            cs: 1,
        },
    );
    if relu {
        wide(Relu(&mut y));
    }
    y
}

/// ReLU in place (NaN to 0).
struct Relu<'a, T>(&'a mut [T]);

impl<T: Real> Wide for Relu<'_, T> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        for v in self.0.iter_mut() {
            if !positive(*v) {
                *v = T::zero();
            }
        }
    }
}

/// The upstream gradient g masked where the ReLU's output y is not positive.
struct ReluGrad<'a, T>(&'a [T], &'a [T]);

impl<T: Real> Wide for ReluGrad<'_, T> {
    type Out = Vec<T>;
    #[inline(always)]
    fn run(self) -> Vec<T> {
        self.0
            .iter()
            .zip(self.1)
            .map(|(&gk, &yk)| if positive(yk) { gk } else { T::zero() })
            .collect()
    }
}

/// Σ over rows of g [rows × n], in row order.
struct BiasGrad<'a, T>(&'a [T], usize);

impl<T: Real> Wide for BiasGrad<'_, T> {
    type Out = Vec<T>;
    #[inline(always)]
    fn run(self) -> Vec<T> {
        let mut db = vec![T::zero(); self.1];
        for r in self.0.chunks_exact(self.1) {
            for (d, &v) in db.iter_mut().zip(r) {
                *d += v;
            }
        }
        db
    }
}

/// (dx, dW, db) of a linear layer for the upstream gradient g, with `y` the layer's output
/// when it ends in a ReLU (the gradient passes where y > 0); db when `with_bias`. dW is
/// `None` when W does not track gradients (a frozen model's weights, e.g. in the receptive-field
/// measurement, where only the gradient reaching the input is read): nothing would
/// receive them, and dx does not depend on them.
fn linear_bwd(
    x: &Tensor,
    w: &Tensor,
    y: Option<&Tensor>,
    g: &Tensor,
    with_bias: bool,
) -> Result<(Tensor, Option<Tensor>, Option<Tensor>)> {
    fn go<T: Real>(
        x: &Tensor,
        w: &Tensor,
        y: Option<&Tensor>,
        g: &Tensor,
        with_bias: bool,
    ) -> Result<(Tensor, Option<Tensor>, Option<Tensor>)> {
        let (k, n) = w.dims2()?;
        // the upstream gradient, masked by the ReLU (a copy) or as it is (no copy)
        let g = g.contiguous()?;
        let (gs, gl) = g.storage_and_layout();
        let Storage::Cpu(gc) = &*gs else {
            candle_core::bail!("linear: CPU tensors only")
        };
        let graw: &[T] = slice(gc, gl)?;
        let masked: Option<Vec<T>> = match y {
            Some(y) => Some(with_data::<T, _>(y, |ys| {
                if ys.len() != graw.len() {
                    candle_core::bail!("linear: output and gradient sizes differ");
                }
                Ok(wide(ReluGrad(graw, ys)))
            })?),
            None => None,
        };
        let gv: &[T] = masked.as_deref().unwrap_or(graw);
        let rows = gv.len() / n;
        let mut dx = vec![T::zero(); rows * k];
        with_data::<T, _>(w, |ws| {
            // dx = g·Wᵀ
            gemm_into(
                rows,
                k,
                n,
                &mut dx,
                k,
                false,
                View {
                    data: gv,
                    rs: n,
                    cs: 1,
                },
                View {
                    data: ws,
                    rs: 1,
                    cs: n,
                },
            );
            Ok(())
        })?;
        let db = if with_bias {
            Some(tensor(wide(BiasGrad(gv, n)), n, w)?)
        } else {
            None
        };
        if !w.track_op() {
            return Ok((tensor(dx, x.shape(), x)?, None, db));
        }
        let mut dw = vec![T::zero(); k * n];
        with_data::<T, _>(x, |xs| {
            // dW = xᵀ·g
            gemm_into(
                k,
                n,
                rows,
                &mut dw,
                n,
                false,
                View {
                    data: xs,
                    rs: 1,
                    cs: k,
                },
                View {
                    data: gv,
                    rs: n,
                    cs: 1,
                },
            );
            Ok(())
        })?;
        Ok((tensor(dx, x.shape(), x)?, Some(tensor(dw, (k, n), w)?), db))
    }
    match x.dtype() {
        DType::F32 => go::<f32>(x, w, y, g, with_bias),
        DType::F64 => go::<f64>(x, w, y, g, with_bias),
        other => candle_core::bail!("linear: unsupported dtype {other:?}"),
    }
}

impl CustomOp3 for Linear {
    fn name(&self) -> &'static str {
        "attncheck-linear"
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
        let (k, n) = match l2.dims() {
            &[k, n] => (k, n),
            other => candle_core::bail!("linear: weight of shape {other:?}"),
        };
        if l1.dims().last() != Some(&k) || l3.dims() != [n] {
            candle_core::bail!(
                "linear: x {:?}, W {:?}, b {:?}",
                l1.dims(),
                l2.dims(),
                l3.dims()
            );
        }
        let mut shape = l1.dims().to_vec();
        *shape.last_mut().expect("rank ≥ 1") = n;
        let out = match s1 {
            CpuStorage::F32(_) => CpuStorage::F32(linear_fwd::<f32>(
                slice(s1, l1)?,
                slice(s2, l2)?,
                slice(s3, l3)?,
                k,
                n,
                self.relu,
            )),
            CpuStorage::F64(_) => CpuStorage::F64(linear_fwd::<f64>(
                slice(s1, l1)?,
                slice(s2, l2)?,
                slice(s3, l3)?,
                k,
                n,
                self.relu,
            )),
            _ => candle_core::bail!("linear: f32 or f64"),
        };
        Ok((out, Shape::from(shape)))
    }

    fn bwd(
        &self,
        x: &Tensor,
        w: &Tensor,
        b: &Tensor,
        res: &Tensor,
        g: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        // db only when b tracks gradients (see linear_bwd for dW)
        let (dx, dw, db) = linear_bwd(x, w, self.relu.then_some(res), g, b.track_op())?;
        Ok((Some(dx), dw, db))
    }
}

/// x·W + b, ReLU'd when `relu`, on the CPU as one operation ([`Linear`]), elsewhere with
/// candle's operations.
pub fn linear(x: &Tensor, w: &Tensor, b: &Tensor, relu: bool) -> Result<Tensor> {
    if !x.device().is_cpu() {
        let y = x.broadcast_matmul(w)?.broadcast_add(b)?;
        return if relu { y.relu() } else { Ok(y) };
    }
    x.contiguous()?
        .apply_op3(&w.contiguous()?, &b.contiguous()?, Linear { relu })
}
