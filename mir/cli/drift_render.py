"""Rendering `mir drift` on a terminal: the report's tables per kind of drift (metric
names never cut, hashes by 12 characters) and a metric's history."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from mir.cli.output import add_row, console, print_listing, say, say_parts

if TYPE_CHECKING:
    from mir.drift import DriftReport, HistoryPoint


def render(report: DriftReport, fmt: str, *, show_all: bool, brief: bool = False) -> None:
    if fmt == "json":
        typer.echo(report.model_dump_json(indent=2))
        return
    from rich.table import Table

    from mir.drift import (
        KINDS,
        METRIC_COLUMNS,
        agent_heading,
        agent_notes,
        brief_lines,
        metric_column,
        metric_row,
        shown_metrics,
    )

    say(*report.notes, err=True)
    for agent in report.agents:
        say_parts(*agent_heading(agent))
        if brief:
            say(*brief_lines(agent))
            continue
        for kind in KINDS:
            rows = shown_metrics(agent, kind, show_all)
            if not rows:
                continue
            table = Table(title=f"{kind} drift", title_justify="left", show_edge=False)
            longest = max(len(m.metric) for m in rows)
            for column in METRIC_COLUMNS:
                table.add_column(column, **metric_column(column, longest))
            for m in rows:
                add_row(table, *metric_row(m))
            print_listing(table)
        say(*agent_notes(agent, show_all))


def render_history(points: list[HistoryPoint]) -> None:
    from rich.table import Table

    from mir.drift import HISTORY_COLUMNS, history_cells

    if not points:
        console().print("no drift runs recorded yet (run `mir drift` or `mir drift check`)")
        return
    table = Table(show_edge=False)
    for column in HISTORY_COLUMNS:
        table.add_column(column)
    for row in history_cells(points):
        add_row(table, *row)
    print_listing(table)
