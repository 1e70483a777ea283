//! The certificate format as the kernel reads it (`certificate`): the data entries'
//! validation at each bound, a sign matrix's packed words to and from the file, the
//! reader's refusals (format, precision, obligations, formulas, data) naming the
//! field, the certificate's own statement, and the first difference from the
//! statement rebuilt from the spec. (The application's error lines and `verify` are
//! tested in tests/it.)

use attncheck_kernel::certificate::{self, Certificate, DataEntry, Profile, FORMAT, MAX_PRECISION};
use attncheck_kernel::expr::{Datum, SparseRows};
use attncheck_kernel::{check, Certainty, Expect, SignMatrix, Statement};
use rug::Rational;
use std::path::Path;

fn signs(n: usize, d: usize, rows: &[&str]) -> DataEntry {
    DataEntry::Signs {
        n,
        d,
        rows: rows.iter().map(|r| r.to_string()).collect(),
    }
}

/// The field a refused entry names.
fn refused(e: &DataEntry) -> String {
    match e.to_datum() {
        Ok(_) => panic!("{e:?} was accepted"),
        Err((field, _)) => field,
    }
}

#[test]
fn profiles_read_and_print_as_quick_and_full() {
    assert_eq!(Profile::Quick.as_str(), "quick");
    assert_eq!(Profile::Full.as_str(), "full");
    assert_eq!(Profile::Quick.to_string(), "quick");
    assert_eq!(Profile::Full.to_string(), "full");
    assert_eq!(Profile::default(), Profile::Quick);
    for p in [Profile::Quick, Profile::Full] {
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(json, format!("\"{p}\""));
        assert_eq!(serde_json::from_str::<Profile>(&json).unwrap(), p);
    }
}

#[test]
fn sign_entries_round_trip_through_their_packed_words() {
    // d = 130: three words per row, the last one partial; every sign drawn
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let s = SignMatrix::from_fn(5, 130, |_, _| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed & 1 == 1
    });
    let e = DataEntry::from_signs(&s);
    let DataEntry::Signs { n, d, rows } = &e else {
        panic!("{e:?}")
    };
    assert_eq!((*n, *d, rows.len()), (5, 130, 5));
    for (l, r) in rows.iter().enumerate() {
        assert_eq!(r.len(), 48);
        for c in 0..130 {
            // word w is written most significant digit first, bit c % 64 of word c / 64
            let w = u64::from_str_radix(&r[16 * (c / 64)..16 * (c / 64) + 16], 16).unwrap();
            assert_eq!(
                w >> (c % 64) & 1 == 1,
                s.sign(l, c) == -1,
                "row {l}, column {c}"
            );
        }
    }
    assert_eq!(e.to_datum().unwrap(), Datum::Signs(s.clone()));
    assert_eq!(DataEntry::from_datum(&Datum::Signs(s)), e);
    // one word: bit 0 of the last digit is column 0
    let one = signs(2, 3, &["0000000000000005", "0000000000000002"]);
    let Ok(Datum::Signs(m)) = one.to_datum() else {
        panic!()
    };
    assert_eq!(
        (0..2)
            .map(|l| (0..3).map(|c| m.sign(l, c)).collect::<Vec<_>>())
            .collect::<Vec<_>>(),
        [[-1, 1, -1], [1, -1, 1]]
    );
}

#[test]
fn sign_entries_are_refused_at_each_bound_naming_the_field() {
    let z = "0000000000000000";
    // n and d in 1..=2^24: 0 and 2^24 + 1 are refused for themselves; 2^24 passes the
    // bound (and is then refused for its rows)
    assert_eq!(refused(&signs(0, 3, &[])), "n");
    assert_eq!(refused(&signs((1 << 24) + 1, 3, &[z])), "n");
    assert_eq!(refused(&signs(1 << 24, 3, &[z])), "rows");
    assert_eq!(refused(&signs(1, 0, &[""])), "d");
    assert_eq!(refused(&signs(1, (1 << 24) + 1, &[z])), "d");
    assert_eq!(refused(&signs(1, 1 << 24, &[z])), "rows[0]");
    let full = "0".repeat(16 << 18);
    assert!(signs(1, 1 << 24, &[&full]).to_datum().is_ok());
    // the number of rows, the digits per row, hex, bits beyond d
    assert_eq!(refused(&signs(2, 3, &[z])), "rows");
    assert_eq!(refused(&signs(1, 3, &[z, z])), "rows");
    assert_eq!(refused(&signs(1, 65, &[z])), "rows[0]");
    assert_eq!(refused(&signs(2, 3, &[z, "000000000000000"])), "rows[1]");
    assert_eq!(refused(&signs(1, 3, &["000000000000000g"])), "rows[0]");
    assert_eq!(refused(&signs(1, 3, &["0000000000000008"])), "rows");
    assert!(signs(1, 3, &["0000000000000007"]).to_datum().is_ok());
    assert!(signs(1, 64, &["ffffffffffffffff"]).to_datum().is_ok());
    assert_eq!(
        refused(&signs(1, 65, &["ffffffffffffffff0000000000000002"])),
        "rows"
    );
    assert!(signs(1, 65, &["ffffffffffffffff0000000000000001"])
        .to_datum()
        .is_ok());
}

#[test]
fn sparse_entries_are_exact_and_refused_naming_the_field() {
    let e = DataEntry::Sparse {
        n: 2,
        rows: vec![vec![(0, "1/3".into()), (1, "-2".into())], vec![]],
    };
    let Ok(Datum::Sparse(b)) = e.to_datum() else {
        panic!()
    };
    assert_eq!(
        b,
        SparseRows {
            n: 2,
            rows: vec![
                vec![(0, Rational::from((1, 3))), (1, Rational::from(-2))],
                vec![]
            ]
        }
    );
    assert_eq!(DataEntry::from_sparse(&b), e);
    let bad = |rows: Vec<Vec<(usize, String)>>| refused(&DataEntry::Sparse { n: 2, rows });
    assert_eq!(
        bad(vec![vec![], vec![(0, "1".into()), (1, "x".into())]]),
        "rows[1][1][1]"
    );
    assert_eq!(bad(vec![vec![(2, "1".into())], vec![]]), "rows");
    assert_eq!(
        bad(vec![vec![(1, "1".into()), (0, "1".into())], vec![]]),
        "rows"
    );
    assert_eq!(bad(vec![vec![]]), "rows");
}

/// A layer entry of n tokens in d = 2 with one run, every matrix given.
fn layer(n: usize, q_rows: usize) -> DataEntry {
    layer_of(n, 2, q_rows, 1)
}

/// A layer entry of n tokens in dimension d, Q and K of m rows, and `runs` runs.
fn layer_of(n: usize, d: usize, m: usize, runs: usize) -> DataEntry {
    let row = || {
        (0..d)
            .map(|j| Rational::from((j as i64 % 3 - 1, j as i64 + 2)).to_string())
            .collect::<Vec<_>>()
    };
    DataEntry::Layer {
        form: "layer".into(),
        n,
        d,
        dt: "1/10".into(),
        steps: 2,
        q: vec![row(); m],
        k: vec![row(); m],
        v: vec![row(); d],
        tokens: vec![vec![row(); n]; runs],
    }
}

#[test]
fn layer_entries_are_refused_naming_the_field() {
    let ok = layer(3, 1);
    let d = ok.to_datum().unwrap();
    assert_eq!(DataEntry::from_datum(&d), ok);
    let with = |f: &dyn Fn(&mut DataEntry)| {
        let mut e = layer(3, 1);
        f(&mut e);
        refused(&e)
    };
    type F = Box<dyn Fn(&mut DataEntry)>;
    let mut cases: Vec<(F, &str)> = vec![
        (
            Box::new(|e| {
                if let DataEntry::Layer { form, .. } = e {
                    *form = "flow".into()
                }
            }),
            "form",
        ),
        (
            Box::new(|e| {
                if let DataEntry::Layer { dt, .. } = e {
                    *dt = "1/0".into()
                }
            }),
            "dt",
        ),
        (
            Box::new(|e| {
                if let DataEntry::Layer { q, .. } = e {
                    q.clear()
                }
            }),
            "q",
        ),
        (
            Box::new(|e| {
                if let DataEntry::Layer { k, .. } = e {
                    k.push(k[0].clone())
                }
            }),
            "k",
        ),
        (
            Box::new(|e| {
                if let DataEntry::Layer { v, .. } = e {
                    v.pop();
                }
            }),
            "v",
        ),
        (
            Box::new(|e| {
                if let DataEntry::Layer { v, .. } = e {
                    v[1].push("0".into())
                }
            }),
            "v[1]",
        ),
        (
            Box::new(|e| {
                if let DataEntry::Layer { q, .. } = e {
                    q[0][1] = "1/".into()
                }
            }),
            "q[0][1]",
        ),
        (
            Box::new(|e| {
                if let DataEntry::Layer { tokens, .. } = e {
                    tokens.clear()
                }
            }),
            "tokens",
        ),
        (
            Box::new(|e| {
                if let DataEntry::Layer { tokens, .. } = e {
                    tokens.push(tokens[0][..2].to_vec())
                }
            }),
            "tokens[1]",
        ),
        (
            Box::new(|e| {
                if let DataEntry::Layer { n, .. } = e {
                    *n = 0
                }
            }),
            "n",
        ),
        (
            Box::new(|e| {
                if let DataEntry::Layer { d, .. } = e {
                    *d = 0
                }
            }),
            "n",
        ),
        (
            Box::new(|e| {
                if let DataEntry::Layer { d, .. } = e {
                    *d = 65
                }
            }),
            "n",
        ),
    ];
    // every run has n rows, the n the entry declares (not only the same number)
    cases.push((
        Box::new(|e| {
            if let DataEntry::Layer { n, .. } = e {
                *n = 2
            }
        }),
        "tokens[0]",
    ));
    for (f, field) in cases {
        assert_eq!(with(&*f), field);
    }
    // n = 513 is refused before anything is parsed; q may have up to 512 rows
    assert_eq!(refused(&layer(513, 1)), "n");
    assert_eq!(refused(&layer(3, 513)), "q");
    assert!(layer(3, 512).to_datum().is_ok());
    assert!(layer(512, 1).to_datum().is_ok());
    // d in 1..=64, 1 to MAX_RUNS runs
    assert!(layer_of(2, 64, 1, 1).to_datum().is_ok());
    assert!(layer_of(2, 1, 1, 1).to_datum().is_ok());
    assert_eq!(refused(&layer_of(2, 65, 1, 1)), "n");
    assert_eq!(attncheck_kernel::layer_data::MAX_RUNS, 4);
    assert!(layer_of(2, 2, 1, 4).to_datum().is_ok());
    assert_eq!(refused(&layer_of(2, 2, 1, 5)), "tokens");
    // too many runs is refused on their count, before any run is read (a reader that
    // parsed them first would read a certificate of a million runs before refusing it):
    // a malformed fifth run is not what is reported
    type Runs = Vec<Vec<Vec<String>>>;
    let malformed: [fn(&mut Runs); 2] = [|t| t[4][0][0] = "x".into(), |t| drop(t[4].pop())];
    for bad in malformed {
        let mut e = layer_of(2, 2, 1, 5);
        if let DataEntry::Layer { tokens, .. } = &mut e {
            bad(tokens);
        }
        assert_eq!(refused(&e), "tokens", "{e:?}");
    }
}

fn cert(obligations: &[(&str, &str, Expect)]) -> Certificate {
    let mut st = Statement::new("group/claim");
    for (name, f, e) in obligations {
        st.assert(*name, *f);
        if *e == Expect::Fails {
            st.expect_fails(&[name.to_string()]).unwrap();
        }
    }
    st.datum(
        "S",
        Datum::Signs(SignMatrix::from_fn(3, 70, |l, c| (l + c) % 3 == 0)),
    );
    Certificate::of(&st, Profile::Full, 96, &Default::default())
}

fn text(c: &Certificate) -> String {
    serde_json::to_string_pretty(c).unwrap()
}

/// The field the reader refuses `c` for, after `edit` on its JSON.
fn parse_refuses(c: &Certificate, edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut v = serde_json::to_value(c).unwrap();
    edit(&mut v);
    match certificate::parse(Path::new("c.json"), &v.to_string()) {
        Ok(_) => panic!("accepted: {v}"),
        Err(e) => {
            assert_eq!(e.file, Path::new("c.json"));
            e.field
        }
    }
}

#[test]
fn a_certificate_reads_back_as_its_statement_and_decides_the_same() {
    let c = cert(&[
        ("max", "(<= (gram-max-abs S) 70)", Expect::Holds),
        ("not", "(< 1 0)", Expect::Fails),
    ]);
    assert_eq!(c.format, FORMAT);
    assert_eq!((c.profile, c.precision), (Profile::Full, 96));
    let read = certificate::parse(Path::new("c.json"), &text(&c)).unwrap();
    assert_eq!(read, c);
    let st = read.statement(Path::new("c.json")).unwrap();
    assert_eq!(st.claim, "group/claim");
    assert_eq!(st.data.len(), 1);
    assert!(matches!(st.data.get("S"), Some(Datum::Signs(s)) if s.n() == 3 && s.d() == 70));
    assert_eq!(
        st.obligations
            .iter()
            .map(|o| (o.name.as_str(), o.expect))
            .collect::<Vec<_>>(),
        [("max", Expect::Holds), ("not", Expect::Fails)]
    );
    let checked = check(&st, 96).unwrap();
    assert!(checked.as_expected());
    assert_eq!(checked.decisions()[0].result(), Certainty::True);
    assert_eq!(checked.decisions()[1].result(), Certainty::False);
    // without its datum the statement does not decide: the data are read, not assumed
    let mut no_data = read.clone();
    no_data.data.clear();
    assert!(check(&no_data.statement(Path::new("c.json")).unwrap(), 96).is_err());
}

#[test]
fn the_reader_refuses_naming_the_field() {
    let c = cert(&[("one", "(< 0 1)", Expect::Holds)]);
    assert!(certificate::parse(Path::new("c.json"), &text(&c)).is_ok());
    let set = |k: &'static str, x: serde_json::Value| move |v: &mut serde_json::Value| v[k] = x;
    assert_eq!(
        parse_refuses(&c, set("format", "attncheck-certificate/4".into())),
        "format"
    );
    assert_eq!(parse_refuses(&c, set("format", 5.into())), "format");
    assert_eq!(parse_refuses(&c, set("precision", 23.into())), "precision");
    assert_eq!(
        parse_refuses(&c, set("precision", (MAX_PRECISION + 1).into())),
        "precision"
    );
    assert_eq!(MAX_PRECISION, 16384);
    for p in [24, MAX_PRECISION] {
        let mut v = serde_json::to_value(&c).unwrap();
        v["precision"] = p.into();
        assert!(certificate::parse(Path::new("c.json"), &v.to_string()).is_ok());
    }
    assert_eq!(
        parse_refuses(&c, set("obligations", serde_json::json!([]))),
        "obligations"
    );
    assert_eq!(
        parse_refuses(&c, |v| v["obligations"][0]["formula"] = "(< 0".into()),
        "obligations[0].formula"
    );
    assert_eq!(
        parse_refuses(&c, |v| v["data"]["S"]["n"] = 0.into()),
        "data.S.n"
    );
    assert_eq!(
        parse_refuses(&c, |v| v["data"]["S"]["rows"][1] = "00".into()),
        "data.S.rows[1]"
    );
    let e = Certificate {
        data: Default::default(),
        ..c.clone()
    };
    assert!(certificate::parse(Path::new("c.json"), &text(&e)).is_ok());
    // the statement of a certificate whose data are bad is refused the same way
    let mut bad = c.clone();
    bad.data
        .insert("T".into(), signs(1, 3, &["0000000000000008"]));
    let err = bad.statement(Path::new("b.json")).unwrap_err();
    assert_eq!((err.field.as_str(), err.line), ("data.T.rows", None));
    assert_eq!(err.file, Path::new("b.json"));
}

#[test]
fn the_first_difference_from_the_rebuilt_statement_is_named() {
    let c = cert(&[
        ("a", "(< 0 1)", Expect::Holds),
        ("b", "(< 1 0)", Expect::Fails),
    ]);
    assert_eq!(c.statement_difference(&c), None);
    let diff = |f: &dyn Fn(&mut Certificate)| {
        let mut x = c.clone();
        f(&mut x);
        x.statement_difference(&c).expect("a difference")
    };
    assert!(
        diff(&|x| x.claim = "other/claim".into()).contains("`other/claim`, not of `group/claim`")
    );
    assert!(diff(&|x| x.obligations[1].name = "c".into()).contains("obligations[1] is named `c`"));
    assert!(diff(&|x| x.obligations[0].formula = "(< 0 2)".into())
        .contains("obligations[0] (a) has formula `(< 0 2)`"));
    assert!(diff(&|x| x.obligations[1].expect = Expect::Holds)
        .contains("obligations[1] (b) is marked `holds`, the statement says `fails`"));
    assert_eq!(
        diff(&|x| {
            x.obligations.pop();
        }),
        "it has 1 obligations, the statement has 2"
    );
    assert_eq!(
        diff(&|x| x.obligations.push(x.obligations[0].clone())),
        "it has 3 obligations, the statement has 2"
    );
    assert_eq!(
        diff(&|x| {
            x.data.clear();
        }),
        "datum `S` is missing"
    );
    assert_eq!(
        diff(&|x| {
            x.data
                .insert("T".into(), signs(1, 3, &["0000000000000000"]));
        }),
        "datum `T` is not part of the statement"
    );
    assert_eq!(
        diff(&|x| {
            if let Some(DataEntry::Signs { rows, .. }) = x.data.get_mut("S") {
                rows[2] = "f".repeat(32);
            }
        }),
        "datum `S` differs from the one the statement derives (first at row 2)"
    );
    assert_eq!(
        diff(&|x| {
            x.data
                .insert("S".into(), signs(1, 3, &["0000000000000000"]));
        }),
        "datum `S` differs from the one the statement derives (first at row 0)"
    );
    assert_eq!(
        diff(&|x| {
            x.data.insert(
                "S".into(),
                DataEntry::Sparse {
                    n: 1,
                    rows: vec![vec![]],
                },
            );
        }),
        "datum `S` differs from the one the statement derives (another kind)"
    );
    // a long formula is abbreviated to 117 characters and an ellipsis, a short one not
    let long = format!("(< 0 {})", "1".repeat(200));
    let d = diff(&|x| x.obligations[0].formula = long.clone());
    assert!(d.contains(&format!("`{}…`", &long[..117])), "{d}");
    let just = format!("(< 0 {})", "1".repeat(114));
    assert_eq!(just.len(), 120);
    assert!(diff(&|x| x.obligations[0].formula = just.clone()).contains(&format!("`{just}`")));
}

#[test]
fn sparse_and_layer_data_differences_name_the_row_or_field() {
    let sparse = |v: &str| DataEntry::Sparse {
        n: 2,
        rows: vec![vec![(0, "1".into())], vec![(1, v.into())]],
    };
    let mut st = Statement::new("g/c");
    st.assert("a", "(< 0 1)");
    let mut c = Certificate::of(&st, Profile::Quick, 64, &Default::default());
    c.data.insert("B".into(), sparse("2"));
    c.data.insert("L".into(), layer(3, 1));
    let mut x = c.clone();
    x.data.insert("B".into(), sparse("3"));
    assert_eq!(
        x.statement_difference(&c).unwrap(),
        "datum `B` differs from the one the statement derives (first at row 1)"
    );
    let mut x = c.clone();
    if let Some(DataEntry::Layer { dt, .. }) = x.data.get_mut("L") {
        *dt = "1/20".into();
    }
    assert_eq!(
        x.statement_difference(&c).unwrap(),
        "datum `L` differs from the one the statement derives (field `dt`)"
    );
}
