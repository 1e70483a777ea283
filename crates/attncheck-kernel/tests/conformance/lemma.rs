//! The sparse-lemma data operations (expr/data.rs: `err-max`, `lemma-a`, `lemma-b`,
//! `lemma-a-row`, `lemma-b-row`) against their definitions computed naively over the
//! rationals: G = S Sᵀ, Λ_ij = (1/d) Σ_l B_il G_lj, E_ij = Λ_ij − B_ij, and per row i
//! A_i = max over j, j' in the support of E_ij − E_ij', B_i = max over j outside it and
//! j' inside of Λ_ij − Λ_ij', e_i = max_j |E_ij|. The rows are drawn twice: with small
//! numerators over their common denominator (the kernel's i64 path) and with numerators
//! past 2⁶³ (its big-integer path, which no kernel test reached: expr/data.rs's four
//! mutants of line 61 lived).

use crate::common::SplitMix64;
use attncheck_kernel::expr::{eval_exact, Data, Datum, SparseRows};
use attncheck_kernel::SignMatrix;
use rug::{Integer, Rational};

/// Per row: (A_i, B_i, e_i, the row's sum).
type Row = (Rational, Option<Rational>, Rational, Rational);

struct Instance {
    /// S as ±1 entries.
    s: Vec<Vec<i64>>,
    /// B's rows (column, value), columns increasing.
    b: Vec<Vec<(usize, Rational)>>,
}

impl Instance {
    fn draw(seed: u64, n: usize, d: usize, big: bool) -> Instance {
        let mut g = SplitMix64::new(seed);
        let s: Vec<Vec<i64>> = (0..n)
            .map(|_| {
                (0..d)
                    .map(|_| if g.below(2) == 0 { 1 } else { -1 })
                    .collect()
            })
            .collect();
        let b = (0..n)
            .map(|i| {
                // supports of every size, the empty and the full one included
                let size = match i % 4 {
                    0 => n,
                    1 if i == 1 => 0,
                    _ => 1 + g.below(n as u64 - 1) as usize,
                };
                let mut cols: Vec<usize> = (0..n).collect();
                for k in 0..n {
                    cols.swap(k, k + g.below((n - k) as u64) as usize);
                }
                let mut row: Vec<(usize, Rational)> = cols[..size]
                    .iter()
                    .map(|&c| {
                        let num = g.below(19) as i64 - 9;
                        let den = 1 + g.below(12) as i64;
                        let mut v = Rational::from((num, den));
                        if big {
                            // a numerator past 2⁶³ once over the common denominator
                            v += Rational::from((Integer::from(1) << 70u32, 7 + 2 * c as i64));
                        }
                        (c, v)
                    })
                    .collect();
                row.sort_by_key(|(c, _)| *c);
                row
            })
            .collect();
        Instance { s, b }
    }

    fn data(&self) -> Data {
        let (n, d) = (self.s.len(), self.s[0].len());
        let signs = SignMatrix::from_fn(n, d, |l, c| self.s[l][c] < 0);
        let sparse = SparseRows {
            n,
            rows: self.b.clone(),
        };
        sparse.validate().unwrap();
        let mut data = Data::new();
        data.insert("S".into(), Datum::Signs(signs));
        data.insert("B".into(), Datum::Sparse(sparse));
        data
    }

    /// Per row: (A_i, B_i, e_i, the row's sum), by the definitions.
    fn rows(&self) -> Vec<Row> {
        let (n, d) = (self.s.len(), self.s[0].len() as i64);
        let g = |l: usize, j: usize| -> i64 {
            (0..self.s[0].len())
                .map(|c| self.s[l][c] * self.s[j][c])
                .sum()
        };
        self.b
            .iter()
            .map(|row| {
                let bij = |j: usize| {
                    row.iter()
                        .find(|(c, _)| *c == j)
                        .map_or(Rational::new(), |(_, v)| v.clone())
                };
                let lam = |j: usize| -> Rational {
                    row.iter()
                        .map(|(l, v)| Rational::from(v * g(*l, j)))
                        .sum::<Rational>()
                        / d
                };
                let e = |j: usize| lam(j) - bij(j);
                let sum: Rational = row.iter().map(|(_, v)| v.clone()).sum();
                if row.is_empty() {
                    return (Rational::new(), None, Rational::new(), sum);
                }
                let inside: Vec<usize> = row.iter().map(|(c, _)| *c).collect();
                let outside: Vec<usize> = (0..n).filter(|j| !inside.contains(j)).collect();
                let es: Vec<Rational> = inside.iter().map(|&j| e(j)).collect();
                let a = Rational::from(es.iter().max().unwrap() - es.iter().min().unwrap());
                let lam_in = inside.iter().map(|&j| lam(j)).min().unwrap();
                let b = outside.iter().map(|&j| lam(j)).max().map(|m| m - &lam_in);
                let abs_e = (0..n).map(|j| e(j).abs()).max().unwrap();
                (a, b, abs_e, sum)
            })
            .collect()
    }
}

fn op(data: &Data, text: &str) -> Option<Rational> {
    eval_exact(text, 128, data).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn the_lemma_operations_are_their_definitions_on_both_paths() {
    let t = Rational::from((1, 7));
    for big in [false, true] {
        for seed in 0..12u64 {
            let n = 2 + (seed % 5) as usize;
            let d = 1 + (seed * 7 % 70) as usize;
            let inst = Instance::draw(seed, n, d, big);
            let data = inst.data();
            let rows = inst.rows();
            let max = |f: &dyn Fn(&Row) -> Option<Rational>| rows.iter().filter_map(f).max();
            let two_t = |s: &Rational| Rational::from(2 * &t) * s;
            let want = [
                ("(err-max S B)", max(&|r| Some(r.2.clone()))),
                ("(lemma-a S B)", max(&|r| Some(r.0.clone()))),
                ("(lemma-b S B)", max(&|r| r.1.clone())),
                (
                    "(lemma-a-row S B 1/7)",
                    max(&|r| Some(r.0.clone() - two_t(&r.3))),
                ),
                (
                    "(lemma-b-row S B 1/7)",
                    max(&|r| r.1.as_ref().map(|b| b.clone() - two_t(&r.3))),
                ),
            ];
            for (text, want) in want {
                match want {
                    Some(w) => assert_eq!(
                        op(&data, text),
                        Some(w),
                        "{text}, seed {seed}, n {n}, d {d}, big {big}"
                    ),
                    // no row has a j outside its support and one inside
                    None => assert!(eval_exact(text, 128, &data).is_err(), "{text}"),
                }
            }
        }
    }
}

/// The big path is the one the drawn rows take: some numerator over the common
/// denominator is past i64 (else the test above would not reach it).
#[test]
fn the_big_rows_have_numerators_past_i64() {
    let inst = Instance::draw(3, 5, 9, true);
    let past = inst.b.iter().any(|row| {
        let den = row
            .iter()
            .fold(Integer::from(1), |acc, (_, v)| acc.lcm(v.denom()));
        row.iter().any(|(_, v)| {
            (v.numer() * Integer::from(&den / v.denom()))
                .to_i64()
                .is_none()
        })
    });
    assert!(past);
}

/// `sandwich-centred` takes an exact integer r: 1/2 is an error, not r = 1 (its
/// numerator; expr/data.rs's guard `q.denom() == 1` replaced by `true` lived).
#[test]
fn sandwich_centred_refuses_a_fractional_r() {
    let data = Data::new();
    assert!(eval_exact("(sandwich-centred 64 0 1/2)", 128, &data).is_err());
    assert!(attncheck_kernel::expr::eval_with("(sandwich-centred 64 0 1/2)", 128, &data).is_err());
    assert!(attncheck_kernel::expr::eval_with("(sandwich-centred 64 0 1)", 128, &data).is_ok());
}
