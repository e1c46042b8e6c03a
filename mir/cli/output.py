"""Consoles shared by the command modules (created on demand, never at import time)."""

from __future__ import annotations

from functools import cache

from rich.console import Console


@cache
def console() -> Console:
    return Console(highlight=False, soft_wrap=True)


@cache
def error_console() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)
