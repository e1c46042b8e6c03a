"""What the inbox pages show, computed without a web framework: page windows, ages and
times left, the text of a JSON value, and a reviewer's correction read from a form.

Pure (stdlib only): the pages' arithmetic and parsing are unit-tested here, the HTTP
side in ``app.py``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

PAGE_SIZE = 25
MAX_PAGE_SIZE = 200
# The decision fields a correction may not touch: the action is what was reviewed (a
# different action is a rejection and a new decision), the confidence is the model's.
FIXED_FIELDS = frozenset({"action", "confidence"})


@dataclass(frozen=True)
class PageWindow:
    """One page of a queue: which items (offset, limit) and the links around it."""

    number: int  # 1-based
    size: int
    total: int

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.size

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.size))

    @property
    def previous(self) -> int | None:
        return self.number - 1 if self.number > 1 else None

    @property
    def next(self) -> int | None:
        return self.number + 1 if self.number < self.pages else None

    @property
    def first_shown(self) -> int:
        return min(self.offset + 1, self.total)

    def last_shown(self, count: int) -> int:
        return self.offset + count


def page_number(raw: str | None) -> int:
    """The ``?page=`` of a request: a positive integer, anything else is page 1 (a
    hostile or mistyped link shows the first page rather than an error)."""
    if not _digits(raw, 9):
        return 1
    return max(1, int(raw))  # type: ignore[arg-type]


def page_size(raw: str | None) -> int:
    if not _digits(raw, 4):
        return PAGE_SIZE
    return min(max(1, int(raw)), MAX_PAGE_SIZE)  # type: ignore[arg-type]


def _digits(raw: str | None, most: int) -> bool:
    """ASCII digits only (``str.isdigit`` also accepts "²", which ``int`` refuses)."""
    return raw is not None and 0 < len(raw) <= most and raw.isascii() and raw.isdigit()


def duration(seconds: float | None) -> str:
    """``42s``, ``7m``, ``3h 5m``, ``2d 4h``; ``-`` for unknown."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    whole = int(max(seconds, 0))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m"
    if whole < 86400:
        hours, minutes = divmod(whole // 60, 60)
        return f"{hours}h {minutes}m" if minutes else f"{hours}h"
    days, hours = divmod(whole // 3600, 24)
    return f"{days}d {hours}h" if hours else f"{days}d"


def time_left(age_s: float | None, ttl_s: float | None) -> str:
    """What is left of a flow's TTL, ``no TTL`` when it has none."""
    if ttl_s is None:
        return "no TTL"
    if age_s is None:
        return duration(ttl_s)
    left = ttl_s - age_s
    return "expired" if left <= 0 else duration(left)


def instant(value: Any) -> str:
    """A time to the second (``2026-12-02 01:05:34+00:00``); text is shown as it is."""
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    return str(value)


def shown(value: Any) -> str:
    """A JSON value as the page prints it (strings as they are, the rest as JSON)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=str)


def confidence(value: Any) -> str:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return f"{value:.2f}" if ok else "-"


class CorrectionError(ValueError):
    """A correction form the page cannot turn into parameters (shown to the reviewer)."""


def correctable(decision: Mapping[str, Any] | None) -> dict[str, Any]:
    """The decision's fields a reviewer may correct, in the decision's order."""
    return {k: v for k, v in (decision or {}).items() if k not in FIXED_FIELDS}


def read_correction(
    decision: Mapping[str, Any] | None, form: Mapping[str, str], *, prefix: str = "set."
) -> dict[str, Any]:
    """The fields of ``decision`` the form changed (``set.<field>`` inputs), each typed
    like the proposal's value: a number stays a number, a string stays a string, and a
    list, object, boolean or null is read as JSON. An unchanged field is not part of the
    correction; a field the proposal does not have is refused."""
    fields = correctable(decision)
    changes: dict[str, Any] = {}
    for key, raw in form.items():
        if not key.startswith(prefix):
            continue
        name = key[len(prefix) :]
        if name not in fields:
            raise CorrectionError(f"the proposal has no field {name!r} a reviewer may correct")
        value = _typed(name, raw, fields[name])
        if value != fields[name] or type(value) is not type(fields[name]):
            changes[name] = value
    if not changes:
        raise CorrectionError("the correction changes no field: approve the proposal instead")
    return changes


def _typed(name: str, raw: str, like: Any) -> Any:
    if isinstance(like, str):
        return raw
    text = raw.strip()
    try:
        value = json.loads(text)
    except ValueError:
        raise CorrectionError(f"{name}: {text[:40]!r} is not a {_kind(like)}") from None
    if isinstance(like, bool) or like is None:
        return value
    if isinstance(like, int | float):
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value):
            raise CorrectionError(f"{name}: {text[:40]!r} is not a number")
        return value
    return value


def _kind(like: Any) -> str:
    if isinstance(like, bool):
        return "boolean"
    if isinstance(like, int | float):
        return "number"
    return "JSON value"
