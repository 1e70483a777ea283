#!/usr/bin/env python3
"""Hostile sizes in every committed spec: each bare integer of each spec under theorems/
(seeds aside) is replaced, one at a time, by each of a few hostile values, and
`attncheck run` is started on the result under a time and a memory limit. Every run must end
with exit 0 or 1 (accepted and run) or 2 (refused, the field named); a signal, an abort or
a panic (exit 101) is a bug, and so is a timeout where the claim's own run is quick.

    scripts/hostile-spec-scan.py target/debug/attncheck            # every spec
    scripts/hostile-spec-scan.py BIN --only clusters/ --values 513,100000
    scripts/hostile-spec-scan.py BIN --skip trained-model,log-dimension --timeout 30
    scripts/hostile-spec-scan.py BIN --lists 1000,100000          # every array lengthened
    scripts/hostile-spec-scan.py BIN --tables 256                 # every [[...]] block repeated

One line per variant (`ok` or `BAD`, the exit status, spec:line, the line, the value, the
first line of the error). Claims whose committed quick run takes longer than the timeout
(log-dimension, trained-model-claims) time out on every value they accept: read their
`BAD rc=124` lines against that. Session 42's findings (d unbounded in the clusters
systems, trained-model jobs unbounded in work) are regression tests in tests/it/spec_errors.rs.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def bare_ints(line):
    """(start, end) of each integer literal outside strings and comments."""
    out, i, n, quote = [], 0, len(line), None
    while i < n:
        c = line[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
            i += 1
            continue
        if c in "\"'":
            quote = c
        elif c == "#":
            break
        elif c.isdigit() and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] in "_.-+")):
            j = i
            while j < n and (line[j].isdigit() or line[j] == "_"):
                j += 1
            if not (j < n and (line[j].isalpha() or line[j] == ".")):
                out.append((i, j))
            i = j
            continue
        i += 1
    return out


def variants(text):
    """(line number, line, start, end) of every integer worth replacing: not inside a
    multi-line string, not a seed."""
    inside = False
    for ln, line in enumerate(text.split("\n")):
        if line.count('"""') % 2 == 1:
            inside = not inside
            continue
        if inside or re.match(r"\s*seeds\s*=", line):
            continue
        for a, b in bare_ints(line):
            if not re.search(r"seed\s*=\s*$", line[:a]):
                yield ln, line, a, b


def arrays(text):
    """(line number, line, start, end) of every one-line array `[...]` worth lengthening
    (outermost brackets, outside strings and comments; seeds aside)."""
    inside = False
    for ln, line in enumerate(text.split("\n")):
        if line.count('"""') % 2 == 1:
            inside = not inside
            continue
        if inside or re.match(r"\s*seeds?\s*=", line):
            continue
        depth, start, quote = 0, None, None
        for i, c in enumerate(line):
            if quote:
                if c == quote:
                    quote = None
                continue
            if c in "\"'":
                quote = c
            elif c == "#":
                break
            elif c == "[":
                if depth == 0 and i > 0 and re.search(r"=\s*$", line[:i]):
                    start = i
                depth += 1
            elif c == "]":
                depth -= 1
                if depth == 0 and start is not None:
                    yield ln, line, start, i + 1
                    start = None


def table_blocks(text):
    """(first line, end line) of every `[[...]]` block: its header and the lines up to the
    next header."""
    lines = text.split("\n")
    heads = [i for i, l in enumerate(lines) if re.match(r"\s*\[", l)]
    for k, i in enumerate(heads):
        if lines[i].lstrip().startswith("[["):
            end = heads[k + 1] if k + 1 < len(heads) else len(lines)
            yield i, end


def lengthened(array, n):
    """`array` ("[a, b]") with its elements repeated cyclically to n entries."""
    body = array[1:-1].strip()
    parts, depth, cur, quote = [], 0, "", None
    for c in body:
        if quote:
            cur += c
            if c == quote:
                quote = None
            continue
        if c in "\"'":
            quote = c
        if c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur.strip())
    if not parts:
        return None
    return "[" + ", ".join(parts[i % len(parts)] for i in range(n)) + "]"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary", help="the attncheck binary (e.g. target/debug/attncheck)")
    ap.add_argument("--values", default="0,1000000000,4611686018427387904")
    ap.add_argument("--only", default="", help="only specs whose path contains this")
    ap.add_argument("--skip", default="", help="comma-separated parts of spec paths to leave out")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per run (default 60)")
    ap.add_argument("--memory", type=int, default=6, help="GiB of address space per run (default 6)")
    ap.add_argument("--lists", default="", help="instead of integers, lengthen every one-line "
                    "array to each of these lengths (comma-separated), repeating its entries")
    ap.add_argument("--tables", default="", help="instead of integers, repeat every [[...]] "
                    "block (an array of tables) to each of these counts (comma-separated)")
    args = ap.parse_args()
    binary = str(Path(args.binary).resolve())
    skip = [s for s in args.skip.split(",") if s]
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for spec in sorted((ROOT / "theorems").glob("*/*.toml")):
            rel = spec.relative_to(ROOT / "theorems")
            if args.only not in str(rel) or any(s in str(rel) for s in skip):
                continue
            text = spec.read_text()
            lines = text.split("\n")
            # every case: the spec's lines as changed, and how the report line names it
            cases = []
            if args.tables:
                for i, end in table_blocks(text):
                    for n in args.tables.split(","):
                        cases.append((lines[:i] + lines[i:end] * int(n) + lines[end:],
                                      f"{i + 1} {lines[i].strip()[:60]!r} x{n}"))
            else:
                edits = ([(ln, line, a, b, lengthened(line[a:b], int(n)))
                          for ln, line, a, b in arrays(text) for n in args.lists.split(",")]
                         if args.lists else
                         [(ln, line, a, b, v)
                          for ln, line, a, b in variants(text) for v in args.values.split(",")])
                for ln, line, a, b, v in edits:
                    if v is not None:
                        changed = lines[:]
                        changed[ln] = line[:a] + v + line[b:]
                        cases.append((changed, f"{ln + 1} {line.strip()[:60]!r} -> {v[:40]}"))
            for changed, label in cases:
                path = Path(tmp) / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("\n".join(changed))
                cmd = ["prlimit", f"--as={args.memory << 30}", "timeout", str(args.timeout),
                       binary, "run", str(path), "--out", str(Path(tmp) / "out")]
                p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
                ok = p.returncode in (0, 1, 2)
                bad += not ok
                err = p.stderr.strip().split("\n")
                first = next((l for l in err if re.search("error|panicked|memory", l)), err[-1])
                print(f"{'ok' if ok else 'BAD'} rc={p.returncode} {rel}:{label}: {first[:200]}",
                      flush=True)
    print(f"{bad} bad", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
