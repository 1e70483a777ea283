#!/bin/sh
# The size of the trusted kernel (README.md, "Size"): every line of src/*.rs and src/*/*.rs, split
# into unit tests (the #[cfg(test)] modules and files named tests.rs), comment lines, blank lines and code,
# per file and in total.
cd "$(dirname "$0")/src" || exit 1
awk '
  FNR == 1 { skip = ""; files[++nf] = FILENAME }
  { all[FILENAME]++ }
  FILENAME ~ /(^|\/)tests\.rs$/ { tests[FILENAME]++; next }
  skip != "" { tests[FILENAME]++; if ($0 == skip) skip = ""; next }
  /^[ \t]*#\[cfg\(test\)\]/ { match($0, /^[ \t]*/); skip = substr($0, 1, RLENGTH) "}"; tests[FILENAME]++; next }
  /^[ \t]*$/ { blank[FILENAME]++; next }
  /^[ \t]*\/\// { comment[FILENAME]++; next }
  { code[FILENAME]++ }
  END {
    printf "%-18s %6s %6s %6s %6s %6s\n", "file", "lines", "tests", "comm.", "blank", "code"
    for (i = 1; i <= nf; i++) {
      f = files[i]
      printf "%-18s %6d %6d %6d %6d %6d\n", f, all[f], tests[f], comment[f], blank[f], code[f]
      A += all[f]; T += tests[f]; C += comment[f]; B += blank[f]; K += code[f]
    }
    printf "%-18s %6d %6d %6d %6d %6d\n", "total", A, T, C, B, K
  }' *.rs */*.rs
