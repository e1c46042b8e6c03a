"""``mir eval history AGENT``: an agent's eval pass rates over time (from DuckDB)."""

from __future__ import annotations

import json
import sys
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mir.cli.output import (
    chosen_format,
    console,
    format_option,
    json_option,
    literal,
    print_listing,
)
from mir.errors import UsageError

if TYPE_CHECKING:
    from mir.evals import HistoryRow

SPARKS = "▁▂▃▄▅▆▇█"


def register(group: typer.Typer) -> None:
    @group.command("history")
    def history_command(
        agent: str = typer.Argument(..., help="The agent: 'triage' or 'capability.agent'."),
        limit: int = typer.Option(20, "--limit", "-n", min=1, help="Show the last N runs."),
        as_json: bool = json_option(),
        fmt: str | None = format_option(),
        project: Path | None = typer.Option(
            None, "--project", file_okay=False, help="Project folder (default: found from the cwd)."
        ),
    ) -> None:
        """Show an agent's recorded eval runs: pass rate, broken/fixed, gate, model."""
        from mir.evals import EvalHistory
        from mir.project import find_project

        as_json = chosen_format(fmt, as_json) == "json"
        found = find_project(project)
        rows = EvalHistory.for_project(found).rows(agent, limit=limit)
        if not rows and not _is_agent(found.capabilities_dir, agent):
            # a typo would otherwise read as "no runs yet" and send the user to `mir eval`
            raise UsageError(
                f"unknown agent {agent!r}: no capabilities/*/agents/{agent}.yaml "
                "and no recorded eval runs",
                hint="see `mir agents` for the project's agents",
            )
        if as_json:
            data = [row.model_dump(mode="json") for row in rows]
            sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
            return
        if not rows:
            console().print(literal(f"no eval runs recorded for {agent} (run `mir eval` first)"))
            return
        render_history(agent, rows)


def _is_agent(capabilities: Path, agent: str) -> bool:
    capability, _, name = agent.rpartition(".")
    return any(capabilities.glob(f"{capability or '*'}/agents/{name}.yaml"))


def sparkline(values: list[float]) -> str:
    """Pass rates in [0, 1] as block characters (an absolute scale: 100% is always full)."""
    top = len(SPARKS) - 1
    return "".join(SPARKS[round(min(1.0, max(0.0, v)) * top)] for v in values)


def render_history(agent: str, rows: list[HistoryRow]) -> None:
    from rich.table import Table

    out = console()
    trend = sparkline([row.pass_rate for row in rows])
    out.print(literal(f"{agent}: pass rate {trend} (oldest to newest, last {len(rows)} runs)"))
    table = Table(box=None, pad_edge=False)
    for column in ("time UTC", "suite", "pass rate", "passed", "broken", "fixed", "gate"):
        table.add_column(column, no_wrap=column in ("time UTC", "suite"))
    table.add_column("model")
    table.add_column("prompt")
    table.add_column("run by")
    for row in rows:
        when = (row.started_at or row.recorded_at).astimezone(UTC)
        table.add_row(
            when.strftime("%Y-%m-%d %H:%M"),
            literal(row.suite),
            f"{row.pass_rate * 100:.1f}%",
            f"{row.passed}/{row.runs}",
            "-" if row.broken is None else str(row.broken),
            "-" if row.fixed is None else str(row.fixed),
            literal(
                ("passed" if row.gate_passed else "FAILED")
                + (" (interrupted)" if row.interrupted else ""),
                style="" if row.gate_passed else "bold red",
            ),
            literal(row.model),
            literal(row.prompt_hash[:12] if row.prompt_hash else None),
            literal(row.origin or "mir eval"),
        )
    print_listing(table)
