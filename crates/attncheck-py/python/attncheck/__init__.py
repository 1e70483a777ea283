"""attncheck from Python: machine-checked verdicts for published theorems about
self-attention (docs/python.md).

- ``run(claim_or_spec_path, profile="quick", theorems=None, out=None)``: run a claim and
  get its report (verdict, checks, figures) as a :class:`Report` (a dict).
- ``verify(path, coq=False, theorems=None)``: re-check a certificate with the trusted
  kernel (and Coq).
- ``eval(term, precision=128)``: the exact value as a ``Fraction``, or a certified
  enclosure ``(lo, hi)`` of ``Fraction``s.
- ``prove(formula)``: decide a formula: ``True``, ``False``, or ``None`` when undecided.

Errors are the exceptions below, with the command-line tool's messages and exit codes.
The long computations release the GIL.
"""

from fractions import Fraction
import json
from os import PathLike, fspath
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _attncheck
from ._errors import (
    AttncheckError,
    BadInput,
    CertificateRejected,
    CoqNotFound,
    FormulaError,
    InternalError,
    Undefined,
)

__version__ = _attncheck.__version__
#: Whether this build runs the trained-model claim (the Rust ``lm`` feature); without
#: it positional/trained-model-claims reports ``inconclusive``.
HAS_LM = bool(_attncheck.LM)

__all__ = [
    "run",
    "verify",
    "eval",
    "prove",
    "window",
    "Report",
    "Value",
    "Proof",
    "AttncheckError",
    "BadInput",
    "FormulaError",
    "CertificateRejected",
    "CoqNotFound",
    "InternalError",
    "Undefined",
    "HAS_LM",
]

Path = Union[str, "PathLike[str]"]


class Report(dict):
    """One claim's report: exactly the JSON that ``attncheck run`` writes to
    ``reports/<paper>/<claim>.json`` (keys ``id``, ``verdict``, ``expected``,
    ``as_expected``, ``reason``, ``checks``, ``figures``, ``tables``, ``params``,
    ``notes``, …), plus attributes:

    - ``certificate``: the certificate (a dict, as ``<claim>.cert.json``) or ``None``;
    - ``markdown``: the Markdown report;
    - ``unexpected``: why the run is not as the spec expects, or ``None``;
    - ``files``: with ``out=``, the paths written.
    """

    certificate: Optional[Dict[str, Any]]
    markdown: str
    unexpected: Optional[str]
    files: Optional[Dict[str, Optional[str]]]

    @property
    def verdict(self) -> str:
        return self["verdict"]

    @property
    def checks(self) -> List[Dict[str, Any]]:
        return self["checks"]

    @property
    def figures(self) -> List[Dict[str, Any]]:
        return self["figures"]

    def __repr__(self) -> str:
        return f"<attncheck.Report {self.get('id')}: {self.get('verdict')}>"


def _report(entry: Dict[str, Any]) -> Report:
    r = Report(entry["report"])
    r.certificate = entry["certificate"]
    r.markdown = entry["markdown"]
    r.unexpected = entry["unexpected"]
    r.files = entry["files"]
    return r


def run(
    claim_or_spec_path: Union[str, "PathLike[str]"],
    profile: str = "quick",
    theorems: Optional[Path] = None,
    out: Optional[Path] = None,
) -> Union[Report, List[Report]]:
    """Run a claim as ``attncheck run`` does and return its :class:`Report`.

    ``claim_or_spec_path`` is a claim ID (``"positional/alibi-window"``), a paper name
    (``"positional"``: a list of reports, one per claim), or the path of a spec file
    (ending in ``.toml``, wherever it sits: a claim of your own written as formulas,
    docs/your-own-claims.md). Specs come from ``theorems`` when given, else
    ``./theorems`` when it exists, else the specs built into the module. Nothing is
    written unless ``out`` names a directory; then the reports, certificates and the
    index go there as with ``attncheck run --out``.

    A refuted or inconclusive verdict is a result, not an exception: look at
    ``report["verdict"]`` and ``report["as_expected"]``. Bad input raises
    :class:`BadInput` with the CLI's message.
    """
    target = fspath(claim_or_spec_path)
    if not isinstance(target, str):
        raise BadInput("the claim or spec path must be text, not bytes")
    doc = json.loads(
        _attncheck.run(
            target,
            profile,
            None if theorems is None else fspath(theorems),
            None if out is None else fspath(out),
        )
    )
    reports = [_report(c) for c in doc["claims"]]
    if target.endswith(".toml") or "/" in target.rstrip("/"):
        return reports[0]
    return reports


def verify(
    path: Path,
    coq: bool = False,
    theorems: Optional[Path] = None,
    *,
    no_spec: bool = False,
    target: Optional[Path] = None,
    formula: Optional[str] = None,
    coq_cpu_limit: Optional[int] = None,
    coq_memory_limit: Optional[int] = None,
    spec: Optional[Path] = None,
    model: Optional[Path] = None,
    config: Optional[Path] = None,
) -> Dict[str, Any]:
    """Re-check a certificate as ``attncheck verify --json`` (``--coq`` with ``coq=True``)
    does, and return its document: ``claim``, ``precision``, ``statement_checked``,
    ``result`` (``"certified"``, ``"disproven"``, ``"undecided"``, …), ``exit_code``
    (0, 1, 3 as the CLI's) and ``obligations`` (one dict each: ``name``, ``expect``,
    ``result``, ``as_expected``; with Coq also ``coq``, ``checker``, ``coq_reason``).

    The claim's statement is rebuilt from its spec and the certificate must carry
    exactly it: a tampered, truncated or foreign certificate raises
    :class:`CertificateRejected` (the CLI's exit 4). ``coq=True`` without ``coqc``
    raises :class:`CoqNotFound`.

    A certificate written from :func:`prove` (``Proof.certificate_json``) states the
    formula it carries; ``formula=`` requires it to state exactly that formula (the
    CLI's ``--formula``), else :class:`CertificateRejected`. ``target=`` is the CLI's
    ``--target`` (a ``sparse construct`` certificate), ``no_spec=True`` its
    ``--no-spec``. ``model=`` and ``config=`` (together) bind a :func:`window`
    certificate to your model file, as the CLI's ``--model`` and ``--config``.
    """
    if (model is None) != (config is None):
        raise BadInput("model= and config= go together (the model and the config that names its tensors)")
    return json.loads(
        _attncheck.verify(
            fspath(path),
            bool(coq),
            None if theorems is None else fspath(theorems),
            bool(no_spec),
            None if target is None else fspath(target),
            formula,
            coq_cpu_limit,
            coq_memory_limit,
            None if spec is None else fspath(spec),
            None if model is None else fspath(model),
            None if config is None else fspath(config),
        )
    )


def window(
    model: Path,
    config: Path,
    epsilon: str = "1/1000",
    precision: int = 128,
    out: Path = "window",
) -> Dict[str, Any]:
    """Certify the implicit window of every head of your own ALiBi model, as
    ``attncheck window MODEL --config CONFIG --json`` does: for every input, the
    attention mass a query puts on keys at distance >= w is at most ``epsilon``.

    ``model`` is a safetensors file (a pre-LayerNorm decoder with ALiBi, F32/F16/BF16
    weights); ``config`` a TOML file naming its tensors, heads, layers, layer-norm
    epsilon and slopes (docs/window.md). Returns the document: ``sha256`` of the
    weights, ``windows`` (one dict per layer and head: ``layer``, ``head``, ``slope``,
    ``delta_upper``, ``window``, ``bytes``), ``exit_code`` (0; 3 when the kernel left an
    obligation undecided, listed in ``undecided``: then nothing is written) and
    ``files``: the document and the certificate written to ``out``, which
    :func:`verify` re-checks (``model=`` and ``config=`` bind it to your file).
    Bad input raises :class:`BadInput` naming the file and the tensor or field.
    """
    return json.loads(
        _attncheck.window(fspath(model), fspath(config), epsilon, int(precision), fspath(out))
    )


class Value(tuple):
    """What :func:`eval` returns when the value is not exact: ``(lo, hi)``, the exact
    rational endpoints of the kernel's outward-rounded enclosure (``None`` for an
    infinite end, when the magnitude overflows), with ``precision`` (the bits it
    needed), ``settled`` (as narrow as asked; when not, ``note`` says why it stopped)."""

    precision: int
    settled: bool
    note: Optional[str]

    def __new__(
        cls,
        lo: Optional[Fraction],
        hi: Optional[Fraction],
        precision: int,
        settled: bool,
        note: Optional[str] = None,
    ):
        v = super().__new__(cls, (lo, hi))
        v.precision = precision
        v.settled = settled
        v.note = note
        return v

    @property
    def lo(self) -> Optional[Fraction]:
        return self[0]

    @property
    def hi(self) -> Optional[Fraction]:
        return self[1]

    def __repr__(self) -> str:
        return f"Value(lo={self[0]!r}, hi={self[1]!r}, precision={self.precision})"


def _fraction(text: Optional[str]) -> Optional[Fraction]:
    return None if text is None else Fraction(text)


def eval(  # noqa: A001 (the name the issue asks for; shadows the builtin in this module only)
    term: str,
    precision: int = 128,
    *,
    max_precision: int = 4096,
    digits: Optional[int] = None,
) -> Union[Fraction, Value]:
    """Evaluate a term of the certificate language (docs/certificate-format.md,
    "Formulas"), e.g. ``"(exp (* -2 (ln 3)))"``, as ``attncheck eval`` does.

    Returns the exact value as a ``fractions.Fraction`` when the term is rational (or a
    ``ceil``/``floor`` decided by an enclosure), else a :class:`Value` ``(lo, hi)`` of
    ``Fraction``s enclosing it, computed in outward-rounded interval arithmetic at
    ``precision`` bits, doubled up to ``max_precision`` until the relative width is at
    most 2⁻⁵³ (or 10⁻``digits``). A term with no value (``(ln 0)``, ``(/ 1 0)``) raises
    :class:`Undefined` (also a ``ValueError``); one that does not parse raises
    :class:`FormulaError` with its line and column.
    """
    v = json.loads(_attncheck.eval(term, precision, max_precision, digits))
    if v["kind"] == "exact":
        return Fraction(v["value"])
    if v["kind"] == "enclosure":
        return Value(
            _fraction(v["lo"]), _fraction(v["hi"]), v["precision"], v["settled"], v["note"]
        )
    raise Undefined(v["reason"] if v["settled"] else f"{v['reason']} ({v['note']})", v["exit_code"])


class Proof:
    """What :func:`prove` returns with ``details=True``: ``result`` (``True``,
    ``False`` or ``None`` when undecided), ``precision`` (the bits that decided it),
    ``reason`` (why undecided), ``formula`` (canonical text), ``certificate`` (a dict)
    and ``certificate_json`` (the text ``attncheck prove --cert`` writes: save it and
    :func:`verify` it, with ``coq=True`` to re-prove it in Coq)."""

    def __init__(self, doc: Dict[str, Any]):
        self.result: Optional[bool] = {"true": True, "false": False}.get(doc["result"])
        self.precision: int = doc["precision"]
        self.reason: Optional[str] = doc.get("reason")
        self.formula: str = doc["formula"]
        self.certificate_json: str = doc["certificate"]
        self.certificate: Dict[str, Any] = json.loads(doc["certificate"])
        self.exit_code: int = doc["exit_code"]

    def __bool__(self) -> bool:
        return self.result is True

    def __repr__(self) -> str:
        return f"Proof(result={self.result!r}, precision={self.precision})"


def prove(
    formula: str,
    *,
    details: bool = False,
    certificate: bool = False,
    precision: int = 128,
    max_precision: int = 4096,
) -> Union[Optional[bool], Proof]:
    """Decide a formula (a comparison, ``and``/``or``/``not``, ``forall``, …) with the
    trusted kernel, as ``attncheck prove`` does: ``True`` if it holds, ``False`` if it
    certifiably does not, ``None`` if it is undecided up to ``max_precision`` bits
    (never decided in floating point). With ``details=True`` or ``certificate=True``
    returns a :class:`Proof`: the precision, the reason when undecided, and the
    certificate."""
    doc = json.loads(_attncheck.prove(formula, precision, max_precision))
    p = Proof(doc)
    return p if (details or certificate) else p.result
