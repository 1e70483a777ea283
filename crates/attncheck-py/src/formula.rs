//! `attncheck.eval` and `attncheck.prove`, straight on the trusted kernel
//! (`attncheck::kernel::expr::{eval_exact, eval, check}`): the exact value when the
//! term stays rational, else an outward-rounded enclosure at the precision that made
//! it narrow; a formula decided at the first precision that decides it.

use crate::work::{Failure, Kind, Position};
use attncheck::kernel::expr::{self, Data, ExprError};
use attncheck::kernel::{checked_prec, Certainty};
use rug::{Float, Rational};
use serde_json::json;

/// The relative width an enclosure must reach before `eval` stops raising the
/// precision: 2⁻⁵³ (a double's rounding error).
const REL_WIDTH_BITS: i32 = 53;

/// The precisions tried: `start`, doubled up to `max` (both clamped to the kernel's
/// range).
fn ladder(start: u32, max: u32) -> Result<Vec<u32>, Failure> {
    if checked_prec(start) != start || max < start {
        return Err(Failure {
            kind: Kind::BadInput,
            message: format!(
                "precision must be at least {} bits and at most max_precision (got {start} and {max})",
                checked_prec(0)
            ),
            exit_code: 2,
            position: None,
        });
    }
    let mut out = vec![];
    let mut p = start;
    loop {
        let q = checked_prec(p);
        if out.last() != Some(&q) {
            out.push(q);
        }
        if p >= max || q != p {
            break;
        }
        p = p.saturating_mul(2).min(max);
    }
    Ok(out)
}

/// A formula error with its line and column, and the line with a caret under the
/// place.
pub fn formula_failure(text: &str, e: &ExprError) -> Failure {
    let offset = e.offset.min(text.len());
    let offset = (0..=offset)
        .rev()
        .find(|&o| text.is_char_boundary(o))
        .unwrap_or(0);
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let column = text[line_start..offset].chars().count() + 1;
    let line_text = text[line_start..].lines().next().unwrap_or("");
    // a long line is shown around the place only
    let (shown, caret_at) = if line_text.chars().count() > 100 {
        let from = column.saturating_sub(50);
        let s: String = line_text.chars().skip(from).take(100).collect();
        (format!("…{s}…"), column - from)
    } else {
        (line_text.to_string(), column - 1)
    };
    Failure {
        kind: Kind::Formula,
        message: format!(
            "formula, line {line}, column {column}: {}\n  {shown}\n  {}^",
            e.reason,
            " ".repeat(caret_at)
        ),
        exit_code: 2,
        position: Some(Position {
            offset,
            line,
            column,
        }),
    }
}

fn exact(x: &Float) -> Option<Rational> {
    x.to_rational()
}

fn narrow(lo: &Float, hi: &Float) -> bool {
    let width = Float::with_val(lo.prec().max(hi.prec()), hi - lo);
    let mag =
        Float::with_val(lo.prec(), lo.abs_ref()).max(&Float::with_val(hi.prec(), hi.abs_ref()));
    // width ≤ |x| · 2⁻⁵³, or exactly a point
    width.is_zero() || width <= mag >> REL_WIDTH_BITS as u32
}

/// `attncheck.eval`: `{"kind": "exact", "value", "precision"}`, or `{"kind":
/// "enclosure", "lo", "hi", "precision", "narrow"}` with exact rational endpoints of the
/// outward-rounded enclosure, or `{"kind": "undefined", "reason", "precision"}` when no
/// precision up to `max_precision` gives a finite enclosure (`(ln 0)`, `(/ 1 0)`).
pub fn evaluate(term: &str, precision: u32, max_precision: u32) -> Result<String, Failure> {
    let precisions = ladder(precision, max_precision)?;
    let first = precisions[0];
    let exact_value =
        expr::eval_exact(term, first, &Data::new()).map_err(|e| formula_failure(term, &e))?;
    if let Some(q) = exact_value {
        return Ok(
            json!({"kind": "exact", "value": q.to_string(), "precision": first}).to_string(),
        );
    }
    let mut last = None;
    for &p in &precisions {
        let iv = expr::eval(term, p).map_err(|e| formula_failure(term, &e))?;
        if !iv.is_finite() {
            last = Some((p, None));
            continue;
        }
        let good = narrow(iv.lo(), iv.hi());
        last = Some((p, Some((iv.lo().clone(), iv.hi().clone(), good))));
        if good {
            break;
        }
    }
    let out = match last {
        Some((p, Some((lo, hi, good)))) => match (exact(&lo), exact(&hi)) {
            (Some(lo), Some(hi)) => json!({"kind": "enclosure", "lo": lo.to_string(),
                "hi": hi.to_string(), "precision": p, "narrow": good}),
            _ => json!({"kind": "undefined", "precision": p,
                "reason": "the enclosure has an infinite or NaN endpoint"}),
        },
        Some((p, None)) => json!({"kind": "undefined", "precision": p,
            "reason": format!("no finite enclosure up to {p} bits: the term is undefined (e.g. ln 0, 1/0, the square root of a negative number) or overflows")}),
        None => unreachable!("the ladder has at least one precision"),
    };
    Ok(out.to_string())
}

/// `attncheck.prove`: `{"result": "true"|"false"|"unknown", "precision", "reason"}`,
/// the formula decided by the kernel at `precision`, doubled up to `max_precision`
/// while undecided.
pub fn prove(formula: &str, precision: u32, max_precision: u32) -> Result<String, Failure> {
    let precisions = ladder(precision, max_precision)?;
    let mut at = precisions[0];
    for &p in &precisions {
        at = p;
        match expr::check(formula, p).map_err(|e| formula_failure(formula, &e))? {
            Certainty::Unknown => continue,
            c => return Ok(json!({"result": c, "precision": p, "reason": null}).to_string()),
        }
    }
    Ok(json!({"result": Certainty::Unknown, "precision": at,
        "reason": format!("undecided at every precision up to {at} bits (max_precision)")})
    .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn j(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn exact_terms_are_exact() {
        let v = j(&evaluate("(+ 1/3 1/6)", 128, 4096).unwrap());
        assert_eq!(v["kind"], "exact");
        assert_eq!(v["value"], "1/2");
    }

    #[test]
    fn an_enclosure_contains_e_and_is_narrow() {
        let v = j(&evaluate("(exp 1)", 128, 4096).unwrap());
        assert_eq!(v["kind"], "enclosure");
        let lo: Rational = v["lo"].as_str().unwrap().parse().unwrap();
        let hi: Rational = v["hi"].as_str().unwrap().parse().unwrap();
        assert!(lo < hi);
        assert!(lo < Rational::from((27182818284590453_u64, 10_000_000_000_000_000_u64)));
        assert!(hi > Rational::from((27182818284590451_u64, 10_000_000_000_000_000_u64)));
        assert_eq!(v["narrow"], true);
    }

    #[test]
    fn errors_carry_the_line_and_column() {
        let f = evaluate("(+ 1\n   (frob 2))", 128, 4096).unwrap_err();
        assert_eq!(f.kind, Kind::Formula);
        let p = f.position.unwrap();
        assert_eq!(p.line, 2, "{}", f.message);
        assert!(f.message.contains("frob"), "{}", f.message);
    }

    #[test]
    fn prove_decides_true_and_false() {
        assert_eq!(
            j(&prove("(<= (exp 1) 3)", 128, 4096).unwrap())["result"],
            "true"
        );
        assert_eq!(
            j(&prove("(<= 3 (exp 1))", 128, 4096).unwrap())["result"],
            "false"
        );
    }

    #[test]
    fn a_bad_precision_is_bad_input() {
        assert_eq!(evaluate("1", 1, 4096).unwrap_err().kind, Kind::BadInput);
        assert_eq!(evaluate("1", 256, 128).unwrap_err().kind, Kind::BadInput);
    }

    #[test]
    fn the_ladder_doubles_up_to_max() {
        assert_eq!(ladder(128, 1024).unwrap(), vec![128, 256, 512, 1024]);
        assert_eq!(ladder(100, 300).unwrap(), vec![100, 200, 300]);
    }
}
