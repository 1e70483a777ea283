"""The exceptions of attncheck: the Rust extension raises these, with the message the
command-line tool prints after ``attncheck: error:`` and the exit code it exits with."""

from typing import Optional


class AttncheckError(Exception):
    """Every error of attncheck. ``exit_code`` is the command-line tool's for the same
    error (2 bad input or usage, 4 a rejected certificate)."""

    exit_code = 2

    def __init__(self, message: str, exit_code: Optional[int] = None):
        super().__init__(message)
        self.message = message
        if exit_code is not None:
            self.exit_code = exit_code


class BadInput(AttncheckError):
    """Bad input or usage (exit 2): a malformed spec or certificate, an unknown claim, a
    file that cannot be read, an unknown profile. The message names the file, line and
    field where there is one."""


class FormulaError(BadInput):
    """A formula that does not parse or validate (exit 2): an unbalanced parenthesis, an
    unknown operator, an unbound name, a range over the work budget. ``offset`` is the
    byte offset in the formula, ``line`` and ``column`` (1-based) the position."""

    def __init__(
        self,
        message: str,
        exit_code: Optional[int] = None,
        offset: Optional[int] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
    ):
        super().__init__(message, exit_code)
        self.offset = offset
        self.line = line
        self.column = column


class CertificateRejected(AttncheckError):
    """``verify``: the certificate's statement is not its claim's statement (tampered,
    truncated, foreign); the command-line tool exits 4."""

    exit_code = 4


class Undefined(AttncheckError, ValueError):
    """``eval``: the term has no value (a partial operation met an argument outside its
    domain: ``(ln 0)``, ``(/ 1 0)``, ``(sqrt -1)``); ``attncheck eval`` exits 1. The
    message names the subterm and its position."""

    exit_code = 1


class CoqNotFound(AttncheckError):
    """``verify(…, coq=True)`` without ``coqc`` (with CoqInterval) on PATH (exit 2)."""


class InternalError(AttncheckError):
    """A bug in attncheck (a Rust panic), stopped at the border instead of aborting the
    interpreter. Please report it with the input that caused it."""

    exit_code = 101
