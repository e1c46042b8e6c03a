"""Secrets never reach a trace file: every string is scrubbed before it is written.

Three sources of secrets, all replaced by ``[REDACTED]``:

* values of environment variables the project names (``[tool.mir.traces] redact_env``)
  and of every variable whose *name* says it is a secret (``*_API_KEY``, ``*_TOKEN``,
  ``*_SECRET``, ``*_PASSWORD``);
* explicit values the caller passes (e.g. a key read from a vault);
* shapes secrets have whatever their origin: ``Bearer <token>``, ``sk-...`` API keys,
  GitHub / Slack / AWS access keys.

Redaction works on decoded values (each string, each dict key, recursively), never on
serialized JSON text: a blind text substitution could match across JSON syntax (a
numeric secret matching a token count) and corrupt the line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[REDACTED]"
SECRET_NAME_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
# Values shorter than this are not redacted as literals: scrubbing "1" or "dev" from
# every trace would destroy the record without protecting anything worth protecting.
MIN_SECRET_LENGTH = 6

_TOKEN_CHARS = r"[A-Za-z0-9._~+/=-]"
SECRET_SHAPES = (
    # Bearer, bearer, BEARER: the casings in use (HTTP scheme names are case-insensitive,
    # but a full case-insensitive pre-check would cost a lowercase copy of every line).
    rf"(?:[Bb]earer|BEARER)\s+{_TOKEN_CHARS}{{8,}}",
    r"\bsk-[A-Za-z0-9_-]{16,}",
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",
    r"\bxox[abprs]-[A-Za-z0-9-]{10,}",
    r"\bAKIA[0-9A-Z]{16}\b",
)
# Substrings every SECRET_SHAPES match contains (kept next to them: change both together;
# a unit test checks each shape against them).
SHAPE_MARKERS = ("earer", "EARER", "sk-", "xox", "AKIA")
_GITHUB_MARKER = re.compile(r"gh[pousr]_")  # literal prefix "gh": one C-speed scan


def secret_env_values(environ: Mapping[str, str], names: Iterable[str]) -> list[str]:
    """Values of the named variables plus every variable whose name marks it secret."""
    wanted = set(names)
    return [
        value
        for name, value in environ.items()
        if value and (name in wanted or name.upper().endswith(SECRET_NAME_SUFFIXES))
    ]


class Redactor:
    """Replaces secrets in strings and nested JSON-like values."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        literals = sorted({v for v in values if len(v) >= MIN_SECRET_LENGTH}, key=len, reverse=True)
        parts = [re.escape(v) for v in literals] + list(SECRET_SHAPES)
        self._pattern = re.compile("|".join(parts))
        # The pre-check runs on every event, so it is plain substring search (C speed,
        # ~20x cheaper than the regex): each literal as it appears raw and inside JSON
        # text, and a marker of every shape. A hit only means "run the regex".
        # Escaped twice too: ``data`` is JSON text inside the JSON line.
        escaped = {json.dumps(v, ensure_ascii=False)[1:-1] for v in literals}
        twice = {json.dumps(v, ensure_ascii=False)[1:-1] for v in escaped}
        self._literals = tuple(set(literals) | escaped | twice)

    def text(self, value: str) -> str:
        return self._pattern.sub(REDACTED, value)

    def might_contain(self, text: str) -> bool:
        """False means no secret is in ``text`` (a string or JSON text): skip the walk."""
        # Plain loops and `in`: the cheapest scans CPython has (this runs on every event).
        for literal in self._literals:
            if literal in text:
                return True
        for marker in SHAPE_MARKERS:
            if marker in text:
                return True
        return _GITHUB_MARKER.search(text) is not None

    def value(self, value: Any) -> Any:
        """Recursively redact every string and dict key of a JSON-like value."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value
