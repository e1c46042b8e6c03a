"""Regex assertions run on RE2 (``google-re2``): matching takes time linear in the text,
whatever the pattern, so no pattern and no reply can hang an eval (Python's ``re``
backtracks: ``^(a{1,30}){1,30}$`` on 41 characters runs for hours, and it has no
timeout). A time limit was the other way; it would make a slow CI machine fail cases a
fast one passes.

RE2 refuses what needs backtracking: lookarounds, backreferences, possessive repeats
and atomic groups, ``\\Z`` (write ``\\z``), ``(?x)``, and repeat counts over 1000 (nested
ones multiply). ``check_suite`` reports such a pattern at its line before any model
call. ``\\d``, ``\\w`` and ``\\s`` are ASCII in RE2 (``\\pL``, ``\\pN`` match Unicode).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

ENGINE = "RE2"


@lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> Any:
    """The compiled pattern (``.search(text)``), or the reason RE2 refuses it (a str)."""
    import re2

    options = re2.Options()
    options.log_errors = False  # the reason comes back to us; nothing on stderr
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        return _reason(exc)
    except (TypeError, ValueError, OverflowError) as exc:
        return str(exc) or type(exc).__name__


def _reason(exc: Exception) -> str:
    detail = exc.args[0] if exc.args else exc
    if isinstance(detail, bytes):
        return detail.decode("utf-8", "replace")
    return str(detail)
