"""Command module; see register()."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Commands of this group are added by their capability's work in progress."""
