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
    rf"(?i:bearer)\s+{_TOKEN_CHARS}{{8,}}",
    r"\bsk-[A-Za-z0-9_-]{16,}",
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",
    r"\bxox[abprs]-[A-Za-z0-9-]{10,}",
    r"\bAKIA[0-9A-Z]{16}\b",
)
# Lower-cased literal starts of SECRET_SHAPES (kept next to them: change both together).
SHAPE_PREFIXES = ("bearer", "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "xox", "akia")


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
        # text, and the fixed prefix of every shape. A hit only means "run the regex".
        # Escaped twice too: ``data`` is JSON text inside the JSON line.
        escaped = {json.dumps(v, ensure_ascii=False)[1:-1] for v in literals}
        twice = {json.dumps(v, ensure_ascii=False)[1:-1] for v in escaped}
        self._literals = tuple(set(literals) | escaped | twice)
        self._prefixes = SHAPE_PREFIXES

    def text(self, value: str) -> str:
        return self._pattern.sub(REDACTED, value)

    def might_contain(self, text: str) -> bool:
        """False means no secret is in ``text`` (a string or JSON text): skip the walk."""
        for literal in self._literals:  # plain loops: a generator costs more than the test
            if literal in text:
                return True
        lowered = text.lower()
        return any(prefix in lowered for prefix in self._prefixes)

    def value(self, value: Any) -> Any:
        """Recursively redact every string and dict key of a JSON-like value."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value
