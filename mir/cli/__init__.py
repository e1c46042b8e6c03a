"""The ``mir`` command-line shell (public interface: the entry points).

Resolved lazily (PEP 562): the console script imports ``mir.cli.app`` through this
package, and a replayed ``mir lint boundaries`` must not pay for typer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mir.cli.app import build_app, main, run_main

__all__ = ["build_app", "main", "run_main"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from mir.cli import app

        return getattr(app, name)
    raise AttributeError(f"module 'mir.cli' has no attribute {name!r}")
