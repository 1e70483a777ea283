//! SVG output: heat maps (attention matrices, log scale down to 0) and token
//! trajectories render well-formed, deterministic SVG; plots without them
//! serialise exactly as before the heat-map field existed.

use attncheck::dynamics::plots::{attention_heatmap, attention_heatmap_log10, trajectories};
use attncheck::outcome::{HeatScale, Heatmap, Plot, Series, Style};
use attncheck::report::render_svg;

/// Tags open and close in nested order; returns the number of elements.
fn assert_balanced(svg: &str) -> usize {
    assert!(svg.starts_with("<svg "), "starts with <svg: {}", &svg[..40]);
    assert!(svg.ends_with("</svg>\n"));
    let mut stack: Vec<&str> = Vec::new();
    let mut elements = 0;
    let mut rest = svg;
    while let Some(open) = rest.find('<') {
        let close = rest[open..].find('>').expect("unclosed tag") + open;
        let tag = &rest[open + 1..close];
        assert!(!tag.contains('<'), "'<' inside a tag: {tag}");
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop(), Some(name), "closing {name}");
        } else {
            elements += 1;
            if !tag.ends_with('/') {
                stack.push(tag.split_whitespace().next().unwrap());
            }
        }
        rest = &rest[close + 1..];
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    elements
}

fn cells(svg: &str) -> Vec<&str> {
    svg.lines()
        .filter(|l| l.contains(r#"class="cell""#))
        .collect()
}

fn fill_of(cell: &str) -> &str {
    let i = cell.find("fill=\"").unwrap() + 6;
    &cell[i..i + 7]
}

/// A softmax-like n × n matrix whose rows sum to 1, with weights spanning
/// many decades (row i concentrated on token i).
fn attention(n: usize) -> Vec<f64> {
    let mut p = Vec::new();
    for i in 0..n {
        let row: Vec<f64> = (0..n)
            .map(|j| (-((i as f64 - j as f64).powi(2)) * 3.0).exp())
            .collect();
        let s: f64 = row.iter().sum();
        p.extend(row.iter().map(|v| v / s));
    }
    p
}

fn old_style_plot() -> Plot {
    Plot {
        slug: "s".into(),
        title: "t".into(),
        x_label: "x".into(),
        y_label: "y".into(),
        x_log: false,
        y_log: true,
        series: vec![Series {
            name: "a".into(),
            style: Style::Dashed,
            points: vec![(1.0, 2.0), (3.0, 4.0)],
        }],
        heatmap: None,
        paths: false,
    }
}

#[test]
fn a_plot_without_heatmap_serialises_exactly_as_before() {
    let old = r#"{"slug":"s","title":"t","x_label":"x","y_label":"y","x_log":false,"y_log":true,"series":[{"name":"a","style":"dashed","points":[[1.0,2.0],[3.0,4.0]]}]}"#;
    let p = old_style_plot();
    assert_eq!(serde_json::to_string(&p).unwrap(), old);
    let back: Plot = serde_json::from_str(old).unwrap();
    assert_eq!(back, p);
}

#[test]
fn a_plot_without_heatmap_renders_the_line_plot_with_a_legend_entry_per_series() {
    let svg = render_svg(&old_style_plot());
    assert_balanced(&svg);
    assert!(cells(&svg).is_empty());
    assert!(!svg.contains("linearGradient"));
    assert!(svg.contains(r#"stroke-dasharray="6 4" points="#));
    assert!(svg.contains(">a</text>"), "legend entry of the series");
}

#[test]
fn a_heatmap_has_one_cell_per_entry_and_balanced_tags() {
    let n = 20;
    for log in [false, true] {
        let plot = attention_heatmap("attention", "P at t = 5", &attention(n), n, log);
        let svg = render_svg(&plot);
        assert_balanced(&svg);
        assert_eq!(cells(&svg).len(), n * n);
        assert!(svg.contains("token j (key)") && svg.contains("token i (query)"));
        assert!(svg.contains("P at t = 5"));
        assert!(svg.contains("linearGradient"), "colour bar");
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }
}

#[test]
fn svg_output_is_deterministic() {
    let n = 7;
    let p = attention(n);
    let a = render_svg(&attention_heatmap("a", "P", &p, n, true));
    let b = render_svg(&attention_heatmap("a", "P", &p, n, true));
    assert_eq!(a, b);
    let (times, states) = spiral(20, 2, 30);
    let a = render_svg(&trajectories("t", "paths", &times, &states, 20, 2));
    let b = render_svg(&trajectories("t", "paths", &times, &states, 20, 2));
    assert_eq!(a, b);
}

#[test]
fn log_scale_gives_zero_and_1e_300_the_floor_colour_and_1_the_top() {
    // 0, the floor itself, a subnormal (below the floor) and 1.
    let p = [0.0, 1e-300, 5e-324, 1.0];
    let plot = attention_heatmap("p", "P", &p, 2, true);
    let h = plot.heatmap.as_ref().unwrap();
    assert_eq!((h.scale, h.min, h.max), (HeatScale::Log10, 1e-300, 1.0));
    let svg = render_svg(&plot);
    assert_balanced(&svg);
    let fills: Vec<&str> = cells(&svg).into_iter().map(fill_of).collect();
    assert_eq!(fills, ["#440154", "#440154", "#440154", "#fde725"]);
    assert!(svg.contains("≤ 1e-300"), "floor label");
    assert!(!svg.contains("NaN") && !svg.contains("inf"));
}

#[test]
fn log_scale_floor_is_the_decade_below_the_smallest_weight() {
    let p = [0.5, 0.5, 3e-7, 1.0 - 3e-7];
    let h = attention_heatmap("p", "P", &p, 2, true).heatmap.unwrap();
    assert_eq!(h.min, 1e-7);
    let svg = render_svg(&attention_heatmap("p", "P", &p, 2, true));
    let fills: Vec<&str> = cells(&svg).into_iter().map(fill_of).collect();
    // log10 0.5 = −0.301 of a range of 7 decades: near the top, not at it.
    assert_ne!(fills[0], "#fde725");
    assert_ne!(fills[2], "#440154", "3e-7 is above the floor 1e-7");
}

#[test]
fn exponent_scale_draws_weights_below_f64_range() {
    // log10 P for P = 1, 10^−33860 (clusters.md §4, t = 55) and an exact 0.
    let e = [0.0, -33859.07, f64::NEG_INFINITY, -0.3];
    let plot = attention_heatmap_log10("p", "P at t = 55", &e, 2);
    let h = plot.heatmap.as_ref().unwrap();
    assert_eq!(
        (h.scale, h.min, h.max),
        (HeatScale::Exponent10, -33860.0, 0.0)
    );
    let svg = render_svg(&plot);
    assert_balanced(&svg);
    let fills: Vec<&str> = cells(&svg).into_iter().map(fill_of).collect();
    assert_eq!(fills[0], "#fde725");
    assert_eq!(fills[2], "#440154");
    assert!(svg.contains("≤ 1e-33860"));
    assert!(!svg.contains("NaN") && !svg.contains("inf"));
}

#[test]
fn linear_scale_uses_the_viridis_table() {
    let plot = attention_heatmap("p", "P", &[0.0, 0.5, 1.0, f64::NAN], 2, false);
    let fills: Vec<String> = cells(&render_svg(&plot))
        .into_iter()
        .map(|c| fill_of(c).to_string())
        .collect();
    assert_eq!(fills, ["#440154", "#21918c", "#fde725", "#bbbbbb"]);
}

#[test]
fn a_heatmap_with_missing_values_or_no_rows_renders_without_panicking() {
    let mut plot = attention_heatmap("p", "P", &[0.25; 3], 2, false);
    let svg = render_svg(&plot);
    assert_balanced(&svg);
    assert_eq!(cells(&svg).len(), 4);
    assert!(svg.contains(r##"fill="#bbbbbb""##), "missing cell is grey");
    plot.heatmap = Some(Heatmap {
        rows: 0,
        cols: 0,
        values: Vec::new(),
        scale: HeatScale::Log10,
        min: 0.0,
        max: 0.0,
        label: "empty".into(),
        row_labels: Some(vec!["x".into()]),
        col_labels: None,
    });
    let svg = render_svg(&plot);
    assert_balanced(&svg);
    assert!(cells(&svg).is_empty());
}

/// n tokens on a contracting spiral: `steps` times, states n × d row-major.
fn spiral(n: usize, d: usize, steps: usize) -> (Vec<f64>, Vec<Vec<f64>>) {
    let times: Vec<f64> = (0..steps).map(|k| k as f64 * 0.1).collect();
    let states = times
        .iter()
        .map(|&t| {
            let mut x = Vec::new();
            for i in 0..n {
                let a = i as f64 * 0.7 + t;
                let r = (1.0 + i as f64 * 0.1) * (-t).exp();
                for c in 0..d {
                    x.push(match c {
                        0 => r * a.cos(),
                        1 => r * a.sin(),
                        _ => t,
                    });
                }
            }
            x
        })
        .collect();
    (times, states)
}

#[test]
fn twenty_tokens_in_the_plane_render_as_marked_paths_with_one_key() {
    let (times, states) = spiral(20, 2, 30);
    let plot = trajectories("paths", "Tokens, V = I", &times, &states, 20, 2);
    assert!(plot.paths);
    assert_eq!(plot.series.len(), 20);
    assert!(plot.series.iter().all(|s| s.points.len() == 30));
    let svg = render_svg(&plot);
    assert_balanced(&svg);
    assert_eq!(svg.matches("<polyline").count(), 20);
    // start and end of each path, plus the key's two markers
    assert_eq!(svg.matches("<circle").count(), 2 * 20 + 2);
    assert!(svg.contains(">20 paths</text>"));
    assert!(!svg.contains("token 1<"), "no legend entry per token");
    assert!(plot.title == "Tokens, V = I" && plot.x_label == "coordinate 1");
}

#[test]
fn trajectories_in_1d_are_against_time_and_in_3d_are_projected() {
    let (times, states) = spiral(4, 1, 10);
    let p1 = trajectories("a", "d = 1", &times, &states, 4, 1);
    assert_eq!(p1.x_label, "t");
    assert_eq!(p1.series[2].points[3].0, times[3]);
    assert_balanced(&render_svg(&p1));
    let (times, states) = spiral(4, 3, 10);
    let p3 = trajectories("b", "d = 3", &times, &states, 4, 3);
    assert!(p3.title.contains("projected on coordinates 1–2 of 3"));
    assert!(p3.x_label.contains("projection"));
    assert_eq!(p3.series[1].points[0], (states[0][3], states[0][4]));
    assert_balanced(&render_svg(&p3));
}

#[test]
fn trajectories_skip_short_states_instead_of_panicking() {
    let times = [0.0, 1.0, 2.0];
    let states = vec![
        vec![0.0, 0.0, 1.0, 1.0],
        vec![0.5],
        vec![1.0, f64::NAN, 2.0, 2.0],
    ];
    let p = trajectories("c", "ragged", &times, &states, 2, 2);
    assert_eq!(p.series[0].points, vec![(0.0, 0.0)]);
    assert_eq!(p.series[1].points, vec![(1.0, 1.0), (2.0, 2.0)]);
    assert_balanced(&render_svg(&p));
    assert!(trajectories("d", "d = 0", &times, &states, 2, 0)
        .series
        .iter()
        .all(|s| s.points.is_empty()));
}

/// Writes sample SVGs for viewing when ATTNCHECK_SVG_SAMPLES names a directory.
#[test]
fn write_samples_when_asked() {
    let Ok(dir) = std::env::var("ATTNCHECK_SVG_SAMPLES") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let (times, states) = spiral(20, 2, 40);
    let e: Vec<f64> = attention(20)
        .iter()
        .map(|v| {
            if *v > 0.0 {
                v.log10() * 150.0
            } else {
                f64::NEG_INFINITY
            }
        })
        .collect();
    for plot in [
        attention_heatmap(
            "lin",
            "Attention matrix P at t = 5",
            &attention(20),
            20,
            false,
        ),
        attention_heatmap(
            "log",
            "Attention matrix P at t = 5",
            &attention(20),
            20,
            true,
        ),
        attention_heatmap_log10("exp", "Attention matrix P at t = 55", &e, 20),
        trajectories("traj2", "Token trajectories, V = I", &times, &states, 20, 2),
        trajectories(
            "traj3",
            "Token trajectories",
            &times,
            &spiral(20, 3, 40).1,
            20,
            3,
        ),
    ] {
        std::fs::write(dir.join(format!("{}.svg", plot.slug)), render_svg(&plot)).unwrap();
    }
}

/// The estimated box of one `<text>` element: 0.6 em per character, from 0.8 em
/// above the baseline to 0.2 em below, turned with a `rotate(-90 cx cy)`.
#[derive(Debug, Clone)]
struct TextBox {
    text: String,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    Some(&tag[i..i + tag[i..].find('"')?])
}

fn num(tag: &str, name: &str) -> Option<f64> {
    attr(tag, name).map(|v| v.parse().unwrap_or_else(|_| panic!("{name}={v}")))
}

/// The canvas size and the estimated box of every text element of an SVG.
fn text_boxes(svg: &str) -> ((f64, f64), Vec<TextBox>) {
    let root = &svg[..svg.find('>').unwrap()];
    let (w, h) = (num(root, "width").unwrap(), num(root, "height").unwrap());
    let base_font = num(root, "font-size").unwrap_or(16.0);
    let mut boxes = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<text") {
        let open_end = i + rest[i..].find('>').unwrap();
        let tag = &rest[i..open_end];
        let close = open_end + rest[open_end..].find("</text>").unwrap();
        let text = rest[open_end + 1..close]
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        rest = &rest[close..];
        let fs = num(tag, "font-size").unwrap_or(base_font);
        let (x, y) = (num(tag, "x").unwrap(), num(tag, "y").unwrap());
        let tw = 0.6 * fs * text.chars().count() as f64;
        let (x0, x1) = match attr(tag, "text-anchor").unwrap_or("start") {
            "middle" => (x - tw / 2.0, x + tw / 2.0),
            "end" => (x - tw, x),
            _ => (x, x + tw),
        };
        let (y0, y1) = (y - 0.8 * fs, y + 0.2 * fs);
        let b = match attr(tag, "transform") {
            None => TextBox {
                text,
                x0,
                x1,
                y0,
                y1,
            },
            Some(t) => {
                let v: Vec<f64> = t
                    .strip_prefix("rotate(-90 ")
                    .and_then(|r| r.strip_suffix(')'))
                    .unwrap_or_else(|| panic!("unsupported transform {t}"))
                    .split(' ')
                    .map(|n| n.parse().unwrap())
                    .collect();
                let (cx, cy) = (v[0], v[1]);
                // (x, y) ↦ (cx + (y − cy), cy − (x − cx))
                TextBox {
                    text,
                    x0: cx + (y0 - cy),
                    x1: cx + (y1 - cy),
                    y0: cy - (x1 - cx),
                    y1: cy - (x0 - cx),
                }
            }
        };
        boxes.push(b);
    }
    ((w, h), boxes)
}

/// Every text inside the canvas, no two texts overlapping (0.5 px slack).
fn text_problems(name: &str, svg: &str) -> Vec<String> {
    let ((w, h), boxes) = text_boxes(svg);
    let mut out = Vec::new();
    for b in &boxes {
        if b.x0 < -0.5 || b.y0 < -0.5 || b.x1 > w + 0.5 || b.y1 > h + 0.5 {
            out.push(format!(
                "{name}: `{}` drawn outside the {w} × {h} canvas at x {:.1}..{:.1}, y {:.1}..{:.1}",
                b.text, b.x0, b.x1, b.y0, b.y1
            ));
        }
    }
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            let ox = a.x1.min(b.x1) - a.x0.max(b.x0);
            let oy = a.y1.min(b.y1) - a.y0.max(b.y0);
            if ox > 0.5 && oy > 0.5 {
                out.push(format!("{name}: `{}` overlaps `{}`", a.text, b.text));
            }
        }
    }
    out
}

fn svgs_below(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        // reports/full is rewritten only by hours-long full sweeps; its plots are
        // checked when the next full run rewrites them
        if p.is_dir() && !p.ends_with("full") {
            svgs_below(&p, out);
        } else if p.extension().is_some_and(|x| x == "svg") {
            out.push(p);
        }
    }
}

/// The committed reports are what the renderer writes for the claims' plots
/// (`reports::committed_reports_equal_a_fresh_run`), so reading them tests the
/// renderer on every real plot without rerunning the claims.
#[test]
fn committed_svgs_draw_no_text_outside_the_canvas_and_no_overlapping_text() {
    let mut files = Vec::new();
    svgs_below(&crate::util::root().join("reports"), &mut files);
    files.sort();
    assert!(files.len() >= 50, "expected the committed plots");
    let mut problems = Vec::new();
    for f in &files {
        let svg = std::fs::read_to_string(f).unwrap();
        assert_balanced(&svg);
        let name = f
            .strip_prefix(crate::util::root())
            .unwrap()
            .display()
            .to_string();
        problems.extend(text_problems(&name, &svg));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn series(name: String, style: Style, points: Vec<(f64, f64)>) -> Series {
    Series {
        name,
        style,
        points,
    }
}

/// A plot like the worst committed ones: 23 series with long names, 90 decades
/// on a log axis and a long title.
fn crowded_plot() -> Plot {
    let mut s: Vec<Series> = (0..20)
        .map(|k| {
            series(
                format!("token {} of the witness with a long description", k + 1),
                Style::Line,
                (0..30)
                    .map(|i| (i as f64, 10f64.powf((k * i) as f64 * 0.15 - 3.0)))
                    .collect(),
            )
        })
        .collect();
    for k in 0..3 {
        s.push(series(
            format!("bound {k}"),
            Style::Dashed,
            vec![(0.0, 1e-3), (29.0, 10f64.powi(88 - k))],
        ));
    }
    Plot {
        slug: "crowded".into(),
        title: "Sandwich head weights e^{B_h(r)} (d̄ = 128, H = 12, I from 0) and C·r^(−α_h) \
                (dashed) over ninety decades"
            .into(),
        x_label: "step k".into(),
        y_label: "ratio".into(),
        x_log: false,
        y_log: true,
        series: s,
        heatmap: None,
        paths: false,
    }
}

#[test]
fn crowded_legends_long_titles_and_ninety_decades_stay_on_the_canvas_without_overlaps() {
    let plot = crowded_plot();
    let svg = render_svg(&plot);
    assert_balanced(&svg);
    let problems = text_problems("crowded", &svg);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // every series has a legend entry, and every gridline of the log axis a label
    for k in 1..=20 {
        assert!(
            svg.contains(&format!(">token {k} of the witness")),
            "token {k}"
        );
    }
    let (_, boxes) = text_boxes(&svg);
    let decades: Vec<&str> = boxes
        .iter()
        .map(|b| b.text.as_str())
        .filter(|t| t.starts_with("1e") || *t == "1")
        .collect();
    assert!(decades.contains(&"1e80"), "labels above 1e34: {decades:?}");
    let gridlines = svg.matches(r##"stroke="#ccc""##).count();
    let tick_labels = boxes
        .iter()
        .filter(|b| b.text.parse::<f64>().is_ok() || b.text.starts_with("1e"))
        .count();
    assert_eq!(gridlines, tick_labels, "a label for every gridline");
    assert!(
        svg.contains(">ratio (log scale)<"),
        "log axis named as such"
    );
}

#[test]
fn twenty_series_get_twenty_different_looks() {
    let svg = render_svg(&crowded_plot());
    let looks: std::collections::BTreeSet<String> = svg
        .lines()
        .filter(|l| l.starts_with("<polyline"))
        .map(|l| l[..l.find(" points=").unwrap()].to_string())
        .collect();
    assert_eq!(looks.len(), 23, "{looks:#?}");
}
