//! The exact particle system: Q, K, V and the initial tokens as rational
//! matrices, and the spec types that describe them.
//!
//! Every number that enters a verdict starts here as an exact rational: decimal
//! matrices quoted in clusters.md are taken as the exact decimals shown, and seeded
//! random data is drawn on a dyadic grid (multiples of 2^−g), so every instance is
//! exact and identical on every machine.

use crate::kernel::{self, Interval};
use crate::rng::SplitMix64;
use crate::spec::FieldError;
use rug::{Integer, Rational};
use serde::{Deserialize, Serialize};

/// A dense matrix of exact rationals, row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mat {
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// Entries, row-major (`rows * cols`).
    pub data: Vec<Rational>,
}

impl Mat {
    /// The zero matrix.
    pub fn zeros(rows: usize, cols: usize) -> Mat {
        Mat {
            rows,
            cols,
            data: vec![Rational::new(); rows * cols],
        }
    }
    /// The identity of size n.
    pub fn identity(n: usize) -> Mat {
        let mut m = Mat::zeros(n, n);
        for i in 0..n {
            m.data[i * n + i] = Rational::from(1);
        }
        m
    }
    /// A diagonal matrix.
    pub fn diag(d: &[Rational]) -> Mat {
        let n = d.len();
        let mut m = Mat::zeros(n, n);
        for (i, x) in d.iter().enumerate() {
            m.data[i * n + i] = x.clone();
        }
        m
    }
    /// A matrix from rows (all of equal length; panics otherwise — internal use).
    pub fn from_rows(rows: Vec<Vec<Rational>>) -> Mat {
        let r = rows.len();
        let c = rows.first().map_or(0, Vec::len);
        assert!(rows.iter().all(|x| x.len() == c), "ragged rows");
        Mat {
            rows: r,
            cols: c,
            data: rows.into_iter().flatten().collect(),
        }
    }
    /// Entry (i, j).
    pub fn at(&self, i: usize, j: usize) -> &Rational {
        &self.data[i * self.cols + j]
    }
    /// Row i as a slice.
    pub fn row(&self, i: usize) -> &[Rational] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }
    /// Whether the matrix is square.
    pub fn is_square(&self) -> bool {
        self.rows == self.cols
    }
    /// The transpose.
    pub fn transpose(&self) -> Mat {
        let mut t = Mat::zeros(self.cols, self.rows);
        for i in 0..self.rows {
            for j in 0..self.cols {
                t.data[j * self.rows + i] = self.at(i, j).clone();
            }
        }
        t
    }
    /// The exact product `self · other` (inner dimensions must agree).
    pub fn mul(&self, other: &Mat) -> Mat {
        assert_eq!(self.cols, other.rows, "shape mismatch in Mat::mul");
        let mut m = Mat::zeros(self.rows, other.cols);
        let mut t = Rational::new();
        for i in 0..self.rows {
            for j in 0..other.cols {
                let mut s = Rational::new();
                for l in 0..self.cols {
                    t.assign(self.at(i, l) * other.at(l, j));
                    s += &t;
                }
                m.data[i * other.cols + j] = s;
            }
        }
        m
    }
    /// The exact sum.
    pub fn add(&self, other: &Mat) -> Mat {
        assert_eq!((self.rows, self.cols), (other.rows, other.cols));
        Mat {
            rows: self.rows,
            cols: self.cols,
            data: self
                .data
                .iter()
                .zip(&other.data)
                .map(|(a, b)| Rational::from(a + b))
                .collect(),
        }
    }
    /// `c · self`, exactly.
    pub fn scale(&self, c: &Rational) -> Mat {
        Mat {
            rows: self.rows,
            cols: self.cols,
            data: self.data.iter().map(|a| Rational::from(a * c)).collect(),
        }
    }
    /// The exact inverse by Gauss–Jordan elimination, or `None` if singular.
    pub fn inverse(&self) -> Option<Mat> {
        assert!(self.is_square());
        let n = self.rows;
        let mut a = self.clone();
        let mut inv = Mat::identity(n);
        for c in 0..n {
            let p = (c..n).find(|&r| *a.at(r, c) != 0)?;
            if p != c {
                for j in 0..n {
                    a.data.swap(p * n + j, c * n + j);
                    inv.data.swap(p * n + j, c * n + j);
                }
            }
            let piv = a.at(c, c).clone();
            for j in 0..n {
                a.data[c * n + j] /= &piv;
                inv.data[c * n + j] /= &piv;
            }
            for r in 0..n {
                if r != c && *a.at(r, c) != 0 {
                    let f = a.at(r, c).clone();
                    for j in 0..n {
                        let (x, y) = (
                            Rational::from(&f * a.at(c, j)),
                            Rational::from(&f * inv.at(c, j)),
                        );
                        a.data[r * n + j] -= x;
                        inv.data[r * n + j] -= y;
                    }
                }
            }
        }
        Some(inv)
    }
    /// Whether the matrix is symmetric.
    pub fn is_symmetric(&self) -> bool {
        self.is_square() && (0..self.rows).all(|i| (0..i).all(|j| self.at(i, j) == self.at(j, i)))
    }
    /// Whether a symmetric matrix is positive definite (exact: all leading
    /// principal minors positive, by fraction-free elimination — Sylvester's criterion).
    pub fn is_positive_definite(&self) -> bool {
        if !self.is_symmetric() {
            return false;
        }
        self.leading_minors().iter().all(|m| *m > 0)
    }
    /// The leading principal minors det(A[..k, ..k]), k = 1..n, exactly
    /// (Gaussian elimination without pivoting; a zero pivot ends the list with 0s).
    pub fn leading_minors(&self) -> Vec<Rational> {
        let n = self.rows.min(self.cols);
        let mut a = self.clone();
        let mut out = Vec::with_capacity(n);
        let mut det = Rational::from(1);
        for c in 0..n {
            let piv = a.at(c, c).clone();
            if piv == 0 {
                out.resize(n, Rational::new());
                return out;
            }
            det *= &piv;
            out.push(det.clone());
            for r in c + 1..n {
                let f = Rational::from(a.at(r, c) / &piv);
                for j in c..self.cols {
                    let x = Rational::from(&f * a.at(c, j));
                    a.data[r * self.cols + j] -= x;
                }
            }
        }
        out
    }
    /// The squared Frobenius norm Σ a_ij², exactly (an upper bound for ‖A‖²_op).
    pub fn frobenius_sq(&self) -> Rational {
        let mut s = Rational::new();
        for a in &self.data {
            s += Rational::from(a * a);
        }
        s
    }
    /// A certified enclosure of the Frobenius norm (≥ the operator 2-norm).
    pub fn frobenius(&self, prec: u32) -> Interval {
        Interval::from_rational(prec, &self.frobenius_sq()).sqrt()
    }
    /// The entries as intervals (exact when the rational is representable).
    pub fn to_intervals(&self, prec: u32) -> Vec<Interval> {
        self.data
            .iter()
            .map(|q| Interval::from_rational(prec, q))
            .collect()
    }
    /// The entries as f64 (nearest; for plots and untrusted heuristics only).
    pub fn to_f64(&self) -> Vec<f64> {
        self.data.iter().map(Rational::to_f64).collect()
    }
    /// The first pair of equal rows (i < j), if any.
    pub fn equal_rows(&self) -> Option<(usize, usize)> {
        for i in 0..self.rows {
            for j in i + 1..self.rows {
                if self.row(i) == self.row(j) {
                    return Some((i, j));
                }
            }
        }
        None
    }
}

use rug::Assign;

/// A matrix as written in a spec.
///
/// ```toml
/// v = "I"                                   # identity (also "-I", "0")
/// v = [["0.64709742", "0.81911926"], ["0.61210449", "0.63263484"]]   # exact decimals
/// v = { diag = ["1", "-1/2"] }
/// q = { uniform = ["-1", "1"], seed = 7 }   # dyadic grid 2^-20 (grid_bits), seeded
/// q = { uniform = ["-1", "1"], seed = 7, rows = 2, grid_bits = 10 }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MatrixSpec {
    /// `"I"`, `"-I"` or `"0"` (square of the context's size).
    Named(String),
    /// Explicit rows of exact literals.
    Rows(Vec<Vec<String>>),
    /// A diagonal matrix.
    Diag {
        /// The diagonal entries (exact literals).
        diag: Vec<String>,
    },
    /// Seeded uniform entries on the dyadic grid 2^−grid_bits ℤ ∩ [lo, hi].
    Random {
        /// `[lo, hi]`, exact literals.
        uniform: [String; 2],
        /// The seed.
        seed: u64,
        /// Grid exponent g (entries are multiples of 2^−g); default 20.
        #[serde(default)]
        grid_bits: Option<u32>,
        /// Rows (default: the context's size).
        #[serde(default)]
        rows: Option<usize>,
    },
}

/// The default dyadic grid exponent for random data (multiples of 2^−20).
pub const DEFAULT_GRID_BITS: u32 = 20;

impl MatrixSpec {
    /// Resolves to an exact matrix. `rows`/`cols` give the expected shape; a
    /// `None` row count accepts any (e.g. Q, K ∈ ℝ^{m×d}). Errors name `field`
    /// (and the entry, e.g. `v[1][0]`).
    pub fn resolve(
        &self,
        field: &str,
        rows: Option<usize>,
        cols: usize,
    ) -> Result<Mat, FieldError> {
        let m = match self {
            MatrixSpec::Named(s) => {
                let n = rows.unwrap_or(cols);
                match s.trim() {
                    "I" | "identity" => Mat::identity(n),
                    "-I" => Mat::identity(n).scale(&Rational::from(-1)),
                    "0" => Mat::zeros(n, cols),
                    other => {
                        return Err(FieldError::new(
                            field,
                            format!(
                                "unknown matrix name `{other}`: use \"I\", \"-I\", \"0\", rows of \
                                 exact numbers, {{ diag = [...] }} or {{ uniform = [lo, hi], seed = s }}"
                            ),
                        ))
                    }
                }
            }
            MatrixSpec::Rows(r) => {
                let mut out = Vec::with_capacity(r.len());
                for (i, row) in r.iter().enumerate() {
                    if row.len() != cols {
                        return Err(FieldError::new(
                            format!("{field}[{i}]"),
                            format!("row has {} entries; expected {cols}", row.len()),
                        ));
                    }
                    let mut v = Vec::with_capacity(cols);
                    for (j, s) in row.iter().enumerate() {
                        v.push(parse_entry(&format!("{field}[{i}][{j}]"), s)?);
                    }
                    out.push(v);
                }
                if out.is_empty() {
                    return Err(FieldError::new(field, "matrix has no rows"));
                }
                Mat::from_rows(out)
            }
            MatrixSpec::Diag { diag } => {
                let v = diag
                    .iter()
                    .enumerate()
                    .map(|(i, s)| parse_entry(&format!("{field}.diag[{i}]"), s))
                    .collect::<Result<Vec<_>, _>>()?;
                Mat::diag(&v)
            }
            MatrixSpec::Random {
                uniform,
                seed,
                grid_bits,
                rows: r,
            } => {
                let n = r.or(rows).unwrap_or(cols);
                let g = grid_bits.unwrap_or(DEFAULT_GRID_BITS);
                random_dyadic(field, n, cols, &uniform[0], &uniform[1], *seed, g)?
            }
        };
        if let Some(r) = rows {
            if m.rows != r || m.cols != cols {
                return Err(FieldError::new(
                    field,
                    format!("expected a {r}×{cols} matrix, got {}×{}", m.rows, m.cols),
                ));
            }
        } else if m.cols != cols {
            return Err(FieldError::new(
                field,
                format!("expected {cols} columns, got {}", m.cols),
            ));
        }
        Ok(m)
    }
}

fn parse_entry(field: &str, s: &str) -> Result<Rational, FieldError> {
    kernel::parse_rational(s).map_err(|e| FieldError::new(field, e.to_string()))
}

/// `rows × cols` entries uniform on 2^−g ℤ ∩ [lo, hi], drawn by SplitMix64 from `seed`
/// in row-major order (identical on every platform).
pub fn random_dyadic(
    field: &str,
    rows: usize,
    cols: usize,
    lo: &str,
    hi: &str,
    seed: u64,
    g: u32,
) -> Result<Mat, FieldError> {
    if g > 60 {
        return Err(FieldError::new(field, "grid_bits must be at most 60"));
    }
    let lo_q = parse_entry(&format!("{field}.uniform[0]"), lo)?;
    let hi_q = parse_entry(&format!("{field}.uniform[1]"), hi)?;
    if lo_q > hi_q {
        return Err(FieldError::new(field, "uniform = [lo, hi] needs lo ≤ hi"));
    }
    let scale = Integer::from(1) << g;
    let a = Rational::from(&lo_q * &scale).ceil().into_numer_denom().0;
    let b = Rational::from(&hi_q * &scale).floor().into_numer_denom().0;
    let span = Integer::from(&b - &a);
    let span = span
        .to_u64()
        .filter(|s| *s < u64::MAX)
        .ok_or_else(|| FieldError::new(field, "range too large for the dyadic grid"))?;
    let mut rng = SplitMix64::new(seed);
    let mut data = Vec::with_capacity(rows * cols);
    for _ in 0..rows * cols {
        let m = Integer::from(&a + rng.below(span + 1));
        data.push(Rational::from((m, scale.clone())));
    }
    if rows == 0 || cols == 0 {
        return Err(FieldError::new(
            field,
            "a matrix needs at least one row and column",
        ));
    }
    Ok(Mat { rows, cols, data })
}

/// The exact system: tokens in ℝ^d, Q, K ∈ ℝ^{m×d}, V ∈ ℝ^{d×d}.
/// Only the bilinear form QᵀK enters the dynamics (clusters.md §1).
#[derive(Clone, Debug)]
pub struct System {
    /// Token dimension d.
    pub d: usize,
    /// Q (m × d).
    pub q: Mat,
    /// K (m × d).
    pub k: Mat,
    /// V (d × d).
    pub v: Mat,
    /// QᵀK (d × d), exact.
    pub qk: Mat,
}

impl System {
    /// Builds the system from spec matrices: Q and K must have d columns and the
    /// same number of rows, V must be d × d. Errors name the field.
    pub fn from_specs(
        d: usize,
        q: &MatrixSpec,
        k: &MatrixSpec,
        v: &MatrixSpec,
    ) -> Result<System, FieldError> {
        if d == 0 {
            return Err(FieldError::new("d", "must be at least 1"));
        }
        let q = q.resolve("q", None, d)?;
        let k = k.resolve("k", Some(q.rows), d)?;
        let v = v.resolve("v", Some(d), d)?;
        Ok(System::new(q, k, v))
    }
    /// Builds the system from exact matrices (shapes asserted).
    pub fn new(q: Mat, k: Mat, v: Mat) -> System {
        assert_eq!(q.cols, v.rows);
        assert_eq!((q.rows, q.cols), (k.rows, k.cols));
        assert!(v.is_square());
        let qk = q.transpose().mul(&k);
        System {
            d: v.rows,
            q,
            k,
            v,
            qk,
        }
    }
    /// R = I + Δt V, exactly.
    pub fn r(&self, dt: &Rational) -> Mat {
        Mat::identity(self.d).add(&self.v.scale(dt))
    }
}

/// Initial tokens as an n × d exact matrix from a spec, requiring pairwise
/// distinct tokens when `distinct` (the error names both indices).
pub fn tokens(
    field: &str,
    spec: &MatrixSpec,
    n: usize,
    d: usize,
    distinct: bool,
) -> Result<Mat, FieldError> {
    if n == 0 {
        return Err(FieldError::new("n", "must be at least 1"));
    }
    let m = spec.resolve(field, Some(n), d)?;
    if distinct {
        if let Some((i, j)) = m.equal_rows() {
            return Err(FieldError::new(
                field,
                format!("tokens {i} and {j} coincide; this claim needs pairwise distinct initial tokens"),
            ));
        }
    }
    Ok(m)
}
