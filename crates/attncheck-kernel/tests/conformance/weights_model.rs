//! Models for the `attn-weights` datum's tests: one layer's f32 tensors, their stored
//! form (hex patterns and SHA-256) and the datum built from them. Shared with the
//! application's tests/it (its trained-model certificate tests), which include this file.

use attncheck_kernel::expr::{Data, Datum};
use attncheck_kernel::weights::{digest, AttnWeights, InputHex, LayerHex};

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

/// The f32 bit patterns of `layers`, part by part in hashing order.
fn layer_bits(layers: &[Layer]) -> Vec<Vec<u32>> {
    layers
        .iter()
        .flat_map(|l| l.parts().map(|p| p.iter().map(|x| x.to_bits()).collect()))
        .collect()
}

/// The stored form and the SHA-256 of `layers`.
pub fn stored(layers: &[Layer]) -> (Vec<LayerHex>, String) {
    let bits = layer_bits(layers);
    let hx = layers.iter().map(|l| l.parts().map(|p| hex(p))).collect();
    (hx, digest(&bits))
}

pub fn datum(hidden: usize, heads: usize, layers: &[Layer]) -> AttnWeights {
    let (hx, sha) = stored(layers);
    AttnWeights::new(hidden, heads, &sha, hx, None).expect("a valid datum")
}

/// The datum of `layers` with layer 0's input: the embedding E (256 × d, row-major)
/// and ε_LN, hashed after the layers.
pub fn datum_with_input(
    hidden: usize,
    heads: usize,
    layers: &[Layer],
    embedding: &[f32],
    eps: f32,
) -> AttnWeights {
    let (hx, _) = stored(layers);
    let mut bits = layer_bits(layers);
    bits.push(vec![eps.to_bits()]);
    bits.push(embedding.iter().map(|x| x.to_bits()).collect());
    let input = InputHex {
        ln_eps: hex(&[eps]),
        embedding: hex(embedding),
    };
    AttnWeights::new(hidden, heads, &digest(&bits), hx, Some(input)).expect("a valid datum")
}

pub fn data_of(pairs: &[(&str, AttnWeights)]) -> Data {
    pairs
        .iter()
        .map(|(n, w)| (n.to_string(), Datum::Attn(w.clone())))
        .collect()
}

/// The hand-built model: d = 4, one head (d_h = 4), one layer.
/// - γ = (1/2, −1, 1/4, 1), β = (3/4, 1, 0, 0): B = √4·1 + 5/4 = 13/4.
/// - W_Q = diag(2, 1, 1, 1): ‖·‖_F = √7, ‖·‖₁ = ‖·‖_∞ = 2, so N(W_Q) = min(√7, 2) = 2;
///   b_Q = (−3/4, 0, 0, 1), ‖b_Q‖ = 5/4: Q̄ = 2·13/4 + 5/4 = 31/4.
/// - W_K rows (2, 2, 0, 0), (1, 0, 0, 0), 0, 0: ‖·‖_F = 3, ‖·‖₁ = 3, ‖·‖_∞ = 4, so
///   N(W_K) = min(3, √12) = 3; b_K = (0, 0, 0, 1/2): K̄ = 3·13/4 + 1/2 = 41/4.
/// - Δ̄ = 2·(31/4)(41/4)/√4 = 1271/16 = 79.4375.
pub fn hand_model() -> Layer {
    let mut wq = vec![0.0f32; 16];
    for (a, v) in [2.0, 1.0, 1.0, 1.0].into_iter().enumerate() {
        wq[a * 4 + a] = v;
    }
    let mut wk = vec![0.0f32; 16];
    wk[0] = 2.0;
    wk[1] = 2.0;
    wk[4] = 1.0;
    Layer {
        gamma: vec![0.5, -1.0, 0.25, 1.0],
        beta: vec![0.75, 1.0, 0.0, 0.0],
        wq,
        bq: vec![-0.75, 0.0, 0.0, 1.0],
        wk,
        bk: vec![0.0, 0.0, 0.0, 0.5],
    }
}

/// The `attn-weights` data entry of `layers` (JSON, as a certificate carries it).
pub fn entry_of(hidden: usize, heads: usize, layers: &[Layer]) -> serde_json::Value {
    let (hx, sha) = stored(layers);
    let names = ["ln_gain", "ln_shift", "w_q", "b_q", "w_k", "b_k"];
    serde_json::json!({
        "kind": "attn-weights",
        "hidden": hidden,
        "heads": heads,
        "sha256": sha,
        "layers": hx.iter().map(|l| {
            names.iter().zip(l).map(|(n, v)| (n.to_string(), serde_json::Value::from(v.clone())))
                .collect::<serde_json::Map<_, _>>()
        }).collect::<Vec<_>>(),
    })
}
