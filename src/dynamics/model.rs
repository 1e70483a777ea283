//! The exact particle system: Q, K, V and the initial tokens as rational
//! matrices, and the spec types that describe them.
//!
//! Every number that enters a verdict starts here as an exact rational: decimal
//! matrices quoted in clusters.md are taken as the exact decimals shown, and seeded
//! random data is drawn on a dyadic grid (multiples of 2^−g), so every instance is
//! exact and identical on every machine.

use crate::kernel;
use crate::rng::SplitMix64;
use crate::spec::FieldError;
use rug::{Integer, Rational};
use serde::{Deserialize, Serialize};

pub use crate::kernel::Mat;

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
        // the size as written, before anything is parsed or allocated: a 128 MB spec holds a
        // diagonal of 10⁷ entries (a dense 10⁷ × 10⁷ matrix), and a random matrix's `rows`
        // is any integer; whether it matches `rows` and `cols` is checked once it is built
        let written = match self {
            MatrixSpec::Named(_) => rows.unwrap_or(cols),
            MatrixSpec::Rows(r) => r.len(),
            MatrixSpec::Diag { diag } => diag.len(),
            MatrixSpec::Random { rows: r, .. } => r.or(rows).unwrap_or(cols),
        };
        if written > MAX_D {
            return Err(FieldError::new(
                field,
                format!("{written} rows, above the bound {MAX_D}"),
            ));
        }
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
    let range = DyadicRange::new(field, lo, hi, g)?;
    if rows == 0 || cols == 0 {
        return Err(FieldError::new(
            field,
            "a matrix needs at least one row and column",
        ));
    }
    Ok(range.draw(rows, cols, seed))
}

/// The grid 2^−g ℤ ∩ [lo, hi] of [`random_dyadic`], resolved once from its literals.
#[derive(Clone, Debug, PartialEq)]
pub struct DyadicRange {
    /// The smallest grid point, in units of 2^−g.
    a: Integer,
    /// The number of grid points minus one.
    span: u64,
    /// 2^g.
    scale: Integer,
}

impl DyadicRange {
    /// The grid of `[lo, hi]` (exact literals) at 2^−g; errors name `field`.
    pub fn new(field: &str, lo: &str, hi: &str, g: u32) -> Result<DyadicRange, FieldError> {
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
        Ok(DyadicRange { a, span, scale })
    }

    /// `rows × cols` grid points drawn by SplitMix64 from `seed`, row-major.
    pub fn draw(&self, rows: usize, cols: usize, seed: u64) -> Mat {
        let mut rng = SplitMix64::new(seed);
        let mut data = Vec::with_capacity(rows * cols);
        for _ in 0..rows * cols {
            let m = Integer::from(&self.a + rng.below(self.span + 1));
            data.push(Rational::from((m, self.scale.clone())));
        }
        Mat { rows, cols, data }
    }
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

/// The largest dimension d a spec may give a system: the authors' largest configuration
/// (n = d = 512, as `n`'s bound), and what keeps d × d matrices of exact rationals (Q, K,
/// V, QᵀK) within memory.
pub const MAX_D: usize = 512;

impl System {
    /// A dimension a spec may give: 1 to [`MAX_D`] (the error names `d`).
    pub fn check_d(d: usize) -> Result<(), FieldError> {
        if d == 0 || d > MAX_D {
            return Err(FieldError::new(
                "d",
                format!("must be between 1 and {MAX_D}"),
            ));
        }
        Ok(())
    }

    /// Builds the system from spec matrices: Q and K must have d columns and the
    /// same number of rows, V must be d × d. Errors name the field.
    pub fn from_specs(
        d: usize,
        q: &MatrixSpec,
        k: &MatrixSpec,
        v: &MatrixSpec,
    ) -> Result<System, FieldError> {
        Self::check_d(d)?;
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
