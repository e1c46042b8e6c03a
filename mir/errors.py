"""The error tree every capability shares (the only module outside a capability), and
the "did you mean ...?" helper of every hint that names a misspelt thing.

Two kinds of failure, kept apart on purpose (after pydantic-ai's UserError split):

* ``MirUserError`` -- the user can fix it: a bad name, a malformed contract, a missing
  file. The CLI prints ``error: <message>`` on one line (what, where, how to fix) and
  exits 2, with no traceback unless ``--debug``.
* anything else is a bug in mir and surfaces with its traceback.

Findings (lint violations, failed decisions, eval regressions) are *data*, never
exceptions: they are returned and rendered, and mapped to exit code 1.
"""

from __future__ import annotations

from collections.abc import Iterable

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


class MirError(Exception):
    """Base class of every error mir raises on purpose."""


class MirUserError(MirError):
    """A problem the user can fix; rendered as one line, exit code 2.

    ``where`` names the file (and line/field when known) so the message can say
    where to look; ``hint`` says how to fix it.
    """

    exit_code = EXIT_USAGE

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.where = where
        self.hint = hint

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.hint:
            text = f"{text} ({self.hint})"
        return text


class ConfigError(MirUserError):
    """Invalid ``[tool.mir]`` settings, contract, intent doc or other config file."""


class UsageError(MirUserError):
    """Invalid command-line input: names, paths, option combinations."""


def did_you_mean(value: object, known: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The known name closest to a misspelt ``value`` (difflib's ratio, at least
    ``cutoff``), or None: what every "did you mean ...?" hint of mir names. Each caller
    words the hint in its own message."""
    import difflib

    close = difflib.get_close_matches(str(value), list(known), n=1, cutoff=cutoff)
    return close[0] if close else None
