//! The config of `attncheck window`: which tensors of the user's safetensors file are the
//! LayerNorm and the query/key projections of each layer, the heads, the layer norms' ε
//! and the ALiBi slopes. Read once into a typed [`Config`]; every error names the file,
//! the line and the field (exit 2).
//!
//! ```toml
//! heads = 4
//! layers = 2
//! ln_eps = 1e-5           # as the model adds it: rounded to the nearest f32
//! slopes = "paper"        # ALiBi's 2^(-8k/H); "code" (the official get_slopes); or exact
//!                         # values, one per head: ["1/2", "1/4", "1/8", "1/16"]
//! [tensors]               # `{l}` is the layer's index
//! embedding = "emb"       # [256, hidden]: a byte-level model without position vectors at
//!                         # its input; omit it for any other model (layer 0 is then bounded
//!                         # over all inputs, like the deeper layers)
//! ln_gain = "l{l}.ln1.w"  # the LayerNorm before attention: γ [hidden] and β [hidden]
//! ln_shift = "l{l}.ln1.b"
//! qkv_weight = "l{l}.qkv.w"   # fused [hidden, 3·hidden] (q, k, v) with its bias [3·hidden];
//! qkv_bias = "l{l}.qkv.b"     # or q_weight, k_weight [hidden, hidden] and q_bias, k_bias
//! layout = "in-out"       # "in-out": q = y·W (W is [in, out]); "out-in": q = W·y, as
//!                         # PyTorch's nn.Linear stores it ([out, in])
//! ```

use super::alibi::{slope_exponents, SlopeRule};
use crate::spec::{line_of_key, SpecError};
use rug::Rational;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// How a layer's projections are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum Layout {
    /// `[in, out]`: q = y·W.
    #[serde(rename = "in-out")]
    InOut,
    /// `[out, in]`: q = W·y (PyTorch's `nn.Linear`).
    #[serde(rename = "out-in")]
    OutIn,
}

/// The ALiBi slope of each head.
#[derive(Clone, Debug, PartialEq)]
pub enum Slopes {
    /// A rule of ALiBi's ([`SlopeRule`]): m_k = 2^{−q_k}.
    Rule(SlopeRule),
    /// Exact values m_h > 0, one per head.
    Values(Vec<Rational>),
}

/// Where the query and key projections are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Projections {
    /// One [hidden, 3·hidden] matrix (q, k, v) and an optional [3·hidden] bias.
    Fused {
        /// The weight's name template.
        weight: String,
        /// The bias's name template.
        bias: Option<String>,
    },
    /// Separate [hidden, hidden] matrices with optional \[hidden\] biases.
    Split {
        /// W_Q.
        q_weight: String,
        /// b_Q.
        q_bias: Option<String>,
        /// W_K.
        k_weight: String,
        /// b_K.
        k_bias: Option<String>,
    },
}

/// A read and checked config.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The file it was read from.
    pub path: PathBuf,
    /// Heads H.
    pub heads: usize,
    /// Layers.
    pub layers: usize,
    /// ε of every layer norm, as an f32.
    pub ln_eps: f32,
    /// The slopes.
    pub slopes: Slopes,
    /// The embedding's name, if the model is byte-level.
    pub embedding: Option<String>,
    /// γ's name template.
    pub ln_gain: String,
    /// β's name template (none: β = 0).
    pub ln_shift: Option<String>,
    /// The projections.
    pub projections: Projections,
    /// Their layout.
    pub layout: Layout,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    heads: usize,
    layers: usize,
    ln_eps: f64,
    slopes: RawSlopes,
    tensors: RawTensors,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawSlopes {
    Rule(String),
    Values(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTensors {
    embedding: Option<String>,
    ln_gain: String,
    ln_shift: Option<String>,
    qkv_weight: Option<String>,
    qkv_bias: Option<String>,
    q_weight: Option<String>,
    q_bias: Option<String>,
    k_weight: Option<String>,
    k_bias: Option<String>,
    layout: Layout,
}

impl Config {
    /// Reads and checks the config at `path`.
    pub fn read(path: &Path) -> Result<Config, SpecError> {
        let text = crate::spec::read_utf8(path)?;
        Config::parse(path, &text)
    }

    /// Parses and checks a config's text (`path` names it in errors).
    pub fn parse(path: &Path, text: &str) -> Result<Config, SpecError> {
        let raw: Raw = toml::from_str(text).map_err(|e| crate::spec::toml_error(path, text, &e))?;
        let err = |field: &str, reason: String| SpecError::Field {
            file: path.to_path_buf(),
            line: line_of_key(text, field),
            field: field.to_string(),
            reason,
        };
        if !(1..=crate::kernel::weights::MAX_HEADS).contains(&raw.heads) {
            return Err(err(
                "heads",
                format!(
                    "is {}; must lie in 1..={}",
                    raw.heads,
                    crate::kernel::weights::MAX_HEADS
                ),
            ));
        }
        if !(1..=crate::kernel::weights::MAX_LAYERS).contains(&raw.layers) {
            return Err(err(
                "layers",
                format!(
                    "is {}; must lie in 1..={}",
                    raw.layers,
                    crate::kernel::weights::MAX_LAYERS
                ),
            ));
        }
        // PyTorch adds its ε, a Python float, in f32 arithmetic: the nearest f32
        let ln_eps = raw.ln_eps as f32;
        if !(ln_eps.is_finite() && ln_eps > 0.0) {
            return Err(err(
                "ln_eps",
                format!(
                    "{} is not a positive finite f32 (a layer norm's ε is > 0)",
                    raw.ln_eps
                ),
            ));
        }
        let slopes = match raw.slopes {
            RawSlopes::Rule(r) => match r.as_str() {
                "paper" => Slopes::Rule(SlopeRule::Paper),
                "code" => Slopes::Rule(SlopeRule::Code),
                other => {
                    return Err(err(
                        "slopes",
                        format!(
                            "`{other}` is not a rule: use \"paper\" (m_k = 2^(-8k/H)), \"code\" \
                             (ALiBi's get_slopes) or a list of exact values, one per head"
                        ),
                    ))
                }
            },
            RawSlopes::Values(vs) => {
                if vs.len() != raw.heads {
                    return Err(err(
                        "slopes",
                        format!(
                            "lists {} slopes; the model has {} heads",
                            vs.len(),
                            raw.heads
                        ),
                    ));
                }
                let mut out = Vec::with_capacity(vs.len());
                for (h, v) in vs.iter().enumerate() {
                    let field = format!("slopes[{h}]");
                    let m =
                        crate::spec::exact(&field, v).map_err(|e| err("slopes", e.to_string()))?;
                    if m <= 0 {
                        return Err(err("slopes", format!("{field}: {v} is not > 0")));
                    }
                    out.push(m);
                }
                Slopes::Values(out)
            }
        };
        let t = raw.tensors;
        let template = |field: &str, name: &Option<String>| -> Result<(), SpecError> {
            let key = format!("tensors.{field}");
            match name {
                Some(n) if n.is_empty() => Err(err(&key, "is empty".into())),
                Some(n) if raw.layers > 1 && field != "embedding" && !n.contains("{l}") => {
                    Err(err(
                        &key,
                        format!(
                            "`{n}` has no `{{l}}`: each of the {} layers would read the same \
                             tensor",
                            raw.layers
                        ),
                    ))
                }
                _ => Ok(()),
            }
        };
        for (field, name) in [
            ("embedding", &t.embedding),
            ("ln_gain", &Some(t.ln_gain.clone())),
            ("ln_shift", &t.ln_shift),
            ("qkv_weight", &t.qkv_weight),
            ("qkv_bias", &t.qkv_bias),
            ("q_weight", &t.q_weight),
            ("q_bias", &t.q_bias),
            ("k_weight", &t.k_weight),
            ("k_bias", &t.k_bias),
        ] {
            template(field, name)?;
        }
        let split = [&t.q_weight, &t.q_bias, &t.k_weight, &t.k_bias];
        let projections = match (&t.qkv_weight, &t.q_weight, &t.k_weight) {
            (Some(w), None, None) => {
                if split.iter().any(|s| s.is_some()) {
                    return Err(err(
                        "tensors.qkv_weight",
                        "name either the fused qkv_weight or q_weight and k_weight, not both"
                            .into(),
                    ));
                }
                Projections::Fused {
                    weight: w.clone(),
                    bias: t.qkv_bias.clone(),
                }
            }
            (None, Some(q), Some(k)) => {
                if t.qkv_bias.is_some() {
                    return Err(err(
                        "tensors.qkv_bias",
                        "goes with qkv_weight; with q_weight and k_weight name q_bias and k_bias"
                            .into(),
                    ));
                }
                Projections::Split {
                    q_weight: q.clone(),
                    q_bias: t.q_bias.clone(),
                    k_weight: k.clone(),
                    k_bias: t.k_bias.clone(),
                }
            }
            (Some(_), _, _) => {
                return Err(err(
                    "tensors.qkv_weight",
                    "name either the fused qkv_weight or q_weight and k_weight, not both".into(),
                ))
            }
            (None, None, _) => {
                return Err(err(
                    "tensors.q_weight",
                    "missing: name the fused qkv_weight, or q_weight and k_weight".into(),
                ))
            }
            (None, Some(_), None) => {
                return Err(err(
                    "tensors.k_weight",
                    "missing: q_weight needs k_weight".into(),
                ))
            }
        };
        Ok(Config {
            path: path.to_path_buf(),
            heads: raw.heads,
            layers: raw.layers,
            ln_eps,
            slopes,
            embedding: t.embedding,
            ln_gain: t.ln_gain,
            ln_shift: t.ln_shift,
            projections,
            layout: t.layout,
        })
    }

    /// The slope exponents or values per head, as exact terms of the formula language.
    pub fn slope_terms(&self) -> Vec<crate::kernel::expr::build::Term> {
        slope_terms(&self.slopes, self.heads)
    }
}

/// The slopes' terms for `heads` heads: 2^{−q} of the rule (exactly, as
/// [`super::alibi::slope_expr`] writes it) or the exact values.
pub fn slope_terms(s: &Slopes, heads: usize) -> Vec<crate::kernel::expr::build::Term> {
    use super::alibi::slope_expr;
    match s {
        Slopes::Rule(r) => slope_exponents(heads, *r).iter().map(slope_expr).collect(),
        Slopes::Values(v) => v.iter().map(crate::kernel::expr::build::q).collect(),
    }
}

impl Slopes {
    /// The hint form: `paper`, `code`, or the exact values comma-separated.
    pub fn hint(&self) -> String {
        match self {
            Slopes::Rule(r) => r.as_str().to_string(),
            Slopes::Values(v) => v
                .iter()
                .map(|m| m.to_string())
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// Reads the hint form for `heads` heads.
    pub fn from_hint(text: &str, heads: usize) -> Result<Slopes, String> {
        match text {
            "paper" => Ok(Slopes::Rule(SlopeRule::Paper)),
            "code" => Ok(Slopes::Rule(SlopeRule::Code)),
            _ => {
                let v = text
                    .split(',')
                    .map(|t| {
                        crate::kernel::parse_rational(t)
                            .ok()
                            .filter(|m| *m > 0)
                            .ok_or_else(|| format!("`{t}` is not an exact value > 0"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if v.len() != heads {
                    return Err(format!(
                        "lists {} slopes; the weights have {heads} heads",
                        v.len()
                    ));
                }
                Ok(Slopes::Values(v))
            }
        }
    }
}

/// A name template at layer `l`.
pub fn at_layer(template: &str, l: usize) -> String {
    template.replace("{l}", &l.to_string())
}
