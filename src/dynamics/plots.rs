//! Plots of the particle system for the clusters reports: token trajectories and
//! the attention matrix as a heat map.
//!
//! Pure functions from f64 data to [`Plot`]s. The claims compute in intervals and
//! convert enclosure midpoints to f64 for drawing only; nothing here is checked.
//! Attention weights below f64's range (P_ij = 10^−33860 in clusters.md §4) are
//! drawn from their base-10 exponents with [`attention_heatmap_log10`].

use crate::outcome::{HeatScale, Heatmap, Plot, Series, Style};

/// Colour range of a linear attention heat map: P_ij ∈ [0, 1].
const LINEAR_RANGE: (f64, f64) = (0.0, 1.0);

/// The smallest floor of a log-scale attention heat map (just above f64's normal
/// range); smaller weights, and zeros, get the floor colour.
const LOG_FLOOR: f64 = 1e-300;

/// Token trajectories, one path per token, each with its start (open circle) and
/// end (filled dot) marked and one colour per token (cycling after 12).
///
/// `states[k]` is the configuration at `times[k]`, n tokens × d coordinates,
/// row-major (token i's coordinate c at `i*d + c`). By dimension:
/// - d = 1: each token's coordinate against time;
/// - d = 2: each token's path in the plane;
/// - d ≥ 3: the path of its projection on the first two coordinates (the title
///   and the axis labels say so).
///
/// Time steps whose state is too short, and non-finite coordinates, are skipped
/// (never a panic); extra times or states beyond the shorter list are ignored.
pub fn trajectories(
    slug: &str,
    title: &str,
    times: &[f64],
    states: &[Vec<f64>],
    n: usize,
    d: usize,
) -> Plot {
    let point = |t: f64, x: &[f64], i: usize| -> Option<(f64, f64)> {
        let row = x.get(i * d..(i + 1) * d)?;
        let pt = match d {
            0 => return None,
            1 => (t, row[0]),
            _ => (row[0], row[1]),
        };
        (pt.0.is_finite() && pt.1.is_finite()).then_some(pt)
    };
    let series = (0..n)
        .map(|i| Series {
            name: format!("token {}", i + 1),
            style: Style::Line,
            points: times
                .iter()
                .zip(states)
                .filter_map(|(&t, x)| point(t, x, i))
                .collect(),
        })
        .collect();
    let (title, x_label, y_label) = match d {
        1 => (title.to_string(), "t".to_string(), "x_i(t)".to_string()),
        2 => (
            title.to_string(),
            "coordinate 1".to_string(),
            "coordinate 2".to_string(),
        ),
        _ => (
            format!("{title} (projected on coordinates 1–2 of {d})"),
            "coordinate 1 (projection)".to_string(),
            "coordinate 2 (projection)".to_string(),
        ),
    };
    Plot {
        slug: slug.into(),
        title,
        x_label,
        y_label,
        x_log: false,
        y_log: false,
        series,
        heatmap: None,
        paths: true,
    }
}

/// The attention matrix P (n × n, row-major, row i = query token i) as a heat map,
/// rows top to bottom, tokens numbered from 1 as in the paper (P_12).
///
/// Linear: colours on [0, 1]. Log (`log = true`): colours on [floor, 1] in log₁₀,
/// where floor is the decade at or below the smallest positive entry, never below
/// 10^−300; zeros (underflowed weights) and entries below the floor get the floor
/// colour.
pub fn attention_heatmap(slug: &str, title: &str, p: &[f64], n: usize, log: bool) -> Plot {
    let (scale, min, max, label) = if log {
        let smallest = p
            .iter()
            .copied()
            .filter(|v| *v > 0.0 && v.is_finite())
            .fold(f64::INFINITY, f64::min);
        let floor = if smallest.is_finite() {
            10f64.powf(smallest.log10().floor().min(-1.0))
        } else {
            LOG_FLOOR
        };
        (
            HeatScale::Log10,
            floor.max(LOG_FLOOR),
            1.0,
            "P_ij (log scale)",
        )
    } else {
        (HeatScale::Linear, LINEAR_RANGE.0, LINEAR_RANGE.1, "P_ij")
    };
    heatmap_plot(slug, title, square(p, n, scale, min, max, label))
}

/// The attention matrix from the base-10 exponents of its entries
/// (`log10_p[i*n + j]` = log₁₀ P_ij, −∞ for an exact 0), for weights below f64's
/// range. Colours on [floor, 0] where floor is the integer at or below the
/// smallest finite exponent (at most −1).
pub fn attention_heatmap_log10(slug: &str, title: &str, log10_p: &[f64], n: usize) -> Plot {
    let smallest = log10_p
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(f64::INFINITY, f64::min);
    let floor = if smallest.is_finite() {
        smallest.floor().min(-1.0)
    } else {
        LOG_FLOOR.log10()
    };
    let map = square(
        log10_p,
        n,
        HeatScale::Exponent10,
        floor,
        0.0,
        "P_ij (log scale)",
    );
    heatmap_plot(slug, title, map)
}

/// The common shape of the attention heat maps: n × n, axes "token j" / "token i".
fn heatmap_plot(slug: &str, title: &str, heatmap: Heatmap) -> Plot {
    Plot {
        slug: slug.into(),
        title: title.into(),
        x_label: "token j (key)".into(),
        y_label: "token i (query)".into(),
        x_log: false,
        y_log: false,
        series: Vec::new(),
        heatmap: Some(heatmap),
        paths: false,
    }
}

/// An n × n heat map of `values` (row-major) with default labels 1, 2, ….
fn square(values: &[f64], n: usize, scale: HeatScale, min: f64, max: f64, label: &str) -> Heatmap {
    Heatmap {
        rows: n,
        cols: n,
        values: values.to_vec(),
        scale,
        min,
        max,
        label: label.into(),
        row_labels: None,
        col_labels: None,
    }
}
