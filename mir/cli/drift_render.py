"""Rendering `mir drift` on a terminal: the report's tables per kind of drift (metric
names never cut, hashes by 12 characters) and a metric's history."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from mir.cli.output import console, error_console, literal, print_listing

if TYPE_CHECKING:
    from mir.drift import DriftReport, HistoryPoint

_VERDICT_STYLE = {
    "suspend": "bold red",
    "warn": "yellow",
    "ok": "green",
    "not_enough_data": "dim",
    "info": "dim",
}


def render(report: DriftReport, fmt: str, *, show_all: bool, brief: bool = False) -> None:
    if fmt == "json":
        typer.echo(report.model_dump_json(indent=2))
        return
    from rich.table import Table
    from rich.text import Text

    from mir.drift import KINDS, METRIC_COLUMNS, metric_cells, short_hashes, verdict_words

    out = console()
    for note in report.notes:
        error_console().print(literal(note))
    for agent in report.agents:
        verdict = agent.verdict
        head = Text.assemble(
            (agent.agent, "bold"),
            "  ",
            (verdict.replace("_", " ").upper(), _VERDICT_STYLE.get(verdict, "")),
            ("  SUSPENDED by the breaker" if agent.suspended else "", "bold red"),
            f"  current {agent.current.label} ({agent.current.decisions} decisions) vs "
            f"reference {agent.reference.label} ({agent.reference.decisions} decisions)",
        )
        out.print(head)
        if brief:
            for metric in agent.tripped("suspend") + agent.tripped("warn"):
                out.print(literal(f"  {metric.verdict}: {metric.metric} = {metric.value:.4g}"))
            continue
        for kind in KINDS:
            rows = [
                m
                for m in agent.metrics
                if m.kind == kind and (show_all or m.verdict in ("warn", "suspend"))
            ]
            if not rows:
                continue
            table = Table(title=f"{kind} drift", title_justify="left", show_edge=False)
            # metric names are never cut (`mir drift history` takes them); the detail folds
            longest = max(len(m.metric) for m in rows)
            for column in METRIC_COLUMNS:
                if column == "metric":
                    table.add_column(column, no_wrap=True, min_width=longest)
                elif column == "detail":
                    table.add_column(column, overflow="fold", ratio=1)
                elif column in ("verdict", "warn/suspend"):
                    table.add_column(column, no_wrap=True)
                else:
                    table.add_column(column)
            for m in rows:
                cells = [literal(cell) for cell in metric_cells(m)]
                cells[6] = literal(verdict_words(m.verdict), _VERDICT_STYLE.get(m.verdict, ""))
                table.add_row(*cells)
            print_listing(table)
        if agent.likely_causes:
            causes = "; ".join(agent.likely_causes)
            out.print(literal("likely causes: " + short_hashes(causes)))
        for m in agent.metrics:
            if m.family == "rubric" and m.verdict == "info" and not show_all:
                out.print(literal(f"  {m.metric}: {m.detail}"))
        if verdict == "not_enough_data" and agent.metrics and not show_all:
            out.print(
                literal(
                    f"  {len(agent.metrics)} metrics: not enough data in a window to judge "
                    "any (--all to list them)"
                )
            )
        elif not show_all and not (agent.tripped("warn") or agent.tripped("suspend")):
            out.print(literal(f"  {len(agent.metrics)} metrics, none moved (--all to list them)"))


def render_history(points: list[HistoryPoint]) -> None:
    from rich.table import Table

    from mir.drift import number, sparkline, verdict_words

    if not points:
        console().print("no drift runs recorded yet (run `mir drift` or `mir drift check`)")
        return
    by_metric: dict[str, list[HistoryPoint]] = {}
    for point in points:
        by_metric.setdefault(point.metric, []).append(point)
    table = Table(show_edge=False)
    for column in ("metric", "kind", "runs", "first", "last", "latest", "verdict", "trend"):
        table.add_column(column)
    for metric, series in by_metric.items():
        latest = series[-1]
        table.add_row(
            literal(metric),
            literal(latest.kind),
            literal(len(series)),
            literal(f"{series[0].at:%Y-%m-%d %H:%M}"),
            literal(f"{latest.at:%Y-%m-%d %H:%M}"),
            literal(number(latest.value)),
            literal(verdict_words(latest.verdict), _VERDICT_STYLE.get(latest.verdict, "")),
            literal(sparkline([p.value for p in series[-40:]])),
        )
    print_listing(table)
