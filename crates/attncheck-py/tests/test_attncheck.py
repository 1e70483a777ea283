"""The Python binding's tests (`make python`, and `make test` in CI): each function of
the `attncheck` module, on the wheel installed into a fresh virtual environment.

Each test runs in its own temporary working directory, so the specs come from the
module itself (no ./theorems) and nothing may be written there unless asked."""

import json
import os
import re
import shutil
import subprocess
import threading
import time
from fractions import Fraction
from pathlib import Path

import pytest

import attncheck

REPO = Path(__file__).resolve().parents[3]
# a cheap claim with a certificate (a few CPU-seconds in the quick profile)
CLAIM = "positional/alibi-window"
# the command-line tool, when built (make test builds it), to compare messages with
CLI = os.environ.get("ATTNCHECK_BIN")


@pytest.fixture(autouse=True)
def in_empty_dir(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


@pytest.fixture(scope="module")
def claim_run(tmp_path_factory):
    """One run of CLAIM with out=, shared by the tests that need its files."""
    out = tmp_path_factory.mktemp("reports")
    cwd = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    try:
        report = attncheck.run(CLAIM, out=out)
    finally:
        os.chdir(cwd)
    return report, out


def cli(*args):
    """The command-line tool's exit code and stderr; fails without it (no silent skip)."""
    if not CLI or not Path(CLI).exists():
        pytest.fail(
            f"ATTNCHECK_BIN is {CLI!r}: the command-line tool to compare with is missing "
            "(scripts/test-wheel.sh builds it and sets it)"
        )
    p = subprocess.run([CLI, *args], capture_output=True, text=True)
    return p.returncode, p.stderr


# ---- eval ---------------------------------------------------------------------------


def test_eval_gives_exact_rationals_as_fractions():
    assert attncheck.eval("(+ 1/3 1/6)") == Fraction(1, 2)
    assert attncheck.eval("(* 2^-5 3)") == Fraction(3, 32)
    assert isinstance(attncheck.eval("7"), Fraction)


def test_eval_encloses_e_to_the_minus_2():
    v = attncheck.eval("(exp -2)")
    lo, hi = v
    assert isinstance(lo, Fraction) and isinstance(hi, Fraction)
    # e^-2 = 0.13533528323661269189399949497…: the enclosure meets the 21-digit bracket
    below, above = Fraction("0.135335283236612691893"), Fraction("0.135335283236612691894")
    assert lo <= above and below <= hi and lo <= hi
    assert hi - lo <= hi * Fraction(1, 2**53)
    assert v.precision >= 128 and v.settled and v.note is None


def test_eval_computes_the_issue_alibi_window():
    # the minimal window for m = 2^-5, Δ = 2, ε = 10^-3 (issue 26): ⌈ln((e²(1-ε)+ε)/ε)/m⌉
    w = attncheck.eval("(ceil (/ (ln (/ (+ (* (exp 2) (- 1 1/1000)) 1/1000) 1/1000)) 2^-5))")
    assert w == Fraction(286)


def test_eval_of_an_undefined_term_raises_never_a_value():
    for term in ["(ln 0)", "(/ 1 0)", "(sqrt -1)"]:
        with pytest.raises(attncheck.Undefined) as e:
            attncheck.eval(term)
        assert e.value.exit_code == 1
        assert isinstance(e.value, ValueError)


def test_a_bad_formula_raises_with_its_position():
    with pytest.raises(attncheck.FormulaError) as e:
        attncheck.eval("(+ 1\n   (frob 2))")
    assert e.value.line == 2 and e.value.column >= 4
    assert "frob" in str(e.value)
    assert e.value.exit_code == 2
    assert isinstance(e.value, attncheck.BadInput)
    with pytest.raises(attncheck.FormulaError) as e:
        attncheck.prove("(<= 1 (+ 2 3)")
    assert e.value.offset is not None


def test_hostile_formulas_raise_and_never_crash():
    deep = "(+ 1 " * 100_000 + "1" + ")" * 100_000
    for bad in ["", ")", "(", deep, "(sum i 0 1000000000000 (forall j 0 1000000000000 (<= i j)))", "1" * 100_000]:
        with pytest.raises(attncheck.AttncheckError):
            attncheck.prove(bad)


# ---- prove --------------------------------------------------------------------------


def test_prove_decides_a_true_and_a_false_formula():
    assert attncheck.prove("(<= (exp 1) 3)") is True
    assert attncheck.prove("(<= 3 (exp 1))") is False
    p = attncheck.prove("(< (sum k 1 100 (/ 1 (* k k))) (/ (* pi pi) 6))", details=True)
    assert p.result is True and p.precision >= 128


def test_prove_says_undecided_within_its_precision():
    # two equal irrationals compared strictly: no enclosure decides it
    p = attncheck.prove("(< (exp 1) (exp 1))", details=True, max_precision=512)
    assert p.result is None and p.exit_code == 3 and "512" in p.reason


def test_a_proof_certificate_verifies_and_a_changed_formula_is_rejected(tmp_path):
    formula = "(<= (sum k 1 50 (/ 1 (* k k))) 2)"
    p = attncheck.prove(formula, certificate=True)
    assert p.result is True and p.certificate["claim"] == "attncheck/formula"
    path = tmp_path / "bound.cert.json"
    path.write_text(p.certificate_json)
    v = attncheck.verify(path, formula=formula)
    assert v["result"] == "certified" and v["exit_code"] == 0
    with pytest.raises(attncheck.CertificateRejected) as e:
        attncheck.verify(path, formula="(<= (sum k 1 50 (/ 1 (* k k))) 3/2)")
    assert e.value.exit_code == 4


def test_a_false_formula_certificate_is_disproven(tmp_path):
    p = attncheck.prove("(<= (sum k 1 50 (/ 1 (* k k))) 3/2)", certificate=True)
    assert p.result is False and p.exit_code == 1
    path = tmp_path / "false.cert.json"
    path.write_text(p.certificate_json)
    v = attncheck.verify(path)
    assert v["result"] == "disproven" and v["exit_code"] == 1


# ---- run ----------------------------------------------------------------------------


def test_run_returns_the_report_and_writes_nothing(in_empty_dir):
    r = attncheck.run(CLAIM)
    assert isinstance(r, attncheck.Report)
    assert r["id"] == CLAIM and r.verdict == r["expected"] and r["as_expected"]
    assert r.verdict in ("certified", "supported", "refuted")
    assert r.checks and all(c["result"] in ("true", "false", "unknown") for c in r.checks)
    assert isinstance(r.figures, list)
    assert r.certificate is not None and r.certificate["claim"] == CLAIM
    assert r.markdown.startswith("#")
    assert r.unexpected is None and r.files is None
    assert list(in_empty_dir.iterdir()) == [], "run() wrote into the working directory"


def test_run_with_out_writes_what_the_cli_writes(claim_run):
    report, out = claim_run
    paper, name = CLAIM.split("/")
    written = json.loads((out / paper / f"{name}.json").read_text())
    assert written == dict(report)
    assert Path(report.files["certificate"]).exists()
    assert (out / "README.md").exists() and (out / "index.html").exists()


def test_run_of_a_spec_file_and_of_an_unknown_claim():
    spec = REPO / "theorems" / f"{CLAIM}.toml"
    if not spec.exists():
        pytest.fail(f"no checkout beside the tests: {spec} is missing")
    paper = Path("specs") / CLAIM.split("/")[0]
    paper.mkdir(parents=True)
    shutil.copy(spec, paper)
    r = attncheck.run(str(paper / spec.name))
    assert r["id"] == CLAIM and r["as_expected"]
    with pytest.raises(attncheck.BadInput) as e:
        attncheck.run("positional/no-such-claim")
    assert "no-such-claim" in str(e.value)
    with pytest.raises(attncheck.BadInput, match="unknown profile"):
        attncheck.run(CLAIM, profile="fastest")


FORMULAS_SPEC = """id = "mine/e-bound"
kind = "formulas"
title = "e is between 2.718 and 2.719"
statement = "A claim of one's own, written as formulas."
source = "the test"
provenance = ["derived"]
rigour = "certified"
expected = "certified"

[params]
lo = "2.718"
hi = "2.719"

[[obligations]]
name = "e is above lo"
formula = "(< {lo} (exp 1))"

[[obligations]]
name = "e is below hi"
formula = "(< (exp 1) {hi})"
"""


def test_a_claim_written_as_formulas_runs_and_verifies_against_its_spec(tmp_path):
    spec = Path("mine/e-bound.toml")
    spec.parent.mkdir()
    spec.write_text(FORMULAS_SPEC)
    out = tmp_path / "out"
    r = attncheck.run(str(spec), out=out)
    assert r["id"] == "mine/e-bound" and r["verdict"] == "certified" and r["as_expected"]
    cert = out / "mine" / "e-bound.cert.json"
    v = attncheck.verify(cert, spec=spec)
    assert v["result"] == "certified" and v["statement_checked"]
    # a weaker bound in the certificate is not the spec's statement
    tampered = tmp_path / "tampered.cert.json"
    tampered.write_text(cert.read_text().replace("(< (exp 1) 2.719)", "(< (exp 1) 3)"))
    with pytest.raises(attncheck.CertificateRejected):
        attncheck.verify(tampered, spec=spec)
    # a formula error names the file, the line, the obligation and the column
    spec.write_text(FORMULAS_SPEC.replace("(exp 1) {hi}", "(exq 1) {hi}"))
    with pytest.raises(attncheck.BadInput, match=r"e-bound.toml:20: .*column 4"):
        attncheck.run(str(spec))


def test_errors_carry_the_cli_message():
    with pytest.raises(attncheck.BadInput) as e:
        attncheck.run("positional/no-such-claim")
    code, stderr = cli("run", "positional/no-such-claim")
    assert code == e.value.exit_code == 2
    assert stderr.strip() == f"attncheck: error: {e.value}"


def test_run_releases_the_gil():
    ticks = 0
    done = threading.Event()

    def work():
        attncheck.run(CLAIM)
        done.set()

    t = threading.Thread(target=work)
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert ticks > 10


# ---- verify -------------------------------------------------------------------------


def test_verify_certifies_the_run_certificate(claim_run):
    report, _ = claim_run
    v = attncheck.verify(report.files["certificate"])
    assert v["claim"] == CLAIM and v["statement_checked"]
    assert v["exit_code"] == 0 and v["result"] in ("certified", "refuted, as the statement asserts")
    assert v["obligations"] and all(o["as_expected"] for o in v["obligations"])


def test_verify_rejects_a_tampered_certificate(claim_run, tmp_path):
    report, _ = claim_run
    cert = json.loads(Path(report.files["certificate"]).read_text())
    f = cert["obligations"][0]["formula"]
    # the first number of the first formula, changed
    i = next(i for i, ch in enumerate(f) if ch.isdigit())
    cert["obligations"][0]["formula"] = f[:i] + ("2" if f[i] != "2" else "3") + f[i + 1 :]
    bad = tmp_path / "tampered.cert.json"
    bad.write_text(json.dumps(cert, indent=2))
    with pytest.raises(attncheck.CertificateRejected) as e:
        attncheck.verify(bad)
    assert e.value.exit_code == 4
    assert "rejected" in str(e.value)
    code, stderr = cli("verify", str(bad))
    assert code == 4 and stderr.strip() == f"attncheck: error: {e.value}"


def test_verify_of_a_missing_file_is_bad_input(tmp_path):
    with pytest.raises(attncheck.BadInput):
        attncheck.verify(tmp_path / "nothing.cert.json")


def test_verify_with_coq(claim_run):
    if shutil.which("coqc") is None:
        with pytest.raises(attncheck.CoqNotFound):
            attncheck.verify(claim_run[0].files["certificate"], coq=True)
        return
    v = attncheck.verify(claim_run[0].files["certificate"], coq=True)
    assert v["exit_code"] == 0, v
    assert v["proven_by_coq"] + v["kernel_only"] == len(v["obligations"])
    assert all(o["checker"] in ("Coq + kernel", "kernel only") for o in v["obligations"])


# ---- the border ---------------------------------------------------------------------


def _safetensors(path, tensors):
    """Writes a safetensors file of F32 tensors {name: (shape, values)} by hand (the
    format: an 8-byte little-endian header length, the JSON header, the data)."""
    import struct

    header, data = {}, b""
    for name, (shape, values) in sorted(tensors.items()):
        raw = struct.pack(f"<{len(values)}f", *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    path.write_bytes(struct.pack("<Q", len(h)) + h + data)


WINDOW_CONFIG = """heads = 2
layers = 1
ln_eps = 1e-5
slopes = "paper"
[tensors]
embedding = "emb"
ln_gain = "ln.w"
ln_shift = "ln.b"
q_weight = "q.w"
k_weight = "k.w"
layout = "out-in"
"""


def test_window_certifies_a_model_and_verify_binds_it(tmp_path):
    d = 4
    val = lambda i: ((i * 37) % 17 - 8) / 16
    _safetensors(
        tmp_path / "m.safetensors",
        {
            "emb": ([256, d], [val(i) for i in range(256 * d)]),
            "ln.w": ([d], [1.0] * d),
            "ln.b": ([d], [0.0] * d),
            "q.w": ([d, d], [val(i + 3) for i in range(d * d)]),
            "k.w": ([d, d], [val(i + 5) for i in range(d * d)]),
        },
    )
    (tmp_path / "m.toml").write_text(WINDOW_CONFIG)
    doc = attncheck.window(tmp_path / "m.safetensors", tmp_path / "m.toml", out=tmp_path / "out")
    assert doc["exit_code"] == 0 and doc["undecided"] == []
    assert [w["slope"] for w in doc["windows"]] == ["2^-4", "2^-8"]
    assert all(w["window"] >= 1 and w["bytes"] for w in doc["windows"])
    cert = doc["files"]["certificate"]
    v = attncheck.verify(cert, model=tmp_path / "m.safetensors", config=tmp_path / "m.toml")
    assert v["exit_code"] == 0 and len(v["obligations"]) == 4
    # the CLI agrees, window for window
    code, _ = cli("window", str(tmp_path / "m.safetensors"), "--config", str(tmp_path / "m.toml"),
                  "--out", str(tmp_path / "cli"), "--json")
    assert code == 0
    assert json.loads((tmp_path / "cli" / "m.windows.json").read_text())["windows"] == doc["windows"]
    # a config naming a tensor the file does not hold: BadInput naming it
    (tmp_path / "bad.toml").write_text(WINDOW_CONFIG.replace('"k.w"', '"k.weight"'))
    with pytest.raises(attncheck.BadInput) as e:
        attncheck.window(tmp_path / "m.safetensors", tmp_path / "bad.toml", out=tmp_path / "bad")
    assert "k.weight" in str(e.value) and e.value.exit_code == 2
    assert not (tmp_path / "bad").exists()


def test_a_panic_becomes_an_exception_not_an_abort():
    with pytest.raises(attncheck.InternalError, match="deliberate panic"):
        attncheck._attncheck._panic_for_tests()
    # and the module still works afterwards
    assert attncheck.eval("(+ 1 1)") == 2


# ---- docs/python.md -----------------------------------------------------------------


def test_the_docs_example_runs_and_prints_what_its_comments_say(capsys):
    doc = REPO / "docs" / "python.md"
    if not doc.exists():
        pytest.fail(f"no checkout beside the tests: {doc} is missing")
    text = doc.read_text()
    start = text.index("```python\n", text.index("<!-- the block below runs as a test")) + len("```python\n")
    block = text[start : text.index("```\n", start)]
    exec(compile(block, str(doc), "exec"), {"__name__": "docs_example"})
    printed = capsys.readouterr().out.splitlines()
    expected = [
        line.split("#", 1)[1].strip()
        for line in block.splitlines()
        if line.lstrip().startswith("print(") and "#" in line
    ]
    shown = [p for p, line in zip(printed, [l for l in block.splitlines() if l.lstrip().startswith("print(")])
             if "#" in line]
    assert len(shown) == len(expected)
    for got, want in zip(shown, expected):
        # the comment up to a colon (an explanation may follow), "..." standing for any digits
        want = want.split(":", 1)[0].strip()
        pattern = re.escape(want).replace(re.escape("..."), ".*")
        assert re.fullmatch(pattern, got), f"printed {got!r}, the docs say {want!r}"


# ---- the wheel ----------------------------------------------------------------------


def test_gmp_and_mpfr_are_the_wheels_own_shared_libraries():
    """The LGPL libraries are separate, replaceable files in attncheck.libs/, and they are
    what the extension loaded (not a system copy, not compiled into the extension)."""
    libs = Path(attncheck.__file__).resolve().parent.parent / "attncheck.libs"
    names = sorted(p.name for p in libs.iterdir())
    assert any(n.startswith("libgmp-") and ".so.10" in n for n in names), names
    assert any(n.startswith("libmpfr-") and ".so.6" in n for n in names), names
    attncheck.eval("(exp 1)")
    maps = Path("/proc/self/maps")
    if maps.exists():
        loaded = {line.split()[-1] for line in maps.read_text().splitlines() if "libgmp" in line or "libmpfr" in line}
        assert loaded and all(str(libs) in p for p in loaded), loaded
