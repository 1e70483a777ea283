//! The certified implicit window of the trained ALiBi models (issue 25, "beyond every
//! peer"): the statement (trusted: built from the spec's ε and slopes, the window hints and
//! the attention weights the certificate carries) and the untrusted search for the hints.
//!
//! For head h of layer ℓ of a trained ALiBi model, the kernel bounds the range of a query's
//! content logits over all inputs by Δ̄_ℓh (crates/attncheck-kernel's `weights.rs`): at
//! layer 0 exactly, over every query/key byte pair (`attn-byte-logit-range`), deeper by
//! the spectral norm of the folded product P·diag(γ)W_Q^h·(diag(γ)W_K^h)ᵀ·P and the folded
//! query bias, or the norm bound when that is smaller (`attn-row-logit-range`).
//! alibi-window's T^∞(w) = 1/(1 + (e^{mw} − 1)/e^Δ) bounds the attention mass a query
//! puts on keys at distance ≥ w, for any content logits of range ≤ Δ and any sequence
//! length; it increases in Δ, so T^∞(w) at Δ = Δ̄_ℓh bounds it for every input of the
//! model. Per model the statement asserts, for every (ℓ, h) and the window w_ℓh of the
//! hints:
//! - T^∞(w_ℓh) ≤ ε at Δ̄_ℓh: **every input's attention mass at distances ≥ w_ℓh is ≤ ε**
//!   (the theorem: a window of the model that was trained, computed in exact arithmetic
//!   with the certified weights);
//! - T^∞(w_ℓh − 1) > ε at Δ̄_ℓh: w_ℓh is the smallest window *this bound* certifies
//!   (T^∞ is decreasing in w). It says nothing about the model's true smallest window,
//!   which may be much smaller: Δ̄ is a worst case over all inputs.
//!
//! A hint only chooses which windows are stated: a wrong one makes an obligation fail,
//! never a wrong theorem. The weights are the certificate's `attn-weights` data, one per
//! model, named by the model ([`datum_name`]) and read by the kernel (sizes, finiteness,
//! SHA-256); that they are the weights the spec's seeded training produces is
//! reproducible, not certified.

use super::{jobs, Job, Params, Resolved, Scheme};
use crate::certificate::Hints;
use crate::claims::positional::common::{slope_exponents, slope_expr};
use crate::claims::shape::StatementError;
use crate::kernel::expr::build::{and, Term};
use crate::kernel::expr::{Data, Datum};
use crate::kernel::Statement;
use rug::Rational;

/// Whether the run keeps `job`'s attention weights (and certifies its window): every
/// ALiBi job of the scan.
pub fn keeps_weights(p: &Params, job: &Job) -> bool {
    p.scan.is_some() && matches!(job.scheme, Scheme::Alibi(_))
}

/// The models whose windows the statement certifies, in job order.
pub fn window_jobs(p: &Params) -> Vec<Job> {
    jobs(p)
        .into_iter()
        .filter(|j| keeps_weights(p, j))
        .collect()
}

/// The certificate's name of `job`'s weights, e.g. `W_L128_alibi-paper-s1`.
pub fn datum_name(job: &Job) -> String {
    format!("W_L{}_{}", job.train_length, job.name())
}

/// The hint key of `job`'s windows: w_ℓh layer-major, comma-separated.
pub fn hint_key(job: &Job) -> String {
    format!("window.{}", datum_name(job))
}

/// m_h of `job`'s scheme as an exact term (`2^-q`).
pub fn slope_term(p: &Params, job: &Job, h: usize) -> Term {
    match job.scheme {
        Scheme::Alibi(rule) => slope_expr(&slope_exponents(p.heads, rule)[h]),
        _ => unreachable!("a window job is an ALiBi job"),
    }
}

/// The term Δ̄_ℓh of the model's weights: at layer 0 the exact range over the bytes of a
/// query's row (`attn-byte-logit-range`: an ALiBi model's layer-0 input is the byte's
/// embedding), deeper the bound over a query's row for all inputs of the layer, with the
/// LayerNorm's γ and β folded into the projections (`attn-row-logit-range`).
pub fn delta_term(job: &Job, l: usize, h: usize) -> Term {
    crate::model_window::delta_term(&datum_name(job), true, l, h)
}

/// Why a windows hint does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WindowsHintError {
    /// An entry is not an integer in 1..=10⁹.
    #[error("must list integers in 1..=1000000000, comma-separated")]
    NotWindows,
    /// The count is not layers·heads.
    #[error("lists {found} windows; layers·heads = {expected}")]
    Count {
        /// Entries listed.
        found: usize,
        /// layers·heads.
        expected: usize,
    },
}

/// The windows of a hint: layers·heads integers in 1..=10⁹.
pub fn parse_windows(text: &str, n: usize) -> Result<Vec<u64>, WindowsHintError> {
    let ws: Vec<u64> = text
        .split(',')
        .map(|t| {
            t.trim()
                .parse::<u64>()
                .ok()
                .filter(|w| (1..=1_000_000_000).contains(w))
        })
        .collect::<Option<_>>()
        .ok_or(WindowsHintError::NotWindows)?;
    if ws.len() != n {
        return Err(WindowsHintError::Count {
            found: ws.len(),
            expected: n,
        });
    }
    Ok(ws)
}

/// Obligation names (the check names `--check` compares).
pub fn at_name(job: &Job, eps: &Rational) -> String {
    format!(
        "{}: implicit window, every (layer, head): T^∞(w_h) ≤ ε = {eps} at Δ = Δ̄_h (attention mass at distance ≥ w_h is ≤ ε for every input)",
        job.long_name()
    )
}

/// The minimality obligation's name.
pub fn before_name(job: &Job, eps: &Rational) -> String {
    format!(
        "{}: implicit window, every (layer, head): T^∞(w_h − 1) > ε = {eps} at Δ = Δ̄_h (w_h is the smallest window this bound certifies)",
        job.long_name()
    )
}

/// The statement of the windows: per model of [`window_jobs`], the two obligations of the
/// module documentation, with the model's weights as data. `None` without a scan.
pub fn statement(
    r: &Resolved,
    claim: &str,
    hints: &Hints,
    carried: &Data,
) -> Option<Result<Statement, StatementError>> {
    let (scan, eps) = r.scan()?;
    let p = &r.params;
    let js = window_jobs(p);
    if js.is_empty() {
        return None;
    }
    Some((|| {
        let mut st = Statement::new(claim);
        for j in &js {
            let name = datum_name(j);
            let Some(Datum::Attn(w)) = carried.get(&name) else {
                return Err(StatementError::build(format!(
                    "the certificate carries no attention weights `{name}` (kind attn-weights) for {}",
                    j.long_name()
                )));
            };
            if (w.hidden(), w.heads(), w.layers()) != (p.hidden, p.heads, p.layers) {
                return Err(StatementError::build(format!(
                    "`{name}`: hidden {}, {} heads, {} layers; the spec's model has {}, {}, {}",
                    w.hidden(),
                    w.heads(),
                    w.layers(),
                    p.hidden,
                    p.heads,
                    p.layers
                )));
            }
            if w.input().is_none() {
                return Err(StatementError::build(format!(
                    "`{name}` carries no embedding and ln_eps: layer 0's window is certified at the exact byte-pair range, which needs them"
                )));
            }
            if !scan.pins.is_empty() {
                let pin = scan.pins.get(&name).ok_or_else(|| {
                    StatementError::build(format!(
                        "the spec pins no SHA-256 for `{name}` (scan.pins; it pins the others)"
                    ))
                })?;
                if w.sha256() != pin {
                    return Err(StatementError::build(format!(
                        "`{name}`: the weights hash to {}, but the spec pins {pin} (scan.pins.{name})",
                        w.sha256()
                    )));
                }
            }
            let key = hint_key(j);
            let text = hints
                .get(&key)
                .ok_or_else(|| StatementError::hint(&key, "missing"))?;
            let ws = parse_windows(text, p.layers * p.heads)
                .map_err(|e| StatementError::hint(&key, e.to_string()))?;
            let (mut at, mut before) = (Vec::new(), Vec::new());
            for l in 0..p.layers {
                for h in 0..p.heads {
                    let (f_at, f_before) = crate::model_window::head_formulas(
                        &slope_term(p, j, h),
                        &delta_term(j, l, h),
                        ws[l * p.heads + h],
                        eps,
                    );
                    at.push(f_at);
                    before.push(f_before);
                }
            }
            st.state(at_name(j, eps), &and(at));
            st.state(before_name(j, eps), &and(before));
            st.data.insert(name, Datum::Attn(w.clone()));
        }
        Ok(st)
    })())
}

/// One head's window, found by the untrusted search.
#[derive(Clone, Debug, PartialEq)]
pub struct HeadWindow {
    /// Layer.
    pub layer: usize,
    /// Head.
    pub head: usize,
    /// m_h as written.
    pub slope: String,
    /// The upper end of the kernel's enclosure of Δ̄_ℓh.
    pub delta_hi: f64,
    /// w_ℓh(ε).
    pub window: u64,
}

/// The search, per head by [`crate::model_window::search_head`] (the untrusted search
/// that `attncheck window` runs on a model the user brings).
pub fn search(
    p: &Params,
    job: &Job,
    eps: &Rational,
    data: &Data,
    prec: u32,
) -> Result<Vec<HeadWindow>, crate::kernel::expr::ExprError> {
    let mut out = Vec::new();
    for l in 0..p.layers {
        for h in 0..p.heads {
            let m = slope_term(p, job, h);
            let (delta_hi, window) =
                crate::model_window::search_head(&m, &delta_term(job, l, h), eps, data, prec)?;
            out.push(HeadWindow {
                layer: l,
                head: h,
                slope: m.to_string(),
                delta_hi,
                window,
            });
        }
    }
    Ok(out)
}

/// The hint of a model's windows.
pub fn hint_of(ws: &[HeadWindow]) -> String {
    ws.iter()
        .map(|w| w.window.to_string())
        .collect::<Vec<_>>()
        .join(",")
}
