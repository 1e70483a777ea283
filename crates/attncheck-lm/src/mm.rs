//! Single-threaded matrix products on the CPU, with a backward pass.
//!
//! candle's CPU matmul hands every product to `gemm` with rayon parallelism whenever the
//! machine has more than one core; for the tiny products of these models (32 × 8 × 32 per
//! head) the fork/join costs more than the arithmetic (the quick model trains 2× faster
//! with it off). Here each product is one sequential `gemm` call, and parallelism comes
//! from running independent models side by side. The sum order of every entry is fixed
//! by `gemm`'s blocking, so results do not depend on any thread count. Other devices use
//! candle's own matmul.

use candle_core::{CpuStorage, CustomOp2, Layout, Result, Shape, Tensor, D};

struct Mm;

fn dims(l: &Layout) -> Result<(usize, usize, usize)> {
    let d = l.dims();
    if d.len() < 2 {
        candle_core::bail!("mm: rank {} < 2", d.len());
    }
    let (r, c) = (d[d.len() - 2], d[d.len() - 1]);
    Ok((l.shape().elem_count() / (r * c).max(1), r, c))
}

fn run<T: candle_core::WithDType + num_traits::Zero + num_traits::One + 'static>(
    a: &[T],
    la: &Layout,
    b: &[T],
    lb: &Layout,
) -> Result<(Vec<T>, Shape)> {
    let (Some((oa, _)), Some((ob, _))) = (la.contiguous_offsets(), lb.contiguous_offsets()) else {
        candle_core::bail!("mm: inputs must be contiguous")
    };
    let (ba, m, k) = dims(la)?;
    let (bb, k2, n) = dims(lb)?;
    if k != k2 || !(bb == ba || bb == 1) {
        candle_core::bail!("mm: shapes {:?} × {:?}", la.dims(), lb.dims());
    }
    let mut dst = vec![T::zero(); ba * m * n];
    for s in 0..ba {
        let a = &a[oa + s * m * k..];
        let b = &b[ob + if bb == 1 { 0 } else { s * k * n }..];
        let c = &mut dst[s * m * n..];
        // SAFETY: the three slices hold at least m·k, k·n and m·n elements from their
        // starts (checked shapes, contiguous row-major layouts), matching the strides.
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                c.as_mut_ptr(),
                1,
                n as isize,
                false,
                a.as_ptr(),
                1,
                k as isize,
                b.as_ptr(),
                1,
                n as isize,
                T::zero(),
                T::one(),
                false,
                false,
                false,
                gemm::Parallelism::None,
            );
        }
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
            (CpuStorage::F32(a), CpuStorage::F32(b)) => {
                let (v, s) = run(a, l1, b, l2)?;
                Ok((CpuStorage::F32(v), s))
            }
            (CpuStorage::F64(a), CpuStorage::F64(b)) => {
                let (v, s) = run(a, l1, b, l2)?;
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
        let ga = mm(g, &b.transpose(D::Minus2, D::Minus1)?)?;
        let gb = if b.rank() == 2 && a.rank() > 2 {
            let k = a.dim(D::Minus1)?;
            let n = g.dim(D::Minus1)?;
            let a2 = a.reshape(((), k))?;
            let g2 = g.reshape(((), n))?;
            mm(&a2.t()?, &g2)?
        } else {
            mm(&a.transpose(D::Minus2, D::Minus1)?, g)?
        };
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
