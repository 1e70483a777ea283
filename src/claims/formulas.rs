//! Claims written as formulas: a spec with `kind = "formulas"` states its claim as a
//! list of obligations in the certificate language (docs/certificate-format.md,
//! "Formulas"), with `{name}` standing for one of its exact parameters (`[params]`,
//! overlaid by `[profiles.<profile>]`) or one of its definitions (`[defs]`). No Rust
//! module per claim: the statement is the obligations with every `{name}` replaced,
//! built here for `run` and again for `verify` from the same spec, so a certificate
//! is bound to the spec exactly as the thirty claims' certificates are to theirs.
//!
//! Substitution is textual and happens before the kernel sees anything: a parameter
//! is pasted as its exact literal (one atom); a definition is pasted as written (a
//! macro: its free variables are bound where it is used, by an enclosing `forall` or
//! `sum`), after its own references are replaced. Definitions may use each other but
//! not themselves; a formula may expand to at most [`MAX_EXPANDED`] bytes. Every
//! expanded obligation is then read by the kernel ([`expr::parse_valid`]: syntax,
//! depth, literal size, scope, ranges, the work budget at the spec's precision), and a
//! fault is reported at the spec's file and line, the obligation's name, and the
//! column inside the formula (or the definition) as written.

use crate::certificate::Hints;
use crate::claims::shape::{self, ClaimDef, Ctx, Runner, StatementError};
use crate::kernel::expr::{self, Data};
use crate::kernel::{Checked, Statement};
use crate::outcome::{Presentation, Table};
use crate::spec::{FieldError, Profile, Spec, SpecError};
use std::collections::BTreeMap;

/// The largest expansion of one formula, in bytes (definitions that use each other
/// twice per level would otherwise grow without bound).
pub const MAX_EXPANDED: usize = 1 << 20;

/// How deep definitions may refer to definitions.
pub const MAX_DEF_DEPTH: usize = 32;

/// The registry entry of every formulas claim: chosen by the spec's `kind`, never by
/// its ID (`claims::def_of`).
pub static DEF: ClaimDef = ClaimDef {
    id: "formulas",
    prepare,
    statement,
};

/// A parameter: its name and the exact literal pasted for `{name}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// The name.
    pub name: String,
    /// The literal as pasted (the spec's spelling when it is one atom).
    pub text: String,
}

/// An obligation, as written and as stated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// Its name (the check's name).
    pub name: String,
    /// The formula as the spec writes it, `{name}`s and all.
    pub written: String,
    /// The formula the statement asserts: every `{name}` replaced.
    pub formula: String,
    /// The report part, when the spec gives one.
    pub part: Option<String>,
}

/// A formulas claim's parameters, definitions, data and obligations, resolved once.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// The parameters, by name.
    pub params: Vec<Param>,
    /// The definitions as written, by name.
    pub defs: Vec<(String, String)>,
    /// The data (`[data.NAME]`), read by the kernel: the statement carries them.
    pub data: Data,
    /// The obligations, in the spec's order.
    pub obligations: Vec<Written>,
}

/// A name usable as `{name}`: a letter or `_`, then letters, digits and `_`.
pub fn is_name(s: &str) -> bool {
    let mut cs = s.chars();
    cs.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Resolves a formulas spec for `profile`: parameters, definitions, every obligation
/// expanded and read by the kernel. Errors name the file, the line, the field, the
/// obligation and the column inside the formula.
pub fn resolve(spec: &Spec, profile: Profile) -> Result<Resolved, SpecError> {
    let mut params = Vec::new();
    for (name, v) in spec.merged(profile) {
        let bad = |reason: String| spec.param_error(profile, &name, reason);
        if !is_name(&name) {
            return Err(bad(format!(
                "`{name}` cannot be written as {{{name}}}: a name is a letter or `_`, then \
                 letters, digits and `_`"
            )));
        }
        let text = match &v {
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::String(s) => {
                let r = crate::spec::exact(&name, s).map_err(|e| bad(e.reason))?;
                let t = s.trim();
                if t.is_empty() || t.contains(|c: char| c.is_whitespace() || "(){}".contains(c)) {
                    r.to_string()
                } else {
                    t.to_string()
                }
            }
            other => {
                return Err(bad(format!(
                    "a parameter is an exact value: an integer or a string such as \"1/100\", \
                     \"2^-5\" or \"1e-3\" (found {}; a TOML float is not exact)",
                    other.type_str()
                )))
            }
        };
        params.push(Param { name, text });
    }
    let mut defs = Vec::new();
    for (name, v) in &spec.defs {
        let field = format!("defs.{name}");
        if !is_name(name) {
            return Err(spec.error_at(
                &field,
                format!("`{name}` cannot be written as {{{name}}}: a name is a letter or `_`, then letters, digits and `_`"),
            ));
        }
        if params.iter().any(|p| &p.name == name) {
            return Err(spec.error_at(
                &field,
                format!("`{name}` is both a parameter and a definition: rename one"),
            ));
        }
        let Some(text) = v.as_str() else {
            return Err(spec.error_at(
                &field,
                format!(
                    "a definition is a term written as a string, e.g. \"(exp (- {{m}}))\" (found {})",
                    v.type_str()
                ),
            ));
        };
        if let Some((offset, reason)) = unbalanced(text) {
            return Err(spec.error_at(&field, {
                let (at, excerpt) = position(text, offset);
                format!("definition `{name}`: {at}: {reason}\n{excerpt}")
            }));
        }
        defs.push((name.clone(), text.to_string()));
    }
    let data = resolve_data(spec, &params, &defs)?;
    let env = Env {
        params: params
            .iter()
            .map(|p| (p.name.as_str(), p.text.as_str()))
            .collect(),
        defs: defs.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect(),
    };
    let mut obligations = Vec::new();
    for (i, o) in spec.obligations.iter().enumerate() {
        let field = format!("obligations[{i}]");
        if o.name.trim().is_empty() {
            return Err(spec.error_at(&format!("{field}.name"), "must not be empty".into()));
        }
        if obligations.iter().any(|w: &Written| w.name == o.name) {
            return Err(spec.error_at(
                &format!("{field}.name"),
                format!(
                    "two obligations are named `{}`: names identify checks",
                    o.name
                ),
            ));
        }
        let located = |l: Located| {
            let (f, text) = match &l.source {
                Source::Formula => (format!("{field}.formula"), o.formula.as_str()),
                Source::Def(n) => (
                    format!("defs.{n}"),
                    env.defs.get(n.as_str()).copied().unwrap_or(""),
                ),
            };
            let inside = match &l.source {
                Source::Formula => String::new(),
                Source::Def(n) => format!(" (in definition `{n}`)"),
            };
            let (at, excerpt) = position(text, l.offset);
            spec.error_at(
                &f,
                format!(
                    "obligation `{}`{inside}: {at}: {}\n{excerpt}",
                    o.name, l.reason
                ),
            )
        };
        let expanded = env.expand(&o.formula).map_err(located)?;
        let sexp = expr::parse_valid(&expanded.text, &data)
            .map_err(|e| located(expanded.locate(e.offset, e.reason)))?;
        let cost = expr::work_with(&sexp, &data, spec.precision);
        if cost > expr::MAX_WORK {
            return Err(located(Located {
                source: Source::Formula,
                offset: 0,
                reason: format!(
                    "the formula costs {cost} units of work at {} bits, over the budget of {} \
                     (docs/certificate-format.md, \"Work budget\"): shorten its ranges",
                    spec.precision,
                    expr::MAX_WORK
                ),
            }));
        }
        obligations.push(Written {
            name: o.name.clone(),
            written: o.formula.clone(),
            formula: expanded.text,
            part: o.part.clone(),
        });
    }
    Ok(Resolved {
        params,
        defs,
        data,
        obligations,
    })
}

/// The spec's `[data.NAME]` tables, each read as the certificate reads its data
/// (docs/certificate-format.md, "Data": the same fields and limits) and checked by the
/// kernel; errors name `data.NAME.FIELD` and its line.
fn resolve_data(
    spec: &Spec,
    params: &[Param],
    defs: &[(String, String)],
) -> Result<Data, SpecError> {
    let mut data = Data::new();
    for (name, v) in &spec.data {
        let field = format!("data.{name}");
        if !is_name(name) || name == "pi" {
            return Err(spec.error_at(
                &field,
                format!(
                    "`{name}` cannot name a datum: a name is a letter or `_`, then letters, \
                     digits and `_` (and not `pi`)"
                ),
            ));
        }
        if params.iter().any(|p| &p.name == name) || defs.iter().any(|(n, _)| n == name) {
            return Err(spec.error_at(
                &field,
                format!("`{name}` is both a datum and a parameter or definition: rename one"),
            ));
        }
        if !v.is_table() {
            return Err(spec.error_at(
                &field,
                format!(
                    "a datum is a table with a `kind` (signs, sparse, layer or attn-weights) and \
                     its fields, e.g. [data.{name}] (found {})",
                    v.type_str()
                ),
            ));
        }
        let entry: crate::certificate::DataEntry = v.clone().try_into().map_err(|e| {
            spec.error_at(
                &field,
                format!(
                    "not a datum of the certificate's kinds: {} (docs/certificate-format.md, \
                     \"Data\", lists the kinds and their fields)",
                    one_line(&e.to_string())
                ),
            )
        })?;
        let d = entry
            .to_datum()
            .map_err(|(f, r)| spec.error_at(&format!("{field}.{f}"), r))?;
        data.insert(name.clone(), d);
    }
    Ok(data)
}

/// One line saying what a datum is (the report's table of data).
fn describe(d: &crate::kernel::expr::Datum) -> (String, String) {
    use crate::certificate::DataEntry as E;
    match E::from_datum(d) {
        E::Signs { n, d, .. } => ("signs".into(), format!("{n} × {d} sign matrix")),
        E::Sparse { n, rows, .. } => (
            "sparse".into(),
            format!(
                "{n} × {n} row-sparse matrix, {} stored entries",
                rows.iter().map(Vec::len).sum::<usize>()
            ),
        ),
        E::Layer {
            n,
            d,
            dt,
            steps,
            q,
            tokens,
            ..
        } => (
            "layer".into(),
            format!(
                "the discrete map: {n} tokens in dimension {d}, Q and K of {} rows, Δt = {dt}, \
                 {steps} steps, {} initial configurations",
                q.len(),
                tokens.len()
            ),
        ),
        E::AttnWeights {
            hidden,
            heads,
            sha256,
            layers,
            embedding,
            ..
        } => (
            "attn-weights".into(),
            format!(
                "attention weights: hidden {hidden}, {heads} heads, {} layers{}, sha256 {sha256}",
                layers.len(),
                if embedding.is_some() {
                    ", with the embedding"
                } else {
                    ""
                }
            ),
        ),
    }
}

/// Where a fault lies: the obligation's formula or a definition's text, and the byte
/// offset in it.
#[derive(Debug)]
struct Located {
    source: Source,
    offset: usize,
    reason: String,
}

#[derive(Clone, Debug, PartialEq)]
enum Source {
    Formula,
    Def(String),
}

/// A run of the expanded text copied from a source: `len` bytes from `orig`, or (a
/// pasted parameter, `whole`) every byte of it traced back to the `{` at `orig`.
#[derive(Debug)]
struct Seg {
    out: usize,
    len: usize,
    source: Source,
    orig: usize,
    whole: bool,
}

struct Expanded {
    text: String,
    segs: Vec<Seg>,
}

impl Expanded {
    /// The source position of byte `offset` of the expanded text.
    fn locate(&self, offset: usize, reason: String) -> Located {
        let seg = self
            .segs
            .iter()
            .rev()
            .find(|s| s.out <= offset)
            .or(self.segs.first());
        match seg {
            Some(s) => Located {
                source: s.source.clone(),
                offset: if s.whole {
                    s.orig
                } else {
                    s.orig + (offset - s.out.min(offset)).min(s.len)
                },
                reason,
            },
            None => Located {
                source: Source::Formula,
                offset: 0,
                reason,
            },
        }
    }
}

struct Env<'a> {
    params: BTreeMap<&'a str, &'a str>,
    defs: BTreeMap<&'a str, &'a str>,
}

impl Env<'_> {
    fn expand(&self, formula: &str) -> Result<Expanded, Located> {
        let mut e = Expanded {
            text: String::new(),
            segs: Vec::new(),
        };
        self.paste(formula, Source::Formula, &mut e, &mut Vec::new())?;
        Ok(e)
    }

    fn paste(
        &self,
        text: &str,
        source: Source,
        e: &mut Expanded,
        stack: &mut Vec<String>,
    ) -> Result<(), Located> {
        let at = |offset: usize, reason: String| Located {
            source: source.clone(),
            offset,
            reason,
        };
        let copy = |e: &mut Expanded, from: usize, to: usize| {
            if to > from {
                e.segs.push(Seg {
                    out: e.text.len(),
                    len: to - from,
                    source: source.clone(),
                    orig: from,
                    whole: false,
                });
                e.text.push_str(&text[from..to]);
            }
        };
        let mut from = 0;
        while let Some(rel) = text[from..].find(['{', '}']) {
            let open = from + rel;
            if text.as_bytes()[open] == b'}' {
                return Err(at(open, "a `}` without its `{`".into()));
            }
            let Some(len) = text[open + 1..].find('}') else {
                return Err(at(
                    open,
                    "a `{` without its `}`: a reference is written {name}".into(),
                ));
            };
            let name = &text[open + 1..open + 1 + len];
            if !is_name(name) {
                return Err(at(
                    open,
                    format!(
                        "`{{{name}}}` is not a reference: write {{name}} with a parameter's or a \
                         definition's name"
                    ),
                ));
            }
            copy(e, from, open);
            if let Some(value) = self.params.get(name) {
                e.segs.push(Seg {
                    out: e.text.len(),
                    len: value.len(),
                    source: source.clone(),
                    orig: open,
                    whole: true,
                });
                e.text.push_str(value);
            } else if let Some(def) = self.defs.get(name) {
                if stack.iter().any(|s| s == name) {
                    return Err(at(
                        open,
                        format!(
                            "definition `{name}` refers to itself ({} → {name})",
                            stack.join(" → ")
                        ),
                    ));
                }
                if stack.len() >= MAX_DEF_DEPTH {
                    return Err(at(
                        open,
                        format!("definitions nest deeper than {MAX_DEF_DEPTH}"),
                    ));
                }
                stack.push(name.to_string());
                self.paste(def, Source::Def(name.to_string()), e, stack)?;
                stack.pop();
            } else {
                let known: Vec<&str> = self
                    .params
                    .keys()
                    .chain(self.defs.keys())
                    .copied()
                    .collect();
                return Err(at(
                    open,
                    format!(
                        "unbound name `{name}`: not a parameter or a definition of this spec (it \
                         has {})",
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                ));
            }
            if e.text.len() > MAX_EXPANDED {
                return Err(at(
                    open,
                    format!(
                        "the formula expands to more than {MAX_EXPANDED} bytes with its \
                         definitions pasted in"
                    ),
                ));
            }
            from = open + len + 2;
        }
        copy(e, from, text.len());
        if e.text.len() > MAX_EXPANDED {
            return Err(at(
                0,
                format!("the formula expands to more than {MAX_EXPANDED} bytes"),
            ));
        }
        Ok(())
    }
}

/// The first parenthesis of `text` without its partner: a definition is pasted as a
/// whole term, so its own parentheses must balance (else the fault would show where
/// it is pasted, far from where it is written).
fn unbalanced(text: &str) -> Option<(usize, &'static str)> {
    let mut open = Vec::new();
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'(' => open.push(i),
            b')' if open.pop().is_none() => return Some((i, "a `)` without its `(`")),
            _ => {}
        }
    }
    open.first().map(|&i| (i, "a `(` without its `)`"))
}

/// `column C` of byte `offset` of a one-line `text`, or `line L, column C of the
/// formula` of a longer one (characters, 1-based), and the excerpt with a caret under
/// it ([`crate::calc::position`], as `eval` and `prove` show them).
fn position(text: &str, offset: usize) -> (String, String) {
    let (line, col, excerpt) = crate::calc::position(text, offset);
    let at = if text.contains('\n') {
        format!("line {line}, column {col} of the formula")
    } else {
        format!("column {col}")
    };
    (at, excerpt)
}

/// The title of the table of a formulas claim's obligations as written.
pub const WRITTEN_TABLE: &str = "Obligations as written";

/// The formulas claim (one type for every formulas spec; the spec's obligations are
/// its parameters).
pub struct Formulas;

impl shape::Claim for Formulas {
    /// Never deserialised: a formulas claim is resolved from the whole spec
    /// ([`resolve`]: parameters, definitions and obligations), through [`prepare`] and
    /// [`statement`], not through `shape::resolve`.
    type Raw = toml::Table;
    type Params = Resolved;
    type Witness = ();

    fn resolve(
        _: toml::Table,
        _at: crate::claims::shape::Resolving,
    ) -> Result<Resolved, FieldError> {
        Err(FieldError::new(
            "",
            "a formulas claim is resolved from its whole spec (claims::formulas::resolve)",
        ))
    }

    fn statement(
        p: &Resolved,
        claim: &str,
        hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        if let Some(key) = hints.keys().next() {
            return Some(Err(StatementError::hint(
                key,
                "a claim written as formulas takes no hints",
            )));
        }
        let mut st = Statement::new(claim);
        for (name, d) in &p.data {
            st.datum(name, d.clone());
        }
        for o in &p.obligations {
            st.assert(o.name.clone(), o.formula.clone());
        }
        Some(Ok(st))
    }

    /// The parts the spec's obligations name.
    fn parts(p: &Resolved) -> crate::verdict::Parts {
        p.obligations
            .iter()
            .filter_map(|o| Some((o.name.clone(), o.part.clone()?)))
            .collect()
    }

    fn statement_fn() -> shape::StatementFn {
        statement
    }

    fn witness(_: &Resolved, _: &Ctx) {}

    /// The report layer adds each obligation's Coq part to this table (`report::Report::new`:
    /// the translation is above the claims).
    fn present(p: &Resolved, _: &(), proof: Option<&Checked>, _: &Ctx, pr: &mut Presentation) {
        let mut t = Table::new(WRITTEN_TABLE, &["obligation", "formula", "kernel"]);
        for (i, o) in p.obligations.iter().enumerate() {
            let kernel =
                proof
                    .and_then(|c| c.decisions().get(i))
                    .map_or("not decided".to_string(), |d| {
                        match (d.result(), d.as_expected()) {
                            (crate::kernel::Certainty::True, _) => "true",
                            (crate::kernel::Certainty::False, _) => "false",
                            (crate::kernel::Certainty::Unknown, _) => "undecided",
                        }
                        .to_string()
                    });
            t.row(vec![
                o.name.clone(),
                format!("`{}`", one_line(&o.written)),
                kernel,
            ]);
        }
        pr.tables.push(t);
        if !p.defs.is_empty() {
            let mut t = Table::new("Definitions", &["name", "term"]);
            for (n, d) in &p.defs {
                t.row(vec![format!("{{{n}}}"), format!("`{}`", one_line(d))]);
            }
            pr.tables.push(t);
        }
        if !p.data.is_empty() {
            let mut t = Table::new("Data", &["name", "kind", "what"]);
            for (n, d) in &p.data {
                let (kind, what) = describe(d);
                t.row(vec![format!("`{n}`"), kind, what]);
            }
            pr.tables.push(t);
        }
        pr.note(
            "A claim written as formulas: its statement is the obligations above with every {name} \
             replaced by the parameter's exact value or the definition's term; the certificate \
             carries them so, and `attncheck verify CERT --spec SPEC` rebuilds them from this \
             spec.",
        );
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The registry's `prepare` for formulas specs.
pub fn prepare(spec: &Spec, profile: Profile) -> Result<Runner, SpecError> {
    let p = resolve(spec, profile)?;
    Ok(Box::new(move |ctx| shape::drive::<Formulas>(&p, ctx)))
}

/// The registry's `statement` for formulas specs (carried data: none).
pub fn statement(
    spec: &Spec,
    profile: Profile,
    hints: &Hints,
    _carried: &Data,
) -> Result<Option<Statement>, SpecError> {
    let p = resolve(spec, profile)?;
    <Formulas as shape::Claim>::statement(&p, &spec.id, hints)
        .transpose()
        .map_err(|e| spec.error_at("statement", e.to_string()))
}

/// Whether `id` can name a claim of the user's own: `<group>/<name>`, each part
/// lowercase letters, digits and `-` (a file name on every system), and no claim of
/// this tool.
pub fn check_new_id(id: &str) -> Result<(), String> {
    let part_ok = |p: &str| {
        !p.is_empty()
            && !p.starts_with('-')
            && p.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    match id.split_once('/') {
        Some((g, n)) if part_ok(g) && part_ok(n) => {}
        _ => {
            return Err(format!(
            "`{id}` is not an ID of the form <group>/<name> (lowercase letters, digits and `-`), \
                 e.g. mine/kerple-tail"
        ))
        }
    }
    if crate::claims::rebuild::rebuild_of(id).is_some() {
        return Err(format!(
            "`{id}` is a claim of this tool: choose an ID of your own, e.g. mine/{}",
            id.split_once('/').map_or(id, |x| x.1)
        ));
    }
    Ok(())
}

/// The text `attncheck new ID` writes: a formulas spec whose comments teach the
/// format, with one obligation that certifies as it stands (ALiBi's tail beyond a
/// window of the user's choosing, positional.md §3).
pub fn scaffold(id: &str) -> String {
    format!(
        r#"# A claim of your own, written as formulas. The tutorial: docs/your-own-claims.md.
#
#   attncheck run {id}.toml
#       decides every obligation below with the kernel (exact rationals, or intervals
#       rounded outward), writes reports/{id}.md, .json and .cert.json; exit 0 when
#       the verdict is the `expected` one
#   attncheck verify reports/{id}.cert.json --spec {id}.toml --coq
#       rebuilds the statement from this file, checks the certificate states exactly
#       it, decides it again, and re-proves in Coq what the translation takes
#
# Formulas are S-expressions of the certificate language (docs/certificate-format.md,
# "Formulas"): comparisons (< <= > >= =), and, not, (forall v LO HI formula), terms with
# + - * / exp ln sqrt sin cos abs pow min max ceil floor (sum v LO HI term), and exact
# literals: 12, 3/4, 1.5e-3, 2^-5. `{{name}}` stands for a parameter or a definition.
# (let v t body) names a term inside a formula; the papers' building blocks are terms
# too: (alibi-tail m delta w) is the T below, (alibi-window m delta eps) its minimal
# window, (alibi-slope h H), (union-bound-dim n t delta) (docs/certificate-format.md).

id = "{id}"
kind = "formulas"
title = "ALiBi's minimal window for slope 2^-5, content gap 2 and tail 1/1000 is 286 tokens"
statement = "With slope m = 2^-5 and content logits within Δ = 2 of each other, the attention mass ALiBi puts beyond distance r is at most T(r) = e^Δ e^(-mr) / (1 - e^(-mr) + e^Δ e^(-mr)); T(286) ≤ ε = 1/1000 < T(285)."
source = "Chi et al., arXiv:2212.10356 §3; the bound T as in docs/papers/positional.md"
# where the statement comes from: paper, derived (by you, from a paper) or unconfirmed
provenance = ["derived"]
# the strongest verdict this claim can reach, and the one a correct run gives:
# certified (every obligation proven), supported, refuted (then name the obligations
# expected to be false in `refutes = ["..."]`), inconclusive
rigour = "certified"
expected = "certified"
# working precision in bits (an undecided comparison is retried at up to 4× this)
precision = 128

# Exact values, usable as {{name}}: an integer, or a string such as "1/100", "2^-5",
# "1e-3" (never a TOML float: 0.1 is not exact). [profiles.quick] and [profiles.full]
# may override them.
[params]
m = "2^-5"
delta = 2
w = 286
eps = "1/1000"

# Named terms, pasted where {{name}} is written (after their own references are
# replaced); a definition may use parameters and other definitions, not itself.
[defs]
decay = "(exp (- (* {{m}} {{w}})))"
decay_short = "(exp (- (* {{m}} (- {{w}} 1))))"
tail = "(/ (* (exp {{delta}}) {{decay}}) (+ (- 1 {{decay}}) (* (exp {{delta}}) {{decay}})))"
tail_short = "(/ (* (exp {{delta}}) {{decay_short}}) (+ (- 1 {{decay_short}}) (* (exp {{delta}}) {{decay_short}})))"

# One entry per obligation: a name (the check's name in the report) and a formula.
# Add `part = "..."` to group checks in the report.
[[obligations]]
name = "the tail beyond w is at most eps"
formula = "(<= {{tail}} {{eps}})"

[[obligations]]
name = "a window one token shorter is not enough"
formula = "(> {{tail_short}} {{eps}})"
"#
    )
}
