//! Markdown rendering of reports and of the index.

use super::Report;
use crate::kernel::Certainty;
use crate::spec::Provenance;
use crate::verdict::CheckKind;
use std::fmt::Write;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn tags(p: &[Provenance]) -> String {
    p.iter()
        .map(|t| match t {
            Provenance::Paper => "[paper]",
            Provenance::Derived => "[derived]",
            Provenance::Unconfirmed => "[unconfirmed]",
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn result_word(kind: CheckKind, r: Certainty) -> &'static str {
    match (kind, r) {
        (CheckKind::Certified, Certainty::True) => "proven",
        (CheckKind::Certified, Certainty::False) => "**disproven**",
        (CheckKind::Consistency, Certainty::True) => "consistent (not a proof)",
        (CheckKind::Consistency, Certainty::False) => "**violated**",
        (_, Certainty::Unknown) => "**undecided**",
        (CheckKind::Observed, Certainty::True) => "holds",
        (CheckKind::Observed, Certainty::False) => "**fails**",
    }
}

/// At most this many obligation names per kernel-only reason.
const KERNEL_ONLY_NAMES: usize = 4;

/// The Coq paragraph of the trust section: the figure "independently proven in
/// Coq: k of n obligations" (from the deterministic translation, so the report
/// does not depend on whether Coq is installed) and the kernel-only obligations
/// grouped by reason.
fn coq_coverage(s: &mut String, c: &super::CoqCoverage, r: &Report) {
    let cert = r.certificate.as_deref().unwrap_or("the certificate");
    let head = format!(
        "**Independently proven in Coq: {} of {} obligations.**",
        c.sent, c.obligations
    );
    if c.sent == 0 {
        let _ = writeln!(
            s,
            "{head} The Coq translation sends none of this certificate's obligations to Coq.\n"
        );
    } else {
        let _ = writeln!(
            s,
            "{head} The Coq translation sends {} to Coq, the independent proof checker, which re-proves \
             them from the plain definitions of `coq/Attncheck.v` (`attncheck verify --coq reports/{}/{cert}{}`{}). \
             The figure comes from the deterministic translation: Coq is not run when a report is written.\n",
            if c.sent == c.obligations {
                "all of them".to_string()
            } else {
                format!("these {}", c.sent)
            },
            r.paper,
            spec_arg(r),
            match (&r.spec_file, crate::coq::in_ci(&r.id)) {
                (Some(_), _) => "",
                (None, true) => "; CI re-proves this certificate",
                (None, false) => {
                    "; `make coq` re-proves this certificate; CI does not, its Coq time being beyond CI's budget"
                }
            }
        );
    }
    let groups = c.kernel_only_by_reason();
    if groups.is_empty() {
        let _ = writeln!(s, "Kernel-only obligations: none.\n");
        return;
    }
    let _ = writeln!(
        s,
        "Kernel-only obligations ({}), decided by the attncheck kernel alone:\n",
        c.kernel_only.len()
    );
    for (why, names) in groups {
        let shown: Vec<String> = names
            .iter()
            .take(if names.len() > KERNEL_ONLY_NAMES {
                KERNEL_ONLY_NAMES - 1
            } else {
                KERNEL_ONLY_NAMES
            })
            .map(|n| n.trim().replace('`', "'"))
            .collect();
        let more = names.len() - shown.len();
        let _ = writeln!(
            s,
            "- {}{}: {}{}",
            why.trim(),
            if names.len() == 1 {
                String::new()
            } else {
                format!(" ({} obligations)", names.len())
            },
            shown.join("; "),
            if more > 0 {
                format!("; and {more} more")
            } else {
                String::new()
            }
        );
    }
    s.push('\n');
}

/// The Markdown report of one claim.
pub fn report_markdown(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {} — {}\n", r.id, r.title);
    let mark = if r.as_expected {
        "as expected".to_string()
    } else {
        format!(
            "**NOT as expected**: {}",
            r.unexpected().unwrap_or_default()
        )
    };
    let _ = writeln!(
        s,
        "**Verdict: {}** ({mark}; expected {}) · rigour sought: {} · profile: {} · precision: {} bits · {}\n",
        r.verdict, r.expected, r.rigour, r.profile, r.precision, r.tool
    );
    if let Some(reason) = &r.reason {
        let _ = writeln!(s, "Reason: {reason}\n");
    }
    let parts = crate::verdict::Verdict::by_part(
        &r.checks,
        r.rigour,
        r.lemma.as_ref().map(|l| l.part.as_str()),
    );
    if !parts.is_empty() {
        let list: Vec<String> = parts.iter().map(|(p, v)| format!("{p}: **{v}**")).collect();
        let _ = writeln!(s, "By part: {}\n", list.join(" · "));
    }
    for line in r.statement.lines() {
        let _ = writeln!(s, "> {line}");
    }
    let up = match r.profile {
        crate::spec::Profile::Quick => "../..",
        crate::spec::Profile::Full => "../../..",
    };
    let _ = match &r.spec_file {
        Some(f) => writeln!(
            s,
            "\nSource: {} · Provenance: {} · A claim written as formulas, in `{f}`\n",
            r.source,
            tags(&r.provenance),
        ),
        None => writeln!(
            s,
            "\nSource: {} · Provenance: {} · Statements, derivations and reference tables: \
             [docs/papers/{p}.md]({up}/docs/papers/{p}.md)\n",
            r.source,
            tags(&r.provenance),
            p = r.paper
        ),
    };

    let _ = writeln!(s, "## Parameters\n");
    let params = toml::to_string(&r.params)
        .unwrap_or_else(|_| serde_json::to_string_pretty(&r.params).unwrap_or_default());
    let _ = writeln!(s, "```toml\n{}```\n", params);

    if !r.figures.is_empty() {
        let _ = writeln!(s, "## Key figures\n");
        let _ = writeln!(s, "| figure | value |\n| --- | --- |");
        for f in &r.figures {
            let _ = writeln!(s, "| {} | {} |", cell(&f.name), cell(&f.text));
        }
        s.push('\n');
    }

    let _ = writeln!(s, "## Checks\n");
    if r.checks.is_empty() {
        let _ = writeln!(s, "No check asserts anything for this claim.\n");
    } else {
        let count = |k: CheckKind| r.checks.iter().filter(|c| c.kind == k).count();
        let _ = writeln!(
            s,
            "{} checks: {} certified (kernel, outward-rounded or exact), {} consistency readings (observed: never \
             certify nor refute), {} observed.\n",
            r.checks.len(),
            count(CheckKind::Certified),
            count(CheckKind::Consistency),
            count(CheckKind::Observed)
        );
        let _ = writeln!(
            s,
            "| # | check | kind | result | evidence |\n| --- | --- | --- | --- | --- |"
        );
        for (i, c) in r.checks.iter().enumerate() {
            let kind = match c.expect {
                crate::kernel::Expect::Holds => c.kind.as_str().to_string(),
                crate::kernel::Expect::Fails => format!("{} (expected to fail)", c.kind.as_str()),
            };
            let _ = writeln!(
                s,
                "| {} | {} | {kind} | {} | {} |",
                i + 1,
                match &c.part {
                    Some(p) => cell(&format!("{p}: {}", c.name)),
                    None => cell(&c.name),
                },
                result_word(c.kind, c.result),
                cell(&c.detail)
            );
        }
        s.push('\n');
    }

    for t in &r.tables {
        let _ = writeln!(s, "## {}\n", t.title);
        let _ = writeln!(
            s,
            "| {} |",
            t.columns
                .iter()
                .map(|c| cell(c))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let _ = writeln!(s, "|{}", " --- |".repeat(t.columns.len()));
        for row in &t.rows {
            let _ = writeln!(
                s,
                "| {} |",
                row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
            );
        }
        s.push('\n');
    }

    if !r.plots.is_empty() {
        let _ = writeln!(s, "## Figures\n");
        for p in &r.plots {
            let _ = writeln!(s, "![{}]({})\n", p.title, p.file);
        }
    }

    if let Some(t) = &r.trust {
        let _ = writeln!(s, "## Trust base and statement\n");
        let _ = writeln!(s, "The certified checks rest on {}.\n", t.rests_on);
        if let Some(l) = &r.lemma {
            let _ = writeln!(
                s,
                "The part «{}» rests, besides, on the lemma proven in Coq in `{}` ({}), which turns its \
                 certified checks into the limit; that part alone may be certified beyond the rigour \
                 sought. `Print Assumptions` of the file: {} (the axioms of Coq's standard real \
                 numbers). `attncheck verify --coq` re-proves the file with the certificate.\n",
                l.part,
                l.file,
                l.theorems
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                l.assumptions
                    .iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if let Some(c) = &r.coq {
            coq_coverage(&mut s, c, r);
        }
        let _ = writeln!(
            s,
            "The statement ({} obligations; `attncheck verify` rebuilds it from the spec and requires the \
             certificate to carry exactly this):\n",
            t.statement.len()
        );
        for (name, expect, formula) in &t.statement {
            let f = if formula.chars().count() > 400 {
                format!("{}…", formula.chars().take(400).collect::<String>())
            } else {
                formula.clone()
            };
            let _ = writeln!(
                s,
                "- {}{}: `{}`",
                name.trim(),
                match expect {
                    crate::kernel::Expect::Holds => "",
                    crate::kernel::Expect::Fails => " (asserted false)",
                },
                f.replace('`', "'")
            );
        }
        s.push('\n');
    }

    if !r.notes.is_empty() {
        let _ = writeln!(s, "## Notes\n");
        for n in &r.notes {
            let _ = writeln!(s, "- {}", n.trim());
        }
        s.push('\n');
    }

    let _ = writeln!(s, "## Reproduce\n");
    let _ = writeln!(s, "```sh\n{}", r.command);
    if let Some(c) = &r.certificate {
        let _ = writeln!(s, "attncheck verify reports/{}/{c}{}", r.paper, spec_arg(r));
        if r.coq.as_ref().is_some_and(|c| c.sent > 0) {
            let _ = writeln!(
                s,
                "attncheck verify --coq reports/{}/{c}{}",
                r.paper,
                spec_arg(r)
            );
        }
    }
    let _ = writeln!(s, "```");
    s
}

/// ` --spec FILE` for a claim written as formulas (its statement is rebuilt from that
/// file), else nothing.
fn spec_arg(r: &Report) -> String {
    r.spec_file
        .as_ref()
        .map(|f| format!(" --spec {f}"))
        .unwrap_or_default()
}

/// `reports/README.md`: one row per claim.
pub fn index_markdown(reports: &[Report]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# attncheck reports\n");
    let _ = writeln!(
        s,
        "Rebuilt by `attncheck run` from every report in this directory (`attncheck run --all` reruns them all; \
         `index.html` beside it is the same set as one page). Verdicts: certified (proven with outward-rounded or exact \
         arithmetic), supported (observed at finite size; \
         what its certificate states is certified), refuted (certified \
         counterexample), inconclusive, not-checkable, report-only. See the README for how to read them.\n"
    );
    let _ = writeln!(
        s,
        "**Proven in Coq**: k of n means the Coq translation sends k of the n obligations of the claim's certificate \
         to Coq, the independent proof checker, which re-proves them (`attncheck verify --coq CERT`; `make coq` re-proves every \
         committed certificate, CI all but the few too slow for it, named in docs/coq.md); the rest stay kernel-only, \
         with the reason in the report. — means no certificate.\n"
    );
    let counts = |v: crate::verdict::Verdict| reports.iter().filter(|r| r.verdict == v).count();
    use crate::verdict::Verdict::*;
    let _ = writeln!(
        s,
        "{} claims: {} certified, {} supported, {} refuted, {} inconclusive, {} not-checkable, {} report-only; {} not as expected.\n",
        reports.len(),
        counts(Certified),
        counts(Supported),
        counts(Refuted),
        counts(Inconclusive),
        counts(NotCheckable),
        counts(ReportOnly),
        reports.iter().filter(|r| !r.as_expected).count()
    );
    let _ = writeln!(
        s,
        "| claim | paper | verdict | expected | rigour | profile | proven in Coq | key figure |"
    );
    let _ = writeln!(s, "| --- | --- | --- | --- | --- | --- | --- | --- |");
    for r in reports {
        let key = r
            .figures
            .first()
            .map(|f| format!("{} = {}", f.name, f.text))
            .unwrap_or_else(|| "—".into());
        let exp = if r.as_expected {
            r.expected.to_string()
        } else {
            format!("**{}** (differs)", r.expected)
        };
        let coq = r
            .coq
            .as_ref()
            .map(|c| format!("{} of {}", c.sent, c.obligations))
            .unwrap_or_else(|| "—".into());
        let _ = writeln!(
            s,
            "| [{}]({}/{}.md) | {} | {} | {} | {} | {} | {coq} | {} |",
            r.id,
            r.paper,
            r.id.split_once('/').map(|x| x.1).unwrap_or(&r.id),
            r.paper,
            r.verdict,
            exp,
            r.rigour,
            r.profile,
            cell(&key)
        );
    }
    s
}
