//! A small deterministic SVG line-plot writer (fixed decimals, no randomness,
//! no timestamps), so plots can be committed and snapshot-tested.
//!
//! Layout: the plot area is always [`PW`] × [`PH`]; the canvas grows around it to
//! hold what is drawn: the left margin holds the widest y tick label, the right
//! margin holds the legend (in as many columns as it needs), the top margin holds
//! the title (shrunk, then wrapped). Text extents are estimated by
//! [`text_width`] (0.6 em per character), and tick labels are thinned until no two
//! of them overlap, so nothing is drawn outside the canvas or over other text.

use crate::outcome::{Plot, Style};
use std::fmt::Write;

mod heatmap;

/// Canvas width of heat maps, and the least canvas width of line plots.
const W: f64 = 640.0;
/// Canvas height of heat maps.
const H: f64 = 400.0;
/// Left margin of heat maps, and the least left margin of line plots.
const ML: f64 = 70.0;
/// Right margin of heat maps (colour bar and caption).
const MR: f64 = 160.0;
/// Top margin of heat maps, and the least top margin of line plots.
const MT: f64 = 40.0;
/// Bottom margin (tick labels and the x-axis label).
const MB: f64 = 50.0;
/// Width of the plot area of line plots.
const PW: f64 = 410.0;
/// Height of the plot area of line plots.
const PH: f64 = 310.0;
/// Font size of ticks, labels and legends (the SVG's default).
const FONT: f64 = 11.0;
/// Height of one legend line.
const LEGEND_LINE: f64 = 16.0;
/// Legend labels longer than this many characters are wrapped at spaces.
const LEGEND_CHARS: usize = 36;
/// Ten well-separated hues (matplotlib's tab10 order, red second); series k gets
/// colour k mod 10 and the dash pattern (or marker shape) of cycle ⌊k/10⌋, so up to
/// 40 series look different from each other.
const COLORS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#7f7f7f", "#bcbd22",
];
/// Dash patterns of solid-style lines, by cycle: solid, dotted, dash-dot, long dash.
const LINE_DASHES: [&str; 4] = ["", "1.5 2.5", "8 2.5 2 2.5", "14 4"];
/// Dash patterns of dashed-style lines (bounds, references), by cycle.
const DASHED_DASHES: [&str; 4] = ["6 4", "3 3", "10 3 3 3", "2 5"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The estimated advance width of `s` at font size `size`: 0.6 em per character
/// (sans-serif faces average 0.5–0.6 em; digits are ≈ 0.55–0.64 em).
pub fn text_width(s: &str, size: f64) -> f64 {
    0.6 * size * s.chars().count() as f64
}

fn tick_label(v: f64, log: bool) -> String {
    if log {
        let x = 10f64.powf(v);
        if (1e-3..1e5).contains(&x) {
            // 1, 2 or 5 × 10^k printed plainly
            let s = format!("{:.3}", (x * 1000.0).round() / 1000.0);
            return s.trim_end_matches('0').trim_end_matches('.').to_string();
        }
        let k = v.floor();
        let m = (10f64.powf(v - k)).round();
        return if m == 1.0 {
            format!("1e{}", k as i64)
        } else {
            format!("{m}e{}", k as i64)
        };
    }
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if !(1e-3..1e5).contains(&a) {
        format!("{v:.1e}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn nice_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 6.0)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 && out.len() < 12 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

/// Ticks of a log axis spanning [lo, hi] (in log10 units): 1, 2 and 5 × 10^k when
/// fewer than three decades are shown, else the decades.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    log_ticks_every(lo, hi, if hi - lo < 3.0 { 0 } else { 1 })
}

/// Decades k ∈ [lo, hi] with k divisible by `stride`; `stride` 0 means 1, 2 and 5
/// × 10^k.
fn log_ticks_every(lo: f64, hi: f64, stride: i64) -> Vec<f64> {
    let mut out = Vec::new();
    if !(lo.is_finite() && hi.is_finite()) || hi < lo {
        return out;
    }
    let (first, last) = (lo.floor() as i64, hi.ceil() as i64);
    let step = stride.max(1);
    let mut k = first.div_euclid(step) * step;
    while k <= last {
        let ms: &[f64] = if stride == 0 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0]
        };
        for &m in ms {
            let t = k as f64 + m.log10();
            if t >= lo - 1e-12 && t <= hi + 1e-12 {
                out.push(t);
            }
        }
        k += step;
    }
    out
}

/// The ticks of an axis from `lo` to `hi` drawn over `len` px, thinned until no two
/// labels overlap: a log axis takes every decade, or every 2nd, 5th, 10th, 20th, …
/// (each shown decade is labelled); a linear axis takes every 1st, 2nd, … nice tick.
/// `px(t)` is the tick's screen coordinate and `extent(label)` the label's size
/// along the axis.
fn axis_ticks(
    lo: f64,
    hi: f64,
    log: bool,
    px: impl Fn(f64) -> f64,
    extent: impl Fn(&str) -> f64,
) -> Vec<(f64, String)> {
    let fits = |ticks: &[f64]| {
        let labelled: Vec<(f64, f64)> = ticks
            .iter()
            .map(|&t| (px(t), extent(&tick_label(t, log))))
            .collect();
        labelled
            .windows(2)
            .all(|w| (w[1].0 - w[0].0).abs() >= (w[0].1 + w[1].1) / 2.0 + 4.0)
    };
    let label = |ticks: Vec<f64>| ticks.into_iter().map(|t| (t, tick_label(t, log))).collect();
    if log {
        if hi - lo < 3.0 {
            let dense = log_ticks_every(lo, hi, 0);
            if fits(&dense) {
                return label(dense);
            }
        }
        let mut stride = 1i64;
        loop {
            let t = log_ticks_every(lo, hi, stride);
            if t.len() <= 1 || fits(&t) {
                return label(t);
            }
            // 1, 2, 5, 10, 20, 50, …
            stride = match stride.to_string().as_bytes()[0] {
                b'1' => stride * 2,
                b'2' => stride / 2 * 5,
                _ => stride * 2,
            };
        }
    }
    let all = nice_ticks(lo, hi);
    for stride in 1..=all.len().max(1) {
        let t: Vec<f64> = all.iter().copied().step_by(stride).collect();
        if t.len() <= 1 || fits(&t) {
            return label(t);
        }
    }
    label(all)
}

/// An axis label, with " (log scale)" added on a log axis unless it says so.
fn axis_label(label: &str, log: bool) -> String {
    if log && !label.contains("log scale") {
        format!("{label} (log scale)")
    } else {
        label.to_string()
    }
}

/// Greedy word wrap of `text` into lines of at most `max` characters (a longer word
/// is split).
fn wrap(text: &str, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let mut word = word.to_string();
        while word.chars().count() > max {
            if !cur.is_empty() {
                lines.push(std::mem::take(&mut cur));
            }
            let head: String = word.chars().take(max).collect();
            word = word.chars().skip(max).collect();
            lines.push(head);
        }
        let need = cur.chars().count() + usize::from(!cur.is_empty()) + word.chars().count();
        if !cur.is_empty() && need > max {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(&word);
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// The title's font size and lines for a canvas `width` px wide: one line at 14,
/// 13 or 12 px if it fits, else wrapped at 12 px.
fn title_lines(title: &str, width: f64) -> (f64, Vec<String>) {
    let avail = width - 20.0;
    for size in [14.0, 13.0, 12.0] {
        if text_width(title, size) <= avail {
            return (size, vec![title.to_string()]);
        }
    }
    let max = (avail / (0.6 * 12.0)).floor().max(1.0) as usize;
    (12.0, wrap(title, max))
}

/// The top margin that the title's lines need (at least [`MT`]).
fn title_height(lines: usize) -> f64 {
    MT.max(22.0 + 15.0 * lines.saturating_sub(1) as f64 + 14.0)
}

/// Writes the title centred at `cx`: baselines at 22, 37, … px.
fn write_title(s: &mut String, (size, lines): &(f64, Vec<String>), cx: f64) {
    for (i, l) in lines.iter().enumerate() {
        let _ = writeln!(
            s,
            r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="{size}">{}</text>"#,
            22.0 + 15.0 * i as f64,
            esc(l)
        );
    }
}

/// How a series is drawn: colour, dash pattern (lines) and marker (points).
struct Look {
    colour: &'static str,
    dash: &'static str,
    marker: usize,
}

fn look(k: usize, style: Style) -> Look {
    let cycle = (k / COLORS.len()) % LINE_DASHES.len();
    Look {
        colour: COLORS[k % COLORS.len()],
        dash: match style {
            Style::Dashed => DASHED_DASHES[cycle],
            _ => LINE_DASHES[cycle],
        },
        marker: cycle,
    }
}

fn dash_attr(dash: &str) -> String {
    if dash.is_empty() {
        String::new()
    } else {
        format!(r#" stroke-dasharray="{dash}""#)
    }
}

/// A point marker: circle, square, triangle or diamond (by cycle), about 5 px.
fn marker(s: &mut String, x: f64, y: f64, shape: usize, c: &str) {
    let _ = match shape {
        0 => writeln!(s, r#"<circle cx="{x:.1}" cy="{y:.1}" r="2.5" fill="{c}"/>"#),
        1 => writeln!(
            s,
            r#"<rect x="{:.1}" y="{:.1}" width="5" height="5" fill="{c}"/>"#,
            x - 2.5,
            y - 2.5
        ),
        2 => writeln!(
            s,
            r#"<polygon points="{x:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="{c}"/>"#,
            y - 3.0,
            x + 3.0,
            y + 2.5,
            x - 3.0,
            y + 2.5
        ),
        _ => writeln!(
            s,
            r#"<polygon points="{x:.1},{:.1} {:.1},{y:.1} {x:.1},{:.1} {:.1},{y:.1}" fill="{c}"/>"#,
            y - 3.2,
            x + 3.2,
            y + 3.2,
            x - 3.2
        ),
    };
}

/// One legend entry: the series index (None for a key line), its lines of text.
struct Entry {
    series: Option<usize>,
    lines: Vec<String>,
}

/// Legend entries placed in columns no taller than `max_h`: (column x offset,
/// y offset, entry) and the legend's total width.
fn legend_layout(entries: Vec<Entry>, max_h: f64) -> (Vec<(f64, f64, Entry)>, f64) {
    let mut placed = Vec::new();
    let (mut col_x, mut y, mut col_w) = (0.0f64, 0.0f64, 0.0f64);
    for e in entries {
        let h = LEGEND_LINE * e.lines.len() as f64;
        if y > 0.0 && y + h > max_h {
            col_x += col_w + 12.0;
            y = 0.0;
            col_w = 0.0;
        }
        let w = 22.0
            + e.lines
                .iter()
                .map(|l| text_width(l, FONT))
                .fold(0.0, f64::max);
        col_w = col_w.max(w);
        placed.push((col_x, y, e));
        y += h;
    }
    let width = if placed.is_empty() {
        0.0
    } else {
        col_x + col_w
    };
    (placed, width)
}

/// Renders a plot as an SVG document: the heat map if the plot has one (its series
/// are then not drawn), else the series.
pub fn render_svg(p: &Plot) -> String {
    if let Some(h) = &p.heatmap {
        return heatmap::render(p, h);
    }
    let tx = |v: f64| if p.x_log { v.log10() } else { v };
    let ty = |v: f64| if p.y_log { v.log10() } else { v };
    let pts: Vec<Vec<(f64, f64)>> = p
        .series
        .iter()
        .map(|s| {
            s.points
                .iter()
                .map(|&(x, y)| (tx(x), ty(y)))
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect()
        })
        .collect();
    let all = pts.iter().flatten();
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for &(x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if x1 - x0 < 1e-300 {
        x0 -= 0.5;
        x1 += 0.5;
    }
    if y1 - y0 < 1e-300 {
        y0 -= 0.5;
        y1 += 0.5;
    }
    let pad = (y1 - y0) * 0.05;
    let (y0, y1) = (y0 - pad, y1 + pad);

    // The legend: one entry per series, or the key of a paths plot.
    let entries: Vec<Entry> = if p.paths {
        let plural = if p.series.len() == 1 { "" } else { "s" };
        [
            format!("{} path{plural}", p.series.len()),
            "start".into(),
            "end".into(),
        ]
        .into_iter()
        .map(|l| Entry {
            series: None,
            lines: vec![l],
        })
        .collect()
    } else {
        p.series
            .iter()
            .enumerate()
            .map(|(k, s)| Entry {
                series: Some(k),
                lines: wrap(&s.name, LEGEND_CHARS),
            })
            .collect()
    };
    let (legend, legend_w) = legend_layout(entries, PH + MB - 20.0);

    // Screen coordinates along each axis depend only on the plot area, so the ticks
    // can be chosen before the margins are known.
    let ux = |x: f64| (x - x0) / (x1 - x0) * PW;
    let uy = |y: f64| PH - (y - y0) / (y1 - y0) * PH;
    let xt = axis_ticks(x0, x1, p.x_log, ux, |l| text_width(l, FONT));
    let yt = axis_ticks(y0, y1, p.y_log, uy, |_| FONT);
    let widest_y = yt
        .iter()
        .map(|(_, l)| text_width(l, FONT))
        .fold(0.0, f64::max);
    // the rotated y label occupies x ≈ 7…18; tick labels end 5 px left of the axis
    let ml = ML.max(widest_y + 28.0);
    let mr = if legend_w > 0.0 {
        10.0 + legend_w + 10.0
    } else {
        20.0
    };
    let w = (ml + PW + mr).max(W).ceil();
    let title = title_lines(&p.title, w);
    let mt = title_height(title.1.len());
    let h = mt + PH + MB;
    let sx = |x: f64| ml + ux(x);
    let sy = |y: f64| mt + uy(y);

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="{FONT}">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    write_title(&mut s, &title, w / 2.0);
    let _ = writeln!(
        s,
        r##"<rect x="{ml}" y="{mt}" width="{PW:.1}" height="{PH:.1}" fill="none" stroke="#333"/>"##
    );
    for (t, label) in &xt {
        let x = sx(*t);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{mt:.1}" x2="{x:.1}" y2="{:.1}" stroke="#ccc"/>"##,
            mt + PH
        );
        let _ = writeln!(
            s,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            mt + PH + 15.0,
            label
        );
    }
    for (t, label) in &yt {
        let y = sy(*t);
        let _ = writeln!(
            s,
            r##"<line x1="{ml}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ccc"/>"##,
            ml + PW
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            ml - 5.0,
            y + 4.0,
            label
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        ml + PW / 2.0,
        h - 10.0,
        esc(&axis_label(&p.x_label, p.x_log))
    );
    let _ = writeln!(
        s,
        r#"<text x="15" y="{:.1}" text-anchor="middle" transform="rotate(-90 15 {:.1})">{}</text>"#,
        mt + PH / 2.0,
        mt + PH / 2.0,
        esc(&axis_label(&p.y_label, p.y_log))
    );
    let mut markers = String::new();
    for (k, (ser, pts)) in p.series.iter().zip(&pts).enumerate() {
        let lk = look(k, ser.style);
        let c = lk.colour;
        match ser.style {
            Style::Points => {
                for &(x, y) in pts {
                    marker(&mut s, sx(x), sy(y), lk.marker, c);
                }
            }
            Style::Line | Style::Dashed => {
                let d: Vec<String> = pts
                    .iter()
                    .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
                    .collect();
                let _ = writeln!(
                    s,
                    r#"<polyline fill="none" stroke="{c}" stroke-width="1.5"{} points="{}"/>"#,
                    dash_attr(lk.dash),
                    d.join(" ")
                );
            }
        }
        if p.paths {
            // Markers go on top of every path, so no later path hides an end point.
            if let (Some(&(xa, ya)), Some(&(xb, yb))) = (pts.first(), pts.last()) {
                let _ = writeln!(
                    markers,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="white" stroke="{c}" stroke-width="1.5"/>"#,
                    sx(xa),
                    sy(ya)
                );
                let _ = writeln!(
                    markers,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{c}"/>"#,
                    sx(xb),
                    sy(yb)
                );
            }
        }
    }
    s.push_str(&markers);
    let lx0 = ml + PW + 10.0;
    for (i, (cx, cy, e)) in legend.iter().enumerate() {
        let (lx, ly) = (lx0 + cx, mt + 10.0 + cy);
        match e.series {
            Some(k) => {
                let ser = &p.series[k];
                let lk = look(k, ser.style);
                match ser.style {
                    Style::Points => marker(&mut s, lx + 9.0, ly, lk.marker, lk.colour),
                    Style::Line | Style::Dashed => {
                        let _ = writeln!(
                            s,
                            r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{}" stroke-width="2"{}/>"#,
                            lx + 18.0,
                            lk.colour,
                            dash_attr(lk.dash)
                        );
                    }
                }
            }
            // the paths key: a line, an open start marker, a filled end marker
            None => {
                let _ = match i {
                    0 => writeln!(
                        s,
                        r##"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="#555" stroke-width="2"/>"##,
                        lx + 18.0
                    ),
                    1 => writeln!(
                        s,
                        r##"<circle cx="{:.1}" cy="{ly:.1}" r="3.5" fill="white" stroke="#555" stroke-width="1.5"/>"##,
                        lx + 9.0
                    ),
                    _ => writeln!(
                        s,
                        r##"<circle cx="{:.1}" cy="{ly:.1}" r="3.5" fill="#555"/>"##,
                        lx + 9.0
                    ),
                };
            }
        }
        for (j, l) in e.lines.iter().enumerate() {
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
                lx + 22.0,
                ly + 4.0 + LEGEND_LINE * j as f64,
                esc(l)
            );
        }
    }
    s.push_str("</svg>\n");
    s
}
