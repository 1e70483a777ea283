//! The printers: a formula as a Coq statement in real-number syntax ([`Render`]) and as
//! the reflected `Attncheck.form` that `decide_exact` computes ([`ast_form`]); big
//! literals named once ([`hoist_big`]) and comments ([`comment`]). The kernel's own
//! text of a formula is [`super::ast::kernel_formula`], numerals are
//! [`super::numeral`]'s: neither names this module, so the translator's modules import
//! in one direction (tests/it/house.rs).

use super::ast::{elem, Cmp, LayerKind, Op, F, T};
use super::numeral::{num, q_coq, z, zi};
use rug::Rational;
use std::collections::HashMap;
use std::fmt::Write;

impl Cmp {
    /// The operator of the reflected `Attncheck.form`.
    pub(super) fn ast(self) -> &'static str {
        match self {
            Cmp::Le => "FLe",
            Cmp::Lt => "FLt",
            Cmp::Ge => "FGe",
            Cmp::Gt => "FGt",
            Cmp::Eq => "FEq",
            Cmp::Ne => "FNe",
        }
    }
}

/// Values of bound variables fixed by unrolling (`Some(k)`) or still bound (`None`).
pub(super) type Ctx = Vec<(String, Option<i64>)>;

pub(super) fn lookup(ctx: &Ctx, v: &str) -> Option<Option<i64>> {
    ctx.iter().rev().find(|(n, _)| n == v).map(|(_, k)| *k)
}

/// Hexadecimal digits above which [`hoist_big`] names a literal.
const HOIST_ABOVE_DIGITS: usize = 1_024;

/// Names each integer literal of more than [`HOIST_ABOVE_DIGITS`] hex digits
/// (4096 bits) in `text`: `Definition big_<k>_<j> : Z := 0x…` (pushed on
/// `defs`, one per distinct literal) and `IZR big_<k>_<j>` in its place (the
/// name itself where the literal is an integer: `…%Z`, a Q numerator), so
/// that Coq parses and type-checks a number of 10⁶ bits once, not once per
/// occurrence (measured on ⌈log₂ 65536!⌉: 196 s and 10 GB with the literal
/// written four times, 66 s and 4.5 GB named once). A literal in another place
/// (a `positive` denominator) stays as written.
pub(super) fn hoist_big(text: &str, k: usize, defs: &mut Vec<(String, String)>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("0x") {
        let digits = rest[at + 2..]
            .bytes()
            .take_while(u8::is_ascii_hexdigit)
            .count();
        let end = at + 2 + digits;
        out.push_str(&rest[..at]);
        let lit = &rest[at..end];
        let after = &rest[end..];
        let z_place =
            after.starts_with("%Z") || after.starts_with(")%Z") || after.starts_with(" #");
        let r_place = !z_place && !after.starts_with("%positive") && !after.starts_with(")%Q");
        if digits > HOIST_ABOVE_DIGITS && (z_place || r_place) {
            let name = match defs.iter().find(|(_, l)| l == lit) {
                Some((n, _)) => n.clone(),
                None => {
                    let n = format!("big_{k}_{}", defs.len() + 1);
                    defs.push((n.clone(), lit.to_string()));
                    n
                }
            };
            if z_place {
                out.push_str(&name);
            } else {
                let _ = write!(out, "(IZR {name})");
            }
        } else {
            out.push_str(lit);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Statement-mode (`stmt`) data operations print as the operation; proof-mode
/// ones as the value constant they were rewritten to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Stmt,
    Proof,
}

pub(super) struct Render<'a> {
    pub ops: &'a [Op],
    /// Replaced subterms (by address) → their Coq text.
    pub repl: HashMap<usize, String>,
}

pub(super) fn addr(t: &T) -> usize {
    t as *const T as usize
}

impl Render<'_> {
    fn op(&self, i: usize, mode: Mode) -> String {
        let o = &self.ops[i];
        let inner = match mode {
            Mode::Stmt => format!("({})", o.coq),
            Mode::Proof => format!("val_{}", i + 1),
        };
        if o.int {
            format!("(IZR {inner})")
        } else {
            format!("(Q2R {inner})")
        }
    }

    pub(super) fn term(&self, t: &T, ctx: &mut Ctx, mode: Mode) -> String {
        if let Some(r) = self.repl.get(&addr(t)) {
            return r.clone();
        }
        let join = |s: &Self, ts: &[T], sep: &str, ctx: &mut Ctx| -> String {
            let parts: Vec<String> = ts.iter().map(|t| s.term(t, ctx, mode)).collect();
            if parts.len() == 1 {
                parts[0].clone()
            } else {
                format!("({})", parts.join(sep))
            }
        };
        match t {
            T::Lit(q) => q_coq(q),
            T::Var(v) => match lookup(ctx, v) {
                Some(Some(k)) => format!("(IZR {})", zi(k)),
                _ => format!("(IZR {v})"),
            },
            T::Pi => "PI".into(),
            T::Add(ts) => join(self, ts, " + ", ctx),
            T::Mul(ts) => join(self, ts, " * ", ctx),
            T::Sub(a, b) => format!(
                "({} - {})",
                self.term(a, ctx, mode),
                self.term(b, ctx, mode)
            ),
            T::Div(a, b) => format!(
                "({} / {})",
                self.term(a, ctx, mode),
                self.term(b, ctx, mode)
            ),
            T::Neg(a) => format!("(- {})", self.term(a, ctx, mode)),
            T::Fun(f, a) => format!("({} {})", elem(*f), self.term(a, ctx, mode)),
            T::Pow(a, n) => {
                if *n >= 0 {
                    format!("({} ^ {n})", self.term(a, ctx, mode))
                } else {
                    format!("(/ {} ^ {})", self.term(a, ctx, mode), n.unsigned_abs())
                }
            }
            T::Abs(a) => format!("(Rabs {})", self.term(a, ctx, mode)),
            T::Min(a, b) => format!(
                "(Rmin {} {})",
                self.term(a, ctx, mode),
                self.term(b, ctx, mode)
            ),
            T::Max(a, b) => format!(
                "(Rmax {} {})",
                self.term(a, ctx, mode),
                self.term(b, ctx, mode)
            ),
            T::Ceil(a) => format!("(Rceil {})", self.term(a, ctx, mode)),
            T::Floor(a) => format!("(Rfloor {})", self.term(a, ctx, mode)),
            T::Sum(v, lo, hi, b) => {
                ctx.push((v.clone(), None));
                let body = self.term(b, ctx, mode);
                ctx.pop();
                format!("(sumZ {} {} (fun {} => {}))", zi(*lo), zi(*hi), v, body)
            }
            T::Data(i) => self.op(*i, mode),
            T::Band(count, ts) => {
                let args: Vec<String> = ts
                    .iter()
                    .map(|u| format!("(Zfloor {})", self.term(u, ctx, mode)))
                    .collect();
                format!("(IZR (band_op {count} {}))", args.join(" "))
            }
            T::Layer(a, ts) => {
                let f = match a.kind {
                    LayerKind::Sqnorm => "layer_max_sqnorm",
                    LayerKind::Sqdist => "layer_max_sqdist",
                    LayerKind::Partition => "layer_partition",
                    LayerKind::Coord => "layer_coord",
                };
                let args: Vec<String> = ts
                    .iter()
                    .map(|u| format!("(Z.to_nat ({})%Z)", z_term(u, ctx)))
                    .collect();
                format!("({f} (layer_of_Q {}) {})", a.coq, args.join(" "))
            }
        }
    }

    pub(super) fn formula(&self, f: &F, ctx: &mut Ctx, mode: Mode) -> String {
        match f {
            F::Cmp(c, a, b) => format!(
                "{} {} {}",
                self.term(a, ctx, mode),
                c.coq(),
                self.term(b, ctx, mode)
            ),
            F::And(fs) | F::Or(fs) => {
                let sep = if matches!(f, F::And(_)) {
                    " /\\ "
                } else {
                    " \\/ "
                };
                match fs.len() {
                    0 => if matches!(f, F::And(_)) {
                        "True"
                    } else {
                        "False"
                    }
                    .into(),
                    1 => self.formula(&fs[0], ctx, mode),
                    _ => {
                        let parts: Vec<String> = fs
                            .iter()
                            .map(|g| format!("({})", self.formula(g, ctx, mode)))
                            .collect();
                        parts.join(sep)
                    }
                }
            }
            F::Dom(b) => self.formula(b, ctx, mode),
            F::All(v, lo, hi, b) | F::Ex(v, lo, hi, b) => {
                ctx.push((v.clone(), None));
                let body = self.formula(b, ctx, mode);
                ctx.pop();
                let x = v;
                if matches!(f, F::All(..)) {
                    format!(
                        "forall {x} : Z, ({} <= {x} <= {})%Z -> {body}",
                        zi(*lo),
                        zi(*hi)
                    )
                } else {
                    format!(
                        "exists {x} : Z, ({} <= {x} <= {})%Z /\\ {body}",
                        zi(*lo),
                        zi(*hi)
                    )
                }
            }
        }
    }
}

/// An integer expression (a layer index: [`super::ast::integral`]) in Coq's `Z` syntax,
/// fixed variables as their values.
pub(super) fn z_term(t: &T, ctx: &Ctx) -> String {
    let join = |ts: &[T], sep: &str| {
        let parts: Vec<String> = ts.iter().map(|u| z_term(u, ctx)).collect();
        format!("({})", parts.join(sep))
    };
    match t {
        T::Lit(q) => z(q.numer()),
        T::Var(v) => match lookup(ctx, v) {
            Some(Some(k)) => zi(k),
            _ => v.clone(),
        },
        T::Add(ts) => join(ts, " + "),
        T::Mul(ts) => join(ts, " * "),
        T::Sub(a, b) => format!("({} - {})", z_term(a, ctx), z_term(b, ctx)),
        T::Neg(a) => format!("(- {})", z_term(a, ctx)),
        // not reached: the reader takes integer expressions only
        _ => "0".into(),
    }
}

/// The reflected term (`Attncheck.term`); binders as de Bruijn indices, fixed
/// variables and replaced subterms as literals.
pub(super) fn ast_term(
    t: &T,
    ctx: &mut Ctx,
    lits: &HashMap<usize, Rational>,
    ops: &[Op],
) -> String {
    if let Some(q) = lits.get(&addr(t)) {
        return ast_lit(q);
    }
    let fold = |name: &str, ts: &[T], ctx: &mut Ctx| -> String {
        let mut acc = ast_term(&ts[0], ctx, lits, ops);
        for t in &ts[1..] {
            acc = format!("({name} {acc} {})", ast_term(t, ctx, lits, ops));
        }
        acc
    };
    let two = |name: &str, a: &T, b: &T, ctx: &mut Ctx| {
        format!(
            "({name} {} {})",
            ast_term(a, ctx, lits, ops),
            ast_term(b, ctx, lits, ops)
        )
    };
    match t {
        T::Lit(q) => ast_lit(q),
        T::Var(v) => {
            // de Bruijn index among the still-bound variables
            let mut idx = 0;
            for (n, k) in ctx.iter().rev() {
                if n == v {
                    return match k {
                        Some(k) => format!("(TInt {}%Z)", zi(*k)),
                        None => format!("(TVar {idx})"),
                    };
                }
                if k.is_none() {
                    idx += 1;
                }
            }
            format!("(TVar {idx})")
        }
        T::Pi | T::Fun(..) | T::Layer(..) => unreachable!("not exact"),
        T::Add(ts) => fold("TAdd", ts, ctx),
        T::Mul(ts) => fold("TMul", ts, ctx),
        T::Sub(a, b) => two("TSub", a, b, ctx),
        T::Div(a, b) => two("TDiv", a, b, ctx),
        T::Min(a, b) => two("TMin", a, b, ctx),
        T::Max(a, b) => two("TMax", a, b, ctx),
        T::Neg(a) => format!("(TNeg {})", ast_term(a, ctx, lits, ops)),
        T::Abs(a) => format!("(TAbs {})", ast_term(a, ctx, lits, ops)),
        T::Ceil(a) => format!("(TCeil {})", ast_term(a, ctx, lits, ops)),
        T::Floor(a) => format!("(TFloor {})", ast_term(a, ctx, lits, ops)),
        T::Pow(a, n) => format!("(TPow {} {}%Z)", ast_term(a, ctx, lits, ops), zi(*n)),
        T::Sum(v, lo, hi, b) => {
            ctx.push((v.clone(), None));
            let body = ast_term(b, ctx, lits, ops);
            ctx.pop();
            format!("(TSum {}%Z {}%Z {body})", zi(*lo), zi(*hi))
        }
        T::Data(i) => format!("({} val_{})", if ops[*i].int { "TZ" } else { "TQ" }, i + 1),
        T::Band(count, ts) => {
            let args: Vec<String> = ts.iter().map(|u| ast_term(u, ctx, lits, ops)).collect();
            format!("(TBand {count} {})", args.join(" "))
        }
    }
}

pub(super) fn ast_lit(q: &Rational) -> String {
    if *q.denom() == 1 {
        format!("(TInt {}%Z)", z(q.numer()))
    } else {
        format!("(TFrac {}%Z {}%positive)", z(q.numer()), num(q.denom()))
    }
}

pub(super) fn ast_form(
    f: &F,
    ctx: &mut Ctx,
    lits: &HashMap<usize, Rational>,
    ops: &[Op],
) -> String {
    match f {
        F::Cmp(c, a, b) => format!(
            "({} {} {})",
            c.ast(),
            ast_term(a, ctx, lits, ops),
            ast_term(b, ctx, lits, ops)
        ),
        F::And(fs) | F::Or(fs) => {
            let (name, unit) = if matches!(f, F::And(_)) {
                ("FAnd", "FTrue")
            } else {
                ("FOr", "(FNe (TInt 0) (TInt 0))")
            };
            match fs.len() {
                0 => unit.into(),
                _ => {
                    let mut acc = ast_form(&fs[fs.len() - 1], ctx, lits, ops);
                    for g in fs[..fs.len() - 1].iter().rev() {
                        acc = format!("({name} {} {acc})", ast_form(g, ctx, lits, ops));
                    }
                    acc
                }
            }
        }
        F::Dom(b) => ast_form(b, ctx, lits, ops),
        F::All(v, lo, hi, b) | F::Ex(v, lo, hi, b) => {
            ctx.push((v.clone(), None));
            let body = ast_form(b, ctx, lits, ops);
            ctx.pop();
            let name = if matches!(f, F::All(..)) {
                "FAll"
            } else {
                "FEx"
            };
            format!("({name} {}%Z {}%Z {body})", zi(*lo), zi(*hi))
        }
    }
}

pub(super) fn comment(s: &str) -> String {
    s.replace("(*", "( *")
        .replace("*)", "* )")
        .replace('"', "''")
}
