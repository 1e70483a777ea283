//! The reader: text to S-expression, as written (the entry point [`super::parse`] also
//! rewrites the building blocks, [`super::blocks`]). Depth-limited, so no input
//! overflows the stack.

use super::syntax::{err, ExprError, Sexp, MAX_DEPTH};

/// Parses one S-expression (the whole text) as written: its building blocks are kept
/// as their calls, not expanded. What a formula is printed from (its canonical text
/// names the blocks the user wrote, never their `#` expansion variables, which a
/// written formula may not contain); everything that reads or evaluates it takes
/// `parse`.
pub fn parse_written(text: &str) -> Result<Sexp, ExprError> {
    let bytes = text.as_bytes();
    let mut pos = 0;
    let e = parse_at(text, bytes, &mut pos, 0)?;
    skip_ws(bytes, &mut pos);
    if pos != bytes.len() {
        return err(pos, "trailing text after the expression");
    }
    Ok(e)
}

pub(super) fn skip_ws(b: &[u8], pos: &mut usize) {
    while *pos < b.len() && b[*pos].is_ascii_whitespace() {
        *pos += 1;
    }
}

pub(super) fn parse_at(
    text: &str,
    b: &[u8],
    pos: &mut usize,
    depth: usize,
) -> Result<Sexp, ExprError> {
    skip_ws(b, pos);
    if depth > MAX_DEPTH {
        return err(*pos, format!("nested deeper than {MAX_DEPTH} levels"));
    }
    if *pos >= b.len() {
        return err(*pos, "unexpected end of expression");
    }
    let start = *pos;
    match b[*pos] {
        b'(' => {
            *pos += 1;
            let mut items = Vec::new();
            loop {
                skip_ws(b, pos);
                if *pos >= b.len() {
                    return err(start, "unclosed parenthesis");
                }
                if b[*pos] == b')' {
                    *pos += 1;
                    return Ok(Sexp::List(items, start));
                }
                items.push(parse_at(text, b, pos, depth + 1)?);
            }
        }
        b')' => err(start, "unexpected ')'"),
        _ => {
            while *pos < b.len()
                && !b[*pos].is_ascii_whitespace()
                && b[*pos] != b'('
                && b[*pos] != b')'
            {
                *pos += 1;
            }
            let atom = &text[start..*pos];
            if let Err(e) = crate::check_literal_size(atom) {
                return err(start, e.to_string());
            }
            Ok(Sexp::Atom(atom.to_string(), start))
        }
    }
}
