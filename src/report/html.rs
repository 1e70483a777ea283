//! `reports/index.html`: one self-contained page a reviewer can attach — the
//! verdict table and every claim's report, with its plots inline (as data URIs, so
//! SVG ids never clash and nothing is fetched). It is rendered from the same
//! Markdown the `.md` reports are, by a converter for exactly the subset those use
//! (headings, paragraphs, block quotes, lists, pipe tables, fenced code, images,
//! `**bold**` and `` `code` ``). Deterministic: the tool version is always in it; a
//! commit and date only when the caller passes a stamp.

use std::fmt::Write;

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Inline Markdown: `code`, **bold**, [text](link) (links to other reports become
/// in-page anchors), images are handled per line by the caller.
fn inline(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('`') {
            if let Some(end) = r.find('`') {
                let _ = write!(out, "<code>{}</code>", esc(&r[..end]));
                rest = &r[end + 1..];
                continue;
            }
        }
        if let Some(r) = rest.strip_prefix("**") {
            if let Some(end) = r.find("**") {
                let _ = write!(out, "<strong>{}</strong>", inline(&r[..end]));
                rest = &r[end + 2..];
                continue;
            }
        }
        if let Some(r) = rest.strip_prefix('[') {
            if let Some(mid) = r.find("](") {
                if let Some(end) = r[mid + 2..].find(')') {
                    let text = &r[..mid];
                    let href = &r[mid + 2..mid + 2 + end];
                    let href = match href.strip_suffix(".md") {
                        Some(h) if !h.contains(':') => format!("#{}", anchor(h)),
                        _ => href.to_string(),
                    };
                    let _ = write!(out, "<a href=\"{}\">{}</a>", esc(&href), inline(text));
                    rest = &r[mid + 2 + end + 1..];
                    continue;
                }
            }
        }
        let c = rest.chars().next().expect("non-empty");
        out.push_str(&esc(&c.to_string()));
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The in-page anchor of a report (`positional/alibi-window` → `positional-alibi-window`).
pub fn anchor(id: &str) -> String {
    id.trim_start_matches("./").replace('/', "-")
}

fn split_row(line: &str) -> Vec<String> {
    let t = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '|' => cells.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    cells.push(cur.trim().to_string());
    cells
}

/// Base64 (RFC 4648, with padding).
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for ch in bytes.chunks(3) {
        let b = [ch[0], *ch.get(1).unwrap_or(&0), *ch.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].iter().enumerate() {
            if i <= ch.len() {
                out.push(A[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Markdown (the reports' subset) to HTML; `image(file)` gives an SVG's text.
pub fn markdown_to_html(md: &str, image: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    let mut para: Vec<&str> = Vec::new();
    let flush = |para: &mut Vec<&str>, out: &mut String| {
        if !para.is_empty() {
            let _ = writeln!(out, "<p>{}</p>", inline(&para.join(" ")));
            para.clear();
        }
    };
    while i < lines.len() {
        let l = lines[i];
        if l.trim().is_empty() {
            flush(&mut para, &mut out);
            i += 1;
        } else if let Some(lang) = l.strip_prefix("```") {
            flush(&mut para, &mut out);
            let mut code = String::new();
            i += 1;
            while i < lines.len() && !lines[i].starts_with("```") {
                code.push_str(lines[i]);
                code.push('\n');
                i += 1;
            }
            i += 1;
            let _ = writeln!(
                out,
                "<pre><code class=\"{}\">{}</code></pre>",
                esc(lang.trim()),
                esc(&code)
            );
        } else if l.starts_with('#') {
            flush(&mut para, &mut out);
            let level = l.chars().take_while(|c| *c == '#').count().min(6);
            let _ = writeln!(out, "<h{level}>{}</h{level}>", inline(l[level..].trim()));
            i += 1;
        } else if l.starts_with("> ") || l == ">" {
            flush(&mut para, &mut out);
            let mut q = Vec::new();
            while i < lines.len() && (lines[i].starts_with("> ") || lines[i] == ">") {
                q.push(lines[i].trim_start_matches('>').trim());
                i += 1;
            }
            let _ = writeln!(
                out,
                "<blockquote><p>{}</p></blockquote>",
                inline(&q.join(" "))
            );
        } else if l.starts_with("- ") {
            flush(&mut para, &mut out);
            out.push_str("<ul>\n");
            while i < lines.len() && lines[i].starts_with("- ") {
                let _ = writeln!(out, "<li>{}</li>", inline(&lines[i][2..]));
                i += 1;
            }
            out.push_str("</ul>\n");
        } else if l.starts_with('|') {
            flush(&mut para, &mut out);
            let head = split_row(l);
            i += 1;
            if i < lines.len() && lines[i].starts_with("|") && lines[i].contains("---") {
                i += 1;
            }
            out.push_str("<table>\n<thead><tr>");
            for h in &head {
                let _ = write!(out, "<th>{}</th>", inline(h));
            }
            out.push_str("</tr></thead>\n<tbody>\n");
            while i < lines.len() && lines[i].starts_with('|') {
                out.push_str("<tr>");
                for c in split_row(lines[i]) {
                    let _ = write!(out, "<td>{}</td>", inline(&c));
                }
                out.push_str("</tr>\n");
                i += 1;
            }
            out.push_str("</tbody></table>\n");
        } else if let Some(r) = l.strip_prefix("![") {
            flush(&mut para, &mut out);
            if let Some((alt, rest)) = r.split_once("](") {
                let file = rest.trim_end_matches(')');
                match image(file) {
                    Some(svg) => {
                        let _ = writeln!(
                            out,
                            "<figure><img alt=\"{}\" src=\"data:image/svg+xml;base64,{}\"><figcaption>{}</figcaption></figure>",
                            esc(alt),
                            base64(svg.as_bytes()),
                            inline(alt)
                        );
                    }
                    None => {
                        let _ = writeln!(out, "<p><em>missing figure {}</em></p>", esc(file));
                    }
                }
            }
            i += 1;
        } else {
            para.push(l);
            i += 1;
        }
    }
    flush(&mut para, &mut out);
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;\
line-height:1.45;color:#1a1a1a}table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}\
td,th{border:1px solid #ccc;padding:.25rem .5rem;vertical-align:top}th{background:#f3f3f3}\
code{background:#f6f6f6;padding:0 .2rem;word-break:break-word}pre{background:#f6f6f6;padding:.75rem;overflow:auto}\
blockquote{border-left:4px solid #ddd;margin:1rem 0;padding:0 1rem;color:#444}\
figure{margin:1rem 0}figure img{max-width:100%;border:1px solid #eee}\
section.claim{border-top:3px solid #444;margin-top:3rem}header .meta{color:#555}";

/// The whole page: `index_md` (the index's Markdown) then one section per
/// (id, Markdown) report, `image(id, file)` giving each plot's SVG text.
pub fn index_html(
    index_md: &str,
    reports: &[(String, String)],
    image: &dyn Fn(&str, &str) -> Option<String>,
    stamp: Option<&str>,
) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>attncheck reports</title>\n");
    let _ = writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>");
    let _ = writeln!(
        out,
        "<header><p class=\"meta\">Written by {}{}</p></header>",
        esc(&super::tool()),
        stamp.map(|s| format!(" · {}", esc(s))).unwrap_or_default()
    );
    out.push_str(&markdown_to_html(index_md, &|_| None));
    for (id, md) in reports {
        let _ = writeln!(out, "<section class=\"claim\" id=\"{}\">", anchor(id));
        out.push_str(&markdown_to_html(md, &|f| image(id, f)));
        out.push_str("</section>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}
