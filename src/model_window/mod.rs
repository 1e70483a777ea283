//! `attncheck window MODEL.safetensors --config MODEL.toml`: the certified implicit window
//! of every head of an ALiBi model the user brings, by the road and with the certificate
//! of the trained-model claim's windows (src/claims/positional/trained_model_claims/window.rs).
//!
//! **The theorem.** For head h of layer ℓ of a pre-LayerNorm decoder with ALiBi slopes m_h,
//! the kernel bounds the range of a query's content logits over every input by Δ̄_ℓh
//! (crates/attncheck-kernel's `weights.rs`): at layer 0 of a byte-level model, exactly,
//! over every query/key byte pair (`attn-byte-logit-range`: the layer's input is the
//! byte's embedding); otherwise by the folded spectral bound over all inputs of the layer
//! (`attn-row-logit-range`). alibi-window's T^∞(w) = 1/(1 + (e^{mw} − 1)/e^Δ) bounds the
//! attention mass a query puts on keys at distance ≥ w, for content logits of range ≤ Δ
//! and any sequence length, and increases in Δ. Per (ℓ, h) the statement asserts
//! - T^∞(w_ℓh) ≤ ε at Δ̄_ℓh: **for every input, the attention mass at distances ≥ w_ℓh
//!   is at most ε**;
//! - T^∞(w_ℓh − 1) > ε at Δ̄_ℓh: w_ℓh is the smallest window *this bound* certifies (the
//!   model's true window may be smaller: Δ̄ is a worst case over all inputs).
//!
//! The model is computed in exact real arithmetic with the file's weights (f32, exact
//! dyadic rationals); its own floating-point evaluation rounds, which is not bounded.
//!
//! **Trusted and not.** The statement is built from the weights (the certificate's
//! `attn-weights` datum `W`, read and hashed by the kernel), the slopes, ε and the
//! windows. The windows come from an untrusted search ([`search_head`]) and only choose
//! what is stated: a wrong one makes an obligation fail, never a wrong theorem. `verify
//! CERT --model FILE --config FILE` rebuilds the statement from the user's file, so the
//! certificate must be about exactly those weights and slopes (exit 4 otherwise); without
//! them it is rebuilt from the weights and slopes the certificate pins.

pub mod alibi;
pub mod config;
pub mod read;

use crate::certificate::{Certificate, Hints};
use crate::kernel::expr::build::{
    add, call, div, exp, gt, int, le, ln, mul, q, sub, var, Formula, Term,
};
use crate::kernel::expr::{Data, Datum, ExprError};
use crate::kernel::Statement;
use alibi::alibi_tail_inf_expr;
use config::{Config, Slopes};
use rug::Rational;
use std::path::Path;

/// The claim ID of the certificates `attncheck window` writes.
pub const WINDOW_CLAIM: &str = "window/model";

/// The certificate's name of the model's weights.
pub const DATUM: &str = "W";

/// The default ε: attention mass beyond the window at most 1/1000.
pub const DEFAULT_EPSILON: &str = "1/1000";

/// The default precision, bits.
pub const DEFAULT_PRECISION: u32 = 128;

/// The term Δ̄_ℓh of datum `name`: the exact byte-pair range at layer 0 when the datum
/// carries the embedding (`byte_level`), else the bound over every input of the layer.
pub fn delta_term(name: &str, byte_level: bool, l: usize, h: usize) -> Term {
    if l == 0 && byte_level {
        call("attn-byte-logit-range", [var(name), h.into()])
    } else {
        call("attn-row-logit-range", [var(name), l.into(), h.into()])
    }
}

/// The two formulas of one head: T^∞(w) ≤ ε and T^∞(w − 1) > ε at Δ = `delta`.
pub fn head_formulas(m: &Term, delta: &Term, w: u64, eps: &Rational) -> (Formula, Formula) {
    (
        le(
            alibi_tail_inf_expr(m.clone(), w.into(), delta.clone()),
            q(eps),
        ),
        gt(
            alibi_tail_inf_expr(m.clone(), (w - 1).into(), delta.clone()),
            q(eps),
        ),
    )
}

/// The untrusted search of one head's window: w = ⌈(1/m)·ln((e^Δ̄(1 − ε) + ε)/ε)⌉
/// (alibi-window's y) from the kernel's enclosure of Δ̄, moved until the kernel decides
/// T^∞(w) ≤ ε < T^∞(w − 1) (a few steps at most; left as found when undecided: the
/// statement then fails, nothing is hidden). Returns the upper end of Δ̄'s enclosure and w.
pub fn search_head(
    m: &Term,
    delta: &Term,
    eps: &Rational,
    data: &Data,
    prec: u32,
) -> Result<(f64, u64), ExprError> {
    use crate::kernel::expr::{check_built, eval_built};
    use crate::kernel::Certainty;
    let dv = eval_built(delta, prec, data)?;
    let y = div(
        ln(div(
            add([mul([exp(delta.clone()), sub(int(1), q(eps))]), q(eps)]),
            q(eps),
        )),
        m.clone(),
    );
    let yv = eval_built(&y, prec, data)?;
    let mut w = yv.hi_f64().ceil().clamp(1.0, 1e9) as u64;
    let holds = |w: u64, at: bool| -> bool {
        let t = alibi_tail_inf_expr(m.clone(), w.into(), delta.clone());
        let f = if at { le(t, q(eps)) } else { gt(t, q(eps)) };
        check_built(&f, prec, data).is_ok_and(|c| c == Certainty::True)
    };
    for _ in 0..4 {
        if !holds(w, true) {
            w += 1;
        } else if w > 1 && !holds(w - 1, false) {
            w -= 1;
        } else {
            break;
        }
    }
    Ok((dv.hi_f64(), w))
}

/// One head's certified window.
#[derive(Clone, Debug, PartialEq)]
pub struct HeadWindow {
    /// Layer.
    pub layer: usize,
    /// Head.
    pub head: usize,
    /// m_h as written in the statement.
    pub slope: String,
    /// The upper end of the kernel's enclosure of Δ̄_ℓh.
    pub delta_hi: f64,
    /// w_ℓh(ε).
    pub window: u64,
    /// At layer 0 of a byte-level model: the bytes (a, b, b′) attaining the range.
    pub witness: Option<(u8, u8, u8)>,
}

/// The name of head (ℓ, h)'s first obligation.
pub fn at_name(l: usize, h: usize, w: u64, eps: &Rational) -> String {
    format!(
        "layer {l} head {h}: T^∞({w}) ≤ ε = {eps} at Δ = Δ̄ (every input's attention mass at distance ≥ {w} is ≤ ε)"
    )
}

/// The name of head (ℓ, h)'s minimality obligation.
pub fn before_name(l: usize, h: usize, w: u64, eps: &Rational) -> String {
    format!(
        "layer {l} head {h}: T^∞({}) > ε = {eps} at Δ = Δ̄ ({w} is the smallest window this bound certifies)",
        w - 1
    )
}

/// The statement of the windows `ws` (layer-major) of the weights `w` with `slopes`.
pub fn statement(
    w: &Datum,
    slopes: &Slopes,
    eps: &Rational,
    ws: &[u64],
) -> Result<Statement, String> {
    let Datum::Attn(a) = w else {
        return Err(format!(
            "the datum `{DATUM}` must be attention weights (attn-weights)"
        ));
    };
    if !(*eps > 0 && *eps < 1) {
        return Err(format!("hint `epsilon`: {eps} is not in (0, 1)"));
    }
    let (layers, heads) = (a.layers(), a.heads());
    if ws.len() != layers * heads {
        return Err(format!(
            "hint `windows`: lists {} windows; layers·heads = {}",
            ws.len(),
            layers * heads
        ));
    }
    if let Slopes::Values(v) = slopes {
        if v.len() != heads {
            return Err(format!(
                "hint `slopes`: lists {} slopes; the weights have {heads} heads",
                v.len()
            ));
        }
    }
    let ms = config::slope_terms(slopes, heads);
    let byte_level = a.input().is_some();
    let mut st = Statement::new(WINDOW_CLAIM);
    for l in 0..layers {
        for (h, m) in ms.iter().enumerate() {
            let wl = ws[l * heads + h];
            if wl == 0 {
                return Err("hint `windows`: a window is ≥ 1".to_string());
            }
            let (at, before) = head_formulas(m, &delta_term(DATUM, byte_level, l, h), wl, eps);
            st.state(at_name(l, h, wl, eps), &at);
            st.state(before_name(l, h, wl, eps), &before);
        }
    }
    st.data.insert(DATUM.to_string(), w.clone());
    Ok(st)
}

/// The windows hint: w_ℓh layer-major, comma-separated.
pub fn windows_hint(ws: &[u64]) -> String {
    ws.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

/// Reads the windows hint: integers in 1..=10⁹.
pub fn parse_windows(text: &str) -> Result<Vec<u64>, String> {
    text.split(',')
        .map(|t| {
            t.trim()
                .parse::<u64>()
                .ok()
                .filter(|w| (1..=1_000_000_000).contains(w))
        })
        .collect::<Option<_>>()
        .ok_or_else(|| "must list integers in 1..=1000000000, comma-separated".to_string())
}

/// What `attncheck window` computed: the windows, the certificate, and the kernel's
/// decisions of it.
pub struct Windows {
    /// Per (layer, head), layer-major.
    pub heads: Vec<HeadWindow>,
    /// The certificate (the statement [`rebuild`] rebuilds, decided by the kernel).
    pub certificate: Certificate,
    /// The weights' SHA-256 (of their f32 bit patterns, the kernel's digest).
    pub sha256: String,
    /// Hidden size, heads, layers.
    pub shape: (usize, usize, usize),
    /// Whether layer 0 is bounded at the exact byte-pair range.
    pub byte_level: bool,
    /// Obligations the kernel did not decide as asserted (names), empty when every one is
    /// proven.
    pub undecided: Vec<String>,
}

/// Why `attncheck window` stopped.
#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    /// Bad input (exit 2): the config, the model file, the options.
    #[error(transparent)]
    Input(#[from] crate::spec::SpecError),
    /// An option out of range (exit 2).
    #[error("{0}")]
    Usage(String),
}

/// Certifies the windows of the model `bytes` (read from `model`) with `cfg` at ε and
/// `prec` bits: reads the weights into the kernel's datum, searches each head's window,
/// builds the statement and has the kernel decide it (the per-certificate budget applies:
/// a model too large for it is refused before anything runs, with its cost).
pub fn certify(
    model: &Path,
    cfg: &Config,
    eps: &Rational,
    prec: u32,
) -> Result<Windows, WindowError> {
    let usage = |s: String| WindowError::Usage(s);
    if !(*eps > 0 && *eps < 1) {
        return Err(usage(format!("--epsilon {eps} is not in (0, 1)")));
    }
    if !(53..=crate::calc::MAX_PRECISION).contains(&prec) {
        return Err(usage(format!(
            "--precision {prec} is out of range: use 53 to {}",
            crate::calc::MAX_PRECISION
        )));
    }
    let datum = read::read(model, cfg)?.entry.to_datum().map_err(|(f, r)| {
        usage(format!(
            "{}: the weights as read: {f}: {r}",
            model.display()
        ))
    })?;
    let Datum::Attn(a) = &datum else {
        unreachable!("read builds attention weights")
    };
    let byte_level = a.input().is_some();
    let shape = (a.hidden(), a.heads(), a.layers());
    let sha256 = a.sha256().to_string();
    let mut data = Data::new();
    data.insert(DATUM.to_string(), datum.clone());
    // the whole statement is held to the certificate's budget before the search runs
    // anything (the search evaluates each head's terms a few times: without this, a model
    // whose every head fits the budget but whose certificate does not would be searched
    // for a long time and then refused); its cost does not depend on the windows, stated
    // here at their largest (the most digits)
    let most = vec![1_000_000_000; cfg.layers * cfg.heads];
    let provisional = statement(&datum, &cfg.slopes, eps, &most).map_err(usage)?;
    crate::kernel::statement::work(&provisional, prec)
        .map_err(|e| usage(format!("{}: {}", model.display(), e.error.reason)))?;
    let ms = cfg.slope_terms();
    let mut heads = Vec::new();
    for l in 0..cfg.layers {
        for (h, m) in ms.iter().enumerate() {
            let d = delta_term(DATUM, byte_level, l, h);
            let (delta_hi, window) = search_head(m, &d, eps, &data, prec)
                .map_err(|e| usage(format!("layer {l} head {h}: {e}")))?;
            heads.push(HeadWindow {
                layer: l,
                head: h,
                slope: m.to_string(),
                delta_hi,
                window,
                witness: if l == 0 && byte_level {
                    a.byte_logit_witness(h)
                } else {
                    None
                },
            });
        }
    }
    let ws: Vec<u64> = heads.iter().map(|w| w.window).collect();
    let st = statement(&datum, &cfg.slopes, eps, &ws).map_err(usage)?;
    let mut hints = Hints::new();
    hints.insert("epsilon".into(), eps.to_string());
    hints.insert("slopes".into(), cfg.slopes.hint());
    hints.insert("windows".into(), windows_hint(&ws));
    hints.insert("precision".into(), prec.to_string());
    let checked = crate::kernel::check(&st, prec).map_err(|e| usage(e.to_string()))?;
    let undecided = checked
        .decisions()
        .iter()
        .filter(|d| !d.as_expected())
        .map(|d| d.name().to_string())
        .collect();
    let certificate = Certificate::of(&st, crate::spec::Profile::Quick, prec, &hints);
    Ok(Windows {
        heads,
        certificate,
        sha256,
        shape,
        byte_level,
        undecided,
    })
}

/// The user's model as `verify --model FILE --config FILE` takes it: read and checked
/// before anything is rebuilt (bad input is exit 2, not a rejection).
#[derive(Clone, Debug)]
pub struct ModelInput {
    /// The model file.
    pub model: std::path::PathBuf,
    /// The weights, read by the kernel.
    pub datum: Datum,
    /// The config's slopes.
    pub slopes: Slopes,
}

impl ModelInput {
    /// Reads the model at `model` with the config at `config`.
    pub fn read(model: &Path, config: &Path) -> Result<ModelInput, WindowError> {
        let cfg = Config::read(config)?;
        let mw = read::read(model, &cfg)?;
        let datum = mw.entry.to_datum().map_err(|(f, r)| {
            WindowError::Usage(format!(
                "{}: the weights as read: {f}: {r}",
                model.display()
            ))
        })?;
        Ok(ModelInput {
            model: model.to_path_buf(),
            datum,
            slopes: cfg.slopes,
        })
    }
}

/// Rebuilds the statement of a `window` certificate from its hints (ε, the windows) and
/// the weights and slopes: `model`'s when given (so it must be about exactly that model),
/// else those the certificate pins.
pub fn rebuild(cert: &Certificate, model: Option<&ModelInput>) -> Result<Statement, String> {
    let hint = |key: &str| {
        cert.hints
            .get(key)
            .ok_or_else(|| format!("hint `{key}`: missing"))
    };
    let eps = crate::kernel::parse_rational(hint("epsilon")?)
        .map_err(|e| format!("hint `epsilon`: {e}"))?;
    let ws = parse_windows(hint("windows")?).map_err(|e| format!("hint `windows`: {e}"))?;
    match model {
        Some(m) => statement(&m.datum, &m.slopes, &eps, &ws),
        None => {
            let entry = cert
                .data
                .get(DATUM)
                .ok_or_else(|| format!("the datum `{DATUM}` (the weights) is missing"))?;
            let d = entry
                .to_datum()
                .map_err(|(f, r)| format!("data.{DATUM}.{f}: {r}"))?;
            let Datum::Attn(a) = &d else {
                return Err(format!(
                    "the datum `{DATUM}` must be attention weights (attn-weights)"
                ));
            };
            let slopes = Slopes::from_hint(hint("slopes")?, a.heads())
                .map_err(|e| format!("hint `slopes`: {e}"))?;
            statement(&d, &slopes, &eps, &ws)
        }
    }
}

/// The precision a `window` certificate is decided at: its hint `precision` (none when
/// missing or malformed: then every precision is refused).
pub fn precisions(cert: &Certificate) -> Vec<u32> {
    cert.hints
        .get("precision")
        .and_then(|p| p.parse().ok())
        .into_iter()
        .collect()
}

/// The windows as one JSON document (what `--json` prints and `OUT/<model>.windows.json`
/// holds): the model, its weights' SHA-256, ε, and per (layer, head) the slope, the upper
/// end of Δ̄ (a float for reading: the certificate carries the exact statement), the
/// window, and at layer 0 of a byte-level model the bytes attaining the range.
pub fn report_json(
    w: &Windows,
    model: &Path,
    config: &Path,
    certificate: &Path,
) -> serde_json::Value {
    let c = &w.certificate;
    serde_json::json!({
        "model": model.display().to_string(),
        "config": config.display().to_string(),
        "sha256": w.sha256,
        "hidden": w.shape.0,
        "heads": w.shape.1,
        "layers": w.shape.2,
        "epsilon": c.hints.get("epsilon"),
        "precision": c.precision,
        "layer0": if w.byte_level { "exact range over every byte pair" } else { "bound over every input" },
        "certificate": certificate.display().to_string(),
        "windows": w.heads.iter().map(|h| serde_json::json!({
            "layer": h.layer,
            "head": h.head,
            "slope": h.slope,
            "delta_upper": format!("{:.6}", h.delta_hi),
            "window": h.window,
            "bytes": h.witness.map(|(a, b, b2)| [a, b, b2]),
        })).collect::<Vec<_>>(),
    })
}

/// The windows as a table for people, one line per (layer, head).
pub fn table(w: &Windows) -> Vec<String> {
    let mut out = vec![format!(
        // Δ̄ is two chars (Δ and a combining macron) in one column: one more of width
        "{:>5} {:>4}  {:<28} {:>13} {:>10}",
        "layer", "head", "slope m", "Δ̄ (upper)", "window w"
    )];
    for h in &w.heads {
        let mut line = format!(
            "{:>5} {:>4}  {:<28} {:>12.6} {:>10}",
            h.layer, h.head, h.slope, h.delta_hi, h.window
        );
        if let Some((a, b, b2)) = h.witness {
            line.push_str(&format!(
                "   range attained by query byte {a}, key bytes {b}, {b2}"
            ));
        }
        out.push(line);
    }
    out
}
