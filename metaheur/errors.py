"""Errors that are the user's to fix: the CLI prints them as one line and exits with status 2."""

from __future__ import annotations

import os


class MetaheurError(Exception):
    """A user-facing error (bad file, impossible option, missing device or compiler)."""


class InputFormatError(MetaheurError):
    """A malformed instance, solution or configuration file.

    The message names the file and, where it applies, the 1-based line: ``FILE:LINE: what``.
    """

    def __init__(self, path: str | os.PathLike | None, message: str, line: int | None = None):
        self.path = None if path is None else os.fspath(path)
        self.line = line
        self.reason = message
        where = self.path or "<input>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {message}")


class ArgumentTypeError(MetaheurError, TypeError):
    """An argument of the public API of a type it does not take (:mod:`metaheur.arguments`): a
    TypeError to Python, one line to the CLI."""


class ArgumentValueError(MetaheurError, ValueError):
    """An argument of the public API of the right type but a value it does not take."""


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (its whitespace runs, newlines included, made one space)."""
    return " ".join(str(exc).split())


def exception_line(exc: BaseException, first_line: bool = False) -> str:
    """An exception as one line: its type, then its message when it has one (``first_line``: only
    the message's first line, for messages that carry a remote traceback)."""
    text = str(exc).strip().splitlines()[:1] if first_line else [one_line(exc)]
    return f"{type(exc).__name__}: {text[0]}" if text and text[0] else type(exc).__name__
