"""``mir models compare NAME`` and ``mir models check [NAME]``: a new version's evidence
against production, and the canary's automatic rollback (for cron).

``add_commands(group)`` puts both on the ``mir models`` group (which the registry commands
own). What the evidence says is ``mir.releases``' (``comparison_tables``, ``check_lines``):
here it is only printed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mir.cli.options import FORMAT, JSON, PROJECT
from mir.cli.output import chosen_format, console, print_listing, say
from mir.cli.variadic import VariadicCommand

if TYPE_CHECKING:
    from mir.releases import ModelComparison

SINCE = typer.Option(None, "--since", help="Only decisions of the last 24h, 90m, 7d ...")


def add_commands(group: typer.Typer) -> None:
    @group.command("compare")
    def compare_command(
        name: str = typer.Argument(..., help="Registry model name."),
        since: str | None = SINCE,
        fmt: str | None = FORMAT,
        as_json: bool = JSON,
        project: Path | None = PROJECT,
    ) -> int:
        """Production vs shadow (paired by flow) and production vs canary, from the traces."""
        from mir.releases import compare_model

        fmt = chosen_format(fmt, as_json)
        comparison = compare_model(project, name, since)
        if fmt == "json":
            console().print_json(comparison.model_dump_json())
        else:
            render_comparison(comparison)
        return 0

    @group.command("check", cls=VariadicCommand)
    def check_command(
        names: list[str] | None = typer.Argument(
            None, metavar="NAME", help="Models (default: every canary)."
        ),
        fmt: str | None = FORMAT,
        as_json: bool = JSON,
        project: Path | None = PROJECT,
    ) -> int:
        """Roll back every canary worse than production (exit 1 when one was)."""
        from mir.releases import check_canaries, check_lines

        fmt = chosen_format(fmt, as_json)
        result = check_canaries(project, names or None)
        if fmt == "json":
            console().print_json(result.model_dump_json())
        else:
            say(*check_lines(result))
        return 1 if result.rolled_back else 0


def render_comparison(c: ModelComparison) -> None:
    from rich.table import Table
    from rich.text import Text

    from mir.releases import canary_verdict, comparison_tables

    say(*c.notes)
    for listing in comparison_tables(c):
        table = Table(title=Text(listing.title))
        for column in listing.columns:
            table.add_column(Text(column))
        for row in listing.rows:
            table.add_row(*map(Text, row))
        print_listing(table)
    if (verdict := canary_verdict(c)) is not None:
        say(verdict)
