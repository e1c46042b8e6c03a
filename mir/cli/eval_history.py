"""``mir eval history AGENT``: an agent's eval pass rates over time (DuckDB, or the fleet store)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mir.cli.options import FORMAT, JSON, PROJECT
from mir.cli.output import chosen_format, print_models, print_rows, say

if TYPE_CHECKING:
    from mir.evals import HistoryRow


def register(group: typer.Typer) -> None:
    @group.command("history")
    def history_command(
        agent: str = typer.Argument(..., help="The agent: 'triage' or 'capability.agent'."),
        limit: int = typer.Option(20, "--limit", "-n", min=1, help="Show the last N runs."),
        as_json: bool = JSON,
        fmt: str | None = FORMAT,
        project: Path | None = PROJECT,
    ) -> None:
        """Show an agent's recorded eval runs: pass rate, broken/fixed, gate, model."""
        from mir.evals import recorded_runs

        as_json = chosen_format(fmt, as_json) == "json"
        rows = recorded_runs(agent, limit=limit, project=project)
        if as_json:
            print_models(rows)
        elif not rows:
            say(f"no eval runs recorded for {agent} (run `mir eval` first)")
        else:
            render_history(agent, rows)


def render_history(agent: str, rows: list[HistoryRow]) -> None:
    from mir.evals import RUN_COLUMNS, history_heading, run_cells

    say(history_heading(agent, rows))
    print_rows(RUN_COLUMNS, map(run_cells, rows), wrap=RUN_COLUMNS[2:])
