//! Dense double-double matrices and their one product kernel, vectorised through
//! `pulp` (AVX-512, AVX2, NEON or scalar, chosen at run time; `pulp` carries its own
//! `unsafe`, this crate none).
//!
//! A [`DdMat`] stores the `hi` and `lo` parts in two row-major f64 planes whose rows
//! are padded to a multiple of 8 entries, so that a vector of 8, 4, 2 or 1 lanes
//! loads consecutive columns. The kernel [`DdMat::product`] computes
//! `C = A·B` as, for every row i of A, `C_i = Σ_k A_ik B_k` (a combination of the
//! rows of B, `k` ascending, vectorised over the columns of C), accumulated in the
//! manner of Ogita, Rump and Oishi's Dot2 ("Accurate sum and dot product", SISC 26,
//! 2005) extended to dd inputs: per term `x·y` (x = A_ik, y = B_kc)
//!
//! ```text
//! p = RN(x_h y_h), e_p = RN(x_h y_h − p)            (two_prod: p + e_p = x_h y_h)
//! (s, e_s) = two_sum(s, p)                            (s + e_s = s_old + p)
//! c = RN(c + RN(e_p + e_s)); c = RN(x_h y_l + c); c = RN(x_l y_h + c)   (fused)
//! ```
//!
//! and finally `C_ic = two_sum(s, c)` as a dd number. Every lane runs the same IEEE
//! operations in the same order whatever the vector width, so the results are
//! bit-identical on every instruction set and for every thread count (rows are
//! independent; they are split among threads, never their sums).
//!
//! # Error bound
//!
//! With K terms, `Σ x_h y_h = s + Σ (e_p + e_s)` exactly (error-free
//! transformations). `c` sums the 4K values `e_p, e_s, x_h y_l, x_l y_h` recursively
//! (each product fused with its addition), so its error is at most `γ_{4K}` times
//! their absolute sum, `γ_m = mu/(1 − mu)`; with `|e_p| ≤ u|x_h y_h|`,
//! `|y_l| ≤ u|y_h|`, `|x_l| ≤ u|x_h|` and `Σ|e_s| ≤ γ_{K−1} Σ|x_h y_h|`
//! (Ogita–Rump–Oishi, Lemma 2.2 applied to the cascade of two_sums) that sum is
//! `≤ (3u + γ_K) Σ|x_h y_h|`; the dropped `x_l y_l` add `u² Σ|x_h y_h|`. So
//!
//! ```text
//! |C_ic − Σ_k A_ik B_kc| ≤ (γ_{4K}(3u + γ_K) + u²)·Σ_k |A_ik||B_kc|  ≈ (4K² + 12K + 1)u² Σ_k |A_ik||B_kc|,
//! ```
//!
//! e.g. `≤ 2^−90 Σ|A_ik||B_kc|` for K = 128: a worst case relative to the absolute
//! sum, like any dot product's (MPFR's block dot product in [`super::dot`] bounds its
//! error by `2^−prec |Σ| + K·2^{−prec−62}·max|A|·max|B|`). Terms with `A_ik = 0`
//! are skipped: they add exact zeros, and `s` and `c` start at +0 and can never
//! become −0 (a sum is −0 only when both operands are), so skipping changes no bit.

use super::dd::{two_sum, Dd};
use pulp::{Simd, WithSimd};

/// Row padding: every row holds a multiple of this many entries.
pub const PAD: usize = 8;

/// Which instruction set [`DdMat::product_in`] runs on (every one gives the same bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// The best this CPU has (`pulp`'s run-time dispatch).
    Auto,
    /// Plain scalar code (one lane).
    Scalar,
    /// AVX2 + FMA (4 lanes); `None` from [`Isa::available`] elsewhere.
    Avx2,
    /// AVX-512 (8 lanes); `None` from [`Isa::available`] elsewhere.
    Avx512,
}

impl Isa {
    /// Whether this CPU can run `self`.
    pub fn available(self) -> bool {
        match self {
            Isa::Auto | Isa::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => pulp::x86::V3::is_available(),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => pulp::x86::V4::is_available(),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    fn run<Op: WithSimd>(self, op: Op) -> Op::Output {
        match self {
            Isa::Scalar => Simd::vectorize(pulp::Scalar::new(), op),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => Simd::vectorize(
                pulp::x86::V3::try_new().expect("Isa::Avx2 is not available on this CPU"),
                op,
            ),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => Simd::vectorize(
                pulp::x86::V4::try_new().expect("Isa::Avx512 is not available on this CPU"),
                op,
            ),
            _ => pulp::Arch::new().dispatch(op),
        }
    }
}

/// A dense matrix of dd numbers (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct DdMat {
    rows: usize,
    cols: usize,
    stride: usize,
    hi: Vec<f64>,
    lo: Vec<f64>,
}

impl DdMat {
    /// The zero matrix.
    pub fn zeros(rows: usize, cols: usize) -> DdMat {
        let stride = cols.div_ceil(PAD) * PAD;
        DdMat {
            rows,
            cols,
            stride,
            hi: vec![0.0; rows * stride],
            lo: vec![0.0; rows * stride],
        }
    }

    /// From row-major dd entries.
    pub fn from_fn(rows: usize, cols: usize, f: impl Fn(usize, usize) -> Dd) -> DdMat {
        let mut m = DdMat::zeros(rows, cols);
        for r in 0..rows {
            for c in 0..cols {
                m.set(r, c, f(r, c));
            }
        }
        m
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Entry (r, c).
    #[inline(always)]
    pub fn get(&self, r: usize, c: usize) -> Dd {
        let k = r * self.stride + c;
        Dd {
            hi: self.hi[k],
            lo: self.lo[k],
        }
    }

    /// Sets entry (r, c).
    #[inline(always)]
    pub fn set(&mut self, r: usize, c: usize, v: Dd) {
        let k = r * self.stride + c;
        self.hi[k] = v.hi;
        self.lo[k] = v.lo;
    }

    /// The transpose.
    pub fn transpose(&self) -> DdMat {
        DdMat::from_fn(self.cols, self.rows, |r, c| self.get(c, r))
    }

    /// Row r's leading parts (`cols` entries).
    pub fn row_hi(&self, r: usize) -> &[f64] {
        &self.hi[r * self.stride..r * self.stride + self.cols]
    }

    /// Whether every entry is finite.
    pub fn is_finite(&self) -> bool {
        self.hi.iter().chain(&self.lo).all(|x| x.is_finite())
    }

    /// `A·B` (`self` = A, rows × K; `b` = B, K × cols): every row of the result a
    /// combination of the rows of B (module docs). Rows go to rayon in chunks when
    /// the work is large; each row's value does not depend on the split.
    pub fn product(&self, b: &DdMat) -> DdMat {
        self.product_in(b, Isa::Auto)
    }

    /// [`DdMat::product`] on a given instruction set (panics when it is not
    /// [`Isa::available`]).
    pub fn product_in(&self, b: &DdMat, isa: Isa) -> DdMat {
        assert_eq!(self.cols, b.rows, "DdMat::product: shapes");
        let mut out = DdMat::zeros(self.rows, b.cols);
        let stride = out.stride;
        let work = self.cols * b.cols;
        let job = |first: usize, hi: &mut [f64], lo: &mut [f64]| {
            let rows = hi.len() / stride.max(1);
            isa.run(Product {
                a: self,
                b,
                first,
                rows,
                hi,
                lo,
            });
        };
        if stride == 0 || self.rows == 0 {
            return out;
        }
        // chunks of 4 rows (the kernel's row block): about 2^15 multiply-adds each
        let chunk_rows = ((1usize << 15) / work.max(1)).clamp(1, 64).div_ceil(4) * 4;
        if self.rows * work < (1 << 16) || rayon::current_num_threads() == 1 {
            job(0, &mut out.hi, &mut out.lo);
        } else {
            use rayon::prelude::*;
            out.hi
                .par_chunks_mut(chunk_rows * stride)
                .zip(out.lo.par_chunks_mut(chunk_rows * stride))
                .enumerate()
                .for_each(|(c, (hi, lo))| job(c * chunk_rows, hi, lo));
        }
        out
    }
}

/// One task of [`DdMat::product`]: rows `first..first + rows` of the result.
struct Product<'a> {
    a: &'a DdMat,
    b: &'a DdMat,
    first: usize,
    rows: usize,
    hi: &'a mut [f64],
    lo: &'a mut [f64],
}

impl WithSimd for Product<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Product {
            a,
            b,
            first,
            rows,
            hi,
            lo,
        } = self;
        let stride = b.stride;
        let mut active = Vec::with_capacity(a.cols);
        let mut r0 = 0;
        while r0 < rows {
            let rb = (rows - r0).min(4);
            // the k with a nonzero coefficient in some row of the block
            active.clear();
            for k in 0..a.cols {
                if (0..rb).any(|r| a.hi[(first + r0 + r) * a.stride + k] != 0.0) {
                    active.push(k);
                }
            }
            let (ohi, olo) = (
                &mut hi[r0 * stride..(r0 + rb) * stride],
                &mut lo[r0 * stride..(r0 + rb) * stride],
            );
            match rb {
                4 => block::<S, 4>(simd, a, b, first + r0, &active, ohi, olo),
                3 => block::<S, 3>(simd, a, b, first + r0, &active, ohi, olo),
                2 => block::<S, 2>(simd, a, b, first + r0, &active, ohi, olo),
                _ => block::<S, 1>(simd, a, b, first + r0, &active, ohi, olo),
            }
            r0 += rb;
        }
    }
}

/// Rows `i0..i0 + R` of `A·B` into `ohi`/`olo` (R rows of B's stride), over the
/// coefficient indices `active` (ascending).
#[inline(always)]
fn block<S: Simd, const R: usize>(
    simd: S,
    a: &DdMat,
    b: &DdMat,
    i0: usize,
    active: &[usize],
    ohi: &mut [f64],
    olo: &mut [f64],
) {
    let stride = b.stride;
    let lanes = S::F64_LANES;
    // column strips of PAD entries: PAD / lanes vectors (1 to 8)
    let nv = PAD / lanes;
    let zero = simd.splat_f64s(0.0);
    for c0 in (0..stride).step_by(PAD) {
        let mut s = [[zero; PAD]; R];
        let mut c = [[zero; PAD]; R];
        for &k in active {
            let bh = &b.hi[k * stride + c0..k * stride + c0 + PAD];
            let bl = &b.lo[k * stride + c0..k * stride + c0 + PAD];
            let (bh, _) = S::as_simd_f64s(bh);
            let (bl, _) = S::as_simd_f64s(bl);
            for r in 0..R {
                let ai = (i0 + r) * a.stride + k;
                let (xh, xl) = (a.hi[ai], a.lo[ai]);
                if xh == 0.0 {
                    continue;
                }
                let (xh, xl) = (simd.splat_f64s(xh), simd.splat_f64s(xl));
                for v in 0..nv {
                    let (yh, yl) = (bh[v], bl[v]);
                    let p = simd.mul_f64s(xh, yh);
                    let ep = simd.mul_add_f64s(xh, yh, simd.neg_f64s(p));
                    let t = simd.add_f64s(s[r][v], p);
                    let bb = simd.sub_f64s(t, s[r][v]);
                    let es = simd.add_f64s(
                        simd.sub_f64s(s[r][v], simd.sub_f64s(t, bb)),
                        simd.sub_f64s(p, bb),
                    );
                    s[r][v] = t;
                    let cc = simd.add_f64s(c[r][v], simd.add_f64s(ep, es));
                    let cc = simd.mul_add_f64s(xh, yl, cc);
                    c[r][v] = simd.mul_add_f64s(xl, yh, cc);
                }
            }
        }
        for r in 0..R {
            let sv: &mut [f64] = &mut [0.0; PAD];
            let cv: &mut [f64] = &mut [0.0; PAD];
            {
                let (sv, _) = S::as_mut_simd_f64s(sv);
                let (cv, _) = S::as_mut_simd_f64s(cv);
                sv[..nv].copy_from_slice(&s[r][..nv]);
                cv[..nv].copy_from_slice(&c[r][..nv]);
            }
            for j in 0..PAD {
                let (h, l) = two_sum(sv[j], cv[j]);
                ohi[r * stride + c0 + j] = h;
                olo[r * stride + c0 + j] = l;
            }
        }
    }
}

impl DdMat {
    /// `Σ_k A_hi[i,k]·B_hi[k,c]` in f64 (one fused multiply-add per term, k
    /// ascending, zeros skipped), rows × `b.cols`, row-major with `b`'s padded stride
    /// ([`DdMat::stride`]). Error: `≤ γ_K Σ_k |A_hi[i,k]||B_hi[k,c]|` (recursive
    /// summation, one rounding per term).
    pub fn product_hi(&self, b: &DdMat) -> Vec<f64> {
        assert_eq!(self.cols, b.rows, "DdMat::product_hi: shapes");
        let stride = b.stride;
        let mut out = vec![0.0; self.rows * stride];
        if stride == 0 || self.rows == 0 {
            return out;
        }
        let job = |first: usize, o: &mut [f64]| {
            let rows = o.len() / stride;
            pulp::Arch::new().dispatch(ProductHi {
                a: self,
                b,
                first,
                rows,
                out: o,
            });
        };
        let work = self.cols * b.cols;
        let chunk_rows = ((1usize << 16) / work.max(1)).clamp(1, 64);
        if self.rows * work < (1 << 17) || rayon::current_num_threads() == 1 {
            job(0, &mut out);
        } else {
            use rayon::prelude::*;
            out.par_chunks_mut(chunk_rows * stride)
                .enumerate()
                .for_each(|(c, o)| job(c * chunk_rows, o));
        }
        out
    }

    /// The padded row length (a multiple of [`PAD`]).
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// `Σ_k A[i,k]·B[j,k]` (`self` = A and `b` = B with equal column counts): the dot
    /// product of two rows, in [`PAD`] interleaved lanes (lane l takes the k ≡ l mod
    /// [`PAD`]), each accumulated as in the product kernel, the lanes then merged in
    /// lane order (their `s` by a cascade of two_sums, every error and `c` into one
    /// f64), finally `two_sum(S, C)`. The same operations on every instruction set; the
    /// error bound of the module docs holds (the merge is part of the same cascade).
    pub fn dot_rows(&self, i: usize, b: &DdMat, j: usize) -> Dd {
        assert_eq!(self.cols, b.cols, "DdMat::dot_rows: lengths");
        pulp::Arch::new().dispatch(DotRows { a: self, i, b, j })
    }
}

struct ProductHi<'a> {
    a: &'a DdMat,
    b: &'a DdMat,
    first: usize,
    rows: usize,
    out: &'a mut [f64],
}

impl WithSimd for ProductHi<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let ProductHi {
            a,
            b,
            first,
            rows,
            out,
        } = self;
        let stride = b.stride;
        let nv = PAD / S::F64_LANES;
        let zero = simd.splat_f64s(0.0);
        for r in 0..rows {
            let arow = &a.hi[(first + r) * a.stride..(first + r) * a.stride + a.cols];
            let orow = &mut out[r * stride..(r + 1) * stride];
            for c0 in (0..stride).step_by(PAD) {
                let mut c = [zero; PAD];
                for (k, &x) in arow.iter().enumerate() {
                    if x == 0.0 {
                        continue;
                    }
                    let (bh, _) = S::as_simd_f64s(&b.hi[k * stride + c0..k * stride + c0 + PAD]);
                    let xv = simd.splat_f64s(x);
                    for v in 0..nv {
                        c[v] = simd.mul_add_f64s(xv, bh[v], c[v]);
                    }
                }
                let (o, _) = S::as_mut_simd_f64s(&mut orow[c0..c0 + PAD]);
                o[..nv].copy_from_slice(&c[..nv]);
            }
        }
    }
}

struct DotRows<'a> {
    a: &'a DdMat,
    i: usize,
    b: &'a DdMat,
    j: usize,
}

impl WithSimd for DotRows<'_> {
    type Output = Dd;

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> Dd {
        let DotRows { a, i, b, j } = self;
        let nv = PAD / S::F64_LANES;
        let zero = simd.splat_f64s(0.0);
        let (mut s, mut c) = ([zero; PAD], [zero; PAD]);
        let len = a.stride.min(b.stride);
        let (ah, al) = (
            &a.hi[i * a.stride..i * a.stride + len],
            &a.lo[i * a.stride..i * a.stride + len],
        );
        let (bh, bl) = (
            &b.hi[j * b.stride..j * b.stride + len],
            &b.lo[j * b.stride..j * b.stride + len],
        );
        for k0 in (0..len).step_by(PAD) {
            let (xh, _) = S::as_simd_f64s(&ah[k0..k0 + PAD]);
            let (xl, _) = S::as_simd_f64s(&al[k0..k0 + PAD]);
            let (yh, _) = S::as_simd_f64s(&bh[k0..k0 + PAD]);
            let (yl, _) = S::as_simd_f64s(&bl[k0..k0 + PAD]);
            for v in 0..nv {
                let p = simd.mul_f64s(xh[v], yh[v]);
                let ep = simd.mul_add_f64s(xh[v], yh[v], simd.neg_f64s(p));
                let t = simd.add_f64s(s[v], p);
                let bb = simd.sub_f64s(t, s[v]);
                let es = simd.add_f64s(
                    simd.sub_f64s(s[v], simd.sub_f64s(t, bb)),
                    simd.sub_f64s(p, bb),
                );
                s[v] = t;
                let cc = simd.add_f64s(c[v], simd.add_f64s(ep, es));
                let cc = simd.mul_add_f64s(xh[v], yl[v], cc);
                c[v] = simd.mul_add_f64s(xl[v], yh[v], cc);
            }
        }
        let (mut sl, mut cl) = ([0.0f64; PAD], [0.0f64; PAD]);
        {
            let (sv, _) = S::as_mut_simd_f64s(&mut sl);
            let (cv, _) = S::as_mut_simd_f64s(&mut cl);
            sv[..nv].copy_from_slice(&s[..nv]);
            cv[..nv].copy_from_slice(&c[..nv]);
        }
        let (mut big, mut small) = (sl[0], cl[0]);
        for l in 1..PAD {
            let (t, e) = two_sum(big, sl[l]);
            big = t;
            small += e + cl[l];
        }
        let (hi, lo) = two_sum(big, small);
        Dd { hi, lo }
    }
}
