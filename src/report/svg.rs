//! A small deterministic SVG line-plot writer (fixed decimals, no randomness,
//! no timestamps), so plots can be committed and snapshot-tested.

use crate::outcome::{Plot, Style};
use std::fmt::Write;

mod heatmap;

const W: f64 = 640.0;
const H: f64 = 400.0;
const ML: f64 = 70.0;
const MR: f64 = 160.0;
const MT: f64 = 40.0;
const MB: f64 = 50.0;
const COLORS: [&str; 12] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#7f7f7f", "#bcbd22", "#393b79", "#ad494a",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
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

/// Ticks of a log axis spanning [lo, hi] (in log10 units): decades, plus 2 and 5
/// × 10^k when fewer than three decades are shown.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let dense = hi - lo < 3.0;
    let mut k = lo.floor() as i64;
    while (k as f64) <= hi.ceil() && out.len() < 40 {
        for m in [1.0f64, 2.0, 5.0] {
            if m != 1.0 && !dense {
                continue;
            }
            let t = k as f64 + m.log10();
            if t >= lo - 1e-12 && t <= hi + 1e-12 {
                out.push(t);
            }
        }
        k += 1;
    }
    out
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
    let pw = W - ML - MR;
    let ph = H - MT - MB;
    let sx = |x: f64| ML + (x - x0) / (x1 - x0) * pw;
    let sy = |y: f64| MT + ph - (y - y0) / (y1 - y0) * ph;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
        ML + pw / 2.0,
        esc(&p.title)
    );
    let _ = writeln!(
        s,
        r##"<rect x="{ML}" y="{MT}" width="{pw:.1}" height="{ph:.1}" fill="none" stroke="#333"/>"##
    );
    let xt = if p.x_log {
        log_ticks(x0, x1)
    } else {
        nice_ticks(x0, x1)
    };
    for t in xt {
        let x = sx(t);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#ccc"/>"##,
            MT,
            MT + ph
        );
        let _ = writeln!(
            s,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            MT + ph + 15.0,
            tick_label(t, p.x_log)
        );
    }
    let yt = if p.y_log {
        log_ticks(y0, y1)
    } else {
        nice_ticks(y0, y1)
    };
    for t in yt {
        let y = sy(t);
        let _ = writeln!(
            s,
            r##"<line x1="{ML}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ccc"/>"##,
            ML + pw
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            ML - 5.0,
            y + 4.0,
            tick_label(t, p.y_log)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        ML + pw / 2.0,
        H - 10.0,
        esc(&p.x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="15" y="{:.1}" text-anchor="middle" transform="rotate(-90 15 {:.1})">{}</text>"#,
        MT + ph / 2.0,
        MT + ph / 2.0,
        esc(&p.y_label)
    );
    let mut markers = String::new();
    for (k, (ser, pts)) in p.series.iter().zip(&pts).enumerate() {
        let c = COLORS[k % COLORS.len()];
        match ser.style {
            Style::Points => {
                for &(x, y) in pts {
                    let _ = writeln!(
                        s,
                        r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{c}"/>"#,
                        sx(x),
                        sy(y)
                    );
                }
            }
            Style::Line | Style::Dashed => {
                let d: Vec<String> = pts
                    .iter()
                    .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
                    .collect();
                let dash = if ser.style == Style::Dashed {
                    r#" stroke-dasharray="6 4""#
                } else {
                    ""
                };
                let _ = writeln!(
                    s,
                    r#"<polyline fill="none" stroke="{c}" stroke-width="1.5"{dash} points="{}"/>"#,
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
            continue;
        }
        let ly = MT + 10.0 + 16.0 * k as f64;
        let lx = ML + pw + 10.0;
        match ser.style {
            Style::Points => {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{ly:.1}" r="2.5" fill="{c}"/>"#,
                    lx + 9.0
                );
            }
            Style::Line | Style::Dashed => {
                let dash = if ser.style == Style::Dashed {
                    r#" stroke-dasharray="6 4""#
                } else {
                    ""
                };
                let _ = writeln!(
                    s,
                    r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{c}" stroke-width="2"{dash}/>"#,
                    lx + 18.0
                );
            }
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
            lx + 22.0,
            ly + 4.0,
            esc(&ser.name)
        );
    }
    if p.paths {
        s.push_str(&markers);
        paths_key(&mut s, ML + pw + 10.0, p.series.len());
    }
    s.push_str("</svg>\n");
    s
}

/// The key of a paths plot: one line for the paths, one marker each for start and end.
fn paths_key(s: &mut String, lx: f64, count: usize) {
    let ly = MT + 10.0;
    let _ = writeln!(
        s,
        r##"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="#555" stroke-width="2"/>"##,
        lx + 18.0
    );
    let plural = if count == 1 { "" } else { "s" };
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}">{count} path{plural}</text>"#,
        lx + 22.0,
        ly + 4.0
    );
    let _ = writeln!(
        s,
        r##"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="white" stroke="#555" stroke-width="1.5"/>"##,
        lx + 9.0,
        ly + 16.0
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}">start</text>"#,
        lx + 22.0,
        ly + 20.0
    );
    let _ = writeln!(
        s,
        r##"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="#555"/>"##,
        lx + 9.0,
        ly + 32.0
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}">end</text>"#,
        lx + 22.0,
        ly + 36.0
    );
}
