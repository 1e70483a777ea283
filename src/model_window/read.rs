//! Reads the tensors a [`Config`] names from a safetensors file (the `safetensors` crate)
//! into the kernel's `attn-weights` datum: exact f32 values. F32 is taken as it is; F16
//! and BF16 widen to f32 exactly; F64 is taken only where every value is an f32. Every
//! error names the file and the tensor (exit 2): a missing tensor, a wrong shape or
//! dtype, a NaN or infinity (no exact value), a truncated file, a header that lies about
//! its offsets.

use super::config::{at_layer, Config, Layout, Projections};
use crate::certificate::{AttnLayerEntry, DataEntry};
use crate::spec::SpecError;
use safetensors::{Dtype, SafeTensors};
use std::path::Path;

/// The most bytes read from one model file: 1 GiB (the kernel takes at most
/// layers·hidden² = 2^22 projection values; the rest of a file that fits is the MLP and
/// the output head, which are not read).
pub const MAX_MODEL_BYTES: u64 = 1 << 30;

/// The model's weights as the kernel's datum, and its hidden size.
#[derive(Clone, Debug)]
pub struct ModelWeights {
    /// The certificate entry (`attn-weights`).
    pub entry: DataEntry,
    /// Hidden size d.
    pub hidden: usize,
}

fn model_error(path: &Path, field: impl Into<String>, reason: impl Into<String>) -> SpecError {
    SpecError::Field {
        file: path.to_path_buf(),
        line: None,
        field: field.into(),
        reason: reason.into(),
    }
}

/// Reads the model file at `path` with `cfg`.
pub fn read(path: &Path, cfg: &Config) -> Result<ModelWeights, SpecError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_MODEL_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| SpecError::File {
            file: path.to_path_buf(),
            line: None,
            reason: e.to_string(),
        })?;
    if bytes.len() as u64 > MAX_MODEL_BYTES {
        return Err(SpecError::File {
            file: path.to_path_buf(),
            line: None,
            reason: format!(
                "the file is larger than {} MiB, the most attncheck reads from one model",
                MAX_MODEL_BYTES >> 20
            ),
        });
    }
    from_bytes(path, &bytes, cfg)
}

/// [`read`] from the file's bytes (`path` names it in errors).
pub fn from_bytes(path: &Path, bytes: &[u8], cfg: &Config) -> Result<ModelWeights, SpecError> {
    let st = SafeTensors::deserialize(bytes).map_err(|e| SpecError::File {
        file: path.to_path_buf(),
        line: None,
        reason: format!("not a readable safetensors file: {e}"),
    })?;
    let get = |name: &str, shape: &[usize]| -> Result<Vec<u32>, SpecError> {
        tensor_bits(path, &st, name, Some(shape))
    };
    // d from the first layer's γ
    let gain0 = at_layer(&cfg.ln_gain, 0);
    let d = match tensor_shape(path, &st, &gain0)?[..] {
        [d] if d >= 1 => d,
        ref s => {
            return Err(model_error(
                path,
                format!("tensor {gain0}"),
                format!("has shape {s:?}; a LayerNorm gain is [hidden]"),
            ))
        }
    };
    if d > crate::kernel::weights::MAX_HIDDEN {
        return Err(model_error(
            path,
            format!("tensor {gain0}"),
            format!(
                "hidden = {d}; the kernel takes hidden ≤ {}",
                crate::kernel::weights::MAX_HIDDEN
            ),
        ));
    }
    if !d.is_multiple_of(cfg.heads) {
        return Err(SpecError::Field {
            file: cfg.path.clone(),
            line: crate::spec::line_of_key(
                &std::fs::read_to_string(&cfg.path).unwrap_or_default(),
                "heads",
            ),
            field: "heads".into(),
            reason: format!("{} heads do not divide hidden = {d} ({gain0})", cfg.heads),
        });
    }
    if cfg.layers * d * d > crate::kernel::weights::MAX_VALUES {
        return Err(model_error(
            path,
            format!("tensor {gain0}"),
            format!(
                "layers·hidden² = {}·{d}² exceeds the kernel's {} values",
                cfg.layers,
                crate::kernel::weights::MAX_VALUES
            ),
        ));
    }
    let zeros = vec![0u32; d];
    let opt = |name: &Option<String>, l: usize, n: usize| -> Result<Vec<u32>, SpecError> {
        match name {
            Some(t) => get(&at_layer(t, l), &[n]),
            None => Ok(vec![0u32; n]),
        }
    };
    // a [rows, cols] matrix in the kernel's layout: [in, out]
    let matrix = |name: &str, outs: usize| -> Result<Vec<u32>, SpecError> {
        match cfg.layout {
            Layout::InOut => get(name, &[d, outs]),
            Layout::OutIn => {
                let w = get(name, &[outs, d])?;
                let mut t = vec![0u32; d * outs];
                for o in 0..outs {
                    for i in 0..d {
                        t[i * outs + o] = w[o * d + i];
                    }
                }
                Ok(t)
            }
        }
    };
    let mut layers = Vec::with_capacity(cfg.layers);
    for l in 0..cfg.layers {
        let gain = get(&at_layer(&cfg.ln_gain, l), &[d])?;
        let shift = match &cfg.ln_shift {
            Some(t) => get(&at_layer(t, l), &[d])?,
            None => zeros.clone(),
        };
        let (wq, bq, wk, bk) = match &cfg.projections {
            Projections::Fused { weight, bias } => {
                let w = matrix(&at_layer(weight, l), 3 * d)?;
                let cols = |from: usize| -> Vec<u32> {
                    w.chunks_exact(3 * d)
                        .flat_map(|row| row[from..from + d].iter().copied())
                        .collect()
                };
                let b = opt(bias, l, 3 * d)?;
                (cols(0), b[..d].to_vec(), cols(d), b[d..2 * d].to_vec())
            }
            Projections::Split {
                q_weight,
                q_bias,
                k_weight,
                k_bias,
            } => (
                matrix(&at_layer(q_weight, l), d)?,
                opt(q_bias, l, d)?,
                matrix(&at_layer(k_weight, l), d)?,
                opt(k_bias, l, d)?,
            ),
        };
        layers.push([gain, shift, wq, bq, wk, bk]);
    }
    let input = match &cfg.embedding {
        Some(name) => Some((
            vec![cfg.ln_eps.to_bits()],
            get(name, &[crate::kernel::weights::VOCAB, d])?,
        )),
        None => None,
    };
    let mut all: Vec<Vec<u32>> = layers.iter().flatten().cloned().collect();
    if let Some((e, x)) = &input {
        all.push(e.clone());
        all.push(x.clone());
    }
    let sha256 = crate::kernel::weights::digest(&all);
    let hex = |v: &[u32]| -> String { v.iter().map(|b| format!("{b:08x}")).collect() };
    let entry = DataEntry::AttnWeights {
        hidden: d,
        heads: cfg.heads,
        sha256,
        layers: layers
            .iter()
            .map(|[g, s, wq, bq, wk, bk]| AttnLayerEntry {
                ln_gain: hex(g),
                ln_shift: hex(s),
                w_q: hex(wq),
                b_q: hex(bq),
                w_k: hex(wk),
                b_k: hex(bk),
            })
            .collect(),
        ln_eps: input.as_ref().map(|(e, _)| hex(e)),
        embedding: input.as_ref().map(|(_, x)| hex(x)),
    };
    Ok(ModelWeights { entry, hidden: d })
}

fn tensor_shape(path: &Path, st: &SafeTensors, name: &str) -> Result<Vec<usize>, SpecError> {
    st.tensor(name)
        .map(|t| t.shape().to_vec())
        .map_err(|_| missing(path, st, name))
}

fn missing(path: &Path, st: &SafeTensors, name: &str) -> SpecError {
    let mut names = st.names();
    names.sort_unstable();
    let shown: Vec<&str> = names.iter().take(12).copied().collect();
    model_error(
        path,
        format!("tensor {name}"),
        format!(
            "not in the file (it holds {} tensors: {}{})",
            names.len(),
            shown.join(", "),
            if names.len() > shown.len() {
                ", …"
            } else {
                ""
            }
        ),
    )
}

/// The f32 bit patterns of tensor `name` (of `shape`, when given), widened exactly from
/// F16 or BF16, or from F64 values that are f32 values; NaN and ±∞ refused.
pub fn tensor_bits(
    path: &Path,
    st: &SafeTensors,
    name: &str,
    shape: Option<&[usize]>,
) -> Result<Vec<u32>, SpecError> {
    let t = st.tensor(name).map_err(|_| missing(path, st, name))?;
    let field = format!("tensor {name}");
    if let Some(s) = shape {
        if t.shape() != s {
            return Err(model_error(
                path,
                field,
                format!("has shape {:?}; the config's model needs {s:?}", t.shape()),
            ));
        }
    }
    let data = t.data();
    let bits: Vec<u32> = match t.dtype() {
        Dtype::F32 => data
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        Dtype::BF16 => data
            .chunks_exact(2)
            .map(|c| u32::from(u16::from_le_bytes([c[0], c[1]])) << 16)
            .collect(),
        Dtype::F16 => data
            .chunks_exact(2)
            .map(|c| f16_bits(u16::from_le_bytes([c[0], c[1]])))
            .collect(),
        Dtype::F64 => {
            let mut out = Vec::with_capacity(data.len() / 8);
            for (i, c) in data.chunks_exact(8).enumerate() {
                let v = f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
                let f = v as f32;
                if v.is_finite() && f64::from(f) != v {
                    return Err(model_error(
                        path,
                        field,
                        format!(
                            "value {i} ({v:e}) is not an f32: the kernel takes f32 weights \
                             exactly (store the model in F32, F16 or BF16)"
                        ),
                    ));
                }
                out.push(f.to_bits());
            }
            out
        }
        other => {
            return Err(model_error(
                path,
                field,
                format!("has dtype {other:?}; the weights must be F32, F16, BF16 or F64"),
            ))
        }
    };
    if let Some(i) = bits.iter().position(|b| (b >> 23) & 0xff == 0xff) {
        return Err(model_error(
            path,
            field,
            format!(
                "value {i} is {} (no exact value: the kernel bounds finite weights only)",
                f32::from_bits(bits[i])
            ),
        ));
    }
    Ok(bits)
}

/// The f32 bit pattern of an IEEE binary16 value (exact: every f16 is an f32).
pub fn f16_bits(h: u16) -> u32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x3ff);
    match exp {
        0 if man == 0 => sign,
        // subnormal: man·2^-24, a normal f32
        0 => sign | (man as f32 * f32::from_bits(0x3380_0000)).to_bits(),
        0x1f => sign | 0x7f80_0000 | (man << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (man << 13),
    }
}
