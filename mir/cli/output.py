"""Consoles shared by the command modules (created on demand, never at import time).

``rich.console`` is imported inside the functions: it costs ~18 ms, and ``mir --version``
or ``mir --help`` should not pay for a console they never print to.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


@cache
def console() -> Console:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


@cache
def error_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)
