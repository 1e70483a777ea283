//! A tiny expression language for certificates, evaluated in intervals.
//!
//! A certificate states its obligations as S-expressions over exact rational
//! literals, so that `attncheck verify` can re-check them with the kernel alone,
//! without the code that built them:
//!
//! ```text
//! (<= (exp (* -1/256 1179)) 1/100)
//! (forall r 1 100000 (< (sum i 0 63 (- (cos (* r (exp (* (/ (* -2 i) 128) (ln 10000))))) 1)) 0))
//! ```
//!
//! Terms: rational literals (`7`, `-3/4`, `1.5e-3`, `2^-8`), `pi`, bound
//! integer variables, `(+ a b …)`, `(- a b)`, `(neg a)`, `(* a b …)`, `(/ a b)`,
//! `(exp a)`, `(ln a)`, `(sqrt a)`, `(sin a)`, `(cos a)`, `(pow a n)`, `(abs a)`,
//! `(min a b)`, `(max a b)`, `(sum v lo hi body)` (integers lo..=hi).
//! Formulas: `(< a b)`, `(<= a b)`, `(> a b)`, `(>= a b)`, `(= a b)` (exact
//! equality: both sides must evaluate to the same point), `(and f …)`,
//! `(not f)`, `(forall v lo hi f)`.
//! Every operation is the kernel's outward-rounded one, so a `True` answer is a
//! proof; `Unknown` means the precision did not decide it.

use super::{parse_rational, Certainty, Interval};

/// A parse or evaluation error, with the byte offset in the source text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at offset {offset}: {reason}")]
pub struct ExprError {
    /// Byte offset in the expression text.
    pub offset: usize,
    /// What is wrong.
    pub reason: String,
}

/// A parsed S-expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Sexp {
    /// An atom (number, symbol, operator).
    Atom(String, usize),
    /// A list.
    List(Vec<Sexp>, usize),
}

impl Sexp {
    fn offset(&self) -> usize {
        match self {
            Sexp::Atom(_, o) | Sexp::List(_, o) => *o,
        }
    }
}

fn err<T>(offset: usize, reason: impl Into<String>) -> Result<T, ExprError> {
    Err(ExprError {
        offset,
        reason: reason.into(),
    })
}

/// Parses one S-expression (the whole text).
pub fn parse(text: &str) -> Result<Sexp, ExprError> {
    let bytes = text.as_bytes();
    let mut pos = 0;
    let e = parse_at(text, bytes, &mut pos)?;
    skip_ws(bytes, &mut pos);
    if pos != bytes.len() {
        return err(pos, "trailing text after the expression");
    }
    Ok(e)
}

fn skip_ws(b: &[u8], pos: &mut usize) {
    while *pos < b.len() && b[*pos].is_ascii_whitespace() {
        *pos += 1;
    }
}

fn parse_at(text: &str, b: &[u8], pos: &mut usize) -> Result<Sexp, ExprError> {
    skip_ws(b, pos);
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
                items.push(parse_at(text, b, pos)?);
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
            Ok(Sexp::Atom(text[start..*pos].to_string(), start))
        }
    }
}

const MAX_RANGE: i64 = 50_000_000;

struct Env<'a> {
    prec: u32,
    vars: Vec<(&'a str, i64)>,
}

impl<'a> Env<'a> {
    fn lookup(&self, name: &str) -> Option<i64> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }
}

fn int_atom(e: &Sexp) -> Result<i64, ExprError> {
    match e {
        Sexp::Atom(a, o) => a
            .parse::<i64>()
            .or_else(|_| err(*o, format!("`{a}` is not an integer"))),
        Sexp::List(_, o) => err(*o, "expected an integer literal"),
    }
}

fn var_name(e: &Sexp) -> Result<&str, ExprError> {
    match e {
        Sexp::Atom(a, o)
            if a.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && a != "pi" =>
        {
            let _ = o;
            Ok(a)
        }
        _ => err(e.offset(), "expected a variable name"),
    }
}

fn range(items: &[Sexp], o: usize) -> Result<(i64, i64), ExprError> {
    let lo = int_atom(&items[2])?;
    let hi = int_atom(&items[3])?;
    if hi.saturating_sub(lo) > MAX_RANGE {
        return err(o, format!("range {lo}..{hi} is longer than {MAX_RANGE}"));
    }
    Ok((lo, hi))
}

fn term<'a>(e: &'a Sexp, env: &mut Env<'a>) -> Result<Interval, ExprError> {
    let p = env.prec;
    match e {
        Sexp::Atom(a, o) => {
            if a == "pi" {
                return Ok(Interval::pi(p));
            }
            if let Some(v) = env.lookup(a) {
                return Ok(Interval::from_i64(p, v));
            }
            parse_rational(a)
                .map(|q| Interval::from_rational(p, &q))
                .or_else(|_| {
                    err(
                        *o,
                        format!("`{a}` is neither a number nor a bound variable"),
                    )
                })
        }
        Sexp::List(items, o) => {
            let Some(Sexp::Atom(op, _)) = items.first() else {
                return err(*o, "expected an operator");
            };
            let args = &items[1..];
            let arity = |n: usize| -> Result<(), ExprError> {
                if args.len() == n {
                    Ok(())
                } else {
                    err(
                        *o,
                        format!("`{op}` takes {n} argument(s), got {}", args.len()),
                    )
                }
            };
            match op.as_str() {
                "+" | "*" => {
                    if args.is_empty() {
                        return err(*o, format!("`{op}` needs arguments"));
                    }
                    let mut acc = term(&args[0], env)?;
                    for a in &args[1..] {
                        let x = term(a, env)?;
                        acc = if op == "+" { &acc + &x } else { &acc * &x };
                    }
                    Ok(acc)
                }
                "-" => {
                    if args.len() == 1 {
                        return Ok(-term(&args[0], env)?);
                    }
                    arity(2)?;
                    Ok(&term(&args[0], env)? - &term(&args[1], env)?)
                }
                "neg" => {
                    arity(1)?;
                    Ok(-term(&args[0], env)?)
                }
                "/" => {
                    arity(2)?;
                    Ok(&term(&args[0], env)? / &term(&args[1], env)?)
                }
                "exp" | "ln" | "sqrt" | "sin" | "cos" | "abs" => {
                    arity(1)?;
                    let x = term(&args[0], env)?;
                    Ok(match op.as_str() {
                        "exp" => x.exp(),
                        "ln" => x.ln(),
                        "sqrt" => x.sqrt(),
                        "sin" => x.sin(),
                        "cos" => x.cos(),
                        _ => x.abs(),
                    })
                }
                "min" | "max" => {
                    arity(2)?;
                    let a = term(&args[0], env)?;
                    let b = term(&args[1], env)?;
                    Ok(if op == "min" { a.min(&b) } else { a.max(&b) })
                }
                "pow" => {
                    arity(2)?;
                    let n = int_atom(&args[1])?;
                    let n = i32::try_from(n)
                        .or_else(|_| err(args[1].offset(), "exponent too large"))?;
                    Ok(term(&args[0], env)?.powi(n))
                }
                "sum" => {
                    arity(4)?;
                    let v = var_name(&args[0])?;
                    let (lo, hi) = range(items, *o)?;
                    let mut acc = Interval::zero(p);
                    for k in lo..=hi {
                        env.vars.push((v, k));
                        let x = term(&args[3], env);
                        env.vars.pop();
                        acc.add_assign(&x?);
                    }
                    Ok(acc)
                }
                _ => err(*o, format!("unknown operator `{op}` in a term")),
            }
        }
    }
}

fn formula<'a>(e: &'a Sexp, env: &mut Env<'a>) -> Result<Certainty, ExprError> {
    let Sexp::List(items, o) = e else {
        return err(e.offset(), "expected a formula such as (<= a b)");
    };
    let Some(Sexp::Atom(op, _)) = items.first() else {
        return err(*o, "expected an operator");
    };
    let args = &items[1..];
    let two = |env: &mut Env<'a>| -> Result<(Interval, Interval), ExprError> {
        if args.len() != 2 {
            return err(*o, format!("`{op}` takes 2 arguments"));
        }
        Ok((term(&args[0], env)?, term(&args[1], env)?))
    };
    match op.as_str() {
        "<" => two(env).map(|(a, b)| a.lt(&b)),
        "<=" => two(env).map(|(a, b)| a.le(&b)),
        ">" => two(env).map(|(a, b)| a.gt(&b)),
        ">=" => two(env).map(|(a, b)| a.ge(&b)),
        "=" => two(env).map(|(a, b)| a.eq_exact(&b)),
        "and" => {
            let mut acc = Certainty::True;
            for a in args {
                acc = acc.and(formula(a, env)?);
                if acc == Certainty::False {
                    break;
                }
            }
            Ok(acc)
        }
        "not" => {
            if args.len() != 1 {
                return err(*o, "`not` takes 1 argument");
            }
            Ok(!formula(&args[0], env)?)
        }
        "forall" => {
            if args.len() != 4 {
                return err(
                    *o,
                    "`forall` takes a variable, two integer bounds and a formula",
                );
            }
            let v = var_name(&args[0])?;
            let (lo, hi) = range(items, *o)?;
            let mut acc = Certainty::True;
            for k in lo..=hi {
                env.vars.push((v, k));
                let c = formula(&args[3], env);
                env.vars.pop();
                acc = acc.and(c?);
                if acc == Certainty::False {
                    break;
                }
            }
            Ok(acc)
        }
        _ => err(*o, format!("unknown operator `{op}` in a formula")),
    }
}

/// Evaluates a formula at precision `prec`.
pub fn check(text: &str, prec: u32) -> Result<Certainty, ExprError> {
    let e = parse(text)?;
    let mut env = Env {
        prec,
        vars: Vec::new(),
    };
    formula(&e, &mut env)
}

/// Evaluates a term at precision `prec` (for reports and tests).
pub fn eval(text: &str, prec: u32) -> Result<Interval, ExprError> {
    let e = parse(text)?;
    let mut env = Env {
        prec,
        vars: Vec::new(),
    };
    term(&e, &mut env)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn decides() {
        assert_eq!(
            check("(<= (exp (* -1/256 1179)) 1/100)", 128),
            Ok(Certainty::True)
        );
        assert_eq!(
            check("(> (exp (* -1/256 1179)) 1/100)", 128),
            Ok(Certainty::False)
        );
        assert_eq!(
            check("(< (exp -2) 0.13533528323661269190)", 128),
            Ok(Certainty::True)
        );
        assert_eq!(check("(= (sum i 1 4 i) 10)", 64), Ok(Certainty::True));
        assert_eq!(
            check("(forall r 1 50 (< (- (cos r) 1) 0))", 64),
            Ok(Certainty::True)
        );
        assert_eq!(check("(< (sin pi) 0)", 64), Ok(Certainty::Unknown));
        assert!(check("(< 1", 64).is_err());
        assert!(check("(foo 1 2)", 64).is_err());
        assert!(check("(< x 2)", 64).is_err());
    }
}
