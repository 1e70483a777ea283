//! An untrusted search for byte inputs that make one head's content-logit range large
//! (issue #40): a *lower* bound on the worst case over all inputs that the kernel's Δ̄_ℓh
//! bounds from above, so that the ratio Δ̄_ℓh / (the range found) says how far the bound is
//! from the truth, where Δ̄_ℓh / (the range on validation data) mixes that with how far the
//! validation data are from the worst input.
//!
//! **The quantity.** For head h of layer ℓ and an input of bytes b_0 … b_{n−1}, the range of
//! query i's row is max_{j ≤ i} s_ij − min_{j ≤ i} s_ij with s_ij = q_i·k_j/√d_h (the position
//! bias is not part of it, as in [`crate::model::Model::content_logit_ranges`], which
//! computes the same number with the model's own operations); an input's range is the
//! largest over its queries.
//!
//! **The search** ([`search`]): coordinate ascent from seeded random bytes, for each length
//! of [`Search::lengths`] and each of [`Search::restarts`] starts: a sweep visits the
//! positions in a seeded random order and sets each to the byte (of all 256) that makes the
//! input's range largest, keeping the current one unless another is strictly better; sweeps
//! repeat until one changes nothing or [`Search::sweeps`] have run. The best input over all
//! starts is kept (the first on a tie). A change at position p leaves every layer's state
//! before p alone (causal attention), so a trial recomputes positions p … n − 1 only.
//!
//! The evaluation here is plain f64 loops over the model's weights (read from an f64
//! [`Model`]): every sum in a fixed order, no threads, so a search is a pure function of the
//! weights and its parameters. It decides nothing: what a report prints is the found
//! input's range re-evaluated by the model's forward pass in f64, and a test compares the
//! two (they differ by the rounding of their sums' orders).

use crate::model::{Model, Position, LN_EPS, VOCAB};
use crate::{DType, Error, Result, SplitMix64};

/// The weights as f64 arrays, row-major ([in, out] for the projections).
struct Layer {
    ln1: (Vec<f64>, Vec<f64>),
    qkv: (Vec<f64>, Vec<f64>),
    o: (Vec<f64>, Vec<f64>),
    ln2: (Vec<f64>, Vec<f64>),
    fc1: (Vec<f64>, Vec<f64>),
    fc2: (Vec<f64>, Vec<f64>),
}

/// A model's weights and position bias, for [`search`].
pub struct Net {
    d: usize,
    heads: usize,
    emb: Vec<f64>,
    layers: Vec<Layer>,
    /// b_h(r) for r < the longest length searched.
    bias: Vec<Vec<f64>>,
}

/// The search's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Search {
    /// Input lengths tried (each ≥ 1).
    pub lengths: Vec<usize>,
    /// Random starts per length.
    pub restarts: usize,
    /// The most sweeps of one start.
    pub sweeps: usize,
    /// The seed of every random draw.
    pub seed: u64,
}

/// An input the search found and its range (the evaluation of this module).
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// The query whose row attains the range.
    pub query: usize,
    /// The range of its row.
    pub range: f64,
}

fn vals(m: &Model, name: &str) -> Result<Vec<f64>> {
    let t = m
        .weights()
        .get(name)
        .ok_or_else(|| Error::Config(format!("the model has no weight {name}")))?;
    Ok(t.to_dtype(DType::F64)?.flatten_all()?.to_vec1::<f64>()?)
}

impl Net {
    /// The weights of `model` (a model with an additive position bias and no other
    /// position information, as ALiBi's), for inputs of up to `max_len` bytes.
    pub fn of(model: &Model, max_len: usize) -> Result<Net> {
        if !matches!(model.cfg.position, Position::Bias(_)) {
            return Err(Error::Config(
                "the logit search needs a model whose only position information is an additive bias"
                    .into(),
            ));
        }
        let pair = |n: &str| -> Result<(Vec<f64>, Vec<f64>)> {
            Ok((
                vals(model, &format!("{n}.w"))?,
                vals(model, &format!("{n}.b"))?,
            ))
        };
        let layers = (0..model.cfg.layers)
            .map(|l| {
                Ok(Layer {
                    ln1: pair(&format!("l{l}.ln1"))?,
                    qkv: pair(&format!("l{l}.qkv"))?,
                    o: pair(&format!("l{l}.o"))?,
                    ln2: pair(&format!("l{l}.ln2"))?,
                    fc1: pair(&format!("l{l}.fc1"))?,
                    fc2: pair(&format!("l{l}.fc2"))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Net {
            d: model.cfg.hidden,
            heads: model.cfg.heads,
            emb: vals(model, "emb")?,
            layers,
            bias: model.bias_table(max_len.max(1)),
        })
    }

    /// The layers.
    pub fn layers(&self) -> usize {
        self.layers.len()
    }

    /// The heads.
    pub fn heads(&self) -> usize {
        self.heads
    }

    /// The range of head `head` of layer `layer` on `bytes` and the query attaining it
    /// (the first on a tie).
    pub fn range(&self, bytes: &[u8], layer: usize, head: usize) -> (f64, usize) {
        let mut st = State::new(self, bytes.len(), layer);
        st.run(self, bytes, 0, layer, head);
        st.best()
    }
}

/// Per position: every layer's input up to the searched one, that layer's q and k of the
/// head, and each query's row range.
struct State {
    /// xs[l][t·d..]: the input of layer l at position t (l ≤ the searched layer).
    xs: Vec<Vec<f64>>,
    /// qkv[l][t·3d..] of layers below the searched one.
    qkv: Vec<Vec<f64>>,
    /// The searched head's q and k at each position (d_h each).
    q: Vec<f64>,
    k: Vec<f64>,
    rows: Vec<f64>,
    n: usize,
}

fn layer_norm(x: &[f64], g: &[f64], b: &[f64], out: &mut [f64]) {
    let d = x.len() as f64;
    let mean = x.iter().sum::<f64>() / d;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / d;
    let inv = 1.0 / (var + LN_EPS).sqrt();
    for k in 0..x.len() {
        out[k] = (x[k] - mean) * inv * g[k] + b[k];
    }
}

/// out = b + x·W (W [x.len(), out.len()] row-major), with ReLU when asked.
fn affine(x: &[f64], w: &[f64], b: &[f64], relu: bool, out: &mut [f64]) {
    let m = out.len();
    out.copy_from_slice(b);
    for (i, xi) in x.iter().enumerate() {
        let row = &w[i * m..(i + 1) * m];
        for (o, wv) in out.iter_mut().zip(row) {
            *o += xi * wv;
        }
    }
    if relu {
        for o in out.iter_mut() {
            *o = o.max(0.0);
        }
    }
}

impl State {
    fn new(net: &Net, n: usize, layer: usize) -> State {
        let d = net.d;
        let dh = d / net.heads;
        State {
            xs: vec![vec![0.0; n * d]; layer + 1],
            qkv: vec![vec![0.0; n * 3 * d]; layer],
            q: vec![0.0; n * dh],
            k: vec![0.0; n * dh],
            rows: vec![0.0; n],
            n,
        }
    }

    /// Recomputes positions `from` … n − 1 for `bytes` (the earlier ones are as computed
    /// for the same earlier bytes).
    fn run(&mut self, net: &Net, bytes: &[u8], from: usize, layer: usize, head: usize) {
        let (d, n) = (net.d, self.n);
        let dh = d / net.heads;
        let scale = 1.0 / (dh as f64).sqrt();
        let mut y = vec![0.0; d];
        let mut hid = vec![0.0; 4 * d];
        let mut att = vec![0.0; d];
        let mut o = vec![0.0; d];
        let mut w = vec![0.0; n];
        for (t, &b) in bytes.iter().enumerate().take(n).skip(from) {
            let b = b as usize;
            self.xs[0][t * d..(t + 1) * d].copy_from_slice(&net.emb[b * d..(b + 1) * d]);
        }
        for l in 0..layer {
            let lw = &net.layers[l];
            for t in from..n {
                layer_norm(
                    &self.xs[l][t * d..(t + 1) * d],
                    &lw.ln1.0,
                    &lw.ln1.1,
                    &mut y,
                );
                affine(
                    &y,
                    &lw.qkv.0,
                    &lw.qkv.1,
                    false,
                    &mut self.qkv[l][t * 3 * d..(t + 1) * 3 * d],
                );
            }
            let qkv = &self.qkv[l];
            for t in from..n {
                for h in 0..net.heads {
                    let q = &qkv[t * 3 * d + h * dh..t * 3 * d + (h + 1) * dh];
                    let mut top = f64::NEG_INFINITY;
                    for j in 0..=t {
                        let k = &qkv[j * 3 * d + d + h * dh..j * 3 * d + d + (h + 1) * dh];
                        let s = scale * q.iter().zip(k).map(|(a, b)| a * b).sum::<f64>()
                            + net.bias[h][t - j];
                        w[j] = s;
                        top = top.max(s);
                    }
                    let mut z = 0.0;
                    for wj in w[..=t].iter_mut() {
                        *wj = (*wj - top).exp();
                        z += *wj;
                    }
                    let a = &mut att[h * dh..(h + 1) * dh];
                    a.iter_mut().for_each(|v| *v = 0.0);
                    for (j, wj) in w[..=t].iter().enumerate() {
                        let v = &qkv[j * 3 * d + 2 * d + h * dh..j * 3 * d + 2 * d + (h + 1) * dh];
                        for (av, vv) in a.iter_mut().zip(v) {
                            *av += wj / z * vv;
                        }
                    }
                }
                affine(&att, &lw.o.0, &lw.o.1, false, &mut o);
                let (lo, hi) = self.xs.split_at_mut(l + 1);
                let x = &mut lo[l][t * d..(t + 1) * d];
                let next = &mut hi[0][t * d..(t + 1) * d];
                for k in 0..d {
                    next[k] = x[k] + o[k];
                }
                layer_norm(next, &lw.ln2.0, &lw.ln2.1, &mut y);
                affine(&y, &lw.fc1.0, &lw.fc1.1, true, &mut hid);
                affine(&hid, &lw.fc2.0, &lw.fc2.1, false, &mut o);
                for k in 0..d {
                    next[k] += o[k];
                }
            }
        }
        // the searched layer: q and k of the head, then the rows
        let lw = &net.layers[layer];
        let cols = |off: usize| -> (Vec<f64>, Vec<f64>) {
            let w: Vec<f64> = (0..d)
                .flat_map(|i| {
                    lw.qkv.0[i * 3 * d + off + head * dh..i * 3 * d + off + (head + 1) * dh]
                        .iter()
                        .copied()
                })
                .collect();
            (w, lw.qkv.1[off + head * dh..off + (head + 1) * dh].to_vec())
        };
        let ((wq, bq), (wk, bk)) = (cols(0), cols(d));
        for t in from..n {
            layer_norm(
                &self.xs[layer][t * d..(t + 1) * d],
                &lw.ln1.0,
                &lw.ln1.1,
                &mut y,
            );
            affine(&y, &wq, &bq, false, &mut self.q[t * dh..(t + 1) * dh]);
            affine(&y, &wk, &bk, false, &mut self.k[t * dh..(t + 1) * dh]);
        }
        for i in from..n {
            let q = &self.q[i * dh..(i + 1) * dh];
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for j in 0..=i {
                let k = &self.k[j * dh..(j + 1) * dh];
                let s = scale * q.iter().zip(k).map(|(a, b)| a * b).sum::<f64>();
                lo = lo.min(s);
                hi = hi.max(s);
            }
            self.rows[i] = hi - lo;
        }
    }

    /// The largest row range and its query (the first on a tie).
    fn best(&self) -> (f64, usize) {
        let mut out = (f64::NEG_INFINITY, 0);
        for (i, &r) in self.rows.iter().enumerate() {
            if r > out.0 {
                out = (r, i);
            }
        }
        out
    }
}

/// The search of the module documentation for head `head` of layer `layer`.
pub fn search(net: &Net, layer: usize, head: usize, s: &Search) -> Result<Found> {
    if layer >= net.layers() || head >= net.heads() {
        return Err(Error::Config(format!(
            "no head {head} of layer {layer} (the model has {} layers of {} heads)",
            net.layers(),
            net.heads()
        )));
    }
    if s.lengths.iter().any(|&n| n == 0 || n > net.bias[0].len()) || s.restarts == 0 {
        return Err(Error::Config(format!(
            "search lengths {:?} must lie in 1..={} and restarts be ≥ 1",
            s.lengths,
            net.bias[0].len()
        )));
    }
    let mut rng = SplitMix64(s.seed);
    let mut best: Option<Found> = None;
    for &n in &s.lengths {
        for _ in 0..s.restarts {
            let mut bytes: Vec<u8> = (0..n).map(|_| rng.below(VOCAB as u64) as u8).collect();
            let mut st = State::new(net, n, layer);
            st.run(net, &bytes, 0, layer, head);
            let mut cur = st.best().0;
            for _ in 0..s.sweeps {
                let mut order: Vec<usize> = (0..n).collect();
                for i in (1..n).rev() {
                    order.swap(i, rng.below(i as u64 + 1) as usize);
                }
                let mut changed = false;
                for &p in &order {
                    let keep = bytes[p];
                    let mut pick = keep;
                    for c in 0..VOCAB {
                        let c = c as u8;
                        if c == keep {
                            continue;
                        }
                        bytes[p] = c;
                        st.run(net, &bytes, p, layer, head);
                        let r = st.best().0;
                        if r > cur {
                            cur = r;
                            pick = c;
                        }
                    }
                    bytes[p] = pick;
                    st.run(net, &bytes, p, layer, head);
                    changed |= pick != keep;
                }
                if !changed {
                    break;
                }
            }
            let (range, query) = st.best();
            if best.as_ref().is_none_or(|b| range > b.range) {
                best = Some(Found {
                    bytes: bytes.clone(),
                    query,
                    range,
                });
            }
        }
    }
    Ok(best.expect("at least one start"))
}
