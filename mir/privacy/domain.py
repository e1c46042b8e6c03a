"""Personal data in a prompt: what was found (kind and where, never logged), the prompt
with each value replaced by a placeholder, and the placeholders put back in an answer.

Pure: the recognizers (``recognizers``) find the spans; this module only rewrites text.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# What a route does with personal data before its prompt leaves (``routes[].pii``).
PiiPolicy = Literal["mask", "block", "allow"]
# Recognized kinds, in the order an overlap is settled (an IBAN's digits are no phone).
KINDS = ("email", "iban", "card", "phone", "person")

_PLACEHOLDER = re.compile(rf"<(?:{'|'.join(k.upper() for k in KINDS)})_\d+>")


class PiiSettings(BaseModel):
    """``[tool.mir.privacy]``: how personal data is recognized before a prompt leaves."""

    model_config = ConfigDict(extra="forbid")

    phone_region: str = Field(
        "US",
        pattern=r"^[A-Z]{2}$",
        description="Region (ISO 3166 alpha-2) whose national phone formats are recognized; "
        "numbers written with +country code are recognized in every region.",
    )


@dataclass(frozen=True)
class Finding:
    """One recognized value: ``text[start:end]`` is of ``kind``."""

    kind: str
    start: int
    end: int


@dataclass
class Masking:
    """Placeholders minted for one request: the same value always gets the same one, and
    no placeholder is text that was already in the prompt (an attacker's ``<EMAIL_1>``
    in the input is never "restored" into anything)."""

    taken: str = ""  # every original text, joined: placeholders must not occur in it
    values: dict[str, str] = field(default_factory=dict)  # placeholder -> original text
    _by_value: dict[tuple[str, str], str] = field(default_factory=dict)
    _next: Counter = field(default_factory=Counter)

    def placeholder(self, kind: str, value: str) -> str:
        known = self._by_value.get((kind, value))
        if known is not None:
            return known
        while True:
            self._next[kind] += 1
            token = f"<{kind.upper()}_{self._next[kind]}>"
            if token not in self.taken:
                break
        self._by_value[(kind, value)] = token
        self.values[token] = value
        return token

    def counts(self) -> dict[str, int]:
        """Distinct values masked, by kind (what a trace records: never the values)."""
        kinds = Counter(kind for kind, _ in self._by_value)
        return {kind: kinds[kind] for kind in KINDS if kinds[kind]}

    def mask(self, text: str, findings: list[Finding]) -> str:
        """``text`` with each finding replaced by its placeholder (``findings`` must not
        overlap: see ``settle``)."""
        out: list[str] = []
        at = 0
        for f in sorted(findings, key=lambda f: f.start):
            out += [text[at : f.start], self.placeholder(f.kind, text[f.start : f.end])]
            at = f.end
        out.append(text[at:])
        return "".join(out)

    def restore(self, text: str) -> tuple[str, int]:
        """``text`` with this request's placeholders put back as the original text, and
        how many were; any other placeholder-looking text is left as it is."""
        restored = 0

        def back(match: re.Match[str]) -> str:
            nonlocal restored
            value = self.values.get(match.group(0))
            if value is None:
                return match.group(0)
            restored += 1
            return value

        return _PLACEHOLDER.sub(back, text), restored


def settle(findings: list[Finding]) -> list[Finding]:
    """Non-overlapping findings: where two overlap, the kind earlier in ``KINDS`` wins,
    then the longer one."""
    rank = {kind: i for i, kind in enumerate(KINDS)}
    kept: list[Finding] = []
    for f in sorted(findings, key=lambda f: (rank[f.kind], -(f.end - f.start), f.start)):
        if all(f.end <= k.start or f.start >= k.end for k in kept):
            kept.append(f)
    return sorted(kept, key=lambda f: f.start)
