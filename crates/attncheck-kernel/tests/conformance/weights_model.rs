//! Models for the `attn-weights` datum's tests: one layer's f32 tensors, their stored
//! form (hex patterns and SHA-256) and the datum built from them. Shared with the
//! application's tests/it (its trained-model certificate tests), which include this file.

use attncheck_kernel::expr::{Data, Datum};
use attncheck_kernel::weights::{digest, AttnWeights, LayerHex};

/// One layer's tensors: γ, β (d), W_Q (d × d, input × output, row-major), b_Q, W_K, b_K.
#[derive(Clone, Debug)]
pub struct Layer {
    pub gamma: Vec<f32>,
    pub beta: Vec<f32>,
    pub wq: Vec<f32>,
    pub bq: Vec<f32>,
    pub wk: Vec<f32>,
    pub bk: Vec<f32>,
}

impl Layer {
    pub fn parts(&self) -> [&Vec<f32>; 6] {
        [
            &self.gamma,
            &self.beta,
            &self.wq,
            &self.bq,
            &self.wk,
            &self.bk,
        ]
    }
}

pub fn hex(v: &[f32]) -> String {
    v.iter().map(|x| format!("{:08x}", x.to_bits())).collect()
}

/// The stored form and the SHA-256 of `layers`.
pub fn stored(layers: &[Layer]) -> (Vec<LayerHex>, String) {
    let bits: Vec<Vec<u32>> = layers
        .iter()
        .flat_map(|l| l.parts().map(|p| p.iter().map(|x| x.to_bits()).collect()))
        .collect();
    let hx = layers.iter().map(|l| l.parts().map(|p| hex(p))).collect();
    (hx, digest(&bits))
}

pub fn datum(hidden: usize, heads: usize, layers: &[Layer]) -> AttnWeights {
    let (hx, sha) = stored(layers);
    AttnWeights::new(hidden, heads, &sha, hx).expect("a valid datum")
}

pub fn data_of(pairs: &[(&str, AttnWeights)]) -> Data {
    pairs
        .iter()
        .map(|(n, w)| (n.to_string(), Datum::Attn(w.clone())))
        .collect()
}
