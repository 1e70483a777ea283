//! The evaluator: terms, comparisons and formulas, over the values and the
//! environment of [`super::value`], in either tier of [`super::tier`] (the same code
//! for both: the exact arithmetic is the same, only the enclosures differ); data
//! operations by [`super::data`].

use super::ops::{int_atom, let_var, range, var_name};
use super::syntax::{err, ExprError, Sexp};
use super::units::MAX_EXACT_BITS;
use super::value::{Env, Tier, Val};
use crate::{Certainty, Interval};
use rug::Rational;

/// `⌈x⌉` (or `⌊x⌋`) of an enclosure. Both are monotone, so the images of the two
/// endpoints enclose the image. Rounding a p-bit float to an integer is exact in p
/// bits (it is the float itself, or an integer of magnitude ≤ 2^p), and ±∞ stay ±∞,
/// so an unbounded enclosure keeps its finite end. Exact (a rational) when both
/// ends land on one integer of at most [`MAX_EXACT_BITS`] bits; a huge one stays a
/// point interval rather than being expanded into an integer of 2^30 bits.
pub(super) fn round_iv(x: &Interval, ceil: bool) -> Val {
    let f = |v: &rug::Float| {
        if ceil {
            v.clone().ceil()
        } else {
            v.clone().floor()
        }
    };
    let (lo, hi) = (f(x.lo()), f(x.hi()));
    if lo == hi && lo.get_exp().is_none_or(|e| e <= MAX_EXACT_BITS as i32) {
        if let Some(i) = lo.to_integer() {
            return Val::Q(Rational::from(i));
        }
    }
    Val::I(Interval::from_endpoints(lo, hi))
}

pub(super) fn term<'a, T: Tier>(
    e: &'a Sexp,
    env: &mut Env<'a, T>,
) -> Result<Val<T::Iv>, ExprError> {
    let p = env.prec;
    match e {
        Sexp::Atom(a, o) => {
            if a == "pi" {
                return Ok(Val::I(T::pi(p, *o)?));
            }
            if let Some(v) = env.lookup(a) {
                return Ok(v.clone());
            }
            match env.literals.get(o) {
                Some(v) => Ok(T::literal(v)),
                None => err(
                    *o,
                    format!("`{a}` is neither a number nor a bound variable"),
                ),
            }
        }
        Sexp::List(items, o) => {
            let Some(Sexp::Atom(op, _)) = items.first() else {
                return err(*o, "expected an operator");
            };
            let args = &items[1..];
            if let Some(v) = T::data_op(op, args, *o, env)? {
                return Ok(v);
            }
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
                        acc = match (acc, x) {
                            (Val::Undef, _) | (_, Val::Undef) => Val::Undef,
                            (Val::Q(a), Val::Q(b)) => {
                                env.charge(*o, &a, &b)?;
                                T::q(if op == "+" { a + b } else { a * b }, p)
                            }
                            (a, b) => {
                                let (a, b) = (T::iv(&a, p), T::iv(&b, p));
                                Val::I(if op == "+" {
                                    T::add(&a, &b)
                                } else {
                                    T::mul(&a, &b)
                                })
                            }
                        };
                    }
                    Ok(acc)
                }
                "-" | "neg" => {
                    if args.len() == 1 {
                        return Ok(match term(&args[0], env)? {
                            Val::Q(q) => Val::Q(-q),
                            Val::I(i) => Val::I(T::neg(i)),
                            Val::Undef => Val::Undef,
                        });
                    }
                    if op == "neg" {
                        arity(1)?;
                    }
                    arity(2)?;
                    Ok(match (term(&args[0], env)?, term(&args[1], env)?) {
                        (Val::Undef, _) | (_, Val::Undef) => Val::Undef,
                        (Val::Q(a), Val::Q(b)) => {
                            env.charge(*o, &a, &b)?;
                            T::q(a - b, p)
                        }
                        (a, b) => Val::I(T::sub(&T::iv(&a, p), &T::iv(&b, p))),
                    })
                }
                "/" => {
                    arity(2)?;
                    Ok(match (term(&args[0], env)?, term(&args[1], env)?) {
                        (Val::Undef, _) | (_, Val::Undef) => Val::Undef,
                        // a/0 is undefined; checked_div refuses a divisor enclosure ∋ 0
                        (_, Val::Q(b)) if b == 0 => Val::Undef,
                        (Val::Q(a), Val::Q(b)) => {
                            env.charge(*o, &a, &b)?;
                            T::q(a / b, p)
                        }
                        (a, b) => Val::checked(T::div(&T::iv(&a, p), &T::iv(&b, p))),
                    })
                }
                "exp" | "ln" | "sqrt" | "sin" | "cos" => {
                    arity(1)?;
                    let x = term(&args[0], env)?;
                    // exact arguments outside the domain (ln q for q ≤ 0, √q for q < 0)
                    let outside = match &x {
                        Val::Undef => true,
                        Val::Q(q) => (op == "ln" && *q <= 0) || (op == "sqrt" && *q < 0),
                        Val::I(_) => false,
                    };
                    if outside {
                        return Ok(Val::Undef);
                    }
                    let x = T::iv(&x, p);
                    Ok(match op.as_str() {
                        "exp" => Val::I(T::exp(&x)),
                        "ln" => Val::checked(T::ln(&x)),
                        "sqrt" => Val::checked(T::sqrt(&x)),
                        "sin" => Val::I(T::sin_cos(&x, true, *o)?),
                        _ => Val::I(T::sin_cos(&x, false, *o)?),
                    })
                }
                "abs" => {
                    arity(1)?;
                    Ok(match term(&args[0], env)? {
                        Val::Q(q) => Val::Q(q.abs()),
                        Val::I(i) => Val::I(T::abs(&i)),
                        Val::Undef => Val::Undef,
                    })
                }
                "ceil" | "floor" => {
                    arity(1)?;
                    Ok(match term(&args[0], env)? {
                        Val::Q(q) => {
                            env.charge(*o, &q, &q)?;
                            Val::Q(if op == "ceil" { q.ceil() } else { q.floor() })
                        }
                        Val::I(i) => T::round(&i, op == "ceil", *o)?,
                        Val::Undef => Val::Undef,
                    })
                }
                "min" | "max" => {
                    arity(2)?;
                    let a = term(&args[0], env)?;
                    let b = term(&args[1], env)?;
                    Ok(match (a, b) {
                        (Val::Undef, _) | (_, Val::Undef) => Val::Undef,
                        (Val::Q(a), Val::Q(b)) => {
                            env.charge(*o, &a, &b)?;
                            Val::Q(if (op == "min") == (a < b) { a } else { b })
                        }
                        (a, b) => {
                            let (a, b) = (T::iv(&a, p), T::iv(&b, p));
                            Val::I(if op == "min" {
                                T::min(&a, &b)
                            } else {
                                T::max(&a, &b)
                            })
                        }
                    })
                }
                "pow" => {
                    arity(2)?;
                    let n = int_atom(&args[1])?;
                    let n = i32::try_from(n)
                        .or_else(|_| err(args[1].offset(), "exponent too large"))?;
                    Ok(match term(&args[0], env)? {
                        Val::Undef => Val::Undef,
                        // 0ⁿ for n < 0 is 1/0: undefined
                        Val::Q(q) if q == 0 && n < 0 => Val::Undef,
                        Val::Q(q)
                            if u64::from(n.unsigned_abs())
                                * u64::from(
                                    q.numer().significant_bits() + q.denom().significant_bits(),
                                )
                                <= u64::from(MAX_EXACT_BITS) =>
                        {
                            let r = if n >= 0 {
                                Rational::from(rug::ops::Pow::pow(&q, n.unsigned_abs()))
                            } else {
                                Rational::from(rug::ops::Pow::pow(&q.recip(), n.unsigned_abs()))
                            };
                            env.charge(*o, &r, &r)?;
                            Val::Q(r)
                        }
                        x => Val::checked(T::powi(&T::iv(&x, p), n, *o)?),
                    })
                }
                "let" => {
                    // (let v t body): t evaluated once, body with v bound to its value
                    arity(3)?;
                    let v = let_var(&args[0])?;
                    let x = term(&args[1], env)?;
                    env.vars.push((v, x));
                    let r = term(&args[2], env);
                    env.vars.pop();
                    r
                }
                "sum" => {
                    arity(4)?;
                    let v = var_name(&args[0])?;
                    let (lo, hi) = range(items, *o)?;
                    let mut acc = Val::Q(Rational::new());
                    for k in lo..=hi {
                        env.vars.push((v, Val::Q(Rational::from(k))));
                        let x = term(&args[3], env);
                        env.vars.pop();
                        acc = match (acc, x?) {
                            (Val::Undef, _) | (_, Val::Undef) => Val::Undef,
                            (Val::Q(a), Val::Q(b)) => {
                                env.charge(*o, &a, &b)?;
                                T::q(a + b, p)
                            }
                            (a, b) => {
                                let mut a = T::iv(&a, p);
                                T::add_assign(&mut a, &T::iv(&b, p));
                                Val::I(a)
                            }
                        };
                    }
                    Ok(acc)
                }
                _ => err(*o, format!("unknown operator `{op}` in a term")),
            }
        }
    }
}

pub(super) fn compare<T: Tier>(op: &str, a: Val<T::Iv>, b: Val<T::Iv>, p: u32) -> Certainty {
    if a.is_undef() || b.is_undef() {
        // a comparison on a value that may not exist decides nothing
        return Certainty::Unknown;
    }
    if let (Val::Q(a), Val::Q(b)) = (&a, &b) {
        return Certainty::exact(match op {
            "<" => a < b,
            "<=" => a <= b,
            ">" => a > b,
            ">=" => a >= b,
            _ => a == b,
        });
    }
    T::compare(op, &T::iv(&a, p), &T::iv(&b, p))
}

pub(super) fn formula<'a, T: Tier>(
    e: &'a Sexp,
    env: &mut Env<'a, T>,
) -> Result<Certainty, ExprError> {
    let Sexp::List(items, o) = e else {
        return err(e.offset(), "expected a formula such as (<= a b)");
    };
    let Some(Sexp::Atom(op, _)) = items.first() else {
        return err(*o, "expected an operator");
    };
    let args = &items[1..];
    match op.as_str() {
        "<" | "<=" | ">" | ">=" | "=" => {
            if args.len() != 2 {
                return err(*o, format!("`{op}` takes 2 arguments"));
            }
            let a = term(&args[0], env)?;
            let b = term(&args[1], env)?;
            if let (Val::Q(x), Val::Q(y)) = (&a, &b) {
                env.charge(*o, x, y)?;
            }
            let c = compare::<T>(op, a, b, env.prec);
            if T::STOP_AT_UNKNOWN && c == Certainty::Unknown {
                // the f64 pass: this obligation escalates ([`super::tier`], 3.)
                return err(*o, "undecided in the f64 tier");
            }
            Ok(c)
        }
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
        "let" => {
            if args.len() != 3 {
                return err(*o, "`let` takes a variable, a term and a formula");
            }
            let v = let_var(&args[0])?;
            let x = term(&args[1], env)?;
            env.vars.push((v, x));
            let r = formula(&args[2], env);
            env.vars.pop();
            r
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
                env.vars.push((v, Val::Q(Rational::from(k))));
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
