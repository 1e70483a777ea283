//! Dense matrices of exact rationals (the data of the `layer` datum; also used by
//! the application's untrusted dynamics).

use crate::Interval;
use rug::{Assign, Rational};

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
