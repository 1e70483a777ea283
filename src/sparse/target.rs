//! Reading a target matrix A for `attncheck sparse construct` from a Matrix Market
//! coordinate file (sparse.md §2: A ≥ 0, n × n, each row's support nonempty with at
//! most k entries).
//!
//! # Format
//!
//! ```text
//! %%MatrixMarket matrix coordinate real general
//! % comment lines start with %; blank lines are ignored
//! 4 4 6
//! 1 1 1
//! 1 3 2.5
//! 2 2 1
//! 3 1 1/3
//! 3 4 0.125
//! 4 4 7
//! ```
//!
//! - The header must be `%%MatrixMarket matrix coordinate real general` (case-insensitive;
//!   `integer` in place of `real` is accepted). `pattern`, `complex`, `array` and the
//!   symmetric variants are not.
//! - The size line is `n n nnz`: the matrix must be square, and exactly nnz entry lines
//!   follow.
//! - Each entry line is `i j value` with 1-based 1 ≤ i, j ≤ n; the value is read exactly
//!   (a decimal such as `0.1` is 1/10, not a double; `1.5e-3`, `3/4` and `2^-8` are also
//!   accepted) and must be positive: zeros are simply not listed.
//! - Every row needs at least one entry and at most k; no (i, j) may appear twice.
//!
//! Every error names the 1-based line it is about (for a row without entries: the
//! size line), so the CLI can print `FILE:LINE: …` and exit with code 2.

use crate::kernel::expr::SparseRows;
use crate::kernel::parse_rational;
use crate::sparse::construct::Target;
use rug::{Integer, Rational};
use std::collections::BTreeMap;
use std::fmt;

/// What is wrong with a target file, with the 1-based line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// The first line is not a supported Matrix Market header.
    #[error("line {line}: expected the header `%%MatrixMarket matrix coordinate real general`, found `{found}`")]
    Header {
        /// Line.
        line: usize,
        /// What was there.
        found: String,
    },
    /// A size or entry line that cannot be read.
    #[error("line {line}: malformed {what}: `{text}` ({reason})")]
    Malformed {
        /// Line.
        line: usize,
        /// `size line` or `entry`.
        what: &'static str,
        /// The line's text.
        text: String,
        /// Why.
        reason: String,
    },
    /// The size line declares a non-square matrix.
    #[error("line {line}: the matrix must be square, the size line declares {rows} × {cols}")]
    NotSquare {
        /// Line.
        line: usize,
        /// Declared rows.
        rows: usize,
        /// Declared columns.
        cols: usize,
    },
    /// An index outside 1..=n.
    #[error("line {line}: entry ({i}, {j}) is outside the declared {n} × {n} matrix")]
    OutOfRange {
        /// Line.
        line: usize,
        /// 1-based row.
        i: usize,
        /// 1-based column.
        j: usize,
        /// n.
        n: usize,
    },
    /// A zero or negative value.
    #[error(
        "line {line}: entry ({i}, {j}) = {value} is not positive (list only the positive entries)"
    )]
    NotPositive {
        /// Line.
        line: usize,
        /// 1-based row.
        i: usize,
        /// 1-based column.
        j: usize,
        /// The value as written.
        value: String,
    },
    /// The same (i, j) twice.
    #[error("line {line}: entry ({i}, {j}) duplicates line {first}")]
    Duplicate {
        /// Line.
        line: usize,
        /// 1-based row.
        i: usize,
        /// 1-based column.
        j: usize,
        /// The earlier line.
        first: usize,
    },
    /// More than k entries in one row.
    #[error("line {line}: row {i} has more than k = {k} nonzeros")]
    TooManyInRow {
        /// The line of the (k + 1)-th entry.
        line: usize,
        /// 1-based row.
        i: usize,
        /// k.
        k: usize,
    },
    /// A row with no entry.
    #[error("line {line}: row {i} has no nonzero entry (the size line declares n = {n})")]
    EmptyRow {
        /// The size line.
        line: usize,
        /// 1-based row.
        i: usize,
        /// n.
        n: usize,
    },
    /// The size line declares more rows than are supported.
    #[error("line {line}: n = {n} exceeds the supported maximum n = {max} (t* is a maximum over n² row pairs)")]
    TooLarge {
        /// The size line.
        line: usize,
        /// Declared n.
        n: usize,
        /// [`MAX_N`].
        max: usize,
    },
    /// The number of entries differs from the size line's nnz.
    #[error("line {line}: the size line (line {size_line}) declares {}, {found}", entries(*declared))]
    CountMismatch {
        /// The first extra entry, or the last line when entries are missing.
        line: usize,
        /// The size line.
        size_line: usize,
        /// Declared nnz.
        declared: usize,
        /// What was found, in words.
        found: String,
    },
}

impl TargetError {
    /// The 1-based line the error is about.
    pub fn line(&self) -> usize {
        match self {
            TargetError::Header { line, .. }
            | TargetError::Malformed { line, .. }
            | TargetError::NotSquare { line, .. }
            | TargetError::OutOfRange { line, .. }
            | TargetError::NotPositive { line, .. }
            | TargetError::Duplicate { line, .. }
            | TargetError::TooManyInRow { line, .. }
            | TargetError::EmptyRow { line, .. }
            | TargetError::TooLarge { line, .. }
            | TargetError::CountMismatch { line, .. } => *line,
        }
    }

    /// What is wrong, without the `line N: ` prefix (for `FILE:LINE: reason`).
    pub fn reason(&self) -> String {
        let s = self.to_string();
        let prefix = format!("line {}: ", self.line());
        s.strip_prefix(&prefix).map(str::to_string).unwrap_or(s)
    }
}

/// `1 entry`, `2 entries`.
fn entries(n: usize) -> String {
    if n == 1 {
        "1 entry".into()
    } else {
        format!("{n} entries")
    }
}

/// The largest n a target may declare: 2^16. The construction's t* is a maximum
/// over all n² pairs of sign rows and the certificate carries S, so larger targets
/// are refused at the size line instead of running for days.
pub const MAX_N: usize = 1 << 16;

/// Parses a Matrix Market coordinate target with at most `k` nonzeros per row (see
/// the module doc). Rows come back with strictly increasing 0-based columns.
pub fn parse(text: &str, k: usize) -> Result<Target, TargetError> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let (hl, header) = lines.next().unwrap_or((1, ""));
    let words: Vec<String> = header
        .split_whitespace()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    let ok = words.len() == 5
        && words[0] == "%%matrixmarket"
        && words[1] == "matrix"
        && words[2] == "coordinate"
        && (words[3] == "real" || words[3] == "integer")
        && words[4] == "general";
    if !ok {
        return Err(TargetError::Header {
            line: hl,
            found: crate::kernel::abbreviate_literal(header),
        });
    }
    let mut content = lines.filter(|(_, l)| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with('%')
    });
    let last_line = text.lines().count().max(1);
    let malformed =
        |line: usize, what: &'static str, text: &str, reason: &str| TargetError::Malformed {
            line,
            what,
            text: crate::kernel::abbreviate_literal(text),
            reason: reason.to_string(),
        };
    let (sl, size) = content
        .next()
        .ok_or_else(|| malformed(last_line, "size line", "", "missing: expected `n n nnz`"))?;
    let nums: Vec<usize> = size
        .split_whitespace()
        .map(|w| w.parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| {
            malformed(
                sl,
                "size line",
                size,
                "expected three nonnegative integers `n n nnz`",
            )
        })?;
    if nums.len() != 3 {
        return Err(malformed(
            sl,
            "size line",
            size,
            "expected three nonnegative integers `n n nnz`",
        ));
    }
    let (n, cols, nnz) = (nums[0], nums[1], nums[2]);
    if n != cols {
        return Err(TargetError::NotSquare {
            line: sl,
            rows: n,
            cols,
        });
    }
    if n == 0 {
        return Err(malformed(sl, "size line", size, "n must be at least 1"));
    }
    if n > MAX_N {
        return Err(TargetError::TooLarge {
            line: sl,
            n,
            max: MAX_N,
        });
    }
    // (column, value, line) per row present; nothing is allocated from the size
    // line, so a declared size far beyond the entries costs nothing
    let mut rows: BTreeMap<usize, Vec<(usize, Rational, usize)>> = BTreeMap::new();
    let mut count = 0usize;
    for (line, l) in content {
        count += 1;
        if count > nnz {
            return Err(TargetError::CountMismatch {
                line,
                size_line: sl,
                declared: nnz,
                found: "but this is entry number ".to_string() + &count.to_string(),
            });
        }
        let parts: Vec<&str> = l.split_whitespace().collect();
        if parts.len() != 3 {
            return Err(malformed(line, "entry", l, "expected `i j value`"));
        }
        let idx = |s: &str| s.parse::<usize>();
        let (i, j) = match (idx(parts[0]), idx(parts[1])) {
            (Ok(i), Ok(j)) => (i, j),
            _ => {
                return Err(malformed(
                    line,
                    "entry",
                    l,
                    "the indices must be positive integers",
                ))
            }
        };
        if i == 0 || j == 0 || i > n || j > n {
            return Err(TargetError::OutOfRange { line, i, j, n });
        }
        let v = parse_rational(parts[2])
            .map_err(|e| malformed(line, "entry value", l, &e.to_string()))?;
        if v <= 0 {
            return Err(TargetError::NotPositive {
                line,
                i,
                j,
                value: crate::kernel::abbreviate_literal(parts[2]),
            });
        }
        let row = rows.entry(i - 1).or_default();
        if let Some(&(_, _, first)) = row.iter().find(|e| e.0 == j - 1) {
            return Err(TargetError::Duplicate { line, i, j, first });
        }
        if row.len() == k {
            return Err(TargetError::TooManyInRow { line, i, k });
        }
        row.push((j - 1, v, line));
    }
    if count < nnz {
        return Err(TargetError::CountMismatch {
            line: last_line,
            size_line: sl,
            declared: nnz,
            found: format!("the file ends after {count}"),
        });
    }
    // the first row without entries (found within rows.len() + 1 steps)
    if let Some(i) = (0..n).find(|i| !rows.contains_key(i)) {
        return Err(TargetError::EmptyRow {
            line: sl,
            i: i + 1,
            n,
        });
    }
    let rows = rows
        .into_values()
        .map(|mut r| {
            r.sort_by_key(|e| e.0);
            r.into_iter().map(|(c, v, _)| (c, v)).collect()
        })
        .collect();
    Ok(Target { n, rows })
}

/// Writes a target in the format [`parse`] reads (values as exact fractions).
pub fn write(t: &Target) -> String {
    let nnz: usize = t.rows.iter().map(Vec::len).sum();
    let mut s = format!(
        "%%MatrixMarket matrix coordinate real general\n{} {} {nnz}\n",
        t.n, t.n
    );
    for (i, r) in t.rows.iter().enumerate() {
        for (j, v) in r {
            s += &format!("{} {} {v}\n", i + 1, j + 1);
        }
    }
    s
}

/// A one-line summary: n, nnz, the largest row support, the dynamic range ρ as
/// max_i max/min of the row's entries (exact ratio).
pub struct Summary {
    /// n.
    pub n: usize,
    /// Entries.
    pub nnz: usize,
    /// max_i |supp_i|.
    pub max_row_support: usize,
    /// max_i (max_{supp_i} A / min_{supp_i} A), exact; ρ = ln of it.
    pub max_ratio: Rational,
}

impl Summary {
    /// The summary of a target.
    pub fn of(t: &Target) -> Summary {
        let mut max_ratio = Rational::from(1);
        for r in &t.rows {
            let hi = r.iter().map(|e| &e.1).max();
            let lo = r.iter().map(|e| &e.1).min();
            if let (Some(hi), Some(lo)) = (hi, lo) {
                let q = Rational::from(hi / lo);
                if q > max_ratio {
                    max_ratio = q;
                }
            }
        }
        Summary {
            n: t.n,
            nnz: t.rows.iter().map(Vec::len).sum(),
            max_row_support: t.rows.iter().map(Vec::len).max().unwrap_or(0),
            max_ratio,
        }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "n = {}, {} nonzeros, at most {} per row, largest in-row ratio {}",
            self.n, self.nnz, self.max_row_support, self.max_ratio
        )
    }
}

/// Reads and parses a target file; errors name the file and the line
/// (`FILE:LINE: …`, also for bytes that are not UTF-8), for exit code 2.
pub fn load(path: &std::path::Path, k: usize) -> Result<Target, super::Error> {
    let text = crate::spec::read_utf8(path)?;
    parse(&text, k).map_err(|e| {
        super::Error::Usage(format!("{}:{}: {}", path.display(), e.line(), e.reason()))
    })
}

/// The numbers of `attncheck sparse construct`, exact: sparsity k, tolerance ε,
/// margin γ, range ρ (an upper bound of max_i ln(max_{supp_i} A / min_{supp_i} A))
/// and failure probability δ, with the corollary's t = ε/(2k(γ + ε + ρ)) and
/// Δ = γ + ε (sparse.md §3).
#[derive(Clone, Debug)]
pub struct ConstructParams {
    /// k.
    pub k: usize,
    /// ε.
    pub epsilon: Rational,
    /// γ.
    pub gamma: Rational,
    /// ρ.
    pub rho: Rational,
    /// δ.
    pub delta: Rational,
}

impl ConstructParams {
    /// Parses the exact literals and checks their ranges (k ≥ 1, ε > 0, γ > 0,
    /// ρ ≥ 0, 0 < δ < 1); errors name the option.
    pub fn parse(
        k: usize,
        epsilon: &str,
        gamma: &str,
        rho: &str,
        delta: &str,
    ) -> Result<ConstructParams, super::Error> {
        let num = |opt: &str, s: &str| {
            parse_rational(s).map_err(|e| super::Error::Usage(format!("--{opt}: {e}")))
        };
        let bad = |opt: &str, why: &str| Err(super::Error::Usage(format!("--{opt}: {why}")));
        let p = ConstructParams {
            k,
            epsilon: num("epsilon", epsilon)?,
            gamma: num("gamma", gamma)?,
            rho: num("rho", rho)?,
            delta: num("delta", delta)?,
        };
        if k == 0 {
            return bad("k", "must be at least 1");
        }
        if p.epsilon <= 0 {
            return bad("epsilon", "must be positive");
        }
        if p.gamma <= 0 {
            return bad("gamma", "must be positive");
        }
        if p.rho < 0 {
            return bad("rho", "must be nonnegative");
        }
        if p.delta <= 0 || p.delta >= 1 {
            return bad("delta", "must lie in (0, 1)");
        }
        Ok(p)
    }

    /// Δ = γ + ε.
    pub fn margin(&self) -> Rational {
        Rational::from(&self.gamma + &self.epsilon)
    }

    /// t = ε/(2k(γ + ε + ρ)), exact.
    pub fn t(&self) -> Rational {
        let s = Rational::from(&self.gamma + &self.epsilon) + &self.rho;
        &self.epsilon / (s * 2u32 * self.k as u64)
    }

    /// d = ⌈(2/t²)·ln(n²/δ)⌉, certified with intervals (`None` if the precision does
    /// not decide the ceiling).
    pub fn dimension(&self, n: usize, prec: u32) -> Option<u64> {
        use crate::kernel::Interval;
        let t = self.t();
        let n2 = Rational::from(n as u64 * n as u64);
        let ln = Interval::from_rational(prec, &(n2 / &self.delta)).ln();
        let c = Interval::from_rational(prec, &(Rational::from(2) / Rational::from(&t * &t)));
        let x = &c * &ln;
        let (lo, hi) = (x.lo().clone().ceil(), x.hi().clone().ceil());
        if x.is_finite() && lo == hi {
            lo.to_integer()?.to_u64()
        } else {
            None
        }
    }

    /// Checks that the target's dynamic range fits ρ: ln(max/min) ≤ ρ in every row,
    /// i.e. max/min ≤ e^ρ (certified; an undecided comparison is an error too).
    pub fn check_range(&self, t: &Target, prec: u32) -> Result<(), super::Error> {
        use crate::kernel::{Certainty, Interval};
        let s = Summary::of(t);
        let ratio = Interval::from_rational(prec, &s.max_ratio);
        let bound = Interval::from_rational(prec, &self.rho).exp();
        match ratio.le(&bound) {
            Certainty::True => Ok(()),
            _ => Err(super::Error::Usage(format!(
                "--rho {}: the target's largest in-row ratio {} exceeds e^ρ (ln of it ∈ {}); pass a larger --rho",
                self.rho,
                s.max_ratio,
                ratio.ln().fmt_outward(6)
            ))),
        }
    }
}

/// The rounding bound u = 2^−64 of the rational logits: |r̃_ij − ln(A_ij / min_{supp_i} A)| ≤ u.
const ROUND_EXP: i32 = 64;

/// The claim ID of `attncheck sparse construct` certificates (not a spec claim:
/// `verify` rebuilds their statement with [`rebuild_statement`]).
pub const CONSTRUCT_CLAIM: &str = "sparse/construct";

/// What `attncheck sparse construct` produces: the witness description (JSON) and
/// its certificate.
pub struct Construction {
    /// The witness: t*, d, W_Q/W_K, a summary of X, the logits B.
    pub witness: serde_json::Value,
    /// The statement [`rebuild_statement`] rebuilds, with its data and hints.
    pub certificate: crate::certificate::Certificate,
}

/// The rational logits B_ij = Δ + r̃_ij of a target, r̃_ij the midpoint of the
/// `prec`-bit enclosure of ln(A_ij / min_{supp_i} A) rounded to a multiple of
/// 2^−64 and clamped to [0, ρ] (0 exactly when the ratio is 1). Deterministic in
/// (A, Δ, ρ, prec), so [`rebuild_statement`] re-derives the same B; each r̃_ij is
/// then certified within u of the logarithm by the statement.
pub fn rational_logits(a: &Target, delta_m: &Rational, rho: &Rational, prec: u32) -> SparseRows {
    use crate::kernel::Interval;
    let scale = Integer::from(1) << ROUND_EXP as u32;
    let rows = a
        .rows
        .iter()
        .map(|r| {
            let m = r.iter().map(|e| &e.1).min().cloned().unwrap_or_default();
            r.iter()
                .map(|(c, v)| {
                    let ratio = Rational::from(v / &m);
                    let rt = if ratio == 1 {
                        Rational::new()
                    } else {
                        let x = Interval::from_rational(prec, &ratio).ln();
                        let mid = x.mid().to_rational().unwrap_or_default();
                        let q = Rational::from(&mid * &scale).round();
                        let q = Rational::from((q.numer().clone(), scale.clone()));
                        q.clamp(&Rational::new(), rho).clone()
                    };
                    (*c, Rational::from(delta_m + &rt))
                })
                .collect()
        })
        .collect();
    SparseRows { n: a.n, rows }
}

/// The hints of a construct certificate: the construction's parameters (k, ε, γ,
/// ρ, δ), the seed S was drawn from, n, d, the precision of the logits' rounding,
/// and t* (found by the search; a wrong value makes an obligation false).
fn construct_hints(
    p: &ConstructParams,
    n: usize,
    d: u64,
    seed: u64,
    logit_prec: u32,
    t_star: &Rational,
) -> crate::certificate::Hints {
    [
        ("k", p.k.to_string()),
        ("epsilon", p.epsilon.to_string()),
        ("gamma", p.gamma.to_string()),
        ("rho", p.rho.to_string()),
        ("delta", p.delta.to_string()),
        ("seed", seed.to_string()),
        ("n", n.to_string()),
        ("d", d.to_string()),
        ("logit_precision", logit_prec.to_string()),
        ("t_star", t_star.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The statement of a construction, built from the target A and the hints only:
/// A pinned as the datum `A` (its exact entries), B re-derived from A
/// ([`rational_logits`]), S redrawn from the seed; the deterministic lemma for
/// (S, B) ([`crate::sparse::construct::assert_lemma`]), A's shape, d from the
/// corollary's formula, t* ≤ t, 2η* + 2u ≤ ε, Δ − 2η* ≥ γ, the range
/// ln(A_ij / min A_i·) ≤ ρ and every rounding |r̃_ij − ln(A_ij / min A_i·)| ≤ u.
fn construct_statement(
    a: &Target,
    hints: &crate::certificate::Hints,
) -> Result<crate::kernel::Statement, super::Error> {
    use super::Error::Rebuild;
    use crate::kernel::expr::build::{
        abs, add, and, call, eq, exp, ge, gt, int, le, lit, ln, mul, q, sub, var,
    };
    use crate::kernel::expr::{Datum, SparseRows};
    use crate::sparse::construct::{assert_lemma, d_expr, t_of};
    use crate::sparse::sample::draw_signs;
    let get = |k: &str| {
        hints
            .get(k)
            .map(String::as_str)
            .ok_or_else(|| Rebuild(format!("the hint `{k}` is missing")))
    };
    let uint = |k: &str| {
        get(k)?
            .parse::<u64>()
            .map_err(|_| Rebuild(format!("hint `{k}` is not a nonnegative integer")))
    };
    let small =
        |k: &str| usize::try_from(uint(k)?).map_err(|e| Rebuild(format!("hint `{k}`: {e}")));
    let k = small("k")?;
    let p = ConstructParams::parse(
        k,
        get("epsilon")?,
        get("gamma")?,
        get("rho")?,
        get("delta")?,
    )
    .map_err(|e| Rebuild(format!("hints: {e}")))?;
    let seed = uint("seed")?;
    let n = small("n")?;
    let d = uint("d")?;
    let prec = uint("logit_precision")?;
    if !(24..=4096).contains(&prec) {
        return Err(Rebuild(
            "hint `logit_precision` must lie in 24..=4096".into(),
        ));
    }
    let prec = prec as u32; // in 24..=4096
    if !(1..=1 << 24).contains(&d) {
        return Err(Rebuild("hint `d` must lie in 1..=2^24".into()));
    }
    let t_star = crate::kernel::parse_rational(get("t_star")?)
        .map_err(|e| Rebuild(format!("hint `t_star`: {e}")))?;
    a.validate(p.k)
        .map_err(|e| Rebuild(format!("the target A: {e}")))?;
    if a.n != n {
        return Err(Rebuild(format!(
            "the target A is {0} × {0}, the hint n = {n}",
            a.n
        )));
    }
    let delta_m = p.margin();
    let b = rational_logits(a, &delta_m, &p.rho, prec);
    let s = draw_signs(n, d as usize, seed);
    let mut st = crate::kernel::Statement::new(CONSTRUCT_CLAIM);
    st.datum(
        "A",
        Datum::Sparse(SparseRows {
            n: a.n,
            rows: a.rows.clone(),
        }),
    );
    let (k, eps, gamma, rho) = (p.k, &p.epsilon, &p.gamma, &p.rho);
    let of_a = |op: &str| call(op, [var("A")]);
    st.state(
        format!("A is {n} × {n}, ≤ k = {k} positive entries per row"),
        &and([
            eq(of_a("rows"), n.into()),
            le(of_a("row-nnz-max"), k.into()),
            gt(of_a("entry-min"), int(0)),
        ]),
    );
    let u = || lit(format!("2^-{ROUND_EXP}"));
    let mut approx = Vec::new();
    for (ra, rb) in a.rows.iter().zip(&b.rows) {
        let m = ra.iter().map(|e| &e.1).min().cloned().unwrap_or_default();
        for ((_, v), (_, bv)) in ra.iter().zip(rb) {
            let ratio = Rational::from(v / &m);
            if ratio != 1 {
                let r = Rational::from(bv - &delta_m);
                approx.push(le(abs(sub(q(&r), ln(q(&ratio)))), u()));
            }
        }
    }
    let max_ratio = Summary::of(a).max_ratio;
    st.state(
        format!("ln(A_ij / min A_i·) ≤ ρ = {rho} in every row"),
        &le(q(&max_ratio), exp(q(rho))),
    );
    let t = p.t();
    st.state(
        "d = ⌈(2/t²)·ln(n²/δ)⌉".to_string(),
        &eq(d.into(), d_expr(n as u64, q(&t), q(&p.delta))),
    );
    assert_lemma(&mut st, s, b, &t_star, &delta_m, rho, k);
    st.state(
        format!("t* ≤ t = ε/(2k(γ + ε + ρ)) = {t}"),
        &le(t_of(var("S")), q(&t)),
    );
    let two_eta = || mul([int(2), t_of(var("S")), k.into(), add([q(&delta_m), q(rho)])]);
    st.state(
        "(a) for A: 2η* + 2u ≤ ε, η* = t*·k·(Δ + ρ), u = 2^−64",
        &le(add([two_eta(), mul([int(2), u()])]), q(eps)),
    );
    st.state(
        format!("(b) for A: Δ − 2η* ≥ γ = {gamma}"),
        &ge(sub(q(&delta_m), two_eta()), q(gamma)),
    );
    if !approx.is_empty() {
        st.state(
            format!(
                "every rounded logit: |r̃_ij − ln(A_ij / min A_i·)| ≤ 2^−64 ({} entries)",
                approx.len()
            ),
            &and(approx),
        );
    }
    Ok(st)
}

/// The statement of a `sparse construct` certificate, rebuilt from its hints and
/// the target A: with `target`, A is read from that Matrix Market file (so the
/// certificate must be about exactly that A); without, A is the certificate's own
/// datum `A` (pinned: B and S are re-derived from it and the seed, so a changed
/// sign, a moved support entry or swapped rows of B or S are rejected; a
/// certificate whose A itself was changed is a certificate about that other A).
/// `attncheck verify` requires the certificate's obligations and data to equal it.
pub fn rebuild_statement(
    cert: &crate::certificate::Certificate,
    target: Option<&std::path::Path>,
) -> Result<crate::kernel::Statement, super::Error> {
    use super::Error::Rebuild;
    use crate::kernel::expr::Datum;
    if cert.claim != CONSTRUCT_CLAIM {
        return Err(Rebuild(format!(
            "`{}` is not a `{CONSTRUCT_CLAIM}` certificate",
            cert.claim
        )));
    }
    let k = cert
        .hints
        .get("k")
        .and_then(|k| k.parse::<usize>().ok())
        .ok_or_else(|| Rebuild("the hint `k` is missing or not an integer".into()))?;
    let a = match target {
        Some(path) => load(path, k)?,
        None => {
            let entry = cert
                .data
                .get("A")
                .ok_or_else(|| Rebuild("the datum `A` (the target) is missing".into()))?;
            match entry
                .to_datum()
                .map_err(|(f, r)| Rebuild(format!("data.A.{f}: {r}")))?
            {
                Datum::Sparse(b) => Target {
                    n: b.n,
                    rows: b.rows,
                },
                _ => return Err(Rebuild("the datum `A` must be a sparse matrix".into())),
            }
        }
    };
    construct_statement(&a, &cert.hints)
}

/// Runs the construction of sparse.md §3 for a parsed target: d from the corollary,
/// S from `seed` (redrawn from seed + 1, … while 2η* + 2u > ε, at most `max_draws`
/// times), rational logits B ([`rational_logits`]), and the certificate: the
/// statement [`rebuild_statement`] rebuilds, decided by the kernel.
pub fn construct(
    a: &Target,
    p: &ConstructParams,
    seed: u64,
    max_draws: u64,
    prec: u32,
) -> Result<Construction, super::Error> {
    use crate::sparse::construct::Witness;
    use crate::sparse::sample::draw_signs;
    let usage = |s: String| super::Error::Usage(s);
    p.check_range(a, prec)?;
    let t = p.t();
    let d = p
        .dimension(a.n, prec)
        .ok_or_else(|| usage(format!("d = ⌈(2/t²)·ln(n²/δ)⌉ undecided at {prec} bits")))?;
    if d > 1 << 24 {
        return Err(usage(format!(
            "d = {d} is too large (ε too small or k, γ, ρ too large)"
        )));
    }
    // S holds n·d signs, one bit each; refuse before allocating more than 2^33 bits (1 GiB)
    if (a.n as u128) * u128::from(d) > 1 << 33 {
        return Err(usage(format!(
            "S would hold n·d = {} × {d} signs, more than 2^33 (ε too small or n too large)",
            a.n
        )));
    }
    let delta_m = p.margin();
    let u = Rational::from((1, Integer::from(1) << ROUND_EXP as u32));
    let b = rational_logits(a, &delta_m, &p.rho, prec);
    let two_u = Rational::from(&u * 2u32);
    let mut draws = 0u64;
    let (w, used) = loop {
        let s_seed = seed.wrapping_add(draws);
        draws += 1;
        let w = Witness::new(draw_signs(a.n, d as usize, s_seed), b.clone());
        let eta = Rational::from(&w.t_star * p.k as u64) * Rational::from(&delta_m + &p.rho);
        if Rational::from(&eta * 2u32) + &two_u <= p.epsilon {
            break (w, s_seed);
        }
        if draws >= max_draws {
            return Err(usage(format!(
                "no draw among seeds {seed}..{} gives 2η* + 2u ≤ ε (t* too large); try another --seed",
                seed.wrapping_add(draws)
            )));
        }
    };
    let eta_star = Rational::from(&w.t_star * p.k as u64) * Rational::from(&delta_m + &p.rho);
    let hints = construct_hints(p, a.n, d, used, prec, &w.t_star);
    let st = construct_statement(a, &hints).map_err(|e| usage(e.to_string()))?;
    let checked = crate::kernel::check(&st, prec).map_err(|e| usage(e.to_string()))?;
    if let Some(bad) = checked.decisions().iter().find(|d| !d.as_expected()) {
        return Err(usage(format!(
            "the construction's statement is not proven at {prec} bits: {} is {:?}",
            bad.name(),
            bad.result()
        )));
    }
    let cert = crate::certificate::Certificate::of(&st, crate::spec::Profile::Quick, prec, &hints);
    let nnz: usize = b.rows.iter().map(Vec::len).sum();
    let witness = serde_json::json!({
        "construction": "sparse.md §3, the project's explicit reconstruction of the Likhosherstov–Choromanski–Weller theorem [derived]",
        "target": Summary::of(a).to_string(),
        "n": a.n,
        "k": p.k,
        "epsilon": p.epsilon.to_string(),
        "gamma": p.gamma.to_string(),
        "rho": p.rho.to_string(),
        "delta": p.delta.to_string(),
        "Delta": delta_m.to_string(),
        "t": t.to_string(),
        "d": d,
        "D": 2 * d,
        "seed": used,
        "draws": draws,
        "t_star": w.t_star.to_string(),
        "t_star_f64": w.t_star.to_f64(),
        "eta_star": eta_star.to_string(),
        "rounding_bound_u": "2^-64",
        "W_Q": format!("(1/d)·[I_d; 0_d×d], 2d × d = {} × {d}", 2 * d),
        "W_K": format!("[0_d×d; I_d], 2d × d = {} × {d}", 2 * d),
        "X": {
            "shape": [a.n, 2 * d],
            "form": "X = [B S, S]: row i is (Σ_{l ∈ supp_i} B_il s_l, s_i)",
            "S": "in the certificate's data (bit-packed rows, bit 1 = −1)",
            "B_nonzeros": nnz,
        },
        "B_rows_0_based_columns": b.rows.iter().map(|r| r.iter().map(|(c, v)| (c, v.to_string())).collect::<Vec<_>>()).collect::<Vec<_>>(),
        "guarantee": "with C(t*) certified, every row of M = row-softmax(X W_Q W_Kᵀ Xᵀ) satisfies (a) |ln(M_ij/M_ij') − ln(A_ij/A_ij')| ≤ 2η* + 2u ≤ ε on the support and (b) ln(M_ij/M_ij') ≤ −(Δ − 2η*) ≤ −γ off it",
    });
    Ok(Construction {
        witness,
        certificate: cert,
    })
}
