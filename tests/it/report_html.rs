//! The reports as one HTML page (`attncheck::report::html`): the Markdown subset the
//! reports use, and plots embedded as base64 data URIs (RFC 4648). Moved from
//! src/report/html.rs's unit tests, so that `cargo test` compiles the library once.

use attncheck::report::html::markdown_to_html;

#[test]
fn base64_matches_rfc_4648_vectors() {
    // through the encoder's one use: a figure's SVG text embedded as a data URI
    // (the encoding ends at the closing quote: base64 has no quote)
    for (i, o) in [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ] {
        let h = markdown_to_html("![plot](p.svg)\n", &|f| {
            (f == "p.svg").then(|| i.to_string())
        });
        assert!(
            h.contains(&format!("src=\"data:image/svg+xml;base64,{o}\"")),
            "{i:?}: {h}"
        );
    }
}

#[test]
fn converts_the_reports_markdown_subset() {
    let md = "# T — x\n\n**Verdict: ok** (`a|b`)\n\n> quote\n\n| a | b \\| c |\n| --- | --- |\n| 1 | [r](p/q.md) |\n\n- item\n\n```sh\nrun <x>\n```\n";
    let h = markdown_to_html(md, &|_| None);
    assert!(h.contains("<h1>T — x</h1>"));
    assert!(h.contains("<strong>Verdict: ok</strong>"));
    assert!(h.contains("<th>b | c</th>"));
    assert!(h.contains("<a href=\"#p-q\">r</a>"));
    assert!(h.contains("run &lt;x&gt;"));
    assert!(h.contains("<blockquote>"));
    assert!(h.contains("<li>item</li>"));
}
