//! `attncheck.eval` and `attncheck.prove`, bound to `attncheck::calc` (the library
//! behind `attncheck eval` and `attncheck prove`): the same escalation, the same
//! results, the same error messages.

use crate::work::{Failure, Kind, Position};
use attncheck::calc::{self, CalcError, EvalOptions, ProveOptions, Value};
use serde_json::json;

impl From<CalcError> for Failure {
    fn from(e: CalcError) -> Failure {
        let position = match &e {
            CalcError::Input {
                line,
                column,
                offset,
                ..
            } => Some(Position {
                offset: *offset,
                line: *line,
                column: *column,
            }),
            CalcError::Usage(_) => None,
        };
        Failure {
            kind: if position.is_some() {
                Kind::Formula
            } else {
                Kind::BadInput
            },
            message: e.to_string(),
            exit_code: e.exit_code(),
            position,
        }
    }
}

/// `attncheck.eval`: `{"kind": "exact", "value"}`, `{"kind": "enclosure", "lo", "hi"}`
/// (exact rational endpoints of the kernel's outward-rounded enclosure; `null` for an
/// infinite end), or `{"kind": "undefined", "reason"}`; with `precision` (the bits it
/// needed), `settled` (exact, narrow enough, or certainly undefined) and `note` (why
/// not settled), and `exit_code` as `attncheck eval`'s (0 a value, 1 undefined, 3 not
/// settled). `digits`: significant decimal digits asked (relative width 10^-digits
/// instead of 2^-53).
pub fn evaluate(
    term: &str,
    precision: u32,
    max_precision: u32,
    digits: Option<u32>,
) -> Result<String, Failure> {
    let opts = EvalOptions {
        precision,
        max_precision,
        rel_width: digits.map(EvalOptions::digits_width),
    };
    let ev = calc::evaluate(term, &opts)?;
    let code = match (&ev.value, ev.settled) {
        (_, false) => 3,
        (Value::Undefined(_), true) => 1,
        _ => 0,
    };
    let q = |q: &Option<rug::Rational>| q.as_ref().map(|q| q.to_string());
    let mut j = match &ev.value {
        Value::Exact(v) => json!({"kind": "exact", "value": v.to_string()}),
        Value::Enclosure { lo, hi } => {
            json!({"kind": "enclosure", "lo": lo.to_string(), "hi": hi.to_string()})
        }
        Value::Unbounded { lo, hi } => json!({"kind": "enclosure", "lo": q(lo), "hi": q(hi)}),
        Value::Undefined(why) => json!({"kind": "undefined", "reason": why}),
    };
    let o = j.as_object_mut().expect("an object");
    o.insert("precision".into(), ev.precision.into());
    o.insert("settled".into(), ev.settled.into());
    o.insert("note".into(), ev.note.clone().into());
    o.insert("exit_code".into(), code.into());
    Ok(j.to_string())
}

/// `attncheck.prove`: `{"result": "true"|"false"|"unknown", "precision", "reason",
/// "formula" (canonical), "certificate" (what `attncheck prove --cert` writes, as text:
/// `verify` accepts it), "exit_code"}` (0 true, 1 false, 3 undecided, as `attncheck
/// prove`).
pub fn prove(formula: &str, precision: u32, max_precision: u32) -> Result<String, Failure> {
    let proof = calc::prove(
        formula,
        &ProveOptions {
            precision,
            max_precision,
        },
    )?;
    let code = match proof.result {
        attncheck::kernel::Certainty::True => 0,
        attncheck::kernel::Certainty::False => 1,
        attncheck::kernel::Certainty::Unknown => 3,
    };
    let mut cert = serde_json::to_string_pretty(&proof.certificate).unwrap_or_default();
    cert.push('\n');
    Ok(
        json!({"result": proof.result, "precision": proof.precision, "reason": proof.reason,
        "formula": proof.formula, "certificate": cert, "exit_code": code})
        .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value as J;

    fn j(s: &str) -> J {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn exact_terms_are_exact() {
        let v = j(&evaluate("(+ 1/3 1/6)", 128, 4096, None).unwrap());
        assert_eq!(
            (v["kind"].as_str(), v["value"].as_str()),
            (Some("exact"), Some("1/2"))
        );
    }

    #[test]
    fn errors_carry_the_line_and_column() {
        let f = evaluate("(+ 1\n   (frob 2))", 128, 4096, None).unwrap_err();
        assert_eq!(f.kind, Kind::Formula);
        assert_eq!(f.position.as_ref().unwrap().line, 2, "{}", f.message);
        assert!(f.message.contains("frob"), "{}", f.message);
        assert_eq!(f.exit_code, 2);
    }

    #[test]
    fn prove_decides_true_and_false_with_the_cli_exit_codes() {
        let t = j(&prove("(<= (exp 1) 3)", 128, 4096).unwrap());
        assert_eq!(
            (t["result"].as_str(), t["exit_code"].as_u64()),
            (Some("true"), Some(0))
        );
        let f = j(&prove("(<= 3 (exp 1))", 128, 4096).unwrap());
        assert_eq!(
            (f["result"].as_str(), f["exit_code"].as_u64()),
            (Some("false"), Some(1))
        );
    }

    #[test]
    fn an_option_out_of_range_is_bad_input() {
        assert_eq!(
            evaluate("1", 256, 128, None).unwrap_err().kind,
            Kind::BadInput
        );
    }
}
