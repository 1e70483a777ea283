//! Variants of the particle system from the paper's open problems (clusters.md §1,
//! §3 `clusters/codim-conjecture` and `clusters/open-problems`), in MPFR point
//! arithmetic, plus the small tools the exploratory reports use to describe a
//! configuration (τ-clusters, dual functionals φ_k*).
//!
//! Nothing here is certified: these are observations for `report-only` claims.
//!
//! ```text
//! multi-head (§12):  x_i^{k+1} = x_i^k + Δt Σ_h Σ_j P^h_ij V_h x_j^k,   P^h_ij = softmax_j (x_iᵀ M_h x_j),
//! MLP (§12):         ż_i = W σ(V Σ_j P_ij (z_j − z_i)),                P_ij = softmax_j ((e^{tV}z_i)ᵀ M e^{tV}z_j).
//! ```
//!
//! Multi-head rescaling: with R = I + Δt Σ_h V_h the single-head rescaled variable
//! generalises to z^k = R^{−k} x^k (for one head it is `r:discreterescaling`); it
//! only rescales the picture, the dynamics are those of x.
//!
//! MLP: the right-hand side is the z-dynamics of the paper with W σ(·) applied after
//! V; with σ = id and W = I it is the rescaled flow. RK4 with a fixed exact step; e^{tV}
//! is a fresh [`expm`] at every stage time (d is small in these runs).

use super::expm::expm;
use super::flow::softmax_point;
use super::model::Mat;
use rug::{Float, Rational};

/// Componentwise nonlinearity of the MLP variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// max(0, x).
    Relu,
    /// tanh x.
    Tanh,
    /// x (the plain rescaled flow when W = I; for cross-checks).
    Identity,
}

impl Activation {
    /// The name used in specs and tables (`relu`, `tanh`).
    pub fn name(self) -> &'static str {
        match self {
            Activation::Relu => "relu",
            Activation::Tanh => "tanh",
            Activation::Identity => "identity",
        }
    }
    /// Parses `relu` / `tanh` / `identity`.
    pub fn parse(s: &str) -> Option<Activation> {
        match s {
            "relu" | "ReLU" => Some(Activation::Relu),
            "tanh" => Some(Activation::Tanh),
            "identity" => Some(Activation::Identity),
            _ => None,
        }
    }
    fn apply(self, x: &mut Float) {
        match self {
            Activation::Relu => {
                if x.is_sign_negative() {
                    x.assign_zero();
                }
            }
            Activation::Tanh => x.tanh_mut(),
            Activation::Identity => {}
        }
    }
}

/// Small helper: `Float::assign(0)`.
trait AssignZero {
    fn assign_zero(&mut self);
}
impl AssignZero for Float {
    fn assign_zero(&mut self) {
        *self = Float::new(self.prec());
    }
}

/// An exact matrix as floats (row-major) at `prec` bits.
pub fn to_floats(m: &Mat, prec: u32) -> Vec<Float> {
    m.data.iter().map(|q| Float::with_val(prec, q)).collect()
}

/// `A x` for a `rows × cols` row-major float matrix and a vector of length `cols`.
pub fn mat_vec(a: &[Float], cols: usize, x: &[Float], prec: u32) -> Vec<Float> {
    a.chunks(cols)
        .map(|row| {
            let mut s = Float::new(prec);
            for (r, v) in row.iter().zip(x) {
                s += Float::with_val(prec, r * v);
            }
            s
        })
        .collect()
}

/// `A B` for d × d row-major float matrices.
pub fn mat_mul_sq(a: &[Float], b: &[Float], d: usize, prec: u32) -> Vec<Float> {
    let mut out = Vec::with_capacity(d * d);
    for i in 0..d {
        for j in 0..d {
            let mut s = Float::new(prec);
            for l in 0..d {
                s += Float::with_val(prec, &a[i * d + l] * &b[l * d + j]);
            }
            out.push(s);
        }
    }
    out
}

/// The attention matrix P (n × n) of rows `y` (n × d): `P_ij = softmax_j ⟨M y_i, y_j⟩`
/// (`m = None` for M = I).
pub fn attention(y: &[Float], n: usize, d: usize, m: Option<&[Float]>, prec: u32) -> Vec<Float> {
    let mut p = Vec::with_capacity(n * n);
    for i in 0..n {
        let yi = &y[i * d..(i + 1) * d];
        let a = match m {
            Some(m) => mat_vec(m, d, yi, prec),
            None => yi.to_vec(),
        };
        let logits = (0..n)
            .map(|j| {
                let mut s = Float::new(prec);
                for (u, v) in a.iter().zip(&y[j * d..(j + 1) * d]) {
                    s += Float::with_val(prec, u * v);
                }
                s
            })
            .collect();
        p.extend(softmax_point(logits, prec));
    }
    p
}

/// One head of the multi-head layer: the bilinear form M = QᵀK and the value matrix.
#[derive(Clone, Debug)]
pub struct Head {
    /// M = QᵀK (d × d), exact.
    pub qk: Mat,
    /// V (d × d), exact.
    pub v: Mat,
}

/// Runs the multi-head layer `x_i^{k+1} = x_i^k + Δt Σ_h Σ_j P^h_ij V_h x_j^k` for
/// `steps` steps from the exact tokens `x0` (n × d). `observer(k, x^k)` sees every
/// state (k = 0..=steps); returns x^steps.
pub fn multi_head(
    heads: &[Head],
    x0: &Mat,
    dt: &Rational,
    steps: usize,
    prec: u32,
    mut observer: impl FnMut(usize, &[Float]),
) -> Vec<Float> {
    let (n, d) = (x0.rows, x0.cols);
    let dtf = Float::with_val(prec, dt);
    let hs: Vec<(Option<Vec<Float>>, Vec<Float>)> = heads
        .iter()
        .map(|h| {
            let m = (h.qk != Mat::identity(d)).then(|| to_floats(&h.qk.transpose(), prec));
            (m, to_floats(&h.v, prec))
        })
        .collect();
    let mut x = to_floats(x0, prec);
    observer(0, &x);
    for k in 1..=steps {
        let mut next = x.clone();
        for (m, v) in &hs {
            let p = attention(&x, n, d, m.as_deref(), prec);
            for i in 0..n {
                // Σ_j P_ij x_j, then V(·)
                let mut avg = vec![Float::new(prec); d];
                for j in 0..n {
                    for c in 0..d {
                        avg[c] += Float::with_val(prec, &p[i * n + j] * &x[j * d + c]);
                    }
                }
                let va = mat_vec(v, d, &avg, prec);
                for c in 0..d {
                    next[i * d + c] += Float::with_val(prec, &va[c] * &dtf);
                }
            }
        }
        x = next;
        observer(k, &x);
    }
    x
}

/// The MLP variant's right-hand side at exact time `t`:
/// `W σ(V Σ_j P_ij (z_j − z_i))`, P from `(e^{tV} z_i)ᵀ M (e^{tV} z_j)`.
#[allow(clippy::too_many_arguments)]
fn mlp_rhs(
    v: &Mat,
    vf: &[Float],
    m: Option<&[Float]>,
    w: &[Float],
    sigma: Activation,
    t: &Rational,
    z: &[Float],
    n: usize,
    d: usize,
    prec: u32,
) -> Vec<Float> {
    let e = expm(v, t, prec + 16);
    let mut y = Vec::with_capacity(n * d);
    for i in 0..n {
        y.extend(mat_vec(&e, d, &z[i * d..(i + 1) * d], prec));
    }
    let p = attention(&y, n, d, m, prec);
    let mut out = Vec::with_capacity(n * d);
    for i in 0..n {
        let mut s = vec![Float::new(prec); d];
        for j in 0..n {
            for c in 0..d {
                let diff = Float::with_val(prec, &z[j * d + c] - &z[i * d + c]);
                s[c] += Float::with_val(prec, &p[i * n + j] * &diff);
            }
        }
        let mut u = mat_vec(vf, d, &s, prec);
        for x in &mut u {
            sigma.apply(x);
        }
        out.extend(mat_vec(w, d, &u, prec));
    }
    out
}

/// `u + c k`, entrywise.
fn axpy(u: &[Float], c: &Float, k: &[Float], prec: u32) -> Vec<Float> {
    u.iter()
        .zip(k)
        .map(|(a, b)| Float::with_val(prec, a + Float::with_val(prec, b * c)))
        .collect()
}

/// Integrates the MLP variant (module docs) with classical RK4, fixed exact step `h`,
/// `steps` steps, from exact tokens `z0` (n × d); `qk = None` for M = I.
/// `observer(k, z^k)` sees every state; returns z at t = steps·h.
#[allow(clippy::too_many_arguments)]
pub fn mlp_rk4(
    v: &Mat,
    qk: Option<&Mat>,
    w: &Mat,
    sigma: Activation,
    z0: &Mat,
    h: &Rational,
    steps: usize,
    prec: u32,
    mut observer: impl FnMut(usize, &[Float]),
) -> Vec<Float> {
    let (n, d) = (z0.rows, z0.cols);
    let vf = to_floats(v, prec);
    let mf = qk.map(|m| to_floats(&m.transpose(), prec));
    let wf = to_floats(w, prec);
    let f =
        |t: &Rational, z: &[Float]| mlp_rhs(v, &vf, mf.as_deref(), &wf, sigma, t, z, n, d, prec);
    let hf = Float::with_val(prec, h);
    let half = Float::with_val(prec, &hf / 2u32);
    let sixth = Float::with_val(prec, &hf / 6u32);
    let hh = Rational::from(h / 2u32);
    let mut z = to_floats(z0, prec);
    observer(0, &z);
    for k in 1..=steps {
        let t = Rational::from(h * (k as u32 - 1));
        let tm = Rational::from(&t + &hh);
        let t1 = Rational::from(&t + h);
        let k1 = f(&t, &z);
        let k2 = f(&tm, &axpy(&z, &half, &k1, prec));
        let k3 = f(&tm, &axpy(&z, &half, &k2, prec));
        let k4 = f(&t1, &axpy(&z, &hf, &k3, prec));
        z = z
            .iter()
            .enumerate()
            .map(|(idx, zi)| {
                let mut s = Float::with_val(prec, &k1[idx] + &k4[idx]);
                s += Float::with_val(prec, &k2[idx] + &k3[idx]) * 2u32;
                s *= &sixth;
                s += zi;
                s
            })
            .collect();
        observer(k, &z);
    }
    z
}

/// Solves `A x = b` (d × d, row-major floats) by Gaussian elimination with partial
/// pivoting; `None` if a pivot is exactly zero.
pub fn solve(a: &[Float], b: &[Float], d: usize, prec: u32) -> Option<Vec<Float>> {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    for c in 0..d {
        let p = (c..d).max_by(|&r, &s| {
            a[r * d + c]
                .as_abs()
                .partial_cmp(&*a[s * d + c].as_abs())
                .unwrap_or(std::cmp::Ordering::Equal)
        })?;
        if a[p * d + c].is_zero() {
            return None;
        }
        if p != c {
            for j in 0..d {
                a.swap(p * d + j, c * d + j);
            }
            b.swap(p, c);
        }
        for r in c + 1..d {
            let f = Float::with_val(prec, &a[r * d + c] / &a[c * d + c]);
            for j in c..d {
                let x = Float::with_val(prec, &f * &a[c * d + j]);
                a[r * d + j] -= x;
            }
            let x = Float::with_val(prec, &f * &b[c]);
            b[r] -= x;
        }
    }
    let mut x = vec![Float::new(prec); d];
    for r in (0..d).rev() {
        let mut s = b[r].clone();
        for j in r + 1..d {
            s -= Float::with_val(prec, &a[r * d + j] * &x[j]);
        }
        x[r] = Float::with_val(prec, &s / &a[r * d + r]);
    }
    Some(x)
}

/// The eigenvalues of V (f64, via nalgebra's Schur form), as (re, im) pairs sorted by
/// decreasing real part.
pub fn eigenvalues_f64(v: &Mat) -> Vec<(f64, f64)> {
    let d = v.rows;
    let m = nalgebra::DMatrix::from_row_slice(d, d, &v.to_f64());
    let mut ev: Vec<(f64, f64)> = m
        .complex_eigenvalues()
        .iter()
        .map(|c| (c.re, c.im))
        .collect();
    ev.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1)));
    ev
}

/// The dual functionals used to describe the codimension-k structure: for the k
/// eigenvalues of V with positive real part, the left eigenvectors φ_k* (rows of
/// length d, unit Euclidean norm, sign with positive coordinate sum) computed by
/// inverse iteration on Vᵀ − μI in MPFR (μ the f64 eigenvalue nudged by 2^−30, 8
/// iterations); `functionals[l]·z` is φ_l*(z).
///
/// If a non-real eigenvalue has positive real part, the left invariant subspace is
/// not spanned by real left eigenvectors; when k = d (every eigenvalue in the right
/// half-plane, the codimension-d "subspaces" are points) the coordinate functionals
/// are returned instead (any basis of the dual describes the same points); otherwise
/// `None`.
pub struct Duals {
    /// Eigenvalues with positive real part (re, im), decreasing real part.
    pub eigenvalues: Vec<(f64, f64)>,
    /// k functionals of length d (row-major k × d), at `prec` bits.
    pub functionals: Vec<Vec<Float>>,
    /// Whether the functionals are left eigenvectors (else coordinates, k = d).
    pub left_eigenvectors: bool,
}

/// See [`Duals`].
pub fn positive_duals(v: &Mat, prec: u32) -> Option<Duals> {
    let d = v.rows;
    let ev: Vec<(f64, f64)> = eigenvalues_f64(v)
        .into_iter()
        .filter(|e| e.0 > 0.0)
        .collect();
    let all_real = ev.iter().all(|e| e.1 == 0.0);
    if !all_real {
        if ev.len() != d {
            return None;
        }
        let functionals = (0..d)
            .map(|r| {
                (0..d)
                    .map(|c| Float::with_val(prec, u32::from(r == c)))
                    .collect()
            })
            .collect();
        return Some(Duals {
            eigenvalues: ev,
            functionals,
            left_eigenvectors: false,
        });
    }
    let vt = to_floats(&v.transpose(), prec);
    let mut functionals = Vec::with_capacity(ev.len());
    for &(mu, _) in &ev {
        let shift = Float::with_val(prec, mu) + Float::with_val(prec, 2f64.powi(-30));
        let mut a = vt.clone();
        for r in 0..d {
            a[r * d + r] -= &shift;
        }
        let mut w: Vec<Float> = (0..d)
            .map(|i| Float::with_val(prec, 1 + i as u32))
            .collect();
        for _ in 0..8 {
            w = solve(&a, &w, d, prec)?;
            let mut nrm = Float::new(prec);
            for x in &w {
                nrm += Float::with_val(prec, x * x);
            }
            nrm.sqrt_mut();
            for x in &mut w {
                *x /= &nrm;
            }
        }
        let mut s = Float::new(prec);
        for x in &w {
            s += x;
        }
        if s.is_sign_negative() {
            for x in &mut w {
                x.neg_assign_mut();
            }
        }
        functionals.push(w);
    }
    Some(Duals {
        eigenvalues: ev,
        functionals,
        left_eigenvectors: true,
    })
}

/// Negation in place.
trait NegMut {
    fn neg_assign_mut(&mut self);
}
impl NegMut for Float {
    fn neg_assign_mut(&mut self) {
        let v = Float::with_val(self.prec(), -&*self);
        *self = v;
    }
}

/// The vectors (φ_1*(z_i), …, φ_k*(z_i)) as f64 rows (for clustering and plots).
pub fn project(duals: &[Vec<Float>], z: &[Float], n: usize, d: usize) -> Vec<Vec<f64>> {
    (0..n)
        .map(|i| {
            duals
                .iter()
                .map(|phi| {
                    let mut s = Float::new(z[0].prec() + 16);
                    for (a, b) in phi.iter().zip(&z[i * d..(i + 1) * d]) {
                        s += Float::with_val(z[0].prec() + 16, a * b);
                    }
                    s.to_f64()
                })
                .collect()
        })
        .collect()
}

/// Rows of a flat n × d float array as f64 rows.
pub fn rows_f64(z: &[Float], d: usize) -> Vec<Vec<f64>> {
    z.chunks(d)
        .map(|r| r.iter().map(Float::to_f64).collect())
        .collect()
}

/// Euclidean distance of two f64 rows.
fn dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

/// Number of τ-clusters: connected components of the graph joining points at
/// Euclidean distance ≤ τ (single linkage; a τ-cluster may be longer than τ).
pub fn tau_clusters(points: &[Vec<f64>], tau: f64) -> usize {
    let n = points.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    for i in 0..n {
        for j in i + 1..n {
            if dist(&points[i], &points[j]) <= tau {
                let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                if a != b {
                    parent[a.max(b)] = a.min(b);
                }
            }
        }
    }
    (0..n).filter(|&i| find(&mut parent, i) == i).count()
}

/// Diameter max_{i,j} ‖p_i − p_j‖ of f64 rows (0 for fewer than two).
pub fn diameter(points: &[Vec<f64>]) -> f64 {
    let mut m = 0f64;
    for i in 0..points.len() {
        for j in i + 1..points.len() {
            m = m.max(dist(&points[i], &points[j]));
        }
    }
    m
}

/// max_i ‖p_i‖ of f64 rows.
pub fn max_norm(points: &[Vec<f64>]) -> f64 {
    points
        .iter()
        .map(|p| p.iter().map(|x| x * x).sum::<f64>().sqrt())
        .fold(0.0, f64::max)
}
