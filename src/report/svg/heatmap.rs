//! Heat maps: a matrix as square cells coloured by a fixed viridis table, with a
//! colour bar. Deterministic like the line plots: the colours are interpolated in
//! sRGB from 11 fixed anchors and printed as hex, coordinates with fixed decimals.

use super::{
    esc, log_ticks, nice_ticks, tick_label, title_lines, write_title, H, MB, ML, MR, MT, W,
};
use crate::outcome::{HeatScale, Heatmap, Plot};
use std::fmt::Write;

/// matplotlib's viridis at 0, 0.1, …, 1 (perceptually uniform, readable in grey
/// and by most colour-blind readers); dark = low, yellow = high.
const VIRIDIS: [[u8; 3]; 11] = [
    [0x44, 0x01, 0x54],
    [0x48, 0x24, 0x75],
    [0x41, 0x44, 0x87],
    [0x35, 0x5f, 0x8d],
    [0x2a, 0x78, 0x8e],
    [0x21, 0x91, 0x8c],
    [0x22, 0xa8, 0x84],
    [0x44, 0xbf, 0x70],
    [0x7a, 0xd1, 0x51],
    [0xbd, 0xdf, 0x26],
    [0xfd, 0xe7, 0x25],
];

/// Colour of cells without a value (NaN or missing).
const MISSING: &str = "#bbbbbb";

/// The floor of a log scale whose `min` is not positive.
const LOG_FLOOR: f64 = 1e-300;

/// Width of the colour bar.
const BAR_W: f64 = 14.0;

/// The viridis colour at t ∈ [0, 1] (clamped), linear in sRGB between anchors.
fn colour(t: f64) -> String {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let x = t * 10.0;
    let k = (x.floor() as usize).min(9);
    let f = x - k as f64;
    let (a, b) = (VIRIDIS[k], VIRIDIS[k + 1]);
    let c = |i: usize| (a[i] as f64 + (b[i] as f64 - a[i] as f64) * f).round() as u8;
    format!("#{:02x}{:02x}{:02x}", c(0), c(1), c(2))
}

/// The colour range in drawing units (log₁₀ for the log scales), never empty.
fn range(h: &Heatmap) -> (f64, f64) {
    let (lo, hi) = match h.scale {
        HeatScale::Linear => (h.min, h.max),
        HeatScale::Log10 => {
            let lo = h.min.max(LOG_FLOOR).log10();
            (lo, if h.max > 0.0 { h.max.log10() } else { lo })
        }
        HeatScale::Exponent10 => (h.min, h.max),
    };
    let lo = if lo.is_finite() { lo } else { 0.0 };
    let hi = if hi.is_finite() { hi } else { lo + 1.0 };
    if hi > lo {
        (lo, hi)
    } else {
        (lo, lo + 1.0)
    }
}

/// A value in drawing units; `None` when it has no colour (NaN). Zero and
/// negative values on a log scale map to −∞, i.e. the floor colour.
fn unit(scale: HeatScale, v: f64) -> Option<f64> {
    if v.is_nan() {
        return None;
    }
    Some(match scale {
        HeatScale::Linear | HeatScale::Exponent10 => v,
        HeatScale::Log10 if v > 0.0 => v.log10(),
        HeatScale::Log10 => f64::NEG_INFINITY,
    })
}

/// Cell fill: the floor colour at or below `lo`, the top colour at or above `hi`.
fn fill(scale: HeatScale, v: f64, lo: f64, hi: f64) -> String {
    match unit(scale, v) {
        None => MISSING.into(),
        Some(u) if u <= lo => colour(0.0),
        Some(u) if u >= hi => colour(1.0),
        Some(u) => colour((u - lo) / (hi - lo)),
    }
}

/// Labels of `count` rows or columns: the given ones, else 1, 2, ….
fn labels(given: &Option<Vec<String>>, count: usize) -> Vec<String> {
    (0..count)
        .map(|i| match given {
            Some(l) => l.get(i).cloned().unwrap_or_default(),
            None => (i + 1).to_string(),
        })
        .collect()
}

/// Every how many cells a label `px` wide fits on cells `cell` px wide.
fn label_step(cell: f64, px: f64) -> usize {
    if cell <= 0.0 {
        return 1;
    }
    ((px / cell).ceil() as usize).max(1)
}

/// Renders a heat-map plot: title, cells (row i top to bottom, column j left to
/// right), row and column labels, the plot's axis labels and a colour bar.
pub(super) fn render(p: &Plot, h: &Heatmap) -> String {
    let (rows, cols) = (h.rows, h.cols);
    let pw = W - ML - MR;
    let ph = H - MT - MB;
    // Whole-pixel cells when they are not tiny, so cell edges fall on pixel edges.
    let cell = if rows == 0 || cols == 0 {
        0.0
    } else {
        let c = (pw / cols as f64).min(ph / rows as f64);
        if c >= 4.0 {
            c.floor()
        } else {
            c
        }
    };
    let (aw, ah) = if cell > 0.0 {
        (cell * cols as f64, cell * rows as f64)
    } else {
        (ph, ph)
    };
    let (lo, hi) = range(h);
    let log = h.scale != HeatScale::Linear;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    write_title(&mut s, &title_lines(&p.title, W), W / 2.0);

    // Cells; each but the last in its row/column extends one unit under its right
    // and lower neighbours (drawn later), so a pixel the neighbour covers only in
    // part blends the two cell colours, never the white background: no seams.
    let edge_x = |j: usize| ML + j as f64 * cell;
    let edge_y = |i: usize| MT + i as f64 * cell;
    for i in 0..rows {
        let (y, y1) = (edge_y(i), edge_y(i + 1));
        let ch = y1 - y + if i + 1 < rows { 1.0 } else { 0.0 };
        for j in 0..cols {
            let (x, x1) = (edge_x(j), edge_x(j + 1));
            let cw = x1 - x + if j + 1 < cols { 1.0 } else { 0.0 };
            let v = h.values.get(i * cols + j).copied().unwrap_or(f64::NAN);
            let _ = writeln!(
                s,
                r#"<rect class="cell" x="{x:.2}" y="{y:.2}" width="{cw:.2}" height="{ch:.2}" fill="{}"/>"#,
                fill(h.scale, v, lo, hi)
            );
        }
    }
    let _ = writeln!(
        s,
        r##"<rect x="{ML}" y="{MT}" width="{aw:.2}" height="{ah:.2}" fill="none" stroke="#333"/>"##
    );

    // Row labels at the left, column labels below; thinned so they do not collide.
    let rl = labels(&h.row_labels, rows);
    let step = label_step(cell, 12.0);
    for (i, l) in rl.iter().enumerate().filter(|(i, _)| i % step == 0) {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            ML - 4.0,
            edge_y(i) + cell / 2.0 + 4.0,
            esc(l)
        );
    }
    let cl = labels(&h.col_labels, cols);
    let widest = cl.iter().map(|l| l.chars().count()).max().unwrap_or(1);
    let step = label_step(cell, 6.5 * widest as f64 + 4.0);
    for (j, l) in cl.iter().enumerate().filter(|(j, _)| j % step == 0) {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            edge_x(j) + cell / 2.0,
            MT + ah + 14.0,
            esc(l)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        ML + aw / 2.0,
        MT + ah + 32.0,
        esc(&p.x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="15" y="{:.1}" text-anchor="middle" transform="rotate(-90 15 {:.1})">{}</text>"#,
        MT + ah / 2.0,
        MT + ah / 2.0,
        esc(&p.y_label)
    );

    let bar_h = if ah >= 150.0 { ah } else { H - MT - MB };
    colour_bar(&mut s, h, (ML + aw + 24.0, bar_h), (lo, hi), log);
    s.push_str("</svg>\n");
    s
}

/// The colour bar at x = `bx`, `ph` tall: a vertical gradient through the viridis anchors (low at the
/// bottom), ticks at round values (decades on log scales; the bottom end of a log
/// scale reads "≤ floor") and the heat map's caption, rotated, to their right.
fn colour_bar(s: &mut String, h: &Heatmap, (bx, ph): (f64, f64), (lo, hi): (f64, f64), log: bool) {
    let _ = writeln!(
        s,
        r#"<defs><linearGradient id="heat" x1="0" y1="1" x2="0" y2="0">"#
    );
    for (k, _) in VIRIDIS.iter().enumerate() {
        let t = k as f64 / 10.0;
        let _ = writeln!(s, r#"<stop offset="{t:.1}" stop-color="{}"/>"#, colour(t));
    }
    s.push_str("</linearGradient></defs>\n");
    let _ = writeln!(
        s,
        r##"<rect x="{bx:.1}" y="{MT}" width="{BAR_W}" height="{ph:.1}" fill="url(#heat)" stroke="#333"/>"##
    );
    let y_of = |u: f64| MT + ph - (u - lo) / (hi - lo) * ph;
    let ticks: Vec<f64> = if !log {
        nice_ticks(lo, hi)
    } else if hi - lo <= 3.0 {
        log_ticks(lo, hi)
    } else {
        nice_ticks(lo, hi).into_iter().map(f64::round).collect()
    };
    let tx = bx + BAR_W;
    let mut marks: Vec<(f64, String)> = Vec::new();
    if log {
        marks.push((lo, format!("≤ {}", tick_label(lo, true))));
    }
    for t in ticks {
        if log && y_of(lo) - y_of(t) < 14.0 {
            continue;
        }
        marks.push((t, tick_label(t, log)));
    }
    let widest = marks
        .iter()
        .map(|(_, l)| l.chars().count())
        .max()
        .unwrap_or(0);
    for (t, label) in marks {
        let y = y_of(t);
        let _ = writeln!(
            s,
            r##"<line x1="{tx:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#333"/>"##,
            tx + 4.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
            tx + 6.0,
            y + 4.0,
            esc(&label)
        );
    }
    // The caption sits right of the widest tick label (≈ 6.5 px per character).
    let (cx, cy) = (
        (tx + 6.0 + 6.5 * widest as f64 + 14.0).clamp(tx + 80.0, W - 12.0),
        MT + ph / 2.0,
    );
    let _ = writeln!(
        s,
        r#"<text x="{cx:.1}" y="{cy:.1}" text-anchor="middle" transform="rotate(-90 {cx:.1} {cy:.1})">{}</text>"#,
        esc(&h.label)
    );
}
