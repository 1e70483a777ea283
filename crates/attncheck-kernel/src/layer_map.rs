//! The layer map (D) in outward-rounded intervals: the two operations one step of
//! the discrete map in layer form is made of (TRUSTED: the certificate evaluator
//! iterates the `layer` datum with them, [`crate::layer_data`]).
//!
//! ```text
//! x_i^{k+1} = x_i^k + Δt V Σ_j P_ij(x^k) x_j^k,        P_ij(x) = softmax_j ⟨Q x_i, K x_j⟩ = softmax_j x_iᵀ(QᵀK)x_j.
//! ```
//!
//! The step uses Σ_j P_ij x_j = x_i + Σ_j P_ij (x_j − x_i) (exact because Σ_j P_ij = 1):
//! the interval enclosure of the right side stays tight when tokens cluster, since
//! the widths of the P_ij multiply differences, not positions. Every operation is
//! an [`Interval`] operation, so the enclosures contain the exact iterates of the
//! map for the exact rational data (each step applies inclusion-monotone
//! operations to enclosures of the previous iterate). Softmax is the kernel's
//! certified `p_i = 1 / (1 + Σ_{j≠i} e^{s_j − s_i})` form, stable for logits of any
//! size.
//!
//! The untrusted dynamics of the application (its `dynamics::discrete`, with the
//! rescaled forms of the map) are built from the same two operations.

use crate::{softmax_into, Interval};

/// `y = A x` for a d × d interval matrix (row-major) and a d-vector.
pub fn mat_vec_into(a: &[Interval], x: &[Interval], d: usize, y: &mut [Interval]) {
    for (r, yr) in y.iter_mut().enumerate() {
        let row = &a[r * d..(r + 1) * d];
        let mut s = &row[0] * &x[0];
        for c in 1..d {
            s.add_assign(&(&row[c] * &x[c]));
        }
        *yr = s;
    }
}

/// The attention matrix P(x) (n × n) of tokens x (n × d), certified:
/// P_ij = softmax_j x_iᵀ M x_j, given `qk_t` = Mᵀ = (QᵀK)ᵀ (the paper's
/// orientation: row i is the query x_i). Computed as a_i = Mᵀ x_i,
/// logit_ij = ⟨a_i, x_j⟩.
pub fn attention(
    qk_t: &[Interval],
    x: &[Interval],
    n: usize,
    d: usize,
    prec: u32,
) -> Vec<Interval> {
    let mut a = vec![Interval::zero(prec); n * d];
    for i in 0..n {
        mat_vec_into(qk_t, &x[i * d..(i + 1) * d], d, &mut a[i * d..(i + 1) * d]);
    }
    let mut p = Vec::with_capacity(n * n);
    let mut logits = Vec::with_capacity(n);
    let mut row = Vec::with_capacity(n);
    for i in 0..n {
        logits.clear();
        let ai = &a[i * d..(i + 1) * d];
        for j in 0..n {
            let xj = &x[j * d..(j + 1) * d];
            let mut s = &ai[0] * &xj[0];
            for c in 1..d {
                s.add_assign(&(&ai[c] * &xj[c]));
            }
            logits.push(s);
        }
        softmax_into(&logits, prec, &mut row);
        p.append(&mut row);
    }
    p
}

/// One residual step u_i + A w_i of the n × d state `u` with attention `p` (n × n)
/// and the d × d matrix `a` (Δt V for the layer). With `layer`,
/// w_i = u_i + Σ_{j≠i} P_ij (u_j − u_i) = Σ_j P_ij u_j (the layer form); without it,
/// w_i = Σ_{j≠i} P_ij (u_j − u_i) (the rescaled forms, not used by the kernel).
pub fn residual_step(
    a: &[Interval],
    u: &[Interval],
    p: &[Interval],
    (n, d): (usize, usize),
    prec: u32,
    layer: bool,
) -> Vec<Interval> {
    let mut out = Vec::with_capacity(n * d);
    let mut avg = vec![Interval::zero(prec); d];
    let mut upd = vec![Interval::zero(prec); d];
    for i in 0..n {
        let ui = &u[i * d..(i + 1) * d];
        // avg = Σ_j P_ij (u_j − u_i)   (so that Σ_j P_ij u_j = u_i + avg).
        for a in avg.iter_mut() {
            *a = Interval::zero(prec);
        }
        for j in 0..n {
            if j == i {
                continue;
            }
            let pij = &p[i * n + j];
            for c in 0..d {
                let diff = &u[j * d + c] - &ui[c];
                avg[c].add_assign(&(pij * &diff));
            }
        }
        if layer {
            // Σ_j P_ij x_j = x_i + avg.
            for c in 0..d {
                avg[c].add_assign(&ui[c]);
            }
        }
        mat_vec_into(a, &avg, d, &mut upd);
        for c in 0..d {
            out.push(&ui[c] + &upd[c]);
        }
    }
    out
}

/// max over a non-empty list of intervals (enclosure of the maximum).
pub fn max_all<'a>(it: impl IntoIterator<Item = &'a Interval>) -> Interval {
    let mut it = it.into_iter();
    let first = it.next().expect("max_all of an empty list").clone();
    it.fold(first, |m, x| m.max(x))
}

/// Enclosures of the squared Euclidean norms ‖u_i‖² of the rows of an n × d state.
pub fn sq_norms(u: &[Interval], n: usize, d: usize) -> Vec<Interval> {
    (0..n)
        .map(|i| {
            let row = &u[i * d..(i + 1) * d];
            let mut s = row[0].powi(2);
            for x in &row[1..] {
                s.add_assign(&x.powi(2));
            }
            s
        })
        .collect()
}
