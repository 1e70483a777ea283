//! `attncheck run --explain`: the certified values behind a claim's checks. A check
//! only says whether a bound holds; a user asks what the value is. For every
//! comparison of every obligation of the run's certificate (looking through `and` and
//! `not`; the body of a `forall` is counted, not shown, its variable being bound),
//! both sides are evaluated by the kernel over the certificate's data at the
//! certificate's precision, and printed exact or as the digits the enclosure certifies.
//! Where a side is `(abs (- x y))` (a distance to a printed value), x and y are shown
//! too: x is then the computed value the spec's y claims to be.
//!
//! Presentation only: nothing here decides a check or changes a verdict.

use crate::calc::{certified_digits, rational_decimal};
use crate::certificate::Certificate;
use crate::kernel::expr::{self, Data, Sexp, TermValue};

/// The most comparisons shown per obligation (a statement may hold thousands).
pub const MAX_SHOWN: usize = 24;

/// The digits shown of an enclosure.
const DIGITS: usize = 20;

/// One evaluated term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shown {
    /// The term, abbreviated for display.
    pub term: String,
    /// Its value: exact, the certified digits of its enclosure (ending in `…`), the
    /// enclosure itself, or `undefined`.
    pub value: String,
}

impl Shown {
    /// `term = value`, or the term alone when it is its value (a literal).
    pub fn line(&self) -> String {
        if self.term == self.value {
            self.term.clone()
        } else {
            format!("{} = {}", self.term, self.value)
        }
    }
}

/// One comparison: its relation and both sides (plus x and y of `(abs (- x y))`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comparison {
    /// `<`, `<=`, `>`, `>=` or `=`.
    pub relation: String,
    /// The left side.
    pub lhs: Shown,
    /// The right side.
    pub rhs: Shown,
    /// x and y of each `(abs (- x y))` side.
    pub inner: Vec<Shown>,
}

/// The comparisons of one obligation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explained {
    /// The obligation's name.
    pub name: String,
    /// The comparisons shown, at most [`MAX_SHOWN`].
    pub shown: Vec<Comparison>,
    /// Comparisons not shown: beyond [`MAX_SHOWN`], or inside a `forall`.
    pub hidden: usize,
    /// Why the obligation could not be read (then nothing is shown).
    pub error: Option<String>,
}

/// Explains every obligation of `cert` (its formulas over its data, at its precision).
pub fn explain(cert: &Certificate) -> Vec<Explained> {
    let data = match cert.statement(std::path::Path::new(&cert.claim)) {
        Ok(st) => st.data,
        Err(e) => {
            return vec![Explained {
                name: cert.claim.clone(),
                shown: Vec::new(),
                hidden: 0,
                error: Some(format!("the certificate's data could not be read: {e}")),
            }]
        }
    };
    cert.obligations
        .iter()
        .map(|o| {
            let mut ex = Explained {
                name: o.name.clone(),
                shown: Vec::new(),
                hidden: 0,
                error: None,
            };
            match expr::parse(&o.formula) {
                Ok(e) => walk(&e, &data, cert.precision, &mut ex),
                Err(e) => ex.error = Some(e.to_string()),
            }
            ex
        })
        .collect()
}

fn walk(e: &Sexp, data: &Data, prec: u32, ex: &mut Explained) {
    let Sexp::List(items, _) = e else { return };
    let Some(Sexp::Atom(op, _)) = items.first() else {
        return;
    };
    match (op.as_str(), &items[1..]) {
        ("and", parts) => parts.iter().for_each(|p| walk(p, data, prec, ex)),
        ("not", [f]) => walk(f, data, prec, ex),
        ("forall", _) => ex.hidden += 1,
        ("<" | "<=" | ">" | ">=" | "=", [a, b]) => {
            if ex.shown.len() >= MAX_SHOWN {
                ex.hidden += 1;
                return;
            }
            let mut inner = Vec::new();
            for side in [a, b] {
                if let Some((x, y)) = abs_difference(side) {
                    inner.push(show(x, data, prec));
                    inner.push(show(y, data, prec));
                }
            }
            ex.shown.push(Comparison {
                relation: op.clone(),
                lhs: show(a, data, prec),
                rhs: show(b, data, prec),
                inner,
            });
        }
        _ => {}
    }
}

/// x and y of `(abs (- x y))`.
fn abs_difference(e: &Sexp) -> Option<(&Sexp, &Sexp)> {
    let Sexp::List(items, _) = e else { return None };
    match items.as_slice() {
        [Sexp::Atom(abs, _), Sexp::List(inner, _)] if abs == "abs" => match inner.as_slice() {
            [Sexp::Atom(minus, _), x, y] if minus == "-" => Some((x, y)),
            _ => None,
        },
        _ => None,
    }
}

fn show(e: &Sexp, data: &Data, prec: u32) -> Shown {
    let text = crate::calc::canonical(e);
    let value = match expr::evaluate(&text, prec, data) {
        Ok(TermValue::Exact(q)) => {
            let (s, exact) = rational_decimal(&q, 30);
            if exact {
                s
            } else {
                format!("{q} ≈ {s}")
            }
        }
        Ok(TermValue::Enclosure(i)) => {
            certified_digits(&i, DIGITS).unwrap_or_else(|| format!("in [{}, {}]", i.lo(), i.hi()))
        }
        Ok(TermValue::Undefined) => "undefined".to_string(),
        Err(e) => format!("not evaluated: {}", e.reason),
    };
    Shown {
        term: abbreviate(&text, 72),
        value,
    }
}

fn abbreviate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let head: String = s.chars().take(n - 1).collect();
        format!("{head}…")
    }
}

/// The explanation as text lines (stdout of `run --explain`).
pub fn lines(claim: &str, ex: &[Explained]) -> Vec<String> {
    let mut out = vec![format!("{claim}: the values behind its checks")];
    for e in ex {
        out.push(format!("  {}", e.name));
        if let Some(err) = &e.error {
            out.push(format!("    (not shown: {err})"));
        }
        for c in &e.shown {
            out.push(format!(
                "    {}   {}   {}",
                c.lhs.line(),
                c.relation,
                c.rhs.line()
            ));
            for s in &c.inner {
                out.push(format!("      where {}", s.line()));
            }
        }
        if e.hidden > 0 {
            out.push(format!(
                "    (and {} more comparison(s): beyond the first {MAX_SHOWN}, or over a forall's range)",
                e.hidden
            ));
        }
    }
    out
}
