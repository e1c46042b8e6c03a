"""Window options: by time (``--window 24h --reference 7d``), by count (``--last 500
--reference-last 5000``) or against a frozen reference (``--reference NAME``)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict

from mir.errors import UsageError

_DURATION = re.compile(r"^(\d+)(s|m|h|d|w)$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
DEFAULT_WINDOW = "24h"
DEFAULT_REFERENCE = "7d"


# Windows reach back from now: a century is more than any trace store holds, and
# datetimes end at year 1 (a longer span was a traceback, not a usage error).
_LONGEST = timedelta(days=36_525)


def parse_duration(text: str, option: str) -> timedelta:
    """'90s', '15m', '24h', '7d', '2w' -> timedelta; anything else is a usage error."""
    match = _DURATION.match(text.strip())
    if not match or int(match.group(1)) == 0:
        raise UsageError(
            f"bad {option} {text!r}: expected a positive number and a unit (s, m, h, d, w)",
            hint=f"e.g. {option} 24h",
        )
    try:
        span = timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
    except OverflowError:  # beyond what a timedelta holds
        span = _LONGEST * 2
    if span > _LONGEST:
        raise UsageError(f"bad {option} {text!r}: longer than 100 years", hint=f"e.g. {option} 24h")
    return span


def is_duration(text: str) -> bool:
    return bool(_DURATION.match(text.strip()))


class WindowOptions(BaseModel):
    """What the command line asked for; ``now`` pins the clock (tests, reproducible runs)."""

    model_config = ConfigDict(frozen=True)

    window: str | None = None
    reference: str | None = None  # a duration, or the name of a frozen reference
    last: int | None = None
    reference_last: int | None = None
    now: datetime | None = None
    # Grade the contract's drift rubrics with the judge (`--rubrics`): it calls a model.
    rubrics: bool = False

    def check(self) -> None:
        if self.last is not None and self.last < 1:
            raise UsageError("bad --last: expected a positive number of decisions")
        if self.reference_last is not None and self.reference_last < 1:
            raise UsageError("bad --reference-last: expected a positive number of decisions")
        if self.last is not None and self.window is not None:
            raise UsageError("--window and --last both choose the current window: give one")
        if self.reference_last is not None and self.reference is not None:
            raise UsageError("--reference and --reference-last both choose the reference: give one")
        if self.reference_last is not None and self.last is None:
            raise UsageError(
                "--reference-last needs --last", hint="e.g. --last 500 --reference-last 5000"
            )
        if self.window is not None:
            parse_duration(self.window, "--window")

    @property
    def frozen_reference(self) -> str | None:
        """The name of a frozen reference, when ``--reference`` is not a duration."""
        if self.reference is None or is_duration(self.reference):
            return None
        return self.reference

    def describe(self) -> str:
        current = f"last {self.last}" if self.last else (self.window or DEFAULT_WINDOW)
        if self.reference_last:
            reference = f"the {self.reference_last} before"
        else:
            reference = self.reference or DEFAULT_REFERENCE
        return f"{current} vs {reference}"
